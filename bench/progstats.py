# SPDX-License-Identifier: GPL-2.0
"""The bench scripts' reading of prog_stats (bench/lib.sh) snapshots: the
kernel's run_time_ns / run_cnt per program, before (.a) and after (.b) a
round."""
import json


def load(path):
    """name -> (run_time_ns, run_cnt) of one snapshot (bpftool JSON a line)."""
    out = {}
    for chunk in open(path).read().split("\n"):
        chunk = chunk.strip()
        if chunk:
            p = json.loads(chunk)
            out[p["name"]] = (p.get("run_time_ns", 0), p.get("run_cnt", 0))
    return out


def per_event(d, who, r, match):
    """(ns per run, runs) of the programs whose name match() accepts, over
    round r of process `who` (files D/WHO.R.a and .b)."""
    a, b = load("%s/%s.%d.a" % (d, who, r)), load("%s/%s.%d.b" % (d, who, r))
    t = n = 0
    for name in b:
        if match(name):
            t += b[name][0] - a.get(name, (0, 0))[0]
            n += b[name][1] - a.get(name, (0, 0))[1]
    return (t / n if n else float("nan")), n
