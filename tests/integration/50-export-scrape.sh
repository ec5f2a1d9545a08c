#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devmemtop export on real veth page_pool traffic: every scrape passes
# `promtool check metrics`, histograms are cumulative with power-of-two le,
# the receiver's pool is there with counters that only go up, concurrent
# scrapes all succeed while collection goes on, HEAD has no body, and when
# the veth goes away its pool leaves the output (or stays as a zombie).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_root
need_dmt
need_cmd curl
need_cmd promtool
need_cmd python3
testbed_up
# 16 concurrent scrapes below come from one address: allow them (the
# per-client limit itself is 54-export-http's)
# -m full: the pool from its first refill (the default devmem mode locates a
# pool of pages in its sampling windows: 88-devmem-mode)
export_start -i 500ms -m full --max-connections-per-client 16
ids=$(bpf_ids_of "$EXP_PID")
[ -n "$ids" ] || fail "the exporter holds no BPF programs or links"
testbed_traffic 6
# until the pool shows (20 s at most), not a fixed 1.5 s: with a slow
# connect (load average 11) the first scrape had no sample of it yet
for i in $(seq 1 100); do
	scrape "$TMPD/s0.prom"
	grep -q "^devmemtop_page_pool_holds_total{.*ifname=\"$IF_RX\"" "$TMPD/s0.prom" && break
	sleep 0.2
done

T=$EXPORT_TOOLS
scrapes=()
for i in 1 2 3 4 5 6; do
	scrape "$TMPD/s$i.prom"
	promtool_lint "$TMPD/s$i.prom"
	scrapes+=("$TMPD/s$i.prom")
	sleep 0.5
done
log "6 sequential scrapes pass promtool check metrics"

# 16 concurrent scrapes: all 200 and all valid
for i in $(seq 1 16); do
	curl -sS --max-time 10 -o "$TMPD/c$i.prom" -w '%{http_code}\n' "$EXP_URL/metrics" \
		>"$TMPD/c$i.code" &
	cpids+=($!)
done
for p in "${cpids[@]}"; do wait "$p" || fail "a concurrent scrape failed"; done
for i in $(seq 1 16); do
	[ "$(cat "$TMPD/c$i.code")" = 200 ] || fail "concurrent scrape $i: HTTP $(cat "$TMPD/c$i.code")"
	promtool_lint "$TMPD/c$i.prom"
done
log "16 concurrent scrapes: all 200 and valid"
testbed_wait

python3 "$T" histograms "${scrapes[@]}" || fail "histogram structure"
last=${scrapes[-1]}
pool=$(grep "^devmemtop_page_pool_info{.*ifname=\"$IF_RX\"" "$last" | grep -o 'pool_id="[^"]*"' |
	head -1 | cut -d'"' -f2)
[ -n "$pool" ] || fail "no page pool for $IF_RX in the scrape: $(grep -c page_pool_info "$last") pools"
holds=$(python3 "$T" get "$last" devmemtop_page_pool_holds_total pool_id="$pool" ifname="$IF_RX") ||
	fail "holds of pool $pool"
batches=$(python3 "$T" get "$last" devmemtop_page_pool_refill_batch_items_count pool_id="$pool") ||
	fail "refill count of pool $pool"
log "pool $pool on $IF_RX: holds $holds, refill batches $batches"
[ "$holds" -gt 0 ] || fail "pool $pool has no holds during traffic"
[ "$batches" -gt 0 ] || fail "pool $pool has no refill batches during traffic"
python3 "$T" monotonic devmemtop_page_pool_holds_total "pool_id=$pool" "${scrapes[@]}" ||
	fail "holds counter went down"
python3 "$T" monotonic devmemtop_page_pool_refill_batch_items_count "pool_id=$pool" "${scrapes[@]}" ||
	fail "refill count went down"

# collection goes on while we scrape: the snapshot count moves
c1=$(python3 "$T" get "${scrapes[0]}" devmemtop_collections_total)
c6=$(python3 "$T" get "$last" devmemtop_collections_total)
[ "$c6" -gt "$c1" ] || fail "collections_total did not move across scrapes ($c1 -> $c6)"
s1=$(python3 "$T" get "${scrapes[0]}" devmemtop_scrapes_total)
s6=$(python3 "$T" get "$last" devmemtop_scrapes_total)
[ "$s6" -gt "$s1" ] || fail "scrapes_total did not move ($s1 -> $s6)"
log "collections $c1 -> $c6, scrapes $s1 -> $s6 across the sequential scrapes"

# HEAD: headers only
hdr=$(curl -sS --max-time 5 -I "$EXP_URL/metrics") || fail "HEAD /metrics"
echo "$hdr" | grep -q '^HTTP/1.1 200' || fail "HEAD /metrics: $hdr"
echo "$hdr" | grep -qi '^Content-Type: text/plain; version=0.0.4' || fail "HEAD content type: $hdr"
body=$(python3 - "$EXP_PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"HEAD /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
head, _, rest = data.partition(b"\r\n\r\n")
print(len(rest) if head.startswith(b"HTTP/1.1 200") else "bad: %r" % head[:60])
PY
) || fail "raw HEAD request"
[ "$body" = 0 ] || fail "HEAD /metrics sent a body: $body"

# the veth and its pool go away: the pool leaves the output, or stays as a zombie
testbed_down
sleep 3
scrape "$TMPD/after.prom"
promtool_lint "$TMPD/after.prom"
if grep -q "pool_id=\"$pool\"" "$TMPD/after.prom"; then
	grep -q "^devmemtop_page_pool_info{pool_id=\"$pool\".*state=\"zombie\"" "$TMPD/after.prom" ||
		fail "pool $pool still exported after its veth was deleted, and not as a zombie"
	log "pool $pool stays as a zombie (pages in flight), as documented"
else
	destroyed=$(python3 "$T" get "$TMPD/after.prom" devmemtop_page_pools_destroyed_total kind=pages)
	[ "$destroyed" -ge 1 ] || fail "pool $pool left the output but destroyed_total is $destroyed"
	log "pool $pool left the output; page pools destroyed: $destroyed"
fi

export_stop
sleep 0.5
leftover=$(echo "$ids" | bpf_ids_alive)
[ -z "$leftover" ] || fail "BPF objects left after the exporter stopped: $leftover"
log "its $(echo "$ids" | wc -l) BPF programs/links are gone after SIGTERM"
pass "scrapes valid, pool $pool with $holds holds and $batches refills, concurrent scrapes ok"
