#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A real Prometheus (Debian's) scrapes the exporter over TLS with its own
# CA, a client certificate (RequireAndVerifyClientCert) and basic auth,
# all made at test time. The target is up, the scrape carries the veth
# pool's refill batches, and the same Prometheus with a wrong password
# sees the target down with a 401.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_root
need_dmt
need_cmd curl
need_cmd python3
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
[ -x "$PROMETHEUS" ] || skip "$PROMETHEUS not installed (Debian package prometheus; scripts/install-deps.sh)"

P=$TMPD/pki
make_pki "$P"
HASH=$(bcrypt_hash 'scrape-pass')
cat >"$P/web.yml" <<WEB
tls_server_config:
  cert_file: srv.crt
  key_file: srv.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
basic_auth_users:
  prometheus: '$HASH'
WEB
printf 'scrape-pass' >"$P/pass"
printf 'wrong-pass' >"$P/wrong"
chmod 600 "$P/pass" "$P/wrong"

testbed_up
# -m full: the pool's refill batches exactly from its first refill (the
# default devmem mode samples a pool of pages in windows: README, modes)
export_start -i 500ms -m full --web.config.file "$P/web.yml"
case $EXP_URL in https://*) ;; *) fail "exporter not on TLS: $EXP_URL" ;; esac

PPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$TMPD/tsdb"
job() {	# NAME PASSWORD-FILE
	cat <<JOB
  - job_name: $1
    scheme: https
    tls_config:
      ca_file: $P/ca.crt
      cert_file: $P/cli.crt
      key_file: $P/cli.key
    basic_auth:
      username: prometheus
      password_file: $2
    static_configs:
      - targets: ['127.0.0.1:$EXP_PORT']
JOB
}
{
	printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n'
	job devmemtop "$P/pass"
	job wrongpass "$P/wrong"
} >"$TMPD/prometheus.yml"
"$PROMETHEUS" --config.file="$TMPD/prometheus.yml" --storage.tsdb.path="$TMPD/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" >"$TMPD/prometheus.log" 2>&1 &
prom_pid=$!
_TB_PIDS+=($prom_pid)
PURL=http://127.0.0.1:$PPORT
for i in $(seq 1 100); do
	curl -sf --max-time 1 "$PURL/-/ready" >/dev/null 2>&1 && break
	kill -0 $prom_pid 2>/dev/null || fail "prometheus exited: $(tail -5 "$TMPD/prometheus.log")"
	sleep 0.2
done
curl -sf --max-time 2 "$PURL/-/ready" >/dev/null || fail "prometheus not ready in 20 s"
log "prometheus pid $prom_pid scraping $EXP_URL with its CA, a client certificate and basic auth"
# until the pool's refill batches came over TLS and the wrong-password
# job has been tried (not a fixed 8 s); the stream lasts until the checks
# are done
testbed_traffic 120
prom_until "$PURL" "sum(devmemtop_page_pool_refill_batch_items_count{job=\"devmemtop\",ifname=\"$IF_RX\"})"
prom_until "$PURL" 'count(up{job="wrongpass"} == 0)'

query() {	# EXPR: "value labels" per sample
	curl -sS --max-time 5 -G "$PURL/api/v1/query" --data-urlencode "query=$1" >"$TMPD/q.json" ||
		fail "query failed: $1"
	python3 - "$TMPD/q.json" <<'PY' || fail "bad answer to: $1 ($(cat "$TMPD/q.json"))"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "success", r
for s in r["data"]["result"]:
    print(s["value"][1], json.dumps(s["metric"], sort_keys=True))
PY
}
targets() {
	curl -sS --max-time 5 "$PURL/api/v1/targets" | python3 -c '
import json, sys
for t in json.load(sys.stdin)["data"]["activeTargets"]:
    print(t["labels"]["job"], t["health"], t["scrapeUrl"], t.get("lastError", ""))'
}
up=$(query 'up{job="devmemtop"}')
[ "${up%% *}" = 1 ] || fail "TLS target not up: $up; $(targets)"
up=$(query 'up{job="wrongpass"}')
[ "${up%% *}" = 0 ] || fail "target with a wrong password is up: $up"
targets | grep -q '^wrongpass down https://.* 401' ||
	fail "wrong password: want the target down with a 401: $(targets)"
r=$(query "sum(devmemtop_page_pool_refill_batch_items_count{job=\"devmemtop\",ifname=\"$IF_RX\"})")
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)' "${r%% *}" 2>/dev/null ||
	fail "no refill batches for $IF_RX over TLS: '$r'"
log "over TLS: up=1, ${r%% *} refill batches on $IF_RX; wrong password: $(targets | grep ^wrongpass | cut -d' ' -f2,4-)"
testbed_stop
kill $prom_pid
wait $prom_pid 2>/dev/null
export_stop
pass "Prometheus scraped over TLS with its own CA, a client certificate and basic auth; a wrong password is a 401"
