#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Make a variant of a devmemtop recording (docs/gate.md, "Recording
format"), so that many replaying exporters differ (97-fleet-aggregation):

  rec_vary.py IN OUT KEEP [--occupancy R] [--leak N]
  rec_vary.py IN --batch    (those OUT KEEP ... arguments, one line each, on stdin)

KEEP: keep the first KEEP snapshots (and the events before the next one),
with an END frame that counts them. In the last snapshot kept, every
binding gets occupancy R (free niovs set to match), or is marked freed
with N niovs outstanding (a leak). Frames are rewritten with their CRCs;
META is copied as it is (its CRC covers the file header).
"""
import argparse
import struct
import sys
import zlib

SNAPSHOT, EVENT, END = 2, 3, 4


def frames(data):
    off = 16                                  # "DMTREC\r\n", version, flags
    while off < len(data):
        ftype, flen = struct.unpack_from("<II", data, off)
        yield ftype, data[off:off + 12 + flen], data[off + 12:off + 12 + flen]
        off += 12 + flen


def frame(ftype, payload):
    head = struct.pack("<II", ftype, len(payload))
    return head + struct.pack("<I", zlib.crc32(head + payload) & 0xffffffff) + payload


def skip_str(p, off):
    return off + 2 + struct.unpack_from("<H", p, off)[0]


def patch_bindings(p, occupancy, leak):
    p = bytearray(p)
    off = 36                                  # ts, wall, interval, seq, mode
    if p[off]:
        n = struct.unpack_from("<I", p, off + 1)[0]
        off += 5
        for _ in range(n):
            off = skip_str(p, skip_str(p, off + 1))
    else:
        off += 1
    n_pools = struct.unpack_from("<I", p, off)[0]
    off += 4
    for _ in range(n_pools):
        off += 4 + struct.unpack_from("<I", p, off)[0]
    n_bind = struct.unpack_from("<I", p, off)[0]
    off += 4
    for _ in range(n_bind):
        blen = struct.unpack_from("<I", p, off)[0]
        b = off + 4 + 8                       # id, ifindex
        b = skip_str(p, b) + 12               # ifname, dmabuf_size, niov_size
        b = skip_str(p, b)                    # layout
        alive = b
        total = struct.unpack_from("<Q", p, b + 2)[0]
        if occupancy is not None:
            struct.pack_into("<Q", p, b + 10, int(round(total * (1 - occupancy))))
            struct.pack_into("<d", p, b + 34, occupancy)
        if leak is not None:
            p[alive] = 0                      # freed in this snapshot
            # out_at_free: after occupancy, pools, 4 counters, out_at_unbind
            struct.pack_into("<q", p, b + 34 + 8 + 4 + 32 + 8, leak)
        off += 4 + blen
    return bytes(p), n_bind


def vary(data, outpath, keep, occupancy=None, leak=None):
    out = [data[:16]]
    snaps = events = 0
    end = None
    for ftype, raw, payload in frames(data):
        if ftype == END:
            end = payload
            continue
        if ftype == SNAPSHOT:
            if snaps == keep:
                continue
            snaps += 1
            if snaps == keep and (occupancy is not None or leak is not None):
                payload, n = patch_bindings(payload, occupancy, leak)
                if not n:
                    raise SystemExit("rec_vary.py: snapshot %d has no binding to patch" % snaps)
                raw = frame(SNAPSHOT, payload)
        elif ftype == EVENT:
            if snaps == keep:
                continue
            events += 1
        out.append(raw)
    if snaps < keep or end is None:
        raise SystemExit("rec_vary.py: %d snapshots%s, want %d" %
                         (snaps, "" if end else " and no END frame", keep))
    out.append(frame(END, struct.pack("<QQ", snaps, events) + end[16:]))
    open(outpath, "wb").write(b"".join(out))


def parser():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("keep", type=int)
    ap.add_argument("--occupancy", type=float)
    ap.add_argument("--leak", type=int)
    return ap


def main():
    # rec_vary.py IN --batch: one "OUT KEEP [--occupancy R] [--leak N]" a
    # line on stdin, all from one read of IN (one interpreter, not one each)
    if len(sys.argv) == 3 and sys.argv[2] == "--batch":
        data = open(sys.argv[1], "rb").read()
        for line in sys.stdin:
            if line.strip():
                a = parser().parse_args(line.split())
                vary(data, a.out, a.keep, a.occupancy, a.leak)
        return
    a = parser().parse_args(sys.argv[2:])
    vary(open(sys.argv[1], "rb").read(), a.out, a.keep, a.occupancy, a.leak)


main()
