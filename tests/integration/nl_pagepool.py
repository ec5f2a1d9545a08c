#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Dump netdev genl page-pool-get as the calling user and print
"ok N" (N pools listed) or "error ERRNO-NAME"; exit 0 only on ok.
Used by 59-export-least-privilege.sh to measure whether the exporter's
netlink query needs a capability."""
import errno
import os
import socket
import struct
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NETDEV_CMD_PAGE_POOL_GET = 5
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3


def attr(kind, data):
    a = struct.pack("HH", 4 + len(data), kind) + data
    return a + b"\0" * (-len(a) % 4)


def request(s, ftype, flags, cmd, payload=b"", seq=1):
    body = struct.pack("BBH", cmd, 1, 0) + payload
    s.send(struct.pack("IHHII", 16 + len(body), ftype, flags, seq, 0) + body)


def messages(s):
    while True:
        data = s.recv(65536)
        off = 0
        while off < len(data):
            length, mtype = struct.unpack_from("IH", data, off)
            yield mtype, data[off + 16:off + length]
            off += (length + 3) & ~3


def attrs(buf):
    off = 0
    while off + 4 <= len(buf):
        length, kind = struct.unpack_from("HH", buf, off)
        yield kind & 0x3fff, buf[off + 4:off + length]
        off += (length + 3) & ~3


def main():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    request(s, GENL_ID_CTRL, NLM_F_REQUEST, CTRL_CMD_GETFAMILY,
            attr(CTRL_ATTR_FAMILY_NAME, b"netdev\0"))
    family = None
    for mtype, body in messages(s):
        if mtype == NLMSG_ERROR:
            err = -struct.unpack_from("i", body)[0]
            print("error", errno.errorcode.get(err, err), "(resolving the netdev family)")
            return 1
        for kind, val in attrs(body[4:]):
            if kind == CTRL_ATTR_FAMILY_ID:
                family = struct.unpack("H", val[:2])[0]
        break
    request(s, family, NLM_F_REQUEST | NLM_F_DUMP, NETDEV_CMD_PAGE_POOL_GET, seq=2)
    pools = 0
    for mtype, body in messages(s):
        if mtype == NLMSG_DONE:
            err = -struct.unpack_from("i", body)[0] if len(body) >= 4 else 0
            if err:
                print("error", errno.errorcode.get(err, err))
                return 1
            print("ok", pools, "uid", os.getuid())
            return 0
        if mtype == NLMSG_ERROR:
            err = -struct.unpack_from("i", body)[0]
            print("error", errno.errorcode.get(err, err))
            return 1
        if mtype == family:
            pools += 1


sys.exit(main())
