#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""assert_zcrx.py --dir OUT/<kernel> --kernel NAME --scenarios S...

Host-side checks of the "zcrx" lab scenario (scenarios/zcrx.sh, issue 35):
io_uring zero-copy receive over netdevsim, devmemtop -m full and the
default (-m devmem) beside it. Nothing for other scenarios.

  zcrx.json, tx.json      lab-zcrx received the sender's 8 MiB into its
                          area, every byte the lab's pattern, to EOF
  devmemtop-*.json        each saw the zcrx pool (kind io_uring, the RX
                          port, queue 0) with its area as lab-zcrx
                          registered it (niovs, niov size, one area, the
                          refill ring's size), its figures adding up (free
                          + held by user space + in the kernel = area), its
                          provider calls (the 8 MiB went through a 4 MiB
                          area: buffers came back through the ring);
                          at mark-held, the held buffers' niovs held by
                          user space and the ring's identity (entries taken
                          + pending = entries lab-zcrx returned); at
                          mark-returned, the same identity with the held
                          ones returned, and, when nothing allocated
                          between the two points (entries taken the same),
                          exactly those entries pending and nothing else
                          changed; the pool destroyed by the end; the two
                          modes' final provider counts equal.
  starve/                 a second lab-zcrx held every buffer of a 64-niov
                          area: its pool's zcrx_alloc_fail > 0 and equal to
                          what the queue's rx-alloc-fail (qstats, 7.3/0013)
                          grew by: netdevsim drops a packet for each; its
                          user-held niovs (at most) what lab-zcrx held.

Prints "zcrx: N passed, N failed, N skipped"; exit 1 if anything failed.
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True	# no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labcheck import Checks, json_lines, read, read_int  # noqa: E402

RUNS = ("devmemtop-live", "devmemtop-default")
# the provider's counts, equal in both modes once the pool is gone
COUNTS = ("zcrx_alloc_calls", "zcrx_alloc_niovs", "zcrx_alloc_fail", "zcrx_rq_refills",
          "zcrx_rq_taken")
HOLDING = re.compile(r"holding (\d+) buffers \((\d+) niovs\), (\d+) returned")


def zcrx_pools(snap, ifname):
    return [p for p in (snap or {}).get("pools", [])
            if p.get("kind") == "io_uring" and p.get("ifname") == ifname]


def marks(d, name):
    out = {}
    for line in (read(os.path.join(d, "mark-" + name), "") or "").splitlines():
        w = line.split()
        if len(w) == 2 and w[1].isdigit():
            out[w[0]] = int(w[1])
    return out


def at(snaps, line, ifname):
    """The zcrx pool in snapshot LINE (1-based) of a devmemtop output."""
    if not line or line > len(snaps):
        return None
    ps = zcrx_pools(snaps[line - 1], ifname)
    return ps[0] if len(ps) == 1 else None


def qaf(snap, ifname, queue):
    """rx-alloc-fail of ifname's queue in a snapshot (any pool of it), None if not reported."""
    vals = [p.get("queue_rx_alloc_fail") for p in (snap or {}).get("pools", [])
            if p.get("ifname") == ifname and p.get("queue") == queue and
            p.get("queue_rx_alloc_fail") is not None]
    return max(vals) if vals else None


def check_starve(c, d, run, ok_snaps, ids, ifname, queue):
    """The starved receiver's pool: failures counted, equal to the queue's rx-alloc-fail."""
    name = "zcrx: %s: starved queue" % run
    zc = read(os.path.join(d, "starve", "zcrx.json"))
    try:
        zc = json.loads(zc)
    except (TypeError, ValueError):
        c.check(name, False, hint="no starve/zcrx.json (see starve/zcrx.log)")
        return None
    if len(ids) < 2:
        c.check(name + ": its zcrx pool listed", False, hint="pools seen: %s" % ids)
        return None
    mine = [(i, q) for i, s in enumerate(ok_snaps) for q in zcrx_pools(s, ifname)
            if q.get("id") == ids[1]]
    first_i = mine[0][0]
    last = [q for _, q in mine if q.get("zcrx_alloc_fail") is not None]
    final = last[-1] if last else {}
    before = [qaf(s, ifname, queue) for s in ok_snaps[:first_i]]
    before = [v for v in before if v is not None]
    q0 = before[-1] if before else None
    # its own last snapshot (destroyed): the queue has no pool listed after it
    q1 = final.get("queue_rx_alloc_fail")
    fails = final.get("zcrx_alloc_fail")
    held = max((q.get("zcrx_user_niovs") or 0) for _, q in mine)
    ok = (bool(fails) and q0 is not None and q1 is not None and fails == q1 - q0 and
          held == zc.get("held_niovs"))
    c.check("%s: lab-zcrx held every buffer of its %s-niov area, the provider failed and "
            "devmemtop counts each failure the driver dropped a packet for (the queue's "
            "rx-alloc-fail), and the niovs lab-zcrx held as held by user space" % (name, zc.get("buffers")), ok,
            "zcrx_alloc_fail %s, queue rx-alloc-fail %s -> %s; lab-zcrx held %s (%s niovs) of "
            "%s bytes; at most %s niovs held by user space" % (fails, q0, q1, zc.get("held"), zc.get("held_niovs"),
                                            zc.get("bytes"), held))
    return fails


