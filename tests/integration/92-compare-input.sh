#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# compare's inputs at and past their limits (issue 37): metric count,
# spec nesting and duplicate keys, --summary and --values text, values
# near the largest double, nothing compared. Each refusal is one line on
# stderr and exit 2, never a crash; hostile text in a --summary row stays
# escaped in every output. Recordings: tests/golden/run-light.dmtrec (no
# command CPU). No root needed.
source "$(dirname "$0")/lib.sh"
need_dmt
need_cmd python3
REC=$TOP/tests/golden/run-light.dmtrec

expect_err() {	# DESCRIPTION EXPECTED-REGEX ARGS...
	local what=$1 re=$2 rc lines
	shift 2
	timeout 10 "$DMT" compare "$@" >"$TMPD/o" 2>"$TMPD/e"
	rc=$?
	[ $rc = 2 ] || fail "$what: exit $rc, want 2 ($(head -c 300 "$TMPD/e"))"
	lines=$(wc -l <"$TMPD/e")
	[ "$lines" = 1 ] || fail "$what: $lines lines on stderr, want one: $(head -c 600 "$TMPD/e")"
	grep -Eq -e "$re" "$TMPD/e" || fail "$what: '$(head -1 "$TMPD/e")' !~ /$re/"
	log "ok: $what: $(cat "$TMPD/e")"
}

# 1. metrics: the spec's and --metric's count together, one limit
python3 -c 'print("metrics:\n" + "  - metric: run.cpu_s\n" * 64, end="")' >"$TMPD/m64.yaml"
python3 -c 'print("metrics:\n" + "  - metric: run.cpu_s\n" * 65, end="")' >"$TMPD/m65.yaml"
many=()
for _ in $(seq 64); do many+=(--metric run.cpu_s); done
expect_err "64 spec + 1 --metric" 'more than 64 metrics' --spec "$TMPD/m64.yaml" \
	--metric run.cpu_s "$REC" -- "$REC"
expect_err "64 spec + 64 --metric" 'more than 64 metrics' --spec "$TMPD/m64.yaml" \
	"${many[@]}" "$REC" -- "$REC"
expect_err "65 in the spec" 'more than 64 metrics' --spec "$TMPD/m65.yaml" "$REC" -- "$REC"
many+=(--metric run.cpu_s)
expect_err "65 --metric" 'more than 64 metrics' "${many[@]}" "$REC" -- "$REC"
# 64 is the limit, and a run without command CPU has no run.cpu_s (not 0)
"$DMT" compare --spec "$TMPD/m64.yaml" --json "$TMPD/m64.json" "$REC" "$REC" -- "$REC" "$REC" \
	>"$TMPD/o" 2>"$TMPD/e"
rc=$?
[ $rc = 2 ] || fail "64 metrics, none with a value: exit $rc, want 2 (nothing compared)"
grep -q 'n=0' "$TMPD/o" || fail "64 metrics: run.cpu_s has a value without command CPU"

# 5, 7. the spec: the loader of gate specs and the web config (yamlfile),
# with their bounds: nesting, one document, no key twice
python3 -c 'import sys; sys.stdout.write("[" * 500000)' >"$TMPD/deep.yaml"
t0=$(date +%s%N)
expect_err "500k nested brackets" 'deep.yaml:1:9: nested deeper than 8 levels' \
	--spec "$TMPD/deep.yaml" "$REC" -- "$REC"
ms=$((($(date +%s%N) - t0) / 1000000))
[ $ms -lt 2000 ] || fail "500k nested brackets: refused after $ms ms"
printf 'metrics:\n  - metric: run.cpu_s\nmetrics:\n  - metric: run.cpu_per_gib\n' >"$TMPD/dup.yaml"
expect_err "metrics twice" "dup.yaml:3:1: duplicate key 'metrics' \\(first at line 1\\)" \
	--spec "$TMPD/dup.yaml" "$REC" -- "$REC"
printf 'metrics:\n  - metric: run.cpu_s\n    noise: 3%%\n    noise: 9%%\n' >"$TMPD/dup2.yaml"
expect_err "noise twice in an entry" "dup2.yaml:4:5: duplicate key 'noise'" \
	--spec "$TMPD/dup2.yaml" "$REC" -- "$REC"
printf 'metrics:\n  - metric: run.cpu_s\n---\nmetrics:\n  - metric: run.cpu_per_gib\n' \
	>"$TMPD/docs.yaml"
expect_err "a second document" 'docs.yaml:3:1: a second YAML document' \
	--spec "$TMPD/docs.yaml" "$REC" -- "$REC"
