#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The devmem mode, the default of top (issue 36), runs no program per
# regular page: the veth's pool (a pool of pages) is counted from its own
# counters, exactly as the full mode counts it per page, while no program
# devmemtop attached runs for its pages.
#  - kernel.bpf_stats_enabled=1; the bed's veth exists and streams while
#    the default mode and the full mode (-m full) start, so that the default
#    mode's first sampling window locates its pool;
#  - at a joint quiet point A, then a 3 s stream, then a joint quiet point
#    B: the run count of every program the default mode's process holds,
#    as the kernel has it (bpftool prog show on the ids in its fdinfo), is
#    the same at A and B, except the two run by BPF_PROG_TEST_RUN at
#    snapshot time (light_read, once per located pool per snapshot;
#    walk_binding, per binding), which move by at most snapshots x pools;
#    while the full mode's pp_hold ran about once per hold of the stream;
#  - the default mode's holds and releases of the pool moved between A and
#    B exactly as the full mode's, and its inflight at B is the full mode's.
# The default mode runs with --sampling 120ms/1h: its default window
# (120ms), a period no A..B span reaches, so that no window (the per-page
# tracepoints attached for 120 ms, the sampling the issue allows) falls
# between A and B; the default 60 s period would make that a race.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd bpftool
need_cmd python3

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
restore() { sysctl -qw kernel.bpf_stats_enabled="$old_stats"; cleanup; }
trap restore EXIT
sysctl -qw kernel.bpf_stats_enabled=1

testbed_up
testbed_traffic 600
testbed_flowing
stdbuf -oL "$DMT" --json -i 500ms -n 2000 --sampling 120ms/1h --iface "$IF_RX" \
	>"$TMPD/dm.json" 2>"$TMPD/dm.err" &
dm=$!
_TB_PIDS+=($dm)
stdbuf -oL "$DMT" --json -i 500ms -n 2000 -m full --iface "$IF_RX" \
	>"$TMPD/full.json" 2>"$TMPD/full.err" &
full=$!
_TB_PIDS+=($full)

# the default mode located the veth's pool (its first window, stream running)
located() {
	tail -1 "$TMPD/dm.json" 2>/dev/null | python3 -c '
import json, sys
s = json.loads(sys.stdin.readline())
sys.exit(0 if s["mode"] == "devmem" and any(p["ifname"] == sys.argv[1] and p["holds"] > 0
                                            for p in s["pools"]) else 1)' "$IF_RX" 2>/dev/null
}
end=$((SECONDS + 60))
until located; do
	kill -0 $dm 2>/dev/null || fail "default mode exited: $(cat "$TMPD/dm.err")"
	kill -0 $full 2>/dev/null || fail "full mode exited: $(cat "$TMPD/full.err")"
	[ $SECONDS -lt $end ] || fail "default mode did not locate the veth's pool in 60 s: $(tail -c 400 "$TMPD/dm.json")"
	sleep 0.2
done
testbed_stop

# run_cnt of every program the process holds: "name run_cnt" lines
prog_counts() {
	local id
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
		bpftool -j prog show id "$id" 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j.get("name", "?"), j.get("run_cnt", 0))'
	done | sort
}
# a joint quiet point after now: "<dm snapshot json>\n<full snapshot json>"
quiet_point() {
	local end=$((SECONDS + 60)) t_from
	t_from=$(date +%s%N)
	until python3 "$TOP/tests/integration/joint_quiet.py" wait "$TMPD/full.json" \
		"$TMPD/dm.json" "$t_from" "$IF_RX"; do
		[ $SECONDS -lt $end ] || fail "no joint quiet point in 60 s"
		sleep 0.2
	done
	python3 -c '
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("jq", sys.argv[1])
jq = importlib.util.module_from_spec(spec)
spec.loader.exec_module(jq)
full, dm = jq.load(sys.argv[2]), jq.load(sys.argv[3])
f, d = jq.joint(full, dm, int(sys.argv[4]), float("inf"), sys.argv[5])
print(json.dumps(d)); print(json.dumps(f))' "$TOP/tests/integration/joint_quiet.py" \
		"$TMPD/full.json" "$TMPD/dm.json" "$t_from" "$IF_RX"
}

quiet_point >"$TMPD/a.snaps"
prog_counts $dm >"$TMPD/a.progs"
prog_counts $full >"$TMPD/a.fprogs"
testbed_traffic 3
testbed_wait
quiet_point >"$TMPD/b.snaps"
prog_counts $dm >"$TMPD/b.progs"
prog_counts $full >"$TMPD/b.fprogs"

python3 - "$TMPD" "$IF_RX" <<'PY' || fail "the default mode ran programs per page, or its counts differ"
import json, sys
d, ifname = sys.argv[1], sys.argv[2]

def snaps(name):
    dm, full = (json.loads(l) for l in open(f"{d}/{name}.snaps"))
    return dm, full

def progs(name):
    out = {}
    for line in open(f"{d}/{name}"):
        n, c = line.split()
        out[n] = out.get(n, 0) + int(c)
    return out

def pool(s):
    ps = [p for p in s["pools"] if p["ifname"] == ifname and p["state"] == "alive"]
    assert len(ps) == 1, ("pools of the veth", ps)
    return ps[0]

dma, fa = snaps("a")
dmb, fb = snaps("b")
assert dma["mode"] == dmb["mode"] == "devmem", dma["mode"]
pa, pb, qa, qb = pool(dma), pool(dmb), pool(fa), pool(fb)
assert pa["id"] == pb["id"] == qa["id"] == qb["id"], "not the same pool"
holds = pb["holds"] - pa["holds"]
print(f"  stream: {holds} holds, {pb['releases'] - pa['releases']} releases in the default mode")
assert holds > 100, f"the stream made only {holds} holds"
for k in ("holds", "releases"):
    dd, fd = pb[k] - pa[k], qb[k] - qa[k]
    assert dd == fd, f"{k} between A and B: default {dd}, full {fd}"
assert pb["inflight"] == qb["inflight"], (pb["inflight"], qb["inflight"])
assert dmb["metrics"]["pool_holds"]["method"] == "exact"

a, b = progs("a.progs"), progs("b.progs")
nsnap = dmb["seq"] - dma["seq"]
npools = len(dmb["pools"]) + 1
moved = {}
for n in sorted(set(a) | set(b)):
    delta = b.get(n, 0) - a.get(n, 0)
    print(f"  default mode: {n:20s} run_cnt {a.get(n, 0)} -> {b.get(n, 0)} ({delta:+d})")
    if n in ("light_read", "walk_binding"):
        assert delta <= nsnap * npools, f"{n} ran {delta} times in {nsnap} snapshots"
    elif delta:
        moved[n] = delta
assert "pp_hold" in a, "pp_hold not loaded in the default mode"
assert not moved, f"programs that ran during the stream: {moved}"
fa_, fb_ = progs("a.fprogs"), progs("b.fprogs")
fhold = fb_["pp_hold"] - fa_["pp_hold"]
# per hold, less the runs the kernel skipped as recursion (a softirq's hold
# on a CPU where pp_hold was running): the counters above are the pool's
print(f"  full mode: pp_hold ran {fhold} times for the same {holds} holds")
assert fhold > holds // 2, (fhold, holds)
PY
kill -INT $dm $full
wait $dm || fail "default mode exited $?: $(cat "$TMPD/dm.err")"
wait $full || fail "full mode exited $?: $(cat "$TMPD/full.err")"
pass "the default mode ran no program per page of the veth's pool and counted it as the full mode did"
