#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lab: on-demand (needs the lockdep kernel: vmtest.sh --variant lockdep --kernel patched --scenario netcons)
# Scenario "netcons" (issue 22, D2): netconsole over netdevsim while the
# multi-queue traffic runs, steered by ntuple rules and the RSS table.
# netpoll calls the sender's ndo_start_xmit with interrupts off, from hard
# interrupt context when the printk came from there; the sender's xmit reads
# the receiving port's steering (0010). With a lock taken there that is not
# irq-safe, lockdep reports {HARDIRQ-ON-W} -> {IN-HARDIRQ-W} usage; with the
# rules and table published by RCU there is no lock to report.
# Hard-irq printks: "echo l > /proc/sysrq-trigger" (NMI backtraces, flushed
# to the consoles from irq_work) and kmsg writes, every 0.2 s during the
# traffic. Writes lockdep-before/after (/proc/lockdep_stats), netcons-rx.log
# (what the peer received on UDP 6666), rx*/tx* logs, dmesg.txt.
# usage: netcons.sh OUTDIR
. /lab/guest/lib.sh
. /lab/guest/mq.sh
D=${1:?usage: netcons.sh OUTDIR}
PORT=5400	# flow i (1..4) to port 5400 + i, queue i
MIB=1048576
mkdir -p $D

if [ ! -r /proc/lockdep_stats ]; then
	echo "kernel without lockdep (CONFIG_PROVE_LOCKING): vmtest.sh --variant lockdep" | tee $D/skip
	exit 0
fi
grep -q configfs /proc/mounts || mount -t configfs none /sys/kernel/config
NC=/sys/kernel/config/netconsole
if [ ! -d $NC ]; then
	echo "kernel without CONFIG_NETCONSOLE_DYNAMIC" | tee $D/skip
	exit 0
fi
mq_setup 16 || { echo "multi-queue netdevsim setup failed"; exit 1; }
IF=$MQ_RX_IF
cat /proc/lockdep_stats >$D/lockdep-before.txt

# steering as a devmem host sets it: rules on, RSS on queue 0
ethtool -K $IF ntuple off && ethtool -K $IF ntuple on && ethtool -X $IF equal 1 || exit 1
for i in 1 2 3 4; do
	ethtool -N $IF flow-type tcp4 dst-ip $MQ_RX_ADDR dst-port $((PORT + i)) queue $i || exit 1
done
# the peer steers too (its table is what this port's xmit reads)
mq_peer ethtool -K $MQ_TX_IF ntuple on && mq_peer ethtool -X $MQ_TX_IF equal 2 || exit 1

# netconsole: this port -> the peer, UDP 6666
# (the peer's port by ip: sysfs shows the init netns, where a port of the
# same name is another device, whose MAC the datagrams went to before)
MAC=$(mq_peer ip -o link show dev $MQ_TX_IF | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
[ -n "$MAC" ] || { echo "no MAC for the peer's $MQ_TX_IF"; exit 1; }
# (devmem-traffic udp-recv: the guest's busybox nc has no UDP mode)
mq_peer devmem-traffic udp-recv --port 6666 >$D/netcons-rx.log 2>$D/netcons-rx.err &
NCL=$!
mkdir $NC/lab
echo $IF >$NC/lab/dev_name
echo $MQ_RX_ADDR >$NC/lab/local_ip
echo $MQ_TX_ADDR >$NC/lab/remote_ip
echo $MAC >$NC/lab/remote_mac
echo 6666 >$NC/lab/remote_port
echo 1 >$NC/lab/enabled || { echo "netconsole target not enabled"; exit 1; }
echo "netconsole: $(cat $NC/lab/dev_name) -> $MAC" >$D/netcons-setup.txt

# the multi-queue traffic as scenarios/multiqueue.sh runs it: lab-mqrx
# binds queues 1..4 and receives flow i (i MiB, ncdevmem's byte pattern)
# from the peer, holding every token until all ended (plain nc receivers on
# the steered queues got 1-3 KiB a flow: the scenario's first runs moved
# almost nothing; 4 x 8 MiB held ran the 64 MiB binding dry)
[ -x /lab/bin/lab-mqrx ] || { echo "lab-mqrx not in this initramfs" | tee $D/skip; exit 0; }
taskset -c 0 lab-mqrx --ifname $IF --queues 1,2,3,4 --port $((PORT + 1)) --flows 4 \
	--dmabuf-size 64M >$D/rx.json 2>$D/rx.log &
RX=$!
lab_wait_listening $D/rx.log $RX
TXS=
for i in 1 2 3 4; do
	mq_peer sh -c "yes \"\$(printf '\\001\\002\\003\\004\\005\\006')\" | tr '\\n' '\\000' |
		head -c $((i * MIB)) | taskset -c 0 nc $MQ_RX_ADDR $((PORT + i))" \
		>$D/tx$i.log 2>&1 &
	TXS="$TXS $!"
done
echo 1 >/proc/sys/kernel/sysrq
i=0
while [ $i -lt 25 ]; do
	echo "lab netcons $i" >/dev/kmsg
	echo l >/proc/sysrq-trigger
	i=$((i + 1))
	sleep 0.2
done
rc=0
for i in $(seq 600); do
	grep -q '"state":"held"' $D/rx.json 2>/dev/null && break
	kill -0 $RX 2>/dev/null || break
	sleep 0.2
done
kill -USR1 $RX
wait $RX || rc=1
for p in $TXS; do wait $p || rc=1; done
echo "lab netcons done" >/dev/kmsg
sleep 1
echo 0 >$NC/lab/enabled
kill $NCL 2>/dev/null
cat /proc/lockdep_stats >$D/lockdep-after.txt
mq_peer cat /proc/net/snmp >$D/peer-snmp.txt
cat /sys/class/net/$IF/statistics/tx_packets >$D/tx_packets
dmesg >$D/dmesg.txt
exit $rc
