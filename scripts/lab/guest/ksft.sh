# SPDX-License-Identifier: GPL-2.0
# Guest helper (busybox sh, sourced by the scenarios that run the kernel's
# own Python selftests: selftests.sh on the pinned 6.12 source, upstream.sh
# on 7.3's devmem tests): a chroot at $R over the host's /usr.

# The chroot: a tmpfs with the host's /usr (Debian's merged-/usr links) and
# the kernel's own file systems; /lab brings the tests and the udevadm shim.
# /usr is read-only and does not change during a run, so the guest caches
# it (cache=loose): without, every exec of ethtool or python3 reads its
# libraries over 9p again, and under TCG a test's 5 s wait for ncdevmem to
# listen (devmem_lib's wait_port_listen) ran out while ncdevmem ran ethtool.
ksft_root() {
	: ${R:?ksft_root: R names the chroot}
	mkdir -p $R && mount -t tmpfs ksft $R || return 1
	mkdir -p $R/usr $R/proc $R/sys $R/dev $R/tmp $R/run $R/var $R/lab $R/etc
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro,cache=loose hostusr $R/usr ||
		{ echo "cannot mount the 9p share hostusr (the host's /usr)"; return 1; }
	for l in bin sbin lib lib64; do ln -s usr/$l $R/$l; done
	ln -s ../run $R/var/run
	mount -t proc proc $R/proc && mount -t sysfs sys $R/sys &&
		mount -t debugfs debugfs $R/sys/kernel/debug &&
		mount -t devtmpfs dev $R/dev && mount -o bind /lab $R/lab || return 1
	for f in /usr/bin/python3 /usr/sbin/ip /usr/sbin/ethtool; do
		[ -x $R$f ] || { echo "the host has no $f (scripts/lab/deps.sh)"; return 1; }
	done
	chroot $R /usr/bin/python3 -c 'import yaml' ||
		{ echo "the host's python3 has no yaml (python3-yaml)"; return 1; }
}

in_root() {
	chroot $R /usr/bin/env -i PATH=/lab/ksft-bin:/usr/sbin:/usr/bin HOME=/tmp \
		PYTHONDONTWRITEBYTECODE=1 "$@"
}
