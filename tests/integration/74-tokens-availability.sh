#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Frag token accounting (issue 11) on a kernel without the devmem_token_*
# tracepoints (kernel-patches/0009), such as this host: held_by_sockets,
# the holders and the token cost come from the put_cmsg_notrunc fallback,
# which needs fentry/fexit. Where the kernel refuses those (bpftrace's own
# kfunc probe is the oracle), every output must say "unavailable" with
# that reason: JSON (metric reason, holders and token cost null), the live
# view's Unavailable line, the exporter (metric_available 0 with the
# reason, no holder or token cost family). Where fexit attaches, the same
# outputs must show the fallback as the source, with no binding, no holder.
# The lab (make vmtest) checks the counts themselves on real devmem TCP.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_root
need_dmt
need_cmd bpftrace
need_cmd curl

kfunc=$(bpftrace --info 2>&1 | sed -n 's/^ *kfunc: *//p')
[ -n "$kfunc" ] || fail "bpftrace --info did not report kfunc support"
log "bpftrace says kfunc: $kfunc"

"$DMT" --json -n 1 -i 200ms >"$TMPD/json" 2>"$TMPD/jerr" || fail "devmemtop --json: $(cat "$TMPD/jerr")"
python3 - "$TMPD/json" "$kfunc" <<'PY' || fail "JSON token availability"
import json, sys
s = json.loads(open(sys.argv[1]).readline())
kfunc = sys.argv[2]
m = s["metrics"]
h, r, d = m["binding_held_by_sockets"], m["recvmsg_tokens"], m["dontneed_cost"]
if "devmem_token" in (h["source"] or ""):
    print("kernel has the 0009 tracepoints: not this test's case")
    sys.exit(0)
assert "put_cmsg_notrunc" in h["source"], h
if kfunc == "no":
    for x in (h, r):
        assert not x["available"], x
        assert "no devmem_token_* tracepoints" in x["reason"], x
        assert "fallback fexit/put_cmsg_notrunc" in x["reason"], x
        assert "not permitted" in x["reason"], x
    assert not d["available"] and "not permitted" in d["reason"], d
    assert s["holders"] is None, s["holders"]
    assert all(v is None for v in s["token_cost"].values()), s["token_cost"]
    for b in s["bindings"]:
        assert b["held_tokens"] is None and b["held_by_sockets"] is None, b
    un = [u for u in s["unavailable"] if u.startswith("binding_held_by_sockets: unavailable: ")]
    assert un and "put_cmsg_notrunc" in un[0], s["unavailable"]
    print("unavailable:", h["reason"])
else:
    assert h["available"] and r["available"] and d["available"], (h, r, d)
    assert s["holders"] == [], s["holders"]
    print("fallback attached:", h["source"])
PY

"$DMT" -b -n 1 -i 200ms >"$TMPD/top" 2>"$TMPD/toperr" || fail "devmemtop -b: $(cat "$TMPD/toperr")"
if [ "$kfunc" = no ]; then
	grep -q '^Unavailable: .*binding_held_by_sockets.*fallback fexit/put_cmsg_notrunc: .*not permitted' \
		"$TMPD/top" || fail "live view does not say why held_by_sockets is unavailable: $(head -3 "$TMPD/top")"
	grep -q '^HOLDERS:' "$TMPD/top" && fail "live view shows a holders panel without the hooks"
else
	grep -q '^HOLDERS: 0 sockets holding frag tokens' "$TMPD/top" ||
		fail "live view has no holders panel: $(head -12 "$TMPD/top")"
fi

export_start -i 200ms
sleep 0.5
scrape "$TMPD/scrape"
export_stop
python3 - "$TMPD/scrape" "$kfunc" <<'PY' || fail "exporter token families"
import re, sys
text = open(sys.argv[1]).read()
kfunc = sys.argv[2]
avail = re.search(r'^devmemtop_metric_available\{metric="binding_held_by_sockets",reason="([^"]*)"\} (\d)$',
                  text, re.M)
assert avail, "no devmemtop_metric_available for binding_held_by_sockets"
fams = set(re.findall(r'^# TYPE (\S+) ', text, re.M))
tok = {f for f in fams if f.startswith(("devmemtop_token_", "devmemtop_tokens_", "devmemtop_dontneed_"))}
if kfunc == "no" and avail.group(2) == "0":
    assert "put_cmsg_notrunc" in avail.group(1), avail.group(0)
    assert not tok, "token families without the hooks: %s" % sorted(tok)
    print("absent, reason:", avail.group(1))
else:
    assert "devmemtop_token_holder_sockets" in tok, sorted(tok)
    assert "devmemtop_token_holder_tokens" not in tok, "a holder series without a holder"
    print("present:", sorted(tok))
PY
pass "frag token accounting: availability and reason agree with the kfunc probe ($kfunc) in JSON, live view and exporter"
