#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that src/ keeps its layers (docs/HACKING.md, "Layers").

Every file of src/ lives in the folder of its part, and a part may include
its own headers and those of the parts below it, never one at its level or
above:

    cmd        the commands: main.c's table, one file per subcommand
    collector  libbpf, libnl: the kernel side       exporter  HTTP, TLS, privileges
    core       the model: no libbpf, no UI

Reads every '#include "..."' line of src/*/*.[ch], resolves it the way the
compiler does with the Makefile's include path (the including file's folder,
then build/ (generated), bpf/, src/, src/core/) and fails, one line per
problem, on:

  - a file directly in src/, or a folder that is not a known part
  - an include that resolves nowhere (a header of another part named
    without its folder: "collector.h" instead of "collector/collector.h")
  - an include from a part to one at its own level or above
  - a BPF skeleton (*.skel.h) included outside the collector
  - a cycle in the folder-level graph, or among the headers themselves

    scripts/check-layers.py [--root DIR] [-v]

Exit 0 when the tree keeps its layers (with -v: the folder graph), 1 when
not, 2 on a usage error.
"""
import argparse
import os
import re
import sys

# The parts and their level: a part includes only lower levels (and itself).
# Parts on one level (collector, exporter) do not include each other.
LAYERS = {
    "core": 0,
    "collector": 1,
    "exporter": 1,
    "cmd": 2,
}
# Generated headers, found in build/ (-I$(OUTPUT)) or build/skel/.
GENERATED = (".pb-c.h", ".skel.h")
SKEL_PARTS = {"collector"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1)


def resolve(root, src_file, name):
    """(kind, part or None, path or None) for an include of src_file."""
    here = os.path.dirname(src_file)
    cand = os.path.normpath(os.path.join(here, name))
    if os.path.isfile(cand):
        return "src", cand
    if name.endswith(GENERATED):
        return "generated", None
    if os.path.isfile(os.path.join(root, "bpf", name)):
        return "bpf", None
    for d in ("src", os.path.join("src", "core")):
        cand = os.path.normpath(os.path.join(root, d, name))
        if os.path.isfile(cand):
            return "src", cand
    return None, None


def part_of(root, path):
    rel = os.path.relpath(path, os.path.join(root, "src"))
    parts = rel.split(os.sep)
    if len(parts) < 2 or parts[0] == "..":
        return None
    return parts[0]


def find_cycle(graph):
    """One cycle of graph (node -> set of nodes) as a list, or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = {n: WHITE for n in graph}
    stack = []

    def visit(n):
        color[n] = GREY
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if color.get(m, WHITE) == GREY:
                return stack[stack.index(m):] + [m]
            if color.get(m, WHITE) == WHITE:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        color[n] = BLACK
        return None

    for n in sorted(graph):
        if color[n] == WHITE:
            c = visit(n)
            if c:
                return c
    return None


def check(root, verbose):
    src = os.path.join(root, "src")
    problems = []
    if not os.path.isdir(src):
        return ["no src/ under %s" % root]
    files = []
    for entry in sorted(os.listdir(src)):
        p = os.path.join(src, entry)
        if os.path.isfile(p):
            problems.append("src/%s: a file directly in src/, outside every part "
                            "(folders: %s)" % (entry, ", ".join(LAYERS)))
            continue
        if entry not in LAYERS:
            problems.append("src/%s/: not a known part; add it to LAYERS in "
                            "scripts/check-layers.py and to the layer table of "
                            "docs/HACKING.md" % entry)
            continue
        for dirpath, dirnames, names in os.walk(p):
            dirnames.sort()
            for f in sorted(names):
                if f.endswith((".c", ".h")):
                    files.append(os.path.join(dirpath, f))

    folders = {p: set() for p in LAYERS if os.path.isdir(os.path.join(src, p))}
    headers = {}
    for path in files:
        rel = os.path.relpath(path, root)
        own = part_of(root, path)
        if own not in LAYERS:
            continue
        for line, name in includes(path):
            where = "%s:%d" % (rel, line)
            kind, target = resolve(root, path, name)
            if kind is None:
                problems.append('%s: "%s" resolves nowhere (another part\'s header '
                                'is named with its folder: "collector/collector.h")'
                                % (where, name))
                continue
            if name.endswith(".skel.h") and own not in SKEL_PARTS:
                problems.append('%s: "%s": BPF skeletons belong to the collector alone'
                                % (where, name))
            if kind != "src":
                continue
            to = part_of(root, target)
            if to is None or to not in LAYERS:
                problems.append('%s: "%s" is %s, outside every part'
                                % (where, name, os.path.relpath(target, root)))
                continue
            if path.endswith(".h"):
                headers.setdefault(path, set()).add(target)
            if to == own:
                continue
            folders[own].add(to)
            if LAYERS[to] >= LAYERS[own]:
                how = "up" if LAYERS[to] > LAYERS[own] else "sideways"
                problems.append('%s: "%s": %s (level %d) includes %s (level %d), %s'
                                % (where, name, own, LAYERS[own], to, LAYERS[to], how))

    cycle = find_cycle(folders)
    if cycle:
        problems.append("folder cycle: %s" % " -> ".join(cycle))
    cycle = find_cycle(headers)
    if cycle:
        problems.append("header cycle: %s"
                        % " -> ".join(os.path.relpath(h, root) for h in cycle))

    if verbose and not problems:
        for p in sorted(folders, key=lambda p: (-LAYERS[p], p)):
            print("%-10s (level %d) includes %s" % (p, LAYERS[p],
                  ", ".join(sorted(folders[p])) or "nothing outside itself"))
        print("%d files, %d parts" % (len(files), len(folders)))
    return problems


def main():
    ap = argparse.ArgumentParser(description="check the layers of src/")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(
                    os.path.abspath(__file__)), ".."), help="the tree (default: this one)")
    ap.add_argument("-v", action="store_true", help="print the folder graph")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    problems = check(root, a.v)
    for p in problems:
        print(p)
    if problems:
        print("check-layers: %d problem%s" % (len(problems), "s" if len(problems) > 1 else ""),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
