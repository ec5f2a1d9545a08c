#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Prometheus rules and the Grafana dashboard: `promtool check rules`,
# `promtool test rules`, mutated thresholds make the rule tests fail (so they
# can fail), the dashboard JSON is what its generator makes and is well formed.
source "$(dirname "$0")/lib.sh"
need_cmd promtool
need_cmd python3
D=$TOP/dashboards

out=$(promtool check rules "$D/devmemtop-rules.yml" 2>&1) || fail "promtool check rules: $out"
log "$(echo "$out" | grep -m1 SUCCESS)"
out=$(promtool test rules "$D/devmemtop-rules.test.yml" 2>&1) || fail "promtool test rules: $out"
echo "$out" | grep -q SUCCESS || fail "promtool test rules: $out"
log "promtool test rules: SUCCESS"

# Each mutant changes one rule; the rule tests must catch every one.
mutants=(
	's/occupancy_ratio > 0\.9$/occupancy_ratio > 0.96/'
	'0,/for: 1m/s//for: 3m/'
	's/p99_5m > 0\.0001/p99_5m > 0.001/'
	's/histogram_quantile(0\.5,/histogram_quantile(0.6,/'
	's/leaked_niovs_total\[30m\]) > 0/leaked_niovs_total[30m]) > 10/'
	's/alloc_failures_total\[5m\]) > 0/alloc_failures_total[5m]) > 5/'
	's/3 \* devmemtop_collection_interval_seconds + 10/30 * devmemtop_collection_interval_seconds + 10/'
)
mkdir -p "$TMPD/mut"
cp "$D/devmemtop-rules.test.yml" "$TMPD/mut/"
for m in "${mutants[@]}"; do
	sed "$m" "$D/devmemtop-rules.yml" >"$TMPD/mut/devmemtop-rules.yml"
	cmp -s "$D/devmemtop-rules.yml" "$TMPD/mut/devmemtop-rules.yml" &&
		fail "mutant '$m' changed nothing (rules file changed?)"
	promtool check rules "$TMPD/mut/devmemtop-rules.yml" >/dev/null 2>&1 ||
		fail "mutant '$m' is not a valid rules file"
	if promtool test rules "$TMPD/mut/devmemtop-rules.test.yml" >/dev/null 2>&1; then
		fail "rule tests pass with mutant '$m'"
	fi
done
log "${#mutants[@]} rule mutants all caught"

python3 "$D/devmemtop-dashboard.py" >"$TMPD/dash.json" || fail "dashboard generator"
cmp -s "$TMPD/dash.json" "$D/devmemtop.json" ||
	fail "dashboards/devmemtop.json is not what devmemtop-dashboard.py generates"
python3 - "$D/devmemtop.json" <<'PY' || fail "dashboard structure"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["uid"] == "devmemtop" and d["title"], "uid/title"
ids, cells, kinds = set(), {}, {}
for p in d["panels"]:
    assert p["id"] not in ids, "duplicate panel id %d" % p["id"]
    ids.add(p["id"])
    g = p["gridPos"]
    for y in range(g["y"], g["y"] + g["h"]):
        for x in range(g["x"], g["x"] + g["w"]):
            assert (x, y) not in cells, "%r overlaps %r" % (p["title"], cells[(x, y)])
            cells[(x, y)] = p["title"]
    assert g["x"] + g["w"] <= 24, "%r wider than the grid" % p["title"]
    kinds[p["type"]] = kinds.get(p["type"], 0) + 1
    if p["type"] == "row":
        continue
    assert p.get("targets"), "%r has no queries" % p["title"]
    for t in p["targets"]:
        assert t["expr"].strip(), "%r has an empty query" % p["title"]
        assert t["datasource"]["uid"] == "${datasource}", "%r: datasource not templated" % p["title"]
        if p["type"] == "heatmap":
            assert t.get("format") == "heatmap", p["title"]
    # a heatmap draws classic buckets (and may add the native histogram's query)
    if p["type"] == "heatmap":
        assert any("_bucket" in t["expr"] for t in p["targets"]), p["title"]
titles = " ".join(p["title"].lower() for p in d["panels"])
for want in ("occupancy", "refill batch", "latency", "failures", "leaked", "bpf programs"):
    assert want in titles, "no panel about %s" % want
assert kinds.get("heatmap", 0) >= 2, "want refill and latency heatmaps"
print("  dashboard: %d panels %s" % (len(d["panels"]), kinds))
PY
pass "rules check and test, ${#mutants[@]} mutants caught, dashboard consistent"
