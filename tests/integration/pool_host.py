#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""pool_host.py FILE N: a recording (craft_rec.py's framing) of one snapshot
of a host with N page pools, as a GPU node with container veths has them:
pool i (netlink id i+1) on eth(i % 8) for the first 60 %, on veth<i> for
the rest (the interfaces that make per-pool cardinality grow), and every
50th pool a devmem pool."""
import struct
import sys

from craft_rec import END, META, SNAPSHOT, end, frame, header, meta, s, snapshot


def pool(addr, pid, ifname, kind):
    body = struct.pack("<QII", addr, pid, 3) + s(ifname) + struct.pack("<III", 0, pid % 8, 0)
    body += struct.pack("<BIBBB", kind, 1 if kind == 1 else 0, 0, 1, 0)
    body += struct.pack("<II", 0, 0)
    body += struct.pack("<QQQQ", 1000 + pid, 900, 1000 + pid, 0)
    body += struct.pack("<dd", 0.0, 0.0)
    body += struct.pack("<QQQI", 100 + pid, 0, 0, 0)
    body += struct.pack("<QQH", 0, 0, 0)
    return struct.pack("<I", len(body)) + body


n = int(sys.argv[2])
pools = []
for i in range(n):
    ifname = "eth%d" % (i % 8) if i < n * 6 // 10 else "veth%d" % i
    pools.append(pool(0xffff888000000000 + 64 * i, i + 1, ifname, 1 if i % 50 == 49 else 0))
with open(sys.argv[1], "wb") as f:
    f.write(header() + frame(META, meta()) + frame(SNAPSHOT, snapshot(1, pools)) + frame(END, end(1)))
