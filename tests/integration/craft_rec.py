#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write crafted devmemtop recordings with valid CRCs (docs/gate.md,
"Recording format"), for the reader's limits:

  craft_rec.py pools FILE N          one snapshot of N minimal pools
  craft_rec.py churn FILE SNAPS N    SNAPS snapshots of N new pools each
  craft_rec.py flags FILE FLAGS      a clean, empty recording whose header
                                     flags field is FLAGS
"""
import struct
import sys
import zlib

META, SNAPSHOT, EVENT, END = 1, 2, 3, 4
N_METRICS = 20          # any count up to the reader's limit is read


def s(text):
    b = text.encode()
    return struct.pack("<H", len(b)) + b


def frame(ftype, payload):
    head = struct.pack("<II", ftype, len(payload))
    crc = zlib.crc32(head + payload) & 0xffffffff
    return head + struct.pack("<I", crc) + payload


def avail():
    return struct.pack("<I", N_METRICS) + b"".join(
        b"\x01" + s("crafted") + s("") for _ in range(N_METRICS))


def meta():
    return (s("crafted") + s("6.18") + s("host") + s("") +
            struct.pack("<QQQI", 1, 1, 1000000000, 1) + avail() + struct.pack("<I", 0))


def pool(addr, pid):
    body = struct.pack("<QII", addr, pid, 1) + s("") + struct.pack("<III", 0, 0, 0)
    body += struct.pack("<BIBBB", 0, 0, 0, 0, 0)          # kind, binding, src, listed, state
    body += struct.pack("<II", 0, 0)                      # nid, nid_changes
    body += struct.pack("<QQQQ", 0, 0, 0, 0)              # holds .. holds_niov
    body += struct.pack("<dd", 0.0, 0.0)                  # rates
    body += struct.pack("<QQQI", 0, 0, 0, 0)              # inflights, retries
    body += struct.pack("<QQH", 0, 0, 0)                  # empty refill histogram
    return struct.pack("<I", len(body)) + body


def snapshot(seq, pools):
    p = struct.pack("<QQdQI", seq * 1000000000, seq, 1.0, seq, 1) + b"\x00"
    p += struct.pack("<I", len(pools)) + b"".join(pools)
    p += struct.pack("<I", 0)                             # bindings
    p += struct.pack("<QQQQQQ", 0, 0, 0, 0, 0, 0) + b"\x00" + struct.pack("<I", 0)
    p += struct.pack("<Q", 0)
    return p


def end(snaps):
    return struct.pack("<QQQIi", snaps, 0, 0, 0, -1)


def header(flags=0):
    return b"DMTREC\r\n" + struct.pack("<II", 1, flags)


def main():
    kind, path = sys.argv[1], sys.argv[2]
    with open(path, "wb") as f:
        if kind == "pools":
            n = int(sys.argv[3])
            f.write(header() + frame(META, meta()))
            f.write(frame(SNAPSHOT, snapshot(1, [pool(0xffff888000000000 + 64 * i, i + 1)
                                                 for i in range(n)])))
            f.write(frame(END, end(1)))
        elif kind == "churn":
            snaps, n = int(sys.argv[3]), int(sys.argv[4])
            f.write(header() + frame(META, meta()))
            for k in range(snaps):
                base = 0xffff888000000000 + 64 * n * k
                f.write(frame(SNAPSHOT, snapshot(k + 1, [pool(base + 64 * i, n * k + i + 1)
                                                         for i in range(n)])))
            f.write(frame(END, end(snaps)))
        elif kind == "flags":
            f.write(header(int(sys.argv[3], 0)) + frame(META, meta()) + frame(END, end(0)))
        else:
            sys.exit(__doc__)


if __name__ == "__main__":
    main()
