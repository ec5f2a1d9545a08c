#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side checks of scenarios/autorelease.sh (issue 21, kernel-patches
0012: SO_DEVMEM_AUTORELEASE), called by assert_lab.py through its
SCENARIOS table. Everything is read from the devmem tracepoints the guest
recorded per run (events.txt) and the traffic tool's JSON:

  per binding  received - returned - released - drained == held: 0 at the
               end of every run, the tool's leaked tokens at the unbind of
               a leaking receiver without autorelease (drained there, on as
               many net_iovs as the tool held), 0 at unbind with
               autorelease (released at close);
  modes        every frag in the socket's mode; without autorelease the
               token is the net_iov's index and 0009's xarray events stay
               silent; the per-net_iov count every event carries equals
               the count replayed from the events before it;
  teardown     the drain event at every unbind, the binding freed with 0
               outstanding;
autorelease-measure.sh (the CPU claim, per cell and mode): every run
received, devmemtop's figures == the tool's in every run's recording,
xarray calls per token by the receiving thread (0 without autorelease,
2 or more with: a count, robust under TCG), each run's DONTNEED time per
token written to values/ for compare.sh (receiver CPU per GiB is compared
there from the recordings; TCG gives direction only).
The kernel without the option (baseline) SKIPs with the tool's reason.
No WARN on the console is checked by assert_lab.py for the whole boot.

