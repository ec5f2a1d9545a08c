#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the "lighttok" lab scenario (issue 25, token side;
scenarios/lighttok.sh):

  * bystanders: over a plain loopback TCP stream, no token tracepoint
    program ran, fentry/tcp_recvmsg is not loaded where the devmem_token
    tracepoints are, the token state stayed empty, and the per-run time of
    the tcp_recvmsg programs (their early return) is printed next to a
    devmem token program's;
  * -m light: while the receiver holds every token, bound, light's binding
    held_tokens and held_by_sockets and its holder row equal the full
    mode's and the receiver's own counts (tokens_leaked, pages_held), with
    the receiver's pid; and light's collector time per snapshot.
"""
import json
import os
import re
import subprocess
import tempfile

from labcheck import DEVMEMTOP, json_lines as lines, read

FILES = ("full.json", "fentry.json", "light.json")
TOKEN_TP = ("tok_tp_recv", "tok_tp_dontneed", "tok_tp_release", "tok_cmsg_exit")


def marks(d, f):
    rows = [l.split() for l in (read(os.path.join(d, f), "") or "").splitlines() if l.strip()]
    return [[int(x) for x in r] for r in rows] if len(rows) == 2 else None


def progs(snap):
    return {p["name"]: p for p in (snap or {}).get("health", {}).get("programs", [])}


def check_bystander(c, d, snaps, m):
    name = "lighttok: bystander TCP stream"
    for k, f in enumerate(FILES):
        a, b = snaps[f][m[0][k] - 1], snaps[f][m[1][k] - 1]
        if a is None or b is None:
            c.check("%s (%s)" % (name, f), False, "", "snapshot at a mark unreadable")
            continue
        pa, pb = progs(a), progs(b)
        ran = {n: pb[n]["run_cnt"] - pa.get(n, {}).get("run_cnt", 0) for n in pb}
        ns = {n: pb[n]["run_time_ns"] - pa.get(n, {}).get("run_time_ns", 0) for n in pb}
        tp = {n: ran[n] for n in TOKEN_TP if n in ran}
        c.check("%s (%s): no token program ran" % (name, f), all(v == 0 for v in tp.values()),
                "runs over the stream: %s" % tp, "a token program ran for a non-devmem stream")
        per = {n: "%d runs, %.0f ns/run" % (ran[n], ns[n] / ran[n]) for n in
               ("tok_recvmsg_entry", "tok_recvmsg_exit", "tok_destroy") if ran.get(n)}
        c.info("%s (%s): the early returns" % (name, f), str(per or "no tcp_recvmsg program"))
        if "tok_recvmsg_exit" in pb:
            # 32 MiB in reads of at most 64 KiB: a real stream, not a handful of calls
            c.check("%s (%s): the stream was read in >= 512 tcp_recvmsg calls" % (name, f),
                    ran["tok_recvmsg_exit"] >= 512, "%d calls" % ran["tok_recvmsg_exit"],
                    "the bystander stream did not run")
        if f == "full.json" and "tok_tp_recv" in pb:
            c.check("%s (%s): fentry/tcp_recvmsg not loaded with the token tracepoints"
                    % (name, f), "tok_recvmsg_entry" not in pb,
                    "programs: %s" % sorted(pb), "tok_recvmsg_entry is loaded")
        hold = [s.get("holders") for s in snaps[f][m[0][k]:m[1][k]] if s]
        c.check("%s (%s): no holder appeared" % (name, f), all(not h for h in hold),
                "%d snapshots" % len(hold), "holders: %s" % [h for h in hold if h][:1])


def binding_of(snap, bid):
    for b in (snap or {}).get("bindings", []):
        if b.get("id") == bid:
            return b
    return None


def check_held(c, d, snaps, m, rx, pid):
    want_t, want_n, bid = rx.get("tokens_leaked"), rx.get("pages_held"), rx.get("binding_id")
    for k, f in enumerate(FILES):
        if f == "fentry.json":
            continue	# the fallback is checked by the pods and leak scenarios
        win = [s for s in snaps[f][m[0][k]:m[1][k]] if s]
        got = [(binding_of(s, bid) or {}).get("held_tokens") for s in win]
        got_n = [(binding_of(s, bid) or {}).get("held_by_sockets") for s in win]
        hs = [[h for h in (s.get("holders") or []) if h.get("binding_id") == bid] for s in win]
        ok = bool(win) and all(g == want_t for g in got) and all(g == want_n for g in got_n)
        c.check("lighttok: %s: binding %s held_tokens/held_by_sockets while held" % (f, bid),
                ok, "%d snapshots: %s / %s; receiver: %s tokens on %s niovs"
                % (len(win), sorted(set(map(str, got))), sorted(set(map(str, got_n))),
                   want_t, want_n), "want the receiver's counts in every snapshot")
        rows = [h[0] if len(h) == 1 else None for h in hs]
        ok = bool(rows) and all(r and r["tokens"] == want_t and r["niovs"] == want_n and
                                r.get("pid") == pid for r in rows)
        c.check("lighttok: %s: one holder, the receiver, with its tokens and niovs" % f, ok,
                "rows: %s" % (rows[-1] if rows else None),
                "want pid %s, %s tokens, %s niovs" % (pid, want_t, want_n))
    lt = [s["health"]["collect_ns"] for s in snaps["light.json"][m[0][2]:m[1][2]] if s]
    idle = [s["health"]["collect_ns"] for s in snaps["light.json"][2:m[0][2] - 8] if s and
            not s.get("holders")]
    if lt and idle:
        lt.sort()
        idle.sort()
        c.info("lighttok: light collector time per snapshot", "median %.2f ms with %s tokens "
               "held (%d snapshots), %.2f ms with none (%d)"
               % (lt[len(lt) // 2] / 1e6, want_t, len(lt), idle[len(idle) // 2] / 1e6,
                  len(idle)))
    # -vv: the iterator's own figures per snapshot
    it = [re.search(r"iter/tcp: (\d+) TCP sockets, (\d+) holding (\d+) tokens; read (\d+) us "
                    r"\(its BPF (\d+) us\), count (\d+) us", l)
          for l in (read(os.path.join(d, "light.log"), "") or "").splitlines()]
    it = [tuple(map(int, x.groups())) for x in it if x]
    for label, sel in (("no token held", [x for x in it if x[2] == 0]),
                       ("%s tokens held" % want_t, [x for x in it if x[2] == want_t])):
        if sel:
            med = [sorted(col)[len(col) // 2] for col in zip(*sel)]
            c.info("lighttok: light iterator per snapshot, %s" % label,
                   "median of %d: %d TCP sockets, read %d us (its BPF %d us), count %d us"
                   % (len(sel), med[0], med[3], med[4], med[5]))
    src = (snaps["light.json"][m[0][2]] or {}).get("metrics", {}) \
        .get("binding_held_by_sockets", {})
    c.check("lighttok: light.json: held_by_sockets exact from the iterator",
            src.get("available") and src.get("source", "").startswith("iter/tcp"), str(src))


def check_rate(c, d):
    """The bystander stream's rate per mode against not attached: ratio of the
    medians, the per-round spread and compare --values' verdict (INFO: TCG
    timing is noisy; the verdict, not a threshold, decides)."""
    rows = [l.split() for l in (read(os.path.join(d, "bys-rate.txt"), "") or "").splitlines()]
    rate = {}
    for r, m, t0, t1 in (x for x in rows if len(x) == 4):
        dt = float(t1) - float(t0)
        if dt > 0:
            rate.setdefault(m, {})[int(r)] = 64.0 / dt	# MiB/s
    if "off" not in rate or len(rate["off"]) < 4:
        c.check("lighttok: bystander rate rounds", False, "", "bys-rate.txt: %d rows" % len(rows))
        return
    off = rate["off"]
    for m in ("auto", "fentry", "light"):
        if m not in rate:
            c.check("lighttok: bystander rate (%s)" % m, False, "", "no rounds")
            continue
        rr = [rate[m][r] / off[r] for r in off if r in rate[m]]
        med = sorted(rate[m].values())[len(rate[m]) // 2] / sorted(off.values())[len(off) // 2]
        verdict = "?"
        with tempfile.TemporaryDirectory() as t:
            for side, vals in (("off", off), (m, rate[m])):
                with open(os.path.join(t, side), "w") as f:
                    f.write("\n".join("%.3f" % v for v in vals.values()) + "\n")
            p = subprocess.run([DEVMEMTOP, "compare", "--values", "--better", "higher",
                                "--noise", "1%", os.path.join(t, "off"), "--",
                                os.path.join(t, m)], capture_output=True, text=True)
            v = [l for l in p.stdout.splitlines() if l.startswith("values")]
            verdict = " ".join(v[0].split()[1:]) if v else p.stderr.strip()
        c.info("lighttok: bystander stream (2 x 32 MiB), %s vs not attached" % m,
               "%.1f vs %.1f MiB/s median: %.1f %%, per round %.1f..%.1f %%; compare: %s"
               % (sorted(rate[m].values())[len(rate[m]) // 2],
                  sorted(off.values())[len(off) // 2], 100 * med, 100 * min(rr),
                  100 * max(rr), verdict))


def scenario_lighttok(c, d):
    snaps = {f: lines(d, f) for f in FILES}
    bm, hm = marks(d, "bys.marks"), marks(d, "held.marks")
    if not bm or not hm or not all(snaps.values()):
        c.check("lighttok: scenario outputs", False, "", "marks or JSON missing (scenario.log)")
        return
    rx = json.loads((read(os.path.join(d, "rx.json"), "{}") or "{}").splitlines()[-1] or "{}")
    env = dict(l.split("=", 1) for l in (read(os.path.join(d, "rx.env"), "") or "").split())
    rcs = [l.split() for l in (read(os.path.join(d, "devmemtop.rcs"), "") or "").splitlines()]
    c.check("lighttok: the devmemtops exited 0 (SIGINT)",
            len(rcs) == 3 and all(r[1] == "0" for r in rcs), str(rcs), "see *.log")
    check_bystander(c, d, snaps, bm)
    check_held(c, d, snaps, hm, rx, int(env.get("rx_pid", "0")))
    check_rate(c, d)


SCENARIOS = {"lighttok": scenario_lighttok}
