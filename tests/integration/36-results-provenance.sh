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
pass "${#tables[@]} generated tables, each names the script that made it"
