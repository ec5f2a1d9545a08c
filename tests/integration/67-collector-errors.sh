#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# When the collector cannot start, every command says why in one line: the
# collector's own reason ("no kernel BTF (...)", "cannot parse kernel BTF:
# ..."), not a bare strerror. gate also writes it into --junit and --json.
# Exit status: top and export 1, gate and record 2 (docs/HACKING.md, "Exit
# status"). Without privileges the reason is the collector's too: top,
# record and gate do not check them a second time with their own words.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd python3
need_cmd xmllint

RUN=()		# a prefix for the command (setpriv below)
one_line() {	# WANT-RC REGEX CMD...: one stderr line matching REGEX, exit WANT-RC
	local want=$1 re=$2 rc lines
	shift 2
	"${RUN[@]}" "$DMT" "$@" >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	[ "$rc" = "$want" ] || fail "'$*': exit $rc, want $want; stderr: $(cat "$TMPD/err")"
	lines=$(wc -l <"$TMPD/err")
	[ "$lines" = 1 ] || fail "'$*': $lines lines on stderr, want one: $(cat "$TMPD/err")"
	grep -Eq -e "$re" "$TMPD/err" || fail "'$*': '$(cat "$TMPD/err")' !~ /$re/"
	log "ok: $1 -> $rc: $(cat "$TMPD/err")"
}

printf 'thresholds:\n  - metric: pool.holds\n    expect: [count >= 0]\n' >"$TMPD/spec.yaml"
printf 'not BTF at all\n' >"$TMPD/junk.btf"

for case in "/nonexistent/vmlinux|no kernel BTF \(/nonexistent/vmlinux\)" \
	    "$TMPD/junk.btf|cannot parse kernel BTF: "; do
	export DEVMEMTOP_KERNEL_BTF=${case%%|*}
	why=${case#*|}
	one_line 1 "^devmemtop: $why" top -b -n 1
	one_line 1 "^devmemtop export: cannot start the collector: $why" export --once
	one_line 2 "^devmemtop record: cannot start the collector: $why" \
		record -o "$TMPD/r.dmtrec" -d 1s
	rm -f "$TMPD/j.xml" "$TMPD/j.json"
	one_line 2 "^devmemtop gate: cannot start the collector: $why" \
		gate --spec "$TMPD/spec.yaml" -d 1s --junit "$TMPD/j.xml" --json "$TMPD/j.json"
	msg=$(xmllint --xpath 'string(//error/@message)' "$TMPD/j.xml") ||
		fail "gate --junit: no error element: $(cat "$TMPD/j.xml")"
	[[ $msg =~ cannot\ start\ the\ collector:\ $why ]] || fail "gate --junit message: $msg"
	msg=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["result"], d["error"])' \
		"$TMPD/j.json") || fail "gate --json: $(cat "$TMPD/j.json")"
	[[ $msg =~ ^error\ cannot\ start\ the\ collector:\ $why ]] || fail "gate --json: $msg"
	log "ok: gate --junit/--json carry: $msg"
done
unset DEVMEMTOP_KERNEL_BTF
need_cmd setpriv
chmod a+rx "$TMPD"
chmod a+r "$TMPD/spec.yaml"
RUN=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
why="needs root, or CAP_BPF and CAP_PERFMON"
one_line 1 "^devmemtop: $why" top -b -n 1
one_line 2 "^devmemtop record: cannot start the collector: $why" record -o "$TMPD/u.dmtrec" -d 1s
one_line 2 "^devmemtop gate: cannot start the collector: $why" \
	gate --spec "$TMPD/spec.yaml" -d 1s
pass "collector start failures give their reason in one line in top, export, record, gate"
