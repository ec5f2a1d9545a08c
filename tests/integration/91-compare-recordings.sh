#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devmemtop compare on real recordings from the veth test bed: 6 runs a
# side, alternating, each a 1 s stream. The candidate's command also does a
# fixed amount of CPU work (about 1 s of CPU whatever the machine's load;
# the base's spread is about 0.1 s), so the recorded command's CPU
# (wait4 rusage, kept in the end frame) must come out "regressed", with
# every run's value in the JSON. Page pool holds on this bed's interface
# are a second metric (noisy on this bed: no verdict asserted, 6 values a
# side). report prints the CPU; JUnit and HTML follow. Then --paired on the
# same recordings (round i's base and candidate are a pair): the signed-rank
# test must find the CPU regressed too (6 pairs: the fewest with a 95 %
# interval).
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd python3
testbed_up
cat >"$TMPD/traffic.sh" <<EOS
#!/bin/bash
ip netns exec $NS_RX /usr/bin/python3 $TOP/tests/integration/tcp_stream.py server $ADDR_RX $PORT >"$TMPD/rx.bytes" 2>"$TMPD/rx.err" &
srv=\$!
ip netns exec $NS_TX /usr/bin/python3 $TOP/tests/integration/tcp_stream.py client $ADDR_RX $PORT "\$1" >"$TMPD/tx.bytes" 2>"$TMPD/tx.err" || { kill \$srv; exit 1; }
wait \$srv
[ "\$2" = burn ] && /usr/bin/python3 -c 'sum(i * i for i in range(12000000))'
exit 0
EOS
chmod +x "$TMPD/traffic.sh"

base=() cand=()
for i in 1 2 3 4 5 6; do
	for side in base cand; do
		how=""
		[ $side = cand ] && how=burn
		f=$TMPD/$side$i.dmtrec
		# shellcheck disable=SC2086
		"$DMT" record -o "$f" -i 250ms -- "$TMPD/traffic.sh" 1 $how >/dev/null \
			2>"$TMPD/rec.err" || fail "record $side $i: $(cat "$TMPD/rec.err")"
		[ $side = base ] && base+=("$f") || cand+=("$f")
	done
done
"$DMT" report "${base[0]}" | grep -E '^command CPU: [0-9.]+s user, [0-9.]+s system$' ||
	fail "report does not show the command's CPU"

"$DMT" compare --interface "$IF_RX" --metric pool.holds:count:lower --metric run.cpu_s \
	--json "$TMPD/c.json" --junit "$TMPD/c.xml" --html "$TMPD/c.html" \
	"${base[@]}" -- "${cand[@]}" >"$TMPD/c.txt" 2>"$TMPD/c.err"
rc=$?
cat "$TMPD/c.txt" "$TMPD/c.err"
[ $rc = 1 ] || fail "compare: exit $rc, expected 1 (command CPU regressed)"
python3 - "$TMPD/c.json" "$TMPD/c.xml" "$TMPD/c.html" <<'PY' || fail "compare outputs"
import json, sys, xml.etree.ElementTree as ET
m = {x["metric"]: x for x in json.load(open(sys.argv[1]))["metrics"]}
h = m["pool.holds"]
assert h["agg"] == "count", h["agg"]
assert len(h["base"]["values"]) == 6 and len(h["cand"]["values"]) == 6, h
c = m["run.cpu_s"]
assert len(c["base"]["values"]) == 6 and len(c["cand"]["values"]) == 6, c
assert c["verdict"] == "regressed", c["verdict"]
assert c["test"] == "mann-whitney exact" and c["p"] < 0.01, (c["test"], c["p"])
assert c["change"] > 20 and c["ci"][0] > 5, (c["change"], c["ci"])
# issue 39: both are positive by nature (the metric table): ratio scale, > -100 %
for x in (c, h):
    assert x["change_scale"] == "ratio", (x["metric"], x["change_scale"])
    assert x["ci"] is None or x["ci"][0] > -100, (x["metric"], x["ci"])
assert abs(c["ratio"] - (1 + c["change"] / 100)) < 1e-9, (c["ratio"], c["change"])
print("command CPU %+.1f%% [%+.1f, %+.1f] p=%.4f (median %.2f -> %.2f s); holds %s" % (
    c["change"], c["ci"][0], c["ci"][1], c["p"], c["base"]["median"], c["cand"]["median"],
    h["verdict"]))
suite = ET.parse(sys.argv[2]).getroot().find("testsuite")
cases = suite.findall("testcase")
assert len(cases) == 2 and int(suite.get("failures")) == 1, ET.tostring(suite)
fails = [t.get("name") for t in cases if t.find("failure") is not None]
assert fails == ["run.cpu_s"], fails
html = open(sys.argv[3]).read()
assert html.count('class="dot base"') == 12 and html.count('class="dot cand"') == 12
assert html.count('<tr class="regressed">') == 1, "regressed rows"
PY
"$DMT" compare --paired --metric run.cpu_s --json "$TMPD/p.json" "${base[@]}" -- "${cand[@]}" \
	>"$TMPD/p.txt" 2>"$TMPD/p.err"
rc=$?
cat "$TMPD/p.txt" "$TMPD/p.err"
[ $rc = 1 ] || fail "compare --paired: exit $rc, expected 1 (command CPU regressed)"
python3 - "$TMPD/p.json" <<'PY' || fail "compare --paired output"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["mode"] == "paired", d["mode"]
c = d["metrics"][0]
assert c["test"] == "wilcoxon signed-rank exact", c["test"]
assert c["shift_of"] == "ln(cand/base)" and c["w_plus"] == 21, (c["shift_of"], c["w_plus"])
assert c["verdict"] == "regressed" and c["ci"][0] > 5, (c["verdict"], c["ci"])
assert c["change_scale"] == "ratio", c["change_scale"]
print("paired: command CPU %+.1f%% [%+.1f, %+.1f] p=%.4f" % (c["change"], c["ci"][0],
      c["ci"][1], c["p"]))
PY
grep -q '^compare: 6 pairs' "$TMPD/p.txt" || fail "compare --paired: no '6 pairs' header"
grep -Eq '^run.cpu_s +regressed +\+[0-9.]+% \[[-+0-9., ]+\] ratio ' "$TMPD/c.txt" ||
	fail "compare: the text does not say the ratio scale"
grep -q 'ratio, log axis' "$TMPD/c.html" || fail "compare --html: no ratio axis"
grep -q '(ratio scale)' "$TMPD/c.xml" || fail "compare --junit: no scale"
[ "$(command -v tidy)" ] && { tidy -q -e "$TMPD/c.html" 2>&1 | grep -i error && fail "tidy: HTML errors"; }
pass "compare on bed recordings: command CPU kept and its regression found at 6 runs a side, unpaired and paired"