Run by hand: scripts/lab/assert_lab.py --dir OUT/patched --kernel patched
--scenarios autorelease
"""
import json
import os
import re
import statistics

from labcheck import DEVMEMTOP, json_lines, read, read_int, read_json, recording_snapshots
from assert_tokens import incomplete_why, light_held_in_window

EV = re.compile(r"\s(devmem_[a-z_]+): (.*)$")
KV = re.compile(r"(\w+)=(\S+)")

# label: (autorelease, kind); kind: ret, hold, leak (socket closed, then
# unbind) or leak-unbind (unbind while the socket is open)
RUNS = {
    "on-ret": (True, "ret"), "off-ret": (False, "ret"),
    "on-hold": (True, "hold"), "off-hold": (False, "hold"),
    "on-ret-16k": (True, "ret"), "off-ret-16k": (False, "ret"),
    "on-leak": (True, "leak"), "off-leak": (False, "leak"),
    "off-leak-unbind": (False, "leak-unbind"),
}


def parse_events(path):
    """[(event, {key: value})] in trace order, values as strings."""
    txt = read(path)
    if txt is None:
        return None
    out = []
    for line in txt.splitlines():
        m = EV.search(line)
        if m:
            out.append((m.group(1), dict(KV.findall(m.group(2)))))
    return out


def count_run(evs, bid):
    """The identity terms of binding @bid, the held count at its unbind and
    what the events say about modes, tokens and per-net_iov counts."""
    r = {"recv": 0, "recv_on": 0, "recv_off": 0, "xa_recv": 0, "returned": 0,
         "dontneed_freed": 0, "released": 0, "drained": 0, "drain_niovs": 0,
         "drain_events": [], "held_at_unbind": None, "unbind": None, "free": None,
         "uref_bad": 0, "uref_checked": 0, "token_bad": 0, "shift": None,
         "uref_nonzero_on": 0}
    count = {}
    for ev, kv in evs:
        if ev == "devmem_dontneed":
            r["dontneed_freed"] += int(kv.get("nr_freed", 0))
            continue
        if kv.get("id") != str(bid):
            continue
        if ev == "devmem_binding_create":
            r["shift"] = int(kv["niov_size"]).bit_length() - 1
        elif ev == "devmem_frag_recv":
            r["recv"] += 1
            tok, uref = int(kv["token"]), int(kv["uref"])
            if kv["autorelease"] == "1":
                r["recv_on"] += 1
                r["uref_nonzero_on"] += uref != 0
                continue
            r["recv_off"] += 1
            if r["shift"] is not None and tok != int(kv["frag_offset"]) >> r["shift"]:
                r["token_bad"] += 1
            count[tok] = count.get(tok, 0) + 1
            r["uref_checked"] += 1
            r["uref_bad"] += uref != count[tok]
        elif ev == "devmem_token_recv":
            r["xa_recv"] += 1
        elif ev == "devmem_token_dontneed":
            r["returned"] += 1
        elif ev == "devmem_uref_dontneed":
            r["returned"] += 1
            tok = int(kv["token"])
            count[tok] = count.get(tok, 0) - 1
            r["uref_checked"] += 1
            r["uref_bad"] += int(kv["uref"]) != count[tok] or count[tok] < 0
        elif ev == "devmem_token_release":
            r["released"] += 1
        elif ev == "devmem_uref_drain":
            tok, n = int(kv["token"]), int(kv["urefs"])
            r["drained"] += n
            r["drain_niovs"] += 1
            r["uref_checked"] += 1
            r["uref_bad"] += n != count.get(tok, 0)
            count[tok] = 0
        elif ev == "devmem_binding_drain":
            r["drain_events"].append((kv["reason"], int(kv["niovs"]), int(kv["urefs"])))
        elif ev == "devmem_binding_unbind":
            r["unbind"] = kv
            r["held_at_unbind"] = r["recv"] - r["returned"] - r["released"]
        elif ev == "devmem_binding_free":
            r["free"] = kv
    r["held_end"] = r["recv"] - r["returned"] - r["released"] - r["drained"]
    r["count_left"] = sum(v for v in count.values() if v)
    return r


def check_run(c, d, label, on, kind):
    rd = os.path.join(d, label)
    rx = read_json(os.path.join(rd, "rx.json"))
    tx = read_json(os.path.join(rd, "tx.json"))
    name = "autorelease %s:" % label
    if not c.check(name + " traffic ran (receiver and sender exit 0, payload exact)",
                   rx is not None and tx is not None and read_int(os.path.join(rd, "rx.rc")) == 0
                   and read_int(os.path.join(rd, "tx.rc")) == 0 and rx.get("mismatches") == 0
                   and rx.get("frags", 0) > 0,
                   "rx %s bytes, %s mismatches" % (rx and rx.get("bytes"), rx and rx.get("mismatches")),
                   "see %s/rx.log, tx.log" % rd):
        return None
    c.check(name + " the socket is in the mode asked for (getsockopt)",
            rx.get("autorelease") is on, "autorelease=%s" % rx.get("autorelease"))
    lost = read_int(os.path.join(rd, "lost"))
    c.check(name + " trace buffer complete", lost == 0, "overrun=%s" % lost)
    evs = parse_events(os.path.join(rd, "events.txt"))
    if not c.check(name + " devmem events recorded", bool(evs)):
        return None
    bid = rx["binding_id"]
    r = count_run(evs, bid)
    leaked = rx.get("tokens_leaked", 0)
    fig = ("binding %d: received %d, returned %d, released %d, drained %d (%d niovs), held %d at "
           "the end, %s at unbind; tool: received %d, returned %d, leaked %d on %d niovs"
           % (bid, r["recv"], r["returned"], r["released"], r["drained"], r["drain_niovs"],
              r["held_end"], r["held_at_unbind"], rx["tokens_received"], rx["tokens_returned"],
              leaked, rx.get("pages_held", 0)))
    c.check(name + " every frag the tool got has its event, in the socket's mode",
            r["recv"] == rx["tokens_received"] and
            (r["recv_on"] if on else r["recv_off"]) == r["recv"], fig)
    if on:
        c.check(name + " autorelease: 0009's xarray token events for every frag, uref 0",
                r["xa_recv"] == r["recv"] and r["uref_nonzero_on"] == 0 and r["drained"] == 0,
                "%d devmem_token_recv, %d frags with uref != 0, %d drained"
                % (r["xa_recv"], r["uref_nonzero_on"], r["drained"]))
    else:
        c.check(name + " no autorelease: token == net_iov index, no xarray token event",
                r["token_bad"] == 0 and rx.get("token_not_niov") == 0 and r["xa_recv"] == 0
                and r["shift"] is not None,
                "%d tokens != frag_offset >> %s (tool: %s), %d devmem_token_recv"
                % (r["token_bad"], r["shift"], rx.get("token_not_niov"), r["xa_recv"]))
        c.check(name + " every per-net_iov count an event carries == the replayed count",
                r["uref_checked"] > 0 and r["uref_bad"] == 0,
                "%d of %d differ" % (r["uref_bad"], r["uref_checked"]))
    c.check(name + " returns: events == the tool's == devmem_dontneed's nr_freed",
            r["returned"] == rx["tokens_returned"] == r["dontneed_freed"],
            "%d events, tool %d, nr_freed %d" % (r["returned"], rx["tokens_returned"],
                                                 r["dontneed_freed"]))
    c.check(name + " received - returned - released - drained == held == 0 at the end",
            r["held_end"] == 0 and r["count_left"] == 0, fig)
    if kind in ("ret", "hold"):
        want_unbind, want_rel, want_drain = 0, 0, 0
    elif on:
        want_unbind, want_rel, want_drain = 0, leaked, 0
    else:
        want_unbind, want_rel, want_drain = leaked, 0, leaked
    c.check(name + " held at unbind, released at close, drained: as the mode says",
            r["held_at_unbind"] == want_unbind and r["released"] == want_rel and
            r["drained"] == want_drain and (kind in ("ret", "hold") or leaked > 0),
            fig + "; want %d at unbind, %d released, %d drained" % (want_unbind, want_rel,
                                                                     want_drain))
    if kind.startswith("leak") and not on:
        c.check(name + " the drain at unbind took as many net_iovs as the tool held",
                r["drain_niovs"] == rx.get("pages_held"), fig)
    dr = r["drain_events"]
    unb = [x for x in dr if x[0] == "unbind"]
    c.check(name + " one drain event at unbind, its totals == the per-net_iov drain events",
            len(unb) == 1 and sum(x[1] for x in dr) == r["drain_niovs"] and
            sum(x[2] for x in dr) == r["drained"], "devmem_binding_drain: %s" % dr)
    f = r["free"]
    c.check(name + " binding freed with 0 outstanding",
            f is not None and f.get("outstanding") == "0",
            "devmem_binding_free: %s" % f)
    return r


def devmemtop_snapshots(d):
    """The scenario's recording as JSON snapshots, or (None, why)."""
    rec = os.path.join(d, "devmemtop.dmtrec")
    if not os.access(DEVMEMTOP, os.X_OK):
        return None, "%s not built" % DEVMEMTOP
    if not os.path.exists(rec):
        return None, "no %s (see devmemtop-record.log)" % rec
    rc, snaps, err = recording_snapshots(rec)
    if rc:
        return None, "devmemtop report: " + err[:200]
    return snaps, ""


