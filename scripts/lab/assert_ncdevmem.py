#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""assert_ncdevmem.py --dir OUT/<kernel> --kernel NAME --patched-only "P B" --scenarios S...

Host-side checks of the "ncdevmem" and "nickit" lab scenarios (nothing for
other scenarios). nickit: the NIC kit's checks all PASS on the lab NIC
(only held_by_sockets may be unavailable, a WARN) and its gate of an
ncdevmem run fails exactly the rows documented for the kernel.
ncdevmem (scenarios/ncdevmem.sh):
the kernel's own devmem selftest server, unmodified, against netdevsim with
kernel-patches/0010. What its files must show:

  ncdevmem-results.txt  ncdevmem exited 0 after the client closed; it got
                        every byte, all as devmem frags of the binding it
                        made, each validated (-v 7) without an error
  ntuple-rules.txt      the rule ncdevmem added steers to queue 8
  rss.txt               RSS spreads over queues 0..7 only (ethtool -X equal 8)
  shrink.rc, hds-off-bound.rc
                        while queues 8..15 were bound, "ethtool -L combined 12"
                        (refused for the memory provider, not the ntuple rule
                        or RSS) and turning tcp-data-split off were refused
  devmemtop.dmtrec      gated with specs/lab-ncdevmem.yaml; failing rows
                        must be exactly the documented ones for the kernel
  devmemtop-live.json + pools-bound.json
                        bound, idle, all tokens back: each devmem pool's
                        inflight in devmemtop == netlink page-pool-get
  trace.txt             page_pool tracepoints: each devmem pool destroyed
                        with holds == releases
If the scenario wrote a "skip" file, everything is SKIP with its reason.
Prints "ncdevmem/nickit: N passed, N failed, N skipped"; exit 1 if anything failed.
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True	# no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labcheck import DEVMEMTOP, REPO, Checks, check_trace, gate_from, read  # noqa: E402
from assert_devmemtop import last_json, snapshots  # noqa: E402

SPEC = os.path.join(REPO, "specs", "lab-ncdevmem.yaml")
BOUND_FIRST, BOUND_COUNT = 8, 8		# ncdevmem's defaults: -t 8 -q 8


def results(d):
    out = {}
    for line in (read(os.path.join(d, "ncdevmem-results.txt")) or "").splitlines():
        k, _, v = line.partition("=")
        out[k.strip()] = v.strip()
    return out


def num(r, k):
    try:
        return int(r.get(k, ""))
    except ValueError:
        return None


def check_run(c, d, r):
    sent, got = num(r, "bytes_sent"), num(r, "total_received")
    c.check("ncdevmem exit status 0 (its own bind/header-split checks passed, client closed)",
            r.get("ncdevmem_rc") == "0" and num(r, "client_exited") == 1,
            "rc=%s client_exited=%s" % (r.get("ncdevmem_rc"), r.get("client_exited")),
            "see %s/ncdevmem-setup.log and ncdevmem-tail.log" % d)
    c.check("ncdevmem received every byte", sent is not None and got == sent and sent > 0,
            "%s of %s bytes" % (got, sent))
    frags, val = num(r, "frags"), num(r, "validated_frags")
    c.check("every frag validated against the pattern, no error",
            bool(frags) and val == frags and num(r, "validation_errors") == 0,
            "%s frags, %s validated, %s validation errors" % (frags, val,
                                                              r.get("validation_errors")))
    c.check("all payload in devmem frags (header split, no linear data)",
            num(r, "linear_cmsgs") == 0, "SCM_DEVMEM_LINEAR cmsgs: %s" % r.get("linear_cmsgs"))
    ids = [x for x in r.get("binding_ids", "").split(",") if x]
    c.check("frags came from the binding ncdevmem made last", bool(ids) and
            r.get("frag_dmabuf_ids") == ids[-1],
            "bindings made %s, frag dmabuf ids %s" % (ids, r.get("frag_dmabuf_ids")))


