#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kseries-check.sh BASELINE_LOG PATCHED_LOG [LABEL]: host side of the devmem
# series measurement (issue #4). Reads the "KSERIES_RESULT label=LABEL"
# line that scripts/lab/kseries-measure.sh printed in each guest's serial
# log, prints baseline vs patched, and asserts what patches 0004/0005
# change, on counts and ratios only (no absolute timing):
#
#   both     no lost trace events; one page_pool_state_hold per net_iov
#            taken (hold accounting unchanged by batching); no net_iov
#            outstanding at the binding's final free
#   baseline one net_iov per provider call (batch max 1, calls == niovs)
#   patched  median batch == PP_ALLOC_CACHE_REFILL (64), >= 32 net_iovs per
#            provider call, and less provider time per net_iov than
#            baseline (ratio > 1)
#
# Ends with "N passed, N failed"; exit status 1 if any check failed.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 BASELINE_LOG PATCHED_LOG [LABEL]" >&2; exit 2; }
BLOG=$1 PLOG=$2 LABEL=${3:-bulk}
REFILL=64

result_line() {
	local l
	l=$(tr -d '\r' <"$1" | grep -a "KSERIES_RESULT label=$LABEL " | tail -n 1) || true
	[ -n "$l" ] || { echo "kseries-check: no KSERIES_RESULT label=$LABEL in $1" >&2; exit 1; }
	echo "${l#*KSERIES_RESULT }"
}

declare -A B P
for kv in $(result_line "$BLOG"); do B[${kv%%=*}]=${kv#*=}; done
for kv in $(result_line "$PLOG"); do P[${kv%%=*}]=${kv#*=}; done

pass=0 fail=0
check() {	# check "description" test-args...
	local what=$1; shift
	if "$@"; then
		pass=$((pass + 1)); echo "ok   $what"
	else
		fail=$((fail + 1)); echo "FAIL $what"
	fi
}
num() { [[ $1 =~ ^[0-9]+$ ]]; }
ratio() {	# a/b with 2 decimals, "n/a" if not numbers or b == 0
	if num "$1" && num "$2" && [ "$2" -gt 0 ]; then
		awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
	else
		echo n/a
	fi
}
gt() { num "$1" && num "$2" && [ "$1" -gt "$2" ]; }
eq() { [ "$1" = "$2" ]; }

printf '%-28s %14s %14s %10s\n' "$LABEL" baseline patched "base/patch"
for k in calls niovs batch_p50 batch_max fails niov_frees holds lat_calls \
	 lat_p50_ns lat_p99_ns lat_per_niov_ns created_total created_chunks \
	 unbind_outstanding free_outstanding dontneed_freed lost; do
	printf '%-28s %14s %14s %10s\n' "$k" "${B[$k]:-?}" "${P[$k]:-?}" \
		"$(ratio "${B[$k]:-}" "${P[$k]:-}")"
done
printf '%-28s %14s %14s\n' "provider calls per niov" \
	"$(ratio "${B[calls]}" "${B[niovs]}")" "$(ratio "${P[calls]}" "${P[niovs]}")"
# Alloc side: baseline one gen_pool bitmap claim per call, patched one
# freelist lock hold per call; the free side is one per net_iov in both.
printf '%-28s %14s %14s\n' "alloc lock holds per niov" \
	"$(ratio "${B[calls]}" "${B[niovs]}")" "$(ratio "${P[calls]}" "${P[niovs]}")"

for side in B P; do
	declare -n R=$side
	name=$([ $side = B ] && echo baseline || echo patched)
	check "$name: trace complete (lost=${R[lost]})" eq "${R[lost]}" 0
	check "$name: provider called (calls=${R[calls]})" gt "${R[calls]}" 0
	check "$name: one hold per net_iov (holds=${R[holds]} niovs=${R[niovs]})" \
		eq "${R[holds]}" "${R[niovs]}"
	check "$name: nothing outstanding at binding free (${R[free_outstanding]})" \
		eq "${R[free_outstanding]}" 0
done
unset -n R

check "baseline: batch max 1 (${B[batch_max]})" eq "${B[batch_max]}" 1
check "baseline: calls == niovs (${B[calls]} vs ${B[niovs]})" eq "${B[calls]}" "${B[niovs]}"
check "patched: batch median $REFILL (${P[batch_p50]})" eq "${P[batch_p50]}" $REFILL
per_call_ge() { num "$1" && num "$2" && [ "$1" -ge $(($3 * $2)) ]; }
check "patched: >= 32 niovs per call (${P[niovs]}/${P[calls]})" \
	per_call_ge "${P[niovs]}" "${P[calls]}" 32
check "patched: less provider time per niov (${B[lat_per_niov_ns]} vs ${P[lat_per_niov_ns]} ns)" \
	gt "${B[lat_per_niov_ns]}" "${P[lat_per_niov_ns]}"

echo "kseries: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
