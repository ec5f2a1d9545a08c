#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the libFuzzer targets into build/fuzz/ (clang 14, ASan + UBSan).
#   tests/fuzz/build.sh            -> build/fuzz/fuzz_spec, build/fuzz/fuzz_record
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$TOP/build/fuzz}
CLANG=${CLANG:-clang}
mkdir -p "$OUT"
FLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
	-std=gnu11 -D_GNU_SOURCE -I$TOP/src -I$TOP/src/core -I$TOP/bpf"
COMMON="$TOP/src/core/gate_spec.c $TOP/src/core/gate_eval.c $TOP/src/core/gate_out.c $TOP/src/core/hist.c $TOP/src/core/util.c $TOP/src/core/snapshot.c
	$TOP/src/core/metrics.c $TOP/src/core/objtrack.c $TOP/src/core/textsafe.c $TOP/src/core/outstream.c
	$TOP/src/core/yamlfile.c $TOP/src/core/tokens.c $TOP/src/core/podcg.c"
LIBS="-lyaml -ljson-c -lz -lm"
# shellcheck disable=SC2086
$CLANG $FLAGS -o "$OUT/fuzz_spec" "$TOP/tests/fuzz/fuzz_spec.c" $COMMON $LIBS
# shellcheck disable=SC2086
$CLANG $FLAGS -o "$OUT/fuzz_record" "$TOP/tests/fuzz/fuzz_record.c" "$TOP/src/core/record.c" $COMMON $LIBS
echo "built $OUT/fuzz_spec $OUT/fuzz_record"
