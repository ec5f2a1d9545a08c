#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One quiet instant for two devmemtop processes watching the same pools.

A mode's quiet span is a run of at least two consecutive snapshots in which
no pool of the interface moved (same ids, holds and releases). Two modes are
compared at a joint quiet point: a full-mode span and a light-mode span whose
time ranges overlap, so both describe the kernel at one instant. Picking each
mode's own latest quiet pair did not: a closed connection's late releases
landed between the full mode's pair and the light mode's, and the two
"quiet" figures differed by 31 releases (26-light-vs-full, run 3 of f83fa39).

  joint_quiet.py wait FULL.json LIGHT.json T_FROM_NS IFNAME
      exit 0 when a joint quiet point after T_FROM_NS exists, 1 if not yet
"""
import json
import sys


def load(path):
    snaps = []
    for line in open(path):
        try:
            snaps.append(json.loads(line))
        except ValueError:
            continue  # a line still being written
    return snaps


def key(snap, ifname):
    return sorted((p["id"], p["holds"], p["releases"]) for p in snap["pools"]
                  if p["ifname"] == ifname)


def spans(snaps, t_from, t_to, ifname):
    """Quiet spans (first wall_ns, last wall_ns, last snapshot) in (t_from, t_to]."""
    out, run = [], []
    for s in snaps:
        if not t_from < s["wall_ns"] <= t_to:
            continue
        if run and key(run[-1], ifname) == key(s, ifname):
            run.append(s)
            continue
        if len(run) >= 2:
            out.append((run[0]["wall_ns"], run[-1]["wall_ns"], run[-1]))
        run = [s]
    if len(run) >= 2:
        out.append((run[0]["wall_ns"], run[-1]["wall_ns"], run[-1]))
    return out


def joint(full, light, t_from, t_to, ifname):
    """The latest joint quiet point: (full snapshot, light snapshot) or None."""
    best = None
    for fa, fb, fs in spans(full, t_from, t_to, ifname):
        for la, lb, ls in spans(light, t_from, t_to, ifname):
            start = max(fa, la)
            if start <= min(fb, lb) and (best is None or start > best[0]):
                best = (start, fs, ls)
    return None if best is None else best[1:]


if __name__ == "__main__":
    if len(sys.argv) != 6 or sys.argv[1] != "wait":
        sys.exit("usage: joint_quiet.py wait FULL.json LIGHT.json T_FROM_NS IFNAME")
    found = joint(load(sys.argv[2]), load(sys.argv[3]), int(sys.argv[4]),
                  float("inf"), sys.argv[5])
    sys.exit(0 if found else 1)
