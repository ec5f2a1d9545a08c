#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ncdevmem-run.sh IF ADDR BYTES PEER_PID: one ncdevmem server run with its
# defaults (queues 8..15, -v 7) fed BYTES by busybox nc from the netns of
# PEER_PID, as the workload of the NIC kit (scenarios/nickit.sh). Returns
# once the binding's page pools are gone; exit status = ncdevmem's.
# ncdevmem's output goes to $NCDEVMEM_LOG (default /tmp/ncdevmem-run.log).
IF=${1:?usage: ncdevmem-run.sh IF ADDR BYTES PEER_PID}
ADDR=${2:?} BYTES=${3:?} PEER=${4:?}
LOG=${NCDEVMEM_LOG:-/tmp/ncdevmem-run.log}

# Server and client on CPU 0: netdevsim runs the RX NAPI on the sending
# CPU, and an skb read on another CPU than it was allocated on is freed via
# that CPU's defer list, which holds its net_iovs until NET_RX runs there
# again. At unbind they would make the pool a (short-lived) zombie, so
# "holds == releases at destroy" would depend on timing.
taskset -c 0 ncdevmem -s $ADDR -f $IF -l -p 5201 -v 7 >$LOG.out 2>$LOG &
NC=$!
for i in $(seq 600); do
	grep -q "Waiting or connection" $LOG 2>/dev/null && break	# [sic]
	kill -0 $NC 2>/dev/null || break
	sleep 0.1
done
nsenter -n -t $PEER sh -c "yes \"\$(printf '\\001\\002\\003\\004\\005\\006')\" |
	tr '\\n' '\\000' | head -c $BYTES | taskset -c 0 nc $ADDR 5201"
wait $NC
rc=$?
bid=$(sed -n 's/^got dmabuf id=\([0-9]*\)$/\1/p' $LOG | tail -1)
for i in $(seq 50); do
	devmem-traffic pools | grep -q "\"dmabuf\":$bid[,}]" || break
	sleep 0.2
done
sleep 1		# one more recorder interval sees the binding freed
echo "ncdevmem rc=$rc, $(grep -o 'total_received=[0-9]*$' $LOG | tail -1), validation errors: $(grep -c 'Failed validation' $LOG)"
exit $rc
