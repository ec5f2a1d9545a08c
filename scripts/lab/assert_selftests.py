#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""assert_selftests.py --dir OUT/<kernel> --kernel NAME --scenarios S...

Host-side checks of the "selftests" lab scenario (nothing for other
scenarios): the kernel's own Python selftests, unmodified from the pinned
source, run on netdevsim in the guest (scenarios/selftests.sh), and
devmemtop's recording of them. What the files of OUT/<kernel>/selftests
must show:

  <test>.tap, .rc, .err   each test's KTAP verdict per case is the one
                          EXPECT below documents (a case that stops
                          passing, or starts, fails the check)
  devmemtop.dmtrec        the page pools each test created and destroyed
                          appear in devmemtop: as many as the page_pool
                          tracepoints show destroyed (<test>.trace), the
                          same ones as zombies with the same inflight, and
                          every one ends "destroyed"; nl_netdev.py: 4 pools
                          (4 ups of a 1-queue device), 2 zombies holding the
                          1 page pp_hold kept across a down / the removal
  ppfail.txt              the kernel's fault injection: failures injected
                          (fail_function "times" consumed) == ENOMEMs the
                          pp_hold writer saw == devmemtop's rx-alloc-fail of
                          the pool's queue (qstats-get; netdevsim counts its
                          failed page pool allocations there, 0013); its
                          pool's holds and releases are the tracepoints' (the
                          failed calls left nothing in flight).
