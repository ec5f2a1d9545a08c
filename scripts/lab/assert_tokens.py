# SPDX-License-Identifier: GPL-2.0
"""Frag token identities (issue 11), from devmemtop's recording of one lab
scenario against the traffic tool's own counts (rx.json). Called by
assert_devmemtop.py for bulk, exhaust and leak; one module so the lab's
other checks stay as they are.

The traffic tool counts every SO_DEVMEM_DMABUF cmsg it got (tokens_received),
the tokens SO_DEVMEM_DONTNEED took back (tokens_returned), the tokens it
still held when it closed the socket (tokens_leaked: the kernel releases
them) and the distinct dmabuf pages behind the tokens it held at the end of
its receive loop (pages_held). devmemtop's binding must show:

  * at its last snapshot: handed == received, returned == returned,
    released == leaked, and handed - returned - released == held == 0
    (the tool exited: it holds nothing);
  * while the tool held tokens and sat idle (hold/leak: every token handed
    out, none returned or released yet): held_tokens == the tokens the tool
    holds, held_by_sockets == pages_held;
  * exhaust: there, the binding is dry (free 0, its pool holds every niov)
    and held_by_sockets == capacity minus the few niovs still inside the
    kernel (pool inflight - held: a TCP out-of-order queue, the pool cache);
  * leak: outstanding_at_unbind == held_by_sockets of that window, and 0
    niovs held after the socket closed;
  * every holder row of every snapshot names the traffic tool's pid;
  * bulk: the second devmemtop (-m fentry: put_cmsg_notrunc, tcp_recvmsg,
    sock_devmem_dontneed instead of the 0009 tracepoints) counts the same
    tokens at the idle point.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labcheck import read_json, recording_snapshots  # noqa: E402  the lab's shared helpers


def _binding(s, bid):
    for b in s.get("bindings", []):
        if b.get("id") == bid:
            return b
    return None


def token_identities(c, d, scenario, devmemtop):
    pre = "devmemtop tokens %s" % scenario
    rx = read_json(os.path.join(d, "rx.json"))
    rec = os.path.join(d, "devmemtop.dmtrec")
    if rx is None or "tokens_received" not in rx:
        c.check(pre + " traffic tool counts", False, hint="no rx.json with tokens_received")
        return
    if not os.path.exists(rec):
        c.check(pre + " recording", False, hint="no %s" % rec)
        return
    code, snaps, err = recording_snapshots(rec, devmemtop)
    snaps = snaps if code == 0 else None
    if snaps is None:
        c.check(pre + " report --json", False, hint=err)
        return
    av = snaps[-1]["metrics"]["binding_held_by_sockets"] if snaps else {}
    if not c.check(pre + " held_by_sockets available", bool(av.get("available")),
                   "source %s" % av.get("source"), "reason: %s" % av.get("reason")):
        return
    bid = rx["binding_id"]
    mine = [(s, _binding(s, bid)) for s in snaps if _binding(s, bid)]
    if not c.check(pre + " binding %d recorded" % bid, bool(mine)):
        return
    nulls = [(s["seq"], b.get("held_reason")) for s, b in mine if b.get("held_tokens") is None]
    c.check(pre + " held figures exact (binding seen created) in every snapshot", not nulls,
            "%d snapshots" % len(mine), "null in (seq, reason) %s" % nulls[:5])
    got, want = rx["tokens_received"], rx["tokens_returned"]
    leaked = rx["tokens_leaked"]
    s, b = mine[-1]
    ident = (b["tokens_handed"], b["tokens_returned"], b["tokens_released"],
             b["held_tokens"], b["held_by_sockets"])
    c.check(pre + " handed/returned/released == the tool's received/returned/leaked, "
            "handed - returned - released == held == 0 at the end",
            None not in ident and ident[:3] == (got, want, leaked) and
            ident[0] - ident[1] - ident[2] == ident[3] == 0 and ident[4] == 0,
            "devmemtop handed %s returned %s released %s held %s tokens / %s niovs; tool "
            "received %s returned %s leaked %s" % (ident + (got, want, leaked)))
    bad = sorted({h.get("pid") for s, _ in mine for h in (s.get("holders") or [])} -
                 {rx["pid"]})
    rows = sum(len(s.get("holders") or []) for s, _ in mine)
    c.check(pre + " every holder row names the traffic tool (pid %d)" % rx["pid"],
            rows > 0 and not bad, "%d holder rows" % rows,
            "other pids %s" % bad if bad else "no holder row at all")
    if scenario in ("exhaust", "leak"):
        held = rx["tokens_leaked"] if scenario == "leak" else rx["tokens_held_max"]
        win = [(s, b) for s, b in mine if b["tokens_handed"] == got and
               not b["tokens_returned"] and not b["tokens_released"]]
        if not c.check(pre + " a snapshot while the tool held every token", bool(win),
                       hint="none of %d snapshots has handed == %d, nothing back" %
                       (len(mine), got)):
            return
        s, b = win[-1]
        c.check(pre + " held tokens == the tokens the tool holds, held niovs == its pages",
                b["held_tokens"] == held and b["held_by_sockets"] == rx["pages_held"],
                "seq %s: devmemtop %s tokens / %s niovs; tool %s tokens / %s pages" %
                (s["seq"], b["held_tokens"], b["held_by_sockets"], held, rx["pages_held"]))
        hr = [h for h in (s.get("holders") or []) if h.get("binding_id") == bid]
        c.check(pre + " the holder row carries them",
                len(hr) == 1 and hr[0]["tokens"] == held and hr[0]["niovs"] == rx["pages_held"]
                and hr[0]["comm"] == "devmem-traffic",
                "%s" % [(h["pid"], h["comm"], h["tokens"], h["niovs"],
                         round(h["oldest_token_age_s"], 2)) for h in hr])
        if scenario == "exhaust":
            # The binding is dry (free 0, its pool holds every niov); the
            # socket holds them all but those still inside the kernel: in a
            # TCP out-of-order queue or the pool's cache after a dropped
            # packet (pool inflight, from the page_pool counters, minus the
            # niovs behind tokens). Seen: 0 on one run, 1 on another.
            tot, held_n, inp = b.get("total_niovs"), b["held_by_sockets"], b.get("in_pools")
            c.check(pre + " held niovs == the binding's niovs, but those inside the kernel",
                    b.get("free_niovs") == 0 and inp == tot and held_n is not None and
                    0 <= inp - held_n < 64,
                    "binding %s niovs, free %s, in its pool %s: held by the socket %s, inside "
                    "the kernel %s" % (tot, b.get("free_niovs"), inp, held_n,
                                       None if inp is None else inp - held_n))
        else:
            out = mine[-1][1].get("outstanding_at_unbind")
            c.check(pre + " outstanding at unbind == held niovs", out == b["held_by_sockets"],
                    "outstanding %s, held %s" % (out, b["held_by_sockets"]))
            after = [x for x in mine if x[1]["tokens_released"] == leaked]
            c.check(pre + " 0 niovs held after the socket closed",
                    bool(after) and after[-1][1]["held_by_sockets"] == 0 and
                    not [h for h in (after[-1][0].get("holders") or [])],
                    "%d snapshots after the close" % len(after))
    if scenario == "leak":
        top = _lines(os.path.join(d, "devmemtop-top.txt"))
        rows = [ln for ln in top if ln.split()[:2] == [str(rx["pid"]), "devmem-traffic"]]
        full = [ln for ln in rows if ln.split()[3] == str(rx["tokens_leaked"])]
        c.check(pre + " live view: the holders panel shows the traffic tool holding every token",
                bool(full), "%d frames, %d holder rows, e.g. %s" %
                (sum(1 for ln in top if ln.startswith("HOLDERS:")), len(rows),
                 full[-1] if full else rows[-1] if rows else None),
                "no row '%d devmem-traffic ... %d tokens' in devmemtop-top.txt" %
                (rx["pid"], rx["tokens_leaked"]))
    if scenario == "bulk":
        fe = [x for x in map(_try_json, _lines(os.path.join(d, "devmemtop-fentry.json"))) if x]
        fe = [(s, _binding(s, bid)) for s in fe if _binding(s, bid)]
        if not fe:
            c.check(pre + " fallback (-m fentry) saw the binding", False,
                    hint="no snapshot with binding %d in devmemtop-fentry.json" % bid)
            return
        s, b = fe[-1]
        m = s["metrics"]["binding_held_by_sockets"]
        c.check(pre + " fallback (-m fentry) counts the same tokens at the idle point",
                m.get("available") and "put_cmsg_notrunc" in (m.get("source") or "") and
                (b.get("tokens_handed"), b.get("tokens_returned"), b.get("held_tokens"),
                 b.get("held_by_sockets")) == (got, want, 0, 0),
                "source %s; handed %s returned %s held %s/%s niovs; tool received %d returned "
                "%d" % (m.get("source"), b.get("tokens_handed"), b.get("tokens_returned"),
                        b.get("held_tokens"), b.get("held_by_sockets"), got, want),
                "reason: %s; %s" % (m.get("reason"), b.get("held_reason")))
        tc = s.get("token_cost") or {}
        rcv, dn = tc.get("tokens_per_recvmsg") or {}, tc.get("tokens_per_dontneed") or {}
        c.check(pre + " token cost: tokens per recvmsg and per DONTNEED sum to the tool's",
                rcv.get("sum") == got and dn.get("sum") == want and
                dn.get("count") == rx["dontneed_calls"],
                "recvmsg: %s calls, %s tokens, p50 %s; DONTNEED: %s calls (tool %d), %s tokens, "
                "latency p50 %s ns" % (rcv.get("count"), rcv.get("sum"), rcv.get("p50"),
                                       dn.get("count"), rx["dontneed_calls"], dn.get("sum"),
                                       (tc.get("dontneed_latency_ns") or {}).get("p50")))


def _lines(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except OSError:
        return []


def _try_json(line):
    try:
        return json.loads(line)
    except ValueError:
        return None
