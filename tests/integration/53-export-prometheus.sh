#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End to end: a real Prometheus server (127.0.0.1, temporary config and
# TSDB, 1 s scrapes, our rules loaded) scrapes the exporter during veth
# traffic. Over its HTTP API: histogram_quantile() of the refill batch
# histogram is a number within 1..64, rate() of the pool's holds is > 0
# during traffic, and the recording rules produce the same kind of values.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_root
need_dmt
need_cmd curl
need_cmd python3
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
[ -x "$PROMETHEUS" ] || skip "$PROMETHEUS not installed (Debian package prometheus; scripts/install-deps.sh)"

testbed_up
# -m full: exact refill buckets of a pool of pages (the default devmem mode
# samples them: README, modes)
export_start -i 500ms -m full

PPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$TMPD/tsdb"
cp "$TOP/dashboards/devmemtop-rules.yml" "$TMPD/"
cat >"$TMPD/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $TMPD/devmemtop-rules.yml
scrape_configs:
  - job_name: devmemtop
    static_configs:
      - targets: ['127.0.0.1:$EXP_PORT']
EOF
"$PROMETHEUS" --config.file="$TMPD/prometheus.yml" --storage.tsdb.path="$TMPD/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" --storage.tsdb.retention.time=1h \
	>"$TMPD/prometheus.log" 2>&1 &
prom_pid=$!
_TB_PIDS+=($prom_pid)
PURL=http://127.0.0.1:$PPORT
for i in $(seq 1 100); do
	curl -sf --max-time 1 "$PURL/-/ready" >/dev/null 2>&1 && break
	kill -0 $prom_pid 2>/dev/null || fail "prometheus exited: $(tail -5 "$TMPD/prometheus.log")"
	sleep 0.2
done
curl -sf --max-time 2 "$PURL/-/ready" >/dev/null || fail "prometheus not ready in 20 s"
log "prometheus pid $prom_pid on $PURL scraping 127.0.0.1:$EXP_PORT"

# The stream lasts until the queries are done (testbed_stop), and its
# receiver reads 8 MiB at a time: pages pile up in the socket and come back
# in bursts larger than the pool's recycling ring, so every page is a hold,
# however slowly the stream runs. (With 1 MiB reads, a stream slowed down by
# busy cores had every page recycled for seconds: no hold in the 5 s window,
# a true rate of 0.)
TB_RX_CHUNK=8388608 testbed_traffic 120
sel="ifname=\"$IF_RX\""
# the stream connected and its pool's holds in a scrape of our own
testbed_flowing
scrape_until_pool "$TMPD/seen.prom" "$IF_RX"
t_seen=$(date +%s.%N)
# All queries at one instant T, waited for instead of a fixed 12 s: at
# least 5 s after the pool was seen, with 2 or more of Prometheus' scrapes of
# it in the 5 s before T and each recording rule evaluated since then.
T=$(python3 - "$PURL" "$sel" "$t_seen" <<'PY'
import json, sys, time, urllib.parse, urllib.request
url, sel, t_seen = sys.argv[1], sys.argv[2], float(sys.argv[3])

def one(expr, t):
    q = urllib.parse.urlencode({"query": expr, "time": "%.3f" % t})
    r = json.load(urllib.request.urlopen(url + "/api/v1/query?" + q, timeout=5))
    res = r["data"]["result"]
    return float(res[0]["value"][1]) if len(res) == 1 else None

rules = ("devmemtop:page_pool_refill_batch_items:p50_5m",
         "devmemtop:page_pool_refill_batch_items:mean_5m",
         "devmemtop:page_pool_holds:rate1m")
end = time.time() + 90
while time.time() < end:
    t = time.time()
    if t >= t_seen + 5 and \
       (one("count_over_time(devmemtop_page_pool_holds_total{%s}[5s])" % sel, t) or 0) >= 2 and \
       all((one("timestamp(%s{%s})" % (r, sel), t) or 0) >= t_seen + 2 for r in rules):
        print("%.3f" % t)
        sys.exit(0)
    time.sleep(0.5)
sys.exit("prometheus has not scraped the pool twice in 5 s and evaluated its rules in 90 s")
PY
) || fail "waiting for Prometheus: $T"
kill -0 "$_TB_CLI" 2>/dev/null || fail "the stream ended before $T: not a query during traffic"
log "queries at $T, $(python3 -c "import sys; print('%.1f' % (float(sys.argv[1]) - float(sys.argv[2])))" "$T" "$t_seen") s after the pool's traffic showed"

