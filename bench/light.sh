#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cost vs packet rate, full mode against light mode, side by side in one run:
# both devmemtop processes watch the same veth test bed traffic at once,
# driven at several rates (percent of the bed's unlimited rate: the sender
# sends at full speed for that share of every second). Per rate and
# mode: kernel-side BPF run time per second over all the programs the
# process holds (kernel.bpf_stats_enabled; run_time_ns deltas, light mode's
# counter reads and sampling windows included) and the collector's own CPU
# per second (on-CPU ns of its threads, /proc/PID/task/*/schedstat). Prints the table, the
# light/full ratios, light mode's spread across rates, and the goal (light's
# total <= 2 % of full's at the highest rate). The pools column counts the
# page pools the collectors saw during the row: both watch the whole host,
# so traffic other than the bed's (another engineer's tests) shows up there
# and in both modes' figures; run it on a quiet machine.
#
# Light mode holds its held-token iterator (iter/tcp, bpf/tokiter.bpf.c,
# issue 25): it runs once per snapshot over every TCP socket of the
# namespace, its run time is in light's BPF column and shown on its own
# (iter BPF us/s); but most of the iterator's cost is outside its BPF
# program: the TCP iterator walks every bucket of the TCP hash tables in
# the kernel (262,144 on a host with this one's memory) whatever they
# hold, charged to the collector's read(). Light runs with -vv, whose
# per-snapshot "read N us" is the whole walk (kernel and BPF): the iter
# walk ms/s column, part of light's collector CPU. The bench checks
# light's JSON says held_by_sockets comes from the iterator. LIGHT_TCP_CONNS=N opens N idle loopback connections (2N sockets)
# in devmemtop's namespace for the run, for the iterator to walk.
#
# usage: bench/light.sh [SECONDS] [PERCENTS...]  (root; default 10 s at 10 50 100)
# LIGHT_SAMPLING=W/P: --sampling for light mode (default: none, the mode's own
# default, 120ms/60s).
source "$(dirname "$0")/../tests/integration/lib.sh"
source "$(dirname "$0")/lib.sh"
SECS=${1:-10}
shift || true
PCTS=("${@:-10}")
[ $# -gt 0 ] || PCTS=(10 50 100)
SAMPLING=${LIGHT_SAMPLING:-}
sampling=()
[ -n "$SAMPLING" ] && sampling=(--sampling "$SAMPLING")
# the receiver reads 8 MiB at a time: pages return to the pool in bursts
# past its recycling ring, so every page is a hold and a release event
# (tcp_stream.py); LIGHT_RX_CHUNK=0 reads 1 MiB at a time (recycling)
export TB_RX_CHUNK=${LIGHT_RX_CHUNK-8388608}
[ "$TB_RX_CHUNK" = 0 ] && TB_RX_CHUNK=
need_root
need_dmt
need_cmd bpftool

bench_bpf_stats_on

# total run_time_ns and run_cnt of the programs a process holds, and the
# held-token iterator's run_time_ns on its own
bpf_ns() {
	prog_stats "$1" | python3 -c '
import json, sys
t = n = it = 0
for l in sys.stdin:
    if l.strip():
        p = json.loads(l)
        t += p.get("run_time_ns", 0)
        n += p.get("run_cnt", 0)
        it += p.get("run_time_ns", 0) if p.get("name") == "tok_iter" else 0
print(t, n, it)'
}
# on-CPU ns of all a process's threads (schedstat: finer than utime/stime ticks)
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {printf "%d\n", s}'; }

# The collectors on CPU 0, the traffic on the last CPU. This kernel has no
# IRQ time accounting: a softirq is charged to whatever task it interrupts,
# so without this the collectors' on-CPU time would include the traffic's
# network softirqs (5-8 ms/s each at the top rate, in both modes alike).
ncpu=$(nproc)
pin=()
if [ "$ncpu" -ge 2 ]; then
	pin=(taskset -c 0)
	export TB_CPU=$((ncpu - 1))
else
	log "one CPU: collectors and traffic share it; collector CPU includes softirqs"
fi
load0=$(cut -d' ' -f1-3 /proc/loadavg)
testbed_up
if [ "${LIGHT_TCP_CONNS:-0}" -gt 0 ]; then
	python3 -c '
import socket, sys, time
n = int(sys.argv[1])
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(n)
keep = []
for _ in range(n):
    c = socket.create_connection(l.getsockname())
    keep += [c, l.accept()[0]]
print(len(keep), flush=True)
time.sleep(86400)' "$LIGHT_TCP_CONNS" >"$TMPD/conns.n" &
	_TB_PIDS+=($!)
	for _ in $(seq 100); do [ -s "$TMPD/conns.n" ] && break; sleep 0.1; done
	log "idle loopback TCP sockets for the iterator: $(cat "$TMPD/conns.n")"
fi
"${pin[@]}" "$DMT" -m full --json -i 1s >/dev/null 2>"$TMPD/full.err" &
full=$!; _TB_PIDS+=($full)
"${pin[@]}" "$DMT" --json -i 1s -m light -vv "${sampling[@]}" >"$TMPD/light.json" 2>"$TMPD/light.err" &
light=$!; _TB_PIDS+=($light)
sleep 2
kill -0 $full && kill -0 $light || fail "a collector exited: $(cat "$TMPD"/*.err)"

# the bed's unlimited rate
testbed_traffic 3
testbed_wait
max_bps=$(( $(cat "$TMPD/rx.bytes") * 8 / 3 ))
log "unlimited rate: $((max_bps / 1000000)) Mbit/s"

: >"$TMPD/rows"
for pct in "${PCTS[@]}"; do
	# the rate: full speed for pct % of every second (a tbf-paced stream
	# recycles every page: no page_pool events at all below the top rate)
	if [ "$pct" -lt 100 ]; then
		export TB_TX_DUTY=$(python3 -c "print($pct / 100)")
	else
		unset TB_TX_DUTY
	fi
	read -r fa fna _ < <(bpf_ns $full); read -r la lna lia < <(bpf_ns $light)
	fc=$(cpu_ns $full); lc=$(cpu_ns $light); t0=$(date +%s%N)
	l0=$(wc -l <"$TMPD/light.json")
	e0=$(wc -l <"$TMPD/light.err")
	testbed_traffic "$SECS"
	testbed_wait
	read -r fb fnb _ < <(bpf_ns $full); read -r lb lnb lib < <(bpf_ns $light)
	fc2=$(cpu_ns $full); lc2=$(cpu_ns $light); t1=$(date +%s%N)
	# pools on the host during the row (other traffic shows up here)
	npools=$(tail -n +"$((l0 + 1))" "$TMPD/light.json" | python3 -c '
import json, sys
ids = set()
for l in sys.stdin:
    try:
        ids.update(p["id"] for p in json.loads(l).get("pools", []))
    except ValueError:
        pass
print(len(ids))')
	# the iterator's whole walk per snapshot (-vv "read N us"), summed
	walk=$(tail -n +"$((e0 + 1))" "$TMPD/light.err" | sed -n 's/.*iter\/tcp: .* read \([0-9]*\) us.*/\1/p' |
	       awk '{ s += $1 } END { printf "%d\n", s }')
	echo "$pct $(cat "$TMPD/rx.bytes") $t0 $t1 $fa $fb $fna $fnb $la $lb $lna $lnb" \
	     "$fc $fc2 $lc $lc2 $npools $lia $lib $walk" >>"$TMPD/rows"
done
# light's held tokens: from the iterator, in every snapshot
python3 - "$TMPD/light.json" <<'PY' || fail "light mode's held_by_sockets is not from the iterator"
import json, sys
src = set()
for l in open(sys.argv[1]):
    try:
        m = json.loads(l)["metrics"]["binding_held_by_sockets"]
    except (ValueError, KeyError):
        continue
    src.add((m.get("available"), m.get("source") or m.get("reason")))
print("light held_by_sockets: %s" % sorted(src, key=str))
sys.exit(0 if src and all(a and s.startswith("iter/tcp") for a, s in src) else 1)
PY
echo "kernel $(uname -r), load at the end $(cut -d' ' -f1-3 /proc/loadavg) (at the start: $load0)"
python3 - "$TMPD/rows" "${SAMPLING:-the default (120ms/60s)}" <<'PY'
import sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1])]
print(f"light sampling {sys.argv[2]}; per second of traffic:")
print(f"{'rate':>5} {'Mbit/s':>8} {'full runs/s':>12} {'full BPF us/s':>14} {'light BPF us/s':>15}"
      f" {'iter BPF us/s':>14} {'iter walk ms/s':>15} {'full CPU ms/s':>14} {'light CPU ms/s':>15} {'BPF ratio':>10}"
      f" {'total ratio':>12} {'pools':>6}")
