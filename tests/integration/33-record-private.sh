#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Recordings keep the kernel's layout private (issue 13): created 0600
# whatever the umask (also when replacing a 0644 file); no pool or event
# address the live view shows, and no kallsyms address, in the file or in
# what an unprivileged `report` prints - unless recorded with
# --kernel-addresses. A flipped bit in the header's flags is refused.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/gate_lib.sh"
need_root
need_dmt
need_cmd python3
testbed_up
make_traffic_cmd

# the real addresses, from the live view during the same runs; -m full
# everywhere: a pool of pages has its address from its first page (the
# default devmem mode locates it in a sampling window, maybe after the run)
"$DMT" -m full --json -i 200ms -n 40 >"$TMPD/live.json" 2>/dev/null &
live=$!
_TB_PIDS+=($live)
umask 022
: >"$TMPD/old.dmtrec"
chmod 0644 "$TMPD/old.dmtrec"
"$DMT" record --mode full -o "$TMPD/new.dmtrec" -i 200ms -- "$TMPD/traffic.sh" 2 2>"$TMPD/rec.err" ||
	fail "record: $(cat "$TMPD/rec.err")"
"$DMT" record --mode full -o "$TMPD/old.dmtrec" -i 200ms --duration 1s 2>"$TMPD/rec.err" ||
	fail "record over a 0644 file: $(cat "$TMPD/rec.err")"
for f in new old; do
	mode=$(stat -c %a "$TMPD/$f.dmtrec")
	[ "$mode" = 600 ] || fail "$f.dmtrec is mode $mode, want 600"
done
"$DMT" record --mode full -o "$TMPD/raw.dmtrec" -i 200ms --kernel-addresses -- "$TMPD/traffic.sh" 2 \
	2>"$TMPD/rec.err" || fail "record --kernel-addresses: $(cat "$TMPD/rec.err")"
wait $live

mode=$(stat -c %a "$TMPD/raw.dmtrec")
[ "$mode" = 600 ] || fail "raw.dmtrec is mode $mode, want 600"
for f in new raw; do
	"$DMT" report "$TMPD/$f.dmtrec" >"$TMPD/$f.txt" 2>&1 || fail "report $f: $(tail -3 "$TMPD/$f.txt")"
	"$DMT" report --json "$TMPD/$f.dmtrec" >"$TMPD/$f.json" 2>&1 || fail "report --json $f"
done

python3 - "$TMPD" <<'PY' || fail "kernel addresses (see above)"
import json, re, struct, sys
d = sys.argv[1]
live = set()
for line in open(d + "/live.json"):
    for p in json.loads(line).get("pools", []):
        if p.get("addr"):
            live.add(int(p["addr"], 16))
syms = [int(l.split()[0], 16) for l in open("/proc/kallsyms")
        if l.split()[2] in ("mp_dmabuf_devmem_alloc_netmems", "io_pp_zc_alloc_netmems")]
syms = [a for a in syms if a]
assert live, "the live view showed no pool address"
def recorded(name):
    out = set()
    for line in open("%s/%s.json" % (d, name)):
        for p in json.loads(line).get("pools", []):
            if p.get("addr"):
                out.add(int(p["addr"], 16))
    return out
new, raw = recorded("new"), recorded("raw")
data = open(d + "/new.dmtrec", "rb").read()
text = open(d + "/new.txt").read()
leaks = [a for a in live if struct.pack("<Q", a) in data or a in new]
leaks += [a for a in syms if ("%x" % a) in data.decode("latin-1") or ("%x" % a) in text]
if leaks:
    print("default recording holds kernel addresses: %s" % ", ".join(hex(a) for a in leaks))
    sys.exit(1)
if re.search(r"0x[0-9a-f]{12,}", text):
    print("report prints an address: %s" % re.search(r".*0x[0-9a-f]{12,}.*", text).group(0))
    sys.exit(1)
assert new, "no pool in the default recording"
print("default: %d pools, pseudonymised; %d live addresses and %d kallsyms addresses absent"
      % (len(new), len(live), len(syms)))
# --kernel-addresses: what was asked for is there
assert raw & live, "--kernel-addresses recording has none of the live addresses"
if syms:
    assert any(("%#x" % a) in open(d + "/raw.txt").read() for a in syms), "kallsyms line hidden"
print("--kernel-addresses: %d of its pool addresses are live ones" % len(raw & live))
PY

# header flags: every bit is checked
cp "$TMPD/new.dmtrec" "$TMPD/flip.dmtrec"
printf '\x04' | dd of="$TMPD/flip.dmtrec" bs=1 seek=12 conv=notrunc status=none
"$DMT" report "$TMPD/flip.dmtrec" >/dev/null 2>"$TMPD/flip.err"
rc=$?
[ $rc = 1 ] || fail "flipped header flag: report exit $rc, want 1"
grep -q "unknown flags 0x4" "$TMPD/flip.err" || fail "flipped flag: $(cat "$TMPD/flip.err")"
cp "$TMPD/raw.dmtrec" "$TMPD/flip.dmtrec"
printf '\x00' | dd of="$TMPD/flip.dmtrec" bs=1 seek=12 conv=notrunc status=none
"$DMT" report "$TMPD/flip.dmtrec" >/dev/null 2>"$TMPD/flip.err"
[ $? = 1 ] && grep -q "CRC mismatch" "$TMPD/flip.err" ||
	fail "cleared kernel-addresses flag went unnoticed: $(cat "$TMPD/flip.err")"
pass "recordings 0600, no kernel address unless --kernel-addresses, header flags checked"
