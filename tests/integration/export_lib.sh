# SPDX-License-Identifier: GPL-2.0
# Helpers for the exporter tests (tests/integration/5x-*.sh); source after lib.sh.

EXP_PID=
EXP_PORT=
EXP_URL=
EXPORT_TOOLS=$TOP/tests/integration/export_tools.py

# export_start [ARGS...]: run `devmemtop export` on a free loopback port (or
# on EXP_LISTEN) and wait until it serves (it prints "serving
# http[s]://ADDR/metrics" then).
export_start() {
	local i
	# no stale address from an earlier exporter: the child truncates late
	rm -f "$TMPD/export.err"
	"$DMT" export --listen "${EXP_LISTEN:-127.0.0.1:0}" "$@" >"$TMPD/export.out" 2>"$TMPD/export.err" &
	EXP_PID=$!
	_TB_PIDS+=($EXP_PID)
	for i in $(seq 1 300); do
		EXP_PORT=$(sed -n 's|.*serving https\{0,1\}://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' \
			"$TMPD/export.err" 2>/dev/null)
		[ -n "$EXP_PORT" ] && break
		kill -0 "$EXP_PID" 2>/dev/null ||
			fail "exporter exited at start: $(cat "$TMPD/export.err")"
		sleep 0.1
	done
	[ -n "$EXP_PORT" ] || fail "exporter did not start serving in 30 s: $(cat "$TMPD/export.err")"
	EXP_URL=http://127.0.0.1:$EXP_PORT
	grep -q 'serving https://' "$TMPD/export.err" && EXP_URL=https://127.0.0.1:$EXP_PORT
	log "exporter pid $EXP_PID on $EXP_URL"
}

# export_stop: SIGTERM must end it cleanly (exit 0) within 10 s.
export_stop() {
	local i rc
	[ -n "$EXP_PID" ] || return 0
	kill -TERM "$EXP_PID" 2>/dev/null
	for i in $(seq 1 100); do
		kill -0 "$EXP_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$EXP_PID" 2>/dev/null && fail "exporter still running 10 s after SIGTERM"
	wait "$EXP_PID"
	rc=$?
	EXP_PID=
	[ "$rc" = 0 ] || fail "exporter exited with $rc after SIGTERM: $(cat "$TMPD/export.err")"
}

# scrape FILE: GET /metrics into FILE; fails on anything but 200.
scrape() {
	local code
	code=$(curl -sS --max-time 10 -o "$1" -w '%{http_code}' "$EXP_URL/metrics") ||
		fail "scrape failed (curl)"
	[ "$code" = 200 ] || fail "scrape returned HTTP $code"
}

# scrape_until_pool FILE IFNAME: scrape into FILE until it has the pool of
# IFNAME with holds > 0 (its traffic seen by a snapshot), 60 s at most: the
# wait is for that event, not a fixed time (with both cores busy the
# stream's first packets or the exporter's next snapshot can be seconds late).
scrape_until_pool() {
	local end=$((SECONDS + 60))
	while :; do
		scrape "$1"
		grep -q "^devmemtop_page_pool_holds_total{[^}]*ifname=\"$2\"[^}]*} [1-9]" "$1" &&
			return 0
		[ $SECONDS -lt $end ] ||
			fail "no scrape in 60 s has the pool of $2 with holds > 0: $(grep '^devmemtop_page_pool_holds_total' "$1")"
		sleep 0.2
	done
}

# promtool_lint FILE: the text format must pass promtool's parser and linter.
promtool_lint() {
	local out
	out=$(promtool check metrics <"$1" 2>&1) ||
		fail "promtool check metrics on $1: $out"
	[ -z "$out" ] || fail "promtool check metrics complained on $1: $out"
}

