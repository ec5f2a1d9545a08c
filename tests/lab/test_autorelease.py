#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of scripts/lab/assert_autorelease.py (issue 21) on
hand-written tracefs lines of kernel-patches 0012's events: the identities
it asserts must hold on a consistent trace and fail on a broken one, without
a VM."""
import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lab")
sys.path.insert(0, LAB)
import assert_autorelease  # noqa: E402
import labcheck  # noqa: E402

P = " devmem-traffic-99 [000] ..... 1.0: "
CREATE = P + ("devmem_binding_create: binding=00 id=3 ifindex=2 dmabuf_size=67108864 "
              "niov_size=4096 total_niovs=16384 nr_chunks=16384\n")
UNBIND = P + "devmem_binding_unbind: binding=00 id=3 free_niovs=1 total_niovs=16384 outstanding=%d\n"
FREE = P + "devmem_binding_free: binding=00 id=3 free_niovs=16384 total_niovs=16384 outstanding=%d\n"


def frag(off, size, token, on, uref):
    return P + ("devmem_frag_recv: sk=00 cookie=5 niov=01 id=3 dmabuf_offset=%d frag_offset=%d "
                "frag_size=%d token=%d autorelease=%d uref=%d\n"
                % (off & ~4095, off, size, token, on, uref))


def uref_dn(token, uref):
    return P + ("devmem_uref_dontneed: sk=00 cookie=5 niov=01 id=3 dmabuf_offset=%d token=%d "
                "uref=%d\n" % (token * 4096, token, uref))


def drain(token, urefs):
    return P + ("devmem_uref_drain: binding=00 id=3 niov=01 dmabuf_offset=%d token=%d urefs=%d\n"
                % (token * 4096, token, urefs))


def bdrain(niovs, urefs, reason="unbind"):
    return P + ("devmem_binding_drain: binding=00 id=3 niovs=%d urefs=%d reason=%s\n"
                % (niovs, urefs, reason))


def dontneed(freed):
    return P + "devmem_dontneed: sk=00 nr_ranges=1 nr_frags=%d nr_freed=%d\n" % (freed, freed)


def run_dir(root, label, lines, rx):
    d = os.path.join(root, label)
    os.makedirs(d)
    with open(os.path.join(d, "events.txt"), "w") as f:
        f.write("# tracer: nop\n" + "".join(lines))
    with open(os.path.join(d, "rx.json"), "w") as f:
        f.write(json.dumps(rx) + "\n")
    for name, text in (("tx.json", "{}"), ("rx.rc", "0"), ("tx.rc", "0"), ("lost", "0")):
        with open(os.path.join(d, name), "w") as f:
            f.write(text + "\n")


def rx_json(**kw):
    rx = {"binding_id": 3, "bytes": 8192, "frags": 3, "mismatches": 0, "tokens_received": 3,
          "tokens_returned": 0, "tokens_leaked": 0, "pages_held": 0, "autorelease": False,
          "token_not_niov": 0}
    rx.update(kw)
    return rx


class Quiet(labcheck.Checks):
    def __init__(self):
        super().__init__("[test]")
        self.failed = []
        self.skipped = []

    def check(self, name, ok, detail="", hint=""):
        if not ok:
            self.failed.append(name)
        self.n["PASS" if ok else "FAIL"] += 1
        return ok

    def skip(self, name, reason):
        self.skipped.append(name)
        self.n["SKIP"] += 1

    def info(self, name, detail):
        pass


class ManualMode(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()

    def check(self, label, lines, rx, kind):
        run_dir(self.root, label, lines, rx)
        c = Quiet()
        assert_autorelease.check_run(c, self.root, label, False, kind)
        return c

    def test_leak_drained_at_unbind(self):
        # two frags on niov 0 (one net_iov, count 2), one on niov 1; never
        # returned; the unbind drains 3 references on 2 niovs
        lines = [CREATE, frag(0, 2000, 0, 0, 1), frag(2000, 2096, 0, 0, 2),
                 frag(4096, 4096, 1, 0, 1), UNBIND % 2, drain(0, 2), drain(1, 1),
                 bdrain(2, 3), FREE % 0]
        c = self.check("off-leak", lines, rx_json(tokens_leaked=3, pages_held=2), "leak")
        self.assertEqual(c.failed, [])
        self.assertGreater(c.n["PASS"], 8)

    def test_returned_as_you_go(self):
        lines = [CREATE, frag(0, 4096, 0, 0, 1), uref_dn(0, 0), dontneed(1),
                 frag(4096, 4096, 1, 0, 1), uref_dn(1, 0), dontneed(1), UNBIND % 0,
                 bdrain(0, 0), FREE % 0]
        c = self.check("off-ret", lines, rx_json(frags=2, tokens_received=2, tokens_returned=2),
                       "ret")
        self.assertEqual(c.failed, [])

    def test_count_the_event_carries_is_checked(self):
        # the second frag on niov 0 claims count 1: the kernel's count went wrong
        lines = [CREATE, frag(0, 2000, 0, 0, 1), frag(2000, 2096, 0, 0, 1),
                 UNBIND % 1, drain(0, 2), bdrain(1, 2), FREE % 0]
        c = self.check("off-leak", lines, rx_json(frags=2, tokens_received=2, tokens_leaked=2,
                                                  pages_held=1), "leak")
        self.assertTrue(any("replayed count" in f for f in c.failed), c.failed)

    def test_undrained_reference_fails_the_identity(self):
        # a leaked reference the drain missed: held != 0 at the end
        lines = [CREATE, frag(0, 4096, 0, 0, 1), frag(4096, 4096, 1, 0, 1), UNBIND % 2,
                 drain(0, 1), bdrain(1, 1), FREE % 1]
        c = self.check("off-leak", lines, rx_json(frags=2, tokens_received=2, tokens_leaked=2,
                                                  pages_held=2), "leak")
        self.assertTrue(any("== held == 0 at the end" in f for f in c.failed), c.failed)
        self.assertTrue(any("0 outstanding" in f for f in c.failed), c.failed)

    def test_token_must_be_the_niov_index(self):
        lines = [CREATE, frag(8192, 4096, 7, 0, 1), UNBIND % 1, drain(7, 1), bdrain(1, 1),
                 FREE % 0]
        c = self.check("off-leak", lines, rx_json(frags=1, tokens_received=1, tokens_leaked=1,
                                                  pages_held=1), "leak")
        self.assertTrue(any("net_iov index" in f for f in c.failed), c.failed)


class Measurement(unittest.TestCase):
    """scenarios/autorelease-measure.sh's rows; the recordings' DONTNEED cost
    is stubbed (read from real recordings in the lab)."""
    ROW = ("AR_RESULT label=%s cell=%s mode=%s rx_rc=0 xa_calls=%s xa_lost=%s tokens=4096 "
           "returned=4096 bytes=16777216 recvmsg_calls=300 dontneed_calls=300 "
           "sys_seconds=%.3f user_seconds=0.1 seconds=1.0 autorelease=%s\n")

    def measure(self, off_xa, on_xa, lost="0"):
        d = tempfile.mkdtemp()
        with open(os.path.join(d, "ar-results.txt"), "w") as f:
            for cell in assert_autorelease.CELLS:
                for n in (1, 2):
                    f.write(self.ROW % ("%s-off-%d" % (cell, n), cell, "off", "none", "none",
                                        0.2, "false"))
                    f.write(self.ROW % ("%s-on-%d" % (cell, n), cell, "on", "none", "none",
                                        0.3, "true"))
                f.write(self.ROW % ("xa-%s-off" % cell, cell, "off", off_xa, lost, 0.2, "false"))
                f.write(self.ROW % ("xa-%s-on" % cell, cell, "on", on_xa, lost, 0.3, "true"))
        c = Quiet()
        c.kernel = "patched"
        real = assert_autorelease.dontneed_ns_per_token
        assert_autorelease.dontneed_ns_per_token = lambda c, d, r, on: 100.0 if on else 50.0
        try:
            assert_autorelease.scenario_autorelease_measure(c, d)
        finally:
            assert_autorelease.dontneed_ns_per_token = real
        with open(os.path.join(d, "autorelease-measure.json")) as f:
            return c, json.load(f), d

    def test_xarray_calls_per_token(self):
        c, m, d = self.measure(0, 3 * 4096)
        self.assertEqual(c.failed, [])
        self.assertEqual(m["4k-ret"]["on"]["xa_calls_per_token"], 3.0)
        self.assertEqual(m["16k-hold"]["off"]["runs"], 2)
        # 16 MiB in 0.2 s of system time: 12.8 s per GiB
        self.assertEqual(m["4k-hold"]["off"]["sys_s_per_gib"], [12.8, 12.8])
        with open(os.path.join(d, "values", "16k-ret-on-dontneed_ns_per_token.txt")) as f:
            self.assertEqual(f.read().split(), ["100.000", "100.000"])

    def test_xarray_calls_without_autorelease_fail(self):
        c, _, _ = self.measure(5, 3 * 4096)
        self.assertTrue(any("xarray calls per token" in f for f in c.failed), c.failed)

    def test_lost_trace_is_a_skip_not_a_pass(self):
        c, _, _ = self.measure(0, 3 * 4096, lost="12")
        self.assertEqual(c.failed, [])
        self.assertTrue(any("xarray calls per token" in s for s in c.skipped), c.skipped)

    def test_failed_receive_fails(self):
        d = tempfile.mkdtemp()
        with open(os.path.join(d, "ar-results.txt"), "w") as f:
            f.write(self.ROW.replace("rx_rc=0", "rx_rc=1") % ("4k-ret-off-1", "4k-ret", "off",
                                                               "none", "none", 0.2, "false"))
        c = Quiet()
        c.kernel = "patched"
        assert_autorelease.scenario_autorelease_measure(c, d)
        self.assertTrue(any("4k-ret off" in f for f in c.failed), c.failed)


if __name__ == "__main__":
    unittest.main()