expect_err "spec is a directory" "cannot read $TMPD: Is a directory" --spec "$TMPD" "$REC" -- "$REC"
python3 -c 'print("# " + "x" * (1 << 20))' >"$TMPD/big.yaml"
expect_err "spec over 1 MiB" 'big.yaml: larger than 1 MiB' --spec "$TMPD/big.yaml" "$REC" -- "$REC"

# 9. every exit 2 says why: the interval's limit, a paired ratio that overflows
python3 -c 'print("\n".join(str(i) for i in range(5000)))' >"$TMPD/5k.txt"
expect_err "5000 x 5000 values" 'values: 5000 base and 5000 candidate values: .* at most 16777216' \
	--values "$TMPD/5k.txt" -- "$TMPD/5k.txt"
printf '1e-300\n%.0s' 1 2 3 4 5 6 >"$TMPD/tiny.txt"
printf '1e300\n%.0s' 1 2 3 4 5 6 >"$TMPD/huge.txt"
expect_err "paired ratio overflows" "values: a pair's ratio or difference is not finite" \
	--paired --values "$TMPD/tiny.txt" -- "$TMPD/huge.txt"

# 13. nothing compared is an error, with --strict or not, and no JUnit file
for strict in "" --strict; do
	# shellcheck disable=SC2086
	expect_err "nothing compared $strict" 'nothing compared: no metric has values .*run.cpu_s: no command CPU' \
		$strict --metric run.cpu_s --junit "$TMPD/n.xml" "$REC" "$REC" -- "$REC" "$REC"
	grep -q 'no values: no command CPU' "$TMPD/o" || fail "nothing compared: the text does not say why"
	[ -e "$TMPD/n.xml" ] && fail "nothing compared: a JUnit file with tests=0 was written"
done
expect_err "defaults, none with a value" 'nothing compared: .*binding.alloc_latency:p\(50\): ' \
	--interface no-such-if "$REC" -- "$REC"
: >"$TMPD/empty.txt"
expect_err "no numbers" 'nothing compared: .*no numbers in the files' \
	--values "$TMPD/empty.txt" -- "$TMPD/empty.txt"

# 15. values near the largest double: refused, never inf or nan printed
printf '1.7e308\n1.7e308\n1.6e308\n1.7e308\n1.75e308\n1.7e308\n' >"$TMPD/max.txt"
printf '1\n2\n3\n4\n5\n6\n' >"$TMPD/six.txt"
expect_err "means overflow" 'values: the base mean is not finite' \
	--html "$TMPD/max.html" --values "$TMPD/max.txt" -- "$TMPD/six.txt"
grep -Eqi 'nan|inf' "$TMPD/o" && fail "means overflow: printed $(grep -Ei 'nan|inf' "$TMPD/o")"
[ -e "$TMPD/max.html" ] && fail "means overflow: HTML written"
printf '1e-300\n2e-300\n1e-300\n3e-300\n1e-300\n2e-300\n' >"$TMPD/tiny2.txt"
printf '1e150\n2e150\n3e150\n1e150\n2e150\n3e150\n' >"$TMPD/huge2.txt"
expect_err "change overflows" 'values: the change is not finite' \
	--values "$TMPD/tiny2.txt" -- "$TMPD/huge2.txt"
printf 'big lower 1e308 1e308 5 -1e308 1e308 5\n' >"$TMPD/max.sum"
expect_err "summary overflows" 'max.sum: row big: the .* is not finite' --summary "$TMPD/max.sum"
grep -Eqi 'nan|inf' "$TMPD/o" && fail "summary overflows: printed $(grep -Ei 'nan|inf' "$TMPD/o")"
# 10. n is a whole number of runs: -1 is not ~1.8e19
for bad in -1 +5 2.5 1e3 18446744073709551615 x; do
	printf 'a lower 1 1 %s 2 1 5\n' "$bad" >"$TMPD/n.sum"
	expect_err "--summary n $bad" "n.sum:1: the base n must be a whole number of runs" \
		--summary "$TMPD/n.sum"
done
printf 'a lower 1 1 5 2 1 5 3%% 7\n' >"$TMPD/cols.sum"
expect_err "--summary 10 columns" 'cols.sum:1: more than 9 columns' --summary "$TMPD/cols.sum"
printf 'a lower 1 1 5 2 1 5 3%% # a comment\n' >"$TMPD/c.sum"
"$DMT" compare --summary "$TMPD/c.sum" >"$TMPD/o" 2>"$TMPD/e" ||
	fail "--summary row with a comment: $(cat "$TMPD/e")"
# 11. a long comment stays a comment; a long row is refused, not split
python3 -c 'print("# " + "a lower 1 1 5 2 1 5 " * 400); print("b lower 1 1 5 2 1 5")' \
	>"$TMPD/long.sum"
