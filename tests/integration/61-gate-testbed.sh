#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devmemtop gate on the veth test bed, live: the shipped spec passes (exit
# 0), a spec with a threshold below what is observed fails (exit 1) and says
# which, a spec on an unavailable metric is an error (exit 2) unless marked
# optional; JUnit output checked with xmllint and python's XML parser, JSON
# output reused as a baseline.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/gate_lib.sh"
need_root
need_dmt
need_cmd python3
need_cmd xmllint
testbed_up
make_traffic_cmd

# 1. the shipped test bed spec must pass
"$DMT" gate --spec "$TOP/specs/veth-testbed.yaml" --junit "$TMPD/pass.xml" --json "$TMPD/pass.json" \
	--record "$TMPD/pass.dmtrec" -- "$TMPD/traffic.sh" 3 >"$TMPD/pass.out" 2>"$TMPD/pass.err"
rc=$?
cat "$TMPD/pass.out"
[ $rc = 0 ] || fail "veth-testbed spec: exit $rc, want 0: $(cat "$TMPD/pass.err")"
grep -q '10 passed, 0 failed, 0 errors, 0 skipped: PASS' "$TMPD/pass.out" || fail "summary line"
junit_check "$TMPD/pass.xml" 10 0 0 0
python3 - "$TMPD/pass.json" <<'PY' || fail "JSON result"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["devmemtop_gate"] == 1 and r["result"] == "pass", r["result"]
t = {x["key"]: x for x in r["thresholds"]}
h = t["pool.holds|interface=dmrx*|count >= 64"]
assert h["status"] == "PASS" and h["observed"] >= 64, h
rb = t["pool.refill_batch|interface=dmrx*,kind=pages|max <= 64"]
assert 1 <= rb["observed"] <= 64, rb
print("json ok: holds", h["observed"], "refill max", rb["observed"])
PY
# --record kept the same run: gating the recording gives the same numbers
"$DMT" gate --spec "$TOP/specs/veth-testbed.yaml" --from "$TMPD/pass.dmtrec" --json "$TMPD/from.json" \
	>/dev/null 2>&1 || fail "gate --from the --record file"
python3 - "$TMPD/pass.json" "$TMPD/from.json" <<'PY' || fail "live and recorded results differ"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["snapshots"] == b["snapshots"], (a["snapshots"], b["snapshots"])
oa = {t["key"]: t["observed"] for t in a["thresholds"]}
ob = {t["key"]: t["observed"] for t in b["thresholds"]}
assert oa == ob, "live %s\nrecorded %s" % (oa, ob)
print("live == recorded: %d thresholds over %d snapshots" % (len(oa), a["snapshots"]))
PY

# 2. thresholds below what the bed really does must fail, and only those
cat >"$TMPD/fail.yaml" <<'Y'
name: must-fail
interval: 500ms
thresholds:
  - metric: pool.holds
    interface: "dmrx*"
    expect: [ count < 100, count > 0 ]
  - metric: pool.refill_batch
    interface: "dmrx*"
    expect: [ max < 2 ]
Y
"$DMT" gate --spec "$TMPD/fail.yaml" --junit "$TMPD/fail.xml" -- "$TMPD/traffic.sh" 2 \
	>"$TMPD/fail.out" 2>"$TMPD/fail.err"
rc=$?
cat "$TMPD/fail.out"
[ $rc = 1 ] || fail "must-fail spec: exit $rc, want 1: $(cat "$TMPD/fail.err")"
grep -Eq '^pool.holds +interface=dmrx\* +count < 100 +[0-9]+ +FAIL' "$TMPD/fail.out" ||
	fail "the failing holds threshold is not reported as FAIL"
grep -Eq '^pool.holds +interface=dmrx\* +count > 0 +[0-9]+ +PASS' "$TMPD/fail.out" ||
	fail "the passing threshold is not reported as PASS"
grep -q '1 passed, 2 failed, 0 errors, 0 skipped: FAIL' "$TMPD/fail.out" || fail "summary line"
junit_check "$TMPD/fail.xml" 3 2 0 0

# 3. baseline: the first run's recording vs its own JSON passes at 1 %
#    (a second live run is no baseline: the bed's page rate swings 40x
#    between runs, recycling or not, which failed even at 95 %), then a
#    live run vs a doctored baseline that claims 100x the holds rate
"$DMT" gate --spec "$TOP/specs/veth-testbed.yaml" --baseline "$TMPD/pass.json" --max-regression 1% \
	--from "$TMPD/pass.dmtrec" >"$TMPD/base.out" 2>&1 || fail "baseline run: $(cat "$TMPD/base.out")"
python3 - "$TMPD/pass.json" "$TMPD/fast.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for t in r["thresholds"]:
    if t["key"] == "pool.holds|interface=dmrx*|rate > 0":
        t["observed"] *= 100
json.dump(r, open(sys.argv[2], "w"))
PY
"$DMT" gate --spec "$TOP/specs/veth-testbed.yaml" --baseline "$TMPD/fast.json" \
	-- "$TMPD/traffic.sh" 2 >"$TMPD/regr.out" 2>&1
