#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""qemu-run.py --log FILE --timeout SECS -- qemu-system-x86_64 ARGS...

Runs qemu with the serial console on stdout, writes every console line to
FILE prefixed with seconds since qemu started, echoes the lab's own
"LAB:" lines live, and kills qemu after SECS. Exit status: qemu's, or 124
on timeout.
"""
import argparse
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--timeout", type=float, required=True)
    ap.add_argument("--echo-all", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no qemu command")
    t0 = time.monotonic()
    timed_out = False
    with open(a.log, "w") as log:
        log.write("CMD: %s\n" % " ".join(cmd))
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        buf = b""
        while True:
            left = a.timeout - (time.monotonic() - t0)
            if left <= 0:
                timed_out = True
                p.kill()
                break
            if not sel.select(timeout=min(left, 1.0)):
                if p.poll() is not None:
                    break
                continue
            chunk = p.stdout.read1(65536)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                line = raw.decode(errors="replace").rstrip("\r")
                stamp = "[%7.2f] " % (time.monotonic() - t0)
                log.write(stamp + line + "\n")
                if a.echo_all or line.startswith("LAB:"):
                    print(stamp + line, flush=True)
            log.flush()
        if buf:
            log.write("[%7.2f] %s\n" % (time.monotonic() - t0, buf.decode(errors="replace")))
        rc = p.wait()
        log.write("[%7.2f] QEMU_EXIT rc=%d%s\n" % (time.monotonic() - t0, rc,
                                                  " (timeout)" if timed_out else ""))
    return 124 if timed_out else rc


if __name__ == "__main__":
    sys.exit(main())
