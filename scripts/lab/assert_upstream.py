#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""assert_upstream.py --dir OUT/<kernel> --kernel NAME --scenarios S...

Host-side checks of the "upstream" lab scenario (nothing for other
scenarios): upstream's own devmem TCP selftest, devmem.py, unmodified from
the 7.3 source, run against the lab's netdevsim (scenarios/upstream.sh),
and devmemtop beside it. Issue 34: upstream's tests judge the lab's kernel
and devmemtop.

  devmem.tap, .rc, .err   every case of devmem.py has the verdict EXPECT
                          documents for this lab: a pass where netdevsim
                          serves the case (RX, header split, TX with
                          7.3/0014, 16 KiB niovs with 7.3/0015); where it
                          cannot, the test's own refusal, found in its
                          output, is a SKIP naming it. A case that fails for
                          any other reason, or a documented refusal that
                          stops happening, fails the check (then EXPECT is
                          updated with the kernel that changed it).
  devmemtop-live.json     (-m full) and devmemtop-default.json (the default
                          -m devmem): each saw at least the binds of the
                          cases that pass (LISTENS; the probes bind too) and
                          the TX binds (TX_BINDS) with direction tx and
                          every RX figure null with the reason, on
                          the test's netdev (4 KiB or 16 KiB niovs, at
                          least one 16 KiB binding with RX traffic per
                          check_rx_large_niov payload), every one
                          freed by the end with no niov leaked; and the two
                          modes agree on every binding (EQUAL).

