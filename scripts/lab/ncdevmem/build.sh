#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build.sh OUTDIR: the lab's independent peer, the kernel's own devmem
# selftest server ncdevmem, built UNMODIFIED from the pinned source (tag
# "base" of the lab's source repo: tools/testing/selftests/net/ncdevmem.c
# and the YNL C library of tools/net/ynl, netdev family generated from
# Documentation/netlink/specs/netdev.yaml as the selftests' ynl.mk does).
# Also builds lab-hds (ours, static). Results: OUTDIR/ncdevmem,
# OUTDIR/lab-hds; the extracted sources stay in OUTDIR/ncdevmem-src and
# are never part of the repository.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
read_base
ensure_src_repo
for t in gcc make python3 tar; do
	command -v $t >/dev/null || die "$t not found (scripts/lab/deps.sh installs it)"
done
python3 -c 'import yaml' 2>/dev/null || die "python3-yaml missing (YNL code generator)"
[ -f /usr/include/libmnl/libmnl.h ] || die "libmnl-dev missing (ncdevmem includes libmnl.h)"

SRC=$OUT/ncdevmem-src
rev=$(git -C "$SRC_REPO" rev-parse base)
if [ "$(cat "$SRC/.rev" 2>/dev/null)" != "$rev" ] || [ ! -x "$OUT/ncdevmem" ]; then
	rm -rf "$SRC" && mkdir -p "$SRC"
	# MAINTAINERS: ynl-gen-c.py finds the tree root by it; Makefile, scripts,
	# include, arch/x86: what "make headers_install" needs
	git -C "$SRC_REPO" archive base MAINTAINERS Makefile scripts include arch/x86 \
		tools/include tools/arch/x86 tools/net/ynl Documentation/netlink \
		tools/testing/selftests/net/ncdevmem.c | tar -x -C "$SRC"
	make -s -C "$SRC" ARCH=x86 headers_install INSTALL_HDR_PATH="$SRC/usr" >/dev/null
	# the selftest build: libynl.a with the netdev family only (ynl.mk)
	make -s -C "$SRC/tools/net/ynl" GENS=netdev libynl.a >/dev/null
	# ncdevmem compiled as tools/testing/selftests/net/Makefile does
	gcc -Wall -Wl,--no-as-needed -O2 -g -I"$SRC/usr/include" \
		-I"$SRC/tools/net/ynl/lib" -I"$SRC/tools/net/ynl/generated" \
		-o "$OUT/ncdevmem.tmp" "$SRC/tools/testing/selftests/net/ncdevmem.c" \
		"$SRC/tools/net/ynl/libynl.a"
	mv "$OUT/ncdevmem.tmp" "$OUT/ncdevmem"
	echo "$rev" >"$SRC/.rev"
fi
make -s -C "$LAB_DIR/ncdevmem" OUTPUT="$OUT" >/dev/null
