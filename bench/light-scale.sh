#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Light mode's collector at scale: N live page pools (default 1000) at 1 Hz.
# The pools are real: N/2 veth pairs between two private network namespaces,
# XDP_PASS on both ends (veth then runs one page_pool per end), 4 MiB each way
# over one TCP connection per pair (both ends' pools hold pages). The exporter runs
# `-m light` with one long sampling window at start (--sampling 40s/1h),
# during which that traffic runs, so every pool is located; then it collects
# every second for SECONDS while we measure its on-CPU time
# (/proc/PID/task/*/schedstat) and, at the end, scrape it once to count the
# pools it reports. Goal: <= 1 % of a core.
#
# usage: bench/light-scale.sh [POOLS] [SECONDS]    (root; default 1000 30)
source "$(dirname "$0")/../tests/integration/lib.sh"
POOLS=${1:-1000}
SECS=${2:-30}
PAIRS=$((POOLS / 2))
PORT=19437
need_root
need_dmt
need_cmd bpftool
need_cmd curl
[ -f "$XDP_OBJ" ] || fail "$XDP_OBJ not built (make test-assets)"
[ "$PAIRS" -ge 1 ] && [ "$PAIRS" -le 2000 ] || fail "POOLS from 2 to 4000"
# a bpffs of our own: `ip -n` remounts /sys, so a pin under /sys/fs/bpf is not seen
BPFFS=$TMPD/bpffs
PIN=$BPFFS/xdp_pass
scale_down() {
	ip netns del "$NS_TX" 2>/dev/null
	ip netns del "$NS_RX" 2>/dev/null
	rm -f "$PIN"
	umount "$BPFFS" 2>/dev/null
	cleanup
}
trap scale_down EXIT
mkdir -p "$BPFFS" && mount -t bpf bpf "$BPFFS" || fail "mount bpffs"

ip netns add "$NS_TX" && ip netns add "$NS_RX" || fail "ip netns add"
bpftool prog load "$XDP_OBJ" "$PIN" type xdp || fail "bpftool prog load $XDP_OBJ"
addr() { echo "172.$((16 + $1 / 64)).$(( ($1 % 64) * 4)).$2"; }
t0=$(date +%s)
for i in $(seq 0 $((PAIRS - 1))); do
	echo "link add sa$i type veth peer name sb$i netns $NS_RX"
	echo "addr add $(addr "$i" 1)/30 dev sa$i"
	echo "link set sa$i up"
	echo "link set dev sa$i xdp pinned $PIN"
done >"$TMPD/a.batch"
for i in $(seq 0 $((PAIRS - 1))); do
	echo "addr add $(addr "$i" 2)/30 dev sb$i"
	echo "link set sb$i up"
	echo "link set dev sb$i xdp pinned $PIN"
done >"$TMPD/b.batch"
ip -n "$NS_TX" -batch "$TMPD/a.batch" || fail "veth pairs (A side)"
ip -n "$NS_RX" -batch "$TMPD/b.batch" || fail "veth pairs (B side)"
log "$PAIRS veth pairs with XDP on both ends in $(( $(date +%s) - t0 )) s"

"$DMT" export ${SCALE_MODE_ARGS:--m light --sampling 40s/1h} -i 1s -l 127.0.0.1:$PORT -v \
	>"$TMPD/exp.out" 2>"$TMPD/exp.err" &
exp=$!; _TB_PIDS+=($exp)
# attached: the first snapshot's 40 s window opens right after this line
for _ in $(seq 100); do grep -q "attach mode: " "$TMPD/exp.err" && break; sleep 0.1; done
grep -q "attach mode: " "$TMPD/exp.err" || fail "exporter: $(cat "$TMPD/exp.err")"
sleep 0.3
# 4 MiB each way over one TCP connection per pair: small packets fit the
# skb and never touch veth's page pool, GSO-sized ones with frags do
ip netns exec "$NS_RX" python3 -c '
import socket, sys
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", 5209))
srv.listen(64)
srv.settimeout(30)
for _ in range(int(sys.argv[1])):
    c, _ = srv.accept()
    while c.recv(1 << 16):
        pass
    c.sendall(b"x" * (4 << 20))
    c.close()
' "$PAIRS" &
srv=$!
sleep 0.5
ip netns exec "$NS_TX" python3 -c '
import socket, sys
for i in range(int(sys.argv[1])):
    s = socket.create_connection((f"172.{16 + i // 64}.{(i % 64) * 4}.2", 5209), timeout=5)
    s.sendall(b"x" * (4 << 20))
    s.shutdown(socket.SHUT_WR)
    while s.recv(1 << 16):
        pass
    s.close()
' "$PAIRS" || fail "traffic over the pairs"
wait $srv || fail "traffic server"
for _ in $(seq 60); do grep -q serving "$TMPD/exp.err" && break; sleep 0.5; done
grep -q serving "$TMPD/exp.err" || fail "exporter did not start: $(cat "$TMPD/exp.err")"
sleep 2
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {printf "%d\n", s}'; }
c0=$(cpu_ns $exp); t0=$(date +%s%N)
sleep "$SECS"
c1=$(cpu_ns $exp); t1=$(date +%s%N)
curl -s "127.0.0.1:$PORT/metrics" >"$TMPD/scrape.txt" || fail "scrape"
[ -n "${KEEP_SCRAPE:-}" ] && cp "$TMPD/scrape.txt" "$KEEP_SCRAPE"
located=$(grep -c '^devmemtop_page_pool_holds_total{.*ifname="s[ab]' "$TMPD/scrape.txt")
collect=$(grep '^devmemtop_collect_duration_seconds' "$TMPD/scrape.txt" | head -3)
python3 - "$c0" "$c1" "$t0" "$t1" "$located" "$POOLS" <<'PY'
import sys
c0, c1, t0, t1, located, pools = map(int, sys.argv[1:])
share = (c1 - c0) / (t1 - t0)
print(f"light exporter, {located} of {pools} veth pools located, 1 Hz, "
      f"{(t1 - t0) / 1e9:.0f} s: {share:.2%} of a core ({(c1 - c0) / (t1 - t0) * 1e3:.2f} ms/s; goal <= 1 %)")
PY
echo "$collect"
