#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# initramfs.sh OUT.cpio.gz: the lab guest's initramfs. busybox-static,
# /init, the guest scripts and scenarios, devmem-traffic (static) and, when
# the top-level make built it, devmemtop with the shared libraries it needs
# (copied as ldd lists them).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || { echo "usage: $0 OUT.cpio.gz" >&2; exit 2; }
OUT=$1
TRAFFIC=$REPO_DIR/build/lab/devmem-traffic
DEVMEMTOP=${DEVMEMTOP_BIN:-$REPO_DIR/build/devmemtop}
BUSYBOX=/bin/busybox

[ -x "$TRAFFIC" ] || die "$TRAFFIC missing (make -C scripts/lab/traffic)"
file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' ||
	die "$BUSYBOX is not static (apt-get install busybox-static)"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,tmp,out,lab/bin,lab/guest,lab/scenarios}
cp "$BUSYBOX" "$stage/bin/busybox"
cp "$LAB_DIR/guest/init" "$stage/init"
chmod 755 "$stage/init"
cp "$LAB_DIR/guest/lib.sh" "$stage/lab/guest/"
cp "$LAB_DIR"/scenarios/*.sh "$stage/lab/scenarios/"
cp "$TRAFFIC" "$stage/lab/bin/"

# Copy a dynamic binary and every library ldd resolves for it.
copy_with_libs() {
	local bin=$1 lib
	cp "$bin" "$stage/lab/bin/"
	for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
		[ -e "$stage$lib" ] && continue
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
}
if [ -x "$DEVMEMTOP" ]; then
	copy_with_libs "$DEVMEMTOP"
	echo "devmemtop: included ($DEVMEMTOP)" >&2
else
	echo "devmemtop: not included ($DEVMEMTOP missing): its checks will SKIP" >&2
fi

(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