A test's pools are the ones on netdevs of the guest's init netns with an
ifindex above the highest one before the test started (<test>.ifindex;
ifindexes are not reused) that devmemtop first showed between the test's
start and the next test's start (<test>.t: uptime; snapshot ts_ns is
CLOCK_MONOTONIC, the same clock in the VM). The next test's ifindex floor
cannot bound them: the devices are gone by then, so it is this one's again.
If the scenario wrote a "skip" file, everything is SKIP with its reason.
Prints "selftests: N passed, N failed, N skipped"; exit 1 if anything failed.
"""
import argparse
import os
import re
import sys

sys.dont_write_bytecode = True	# no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labcheck import Checks, PoolKeys, PPREL, HOLD, REL, DEVMEMTOP, read, read_int  # noqa: E402
from assert_niov import snapshots  # noqa: E402

# Run order of scenarios/selftests.sh (the ifindex floors follow it).
TESTS = ["nl_netdev", "queues", "stats", "pp_alloc_fail", "pp_alloc_fail_netif", "ppfail"]
# Per test: its source file, the cases and what each must report. "ok":
# passed; ("skip", text): skipped with a reason containing text. None for
# pp_alloc_fail as is: its harness refuses netdevsim before any case runs
# (NetDrvEpEnv(nsim_test=False) raises KsftXfailEx), it exits 1 with no
# KTAP plan, and the reason must be that one.
EXPECT = {
    "nl_netdev": ("net/nl_netdev.py",
                  {"empty_check": "ok", "lo_check": "ok", "page_pool_check": "ok"}),
    "queues": ("drivers/net/queues.py", {"get_queues": "ok", "addremove_queues": "ok"}),
    "stats": ("drivers/net/stats.py",
              {"check_pause": "ok", "check_fec": "ok", "pkt_byte_sum": "ok",
               "qstat_by_ifindex": "ok", "check_down": "ok"}),
    "pp_alloc_fail": ("drivers/net/hw/pp_alloc_fail.py", None),
    # pointed at the lab's netdevsim port through the hardware env: with
    # 0013 netdevsim reports rx-alloc-fail, so the test goes on to its
    # traffic generator, iperf3, which the lab does not carry (and
    # netdevsim's plain RX path allocates nothing from its page pools, so
    # no injected failure could show there); before 0013 it stopped at
    # "Driver does not report 'rx-alloc-fail'"
    "pp_alloc_fail_netif": ("drivers/net/hw/pp_alloc_fail.py",
                            {"test_pp_alloc": ("skip", "requires command: iperf3")}),
}
XFAIL_NSIM = "KsftXfailEx: Test does not work on netdevsim"
KTAP = re.compile(r"^(ok|not ok) (\d+) (\S+)(?:\s+#\s*(\w+)\s*(.*))?$")
TOTALS = re.compile(r"^# Totals: pass:(\d+) fail:(\d+) xfail:(\d+) xpass:(\d+) skip:(\d+) "
                    r"error:(\d+)")


def ktap(path):
    """(plan, {case: (ok, directive, reason)}, totals dict or None)."""
    plan, cases, totals = None, {}, None
    for line in (read(path) or "").splitlines():
        if line.startswith("1.."):
            plan = int(line[3:])
            continue
        m = KTAP.match(line)
        if m:
            case = m.group(3).split(".", 1)[-1]
            cases[case] = (m.group(1) == "ok", (m.group(4) or "").upper(), m.group(5) or "")
            continue
        m = TOTALS.match(line)
        if m:
            totals = dict(zip(("pass", "fail", "xfail", "xpass", "skip", "error"),
                              (int(x) for x in m.groups())))
    return plan, cases, totals


def check_ktap(c, d, name):
    src, want = EXPECT[name]
    rc = read_int(os.path.join(d, name + ".rc"))
    err = read(os.path.join(d, name + ".err"), "")
    plan, cases, totals = ktap(os.path.join(d, name + ".tap"))
    if want is None:
        c.check("%s (%s, as is) refuses netdevsim as its harness documents" % (name, src),
                rc not in (None, 0) and plan is None and XFAIL_NSIM in err,
                "rc=%s, KTAP plan %s, '%s' %s in stderr" % (rc, plan, XFAIL_NSIM,
                                                           "found" if XFAIL_NSIM in err
                                                           else "not found"),
                "see %s/%s.err" % (d, name))
        return
    bad, seen = [], []
    for case, exp in want.items():
        got = cases.get(case)
        if got is None:
            bad.append("%s: no result" % case)
            continue
        ok, directive, reason = got
        seen.append("%s %s%s" % (case, "ok" if ok else "not ok",
                                 " # %s %s" % (directive, reason) if directive else ""))
        if exp == "ok" and not (ok and directive == ""):
            bad.append("%s: expected a pass" % case)
        elif exp != "ok" and not (ok and directive == "SKIP" and exp[1] in reason):
            bad.append("%s: expected SKIP '%s'" % (case, exp[1]))
    extra = sorted(set(cases) - set(want))
    if extra:
        bad.append("cases not in EXPECT: %s" % extra)
    if rc in (137, 143):
        bad.append("killed after 300 s (scenarios/selftests.sh)")
    c.check("%s (%s) KTAP verdicts are the documented ones" % (name, src),
            rc == 0 and plan == len(want) and not bad,
            "rc=%s, plan %s; %s" % (rc, plan, "; ".join(seen)),
            "; ".join(bad) + " (see %s/%s.tap and .err)" % (d, name))
    if totals:
        c.info("%s KTAP totals" % name, " ".join("%s:%d" % kv for kv in totals.items()))


def trace_pools(path):
    """Per pool in a page_pool trace (PoolKeys: a pointer freed and reused
    by the next pool is two pools): the inflight of each of its
    page_pool_release events in order, and its hold/release event counts."""
    pools = {}
    keys = PoolKeys()
    for line in (read(path) or "").splitlines():
        for rx, key in ((PPREL, "rel"), (HOLD, "holds"), (REL, "releases")):
            m = rx.search(line)
            if not m:
                continue
            p = pools.setdefault(keys.key(m.group(1)), {"rel": [], "holds": 0,
                                                        "releases": 0, "counters": None})
            if key == "rel":
                p["rel"].append(int(m.group(2)))
                p["counters"] = (int(m.group(3)), int(m.group(4)))
                keys.released(m.group(1), p["rel"][-1])
            else:
                p[key] += 1
            break
    return pools


def dmt_pools(snaps, netns, win):
    """devmemtop's pools of one test's window (floor, t0, t1): on netdevs of
    netns with an ifindex above floor, first shown at t0 <= ts < t1. Per
    pool id, the states it was seen in (in order, repeats folded), the
    largest inflight seen while a zombie, its last snapshot, and the
    largest rx-alloc-fail of its RX queue (qstats; None if never read)."""
    floor, t0, t1 = win
    first, out = {}, {}
    for s in snaps:
        ts = s.get("ts_ns", 0) / 1e9
        for p in s.get("pools", []):
            ifi = p.get("ifindex")
            if ifi is None or ifi <= floor or (netns and p.get("netns") != netns):
                continue
            if not t0 <= first.setdefault(p["id"], ts) < t1:
                continue
            v = out.setdefault(p["id"], {"states": [], "zombie_inflight": None, "last": None,
                                         "rx_alloc_fail": None})
            if p.get("queue_rx_alloc_fail") is not None:
                v["rx_alloc_fail"] = max(v["rx_alloc_fail"] or 0, p["queue_rx_alloc_fail"])
            if not v["states"] or v["states"][-1] != p["state"]:
                v["states"].append(p["state"])
            if p["state"] == "zombie":
                v["zombie_inflight"] = max(v["zombie_inflight"] or 0, p["inflight"])
            v["last"] = p
    return out


def check_pools(c, d, name, snaps, netns, win):
    """devmemtop against the page_pool tracepoints of one test's window."""
    tr = trace_pools(os.path.join(d, name + ".trace"))
    destroyed = {k: v for k, v in tr.items() if v["rel"]}
    tz = sorted(v["rel"][0] for v in destroyed.values() if v["rel"][0] > 0)
    tgone = sum(1 for v in destroyed.values() if v["rel"][-1] == 0)
    dm = dmt_pools(snaps, netns, win)
    dz = sorted(v["zombie_inflight"] for v in dm.values() if v["zombie_inflight"] is not None)
    dgone = sum(1 for v in dm.values() if v["states"][-1] == "destroyed")
    detail = ("tracepoints: %d pool(s) destroyed, %d freed, zombies with inflight %s; "
              "devmemtop: %d pool(s) (%s), %d ended destroyed, zombies with inflight %s"
              % (len(destroyed), tgone, tz, len(dm),
                 ", ".join("%s:%s" % (k, ">".join(v["states"])) for k, v in sorted(dm.items())),
                 dgone, dz))
    c.check("%s: devmemtop saw every page pool the test created and destroyed" % name,
            len(destroyed) > 0 and len(dm) == len(destroyed), detail)
    c.check("%s: devmemtop's zombie pools are the tracepoints' (same inflight)" % name,
            len(destroyed) > 0 and dz == tz, "tracepoints %s, devmemtop %s" % (tz, dz))
    c.check("%s: every pool ends destroyed in devmemtop and freed in the kernel" % name,
            len(dm) > 0 and dgone == len(dm) and len(destroyed) > 0 and
            tgone == len(destroyed),
            "devmemtop %d/%d destroyed, tracepoints %d/%d freed" % (dgone, len(dm), tgone,
                                                                    len(destroyed)))
    return tr, dm