def check_nic(c, d, r):
    rules = read(os.path.join(d, "ntuple-rules.txt"), "")
    c.check("ntuple rule steers the flow to queue %d" % BOUND_FIRST,
            re.search(r"Action: Direct to queue %d\b" % BOUND_FIRST, rules) is not None,
            "; ".join(l.strip() for l in rules.splitlines() if "Action" in l or "Dest" in l))
    rss = read(os.path.join(d, "rss.txt"), "")
    q = [int(x) for l in rss.splitlines() if re.match(r"\s*\d+:", l)
         for x in l.split(":", 1)[1].split()]
    c.check("RSS indirection spreads over queues 0..%d only" % (BOUND_FIRST - 1),
            bool(q) and set(q) == set(range(BOUND_FIRST)),
            "%d entries, queues %s" % (len(q), sorted(set(q))))
    c.check("tcp-data-split on before and after", r.get("hds_before") == "on" and
            r.get("hds_after") == "on", "before %s, after %s" % (r.get("hds_before"),
                                                                r.get("hds_after")))
    shrink = read(os.path.join(d, "shrink.log"), "") or ""
    c.check("channels cannot drop below a bound queue (ethtool -L combined 12 refused "
            "for the memory provider)", r.get("shrink_rc") not in (None, "", "0") and
            "memory provider" in shrink,
            "exit %s: %s" % (r.get("shrink_rc"), shrink.strip().replace("\n", "; ")))
    c.check("tcp-data-split cannot be turned off while bound",
            r.get("hds_off_bound_rc") not in (None, "", "0"),
            "exit %s: %s" % (r.get("hds_off_bound_rc"),
                             (read(os.path.join(d, "hds-off-bound.log"), "") or "").strip()))


def check_inflight(c, d):
    """The idle point: bound, every token back, before the client closed."""
    name = "every devmem pool's inflight in devmemtop == netlink page-pool-get"
    snaps = [s for s in snapshots(os.path.join(d, "devmemtop-live.json"))
             if any(p.get("binding_id") is not None for p in s.get("pools", []))]
    nl = last_json(os.path.join(d, "pools-bound.json"))
    if not snaps or nl is None:
        c.check(name, False, hint="no devmemtop snapshot with a devmem pool or no "
                "pools-bound.json (see devmemtop-live.log)")
        return
    nl_by_id = {p["id"]: p for p in nl if p.get("dmabuf", -1) >= 0}
    bids = {p["dmabuf"] for p in nl_by_id.values()}
    dm = [p for p in snaps[-1].get("pools", []) if p.get("binding_id") in bids]
    bad = ["pool %s (queue %s): devmemtop %s, netlink %s" % (
        p["id"], p.get("queue"), p.get("inflight"),
        nl_by_id[p["id"]]["inflight"] if p["id"] in nl_by_id else None)
        for p in dm if p["id"] not in nl_by_id or
        p.get("inflight") != nl_by_id[p["id"]]["inflight"]]
    c.check(name, len(dm) == BOUND_COUNT and len(nl_by_id) == BOUND_COUNT and not bad,
            "%d pools of binding(s) %s; inflight %s" % (
                len(dm), sorted(bids), ", ".join("q%s:%s" % (p.get("queue"), p.get("inflight"))
                                                for p in sorted(dm, key=lambda p: p["id"]))),
            "; ".join(bad) or "expected %d pools in both" % BOUND_COUNT)


def check_gate(c, d, has_patched_only):
    name = "devmemtop gate ncdevmem"
    rec = os.path.join(d, "devmemtop.dmtrec")
    if not os.path.exists(rec):
        c.check(name + " recording made", False,
                hint="no %s (see %s/devmemtop-record.log)" % (rec, d))
        return
    c.check("devmemtop record ncdevmem exit status",
            (read(os.path.join(d, "devmemtop-record.rc"), "") or "").strip() == "0")
    res, rc, e = gate_from(SPEC, rec, d)
    if res is None:
        c.check(name + " result", False, hint="exit %d, no JSON (%s); see %s/gate.txt"
                % (rc, e, d))
        return
    rows = res.get("thresholds", [])
    failed = sorted({r["metric"] for r in rows if r["status"] != "PASS"})
    # gen_pool kernel: one net_iov per provider call (as lab-bulk)
    want = [] if has_patched_only else ["binding.niovs_per_call", "pool.refill_batch"]
    c.check(name + " fails exactly the documented rows for this kernel",
            failed == want and res.get("result") == ("fail" if want else "pass"),
            "result %s (exit %d), failing: %s" % (res.get("result"), rc,
                                                 failed or "none"),
            "expected failing: %s" % (want or "none"))


KIT_PASS = ["running as root", "devmemtop built", "kernel BTF", "CONFIG_NET_DEVMEM",
            "driver with devmem RX support", "header split (ethtool -g)",
            "ntuple flow steering", "more than one RX queue", "devmemtop loads and attaches"]


