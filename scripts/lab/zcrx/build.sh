#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build.sh OUTDIR: lab-zcrx (ours, static) against the pinned source's own
# uapi (tag "base" of the lab's source repo, headers_install), where that
# uapi has io_uring zero-copy receive (IORING_REGISTER_ZCRX_IFQ: 6.15+).
# A source without it (6.12) removes OUTDIR/lab-zcrx: scenarios/zcrx.sh
# then says SKIP with the reason. The extracted headers stay in
# OUTDIR/zcrx-src and are never part of the repository.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
read_base
ensure_src_repo
for t in gcc make tar; do
	command -v $t >/dev/null || die "$t not found (scripts/lab/deps.sh installs it)"
done

SRC=$OUT/zcrx-src
rev=$(git -C "$SRC_REPO" rev-parse base)
# the upstream selftests' tree (selftests/devmem-build.sh) installed the
# same source's headers: use them rather than install them again
KSFT=$OUT/ksft-$LAB_SERIES
if [ "$(cut -d' ' -f1 "$KSFT/.rev" 2>/dev/null)" = "$rev" ] &&
   [ -r "$KSFT/usr/include/linux/io_uring.h" ]; then
	SRC=$KSFT
elif [ "$(cat "$SRC/.rev" 2>/dev/null)" != "$rev" ]; then
	rm -rf "$SRC" && mkdir -p "$SRC"
	# what "make headers_install" needs
	git -C "$SRC_REPO" archive base Makefile scripts include arch/x86 | tar -x -C "$SRC"
	make -s -C "$SRC" ARCH=x86 headers_install INSTALL_HDR_PATH="$SRC/usr" >/dev/null
	echo "$rev" >"$SRC/.rev"
fi
if grep -q IORING_REGISTER_ZCRX_IFQ "$SRC/usr/include/linux/io_uring.h"; then
	make -s -C "$LAB_DIR/zcrx" OUTPUT="$OUT" UAPI="$SRC/usr/include" >/dev/null
else
	rm -f "$OUT/lab-zcrx"
fi
