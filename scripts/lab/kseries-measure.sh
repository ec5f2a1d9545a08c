#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kseries-measure.sh start|report [LABEL]: guest side (busybox sh) of the
# devmem series measurement (issue #4). Needs only tracefs, the devmem
# tracepoints of kernel-patches/0003 and the function_graph tracer: no BPF,
# no devmemtop, no hist triggers.
#
#   start   before the transfer: record the devmem and page_pool events in
#           the tracefs instance "kseries", and time every call of the
#           provider's alloc callback (mp_dmabuf_devmem_alloc_netmems) with
#           function_graph in the top-level buffer.
#   report  after the receiver exited (binding unbound and freed): stop,
#           summarise and print one line
#             KSERIES_RESULT label=LABEL key=value ...
#           for scripts/lab/kseries-check.sh, plus human-readable lines.
#
# Keys: calls (successful provider calls) niovs (sum of devmem_alloc.count)
# batch_p50 batch_max fails niov_frees holds (page_pool_state_hold on the
# pools devmem_alloc named) lat_calls lat_p50_ns lat_p99_ns (per provider
# call) lat_per_niov_ns (sum of call time / niovs) created_total
# created_chunks unbind_outstanding free_outstanding dontneed_freed lost
# (ring buffer overruns: nonzero makes the numbers incomplete).
set -u

T=/sys/kernel/tracing
I=$T/instances/kseries
FN=mp_dmabuf_devmem_alloc_netmems
OUT=${KSERIES_OUT:-/tmp/kseries}

die() { echo "kseries-measure: $*" >&2; exit 1; }

start() {
	[ -d "$T/events/devmem" ] || die "no devmem trace events (is 0003 applied?)"
	mkdir -p "$OUT"
	[ -d "$I" ] || mkdir "$I" || die "cannot create tracefs instance $I"
	echo 0 > "$I/tracing_on"
	# ~100 bytes per event, ~4 events per net_iov: room for 256 MiB
	# through 4 KiB net_iovs on one CPU.
	echo 32768 > "$I/buffer_size_kb"
	echo > "$I/trace"
	echo 1 > "$I/events/devmem/enable"
	echo 1 > "$I/events/page_pool/page_pool_state_hold/enable"
	echo 1 > "$I/events/page_pool/page_pool_release/enable"

	echo 0 > "$T/tracing_on"
	echo nop > "$T/current_tracer"
	echo 16384 > "$T/buffer_size_kb"
	echo "$FN" > "$T/set_ftrace_filter" || die "$FN is not traceable"
	echo 0 > "$T/options/funcgraph-irqs" 2>/dev/null
	echo 1 > "$T/options/funcgraph-proc" 2>/dev/null
	echo function_graph > "$T/current_tracer" || die "no function_graph tracer"
	echo > "$T/trace"

	echo 1 > "$I/tracing_on"
	echo 1 > "$T/tracing_on"
	echo "kseries-measure: tracing devmem events and $FN"
}

# Overruns of an instance's ring buffer, summed over CPUs.
lost() {
	cat "$1"/per_cpu/cpu*/stats 2>/dev/null |
		awk '/^overrun:/ { n += $2 } END { print n + 0 }'
}

report() {
	label=${1:-run}
	[ -d "$I" ] || die "not started"
	echo 0 > "$T/tracing_on"
	echo 0 > "$I/tracing_on"
	mkdir -p "$OUT"
	lost_n=$(( $(lost "$I") + $(lost "$T") ))
	cat "$I/trace" > "$OUT/events.txt"
	cat "$T/trace" > "$OUT/graph.txt"
	echo nop > "$T/current_tracer"
	echo > "$T/set_ftrace_filter"

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
		/ devmem_binding_unbind: / { uo = val("outstanding") }
		/ devmem_binding_free: / { fo = val("outstanding") }
		END {
			for (p in pools) holds += hold[p]
			printf "calls=%d niovs=%d fails=%d niov_frees=%d holds=%d dontneed_freed=%d", \
				calls, niovs, fails, frees, holds, dn
			printf " created_total=%s created_chunks=%s unbind_outstanding=%s free_outstanding=%s\n", \
				(ctot == "" ? "none" : ctot), (cch == "" ? "none" : cch), \
				(uo == "" ? "none" : uo), (fo == "" ? "none" : fo)
		}' "$OUT/events.txt")

	# p-th percentile (nearest rank) of a sorted file.
	pct() {
		awk -v p="$2" '{ v[NR] = $1 } END {
			if (!NR) { print "none"; exit }
			r = int(NR * p / 100 + 0.999999); if (r < 1) r = 1
			print v[r] }' "$1"
	}
	lat_calls=$(grep -c . "$OUT/lat.txt")
	lat_sum=$(awk '{ s += $1 } END { printf "%d", s }' "$OUT/lat.txt")
	niovs=$(echo "$ev" | sed 's/.* niovs=\([0-9]*\).*/\1/')
	per_niov=none
	[ "$niovs" -gt 0 ] && per_niov=$((lat_sum / niovs))
	batch_max=$(tail -n 1 "$OUT/batch.txt")

	echo "KSERIES_RESULT label=$label $ev batch_p50=$(pct "$OUT/batch.txt" 50) batch_max=${batch_max:-none} lat_calls=$lat_calls lat_p50_ns=$(pct "$OUT/lat.txt" 50) lat_p99_ns=$(pct "$OUT/lat.txt" 99) lat_per_niov_ns=$per_niov lost=$lost_n"
	echo "kseries: batch size histogram (count: calls)"
	uniq -c "$OUT/batch.txt" | awk '{ printf "kseries:   %s: %s\n", $2, $1 }' | tail -n 8
	grep -E 'devmem_binding_(create|unbind|free):' "$OUT/events.txt" |
		sed 's/^.*\(devmem_binding_\)/kseries: \1/'
}

case ${1:-} in
start) start ;;
report) shift; report "$@" ;;
*) echo "usage: $0 start|report [LABEL]" >&2; exit 2 ;;
esac
