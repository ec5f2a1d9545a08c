#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the "lightscale" lab scenario (issue 25, benchmarks;
scenarios/lightscale.sh): light mode's held tokens at 1,000 devmem sockets
and 100,000 held tokens.

  * the receiver accepted every connection and holds exactly PER tokens on
    each (its own JSON), the sender sent every byte;
  * in every snapshot of the window with every token held, light's binding
    held_tokens and held_by_sockets equal the receiver's tokens_leaked and
    pages_held, its holders are the CONNS sockets of the receiver's pid with
    PER tokens each; the full mode's last snapshots say the same;
  * the cost table: per snapshot, with no devmem socket and with every token
    held, the iterator program's BPF run time (-vv, kernel.bpf_stats), the
    whole walk (read), the count in user space, the collector's wall time
    (health.collect_ns) and its CPU (schedstat over the window); the full
    mode's token programs' run time per token handed out, for scale. Also
    written to OUT/lightscale/table.txt.
"""
import json
import os
import re

from labcheck import json_lines as lines, kv, read

VV = re.compile(r"iter/tcp: (\d+) TCP sockets, (\d+) holding (\d+) tokens; read (\d+) us "
                r"\(its BPF (\d+) us\), count (\d+) us(.*)")
TOKEN_PROGS = ("tok_tp_recv", "tok_tp_dontneed", "tok_tp_release", "tok_recvmsg_exit",
               "tok_recvmsg_entry", "tok_cmsg_exit", "tok_destroy")


def binding(snap, bid):
    for b in (snap or {}).get("bindings") or []:
        if b.get("id") == bid:
            return b
    return {}


def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None


def check_figures(c, name, snaps, bid, want_t, want_n, conns, per, pid):
    """Every snapshot of @snaps: the binding's figures and the holder rows."""
    bad = []
    for k, s in enumerate(snaps):
        b = binding(s, bid)
        rows = [h for h in (s or {}).get("holders") or [] if h.get("binding_id") == bid]
        got = (b.get("held_tokens"), b.get("held_by_sockets"), len(rows),
               sum(h.get("tokens", 0) for h in rows))
        if got != (want_t, want_n, conns, want_t) or \
                any(h.get("tokens") != per or h.get("pid") != pid for h in rows):
            bad.append("snapshot %d: held_tokens %s, held_by_sockets %s, %d holder rows "
                       "summing %d tokens%s" % ((k,) + got + (
                           (", held_reason %s" % b.get("held_reason")) if b.get("held_reason")
                           else "",)))
    c.check("lightscale: %s: held_tokens == %s == the receiver's, held_by_sockets == %s, "
            "%d holder rows of pid %s with %d tokens each" % (name, want_t, want_n, conns, pid,
                                                              per),
            bool(snaps) and not bad, "%d snapshots" % len(snaps), "; ".join(bad[:3]))


def vv_rows(d):
    out = []
    for l in (read(os.path.join(d, "light.log"), "") or "").splitlines():
        m = VV.search(l)
        if m:
            out.append(tuple(int(x) for x in m.groups()[:6]) + (m.group(7),))
    return out


def phase_row(label, snaps, vv, cpu_ns):
    """One row of the table: medians (p90) per snapshot."""
    col = [s["health"]["collect_ns"] / 1e6 for s in snaps if s]
    bpf = [r[4] / 1e3 for r in vv]
    rd = [r[3] / 1e3 for r in vv]
    cnt = [r[5] / 1e3 for r in vv]
    n = len(snaps)

    def f(xs):
        return "%.2f (%.2f)" % (med(xs), pct(xs, 0.9)) if xs else "-"
    return ("| %s | %d | %s | %s | %s | %s | %s | %s |"
            % (label, n, "%d/%d" % (vv[0][0], vv[0][1]) if vv else "-", f(bpf), f(rd),
               f(cnt), f(col), "%.1f" % (cpu_ns / n / 1e6) if n else "-"))


def full_token_cost(fsnaps):
    """The full mode's token programs over the hand-out: ns per token."""
    a, b = fsnaps[0], fsnaps[-1]
    if not a or not b:
        return None

    def progs(s):
        return {p["name"]: p for p in s.get("health", {}).get("programs", [])}
    pa, pb = progs(a), progs(b)
    ns = sum(pb[n]["run_time_ns"] - pa.get(n, {}).get("run_time_ns", 0)
             for n in TOKEN_PROGS if n in pb)
    runs = {n: pb[n]["run_cnt"] - pa.get(n, {}).get("run_cnt", 0) for n in TOKEN_PROGS if n in pb}
    return ns, runs