rc=$?
cat "$TMPD/regr.out"
[ $rc = 1 ] || fail "regression vs baseline: exit $rc, want 1"
# (the baseline's rate was multiplied by 100: a regression of 99 % or more,
# printed 100.0 % when this run's stream was slower still: 1,241 holds/s
# against the baseline's 71,948 in a make check with the lab VM beside it)
grep -Eq '^pool.holds .*rate > 0 .*FAIL +regressed (9[0-9]\.[0-9]|100\.0)% vs baseline' "$TMPD/regr.out" ||
	fail "regression not reported on pool.holds rate"

# 4. errors are exit 2: a command that cannot start, a failing command
"$DMT" gate --spec "$TOP/specs/veth-testbed.yaml" -- /nonexistent/cmd >"$TMPD/e1.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "missing command: exit $rc, want 2"
grep -q "cannot run '/nonexistent/cmd': No such file or directory" "$TMPD/e1.out" ||
	fail "missing command message: $(cat "$TMPD/e1.out")"
"$DMT" gate --spec "$TOP/specs/veth-testbed.yaml" -- sh -c 'exit 3' >"$TMPD/e2.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "failing command: exit $rc, want 2"
grep -q "the command exited with status 3" "$TMPD/e2.out" || fail "failing command message"

# interrupted: the table of what was collected, then the error, exit 2
"$DMT" gate --spec "$TOP/specs/veth-testbed.yaml" -d 60s -i 200ms >"$TMPD/int.out" 2>"$TMPD/int.err" &
pid=$!
_TB_PIDS+=($pid)
# Interrupt it early, as soon as it catches SIGINT (SigCgt bit 1 in
# /proc/PID/status: run__catch_signals(), before the collector starts).
# A background job inherits SIGINT ignored: a signal sent before the
# handler is in place is lost, so a fixed sleep was a bet.
for i in $(seq 600); do
	cgt=$(awk '/^SigCgt:/ { print $2 }' /proc/$pid/status 2>/dev/null)
	[ -n "$cgt" ] && (( 0x$cgt & 2 )) && break
	sleep 0.1
done
(( 0x${cgt:-0} & 2 )) || fail "gate never caught SIGINT"
kill -INT $pid
wait $pid
rc=$?
[ $rc = 2 ] || fail "interrupted gate: exit $rc, want 2"
grep -q '^tool.ringbuf_drops ' "$TMPD/int.out" || fail "interrupted gate printed no table"
grep -q 'interrupted by a signal before the end' "$TMPD/int.err" || fail "interrupted gate: $(cat "$TMPD/int.err")"

# 5. a metric this kernel cannot provide: exit 2 naming it, or SKIP if optional.
#    Which metrics are unavailable depends on the kernel: read it from a
#    recording header instead of assuming.
"$DMT" record -o "$TMPD/avail.rec" -d 300ms >/dev/null 2>&1 || fail "record for availability"
"$DMT" report --no-events "$TMPD/avail.rec" >"$TMPD/avail.txt" || fail "report for availability"
if grep -Eq '^  binding_alloc_latency +no ' "$TMPD/avail.txt"; then
	printf 'thresholds:\n  - metric: binding.alloc_latency\n    expect: [ "p(99) < 20us" ]\n' \
		>"$TMPD/unavail.yaml"
	"$DMT" gate --spec "$TMPD/unavail.yaml" -d 1s --junit "$TMPD/u.xml" >"$TMPD/u.out" 2>&1
	rc=$?
	[ $rc = 2 ] || fail "unavailable metric: exit $rc, want 2: $(cat "$TMPD/u.out")"
	junit_check "$TMPD/u.xml" 1 0 1 0
	grep -q "unavail.yaml:2:5: metric binding.alloc_latency is unavailable on this kernel" \
		"$TMPD/u.out" || fail "unavailable message: $(cat "$TMPD/u.out")"
	printf 'thresholds:\n  - metric: binding.alloc_latency\n    optional: true\n    expect: [ "p(99) < 20us" ]\n  - metric: tool.ringbuf_drops\n    expect: [ count == 0 ]\n' \
		>"$TMPD/opt.yaml"
	"$DMT" gate --spec "$TMPD/opt.yaml" -d 1s --junit "$TMPD/opt.xml" >"$TMPD/o.out" 2>&1
	rc=$?
	cat "$TMPD/o.out"
	[ $rc = 0 ] || fail "optional unavailable metric: exit $rc, want 0"
	grep -Eq '^binding.alloc_latency .* SKIP +unavailable: ' "$TMPD/o.out" || fail "SKIP row"
	junit_check "$TMPD/opt.xml" 2 0 0 1
else
	log "binding.alloc_latency is available on this kernel: unavailable-metric case covered by unit tests only"
fi
pass "gate pass/fail/error exit codes, JUnit and baseline on the veth test bed"