def check_run(c, d, run, zc, hold, ret):
    snaps = json_lines(d, run + ".json")
    ok_snaps = [s for s in snaps if s]
    ifname = zc["ifname"]
    name = "zcrx: %s" % run
    if not ok_snaps:
        c.check(name + " wrote snapshots", False, hint="see %s.log" % run)
        return None, None
    m = ok_snaps[-1].get("metrics", {})
    for k in ("zcrx_calls", "zcrx_area"):
        c.check("%s: %s available" % (name, k), (m.get(k) or {}).get("available"),
                (m.get(k) or {}).get("source", ""), (m.get(k) or {}).get("reason") or "")
    ids = []
    for s in ok_snaps:
        for q in zcrx_pools(s, ifname):
            if q.get("id") not in ids:
                ids.append(q.get("id"))
    # the first zcrx pool is the first receiver's, the next the starved one's
    seen = [q for s in ok_snaps for q in zcrx_pools(s, ifname) if ids and q.get("id") == ids[0]]
    if not seen:
        c.check(name + " listed the zcrx pool", False,
                hint="no io_uring pool on %s in %d snapshots" % (ifname, len(ok_snaps)))
        return None, None
    # a pool listed (netlink) before its first provider call has no zcrx
    # figure yet (null): only before the first snapshot that has them
    first = next((i for i, q in enumerate(seen) if q.get("zcrx_alloc_calls") is not None), None)
    late = [i for i, q in enumerate(seen) if first is not None and i > first and
            q.get("zcrx_alloc_calls") is None]
    c.check("%s: the zcrx pool's provider figures from its first provider call on" % name,
            first is not None and not late, "%d of %d snapshots before it" % (first or 0, len(seen)),
            "null again in snapshots %s" % late[:5])
    alive = [q for q in seen[first or 0:] if q.get("state") != "destroyed"]
    p = alive[-1] if alive else seen[-1]
    area = {k: p.get(k) for k in ("queue", "zcrx_area_niovs", "zcrx_niov_size", "zcrx_areas",
                                   "zcrx_rq_size")}
    want = {"queue": zc["queue"], "zcrx_area_niovs": zc["buffers"],
            "zcrx_niov_size": zc["buffer_size"], "zcrx_areas": 1,
            "zcrx_rq_size": zc["rq_entries"]}
    c.check("%s: the zcrx pool's area is lab-zcrx's (queue, niovs, niov size, areas, ring)"
            % name, area == want, "%s" % area, "lab-zcrx registered %s" % want)
    bad = []
    for q in alive:
        parts = [q.get(k) for k in ("zcrx_free_niovs", "zcrx_user_niovs", "zcrx_kernel_niovs")]
        if None in parts or min(parts) < 0 or sum(parts) != q.get("zcrx_area_niovs"):
            bad.append("pool %s: free/user/kernel %s, area %s"
                       % (q.get("id"), parts, q.get("zcrx_area_niovs")))
    c.check("%s: free + held by user space + in the kernel = the area, in every snapshot" % name,
            not bad, "%d snapshots of the pool" % len(alive), "; ".join(bad[:4]))
    # 8 MiB through a 4 MiB area: buffers came back through the refill ring
    taken = p.get("zcrx_rq_taken") or 0
    batch = p.get("zcrx_rq_batch") or {}
    c.check("%s: provider calls refilled the pool, the ring's entries taken back in batches"
            % name, (p.get("zcrx_alloc_calls") or 0) > 0 and taken > 0 and
            batch.get("count") == p.get("zcrx_rq_refills") and batch.get("sum") == taken,
            "calls %s, niovs %s, failures %s, ring refills %s, entries taken %s, batch %s"
            % (p.get("zcrx_alloc_calls"), p.get("zcrx_alloc_niovs"), p.get("zcrx_alloc_fail"),
               p.get("zcrx_rq_refills"), taken, {k: batch.get(k) for k in ("count", "sum",
                                                                         "p50", "max")}))
    lat = p.get("zcrx_alloc_latency_ns") or {}
    c.check("%s: every provider call timed" % name,
            lat.get("count") == (p.get("zcrx_alloc_calls") or 0) + (p.get("zcrx_alloc_fail") or 0),
            "%s calls timed, p50 %s ns" % (lat.get("count"), lat.get("p50")))
    held = returned = None
    if hold:
        h_line, r_line = marks(d, "held").get(run), marks(d, "returned").get(run)
        held, returned = at(snaps, h_line, ifname), at(snaps, r_line, ifname)
        n, niovs, ret_h = hold
        if not held:
            c.check("%s: the zcrx pool at mark-held (line %s)" % (name, h_line), False)
        else:
            u, pend, tk = (held.get(k) for k in ("zcrx_user_niovs", "zcrx_rq_pending",
                                                 "zcrx_rq_taken"))
            c.check("%s: holding %d buffers (%d niovs): those niovs held by user space, and "
                    "ring entries taken + pending = the %d lab-zcrx returned" % (name, n, niovs, ret_h),
                    None not in (u, pend, tk) and niovs <= u <= niovs + pend and tk + pend == ret_h,
                    "user %s, pending %s, taken %s" % (u, pend, tk))
        if not returned:
            c.check("%s: the zcrx pool at mark-returned (line %s)" % (name, r_line), False)
        elif held:
            u, pend, tk = (returned.get(k) for k in ("zcrx_user_niovs", "zcrx_rq_pending",
                                                     "zcrx_rq_taken"))
            quiet = tk == held.get("zcrx_rq_taken")
            ok = None not in (u, pend, tk) and tk + pend == ret_h + n
            if quiet:
                # nothing allocated: the returned entries wait in the ring,
                # their niovs still user space's until the kernel takes them
                ok = ok and pend == held.get("zcrx_rq_pending") + n and \
                    u == held.get("zcrx_user_niovs")
            c.check("%s: the %d held returned: entries taken + pending = %d%s" % (
                        name, n, ret_h + n, ", all %d pending and still held by user space "
                        "(nothing allocated since)" % n if quiet else ""),
                    ok, "user %s, pending %s, taken %s (at mark-held: %s, %s, %s)" % (
                        u, pend, tk, held.get("zcrx_user_niovs"), held.get("zcrx_rq_pending"),
                        held.get("zcrx_rq_taken")))
    gone = [q for q in seen if q.get("state") == "destroyed"]
    c.check("%s: the zcrx pool destroyed once lab-zcrx exited" % name, bool(gone),
            "%d snapshots listed it destroyed" % len(gone))
    final = gone[-1] if gone else p
    starved = check_starve(c, d, run, ok_snaps, ids, ifname, zc["queue"])
    return {k: final.get(k) for k in COUNTS}, starved


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--scenarios", nargs="+", required=True)
    a = ap.parse_args()
    if "zcrx" not in a.scenarios:
        return 0
    c = Checks("[%s]" % a.kernel)
    d = os.path.join(a.dir, "zcrx")
    skip = read(os.path.join(d, "skip"))
    if skip is not None:
        c.skip("io_uring zero-copy receive", skip.strip())
    else:
        try:
            zc = json.loads(read(os.path.join(d, "zcrx.json"), ""))
        except ValueError:
            zc = None
        tx = read(os.path.join(d, "tx.json"), "")
        ok = (zc is not None and read_int(os.path.join(d, "zcrx.rc")) == 0 and
              read_int(os.path.join(d, "tx.rc")) == 0 and zc.get("eof") and
              zc.get("mismatches") == 0 and zc.get("outside_area") == 0 and
              zc.get("bytes") == 8 << 20)
        c.check("zcrx: lab-zcrx received the sender's 8 MiB zero-copy, every byte the pattern",
                ok, "lab-zcrx %s; sender %s" % (zc, tx.strip()),
                "see %s/zcrx.log: %s" % (d, (read(os.path.join(d, "zcrx.log"), "") or "")
                                        .strip().splitlines()[-1:]))
        if zc is not None:
            mh = HOLDING.search(read(os.path.join(d, "zcrx.log"), "") or "")
            hold = tuple(int(x) for x in mh.groups()) if mh else None
            if not hold:
                c.check("zcrx: lab-zcrx held buffers after the stream", False,
                        hint="no 'holding' line in zcrx.log")
            finals = {run: check_run(c, d, run, zc, hold, None) for run in RUNS}
            f, g = finals[RUNS[0]], finals[RUNS[1]]
            c.check("zcrx: the default (-m devmem) counts the provider's calls as the full "
                    "mode does, the starved pool's failures too", f[0] is not None and f == g,
                    "full %s; default %s" % (f, g))
    print("zcrx: %d passed, %d failed, %d skipped" % (c.n["PASS"], c.n["FAIL"], c.n["SKIP"]))
    return 1 if c.n["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
