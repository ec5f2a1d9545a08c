#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the "ynl" lab scenario (issue 34; scenarios/ynl.sh): ynltool,
the kernel's own reader of page-pool stats, as a second reader beside
devmemtop on the same pools.

At each point (pool up, a page held, the page given back) ynltool read the
stats, each devmemtop (full, light) took a snapshot, ynltool read again.
Where ynltool's two reads agree (the pool was idle), devmemtop's snapshot
between them must say what ynltool says, pool by pool of the scenario's
device: inflight (refs), alloc slow and fast (ynltool's fast is the
kernel's fast + refill), recycle ring and cache; and ynltool's recycling %
and slow:fast, computed from devmemtop's counters with ynltool's formulas,
must equal ynltool's; and the pool's queue's rx-alloc-fail equals ynltool's
qstats. devmemtop's own ratios are printed beside: its
recycle ratio is kept / (kept + lost) of the pages that came back (ring-full
drops and refcount releases lost), ynltool's is recycles / allocations.
"""
import json
import os

from labcheck import json_lines as lines, kv, read


def load(d, f):
    try:
        with open(os.path.join(d, f)) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def scenario_ynl(c, d):
    if os.path.exists(os.path.join(d, "skip")):
        c.skip("ynl", (read(os.path.join(d, "skip"), "") or "").strip())
        return
    ifx = int(kv(read(os.path.join(d, "dev.txt"), "")).get("ifindex", 0))
    c.check("ynl: the scenario's device came up", ifx > 0, "ifindex %d" % ifx)
    modes = ("full", "light")
    snaps = {m: lines(d, "devmemtop-%s.json" % m) for m in modes}
    for m in modes:
        rc = (read(os.path.join(d, "devmemtop-%s.rc" % m), "") or "").strip()
        c.check("ynl: devmemtop %s ran and exited 0" % m, rc == "0" and bool(snaps[m]),
                "%d snapshots, rc %s" % (len(snaps[m]), rc or "?"))
    compared = {m: 0 for m in modes}
    held_seen = False
    for line in (read(os.path.join(d, "points"), "") or "").splitlines():
        w = line.split()
        if len(w) != 1 + len(modes):
            continue
        name, counts = w[0], [int(x) for x in w[1:]]
        a, b = load(d, name + ".a.pp.json"), load(d, name + ".b.pp.json")
        if not isinstance(a, list) or not isinstance(b, list):
            c.check("ynl %s: ynltool page-pool stats read" % name, False, "",
                    (read(os.path.join(d, name + ".a.err"), "") or "").strip())
            continue
        ya = {p["id"]: p for p in a if p.get("ifindex") == ifx}
        yb = {p["id"]: p for p in b if p.get("ifindex") == ifx}
        if ya != yb:
            c.info("ynl %s" % name, "the pools moved between ynltool's reads: not compared")
            continue
        c.check("ynl %s: ynltool lists the device's pool" % name, bool(ya),
                "%d pools of ifindex %d" % (len(ya), ifx))
        for k, m in enumerate(modes):
            idx = counts[k] + 2 - 1	# snapshot L+2, 1-based
            s = snaps[m][idx] if idx < len(snaps[m]) else None
            if not s:
                c.check("ynl %s %s: the snapshot between the reads" % (name, m), False,
                        "no snapshot %d" % (idx + 1))
                continue
            dp = {p["id"]: p for p in s.get("pools") or [] if p.get("ifindex") == ifx}
            for pid, y in sorted(ya.items()):
                p = dp.get(pid)
                if p is None:
                    c.check("ynl %s %s: pool %d in devmemtop" % (name, m, pid), False,
                            "devmemtop lists %s" % sorted(dp))
                    continue
                compare_pool(c, "ynl %s %s pool %d" % (name, m, pid), y, p)
                compare_qstats(c, "ynl %s %s pool %d" % (name, m, pid),
                               load(d, name + ".a.qstats.json"), p, ifx)
                compared[m] += 1
                held_seen |= name == "held" and (y.get("refs") or 0) > 0
        dev = load(d, name + ".a.dev.json") or []
        for y in dev:
            if y.get("ifindex") != ifx:
                continue
            s = snaps["full"][counts[0] + 1] if counts[0] + 1 < len(snaps["full"]) else {}
            live = [p for p in (s or {}).get("pools") or [] if p.get("ifindex") == ifx and
                    p.get("state") != "destroyed"]
            c.check("ynl %s: per device, pools and refs = devmemtop's sums" % name,
                    y.get("page_pools") == len(live) and
                    (y.get("live") or {}).get("refs") == sum(p.get("inflight") or 0
                                                             for p in live),
                    "ynltool %s pools, %s refs; devmemtop %d pools, %d inflight" %
                    (y.get("page_pools"), (y.get("live") or {}).get("refs"), len(live),
                     sum(p.get("inflight") or 0 for p in live)))
    for m in modes:
        c.check("ynl: devmemtop %s compared with ynltool at an idle point" % m,
                compared[m] > 0, "%d pool comparisons" % compared[m])
    c.check("ynl: a point with a page held (refs > 0) was compared", held_seen)


def compare_qstats(c, tag, qs, p, ifx):
    """The pool's queue's rx-alloc-fail: ynltool's qstats against devmemtop's."""
    q = [x for x in qs or [] if x.get("ifindex") == ifx and x.get("queue-type") == "rx" and
         x.get("queue-id") == p.get("queue")]
    if not q or "alloc-fail" not in (q[0].get("rx") or {}):
        c.skip(tag + ": rx-alloc-fail", "ynltool's qstats have no rx-alloc-fail for queue %s"
               % p.get("queue"))
        return
    c.check(tag + ": queue rx-alloc-fail = ynltool's qstats",
            p.get("queue_rx_alloc_fail") == q[0]["rx"]["alloc-fail"],
            "devmemtop %s, ynltool %s (queue %s)" % (p.get("queue_rx_alloc_fail"),
                                                   q[0]["rx"]["alloc-fail"], p.get("queue")))


def compare_pool(c, tag, y, p):
    c.check(tag + ": inflight = ynltool's refs", p.get("inflight") == y.get("refs"),
            "devmemtop %s, ynltool %s" % (p.get("inflight"), y.get("refs")))
    if "alloc" not in y:	# ynltool prints them only once the pool allocated
        c.check(tag + ": no allocation yet in either", not (p.get("alloc_fast") or
                                                             p.get("alloc_slow") or
                                                             p.get("alloc_refill")),
                "devmemtop fast %s slow %s refill %s" % (p.get("alloc_fast"),
                                                         p.get("alloc_slow"),
                                                         p.get("alloc_refill")))
        return
    fast = (p.get("alloc_fast") or 0) + (p.get("alloc_refill") or 0)
    slow = p.get("alloc_slow") or 0
    ring, cache = p.get("recycle_ring") or 0, p.get("recycle_cached") or 0
    ya, yr = y.get("alloc") or {}, y.get("recycle") or {}
    c.check(tag + ": alloc slow:fast = ynltool's", (slow, fast) == (ya.get("slow"),
                                                                   ya.get("fast")),
            "devmemtop %d:%d (fast %s + refill %s), ynltool %s:%s" %
            (slow, fast, p.get("alloc_fast"), p.get("alloc_refill"), ya.get("slow"),
             ya.get("fast")))
    c.check(tag + ": recycle ring:cache = ynltool's", (ring, cache) == (yr.get("ring"),
                                                                       yr.get("cache")),
            "devmemtop %d:%d, ynltool %s:%s" % (ring, cache, yr.get("ring"), yr.get("cache")))
    if "recycling_pct" in y and fast + slow:
        ours = 100.0 * (ring + cache) / (fast + slow)
        c.check(tag + ": ynltool's recycling % from devmemtop's counters",
                abs(ours - y["recycling_pct"]) <= 1e-6 * max(1.0, abs(ours)),
                "%.6f%% from devmemtop, ynltool %s%%; devmemtop's own recycle ratio %s "
                "(kept / came back), slow share %s" %
                (ours, y["recycling_pct"], p.get("recycle_ratio"), p.get("alloc_slow_ratio")))


SCENARIOS = {"ynl": scenario_ynl}
