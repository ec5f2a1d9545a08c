#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the cmocka unit test binaries given as arguments.
set -u
pass=0 fail=0
for t in "$@"; do
	if "$t"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $t"
	fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" = 0 ]
