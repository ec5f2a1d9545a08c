#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A lab recording (tests/fixtures/lab-patched-bulk.dmtrec: a real devmem
# binding and devmem page pool, fentry/fexit latencies) replayed by
# `devmemtop export --from` to two Debian Prometheus servers, one with
# native histograms (protobuf) and one classic-only (text). Checked:
#  - --from: bad files give one line and exit 1, --once prints the final state;
#  - per devmem pool, the refill batch histogram: native on one server,
#    classic on the other; histogram_quantile p50/p90 within one bucket,
#    count and sum equal (the last snapshot of the pool, on each server);
#  - per binding, the three latency histograms: the native _nanoseconds twin
#    against the classic _seconds family, the same way;
#  - series per pool and per binding on each server (docs/exporter.md);
#  - every dashboard panel's PromQL (variables substituted) evaluates on
#    both servers without error, and every panel on a histogram has a
#    finite result on both; the rules are healthy on both.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_dmt
need_cmd curl
need_cmd python3
need_prometheus_native
REC=$TOP/tests/fixtures/lab-patched-bulk.dmtrec
[ -s "$REC" ] || fail "fixture $REC missing"

# bad input: one line, exit 1, nothing served
bad() {	# FILE WANT-IN-MESSAGE
	local rc=0
	"$DMT" export --listen 127.0.0.1:0 --from "$1" >/dev/null 2>"$TMPD/bad.err" || rc=$?
	[ "$rc" = 1 ] || fail "--from $1: exit $rc, want 1 ($(cat "$TMPD/bad.err"))"
	[ "$(wc -l <"$TMPD/bad.err")" = 1 ] || fail "--from $1: want one line, got: $(cat "$TMPD/bad.err")"
	grep -q "$2" "$TMPD/bad.err" || fail "--from $1: '$(cat "$TMPD/bad.err")' does not say '$2'"
}
bad "$TMPD/none.dmtrec" "cannot open"
echo "not a recording" >"$TMPD/text.dmtrec"
bad "$TMPD/text.dmtrec" "not a devmemtop recording"
head -c 20000 "$REC" >"$TMPD/cut.dmtrec"
bad "$TMPD/cut.dmtrec" "truncated"
log "bad recordings: one line, exit 1"

"$DMT" export --from "$REC" --once >"$TMPD/once.prom" 2>"$TMPD/once.err" ||
	fail "--from --once: $(cat "$TMPD/once.err")"
promtool_lint "$TMPD/once.prom"
grep -q '^devmemtop_collections_total 60$' "$TMPD/once.prom" ||
	fail "--from --once: want 60 snapshots: $(grep collections_total "$TMPD/once.prom")"
grep -q '^devmemtop_bindings_freed_total 1$' "$TMPD/once.prom" ||
	fail "--from --once: the recorded binding free is not counted"
log "--from --once: the final state of the recording's 60 snapshots, lint-clean"

# Half speed and 250 ms scrapes: the recorded traffic lasts 1.2 s. Both
# servers are up and scraping (the target down) before the replay starts:
# started after it, a server busy cores slowed could come up when the data
# no longer changed, and have no rate() to show.
EXP_PORT=$(newport)
T_START=$(date +%s)
PROM_SCRAPE=250ms
prom_start native --enable-feature=native-histograms
prom_start classic
prom_scraping native
prom_scraping classic
EXP_LISTEN=127.0.0.1:$EXP_PORT export_start --from "$REC" --speed 0.5
log "replaying to prometheus with native histograms on $PURL_native, without on $PURL_classic"
for i in $(seq 1 120); do
	grep -q 'replay done' "$TMPD/export.err" && break
	kill -0 "$EXP_PID" 2>/dev/null || fail "exporter died: $(cat "$TMPD/export.err")"
	sleep 0.5
done
grep -q 'replay done: 60 snapshots' "$TMPD/export.err" || fail "replay did not finish: $(cat "$TMPD/export.err")"
sleep 1

# life: a range that covers the servers' whole life, however long the test
# has taken (a freed binding's series end with the replay: with both cores
# busy the queries below came more than a fixed 5m after it)
life() { echo "$(($(date +%s) - T_START + 10))s"; }
# last_sample SERVER SELECTOR: time of the newest sample of the selector's series
last_sample() {
	PROM_AT='' prom_one "$1" "max(max_over_time(timestamp($2)[$(life):100ms]))"
}
num_eq() {	# A B: equal within 1e-9 relative (sums in s vs ns / 1e9)
	python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-12) else 1)' "$1" "$2"
}
# compare WHAT NAT_EXPR CLS_EXPR SEL SCALE: quantiles within one bucket,
# counts and sums equal, at each server's last sample of SEL; native values
# divided by SCALE (1e9 for ns against s).
compare() {
	local what=$1 nat=$2 cls=$3 sel=$4 scale=$5 p n c tn tc cnt
	tn=$(last_sample native "$sel")
	tc=$(last_sample classic "$sel")
	for p in 0.5 0.9; do
		n=$(PROM_AT=$tn prom_one native "histogram_quantile($p, $nat) / $scale")
		c=$(PROM_AT=$tc prom_one classic "histogram_quantile($p, $cls)")
		within_one_bucket "$n" "$c" || fail "$what p$p: native $n, classic $c: not within one bucket"
		log "$what p$p: native $n, classic $c"
	done
	n=$(PROM_AT=$tn prom_one native "histogram_count($nat)")
	c=$(PROM_AT=$tc prom_one classic "sum(${cls/_bucket/_count}) without (le)")
	[ "$n" = "$c" ] || fail "$what count: native $n, classic $c"
	cnt=$c
	n=$(PROM_AT=$tn prom_one native "histogram_sum($nat) / $scale")
	c=$(PROM_AT=$tc prom_one classic "sum(${cls/_bucket/_sum}) without (le)")
	num_eq "$n" "$c" || fail "$what sum: native $n, classic $c"
	log "$what count $cnt on both, sum: native $n, classic $c"
}

