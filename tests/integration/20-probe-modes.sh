#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Attach-mode probing against an independent oracle: bpftrace's own feature
# probe says whether this kernel lets fentry/fexit (kfunc) programs load.
# Where it does not (this Firecracker host: EPERM), devmemtop must start in
# tracepoint-only mode, name each fentry-backed metric as unavailable with
# the kernel's reason, and still report the tracepoint metrics.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd bpftrace

kfunc=$(bpftrace --info 2>&1 | sed -n 's/^ *kfunc: *//p')
[ -n "$kfunc" ] || fail "bpftrace --info did not report kfunc support"
log "bpftrace says kfunc: $kfunc"

"$DMT" -b -n 1 -i 200ms -v >"$TMPD/out" 2>"$TMPD/err" || fail "devmemtop -b failed: $(cat "$TMPD/err")"
"$DMT" --json -n 1 -i 200ms >"$TMPD/json" 2>"$TMPD/jerr" || fail "devmemtop --json failed"
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
# the one-line startup notice names what is unavailable
if [ "$kfunc" = no ]; then
	grep -q 'tracepoint-only mode; unavailable: .*binding_alloc_latency' "$TMPD/err" ||
		fail "startup notice missing: $(cat "$TMPD/err" | tail -2)"
fi
pass "attach mode agrees with bpftrace's kfunc probe ($kfunc)"