def check_ppfail(c, d):
    """The kernel side of ppfail: the failures injected when it ran
    (devmemtop is checked by check_ppfail_dmt then), else None."""
    skip = read(os.path.join(d, "ppfail.skip"))
    if skip is not None:
        # the lab kernels have it (kernel-patches/lab.config): a SKIP only
        # for a kernel built without it
        kcfg = read(os.path.join(os.path.dirname(d), "kconfig"), "")
        if "CONFIG_FAIL_FUNCTION=y" in kcfg.splitlines():
            c.check("ppfail: fail_function present (CONFIG_FAIL_FUNCTION=y)", False, skip.strip())
        else:
            c.skip("ppfail: the kernel's fault injection on the page pool's allocation",
                   skip.strip())
        return None
    kv = dict(l.split("=", 1) for l in (read(os.path.join(d, "ppfail.txt")) or "").split()
              if "=" in l)
    try:
        calls, ok, enomem, injected = (int(kv[k]) for k in ("calls", "allocated", "enomem",
                                                            "injected"))
    except (KeyError, ValueError):
        c.check("ppfail results readable", False, hint="see %s/ppfail.txt, scenario.log" % d)
        return None
    c.check("ppfail: failures the kernel injected == ENOMEMs the pp_hold writer saw",
            injected > 0 and injected == enomem and ok + enomem == calls,
            "fail_function on %s: %d injected (times %s -> %s); %d calls, "
            "%d allocated, %d ENOMEM" % (kv.get("func", "?"), injected, kv.get("times_set"),
                                         kv.get("times_left"), calls, ok, enomem))
    return injected


