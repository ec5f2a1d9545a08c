#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""assert_devmemtop.py --dir OUT --kernel NAME --patched-only "P B" --scenarios S...

The devmemtop-specific checks of one lab VM run: this is the one place to
extend them. What the guest produced for each scenario (see
scripts/lab/guest/lib.sh, lab_run_scenario, and scenarios/*.sh):

  <scenario>/devmemtop.dmtrec      devmemtop record -i <interval> -- <scenario>
  <scenario>/devmemtop-record.rc   its exit status
  bulk/devmemtop-live.json         devmemtop --json -i 500ms through the scenario
  bulk/pools-bound.json            netlink page-pool-get while bound and idle,
                                   between two of its snapshots
  bulk/devmemtop-default.json      the default, -m devmem, beside it; so in
                                   exhaust, leak and sweep too (autorelease:
                                   autorelease/default.json)

Checks here:
  * each scenario's recording is gated on the host with
    specs/lab-<scenario>.yaml and the verdict must be the one the spec's
    header documents (which rows fail, and which must pass);
  * bulk: each devmem pool's inflight in devmemtop's snapshot agrees with
    netlink page-pool-get, and its releases and refills with the kernel's
    page-pool-stats-get counters (issue 25);
  * bulk, exhaust, leak, sweep (issue 25, exactness): the -m light
    devmemtop that ran beside the full mode (<scenario>/devmemtop-light.json)
    has the same held_tokens, held_by_sockets and holder rows as the full
    mode and the traffic tool's own counts at the scenario's settled point;
  * bulk (issue 36): the default, -m devmem, has every devmem figure of the
    full mode at the idle point (default_vs_full), at no more BPF run time
    per devmem niov (default_cost_per_niov);
  * exhaust, leak, sweep (each run), autorelease (each run; SKIP without
    the option) (issue 36): the same figures, the default's
    <scenario>/devmemtop-default.json (autorelease/default.json) against
    the full-mode recording, at each binding's free and its pool's destroy
    (default_vs_full_final; the binding's in_pools, not final there, by
    the pool's own final inflight).
Without build/devmemtop every check prints SKIP with the reason.
Prints "devmemtop: N passed, N failed, N skipped"; exit 1 if anything failed.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labcheck import DEVMEMTOP, REPO, Checks, gate_from  # noqa: E402  the lab's shared helpers
from labcheck import read, read_json, recording_snapshots  # noqa: E402
from assert_tokens import token_identities  # noqa: E402  issue 11: frag token identities
from assert_tokens import incomplete_why, light_held_in_window, light_vs_full_held  # noqa: E402
from assert_autorelease import RUNS as AUTORELEASE_RUNS  # noqa: E402  its runs' directories
SPECS = {"bulk": "lab-bulk.yaml", "exhaust": "lab-exhaustion.yaml", "leak": "lab-leak.yaml"}


def expected_verdict(scenario, has_patched_only):
    """(rows that must FAIL, rows that may FAIL), from the spec headers;
    every other row must PASS. The gate's result must be "fail" exactly
    when some row failed."""
    if scenario == "bulk":
        if has_patched_only:
            # 0004 freelist + 0005 bulk refill: refills of up to 64 net_iovs
            return set(), set()
        # gen_pool kernel: one net_iov per provider call
        return {"pool.refill_batch", "binding.niovs_per_call"}, set()
    if scenario == "exhaust":
        # at 100 % occupancy free_niovs is 0, so its "min > 0" row fails too
        return {"binding.alloc_failures", "binding.occupancy", "binding.free_niovs"}, set()
    if scenario == "leak":
        # tokens are still held at unbind, so the pool is a zombie then; they
        # are never returned: the kernel releases them at close (issue 11)
        return {"binding.out_at_unbind", "pool.zombies", "binding.tokens_released"}, set()
    return None


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
        c.check(name + " recording made", False, hint="no %s (see %s)" % (rec, log))
        return
    res, rc, e = gate_from(spec, rec, d)
    if res is None:
        c.check(name + " result", False, hint="exit %d, no JSON result (%s); output in %s/gate.txt"
                % (rc, e, d))
        return
    # the bulk refill comes with the freelist (6.12's 0004 + 0005), not with
    # every patched kernel (7.3's has only the token race fix so far): the
    # binding's layout, as devmemtop read it, says which
    layouts = {b.get("layout") for s in snapshots(os.path.join(d, "devmemtop-live.json"))
               for b in s.get("bindings", [])}
    must_fail, may_fail = expected_verdict(scenario, has_patched_only and "freelist" in layouts)
    rows = res.get("thresholds", [])
    failed = {r["metric"] for r in rows if r["status"] != "PASS"}
    want = "fail" if failed else "pass"
    c.check(name + " verdict consistent with its rows", res.get("result") == want,
            "result %s (exit %d), failing rows: %s" % (res.get("result"), rc,
                                                      sorted(failed) or "none"))
    c.check(name + " failing rows are the documented ones",
            must_fail <= failed <= (must_fail | may_fail),
            "failing %s; must fail %s; may fail %s" % (sorted(failed) or "none",
                                                       sorted(must_fail) or "none",
                                                       sorted(may_fail) or "none"))
    for r in rows:
        if r["metric"] in may_fail and r["status"] != "PASS":
            print("NOTE %s %s: %s %s observed %s (allowed, see assert_devmemtop.py)"
                  % (c.prefix, name, r["metric"], r["expr"], r["observed"]))


def snapshots(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def inflight_vs_netlink(c, d):
    """devmemtop --json ran through the whole bulk scenario; while the
    receiver was bound and idle (every token back), netlink page-pool-get
    was dumped between two of its snapshots. The devmem pool's inflight
    (devmemtop: hold - release from the tracepoints) must equal netlink's."""
    name = "devmemtop bulk pool inflight agrees with netlink page-pool-get"
    snaps = [s for s in snapshots(os.path.join(d, "devmemtop-live.json"))
             if any(p.get("binding_id") is not None for p in s.get("pools", []))]
    nl = last_json(os.path.join(d, "pools-bound.json"))
    if not snaps:
        c.check(name, False, hint="no devmemtop snapshot with a devmem pool "
                "(see devmemtop-live.log)")
        return
    if nl is None:
        c.check(name, False, hint="no pools-bound.json")
        return
    nl_by_id = {p["id"]: p for p in nl if p.get("dmabuf", -1) >= 0}
    last = snaps[-1]
    # The idle pool can still give niovs back after the dump (skbs freed
    # late), so with the dump's time known (pools-bound.t: uptime before
    # and after; ts_ns is CLOCK_MONOTONIC, the same clock in the VM) the
    # snapshots that bracket it are compared: netlink's value must be
    # theirs, or between theirs if the pool moved across the dump.
    after = last
    try:
        with open(os.path.join(d, "pools-bound.t")) as f:
            t0, t1 = (float(x) for x in f.read().split())
        pre = [s for s in snaps if s["ts_ns"] / 1e9 <= t0]
        post = [s for s in snaps if s["ts_ns"] / 1e9 >= t1]
        if pre and post:
            last, after = pre[-1], post[0]
    except (OSError, ValueError):
        pass
    after_by_id = {p["id"]: p for p in after.get("pools", []) if p.get("binding_id") is not None}
    dm = [p for p in last.get("pools", []) if p.get("binding_id") is not None]
    bad, seen = [], []
    for p in dm:
        n = nl_by_id.get(p["id"])
        a = after_by_id.get(p["id"], p)
        lo, hi = sorted((p.get("inflight"), a.get("inflight")))
        seen.append("pool %s: devmemtop %s..%s (snapshots %s, %s; netlink field %s), "
                    "page-pool-get %s" % (p["id"], p.get("inflight"), a.get("inflight"),
                                          last.get("seq"), after.get("seq"),
                                          p.get("netlink_inflight"),
                                          None if n is None else n["inflight"]))
        if n is None or not lo <= n["inflight"] <= hi:
            bad.append(seen[-1])
    c.check(name, bool(dm) and not bad, "; ".join(seen),
            "devmemtop and netlink disagree" if bad else "no devmem pool")


def fentry_vs_tracepoints(c, d):
    """Two devmemtop instances watched the whole bulk run: the default one
    (devmem tracepoints on these kernels) and one capped at -m fentry
    (fentry/fexit on the devmem functions). At the idle, bound point their
    last snapshots must agree on the binding and on the devmem pool."""
    name = "devmemtop -m fentry agrees with the tracepoint mode"
    tp = [s for s in snapshots(os.path.join(d, "devmemtop-live.json")) if s.get("bindings")]
    fe = [s for s in snapshots(os.path.join(d, "devmemtop-fentry.json")) if s.get("bindings")]
    if not fe:
        c.check(name, False, hint="no -m fentry snapshot with a binding (see devmemtop-fentry.log)")
        return
    if not tp:
        c.check(name, False, hint="no tracepoint-mode snapshot with a binding")
        return
    t, f = tp[-1], fe[-1]
    c.check("devmemtop -m fentry runs in fentry mode", f.get("mode") == "fentry" and
            f["metrics"]["binding_alloc_latency"]["available"],
            "mode %s, alloc latency %s" % (f.get("mode"),
                                          f["metrics"]["binding_alloc_latency"]))
    tb = {b["id"]: b for b in t["bindings"]}
    diffs, seen = [], []
    for fb in f["bindings"]:
        b = tb.get(fb["id"])
        if b is None:
            diffs.append("binding %s only in fentry mode" % fb["id"])
            continue
        for k in ("layout", "total_niovs", "free_niovs", "in_pools", "alloc_calls",
                  "alloc_niovs", "alloc_failures", "dmabuf_size", "niov_size"):
            if fb.get(k) != b.get(k):
                diffs.append("binding %s %s: fentry %s, tracepoints %s" % (fb["id"], k, fb.get(k),
                                                                       b.get(k)))
        if not fb.get("alloc_calls") or fb.get("total_niovs") is None:
            diffs.append("binding %s: fentry mode saw no provider call or no size (%s calls, "
                         "total %s)" % (fb["id"], fb.get("alloc_calls"), fb.get("total_niovs")))
        lat = fb["alloc_latency_ns"]["count"]
        if lat != fb["alloc_calls"]:
            diffs.append("binding %s: %s alloc latencies for %s provider calls"
                         % (fb["id"], lat, fb["alloc_calls"]))
        seen.append("binding %s: %s, %s/%s free, %s calls, %s niovs, alloc p50 %s ns"
                    % (fb["id"], fb["layout"], fb["free_niovs"], fb["total_niovs"],
                       fb["alloc_calls"], fb["alloc_niovs"], fb["alloc_latency_ns"]["p50"]))
    tpools = {p["id"]: p for p in t["pools"] if p.get("binding_id") is not None}
    for fp in (p for p in f["pools"] if p.get("binding_id") is not None):
        p = tpools.get(fp["id"])
        if p is None:
            diffs.append("pool %s only in fentry mode" % fp["id"])
            continue
        for k in ("inflight", "holds", "releases", "binding_id", "kind"):
            if fp.get(k) != p.get(k):
                diffs.append("pool %s %s: fentry %s, tracepoints %s" % (fp["id"], k, fp.get(k),
                                                                    p.get(k)))
        if fp["refill_batch"]["sizes"] != p["refill_batch"]["sizes"]:
            diffs.append("pool %s refill batches differ" % fp["id"])
    c.check(name, bool(seen) and not diffs, "; ".join(seen), "; ".join(diffs))


def light_vs_tracepoints(c, d):
    """A third devmemtop ran -m light through the bulk run. At the idle,
    bound point its last snapshot must agree with the tracepoint mode's on
    the devmem pool's inflight, holds and releases (light counts from the
    pool's creation; both were attached before the bind, so both saw it),
    on the binding's occupancy, and on the devmem pool's refill batch sizes
    (light: one provider event per refill, the devmem_alloc tracepoint or
    the provider's fexit, so as many refills as the binding's provider calls; the full mode closes each batch at the same
    event, so the two histograms are equal). Skipped, not failed, when
    the light run is missing or did not run (devmemtop-light.rc)."""
    name = "devmemtop -m light agrees with the tracepoint mode"
    rc = os.path.join(d, "devmemtop-light.rc")
    if not os.path.exists(rc):
        c.skip(name, "no -m light run in this scenario's output")
        return
    with open(rc) as f:
        if f.read().strip() != "0":
            c.skip(name, "devmemtop -m light did not run (see devmemtop-light.log)")
            return
    tp = [s for s in snapshots(os.path.join(d, "devmemtop-live.json")) if s.get("bindings")]
    li = [s for s in snapshots(os.path.join(d, "devmemtop-light.json")) if s.get("bindings")]
    if not tp or not li:
        c.check(name, False, hint="no snapshot with a binding (tracepoints %d, light %d)"
                % (len(tp), len(li)))
        return
    t, l = tp[-1], li[-1]
    diffs, seen = [], []
    if l.get("mode") != "light":
        diffs.append("light run is in mode %s" % l.get("mode"))
    tb = {b["id"]: b for b in t["bindings"]}
    for lb in l["bindings"]:
        b = tb.get(lb["id"])
        if b is None:
            diffs.append("binding %s only in light mode" % lb["id"])
            continue
        for k in ("total_niovs", "free_niovs", "in_pools"):
            if lb.get(k) != b.get(k):
                diffs.append("binding %s %s: light %s, tracepoints %s" % (lb["id"], k, lb.get(k),
                                                                      b.get(k)))
    tpools = {p["id"]: p for p in t["pools"] if p.get("binding_id") is not None}
    for lp in (p for p in l["pools"] if p.get("binding_id") is not None):
        p = tpools.get(lp["id"])
        if p is None:
            diffs.append("pool %s only in light mode" % lp["id"])
            continue
        for k in ("inflight", "holds", "releases"):
            if lp.get(k) != p.get(k):
                diffs.append("pool %s %s: light %s, tracepoints %s" % (lp["id"], k, lp.get(k),
                                                                   p.get(k)))
        # Light counts every refill at its devmem_alloc event; the full
        # mode counts the holds of each refill and closes the batch at that
        # same event (before the fix it stayed open until the next refill,
        # so the newest batch was missing from every snapshot): equal.
        ls, fs = lp["refill_batch"]["sizes"], p["refill_batch"]["sizes"]
        if {k: v for k, v in ls.items() if v} != {k: v for k, v in fs.items() if v}:
            diffs.append("pool %s refill batches: light %s, tracepoints %s"
                         % (lp["id"], ls, fs))
        tbind = tb.get(lp.get("binding_id"), {})
        calls = tbind.get("alloc_calls")
        if len(tpools) == 1 and calls is not None and sum(ls.values()) != calls:
            diffs.append("pool %s: light counted %d refills, binding %s had %s provider calls"
                         % (lp["id"], sum(ls.values()), lp.get("binding_id"), calls))
        seen.append("pool %s: %s holds, %s releases, inflight %s"
                    % (lp["id"], lp.get("holds"), lp.get("releases"), lp.get("inflight")))
    c.check(name, bool(seen) and not diffs, "; ".join(seen), "; ".join(diffs))


# what the default (-m devmem) must have exactly as the full mode (issue 36)
DEFAULT_BINDING = ("total_niovs", "free_niovs", "in_pools", "occupancy", "alloc_calls",
                   "alloc_niovs", "alloc_failures", "niov_frees", "outstanding_at_unbind",
                   "leaked_at_free", "held_tokens", "held_by_sockets", "tokens_handed",
                   "tokens_returned", "tokens_released", "tokens_drained", "token_mode")
DEFAULT_BINDING_HISTS = ("alloc_latency_ns", "alloc_latency_per_niov_ns", "free_latency_ns")
DEFAULT_POOL = ("holds", "releases", "inflight", "holds_niov", "binding_id", "kind")


def default_vs_full(c, d):
    """The default mode, -m devmem (issue 36), ran beside the full mode
    through the bulk run: no program on the per-page page_pool tracepoints
    outside its sampling windows, every devmem figure from devmem-only
    hooks. At the idle, bound point (the snapshots before the netlink dump)
    every devmem figure must equal the full mode's (default_equals_full),
    at no more program runs per devmem niov (default_cost_per_niov)."""
    name = "devmemtop default (-m devmem) equals the full mode on every devmem figure"
    full = [s for s in snapshots(os.path.join(d, "devmemtop-live.json")) if s.get("bindings")]
    dflt = [s for s in snapshots(os.path.join(d, "devmemtop-default.json")) if s.get("bindings")]
    if not dflt:
        c.check(name, False, hint="no -m devmem snapshot with a binding "
                "(see devmemtop-default.log)")
        return
    if not full:
        c.check(name, False, hint="no full-mode snapshot with a binding")
        return
    f, m = idle_snapshot(d, full), idle_snapshot(d, dflt)
    default_equals_full(c, name, f, m, [], True)
    default_cost_per_niov(c, f, m)


def default_equals_full(c, name, f, m, diffs, provider_calls, skip=()):
    """Every devmem figure of snapshot @m (the default, -m devmem) equals
    snapshot @f's (the full mode) at a point where neither moves: each
    binding's occupancy, provider calls and niovs, failures, niov frees,
    leaks, held tokens and token counts, the counts of its alloc,
    alloc-per-niov and free latency histograms, and each devmem pool's
    holds, releases, inflight and refill batch histogram (exact: counted at
    the provider call), plus the global provider calls when both watched
    the same bindings (@provider_calls). The refill batches must be
    available (never a silent 0) and the metric availability of every
    binding figure the full mode's. @diffs: what the caller already found
    wrong (it fails the check); @skip: binding figures not compared."""
    seen = []
    if m.get("mode") != "devmem":
        diffs.append("default run is in mode %s" % m.get("mode"))
    for k, v in f["metrics"].items():
        if k.startswith(("binding_", "dontneed_", "recvmsg_")) and k != "binding_in_pools":
            mv = m["metrics"].get(k, {})
            if mv.get("available") != v.get("available") or mv.get("method") != v.get("method"):
                diffs.append("metric %s: default %s, full %s" % (k, mv.get("method"),
                                                                 v.get("method")))
    if not m["metrics"]["pool_refill_batch"]["available"]:
        diffs.append("refill batches unavailable in the default mode")
    if provider_calls and m.get("provider_calls") != f.get("provider_calls"):
        diffs.append("provider_calls: default %s, full %s" % (m.get("provider_calls"),
                                                              f.get("provider_calls")))
    fb = {b["id"]: b for b in f["bindings"]}
    for mb in m["bindings"]:
        b = fb.get(mb["id"])
        if b is None:
            diffs.append("binding %s only in the default mode" % mb["id"])
            continue
        for k in DEFAULT_BINDING:
            if k not in skip and mb.get(k) != b.get(k):
                diffs.append("binding %s %s: default %s, full %s" % (mb["id"], k, mb.get(k),
                                                                 b.get(k)))
        for k in DEFAULT_BINDING_HISTS:
            mc, fc = (mb.get(k) or {}).get("count"), (b.get(k) or {}).get("count")
            if mc != fc:
                diffs.append("binding %s %s count: default %s, full %s" % (mb["id"], k, mc, fc))
        seen.append("binding %s: %s calls, %s niovs, %s free, alloc lat n %s, free lat n %s"
                    % (mb["id"], mb.get("alloc_calls"), mb.get("alloc_niovs"),
                       mb.get("free_niovs"), (mb.get("alloc_latency_ns") or {}).get("count"),
                       (mb.get("free_latency_ns") or {}).get("count")))
    if len(m["bindings"]) != len(f["bindings"]):
        diffs.append("bindings: default %d, full %d" % (len(m["bindings"]), len(f["bindings"])))
    fpools = {p["id"]: p for p in f["pools"] if p.get("binding_id") is not None}
    mpools = {p["id"]: p for p in m["pools"] if p.get("binding_id") is not None}
    if set(fpools) != set(mpools):
        diffs.append("devmem pools: default %s, full %s" % (sorted(mpools), sorted(fpools)))
    for pid, mp in mpools.items():
        p = fpools.get(pid)
        if p is None:
            continue
        for k in DEFAULT_POOL:
            if mp.get(k) != p.get(k):
                diffs.append("pool %s %s: default %s, full %s" % (pid, k, mp.get(k), p.get(k)))
        ms, fs = mp["refill_batch"]["sizes"], p["refill_batch"]["sizes"]
        if {k: v for k, v in ms.items() if v} != {k: v for k, v in fs.items() if v}:
            diffs.append("pool %s refill batches: default %s, full %s" % (pid, ms, fs))
        seen.append("pool %s: %s holds, %s refills" % (pid, mp.get("holds"),
                                                       mp["refill_batch"].get("count")))
    c.check(name, bool(seen) and not diffs, "; ".join(seen), "; ".join(diffs))


def final_view(snaps, bids, who, diffs):
    """The final figures of bindings @bids in @snaps (one devmemtop's
    snapshots): a snapshot made of each binding's last listing, which must
    be the one that reports it freed (a freed binding is listed once, with
    its final counts: nothing moves after it), and of the last listing of
    each of its devmem pools, which must report the pool destroyed; the
    metrics, mode and global counters of the last snapshot. What is not
    final goes to @diffs, named by @who."""
    view = dict(snaps[-1]) if snaps else {"metrics": {}}
    view["bindings"], view["pools"] = [], []
    for bid in bids:
        rows = [b for s in snaps for b in s.get("bindings", []) if b.get("id") == bid]
        if not rows:
            diffs.append("%s never listed binding %s" % (who, bid))
            continue
        if rows[-1].get("freed_ns") is None:
            diffs.append("%s never saw binding %s freed (its last listing: alive %s)"
                         % (who, bid, rows[-1].get("alive")))
        view["bindings"].append(rows[-1])
        pools = {}
        for s in snaps:
            for p in s.get("pools", []):
                if p.get("binding_id") == bid:
                    pools[p["id"]] = p
        for pid, p in sorted(pools.items()):
            if p.get("state") != "destroyed":
                diffs.append("%s never saw pool %s destroyed (last state %s)"
                             % (who, pid, p.get("state")))
            view["pools"].append(p)
    return view


def default_vs_full_final(c, name, full, dflt, bids, provider_calls, dlog):
    """default_equals_full on the final figures of bindings @bids: the
    full mode's snapshots @full (a recording) against the default's @dflt,
    each at the binding's free and its pools' destroy (final_view): the
    quiet point of a scenario whose bindings come and go; the global
    provider calls too when both watched every binding (@provider_calls)."""
    if not dflt:
        c.check(name, False, hint="no -m devmem snapshot (see %s)" % dlog)
        return
    if not full:
        c.check(name, False, hint="no snapshot in the full mode's recording")
        return
    diffs = []
    f = final_view(full, bids, "the full mode", diffs)
    m = final_view(dflt, bids, "the default", diffs)
    # in_pools is not final at the free: it is the sum of the inflight of
    # the binding's pools as the same snapshot lists them, and a snapshot
    # reads the pools before the bindings, so the destroy and free of a
    # zombie pool landing between the two reads leave the pool's last
    # inflight in the snapshot that reports the binding freed (seen in
    # either mode, by timing: sweep 4K run 1 full 244 / default 0, 64K
    # run 5 full 0 / default 26). Each pool's own final inflight (0 at
    # its destroy) is compared instead, with its holds and releases.
    default_equals_full(c, name, f, m, diffs, provider_calls, skip=("in_pools",))


def default_vs_full_scenario(c, d, scenario):
    """Issue 36 in exhaust and leak: the default (-m devmem,
    <scenario>/devmemtop-default.json) ran beside the full mode's recording
    through the scenario. Their quiet point is the end: the receiver's
    binding freed, its pool destroyed (exhaust: alloc failures stop only
    when the receiver returns its tokens; leak: the tokens are released at
    the close, after the unbind), so the binding's and pool's final figures
    are compared, with the global provider calls (both watched every
    binding)."""
    name = "devmemtop %s: default (-m devmem) equals the full mode on every devmem figure " \
        "at the binding's free" % scenario
    rx = read_json(os.path.join(d, "rx.json"))
    if rx is None or "binding_id" not in rx:
        c.check(name, False, hint="no binding_id in %s/rx.json" % d)
        return
    code, full, err = recording_snapshots(os.path.join(d, "devmemtop.dmtrec"), DEVMEMTOP)
    if code != 0:
        c.check(name, False, hint="report --json of the recording: exit %d: %s" % (code, err))
        return
    dflt = snapshots(os.path.join(d, "devmemtop-default.json"))
    default_vs_full_final(c, name, full, dflt, [rx["binding_id"]], True,
                          os.path.join(d, "devmemtop-default.log"))


def default_vs_full_sweep(c, d):
    """Issue 36 in sweep: one default (-m devmem) devmemtop ran through all
    runs (sweep/devmemtop-default.json), each run under its own full-mode
    recording; per run and rx page size, the run's binding's and pool's
    final figures (at its free) must be equal. The global provider calls
    are not compared: the default counts every run's, a run's recording
    only its own."""
    skip = read(os.path.join(d, "skip.txt"))
    if skip is not None:
        c.skip("devmemtop sweep: default (-m devmem) equals the full mode",
               "no sweep ran: " + skip.strip())
        return
    dflt = snapshots(os.path.join(d, "devmemtop-default.json"))
    sizes = (read(os.path.join(d, "sizes"), "") or "").split()
    reps = int((read(os.path.join(d, "reps"), "0") or "0").strip() or 0)
    if not sizes or not reps:
        c.check("devmemtop sweep: default (-m devmem) equals the full mode", False,
                hint="no sizes or reps in %s" % d)
        return
    for size in sizes:
        for rep in range(1, reps + 1):
            o = os.path.join(d, "run-%s-%d" % (size, rep))
            name = "devmemtop sweep %dK run %d: default (-m devmem) equals the full mode on " \
                "every devmem figure at the binding's free" % (int(size) // 1024, rep)
            rx = read_json(os.path.join(o, "rx.json"))
            code, full, err = recording_snapshots(os.path.join(o, "devmemtop.dmtrec"),
                                                  DEVMEMTOP)
            if rx is None or "binding_id" not in rx or code != 0:
                c.check(name, False, hint="rx.json %s, report --json exit %d %s"
                        % ("missing" if rx is None else "read", code, err))
                continue
            default_vs_full_final(c, name, full, dflt, [rx["binding_id"]], False,
                                  os.path.join(d, "devmemtop-default.log"))


def default_vs_full_autorelease(c, d):
    """Issue 36 in autorelease: the default (-m devmem, autorelease/
    default.json) ran beside the light one and the full mode's recording
    through every run; per run, SO_DEVMEM_AUTORELEASE on and off, the
    run's binding's and pool's final figures (at its free: the scenario
    waits for devmem_binding_free before the next run) must be equal,
    token mode and released / drained tokens included; the global
    provider calls at the end too. On a kernel without the option the
    scenario stops at its first run: SKIP with the reason."""
    name = "devmemtop autorelease: default (-m devmem) equals the full mode"
    skip = read(os.path.join(d, "skip.txt"))
    if skip is not None:
        c.skip(name, "no autorelease runs: " + skip.strip())
        return
    code, full, err = recording_snapshots(os.path.join(d, "devmemtop.dmtrec"), DEVMEMTOP)
    if code != 0:
        c.check(name, False, hint="report --json of the recording: exit %d: %s" % (code, err))
        return
    dflt = snapshots(os.path.join(d, "default.json"))
    bids = []
    for label in AUTORELEASE_RUNS:
        rx = read_json(os.path.join(d, label, "rx.json"))
        if rx is None or "binding_id" not in rx:
            c.check("%s: %s ran" % (name, label), False, hint="no binding_id in %s/%s/rx.json"
                    % (d, label))
            continue
        bids.append(rx["binding_id"])
        default_vs_full_final(c, "devmemtop autorelease %s: default (-m devmem) equals the "
                              "full mode on every devmem figure at the binding's free" % label,
                              full, dflt, [rx["binding_id"]], False,
                              os.path.join(d, "default.log"))
    if bids and dflt and full:
        # over all runs: the global provider calls (the default started
        # after the recording, before the first bind: both saw every call)
        # and the same devmem bindings listed
        ids = [sorted({b["id"] for s in x for b in s.get("bindings", [])}) for x in (full, dflt)]
        c.check("devmemtop autorelease: default (-m devmem) equals the full mode over all runs "
                "(provider calls, bindings)",
                dflt[-1].get("provider_calls") == full[-1].get("provider_calls") and
                ids[0] == ids[1] and set(bids) <= set(ids[0]),
                "provider calls default %s, full %s; bindings default %s, full %s, runs %s"
                % (dflt[-1].get("provider_calls"), full[-1].get("provider_calls"), ids[1],
                   ids[0], sorted(bids)))


def default_cost_per_niov(c, f, m):
    """Issue 36: per devmem niov the default costs no more than the full
    mode. Both ran with --bpf-stats through the same bulk run. Checked on
    the programs' run counts (deterministic): the default runs no program
    more often than the full mode does, so no more runs per niov; the run
    time per niov of each is printed beside as a benchmark figure (under TCG
    the same program's time moves by tens of % between two instances, so a
    time comparison here would judge the emulator, not the mode)."""
    name = "devmemtop default (-m devmem) runs no more programs per devmem niov than the full mode"
    niovs = sum(b.get("alloc_niovs") or 0 for b in f.get("bindings", []))

    def runs(s):
        progs = s.get("health", {}).get("programs", [])
        return (sum(p.get("run_time_ns", 0) for p in progs),
                {p["name"]: p.get("run_cnt", 0) for p in progs if p.get("run_cnt")})
    (ft, fr), (mt, mr) = runs(f), runs(m)
    if not niovs or not fr:
        c.check(name, False, hint="no niovs (%s) or no run counts in the full mode (%s): "
                "--bpf-stats not on?" % (niovs, fr))
        return
    more = {p: (n, fr.get(p, 0)) for p, n in mr.items() if n > fr.get(p, 0)}
    c.check(name, not more and sum(mr.values()) <= sum(fr.values()),
            "%d niovs: %.2f runs/niov default, %.2f full; per program default %s, full %s" %
            (niovs, sum(mr.values()) / niovs, sum(fr.values()) / niovs, mr, fr),
            "programs the default ran more often (default, full): %s" % more)
    c.info("devmemtop default vs full, run time per devmem niov (TCG, one run)",
           "default %.1f ns/niov, full %.1f ns/niov (ratio %.3f)" %
           (mt / niovs, ft / niovs, mt / ft if ft else float("nan")))


def idle_snapshot(d, snaps):
    """The snapshot just before the idle point's netlink dump (pools-bound.t),
    or the last one."""
    try:
        with open(os.path.join(d, "pools-bound.t")) as f:
            t0 = float(f.read().split()[0])
        pre = [s for s in snaps if s["ts_ns"] / 1e9 <= t0]
        if pre:
            return pre[-1]
    except (OSError, ValueError, IndexError):
        pass
    return snaps[-1]


def pp_stats_vs_ours(c, d):
    """Issue 25: our counts against the kernel's own page pool stats
    (page-pool-stats-get, CONFIG_PAGE_POOL_STATS in the lab configs), in
    every devmemtop that watched the bulk run, at the idle point: the devmem
    pool's releases (our release tracepoint or counter read) are the pages
    the kernel did not recycle (ring full, refcount held, NUMA waive); with
    no waive, each of its refills (one niov from the provider, our exact
    histogram) found the ring empty (alloc_empty); the provider's refills
    count no slow-path call, so its mean batch and slow share are null; and
    queue-get shows the binding's RX queue."""
    for f in ("devmemtop-live.json", "devmemtop-fentry.json", "devmemtop-light.json"):
        name = "devmemtop bulk %s: counts agree with page-pool-stats-get" % f[10:-5]
        snaps = [s for s in snapshots(os.path.join(d, f))
                 if any(p.get("binding_id") is not None for p in s.get("pools", []))]
        if not snaps:
            c.skip(name, "no snapshot with a devmem pool in %s" % f)
            continue
        s = idle_snapshot(d, snaps)
        av = s.get("metrics", {}).get("netlink_page_pool_stats", {})
        if not av.get("available"):
            c.skip(name, "page-pool-stats-get unavailable: %s" % av.get("reason"))
            continue
        exact_refill = s["metrics"].get("pool_refill_batch", {}).get("method") == "exact"
        seen, bad = [], []
        for p in s["pools"]:
            if p.get("binding_id") is None or p.get("alloc_fast") is None:
                continue
            lost = p["recycle_ring_full"] + p["recycle_released_refcnt"] + p["alloc_waive"]
            rb = p["refill_batch"]
            seen.append("pool %s: releases %s, ring_full+refcnt+waive %d; refills %d (%s), "
                        "holds %s, alloc_empty %d; alloc_slow %d; recycle %.3f"
                        % (p["id"], p["releases"], lost, rb["count"],
                           "exact" if exact_refill else "sampled", p["holds"],
                           p["alloc_empty"], p["alloc_slow"], p["recycle_ratio"] or -1))
            if p["releases"] is not None and p["releases"] != lost:
                bad.append("pool %s releases" % p["id"])
            if exact_refill and p["alloc_waive"] == 0 and (
                    rb["count"] != p["alloc_empty"] or rb["sum"] != p["holds"]):
                bad.append("pool %s refills" % p["id"])
            if p["alloc_slow"] == 0 and (p["refill_batch_mean"] is not None or
                                         p["alloc_slow_ratio"] is not None):
                bad.append("pool %s derived figures" % p["id"])
        bq = [b.get("rx_queues") for b in s.get("bindings", []) if b.get("alive")]
        seen.append("RX queues bound %s, unbound %s; per binding %s"
                    % (s.get("rx_queues_bound"), s.get("rx_queues_unbound"), bq))
        if not s.get("rx_queues_bound") or not bq or min(bq) < 1:
            bad.append("queue-get")
        c.check(name, len(seen) > 1 and not bad, "; ".join(seen),
                ", ".join(bad) if bad else "no devmem pool with stats")


def light_held(c, d, scenario):
    """Issue 25, exactness: the -m light devmemtop (held tokens read at
    snapshot time from the sockets' token xarrays, bpf/tokiter.bpf.c) beside
    the full mode (per-token events) agrees with it and with the traffic
    tool's own counts at the scenario's settled point: bulk at the idle
    point (every token back: pools-bound.t, the full mode's devmemtop-live
    beside it); exhaust and leak while the receiver held every token it
    got (the recording's snapshots with handed == received, nothing back;
    the light snapshots whose reads lie inside that stretch)."""
    name = "devmemtop %s: -m light held tokens, niovs and holders == full mode == tool" \
        % scenario
    rx = read_json(os.path.join(d, "rx.json"))
    light = snapshots(os.path.join(d, "devmemtop-light.json"))
    if rx is None or not light:
        c.check(name, False, "", "rx.json %s, %d light snapshots (see devmemtop-light.log)"
                % ("missing" if rx is None else "read", len(light)))
        return
    bid = rx["binding_id"]
    why = incomplete_why(read(os.path.join(d, "devmemtop-light.log")))
    if scenario == "bulk":
        # the receiver returned every token: it holds none at the idle point
        full = [s for s in snapshots(os.path.join(d, "devmemtop-live.json"))
                if any(b.get("id") == bid for b in s.get("bindings", []))]
        light = [s for s in light if any(b.get("id") == bid for b in s.get("bindings", []))]
        tool = (rx["tokens_received"] - rx["tokens_returned"] - rx["tokens_leaked"],
                rx["pages_held"], rx["pid"])
        light_vs_full_held(c, name + " at the idle point",
                           [idle_snapshot(d, light)] if light else [],
                           [idle_snapshot(d, full)] if full else [], bid, tool,
                           rx.get("autorelease"), why)
        return
    code, full, err = recording_snapshots(os.path.join(d, "devmemtop.dmtrec"), DEVMEMTOP)
    if code != 0:
        c.check(name, False, "", "report --json of the recording: exit %d: %s" % (code, err))
        return
    held = rx["tokens_leaked"] if scenario == "leak" else rx["tokens_held_max"]
    light_held_in_window(c, name + " while every token was held", light, full, bid, rx,
                         (held, rx["pages_held"], rx["pid"]), why)


def light_held_other_netns(c, d):
    """leak: a -m light devmemtop in the sender's network namespace
    (devmemtop-peerns.json) watched the receiver hold every token. Its
    socket walk reads its own namespace only: the receiver's binding (on a
    device of the init namespace) must have held_tokens and held_by_sockets
    null with the "another network namespace" reason in every snapshot
    that lists it, never a 0 (before the check, it read 0)."""
    name = "devmemtop leak: -m light in another network namespace: held unknown, not 0"
    rx = read_json(os.path.join(d, "rx.json"))
    peer = snapshots(os.path.join(d, "devmemtop-peerns.json"))
    if rx is None or not peer:
        c.check(name, False, "", "rx.json %s, %d snapshots in devmemtop-peerns.json (see "
                "devmemtop-peerns.log)" % ("missing" if rx is None else "read", len(peer)))
        return
    rows = [b for s in peer for b in s.get("bindings", []) if b.get("id") == rx["binding_id"]]
    bad = [(b.get("held_tokens"), b.get("held_by_sockets"), b.get("held_reason"))
           for b in rows if b.get("held_tokens") is not None or
           b.get("held_by_sockets") is not None or
           "another network namespace" not in (b.get("held_reason") or "")]
    c.check(name, rows and not bad and peer[0].get("mode") == "light",
            "%d snapshots list binding %d, every one unknown: %s"
            % (len(rows), rx["binding_id"], rows[0].get("held_reason") if rows else None),
            "mode %s, %d rows, %d not unknown (first: %s)"
            % (peer[0].get("mode"), len(rows), len(bad), bad[0] if bad else None))


def light_held_sweep(c, d):
    """light_held for each sweep run: one -m light devmemtop ran through the
    whole sweep (sweep/devmemtop-light.json), each run's receiver held every
    token for a while (--hold-for) under its own recording."""
    skip = read(os.path.join(d, "skip.txt"))
    if skip is not None:
        c.skip("devmemtop sweep: -m light held tokens", "no sweep ran: " + skip.strip())
        return
    light = snapshots(os.path.join(d, "devmemtop-light.json"))
    if not light:
        c.check("devmemtop sweep: -m light ran", False, "", "no snapshot in "
                "devmemtop-light.json (see devmemtop-light.log)")
        return
    why = incomplete_why(read(os.path.join(d, "devmemtop-light.log")))
    sizes = (read(os.path.join(d, "sizes"), "") or "").split()
    reps = int((read(os.path.join(d, "reps"), "0") or "0").strip() or 0)
    for size in sizes:
        for rep in range(1, reps + 1):
            o = os.path.join(d, "run-%s-%d" % (size, rep))
            name = "devmemtop sweep %dK run %d: -m light held tokens, niovs and holders == " \
                "full mode == tool while every token was held" % (int(size) // 1024, rep)
            rx = read_json(os.path.join(o, "rx.json"))
            code, full, err = recording_snapshots(os.path.join(o, "devmemtop.dmtrec"),
                                                  DEVMEMTOP)
            if rx is None or code != 0:
                c.check(name, False, "", "rx.json %s, report --json exit %d %s"
                        % ("missing" if rx is None else "read", code, err))
                continue
            light_held_in_window(c, name, light, full, rx["binding_id"], rx,
                                 (rx["tokens_held_max"], rx["pages_held"], rx["pid"]), why)


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
    c.kernel = a.kernel
    if not os.access(DEVMEMTOP, os.X_OK):
        for s in a.scenarios:
            c.skip("devmemtop checks of " + s,
                   "%s not built (run the top-level make first)" % DEVMEMTOP)
    else:
        for s in a.scenarios:
            d = os.path.join(a.dir, s)
            if s == "sweep":
                light_held_sweep(c, d)  # issue 25
                default_vs_full_sweep(c, d)  # issue 36
            if s in ("sweep", "badinput"):
                c.info("devmemtop checks of " + s, "in assert_lab.py (assert_niov.py: "
                       "per-run recordings, specs/lab-sweep.yaml)")
                continue
            if s == "repeat":
                c.info("devmemtop checks of " + s, "devmemtop compare on its recordings "
                       "(scripts/lab/compare.sh)")
                continue
            if s == "pods":
                c.info("devmemtop checks of " + s, "in assert_lab.py (assert_pods.py: "
                       "holders by pod)")
                continue
            if s == "selftests":
                c.info("devmemtop checks of " + s, "in assert_selftests.py (per test, "
                       "against the page_pool tracepoints)")
                continue
            if s == "race":
                c.info("devmemtop checks of " + s, "in assert_lab.py (assert_race.py)")
                continue
            if s == "lightscale":
                c.info("devmemtop checks of " + s, "in assert_lab.py (assert_lightscale.py)")
                continue
            if s == "autorelease":
                default_vs_full_autorelease(c, d)  # issue 36
            if s in ("autorelease", "autorelease-measure"):
                c.info("devmemtop checks of " + s, "in assert_lab.py (assert_autorelease.py)")
                continue
            if s not in SPECS:
                c.skip("devmemtop checks of " + s, "no devmemtop assertions for this scenario")
                continue
            rc = os.path.join(d, "devmemtop-record.rc")
            if os.path.exists(rc):
                with open(rc) as f:
                    c.check("devmemtop record %s exit status" % s, f.read().strip() == "0",
                            hint="see %s/devmemtop-record.log" % d)
            gate(c, d, s, has_patched_only)
            token_identities(c, d, s, DEVMEMTOP)  # issue 11
            light_held(c, d, s)  # issue 25
            if s == "leak":
                light_held_other_netns(c, d)
            if s in ("exhaust", "leak"):
                default_vs_full_scenario(c, d, s)  # issue 36
            if s == "bulk":
                inflight_vs_netlink(c, d)
                fentry_vs_tracepoints(c, d)
                light_vs_tracepoints(c, d)
                default_vs_full(c, d)  # issue 36
                pp_stats_vs_ours(c, d)  # issue 25
    print("devmemtop: %d passed, %d failed, %d skipped" % (c.n["PASS"], c.n["FAIL"], c.n["SKIP"]))
    return 1 if c.n["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
