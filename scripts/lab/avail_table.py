#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the "avail" scenario (scenarios/avail.sh) and the availability
table it feeds: per kernel, which of devmemtop's programs load and attach,
and what each figure is in each mode.

  avail_table.py [--fentry] --out TABLE.md LABEL=DIR [LABEL=DIR ...]

DIR is an avail.sh output directory (the lab's OUT/<kernel>/avail, or one
made on the host). Checks, per DIR: every mode ran and exited 0; no program
the probes accepted failed to load ("program X does not load", the
per-program retry's line); with --fentry (the lab kernels, where fentry
attaches) the devmem and full modes attached the allocator's fentry/fexit programs.
TABLE.md gets one section per kernel: its programs (probe result, and
whether they loaded) and its figures per mode (exact, sampled, or
unavailable with the reason), generated from the outputs, never by hand.
"""
import argparse
import json
import os
import re
import sys

from labcheck import Checks, read

MODES = ("devmem", "full", "fentry", "tp", "light")


def snapshot(d, mode):
    last = None
    for line in (read(os.path.join(d, mode + ".json"), "") or "").splitlines():
        try:
            last = json.loads(line)
        except ValueError:
            pass
    return last


def probes(log):
    out = []
    for line in log.splitlines():
        m = re.match(r"^probe (\S+)\s+(\S+)\s+(\S+)\s+(.*)$", line)
        if m:
            out.append(m.groups())
    return out


def cell(m):
    if not m:
        return "-"
    if m.get("available"):
        return "%s (%s)" % (m.get("method") or "exact", m.get("source") or "?")
    return "unavailable: %s" % (m.get("reason") or "no reason given")


def esc(s):
    return str(s).replace("|", "\\|")


def kernel_section(c, label, d, fentry):
    lines = ["## %s" % label, "",
             "Kernel `%s`; from `%s`." % ((read(os.path.join(d, "uname"), "?") or "?").strip(),
                                          os.path.relpath(d)), ""]
    snaps = {}
    for mode in MODES:
        rc = (read(os.path.join(d, mode + ".rc"), "") or "").strip()
        log = read(os.path.join(d, mode + ".log"), "") or ""
        snaps[mode] = snapshot(d, mode)
        c.check("%s: -m %s ran" % (label, mode), rc == "0" and snaps[mode] is not None,
                "rc %s, attach mode %s" % (rc or "?", (snaps[mode] or {}).get("mode")),
                "%s.log: %s" % (mode, log.strip().splitlines()[-1:] if log.strip() else "empty"))
        bad = re.findall(r"^program (\S+) does not load: (.*)$", log, re.M)
        c.check("%s: -m %s: every program the probes accepted loads" % (label, mode), not bad,
                "%d failed" % len(bad), "; ".join("%s: %s" % b for b in bad))
    full_log = read(os.path.join(d, "full.log"), "") or ""
    failed = dict(re.findall(r"^program (\S+) does not load: (.*)$", full_log, re.M))
    # accepted by its probe, then left out by the policy (covered by another
    # program, or its group incomplete: "skip NAME REASON")
    skipped = dict(re.findall(r"^skip  (\S+)\s+(.*)$", full_log, re.M))
    if fentry:
        for mode in ("devmem", "full"):
            m = ((snaps[mode] or {}).get("metrics") or {}).get("binding_alloc_latency") or {}
            c.check("%s: fentry/fexit attach (allocator latency exact in -m %s)" % (label, mode),
                    bool(m.get("available")), cell(m))
    lines += ["| program | hook | target | probe | loaded (-m full) |", "|---|---|---|---|---|"]
    for name, kind, target, res in probes(full_log):
        loaded = "no: %s" % failed[name] if name in failed else \
            "no: %s" % skipped[name].strip() if name in skipped else (
                "yes" if res.strip() == "ok" else "no")
        lines.append("| %s | %s | %s | %s | %s |" % (name, kind, target, esc(res.strip()),
                                                     esc(loaded)))
    names = []
    for mode in MODES:
        for k in ((snaps[mode] or {}).get("metrics") or {}):
            if k not in names:
                names.append(k)
    lines += ["", "| figure | " + " | ".join("-m " + m for m in MODES) + " |",
              "|---|" + "---|" * len(MODES)]
    for k in names:
        lines.append("| %s | %s |" % (k, " | ".join(
            esc(cell(((snaps[m] or {}).get("metrics") or {}).get(k))) for m in MODES)))
    return lines + [""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--fentry", action="store_true",
                    help="the kernels let fentry/fexit attach: assert they did")
    ap.add_argument("--made-by", default="scripts/lab/vmtest.sh --scenario avail",
                    help="the command that made the outputs, for the table's header")
    ap.add_argument("dirs", nargs="+", metavar="LABEL=DIR")
    a = ap.parse_args()
    c = Checks("avail")
    doc = ["# devmemtop's availability per kernel", "",
           "Made by: `%s` (do not edit: run it again). `scripts/lab/avail_table.py` "
           "writes it from the `avail` scenario's outputs (`devmemtop --json -v` in each "
           "mode)." % a.made_by, ""]
    for spec in a.dirs:
        label, _, d = spec.partition("=")
        if not d or not os.path.isdir(d):
            c.check("%s: avail outputs" % label, False, "no directory %r" % d)
            continue
        doc += kernel_section(c, label, d, a.fentry)
    with open(a.out, "w") as f:
        f.write("\n".join(doc))
    print("avail: table written to %s" % a.out)
    print("avail: %d passed, %d failed, %d skipped" % (c.n["PASS"], c.n["FAIL"], c.n["SKIP"]))
    return 1 if c.n["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
