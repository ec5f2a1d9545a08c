#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Another process's view of devmemtop's BPF file descriptors (issue 26 item 1).
# (a) Started as the systemd unit starts it (uid 65534, ambient CAP_BPF +
#     CAP_PERFMON, both dropped after attach), the exporter was dumpable: any
#     process of uid 65534 took its fds with pidfd_getfd. Now every command
#     makes itself non-dumpable before it opens a BPF object: checked for
#     export, record and top, with a helper (steal_fds.c) as uid 65534.
# (b) Whoever holds the fds anyway (root can take them, see docs/exporter.md)
#     test-runs walk_binding and light_read on a kernel address the BPF side
#     never recorded (after planting it in the writable pools map): both
#     refuse and read nothing (walk err DMT_WALK_UNKNOWN = -4, light_read
#     status DMT_LIGHT_NOENT = 2, every value 0). Before, the walk read the
#     address as a binding and light_read as a page_pool.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_root
need_dmt
need_cmd setpriv
need_cmd python3

cc -O2 -Wall -I"$TOP/build/skel" -I"$TOP/bpf" -o "$TMPD/steal_fds" \
	"$TOP/tests/integration/steal_fds.c" $(pkg-config --cflags --libs libbpf) ||
	fail "build steal_fds.c"

testbed_up
# the stream lasts until the last check (testbed_stop), not 30 s: with both
# cores busy the light-mode exporter came after it had ended ("no holds")
testbed_traffic 120
testbed_flowing

# as uid 65534 with no capability, take PID's fds: must get none
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$@"; }
expect_untakable() {	# PID WHAT
	local out
	out=$(nobody "$TMPD/steal_fds" take "$1" 2>&1) ||
		fail "$2: another process of uid 65534 took its fds: $out"
	case $out in *"Operation not permitted"*) ;; *) fail "$2: $out" ;; esac
	log "$2: $(echo "$out" | tail -1)"
}
# wait until PID has its BPF programs and no capability left in use
wait_attached() {	# PID WHAT
	local i
	for i in $(seq 1 100); do
		[ -n "$(bpf_ids_of "$1" | grep '^prog')" ] &&
			grep -q '^CapEff:[[:space:]]*0000000000000000' "/proc/$1/status" && return 0
		kill -0 "$1" 2>/dev/null || fail "$2 exited: $(cat "$TMPD/$2.err")"
		sleep 0.1
	done
	fail "$2: no BPF program attached with capabilities dropped in 10 s: $(grep Cap "/proc/$1/status")"
}
# wait until PID (run with -v, stderr in $TMPD/WHAT.err) has attached its
# programs: its "attach mode:" line. Not the first BPF fd seen: start-up's
# feature probes load programs and close them again, so a first look could
# catch a probe's fd and a second one nothing (85 failed that way once)
wait_attach_line() {	# PID WHAT
	local i
	for i in $(seq 1 200); do
		grep -q '^attach mode: ' "$TMPD/$2.err" && return 0
		kill -0 "$1" 2>/dev/null || fail "$2 exited: $(cat "$TMPD/$2.err")"
		sleep 0.1
	done
	fail "$2: no 'attach mode:' line in 20 s: $(tail -3 "$TMPD/$2.err")"
}

cp "$DMT" "$TMPD/devmemtop" && chmod 755 "$TMPD" "$TMPD/devmemtop"
mkdir -m 777 "$TMPD/out"
c=-all,+bpf,+perfmon
# (run with &: the subshell becomes devmemtop, so $! is its pid)
unit() { exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=$c --ambient-caps=$c \
	--bounding-set=$c "$TMPD/devmemtop" "$@"; }

unit export --listen 127.0.0.1:0 -i 500ms >/dev/null 2>"$TMPD/export.err" &
upid=$!
_TB_PIDS+=($upid)
wait_serving "$TMPD/export.err" $upid >/dev/null
wait_attached $upid export
[ "$(grep -c . <(bpf_ids_of $upid))" -gt 0 ] || fail "export holds no BPF object"
expect_untakable $upid "export (uid 65534, ambient CAP_BPF+CAP_PERFMON, dropped)"
kill -TERM $upid; wait $upid || fail "export exit status"

# record and top keep their capabilities (the caller's permitted set then
# already refuses); they are not dumpable either
unit record -v -o "$TMPD/out/r.dmtrec" -i 500ms -d 30s >/dev/null 2>"$TMPD/record.err" &
rpid=$!
_TB_PIDS+=($rpid)
wait_attach_line $rpid record
[ -n "$(bpf_ids_of $rpid)" ] || fail "record holds no BPF object: $(cat "$TMPD/record.err")"
expect_untakable $rpid "record (uid 65534, ambient CAP_BPF+CAP_PERFMON)"
kill -TERM $rpid; wait $rpid

unit top -b -v -i 500ms -n 60 >/dev/null 2>"$TMPD/top.err" &
tpid=$!
_TB_PIDS+=($tpid)
wait_attach_line $tpid top
[ -n "$(bpf_ids_of $tpid)" ] || fail "top holds no BPF object: $(cat "$TMPD/top.err")"
expect_untakable $tpid "top -b (uid 65534, ambient CAP_BPF+CAP_PERFMON)"
kill -TERM $tpid; wait $tpid

# (b) root takes a light-mode exporter's fds and aims both programs elsewhere
addr=$(awk '$3 == "init_net" {print "0x" $1; exit}' /proc/kallsyms)
[ -n "$addr" ] || addr=$(awk '$3 == "_text" {print "0x" $1; exit}' /proc/kallsyms)
[ -n "$addr" ] && [ "$addr" != 0x0000000000000000 ] || fail "no kernel address in /proc/kallsyms"
export_start -i 500ms --mode light
scrape "$TMPD/a.prom"
grep -q '^devmemtop_bpf_program_attached{.*program="light_read"' "$TMPD/a.prom" ||
	grep -q 'light_read' <(bpftool prog show 2>/dev/null) ||
	fail "no light_read program in the light-mode exporter"
out=$("$TMPD/steal_fds" read "$EXP_PID" "$addr" 2>&1) || fail "steal_fds read: $out"
log "root, fds of pid $EXP_PID, address $addr (init_net or _text): $(echo "$out" | tr '\n' ';')"
echo "$out" | grep -qx 'walk_binding: err -4 id 0 ifindex 0 size 0 total 0 free 0' ||
	fail "walk_binding ran on an address it never recorded: $out"
echo "$out" | grep -qx 'light_read: status 2 id 0 hold 0 release 0' ||
	fail "light_read ran on an address it never recorded: $out"
# the exporter's own light reads still work (pool holds from light_read):
# a scrape with the pool's holds > 0, 60 s at most
scrape_until_pool "$TMPD/b.prom" "$IF_RX"
export_stop
testbed_stop
pass "not dumpable (export, record, top: no fd taken by uid 65534); stolen fds read no unrecorded address"
