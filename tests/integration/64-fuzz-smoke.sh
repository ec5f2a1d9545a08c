#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fuzz smoke: build the libFuzzer targets (tests/fuzz/) with ASan+UBSan and
# run each for FUZZ_SECS (default 25) seconds from the seed corpus. Any
# crash, sanitizer report, leak or hang (> 5 s per input) fails the test.
# The longer campaign is described in bench/fuzz.md.
source "$(dirname "$0")/lib.sh"
need_cmd clang
SECS=${FUZZ_SECS:-25}
# `make asan` (which make check runs first) builds the same targets with the
# same script into build-asan/fuzz/: use them when no source they are built
# from is newer, instead of a second clang build (about 20 s here)
OUT=$TOP/build-asan/fuzz
stale=
for t in fuzz_spec fuzz_record; do
	[ -x "$OUT/$t" ] || { stale="no $OUT/$t"; break; }
	stale=$(find "$TOP/src" "$TOP/bpf" "$TOP/tests/fuzz" -type f \( -name '*.[ch]' -o -name build.sh \) \
		-newer "$OUT/$t" -print -quit)
	[ -n "$stale" ] && break
done
if [ -n "$stale" ]; then
	OUT=$TMPD/fuzz
	OUT=$OUT "$TOP/tests/fuzz/build.sh" >"$TMPD/build.log" 2>&1 ||
		fail "building the fuzz targets: $(tail -5 "$TMPD/build.log")"
	log "built the targets into $OUT ($stale is newer than make asan's)"
else
	log "make asan's targets in $OUT are current"
fi

run_target() {
	local name=$1 seeds=$2; shift 2
	local corpus=$TMPD/corpus-$name
	mkdir -p "$corpus"
	log "fuzzing $name for ${SECS}s"
	"$OUT/$name" -max_total_time="$SECS" -timeout=5 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$TMPD/$name-" "$@" "$corpus" "$seeds" \
		>"$TMPD/$name.log" 2>&1
	local rc=$?
	grep -E '^(Done|stat::number_of_executed_units)' "$TMPD/$name.log" | sed 's/^/  /'
	if [ $rc != 0 ] || ls "$TMPD/$name-"* >/dev/null 2>&1; then
		sed 's/^/    | /' "$TMPD/$name.log" | grep -v '^    | #[0-9]' | tail -40
		fail "$name found a problem (rc $rc); artifact: $(ls "$TMPD/$name-"* 2>/dev/null)"
	fi
	# libFuzzer must really have run: a target that dies at start runs nothing
	local units
	units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMPD/$name.log")
	[ "${units:-0}" -gt 1000 ] || fail "$name executed only ${units:-0} inputs"
}

run_target fuzz_spec "$TOP/tests/fuzz/corpus/spec" -dict="$TOP/tests/fuzz/spec.dict"
run_target fuzz_record "$TOP/tests/fuzz/corpus/record"
pass "no crash, leak or hang in ${SECS}s of each fuzz target"