# make_pki DIR: a throw-away CA (ca.crt), a server certificate for
# 127.0.0.1/localhost signed by it (srv.crt/srv.key), a client certificate
# signed by it (cli.crt/cli.key) and one signed by another CA (rogue.*).
# Generated at test time with openssl; no private key is ever committed.
make_pki() {
	local d=$1 ca
	need_cmd openssl
	mkdir -p "$d"
	for ca in ca rogueca; do
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
			-subj "/CN=devmemtop test $ca" -keyout "$d/$ca.key" -out "$d/$ca.crt" \
			2>>"$d/openssl.log" || fail "openssl: CA $ca: $(tail -2 "$d/openssl.log")"
	done
	_sign "$d" srv ca "/CN=127.0.0.1" \
		"subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
	_sign "$d" cli ca "/CN=prometheus" "extendedKeyUsage=clientAuth"
	_sign "$d" rogue rogueca "/CN=prometheus" "extendedKeyUsage=clientAuth"
}

_sign() {	# DIR NAME CA SUBJECT EXTENSIONS
	printf '%s\n' "$5" >"$1/$2.ext"
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$4" \
		-keyout "$1/$2.key" -out "$1/$2.csr" 2>>"$1/openssl.log" &&
	openssl x509 -req -in "$1/$2.csr" -CA "$1/$3.crt" -CAkey "$1/$3.key" -CAcreateserial \
		-days 2 -extfile "$1/$2.ext" -out "$1/$2.crt" 2>>"$1/openssl.log" ||
		fail "openssl: $2: $(tail -2 "$1/openssl.log")"
}

# bcrypt_hash PASSWORD: a $2b$ hash made at test time (python3's crypt, on
# the same libxcrypt the exporter uses; htpasswd -B if that is gone).
bcrypt_hash() {
	local h
	h=$(python3 -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))' "$1" 2>/dev/null)
	[ -z "$h" ] && command -v htpasswd >/dev/null &&
		h=$(htpasswd -nbBC 10 x "$1" | sed -n 's/^x://p')
	case $h in '$2'[aby]'$'*) echo "$h" ;;
	*) skip "no bcrypt hasher (python3 crypt module or apache2-utils htpasswd)" ;;
	esac
}

# wait_serving ERRFILE PID: the port the exporter announced on ERRFILE.
wait_serving() {
	local i p
	for i in $(seq 1 300); do
		p=$(sed -n 's|.*serving https\{0,1\}://.*:\([0-9]*\)/metrics.*|\1|p' "$1" 2>/dev/null)
		[ -n "$p" ] && { echo "$p"; return 0; }
		kill -0 "$2" 2>/dev/null || fail "exporter exited at start: $(cat "$1")"
		sleep 0.1
	done
	fail "exporter did not start serving in 30 s: $(cat "$1")"
}

# --- Debian's Prometheus against the exporter (60-*, 75-*) ---
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}

# need_prometheus_native: skip (with the reason) without a Prometheus that
# has the native-histograms feature flag.
need_prometheus_native() {
	[ -x "$PROMETHEUS" ] || skip "$PROMETHEUS not installed (Debian package prometheus; scripts/install-deps.sh)"
	"$PROMETHEUS" --help 2>&1 | grep -q 'native-histograms' ||
		skip "this Prometheus has no native-histograms feature flag ($("$PROMETHEUS" --version 2>&1 | head -1))"
}

newport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# prom_start NAME [FLAGS...]: a Prometheus scraping the exporter on $EXP_PORT
# every $PROM_SCRAPE (1s) with the project's rules loaded; sets PURL_<NAME>.
prom_start() {
	local name=$1 port i pid
	shift
	port=$(newport)
	mkdir -p "$TMPD/$name"
	cp "$TOP/dashboards/devmemtop-rules.yml" "$TMPD/$name/"
	cat >"$TMPD/$name/prometheus.yml" <<EOC
global:
  scrape_interval: ${PROM_SCRAPE:-1s}
  scrape_timeout: ${PROM_SCRAPE:-1s}
  evaluation_interval: 1s
rule_files:
  - $TMPD/$name/devmemtop-rules.yml
scrape_configs:
  - job_name: devmemtop
    static_configs:
      - targets: ['127.0.0.1:$EXP_PORT']
EOC
	"$PROMETHEUS" --config.file="$TMPD/$name/prometheus.yml" --storage.tsdb.path="$TMPD/$name/tsdb" \
		--web.listen-address="127.0.0.1:$port" "$@" >"$TMPD/$name/log" 2>&1 &
	pid=$!
	_TB_PIDS+=($pid)
	for i in $(seq 1 100); do
		curl -sf --max-time 1 "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1 && break
		kill -0 $pid 2>/dev/null || fail "prometheus $name exited: $(tail -5 "$TMPD/$name/log")"
		sleep 0.2
	done
	eval "PURL_$name=http://127.0.0.1:$port"
}

