#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad input to devmemtop export: a one-line error on stderr, nothing on
# stdout, a non-zero exit, and no server left behind. Also --help and
# --list-metrics (no privileges needed) and the privilege check.
source "$(dirname "$0")/lib.sh"
need_dmt
need_cmd python3

# bad ARGS...: one stderr line naming the problem, exit code 1 or 2, in 10 s
bad() {
	local rc lines
	timeout 10 "$DMT" export "$@" >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	[ $rc = 124 ] && fail "export $*: still running after 10 s"
	[ $rc = 1 ] || [ $rc = 2 ] || fail "export $*: exit $rc, want 1 or 2"
	[ -s "$TMPD/out" ] && fail "export $*: printed on stdout: $(head -3 "$TMPD/out")"
	lines=$(wc -l <"$TMPD/err")
	[ "$lines" = 1 ] || fail "export $*: $lines stderr lines, want 1: $(cat "$TMPD/err")"
	grep -q '^devmemtop export: ' "$TMPD/err" || fail "export $*: error not prefixed: $(cat "$TMPD/err")"
	log "export $* -> rc $rc: $(cat "$TMPD/err")"
}

bad --listen nope
bad --listen 127.0.0.1
bad --listen 127.0.0.1:
bad --listen 127.0.0.1:99999
bad --listen 127.0.0.1:-1
bad --listen :9435
bad --listen '[::1]9435'
bad --interval 0
bad --interval 5x
bad -i 5ms
bad -i 2h
bad -i -1s
bad --http-timeout 0
bad --http-timeout abc
bad --max-connections 0
bad --bogus
bad -i
bad extra-argument
grep -q "unexpected argument 'extra-argument'" "$TMPD/err" || fail "message for a stray argument"

"$DMT" export --help >"$TMPD/help" 2>&1 || fail "export --help exits non-zero"
grep -q -- '--listen' "$TMPD/help" || fail "--help does not describe --listen"
"$DMT" export --list-metrics >"$TMPD/list" 2>"$TMPD/err" || fail "--list-metrics: $(cat "$TMPD/err")"
[ ! -s "$TMPD/err" ] || fail "--list-metrics wrote to stderr: $(cat "$TMPD/err")"
n=$(grep -c '^devmemtop_[a-z_]* \(counter\|gauge\|histogram\) \(pool\|binding\|global\|self\) gate=' "$TMPD/list")
[ "$n" = "$(wc -l <"$TMPD/list")" ] || fail "--list-metrics: malformed lines: $(grep -v ' gate=' "$TMPD/list" | head -3)"
log "--list-metrics: $n families"
# the reference in docs/exporter.md lists every one
while read -r name _; do
	grep -q "^| \`$name\` |" "$TOP/docs/exporter.md" || fail "docs/exporter.md does not list $name"
done <"$TMPD/list"

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# an unprivileged user is told what is missing, in one line
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$DMT" export --listen 127.0.0.1:0 >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	[ $rc = 1 ] || fail "unprivileged export: exit $rc, want 1 ($(cat "$TMPD/err"))"
	[ "$(wc -l <"$TMPD/err")" = 1 ] || fail "unprivileged export: $(cat "$TMPD/err")"
	grep -q 'CAP_BPF' "$TMPD/err" || fail "unprivileged export: no hint at CAP_BPF: $(cat "$TMPD/err")"
	log "unprivileged: $(cat "$TMPD/err")"
	# --list-metrics needs no privileges
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$DMT" export --list-metrics >/dev/null 2>&1 || fail "--list-metrics needs privileges"
fi

# the port is taken: one line, exit 1, before any BPF is loaded
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(20)' >"$TMPD/port" &
holder=$!
_TB_PIDS+=($holder)
for i in $(seq 1 50); do [ -s "$TMPD/port" ] && break; sleep 0.1; done
port=$(cat "$TMPD/port")
[ -n "$port" ] || fail "could not take a port for the test"
bad --listen "127.0.0.1:$port"
grep -q 'Address already in use' "$TMPD/err" || fail "port in use: $(cat "$TMPD/err")"
kill $holder
pass "bad input gives one-line errors and non-zero exits"
