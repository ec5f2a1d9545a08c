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
cp "$LAB_DIR/guest/lib.sh" "$LAB_DIR/guest/ksft.sh" "$LAB_DIR/guest/ppfail.sh" "$stage/lab/guest/"
cp "$LAB_DIR"/scenarios/*.sh "$stage/lab/scenarios/"
cp "$TRAFFIC" "$stage/lab/bin/"
# lab-hds (static): lab_net_setup turns header split on with it
[ ! -x "$REPO_DIR/build/lab/lab-hds" ] || cp "$REPO_DIR/build/lab/lab-hds" "$stage/lab/bin/"
# lab-zcrx (static, kernels with io_uring zcrx): scenarios/zcrx.sh
[ ! -x "$REPO_DIR/build/lab/lab-zcrx" ] || cp "$REPO_DIR/build/lab/lab-zcrx" "$stage/lab/bin/"

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

# ynltool, the kernel's own page-pool stats reader (scenarios/ynl.sh), when
# vmtest built it (scripts/lab/ynltool/build.sh)
if [ -x "$REPO_DIR/build/lab/ynltool" ]; then
	copy_with_libs "$REPO_DIR/build/lab/ynltool"
	echo "ynltool: included" >&2
fi

# The independent peer (scenarios/ncdevmem.sh): ncdevmem from the pinned
# source with lab-hds (scripts/lab/ncdevmem/build.sh), Debian's ethtool
# behind the guest's ethtool wrapper, and a sudo that only runs its
# arguments (ncdevmem calls "sudo ethtool"; the guest is all root).
NCDEVMEM=$REPO_DIR/build/lab/ncdevmem
cp "$LAB_DIR/guest/mq.sh" "$LAB_DIR/guest/ncdevmem-run.sh" "$stage/lab/guest/"
# the NIC kit runs as on a host: bash, its script, the spec it gates with
mkdir -p "$stage/lab/nic" "$stage/lab/specs"
cp "$REPO_DIR/scripts/nic/validate.sh" "$stage/lab/nic/"
cp "$REPO_DIR/specs/lab-ncdevmem.yaml" "$stage/lab/specs/"
copy_with_libs /bin/bash
if [ -x "$NCDEVMEM" ] && [ -x "$REPO_DIR/build/lab/lab-hds" ] && [ -x /usr/sbin/ethtool ]; then
	copy_with_libs "$NCDEVMEM"
	copy_with_libs /usr/sbin/ethtool
	mkdir -p "$stage/usr/sbin"
	mv "$stage/lab/bin/ethtool" "$stage/usr/sbin/ethtool"
	cp "$REPO_DIR/build/lab/lab-mqrx" \
		"$LAB_DIR/guest/ethtool" "$LAB_DIR/guest/sudo" "$stage/lab/bin/"
	echo "ncdevmem: included ($NCDEVMEM)" >&2
else
	echo "ncdevmem: not included (build/lab/ncdevmem, build/lab/lab-hds or /usr/sbin/ethtool missing): its scenario will SKIP" >&2
fi

# The kernel's Python selftests (scenarios/selftests.sh), unmodified from
# the pinned source (selftests/fetch.sh), and the udevadm their netdevsim
# helper calls. They run on the host's /usr, shared read-only over 9p.
KSFT=$REPO_DIR/build/lab/ksft-src
if [ -d "$KSFT/tools/testing/selftests" ]; then
	mkdir -p "$stage/lab/ksrc" "$stage/lab/ksft-bin"
	cp -a "$KSFT/." "$stage/lab/ksrc/"
	cp "$LAB_DIR/guest/udevadm" "$stage/lab/ksft-bin/"
	echo "selftests: included ($KSFT)" >&2
else
	echo "selftests: not included ($KSFT missing): their scenario will SKIP" >&2
fi

# Upstream's devmem selftests and their ncdevmem from the 7.3 source
# (selftests/devmem-build.sh; scenarios/upstream.sh), same /usr over 9p
KSFT73=$REPO_DIR/build/lab/ksft-7.3
if [ -x "$KSFT73/tools/testing/selftests/drivers/net/hw/ncdevmem" ]; then
	mkdir -p "$stage/lab/ksrc-7.3" "$stage/lab/ksft-bin"
	cp -a "$KSFT73/." "$stage/lab/ksrc-7.3/"
	cp "$LAB_DIR/guest/udevadm" "$stage/lab/ksft-bin/"
	echo "devmem selftests (7.3): included ($KSFT73)" >&2
fi

(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
