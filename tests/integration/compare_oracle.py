#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""devmemtop compare against scipy on generated data (tests/integration/90).

U statistic and p-value: scipy.stats.mannwhitneyu, method "exact" where
devmemtop says it used the exact distribution, "asymptotic" (tie and
continuity corrected) where it says normal. The Hodges-Lehmann interval:
recomputed here, its ranks from the null distribution of U counted with
Python integers as Gaussian binomial coefficients (a different algorithm
from stats.c's recursion). Welch: scipy.stats.ttest_ind_from_stats. Holm:
recomputed here. Then an A/A run and an injected shift through the CLI.
--paired: scipy.stats.wilcoxon (zeros dropped, "exact" where devmemtop says
exact, else "approx" with tie and continuity correction); the paired
Hodges-Lehmann interval recomputed here from the Walsh averages and the
signed-rank null distribution counted with Python integers; and a paired
A/A run and shift with a drift shared by both runs of a pair.
The two scales (issue 39): --values is a positive quantity unless
--scale difference says otherwise, so its interval is the Hodges-Lehmann
interval of ln values (recomputed here the same way), 100 (e^x - 1) in
percent, never below -100 %; log-normal data whose base spreads widely
(the lab's latency across a batch change) checks that, the interval's
coverage of the true ratio, and a bootstrap of the ratio of medians.

usage: compare_oracle.py DEVMEMTOP WORKDIR
"""
import json
import math
import os
import subprocess
import sys

import numpy as np
from scipy import stats

DMT, WORK = sys.argv[1], sys.argv[2]
worst = {}


def note(what, diff):
    worst[what] = max(worst.get(what, 0.0), abs(diff))


def run_values(a, b, better="lower", extra=()):
    pa, pb, pj = (os.path.join(WORK, n) for n in ("a.txt", "b.txt", "out.json"))
    with open(pa, "w") as f:
        f.write("\n".join(repr(float(x)) for x in a) + "\n")
    with open(pb, "w") as f:
        f.write("\n".join(repr(float(x)) for x in b) + "\n")
    r = subprocess.run([DMT, "compare", "--values", "--better", better, "--json", pj,
                        *extra, pa, "--", pb], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"compare exited {r.returncode}: {r.stderr.strip()}")
    with open(pj) as f:
        return json.load(f)["metrics"][0], r.returncode


def gauss_binom_counts(m, n):
    """Coefficients of the Gaussian binomial [m+n choose m]_q: counts of U = 0..mn."""
    # product over i=1..m of (1 - q^(n+i)) / (1 - q^i), exact in integers
    poly = [1]
    for i in range(1, m + 1):
        # multiply by (1 - q^(n+i))
        res = poly + [0] * (n + i)
        for k, c in enumerate(poly):
            res[k + n + i] -= c
        # divide by (1 - q^i): running sum with stride i
        for k in range(i, len(res)):
            res[k] += res[k - i]
        poly = res[: m * n + 1] if len(res) > m * n + 1 else res
    return poly[: m * n + 1]


def hl_interval(a, b, conf=0.95):
    d = np.sort(np.subtract.outer(np.asarray(b), np.asarray(a)).ravel())
    na, nb, nd = len(a), len(b), len(d)
    if na <= 50 and nb <= 50:
        counts = gauss_binom_counts(na, nb)
        total = math.comb(na + nb, na)
        assert sum(counts) == total
        tail, cum, k = (1 - conf) / 2, 0, 0
        for u, c in enumerate(counts):
            if (cum + c) / total > tail * (1 + 1e-12):
                break
            cum += c
            k = u + 1
    else:
        z = stats.norm.ppf(1 - (1 - conf) / 2)
        c = nd / 2 - z * math.sqrt(nd * (na + nb + 1) / 12)
        k = math.floor(c) if c >= 1 else 0
    return float(np.median(d)), float(d[k - 1]), float(d[nd - k])


def check_u(rng):
    cases = []
    for na, nb in [(4, 4), (5, 7), (6, 6), (8, 8), (10, 10), (12, 9), (20, 25), (50, 50)]:
        for shift in (0.0, 0.3, 1.0):
            cases.append((na, nb, shift, False))
    for na, nb in [(10, 10), (15, 12), (60, 70), (200, 180)]:
        for shift in (0.0, 0.5):
            cases.append((na, nb, shift, True))
            cases.append((na, nb, shift, False))
    n_exact = n_normal = 0
    for na, nb, shift, ties in cases:
        a = 100 * np.exp(0.1 * rng.standard_normal(na))
        b = 100 * np.exp(0.1 * rng.standard_normal(nb) + shift * 0.1)
        if ties:  # a log2-bucketed quantile or a count: many equal values
            a, b = np.round(a / 5) * 5, np.round(b / 5) * 5
        for scale in ("ratio", "difference"):
            m, _ = run_values(a, b, extra=("--scale", scale))
            if m["change_scale"] != scale:
                sys.exit(f"--scale {scale}: change_scale {m['change_scale']}")
            check_one_u(a, b, m, scale)
        exact = m["test"] == "mann-whitney exact"
        n_exact += exact
        n_normal += not exact
    print(f"U test: {len(cases)} comparisons ({n_exact} exact, {n_normal} normal), "
          f"each on both scales")


def check_one_u(a, b, m, scale):
    """One --values comparison against scipy and the recomputed interval."""
    na, nb = len(a), len(b)
    exact = m["test"] == "mann-whitney exact"
    has_ties = len(np.unique(np.concatenate([a, b]))) < na + nb
    if exact != (not has_ties and na <= 50 and nb <= 50):
        sys.exit(f"n={na},{nb} ties={has_ties}: devmemtop used {m['test']}")
    ref = stats.mannwhitneyu(a, b, alternative="two-sided",
                             method="exact" if exact else "asymptotic")
    note("U", m["u"] - ref.statistic)
    note("p exact" if exact else "p normal", m["p"] - ref.pvalue)
    med = float(np.median(a))
    if scale == "ratio":
        est, lo, hi = hl_interval(np.log(a), np.log(b))
        note("ratio interval (%)", max(abs(m["ci"][0] - 100 * math.expm1(lo)),
                                       abs(m["ci"][1] - 100 * math.expm1(hi))))
        note("ratio", max(abs(m["ratio_ci"][0] - math.exp(lo)),
                          abs(m["ratio_ci"][1] - math.exp(hi)),
                          abs(m["ratio"] - math.exp(est))))
    else:
        est, lo, hi = hl_interval(a, b)
        note("relative interval (%)", max(abs(m["ci"][0] - 100 * lo / med),
                                          abs(m["ci"][1] - 100 * hi / med)))
    note("HL estimate", m["shift"] - est)
    note("HL interval", max(abs(m["shift_ci"][0] - lo), abs(m["shift_ci"][1] - hi)))
    note("base median", m["base"]["median"] - med)
    note("base sd", m["base"]["sd"] - float(np.std(a, ddof=1)))


def walsh_interval(d, conf=0.95):
    n = len(d)
    w = np.sort(np.array([(d[i] + d[j]) / 2 for i in range(n) for j in range(i, n)]))
    nw = len(w)
    if n <= 50:
        counts = [1] + [0] * (n * (n + 1) // 2)
        for k in range(1, n + 1):
            for s in range(len(counts) - 1, k - 1, -1):
                counts[s] += counts[s - k]
        tail, cum, k = (1 - conf) / 2, 0, 0
        for c in counts:
            if (cum + c) / 2 ** n > tail * (1 + 1e-12):
                break
            cum += c
            k += 1
    else:
        z = stats.norm.ppf(1 - (1 - conf) / 2)
        c = nw / 2 - z * math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        k = math.floor(c) if c >= 1 else 0
    return float(np.median(w)), float(w[k - 1]), float(w[nw - k])


def check_paired(rng):
    cases = []
    for n in (6, 8, 10, 20, 50, 60, 200):
        for shift in (0.0, 0.3, 1.0):
            cases.append((n, shift, False, True))
    for n in (10, 30, 120):
        cases.append((n, 0.3, True, True))      # tied |d| and zero differences
        cases.append((n, 0.3, False, False))    # values around 0: cand - base
    n_exact = n_normal = 0
    for n, shift, ties, positive in cases:
        drift = rng.standard_normal(n)          # shared by both runs of a pair
        if positive:
            a = 100 * np.exp(0.3 * drift + 0.05 * rng.standard_normal(n))
            b = 100 * np.exp(0.3 * drift + 0.05 * rng.standard_normal(n) + 0.05 * shift)
        else:
            a = drift + 0.1 * rng.standard_normal(n)
            b = drift + 0.1 * rng.standard_normal(n) + 0.1 * shift
        if ties:
            a, b = np.round(a / 5) * 5, np.round(b / 5) * 5
        m, _ = run_values(a, b, extra=("--paired",) if positive else
                          ("--paired", "--scale", "difference"))
        if m["change_scale"] != ("ratio" if positive else "difference"):
            sys.exit(f"paired n={n}: change_scale {m['change_scale']}")
        # a ratio and its inverse give the same |d| to the bit, as in devmemtop
        d = np.where(b >= a, np.log(b / a), -np.log(a / b)) if positive else b - a
        nz = d[d != 0]
        exact = m["test"] == "wilcoxon signed-rank exact"
        has_ties = len(np.unique(np.abs(nz))) < len(nz)
        if m["shift_of"] != ("ln(cand/base)" if positive else "cand-base"):
            sys.exit(f"paired n={n}: shift of {m['shift_of']}")
        if exact != (not has_ties and len(nz) <= 50):
            sys.exit(f"paired n={n} ties={has_ties}: devmemtop used {m['test']}")
        ref = stats.wilcoxon(d, zero_method="wilcox", correction=not exact,
                             method="exact" if exact else "approx")
        ranks = stats.rankdata(np.abs(nz))
        note("W+", m["w_plus"] - float(ranks[nz > 0].sum()))
        note("paired p exact" if exact else "paired p normal", m["p"] - ref.pvalue)
        n_exact += exact
        n_normal += not exact
        est, lo, hi = walsh_interval(d)
        note("paired HL estimate", m["shift"] - est)
        note("paired HL interval", max(abs(m["shift_ci"][0] - lo), abs(m["shift_ci"][1] - hi)))
        if positive:
            note("paired ratio interval (%)", max(abs(m["ci"][0] - 100 * math.expm1(lo)),
                                                  abs(m["ci"][1] - 100 * math.expm1(hi))))
    print(f"signed-rank test: {len(cases)} paired comparisons ({n_exact} exact, "
          f"{n_normal} normal)")


def paired_aa_and_shift(rng, trials=200, n=10):
    """Rounds whose common drift (30 %) swamps the unpaired test."""
    fr = det = 0
    for shift in (0.0, 0.03):
        for _ in range(trials):
            drift = np.exp(0.3 * rng.standard_normal(n))
            a = 1000 * drift * np.exp(0.01 * rng.standard_normal(n))
            b = 1000 * drift * np.exp(0.01 * rng.standard_normal(n) + shift)
            m, rc = run_values(a, b, extra=("--paired", "--noise", "1"))
            if shift == 0:
                fr += m["verdict"] == "regressed"
                if (m["verdict"] == "regressed") != (rc == 1):
                    sys.exit(f"exit status {rc} does not match verdict {m['verdict']}")
            else:
                det += m["verdict"] == "regressed"
    print(f"paired A/A through the CLI: {trials} comparisons of {n} pairs, drift 30 % "
          f"shared, 1 % noise: {fr} false regressions ({100 * fr / trials:.1f}%, goal <= 5%)")
    print(f"paired injected +3% shift: {det}/{trials} detected ({100 * det / trials:.1f}%, "
          f"goal >= 80%)")
    return fr / trials, det / trials


def check_ratio_scale(rng, trials=200):
    """Issue 39: a positive metric's interval never falls below -100 %.

    The lab's case: a base that spreads widely (sigma 0.8 in ln, latency
    across a batch-size change) against a candidate 50 times lower. The
    difference scale gives a lower end below -100 % there; the ratio scale
    cannot. Coverage: the share of 95 % intervals that hold the true
    ratio (log-normal, shift known). Bootstrap: the percentile interval of
    the ratio of medians (an independent estimator) must overlap ours and
    hold our estimate's neighbourhood."""
    below = cover = boot_ok = 0
    for i in range(trials):
        n = 5 + i % 6
        true = 0.02 if i % 2 else 1.3
        a = 1000 * np.exp(0.8 * rng.standard_normal(n))
        b = 1000 * true * np.exp(0.8 * rng.standard_normal(n))
        m, _ = run_values(a, b)
        if m["change_scale"] != "ratio" or m["ci"][0] <= -100 or m["change"] <= -100:
            sys.exit(f"ratio scale: {m['change_scale']} {m['change']} {m['ci']}")
        d, _ = run_values(a, b, extra=("--scale", "difference"))
        below += d["ci"][0] < -100
        cover += m["ratio_ci"][0] <= true <= m["ratio_ci"][1]
        if i < 40:
            idx_a = rng.integers(0, n, size=(2000, n))
            idx_b = rng.integers(0, n, size=(2000, n))
            r = np.median(b[idx_b], axis=1) / np.median(a[idx_a], axis=1)
            blo, bhi = np.percentile(r, [2.5, 97.5])
            boot_ok += blo <= m["ratio_ci"][1] and m["ratio_ci"][0] <= bhi and \
                blo / 2 <= m["ratio"] <= bhi * 2
    print(f"ratio scale: {trials} log-normal comparisons, base spread 80 % (ln sd 0.8), "
          f"5-10 runs a side: every interval above -100 %; the difference scale's lower "
          f"end below -100 % in {below}; 95 % intervals holding the true ratio: "
          f"{cover}/{trials} ({100 * cover / trials:.1f}%); bootstrap of the ratio of "
          f"medians agrees in {boot_ok}/40")
    if below == 0:
        sys.exit("the wide-base case never showed the difference scale's defect")
    if cover < 0.9 * trials or boot_ok < 38:
        sys.exit("ratio intervals: coverage below 90 % or the bootstrap disagrees")
    # a run at 0 of a positive metric: no ln; the difference scale, cut at -100 %
    a = np.array([50.0, 400, 30, 900, 60, 700])
    b = np.array([0.0, 2, 1, 3, 2, 4])
    for extra in ((), ("--paired",)):
        m, _ = run_values(a, b, extra=extra)
        if m["change_scale"] != "difference" or "scale_reason" not in m or \
                m["ci"][0] < -100 or not m["ci_truncated"]:
            sys.exit(f"zero value {extra}: {m['change_scale']} {m['ci']} "
                     f"{m.get('scale_reason')}")
    # a negative number is not a positive quantity: one line, exit 2
    pa, pb = os.path.join(WORK, "neg_a.txt"), os.path.join(WORK, "neg_b.txt")
    with open(pa, "w") as f:
        f.write("1\n-2\n3\n4\n")
    with open(pb, "w") as f:
        f.write("1\n2\n3\n4\n")
    r = subprocess.run([DMT, "compare", "--values", pa, "--", pb], capture_output=True,
                       text=True)
    if r.returncode != 2 or len(r.stderr.splitlines()) != 1:
        sys.exit(f"negative value on the ratio scale: exit {r.returncode}, {r.stderr!r}")
    print("zero values: difference scale, cut at -100 %; a negative value: "
          + r.stderr.strip())


def holm(p):
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, run = [0.0] * len(p), 0.0
    for r, i in enumerate(order):
        run = max(run, min(1.0, (len(p) - r) * p[i]))
        out[i] = run
    return out


def check_welch(rng):
    rows = []
    for i in range(12):
        n1, n2 = int(rng.integers(2, 40)), int(rng.integers(2, 40))
        m1, s1 = float(rng.uniform(10, 1000)), float(rng.uniform(0.1, 200))
        m2, s2 = m1 * float(rng.uniform(0.8, 1.2)), float(rng.uniform(0.1, 200))
        rows.append((f"row{i}", m1, s1, n1, m2, s2, n2))
    path, pj = os.path.join(WORK, "summary.txt"), os.path.join(WORK, "summary.json")
    with open(path, "w") as f:
        for r in rows:
            f.write("%s lower %r %r %d %r %r %d\n" % r)
    r = subprocess.run([DMT, "compare", "--summary", path, "--json", pj],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"compare --summary exited {r.returncode}: {r.stderr.strip()}")
    got = json.load(open(pj))["metrics"]
    ps = []
    for row, m in zip(rows, got):
        _, m1, s1, n1, m2, s2, n2 = row
        ref = stats.ttest_ind_from_stats(m2, s2, n2, m1, s1, n1, equal_var=False)
        v1, v2 = s1 * s1 / n1, s2 * s2 / n2
        df = (v1 + v2) ** 2 / (v1 * v1 / (n1 - 1) + v2 * v2 / (n2 - 1))
        q = stats.t.ppf(0.975, df)
        note("Welch t", m["t"] - ref.statistic)
        note("Welch p", m["p"] - ref.pvalue)
        note("Welch df", m["df"] - df)
        note("Welch interval", max(abs(m["diff_ci"][0] - (m2 - m1 - q * math.sqrt(v1 + v2))),
                                   abs(m["diff_ci"][1] - (m2 - m1 + q * math.sqrt(v1 + v2)))))
        ps.append(ref.pvalue)
    for m, h in zip(got, holm(ps)):
        note("Holm", m["p_holm"] - h)
    print(f"Welch: {len(rows)} summary rows, Holm over them")


def aa_and_shift(rng, trials=200, n=10):
    fr = det = 0
    for _ in range(trials):
        a = 1000 * np.exp(0.1 * rng.standard_normal(n))
        b = 1000 * np.exp(0.1 * rng.standard_normal(n))
        m, rc = run_values(a, b)
        fr += m["verdict"] == "regressed"
        if (m["verdict"] == "regressed") != (rc == 1):
            sys.exit(f"exit status {rc} does not match verdict {m['verdict']}")
    for _ in range(trials):
        a = 1000 * np.exp(0.1 * rng.standard_normal(n))
        b = 1200 * np.exp(0.1 * rng.standard_normal(n))
        m, _ = run_values(a, b)
        det += m["verdict"] == "regressed"
    print(f"A/A through the CLI: {trials} comparisons, {n} runs a side, spread 10%: "
          f"{fr} false regressions ({100 * fr / trials:.1f}%, goal <= 5%)")
    print(f"injected +20% shift: {det}/{trials} detected ({100 * det / trials:.1f}%, "
          f"goal >= 80%)")
    return fr / trials, det / trials


def main():
    rng = np.random.default_rng(20)
    check_u(rng)
    check_welch(rng)
    check_paired(rng)
    check_ratio_scale(rng)
    tol = {"ratio interval (%)": 1e-7, "ratio": 1e-9,"W+": 0, "paired p exact": 1e-12, "paired p normal": 1e-12,
           "paired HL estimate": 1e-9, "paired HL interval": 1e-9,
           "paired ratio interval (%)": 1e-7,"U": 0, "p exact": 1e-12, "p normal": 1e-12, "HL estimate": 1e-9,
           "HL interval": 1e-9, "relative interval (%)": 1e-7, "base median": 1e-9,
           "base sd": 1e-9, "Welch t": 1e-9, "Welch p": 1e-9, "Welch df": 1e-9,
           "Welch interval": 1e-6, "Holm": 1e-9}
    bad = []
    for k, v in worst.items():
        print(f"max |devmemtop - oracle| {k}: {v:.3g} (tolerance {tol[k]:g})")
        if v > tol[k]:
            bad.append(k)
    fr, det = aa_and_shift(rng)
    pfr, pdet = paired_aa_and_shift(rng)
    fr, det = max(fr, pfr), min(det, pdet)
    if bad:
        sys.exit("differs from the oracle: " + ", ".join(bad))
    if fr > 0.05 or det < 0.8:
        sys.exit("A/A false-regression rate above 5 % or shift detection below 80 %")


main()
