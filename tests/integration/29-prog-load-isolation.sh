#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One program that does not load never takes its siblings down with it:
# a kernel where one program fails the verifier, a CO-RE relocation or its
# attach target (7.3's tcp_recvmsg lost an argument and the old fexit read
# its return value at ctx[5]) loses that program's figures, each said with
# the program's own error, and keeps every other figure. Here two programs
# are broken on purpose (DEVMEMTOP_FAULT_PROG gives them a type no kernel
# loads); the host's tracepoint programs load otherwise.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt

DEVMEMTOP_FAULT_PROG=pp_nid,walk_binding "$DMT" --json -n 1 -i 200ms -v \
	>"$TMPD/json" 2>"$TMPD/err" || fail "devmemtop with two broken programs exited $?: $(tail -3 "$TMPD/err")"
grep -q '^program pp_nid does not load: ' "$TMPD/err" || fail "no per-program line for pp_nid: $(cat "$TMPD/err")"
grep -q '^program walk_binding does not load: ' "$TMPD/err" || fail "no per-program line for walk_binding"
[ "$(grep -c ' does not load: ' "$TMPD/err")" = 2 ] || fail "other programs blamed: $(grep 'does not load' "$TMPD/err")"
"$DMT" --json -n 1 -i 200ms >"$TMPD/clean" 2>/dev/null || fail "devmemtop without faults failed"

python3 - "$TMPD/json" "$TMPD/clean" <<'PY' || fail "availability with two broken programs"
import json, sys
s = json.loads(open(sys.argv[1]).readline())
c = json.loads(open(sys.argv[2]).readline())
m, cm = s["metrics"], c["metrics"]
for k, prog in (("pool_nid", "pp_nid"), ("binding_occupancy", "walk_binding")):
    assert not m[k]["available"], (k, m[k])
    assert m[k]["reason"].startswith("BPF load of %s failed (" % prog), (k, m[k]["reason"])
# every other figure is as available as on the same kernel without faults
for k in cm:
    if k in ("pool_nid", "binding_occupancy"):
        continue
    if cm[k]["available"] and not m[k]["available"]:
        raise AssertionError("%s lost with the broken programs: %s" % (k, m[k]["reason"]))
assert s["mode"] == c["mode"], (s["mode"], c["mode"])
print("isolated:", m["pool_nid"]["reason"], "|", m["binding_occupancy"]["reason"])
PY

# the base cannot be lost quietly: without page_pool_state_hold, one line and exit 1
DEVMEMTOP_FAULT_PROG=pp_hold "$DMT" --json -n 1 -i 200ms >"$TMPD/out" 2>"$TMPD/err"
rc=$?
[ $rc = 1 ] || fail "broken pp_hold: exit $rc, expected 1"
[ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q 'BPF load of pp_hold failed' "$TMPD/err" ||
	fail "broken pp_hold: $(cat "$TMPD/err")"
pass "two broken programs isolated, every other figure kept; a broken base is one line"
