#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Crafted recordings (valid CRCs, tests/integration/craft_rec.py): the reader
# refuses what no writer can produce, and memory follows what is printed,
# not what the file claims. Before issue 13, one snapshot of 411k tiny
# pools made `report --json` use 3.37 GB and plain `report` take minutes.
# Every run here is also capped at 1 GiB of address space, so a regression
# fails instead of taking the machine's memory.
source "$(dirname "$0")/lib.sh"
need_dmt
need_cmd python3
need_cmd prlimit
CRAFT=$TOP/tests/integration/craft_rec.py
LIMIT=$((1 << 30))

# run NAME MAX_RSS_MB MAX_SECS CMD...: exit status in $rc, stderr in $TMPD/NAME.err
run() {
	local name=$1 rss=$2 secs=$3; shift 3
	python3 - "$TMPD/$name" "$rss" "$secs" prlimit --as=$LIMIT "$@" <<'PY'
import resource, subprocess, sys, time
out, rss, secs, cmd = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
t0 = time.monotonic()
with open(out + ".out", "wb") as o, open(out + ".err", "wb") as e:
    rc = subprocess.call(cmd, stdout=o, stderr=e)
dt = time.monotonic() - t0
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print("  %s: exit %d, %.2f s, max RSS %d MB" % (" ".join(cmd[2:]), rc, dt, peak))
if peak > rss or dt > secs:
    print("FAIL: over the bound (%d MB, %.0f s)" % (rss, secs))
    sys.exit(255)
sys.exit(rc)
PY
	rc=$?
	[ $rc != 255 ] || fail "$name: $(tail -2 "$TMPD/$name.err")"
}

# 1. 411k pools in one 59 MB snapshot: past the frame limit no writer reaches
python3 "$CRAFT" pools "$TMPD/411k.dmtrec" 411000 || fail "crafting"
for cmd in "report" "report --json"; do
	run huge 64 10 "$DMT" $cmd "$TMPD/411k.dmtrec"
	[ $rc = 1 ] || fail "$cmd on 411k pools: exit $rc, want 1: $(cat "$TMPD/huge.err")"
	grep -q "exceeds" "$TMPD/huge.err" || fail "$cmd: $(cat "$TMPD/huge.err")"
done
printf 'name: crafted\nthresholds:\n  - metric: pool.holds\n    expect: [ count >= 0 ]\n' \
	>"$TMPD/spec.yaml"
run gate 64 10 "$DMT" gate --spec "$TMPD/spec.yaml" --from "$TMPD/411k.dmtrec"
[ $rc = 2 ] || fail "gate --from 411k pools: exit $rc, want 2"

# 2. one pool more than the writer's limit (REC_MAX_POOLS) in a small frame
python3 "$CRAFT" pools "$TMPD/over.dmtrec" 10241 || fail "crafting"
for cmd in "report" "report --json"; do
	run over 64 10 "$DMT" $cmd "$TMPD/over.dmtrec"
	[ $rc = 1 ] || fail "$cmd on 10241 pools: exit $rc, want 1"
	grep -q "10241 pools in one frame, more than any writer records (10240)" "$TMPD/over.err" ||
		fail "$cmd: $(cat "$TMPD/over.err")"
done
# ... and exactly the limit is read
python3 "$CRAFT" pools "$TMPD/limit.dmtrec" 10240 || fail "crafting"
run limit 128 20 "$DMT" report --no-events "$TMPD/limit.dmtrec"
[ $rc = 0 ] || fail "report on 10240 pools: exit $rc: $(cat "$TMPD/limit.err")"
grep -q '^pools (10240):' "$TMPD/limit.out" || fail "report did not list 10240 pools"

# 3. churn: 40 snapshots of 10240 new pools each (409,600 pools, 61 MB):
# the tables keep the first 16384 and say so; memory and time stay bounded
python3 "$CRAFT" churn "$TMPD/churn.dmtrec" 40 10240 || fail "crafting"
run churn 160 60 "$DMT" report --no-events "$TMPD/churn.dmtrec"
[ $rc = 0 ] || fail "report on churn: exit $rc: $(cat "$TMPD/churn.err")"
grep -q '^not shown: 393216 pool and 0 binding records' "$TMPD/churn.out" ||
	fail "report on churn: $(grep -m1 -e '^not shown' -e '^pools' "$TMPD/churn.out")"
run gatechurn 200 60 "$DMT" gate --spec "$TMPD/spec.yaml" --from "$TMPD/churn.dmtrec"
[ $rc = 2 ] || fail "gate --from churn: exit $rc, want 2"
grep -q "more than 16384 distinct pools or bindings match one check" "$TMPD/gatechurn.err" ||
	fail "gate --from churn: $(cat "$TMPD/gatechurn.err")"
# ... and the HTML page (issue 26: 458 s and 989 MB before it used the text
# report's tracker and caps): the same bounds as the text report
run htmlchurn 160 60 "$DMT" report "$TMPD/churn.dmtrec" --html "$TMPD/churn.html"
[ $rc = 0 ] || fail "report --html on churn: exit $rc: $(cat "$TMPD/htmlchurn.err")"
grep -q '16384 page pools, 0 devmem bindings shown (the first 16384 and 1024; 393216 pool' \
	"$TMPD/churn.html" || fail "report --html on churn: $(grep -m1 'objects seen' "$TMPD/churn.html")"
[ "$(grep -c '<tr class="pool">' "$TMPD/churn.html")" = 16384 ] || fail "report --html: pool rows"
printf 'name: crafted\nthresholds:\n  - metric: tool.ringbuf_drops\n    expect: [ count >= 0 ]\n' \
	>"$TMPD/global.yaml"
run gatehtml 160 60 "$DMT" gate --spec "$TMPD/global.yaml" --from "$TMPD/churn.dmtrec" \
	--html "$TMPD/gate.html"
[ $rc = 0 ] || fail "gate --html on churn: exit $rc: $(cat "$TMPD/gatehtml.err")"
grep -q '16384 page pools, 0 devmem bindings shown' "$TMPD/gate.html" || fail "gate --html on churn"
# 4. same class, gate --baseline: a 40 MB JSON of 20M numbers (json-c would
# need well over 1 GiB) is refused by its size, unread
python3 -c 'import sys; sys.stdout.write("{\"devmemtop_gate\": 1, \"thresholds\": [" + "1," * 20000000 + "1]}")' \
	>"$TMPD/baseline.json"
python3 "$CRAFT" pools "$TMPD/small.dmtrec" 3 || fail "crafting"
run baseline 64 10 "$DMT" gate --spec "$TMPD/spec.yaml" --from "$TMPD/small.dmtrec" \
	--baseline "$TMPD/baseline.json"
[ $rc = 2 ] || fail "gate --baseline (40 MB): exit $rc, want 2"
grep -q "larger than any gate result" "$TMPD/baseline.err" ||
	fail "gate --baseline (40 MB): $(cat "$TMPD/baseline.err")"
pass "crafted recordings and baselines refused or read in bounded memory and time"
