#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# record -- CMD reports CMD's failure (issue 13): exit 3 when the recording
# is complete but the command failed, with the command's status on stderr
# and in the recording (report prints it); 0 when it exited 0; 2 when it
# could not start.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt

"$DMT" record -o "$TMPD/ok.dmtrec" -i 100ms -- true 2>"$TMPD/ok.err"
rc=$?
[ $rc = 0 ] || fail "record -- true: exit $rc, want 0: $(cat "$TMPD/ok.err")"

"$DMT" record -o "$TMPD/bad.dmtrec" -i 100ms -- sh -c 'sleep 0.3; exit 5' 2>"$TMPD/bad.err"
rc=$?
[ $rc = 3 ] || fail "record -- (exit 5): exit $rc, want 3: $(cat "$TMPD/bad.err")"
grep -q "the command exited with status 5" "$TMPD/bad.err" || fail "stderr: $(cat "$TMPD/bad.err")"
"$DMT" report --no-events "$TMPD/bad.dmtrec" >"$TMPD/bad.txt" 2>&1 || fail "report: $(tail -2 "$TMPD/bad.txt")"
grep -q "^end: command exited (command exited with status 5)" "$TMPD/bad.txt" ||
	fail "report does not show the status: $(grep '^end' "$TMPD/bad.txt")"

"$DMT" record -o "$TMPD/kill.dmtrec" -i 100ms -- sh -c 'kill -9 $$' 2>"$TMPD/kill.err"
rc=$?
[ $rc = 3 ] || fail "record -- (killed): exit $rc, want 3"
grep -q "killed by signal 9" "$TMPD/kill.err" || fail "stderr: $(cat "$TMPD/kill.err")"

"$DMT" record -o "$TMPD/none.dmtrec" -i 100ms -- /nonexistent/cmd 2>"$TMPD/none.err"
rc=$?
[ $rc = 2 ] || fail "record -- /nonexistent: exit $rc, want 2"
grep -q "cannot run '/nonexistent/cmd'" "$TMPD/none.err" || fail "stderr: $(cat "$TMPD/none.err")"
pass "record exits 3 with the command's status when it fails, 0 when it succeeds"