def check_ppfail_dmt(c, d, snaps, netns, win, injected):
    tr, dm = check_pools(c, d, "ppfail", snaps, netns, win)
    tr = {k: v for k, v in tr.items() if v["rel"]}	# the pools destroyed in its window
    if len(tr) != 1 or len(dm) != 1:
        c.check("ppfail: one pool in the tracepoints and in devmemtop", False,
                "tracepoints %d, devmemtop %d" % (len(tr), len(dm)))
        return
    t, v = next(iter(tr.values())), next(iter(dm.values()))
    p = v["last"]
    # netdevsim counts a failed page pool allocation of pp_hold as its
    # queue's rx-alloc-fail (0013); devmemtop reads it with qstats-get
    c.check("ppfail: devmemtop's rx-alloc-fail of the pool's queue == failures the kernel "
            "injected", v["rx_alloc_fail"] == injected,
            "devmemtop queue_rx_alloc_fail %s (largest seen), fail_function injected %d"
            % (v["rx_alloc_fail"], injected))
    c.check("ppfail: devmemtop's pool holds and releases are the tracepoints' "
            "(the failed calls added nothing in flight)",
            p.get("holds") == t["holds"] == (t["counters"] or (None,))[0] and
            p.get("releases") == t["releases"] == t["counters"][1] and p.get("inflight") == 0,
            "devmemtop holds %s releases %s inflight %s; tracepoints %d hold / %d release "
            "events, counters at destroy %s" % (p.get("holds"), p.get("releases"),
                                                p.get("inflight"), t["holds"], t["releases"],
                                                t["counters"]))


def check_nl_netdev(c, tr, dm):
    """nl_netdev.py's page_pool_check on a 1-queue netdevsim: up 4 times
    (4 pools); pp_hold keeps 1 page across the 2nd down and across the
    device's removal (2 zombies, inflight 1 each, both freed later)."""
    destroyed = [v for v in tr.values() if v["rel"]]
    z = sorted(v["zombie_inflight"] for v in dm.values() if v["zombie_inflight"] is not None)
    c.check("nl_netdev: 4 pools, 2 of them zombies holding pp_hold's 1 page (devmemtop)",
            len(dm) == 4 and len(destroyed) == 4 and z == [1, 1],
            "devmemtop %d pools, zombie inflight %s; tracepoints %d pools" % (len(dm), z,
                                                                              len(destroyed)))


def start_of(d, name):
    """Uptime when the test started (<test>.t: "start end")."""
    try:
        return float((read(os.path.join(d, name + ".t")) or "").split()[0])
    except (IndexError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--scenarios", nargs="+", required=True)
    a = ap.parse_args()
    if "selftests" not in a.scenarios:
        return 0
    c = Checks("[%s]" % a.kernel)
    d = os.path.join(a.dir, "selftests")
    skip = read(os.path.join(d, "skip"))
    if skip is not None:
        c.skip("kernel selftests", skip.strip())
    elif not os.path.isdir(d):
        c.check("selftests ran", False, "no %s" % d)
    else:
        for name in EXPECT:
            check_ktap(c, d, name)
        injected = check_ppfail(c, d)
        ppfail_ran = injected is not None
        if not os.access(DEVMEMTOP, os.X_OK):
            c.skip("devmemtop checks of selftests", "%s not built" % DEVMEMTOP)
        else:
            rec = os.path.join(d, "devmemtop.dmtrec")
            c.check("devmemtop record selftests exit status",
                    read_int(os.path.join(d, "devmemtop-record.rc")) == 0,
                    hint="see %s/devmemtop-record.log" % d)
            code, snaps, err = snapshots(rec)
            netns = None
            m = re.search(r"\[(\d+)\]", read(os.path.join(d, "netns"), ""))
            if m:
                netns = int(m.group(1))
            floors = [read_int(os.path.join(d, t + ".ifindex")) for t in TESTS]
            starts = [start_of(d, t) for t in TESTS]
            want = [i for i, t in enumerate(TESTS) if t != "ppfail" or ppfail_ran]
            if c.check("devmemtop recording readable, test windows known",
                       code == 0 and snaps and netns and
                       all(floors[i] is not None and starts[i] is not None for i in want),
                       "%d snapshots, ifindex floors %s, starts %s, netns %s"
                       % (len(snaps), floors, starts, netns), err):
                win = {}
                for i, t in enumerate(TESTS):
                    nxt = [x for x in starts[i + 1:] if x is not None]
                    win[t] = (floors[i], starts[i], nxt[0] if nxt else float("inf"))
                tr, dm = check_pools(c, d, "nl_netdev", snaps, netns, win["nl_netdev"])
                check_nl_netdev(c, tr, dm)
                check_pools(c, d, "queues", snaps, netns, win["queues"])
                check_pools(c, d, "stats", snaps, netns, win["stats"])
                if ppfail_ran:
                    check_ppfail_dmt(c, d, snaps, netns, win["ppfail"], injected)
    print("selftests: %d passed, %d failed, %d skipped" % (c.n["PASS"], c.n["FAIL"],
                                                           c.n["SKIP"]))
    return 1 if c.n["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
