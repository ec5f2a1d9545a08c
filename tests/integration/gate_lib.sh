# SPDX-License-Identifier: GPL-2.0
# Helpers for the gate/record tests (6x-*.sh); source after lib.sh.

# make_traffic_cmd: write $TMPD/traffic.sh SECS, a command that runs one TCP
# stream through the test bed (server in the receiver namespace, client in
# the sender's) and exits non-zero if the stream failed.
make_traffic_cmd() {
	cat >"$TMPD/traffic.sh" <<EOS
#!/bin/bash
ip netns exec $NS_RX python3 $TOP/tests/integration/tcp_stream.py server $ADDR_RX $PORT >"$TMPD/rx.bytes" 2>"$TMPD/rx.err" &
srv=\$!
ip netns exec $NS_TX python3 $TOP/tests/integration/tcp_stream.py client $ADDR_RX $PORT "\$1" >"$TMPD/tx.bytes" 2>"$TMPD/tx.err" || { kill \$srv; exit 1; }
wait \$srv
EOS
	chmod +x "$TMPD/traffic.sh"
}

# junit_check FILE TESTS FAILURES ERRORS SKIPPED: parse with two real XML
# parsers and compare the counts (suite attributes and actual elements).
junit_check() {
	local f=$1
	xmllint --noout "$f" || fail "$f is not well-formed XML (xmllint)"
	python3 - "$@" <<'PY' || fail "JUnit content of $f"
import sys, xml.etree.ElementTree as ET
f, tests, failures, errors, skipped = sys.argv[1], *map(int, sys.argv[2:6])
root = ET.parse(f).getroot()
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
assert len(suites) == 1, len(suites)
s = suites[0]
cases = s.findall("testcase")
got = dict(tests=len(cases),
           failures=sum(1 for c in cases if c.find("failure") is not None),
           errors=sum(1 for c in cases if c.find("error") is not None),
           skipped=sum(1 for c in cases if c.find("skipped") is not None))
want = dict(tests=tests, failures=failures, errors=errors, skipped=skipped)
assert got == want, "elements %s, want %s" % (got, want)
for k, v in want.items():
    assert int(s.get(k)) == v, "suite attribute %s=%s, want %d" % (k, s.get(k), v)
for c in cases:
    assert c.get("classname") and c.get("name"), ET.tostring(c)
    for bad in ("failure", "error"):
        e = c.find(bad)
        if e is not None:
            assert e.get("message"), ET.tostring(c)
print("junit ok:", want)
PY
}
