#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# --web.config.file (exporter-toolkit format), with certificates and bcrypt
# hashes made at test time:
#  - TLS + basic auth: plain HTTP gets no metrics; no credentials, a wrong
#    password or an unknown user get 401 with a Basic challenge, on every
#    path; the right ones get metrics that pass promtool;
#  - mTLS (RequireAndVerifyClientCert): no client certificate, or one from
#    another CA, is refused in the handshake; the CA's client gets 200;
#    the other client_auth_types do what the toolkit's names say;
#  - malformed configs: exit 1, one line naming the file, line and field,
#    before any BPF program is loaded;
#  - a non-loopback --listen (0.0.0.0, [::]) without TLS and client auth
#    prints exactly one warning line; loopback and TLS+auth print none.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_root
need_dmt
need_cmd curl
need_cmd promtool
need_cmd python3

P=$TMPD/pki
make_pki "$P"
HASH=$(bcrypt_hash 's3cret pass')
cat >"$P/tls-auth.yml" <<EOF
# relative file names: to this file's directory
tls_server_config:
  cert_file: srv.crt
  key_file: srv.key
basic_auth_users:
  prometheus: '$HASH'
EOF
cat >"$P/mtls.yml" <<EOF
tls_server_config:
  cert_file: $P/srv.crt
  key_file: $P/srv.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  min_version: TLS12
EOF

# code URL [CURL ARGS...]: the HTTP status (000: no HTTP answer at all)
code() {
	local url=$1
	shift
	curl -sS --max-time 10 -o "$TMPD/body" -D "$TMPD/headers" -w '%{http_code}' \
		--cacert "$P/ca.crt" "$@" "$url" 2>"$TMPD/curl.err"
}

export_start -i 500ms --web.config.file "$P/tls-auth.yml"
case $EXP_URL in https://*) ;; *) fail "not served over TLS: $(cat "$TMPD/export.err")" ;; esac
c=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$EXP_PORT/metrics" 2>/dev/null)
[ "$c" != 200 ] || fail "plain HTTP to the TLS port got 200"
for path in /metrics /healthz /; do
	c=$(code "$EXP_URL$path")
	[ "$c" = 401 ] || fail "$path without credentials: HTTP $c, want 401"
	grep -qi '^WWW-Authenticate: Basic' "$TMPD/headers" ||
		fail "$path 401 without a Basic challenge: $(cat "$TMPD/headers")"
done
c=$(code "$EXP_URL/metrics" -u 'prometheus:s3cret pasS')
[ "$c" = 401 ] || fail "wrong password: HTTP $c, want 401"
c=$(code "$EXP_URL/metrics" -u 'prometheuz:s3cret pass')
[ "$c" = 401 ] || fail "unknown user: HTTP $c, want 401"
c=$(code "$EXP_URL/metrics" -u 'prometheus:')
[ "$c" = 401 ] || fail "empty password: HTTP $c, want 401"
for i in 1 2 3; do	# the second and third hit the verified-password cache
	c=$(code "$EXP_URL/metrics" -u 'prometheus:s3cret pass')
	[ "$c" = 200 ] || fail "right password (try $i): HTTP $c, want 200"
done
promtool_lint "$TMPD/body"
c=$(code "$EXP_URL/metrics" -u 'prometheus:s3cret pass' --tls-max 1.1)
[ "$c" = 000 ] || fail "TLS 1.1 accepted (HTTP $c); the default minimum is TLS 1.2"
log "TLS + basic auth: 401 without, with a wrong password or user; 200 and valid metrics with the right one; TLS 1.1 refused"
export_stop

export_start -i 500ms --web.config.file "$P/mtls.yml"
c=$(code "$EXP_URL/metrics")
[ "$c" = 000 ] || fail "mTLS without a client certificate: HTTP $c, want a refused handshake"
log "no client certificate: $(head -1 "$TMPD/curl.err")"
c=$(code "$EXP_URL/metrics" --cert "$P/rogue.crt" --key "$P/rogue.key")
[ "$c" = 000 ] || fail "mTLS with another CA's client certificate: HTTP $c, want refused"
c=$(code "$EXP_URL/metrics" --cert "$P/cli.crt" --key "$P/cli.key")
[ "$c" = 200 ] || fail "mTLS with the CA's client certificate: HTTP $c ($(cat "$TMPD/curl.err"))"
promtool_lint "$TMPD/body"
kill -0 "$EXP_PID" || fail "exporter died after refused handshakes"
log "mTLS: no certificate and a foreign CA's certificate refused, the CA's client served"
export_stop

# every client_auth_type: HTTP status without a client certificate, with
# another CA's, with the CA's (000: refused in the handshake)
for spec in "RequestClientCert 200 200 200" "RequireAnyClientCert 000 200 200" \
	    "VerifyClientCertIfGiven 200 000 200" "RequireAndVerifyClientCert 000 000 200"; do
	set -- $spec
	{
		printf 'tls_server_config:\n  cert_file: srv.crt\n  key_file: srv.key\n'
		printf '  client_auth_type: %s\n' "$1"
		case $1 in *Verify*) printf '  client_ca_file: ca.crt\n' ;; esac
	} >"$P/mode.yml"
	export_start -i 500ms --web.config.file "$P/mode.yml"
	got="$(code "$EXP_URL/metrics") $(code "$EXP_URL/metrics" --cert "$P/rogue.crt" --key "$P/rogue.key") $(code "$EXP_URL/metrics" --cert "$P/cli.crt" --key "$P/cli.key")"
	[ "$got" = "$2 $3 $4" ] || fail "$1: none/foreign/CA's client certificate got $got, want $2 $3 $4"
	export_stop
	log "$1: no certificate $2, another CA's $3, the CA's $4"
