#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Scenario "kseries" (issue #4, kernel-patches 0003..0006): what the
# freelist and the bulk refill change, read from the devmem tracepoints
# (0003, in both kernels) through tracefs only - no BPF, no devmemtop, no
# hist triggers - in two tracefs instances of its own, so the lab's
# top-level page_pool trace is left alone. Three runs, each printing one
#   KSERIES_RESULT label=LABEL key=value ...
# line (also in OUTDIR/kseries-results.txt) for scripts/lab/kseries-check.sh:
#
#   bulk    64 MiB through a 64 MiB udmabuf (16384 one-page DMA chunks),
#           every token returned at once: the recycling steady state
#   hold    48 MiB into the same binding while the receiver holds every
#           token: every net_iov comes from the binding, and gen_pool walks
#           more and more busy chunks (allocation latency on many chunks)
#   unbind  8 MiB, tokens held, binding unbound first (as the "leak"
#           scenario): outstanding net_iovs at devmem_binding_unbind vs the
#           page pool's inflight (tracepoint and netlink) and the tokens
#           held, then nothing outstanding at devmem_binding_free
#
# Keys: calls (successful provider calls) niovs (sum of devmem_alloc.count)
# batch_p50 batch_max fails niov_frees holds (page_pool_state_hold on the
# pools devmem_alloc named) lat_calls lat_p50_ns lat_p99_ns (per provider
# call, function_graph time) lat_per_niov_ns (sum of call time / niovs)
# created_total created_chunks unbind_outstanding free_outstanding
# pp_inflight_at_unbind (inflight of the binding's pools in the last
# page_pool_release before devmem_binding_unbind) dontneed_freed lost
# (ring buffer overruns: nonzero makes the numbers incomplete); from the
# receiver: rx_rc mismatches tokens_leaked nl_inflight_after_unbind rx_mb_s
# (MB/s, integer part; under TCG and full tracing: not a benchmark).
# usage: kseries.sh OUTDIR
. /lab/guest/lib.sh
. $LAB_STATE
D=${1:?usage: kseries.sh OUTDIR}
mkdir -p $D

T=/sys/kernel/tracing
I=$T/instances/kseries
G=$T/instances/kseries_fg
FN=mp_dmabuf_devmem_alloc_netmems

die() { echo "kseries: $*" >&2; exit 1; }

ks_start() {
	[ -d "$T/events/devmem" ] || die "no devmem trace events (is 0003 applied?)"
	[ -d "$I" ] || mkdir "$I" || die "cannot create tracefs instance $I"
	echo 0 > "$I/tracing_on"
	# ~100 bytes per event, ~4 events per net_iov: room for 256 MiB
	# through 4 KiB net_iovs on one CPU.
	echo 32768 > "$I/buffer_size_kb"
	echo > "$I/trace"
	echo 1 > "$I/events/devmem/enable"
	echo 1 > "$I/events/page_pool/page_pool_state_hold/enable"
	echo 1 > "$I/events/page_pool/page_pool_release/enable"

	# function_graph in an instance of its own (6.9+); fall back to the
	# top-level buffer only if that is refused.
	[ -d "$G" ] || mkdir "$G" 2>/dev/null || G=$T
	if ! echo "$FN" > "$G/set_ftrace_filter" 2>/dev/null ||
	   ! echo function_graph > "$G/current_tracer" 2>/dev/null; then
		[ "$G" = "$T" ] && die "cannot trace $FN with function_graph"
		echo nop > "$G/current_tracer" 2>/dev/null
		rmdir "$G" 2>/dev/null
		G=$T
		echo "$FN" > "$G/set_ftrace_filter" || die "$FN is not traceable"
		echo function_graph > "$G/current_tracer" || die "no function_graph tracer"
		echo "kseries: function_graph in the top-level buffer"
	fi
	echo "$G" > "$OUT/graph.dir"
	echo 0 > "$G/tracing_on"
	echo 16384 > "$G/buffer_size_kb"
	echo 0 > "$G/options/funcgraph-irqs" 2>/dev/null
	echo > "$G/trace"

	echo 1 > "$I/tracing_on"
	echo 1 > "$G/tracing_on"
	echo "kseries: tracing devmem events and $FN"
}

