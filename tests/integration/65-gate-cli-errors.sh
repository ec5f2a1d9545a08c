#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad input to gate/record/report: flags, spec files (with line and
# column), missing files. Each is one line on stderr and exit 2, never a
# crash. Also: every shipped spec (specs/*.yaml) parses.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/gate_lib.sh"
need_dmt
need_cmd xmllint
need_cmd python3

expect_err() {	# DESCRIPTION EXPECTED-REGEX ARGS...
	local what=$1 re=$2 rc lines
	shift 2
	"$DMT" "$@" >"$TMPD/o" 2>"$TMPD/e"
	rc=$?
	[ $rc = 2 ] || fail "$what: exit $rc, want 2 ($(cat "$TMPD/e"))"
	lines=$(wc -l <"$TMPD/e")
	[ "$lines" = 1 ] || fail "$what: $lines lines on stderr, want one: $(cat "$TMPD/e")"
	grep -Eq -e "$re" "$TMPD/e" || fail "$what: '$(head -1 "$TMPD/e")' !~ /$re/"
	[ -s "$TMPD/o" ] && fail "$what: printed to stdout: $(head -2 "$TMPD/o")"
	log "ok: $what"
}

for s in "$TOP"/specs/*.yaml; do
	"$DMT" gate --spec "$s" --check >"$TMPD/o" 2>&1 || fail "shipped spec $s: $(cat "$TMPD/o")"
	log "$(cat "$TMPD/o")"
done

printf 'thresholds:\n  - metric: pool.holds\n    expect: [count > 0]\n' >"$TMPD/ok.yaml"
expect_err "no --spec" '--spec FILE is required' gate -d 1s
expect_err "no run source" 'give --duration D, a command after --, or --from' gate --spec "$TMPD/ok.yaml"
expect_err "bad duration" "bad --duration 'soon'" gate --spec "$TMPD/ok.yaml" -d soon
expect_err "zero duration" "bad --duration '0s'" gate --spec "$TMPD/ok.yaml" -d 0s
expect_err "tiny interval" "bad --interval '1ms'" gate --spec "$TMPD/ok.yaml" -d 1s -i 1ms
expect_err "bad regression" "bad --max-regression 'lots'" gate --spec "$TMPD/ok.yaml" -d 1s --baseline x --max-regression lots
expect_err "regression without baseline" '--max-regression needs --baseline' gate --spec "$TMPD/ok.yaml" -d 1s --max-regression 5%
expect_err "unknown option" "unknown or incomplete option '--frobnicate'" gate --frobnicate
expect_err "missing option argument" 'option -s needs an argument' gate -s
expect_err "--from and a command" '--from gates a recording' gate --spec "$TMPD/ok.yaml" --from x -- true
expect_err "linger without a command" '--linger needs a command after --' gate --spec "$TMPD/ok.yaml" -d 1s --linger 2s
expect_err "bad linger" "bad --linger 'long'" gate --spec "$TMPD/ok.yaml" --linger long -- true
expect_err "missing spec" 'nope.yaml: cannot open spec: No such file or directory' gate --spec "$TMPD/nope.yaml" -d 1s
expect_err "missing recording" 'cannot open /nonexistent.rec' gate --spec "$TMPD/ok.yaml" --from /nonexistent.rec

printf 'thresholds:\n  - metric: pool.holdz\n    expect: [count > 0]\n' >"$TMPD/b1.yaml"
expect_err "unknown metric" "b1.yaml:2:13: unknown metric 'pool.holdz' \(valid: pool.refill_batch, .*binding.leaked_niovs" \
	gate --spec "$TMPD/b1.yaml" -d 1s
printf 'thresholds:\n  - metric: binding.alloc_latency\n    expect:\n      - p(99) < 20\n' >"$TMPD/b2.yaml"
expect_err "missing unit" 'b2.yaml:4:19: missing unit: binding.alloc_latency p takes a time unit' \
	gate --spec "$TMPD/b2.yaml" -d 1s
printf 'thresholds:\n  - metric: pool.holds\n    expect: [count > 0\n' >"$TMPD/b3.yaml"
expect_err "YAML syntax" 'b3.yaml:[0-9]+:[0-9]+: YAML error: ' gate --spec "$TMPD/b3.yaml" -d 1s
printf 'thresholds:\n  - metric: pool.holds\n    colour: red\n    expect: [count > 0]\n' >"$TMPD/b4.yaml"
expect_err "unknown key" "b4.yaml:3:5: unknown key 'colour'" gate --spec "$TMPD/b4.yaml" -d 1s
# the error reaches CI through --junit/--json as well
"$DMT" gate --spec "$TMPD/b4.yaml" -d 1s --junit "$TMPD/b4.xml" --json "$TMPD/b4.json" >/dev/null 2>&1
[ $? = 2 ] || fail "bad spec with --junit: want exit 2"
junit_check "$TMPD/b4.xml" 1 0 1 0
grep -q "unknown key &apos;colour&apos;" "$TMPD/b4.xml" || fail "JUnit error lacks the message"
python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r['result'] == 'error' and 'unknown key' in r['error'] and r['thresholds'] == [], r
" "$TMPD/b4.json" || fail "JSON error result"
head -c 3000 /dev/urandom >"$TMPD/b5.yaml"
"$DMT" gate --spec "$TMPD/b5.yaml" -d 1s >/dev/null 2>"$TMPD/e"
rc=$?
[ $rc = 2 ] || fail "random bytes as a spec: exit $rc, want 2"
[ "$(wc -l <"$TMPD/e")" = 1 ] || fail "random bytes as a spec: not one line"

expect_err "record without -o" '-o FILE is required' record -d 1s
expect_err "record bad interval" "bad --interval 'x'" record -o "$TMPD/r" -i x
expect_err "record linger without a command" '--linger needs a command after --' record -o "$TMPD/r" -d 1s -l 1s
expect_err "record unknown option" "unknown option or missing argument '--bogus'" record --bogus
expect_err "report without file" 'which recording\?' report
expect_err "report two files" "unexpected argument 'b'" report a b
pass "bad flags and specs give one-line errors and exit 2"
