#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The NIC validation kit on the veth test bed: veth cannot do devmem (no
# header split), so the kit must say FAIL for that check and stop; with
# --force it still records, reports and gates the recording end to end.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd ethtool
KIT=$TOP/scripts/nic/validate.sh

"$KIT" >/dev/null 2>"$TMPD/e"; [ $? = 2 ] || fail "no interface: expected exit 2"
"$KIT" nosuchif0 >/dev/null 2>"$TMPD/e"; [ $? = 2 ] || fail "unknown interface: expected exit 2"
grep -q "no interface 'nosuchif0'" "$TMPD/e" || fail "unclear error: $(cat "$TMPD/e")"

testbed_up
ip netns exec "$NS_RX" "$KIT" "$IF_RX" --check-only >"$TMPD/check" 2>&1
rc=$?
cat "$TMPD/check"
[ $rc = 1 ] || fail "--check-only on veth: exit $rc, expected 1"
grep -q '^FAIL  header split' "$TMPD/check" || fail "no header-split FAIL on veth"
grep -q '^PASS  devmemtop loads and attaches' "$TMPD/check" || fail "devmemtop probe not run"
grep -q 'checks: [1-9][0-9]* failed' "$TMPD/check" || fail "no summary line"

testbed_traffic 4
ip netns exec "$NS_RX" "$KIT" "$IF_RX" --force --duration 3s --out "$TMPD/kit" \
	--spec "$TOP/specs/veth-testbed.yaml" >"$TMPD/run" 2>&1
rc=$?
testbed_wait
cat "$TMPD/run"
[ $rc = 1 ] || fail "--force with a failed check must still exit 1, got $rc"
for f in devmemtop.rec report.txt gate.json gate.junit.xml; do
	[ -s "$TMPD/kit/$f" ] || fail "kit did not write $f"
done
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$TMPD/kit/gate.junit.xml" ||
	fail "JUnit from the kit is not well-formed"
pass "kit flags veth as not devmem-capable and records/gates with --force"
