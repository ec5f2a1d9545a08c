#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# src/ keeps its layers (issue 38; docs/HACKING.md, "Layers"): one folder
# per part, a part includes only its own headers and those of the parts
# below it, skeletons only in the collector, no include cycle between the
# folders or among the headers. scripts/check-layers.py on this tree, then
# on copies of it with one violation each, which it must name.
source "$(dirname "$0")/lib.sh"
need_cmd python3
CHECK=$TOP/scripts/check-layers.py

out=$("$CHECK" -v --root "$TOP" 2>&1) || fail "this tree breaks its layers: $out"
log "$out"

# A fresh copy of src/ and the headers of bpf/ (what includes resolve to).
copy() {
	rm -rf "$TMPD/t" && mkdir -p "$TMPD/t/bpf" &&
		cp -a "$TOP/src" "$TMPD/t/" && cp -a "$TOP"/bpf/*.h "$TMPD/t/bpf/" ||
		fail "cannot copy the tree to $TMPD/t"
}

# must_fail WHAT PATTERN: the copy fails the check with a line matching PATTERN.
must_fail() {
	local out rc
	out=$("$CHECK" --root "$TMPD/t" 2>&1)
	rc=$?
	[ "$rc" = 1 ] || fail "$1: check-layers exited $rc, not 1: $out"
	grep -qE -- "$2" <<<"$out" || fail "$1: no line matches '$2' in: $out"
	log "fails on $1: $(grep -m1 -E -- "$2" <<<"$out")"
}

copy
echo '#include "collector/collector.h"' >>"$TMPD/t/src/core/util.h"
must_fail "core including the collector" \
	'src/core/util.h:[0-9]+: "collector/collector.h": core \(level 0\) includes collector \(level 1\), up'
must_fail "core including the collector (the cycle)" 'folder cycle: .*collector.*core|folder cycle: .*core.*collector'

copy
echo '#include "exporter/webcfg.h"' >>"$TMPD/t/src/collector/runner.h"
must_fail "the collector including the exporter" \
	'src/collector/runner.h:[0-9]+: .*collector \(level 1\) includes exporter \(level 1\), sideways'

copy
echo '#include "cmd/commands.h"' >>"$TMPD/t/src/exporter/privdrop.c"
must_fail "the exporter including a command" 'exporter \(level 1\) includes cmd \(level 2\), up'

copy
echo '#include "devmemtop.skel.h"' >>"$TMPD/t/src/cmd/gate.c"
must_fail "a skeleton outside the collector" 'src/cmd/gate.c:[0-9]+: "devmemtop.skel.h": BPF skeletons'

copy
echo '#include "collector.h"' >>"$TMPD/t/src/cmd/top.c"
must_fail "another part's header without its folder" 'src/cmd/top.c:[0-9]+: "collector.h" resolves nowhere'

copy
echo '#include "compare_eval.h"' >>"$TMPD/t/src/core/stats.h"
must_fail "a header cycle" 'header cycle: src/core/(compare_eval|stats).h -> .*src/core/(compare_eval|stats).h'

copy
echo 'int stray;' >"$TMPD/t/src/stray.c"
must_fail "a file outside every part" 'src/stray.c: a file directly in src/'

copy
mkdir "$TMPD/t/src/ui" && echo 'int ui;' >"$TMPD/t/src/ui/ui.c"
must_fail "a folder that is no part" 'src/ui/: not a known part'

pass "src/ keeps its layers, and the check names each kind of violation"
