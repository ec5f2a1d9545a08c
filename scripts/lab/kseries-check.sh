#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kseries-check.sh BASELINE PATCHED [LABEL...]: host side of the "kseries" scenario
# (scripts/lab/scenarios/kseries.sh, issue #4). BASELINE and PATCHED are
# the scenario's output dirs (or any files/dirs holding its
# "KSERIES_RESULT label=..." lines) of the baseline and the patched
# kernel; LABELs pick runs (default: bulk hold unbind). Prints baseline
# vs patched per run and asserts what patches
# 0004/0005 change, on counts and ratios only (no absolute timing):
#
#   every run, both kernels: receiver ok and 0 payload mismatches; no lost
#            trace events; one page_pool_state_hold per net_iov taken from
#            the binding (hold accounting unchanged by batching); nothing
#            outstanding at devmem_binding_free
#   bulk, hold: baseline takes one net_iov per provider call; patched has
#            median batch PP_ALLOC_CACHE_REFILL (64), >= 32 net_iovs per
#            call, and less provider time per net_iov than baseline
#   unbind:  net_iovs outstanding at devmem_binding_unbind > 0 and equal to
#            the page pool's inflight in its page_pool_release tracepoint
#            and in netlink page-pool-get after the unbind
#
# Ends with "kseries: N passed, N failed"; exit status 1 if any failed.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 BASELINE PATCHED [LABEL...] (dirs or files)" >&2; exit 2; }
BASE=$1 PATCH=$2
shift 2
LABELS=("$@")
[ ${#LABELS[@]} -gt 0 ] || LABELS=(bulk hold unbind)
REFILL=64

result_line() {	# result_line PATH LABEL
	local l
	l=$(grep -rah "KSERIES_RESULT label=$2 " "$1" 2>/dev/null | tr -d '\r' | tail -n 1) || true
	echo "${l#*KSERIES_RESULT }"
}

pass=0 fail=0
check() {	# check "description" test-command...
	local what=$1; shift
	if "$@"; then
		pass=$((pass + 1)); echo "ok   $what"
	else
		fail=$((fail + 1)); echo "FAIL $what"
	fi
}
num() { [[ $1 =~ ^[0-9]+$ ]]; }
ratio() {	# a/b with 2 decimals, "n/a" unless both are numbers and b > 0
	if num "${1:-}" && num "${2:-}" && [ "$2" -gt 0 ]; then
		awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
	else
		echo n/a
	fi
}
gt() { num "$1" && num "$2" && [ "$1" -gt "$2" ]; }
eq() { [ "$1" = "$2" ]; }
per_call_ge() { num "$1" && num "$2" && [ "$1" -ge $(($3 * $2)) ]; }

declare -A B P
for label in "${LABELS[@]}"; do
	bl=$(result_line "$BASE" $label) pl=$(result_line "$PATCH" $label)
	check "$label: results from both kernels" eval '[ -n "$bl" ] && [ -n "$pl" ]'
	[ -n "$bl" ] && [ -n "$pl" ] || continue
	B=() P=()
	for kv in $bl; do B[${kv%%=*}]=${kv#*=}; done
	for kv in $pl; do P[${kv%%=*}]=${kv#*=}; done

	echo
	printf '%-24s %12s %12s %10s\n' "[$label]" baseline patched base/patch
	for k in calls niovs batch_p50 batch_max fails niov_frees holds \
		 lat_calls lat_p50_ns lat_p99_ns lat_per_niov_ns created_total \
		 created_chunks unbind_outstanding pp_inflight_at_unbind \
		 nl_inflight_after_unbind tokens_leaked free_outstanding \
		 dontneed_freed mismatches rx_mb_s lost; do
		printf '%-24s %12s %12s %10s\n' "$k" "${B[$k]:-?}" "${P[$k]:-?}" \
			"$(ratio "${B[$k]:-}" "${P[$k]:-}")"
	done
	# Alloc side: baseline one gen_pool claim per call, patched one
	# freelist lock hold per call; frees take one per net_iov in both.
	printf '%-24s %12s %12s\n' "calls (locks) per niov" \
		"$(ratio "${B[calls]:-}" "${B[niovs]:-}")" \
		"$(ratio "${P[calls]:-}" "${P[niovs]:-}")"

	for side in B P; do
		declare -n R=$side
		n="$label $([ $side = B ] && echo baseline || echo patched)"
		check "$n: receiver ok (rx_rc=${R[rx_rc]:-?} tx_rc=${R[tx_rc]:-?})" \
			eval '[ "${R[rx_rc]:-}" = 0 ] && [ "${R[tx_rc]:-}" = 0 ]'
		check "$n: 0 payload mismatches (${R[mismatches]:-?})" eq "${R[mismatches]:-}" 0
		check "$n: trace complete (lost=${R[lost]:-?})" eq "${R[lost]:-}" 0
		check "$n: one hold per net_iov (holds=${R[holds]:-?} niovs=${R[niovs]:-?})" \
			eq "${R[holds]:-x}" "${R[niovs]:-y}"
		check "$n: nothing outstanding at binding free (${R[free_outstanding]:-?})" \
			eq "${R[free_outstanding]:-}" 0
		if [ $label = unbind ]; then
			check "$n: outstanding at unbind > 0 (${R[unbind_outstanding]:-?})" \
				gt "${R[unbind_outstanding]:-}" 0
			check "$n: unbind outstanding == pool inflight, tracepoint (${R[unbind_outstanding]:-?} vs ${R[pp_inflight_at_unbind]:-?})" \
				eq "${R[unbind_outstanding]:-x}" "${R[pp_inflight_at_unbind]:-y}"
			check "$n: unbind outstanding == pool inflight, netlink (${R[unbind_outstanding]:-?} vs ${R[nl_inflight_after_unbind]:-?})" \
				eq "${R[unbind_outstanding]:-x}" "${R[nl_inflight_after_unbind]:-y}"
		fi
		unset -n R
	done
	[ $label = unbind ] && continue

	check "$label baseline: one net_iov per provider call (batch max ${B[batch_max]:-?})" \
		eq "${B[batch_max]:-}" 1
	check "$label baseline: calls == niovs (${B[calls]:-?} vs ${B[niovs]:-?})" \
		eq "${B[calls]:-x}" "${B[niovs]:-y}"
	check "$label patched: median batch $REFILL (${P[batch_p50]:-?})" \
		eq "${P[batch_p50]:-}" $REFILL
	check "$label patched: >= 32 net_iovs per call (${P[niovs]:-?}/${P[calls]:-?})" \
		per_call_ge "${P[niovs]:-}" "${P[calls]:-}" 32
	check "$label patched: less provider time per net_iov (${B[lat_per_niov_ns]:-?} vs ${P[lat_per_niov_ns]:-?} ns)" \
		gt "${B[lat_per_niov_ns]:-}" "${P[lat_per_niov_ns]:-}"
done

echo
echo "kseries: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
