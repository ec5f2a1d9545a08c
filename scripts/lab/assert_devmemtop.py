#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""assert_devmemtop.py --dir OUT --kernel NAME --patched-only "P B" --scenarios S...

The devmemtop-specific checks of one lab VM run: this is the one place to
extend them. What the guest produced for each scenario (see
scripts/lab/guest/lib.sh, lab_run_scenario, and scenarios/*.sh):

  <scenario>/devmemtop.dmtrec      devmemtop record -i <interval> -- <scenario>
  <scenario>/devmemtop-record.rc   its exit status
  bulk/devmemtop-bound.json        devmemtop --json -n 1 -I <rx if>, bound and idle
  bulk/pools-bound.json            netlink page-pool-get right after it

Checks here:
  * each scenario's recording is gated on the host with
    specs/lab-<scenario>.yaml and the verdict must be the one the spec's
    header documents (which rows fail, and which must pass);
  * bulk: each devmem pool's inflight in devmemtop's snapshot agrees with
    netlink page-pool-get.
Without build/devmemtop every check prints SKIP with the reason.
Prints "devmemtop: N passed, N failed, N skipped"; exit 1 if anything failed.
"""
import argparse
import json
import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEVMEMTOP = os.environ.get("DEVMEMTOP_BIN", os.path.join(REPO, "build", "devmemtop"))
SPECS = {"bulk": "lab-bulk.yaml", "exhaust": "lab-exhaustion.yaml", "leak": "lab-leak.yaml"}


def expected_verdict(scenario, has_patched_only):
    """(result, rows that must FAIL, rows that may FAIL) from the spec headers.
    Rows not listed must PASS."""
    if scenario == "bulk":
        if has_patched_only:
            # 0004 freelist + 0005 bulk refill: refills of up to 64 net_iovs
            return "pass", set(), set()
        # gen_pool kernel: one net_iov per provider call
        return "fail", set(), {"pool.refill_batch", "binding.niovs_per_call"}
    if scenario == "exhaust":
        return "fail", {"binding.alloc_failures", "binding.occupancy"}, {"binding.free_niovs"}
    if scenario == "leak":
        return "fail", set(), {"binding.out_at_unbind", "pool.zombies"}
    return None


class Checks:
    def __init__(self, prefix):
        self.prefix = prefix
        self.n = {"PASS": 0, "FAIL": 0, "SKIP": 0}

    def check(self, name, ok, detail=""):
        st = "PASS" if ok else "FAIL"
        self.n[st] += 1
        print("%s %s %s%s" % (st, self.prefix, name, (": " + detail) if detail else ""))
        return ok

    def skip(self, name, reason):
        self.n["SKIP"] += 1
        print("SKIP %s %s: %s" % (self.prefix, name, reason))


def last_json(path):
    try:
        with open(path) as f:
            lines = [l for l in f.read().splitlines() if l.strip()]
        return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None


def gate(c, d, scenario, has_patched_only):
    name = "devmemtop gate %s" % scenario
    rec = os.path.join(d, "devmemtop.dmtrec")
    spec = os.path.join(REPO, "specs", SPECS[scenario])
    if not os.path.exists(spec):
        c.skip(name, "no spec %s" % os.path.relpath(spec, REPO))
        return
    if not os.path.exists(rec):
        log = os.path.join(d, "devmemtop-record.log")
        c.check(name + " recording made", False, "no %s (see %s)" % (rec, log))
        return
    out = os.path.join(d, "gate.json")
    p = subprocess.run([DEVMEMTOP, "gate", "--spec", spec, "--from", rec, "--json", out,
                        "--junit", os.path.join(d, "gate.xml")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(os.path.join(d, "gate.txt"), "w") as f:
        f.write(p.stdout)
    try:
        with open(out) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        c.check(name + " result", False, "exit %d, no JSON result (%s); output in %s/gate.txt"
                % (p.returncode, e, d))
        return
    want, must_fail, may_fail = expected_verdict(scenario, has_patched_only)
    failed = {r["metric"] for r in res.get("thresholds", []) if r["status"] != "PASS"}
    c.check(name + " verdict", res.get("result") == want,
            "result %s (exit %d), expected %s; failing rows: %s"
            % (res.get("result"), p.returncode, want, sorted(failed) or "none"))
    c.check(name + " failing rows are the expected ones",
            must_fail <= failed and failed <= (must_fail | may_fail)
            and (want == "pass" or failed),
            "failing %s, must fail %s, may fail %s" % (sorted(failed), sorted(must_fail),
                                                       sorted(may_fail)))


def inflight_vs_netlink(c, d):
    name = "devmemtop bulk pool inflight agrees with netlink page-pool-get"
    snap = last_json(os.path.join(d, "devmemtop-bound.json"))
    nl = last_json(os.path.join(d, "pools-bound.json"))
    if snap is None:
        c.check(name, False, "no devmemtop --json snapshot (see devmemtop-bound.log)")
        return
    if nl is None:
        c.check(name, False, "no pools-bound.json")
        return
    nl_by_id = {p["id"]: p for p in nl}
    dm = [p for p in snap.get("pools", []) if p.get("binding_id") is not None]
    if not c.check(name + " (devmem pool present)", len(dm) >= 1,
                   "%d devmem pool(s) in the snapshot" % len(dm)):
        return
    bad = []
    for p in dm:
        n = nl_by_id.get(p["id"])
        if n is None or p.get("inflight") != n["inflight"]:
            bad.append("pool %s: devmemtop %s, netlink %s" % (
                p["id"], p.get("inflight"), None if n is None else n["inflight"]))
    c.check(name, not bad, "; ".join(bad) or "%d pool(s) equal" % len(dm))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--patched-only", default="0 0",
                    help="'<patches in patched> <patches in baseline>'")
    ap.add_argument("--scenarios", nargs="+", required=True)
    a = ap.parse_args()
    try:
        np, nb = (int(x) for x in a.patched_only.split())
    except ValueError:
        print("assert_devmemtop.py: --patched-only wants two numbers", file=sys.stderr)
        return 2
    has_patched_only = a.kernel == "patched" and np > nb
    c = Checks("[%s]" % a.kernel)
    if not os.access(DEVMEMTOP, os.X_OK):
        for s in a.scenarios:
            c.skip("devmemtop checks of " + s,
                   "%s not built (run the top-level make first)" % DEVMEMTOP)
    else:
        for s in a.scenarios:
            d = os.path.join(a.dir, s)
            if s not in SPECS:
                c.skip("devmemtop checks of " + s, "no devmemtop assertions for this scenario")
                continue
            rc = os.path.join(d, "devmemtop-record.rc")
            if os.path.exists(rc):
                with open(rc) as f:
                    c.check("devmemtop record %s exit status" % s, f.read().strip() == "0",
                            "see %s/devmemtop-record.log" % d)
            gate(c, d, s, has_patched_only)
            if s == "bulk":
                inflight_vs_netlink(c, d)
    print("devmemtop: %d passed, %d failed, %d skipped" % (c.n["PASS"], c.n["FAIL"], c.n["SKIP"]))
    return 1 if c.n["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
