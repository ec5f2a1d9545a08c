#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build.sh OUTDIR: ynltool, the kernel's own netlink reader of page-pool
# stats and qstats (tools/net/ynl/ynltool), built UNMODIFIED from the 7.3
# series' pinned source (tag "base" of its lab source repo): the YNL C
# library with the netdev family generated from its spec, then ynltool.
# The lab runs it in the guest as a second reader of the kernel's counters
# beside devmemtop (scenarios/ynl.sh, assert_ynl.py), on every kernel.
# Result: OUTDIR/ynltool; the extracted sources stay in OUTDIR/ynltool-src
# and are never part of the repository.
set -euo pipefail
export DEVMEMTOP_LAB_SERIES=${YNLTOOL_SERIES:-7.3}	# ynltool is new in 7.x
. "$(dirname "$0")/../lib.sh"

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
read_base
check_base_installed
ensure_src_repo
# Debian's python3 with python3-yaml (the YNL code generator), not a PATH's other one
PY=/usr/bin/python3
"$PY" -c 'import yaml' 2>/dev/null || die "python3-yaml missing (YNL code generator)"

SRC=$OUT/ynltool-src
rev=$(git -C "$SRC_REPO" rev-parse base)
[ "$(cat "$SRC/.rev" 2>/dev/null)" = "$rev" ] && [ -x "$OUT/ynltool" ] && exit 0
rm -rf "$SRC" && mkdir -p "$SRC"
# MAINTAINERS: the code generator finds the tree root by it (without it, it
# loops forever); the rest is what the netdev family's C and ynltool include
git -C "$SRC_REPO" archive base MAINTAINERS Makefile tools/net/ynl tools/scripts tools/include \
	tools/arch/x86/include Documentation/netlink include/uapi | tar -x -C "$SRC"
Y=$SRC/tools/net/ynl
PATH=$(dirname "$PY"):$PATH make -C "$Y/generated" GENS=netdev >"$SRC/build.log" 2>&1 &&
	make -C "$Y/lib" >>"$SRC/build.log" 2>&1 &&
	ar rcs "$Y/libynl.a" "$Y/lib/ynl.o" "$Y/generated/netdev-user.o" &&
	make -C "$Y/ynltool" >>"$SRC/build.log" 2>&1 ||
	{ tail -20 "$SRC/build.log" >&2; die "building ynltool failed (see $SRC/build.log)"; }
cp "$Y/ynltool/ynltool" "$OUT/ynltool"
echo "$rev" >"$SRC/.rev"
