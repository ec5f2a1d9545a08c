#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Attach-mode probing against an independent oracle: bpftrace's own feature
# probe says whether this kernel lets fentry/fexit (kfunc) programs load.
# Where it does not (this Firecracker host: EPERM), devmemtop's full mode
# (-m full) must start in tracepoint-only mode, name each fentry-backed
# metric as unavailable with the kernel's reason, and still report the
# tracepoint metrics. The default, the devmem mode (issue 36), must say the
# same of every devmem figure, per figure: no devmem-only hook here, so the
# refill batches of every pool are sampled, with that reason, never a 0; and
# today's name -m auto is still read, as the full mode, with a note.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd bpftrace

kfunc=$(bpftrace --info 2>&1 | sed -n 's/^ *kfunc: *//p')
[ -n "$kfunc" ] || fail "bpftrace --info did not report kfunc support"
log "bpftrace says kfunc: $kfunc"

"$DMT" -b -n 1 -i 200ms -v -m full >"$TMPD/out" 2>"$TMPD/err" ||
	fail "devmemtop -b failed: $(cat "$TMPD/err")"
"$DMT" --json -n 1 -i 200ms -m full >"$TMPD/json" 2>"$TMPD/jerr" || fail "devmemtop --json failed"
"$DMT" --json -n 1 -i 200ms >"$TMPD/djson" 2>"$TMPD/derr" ||
	fail "devmemtop --json (default mode) failed: $(cat "$TMPD/derr")"
"$DMT" --json -n 1 -i 200ms -m auto >"$TMPD/ajson" 2>"$TMPD/aerr" ||
	fail "devmemtop -m auto failed: $(cat "$TMPD/aerr")"
grep -qxE 'devmemtop( top)?: note: -m auto is now -m full; the default is -m devmem' "$TMPD/aerr" ||
	fail "-m auto: no note naming the full mode: $(cat "$TMPD/aerr")"
grep -q '^probe pp_hold .* ok$' "$TMPD/err" || fail "-v does not show the pp_hold probe result"
[ "$(grep -c '^probe ' "$TMPD/err")" -ge 15 ] || fail "-v does not show every probe"

python3 - "$TMPD/json" "$kfunc" <<'PY' || fail "mode/availability check"
import json, sys
s = json.loads(open(sys.argv[1]).readline())
kfunc = sys.argv[2]
m = s["metrics"]
for k in ("pool_holds", "pool_releases", "pool_inflight", "pool_refill_batch", "pool_destroy"):
    assert m[k]["available"], k
fentry_metrics = ("binding_alloc_latency", "binding_free_latency", "binding_leaks")
has_devmem = m["binding_occupancy"]["available"] or "no devmem" not in (m["binding_occupancy"]["reason"] or "")
if kfunc == "no":
    assert s["mode"] == "tracepoint-only", s["mode"]
    for k in fentry_metrics:
        assert not m[k]["available"], k
        r = m[k]["reason"]
        assert r and ("not permitted" in r or "no devmem" in r or "not in kernel BTF" in r), (k, r)
    print("fentry refused here; reasons:", {k: m[k]["reason"] for k in fentry_metrics})
else:
    assert s["mode"] in ("fentry", "devmem-tracepoints"), s["mode"]
    assert m["binding_alloc_latency"]["available"], m["binding_alloc_latency"]
# held-by-sockets: 0009's tracepoints, else the put_cmsg_notrunc fallback,
# which needs fexit: where that is refused, said so with the reason
h = m["binding_held_by_sockets"]
if kfunc == "no" and not h["available"]:
    assert "put_cmsg_notrunc" in h["reason"] and "not permitted" in h["reason"], h
else:
    assert h["available"] or h["reason"], h
assert all(isinstance(u, str) and ": unavailable: " in u for u in s["unavailable"])
PY
python3 - "$TMPD/djson" "$TMPD/json" "$TMPD/ajson" "$kfunc" <<'PY' || fail "devmem mode check"
import json, sys
d, f, a = (json.loads(open(p).readline()) for p in sys.argv[1:4])
kfunc = sys.argv[4]
assert d["mode"] == "devmem", d["mode"]
assert a["mode"] == f["mode"], (a["mode"], f["mode"])
m, fm = d["metrics"], f["metrics"]
for k in ("pool_holds", "pool_releases", "pool_inflight"):
    assert m[k]["method"] == "exact" and "at snapshot" in m[k]["source"], (k, m[k])
r = m["pool_refill_batch"]
assert r["method"] == "sampled", r
# every binding figure as the full mode has it on this kernel, reason included
for k, v in fm.items():
    if not k.startswith(("binding_", "dontneed_", "recvmsg_")) or k == "binding_in_pools":
        continue
    assert m[k]["available"] == v["available"] and m[k]["reason"] == v["reason"], (k, m[k], v)
if kfunc == "no":
    assert r["source"].startswith("no devmem hook: every pool "), r
    for k in ("binding_alloc_latency", "binding_free_latency", "binding_provider_calls"):
        assert not m[k]["available"] and m[k]["reason"], (k, m[k])
else:
    assert r["source"].startswith("devmem: "), r
print("devmem mode: refill", r["method"], "from", repr(r["source"]))
PY
"$DMT" -b -n 1 -i 200ms >"$TMPD/dout" 2>"$TMPD/dberr" ||
	fail "devmemtop -b (default mode) failed: $(cat "$TMPD/dberr")"
grep -q '^Sampled: .*pool_refill_batch' "$TMPD/dout" || fail "default mode: no Sampled line"
if [ "$kfunc" = no ]; then
	grep -q 'devmem mode; unavailable: .*binding_alloc_latency' "$TMPD/dberr" ||
		fail "default mode: startup notice missing: $(tail -2 "$TMPD/dberr")"
	grep -q '^Sampled: pool_refill_batch (no devmem hook: every pool' "$TMPD/dout" ||
		fail "default mode: the Sampled line does not say why: $(grep Sampled "$TMPD/dout")"
fi
# the one-line startup notice names what is unavailable
if [ "$kfunc" = no ]; then
	grep -q 'tracepoint-only mode; unavailable: .*binding_alloc_latency' "$TMPD/err" ||
		fail "startup notice missing: $(cat "$TMPD/err" | tail -2)"
fi
pass "attach mode agrees with bpftrace's kfunc probe ($kfunc)"
