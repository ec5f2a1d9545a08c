#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a devmemtop HTML page: the source file for anything that could
fetch or run (script, src/href, url(), @import), and the DOM Chromium built
from it (--dump-dom) for the charts, bars and rows it must have.

  html_check.py PAGE.html DOM.html [--min-points N] [--baseline]
                [--gate PASS FAIL] [--pool ID]

Prints "refills POOL N" for --pool (the count in that pool's histogram
caption) so the caller can compare it with devmemtop report's table.
"""
import argparse
import re
import sys
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elems = []          # (tag, attrs dict, text collected inside)
        self.stack = []

    def handle_starttag(self, tag, attrs):
        e = [tag, dict(attrs), ""]
        self.elems.append(e)
        if tag not in ("meta", "br", "line", "rect", "circle", "polyline", "link", "img"):
            self.stack.append(e)

    def handle_startendtag(self, tag, attrs):
        self.elems.append([tag, dict(attrs), ""])

    def handle_endtag(self, tag):
        while self.stack:
            e = self.stack.pop()
            if e[0] == tag:
                break

    def handle_data(self, data):
        for e in self.stack:
            e[2] += data


def cls(e):
    return e[1].get("class", "").split()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("dom")
    ap.add_argument("--min-points", type=int, default=2)
    ap.add_argument("--baseline", action="store_true")
    ap.add_argument("--gate", nargs=2, type=int)
    ap.add_argument("--pool")
    a = ap.parse_args()
    errs = []

    src = open(a.page, encoding="utf-8").read()
    for pat, what in ((r"<script", "a script"), (r"\s(src|href)\s*=", "a src/href"),
                      (r"url\(", "a CSS url()"), (r"@import", "a CSS @import"),
                      (r"<(iframe|object|embed|link)\b", "an external resource element")):
        if re.search(pat, src, re.I):
            errs.append("page has %s" % what)
    # the only URL is the SVG namespace name, which is never fetched
    for u in re.findall(r"https?://[^\"'\s<]+", src):
        if u != "http://www.w3.org/2000/svg":
            errs.append("page mentions URL %s" % u)

    d = Dom()
    d.feed(open(a.dom, encoding="utf-8").read())
    E = d.elems
    if not any(e[0] == "body" for e in E):
        errs.append("Chromium's DOM has no body")
    series = {e[1].get("data-metric"): e for e in E if e[0] == "svg" and "series" in cls(e)}
    for m in ("occupancy", "holds_rate", "inflight"):
        if m not in series:
            errs.append("no time series chart for %s" % m)
    hr = series.get("holds_rate")
    if hr and int(hr[1].get("data-points", 0)) < a.min_points:
        errs.append("holds_rate has %s points, want >= %d" % (hr[1].get("data-points"),
                                                               a.min_points))
    lines = [e for e in E if e[0] == "polyline" and "cand" in cls(e)]
    if not lines or max(len(e[1].get("points", "").split()) for e in lines) < a.min_points:
        errs.append("no candidate line with >= %d points" % a.min_points)
    hists = [e for e in E if e[0] == "svg" and "hist" in cls(e)]
    if not any(h[1].get("data-hist") == "refill:all" for h in hists):
        errs.append("no refill:all histogram")
    bars = [e for e in E if e[0] == "rect" and "bar" in cls(e)]
    if not any("cand" in cls(b) for b in bars):
        errs.append("no candidate bars")
    nbars = sum(int(h[1].get("data-bars", 0)) * (2 if h[1].get("data-overlay") == "1" else 1)
                for h in hists)
    if len(bars) != nbars:
        errs.append("%d bars drawn, histograms declare %d" % (len(bars), nbars))
    if a.baseline:
        if not any("base" in cls(b) for b in bars):
            errs.append("--baseline: no baseline bars")
        if not any(e[0] == "polyline" and "base" in cls(e) for e in E):
            errs.append("--baseline: no baseline line")
    if a.gate:
        rows = [e for e in E if e[0] == "tr" and set(cls(e)) & {"pass", "fail", "skip", "error"}]
        npass = sum(1 for r in rows if "pass" in cls(r))
        nfail = sum(1 for r in rows if "fail" in cls(r))
        if (npass, nfail) != tuple(a.gate):
            errs.append("thresholds table: %d pass %d fail rows, want %d %d" %
                        (npass, nfail, *a.gate))
        v = [e for e in E if e[1].get("id") == "verdict"]
        want = "PASS" if a.gate[1] == 0 else "FAIL"
        if not v or not v[0][2].startswith(want):
            errs.append("verdict is not %s: %s" % (want, v[0][2] if v else None))
    if not any(e[1].get("id") == "availability" for e in E):
        errs.append("no availability table")
    facts = [e for e in E if e[0] == "table" and "facts" in cls(e)]
    if not facts or "kernel" not in facts[0][2] or "attach mode" not in facts[0][2]:
        errs.append("no facts table with kernel and attach mode")
    if a.pool:
        n = None
        # the figure's caption follows its svg in document order
        for i, e in enumerate(E):
            if e[0] == "svg" and e[1].get("data-hist") == "refill:pool-%s" % a.pool:
                for c in E[i:]:
                    if c[0] == "figcaption":
                        m = re.search(r"(\d+) refills", c[2])
                        n = m.group(1) if m else None
                        break
                break
        if n is None:
            errs.append("no refill histogram caption for pool %s" % a.pool)
        else:
            print("refills", a.pool, n)
    for e in errs:
        print("html_check: %s" % e)
    print("html_check: %d series, %d histograms, %d bars%s" %
          (len(series), len(hists), len(bars), ": OK" if not errs else ""))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
