# SPDX-License-Identifier: GPL-2.0
# Helpers for the exporter tests (tests/integration/5x-*.sh); source after lib.sh.

EXP_PID=
EXP_PORT=
EXP_URL=
EXPORT_TOOLS=$TOP/tests/integration/export_tools.py

# export_start [ARGS...]: run `devmemtop export` on a free loopback port and
# wait until it serves (it prints "serving http://ADDR/metrics" then).
export_start() {
	local i
	# no stale address from an earlier exporter: the child truncates late
	rm -f "$TMPD/export.err"
	"$DMT" export --listen 127.0.0.1:0 "$@" >"$TMPD/export.out" 2>"$TMPD/export.err" &
	EXP_PID=$!
	_TB_PIDS+=($EXP_PID)
	for i in $(seq 1 300); do
		EXP_PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' \
			"$TMPD/export.err" 2>/dev/null)
		[ -n "$EXP_PORT" ] && break
		kill -0 "$EXP_PID" 2>/dev/null ||
			fail "exporter exited at start: $(cat "$TMPD/export.err")"
		sleep 0.1
	done
	[ -n "$EXP_PORT" ] || fail "exporter did not start serving in 30 s: $(cat "$TMPD/export.err")"
	EXP_URL=http://127.0.0.1:$EXP_PORT
	log "exporter pid $EXP_PID on $EXP_URL"
}

# export_stop: SIGTERM must end it cleanly (exit 0) within 10 s.
export_stop() {
	local i rc
	[ -n "$EXP_PID" ] || return 0
	kill -TERM "$EXP_PID" 2>/dev/null
	for i in $(seq 1 100); do
		kill -0 "$EXP_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$EXP_PID" 2>/dev/null && fail "exporter still running 10 s after SIGTERM"
	wait "$EXP_PID"
	rc=$?
	EXP_PID=
	[ "$rc" = 0 ] || fail "exporter exited with $rc after SIGTERM: $(cat "$TMPD/export.err")"
}

# scrape FILE: GET /metrics into FILE; fails on anything but 200.
scrape() {
	local code
	code=$(curl -sS --max-time 10 -o "$1" -w '%{http_code}' "$EXP_URL/metrics") ||
		fail "scrape failed (curl)"
	[ "$code" = 200 ] || fail "scrape returned HTTP $code"
}

# promtool_lint FILE: the text format must pass promtool's parser and linter.
promtool_lint() {
	local out
	out=$(promtool check metrics <"$1" 2>&1) ||
		fail "promtool check metrics on $1: $out"
	[ -z "$out" ] || fail "promtool check metrics complained on $1: $out"
}
