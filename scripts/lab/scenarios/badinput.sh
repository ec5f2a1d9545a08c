#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "badinput" (issue #10): binds the kernel must refuse, each with
# its extack text printed by devmem-traffic (one line on stderr, exit 1).
# The host (assert_niov.py) checks the text per kernel:
#   notpow2    rx-page-size 12288 (>= a page, not a power of two): handler
#   subpage    rx-page-size 2048 (below a page): netlink policy
#   unaligned  16 KiB net_iovs on a udmabuf (one 4 KiB sg entry per page)
#   optout     16 KiB on a heap dmabuf while netdevsim's port has its
#              rx-page-size opt-in switched off (debugfs
#              netdevsim/netdevsim1/ports/0/rx_page_size = n, patch 0008)
#   pagesize   control: 4096 on that opted-out port is accepted (the
#              default size needs no opt-in); bound, then closed at once
#   toolarge   128 KiB net_iovs on a heap dmabuf: above netdevsim's
#              max_rx_page_size (64 KiB; issue 22, D3)
# and (issue 22, D5, patch 0010 on both kernels) an ntuple rule inserted
# while the ntuple feature is off must be refused, then accepted once it
# is on, and dropped when it goes off again (ntuple-*.rc/.out).
# On the baseline kernel every one of them is refused as an unknown
# attribute, and the debugfs switch does not exist.
# usage: badinput.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: badinput.sh OUTDIR}
mkdir -p $D
QCFG=/sys/kernel/debug/netdevsim/netdevsim1/ports/0/rx_page_size

# try NAME ARGS...: a bind that must fail at once; a bind that succeeds
# is closed by one short connection so the receiver exits.
try() {
	local name=$1 p i
	shift
	devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --idle-timeout 1000 "$@" \
		>$D/$name.json 2>$D/$name.err &
	p=$!
	if lab_wait_listening $D/$name.err $p; then
		lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes 64K \
			>/dev/null 2>&1
	fi
	wait $p
	echo $? >$D/$name.rc
	echo "$name: rc=$(cat $D/$name.rc): $(grep -v listening $D/$name.err | head -3)"
	if grep -q listening $D/$name.err; then
		lab_wait_pool_gone $D/$name.json $D
	fi
}

try notpow2 --dmabuf heap --dmabuf-size 1M --rx-page-size 12288
try subpage --dmabuf heap --dmabuf-size 1M --rx-page-size 2048
try unaligned --dmabuf udmabuf --dmabuf-size 1M --rx-page-size 16384
try toolarge --dmabuf heap --dmabuf-size 1M --rx-page-size 131072
if [ -e $QCFG ]; then
	echo "present $(cat $QCFG)" >$D/optout-switch
	echo n >$QCFG
	echo "after n: $(cat $QCFG)" >>$D/optout-switch
	try optout --dmabuf heap --dmabuf-size 1M --rx-page-size 16384
	try pagesize --dmabuf heap --dmabuf-size 1M --rx-page-size 4096
	echo y >$QCFG
	echo "restored: $(cat $QCFG)" >>$D/optout-switch
else
	echo "absent" >$D/optout-switch
	try optout --dmabuf heap --dmabuf-size 1M --rx-page-size 16384
fi

# nt NAME CMD...: one ethtool step, its exit status and output
nt() {
	local name=$1
	shift
	"$@" >$D/ntuple-$name.out 2>&1
	echo $? >$D/ntuple-$name.rc
	echo "ntuple $name: rc=$(cat $D/ntuple-$name.rc): $(grep -i -m1 'rule\|cannot\|not supported' $D/ntuple-$name.out)"
}
RULE="flow-type tcp4 dst-port 5999 action 0"
nt features ethtool -k $LAB_RX_IF
nt off-insert ethtool -N $LAB_RX_IF $RULE
nt off-list ethtool -n $LAB_RX_IF
nt on ethtool -K $LAB_RX_IF ntuple on
nt on-insert ethtool -N $LAB_RX_IF $RULE
nt on-list ethtool -n $LAB_RX_IF
nt off ethtool -K $LAB_RX_IF ntuple off
nt flushed-list ethtool -n $LAB_RX_IF
exit 0
