#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# report --html and gate --html on recordings from the veth test bed, and
# a live gate --html: each page is valid HTML (tidy, HTML5) and well-formed
# (xmllint), fetches and runs nothing, and a real browser (headless
# Chromium, offline) builds a DOM with the time series, the bars and the
# thresholds rows; the numbers agree with devmemtop report's table. The
# screenshots are kept in build/test-logs/ to look at.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/gate_lib.sh"
need_root
need_dmt
need_cmd python3
need_cmd xmllint
need_cmd tidy
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
	skip "chromium not installed (scripts/install-deps.sh)"
LOGS=$TOP/build/test-logs
mkdir -p "$LOGS"
SPEC=$TOP/specs/veth-testbed.yaml

browser() {	# browser MODE FILE [OUT]: headless, offline, fresh profile
	local prof
	prof=$(mktemp -d "$TMPD/chromium.XXXXXX")
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-background-networking --disable-component-update --no-first-run \
		--disable-sync --user-data-dir="$prof" --host-resolver-rules='MAP * ~NOTFOUND' \
		"$@" 2>>"$TMPD/chromium.err"
}

check_page() {	# check_page NAME FILE html_check args...
	local name=$1 f=$2 png=$LOGS/html-$1.png
	shift 2
	[ -s "$f" ] || fail "$name: $f not written"
	xmllint --noout "$f" 2>"$TMPD/xmllint.err" || fail "$name: not well-formed: $(head -3 "$TMPD/xmllint.err")"
	tidy -q -e "$f" >"$TMPD/tidy.out" 2>&1 || fail "$name: tidy: $(head -5 "$TMPD/tidy.out")"
	browser --dump-dom "file://$f" >"$TMPD/$name.dom" ||
		fail "$name: chromium --dump-dom failed: $(tail -3 "$TMPD/chromium.err")"
	python3 "$TOP/tests/integration/html_check.py" "$f" "$TMPD/$name.dom" "$@" \
		>"$TMPD/$name.check" || fail "$name: $(cat "$TMPD/$name.check")"
	rm -f "$png"
	browser --screenshot="$png" --window-size=1024,2400 "file://$f" >/dev/null ||
		fail "$name: chromium --screenshot failed"
	[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "$name: $png is not a PNG"
	[ "$(stat -c %s "$png")" -gt 20000 ] || fail "$name: screenshot suspiciously small"
	log "$name: valid, $(tail -1 "$TMPD/$name.check" | cut -d: -f2-), screenshot $png"
}

testbed_up
make_traffic_cmd
"$DMT" record -o "$TMPD/base.dmtrec" -i 250ms -- "$TMPD/traffic.sh" 2 2>"$TMPD/rec.err" ||
	fail "record baseline: $(cat "$TMPD/rec.err")"
"$DMT" record -o "$TMPD/cand.dmtrec" -i 250ms -- "$TMPD/traffic.sh" 3 2>"$TMPD/rec.err" ||
	fail "record candidate: $(cat "$TMPD/rec.err")"
nsnap=$(sed -n 's/^devmemtop record: \([0-9]*\) snapshots.*/\1/p' "$TMPD/rec.err")

# report --html: the pool's refill count must be the text report's
"$DMT" report "$TMPD/cand.dmtrec" >"$TMPD/report.txt" || fail "report (text)"
row=$(grep -E "^  [0-9]+ +$IF_RX +pages " "$TMPD/report.txt" | sort -k8 -n | tail -1)
[ -n "$row" ] || fail "no pool row for $IF_RX in the text report"
pool=$(echo "$row" | awk '{print $1}')
refills=$(echo "$row" | awk '{print $8}')
"$DMT" report "$TMPD/cand.dmtrec" --html "$TMPD/report.html" 2>"$TMPD/html.err" ||
	fail "report --html: exit $?: $(cat "$TMPD/html.err")"
grep -q "^devmemtop report: .*: $nsnap snapshots -> $TMPD/report.html" "$TMPD/html.err" ||
	fail "report --html summary line: $(cat "$TMPD/html.err")"
check_page report "$TMPD/report.html" --min-points $((nsnap - 2)) --pool "$pool"
got=$(sed -n "s/^refills $pool //p" "$TMPD/report.check")
[ "$got" = "$refills" ] || fail "HTML says $got refills for pool $pool, report says $refills"
log "pool $pool: $refills refills in both the text report and the HTML"

# --baseline overlays a second recording
"$DMT" report "$TMPD/cand.dmtrec" --baseline "$TMPD/base.dmtrec" --html "$TMPD/compare.html" \
	2>"$TMPD/html.err" || fail "report --baseline --html: $(cat "$TMPD/html.err")"
check_page compare "$TMPD/compare.html" --baseline --min-points $((nsnap - 2))

# gate --from --html: rows match the gate's own verdicts
"$DMT" gate --spec "$SPEC" --from "$TMPD/cand.dmtrec" --json "$TMPD/gate.json" \
	--html "$TMPD/gate.html" >"$TMPD/gate.out" 2>&1 || fail "gate --from: $(cat "$TMPD/gate.out")"
np=$(grep -cE '^[a-z]+\.[a-z_]+ .* PASS *$' "$TMPD/gate.out")
check_page gate "$TMPD/gate.html" --gate "$np" 0 --min-points $((nsnap - 2))
# against a baseline where it must fail: the same run's result with its
# hold count doubled, so that row regressed by 50%; the HTML's FAIL rows
# are the table's
python3 - "$TMPD/gate.json" "$TMPD/gate-base.json" <<'PY' || fail "cannot make the baseline"
import json, sys
g = json.load(open(sys.argv[1]))
n = 0
for t in g["thresholds"]:
    if t["metric"] == "pool.holds" and t["stat"] == "count":
        t["observed"] *= 2
        n += 1
assert n == 1, n
json.dump(g, open(sys.argv[2], "w"))
PY
"$DMT" gate --spec "$SPEC" --from "$TMPD/cand.dmtrec" --baseline "$TMPD/gate-base.json" \
	--html "$TMPD/gate-regress.html" >"$TMPD/gate2.out" 2>&1
rc=$?
[ $rc = 1 ] || fail "gate with a regressing baseline: exit $rc, want 1: $(cat "$TMPD/gate2.out")"
np=$(grep -cE '^[a-z]+\.[a-z_]+ .* PASS *$' "$TMPD/gate2.out")
nf=$(grep -cE '^[a-z]+\.[a-z_]+ .* FAIL( |$)' "$TMPD/gate2.out")
check_page gate-regress "$TMPD/gate-regress.html" --gate "$np" "$nf"
[ "$nf" = 1 ] || fail "want exactly the doubled row to fail: $(cat "$TMPD/gate2.out")"
grep -q '<th>baseline</th><th>change</th>' "$TMPD/gate-regress.html" || fail "no baseline column"
grep -Eq '<tr class="fail"><td>pool.holds</td>.*<td>count &gt;= 64</td>.*<td>50.0% worse</td>' \
	"$TMPD/gate-regress.html" || fail "the regressed row is not the failing row in the HTML"

# a live gate
"$DMT" gate --spec "$SPEC" --html "$TMPD/live.html" -i 250ms -- "$TMPD/traffic.sh" 2 \
	>"$TMPD/live.out" 2>&1 || fail "live gate: $(cat "$TMPD/live.out")"
np=$(grep -cE '^[a-z]+\.[a-z_]+ .* PASS *$' "$TMPD/live.out")
check_page gate-live "$TMPD/live.html" --gate "$np" 0 --min-points 4
grep -q "<td>$(uname -r)</td>" "$TMPD/live.html" || fail "live page does not name the kernel"

# bad input: one line on stderr, exit 2, nothing half-written
for args in "--html" "--baseline $TMPD/base.dmtrec" "--html /nonexistent/x.html" \
	    "--json --html $TMPD/x.html"; do
	# shellcheck disable=SC2086
	"$DMT" report "$TMPD/cand.dmtrec" $args >"$TMPD/bad.out" 2>"$TMPD/bad.err"
	rc=$?
	[ $rc = 2 ] || fail "report $args: exit $rc, want 2"
	[ "$(wc -l <"$TMPD/bad.err")" = 1 ] || fail "report $args: stderr not one line: $(cat "$TMPD/bad.err")"
done
"$DMT" report "$TMPD/none.dmtrec" --html "$TMPD/x.html" 2>"$TMPD/bad.err"
[ $? = 2 ] || fail "missing recording: exit not 2"
[ -e "$TMPD/x.html" ] && fail "missing recording still wrote a page"
log "bad input: one line, exit 2"
pass "HTML reports: valid, self-contained, Chromium renders the charts and rows; numbers agree"
