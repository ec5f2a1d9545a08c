#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# -b text mode over a pool's life: its row while traffic runs, then the
# destruction event in the EVENTS panel once the veth is deleted, and the
# row gone afterwards (destroyed pools leave the table).
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
testbed_up
# Run until stopped on what it printed, not for a fixed 16 intervals (a
# loaded machine ran the script past them: no EVENTS panel at load 16).
# -m full: the row from the first refill (the default devmem mode locates a
# pool of pages in its sampling windows: 88-devmem-mode).
stdbuf -oL "$DMT" -b -i 500ms -n 600 -m full >"$TMPD/out" 2>"$TMPD/err" &
dmt=$!
_TB_PIDS+=($dmt)
for i in $(seq 1 300); do [ -s "$TMPD/out" ] && break; sleep 0.1; done
testbed_traffic 2
testbed_wait
for i in $(seq 1 100); do grep -Eq "^[0-9]+ +$IF_RX " "$TMPD/out" && break; sleep 0.1; done
row=$(grep -E "^[0-9]+ +$IF_RX " "$TMPD/out" | head -1)
[ -n "$row" ] || fail "no row for $IF_RX"
id=$(echo "$row" | awk '{print $1}')
testbed_down
# until the destruction event is printed, then two more intervals (the
# pool must be gone from the last table)
for i in $(seq 1 200); do
	grep -Eq "^[0-9:]{8} pool $id: destroyed" "$TMPD/out" && break
	kill -0 $dmt 2>/dev/null || break
	sleep 0.1
done
sleep 1.2
kill -TERM $dmt 2>/dev/null
wait $dmt || fail "devmemtop -b failed: $(cat "$TMPD/err")"
grep -q "^EVENTS" "$TMPD/out" || fail "no EVENTS panel after the pool went away"
grep -Eq "^[0-9:]{8} pool $id: destroyed" "$TMPD/out" ||
	fail "no destruction event for pool $id: $(grep -A6 '^EVENTS' "$TMPD/out" | tail -6)"
# the last interval no longer lists the pool
last=$(awk 'BEGIN{RS=""} /^devmemtop /{blk=$0} END{print blk}' "$TMPD/out")
echo "$last" | grep -Eq "^$id +$IF_RX " && fail "destroyed pool $id still listed at the end"
pass "pool $id: row, destruction event, then gone"
