#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of scripts/lab/assert_lightscale.py (issue 25) on a
hand-written results directory of the lightscale scenario: consistent
figures pass, a snapshot one token off, a missing holder row or a short
connection fail, without a VM."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lab")
sys.path.insert(0, LAB)
import assert_lightscale  # noqa: E402
import labcheck  # noqa: E402

CONNS, PER, PID, BID = 4, 3, 77, 5


def snap(tokens=CONNS * PER, niovs=CONNS * PER, rows=CONNS, per=PER, collect=2000000):
    holders = [{"pid": PID, "binding_id": BID, "tokens": per, "niovs": per}
               for _ in range(rows)]
    return {"bindings": [{"id": BID, "held_tokens": tokens, "held_by_sockets": niovs}],
            "holders": holders, "health": {"collect_ns": collect, "programs": [
                {"name": "tok_tp_recv", "run_time_ns": 1000, "run_cnt": 10}]},
            "metrics": {"binding_held_by_sockets": {"available": True, "source": "iter/tcp"}}}


def idle():
    return {"bindings": [], "holders": [], "health": {"collect_ns": 1000000, "programs": []},
            "metrics": {"binding_held_by_sockets": {"available": True, "source": "iter/tcp"}}}


def write(d, name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


def results(d, held=None, rx_over=None):
    rx = {"conns": CONNS, "conns_short": 0, "tokens_leaked": CONNS * PER,
          "pages_held": CONNS * PER, "binding_id": BID, "error": 0}
    rx.update(rx_over or {})
    write(d, "params", "conns=%d per=%d window=3 dmabuf=512M\n" % (CONNS, PER))
    write(d, "rx.json", json.dumps(rx) + "\n")
    write(d, "tx.json", json.dumps({"complete": True, "conns": CONNS, "bytes": 10,
                                    "requested": 10}) + "\n")
    write(d, "rx.env", "rx_pid=%d handout_seconds=9.0\n" % PID)
    write(d, "devmemtop.rcs", "full 0 2 5\nlight 0 0 0\n")
    light = [idle()] * 4 + [snap()] + (held or [snap()] * 3) + [idle()]
    write(d, "light.json", "".join(json.dumps(s) + "\n" for s in light))
    full = [idle(), idle(), snap(), snap(), snap()]
    write(d, "full.json", "".join(json.dumps(s) + "\n" for s in full))
    write(d, "windows", "idle 0 4 0 4000000\nheld 5 8 0 9000000\nfull_held 2 5\n")
    vv = ["tokens: iter/tcp: 9 TCP sockets, 0 holding 0 tokens; read 500 us (its BPF 300 us), "
          "count 10 us"] * 4
    vv += ["tokens: iter/tcp: 17 TCP sockets, %d holding %d tokens; read 900 us (its BPF 600 us)"
           ", count 50 us" % (CONNS, CONNS * PER)] * 4
    write(d, "light.log", "\n".join(vv) + "\n")


def run(d):
    c = labcheck.Checks("[t]")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert_lightscale.scenario_lightscale(c, d)
    return c, out.getvalue()


class TestLightscale(unittest.TestCase):
    def test_consistent_passes(self):
        with tempfile.TemporaryDirectory() as d:
            results(d)
            c, out = run(d)
            self.assertEqual(c.n["FAIL"], 0, out)
            self.assertGreaterEqual(c.n["PASS"], 7, out)
            self.assertIn("per held token, BPF", out)
            with open(os.path.join(d, "table.txt")) as f:
                self.assertIn("%d sockets, %d tokens held" % (CONNS, CONNS * PER), f.read())

    def test_one_token_off_fails(self):
        with tempfile.TemporaryDirectory() as d:
            results(d, held=[snap(), snap(tokens=CONNS * PER - 1), snap()])
            c, out = run(d)
            self.assertEqual(c.n["FAIL"], 1, out)
            self.assertIn("snapshot 1: held_tokens %d" % (CONNS * PER - 1), out)

    def test_missing_holder_row_fails(self):
        with tempfile.TemporaryDirectory() as d:
            results(d, held=[snap(), snap(rows=CONNS - 1), snap()])
            c, out = run(d)
            self.assertEqual(c.n["FAIL"], 1, out)

    def test_short_connection_fails(self):
        with tempfile.TemporaryDirectory() as d:
            results(d, rx_over={"conns_short": 1})
            c, out = run(d)
            self.assertEqual(c.n["FAIL"], 1, out)
            self.assertIn("FAIL [t] lightscale: the receiver held", out)


if __name__ == "__main__":
    unittest.main()