def scenario_lightscale(c, d):
    par = kv(read(os.path.join(d, "params"), ""))
    conns, per = int(par.get("conns", 0)), int(par.get("per", 0))
    rxl = (read(os.path.join(d, "rx.json"), "") or "").splitlines()
    rx = json.loads(rxl[-1]) if rxl else {}
    txl = (read(os.path.join(d, "tx.json"), "") or "").splitlines()
    tx = json.loads(txl[-1]) if txl else {}
    env = kv(read(os.path.join(d, "rx.env"), ""))
    pid = int(env.get("rx_pid", 0))
    want_t, want_n, bid = rx.get("tokens_leaked"), rx.get("pages_held"), rx.get("binding_id")
    c.check("lightscale: the receiver held %d tokens on each of %d connections" % (per, conns),
            rx.get("conns") == conns and rx.get("conns_short") == 0 and
            want_t == conns * per and rx.get("error") == 0,
            "conns %s, short %s, tokens_leaked %s on %s niovs, %s s to hand out"
            % (rx.get("conns"), rx.get("conns_short"), want_t, want_n,
               env.get("handout_seconds")), "see rx.log, rx.json")
    c.check("lightscale: the sender sent every connection's bytes", tx.get("complete") is True
            and tx.get("conns") == conns and tx.get("bytes") == tx.get("requested"),
            "%s" % tx, "see tx.log")
    rcs = [l.split() for l in (read(os.path.join(d, "devmemtop.rcs"), "") or "").splitlines()]
    c.check("lightscale: both devmemtops exited 0 (SIGINT)",
            len(rcs) == 2 and all(r[1] == "0" for r in rcs), str(rcs), "see light.log, full.log")
    win = {r[0]: [int(x) for x in r[1:]] for r in
           (l.split() for l in (read(os.path.join(d, "windows"), "") or "").splitlines())}
    light, full = lines(d, "light.json"), lines(d, "full.json")
    if not {"idle", "held", "full_held"} <= set(win) or not light:
        c.check("lightscale: scenario outputs", False, "", "windows or light.json missing")
        return
    held = light[win["held"][0]:win["held"][1]]
    check_figures(c, "-m light", held, bid, want_t, want_n, conns, per, pid)
    fh = full[win["full_held"][1] - 2:win["full_held"][1]]
    check_figures(c, "full mode", fh, bid, want_t, want_n, conns, per, pid)
    src = ((held[0] or {}).get("metrics", {}) if held else {}).get("binding_held_by_sockets", {})
    c.check("lightscale: -m light: held_by_sockets from the iterator", bool(src.get("available"))
            and src.get("source", "").startswith("iter/tcp"), str(src))

    vv = vv_rows(d)
    idle_vv = [r for r in vv if r[2] == 0][1:9]
    held_vv = [r for r in vv if r[2] == want_t and r[1] == conns]
    inc = [r for r in vv if r[6]]
    c.check("lightscale: the iterator's walk was never incomplete", not inc and bool(held_vv),
            "%d -vv lines, %d with every token held" % (len(vv), len(held_vv)),
            "; ".join(r[6] for r in inc[:2]) or "no -vv line with every token")
    idle = light[win["idle"][0]:win["idle"][1]]
    rows = [phase_row("no devmem socket", idle, idle_vv, win["idle"][3] - win["idle"][2]),
            phase_row("%d sockets, %d tokens held" % (conns, want_t or 0), held, held_vv,
                      win["held"][3] - win["held"][2])]
    head = ["| light, per snapshot | snapshots | TCP sockets / holding | iterator BPF ms "
            "| walk (read) ms | count ms | collect_ns ms | collector CPU ms |",
            "|---|---|---|---|---|---|---|---|"]
    fcol = [x["health"]["collect_ns"] / 1e6 for x in fh if x]
    if fcol:
        rows.append("| full mode, the same tokens held (its token map read) | %d | - | - | - | - | "
                    "%.2f | - |" % (len(fcol), med(fcol)))
    tail = []
    if idle_vv and held_vv and want_t:
        d_bpf = (med([r[4] for r in held_vv]) - med([r[4] for r in idle_vv])) * 1e3 / want_t
        tail.append("per held token, BPF (median held - median idle, the %d holding sockets' "
                    "visits included): %.0f ns" % (conns, d_bpf))
    fc = full_token_cost(full[win["full_held"][0] - 1:win["full_held"][1]])
    if fc and want_t:
        tail.append("full mode, the hand-out: token programs %.1f ms in all, %.0f ns per token "
                    "handed out (runs %s)" % (fc[0] / 1e6, fc[0] / want_t, fc[1]))
    tail.append("medians (p90); TCG (qemu -accel tcg, 2 vCPUs); collector CPU = schedstat "
                "over the window / snapshots")
    table = "\n".join(head + rows + [""] + tail) + "\n"
    with open(os.path.join(d, "table.txt"), "w") as f:
        f.write(table)
    for l in head + rows + tail:
        c.info("lightscale: table", l)


SCENARIOS = {"lightscale": scenario_lightscale}
