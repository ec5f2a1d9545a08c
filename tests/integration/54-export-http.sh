#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# HTTP robustness of devmemtop export: index, /healthz, unknown paths (404),
# other methods (405 + Allow), malformed requests (400/505), oversized
# headers and targets (413/414/431), silent and dripping slow-loris clients
# closed at --http-timeout while scrapes go on; the exporter keeps serving
# valid metrics throughout and exits cleanly. Connection limits: per client
# address well below the total, and over either, refused at once.
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

# connection limits (issue 13.8): one client address holding more than its
# share is refused at once, and cannot lock out another client; over the
# total, new connections are closed at once instead of waiting in the
# listen backlog. 127.0.0.2 and 127.0.0.3 are other client addresses on lo.
export_start -i 500ms --http-timeout 5
python3 -u - "$EXP_PORT" 64 8 <<'PY' || fail "per-client connection limit"
import socket, sys, time
port, total, per = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def conn(src):
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    return s
def probe(src, wait=2.0):
    """(status line or '', seconds): '' means closed without an answer"""
    s = conn(src)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    s.settimeout(wait)
    t0 = time.monotonic()
    try:
        d = s.recv(64)
    except ConnectionResetError:
        d = b""
    except socket.timeout:
        sys.exit("%s: no answer and not closed within %.1f s" % (src, wait))
    finally:
        s.close()
    return d.split(b"\r\n")[0].decode(), time.monotonic() - t0
# what locked everyone out before: a greedy client takes the whole total
greedy = [conn("127.0.0.1") for _ in range(total)]
time.sleep(0.5)
line, dt = probe("127.0.0.2")
assert line.startswith("HTTP/1.1 200"), "another client locked out by %d from 127.0.0.1: %r" % (total, line)
print("  %d connections from 127.0.0.1 held; 127.0.0.2 served in %.3f s" % (total, dt))
line, dt = probe("127.0.0.1")
assert line == "", "127.0.0.1 over its %d: %r" % (per, line)
print("  127.0.0.1 over its per-client limit of %d: closed in %.3f s" % (per, dt))
for s in greedy:
    s.close()
time.sleep(0.5)
line, dt = probe("127.0.0.1")
assert line.startswith("HTTP/1.1 200"), "127.0.0.1 after letting go: %r" % line
PY
export_stop
export_start -i 500ms --http-timeout 5 --max-connections 4 --max-connections-per-client 2
python3 -u - "$EXP_PORT" <<'PY' || fail "total connection limit"
import socket, sys, time
port = int(sys.argv[1])
def conn(src):
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    return s
# one each from 4 addresses: no address holds more than the newcomer + 1,
# so no idle connection is closed to make room (81-export-conn-lockout.sh)
held = [conn(a) for a in ("127.0.0.1", "127.0.0.2", "127.0.0.4", "127.0.0.5")]
time.sleep(0.5)
s = conn("127.0.0.3")
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
s.settimeout(2)
t0 = time.monotonic()
try:
    d = s.recv(64)
except ConnectionResetError:
    d = b""
except socket.timeout:
    sys.exit("5th connection over --max-connections 4 left hanging (not refused) for 2 s")
assert d == b"", "5th connection over --max-connections 4 answered: %r" % d[:40]
print("  5th connection over --max-connections 4: closed in %.3f s" % (time.monotonic() - t0))
held.pop().close()
time.sleep(0.5)
s = conn("127.0.0.3")
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
d = s.recv(64)
assert d.startswith(b"HTTP/1.1 200"), "served once a slot is free: %r" % d[:40]
for x in held:
    x.close()
PY
out=$("$DMT" export --max-connections 4 --max-connections-per-client 5 2>&1)
[ $? = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] || fail "per-client above total: $out"
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
