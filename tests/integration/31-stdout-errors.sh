#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A failed write is an error with its real reason, in every command (issue
# 13): each command's stdout on a full disk (/dev/full) and closed (>&-)
# must give a non-zero exit and one line naming the cause ("No space left
# on device", "Bad file descriptor"), never exit 0 or "Input/output error".
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd python3
python3 "$TOP/tests/integration/craft_rec.py" pools "$TMPD/r.dmtrec" 3 || fail "crafting"
printf 'name: t\nthresholds:\n  - metric: pool.holds\n    expect: [ count >= 0 ]\n' >"$TMPD/s.yaml"
"$DMT" gate --spec "$TMPD/s.yaml" --from "$TMPD/r.dmtrec" >/dev/null 2>&1 ||
	fail "the gate used here does not pass"
n=0

# expect WANT_RC CAUSE NAME CMD... (stdout already redirected by the caller)
check() {
	local want=$1 cause=$2 name=$3 rc=$4
	n=$((n + 1))
	if [ "$rc" != "$want" ]; then
		fail "$name: exit $rc, want $want (stderr: $(head -c 300 "$TMPD/err"))"
	fi
	grep -q "$cause" "$TMPD/err" || fail "$name: no '$cause' on stderr: $(head -c 300 "$TMPD/err")"
	grep -q "Input/output error" "$TMPD/err" && fail "$name: says Input/output error"
	[ "$(wc -l <"$TMPD/err")" -le 3 ] || fail "$name: more than a line or two: $(cat "$TMPD/err")"
	log "$name: exit $rc, $(grep -m1 "$cause" "$TMPD/err")"
}

for target in full closed; do
	if [ $target = full ]; then cause="No space left on device"; else cause="Bad file descriptor"; fi
	out() { if [ $target = full ]; then "$@" >/dev/full 2>"$TMPD/err"; else "$@" >&- 2>"$TMPD/err"; fi; }

	out "$DMT" -b -n 2 -i 200ms;			check 1 "$cause" "-b ($target)" $?
	out "$DMT" --json -n 2 -i 200ms;		check 1 "$cause" "--json ($target)" $?
	out "$DMT" report "$TMPD/r.dmtrec";		check 2 "$cause" "report ($target)" $?
	out "$DMT" report --json "$TMPD/r.dmtrec";	check 2 "$cause" "report --json ($target)" $?
	out "$DMT" gate --spec "$TMPD/s.yaml" --from "$TMPD/r.dmtrec"
	check 2 "$cause" "passing gate ($target)" $?
	out "$DMT" gate --spec "$TMPD/s.yaml" --check
	check 2 "$cause" "gate --check ($target)" $?
	out "$DMT" export --once -i 200ms;		check 1 "$cause" "export --once ($target)" $?
	out "$DMT" --help;				check 2 "$cause" "--help ($target)" $?
done
# --junit to a full disk, and to a stdout that is closed
"$DMT" gate --spec "$TMPD/s.yaml" --from "$TMPD/r.dmtrec" --junit /dev/full >/dev/null 2>"$TMPD/err"
check 2 "cannot write /dev/full: No space left on device" "gate --junit /dev/full" $?
"$DMT" gate --spec "$TMPD/s.yaml" --from "$TMPD/r.dmtrec" --junit /dev/stdout >&- 2>"$TMPD/err"
check 2 "Bad file descriptor" "gate --junit /dev/stdout (closed)" $?
"$DMT" gate --spec "$TMPD/s.yaml" --from "$TMPD/r.dmtrec" --json /dev/full >/dev/null 2>"$TMPD/err"
check 2 "No space left on device" "gate --json /dev/full" $?
pass "$n failed writes: each a non-zero exit with its real reason"
