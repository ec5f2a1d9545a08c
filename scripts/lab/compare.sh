#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# compare.sh OUT: devmemtop compare on the lab's repeated runs (issue 20),
# after vmtest.sh. Writes OUT/compare-NAME.{txt,json,html} (and
# OUT/autorelease-CELL*.{txt,json,html}, issue 21):
#
#   compare-kernels    baseline vs patched kernel, scenario "repeat"
#                      (5 x 16 MiB bulk runs a kernel): provider time per
#                      niov, alloc latency p50, CPU per GiB
#   compare-sweep-AtoB rx-page-size A vs B, scenario "sweep" on the patched
#                      kernel (5 runs a size, sizes alternating): CPU per
#                      GiB, niovs and provider calls per MiB
#
# A regressed or inconclusive verdict is a finding, not a lab failure: the
# exit status is non-zero only when compare itself failed (status 2) or a
# comparison had no recordings. OUT/compare-summary.txt has one line per
# comparison and metric, OUT/compare.md the same verdicts as a page
# (compare_table.py; docs/results/lab-compare-*.md are its published copies).
set -uo pipefail
OUT=${1:?usage: compare.sh OUTDIR}
DMT=${DEVMEMTOP_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/devmemtop}
failed=0
: >"$OUT/compare-summary.txt"

# run NAME METRICS -- BASE... -- CAND...: OUT/compare-NAME.* (NAME
# autorelease-*: OUT/NAME.*), a summary line per metric. METRICS "--values
# --better lower": BASE and CAND are one file of numbers each.
run() {
	local name=$1 m=() b=() c=() side=m rc a f
	shift
	case $name in autorelease-*) f=$OUT/$name ;; *) f=$OUT/compare-$name ;; esac
	for a in "$@"; do
		if [ "$a" = -- ]; then
			[ $side = m ] && side=b || side=c
			continue
		fi
		case $side in
		m) case $a in --*) m+=("$a") ;; lower|higher) m+=("$a") ;; *) m+=(--metric "$a") ;; esac ;;
		b) b+=("$a") ;;
		c) c+=("$a") ;;
		esac
	done
	if [ ${#b[@]} = 0 ] || [ ${#c[@]} = 0 ]; then
		echo "compare $name: FAIL no recordings (base ${#b[@]}, cand ${#c[@]})" |
			tee -a "$OUT/compare-summary.txt"
		failed=1
		return
	fi
	"$DMT" compare "${m[@]}" --json "$f.json" --html "$f.html" \
		"${b[@]}" -- "${c[@]}" >"$f.txt" 2>&1
	rc=$?
	if [ $rc = 2 ]; then
		echo "compare $name: FAIL (exit 2): $(tail -1 "$f.txt")" |
			tee -a "$OUT/compare-summary.txt"
		failed=1
		return
	fi
	python3 - "$f.json" "$name" <<'PY' | tee -a "$OUT/compare-summary.txt"
import json, sys
for m in json.load(open(sys.argv[1]))["metrics"]:
    ci, rci = m["ci"], m.get("ratio_ci")
    # the scale of the change (issue 39): ratio for positive metrics, never < -100 %
    print("compare %s: %s:%s %s, n %d/%d, change %s [%s] %s%s, p %s" % (
        sys.argv[2], m["metric"], m["agg"], m["verdict"], m["base"]["n"], m["cand"]["n"],
        "-" if m["change"] is None else "%+.1f%%" % m["change"],
        "-" if ci is None else "%+.1f, %+.1f" % tuple(ci), m["change_scale"],
        "" if rci is None else " x%.3g [%.3g, %.3g]" % (m["ratio"], rci[0], rci[1]),
        "-" if m["p"] is None else "%.3g" % m["p"]))
PY
}

shopt -s nullglob
if [ -d "$OUT/baseline/repeat" ] && [ -d "$OUT/patched/repeat" ]; then
	run kernels binding.alloc_latency_per_niov:avg binding.alloc_latency:p50 run.cpu_per_gib -- \
		"$OUT"/baseline/repeat/run-*/devmemtop.dmtrec -- "$OUT"/patched/repeat/run-*/devmemtop.dmtrec
	sweep=$OUT/patched/sweep
	if [ -f "$sweep/skip.txt" ] || [ ! -d "$sweep" ]; then
		echo "compare sweep: SKIP no sweep on the patched kernel" | tee -a "$OUT/compare-summary.txt"
	else
		for pair in 4096:16384 4096:32768 4096:65536 16384:32768 32768:65536; do
			from=${pair%:*} to=${pair#*:}
			run "sweep-$((from / 1024))k-$((to / 1024))k" run.cpu_per_gib run.niovs_per_mib \
				run.calls_per_mib -- "$sweep"/run-$from-*/devmemtop.dmtrec -- \
				"$sweep"/run-$to-*/devmemtop.dmtrec
		done
	fi
fi

# SO_DEVMEM_AUTORELEASE on (base, 6.12's behaviour) vs off (candidate) per
# cell of scenarios/autorelease-measure.sh: the receiver's CPU per GiB from
# the recordings, DONTNEED time per token from the values assert_lab.py
# wrote (assert_autorelease.py).
arm=$OUT/patched/autorelease-measure
if [ -d "$arm" ] && [ ! -f "$arm/skip.txt" ]; then
	for cell in 4k-ret 4k-hold 16k-ret 16k-hold; do
		run "autorelease-$cell" run.cpu_per_gib -- "$arm"/$cell-on-*/devmemtop.dmtrec -- \
			"$arm"/$cell-off-*/devmemtop.dmtrec
		v=$arm/values/$cell
		[ -f "$v-on-dontneed_ns_per_token.txt" ] || continue
		run "autorelease-$cell-dontneed" --values --better lower -- \
			"$v-on-dontneed_ns_per_token.txt" -- "$v-off-dontneed_ns_per_token.txt"
		run "autorelease-$cell-rxsys" --values --better lower -- \
			"$v-on-rx_sys_s_per_gib.txt" -- "$v-off-rx_sys_s_per_gib.txt"
	done
fi
# the verdicts as one page (the docs link to its published copy in docs/results)
if ls "$OUT"/compare-*.json >/dev/null 2>&1; then
	python3 "$(dirname "$0")/compare_table.py" "$OUT" || failed=1
fi
exit $failed
