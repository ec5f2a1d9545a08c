#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side checks of scenarios/race.sh (issue 22, D4: the frag token
commit race), called by assert_lab.py through its SCENARIOS table.

devmem-traffic --race-dontneed returns token ids 1..N from a second thread
while the main thread receives. On a kernel whose SO_DEVMEM_DONTNEED erases
a token id reserved but not yet committed by tcp_recvmsg_dmabuf() (6.12,
and the lab's baseline kernel), the reference that token holds is lost.
devmemtop must show it from its recording alone:

  unfixed (baseline): after the socket closed and the binding was unbound,
    tokens handed > returned + released (held_tokens > 0 with no socket
    left), the binding unbound but never freed, its page pool a zombie
    whose inflight (devmemtop) == netlink page-pool-get's == the niovs
    devmemtop holds for those tokens (held_by_sockets), and still listed
    10 s later;
  fixed (patched, with the fix patch): handed == returned + released ==
    the tool's received, held 0, the binding freed with nothing
    outstanding, no pool left in netlink.
Both: the racing thread did return tokens (it raced), the traffic ran.

Without the token tracepoints (7.3) the token counts come from fentry and
fexit programs, and the racer makes the kernel skip runs of them (two
threads in DONTNEED on one CPU: a run that would nest is not made) and
DONTNEED free other tokens than it named: devmemtop must then show the
counts as unknown with a reason (null), never as numbers, and the leak is
judged by the binding, its pool and the tool's own counts.

The kernel's verdict is asked per flavor: "baseline" must show the leak,
"patched" must be clean (the series file puts the fix in patched only).
"""
import os

from labcheck import DEVMEMTOP, read, read_json, recording_snapshots


def _pools_of(dump, bid):
    """The pools of binding bid in a `devmem-traffic pools` dump (a JSON
    list of page-pool-get entries)."""
    return [p for p in (dump if isinstance(dump, list) else []) if p.get("dmabuf") == bid]


def scenario_race(c, d):
    rx = read_json(os.path.join(d, "rx.json"))
    tx = read_json(os.path.join(d, "tx.json"))
    if not c.check("race traffic ran (receiver and sender exit 0)",
                   rx is not None and tx is not None and (read(os.path.join(d, "rx.rc")) or "").strip() == "0"
                   and (read(os.path.join(d, "tx.rc")) or "").strip() == "0" and rx.get("race_ids"),
                   "rx %s, tx %s" % (rx and rx.get("bytes"), tx and tx.get("bytes")),
                   "see %s/rx.log, tx.log" % d):
        return
    bid = rx["binding_id"]
    c.check("race: the racing thread returned tokens the receiver was given",
            rx["race_freed"] > 0 and rx["race_errors"] == 0,
            "%d DONTNEED calls on ids 1..%d took back %d tokens; the receiver's own returns "
            "found %d already gone; %d tokens received"
            % (rx["race_calls"], rx["race_ids"], rx["race_freed"], rx["tokens_short"],
               rx["tokens_received"]))
    rec = os.path.join(d, "devmemtop.dmtrec")
    if not os.access(DEVMEMTOP, os.X_OK):
        c.skip("race: devmemtop verdict", "%s not built" % DEVMEMTOP)
        return
    code, snaps, err = recording_snapshots(rec) if os.path.exists(rec) else (1, [], "no " + rec)
    snaps = snaps if code == 0 else None
    if not c.check("race: devmemtop recording readable", bool(snaps), hint=err):
        return
    mine = [(s, b) for s in snaps for b in s.get("bindings", []) if b.get("id") == bid]
    if not c.check("race: devmemtop saw binding %d" % bid, bool(mine)):
        return
    s, b = mine[-1]
    handed, ret, rel = b.get("tokens_handed"), b.get("tokens_returned"), b.get("tokens_released")
    held, held_n = b.get("held_tokens"), b.get("held_by_sockets")
    pools = [p for p in s.get("pools", []) if p.get("binding_id") == bid]
    final = _pools_of(read_json(os.path.join(d, "pool-final.json")), bid)
    tool_back = rx["tokens_returned"] + rx["race_freed"]
    figures = ("devmemtop: handed %s returned %s released %s held %s tokens / %s niovs; "
               "binding unbound %s freed %s outstanding at unbind %s; pools %s; netlink 10 s "
               "after close: %s; tool: received %d, returned %d (main %d + racer %d)"
               % (handed, ret, rel, held, held_n, bool(b.get("unbound_ns")),
                  bool(b.get("freed_ns")), b.get("outstanding_at_unbind"),
                  [(p.get("id"), p.get("state"), p.get("inflight")) for p in pools],
                  [(p.get("id"), p.get("inflight"), p.get("detach_time")) for p in final],
                  rx["tokens_received"], tool_back, rx["tokens_returned"], rx["race_freed"]))
    why = b.get("held_reason")
    figures += "; held_reason %r" % why
    # Without the token tracepoints (7.3) the counts come from fentry/fexit
    # on the receive and DONTNEED paths: two threads in DONTNEED on one CPU
    # (this scenario's racer shares the receiver's CPU) make the kernel skip
    # runs that would nest, and the race makes DONTNEED free other tokens
    # than it named. devmemtop must then say the counts are unknown and
    # why, never give numbers that are not the kernel's.
    counted = None not in (handed, ret, rel)
    if counted:
        c.check("race: devmemtop counted every token the tool received, and its returns",
                handed == rx["tokens_received"] and ret == tool_back, figures)
    else:
        c.check("race: devmemtop's token counts unknown with a reason (no number that is "
                "not the kernel's), held unknown too",
                handed is None and ret is None and rel is None and held is None and bool(why),
                figures)
    if c.kernel == "baseline":
        # unfixed: the race must have been caught. The socket is closed by
        # now, so no socket holds anything (held 0): the tokens whose
        # reservation the racer erased were neither returned nor released
        # at close, and their net_iov references are the ones the binding
        # and its page pool wait for forever.
        z = [p for p in pools if p.get("state") == "zombie"]
        if counted:
            lost = handed - ret - rel
            c.check("race (unfixed kernel): tokens handed out but never returned nor released, "
                    "held by no socket after the close",
                    lost > 0 and held == 0 and held_n == 0, figures)
        else:
            # the tool's own counts, devmemtop's being unknown
            lost = rx["tokens_received"] - tool_back
            c.check("race (unfixed kernel): the tool returned fewer tokens than it received",
                    lost > 0, figures)
        c.check("race (unfixed kernel): the binding was unbound and never freed",
                bool(b.get("unbound_ns")) and not b.get("freed_ns"), figures)
        # net_iovs, not tokens: frags of one net_iov are one page in flight,
        # so 0 < net_iovs <= lost tokens (equal with 4 KiB net_iovs as a rule)
        # (net_iovs outstanding at unbind can be more: frags still queued or
        # on a CPU's defer list come back after it; seen 18 at unbind, 1 left)
        c.check("race (unfixed kernel): its page pool never drained: a zombie whose inflight "
                "== netlink's 10 s after the close, 0 < that <= the lost tokens, "
                "<= the net_iovs outstanding at unbind",
                len(z) == 1 and len(final) == 1 and lost is not None and
                z[0].get("inflight") == final[0].get("inflight") and
                0 < final[0].get("inflight") <= min(lost, b.get("outstanding_at_unbind") or 0)
                and final[0].get("detach_time", 0) > 0, figures)
        c.info("race caught on the unfixed kernel", figures)
    else:
        if counted:
            c.check("race (fixed kernel): handed == returned + released, nothing held",
                    handed == ret + rel and held == 0 and held_n == 0, figures)
        else:
            c.check("race (fixed kernel): the tool got back every token it received",
                    rx["tokens_received"] == tool_back, figures)
        c.check("race (fixed kernel): the binding freed with nothing outstanding, no pool left",
                bool(b.get("freed_ns")) and b.get("leaked_at_free") == 0 and not final and
                all(p.get("state") == "destroyed" for p in pools), figures)


SCENARIOS = {"race": scenario_race}
