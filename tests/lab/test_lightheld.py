#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of the lab's light-mode exactness check (issue 25,
scripts/lab/assert_tokens.py: settled_window, in_window,
light_vs_full_held, light_held_in_window) on hand-written snapshots: the
verdict on light's held figures in bulk, exhaust, leak, sweep and
autorelease must be able to fail, null included (autorelease off too:
light reads the net_iov uref counts there)."""
import contextlib
import io
import os
import sys
import unittest

sys.dont_write_bytecode = True
LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lab")
sys.path.insert(0, LAB)
import assert_tokens as at  # noqa: E402
from labcheck import Checks  # noqa: E402

MS = 1000000
BID = 7
PID = 416
RX = {"tokens_received": 100, "pages_held": 90, "pid": PID, "autorelease": None}
TOOL = (100, 90, PID)


def snap(seq, ts_ms, handed=100, returned=0, released=0, held=(100, 90), rows=((PID, 100, 90),),
         collect_ms=None, bid=BID):
    s = {"seq": seq, "ts_ns": ts_ms * MS,
         "bindings": [{"id": bid, "tokens_handed": handed, "tokens_returned": returned,
                       "tokens_released": released, "held_tokens": held[0],
                       "held_by_sockets": held[1],
                       "held_reason": None if held[0] is not None else "snapshot-time token "
                       "walk incomplete"}],
         "holders": [{"pid": p, "tokens": t, "niovs": n, "binding_id": bid} for p, t, n in rows]}
    if collect_ms is not None:
        s["health"] = {"collect_ns": collect_ms * MS}
    return s


# the full mode every 200 ms: receiving, then every token held (seq 3-7),
# then returned
FULL = [snap(1, 0, handed=40, held=(40, 40), rows=((PID, 40, 40),)),
        snap(2, 200, handed=80, held=(80, 75), rows=((PID, 80, 75),)),
        snap(3, 400), snap(4, 600), snap(5, 800), snap(6, 1000), snap(7, 1200),
        snap(8, 1400, returned=100, held=(0, 0), rows=())]


def run(fn, *args):
    c = Checks("[t]")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn(c, *args)
    return c.n, out.getvalue()


class Window(unittest.TestCase):
    def test_settled_window_from_the_full_mode(self):
        win, lohi = at.settled_window(FULL, BID, RX)
        # the first one's token map may predate its counters: not compared
        self.assertEqual([s["seq"] for s in win], [4, 5, 6, 7])
        # no collect_ns (a recording): from the second one's start
        self.assertEqual(lohi, (600 * MS, 1200 * MS))
        full = [dict(s, health={"collect_ns": 30 * MS}) for s in FULL]
        self.assertEqual(at.settled_window(full, BID, RX)[1], (430 * MS, 1200 * MS))

    def test_drained_tokens_end_the_window(self):
        # autorelease off: the unbind drains what the socket left, counted
        # as drained, not released; the snapshots after it are not a hold
        full = [dict(s) for s in FULL[:7]]
        for k in (5, 6):
            full[k] = snap(k + 1, 200 * (k), held=(0, 0), rows=())
            full[k]["bindings"][0]["tokens_drained"] = 100
        win, lohi = at.settled_window(full, BID, RX)
        self.assertEqual([s["seq"] for s in win], [4, 5])
        self.assertEqual(lohi, (600 * MS, 800 * MS))

    def test_one_snapshot_is_no_window(self):
        self.assertIsNone(at.settled_window(FULL[:3], BID, RX)[1])

    def test_in_window_counts_the_reads(self):
        light = [snap(1, 590, collect_ms=5), snap(2, 700, collect_ms=5),
                 snap(3, 1190, collect_ms=5), snap(4, 1198, collect_ms=5)]
        self.assertEqual([s["seq"] for s in at.in_window(light, 600 * MS, 1200 * MS)], [2, 3])


class Verdict(unittest.TestCase):
    def check(self, light, rx=RX):
        return run(at.light_held_in_window, "light", light, FULL, BID, rx, TOOL)

    def test_equal_passes(self):
        n, out = self.check([snap(1, 700, collect_ms=5), snap(2, 950, collect_ms=5)])
        self.assertEqual(n, {"PASS": 1, "FAIL": 0, "SKIP": 0}, out)
        self.assertIn("tool: 100 tokens on 90 niovs, pid 416", out)

    def test_perturbed_light_fails(self):
        for bad in (dict(held=(99, 90), rows=((PID, 99, 90),)),
                    dict(held=(100, 89)),
                    dict(rows=((PID + 1, 100, 90),)),
                    dict(rows=())):
            n, out = self.check([snap(1, 700, collect_ms=5), snap(2, 950, collect_ms=5, **bad)])
            self.assertEqual(n["FAIL"], 1, (bad, out))

    def test_torn_first_full_snapshot_is_not_compared(self):
        # handed reached 100 after its tokens were read: 96 held
        full = [dict(s) for s in FULL]
        full[2] = snap(3, 400, held=(96, 88), rows=((PID, 96, 88),))
        n, out = run(at.light_held_in_window, "light", [snap(1, 700, collect_ms=5)], full,
                     BID, RX, TOOL)
        self.assertEqual(n["PASS"], 1, out)

    def test_full_mode_off_the_tool_fails(self):
        full = [dict(s) for s in FULL]
        full[4] = snap(5, 800, held=(100, 91))
        n, out = run(at.light_held_in_window, "light", [snap(1, 700, collect_ms=5)], full,
                     BID, RX, TOOL)
        self.assertEqual(n["FAIL"], 1, out)

    def test_no_light_snapshot_in_the_window_fails(self):
        n, out = self.check([snap(1, 300, collect_ms=5), snap(2, 1300, collect_ms=5)])
        self.assertEqual(n["FAIL"], 1, out)

    def test_binding_missing_in_light_fails(self):
        n, out = self.check([snap(1, 700, collect_ms=5, bid=BID + 1)])
        self.assertEqual(n["FAIL"], 1, out)

    def test_null_fails_in_every_mode(self):
        # light reads autorelease-off tokens from the net_iov uref counts
        # (issue 25): null is a failure there too, no longer a SKIP
        light = [snap(1, 700, collect_ms=5, held=(None, None), rows=())]
        for ar in (None, True, False):
            n, out = self.check(light, dict(RX, autorelease=ar))
            self.assertEqual(n, {"PASS": 0, "FAIL": 1, "SKIP": 0}, (ar, out))

    def test_autorelease_off_row_has_unknown_counts(self):
        # the binding's figures as with autorelease; the holder row is the
        # receiver's socket with tokens and niovs null (no count per socket)
        rx = dict(RX, autorelease=False)
        ok = [snap(1, 700, collect_ms=5, rows=((PID, None, None),))]
        n, out = self.check(ok, rx)
        self.assertEqual(n, {"PASS": 1, "FAIL": 0, "SKIP": 0}, out)
        for bad in (dict(rows=((PID, 100, 90),)), dict(rows=((PID + 1, None, None),)),
                    dict(rows=()), dict(held=(100, 89), rows=((PID, None, None),))):
            n, out = self.check([snap(1, 700, collect_ms=5, **bad)], rx)
            self.assertEqual(n["FAIL"], 1, (bad, out))

    def test_nothing_held_means_no_holder_row(self):
        # bulk's idle point: every token back, so no row in either mode
        idle = snap(9, 2000, returned=100, held=(0, 0), rows=())
        n, out = run(at.light_vs_full_held, "idle", [idle], [idle], BID, (0, 0, PID), None)
        self.assertEqual(n["PASS"], 1, out)
        stale = snap(9, 2000, returned=100, held=(0, 0), rows=((PID, 0, 0),))
        n, out = run(at.light_vs_full_held, "idle", [stale], [idle], BID, (0, 0, PID), None)
        self.assertEqual(n["FAIL"], 1, out)


if __name__ == "__main__":
    unittest.main()
