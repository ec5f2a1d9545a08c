#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: devmemtop's live view with real page pool traffic on any
# machine (root, BTF, page_pool tracepoints). It builds the host test bed
# of tests/integration/lib.sh - a veth pair across two private network
# namespaces, XDP_PASS on the receiver so veth runs a page_pool, a TCP
# stream over it - opens the live view on it, and tears everything down
# when the view exits (q, Ctrl-C, SIGTERM, the terminal closing): no
# namespace, veth, XDP program or stream is left behind.
#   scripts/demo.sh [devmemtop options...]     e.g. -i 500ms, -b -n 5
source "$(dirname "$0")/../tests/integration/lib.sh"

[ "$(id -u)" = 0 ] || { echo "make demo: needs root (BPF, network namespaces): sudo make demo" >&2; exit 1; }
[ -x "$DMT" ] || { echo "make demo: $DMT not built (make)" >&2; exit 1; }
for c in ip python3; do
	command -v "$c" >/dev/null || { echo "make demo: $c missing (scripts/install-deps.sh)" >&2; exit 1; }
done

# lib.sh's fail() says FAIL: as a test would; the demo says what failed
fail() { printf 'make demo: %s\n' "$*" >&2; exit 1; }

testbed_up
# The stream client stops after at most 120 s: restart it until the view
# exits. The loop runs in a subshell that cleanup() kills with its stream.
(
	trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM INT HUP
	while :; do
		testbed_traffic 110
		wait
		sleep 0.2
	done
) &
_TB_PIDS+=($!)

echo "make demo: veth $IF_TX (netns $NS_TX) -> $IF_RX (netns $NS_RX, XDP_PASS), TCP stream running"
"$DMT" "$@"
rc=$?
echo "make demo: devmemtop exited ($rc); removing the test bed"
exit "$rc"
