#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""HTTP robustness checks against a running `devmemtop export`.

  export_http.py PORT TIMEOUT

TIMEOUT is the exporter's --http-timeout. Prints one line per check and
exits 1 at the first failure. Every request is bounded in time; all traffic
goes to 127.0.0.1.
"""
import socket
import sys
import time

PORT = int(sys.argv[1])
TIMEOUT = float(sys.argv[2])


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def raw(data, read_timeout=5.0):
    """Send bytes, read until the server closes or read_timeout; return (bytes, closed)."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    try:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass	# answered and closed before the whole request was sent
        s.settimeout(read_timeout)
        out = b""
        while True:
            try:
                b = s.recv(65536)
            except socket.timeout:
                return out, False
            except ConnectionResetError:
                return out, True
            if not b:
                return out, True
            out += b
    finally:
        s.close()


def status(resp):
    line = resp.split(b"\r\n", 1)[0]
    parts = line.split(b" ")
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
        return None
    return int(parts[1])


def req(method, path, extra=b"", body=b""):
    data = b"%s %s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n%s" % (method, path, extra)
    if body:
        data += b"Content-Length: %d\r\n" % len(body)
    data += b"\r\n" + body
    resp, _ = raw(data)
    return status(resp), resp


def expect(name, got, want, resp=b""):
    ok = got in want if isinstance(want, tuple) else got == want
    if not ok:
        fail("%s: got %r, want %r; response starts %r" % (name, got, want, resp[:120]))
    print("ok   %-44s %s" % (name, got))


def metrics_ok(name):
    st, resp = req(b"GET", b"/metrics")
    expect(name + ": GET /metrics still served", st, 200, resp)
    if b"\r\n\r\n# HELP devmemtop_" not in resp and b"\ndevmemtop_" not in resp:
        fail(name + ": /metrics body has no devmemtop metrics")


st, resp = req(b"GET", b"/")
expect("GET / (index)", st, 200, resp)
if b'href="/metrics"' not in resp:
    fail("index does not link /metrics")
st, resp = req(b"GET", b"/healthz")
expect("GET /healthz", st, 200, resp)
if b"\r\n\r\nok" not in resp:
    fail("healthz body: %r" % resp[-80:])
st, resp = req(b"GET", b"/metrics?x=1")
expect("GET /metrics?query", st, 200, resp)
for path in (b"/nope", b"/metrics/extra", b"/metricsx", b"/../etc/passwd"):
    st, resp = req(b"GET", path)
    expect("GET %s" % path.decode(), st, 404, resp)
