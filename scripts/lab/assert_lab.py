#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""assert_lab.py --dir OUT --kernel NAME --scenarios S... [--qemu-rc N]

Kernel-side checks of one lab VM run, from what the guest brought back:
the console and dmesg (no WARN/BUG/Call Trace, untainted), the traffic
tool's JSON, netlink page-pool-get dumps, netdev rx_dropped and the
page_pool tracepoints. devmemtop's own checks are in assert_devmemtop.py.
Prints one PASS/FAIL/SKIP line per check and "lab: N passed, N failed,
N skipped"; exit 1 if anything failed.
"""
import argparse
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True	# no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the shared helpers (a leaf module), then the scenario modules' SCENARIOS
from labcheck import Checks, check_trace, read, read_int, read_json  # noqa: E402
import assert_niov  # noqa: E402
import assert_pods  # noqa: E402

PAGE = 4096
MiB = 1 << 20
# anything of these on the console or in dmesg fails the run
BAD = re.compile(r"WARNING:|BUG:|Call Trace:|Oops|Kernel panic|general protection fault"
                 r"|UBSAN:|KASAN:|refcount_t:|rcu_sched self-detected stall|hung_task")


def gone_detail(d):
    """When the binding's pool disappeared, and whether the CPU defer lists
    had to be flushed first (guest/lib.sh lab_wait_pool_gone)."""
    g = dict(kv.split("=", 1) for kv in read(os.path.join(d, "pool-gone.txt"), "").split()
             if "=" in kv)
    txt = "gone %s s after the receiver exited" % g.get("seconds", "?")
    if g.get("flushed") == "1":
        before = read_json(os.path.join(d, "pools-before-flush.json")) or []
        txt += (", after NET_RX ran on every CPU (skbs parked on CPU defer lists held "
                "net_iovs: %s)" % ", ".join("pool %d inflight %d" % (p["id"], p["inflight"])
                                           for p in before if p.get("dmabuf", -1) >= 0))
    return txt


def pools_of(lst, binding):
    return [p for p in (lst or []) if p.get("dmabuf") == binding]


def common_rx(c, d, rx, name):
    c.check(name + " zero payload mismatches", rx["mismatches"] == 0,
            "mismatches=%d first=%d" % (rx["mismatches"], rx["first_mismatch"]))
    c.check(name + " all payload in dmabuf frags", rx["linear_bytes"] == 0
            and rx["dmabuf_bytes"] == rx["bytes"] and rx["wrong_binding"] == 0,
            "dmabuf=%d linear=%d wrong_binding=%d" % (rx["dmabuf_bytes"], rx["linear_bytes"],
                                                      rx["wrong_binding"]))


def scenario_bulk(c, d):
    rx, tx = read_json(os.path.join(d, "rx.json")), read_json(os.path.join(d, "tx.json"))
    if not c.check("bulk traffic tool output", rx is not None and tx is not None,
                   hint="rx.json/tx.json missing or not JSON (see rx.log, tx.log)"):
        return
    c.check("bulk rx/tx exit status", read_int(os.path.join(d, "rx.rc")) == 0
            and read_int(os.path.join(d, "tx.rc")) == 0 and tx["complete"])
    c.check("bulk 64 MiB received", rx["bytes"] == 64 * MiB and rx["eof"] is False,
            "bytes=%d" % rx["bytes"])
    common_rx(c, d, rx, "bulk")
    c.check("bulk every token returned", rx["tokens_returned"] == rx["frags"] > 0
            and rx["tokens_leaked"] == 0,
            "frags=%d returned=%d" % (rx["frags"], rx["tokens_returned"]))
    drop = (read_int(os.path.join(d, "rx_dropped.after")) or 0) - \
        (read_int(os.path.join(d, "rx_dropped.before")) or 0)
    c.check("bulk no allocation failure (rx_dropped)", drop == 0, "rx_dropped +%d" % drop)
    bid = rx["binding_id"]
    bound = read_json(os.path.join(d, "pools-bound.json"))
    c.check("bulk devmem pool listed by page-pool-get while bound",
            bound is not None and len(pools_of(bound, bid)) == 1,
            "pools with dmabuf=%d: %s" % (bid, pools_of(bound, bid)))
    after = read_json(os.path.join(d, "pools-after.json"))
    c.check("bulk binding occupancy back to zero (its pool is gone)",
            after is not None and not pools_of(after, bid), gone_detail(d),
            "still listed after 10 s: %s" % pools_of(after, bid))
    check_trace(c, d, "bulk")
    c.info("bulk throughput", "%.1f MB/s, %d frags, %.2f s" % (rx["mbytes_per_s"], rx["frags"],
                                                              rx["seconds"]))


def scenario_exhaust(c, d):
    rx, tx = read_json(os.path.join(d, "rx.json")), read_json(os.path.join(d, "tx.json"))
    if not c.check("exhaust traffic tool output", rx is not None and tx is not None,
                   hint="rx.json/tx.json missing or not JSON (see rx.log, tx.log)"):
        return
    c.check("exhaust receiver ok, sender stalled", read_int(os.path.join(d, "rx.rc")) == 0
            and read_int(os.path.join(d, "tx.rc")) == 3 and not tx["complete"]
            and rx["idle_timeout"],
            "rx.rc=%s tx.rc=%s" % (read_int(os.path.join(d, "rx.rc")),
                                   read_int(os.path.join(d, "tx.rc"))))
    common_rx(c, d, rx, "exhaust")
    niovs = rx["dmabuf_size"] // PAGE
    c.check("exhaust receiver held tokens on at most every net_iov",
            0 < rx["pages_held"] <= niovs and rx["tokens_held_max"] >= rx["pages_held"],
            "%d tokens on %d distinct net_iovs of %d" % (rx["tokens_held_max"],
                                                        rx["pages_held"], niovs))
    drop = (read_int(os.path.join(d, "rx_dropped.after")) or 0) - \
        (read_int(os.path.join(d, "rx_dropped.before")) or 0)
    c.check("exhaust allocation failures counted (rx_dropped)", drop > 0,
            "rx_dropped +%d" % drop)
    bid = rx["binding_id"]
    end = pools_of(rx.get("pools_at_end"), bid)
    c.check("exhaust binding occupancy 100% (pool inflight == net_iovs)",
            len(end) == 1 and end[0]["inflight"] == niovs,
            "inflight %s of %d" % ([p["inflight"] for p in end], niovs))
    c.check("exhaust every token returned at the end",
            rx["tokens_returned"] == rx["frags"] and rx["tokens_leaked"] == 0,
            "frags=%d returned=%d" % (rx["frags"], rx["tokens_returned"]))
    after = read_json(os.path.join(d, "pools-after.json"))
    c.check("exhaust binding occupancy back to zero (its pool is gone)",
            after is not None and not pools_of(after, bid),
            gone_detail(d),
            "still listed after 10 s: %s" % pools_of(after, bid))
    check_trace(c, d, "exhaust")


def scenario_leak(c, d):
    rx, tx = read_json(os.path.join(d, "rx.json")), read_json(os.path.join(d, "tx.json"))
    if not c.check("leak traffic tool output", rx is not None and tx is not None,
                   hint="rx.json/tx.json missing or not JSON (see rx.log, tx.log)"):
        return
    c.check("leak rx/tx exit status", read_int(os.path.join(d, "rx.rc")) == 0
            and read_int(os.path.join(d, "tx.rc")) == 0)
    common_rx(c, d, rx, "leak")
    c.check("leak receiver returned no token", rx["tokens_returned"] == 0
            and rx["tokens_leaked"] == rx["frags"] > 0,
            "frags=%d leaked=%d" % (rx["frags"], rx["tokens_leaked"]))
    bid = rx["binding_id"]
    z = pools_of(rx.get("pools_after_unbind"), bid)
    c.check("leak unbind leaves a zombie pool (detached, inflight >= net_iovs held)",
            len(z) == 1 and z[0]["detach_time"] > 0 and z[0]["inflight"] >= rx["pages_held"] > 0,
            "after unbind: %s; %d tokens on %d net_iovs held" % (z, rx["tokens_leaked"],
                                                                rx["pages_held"]))
    if z:
        c.info("leak reported at unbind", "pool %d inflight %d (%d bytes), detach_time %d, "
               "%d tokens held by the socket" % (z[0]["id"], z[0]["inflight"],
                                                 z[0]["inflight_mem"], z[0]["detach_time"],
                                                 rx["tokens_leaked"]))
    after = read_json(os.path.join(d, "pools-after.json"))
    c.check("leak socket close released the tokens: pool gone",
            after is not None and not pools_of(after, bid),
            gone_detail(d),
            "still listed after 10 s: %s" % pools_of(after, bid))
    check_trace(c, d, "leak")


SCENARIOS = {"bulk": scenario_bulk, "exhaust": scenario_exhaust, "leak": scenario_leak}
# issue #10: rx-page-size sweep and bad binds (assert_niov.py)
SCENARIOS.update(assert_niov.SCENARIOS)
# issue 24: holders by pod (assert_pods.py)
SCENARIOS.update(assert_pods.SCENARIOS)
# issue 22: the frag token commit race (assert_race.py)
import assert_race  # noqa: E402
SCENARIOS.update(assert_race.SCENARIOS)
import assert_netcons  # noqa: E402  issue 22, D2 (on demand, lockdep kernel)
SCENARIOS.update(assert_netcons.SCENARIOS)
import assert_autorelease  # noqa: E402  issue 21 (on demand, patched kernel)
SCENARIOS.update(assert_autorelease.SCENARIOS)
import assert_lighttok  # noqa: E402  issue 25, token side (on demand)
SCENARIOS.update(assert_lighttok.SCENARIOS)
import assert_lightscale  # noqa: E402  issue 25, benchmarks (on demand)
SCENARIOS.update(assert_lightscale.SCENARIOS)
import assert_ntf  # noqa: E402  issue 25, page-pool notifications
SCENARIOS.update(assert_ntf.SCENARIOS)
import assert_ynl  # noqa: E402  issue 34, ynltool as a second reader
SCENARIOS.update(assert_ynl.SCENARIOS)


TAINT_TEST = 1 << 18     # 'N': a KUnit suite ran


def check_kunit(c, d, parser):
    """KUnit suites built into the kernel ran at boot; the guest saved the
    kernel log (boot-dmesg.txt). Parse it with the pinned tree's kunit.py.
    Returns True when suites ran (the kernel is then tainted 'N')."""
    log = os.path.join(d, "boot-dmesg.txt")
    text = read(log)
    if text is None:
        c.check("kunit: boot log saved", False, "no %s" % log)
        return False
    # KUnit core alone prints "KTAP version 1" and "1..0": no suite ran
    if "# Subtest:" not in text:
        # the booted kernel's config says whether suites are built in (6.12's
        # lab-patched.config with patched-only 0006; not 7.3's patched kernel yet)
        if "CONFIG_NET_DEVMEM_KUNIT_TEST=y" in (read(os.path.join(d, "kconfig")) or ""):
            c.check("kunit: suites ran at boot", False, "no KTAP output in %s" % log)
        else:
            c.skip("kunit", "no KUnit suite is built into the %s kernel "
                   "(CONFIG_NET_DEVMEM_KUNIT_TEST: 6.12's patched-only 0006)" % c.kernel)
        return False
    if not parser or not os.path.exists(parser):
        c.check("kunit: parser", False, "kunit.py not found at %r" % parser)
        return True
    out = os.path.join(d, "kunit.txt")
    with open(out, "w") as f:
        rc = subprocess.call([sys.executable, parser, "parse", os.path.abspath(log)], stdout=f,
                             stderr=subprocess.STDOUT)
    res = read(out, "")
    done = [l.split("] ", 1)[-1].strip() for l in res.splitlines() if "Testing complete" in l]
    # kunit.py parse exits 0 whatever the results: read its summary line,
    # "Testing complete. Ran N tests: passed: N[, failed: F][, crashed: C]..."
    m = re.search(r"Ran (\d+) tests: passed: (\d+)(.*)", done[-1]) if done else None
    ran, passed = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    c.check("kunit: every case passed (kunit.py parse of the boot log)",
            rc == 0 and m is not None and ran > 0 and passed == ran,
            "%s (rc %d)" % (done[-1] if done else "no summary", rc), "see %s" % out)
    c.check("kunit: suite net_devmem_freelist ran, >= 8 cases",
            "net_devmem_freelist" in res and ran >= 8, "%d tests" % ran)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--qemu-rc", type=int, default=0)
    ap.add_argument("--kunit-parser", help="tools/testing/kunit/kunit.py of the pinned tree")
    ap.add_argument("--scenarios", nargs="+", required=True)
    a = ap.parse_args()
    if not os.path.isdir(a.dir):
        print("assert_lab.py: no directory %s" % a.dir, file=sys.stderr)
        return 2
    c = Checks("[%s]" % a.kernel)
    c.kernel = a.kernel

    console = read(os.path.join(a.dir, "console.log"), "")
    dmesg = read(os.path.join(a.dir, "dmesg.txt"))
    c.check("vm exited cleanly", a.qemu_rc == 0, "qemu rc %d" % a.qemu_rc)
    c.check("guest finished", read_int(os.path.join(a.dir, "guest.rc")) is not None,
            hint="no guest.rc: the guest did not reach the end (see console.log)")
    c.check("lab setup", "LAB: FAIL lab setup" not in console,
            hint="see %s/setup.log" % a.dir)
    bad = [l for l in console.splitlines() + (dmesg or "").splitlines() if BAD.search(l)]
    if "netcons" in a.scenarios:
        # it asks for NMI backtraces (sysrq l) on purpose: their "Call
        # Trace:" lines are not failures; a WARNING/BUG still is
        n = len(bad)
        bad = [l for l in bad if "Call Trace:" not in l]
        c.info("console", "%d 'Call Trace:' lines of the netcons scenario's sysrq "
               "backtraces not counted" % (n - len(bad)))
    c.check("no WARN/BUG/Call Trace on the console or in dmesg", not bad,
            "; ".join(sorted(set(l.strip() for l in bad))[:5]))
    c.check("dmesg captured", dmesg is not None)
    kunit_ran = check_kunit(c, a.dir, a.kunit_parser)
    tainted = read_int(os.path.join(a.dir, "tainted"))
    allowed = TAINT_TEST if kunit_ran else 0
    c.check("kernel not tainted" + (" (but for 'N': KUnit ran)" if kunit_ran else ""),
            tainted is not None and tainted & ~allowed == 0, "tainted=%s" % tainted)

    for s in a.scenarios:
        d = os.path.join(a.dir, s)
        if not os.path.isdir(d):
            c.check(s + " ran", False, "no results directory")
            continue
        c.check(s + " scenario script exit status", read_int(os.path.join(d, "rc")) == 0,
                "rc=%s" % read_int(os.path.join(d, "rc")), "see %s/scenario.log" % d)
        fn = SCENARIOS.get(s)
        if fn is None:
            own = os.path.join(os.path.dirname(os.path.abspath(__file__)), s + "-check.sh")
            if s == "selftests":
                c.info(s + " assertions", "in assert_selftests.py; %s s in the guest"
                       % read(os.path.join(d, "seconds"), "?").strip())
                continue
            c.skip(s + " assertions", "checked by scripts/lab/%s-check.sh once both kernels ran"
                   % s if os.path.exists(own) else "no assertions in assert_lab.py for it")
            continue
        try:
            fn(c, d)
        except (KeyError, TypeError, ValueError) as e:
            c.check(s + " results readable", False, "%s: %s" % (type(e).__name__, e))
        secs = read(os.path.join(d, "seconds"), "?").strip()
        c.info(s + " duration", secs + " s in the guest")

    print("lab: %d passed, %d failed, %d skipped" % (c.n["PASS"], c.n["FAIL"], c.n["SKIP"]))
    return 1 if c.n["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
