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

"$DMT" gate --mode light --spec "$TMPD/sampled.yaml" --duration 1s \
	>"$TMPD/s.out" 2>"$TMPD/s.err"
rc=$?
[ $rc = 2 ] || fail "sampled metric without allow_sampled: exit $rc, want 2 ($(cat "$TMPD/s.err"))"
grep -q "pool.refill_batch is sampled in this mode" "$TMPD/s.err" ||
	fail "no reason on stderr: $(cat "$TMPD/s.err")"
grep -q "allow_sampled: true" "$TMPD/s.err" || fail "the line does not say how to allow it"
log "refused: $(head -1 "$TMPD/s.err")"

# the same spec in the default mode: refill batches are exact there
testbed_traffic 3
"$DMT" gate --spec "$TMPD/sampled.yaml" --duration 2s >"$TMPD/f.out" 2>"$TMPD/f.err"
rc=$?
testbed_wait
[ $rc = 0 ] || fail "default mode: exit $rc ($(cat "$TMPD/f.err" "$TMPD/f.out"))"

testbed_traffic 4
"$DMT" gate --mode light --sampling 20ms/500ms --spec "$TMPD/allowed.yaml" --duration 3s \
	>"$TMPD/a.out" 2>"$TMPD/a.err"
rc=$?
testbed_wait
[ $rc = 0 ] || fail "allow_sampled and exact holds in light mode: exit $rc ($(cat "$TMPD/a.err" "$TMPD/a.out"))"
"$DMT" gate --mode heavy --spec "$TMPD/allowed.yaml" --duration 1s 2>"$TMPD/b.err"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMPD/b.err")" -le 2 ] && grep -q "bad --mode 'heavy'" "$TMPD/b.err" ||
	fail "bad --mode: exit $rc, $(cat "$TMPD/b.err")"
pass "gate --mode light refuses sampled metrics unless allowed, gates exact ones"
