#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Evidence that regenerates: every measured table under docs/results/ names
# the command that made it ("Made by: `CMD ...`"), and that command is a
# script of this tree, so the figure can be made again instead of copied.
source "$(dirname "$0")/lib.sh"

shopt -s nullglob
tables=("$TOP"/docs/results/*.md)
[ ${#tables[@]} -gt 0 ] || skip "no generated tables under docs/results yet"
for t in "${tables[@]}"; do
	line=$(grep -m1 '^Made by: `' "$t") || fail "${t#$TOP/} names no command (a 'Made by: \`...\`' line)"
	cmd=${line#Made by: \`}
	cmd=${cmd%%[ \`]*}
	[ -x "$TOP/$cmd" ] || fail "${t#$TOP/}: '$cmd' is not an executable of this tree"
	grep -q "do not edit" "$t" || fail "${t#$TOP/} does not say it is generated"
	log "ok: ${t#$TOP/} made by $cmd"
done
# bench/results.sh, which writes the bench pages, refuses what names no
# bench before running anything, and leaves the pages as they were
before=$(ls "$TOP"/docs/results | sort)
for args in "" "../tests/integration/lib" "results" "lib" "no-such-bench"; do
	"$TOP/bench/results.sh" $args >/dev/null 2>"$TMPD/res.err"
	rc=$?
	[ $rc = 2 ] || fail "bench/results.sh '$args' exited $rc, not 2"
	grep -q '^usage: bench/results.sh NAME' "$TMPD/res.err" ||
		fail "bench/results.sh '$args' said: $(head -1 "$TMPD/res.err")"
done
BENCH_TAG=Bad "$TOP/bench/results.sh" overhead >/dev/null 2>"$TMPD/res.err"
[ $? = 2 ] && grep -q 'BENCH_TAG must be' "$TMPD/res.err" ||
	fail "bench/results.sh took BENCH_TAG=Bad: $(head -1 "$TMPD/res.err")"
[ "$(ls "$TOP"/docs/results | sort)" = "$before" ] || fail "a refused bench/results.sh changed docs/results"
log "ok: bench/results.sh refuses a name that is no bench and a bad tag"
pass "${#tables[@]} generated tables, each names the script that made it"
