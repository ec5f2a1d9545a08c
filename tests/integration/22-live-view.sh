#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The live view as a person uses it: devmemtop in tmux on a real terminal,
# the pane read back while veth traffic runs, 'q' and SIGTERM both exit
# cleanly and leave no BPF program or link behind.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd tmux
need_cmd bpftool
testbed_up
SES=dmt-view-$$
tmux kill-session -t "$SES" 2>/dev/null
# a failure must not leave the view running in a detached session
trap 'tmux kill-session -t "$SES" 2>/dev/null; cleanup' EXIT

run_view() {	# $1: how to stop it (q or TERM)
	local ids left pid i
	tmux new-session -d -s "$SES" -x 200 -y 50 "$DMT -i 500ms; echo EXIT=\$?; sleep 30"
	# a stream that outlasts the look (stopped below), and a look until our
	# row shows (20 s at most): a 4 s stream and one look after 3 s missed
	# the row at load average 16 (slow attach, slow connect)
	testbed_traffic 120
	for i in $(seq 1 100); do
		tmux capture-pane -p -t "$SES" >"$TMPD/pane.$1"
		grep -Eq "^[0-9]+ +$IF_RX .* pages .* alive +[0-9]+" "$TMPD/pane.$1" && break
		sleep 0.2
	done
	grep -q "devmemtop .* mode: tracepoint-only\|devmemtop .* mode: fentry\|devmemtop .* mode: devmem" "$TMPD/pane.$1" ||
		fail "no header in the pane: $(head -3 "$TMPD/pane.$1")"
	grep -q "^POOL .*HOLD/s" "$TMPD/pane.$1" || fail "no pool table header"
	grep -Eq "^[0-9]+ +$IF_RX .* pages .* alive +[0-9]+" "$TMPD/pane.$1" ||
		fail "no row for our pool on $IF_RX: $(grep -A3 '^POOL' "$TMPD/pane.$1")"
	grep -q "q quit" "$TMPD/pane.$1" || fail "no key help line"
	# the help overlay
	tmux send-keys -t "$SES" h
	sleep 0.5
	tmux capture-pane -p -t "$SES" | grep -q "toggle this help" || fail "h shows no help"
	tmux send-keys -t "$SES" h
	pid=$(pgrep -f "^$DMT -i 500ms" | head -1)
	[ -n "$pid" ] || fail "devmemtop not running"
	ids=$(bpf_ids_of "$pid")
	[ "$(echo "$ids" | grep -c '^prog ')" -ge 4 ] || fail "devmemtop holds no BPF programs: $ids"
	# the default, the devmem mode: no per-page link outside its windows,
	# pp_destroy and pp_nid at least
	[ "$(echo "$ids" | grep -c '^link ')" -ge 2 ] || fail "devmemtop holds no BPF links: $ids"
	if [ "$1" = q ]; then
		tmux send-keys -t "$SES" q
	else
		kill -TERM "$pid"
	fi
	for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && fail "devmemtop still running 5 s after $1"
	sleep 0.3
	tmux capture-pane -p -t "$SES" | grep -q "EXIT=0" || fail "exit status after $1 not 0: $(tmux capture-pane -p -t "$SES" | grep EXIT)"
	tmux kill-session -t "$SES"
	kill "$_TB_CLI" "$_TB_SRV" 2>/dev/null
	wait "$_TB_CLI" "$_TB_SRV" 2>/dev/null
	left=$(echo "$ids" | bpf_ids_alive)
	[ -z "$left" ] || fail "BPF objects left behind after $1: $(echo $left)"
	log "$1: clean exit, rows seen, no BPF left"
}
run_view q
run_view TERM
pass "live view shows the pool and exits cleanly on q and SIGTERM"
