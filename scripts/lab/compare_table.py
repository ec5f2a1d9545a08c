#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""compare_table.py OUT [--kernel-label LABEL]: the lab's compare verdicts as
one markdown page, OUT/compare.md, written by scripts/lab/compare.sh from
the OUT/compare-*.json and OUT/autorelease-*.json that `devmemtop compare`
wrote. The page is the evidence the docs link to (docs/results/): it names
the command that made it, the kernels and the machine, and gives every
verdict with its interval on the metric's own scale (ratio for a positive
metric, issue 39), never a figure typed by hand.

Exit status 0 when the page was written, 2 on bad input (said in one line).
"""
import glob
import json
import os
import platform
import sys
import time

# what each comparison is, for the reader of the page
WHAT = {
    "kernels": "baseline vs patched kernel, scenario `repeat` (5 runs of "
               "16 MiB a kernel; the kernels boot one after the other)",
    "sweep": "rx-page-size A vs B on the patched kernel, scenario `sweep` "
             "(5 runs of 48 MiB a size, sizes alternating)",
    "autorelease": "SO_DEVMEM_AUTORELEASE on (6.12's behaviour) vs off, "
                   "scenario `autorelease-measure` (patched kernel)",
}


def fmt(v, spec="%.3g"):
    return "-" if v is None else spec % v


def row(name, m):
    """One verdict: its scale says how to read the interval."""
    if m.get("change_scale") == "ratio" and m.get("ratio_ci"):
        lo, hi = m["ratio_ci"]
        iv = "x%s [%s, %s]" % (fmt(m.get("ratio")), fmt(lo), fmt(hi))
    elif m.get("ci"):
        iv = "%+.1f %% [%+.1f, %+.1f]" % (m["change"], m["ci"][0], m["ci"][1])
    else:
        iv = "-"
    agg = m.get("agg") or ""
    metric = m["metric"] + (":" + agg if agg and agg != "value" else "")
    return "| %s | `%s` | **%s** | %s | %s | %s | %d / %d | %s / %s |" % (
        name, metric, m["verdict"], fmt(m.get("change"), "%+.1f %%"), iv,
        fmt(m.get("p")), m["base"]["n"], m["cand"]["n"],
        fmt(m["base"].get("median")), fmt(m["cand"].get("median")))


def order(item):
    """sweep-4k-16k before sweep-16k-32k: by the sizes, then the name."""
    parts = item[0].split("-")
    sizes = [int(p[:-1]) for p in parts if p[:-1].isdigit() and p.endswith("k")]
    return (sizes, item[0])


def kernel_of(out, side):
    """The kernel release the guest ran: avail's uname, else the guest's
    first console line ("LAB: init at uptime ..., kernel RELEASE"), which
    every run has (a run of repeat alone has no avail)."""
    for p in sorted(glob.glob(os.path.join(out, side, "*", "uname"))):
        with open(p) as f:
            return f.read().strip()
    try:
        with open(os.path.join(out, side, "console.log"), errors="replace") as f:
            for line in f:
                if "LAB: init at uptime" in line and ", kernel " in line:
                    return line.rsplit(", kernel ", 1)[1].strip()
    except OSError:
        pass
    return None


def repeat_chunks(out, side, series):
    """The DMA chunks of the repeat runs' bindings as devmem-traffic measured
    them (memfd_phys_runs: the memfd's physically contiguous runs, one
    chunk each where udmabuf merges them, 7.x), with their net_iov counts:
    "N-M chunks for K net_iovs", or None without the figures."""
    runs, niovs = [], set()
    for p in sorted(glob.glob(os.path.join(out, side, "repeat", "run-*", "rx.json"))):
        try:
            with open(p) as f:
                d = json.loads(f.read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            continue
        if d.get("memfd_phys_runs"):
            runs.append(d["memfd_phys_runs"])
        if d.get("dmabuf_size") and d.get("niov_size"):
            niovs.add(d["dmabuf_size"] // d["niov_size"])
    if not runs:
        return None
    span = "%d" % runs[0] if min(runs) == max(runs) else "%d-%d" % (min(runs), max(runs))
    n = "/".join(str(v) for v in sorted(niovs)) or "?"
    if series == "6.12":
        return ("one per page, %s for %s net_iovs (6.12's udmabuf maps one sg entry per page; "
                "the memfd had %s physically contiguous runs)" % (n, n, span))
    return ("%s for %s net_iovs over %d runs (the memfd's physically contiguous runs, "
            "measured by devmem-traffic; %s's udmabuf maps one sg entry per run)"
            % (span, n, len(runs), series))


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        print("usage: compare_table.py OUT", file=sys.stderr)
        return 2
    out = argv[1]
    files = sorted(glob.glob(os.path.join(out, "compare-*.json")) +
                   glob.glob(os.path.join(out, "autorelease-*.json")))
    groups = {}
    for f in files:
        name = os.path.basename(f)[:-len(".json")]
        name = name[len("compare-"):] if name.startswith("compare-") else name
        try:
            with open(f) as fh:
                d = json.load(fh)
            metrics = d["metrics"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            print("compare_table.py: %s: not a devmemtop compare JSON (%s)" % (f, e),
                  file=sys.stderr)
            return 2
        groups.setdefault(name.split("-")[0], []).append((name, metrics))
    if not groups:
        print("compare_table.py: no compare-*.json in %s (did compare.sh run?)" % out,
              file=sys.stderr)
        return 2

    series = os.environ.get("DEVMEMTOP_LAB_SERIES") or "6.12"
    # the command first (test 36 runs its first word), the series after it
    made_by = "`scripts/lab/vmtest.sh`" if series == "6.12" else \
        "`scripts/lab/vmtest.sh --scenario repeat` with `DEVMEMTOP_LAB_SERIES=%s`" % series
    lines = [
        "# The lab's compare verdicts" + ("" if series == "6.12" else " (Linux %s)" % series),
        "",
        "Made by: %s (do not edit: run it again). " % made_by +
        "`scripts/lab/compare.sh` runs `devmemtop compare` on the lab's repeated runs "
        "and `scripts/lab/compare_table.py` writes this page from its JSON; "
        "how to read a verdict: [docs/compare.md](../compare.md).",
        "",
        "| fact | value |",
        "|---|---|",
        "| compared | %s (the compare JSON's time) |"
        % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(max(map(os.path.getmtime, files)))),
        "| baseline kernel | `%s` |" % (kernel_of(out, "baseline") or "-"),
        "| patched kernel | `%s` |" % (kernel_of(out, "patched") or "-"),
    ]
    for side in ("baseline", "patched"):
        ch = repeat_chunks(out, side, series)
        if ch:
            lines.append("| %s binding's DMA chunks (`repeat`) | %s |" % (side, ch))
    lines += [
        "| host | %d cores, kernel %s; the guests run under QEMU TCG, so CPU "
        "figures are the emulator's, useful side by side only |"
        % (os.cpu_count() or 0, platform.release()),
        "",
        "Every metric here is positive, so the interval is the ratio "
        "candidate / base with its 95 % interval (`xR [lo, hi]`); p is the "
        "exact Mann-Whitney U test of 5 runs against 5. A regressed or "
        "inconclusive verdict is a finding, not a lab failure.",
    ]
    for g in ("kernels", "sweep", "autorelease"):
        if g not in groups:
            continue
        lines += ["", "## %s" % g, "", WHAT[g], "",
                  "| comparison | metric | verdict | change of the median | interval "
                  "| p | n base / cand | median base / cand |",
                  "|---|---|---|---|---|---|---|---|"]
        for name, metrics in sorted(groups[g], key=order):
            lines += [row(name, m) for m in metrics]
    path = os.path.join(out, "compare.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("compare: table written to %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
