#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fleet aggregation through Prometheus' own remote write: 24 exporters
# (`export --from` replaying variants of the lab recording, each on its own
# 127.0.0.x address; cut at different snapshots, at speed 1 or 2, some
# with a binding over 90 % occupancy, some with a leak at free), scraped by
# a Prometheus in agent mode that remote-writes (native histograms sent)
# into a second Prometheus with the remote-write receiver; native
# histograms on both ends, the project's rules on the receiver.
# fleet_check.py then compares fleet-wide PromQL on the receiver with each
# exporter's own final scrape. A replay that is done serves a fixed state,
# and the test waits until the receiver holds a sample of each instance
# taken after its replay ended, so both sides read the same samples (no
# two independently timed scrapes are compared).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"
need_dmt
need_cmd curl
need_prometheus_native
REC=$TOP/tests/fixtures/lab-patched-bulk.dmtrec
N=24
T0=$(date +%s.%N)

# The receiver first, then the exporters, then the agent.
PORT_R=$(newport)
mkdir -p "$TMPD/recv" "$TMPD/agent" "$TMPD/own"
cp "$TOP/dashboards/devmemtop-rules.yml" "$TMPD/recv/"
cat >"$TMPD/recv/prometheus.yml" <<EOC
global:
  evaluation_interval: 1s
rule_files:
  - $TMPD/recv/devmemtop-rules.yml
EOC
"$PROMETHEUS" --config.file="$TMPD/recv/prometheus.yml" --storage.tsdb.path="$TMPD/recv/tsdb" \
	--web.listen-address=127.0.0.1:$PORT_R --web.enable-remote-write-receiver \
	--enable-feature=native-histograms >"$TMPD/recv/log" 2>&1 &
_TB_PIDS+=($!)
PURL_recv=http://127.0.0.1:$PORT_R

