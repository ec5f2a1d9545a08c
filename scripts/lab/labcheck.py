#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The lab's shared checking helpers: a leaf module every assert_*.py
imports, and which imports none of them (no import cycle, no import inside
a function).

  Checks        one PASS/FAIL/SKIP printer and its counts
  read, read_json, read_int   files the guest brought back
  check_trace   the devmem pools' page_pool tracepoints: holds == releases
  gate_from     devmemtop gate --from a recording, with its JSON result
  REPO, DEVMEMTOP   the source tree and the devmemtop binary (DEVMEMTOP_BIN)
"""
import json
import os
import re
import subprocess

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEVMEMTOP = os.environ.get("DEVMEMTOP_BIN", os.path.join(REPO, "build", "devmemtop"))


class Checks:
    def __init__(self, prefix):
        self.prefix = prefix
        self.n = {"PASS": 0, "FAIL": 0, "SKIP": 0}

    def check(self, name, ok, detail="", hint=""):
        """detail: the measured values, printed always; hint: printed on FAIL."""
        st = "PASS" if ok else "FAIL"
        self.n[st] += 1
        text = "; ".join(x for x in (detail, "" if ok else hint) if x)
        print("%s %s %s%s" % (st, self.prefix, name, (": " + text) if text else ""))
        return ok

    def skip(self, name, reason):
        self.n["SKIP"] += 1
        print("SKIP %s %s: %s" % (self.prefix, name, reason))

    def info(self, name, detail):
        print("INFO %s %s: %s" % (self.prefix, name, detail))


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def kv(text):
    """key=value words of text as a dict (other words ignored)."""
    return dict(x.split("=", 1) for x in (text or "").split() if "=" in x)


def json_lines(d, f):
    """Every line of d/f as JSON, None for a line that is not (a snapshot
    cut short when its writer was stopped); [] if the file is missing."""
    out = []
    for l in (read(os.path.join(d, f), "") or "").splitlines():
        try:
            out.append(json.loads(l))
        except ValueError:
            out.append(None)
    return out


def read_json(path):
    txt = read(path)
    if txt is None:
        return None
    lines = [l for l in txt.splitlines() if l.strip()]
    if not lines:
        return None
    try:
        return json.loads(lines[-1])
    except ValueError:
        return None


def recording_snapshots(rec, devmemtop=DEVMEMTOP):
    """devmemtop report --json REC: (exit status, every snapshot (one JSON
    object a line), stderr)."""
    p = subprocess.run([devmemtop, "report", "--json", rec], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    out = []
    for line in p.stdout.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return p.returncode, out, p.stderr.strip()


def read_int(path):
    txt = read(path)
    try:
        return int(txt.strip())
    except (AttributeError, ValueError):
        return None


HOLD = re.compile(r"page_pool_state_hold: page_pool=(\S+) netmem=(\S+) is_net_iov=(\d+),? "
                  r"pfn=\S+ hold=(\d+)")
REL = re.compile(r"page_pool_state_release: page_pool=(\S+) netmem=(\S+) is_net_iov=(\d+),? "
                 r"pfn=\S+ release=(\d+)")
PPREL = re.compile(r"page_pool_release: page_pool=(\S+) inflight=(-?\d+) hold=(\d+) "
                   r"release=(\d+)")


class PoolKeys:
    """Trace events name a pool by its (hashed) pointer, and a freed pool's
    memory is reused: the next pool created in a test can have the same
    pointer. A page_pool_release event with nothing in flight frees the
    pool, so any later event with that pointer is a new pool: key(ptr)
    gives "ptr" for the first pool at an address, "ptr#2", "ptr#3"... for
    the ones after it."""

    def __init__(self):
        self.gen = {}
        self.freed = set()

    def key(self, ptr):
        if ptr in self.freed:
            self.freed.discard(ptr)
            self.gen[ptr] = self.gen.get(ptr, 1) + 1
        g = self.gen.get(ptr, 1)
        return ptr if g == 1 else "%s#%d" % (ptr, g)

    def released(self, ptr, inflight):
        """After the key() of a page_pool_release event."""
        if inflight == 0:
            self.freed.add(ptr)


def parse_trace(path):
    """Per pool (PoolKeys: pointer, and generation when reused): hold/release
    event counts, whether it handed out net_iovs, and its last
    page_pool_release event (inflight, hold, release)."""
    pools = {}
    keys = PoolKeys()
    overrun = None
    txt = read(path)
    if txt is None:
        return None, None
    for line in txt.splitlines():
        if line.startswith("# overrun:"):
            try:
                overrun = int(line.split(":")[1])
            except ValueError:
                overrun = None
            continue
        m = HOLD.search(line)
        if m:
            p = pools.setdefault(keys.key(m.group(1)), {"holds": 0, "releases": 0, "niov": False,
                                              "last": None, "max_hold": 0})
            p["holds"] += 1
            p["niov"] |= m.group(3) != "0"
            p["max_hold"] = max(p["max_hold"], int(m.group(4)))
            continue
        m = REL.search(line)
        if m:
            p = pools.setdefault(keys.key(m.group(1)), {"holds": 0, "releases": 0, "niov": False,
                                              "last": None, "max_hold": 0})
            p["releases"] += 1
            p["niov"] |= m.group(3) != "0"
            continue
        m = PPREL.search(line)
        if m:
            p = pools.setdefault(keys.key(m.group(1)), {"holds": 0, "releases": 0,
                                                        "niov": False, "last": None,
                                                        "max_hold": 0})
            p["last"] = tuple(int(x) for x in m.groups()[1:])
            keys.released(m.group(1), p["last"][0])
    return pools, overrun


def check_trace(c, d, what):
    """The devmem pool(s): every hold/release tracepoint seen, and at destroy
    holds == releases with nothing in flight."""
    pools, overrun = parse_trace(os.path.join(d, "trace.txt"))
    if pools is None:
        c.check(what + " trace captured", False, "no trace.txt")
        return
    c.check(what + " trace buffer complete", overrun == 0, "overrun=%s" % overrun)
    dm = {k: v for k, v in pools.items() if v["niov"]}
    if not c.check(what + " devmem page pool seen in tracepoints", len(dm) >= 1,
                   "%d pool(s) handed out net_iovs" % len(dm)):
        return
    for ptr, p in dm.items():
        last = p["last"]
        if not c.check(what + " pool %s destroyed (page_pool_release)" % ptr[-6:],
                       last is not None, "no page_pool_release event" if last is None else ""):
            continue
        inflight, hold, rel = last
        c.check(what + " pool %s holds == releases after unbind" % ptr[-6:],
                inflight == 0 and hold == rel,
                "inflight=%d hold=%d release=%d" % (inflight, hold, rel))
        c.check(what + " pool %s tracepoints match its counters" % ptr[-6:],
                p["holds"] == hold and p["releases"] == rel,
                "hold events %d/%d, release events %d/%d" % (p["holds"], hold,
                                                             p["releases"], rel))


def gate_from(spec, rec, d, junit=True):
    """devmemtop gate --spec SPEC --from REC, its output in D/gate.txt, its
    JSON result in D/gate.json (and JUnit in D/gate.xml). Returns (result,
    exit status, error): result None with the error when there is no JSON."""
    out = os.path.join(d, "gate.json")
    cmd = [DEVMEMTOP, "gate", "--spec", spec, "--from", rec, "--json", out]
    if junit:
        cmd += ["--junit", os.path.join(d, "gate.xml")]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(os.path.join(d, "gate.txt"), "w") as f:
        f.write(p.stdout)
    try:
        with open(out) as f:
            return json.load(f), p.returncode, None
    except (OSError, ValueError) as e:
        return None, p.returncode, e