for m in (b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE"):
    st, resp = req(m, b"/metrics", body=b"a=1" if m in (b"POST", b"PUT") else b"")
    expect("%s /metrics" % m.decode(), st, 405, resp)
    if b"\r\nAllow: GET, HEAD\r\n" not in resp:
        fail("%s: 405 without 'Allow: GET, HEAD': %r" % (m, resp[:300]))
st, resp = req(b"POST", b"/metrics", body=b"x" * 1000000)
expect("POST /metrics with a 1 MB body", st, 405, resp)
metrics_ok("after methods")

# malformed requests
for name, data, want in (
        ("request line with an empty target", b"GET  HTTP/1.1\r\nHost: t\r\n\r\n", 400),
        ("binary garbage request line", b"\x00\x01\x02\xff / HTTP/1.1\r\nHost: t\r\n\r\n", 400),
        ("header line without a colon", b"GET / HTTP/1.1\r\nHost: t\r\nNo colon here\r\n\r\n", 400),
        ("HTTP/1.1 without Host", b"GET /metrics HTTP/1.1\r\n\r\n", 400),
        ("unknown HTTP version", b"GET / HTTP/9.9\r\nHost: t\r\n\r\n", 505)):
    resp, _ = raw(data)
    expect(name, status(resp), want, resp)
# A request line without a version is HTTP/0.9 style: no status line exists
# for it; the server must close the connection without serving anything.
resp, closed = raw(b"GARBAGE\r\n\r\n")
if not closed or (resp and status(resp) not in (400,)):
    fail("version-less request line: closed=%s response %r" % (closed, resp[:80]))
print("ok   %-44s %s" % ("version-less request line", "closed" if not resp else status(resp)))
metrics_ok("after malformed requests")

# oversized requests
st, resp = req(b"GET", b"/metrics", extra=b"X-Big: " + b"a" * 65536 + b"\r\n")
expect("64 KiB header", st, (413, 431), resp)
st, resp = req(b"GET", b"/" + b"a" * 65536)
expect("64 KiB request target", st, (414, 431), resp)
many = b"".join(b"X-H%d: v\r\n" % i for i in range(5000))
st, resp = req(b"GET", b"/metrics", extra=many)
expect("5000 headers", st, (413, 431), resp)
metrics_ok("after oversized requests")

def timeouts_counted():
    st, resp = req(b"GET", b"/metrics")
    line = [l for l in resp.split(b"\n") if l.startswith(b"devmemtop_http_request_timeouts_total ")]
    if st != 200 or len(line) != 1:
        fail("no devmemtop_http_request_timeouts_total in /metrics (HTTP %s)" % st)
    return int(line[0].split()[1])


def read_response(s):
    """One response on a keep-alive connection (Content-Length framed)."""
    data = b""
    while b"\r\n\r\n" not in data:
        b = s.recv(65536)
        if not b:
            fail("connection closed before a full response: %r" % data[:80])
        data += b
    head, _, body = data.partition(b"\r\n\r\n")
    n = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
    if not n:
        fail("response without Content-Length: %r" % head)
    while len(body) < n[0]:
        b = s.recv(65536)
        if not b:
            fail("connection closed inside a response body")
        body += b
    return status(head), head


# keep-alive: several requests on one connection, as Prometheus scrapes
before = timeouts_counted()
s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
for i in range(3):
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
    st, head = read_response(s)
    if st != 200 or b"Connection: close" in head:
        fail("keep-alive request %d: %s %r" % (i, st, head[:200]))
print("ok   %-44s %s" % ("3 requests on one keep-alive connection", 200))
# an idle keep-alive connection is closed at the idle timeout, and that is
# not a request timeout
s.settimeout(TIMEOUT + 4)
t0 = time.monotonic()
try:
    b = s.recv(1)
except (socket.timeout, ConnectionResetError):
    b = None
idle = time.monotonic() - t0
if b != b"" or idle < TIMEOUT - 0.5:
    fail("idle keep-alive connection: recv %r after %.1f s (timeout %g s)" % (b, idle, TIMEOUT))
s.close()
if timeouts_counted() != before:
    fail("an idle keep-alive connection was counted as a request timeout")
print("ok   %-44s closed after %.1f s" % ("idle keep-alive connection", idle))

# slow loris, silent: half a request, then nothing
s1 = socket.create_connection(("127.0.0.1", PORT), timeout=5)
s1.sendall(b"GET /metrics HTTP/1.1\r\nHost: t\r\n")
# slow loris, dripping: one header byte every 0.3 s, never finishing
s2 = socket.create_connection(("127.0.0.1", PORT), timeout=5)
s2.sendall(b"GET /metrics HTTP/1.1\r\nHost: t\r\nX-Slow: ")
s2.setblocking(False)
s1.setblocking(False)
t0 = time.monotonic()
closed = {}
got = {"silent": b"", "dripping": b""}
deadline = t0 + TIMEOUT + 4
mid_checked = False
while time.monotonic() < deadline and len(closed) < 2:
    for name, s in (("silent", s1), ("dripping", s2)):
        if name in closed:
            continue
        try:
            b = s.recv(4096)
            got[name] += b
            if not b:
                closed[name] = time.monotonic() - t0
        except BlockingIOError:
            pass
        except (ConnectionResetError, BrokenPipeError):
            closed[name] = time.monotonic() - t0
    if "dripping" not in closed:
        try:
            s2.send(b"a")
        except (BlockingIOError, ConnectionResetError, BrokenPipeError):
            closed.setdefault("dripping", time.monotonic() - t0)
    if not mid_checked and time.monotonic() - t0 > TIMEOUT / 2:
        metrics_ok("while two slow clients hold connections")
        mid_checked = True
    time.sleep(0.3)
for name in ("silent", "dripping"):
    if name not in closed:
        fail("%s slow-loris connection still open %.1f s after start (timeout %g s)" %
             (name, time.monotonic() - t0, TIMEOUT))
    if closed[name] < TIMEOUT - 0.5:
        fail("%s slow client closed after %.1f s, before the %g s timeout" %
             (name, closed[name], TIMEOUT))
    print("ok   %-44s closed after %.1f s, %s" % ("slow loris, " + name, closed[name],
                                                    status(got[name]) or "no answer"))
# the dripping one was sending a request: it is told so (the silent one is
# closed by the idle timeout, which cannot tell it from an idle keep-alive)
if status(got["dripping"]) != 408:
    fail("dripping slow-loris client got %r, want a 408" % got["dripping"][:60])
s1.close()
s2.close()
metrics_ok("after slow clients")

# the deadline counter saw the dripping client
after = timeouts_counted()
if after < before + 1:
    fail("devmemtop_http_request_timeouts_total did not count the dripping client: %d -> %d" %
         (before, after))
print("ok   %-44s %d -> %d" % ("request timeouts counted", before, after))
print("all HTTP checks passed")
