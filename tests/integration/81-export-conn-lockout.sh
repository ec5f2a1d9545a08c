#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Connection lock-out (issue 26 item 8): 8 client addresses x 8 keep-alive
# connections (the per-client limit) fill the 64-connection table. A new
# client must still be served: the exporter closes the oldest idle
# connection of the busiest address to make room, at once, instead of
# refusing every newcomer until the idle ones time out. Checked: a ninth
# address gets 200 within 2 s, exactly one held connection was closed for
# it, and a ninth connection from a full address is still refused.
# Loopback only (127.0.0.1-9); the exporter serves a recording (no BPF).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_dmt
need_cmd python3
REC=$TOP/tests/fixtures/lab-patched-bulk.dmtrec
[ -s "$REC" ] || fail "fixture $REC missing"

export_start --from "$REC" --http-timeout 60
python3 - "$EXP_PORT" <<'EOF' || fail "lock-out check failed"
import socket, sys, time, select

port = int(sys.argv[1])
REQ = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

def read_response(s, timeout=5):
    s.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            return None
        buf += d
    head, _, body = buf.partition(b"\r\n\r\n")
    n = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
    while len(body) < n:
        d = s.recv(4096)
        if not d:
            return None
        body += d
    return head.split(b"\r\n")[0].decode()

held = []
for a in range(1, 9):
    for i in range(8):
        s = socket.socket()
        s.bind(("127.0.0.%d" % a, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(REQ)
        st = read_response(s)
        if not st or " 200 " not in st:
            print("FAIL: held connection %d from 127.0.0.%d: %r" % (i, a, st))
            sys.exit(1)
        held.append(s)
print("  64 keep-alive connections held from 127.0.0.1-8, each answered")

# the 9th from a full address: refused (per-client limit), table full or not
s = socket.socket()
s.bind(("127.0.0.3", 0))
s.connect(("127.0.0.1", port))
try:
    s.sendall(REQ)
    st = read_response(s, 3)
except OSError as e:
    st = None
if st:
    print("FAIL: a 9th connection from 127.0.0.3 was served: %s" % st)
    sys.exit(1)
s.close()

t0 = time.monotonic()
s = socket.socket()
s.bind(("127.0.0.9", 0))
s.connect(("127.0.0.1", port))
try:
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    st = read_response(s, 5)
except OSError as e:
    st = "error: %s" % e
dt = time.monotonic() - t0
if not st or " 200 " not in st or dt > 2:
    print("FAIL: a new client (127.0.0.9) with the table full got %r after %.3f s, want 200 at once" % (st, dt))
    sys.exit(1)
print("  new client 127.0.0.9 served with the table full: %s in %.0f ms" % (st, dt * 1000))
s.close()

# exactly one held connection closed for it
time.sleep(0.5)
closed = 0
for h in held:
    r, _, _ = select.select([h], [], [], 0)
    if r:
        try:
            d = h.recv(1, socket.MSG_PEEK)
        except OSError:
            d = b""
        if not d:
            closed += 1
if closed != 1:
    print("FAIL: %d held connections closed for the new client, want exactly 1" % closed)
    sys.exit(1)
print("  exactly one idle connection of a full address was closed for it")
for h in held:
    h.close()
EOF
export_stop
echo PASS