def check_kit(c, d, has_patched_only):
    """nickit: every check of the kit passes on the lab NIC; the only WARN
    allowed is the metric devmemtop cannot have on any kernel (tokens held by
    sockets); then it recorded and gated the ncdevmem run."""
    log = read(os.path.join(d, "kit.log"), "")
    lines = {}
    for l in log.splitlines():
        m = re.match(r"(PASS|WARN|FAIL)  (.+?)\s{2,}(.*)$", l) or \
            re.match(r"(PASS|WARN|FAIL)  (.+?)\s*$", l)
        if m:
            lines[m.group(2).strip()] = (m.group(1), m.group(3).strip() if m.lastindex > 2 else "")
    for name in KIT_PASS:
        st, det = lines.get(name, (None, "not printed"))
        c.check("NIC kit: %s" % name, st == "PASS", "%s %s" % (st, det))
    other = {k: v for k, v in lines.items() if k not in KIT_PASS}
    bad = {k: v for k, v in other.items()
           if v[0] != "PASS" and not (k == "every devmemtop metric available" and v[0] == "WARN"
                                       and all("held_by_sockets" in x for x in v[1].split("; ")))}
    c.check("NIC kit: no other FAIL/WARN (only held_by_sockets may be unavailable)", not bad,
            "; ".join("%s %s: %s" % (v[0], k, v[1]) for k, v in other.items()))
    kit = os.path.join(d, "kit")
    for f in ("devmemtop.rec", "report.txt", "gate.json", "gate.junit.xml"):
        c.check("NIC kit wrote %s" % f, os.path.getsize(os.path.join(kit, f)) > 0
                if os.path.exists(os.path.join(kit, f)) else False)
    try:
        with open(os.path.join(kit, "gate.json")) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        c.check("NIC kit gate result readable", False, str(e))
        return
    failed = sorted({r["metric"] for r in res.get("thresholds", []) if r["status"] != "PASS"})
    want = [] if has_patched_only else ["binding.niovs_per_call", "pool.refill_batch"]
    rc = (read(os.path.join(d, "kit.rc"), "") or "").strip()
    c.check("NIC kit gate of the ncdevmem run fails exactly the documented rows",
            failed == want and rc == ("0" if not want else "1"),
            "kit exit %s, failing: %s" % (rc, failed or "none"),
            "expected failing: %s" % (want or "none"))
    ncd = read(os.path.join(d, "ncdevmem-setup.log"), "")
    c.check("NIC kit workload: ncdevmem got its client and exited after it",
            "client exited" in ncd and "Failed validation" not in ncd,
            hint="see %s/ncdevmem-setup.log" % d)


MQ_QUEUES, MQ_PORT0, MIB = (1, 2, 3, 4), 5300, 1 << 20
MQ_SLACK = 128	# net_iovs a pool may hold beyond its flow's: one refill (<= 64) + 1


def check_multiqueue(c, d):
    """One binding over queues 1..4; flow i (destination port 5300+i, i MiB)
    steered to queue i. At the held point (every flow ended, tokens held),
    each queue's pool has its flow's net_iovs in flight and at most one
    refill more; the flows' sizes differ by far more, so this maps each
    flow to its queue."""
    lines = [l for l in (read(os.path.join(d, "rx.json"), "") or "").splitlines() if l.strip()]
    try:
        st = {json.loads(l)["state"]: json.loads(l) for l in lines}
    except ValueError as e:
        c.check("multiqueue receiver output readable", False, str(e))
        return
    held, done = st.get("held"), st.get("done")
    rc = (read(os.path.join(d, "rx.rc"), "") or "").strip()
    if not c.check("multiqueue receiver exit status 0 and both reports", rc == "0" and
                   held is not None and done is not None, "rc=%s" % rc, "see %s/rx.log" % d):
        return
    flows = done["flows"]
    want_ports = {MQ_PORT0 + q for q in MQ_QUEUES}
    c.check("4 flows on ports 5301..5304, each its size in full, verified",
            {f["port"] for f in flows} == want_ports and
            all(f["done"] and f["bytes"] == (f["port"] - MQ_PORT0) * MIB and
                not f["mismatches"] and not f["linear_bytes"] and not f["wrong_binding"]
                for f in flows),
            "; ".join("port %d: %d bytes, %d frags, %d niovs, %d mismatches, %d linear" % (
                f["port"], f["bytes"], f["frags"], f["niovs"], f["mismatches"],
                f["linear_bytes"]) for f in flows))
    c.check("every held token returned", done["tokens_returned"] == sum(f["tokens"] for f in flows),
            "%d of %d" % (done["tokens_returned"], sum(f["tokens"] for f in flows)))
    bid = done["binding_id"]
    snaps = [x for x in snapshots(os.path.join(d, "devmemtop-live.json"))
             if any(b.get("id") == bid for b in x.get("bindings", []))]
    if not c.check("devmemtop saw the binding while the tokens were held", bool(snaps),
                   hint="see %s/devmemtop-live.log" % d):
        return
    last = snaps[-1]
    b = [x for x in last["bindings"] if x.get("id") == bid][0]
    pools = [p for p in last.get("pools", []) if p.get("binding_id") == bid]
    by_q = {p.get("queue"): p for p in pools}
    c.check("devmemtop: 4 pools of one binding on queues 1..4", b.get("pools") == 4 and
            sorted(q for q in by_q if q is not None) == list(MQ_QUEUES),
            "binding %s: %s pools, queues %s" % (bid, b.get("pools"), sorted(
                (q for q in by_q if q is not None))))
    total = sum(p.get("inflight", 0) for p in pools)
    c.check("devmemtop: binding in_pools == sum of its pools' inflight",
            b.get("in_pools") == total and total > 0,
            "in_pools %s, pools %s" % (b.get("in_pools"), " + ".join(
                "q%s:%s" % (p.get("queue"), p.get("inflight")) for p in pools)))
    for f in sorted(flows, key=lambda f: f["port"]):
        q = f["port"] - MQ_PORT0
        p = by_q.get(q)
        inf = None if p is None else p.get("inflight")
        c.check("flow to port %d landed on queue %d" % (f["port"], q),
                inf is not None and f["niovs"] <= inf <= f["niovs"] + MQ_SLACK,
                "queue %d pool inflight %s, flow's net_iovs %d (+%d allowed)"
                % (q, inf, f["niovs"], MQ_SLACK))
    nl = last_json(os.path.join(d, "pools-held.json")) or []
    nl_by_id = {p["id"]: p["inflight"] for p in nl if p.get("dmabuf") == bid}
    c.check("devmemtop pool inflight == netlink page-pool-get, tokens held",
            len(nl_by_id) == 4 and all(nl_by_id.get(p["id"]) == p.get("inflight") for p in pools),
            "; ".join("pool %s: devmemtop %s, netlink %s" % (p["id"], p.get("inflight"),
                                                             nl_by_id.get(p["id"])) for p in pools))
    check_trace(c, d, "multiqueue")
    gate_spec(c, d, "multiqueue", os.path.join(REPO, "specs", "lab-multiqueue.yaml"), [])


