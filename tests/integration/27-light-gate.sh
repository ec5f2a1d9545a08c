#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# gate --mode light on the veth bed: a threshold on a metric light mode only
# samples (pool.refill_batch) is refused with exit 2 and a line naming
# allow_sampled; with 'allow_sampled: true' it runs; an exact metric
# (pool.holds, read from the pool's counters) gates as in the full mode.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
testbed_up

cat >"$TMPD/sampled.yaml" <<YAML
thresholds:
  - metric: pool.refill_batch
    interface: "$IF_RX"
    expect: [p(50) >= 1]
YAML
cat >"$TMPD/allowed.yaml" <<YAML
thresholds:
  - metric: pool.refill_batch
    interface: "$IF_RX"
    allow_sampled: true
    no_data: skip
    expect: [p(50) >= 1]
  - metric: pool.holds
    interface: "$IF_RX"
    expect: [count > 1000]
YAML

# The stream's python processes can take a second or more to connect on a
# loaded machine: the light runs below start once the stream is flowing, so
# their short windows cannot all fall before the first byte.
stream_flowing() {
	local i
	for i in $(seq 1 100); do
		[ -n "$(ip netns exec "$NS_RX" ss -Htn state established "( sport = :$PORT )")" ] &&
			return 0
		sleep 0.1
	done
	fail "the test stream did not connect within 10 s"
}
# The receiver reads 8 MiB at a time, so its pages come back to the pool in
# bursts larger than the recycling ring and every page is a hold, at any
# speed: with small reads a quiet machine recycled nearly every page and a
# 2 s light recording counted 512 holds (the 'count > 1000' below was a
# bet on recycling failing).
TB_RX_CHUNK=8388608
# while_streaming CMD...: CMD's exit status, CMD run while the stream flows.
# The stream outlasts CMD (stopped after it): with a fixed-length stream, a
# loaded machine let the program load eat it and a gate saw no pool at all.
while_streaming() {
	local rc
	testbed_traffic 120
	stream_flowing
	"$@"
	rc=$?
	kill "$_TB_CLI" "$_TB_SRV" 2>/dev/null
	wait "$_TB_CLI" "$_TB_SRV" 2>/dev/null
	return $rc
}

"$DMT" gate --mode light --spec "$TMPD/sampled.yaml" --duration 1s \
	>"$TMPD/s.out" 2>"$TMPD/s.err"
rc=$?
[ $rc = 2 ] || fail "sampled metric without allow_sampled: exit $rc, want 2 ($(cat "$TMPD/s.err"))"
grep -q "pool.refill_batch is sampled in this mode" "$TMPD/s.err" ||
	fail "no reason on stderr: $(cat "$TMPD/s.err")"
grep -q "allow_sampled: true" "$TMPD/s.err" || fail "the line does not say how to allow it"
log "refused: $(head -1 "$TMPD/s.err")"

# the same spec in the default mode: refill batches are exact there
while_streaming "$DMT" gate --spec "$TMPD/sampled.yaml" --duration 2s >"$TMPD/f.out" 2>"$TMPD/f.err"
rc=$?
[ $rc = 0 ] || fail "default mode: exit $rc ($(cat "$TMPD/f.err" "$TMPD/f.out"))"

while_streaming "$DMT" gate --mode light --sampling 20ms/500ms --spec "$TMPD/allowed.yaml" \
	--duration 3s >"$TMPD/a.out" 2>"$TMPD/a.err"
rc=$?
[ $rc = 0 ] || fail "allow_sampled and exact holds in light mode: exit $rc ($(cat "$TMPD/a.err" "$TMPD/a.out"))"
# a light recording carries the mode and which metrics were sampled:
# gate --from applies the same rule
while_streaming "$DMT" record --mode light --sampling 20ms/500ms -o "$TMPD/l.dmtrec" -d 2s \
	2>"$TMPD/r.err" || fail "record --mode light: $(cat "$TMPD/r.err")"
"$DMT" report "$TMPD/l.dmtrec" >"$TMPD/report.txt" 2>&1 || fail "report: $(cat "$TMPD/report.txt")"
grep -q "attach mode light" "$TMPD/report.txt" || fail "report does not say light: $(head -5 "$TMPD/report.txt")"
"$DMT" gate --from "$TMPD/l.dmtrec" --spec "$TMPD/sampled.yaml" >/dev/null 2>"$TMPD/g.err"
rc=$?
[ $rc = 2 ] && grep -q "is sampled in this mode" "$TMPD/g.err" ||
	fail "gate --from a light recording: exit $rc, $(cat "$TMPD/g.err")"
"$DMT" gate --from "$TMPD/l.dmtrec" --spec "$TMPD/allowed.yaml" >"$TMPD/g2.out" 2>&1 ||
	fail "gate --from with allow_sampled: $(cat "$TMPD/g2.out")"
"$DMT" gate --mode heavy --spec "$TMPD/allowed.yaml" --duration 1s 2>"$TMPD/b.err"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMPD/b.err")" -le 2 ] && grep -q "bad --mode 'heavy'" "$TMPD/b.err" ||
	fail "bad --mode: exit $rc, $(cat "$TMPD/b.err")"
pass "gate --mode light and gate --from a light recording refuse sampled metrics unless allowed, gate exact ones"
