#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Per-event cost of devmemtop's hot-path programs (page_pool hold/release),
# side by side in one run with (a) empty tp_btf programs on the same
# tracepoints and (b) an equivalent bpftrace script (bench/pool.bt), all
# attached at once to the same veth test bed traffic. Costs come from the
# kernel's own accounting (kernel.bpf_stats_enabled: run_time_ns / run_cnt
# per program). Prints each round and the median ratios against the targets:
# ours <= 1.5x empty, bpftrace >= 4x ours.
#
# usage: bench/overhead.sh [ROUNDS] [SECONDS]     (root; default 3 rounds of 6 s)
source "$(dirname "$0")/../tests/integration/lib.sh"
source "$(dirname "$0")/lib.sh"
ROUNDS=${1:-3}
SECS=${2:-6}
need_root
need_dmt
need_cmd bpftrace
need_cmd bpftool
ATTACH=$TOP/build/bench/attach
EMPTY=$TOP/build/bench/empty.bpf.o
[ -x "$ATTACH" ] && [ -f "$EMPTY" ] || fail "make bench-assets first"

bench_bpf_stats_on


testbed_up
# the full mode: the one that runs the hot-path programs on every page
"$DMT" -m full --json -i 1s >/dev/null 2>"$TMPD/dmt.err" &
dmt=$!; _TB_PIDS+=($dmt)
"$ATTACH" "$EMPTY" >"$TMPD/empty.out" 2>&1 &
empty=$!; _TB_PIDS+=($empty)
bpftrace "$TOP/bench/pool.bt" >"$TMPD/bt.out" 2>&1 &
bt=$!; _TB_PIDS+=($bt)
for i in $(seq 100); do
	grep -q ready "$TMPD/empty.out" && grep -q Attaching "$TMPD/bt.out" && break
	sleep 0.2
done
grep -q Attaching "$TMPD/bt.out" || fail "bpftrace did not attach: $(cat "$TMPD/bt.out")"
sleep 1

for r in $(seq "$ROUNDS"); do
	{ prog_stats $dmt; } >"$TMPD/dmt.$r.a"; prog_stats $empty >"$TMPD/empty.$r.a"
	prog_stats $bt >"$TMPD/bt.$r.a"
	testbed_traffic "$SECS"
	testbed_wait
	prog_stats $dmt >"$TMPD/dmt.$r.b"; prog_stats $empty >"$TMPD/empty.$r.b"
	prog_stats $bt >"$TMPD/bt.$r.b"
done

PYTHONPATH="$(dirname "$0")" python3 - "$TMPD" "$ROUNDS" <<'PY'
import json, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])

from progstats import per_event

rows = []
print("round  events   devmemtop ns/ev  empty ns/ev  bpftrace ns/ev  ours/empty  bpftrace/ours")
for r in range(1, rounds + 1):
    ours, n = per_event(d, "dmt", r, lambda s: s in ("pp_hold", "pp_release"))
    empty, _ = per_event(d, "empty", r, lambda s: s in ("empty_hold", "empty_release"))
    bt, _ = per_event(d, "bt", r, lambda s: "page_pool" in s or "tracepoint" in s)
    rows.append((ours, empty, bt))
    print("%5d %8d %16.1f %12.1f %15.1f %11.2f %14.2f" % (r, n, ours, empty, bt, ours / empty, bt / ours))
mo = statistics.median(o / e for o, e, _ in rows)
mb = statistics.median(b / o for o, _, b in rows)
print("median ours/empty = %.2f (target <= 1.5): %s" % (mo, "MET" if mo <= 1.5 else "MISSED"))
print("median bpftrace/ours = %.2f (target >= 4): %s" % (mb, "MET" if mb >= 4 else "MISSED"))
PY