# Overruns of an instance's ring buffer, summed over CPUs.
ks_lost() {
	cat "$1"/per_cpu/cpu*/stats 2>/dev/null |
		awk '/^overrun:/ { n += $2 } END { print n + 0 }'
}

ks_report() {
	label=${1:-run}
	[ $# -gt 0 ] && shift
	[ -d "$I" ] || die "not started"
	G=$(cat "$OUT/graph.dir" 2>/dev/null) || G=$T
	echo 0 > "$G/tracing_on"
	echo 0 > "$I/tracing_on"
	lost_n=$(( $(ks_lost "$I") + $(ks_lost "$G") ))
	cat "$I/trace" > "$OUT/events.txt"
	cat "$G/trace" > "$OUT/graph.txt"
	echo nop > "$G/current_tracer"
	echo > "$G/set_ftrace_filter"
	[ "$G" = "$T" ] && echo 1 > "$T/tracing_on"
	echo 0 > "$I/events/enable"

	# Durations of $FN in ns, one per line, sorted.
	awk -v fn="$FN" '
		index($0, fn "();") {
			for (i = 1; i < NF; i++)
				if ($(i + 1) == "us" && $i ~ /^[0-9.]+$/) {
					printf "%d\n", $i * 1000 + 0.5
					break
				}
		}' "$OUT/graph.txt" | sort -n > "$OUT/lat.txt"

	# Batch sizes, one per successful provider call, sorted.
	awk '/ devmem_alloc: / { for (i = 1; i <= NF; i++) if ($i ~ /^count=/) print substr($i, 7) }' \
		"$OUT/events.txt" | sort -n > "$OUT/batch.txt"

	ev=$(awk '
		function val(k,   i) {
			for (i = 1; i <= NF; i++)
				if (index($i, k "=") == 1)
					return substr($i, length(k) + 2)
			return ""
		}
		/ devmem_alloc: / { calls++; niovs += val("count"); pools[val("page_pool")] = 1 }
		/ devmem_alloc_fail: / { fails++ }
		/ devmem_niov_free: / { frees++ }
		/ devmem_dontneed: / { dn += val("nr_freed") }
		/ page_pool_state_hold: / { hold[val("page_pool")]++ }
		/ devmem_binding_create: / { ctot = val("total_niovs"); cch = val("nr_chunks") }
		/ page_pool_release: / { ppin[val("page_pool")] = val("inflight") }
		/ devmem_binding_unbind: / {
			uo = val("outstanding"); ui = 0
			for (p in pools) ui += ppin[p]
		}
		/ devmem_binding_free: / { fo = val("outstanding") }
		END {
			for (p in pools) holds += hold[p]
			printf "calls=%d niovs=%d fails=%d niov_frees=%d holds=%d dontneed_freed=%d", \
				calls, niovs, fails, frees, holds, dn
			printf " created_total=%s created_chunks=%s unbind_outstanding=%s pp_inflight_at_unbind=%s free_outstanding=%s\n", \
				(ctot == "" ? "none" : ctot), (cch == "" ? "none" : cch), \
				(uo == "" ? "none" : uo), (uo == "" ? "none" : ui), \
				(fo == "" ? "none" : fo)
		}' "$OUT/events.txt")

	# p-th percentile (nearest rank) of a sorted file.
	pct() {
		awk -v p="$2" '{ v[NR] = $1 } END {
			if (!NR) { print "none"; exit }
			r = int(NR * p / 100 + 0.999999); if (r < 1) r = 1
			print v[r] }' "$1"
	}
	lat_calls=$(grep -c . "$OUT/lat.txt")
	lat_sum=$(awk '{ s += $1 } END { printf "%.0f", s }' "$OUT/lat.txt")
	niovs=$(echo "$ev" | sed 's/.* niovs=\([0-9]*\).*/\1/')
	per_niov=none
	[ "$niovs" -gt 0 ] && per_niov=$((lat_sum / niovs))
	batch_max=$(tail -n 1 "$OUT/batch.txt")

	echo "KSERIES_RESULT label=$label $ev batch_p50=$(pct "$OUT/batch.txt" 50) batch_max=${batch_max:-none} lat_calls=$lat_calls lat_p50_ns=$(pct "$OUT/lat.txt" 50) lat_p99_ns=$(pct "$OUT/lat.txt" 99) lat_per_niov_ns=$per_niov lost=$lost_n $*"
	echo "kseries: batch size histogram (count: calls)"
	uniq -c "$OUT/batch.txt" | awk '{ printf "kseries:   %s: %s\n", $2, $1 }' | tail -n 8
	grep -E 'devmem_binding_(create|unbind|free):' "$OUT/events.txt" |
		sed 's/^.*\(devmem_binding_\)/kseries: \1/'
}

# A number from the receiver's one-line JSON, "none" if absent.
ks_json() {
	v=$(sed -n "s/.*\"$2\":\([0-9-]*\).*/\1/p" "$1" | head -n 1)
	echo "${v:-none}"
}

# Sum of "inflight" over the pools of binding $3 in JSON array field $2,
# "none" if the receiver did not report that field.
ks_pools_inflight() {
	grep -q "\"$2\":" "$1" || { echo none; return; }
	sed -n "s/.*\"$2\":\[\([^]]*\)\].*/\1/p" "$1" | tr '}' '\n' |
		grep -E "\"dmabuf\":$3\$" |
		sed -n 's/.*"inflight":\([0-9]*\).*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}

# ks_run LABEL BYTES RX-OPTIONS...: one measured transfer.
ks_run() {
	label=$1 bytes=$2
	shift 2
	OUT=$D/$label
	mkdir -p "$OUT"
	ks_start || return 1
	devmem-traffic rx --ifname $LAB_RX_IF --port $LAB_PORT --dmabuf-size 64M \
		--expect $bytes --idle-timeout 10000 "$@" \
		>$OUT/rx.json 2>$OUT/rx.log &
	rx=$!
	lab_wait_listening $OUT/rx.log $rx
	lab_peer devmem-traffic tx --addr $LAB_RX_ADDR --port $LAB_PORT --bytes $bytes --timeout 300 \
		>$OUT/tx.json 2>$OUT/tx.log
	txrc=$?
	wait $rx
	rxrc=$?
	# unbind -> page pool destroy -> binding free are asynchronous: a
	# zombie pool is retried once a second after its last net_iov is back,
	# and skbs that recvmsg freed on another CPU wait on that CPU's defer
	# list until NET_RX runs there (lab_flush_defer, after 2 s)
	flushed=0
	for i in $(seq 40); do
		grep -q ' devmem_binding_free: ' "$I/trace" && break
		if [ $i = 4 ] && command -v lab_flush_defer >/dev/null; then
			lab_flush_defer
			flushed=1
		fi
		sleep 0.5
	done
	bid=$(ks_json $OUT/rx.json binding_id)
	ks_report $label rx_rc=$rxrc tx_rc=$txrc defer_flushed=$flushed \
		mismatches=$(ks_json $OUT/rx.json mismatches) \
		tokens_leaked=$(ks_json $OUT/rx.json tokens_leaked) \
		rx_mb_s=$(ks_json $OUT/rx.json mbytes_per_s) \
		nl_inflight_after_unbind=$(ks_pools_inflight $OUT/rx.json pools_after_unbind $bid) \
		| tee -a $D/kseries-results.txt
	[ $rxrc = 0 ] && [ $txrc = 0 ]
}

rc=0
: >$D/kseries-results.txt
ks_run bulk 64M || rc=1
ks_run hold 48M --hold || rc=1
ks_run unbind 8M --leak --unbind-first || rc=1
exit $rc