"$DMT" compare --summary "$TMPD/long.sum" >"$TMPD/o" 2>"$TMPD/e" ||
	fail "--summary long comment: exit $?: $(cat "$TMPD/e")"
[ "$(grep -c '^[ab] ' "$TMPD/o")" = 1 ] || fail "--summary: a long comment became rows: $(cat "$TMPD/o")"
python3 -c 'print("r" * 100 + " lower 1 1 5 2 1 5" + " " * 5000)' >"$TMPD/longrow.sum"
expect_err "--summary long row" 'longrow.sum:1: line longer than 4094 characters' \
	--summary "$TMPD/longrow.sum"
python3 -c 'print("r" * 200 + " lower 1 1 5 2 1 5")' >"$TMPD/longname.sum"
expect_err "--summary long name" 'longname.sum:1: NAME longer than 127 characters' \
	--summary "$TMPD/longname.sum"
printf 'a lower 1 1 5 2 1 5' >"$TMPD/nonl.sum"
"$DMT" compare --summary "$TMPD/nonl.sum" >"$TMPD/o" 2>"$TMPD/e" ||
	fail "--summary last line without a newline: $(cat "$TMPD/e")"
# 12. a long --values token is refused, not two runs
python3 -c 'print("1" + "0" * 200)' >"$TMPD/longtok.txt"
expect_err "--values long token" 'longtok.txt: a number longer than 127 characters' \
	--values "$TMPD/longtok.txt" -- "$TMPD/six.txt"
python3 -c 'print("1." + "0" * 125)' >"$TMPD/tok127.txt"
"$DMT" compare --values "$TMPD/tok127.txt" -- "$TMPD/six.txt" >"$TMPD/o" 2>"$TMPD/e" ||
	fail "--values 127-character number: exit $?: $(cat "$TMPD/e")"
grep -q 'base  n=1 ' "$TMPD/o" || fail "--values 127-character number: not one run: $(cat "$TMPD/o")"

# 8. file text is escaped in every output and message (textsafe.h)
printf 'ro\033]0;x\007w\377 lower 1 1 5 2 1 5\n' >"$TMPD/hostile.sum"
"$DMT" compare --summary "$TMPD/hostile.sum" --json "$TMPD/h.json" --junit "$TMPD/h.xml" \
	>"$TMPD/o" 2>"$TMPD/e" || fail "hostile row: exit $?: $(cat -v "$TMPD/e")"
grep -qF 'ro\x1b]0;x\x07w\xff ' "$TMPD/o" || fail "hostile row: not escaped: $(cat -v "$TMPD/o")"
LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f\x80-\xff]' "$TMPD/o" "$TMPD/h.json" "$TMPD/h.xml" &&
	fail "hostile row: a raw control or non-UTF-8 byte in an output"
python3 - "$TMPD/h.json" "$TMPD/h.xml" <<'PY' || fail "hostile row: JSON or JUnit invalid"
import json, sys, xml.etree.ElementTree as ET
m = json.load(open(sys.argv[1], encoding="utf-8"))["metrics"][0]
assert m["metric"] == "ro\\x1b]0;x\\x07w\\xff", m["metric"]
case = ET.parse(sys.argv[2]).getroot().find("testsuite").find("testcase")
assert case.get("name") == m["metric"], case.get("name")
PY
printf 'ro\033[2J\377 lower 1 1 5 2 1 5 9%%\033\n' >"$TMPD/hostile2.sum"
expect_err "hostile noise" "hostile2.sum:1: noise must be .*'9%\\\\x1b'" --summary "$TMPD/hostile2.sum"
printf 'metrics:\n  - metric: run.cpu_s\n    "k\\e\\x85": 1\n' >"$TMPD/hostile.yaml"
expect_err "hostile spec key" "unknown key 'k\\\\x1b\\\\xc2\\\\x85'" --spec "$TMPD/hostile.yaml" "$REC" -- "$REC"
printf '1\n\033[2J\377\n' >"$TMPD/hostile.txt"
expect_err "hostile --values" "hostile.txt: '\\\\x1b\\[2J\\\\xff' is not a number" \
	--values "$TMPD/hostile.txt" -- "$TMPD/hostile.txt"
LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMPD/e" && fail "hostile --values: raw control byte"

# what held: NaN, inf, sd 0 on both sides and n < 2 in a summary
for row in "a lower nan 1 5 1 1 5" "a lower 1 inf 5 1 1 5" "a lower 1 0 5 2 0 5" \
	   "a lower 1 1 1 2 1 5"; do
	printf '%s\n' "$row" >"$TMPD/held.sum"
	expect_err "summary '$row'" 'held.sum:1: ' --summary "$TMPD/held.sum"
done

pass "compare refuses what it cannot compare, in one line"
