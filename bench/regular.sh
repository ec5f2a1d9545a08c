#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What devmemtop costs a regular page pool (issue 36): the host bed's veth
# stream (XDP_PASS on the receiver: a pool of pages, as every non-devmem RX
# queue of an mlx5 host), side by side in one run.
#  1. Run counts: devmemtop's default, the devmem mode (-m devmem), and the
#     full mode (-m full) attached at once; per round a SECONDS stream; per
#     program the kernel's run_cnt and run_time_ns before and after
#     (kernel.bpf_stats_enabled=1) against the pages the stream moved (the
#     pool's holds, as the devmem mode reads them from the pool's counters).
#     Goal: every program the devmem mode keeps attached ran 0 times per
#     page. The two it runs itself at snapshot time (light_read once per
#     located pool, walk_binding once per binding; BPF_PROG_TEST_RUN) are
#     printed per snapshot. Each devmemtop takes its first sampling window
#     (120 ms of per-page programs: the refill batches of pools of pages are
#     sampled) at its first snapshot, before the first round; the next one
#     comes 60 s later: rounds * (SECONDS + ~2 s) must stay below that, which
#     the script checks.
#  2. Throughput: bench/bystander.sh with BYST_MODES="devmem" unless set
#     (devmemtop -m devmem attached vs not attached, paired per round, and
#     BYST_SLICES pairs of slices; compare --paired and the >= 99 % goal's
#     verdict). BENCH_THROUGHPUT=0 skips it.
#
# usage: bench/regular.sh [ROUNDS] [SECONDS]   (root; make bench-assets;
#        default 5 rounds of 4 s; BYST_ROUNDS, BYST_SECS, BYST_SLICES for part 2,
#        default 5 rounds of 5 s and 50 slice pairs)
source "$(dirname "$0")/../tests/integration/lib.sh"
source "$(dirname "$0")/lib.sh"
ROUNDS=${1:-5}
SECS=${2:-4}
need_root
need_dmt
need_cmd bpftool
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ && "$SECS" =~ ^[1-9][0-9]*$ ]] ||
	fail "usage: bench/regular.sh [ROUNDS] [SECONDS] (positive integers)"
(( ROUNDS * (SECS + 2) < 50 )) ||
	fail "ROUNDS x (SECONDS + 2 s) must stay below 50 s: the devmem mode's next window is 60 s away"

bench_bpf_stats_on
testbed_up
# a stream while both attach: the devmem mode's first window locates the pool
testbed_traffic 600
testbed_flowing
"$DMT" --json -i 1s -m devmem --iface "$IF_RX" >"$TMPD/dm.json" 2>"$TMPD/dm.err" &
dm=$!; _TB_PIDS+=($dm)
"$DMT" --json -i 1s -m full --iface "$IF_RX" >"$TMPD/full.json" 2>"$TMPD/full.err" &
full=$!; _TB_PIDS+=($full)
# holds of the veth's pool in the devmem mode's latest snapshot ("" if none)
holds() {
	tail -1 "$TMPD/dm.json" 2>/dev/null | python3 -c '
import json, sys
s = json.loads(sys.stdin.readline())
h = [p["holds"] for p in s["pools"] if p["ifname"] == sys.argv[1] and p["state"] == "alive"]
print(s["seq"], h[0] if h else "")' "$IF_RX" 2>/dev/null
}
for i in $(seq 300); do
	read -r seq h < <(holds)
	[ -n "$h" ] && [ -s "$TMPD/full.json" ] && break
	kill -0 $dm && kill -0 $full || fail "devmemtop exited: $(cat "$TMPD/dm.err" "$TMPD/full.err")"
	sleep 0.2
done
[ -n "$h" ] || fail "the devmem mode did not locate the veth's pool in 60 s"
testbed_stop
sleep 2

for r in $(seq "$ROUNDS"); do
	for w in dm full; do prog_stats ${!w} >"$TMPD/$w.$r.a"; done
	holds >"$TMPD/holds.$r.a"
	testbed_traffic "$SECS"
	testbed_wait
	sleep 1.2	# a snapshot after the stream
	for w in dm full; do prog_stats ${!w} >"$TMPD/$w.$r.b"; done
	holds >"$TMPD/holds.$r.b"
done
kill -INT $dm $full
wait $dm $full 2>/dev/null

echo "regular pool: $ROUNDS rounds x ${SECS}s of the veth stream, kernel $(uname -r)," \
     "load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$TMPD" "$ROUNDS" <<'PY' || fail "the devmem mode ran a program per page"
import json, sys
d, rounds = sys.argv[1], int(sys.argv[2])
snapshot_run = ("light_read", "walk_binding")

def load(path):
    out = {}
    for line in open(path):
        if line.strip():
            j = json.loads(line)
            c, t = out.get(j["name"], (0, 0))
            out[j["name"]] = (c + j.get("run_cnt", 0), t + j.get("run_time_ns", 0))
    return out

def seq_holds(path):
    seq, h = open(path).read().split()
    return int(seq), int(h)

bad = []
tot = {"dm": {}, "full": {}}
pages = snaps = 0
print(f"{'round':>5} {'pages':>9} {'devmem runs/page':>17} {'full runs/page':>15} "
      f"{'devmem ns/page':>15} {'full ns/page':>13} {'ratio':>6}")
for r in range(1, rounds + 1):
    s0, h0 = seq_holds(f"{d}/holds.{r}.a")
    s1, h1 = seq_holds(f"{d}/holds.{r}.b")
    n, snaps = h1 - h0, snaps + s1 - s0
    pages += n
    row = {}
    for w in ("dm", "full"):
        a, b = load(f"{d}/{w}.{r}.a"), load(f"{d}/{w}.{r}.b")
        runs = ns = 0
        for name in b:
            dc = b[name][0] - a.get(name, (0, 0))[0]
            dt = b[name][1] - a.get(name, (0, 0))[1]
            c = tot[w].setdefault(name, [0, 0])
            c[0] += dc
            c[1] += dt
            if name in snapshot_run:
                continue
            runs += dc
            ns += dt
            if w == "dm" and dc:
                bad.append((r, name, dc))
        row[w] = (runs, ns)
    print(f"{r:>5} {n:>9} {row['dm'][0] / n:>17.4f} {row['full'][0] / n:>15.3f} "
          f"{row['dm'][1] / n:>15.2f} {row['full'][1] / n:>13.1f} "
          f"{row['dm'][1] / row['full'][1] if row['full'][1] else 0:>6.3f}")
print(f"per program over {pages} pages ({snaps} snapshots of the devmem mode):")
for w, label in (("dm", "-m devmem"), ("full", "-m full")):
    for name, (c, t) in sorted(tot[w].items()):
        per = f"{c / snaps:.2f} runs/snapshot" if name in snapshot_run else f"{c / pages:.4f} runs/page"
        print(f"  {label:<9} {name:<20} {c:>9} runs {t / 1e6:>9.3f} ms  {per}")
if bad:
    print("devmem mode: programs that ran during a stream:", bad)
    sys.exit(1)
print("devmem mode: 0 runs per regular page (goal: 0)")
PY
testbed_down

[ "${BENCH_THROUGHPUT:-1}" = 0 ] && exit 0
echo
echo "throughput (bench/bystander.sh):"
BYST_MODES=${BYST_MODES:-devmem} BYST_SLICES=${BYST_SLICES:-50} \
	"$(dirname "$0")/bystander.sh" "${BYST_ROUNDS:-5}" "${BYST_SECS:-5}"
