#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo as a newcomer runs it: in a terminal (tmux), the live view shows
# the demo's veth page pool with traffic; q quits, and nothing is left:
# no network namespace, no veth, no XDP or devmemtop BPF program or link,
# no stream process. Also the view's one-line hint when no pool exists.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd tmux
need_cmd bpftool
[ -f "$XDP_OBJ" ] || fail "$XDP_OBJ not built (make test-assets)"
SES=dmt-demo-$$
tmux kill-session -t "$SES" 2>/dev/null
trap 'tmux kill-session -t "$SES" 2>/dev/null; cleanup' EXIT

wait_pane() {	# wait_pane REGEX SECONDS: until the pane shows REGEX
	local i
	for i in $(seq $(($2 * 5))); do
		tmux capture-pane -p -t "$SES" >"$TMPD/pane" 2>/dev/null
		grep -Eq -- "$1" "$TMPD/pane" && return 0
		sleep 0.2
	done
	return 1
}

# 1. the hint: with no pool at all (true here unless another test bed
# runs), the view says how to get traffic instead of two empty tables
if ! ls /sys/class/net | grep -q '^dm[rt]x' && [ -z "$(ip netns list | grep '^dmt-')" ]; then
	tmux new-session -d -s "$SES" -x 80 -y 24 "$DMT -i 200ms; echo EXIT=\$?; sleep 30"
	wait_pane "^(No page pool|POOL )" 10 || fail "view did not start: $(head -5 "$TMPD/pane")"
	if grep -q "^No page pool yet: .*make demo" "$TMPD/pane"; then
		grep -q "^POOL " "$TMPD/pane" && fail "hint and an empty pool table both shown"
		log "no pool: one-line hint shown: $(grep '^No page pool' "$TMPD/pane")"
	else
		log "a page pool exists on this host: hint not expected"
	fi
	tmux send-keys -t "$SES" q
	wait_pane "EXIT=0" 5 || fail "view did not exit 0 on q"
	tmux kill-session -t "$SES"
fi

# 2. make demo in a terminal
ns_before=$(ip netns list | sort)
tmux new-session -d -s "$SES" -x 160 -y 40 \
	"make -C '$TOP' --no-print-directory demo ARGS='-i 500ms'; echo EXIT=\$?; sleep 60"
wait_pane "^[0-9]+ +dmrx[0-9]+ .* pages .* alive +[0-9]+" 60 ||
	fail "no demo pool row in the view: $(cat "$TMPD/pane" | head -30)"
# the stream really runs: holds/s of the pool row goes above zero
for i in $(seq 40); do
	tmux capture-pane -p -t "$SES" >"$TMPD/pane"
	row=$(grep -E "^[0-9]+ +dmrx[0-9]+ " "$TMPD/pane" | head -1)
	awk -v h="$(echo "$row" | awk '{print $9}')" 'BEGIN { exit !(h > 0) }' && break
	row=""
	sleep 0.5
done
[ -n "$row" ] || fail "demo pool has no holds/s in 20 s: $(grep -A3 '^POOL ' "$TMPD/pane")"
log "demo view: $row"
# the demo's test bed id, from its interface name (other test beds may run)
id=$(echo "$row" | grep -oE 'dmrx[0-9]+' | cut -c5-)
demo_ns=$(ip netns list | awk '{print $1}' | grep -E "^dmt-(tx|rx)-$id\$")
[ "$(echo "$demo_ns" | grep -c .)" = 2 ] || fail "expected the demo's two namespaces, got: $demo_ns"
echo "$ns_before" | grep -q -- "-$id\b" && fail "namespaces of $id existed before the demo"
pid=$(pgrep -f "^$DMT -i 500ms" | head -1)
[ -n "$pid" ] || fail "devmemtop not running under make demo"
ids=$(bpf_ids_of "$pid")
[ "$(echo "$ids" | grep -c '^prog ')" -ge 4 ] || fail "devmemtop holds no BPF programs: $ids"
rxns=$(echo "$demo_ns" | grep '^dmt-rx-')
xdp=$(ip -n "$rxns" -d link show | grep -oE 'prog/xdp id [0-9]+' | awk '{print "prog", $3}')
[ -n "$xdp" ] || fail "no XDP program on the demo's receiver"
log "demo: namespaces $(echo $demo_ns), devmemtop $(echo "$ids" | wc -l) BPF ids, XDP $xdp"

tmux send-keys -t "$SES" q
wait_pane "^EXIT=" 20 || fail "make demo did not return 20 s after q"
grep -q "^EXIT=0" "$TMPD/pane" || fail "make demo exit status: $(grep '^EXIT=' "$TMPD/pane")"
tmux kill-session -t "$SES"
sleep 0.5

left=""
for n in $demo_ns; do ip netns list | grep -q "^$n\b" && left+=" netns $n"; done
ip -o link show | grep -E "dm[rt]x$id\b" && left+=" veth dm*x$id"
for n in $demo_ns; do	# a veth kept alive by a process still in its namespace
	[ -e "/run/netns/$n" ] && ip -n "$n" -o link show 2>/dev/null | grep -q "dm[rt]x$id" &&
		left+=" veth in $n"
done
alive=$(printf '%s\n%s\n' "$ids" "$xdp" | bpf_ids_alive)
[ -n "$alive" ] && left+=" BPF: $(echo $alive)"
pgrep -f "$TOP/tests/integration/tcp_stream.py" >/dev/null &&
	left+=" stream: $(pgrep -af "$TOP/tests/integration/tcp_stream.py")"
pgrep -f "$TOP/scripts/demo.sh|scripts/demo.sh -i 500ms" >/dev/null && left+=" demo.sh still running"
[ -z "$left" ] || fail "left behind after q:$left"
pass "make demo shows the veth pool with traffic; q leaves no netns, veth, BPF or stream"
