# SPDX-License-Identifier: GPL-2.0
# Shared helpers for tests/integration/*.sh (source it; bash).
#
# A test exits 0 on pass, 1 on failure, 77 on skip, after printing
# "SKIP: reason". The host test bed is a veth pair across two network
# namespaces made for this test only, XDP_PASS on the receiver (so veth
# runs its page_pool) and a TCP stream between 10.213.0.1 and 10.213.0.2,
# addresses that exist only inside those namespaces.

set -u
# Debian's python3 and tools first, those scripts/install-deps.sh installs
# (python3-yaml, python3-scipy...), not whatever a user's PATH puts first:
# here a pyenv shim, another interpreter without scipy, whose bash wrapper
# took 13 s a start at load average 17 (Debian's: 1.2 s), for the hundreds
# of python3 starts of a run
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DMT=${DMT:-$TOP/build/devmemtop}
XDP_OBJ=${XDP_OBJ:-$TOP/build/xdp_pass.bpf.o}
TB_ID=$$
NS_TX=dmt-tx-$TB_ID
NS_RX=dmt-rx-$TB_ID
IF_TX=dmtx$TB_ID
IF_RX=dmrx$TB_ID
ADDR_TX=10.213.0.1
ADDR_RX=10.213.0.2
PORT=5201
TMPD=$(mktemp -d /tmp/dmt-test.XXXXXX)
_TB_UP=0
_TB_PIDS=()

log() { printf '  %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*"; exit 1; }
skip() { printf 'SKIP: %s\n' "$*"; exit 77; }
pass() { printf 'PASS: %s\n' "$*"; exit 0; }

need_root() { [ "$(id -u)" = 0 ] || skip "needs root (BPF, network namespaces)"; }
need_cmd() { command -v "$1" >/dev/null 2>&1 || skip "$1 not installed (scripts/install-deps.sh)"; }
need_dmt() { [ -x "$DMT" ] || fail "$DMT not built (make)"; }

cleanup() {
	local p
	# CONT: a stopped process (bench/bystander.sh slices) takes TERM only once running
	for p in "${_TB_PIDS[@]}"; do kill "$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null; done
	wait 2>/dev/null
	testbed_down
	rm -rf "$TMPD"
}
trap cleanup EXIT

testbed_up() {
	testbed_netns_up
	testbed_veth_up
}

# The bed's two namespaces alone (a test that starts its watchers before
# the veth and its page pool exist), then testbed_veth_up.
testbed_netns_up() {
	need_root
	[ -f "$XDP_OBJ" ] || fail "$XDP_OBJ not built (make test-assets)"
	ip netns add "$NS_TX" || fail "ip netns add"
	ip netns add "$NS_RX" || fail "ip netns add"
	_TB_UP=1
}

# The veth pair across the namespaces, XDP_PASS on the receiver: its page pool.
testbed_veth_up() {
	ip link add "$IF_TX" netns "$NS_TX" type veth peer name "$IF_RX" netns "$NS_RX" ||
		fail "veth create"
	ip -n "$NS_TX" addr add $ADDR_TX/24 dev "$IF_TX"
	ip -n "$NS_RX" addr add $ADDR_RX/24 dev "$IF_RX"
	ip -n "$NS_TX" link set lo up
	ip -n "$NS_RX" link set lo up
	ip -n "$NS_TX" link set "$IF_TX" up
	ip -n "$NS_RX" link set "$IF_RX" up
	ip -n "$NS_RX" link set dev "$IF_RX" xdp obj "$XDP_OBJ" sec xdp ||
		fail "attach XDP_PASS to $IF_RX"
}

# testbed_traffic SECONDS: stream in the background; testbed_wait collects it.
# TB_RX_CHUNK=BYTES: the receiver reads that much at a time (tcp_stream.py).
# TB_TX_DUTY=0..1: the sender sends that share of every second (tcp_stream.py).
# TB_CPU=LIST: both ends (and so the veth softirqs they raise) run on those CPUs.
testbed_traffic() {
	local pin=()

	[ -n "${TB_CPU:-}" ] && pin=(taskset -c "$TB_CPU")
	"${pin[@]}" ip netns exec "$NS_RX" python3 "$TOP/tests/integration/tcp_stream.py" server \
		$ADDR_RX $PORT ${TB_RX_CHUNK:-} >"$TMPD/rx.bytes" 2>"$TMPD/rx.err" &
	_TB_PIDS+=($!)
	_TB_SRV=$!
	"${pin[@]}" ip netns exec "$NS_TX" python3 "$TOP/tests/integration/tcp_stream.py" client \
		$ADDR_RX $PORT "$1" ${TB_TX_DUTY:-} >"$TMPD/tx.bytes" 2>"$TMPD/tx.err" &
	_TB_PIDS+=($!)
	_TB_CLI=$!
}

# testbed_flowing: wait (60 s at most) until the stream's connection is
# established on the receiver: from then on its data are on the wire.
testbed_flowing() {
	local end=$((SECONDS + 60))
	until [ -n "$(ip netns exec "$NS_RX" ss -Htn state established "( sport = :$PORT )" 2>/dev/null)" ]; do
		[ $SECONDS -lt $end ] || fail "the stream did not connect in 60 s: $(cat "$TMPD/tx.err" "$TMPD/rx.err")"
		kill -0 "$_TB_CLI" 2>/dev/null || fail "the stream's client exited: $(cat "$TMPD/tx.err")"
		sleep 0.1
	done
}

# testbed_stop: end the stream now (the client stops sending at SIGTERM and
# exits 0), then testbed_wait. For a stream started with a long SECONDS that
# must last until the test has seen what it waits for, whatever the load.
testbed_stop() {
	kill -TERM "$_TB_CLI" 2>/dev/null
	testbed_wait
}

testbed_wait() {
	wait "$_TB_CLI" || fail "traffic client failed: $(cat "$TMPD/tx.err")"
	wait "$_TB_SRV" || fail "traffic server failed: $(cat "$TMPD/rx.err")"
	[ -s "$TMPD/rx.bytes" ] || fail "traffic server received nothing"
}

# Remove the namespaces: the veth goes, and with it its page_pool.
testbed_down() {
	[ "$_TB_UP" = 1 ] || return 0
	ip netns del "$NS_TX" 2>/dev/null
	ip netns del "$NS_RX" 2>/dev/null
	_TB_UP=0
}

# BPF program and link ids a process holds, from its fdinfo ("prog 12").
bpf_ids_of() {
	grep -hE '^(prog|link)_id:' /proc/"$1"/fdinfo/* 2>/dev/null |
		sed 's/_id:[[:space:]]*/ /' | sort -u
}

# Which of these ids ("prog 12" lines on stdin) still exist in the kernel.
bpf_ids_alive() {
	local kind id
	while read -r kind id; do
		bpftool "$kind" show id "$id" >/dev/null 2>&1 && echo "$kind $id"
	done
}