And of the "txdm" scenario (scenarios/txdm.sh, issue 35): devmem TX with
refused sends. The sender sent the whole dma-buf and the sink read every
byte of the pattern; its probe naming no TX binding got EINVAL and its send
at the dma-buf's end EFAULT. Both devmemtop modes count on the TX binding
what it did: its sendmsg calls (the refused one at the end included: the
binding was found), its bytes, one refused send, no reference left, each
niov's reference timed; the kernel-wide tx_no_binding is 1.
Prints "upstream: N passed, N failed, N skipped"; exit 1 if anything failed.
"""
import errno
import json
import argparse
import os
import sys

sys.dont_write_bytecode = True	# no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labcheck import Checks, DEVMEMTOP, json_lines, kv, read, read_int  # noqa: E402
from assert_selftests import KTAP, ktap  # noqa: E402

# devmem.py's cases on the lab's netdevsim. "ok": must pass; ("refused",
# text, why): must fail or skip with text in its output (the kernel's or
# the test's own words), reported as a SKIP with why.
EXPECT = {
    "check_rx": "ok",
    "check_tx": "ok",		# kernel-patches/7.3/0014
    "check_tx_chunks": "ok",
    "check_rx_hds": "ok",
    "check_rx_large_niov": "ok",	# kernel-patches/7.3/0015 (rx-page-size opt-in)
}
def case_output(path):
    """{case: the lines of the KTAP file since the previous case's result},
    cases named as ktap() names them."""
    out, buf = {}, []
    for line in (read(path) or "").splitlines():
        buf.append(line)
        m = KTAP.match(line)
        if m:
            out[m.group(3).split(".", 1)[-1]] = "\n".join(buf)
            buf = []
    return out


def check_cases(c, d):
    tap = os.path.join(d, "devmem.tap")
    rc = read_int(os.path.join(d, "devmem.rc"))
    plan, cases, totals = ktap(tap)
    text = case_output(tap)
    if not c.check("devmem.py ran to its end", plan == len(EXPECT) and rc in (0, 1),
                   "rc=%s, KTAP plan %s, %d results" % (rc, plan, len(cases)),
                   "see %s and devmem.err (rc 124/137: killed by the scenario's timeout)"
                   % tap):
        return
    for case, exp in EXPECT.items():
        got = cases.get(case)
        name = "devmem.py %s" % case
        if got is None:
            c.check(name, False, hint="no result in %s" % tap)
            continue
        ok, directive, reason = got
        verdict = "%s%s" % ("ok" if ok else "not ok",
                            " # %s %s" % (directive, reason) if directive else "")
        if exp == "ok":
            c.check(name + " passes", ok and directive == "", verdict,
                    "see %s" % tap)
        elif exp[1] in text.get(case, ""):
            c.skip(name, "%s (%s: '%s')" % (exp[2], verdict, exp[1]))
        else:
            c.check(name + " refused as documented", False, verdict,
                    "'%s' not in its output: the kernel or the test changed, "
                    "update EXPECT (see %s)" % (exp[1], tap))
    if totals:
        c.info("devmem.py KTAP totals", " ".join("%s:%d" % kv for kv in totals.items()))


# ncdevmem listens (binds) of the cases that pass on netdevsim: check_rx
# once, check_rx_hds once per payload size (12 sizes in 7.3's devmem_lib),
# check_rx_large_niov once per payload size (6), with 16 KiB niovs
LISTENS = 1 + 12 + 6
LARGE_NIOV_LISTENS = 6
# TX binds: check_tx and check_tx_chunks, one ncdevmem client each
TX_BINDS = 2
# what each of them sends: `echo -e "hello\nworld" | ncdevmem ...`, which
# reads its input a line at a time (getline) and sends each line with one
# sendmsg(SCM_DEVMEM_DMABUF): 2 calls, 12 bytes, nothing refused; netdevsim's
# transmit (0014) frees every skb, so no reference is left at the end
TX_WANT = {"tx_sendmsg_calls": 2, "tx_bytes": 12, "tx_errors": 0, "tx_niov_refs": 0}
# what the default mode must count exactly as the full mode, per binding
EQUAL = ("alloc_calls", "alloc_niovs", "niov_frees", "outstanding_at_unbind",
         "leaked_at_free", "niov_size", "total_niovs", "ifindex", "direction",
         "tx_sendmsg_calls", "tx_bytes", "tx_errors", "tx_niov_refs")


def bindings_of(d, f):
    """{binding id: its row in the last snapshot that has it}, snapshots."""
    snaps = [s for s in json_lines(d, f) if s]
    seen = {}
    for s in snaps:
        for b in s.get("bindings") or []:
            seen[b["id"]] = b
    return seen, snaps


def check_devmemtop(c, d, ifindex):
    runs = {}
    for run in ("devmemtop-live", "devmemtop-default"):
        seen, snaps = bindings_of(d, run + ".json")
        runs[run] = seen
        bad = []
        tx = {bid: b for bid, b in seen.items() if b.get("direction") == "tx"}
        for bid, b in sorted(tx.items()):
            # RX figures of a TX binding: null with the reason, never 0
            rx_figs = {k: b.get(k) for k in ("free_niovs", "occupancy", "in_pools",
                                             "held_tokens", "held_by_sockets")}
            if any(v is not None for v in rx_figs.values()) or \
               "TX binding" not in (b.get("held_reason") or ""):
                bad.append("TX binding %s shows RX figures %s (held_reason %r)"
                           % (bid, rx_figs, b.get("held_reason")))
            if b.get("alloc_calls"):
                bad.append("TX binding %s had %s provider calls" % (bid, b.get("alloc_calls")))
            # its TX figures: what ncdevmem sent, every niov reference timed
            tx_figs = {k: b.get(k) for k in TX_WANT}
            if tx_figs != TX_WANT:
                bad.append("TX binding %s: %s, ncdevmem sent %s" % (bid, tx_figs, TX_WANT))
            if not (b.get("tx_ref_time_ns") or {}).get("count"):
                bad.append("TX binding %s: no niov reference timed (%s)"
                           % (bid, b.get("tx_ref_time_ns")))
        for bid, b in sorted(seen.items()):
            if bid not in tx and any(b.get(k) is not None for k in TX_WANT):
                bad.append("RX binding %s shows TX figures %s"
                           % (bid, {k: b.get(k) for k in TX_WANT}))
        txm = (snaps[-1].get("metrics") or {}).get("binding_tx") if snaps else None
        if not (txm or {}).get("available"):
            bad.append("TX figures unavailable: %s" % (txm or {}).get("reason"))
        large = [bid for bid, b in seen.items()
                 if b.get("niov_size") == 16384 and b.get("alloc_calls")]
        if len(large) < LARGE_NIOV_LISTENS:
            bad.append("%d bindings of 16 KiB niovs with RX traffic, check_rx_large_niov "
                       "made %d" % (len(large), LARGE_NIOV_LISTENS))
        if len(tx) != TX_BINDS:
            bad.append("%d TX bindings (direction tx), devmem.py made %d" % (len(tx), TX_BINDS))
        for bid, b in sorted(seen.items()):
            if b.get("ifindex") != ifindex:
                bad.append("binding %s on ifindex %s" % (bid, b.get("ifindex")))
            # every bind is at one of the two sizes devmem.py asks for (0 =
            # 4 KiB, and 16 KiB: its probe and check_rx_large_niov)
            if b.get("niov_size") not in (4096, 16384):
                bad.append("binding %s niov size %s, %s provider calls"
                           % (bid, b.get("niov_size"), b.get("alloc_calls")))
            if b.get("freed_ns") is None:
                bad.append("binding %s not freed by the end" % bid)
            if b.get("leaked_at_free") != 0:
                bad.append("binding %s leaked %s niovs at free" % (bid, b.get("leaked_at_free")))
        c.check("%s saw devmem.py's binds (>= %d RX, %d TX with direction tx, no RX "
                "figure and the TX figures of what ncdevmem sent), each on the test's netdev, "
                "4 or 16 KiB niovs (%d of 16 KiB with traffic), freed, nothing leaked"
                % (run, LISTENS, TX_BINDS, LARGE_NIOV_LISTENS),
                len(seen) - len(tx) >= LISTENS and not bad and ifindex is not None,
                "%d bindings in %d snapshots, %d TX, %d with RX traffic" % (
                    len(seen), len(snaps), len(tx),
                    sum(1 for b in seen.values() if b.get("alloc_calls"))),
                "; ".join(bad) or "%d bindings (ifindex %s; see %s.log)" % (len(seen), ifindex, run))
    full, dflt = runs["devmemtop-live"], runs["devmemtop-default"]
    diffs = ["binding %s only in %s" % (bid, "full" if bid in full else "default")
             for bid in sorted(set(full) ^ set(dflt))]
    for bid in sorted(set(full) & set(dflt)):
        for k in EQUAL:
            if full[bid].get(k) != dflt[bid].get(k):
                diffs.append("binding %s %s: full %s, default %s"
                             % (bid, k, full[bid].get(k), dflt[bid].get(k)))
    c.check("devmemtop default (-m devmem) equals the full mode on every binding of devmem.py",
            bool(full) and not diffs,
            "%d bindings; %s" % (len(full), ", ".join(EQUAL)), "; ".join(diffs[:8]))


def check_txdm(c, d):
    """scenarios/txdm.sh against devmemtop's TX figures (see the docstring)."""
    name = "txdm: devmem TX sent the dma-buf, the sink got every byte, the two probes refused"
    tx = read(os.path.join(d, "txdm.json"))
    sink = read(os.path.join(d, "sink.json"))
    try:
        tx, sink = json.loads(tx), json.loads(sink)
    except (TypeError, ValueError):
        c.check(name, False, hint="no txdm.json/sink.json in %s (see txdm.log, sink.log)" % d)
        return
    ok = (tx.get("complete") and read_int(os.path.join(d, "txdm.rc")) == 0 and
          read_int(os.path.join(d, "sink.rc")) == 0 and sink.get("mismatches") == 0 and
          sink.get("bytes") == tx.get("bytes") and tx.get("bytes") and
          tx.get("unbound_errno") == errno.EINVAL and tx.get("range_errno") == errno.EFAULT)
    c.check(name, ok, "sender %s; sink %s" % (tx, sink), "sender %s; sink %s" % (tx, sink))
    if not ok:
        return
    want = {"direction": "tx", "tx_sendmsg_calls": tx["sendmsg_calls"],
            "tx_bytes": tx["bytes"], "tx_errors": 1, "tx_niov_refs": 0}
    for run in ("devmemtop-live", "devmemtop-default"):
        seen, snaps = bindings_of(d, run + ".json")
        b = seen.get(tx["binding_id"], {})
        got = {k: b.get(k) for k in want}
        timed = (b.get("tx_ref_time_ns") or {}).get("count")
        nob = snaps[-1].get("tx_no_binding") if snaps else None
        c.check("txdm: %s counts on TX binding %s what the sender did: its calls, bytes, "
                "one refused send, no reference left, each niov's reference timed; one send "
                "naming no TX binding" % (run, tx["binding_id"]),
                got == want and bool(timed) and nob == 1 and b.get("freed_ns") is not None,
                "%s, %s references timed, tx_no_binding %s, freed_ns %s"
                % (got, timed, nob, b.get("freed_ns")),
                "devmemtop %s (%s timed, freed_ns %s, tx_no_binding %s), sender %s"
                % (got, timed, b.get("freed_ns"), nob, want))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--scenarios", nargs="+", required=True)
    a = ap.parse_args()
    if "upstream" not in a.scenarios and "txdm" not in a.scenarios:
        return 0
    c = Checks("[%s]" % a.kernel)
    if "txdm" in a.scenarios:
        check_txdm(c, os.path.join(a.dir, "txdm"))
    if "upstream" not in a.scenarios:
        print("upstream: %d passed, %d failed, %d skipped" % (c.n["PASS"], c.n["FAIL"],
                                                             c.n["SKIP"]))
        return 1 if c.n["FAIL"] else 0
    d = os.path.join(a.dir, "upstream")
    skip = read(os.path.join(d, "skip"))
    if skip is not None:
        c.skip("upstream's devmem selftests", skip.strip())
    elif not os.path.isdir(d):
        c.check("upstream scenario ran", False, "no %s" % d)
    else:
        check_cases(c, d)
        setup = kv(read(os.path.join(d, "setup.txt"), ""))
        ifindex = int(setup["ifindex"]) if setup.get("ifindex", "").isdigit() else None
        if not os.access(DEVMEMTOP, os.X_OK):
            c.skip("devmemtop checks of upstream", "%s not built" % DEVMEMTOP)
        else:
            check_devmemtop(c, d, ifindex)
    print("upstream: %d passed, %d failed, %d skipped" % (c.n["PASS"], c.n["FAIL"], c.n["SKIP"]))
    return 1 if c.n["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