# every devmem pool the replay showed
pools=$(promq classic "count by (pool_id) (last_over_time(devmemtop_page_pool_info{kind=\"devmem\"}[$(life)]))" |
	sed -n 's/.*"pool_id": "\([0-9]*\)".*/\1/p')
[ -n "$pools" ] || fail "no devmem pool in the replay"
fam=devmemtop_page_pool_refill_batch_items
for pool in $pools; do
	sel="devmemtop_page_pool_info{pool_id=\"$pool\"}"
	tn=$(last_sample native "$sel")
	case $(PROM_AT=$tn promq native "$fam{pool_id=\"$pool\"}") in H*) ;;
	*) fail "native server: $fam of pool $pool is not a native histogram" ;; esac
	[ -z "$(PROM_AT=$tn promq native "${fam}_bucket{pool_id=\"$pool\"}")" ] ||
		fail "native server also has classic ${fam}_bucket"
	compare "devmem pool $pool refill batch" "$fam{pool_id=\"$pool\"}" \
		"${fam}_bucket{pool_id=\"$pool\"}" "$sel" 1
	sn=$(PROM_AT=$tn prom_one native "count({__name__=~\"devmemtop_page_pool_.*\",pool_id=\"$pool\"})")
	sc=$(PROM_AT=$(last_sample classic "$sel") prom_one classic "count({__name__=~\"devmemtop_page_pool_.*\",pool_id=\"$pool\"})")
	log "series for devmem pool $pool: devmemtop_page_pool_* $sc classic -> $sn native"
done

bindings=$(promq classic "count by (binding_id) (last_over_time(devmemtop_binding_info[$(life)]))" |
	sed -n 's/.*"binding_id": "\([0-9]*\)".*/\1/p')
[ -n "$bindings" ] || fail "no binding in the replay"
for b in $bindings; do
	sel="devmemtop_binding_info{binding_id=\"$b\"}"
	for h in alloc_latency alloc_niov_latency release_latency; do
		f=devmemtop_binding_$h
		tn=$(last_sample native "$sel")
		case $(PROM_AT=$tn promq native "${f}_nanoseconds{binding_id=\"$b\"}") in H*) ;;
		*) fail "native server: ${f}_nanoseconds of binding $b is not a native histogram" ;; esac
		[ -z "$(PROM_AT=$(last_sample classic "$sel") promq classic "{__name__=~\"${f}_nanoseconds.*\"}")" ] ||
			fail "classic server has ${f}_nanoseconds (the text format must not)"
		compare "binding $b $h (s)" "${f}_nanoseconds{binding_id=\"$b\"}" \
			"${f}_seconds_bucket{binding_id=\"$b\"}" "$sel" 1e9
	done
	tn=$(last_sample native "$sel")
	sn=$(PROM_AT=$tn prom_one native "count({__name__=~\"devmemtop_binding_.*\",binding_id=\"$b\"})")
	sc=$(PROM_AT=$(last_sample classic "$sel") prom_one classic "count({__name__=~\"devmemtop_binding_.*\",binding_id=\"$b\"})")
	sl=$(PROM_AT=$tn prom_one native "count({__name__=~\"devmemtop_binding_.*_latency_seconds_.*\",binding_id=\"$b\"})")
	log "series for binding $b: devmemtop_binding_* $sc classic -> $sn native ($sl of them classic _seconds latency series, droppable there)"
done

# The dashboard on both servers, at the binding's last sample, over its life.
"$DMT" export --list-metrics >"$TMPD/catalogue" || fail "--list-metrics"
t=$(last_sample native 'devmemtop_binding_info')
python3 "$EXPORT_TOOLS" panels "$TOP/dashboards/devmemtop.json" "$TMPD/catalogue" "$t" 20s \
	native="$PURL_native" classic="$PURL_classic" >"$TMPD/panels" ||
	fail "dashboard panels: $(cat "$TMPD/panels")"
sed 's/^/  /' "$TMPD/panels"
grep -q "^histogram panel 'Refill batch size'" "$TMPD/panels" || fail "the refill batch heatmap was not checked"

# the rules: healthy, and the latency rule has a value on both
for s in native classic; do
	v=$(PROM_AT=$t prom_one $s 'devmemtop:binding_alloc_latency_seconds:p99_5m')
	python3 -c 'import math,sys; v=float(sys.argv[1]); sys.exit(0 if math.isfinite(v) and 0 < v < 1 else 1)' "$v" ||
		fail "$s: binding_alloc_latency p99_5m rule = $v"
	log "$s: devmemtop:binding_alloc_latency_seconds:p99_5m = $v"
	prom_rules_healthy $s
done
export_stop
pass "lab recording replay: native and classic agree per devmem pool and binding (quantiles within one bucket, counts and sums equal); every dashboard panel works on both kinds"