light_tot = []
for pct, rx, t0, t1, fa, fb, fna, fnb, la, lb, lna, lnb, fc, fc2, lc, lc2, npools, lia, lib, walk in rows:
    dt = (t1 - t0) / 1e9
    fbpf, lbpf = (fb - fa) / dt / 1e3, (lb - la) / dt / 1e3      # us per s
    fcpu, lcpu = (fc2 - fc) / dt / 1e6, (lc2 - lc) / dt / 1e6    # ms per s
    ftot, ltot = fbpf / 1e3 + fcpu, lbpf / 1e3 + lcpu             # ms per s
    light_tot.append(ltot)
    print(f"{pct:>4}% {rx * 8 / dt / 1e6:>8.0f} {(fnb - fna) / dt:>12.0f} {fbpf:>14.1f} "
          f"{lbpf:>15.1f} {(lib - lia) / dt / 1e3:>14.1f} {walk / dt / 1e3:>15.2f} {fcpu:>14.2f} {lcpu:>15.2f} "
          f"{(lbpf / fbpf if fbpf else 0):>9.2%} {(ltot / ftot if ftot else 0):>11.2%} {npools:>6}")
lo, hi = min(light_tot), max(light_tot)
print(f"light total (BPF + collector) per second: {lo:.2f}..{hi:.2f} ms/s across rates "
      f"(spread {hi - lo:.2f} ms/s)")
top = max(rows, key=lambda r: r[7] - r[6])    # the row with the most full-mode runs
dt = (top[3] - top[2]) / 1e9
ftot = (top[5] - top[4]) / dt / 1e6 + (top[13] - top[12]) / dt / 1e6
ltot = (top[9] - top[8]) / dt / 1e6 + (top[15] - top[14]) / dt / 1e6
print(f"at the highest event rate ({(top[7] - top[6]) / dt:.0f} full-mode runs/s): light costs "
      f"{ltot / ftot:.2%} of full (goal <= 2 %)")
PY
