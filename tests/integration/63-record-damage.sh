#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Damaged recordings through the CLI: a real recording truncated at many
# points and with bytes flipped in several frames. report must print what it
# could read, then one error line naming the damage, and exit 1; gate --from
# must evaluate the readable part, say why, and exit 2. Never a crash
# (exit >= 128) and never success.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd python3
REC=$TMPD/ok.dmtrec
"$DMT" record -o "$REC" -i 100ms -d 1500ms >/dev/null 2>"$TMPD/rec.err" ||
	fail "record: $(cat "$TMPD/rec.err")"
"$DMT" report "$REC" >"$TMPD/ok.txt" 2>&1 || fail "intact recording does not report cleanly"
printf 'thresholds:\n  - metric: tool.ringbuf_drops\n    expect: [ count == 0 ]\n' >"$TMPD/s.yaml"
"$DMT" gate --spec "$TMPD/s.yaml" --from "$REC" >/dev/null 2>&1 || fail "intact recording does not gate"

size=$(stat -c %s "$REC")
# frame boundaries, from the format itself (16-byte header, 12-byte frame headers)
python3 - "$REC" >"$TMPD/frames" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
off = 16
while off < len(d):
    t, l, c = struct.unpack_from("<III", d, off)
    print(off, t, l)
    off += 12 + l
PY
nframes=$(wc -l <"$TMPD/frames")
log "recording: $size bytes, $nframes frames"
[ "$nframes" -ge 10 ] || fail "too few frames ($nframes)"

check_damaged() {	# FILE WHAT EXPECTED-MESSAGE-REGEX
	local f=$1 what=$2 re=$3 rc lines
	"$DMT" report "$f" >"$TMPD/d.out" 2>"$TMPD/d.err"
	rc=$?
	[ $rc = 1 ] || fail "$what: report exit $rc, want 1 ($(cat "$TMPD/d.err"))"
	lines=$(wc -l <"$TMPD/d.err")
	[ "$lines" = 1 ] || fail "$what: $lines error lines: $(cat "$TMPD/d.err")"
	grep -Eq "$re" "$TMPD/d.err" || fail "$what: message '$(cat "$TMPD/d.err")' !~ /$re/"
	"$DMT" gate --spec "$TMPD/s.yaml" --from "$f" >"$TMPD/g.out" 2>"$TMPD/g.err"
	rc=$?
	[ $rc = 2 ] || fail "$what: gate --from exit $rc, want 2"
	grep -Eq "$re" "$TMPD/g.err" || fail "$what: gate message: $(cat "$TMPD/g.err")"
}

# truncation: inside the header, inside META, at frame boundaries, mid-frame
n=0
for cut in 5 12 20 $(awk 'NR>1 && NR%3==0 {print $1; print $1+7; print $1+40}' "$TMPD/frames") $((size - 1)); do
	[ "$cut" -lt "$size" ] || continue
	head -c "$cut" "$REC" >"$TMPD/cut.dmtrec"
	if [ "$cut" -lt 8 ]; then
		re='not a devmemtop recording'
	else
		re='truncated at byte [0-9]+'
	fi
	"$DMT" report "$TMPD/cut.dmtrec" >"$TMPD/d.out" 2>"$TMPD/d.err"
	rc=$?
	[ $rc = 1 ] || fail "cut at $cut: report exit $rc"
	grep -Eq "$re" "$TMPD/d.err" || fail "cut at $cut: '$(cat "$TMPD/d.err")'"
	# everything before the cut was printed: the header always, the tables too
	if [ "$cut" -gt 400 ]; then
		grep -q '^metric availability:' "$TMPD/d.out" || fail "cut at $cut: header not printed"
		grep -q '^summary: ' "$TMPD/d.out" || fail "cut at $cut: tables not printed"
	fi
	n=$((n + 1))
done
log "$n truncation points checked"
head -c $(( $(awk 'NR==6 {print $1}' "$TMPD/frames") + 30 )) "$REC" >"$TMPD/cut.dmtrec"
check_damaged "$TMPD/cut.dmtrec" "cut in frame 6" 'truncated at byte [0-9]+: frame 6 \((snapshot|event)\) needs'
# a cut exactly between frames: no end marker
head -c "$(awk 'NR==6 {print $1}' "$TMPD/frames")" "$REC" >"$TMPD/cut.dmtrec"
check_damaged "$TMPD/cut.dmtrec" "cut between frames" 'no end frame after 5 frames'
# the readable snapshots before the damage were gated
grep -Eq 'recording .*cut.dmtrec, [0-9.]+s, [1-4] snapshots' "$TMPD/g.out" || fail "gate did not read what was readable: $(head -1 "$TMPD/g.out")"

# corruption: flip a byte in the payload of frames 2, middle, last
for k in 2 $((nframes / 2)) "$nframes"; do
	off=$(awk -v k="$k" 'NR==k {print $1 + 12 + int($3 / 2)}' "$TMPD/frames")
	cp "$REC" "$TMPD/bad.dmtrec"
	python3 -c "
import sys
f = open(sys.argv[1], 'r+b'); f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2]))
f.write(bytes([b[0] ^ 0x5a]))" "$TMPD/bad.dmtrec" "$off"
	check_damaged "$TMPD/bad.dmtrec" "flip in frame $k" "corrupt frame $k \\([a-z]+\\) at byte [0-9]+: CRC mismatch"
done
# not a recording at all; an empty file
echo "hello" >"$TMPD/text"
check_damaged "$TMPD/text" "text file" 'not a devmemtop recording \(file too short\)'
: >"$TMPD/empty"
check_damaged "$TMPD/empty" "empty file" 'not a devmemtop recording'
"$DMT" report /nonexistent.dmtrec >/dev/null 2>"$TMPD/ne.err"
[ $? = 2 ] || fail "missing file: want exit 2"
grep -q 'cannot open /nonexistent.dmtrec: No such file or directory' "$TMPD/ne.err" || fail "missing file message"
pass "truncated and corrupted recordings: one-line errors, readable part kept, exit 1/2"
