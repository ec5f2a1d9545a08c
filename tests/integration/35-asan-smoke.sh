#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The ASan+UBSan build (make asan -> build-asan/devmemtop; make check builds
# it before the integration tests) on every command: the live view (-b,
# --json), export --once, record, report and gate on that recording, then
# on crafted, truncated and bit-flipped recordings and bad specs. Any
# sanitizer report (memory error, leak, undefined behaviour) fails.
source "$(dirname "$0")/lib.sh"
ADMT=${ASAN_DMT:-$TOP/build-asan/devmemtop}
[ -x "$ADMT" ] || skip "$ADMT not built (make asan)"
need_root
need_cmd python3
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:exitcode=99
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99
runs=0

# san NAME CMD...: run under the sanitizers; any report fails the test
san() {
	local name=$1; shift
	"$@" >"$TMPD/out" 2>"$TMPD/err"
	local rc=$?
	runs=$((runs + 1))
	if [ $rc = 99 ] || grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMPD/err"; then
		grep -m1 -B2 -A25 -E 'ERROR: |runtime error:' "$TMPD/err"
		fail "$name: sanitizer report (exit $rc)"
	fi
	return $rc
}

testbed_up
source "$(dirname "$0")/gate_lib.sh"
make_traffic_cmd
testbed_traffic 3
san "-b" "$ADMT" -b -n 3 -i 300ms || fail "-b: $(tail -2 "$TMPD/err")"
san "--json" "$ADMT" --json -n 2 -i 300ms || fail "--json: $(tail -2 "$TMPD/err")"
san "export --once" "$ADMT" export --once -i 300ms || fail "export --once"
testbed_wait
san "record" "$ADMT" record -o "$TMPD/r.dmtrec" -i 200ms -- "$TMPD/traffic.sh" 2 ||
	fail "record: $(tail -2 "$TMPD/err")"
san "report" "$ADMT" report "$TMPD/r.dmtrec" || fail "report"
san "report --json" "$ADMT" report --json "$TMPD/r.dmtrec" || fail "report --json"
san "gate --from" "$ADMT" gate --spec "$TOP/specs/veth-testbed.yaml" --from "$TMPD/r.dmtrec" \
	--junit "$TMPD/j.xml" --json "$TMPD/j.json"
[ $? -le 2 ] || fail "gate --from"

# damaged: cut at 25 offsets, 25 bit flips (CRC or decode errors, never a crash)
size=$(stat -c %s "$TMPD/r.dmtrec")
for i in $(seq 1 25); do
	off=$(( (size * i) / 26 ))
	head -c "$off" "$TMPD/r.dmtrec" >"$TMPD/cut.dmtrec"
	san "report (cut at $off)" "$ADMT" report "$TMPD/cut.dmtrec"
	cp "$TMPD/r.dmtrec" "$TMPD/flip.dmtrec"
	python3 -c 'import sys; f=open(sys.argv[1],"r+b"); o=int(sys.argv[2]); f.seek(o); b=f.read(1); f.seek(o); f.write(bytes([b[0]^(1<<(o%8))]))' \
		"$TMPD/flip.dmtrec" "$off"
	san "gate --from (bit flip at $off)" "$ADMT" gate --spec "$TOP/specs/veth-testbed.yaml" \
		--from "$TMPD/flip.dmtrec"
done
# crafted (tests/integration/craft_rec.py)
python3 "$TOP/tests/integration/craft_rec.py" pools "$TMPD/over.dmtrec" 10241
python3 "$TOP/tests/integration/craft_rec.py" churn "$TMPD/churn.dmtrec" 3 10240
python3 "$TOP/tests/integration/craft_rec.py" flags "$TMPD/flags.dmtrec" 0x80
for f in over churn flags; do
	san "report $f" "$ADMT" report --no-events "$TMPD/$f.dmtrec"
	san "report --json $f" "$ADMT" report --json "$TMPD/$f.dmtrec"
done
# specs: deep nesting, not UTF-8, empty
head -c 200000 /dev/zero | tr '\0' '[' >"$TMPD/deep.yaml"
printf 'name: "\xff\xfe"\n' >"$TMPD/utf.yaml"
: >"$TMPD/empty.yaml"
for s in deep utf empty; do
	san "gate --check $s" "$ADMT" gate --spec "$TMPD/$s.yaml" --check
done
pass "$runs runs of the ASan+UBSan binary, no sanitizer report"
