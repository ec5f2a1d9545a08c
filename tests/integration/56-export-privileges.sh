#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The fewest privileges that work, as the sample unit
# dashboards/devmemtop-exporter.service grants them:
#  - as uid 65534 with only the unit's capabilities (CAP_BPF, CAP_PERFMON)
#    the exporter attaches what root attaches on this kernel and serves the
#    veth pool's metrics; with one of the two missing it refuses in one line;
#  - every system call the exporter makes (strace, a whole run with scrapes)
#    is in the unit's SystemCallFilter allow-list;
#  - systemd-analyze verify accepts the unit and rates its exposure.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_root
need_dmt
need_cmd setpriv
need_cmd curl
need_cmd python3
need_cmd strace
need_cmd systemd-analyze
UNIT=$TOP/dashboards/devmemtop-exporter.service
T=$EXPORT_TOOLS

caps=$(sed -n 's/^AmbientCapabilities=//p' "$UNIT")
bound=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
[ "$caps" = "CAP_BPF CAP_PERFMON" ] || fail "unit's AmbientCapabilities is '$caps'; this test checks CAP_BPF CAP_PERFMON"
[ "$bound" = "$caps" ] || fail "unit's bounding set '$bound' differs from its ambient set '$caps'"
setcaps() {	# "CAP_BPF CAP_PERFMON" -> "-all,+bpf,+perfmon"
	local out=-all c
	for c in $1; do c=${c#CAP_}; out+=",+${c,,}"; done
	echo "$out"
}
# the binary must be reachable by uid 65534
cp "$DMT" "$TMPD/devmemtop" && chmod 755 "$TMPD" "$TMPD/devmemtop"
run_as_nobody() {	# CAPS ARGS...
	local c
	c=$(setcaps "$1")
	shift
	timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="$c" \
		--ambient-caps="$c" --bounding-set="$c" "$TMPD/devmemtop" "$@"
}

# one capability short: a one-line refusal
for c in CAP_BPF CAP_PERFMON; do
	run_as_nobody "$c" export --listen 127.0.0.1:0 >/dev/null 2>"$TMPD/err"
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <"$TMPD/err")" = 1 ] ||
		fail "with only $c: rc $rc, $(cat "$TMPD/err")"
	log "only $c: $(cat "$TMPD/err")"
done

testbed_up
# the stream lasts until both exports are done (testbed_stop), not 8 s: with
# both cores busy the root one took long enough that the stream had ended
# before the other's 2 s, which then saw no pool ("no holds")
testbed_traffic 120
testbed_flowing
timeout 30 "$DMT" export --once -i 2s >"$TMPD/root.prom" 2>"$TMPD/root.err" ||
	fail "root export --once: $(cat "$TMPD/root.err")"
run_as_nobody "$caps" export --once -i 2s >"$TMPD/nobody.prom" 2>"$TMPD/nobody.err" ||
	fail "export as uid 65534 with $caps: $(cat "$TMPD/nobody.err")"
testbed_stop
if command -v promtool >/dev/null; then promtool_lint "$TMPD/nobody.prom"; fi
grep -q "^devmemtop_page_pool_holds_total{.*ifname=\"$IF_RX\"" "$TMPD/nobody.prom" ||
	fail "as uid 65534 with $caps: no holds for $IF_RX"
batches=$(grep "^devmemtop_page_pool_refill_batch_items_count{.*ifname=\"$IF_RX\"" "$TMPD/nobody.prom" |
	awk '{s += $2} END {print s + 0}')
[ "$batches" -gt 0 ] || fail "as uid 65534 with $caps: no refill batches for $IF_RX"
for f in root nobody; do
	grep '^devmemtop_metric_available{' "$TMPD/$f.prom" | sed 's/reason="[^"]*"//' >"$TMPD/$f.avail"
	grep '^devmemtop_bpf_program_attached{' "$TMPD/$f.prom" >"$TMPD/$f.progs"
done
cmp -s "$TMPD/root.avail" "$TMPD/nobody.avail" ||
	fail "metrics available as root and as uid 65534 with $caps differ: $(diff "$TMPD/root.avail" "$TMPD/nobody.avail")"
cmp -s "$TMPD/root.progs" "$TMPD/nobody.progs" ||
	fail "programs attached as root and as uid 65534 differ: $(diff "$TMPD/root.progs" "$TMPD/nobody.progs")"
log "uid 65534 with $caps: same $(grep -c ' 1$' "$TMPD/nobody.avail") available metrics and $(grep -c ' 1$' "$TMPD/nobody.progs") attached programs as root, $batches refill batches on $IF_RX"

# every syscall of a serving run is in the unit's allow-list
strace -f -qq -o "$TMPD/strace" "$DMT" export --listen 127.0.0.1:0 -i 300ms \
	>/dev/null 2>"$TMPD/export.err" &
st_pid=$!
_TB_PIDS+=($st_pid)
for i in $(seq 1 100); do
	port=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$TMPD/export.err")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || fail "exporter under strace did not start: $(cat "$TMPD/export.err")"
for i in 1 2 3; do
	curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" >/dev/null || fail "scrape under strace"
done
curl -sf --max-time 5 "http://127.0.0.1:$port/healthz" >/dev/null || fail "healthz under strace"
sleep 1
exp_pid=$(pgrep -P $st_pid -x devmemtop)
[ -n "$exp_pid" ] || fail "no exporter under strace"
kill -TERM "$exp_pid"
wait $st_pid
expand() {	# syscall group -> names, recursively
	local x
	systemd-analyze syscall-filter "$1" | sed 's/^ *//' | grep -v '^#' | grep . | tail -n +2 |
	while read -r x; do
		case $x in @*) expand "$x" ;; *) echo "$x" ;; esac
	done
}
filter=$(sed -n 's/^SystemCallFilter=//p' "$UNIT")
[ "$(echo "$filter" | wc -l)" = 1 ] || fail "this test reads one SystemCallFilter= line: $filter"
for x in $filter; do
	case $x in @*) expand "$x" ;; *) echo "$x" ;; esac
done | sort -u >"$TMPD/allowed"
sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$TMPD/strace" | sort -u >"$TMPD/used"
[ "$(wc -l <"$TMPD/used")" -gt 20 ] || fail "strace saw too few syscalls: $(cat "$TMPD/used")"
missing=$(comm -23 "$TMPD/used" "$TMPD/allowed")
[ -z "$missing" ] || fail "syscalls the unit's SystemCallFilter would refuse: $missing"
log "$(wc -l <"$TMPD/used") distinct syscalls of a serving run, all in the unit's filter"

sed "s|^ExecStart=[^ ]*|ExecStart=$DMT|" "$UNIT" >"$TMPD/devmemtop-exporter.service"
out=$(systemd-analyze verify "$TMPD/devmemtop-exporter.service" 2>&1) ||
	fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify warns: $out"
exposure=$(systemd-analyze security --offline=true "$TMPD/devmemtop-exporter.service" 2>&1 |
	sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$exposure" ] || fail "systemd-analyze security gave no exposure level"
python3 -c "import sys; sys.exit(0 if float('$exposure') <= 2.0 else 1)" ||
	fail "unit exposure $exposure > 2.0"
log "systemd-analyze: unit verifies, exposure $exposure"
pass "CAP_BPF + CAP_PERFMON as uid 65534 suffice on this kernel; unit filter covers every syscall"