# Exporter i: 127.0.0.(10+i), the first 26+i snapshots (the devmem pool and
# the binding still alive), speed 1 or 2; i%4 == 1: occupancy 0.95 in the
# last snapshot, i%4 == 2: the binding freed there with 10+i niovs out.
# Their addresses are chosen first and the agent scrapes them from before
# they start, so its samples span the replays' refills (rate() windows of
# the dashboard see them; the recorded refills come 5 s in at speed 1).
# (One python3 for all the addresses and one for all the recordings: 48
# interpreter starts took 450 s of an 8-minute run at load average 17.)
ADDRS=() KEEP=()
mapfile -t ADDRS < <(python3 -c 'import socket, sys
for i in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.%d" % (10 + i), 0))
    print("%s:%d" % s.getsockname())' $N)
[ ${#ADDRS[@]} = $N ] || fail "want $N exporter addresses, got: ${ADDRS[*]}"
for i in $(seq 0 $((N - 1))); do
	KEEP+=($((26 + i)))
done

PORT_A=$(newport)
{
	cat <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: devmemtop
    static_configs:
      - targets:
EOC
	for a in "${ADDRS[@]}"; do echo "          - '$a'"; done
	cat <<EOC
remote_write:
  - url: $PURL_recv/api/v1/write
    send_native_histograms: true
    queue_config:
      batch_send_deadline: 1s
EOC
} >"$TMPD/agent/prometheus.yml"
for i in $(seq 1 100); do
	curl -sf --max-time 1 "$PURL_recv/-/ready" >/dev/null 2>&1 && break
	sleep 0.2
done
curl -sf --max-time 1 "$PURL_recv/-/ready" >/dev/null || fail "receiver not ready: $(tail -3 "$TMPD/recv/log")"
"$PROMETHEUS" --config.file="$TMPD/agent/prometheus.yml" --storage.agent.path="$TMPD/agent/wal" \
	--web.listen-address=127.0.0.1:$PORT_A --enable-feature=agent,native-histograms \
	>"$TMPD/agent/log" 2>&1 &
_TB_PIDS+=($!)
for i in $(seq 1 100); do
	curl -sf --max-time 1 "http://127.0.0.1:$PORT_A/-/ready" >/dev/null 2>&1 && break
	sleep 0.2
done
curl -sf --max-time 1 "http://127.0.0.1:$PORT_A/-/ready" >/dev/null || fail "agent not ready: $(tail -3 "$TMPD/agent/log")"

PIDS=()
for i in $(seq 0 $((N - 1))); do
	extra=
	case $((i % 4)) in
	1) extra="--occupancy 0.95" ;;
	2) extra="--leak $((10 + i))" ;;
	esac
	echo "$TMPD/r$i.dmtrec ${KEEP[$i]} $extra"
done | python3 "$TOP/tests/integration/rec_vary.py" "$REC" --batch ||
	fail "rec_vary.py for the exporters"
for i in $(seq 0 $((N - 1))); do
	"$DMT" export --listen "${ADDRS[$i]}" --from "$TMPD/r$i.dmtrec" --speed $((1 + i % 2)) \
		>/dev/null 2>"$TMPD/e$i.err" &
	PIDS+=($!)
	_TB_PIDS+=($!)
done
for i in $(seq 0 $((N - 1))); do
	wait_serving "$TMPD/e$i.err" "${PIDS[$i]}" >/dev/null
done
log "$N exporters serving replays on ${ADDRS[0]} .. ${ADDRS[$((N - 1))]}, the agent scraping them"

# Every replay done; then its own final scrape (text, classic buckets).
for i in $(seq 0 $((N - 1))); do
	for j in $(seq 1 200); do
		grep -q 'replay done' "$TMPD/e$i.err" && break
		kill -0 "${PIDS[$i]}" 2>/dev/null || fail "exporter $i died: $(cat "$TMPD/e$i.err")"
		sleep 0.1
	done
	grep -q 'replay done' "$TMPD/e$i.err" || fail "exporter $i: replay not done in 20 s"
done
DONE=$(date +%s.%N)
for i in $(seq 0 $((N - 1))); do
	EXP_URL=http://${ADDRS[$i]}
	scrape "$TMPD/own/${ADDRS[$i]}.prom"
	grep -q "^devmemtop_collections_total ${KEEP[$i]}\$" "$TMPD/own/${ADDRS[$i]}.prom" ||
		fail "${ADDRS[$i]}: want ${KEEP[$i]} snapshots replayed"
done

# Wait until the receiver has, for every instance, a sample scraped after
# every replay ended (the final state), then evaluate there at that time.
AT=
for j in $(seq 1 120); do
	n=$(curl -sS --max-time 5 -G "$PURL_recv/api/v1/query" \
		--data-urlencode "query=count(timestamp(devmemtop_collections_total) > $DONE)" |
		python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
	[ "$n" = "$N" ] && { AT=$(date +%s.%N); break; }
	sleep 0.5
done
[ -n "$AT" ] || fail "the receiver did not get every instance's final state in 60 s ($n of $N): $(grep -m3 'level=(warn|error)' -E "$TMPD/agent/log")"
log "receiver holds all $N final states $(echo "$AT - $DONE" | bc) s after the last replay ended"
# one rule evaluation on the receiver after that (evaluation_interval 1s)
sleep 2
AT=$(date +%s.%N)
prom_rules_healthy recv

python3 "$TOP/tests/integration/fleet_check.py" "$PURL_recv" "$AT" "$TMPD/own" >"$TMPD/check.out" 2>&1 ||
	fail "fleet PromQL differs from the exporters: $(cat "$TMPD/check.out")"
while read -r l; do log "$l"; done <"$TMPD/check.out"

# The dashboard on the receiver: every panel's PromQL (the fleet overview
# row included) evaluates, each panel on a histogram has a finite result.
"$DMT" export --list-metrics >"$TMPD/catalogue" || fail "export --list-metrics"
python3 "$EXPORT_TOOLS" panels "$TOP/dashboards/devmemtop.json" "$TMPD/catalogue" "$AT" 5m \
	recv="$PURL_recv" >"$TMPD/panels" 2>&1 || fail "dashboard on the receiver: $(tail -3 "$TMPD/panels")"
grep -E "'(Hosts reporting|Hosts with a binding over 90 %|Fleet refill batch p50 / p99|Refill batch p50 by host|Worst binding occupancy by host)'" \
	"$TMPD/panels" | while read -r l; do log "$l"; done
PROM_AT=$AT
hosts=$(prom_one recv 'count(devmemtop_build_info{instance=~".*"})')
[ "$hosts" = "$N" ] || fail "the Hosts reporting panel's query says $hosts, want $N"
grep -E 'level=(warn|error)' "$TMPD/agent/log" "$TMPD/recv/log" | grep -v 'connection refused' |
	head -3 | while read -r l; do log "prometheus: $l"; done
pass "$N exporters through agent -> remote write -> receiver: fleet PromQL equals each exporter's own samples ($(echo "$(date +%s.%N) - $T0" | bc | cut -c1-5) s)"
