# SPDX-License-Identifier: GPL-2.0
# Guest helper (busybox sh, sourced by the ncdevmem scenario): a second
# netdevsim pair with many RX queues, for the scenarios that bind several
# queues and steer flows with ethtool (kernel-patches/0010). The lab's own
# pair (lib.sh) keeps its single queue, so the other scenarios are unchanged.
#   RX: netdevsim3 port in the init netns, $MQ_RX_ADDR, $MQ_QUEUES queues
#   TX: netdevsim4 port in a netns held by $MQ_PEER_PID, $MQ_TX_ADDR
# Addresses: RFC 5737 TEST-NET-2, inside this guest only.

MQ_RX_ADDR=198.51.100.1
MQ_TX_ADDR=198.51.100.2
MQ_STATE=/tmp/lab-mq.env

# mq_setup NQUEUES: create the pair once per boot (later calls reuse it)
mq_setup() {
	local nq=$1 i

	[ -s $MQ_STATE ] && { . $MQ_STATE; return 0; }
	echo "3 1 $nq" >/sys/bus/netdevsim/new_device || return 1
	for i in $(seq 20); do
		MQ_RX_IF=$(ls /sys/bus/netdevsim/devices/netdevsim3/net/ 2>/dev/null | head -1)
		[ -n "$MQ_RX_IF" ] && break
		sleep 0.2
	done
	[ -n "$MQ_RX_IF" ] || { echo "netdevsim3 has no netdev"; return 1; }
	ip addr add $MQ_RX_ADDR/24 dev $MQ_RX_IF || return 1
	rm -f /tmp/mq-peer.ready
	unshare -n sh -c "
		set -e
		ip link set lo up
		echo '4 1 2' >/sys/bus/netdevsim/new_device
		sleep 0.3
		# sysfs shows the init netns: ask ip (the only port here)
		tx_if=\$(ip -o link show | sed -n 's/^[0-9]*: \([a-z0-9]*\):.*/\1/p' |
			grep -v '^lo\$' | head -1)
		tx_idx=\$(ip -o link show dev \$tx_if | cut -d: -f1)
		exec 3</proc/1/ns/net 4</proc/self/ns/net
		echo \"3:$(cat /sys/class/net/$MQ_RX_IF/ifindex) 4:\$tx_idx\" \
			>/sys/bus/netdevsim/link_device
		ip addr add $MQ_TX_ADDR/24 dev \$tx_if
		ip link set \$tx_if up
		echo \$tx_if >/tmp/mq-peer.ready
		exec sleep 1000000
	" &
	MQ_PEER_PID=$!
	for i in $(seq 50); do
		[ -s /tmp/mq-peer.ready ] && break
		sleep 0.1
	done
	[ -s /tmp/mq-peer.ready ] || { echo "mq peer netns setup failed"; return 1; }
	MQ_TX_IF=$(cat /tmp/mq-peer.ready)
	ip link set $MQ_RX_IF up || return 1
	nsenter -n -t $MQ_PEER_PID ping -c 1 -W 3 $MQ_RX_ADDR >/dev/null || return 1
	cat >$MQ_STATE <<-EOT
	MQ_RX_IF=$MQ_RX_IF
	MQ_TX_IF=$MQ_TX_IF
	MQ_PEER_PID=$MQ_PEER_PID
	MQ_QUEUES=$nq
	EOT
}

# Run a command in the mq TX peer's netns.
mq_peer() {
	nsenter -n -t $MQ_PEER_PID "$@"
}
