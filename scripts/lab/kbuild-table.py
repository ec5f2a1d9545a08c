#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""kbuild-table.py [--cache DIR] --out TABLE.md

What each lab kernel in the kernel cache took to build, from the stamps
scripts/lab/kbuild.sh writes when it builds one (.lab-stamp: base, flavor,
build_seconds, and since kbuild records it, whether the build started from
an empty work tree (cold) or from the previous build's objects
(incremental, ccache beside both)). The cold budget of make check is the
sum of the cold builds plus the warm run (docs/HACKING.md); this page is
where that sum comes from, made again by running this again.

Exit status: 0, or 2 with one line on stderr when the cache holds no
built kernel or an argument is wrong.
"""
import argparse
import datetime
import glob
import os
import sys


def stamp(path):
    """The key=value lines of one .lab-stamp ('patch' repeats: counted)."""
    d = {"patches": 0}
    with open(path) as f:
        for line in f:
            k, sep, v = line.rstrip("\n").partition("=")
            if not sep:
                continue
            if k == "patch":
                d["patches"] += 1
            else:
                d[k] = v
    d["mtime"] = os.path.getmtime(os.path.join(os.path.dirname(path), "bzImage"))
    return d


def main():
    ap = argparse.ArgumentParser(description="lab kernel build times from the kernel cache")
    ap.add_argument("--cache", default=os.environ.get("DEVMEMTOP_CACHE", "/var/cache/devmemtop"))
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows = []
    for p in sorted(glob.glob(os.path.join(a.cache, "kbuild-*-*", ".lab-stamp"))):
        try:
            s = stamp(p)
            int(s["build_seconds"])
        except (OSError, KeyError, ValueError) as e:
            print("kbuild-table.py: %s: not a kbuild stamp (%s)" % (p, e), file=sys.stderr)
            return 2
        rows.append(s)
    if not rows:
        print("kbuild-table.py: no built lab kernel in %s (scripts/lab/kbuild.sh builds one)" % a.cache,
              file=sys.stderr)
        return 2
    rows.sort(key=lambda s: s["mtime"])
    cold = [s for s in rows if s.get("build") == "cold"]
    out = []
    out.append("# Lab kernel builds")
    out.append("")
    out.append("Made by: `scripts/lab/kbuild-table.py --out docs/results/lab-kernel-builds.md` "
               "(do not edit: run it again). It reads the stamps `scripts/lab/kbuild.sh` writes "
               "into each kernel it builds in the kernel cache (`%s`)." % a.cache)
    out.append("")
    out.append("| fact | value |")
    out.append("|---|---|")
    out.append("| written | %s UTC |" % datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"))
    out.append("| machine | %d cores, kernel %s |" % (os.cpu_count() or 0, os.uname().release))
    if cold:
        tot = sum(int(s["build_seconds"]) for s in cold)
        out.append("| cold builds in the cache | %d, %d s in all (%d min) |" % (len(cold), tot, tot // 60))
    out.append("")
    out.append("| kernel | flavor | patches | build | seconds | built (UTC) |")
    out.append("|---|---|---|---|---|---|")
    for s in rows:
        when = datetime.datetime.utcfromtimestamp(s["mtime"]).strftime("%Y-%m-%d %H:%M")
        out.append("| %s | %s%s | %d | %s | %s | %s |" % (
            s.get("base", "?"), s.get("flavor", "?"),
            "" if s.get("variant", "none") == "none" else " (" + s["variant"] + ")",
            s["patches"], s.get("build", "not recorded"), s["build_seconds"], when))
    out.append("")
    out.append("A build is *cold* when its work tree was new (every object compiled; "
               "ccache may still hit if it holds objects of an earlier tree), "
               "*incremental* when it started from the last build's objects in the same work tree. "
               "The machine's other work during a build is not recorded: the seconds are wall time.")
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, a.out)
    print("kbuild-table.py: %s (%d kernels)" % (a.out, len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
