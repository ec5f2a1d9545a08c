#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks on Prometheus text scrapes and on the dashboards, for the 5x-*.sh tests.

  export_tools.py histograms SCRAPE...      bucket structure of every histogram
  export_tools.py families SCRAPE           family names, one a line
  export_tools.py get SCRAPE NAME [K=V...]  value of the one matching sample
  export_tools.py used DASHBOARD RULES      metric names the panels and rules use
  export_tools.py monotonic NAME K=V SCRAPE...   a counter never goes down
  export_tools.py panels DASHBOARD CATALOGUE TIME RATE_INTERVAL NAME=URL...
        every panel expression, variables substituted, evaluated at TIME on
        each Prometheus: no errors; panels on histograms non-empty on each

Exit 0 on success, 1 with a message on stderr otherwise.
"""
import json
import math
import re
import sys

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def die(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)


def parse(path):
    """[(family, type, name, labels, value)] in file order."""
    out, types = [], {}
    fam = None
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            types[name] = typ
            fam = name
            continue
        if line.startswith("#") or not line:
            continue
        m = LINE.match(line)
        if not m:
            die("%s:%d: not a sample line: %r" % (path, n, line))
        labels = {}
        body = m.group(3) or ""
        pos = 0
        while pos < len(body):
            lm = LABEL.match(body, pos)
            if not lm:
                die("%s:%d: bad labels %r" % (path, n, body))
            labels[lm.group(1)] = lm.group(2)
            pos = lm.end()
        v = m.group(4)
        val = {"+Inf": math.inf, "-Inf": -math.inf, "NaN": math.nan}.get(v)
        out.append((fam, types.get(fam), m.group(1), labels, float(v) if val is None else val))
    return out


def histograms(paths):
    checked = 0
    for path in paths:
        series = {}
        for fam, typ, name, labels, v in parse(path):
            if typ != "histogram":
                continue
            key = (fam, tuple(sorted((k, x) for k, x in labels.items() if k != "le")))
            s = series.setdefault(key, {"buckets": [], "sum": None, "count": None})
            if name == fam + "_bucket":
                le = labels["le"]
                s["buckets"].append((math.inf if le == "+Inf" else float(le), v, le))
            elif name == fam + "_sum":
                s["sum"] = v
            elif name == fam + "_count":
                s["count"] = v
            else:
                die("%s: sample %s in histogram %s" % (path, name, fam))
        for (fam, lbl), s in series.items():
            b = s["buckets"]
            where = "%s %s%s" % (path, fam, dict(lbl))
            if not b or b[-1][0] != math.inf:
                die("%s: no +Inf bucket last" % where)
            les = [x[0] for x in b]
            if les != sorted(les) or len(set(les)) != len(les):
                die("%s: le not strictly increasing: %s" % (where, [x[2] for x in b]))
            for (l1, c1, _), (l2, c2, t2) in zip(b, b[1:]):
                if c2 < c1:
                    die("%s: bucket le=%s (%g) below le=%g (%g): not cumulative" %
                        (where, t2, c2, l1, c1))
            if s["count"] is None or s["sum"] is None:
                die("%s: missing _sum or _count" % where)
            if s["count"] != b[-1][1]:
                die("%s: _count %g != +Inf bucket %g" % (where, s["count"], b[-1][1]))
            # powers of two: batch sizes 1..128, latency 2^k ns in seconds
            for le, _, txt in b[:-1]:
                k = math.log2(le * 1e9) if fam.endswith("_seconds") else math.log2(le)
                if abs(k - round(k)) > 1e-9:
                    die("%s: le=%s is not a power of two%s" %
                        (where, txt, " ns" if fam.endswith("_seconds") else ""))
            checked += 1
    print("histogram series checked: %d" % checked)


def get(path, name, want):
    hits = [v for _, _, n, l, v in parse(path)
            if n == name and all(l.get(k) == x for k, x in want.items())]
    if len(hits) != 1:
        die("%s: %d samples of %s%s" % (path, len(hits), name, want))
    print(repr(hits[0]) if hits[0] != int(hits[0]) else int(hits[0]))


def monotonic(name, want, paths):
    prev = None
    for path in paths:
        hits = [v for _, _, n, l, v in parse(path)
                if n == name and all(l.get(k) == x for k, x in want.items())]
        if len(hits) != 1:
            die("%s: %d samples of %s%s" % (path, len(hits), name, want))
        if prev is not None and hits[0] < prev:
            die("%s went down: %g -> %g in %s" % (name, prev, hits[0], path))
        prev = hits[0]
    print("%s%s monotonic over %d scrapes, last %g" % (name, want, len(paths), prev))


PROMQL_WORDS = {"sum", "by", "rate", "increase", "histogram_quantile", "histogram_sum",
                "histogram_count", "time", "or", "and",
                "unless", "without", "on", "ignoring", "group_left", "group_right", "le",
                "round", "abs", "max", "min", "avg", "count", "offset", "bool", "topk", "vector"}


def names_in(expr):
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)          # label values
    expr = re.sub(r'\{[^}]*\}', '', expr)                      # matchers
    expr = re.sub(r'\[[^\]]*\]', '', expr)                     # ranges
    expr = re.sub(r'\b[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?\b', '', expr)  # numbers (1e9)
    expr = re.sub(r'\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)', '', expr)
    return {t for t in re.findall(r'[a-zA-Z_:][a-zA-Z0-9_:]*', expr)
            if t not in PROMQL_WORDS and not t.startswith("$") and ":" not in t
            and not re.match(r'^[0-9]', t)}


def used(dash_path, rules_path):
    import yaml
    names, recorded = set(), set()
    dash = json.load(open(dash_path))

    def walk(o):
        if isinstance(o, dict):
            if "expr" in o and isinstance(o["expr"], str):
                names.update(names_in(o["expr"].replace("$__rate_interval", "1m")))
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(dash.get("panels", []))
    for var in dash.get("templating", {}).get("list", []):
        q = var.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        m = re.match(r'label_values\((.*),\s*\w+\)$', q or "")
        if m:
            names.update(names_in(m.group(1)))
    for g in yaml.safe_load(open(rules_path))["groups"]:
        for r in g["rules"]:
            if "record" in r:
                recorded.add(r["record"])
            names.update(names_in(r["expr"]))
    bad = [n for n in names if not n.startswith("devmemtop_")]
    if bad:
        die("not devmemtop metrics (or the extractor misread an expression): %s" % bad)
    for n in sorted(names):
        print(n)


def panels(dash_path, catalogue, at, rate_interval, servers):
    """Evaluate every panel's PromQL on every server (HTTP API, instant at `at`)."""
    import urllib.parse
    import urllib.request
    hists = {l.split()[0] for l in open(catalogue) if l.split()[1:2] == ["histogram"]}

    def histogram_names(expr):
        out = set()
        for n in names_in(expr):
            base = re.sub(r'_(bucket|sum|count)$', '', n)
            if n in hists or base in hists:
                out.add(n)
        return out

    def query(url, expr):
        q = urllib.parse.urlencode({"query": expr, "time": at})
        try:
            r = json.load(urllib.request.urlopen(url + "/api/v1/query?" + q, timeout=10))
        except urllib.error.HTTPError as e:
            r = json.load(e)
        if r.get("status") != "success":
            die("%s: %s: %s" % (url, expr, r.get("error", r)))
        return r["data"]["result"]

    def finite(s):
        return "histogram" in s or math.isfinite(float(s["value"][1]))

    n_hist = 0
    for p in json.load(open(dash_path))["panels"]:
        exprs = [t["expr"] for t in p.get("targets", [])]
        if not exprs:
            continue
        exprs = [e.replace("$__rate_interval", rate_interval).replace("$instance", ".*")
                 .replace("$ifname", ".*") for e in exprs]
        used_h = set().union(*(histogram_names(e) for e in exprs))
        n_hist += bool(used_h)
        line = []
        for name, url in servers:
            res = [s for e in exprs for s in query(url, e)]
            good = [s for s in res if finite(s)]
            # a TX panel has data only where a TX binding is (7.x bind-tx):
            # empty is right on a server whose data has none, and checked
            # wherever one is
            tx_only = used_h and all("_tx_" in n for n in used_h)
            if tx_only and not good and \
                    not query(url, 'devmemtop_binding_info{direction="tx"}'):
                line.append("%s %d (no TX binding in the data)" % (name, len(res)))
                continue
            # a zcrx panel the same, where an io_uring zcrx pool is (6.15+)
            zcrx_only = used_h and all("_zcrx_" in n for n in used_h)
            if zcrx_only and not good and \
                    not query(url, 'devmemtop_page_pool_info{kind="io_uring"}'):
                line.append("%s %d (no zcrx pool in the data)" % (name, len(res)))
                continue
            if used_h and not good:
                die("panel '%s' (%s) has no finite result on %s at %s: %s"
                    % (p["title"], ", ".join(sorted(used_h)), name, at, exprs))
            line.append("%s %d (%d finite)" % (name, len(res), len(good)))
        print("%s panel '%s': %s" % ("histogram" if used_h else "other", p["title"], ", ".join(line)))
    if not n_hist:
        die("no histogram panel found in " + dash_path)


def main(a):
    if len(a) >= 2 and a[0] == "histograms":
        histograms(a[1:])
    elif len(a) == 2 and a[0] == "families":
        for f in sorted({x[0] for x in parse(a[1])}):
            print(f)
    elif len(a) >= 3 and a[0] == "get":
        get(a[1], a[2], dict(x.split("=", 1) for x in a[3:]))
    elif len(a) == 3 and a[0] == "used":
        used(a[1], a[2])
    elif len(a) >= 6 and a[0] == "panels":
        panels(a[1], a[2], a[3], a[4], [x.split("=", 1) for x in a[5:]])
    elif len(a) >= 4 and a[0] == "monotonic":
        monotonic(a[1], dict(x.split("=", 1) for x in a[2].split(",") if x), a[3:])
    else:
        die(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
