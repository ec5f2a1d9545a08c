#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Native histograms end to end, with Debian's Prometheus: two servers scrape
# the same exporter during veth traffic, one with
# --enable-feature=native-histograms (it asks for protobuf and gets the
# refill batch histogram as a native histogram), one without (text format,
# classic buckets). Checked:
#  - content negotiation: protobuf only for an Accept that asks for it, the
#    text format byte-for-byte the same family set otherwise;
#  - the native server holds the refill batches as one native series per
#    pool and no _bucket series; the classic server the usual _bucket/_sum/
#    _count series; the series counts per pool are printed (docs/exporter.md);
#  - histogram_quantile() p50 and p90 on the native series agree with the
#    classic ones within one bucket (a factor of 2), and the mean from
#    histogram_sum()/histogram_count() with _sum/_count;
#  - the recording rules evaluate on both servers (they take either kind).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_root
need_dmt
need_cmd curl
need_cmd python3
need_prometheus_native

ACCEPT_PB='application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2'
testbed_up
export_start -i 500ms

# negotiation
ct() { curl -sS --max-time 5 -o "$TMPD/neg.out" -w '%{content_type}' "$@" "$EXP_URL/metrics"; }
c=$(ct -H "Accept: $ACCEPT_PB")
case $c in "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited") ;;
*) fail "protobuf Accept got Content-Type '$c'" ;; esac
for a in '' 'text/plain;version=0.0.4' 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0' \
	'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text' 'application/json'; do
	c=$(ct ${a:+-H "Accept: $a"})
	[ "$c" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "Accept '$a' got '$c', want the text format"
done
promtool_lint "$TMPD/neg.out"
log "protobuf only for an Accept that asks for it (not q=0, not encoding=text)"

prom_start native --enable-feature=native-histograms
prom_start classic
log "prometheus with native histograms on $PURL_native, without on $PURL_classic"

testbed_traffic 18
sleep 14

up=$(prom_one native 'up')
[ "$up" = 1 ] || fail "native server: target down: $(curl -s "$PURL_native/api/v1/targets" | head -c 500)"
sel="ifname=\"$IF_RX\""
fam=devmemtop_page_pool_refill_batch_items
r=$(promq native "$fam{$sel}")
case $r in H*) ;; *) fail "native server: $fam{$sel} is not a native histogram: '$r'" ;; esac
[ -z "$(promq native "${fam}_bucket{$sel}")" ] || fail "native server also has classic ${fam}_bucket"
[ -n "$(promq classic "${fam}_bucket{$sel}")" ] || fail "classic server has no ${fam}_bucket"
[ -z "$(promq classic "$fam{$sel}")" ] || fail "classic server has a native $fam"

# series per pool, for the docs
sn=$(prom_one native "count({__name__=~\"${fam}.*\",$sel})")
sc=$(prom_one classic "count({__name__=~\"${fam}.*\",$sel})")
pn=$(prom_one native "count({__name__=~\"devmemtop_page_pool_.*\",$sel})")
pc=$(prom_one classic "count({__name__=~\"devmemtop_page_pool_.*\",$sel})")
[ "$sn" = 1 ] || fail "native: $sn refill batch series for one pool, want 1"
log "series for the pool on $IF_RX: refill batch histogram $sc classic -> $sn native; all devmemtop_page_pool_* $pc -> $pn"

for p in 0.5 0.9; do
	n=$(prom_one native "histogram_quantile($p, sum(rate($fam{$sel}[5s])))")
	c=$(prom_one classic "histogram_quantile($p, sum by (le) (rate(${fam}_bucket{$sel}[5s])))")
	within_one_bucket "$n" "$c" || fail "p$p refill batch: native $n, classic $c: not within one bucket"
	log "p$p refill batch on $IF_RX: native $n, classic $c"
done
n=$(prom_one native "histogram_sum(sum(rate($fam{$sel}[5s]))) / histogram_count(sum(rate($fam{$sel}[5s])))")
c=$(prom_one classic "sum(rate(${fam}_sum{$sel}[5s])) / sum(rate(${fam}_count{$sel}[5s]))")
python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(a - b) <= 0.25 * max(a, b) else 1)' "$n" "$c" ||
	fail "mean refill batch: native $n, classic $c differ by more than 25%"
log "mean refill batch: native $n, classic $c"

# the recording rules take either kind
for s in native classic; do
	v=$(prom_one $s "devmemtop:page_pool_refill_batch_items:p50_5m{$sel}")
	python3 -c 'import math,sys; v=float(sys.argv[1]); sys.exit(0 if math.isfinite(v) and 1 <= v <= 128 else 1)' "$v" ||
		fail "$s: p50_5m rule = $v"
	v=$(prom_one $s "devmemtop:page_pool_refill_batch_items:mean_5m{$sel}")
	python3 -c 'import math,sys; v=float(sys.argv[1]); sys.exit(0 if math.isfinite(v) and 0 <= v <= 128 else 1)' "$v" ||
		fail "$s: mean_5m rule = $v"
	prom_rules_healthy $s
done
log "recording rules p50_5m and mean_5m evaluate on both servers"
testbed_wait
export_stop
pass "native histograms: negotiation, one native series per pool, quantiles within one bucket of the classic ones, rules on both kinds"
