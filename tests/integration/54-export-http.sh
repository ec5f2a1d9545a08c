#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# HTTP robustness of devmemtop export: index, /healthz, unknown paths (404),
# other methods (405 + Allow), malformed requests (400/505), oversized
# headers and targets (413/414/431), silent and dripping slow-loris clients
# closed at --http-timeout while scrapes go on; the exporter keeps serving
# valid metrics throughout and exits cleanly.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_root
need_dmt
need_cmd curl
need_cmd promtool
need_cmd python3

export_start -i 500ms --http-timeout 2
python3 -u "$TOP/tests/integration/export_http.py" "$EXP_PORT" 2 || fail "HTTP checks"
kill -0 "$EXP_PID" 2>/dev/null || fail "exporter died during the HTTP checks"
scrape "$TMPD/after.prom"
promtool_lint "$TMPD/after.prom"
export_stop

# connection limit: with every slot taken, a new connection waits in the
# listen backlog unanswered; it is served once the idle ones time out
export_start -i 500ms --http-timeout 2 --max-connections 4
python3 -u - "$EXP_PORT" <<'PY' || fail "connection limit"
import socket, sys, time
port = int(sys.argv[1])
req = b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
def get(timeout):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(req)
    s.settimeout(timeout)
    try:
        return s.recv(64)
    finally:
        s.close()
assert get(5).startswith(b"HTTP/1.1 200"), "no 200 before the test"
held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(4)]
time.sleep(0.5)
fifth = socket.create_connection(("127.0.0.1", port), timeout=5)
fifth.sendall(req)
fifth.settimeout(1.0)
try:
    d = fifth.recv(64)
    sys.exit("5th connection answered past --max-connections 4: %r" % d[:40])
except socket.timeout:
    pass
t0 = time.monotonic()
fifth.settimeout(8)
d = fifth.recv(64)
assert d.startswith(b"HTTP/1.1 200"), "5th connection after the others timed out: %r" % d[:40]
print("  5th connection waited, then served %.1f s later (the 4 idle ones timed out)" %
      (time.monotonic() - t0 + 1))
for s in held:
    s.close()
PY
export_stop

# IPv6 loopback, when the host has it
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
	"$DMT" export --listen '[::1]:0' -i 500ms >/dev/null 2>"$TMPD/v6.err" &
	v6=$!
	_TB_PIDS+=($v6)
	for i in $(seq 1 100); do
		port6=$(sed -n 's|.*serving http://\[::1\]:\([0-9]*\)/metrics.*|\1|p' "$TMPD/v6.err")
		[ -n "$port6" ] && break
		sleep 0.1
	done
	[ -n "$port6" ] || fail "no IPv6 exporter: $(cat "$TMPD/v6.err")"
	curl -sSf -g --max-time 5 -o "$TMPD/v6.prom" "http://[::1]:$port6/metrics" ||
		fail "scrape over [::1]"
	promtool_lint "$TMPD/v6.prom"
	kill -TERM $v6
	wait $v6 || fail "IPv6 exporter exit status"
	log "served on [::1]:$port6"
else
	log "no IPv6 loopback on this host: [::1] not checked"
fi
pass "HTTP robustness checks, exporter served valid metrics afterwards"
