#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fetch.sh OUTDIR: the kernel's own Python selftests the "selftests" lab
# scenario runs, UNMODIFIED from the pinned source (tag "base" of the lab's
# source repo), in the in-tree layout their lib.py expects (KSRC =
# five levels above net/lib/py, ynl from tools/net/ynl/lib, the netlink
# specs from Documentation/netlink/specs):
#   tools/testing/selftests/net/{nl_netdev.py,lib/py}
#   tools/testing/selftests/drivers/net/{queues.py,stats.py,lib/py,
#                                        hw/pp_alloc_fail.py,hw/lib/py}
# On 7.x (DEVMEMTOP_LAB_SERIES) the same tests from that series' source,
# plus drivers/net/hds.py, with 7.x's YNL layout.
# Result: OUTDIR/ksft-src (never part of the repository). Nothing is
# compiled: the tests are Python, run in the guest by the host's Debian
# python3 (scenarios/selftests.sh).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
read_base
ensure_src_repo

SRC=$OUT/ksft-src
rev=$(git -C "$SRC_REPO" rev-parse base)
[ "$(cat "$SRC/.rev" 2>/dev/null)" = "$rev" ] && exit 0
rm -rf "$SRC.tmp" && mkdir -p "$SRC.tmp"
K=tools/testing/selftests
files=($K/net/nl_netdev.py $K/net/lib/py
	$K/drivers/net/queues.py $K/drivers/net/stats.py $K/drivers/net/lib/py
	$K/drivers/net/hw/pp_alloc_fail.py $K/drivers/net/hw/lib/py)
if [ "$LAB_SERIES" = 6.12 ]; then
	files+=(tools/net/ynl/lib Documentation/netlink/specs/netdev.yaml
		Documentation/netlink/specs/ethtool.yaml Documentation/netlink/specs/rt_link.yaml)
else
	# 7.x: the Python YNL library moved to tools/net/ynl/pyynl, specs were
	# renamed (rt-link.yaml); hds.py (header split, which devmem needs) is new
	files+=(tools/net/ynl Documentation/netlink/specs $K/drivers/net/hds.py)
fi
git -C "$SRC_REPO" archive base "${files[@]}" | tar -x -C "$SRC.tmp"
echo "$rev" >"$SRC.tmp/.rev"
rm -rf "$SRC" && mv "$SRC.tmp" "$SRC"
