# SPDX-License-Identifier: GPL-2.0
# Helpers for the exporter tests (tests/integration/5x-*.sh); source after lib.sh.

EXP_PID=
EXP_PORT=
EXP_URL=
EXPORT_TOOLS=$TOP/tests/integration/export_tools.py

# export_start [ARGS...]: run `devmemtop export` on a free loopback port and
# wait until it serves (it prints "serving http[s]://ADDR/metrics" then).
export_start() {
	local i
	# no stale address from an earlier exporter: the child truncates late
	rm -f "$TMPD/export.err"
	"$DMT" export --listen 127.0.0.1:0 "$@" >"$TMPD/export.out" 2>"$TMPD/export.err" &
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
