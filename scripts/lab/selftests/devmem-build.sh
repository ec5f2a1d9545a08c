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
# With them, for scenarios/upstream-nk.sh and upstream-drv.sh: the netkit
# and user namespace devmem tests (hw/nk_devmem.py, hw/userns_devmem.py)
# and the BPF programs their NetDrvContEnv attaches with tc (nk_forward,
# nk_primary_rx_redirect), hw/pp_alloc_fail.py, drivers/net/{queues,
# stats,hds}.py, net/lib's xdp_dummy.bpf.o (hds.py) and xdp_helper
# (queues.py). The .bpf.o are compiled as net/bpf.mk compiles them (clang
# -O2 -g --target=bpf, the tree's UAPI headers, clang's system includes
# after them), with libbpf's bpf_helpers.h from Debian's libbpf-dev rather
# than a libbpf built from the tree: the programs only need its helper
# definitions.
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
# the recipe's version after the source's revision: a change of what is
# built here rebuilds an older tree
rev="$(git -C "$SRC_REPO" rev-parse base) recipe=2"
HW=tools/testing/selftests/drivers/net/hw
[ "$(cat "$SRC/.rev" 2>/dev/null)" = "$rev" ] && [ -x "$SRC/$HW/ncdevmem" ] && exit 0
command -v clang >/dev/null || die "clang not found (scripts/install-deps.sh installs it)"
[ -r /usr/include/bpf/bpf_helpers.h ] || die "no /usr/include/bpf/bpf_helpers.h (libbpf-dev)"
rm -rf "$SRC.tmp" && mkdir -p "$SRC.tmp"
K=tools/testing/selftests
# MAINTAINERS: the YNL code generator finds the tree root by it; Makefile,
# scripts, include, arch/x86: what "make headers_install" needs
git -C "$SRC_REPO" archive base MAINTAINERS Makefile scripts include arch/x86 \
	tools/include tools/arch/x86 tools/scripts tools/net/ynl Documentation/netlink \
	$K/net/lib/py $K/drivers/net/lib/py $K/drivers/net/hw/lib/py \
	$HW/devmem.py $HW/devmem_lib.py $HW/ncdevmem.c \
	$HW/nk_devmem.py $HW/userns_devmem.py $HW/nk_forward.bpf.c \
	$HW/nk_primary_rx_redirect.bpf.c $HW/pp_alloc_fail.py \
	$K/drivers/net/queues.py $K/drivers/net/stats.py $K/drivers/net/hds.py \
	$K/net/lib/xdp_dummy.bpf.c $K/net/lib/xdp_helper.c $K/net/lib/ksft.h \
	$K/kselftest.h | tar -x -C "$SRC.tmp"
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
# net/bpf.mk's rule: clang's own system includes after the tree's headers
sysinc=$(clang -v -E - </dev/null 2>&1 |
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
for b in $HW/nk_forward $HW/nk_primary_rx_redirect $K/net/lib/xdp_dummy; do
	# shellcheck disable=SC2086
	clang -O2 -g --target=bpf -I"$SRC.tmp/usr/include" $sysinc \
		-c "$SRC.tmp/$b.bpf.c" -o "$SRC.tmp/$b.bpf.o" >>"$SRC.tmp/build.log" 2>&1 ||
		{ tail -20 "$SRC.tmp/build.log" >&2; die "building $b.bpf.o failed"; }
done
# net/lib/Makefile's flags
gcc -Wall -O2 -g -I"$SRC.tmp/usr/include" -I"$SRC.tmp/$K" \
	-o "$SRC.tmp/$K/net/lib/xdp_helper" "$SRC.tmp/$K/net/lib/xdp_helper.c" \
	>>"$SRC.tmp/build.log" 2>&1 ||
	{ tail -20 "$SRC.tmp/build.log" >&2; die "building xdp_helper failed"; }
echo "$rev" >"$SRC.tmp/.rev"
rm -rf "$SRC" && mv "$SRC.tmp" "$SRC"
