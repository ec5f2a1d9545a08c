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
    c.check("netcons: the 4 flows completed (scenario exit 0)",
            _read(os.path.join(d, "rc")).strip() == "0")


SCENARIOS = {"netcons": scenario_netcons}
