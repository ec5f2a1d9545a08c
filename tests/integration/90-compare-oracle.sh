#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devmemtop compare against scipy on generated data: the U statistic, exact
# and normal p-values, the Hodges-Lehmann interval (recomputed independently),
# Welch and Holm; then the A/A false-regression rate and an injected shift,
# through the CLI (compare_oracle.py prints every max difference and rate).
# Bad input: one line, exit 2. No root needed.
. "$(dirname "$0")/lib.sh"
need_dmt
PY=/usr/bin/python3
$PY -c 'import scipy, numpy' 2>/dev/null ||
	fail "python3-scipy not installed for $PY (scripts/install-deps.sh)"
TMPD=$(mktemp -d)

$PY "$TOP/tests/integration/compare_oracle.py" "$DMT" "$TMPD" || fail "scipy oracle"

# the cover letter table: Welch verdicts (docs/compare.md shows this output)
out=$("$DMT" compare --summary "$TOP/docs/examples/rx-page-size.summary") ||
	fail "compare --summary exited $?"
echo "$out"
echo "$out" | grep -q '^app_sys_pct_4k_64k .* improved' || fail "sys% 4K->64K not improved"
echo "$out" | grep -q '^rx_gbps_32k_64k .* inconclusive (significant, but' ||
	fail "32K->64K: expected significant but within the noise threshold"

# bad input: one line on stderr, exit 2
printf '1\n2\nx\n' >"$TMPD/bad.txt"
printf '1\n2\n3\n' >"$TMPD/ok.txt"
printf '1\n2\n' >"$TMPD/two.txt"
for args in "--values $TMPD/bad.txt -- $TMPD/ok.txt" "--values $TMPD/ok.txt" \
	    "--noise -3% --values $TMPD/ok.txt -- $TMPD/ok.txt" \
	    "--metric no.such:avg $TMPD/ok.txt -- $TMPD/ok.txt" \
	    "--metric binding.niov_size:max $TMPD/ok.txt -- $TMPD/ok.txt" \
	    "$TMPD/ok.txt -- $TMPD/ok.txt" "--summary $TMPD/bad.txt" "--bogus" \
	    "--paired --values $TMPD/ok.txt -- $TMPD/two.txt" \
	    "--paired --summary $TMPD/ok.txt" "--paired $TMPD/ok.txt $TMPD/ok.txt -- $TMPD/ok.txt"; do
	# shellcheck disable=SC2086
	"$DMT" compare $args >"$TMPD/o" 2>"$TMPD/e"
	rc=$?
	[ "$rc" = 2 ] || fail "compare $args: exit $rc, expected 2"
	[ "$(wc -l <"$TMPD/e")" = 1 ] || fail "compare $args: not one line: $(cat "$TMPD/e")"
	log "bad input ok: $(cat "$TMPD/e")"
done
# too few runs: said so, exit 0 (1 with --strict)
"$DMT" compare --values "$TMPD/ok.txt" -- "$TMPD/ok.txt" >"$TMPD/o" 2>&1 ||
	fail "3 vs 3 runs: exit $?"
grep -q 'too few runs' "$TMPD/o" || fail "3 vs 3 runs: no 'too few runs'"
"$DMT" compare --strict --values "$TMPD/ok.txt" -- "$TMPD/ok.txt" >/dev/null 2>&1
[ $? = 1 ] || fail "--strict on inconclusive: expected exit 1"
pass "compare matches scipy; A/A and shift rates within their goals"
