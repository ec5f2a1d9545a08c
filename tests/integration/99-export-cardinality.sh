#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cardinality limits (docs/exporter.md, "Cardinality"): a host of 1,000 page
# pools (pool_host.py: 600 on eth0-7, 400 on container veths, every 50th a
# devmem pool) served by `export --from`; series per scrape without limits,
# with --iface-exclude, --iface-include, --max-pools and both; the pools
# left out are counted in devmemtop_page_pools_not_exported{reason}, the
# pool totals still count all 1,000, the cap keeps devmem pools first and
# then the lowest pool ids, every output passes promtool; bad values are
# one line and exit 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"
need_dmt
need_cmd promtool
python3 "$TOP/tests/integration/pool_host.py" "$TMPD/h.dmtrec" 1000 || fail "pool_host.py"

# run NAME ARGS...: one scrape of the host's final state into $TMPD/NAME.prom
run() {
	local name=$1
	shift
	"$DMT" export --from "$TMPD/h.dmtrec" --once "$@" >"$TMPD/$name.prom" 2>"$TMPD/$name.err" ||
		fail "export --once $*: $(cat "$TMPD/$name.err")"
	promtool_lint "$TMPD/$name.prom"
}
series() { grep -vc '^#' "$TMPD/$1.prom"; }
pools() { grep -c '^devmemtop_page_pool_info{' "$TMPD/$1.prom"; }
dropped() { sed -n "s/^devmemtop_page_pools_not_exported{reason=\"$2\"} //p" "$TMPD/$1.prom"; }
check() {	# NAME POOLS FILTERED CAPPED
	[ "$(pools "$1")" = "$2" ] || fail "$1: $(pools "$1") pools exported, want $2"
	[ "$(dropped "$1" iface_filter)" = "$3" ] || fail "$1: iface_filter $(dropped "$1" iface_filter), want $3"
	[ "$(dropped "$1" max_pools)" = "$4" ] || fail "$1: max_pools $(dropped "$1" max_pools), want $4"
	grep -q '^devmemtop_page_pools{kind="pages",state="alive"} 980$' "$TMPD/$1.prom" &&
	grep -q '^devmemtop_page_pools{kind="devmem",state="alive"} 20$' "$TMPD/$1.prom" ||
		fail "$1: devmemtop_page_pools does not count all 1,000 pools"
}

run all
check all 1000 0 0
base=$(( $(series all) - 1000 * ($(series all) / 1000) ))
per=$(( ($(series all) - base) / 1000 ))
log "1,000 pools, no limits: $(series all) series per scrape ($per per pool + $base for the host)"

run noveth --iface-exclude 'veth*'
check noveth 600 400 0
grep -q 'ifname="veth' "$TMPD/noveth.prom" && fail "noveth: a veth pool is still exported"
log "--iface-exclude 'veth*': $(series noveth) series (600 pools)"

run eth01 --iface-include eth0 --iface-include 'eth1'
check eth01 150 850 0
[ -z "$(grep '^devmemtop_page_pool_info{' "$TMPD/eth01.prom" | grep -v 'ifname="eth[01]"')" ] ||
	fail "eth01: a pool of another interface is exported"
log "--iface-include eth0 --iface-include eth1: $(series eth01) series (150 pools)"

run cap --max-pools 100
check cap 100 0 900
ids=$(sed -n 's/^devmemtop_page_pool_info{pool_id="\([0-9]*\)".*kind="\([a-z]*\)".*/\2 \1/p' "$TMPD/cap.prom" | sort | tr '\n' ' ')
# the 20 devmem pools, then pages pools by id: 1-49, 51-81 (50 is devmem)
want=$( { for i in $(seq 50 50 1000); do echo "devmem $i"; done
	  for i in $(seq 1 81); do [ "$i" = 50 ] || echo "pages $i"; done; } | sort | tr '\n' ' ')
[ "$ids" = "$want" ] || fail "--max-pools 100 kept other pools than the devmem ones and the lowest ids"
log "--max-pools 100: $(series cap) series; the 20 devmem pools + pages pools 1-81"

run both --iface-exclude 'veth*' --max-pools 256
check both 256 400 344
log "--iface-exclude 'veth*' --max-pools 256: $(series both) series"

# the same limits on a scrape a Prometheus would take (protobuf needs a server): the text
# is rendered by the same code, so compare a served scrape with --once
export_start --from "$TMPD/h.dmtrec" --max-pools 256 --iface-exclude 'veth*'
for i in $(seq 1 50); do grep -q 'replay done' "$TMPD/export.err" && break; sleep 0.1; done
scrape "$TMPD/served.prom"
[ "$(grep -c '^devmemtop_page_pool_info{' "$TMPD/served.prom")" = 256 ] || fail "served scrape: not 256 pools"
export_stop

# bad values: one line, exit 2
for a in "--max-pools 0" "--max-pools x" "--iface-include="; do
	rc=0
	"$DMT" export --from "$TMPD/h.dmtrec" --once $a >/dev/null 2>"$TMPD/bad.err" || rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l <"$TMPD/bad.err")" = 1 ] ||
		fail "'$a': exit $rc, '$(cat "$TMPD/bad.err")' (want one line, exit 2)"
done
log "bad --max-pools / empty glob: one line, exit 2"
pass "1,000 pools: $(series all) series unlimited; include/exclude and --max-pools cut them, dropped pools counted"