def check_devmemtop(c, d, label, on, kind, snaps):
    """devmemtop's token figures for the run's binding == the tool's."""
    rd = os.path.join(d, label)
    rx = read_json(os.path.join(rd, "rx.json"))
    if not rx or "binding_id" not in rx:
        return
    bid = rx["binding_id"]
    mine = [b for s in snaps for b in s.get("bindings", []) if b.get("id") == bid]
    name = "autorelease %s: devmemtop" % label
    if not c.check(name + " saw the binding", bool(mine)):
        return
    last = mine[-1]
    if "token_mode" not in last:
        c.skip(name + " token figures", "this devmemtop has no accounting without "
               "SO_DEVMEM_AUTORELEASE (no token_mode in its JSON)")
        return
    leaked = rx.get("tokens_leaked", 0)
    want_rel = leaked if (on and kind.startswith("leak")) else 0
    want_drain = leaked if (not on and kind.startswith("leak")) else 0
    held = [b.get("held_tokens") for b in mine if b.get("held_tokens") is not None]
    held_n = [b.get("held_by_sockets") for b in mine if b.get("held_by_sockets") is not None]
    fig = ("handed %s returned %s released %s drained %s, held at the end %s (peak %s tokens "
           "/ %s niovs), token_mode %s; tool: received %d returned %d leaked %d on %d niovs"
           % (last.get("tokens_handed"), last.get("tokens_returned"),
              last.get("tokens_released"), last.get("tokens_drained"),
              last.get("held_tokens"), max(held) if held else None,
              max(held_n) if held_n else None, last.get("token_mode"),
              rx["tokens_received"], rx["tokens_returned"], leaked, rx.get("pages_held", 0)))
    c.check(name + " token figures == the tool's (handed, returned, released, drained)",
            last.get("tokens_handed") == rx["tokens_received"] and
            last.get("tokens_returned") == rx["tokens_returned"] and
            last.get("tokens_released") == want_rel and
            last.get("tokens_drained") == want_drain, fig)
    c.check(name + " binding mode %s, nothing held at the end" % ("1 (autorelease)" if on
                                                                   else "2 (manual)"),
            last.get("token_mode") == (1 if on else 2) and last.get("held_tokens") == 0, fig)
    if kind.startswith("leak"):
        c.check(name + " held tokens / niovs at the peak == the tool's leaked / pages_held",
                bool(held) and max(held) == leaked and max(held_n) == rx.get("pages_held"),
                fig)


# runs whose receiver holds every token, bound, for 1.5 s (--leak --linger)
LIGHT_RUNS = ("on-leak", "off-leak", "off-leak-unbind")


