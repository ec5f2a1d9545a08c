#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# -b text mode over a pool's life: its row while traffic runs, then the
# destruction event in the EVENTS panel once the veth is deleted, and the
# row gone afterwards (destroyed pools leave the table).
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
testbed_up
"$DMT" -b -i 500ms -n 16 >"$TMPD/out" 2>"$TMPD/err" &
dmt=$!
_TB_PIDS+=($dmt)
sleep 1
testbed_traffic 2
testbed_wait
sleep 1
testbed_down
wait $dmt || fail "devmemtop -b failed: $(cat "$TMPD/err")"
row=$(grep -E "^[0-9]+ +$IF_RX " "$TMPD/out" | head -1)
[ -n "$row" ] || fail "no row for $IF_RX"
id=$(echo "$row" | awk '{print $1}')
grep -q "^EVENTS" "$TMPD/out" || fail "no EVENTS panel after the pool went away"
grep -Eq "^[0-9:]{8} pool $id: destroyed" "$TMPD/out" ||
	fail "no destruction event for pool $id: $(grep -A6 '^EVENTS' "$TMPD/out" | tail -6)"
# the last interval no longer lists the pool
last=$(awk 'BEGIN{RS=""} /^devmemtop /{blk=$0} END{print blk}' "$TMPD/out")
echo "$last" | grep -Eq "^$id +$IF_RX " && fail "destroyed pool $id still listed at the end"
pass "pool $id: row, destruction event, then gone"
