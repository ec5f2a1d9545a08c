#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The programs' run counts in a snapshot (health.programs) are the
# kernel's, although a snapshot reads them only while
# kernel.bpf_stats_enabled is on and once after it went off (the kernel
# counts nothing while it is off; most hosts keep it off, and the read is a
# syscall per program every snapshot):
#  - stats off from the start, page pool traffic: pp_hold's run_cnt 0;
#  - stats on, traffic: the snapshot after it shows bpftool's run_cnt;
#  - traffic with stats on, stats off right after it: the snapshots after
#    show the count the kernel froze at (bpftool's), not the last one read
#    while on; then more traffic with stats off changes nothing.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd bpftool

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
restore() { sysctl -qw kernel.bpf_stats_enabled="$old_stats"; cleanup; }
trap restore EXIT
sysctl -qw kernel.bpf_stats_enabled=0

testbed_up
"$DMT" --json -i 1s -m tp >"$TMPD/top.json" 2>"$TMPD/top.err" &
dmt=$!
_TB_PIDS+=($dmt)

# snapshots written so far
snaps() { wc -l <"$TMPD/top.json"; }
# wait for K more snapshots than now
more_snaps() {
	local want=$(($(snaps) + $1)) end=$((SECONDS + 60))
	until [ "$(snaps)" -ge $want ]; do
		kill -0 $dmt 2>/dev/null || fail "devmemtop exited: $(cat "$TMPD/top.err")"
		[ $SECONDS -lt $end ] || fail "devmemtop: no snapshot in 60 s"
		sleep 0.1
	done
}
# pp_hold's run_cnt in the last snapshot
json_cnt() {
	tail -1 "$TMPD/top.json" | python3 -c '
import json, sys
p = {x["name"]: x for x in json.load(sys.stdin)["health"]["programs"]}
print(p["pp_hold"]["run_cnt"] if "pp_hold" in p else "none")'
}
# pp_hold's run_cnt as the kernel has it (the program devmemtop holds)
kernel_cnt() {
	local id
	for id in $(grep -h '^prog_id:' /proc/$dmt/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
		bpftool -j prog show id "$id" 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
if j.get("name") == "pp_hold":
    print(j.get("run_cnt", 0))'
	done
}
# traffic through the receiver's page pool (XDP_PASS on the bed)
traffic() {
	testbed_traffic "$1"
	wait "$_TB_CLI" || fail "sender: $(cat "$TMPD/tx.err")"
	wait "$_TB_SRV"
}

more_snaps 1
[ "$(json_cnt)" != none ] || fail "no pp_hold in health.programs: $(tail -c 600 "$TMPD/top.json")"
traffic 1
more_snaps 2
c0=$(json_cnt)
log "stats off since start: pp_hold run_cnt $c0 (kernel $(kernel_cnt))"
[ "$c0" = 0 ] || fail "pp_hold ran $c0 times with stats off"

sysctl -qw kernel.bpf_stats_enabled=1
traffic 1
more_snaps 2
c1=$(json_cnt) k1=$(kernel_cnt)
log "stats on: snapshot $c1, kernel $k1"
[ "$c1" -gt 0 ] && [ "$c1" = "$k1" ] || fail "stats on: snapshot says $c1, kernel $k1"

traffic 1
sysctl -qw kernel.bpf_stats_enabled=0
k2=$(kernel_cnt)
more_snaps 2
c2=$(json_cnt)
log "stats off after traffic: snapshot $c2, kernel $k2 (frozen)"
[ "$k2" -gt "$k1" ] || fail "the traffic with stats on did not count: kernel $k1 -> $k2"
[ "$c2" = "$k2" ] || fail "stats off: snapshot says $c2, the kernel froze at $k2"

traffic 1
more_snaps 2
c3=$(json_cnt) k3=$(kernel_cnt)
[ "$c3" = "$k2" ] && [ "$k3" = "$k2" ] ||
	fail "stats off, more traffic: snapshot $c3, kernel $k3, frozen at $k2"
kill -INT $dmt
wait $dmt || fail "devmemtop exited $?: $(cat "$TMPD/top.err")"
pass "run counts are the kernel's with stats off, on, and just switched off ($c1, $k2)"