def check_light(c, d, snaps):
    """Issue 25: the -m light devmemtop that ran through the scenario
    (light.json, -vv in light.log) reads held tokens at snapshot time: from
    the sockets' xarrays with autorelease, from the binding's net_iov uref
    counts without (bpf/urefwalk.bpf.c). In each leaking run, while the
    receiver held every token, light's held_tokens and held_by_sockets ==
    the full mode's (the recording) == the tool's, in every light snapshot
    inside the full mode's settled window; light's holder row is the
    receiver's socket (tokens and niovs null without autorelease). Also
    the uref walk's cost per snapshot, from its -vv lines."""
    light = [s for s in json_lines(d, "light.json") if s]
    log = read(os.path.join(d, "light.log"), "") or ""
    if not c.check("autorelease: the -m light devmemtop ran", bool(light),
                   "%d snapshots" % len(light), "no light.json snapshot (see light.log)"):
        return
    why = incomplete_why(log)
    for label in LIGHT_RUNS:
        rx = read_json(os.path.join(d, label, "rx.json"))
        if not rx or "binding_id" not in rx:
            c.check("autorelease %s: -m light held tokens" % label, False, "", "no rx.json")
            continue
        light_held_in_window(c, "autorelease %s: -m light held tokens, niovs and holders == "
                             "full mode == tool while every token was held" % label, light,
                             snaps, rx["binding_id"], rx,
                             (rx["tokens_leaked"], rx["pages_held"], rx["pid"]), why)
    walks = [tuple(map(int, m.groups())) for m in re.finditer(
        r"uref walk: (\d+) bindings, (\d+) net_iovs read; (\d+) us \(its BPF (\d+) us\)", log)]
    walks = [w for w in walks if w[0]]
    if c.check("autorelease: -m light ran the uref walk", bool(walks),
               "%d snapshots walked a binding" % len(walks), "no 'uref walk:' line in light.log"):
        for n in sorted({w[1] for w in walks}):
            sel = sorted(w for w in walks if w[1] == n)
            med = lambda k: sorted(w[k] for w in sel)[len(sel) // 2]
            c.info("autorelease: -m light uref walk per snapshot, %d net_iovs" % n,
                   "median of %d snapshots (%d binding(s)): %d us wall, its BPF %d us "
                   "(kernel.bpf_stats_enabled), max BPF %d us"
                   % (len(sel), med(0), med(2), med(3), max(w[3] for w in sel)))


def no_option(c, d, scenario):
    """The scenario ended at its first run (skip.txt): a SKIP on a kernel
    without SO_DEVMEM_AUTORELEASE, a failure on the patched one."""
    skip = read(os.path.join(d, "skip.txt"))
    if skip is None:
        return False
    if c.kernel == "patched":
        c.check(scenario + ": the patched kernel has SO_DEVMEM_AUTORELEASE", False, skip.strip())
    else:
        c.skip(scenario, skip.strip() or "kernel without SO_DEVMEM_AUTORELEASE")
    return True


CELLS = ("4k-ret", "4k-hold", "16k-ret", "16k-hold")


def measure_rows(d):
    rows = []
    for line in (read(os.path.join(d, "ar-results.txt")) or "").splitlines():
        if line.startswith("AR_RESULT "):
            rows.append(dict(KV.findall(line)))
    return rows


def dontneed_ns_per_token(c, d, r, on):
    """One measurement run's recording: devmemtop's token figures == the
    tool's, and the run's DONTNEED time per token returned (None if none)."""
    rd = os.path.join(d, r["label"])
    rx = read_json(os.path.join(rd, "rx.json"))
    snaps, why = devmemtop_snapshots(rd)
    name = "autorelease-measure %s: devmemtop" % r["label"]
    if snaps is None or not rx or "binding_id" not in rx:
        c.check(name + " recording", False, why or "no rx.json")
        return None
    mine = [b for s in snaps for b in s.get("bindings", []) if b.get("id") == rx["binding_id"]]
    if not c.check(name + " saw the binding", bool(mine)):
        return None
    last = mine[-1]
    c.check(name + " handed/returned == the tool's, mode %d" % (1 if on else 2),
            last.get("tokens_handed") == rx["tokens_received"] and
            last.get("tokens_returned") == rx["tokens_returned"] and
            last.get("token_mode") == (1 if on else 2),
            "handed %s returned %s mode %s; tool received %s returned %s"
            % (last.get("tokens_handed"), last.get("tokens_returned"), last.get("token_mode"),
               rx["tokens_received"], rx["tokens_returned"]))
    tc = snaps[-1].get("token_cost") or {}
    ns = (tc.get("dontneed_latency_ns") or {}).get("sum")
    tok = (tc.get("tokens_per_dontneed") or {}).get("sum")
    return ns / tok if ns and tok else None


def measure_cell(c, d, cell, rows, summary):
    for mode in ("off", "on"):
        rs = [r for r in rows if r.get("cell") == cell and r.get("mode") == mode and
              not r["label"].startswith("xa-")]
        ok = [r for r in rs if r.get("rx_rc") == "0" and r.get("tokens") not in (None, "none", "0")]
        c.check("autorelease-measure %s %s: %d runs, all received" % (cell, mode, len(rs)),
                len(rs) >= 1 and len(ok) == len(rs),
                "rx_rc %s" % [r.get("rx_rc") for r in rs])
        dn = [dontneed_ns_per_token(c, d, r, mode == "on") for r in ok]
        dn = [x for x in dn if x is not None]
        sysg = [float(r["sys_seconds"]) / (int(r["bytes"]) / 2**30) for r in ok]
        xa = [r for r in rows if r["label"] == "xa-%s-%s" % (cell, mode)]
        xa_tok = None
        if xa and xa[0].get("xa_calls") not in (None, "none") and xa[0].get("xa_lost") == "0" \
                and xa[0].get("tokens") not in (None, "none", "0"):
            xa_tok = int(xa[0]["xa_calls"]) / int(xa[0]["tokens"])
        summary[cell][mode] = {
            "runs": len(ok), "dontneed_ns_per_token": [round(x, 1) for x in dn],
            "sys_s_per_gib": [round(x, 3) for x in sysg],
            "xa_calls_per_token": None if xa_tok is None else round(xa_tok, 3),
        }
        vdir = os.path.join(d, "values")
        os.makedirs(vdir, exist_ok=True)
        with open(os.path.join(vdir, "%s-%s-dontneed_ns_per_token.txt" % (cell, mode)), "w") as f:
            f.write("".join("%.3f\n" % x for x in dn))
        # the receiver's own system time (the recorded command's CPU has the
        # sender's and the scenario shell's too)
        with open(os.path.join(vdir, "%s-%s-rx_sys_s_per_gib.txt" % (cell, mode)), "w") as f:
            f.write("".join("%.4f\n" % x for x in sysg))
    on, off = summary[cell]["on"]["xa_calls_per_token"], summary[cell]["off"]["xa_calls_per_token"]
    if on is None or off is None:
        why = (read(os.path.join(d, "xa-%s-on" % cell, "xa-skip.txt")) or "").strip()
        c.skip("autorelease-measure %s: xarray calls per token" % cell,
               "function tracer counts unavailable or incomplete: %s (xa-%s-*/)"
               % (why or "events lost", cell))
    else:
        c.check("autorelease-measure %s: xarray calls per token, off == 0 and on >= 2" % cell,
                off == 0 and on >= 2, "off %s, on %s" % (off, on))


def scenario_autorelease_measure(c, d):
    if no_option(c, d, "autorelease-measure"):
        return
    rows = measure_rows(d)
    if not c.check("autorelease-measure: results", bool(rows), "no AR_RESULT in ar-results.txt"):
        return
    summary = {cell: {} for cell in CELLS}
    for cell in CELLS:
        measure_cell(c, d, cell, rows, summary)
    with open(os.path.join(d, "autorelease-measure.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    for cell in CELLS:
        for mode in ("off", "on"):
            s = summary[cell][mode]
            med = lambda v: "%.3g" % statistics.median(v) if v else "-"  # noqa: E731
            c.info("autorelease-measure %s %s" % (cell, mode),
                   "%d runs, receiver sys s/GiB median %s, DONTNEED ns/token median %s, "
                   "xarray calls/token %s (TCG: direction only)"
                   % (s["runs"], med(s["sys_s_per_gib"]), med(s["dontneed_ns_per_token"]),
                      s["xa_calls_per_token"]))


def scenario_autorelease(c, d):
    if no_option(c, d, "autorelease"):
        return
    for label, (on, kind) in RUNS.items():
        if not c.check("autorelease %s ran" % label, os.path.isdir(os.path.join(d, label))):
            continue
        check_run(c, d, label, on, kind)
    snaps, why = devmemtop_snapshots(d)
    if snaps is None:
        c.skip("autorelease: devmemtop's token figures", why)
    else:
        for label, (on, kind) in RUNS.items():
            check_devmemtop(c, d, label, on, kind, snaps)
        check_light(c, d, snaps)
    kunit = read(os.path.join(d, "..", "kunit.txt"))
    c.check("autorelease: KUnit suite net_devmem_uref ran at boot",
            kunit is not None and "net_devmem_uref" in kunit,
            hint="no net_devmem_uref in %s/../kunit.txt" % d)


SCENARIOS = {"autorelease": scenario_autorelease,
             "autorelease-measure": scenario_autorelease_measure}