# prom_scraping SERVER: wait (60 s at most) until SERVER's scrape loop has
# tried its target once (up or down): it then scrapes every interval.
prom_scraping() {
	local url end=$((SECONDS + 60))
	eval "url=\$PURL_$1"
	until curl -sf --max-time 5 "$url/api/v1/targets" 2>/dev/null |
		python3 -c 'import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"]
sys.exit(0 if t and all(x["health"] != "unknown" for x in t) else 1)'; do
		[ $SECONDS -lt $end ] || fail "prometheus $1 has not scraped in 60 s: $(tail -3 "$TMPD/$1/log")"
		sleep 0.2
	done
}

# prom_until URL EXPR: wait (60 s at most) until the instant query EXPR on
# the Prometheus at URL has a sample > 0: the event a test needs before its
# checks, instead of a fixed sleep.
prom_until() {
	python3 - "$1" "$2" <<'PY' || fail "prometheus at $1: no sample > 0 of $2 in 60 s"
import json, sys, time, urllib.parse, urllib.request
end = time.time() + 60
while time.time() < end:
    q = urllib.parse.urlencode({"query": sys.argv[2]})
    try:
        r = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/query?" + q, timeout=5))
        if any(float(s["value"][1]) > 0 for s in r["data"]["result"] if "value" in s):
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.25)
sys.exit(1)
PY
}

# promq SERVER EXPR: "value-or-H labels" per sample ("H" for a native
# histogram sample); evaluated at $PROM_AT (Unix seconds) when set.
promq() {
	local url
	eval "url=\$PURL_$1"
	curl -sS --max-time 5 -G "$url/api/v1/query" --data-urlencode "query=$2" \
		${PROM_AT:+--data-urlencode "time=$PROM_AT"} >"$TMPD/q.json" ||
		fail "query failed on $1: $2"
	python3 - "$TMPD/q.json" <<'PY' || fail "bad answer from $1 to: $2 ($(head -c 400 "$TMPD/q.json"))"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "success", r
for s in r["data"]["result"]:
    v = "H" if "histogram" in s else s["value"][1]
    print(v, json.dumps(s["metric"], sort_keys=True))
PY
}

# prom_one SERVER EXPR: the single value
prom_one() {
	local r
	r=$(promq "$1" "$2")
	[ "$(echo "$r" | grep -c .)" = 1 ] || fail "$1: want one sample of $2, got '$r'"
	echo "${r%% *}"
}

# prom_rule_one SERVER RULE: the one sample of recording rule RULE, once the
# server has evaluated it on the data it has (rules are evaluated on their
# own clock, apart from the scrapes: right after the data a query waited
# for, the rule may not have run on it yet); 20 s at most
prom_rule_one() {
	local r i

	for i in $(seq 40); do
		r=$(promq "$1" "$2")
		[ "$(echo "$r" | grep -c .)" = 1 ] && { echo "${r%% *}"; return 0; }
		sleep 0.5
	done
	fail "$1: want one sample of $2 within 20 s, got '$r'"
}

# prom_rules_healthy SERVER: every loaded recording rule evaluated without error
prom_rules_healthy() {
	local url
	eval "url=\$PURL_$1"
	python3 - "$url" <<'PY' || fail "$1: rule evaluation"
import json, sys, urllib.request
r = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/rules", timeout=5))
bad = [(x["name"], x.get("lastError")) for g in r["data"]["groups"] for x in g["rules"]
       if x.get("health") != "ok"]
assert not bad, "unhealthy rules: %s" % bad
PY
}

# within_one_bucket A B: two quantile estimates at most a factor of 2 apart
within_one_bucket() {
	python3 -c 'import math, sys
a, b = float(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if all(math.isfinite(x) and x > 0 for x in (a, b)) and abs(math.log2(a / b)) <= 1 else 1)' "$1" "$2"
}
