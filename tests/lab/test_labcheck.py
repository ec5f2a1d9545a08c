#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of the lab's trace parsing (scripts/lab/labcheck.py,
assert_selftests.py) on hand-written tracefs lines: what a lab run's
verdict rests on must not need a VM to be tested."""
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lab")
sys.path.insert(0, LAB)
import labcheck  # noqa: E402
import assert_selftests  # noqa: E402

HOLD = ("ip-1 [000] ..s1. 1.0: page_pool_state_hold: page_pool=%s netmem=0x%x "
        "is_net_iov=0, pfn=0x1 hold=%d\n")
REL = ("ip-1 [000] ..s1. 1.1: page_pool_state_release: page_pool=%s netmem=0x%x "
       "is_net_iov=0, pfn=0x1 release=%d\n")
PPREL = ("ip-1 [000] ..... 1.2: page_pool_release: page_pool=%s inflight=%d "
         "hold=%d release=%d cnt=%d\n")


def trace(lines):
    f = tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False)
    f.write("# tracer: nop\n" + "".join(lines))
    f.close()
    return f.name


class PoolReuse(unittest.TestCase):
    # the stats.py case: a pool freed at "ip link set down", the next one
    # (at "up") allocated at the same address and freed at the removal
    REUSED = [PPREL % ("000000001", 0, 0, 0, 1),
              PPREL % ("000000001", 0, 0, 0, 1)]

    def test_freed_pointer_is_a_new_pool(self):
        pools = assert_selftests.trace_pools(trace(self.REUSED))
        self.assertEqual(len(pools), 2)
        self.assertEqual(sorted(v["rel"] for v in pools.values()), [[0], [0]])

    def test_zombie_retries_stay_one_pool(self):
        # a pool retried while pages are in flight is one pool until freed
        p = "00000000a"
        lines = [HOLD % (p, 1, 1), PPREL % (p, 1, 1, 0, 1), PPREL % (p, 1, 1, 0, 2),
                 REL % (p, 1, 1), PPREL % (p, 0, 1, 1, 3)]
        pools = assert_selftests.trace_pools(trace(lines))
        self.assertEqual(len(pools), 1)
        (v,) = pools.values()
        self.assertEqual((v["rel"], v["holds"], v["releases"]), ([1, 1, 0], 1, 1))

    def test_parse_trace_splits_reused_pointer(self):
        p = "00000000b"
        lines = [HOLD % (p, 1, 1), REL % (p, 1, 1), PPREL % (p, 0, 1, 1, 1),
                 HOLD % (p, 2, 1), HOLD % (p, 3, 2), PPREL % (p, 2, 2, 0, 1)]
        pools, _ = labcheck.parse_trace(trace(lines))
        self.assertEqual(len(pools), 2)
        self.assertEqual(pools[p]["last"], (0, 1, 1))
        self.assertEqual(pools[p + "#2"]["holds"], 2)
        self.assertEqual(pools[p + "#2"]["last"], (2, 2, 0))


if __name__ == "__main__":
    unittest.main(verbosity=1)
