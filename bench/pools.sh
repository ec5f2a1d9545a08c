#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What the per-page programs still cost a pool of pages under --pools devmem
# (issue 25): side by side in one run, on the same veth test bed traffic,
# three sets of programs attached at once to the page_pool hold/release
# tracepoints: devmemtop --pools all (the full per-page path), devmemtop
# --pools devmem (the early return for a page) and empty tp_btf programs
# (the floor: a program's entry and exit alone). The veth's pool is a pool
# of pages, so every event takes the early return under --pools devmem.
# --pools devmem runs with --sampling 1ms/1h: no locate window during the
# rounds (with the default 20ms/10s, 0.2 % of the events take the full
# path). Costs come from the kernel's own accounting
# (kernel.bpf_stats_enabled: run_time_ns / run_cnt per program). Prints each
# round and the median ratios.
#
# usage: bench/pools.sh [ROUNDS] [SECONDS]     (root; default 5 rounds of 4 s)
#        TB_RX_CHUNK=8388608 bench/pools.sh ...  the bed's highest event rate
#        (the receiver reads 8 MiB at a time: every page a hold and a release)
source "$(dirname "$0")/../tests/integration/lib.sh"
source "$(dirname "$0")/lib.sh"
ROUNDS=${1:-5}
SECS=${2:-4}
need_root
need_dmt
need_cmd bpftool
ATTACH=$TOP/build/bench/attach
EMPTY=$TOP/build/bench/empty.bpf.o
[ -x "$ATTACH" ] && [ -f "$EMPTY" ] || fail "make bench-assets first"

bench_bpf_stats_on


testbed_up
"$DMT" --json -i 1s --pools all >/dev/null 2>"$TMPD/all.err" &
all=$!; _TB_PIDS+=($all)
"$DMT" --json -i 1s --pools devmem --sampling 1ms/1h >/dev/null 2>"$TMPD/devmem.err" &
dev=$!; _TB_PIDS+=($dev)
"$ATTACH" "$EMPTY" >"$TMPD/empty.out" 2>&1 &
empty=$!; _TB_PIDS+=($empty)
for i in $(seq 150); do
	grep -q ready "$TMPD/empty.out" && [ -n "$(prog_stats $all)" ] &&
		[ -n "$(prog_stats $dev)" ] && break
	sleep 0.2
done
kill -0 $all && kill -0 $dev || fail "devmemtop exited: $(cat "$TMPD/all.err" "$TMPD/devmem.err")"
sleep 1

for r in $(seq "$ROUNDS"); do
	for w in all dev empty; do prog_stats ${!w} >"$TMPD/$w.$r.a"; done
	testbed_traffic "$SECS"
	testbed_wait
	for w in all dev empty; do prog_stats ${!w} >"$TMPD/$w.$r.b"; done
done

PYTHONPATH="$(dirname "$0")" python3 - "$TMPD" "$ROUNDS" <<'PY'
import json, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])

from progstats import per_event

ours = ("pp_hold", "pp_release")
rows = []
print("round   events  --pools all ns/ev  --pools devmem ns/ev  empty ns/ev  devmem/all  devmem/empty")
for r in range(1, rounds + 1):
    a, n = per_event(d, "all", r, lambda s: s in ours)
    dv, _ = per_event(d, "dev", r, lambda s: s in ours)
    e, _ = per_event(d, "empty", r, lambda s: s in ("empty_hold", "empty_release"))
    rows.append((a, dv, e))
    print("%5d %8d %18.1f %21.1f %12.1f %11.3f %13.3f" % (r, n, a, dv, e, dv / a, dv / e))
for label, f in (("devmem/all", lambda a, dv, e: dv / a), ("devmem/empty", lambda a, dv, e: dv / e),
                 ("devmem - empty (ns)", lambda a, dv, e: dv - e), ("all - empty (ns)", lambda a, dv, e: a - e)):
    v = sorted(f(*x) for x in rows)
    print("median %-20s %8.3f   (min %.3f, max %.3f)" % (label, statistics.median(v), v[0], v[-1]))
PY
