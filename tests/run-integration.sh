#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run tests/integration/[0-9]*.sh (or the ones named on the command line),
# each in its own process; a test exits 0 pass, 77 skip, anything else fail.
# Prints one line per test and closes with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.." || exit 2
mkdir -p build/test-logs
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(tests/integration/[0-9]*.sh)
pass=0 fail=0 skipped=0 failed=()
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	logf=build/test-logs/$name.log
	start=$(date +%s)
	timeout --kill-after=10 600 bash "$t" >"$logf" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0)  pass=$((pass + 1)); printf 'PASS %-32s %4ss\n' "$name" "$secs" ;;
	77) skipped=$((skipped + 1))
	    printf 'SKIP %-32s %4ss  %s\n' "$name" "$secs" "$(grep -m1 '^SKIP:' "$logf" | cut -c7-)" ;;
	*)  fail=$((fail + 1)); failed+=("$name")
	    printf 'FAIL %-32s %4ss  (rc %d, log %s)\n' "$name" "$secs" "$rc" "$logf"
	    sed 's/^/    | /' "$logf" | tail -25 ;;
	esac
done
echo "integration: $pass passed, $fail failed, $skipped skipped"
[ "$fail" = 0 ]