# query EXPR: prints "value labels" per sample of an instant vector at T
query() {
	curl -sS --max-time 5 -G "$PURL/api/v1/query" --data-urlencode "query=$1" \
		--data-urlencode "time=$T" >"$TMPD/q.json" ||
		fail "query failed: $1"
	python3 - "$TMPD/q.json" <<'PY' || fail "bad answer to: $1 ($(cat "$TMPD/q.json"))"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "success", r
assert r["data"]["resultType"] == "vector", r["data"]["resultType"]
for s in r["data"]["result"]:
    print(s["value"][1], json.dumps(s["metric"], sort_keys=True))
PY
}

# in_range VALUE LO HI: a number (not NaN/Inf) with LO <= VALUE <= HI
in_range() {
	python3 -c 'import math,sys; v=float(sys.argv[1]); sys.exit(0 if math.isfinite(v) and float(sys.argv[2]) <= v <= float(sys.argv[3]) else 1)' "$@"
}

up=$(query 'up{job="devmemtop"}')
[ "${up%% *}" = 1 ] || fail "target not up: $up ($(curl -s "$PURL/api/v1/targets" | head -c 600))"

for q in 0.5 0.99; do
	r=$(query "histogram_quantile($q, sum by (le) (rate(devmemtop_page_pool_refill_batch_items_bucket{$sel}[5s])))")
	[ "$(echo "$r" | grep -c .)" = 1 ] || fail "p$q of the refill batch: want one sample, got '$r'"
	v=${r%% *}
	in_range "$v" 1 64 || fail "p$q refill batch size is $v, not within 1..64"
	log "refill batch p$q over 5s on $IF_RX: $v"
done
r=$(query "sum(rate(devmemtop_page_pool_holds_total{$sel}[5s]))")
v=${r%% *}
in_range "$v" 1 1e12 || fail "holds rate during traffic is '$v', want > 0"
log "holds rate on $IF_RX during traffic: $v/s"
r=$(query "sum(rate(devmemtop_page_pool_releases_total{$sel}[5s]))")
in_range "${r%% *}" 1 1e12 || fail "releases rate during traffic is '${r%% *}', want > 0"

# the recording rules, evaluated by this server on the live data
r=$(query "devmemtop:page_pool_refill_batch_items:p50_5m{$sel}")
[ -n "$r" ] || fail "recording rule p50_5m has no sample for $IF_RX"
in_range "${r%% *}" 1 64 || fail "recording rule p50_5m = ${r%% *}, not within 1..64"
r=$(query "devmemtop:page_pool_refill_batch_items:mean_5m{$sel}")
in_range "${r%% *}" 1 64 || fail "recording rule mean_5m = ${r%% *}, not within 1..64"
r=$(query "devmemtop:page_pool_holds:rate1m{$sel}")
in_range "${r%% *}" 1 1e12 || fail "recording rule holds rate1m = '${r%% *}', want > 0"
log "recording rules: p50_5m, mean_5m ($(echo "${r%% *}" | cut -c1-10)/s holds) evaluate on live data"

# no rule evaluation failed, and the stale-collection alert is quiet
python3 - "$PURL" <<'PY' || fail "rule evaluation"
import json, sys, urllib.request
r = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/rules", timeout=5))
bad = [(x["name"], x.get("lastError")) for g in r["data"]["groups"] for x in g["rules"]
       if x.get("health") != "ok"]
assert not bad, "unhealthy rules: %s" % bad
firing = [x["name"] for g in r["data"]["groups"] for x in g["rules"]
          if x.get("type") == "alerting" and x.get("state") != "inactive"]
assert "DevmemtopCollectionStale" not in firing, firing
print("  %d rules healthy, alerts not inactive: %s" %
      (sum(len(g["rules"]) for g in r["data"]["groups"]), firing or "none"))
PY

testbed_stop
kill $prom_pid
wait $prom_pid 2>/dev/null
export_stop
pass "Prometheus scraped the exporter: refill batch quantiles within 1..64, holds rate > 0, rules healthy"
