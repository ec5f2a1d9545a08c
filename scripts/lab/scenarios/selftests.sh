#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "selftests": the kernel's own Python selftests that run on
# netdevsim and touch page pools and queues, unmodified from the pinned
# source (scripts/lab/selftests/fetch.sh), as a second independent peer:
#
#   net/nl_netdev.py         page-pool-get listing; a page held through
#                            netdevsim's debugfs pp_hold across a down (a
#                            zombie pool) and across the device's removal
#   drivers/net/queues.py    queue-get on a 3-queue netdevsim, ethtool -L
#   drivers/net/stats.py     qstats against rtnl stats, pause/FEC stats
#   drivers/net/hw/pp_alloc_fail.py
#                            page pool allocation failures by the kernel's
#                            fault injection. Run twice: as is (its harness
#                            refuses netdevsim by design: nsim_test=False),
#                            and pointed at the lab's netdevsim port through
#                            its hardware env (NETIF, REMOTE_TYPE=netns),
#                            where it stops at its first check: netdevsim
#                            reports no rx-alloc-fail queue stat.
#   ppfail (ours, shell)     what pp_alloc_fail.py does, on the one page
#                            pool allocation netdevsim makes on request:
#                            fail_function on page_pool_alloc_pages
#                            (probability 100, every 3rd call), 60 pp_hold
#                            allocations; the kernel's count of injected
#                            failures (times consumed) next to the ENOMEMs
#                            the writer saw.
#
# They run in a chroot whose /usr is the host's, read-only over the 9p
# share "hostusr" (vmtest.sh): Debian's python3 and python3-yaml, iproute2
# and ethtool, nothing copied or changed. devmemtop records the whole
# scenario (guest/lib.sh, lab_interval); per test the scenario keeps what
# the host needs to tell its pools apart and to check devmemtop:
#   NAME.tap NAME.err NAME.rc   the test's KTAP output, stderr, exit status
#   NAME.ifindex                the highest ifindex before it: every netdev
#                               it creates has a higher one (no reuse)
#   NAME.t                      uptime before (written first) and after
#   NAME.trace                  the page_pool tracepoints during it, taken
#                               LINGER s after it ended (2.5 s after
#                               nl_netdev.py: zombie pools are retried once
#                               a second; 0.5 s after the others, which
#                               leave none: a devmemtop snapshot or two)
# usage: selftests.sh OUTDIR
. /lab/guest/lib.sh
. /lab/guest/ksft.sh
. $LAB_STATE
D=${1:?usage: selftests.sh OUTDIR}
K=/lab/ksrc/tools/testing/selftests
R=/tmp/ksft-root
T=/sys/kernel/tracing
mkdir -p $D

skip() {
	echo "$*" | tee $D/skip
	exit 0
}

max_ifindex() {
	cat /sys/class/net/*/ifindex | sort -n | tail -1
}

# ksft LINGER NAME FILE [VAR=VALUE...]: one selftest, in the chroot
ksft() {
	local linger=$1 name=$2 file=$3 t0
	shift 3
	max_ifindex >$D/$name.ifindex
	echo >$T/trace
	t0=$(lab_now)
	echo $t0 >$D/$name.t
	echo "selftests: $name ($file $*) at ${t0}s"
	# a hung test must not take the rest of the VM run with it (qemu-run.py's
	# timeout): 300 s each, far above what any of them needs
	timeout -k 5 300 chroot $R /usr/bin/env -i PATH=/lab/ksft-bin:/usr/sbin:/usr/bin \
		HOME=/tmp PYTHONDONTWRITEBYTECODE=1 "$@" /usr/bin/python3 $K/$file \
		>$D/$name.tap 2>$D/$name.err
	echo $? >$D/$name.rc
	echo "$t0 $(lab_now)" >$D/$name.t
	sleep $linger
	cat $T/trace >$D/$name.trace
	echo "selftests: $name rc=$(cat $D/$name.rc), $(grep '^# Totals' $D/$name.tap)"
}

# ppfail: the kernel's function fault injection on the page pool's
# allocation, as pp_alloc_fail.py configures it (guest/ppfail.sh)
. /lab/guest/ppfail.sh

[ -d $K ] || skip "the selftests are not in this initramfs (build/lab/ksft-src missing on the host)"
# the host's /usr is the lab's dependency (scripts/lab/deps.sh): a chroot
# that cannot be set up is a failure, not a skip
ksft_root >$D/root.log 2>&1 ||
	{ echo "selftests: FAIL no chroot with the host's python3: $(tail -1 $D/root.log)"; exit 1; }
readlink /proc/self/ns/net >$D/netns
# the lab's peer netns by name, for pp_alloc_fail.py's hardware env (its
# REMOTE; the test stops before it sends anything from there)
in_root ip netns attach labpeer $LAB_PEER_PID >$D/netns-attach.log 2>&1 ||
	echo "selftests: ip netns attach labpeer failed, see netns-attach.log"

ksft 2.5 nl_netdev net/nl_netdev.py
ksft 0.5 queues drivers/net/queues.py
ksft 0.5 stats drivers/net/stats.py
ksft 0 pp_alloc_fail drivers/net/hw/pp_alloc_fail.py
ksft 0 pp_alloc_fail_netif drivers/net/hw/pp_alloc_fail.py NETIF=$LAB_RX_IF \
	LOCAL_V4=$LAB_RX_ADDR REMOTE_V4=$LAB_TX_ADDR REMOTE_TYPE=netns REMOTE_ARGS=labpeer
ppfail || { echo "ppfail failed"; exit 1; }
in_root ip netns delete labpeer
exit 0
