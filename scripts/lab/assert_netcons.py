#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side checks of scenarios/netcons.sh (issue 22, D2), called by
assert_lab.py through its SCENARIOS table. Needs the lockdep kernel
(vmtest.sh --variant lockdep --scenario netcons); on another kernel the
scenario writes "skip" with the reason and this is a SKIP.

  * lockdep was on before and is still on after (debug_locks 1: the first
    splat turns lockdep off), and no lock usage report is in the log
    ("inconsistent lock state", "possible irq lock inversion", "possible
    circular locking dependency", "HARDIRQ-ON-W");
  * the test was real: the NMI backtraces requested through sysrq ran, the
    peer received netconsole's UDP datagrams, the 4 flows completed.
"""
import json
import os
import re

REPORTS = re.compile(r"inconsistent lock state|possible irq lock inversion|"
                     r"possible circular locking dependency|HARDIRQ-ON-W|IN-HARDIRQ-W|"
                     r"possible recursive locking|BUG: sleeping function")


def _read(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def _debug_locks(txt):
    m = re.search(r"debug_locks:\s+(\d+)", txt)
    return int(m.group(1)) if m else None


def scenario_netcons(c, d):
    skip = _read(os.path.join(d, "skip")).strip()
    if skip:
        c.skip("netcons", skip)
        return
    before = _debug_locks(_read(os.path.join(d, "lockdep-before.txt")))
    after = _debug_locks(_read(os.path.join(d, "lockdep-after.txt")))
    dmesg = _read(os.path.join(d, "dmesg.txt"))
    reports = sorted({l.strip() for l in dmesg.splitlines() if REPORTS.search(l)})
    c.check("netcons: lockdep on before and after (debug_locks 1: no report turned it off)",
            before == 1 and after == 1, "debug_locks before %s, after %s" % (before, after))
    c.check("netcons: no lockdep report while netconsole sent from hard irq over netdevsim",
            not reports, "; ".join(reports[:4]) or "none")
    nmi = len(re.findall(r"NMI backtrace for cpu", dmesg))
    got = _read(os.path.join(d, "netcons-rx.log"))
    snmp = _read(os.path.join(d, "peer-snmp.txt")).splitlines()
    udp = [l.split() for l in snmp if l.startswith("Udp:")]
    in_dgrams = None
    if len(udp) == 2 and "InDatagrams" in udp[0]:
        in_dgrams = int(udp[1][udp[0].index("InDatagrams")])
    c.check("netcons: the test ran: sysrq NMI backtraces, netconsole datagrams at the peer",
            nmi > 0 and "lab netcons" in got and (in_dgrams or 0) > 0,
            "%d NMI backtraces; peer got %d bytes of netconsole (%s 'lab netcons' lines), "
            "Udp InDatagrams %s" % (nmi, len(got), got.count("lab netcons"), in_dgrams))
    # lab-mqrx's last line: flow i (port 5400 + i) carried i MiB, intact
    last = (_read(os.path.join(d, "rx.json")).strip().splitlines() or ["{}"])[-1]
    try:
        flows = json.loads(last).get("flows", [])
    except ValueError:
        flows = []
    got_flows = sorted((f.get("port"), f.get("done"), f.get("bytes"), f.get("mismatches"))
                       for f in flows)
    want = [(5400 + i, True, i << 20, 0) for i in range(1, 5)]
    c.check("netcons: the 4 flows completed, i MiB each, intact (and scenario exit 0)",
            got_flows == want and _read(os.path.join(d, "rc")).strip() == "0",
            "flows (port, done, bytes, mismatches) %s" % got_flows)


SCENARIOS = {"netcons": scenario_netcons}
