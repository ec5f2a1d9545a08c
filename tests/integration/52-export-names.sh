#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every metric a dashboard panel or a rule uses is in a real scrape of the
# exporter on veth traffic. The only ones allowed to be missing are
#  - those listed below as needing devmem hardware (a live dmabuf binding),
#    which the exporter's own catalogue (--list-metrics) must agree on, and
#  - those whose collector metric the same scrape reports unavailable, with
#    a reason (devmemtop_metric_available{metric=...} 0), e.g. fexit programs
#    on a kernel without ftrace.
# Also: every family in the scrape is in the catalogue.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_root
need_dmt
need_cmd curl
need_cmd python3
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml not installed (scripts/install-deps.sh)"

# Need a devmem-capable NIC with a bound dmabuf: no such hardware here.
HW_ONLY="
devmemtop_binding_info
devmemtop_binding_capacity_niovs
devmemtop_binding_free_niovs
devmemtop_binding_pool_held_niovs
devmemtop_binding_socket_held_niovs
devmemtop_binding_occupancy_ratio
devmemtop_binding_alloc_calls_total
devmemtop_binding_alloc_niovs_total
devmemtop_binding_alloc_failures_total
devmemtop_binding_released_niovs_total
devmemtop_binding_unbind_outstanding_niovs
devmemtop_binding_leaked_niovs
devmemtop_binding_alloc_latency_seconds
devmemtop_binding_release_latency_seconds
devmemtop_binding_alloc_latency_nanoseconds
"

"$DMT" export --list-metrics >"$TMPD/catalogue" || fail "export --list-metrics"
[ "$(wc -l <"$TMPD/catalogue")" -gt 40 ] || fail "catalogue too short: $(cat "$TMPD/catalogue")"
for m in $HW_ONLY; do
	grep -q "^$m [a-z]* binding gate=[a-z_-]* absent-when: needs a devmem dmabuf binding" \
		"$TMPD/catalogue" || fail "$m is listed here as hardware-only but the catalogue says: $(grep "^$m " "$TMPD/catalogue")"
done

testbed_up
# --bpf-stats: the BPF run time/count series the health panels use
# -m full: every per-page figure (the default devmem mode locates a pool of
# pages in its sampling windows: 88-devmem-mode)
export_start -i 500ms -m full --bpf-stats
# the scrape checked is the first with the veth's pool and its traffic in it
# (a fixed 3 s in, with both cores busy, had no pool yet); the stream lasts
# until then
testbed_traffic 60
scrape_until_pool "$TMPD/scrape.prom" "$IF_RX"
testbed_stop

python3 "$EXPORT_TOOLS" used "$TOP/dashboards/devmemtop.json" "$TOP/dashboards/devmemtop-rules.yml" \
	>"$TMPD/used" || fail "extracting metric names from the dashboard and rules"
[ "$(wc -l <"$TMPD/used")" -gt 20 ] || fail "too few metric names extracted: $(cat "$TMPD/used")"

family_of() {	# sample name -> catalogue family
	local n=$1 base
	grep -q "^$n " "$TMPD/catalogue" && { echo "$n"; return; }
	for sfx in _bucket _sum _count; do
		base=${n%"$sfx"}
		[ "$base" != "$n" ] && grep -q "^$base histogram " "$TMPD/catalogue" &&
			{ echo "$base"; return; }
	done
}

present=0 hw=0 gated=0
while read -r name; do
	fam=$(family_of "$name")
	[ -n "$fam" ] || fail "$name is used by a panel or rule but the exporter cannot emit it"
	if grep -q "^$name[{ ]" "$TMPD/scrape.prom"; then
		present=$((present + 1))
		continue
	fi
	# a histogram's bare name is its native series (protobuf scrapes): there when its classic one is
	if [ "$name" = "$fam" ] && grep -q "^$fam histogram " "$TMPD/catalogue" &&
	   grep -q "^${fam}_count[{ ]" "$TMPD/scrape.prom"; then
		present=$((present + 1))
		continue
	fi
	if echo "$HW_ONLY" | grep -qx "$fam"; then
		hw=$((hw + 1))
		log "absent (needs devmem hardware): $name"
		continue
	fi
	gate=$(grep "^$fam " "$TMPD/catalogue" | sed -n 's/.* gate=\([a-z_]*\).*/\1/p')
	if [ -n "$gate" ] &&
	   line=$(grep "^devmemtop_metric_available{metric=\"$gate\",reason=\"[^\"]\+.*} 0$" "$TMPD/scrape.prom"); then
		gated=$((gated + 1))
		log "absent (collector says unavailable): $name: $line"
		continue
	fi
	fail "$name is used by a panel or rule but missing from a real scrape"
done <"$TMPD/used"

python3 "$EXPORT_TOOLS" families "$TMPD/scrape.prom" >"$TMPD/families" || fail "parse scrape"
while read -r f; do
	grep -q "^$f " "$TMPD/catalogue" || fail "scrape has $f, which --list-metrics does not list"
done <"$TMPD/families"

export_stop
pass "$present used metrics in the scrape, $hw need devmem hardware, $gated unavailable on this kernel; $(wc -l <"$TMPD/families") families all catalogued"