def gate_spec(c, d, name, spec, want):
    rec = os.path.join(d, "devmemtop.dmtrec")
    if not c.check("devmemtop gate %s: recording made" % name, os.path.exists(rec),
                   hint="see %s/devmemtop-record.log" % d):
        return
    res, rc, e = gate_from(spec, rec, d)
    if res is None:
        c.check("devmemtop gate %s result" % name, False, "exit %d (%s)" % (rc, e))
        return
    failed = sorted({r["metric"] for r in res.get("thresholds", []) if r["status"] != "PASS"})
    c.check("devmemtop gate %s fails exactly the documented rows" % name,
            failed == want and res.get("result") == ("fail" if want else "pass"),
            "result %s, failing: %s" % (res.get("result"), failed or "none"),
            "expected failing: %s" % (want or "none"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True, help="the kernel's output dir")
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--patched-only", default="0 0")
    ap.add_argument("--scenarios", nargs="+", required=True)
    a = ap.parse_args()
    try:
        np, nb = (int(x) for x in a.patched_only.split())
    except ValueError:
        print("assert_ncdevmem.py: --patched-only wants two numbers", file=sys.stderr)
        return 2
    mine = [s for s in a.scenarios if s in ("ncdevmem", "nickit", "multiqueue")]
    if not mine:
        return 0
    has_patched_only = a.kernel == "patched" and np > nb
    c = Checks("[%s]" % a.kernel)
    for s in mine:
        d = os.path.join(a.dir, s)
        skip = read(os.path.join(d, "skip"))
        if skip is not None:
            c.skip("%s checks" % s, skip.strip())
        elif not os.path.isdir(d):
            c.check("%s scenario ran" % s, False, "no %s" % d)
        elif s == "nickit":
            check_kit(c, d, has_patched_only)
        elif s == "multiqueue":
            if os.access(DEVMEMTOP, os.X_OK):
                check_multiqueue(c, d)
            else:
                c.skip("multiqueue checks", "%s not built (run the top-level make first)"
                       % DEVMEMTOP)
        else:
            r = results(d)
            check_run(c, d, r)
            check_nic(c, d, r)
            check_trace(c, d, "ncdevmem")
            if os.access(DEVMEMTOP, os.X_OK):
                check_inflight(c, d)
                check_gate(c, d, has_patched_only)
            else:
                c.skip("ncdevmem devmemtop checks",
                       "%s not built (run the top-level make first)" % DEVMEMTOP)
    print("ncdevmem/nickit/multiqueue: %d passed, %d failed, %d skipped"
          % (c.n["PASS"], c.n["FAIL"], c.n["SKIP"]))
    return 1 if c.n["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
