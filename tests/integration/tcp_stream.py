#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""TCP stream for the veth test bed: 'server ADDR PORT [CHUNK]' or 'client ADDR PORT SECONDS [DUTY]'.

The server prints the bytes it received as one line; the client stops after
SECONDS (bounded: never more than 120 s), or at SIGTERM (testbed_stop: a
stream that lasts until the test has seen what it waits for), and prints
the bytes it sent.

With CHUNK (bytes), the server reads CHUNK at a time (MSG_WAITALL; the receive
buffer autotunes): pages pile up in the socket and come back to the
page pool in bursts larger than its recycling ring, so the pool returns
them to the page allocator and takes fresh ones, one hold and one release
event per page. That is the bed's highest page_pool event rate (about
0.5 M events/s here against 20-80 k with 1 MiB reads at the same bit rate);
bench/light.sh uses it.
"""
import signal
import socket
import sys
import time

stop = False


def on_term(_sig, _frame):
    global stop
    stop = True


def server(addr, port, chunk=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(1)
    s.settimeout(60)
    c, _ = s.accept()
    c.settimeout(30)
    n = 0
    if chunk:
        buf = bytearray(chunk)
        while True:
            r = c.recv_into(buf, chunk, socket.MSG_WAITALL)
            if not r:
                break
            n += r
        print(n, flush=True)
        return
    while True:
        b = c.recv(1 << 20)
        if not b:
            break
        n += len(b)
    print(n, flush=True)


def client(addr, port, secs, duty=1.0):
    """With DUTY below 1, send at full speed for DUTY of every second and
    stay idle for the rest: the bed's page rate in the burst regime, scaled
    (a paced stream would recycle every page and raise no events at all)."""
    secs = min(float(secs), 120.0)
    signal.signal(signal.SIGTERM, on_term)
    for _ in range(50):
        try:
            s = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("tcp_stream: cannot connect to %s:%d" % (addr, port))
    buf = b"\x5a" * (1 << 20)
    end = time.monotonic() + secs
    n = 0
    while time.monotonic() < end and not stop:
        if duty < 1.0:
            now = time.monotonic()
            phase = (now - (end - secs)) % 1.0
            if phase >= duty:
                time.sleep(min(1.0 - phase, end - now))
                continue
        s.sendall(buf)
        n += len(buf)
    s.close()
    print(n, flush=True)


if __name__ == "__main__":
    if len(sys.argv) in (4, 5) and sys.argv[1] == "server":
        server(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) == 5 else 0)
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "client":
        client(sys.argv[2], int(sys.argv[3]), sys.argv[4],
               float(sys.argv[5]) if len(sys.argv) == 6 else 1.0)
    else:
        sys.exit("usage: tcp_stream.py server ADDR PORT [CHUNK] | client ADDR PORT SECONDS [DUTY]")
