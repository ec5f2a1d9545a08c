#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fleet_check.py RECEIVER_URL AT DIR: compare fleet-wide PromQL on the
remote-write receiver (evaluated at AT) with each exporter's own final
scrape DIR/<instance>.prom (text format; replays that are done serve a
fixed final state, so the receiver's last samples are these same samples).

Checked, per instance and summed over the fleet:
  - refill batch native histogram: count and sum equal; p50/p90/p99 by
    histogram_quantile() equal to the same quantile computed here from the
    exporter's buckets with Prometheus' native-histogram rule (schema 0:
    bucket (2^(i-1), 2^i], linear inside it);
  - no classic _bucket series reached the receiver (native end to end);
  - DevmemBindingOccupancyHigh (pending or firing) and DevmemNiovsLeaked
    (firing) ALERTS carry exactly the instances whose own scrape meets the
    rule; leaked niovs per instance equal.
Prints one line per check; exits 1 with the differences."""
import glob
import json
import math
import os
import re
import sys
import urllib.parse
import urllib.request

url, at, d = sys.argv[1], sys.argv[2], sys.argv[3]
LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
bad = []


def query(expr):
    q = urllib.parse.urlencode({"query": expr, "time": at})
    r = json.load(urllib.request.urlopen(url + "/api/v1/query?" + q, timeout=10))
    if r["status"] != "success":
        sys.exit("query failed: %s: %s" % (expr, r))
    return r["data"]["result"]


def parse(path):
    out = []
    for line in open(path):
        m = LINE.match(line.rstrip("\n"))
        if m:
            out.append((m.group(1), dict(LABEL.findall(m.group(3) or "")), float(m.group(4))))
    return out


# an exporter's refill batch buckets: {upper bound: count in that bucket}
def buckets(samples):
    cum = {}
    for name, lab, v in samples:
        if name == "devmemtop_page_pool_refill_batch_items_bucket" and lab["le"] != "+Inf":
            cum.setdefault(lab["pool_id"], {})[float(lab["le"])] = v
    per = {}
    for pool in cum.values():
        prev = 0.0
        for le in sorted(pool):
            per[le] = per.get(le, 0.0) + pool[le] - prev
            prev = pool[le]
    return per


def total(samples, name):
    return sum(v for n, _, v in samples if n == name)


def native_quantile(q, per):
    """Prometheus 2.42's rule for a native histogram of positive buckets."""
    count = sum(per.values())
    if not count:
        return float("nan")
    rank, cum = q * count, 0.0
    for le in sorted(per):
        if not per[le]:
            continue
        cum += per[le]
        if cum >= rank:
            lower = le / 2 if le > 0 else 0.0
            return lower + (le - lower) * ((rank - (cum - per[le])) / per[le])
    return max(per)


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


own = {}
for f in sorted(glob.glob(os.path.join(d, "*.prom"))):
    own[os.path.basename(f)[:-5]] = parse(f)
if len(own) < 20:
    sys.exit("only %d exporters' scrapes in %s" % (len(own), d))

# Native end to end: histograms, and no classic buckets at the receiver.
classic = query('count(devmemtop_page_pool_refill_batch_items_bucket)')
if classic:
    bad.append("classic refill _bucket series reached the receiver: %s" % classic)
native = query('devmemtop_page_pool_refill_batch_items')
if not native or any("histogram" not in s for s in native):
    bad.append("refill batch series at the receiver are not native histograms")
print("native histograms: %d refill batch series, all native, 0 classic _bucket series" % len(native))


def by_instance(expr):
    return {s["metric"].get("instance"): float(s["value"][1]) for s in query(expr)}


H = "devmemtop_page_pool_refill_batch_items"
fleet = {}
checked = 0
for qname, expr, ours in (
        ("count", "histogram_count(sum by (instance) (%s))" % H, lambda p, s: sum(p.values())),
        ("sum", "histogram_sum(sum by (instance) (%s))" % H,
         lambda p, s: total(s, H + "_sum")),
        ("p50", "histogram_quantile(0.5, sum by (instance) (%s))" % H, lambda p, s: native_quantile(0.5, p)),
        ("p90", "histogram_quantile(0.9, sum by (instance) (%s))" % H, lambda p, s: native_quantile(0.9, p)),
        ("p99", "histogram_quantile(0.99, sum by (instance) (%s))" % H, lambda p, s: native_quantile(0.99, p))):
    got = by_instance(expr)
    for inst, samples in own.items():
        want = ours(buckets(samples), samples)
        if inst not in got or not same(got[inst], want):
            bad.append("%s %s: receiver %s, exporter %s" % (qname, inst, got.get(inst), want))
        checked += 1
print("per instance: count, sum, p50, p90, p99 of %d instances: %d comparisons"
      % (len(own), checked))

merged = {}
for samples in own.values():
    for le, c in buckets(samples).items():
        merged[le] = merged.get(le, 0.0) + c
for q in (0.5, 0.9, 0.99):
    got = query("histogram_quantile(%g, sum(%s))" % (q, H))
    want = native_quantile(q, merged)
    g = float(got[0]["value"][1]) if got else None
    if g is None or not same(g, want):
        bad.append("fleet p%g: receiver %s, exporters %s" % (q * 100, g, want))
    print("fleet p%g: receiver %s, from the exporters' buckets %s" % (q * 100, g, want))
gc = query("histogram_count(sum(%s))" % H)
if not gc or not same(float(gc[0]["value"][1]), sum(merged.values())):
    bad.append("fleet count: receiver %s, exporters %s" % (gc, sum(merged.values())))


def alert_instances(name, states):
    r = query('ALERTS{alertname="%s"}' % name)
    return sorted({s["metric"]["instance"] for s in r if s["metric"]["alertstate"] in states})


occ_want = sorted(i for i, s in own.items()
                  if any(n == "devmemtop_binding_occupancy_ratio" and v > 0.9 for n, _, v in s))
leak_want = sorted(i for i, s in own.items()
                   if any((n == "devmemtop_binding_leaked_niovs" and v > 0) for n, _, v in s))
occ_got = alert_instances("DevmemBindingOccupancyHigh", ("pending", "firing"))
leak_got = alert_instances("DevmemNiovsLeaked", ("firing",))
if not occ_want or not leak_want or len(occ_want) == len(own):
    bad.append("the fleet does not differ: occupancy %s, leak %s" % (occ_want, leak_want))
if occ_got != occ_want:
    bad.append("DevmemBindingOccupancyHigh instances: receiver %s, exporters %s" % (occ_got, occ_want))
if leak_got != leak_want:
    bad.append("DevmemNiovsLeaked instances: receiver %s, exporters %s" % (leak_got, leak_want))
print("DevmemBindingOccupancyHigh: %d instances, DevmemNiovsLeaked: %d instances, as the exporters say"
      % (len(occ_got), len(leak_got)))
got = by_instance("sum by (instance) (devmemtop_leaked_niovs_total)")
for inst, samples in own.items():
    want = total(samples, "devmemtop_leaked_niovs_total")
    if not same(got.get(inst, float("nan")), want):
        bad.append("leaked niovs %s: receiver %s, exporter %s" % (inst, got.get(inst), want))

if bad:
    print("\n".join(bad))
    sys.exit(1)
