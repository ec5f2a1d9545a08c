#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad input and missing privileges: one clear line on stderr, a non-zero
# exit, never a crash (a signal exit is > 128).
source "$(dirname "$0")/lib.sh"
need_dmt

expect() {	# expect RC PATTERN -- ARGS...
	local want=$1 pat=$2 rc lines
	shift 3
	"$@" >"$TMPD/out" 2>"$TMPD/err" </dev/null
	rc=$?
	[ $rc -lt 128 ] || fail "'$*' crashed (rc $rc)"
	[ $rc = "$want" ] || fail "'$*': exit $rc, expected $want; stderr: $(cat "$TMPD/err")"
	grep -q -- "$pat" "$TMPD/err" || fail "'$*': stderr lacks '$pat': $(cat "$TMPD/err")"
	# the once-per-run notice of unavailable metrics may precede the error
	lines=$(grep -vc 'mode; unavailable: ' "$TMPD/err")
	[ "$lines" = 1 ] || fail "'$*': $lines lines on stderr, expected one: $(cat "$TMPD/err")"
	log "ok: $* -> $rc: $(cat "$TMPD/err")"
}

expect 2 "unknown option '--frobnicate'" -- "$DMT" --frobnicate
expect 2 "unknown option '-x'" -- "$DMT" -x
expect 2 "bad interval '0'" -- "$DMT" -b -i 0
expect 2 "bad interval 'fast'" -- "$DMT" -b -i fast
expect 2 "bad interval '-1s'" -- "$DMT" -b --interval=-1s
expect 2 "bad count '0'" -- "$DMT" -b -n 0
expect 2 "bad count 'x'" -- "$DMT" -b -n x
expect 2 "needs a value" -- "$DMT" -b -n
expect 2 "bad binding id" -- "$DMT" -b -B abc
expect 2 "bad sort key 'speed'" -- "$DMT" -b -s speed
expect 2 "bad mode" -- "$DMT" -b -m turbo
expect 2 "exclude each other" -- "$DMT" -b --json
expect 2 "unexpected argument 'extra'" -- "$DMT" -b extra
expect 2 "unknown command 'frob'" -- "$DMT" frob
expect 2 "not a terminal" -- "$DMT"

if [ "$(id -u)" = 0 ]; then
	# filters that match nothing over the whole run are an error
	expect 1 "no page pool or binding matched the filter --iface nosuchif0" -- \
		"$DMT" -b -n 2 -i 200ms --iface nosuchif0
	expect 1 "no page pool or binding matched" -- "$DMT" --json -n 2 -i 200ms --binding 4000000
	# kernels without BTF, or without page_pool tracepoints in it
	expect 1 "no kernel BTF (/nonexistent/vmlinux)" -- \
		env DEVMEMTOP_KERNEL_BTF=/nonexistent/vmlinux "$DMT" -b -n 1
	[ -f "$XDP_OBJ" ] || fail "$XDP_OBJ not built"
	expect 1 "no page_pool tracepoints in this kernel" -- \
		env DEVMEMTOP_KERNEL_BTF="$XDP_OBJ" "$DMT" -b -n 1
	# without privileges: a clear reason, not a libbpf error dump
	need_cmd setpriv
	expect 1 "needs root, or CAP_BPF and CAP_PERFMON" -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$DMT" -b -n 1
fi
"$DMT" --help >/dev/null || fail "--help failed"
"$DMT" top --help | grep -q -- "--interval" || fail "top --help lacks --interval"
pass "bad input gets one line and a non-zero exit"