done

# malformed configs: FILE-CONTENT | what the one line must say
bad() {	# NAME WANT CONTENT
	local f=$P/$1.yml out rc
	printf '%s\n' "$3" >"$f"
	out=$(timeout 10 "$DMT" export --listen 127.0.0.1:0 --web.config.file "$f" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 1 ] || fail "$1: exit $rc, want 1 ($out)"
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$1: not one line: $out"
	case $out in *"$f"*"$2"*) ;; *) fail "$1: '$out' does not name $f and '$2'" ;; esac
	log "$1: $out"
}
bad hash ':2: basic_auth_users.prometheus: want a bcrypt hash' \
	"basic_auth_users:
  prometheus: plain-text"
bad badhash 'basic_auth_users.p: not a valid bcrypt hash' \
	"basic_auth_users:
  p: '\$2y\$10\$tooshort'"
bad authtype ':4: tls_server_config.client_auth_type: unknown' \
	"tls_server_config:
  cert_file: srv.crt
  key_file: srv.key
  client_auth_type: VerifyEverything"
bad typo ':3: tls_server_config.keyfile: unknown field' \
	"tls_server_config:
  cert_file: srv.crt
  keyfile: srv.key"
bad nokey 'tls_server_config.key_file: missing' \
	"tls_server_config:
  cert_file: srv.crt"
bad nofile ':3: tls_server_config.key_file: cannot read' \
	"tls_server_config:
  cert_file: srv.crt
  key_file: nope.key"
bad notpem 'tls_server_config.cert_file/key_file: not a PEM certificate' \
	"tls_server_config:
  cert_file: ca.crt
  key_file: srv.key"
bad noca 'tls_server_config.client_ca_file: missing' \
	"tls_server_config:
  cert_file: srv.crt
  key_file: srv.key
  client_auth_type: RequireAndVerifyClientCert"
bad yaml ': not valid YAML: did not find' \
	"tls_server_config: [
basic_auth_users: {"
bad toplevel ':1: top level: want a mapping' "- a list"
bad unsupported 'tls_server_config.cipher_suites: not supported by devmemtop' \
	"tls_server_config:
  cipher_suites: [TLS_AES_128_GCM_SHA256]"
out=$("$DMT" export --web.config.file "$P/none.yml" 2>&1)
[ $? = 1 ] && case $out in *"cannot read web config $P/none.yml: No such file"*) true ;; *) false ;; esac ||
	fail "missing web config: $out"

# the non-loopback warning: one line, only where it belongs
warn_count() {	# LISTEN [ARGS...]: prints the number of warning lines
	local l=$1 pid
	shift
	rm -f "$TMPD/w.err"
	"$DMT" export --listen "$l" -i 500ms "$@" >/dev/null 2>"$TMPD/w.err" &
	pid=$!
	_TB_PIDS+=($pid)
	wait_serving "$TMPD/w.err" $pid >/dev/null
	kill -TERM $pid
	wait $pid || fail "exporter on $l: exit status"
	grep -c 'warning' "$TMPD/w.err"
}
n=$(warn_count 0.0.0.0:0)
[ "$n" = 1 ] || fail "0.0.0.0 without TLS/auth: $n warning lines: $(cat "$TMPD/w.err")"
grep -q 'warning: 0\.0\.0\.0:[0-9]* is not loopback.*without TLS or authentication' "$TMPD/w.err" ||
	fail "0.0.0.0 warning does not say what: $(cat "$TMPD/w.err")"
log "$(grep warning "$TMPD/w.err")"
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::", 0))' 2>/dev/null; then
	n=$(warn_count '[::]:0')
	[ "$n" = 1 ] || fail "[::] without TLS/auth: $n warning lines: $(cat "$TMPD/w.err")"
else
	log "no IPv6 on this host: [::] not checked"
fi
n=$(warn_count 127.0.0.1:0)
[ "$n" = 0 ] || fail "loopback warned: $(cat "$TMPD/w.err")"
n=$(warn_count 0.0.0.0:0 --web.config.file "$P/mtls.yml")
[ "$n" = 0 ] || fail "0.0.0.0 with TLS and client certificates warned: $(cat "$TMPD/w.err")"
n=$(warn_count 0.0.0.0:0 --web.config.file "$P/tls-auth.yml")
[ "$n" = 0 ] || fail "0.0.0.0 with TLS and basic auth warned: $(cat "$TMPD/w.err")"
printf 'tls_server_config:\n  cert_file: srv.crt\n  key_file: srv.key\n' >"$P/tls-only.yml"
n=$(warn_count 0.0.0.0:0 --web.config.file "$P/tls-only.yml")
[ "$n" = 1 ] || fail "0.0.0.0 with TLS and no client auth: $n warning lines: $(cat "$TMPD/w.err")"
log "no warning on loopback or with TLS + auth; one with TLS alone"
pass "web config: TLS, basic auth (401s), mTLS refusals, one-line config errors, non-loopback warning"
