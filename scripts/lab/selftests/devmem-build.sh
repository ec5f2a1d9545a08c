#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devmem-build.sh OUTDIR: upstream's own devmem TCP selftests, UNMODIFIED
# from the 7.3 series' pinned source (tag "base" of its lab source repo),
# in the in-tree layout their lib.py expects (KSRC five levels above
# net/lib/py; the Python YNL library from tools/net/ynl/pyynl; the specs
# from Documentation/netlink/specs):
#   tools/testing/selftests/drivers/net/hw/{devmem.py,devmem_lib.py,lib/py}
#   tools/testing/selftests/{drivers/net/lib/py,net/lib/py}
# and their server, ncdevmem, compiled from hw/ncdevmem.c with the YNL C
# library (netdev and ethtool families), as the selftests' Makefile does,
# to hw/ncdevmem where devmem.py looks for it. The lab runs them in the
# guest (scenarios/upstream.sh) with the host's Debian python3.
# Result: OUTDIR/ksft-7.3 (never part of the repository).
set -euo pipefail
export DEVMEMTOP_LAB_SERIES=${DEVMEM_KSFT_SERIES:-7.3}	# devmem.py's hw/ layout is 7.x
. "$(dirname "$0")/../lib.sh"

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
read_base
check_base_installed
ensure_src_repo
PY=/usr/bin/python3
"$PY" -c 'import yaml' 2>/dev/null || die "python3-yaml missing (YNL code generator)"
for t in gcc make tar; do
	command -v $t >/dev/null || die "$t not found (scripts/lab/deps.sh installs it)"
done

SRC=$OUT/ksft-$LAB_SERIES
rev=$(git -C "$SRC_REPO" rev-parse base)
HW=tools/testing/selftests/drivers/net/hw
[ "$(cat "$SRC/.rev" 2>/dev/null)" = "$rev" ] && [ -x "$SRC/$HW/ncdevmem" ] && exit 0
rm -rf "$SRC.tmp" && mkdir -p "$SRC.tmp"
K=tools/testing/selftests
# MAINTAINERS: the YNL code generator finds the tree root by it; Makefile,
# scripts, include, arch/x86: what "make headers_install" needs
git -C "$SRC_REPO" archive base MAINTAINERS Makefile scripts include arch/x86 \
	tools/include tools/arch/x86 tools/scripts tools/net/ynl Documentation/netlink \
	$K/net/lib/py $K/drivers/net/lib/py $K/drivers/net/hw/lib/py \
	$HW/devmem.py $HW/devmem_lib.py $HW/ncdevmem.c | tar -x -C "$SRC.tmp"
make -s -C "$SRC.tmp" ARCH=x86 headers_install INSTALL_HDR_PATH="$SRC.tmp/usr" \
	>"$SRC.tmp/build.log" 2>&1 ||
	{ tail -20 "$SRC.tmp/build.log" >&2; die "headers_install failed"; }
Y=$SRC.tmp/tools/net/ynl
PATH=$(dirname "$PY"):$PATH make -C "$Y/generated" GENS="netdev ethtool" \
	>>"$SRC.tmp/build.log" 2>&1 &&
	make -C "$Y/lib" >>"$SRC.tmp/build.log" 2>&1 &&
	ar rcs "$Y/libynl.a" "$Y/lib/ynl.o" "$Y/generated/netdev-user.o" \
		"$Y/generated/ethtool-user.o" &&
	gcc -Wall -O2 -g -I"$SRC.tmp/usr/include" -I"$Y/lib" -I"$Y/generated" \
		-o "$SRC.tmp/$HW/ncdevmem" "$SRC.tmp/$HW/ncdevmem.c" "$Y/libynl.a" \
		>>"$SRC.tmp/build.log" 2>&1 ||
	{ tail -20 "$SRC.tmp/build.log" >&2; die "building ncdevmem failed (see $SRC.tmp/build.log)"; }
echo "$rev" >"$SRC.tmp/.rev"
rm -rf "$SRC" && mv "$SRC.tmp" "$SRC"
