#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# compare.sh OUT: devmemtop compare on the lab's repeated runs (issue 20),
# after vmtest.sh. Writes OUT/compare-NAME.{txt,json,html}:
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
# comparison and metric.
set -uo pipefail
OUT=${1:?usage: compare.sh OUTDIR}
DMT=${DEVMEMTOP_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/devmemtop}
failed=0
: >"$OUT/compare-summary.txt"

# run NAME METRICS -- BASE... -- CAND...
run() {
	local name=$1 m=() b=() c=() side=m rc a
	shift
	for a in "$@"; do
		if [ "$a" = -- ]; then
			[ $side = m ] && side=b || side=c
			continue
		fi
		case $side in m) m+=(--metric "$a") ;; b) b+=("$a") ;; c) c+=("$a") ;; esac
	done
	if [ ${#b[@]} = 0 ] || [ ${#c[@]} = 0 ]; then
		echo "compare $name: FAIL no recordings (base ${#b[@]}, cand ${#c[@]})" |
			tee -a "$OUT/compare-summary.txt"
		failed=1
		return
	fi
	"$DMT" compare "${m[@]}" --json "$OUT/compare-$name.json" --html "$OUT/compare-$name.html" \
		"${b[@]}" -- "${c[@]}" >"$OUT/compare-$name.txt" 2>&1
	rc=$?
	if [ $rc = 2 ]; then
		echo "compare $name: FAIL (exit 2): $(tail -1 "$OUT/compare-$name.txt")" |
			tee -a "$OUT/compare-summary.txt"
		failed=1
		return
	fi
	python3 - "$OUT/compare-$name.json" "$name" <<'PY' | tee -a "$OUT/compare-summary.txt"
import json, sys
for m in json.load(open(sys.argv[1]))["metrics"]:
    ci = m["ci"]
    print("compare %s: %s:%s %s, n %d/%d, change %s [%s], p %s" % (
        sys.argv[2], m["metric"], m["agg"], m["verdict"], m["base"]["n"], m["cand"]["n"],
        "-" if m["change"] is None else "%+.1f%%" % m["change"],
        "-" if ci is None else "%+.1f, %+.1f" % tuple(ci),
        "-" if m["p"] is None else "%.3g" % m["p"]))
PY
}

shopt -s nullglob
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
exit $failed
