#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An interface named with terminal escapes and invalid UTF-8 (any user can
# name one in their own namespace): no text output may carry its raw bytes.
# The receiver of the test bed is called ESC ] 0 ; X BEL ESC [ 2 J 0xff C1-CSI
# (set-title, clear-screen, a byte that is not UTF-8 and the 8-bit CSI), and
# `-b`, `record` + `report`, `gate` (spec naming it) and `export --once` run
# on its page_pool. Each output must be valid UTF-8 with no control
# character but newline, and show the name escaped (\x1b ...).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/gate_lib.sh"
need_root
need_dmt
need_cmd python3
IF_RX=$'r\e]0;X\a\e[2J\xff\xc2\x9b'
testbed_up
make_traffic_cmd

# streaming CMD...: CMD's exit status, CMD run once the stream flows; the
# stream outlasts CMD (stopped after it). A fixed 2-4 s stream started with
# CMD ended before a loaded machine (load average 20) had CMD attached.
streaming() {
	local rc i
	testbed_traffic 120
	for i in $(seq 1 100); do
		[ -n "$(ip netns exec "$NS_RX" ss -Htn state established "( sport = :$PORT )")" ] && break
		sleep 0.1
	done
	"$@"
	rc=$?
	kill "$_TB_CLI" "$_TB_SRV" 2>/dev/null
	wait "$_TB_CLI" "$_TB_SRV" 2>/dev/null
	return $rc
}

# clean FILE WHAT [MUST_CONTAIN]: valid UTF-8, no C0 (but \n), DEL or C1
clean() {
	python3 - "$@" <<'PY' || fail "$2: raw control bytes or invalid UTF-8 (see above)"
import sys
data = open(sys.argv[1], "rb").read()
what = sys.argv[2]
bad = [i for i, b in enumerate(data) if (b < 0x20 and b != 0x0a) or b == 0x7f]
if bad:
    i = bad[0]
    print("%s: raw byte 0x%02x at %d: %r" % (what, data[i], i, data[max(0, i - 20):i + 20]))
    sys.exit(1)
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    print("%s: not UTF-8: %s" % (what, e))
    sys.exit(1)
c1 = [c for c in text if 0x80 <= ord(c) <= 0x9f]
if c1:
    print("%s: C1 control %r" % (what, c1[0]))
    sys.exit(1)
if len(sys.argv) > 3 and sys.argv[3] not in text:
    print("%s: the escaped name %s is not in the output" % (what, sys.argv[3]))
    sys.exit(1)
print("%s: %d bytes, clean" % (what, len(data)))
PY
}

# 1. -b while traffic flows on the hostile interface
streaming "$DMT" -b -i 500ms -n 5 >"$TMPD/batch.out" 2>"$TMPD/batch.err" || fail "-b: $(cat "$TMPD/batch.err")"
clean "$TMPD/batch.out" "-b" 'r\x1b]0;X'
clean "$TMPD/batch.err" "-b stderr"

# 2. record + report (text and the stderr of a filter naming it)
"$DMT" record -o "$TMPD/rec.dmtrec" -i 200ms --linger 1s -- "$TMPD/traffic.sh" 2 \
	>"$TMPD/rec.out" 2>"$TMPD/rec.err" || fail "record: $(cat "$TMPD/rec.err")"
"$DMT" report "$TMPD/rec.dmtrec" >"$TMPD/report.out" 2>"$TMPD/report.err" ||
	fail "report: $(cat "$TMPD/report.err")"
clean "$TMPD/report.out" "report" 'r\x1b]0;X\x07'
clean "$TMPD/report.err" "report stderr"
"$DMT" -b -n 1 -i 200ms --iface "$IF_RX" >"$TMPD/filter.out" 2>"$TMPD/filter.err"
clean "$TMPD/filter.out" "-b --iface"
clean "$TMPD/filter.err" "-b --iface stderr"

# 3. gate on the recording with a spec that names the interface
# (YAML text is UTF-8: the 0xff byte is matched by the glob)
cat >"$TMPD/spec.yaml" <<'Y'
name: "hostile \e]0;X\a"
thresholds:
  - metric: pool.holds
    interface: "r\e]0;X\a\e[2J*"
    expect: [ count >= 0 ]
Y
"$DMT" gate --spec "$TMPD/spec.yaml" --from "$TMPD/rec.dmtrec" --junit "$TMPD/gate.xml" \
	>"$TMPD/gate.out" 2>"$TMPD/gate.err"
rc=$?
[ $rc -le 1 ] || fail "gate: exit $rc: $(cat "$TMPD/gate.err")"
clean "$TMPD/gate.out" "gate table" 'hostile \x1b]0;X\x07'
clean "$TMPD/gate.err" "gate stderr"
clean "$TMPD/gate.xml" "gate --junit" 'hostile \x1b]0;X\x07'
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$TMPD/gate.xml" ||
	fail "gate --junit is not well-formed XML"

# 4. JSON (live, report, gate): json-c escapes controls, but must not pass
# invalid UTF-8 through (a JSON parser refuses the whole line)
json_ok() {
	python3 - "$@" <<'PY' || fail "$2 is not valid JSON (see above)"
import json, sys
n = 0
for i, line in enumerate(open(sys.argv[1], "rb")):
    try:
        json.loads(line)
    except ValueError as e:
        print("%s line %d: %s" % (sys.argv[2], i + 1, e))
        sys.exit(1)
    n += 1
print("%s: %d JSON lines parse" % (sys.argv[2], n))
PY
}
streaming "$DMT" --json -n 2 -i 500ms >"$TMPD/live.json" 2>"$TMPD/live.err" || fail "--json: $(cat "$TMPD/live.err")"
json_ok "$TMPD/live.json" "--json"
grep -qF 'r\\x1b' "$TMPD/live.json" || fail "--json does not show the escaped name"
"$DMT" report --json "$TMPD/rec.dmtrec" >"$TMPD/report.json" 2>&1 || fail "report --json"
json_ok "$TMPD/report.json" "report --json"
"$DMT" gate --spec "$TMPD/spec.yaml" --from "$TMPD/rec.dmtrec" --json "$TMPD/gate.json" >/dev/null 2>&1
python3 -c 'import json, sys; json.load(open(sys.argv[1], "rb"))' "$TMPD/gate.json" ||
	fail "gate --json is not valid JSON"

# 5. the exposition format: label values escaped, the format still parses
streaming "$DMT" export --once -i 1s >"$TMPD/scrape.prom" 2>"$TMPD/export.err" ||
	fail "export --once: $(cat "$TMPD/export.err")"
clean "$TMPD/scrape.prom" "export --once" 'ifname="r\\x1b]0;X\\x07'
if python3 -c 'import prometheus_client' 2>/dev/null; then
	python3 - "$TMPD/scrape.prom" <<'PY' || fail "the scrape does not parse"
import sys
from prometheus_client.parser import text_string_to_metric_families
n = sum(len(f.samples) for f in text_string_to_metric_families(open(sys.argv[1]).read()))
print("exposition parses: %d samples" % n)
PY
fi
pass "no raw control byte or invalid UTF-8 in -b, report, gate, export"
