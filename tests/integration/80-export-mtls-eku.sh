#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mTLS and extended key usage (issue 26 item 5): with client_auth_type
# RequireAndVerifyClientCert or VerifyClientCertIfGiven, a client
# certificate signed by the CA must be fit for client authentication, as
# Go's exporter-toolkit requires: one that states an extended key usage
# without clientAuth (an exporter's own serverAuth certificate, a code
# signing one) is refused in the handshake; clientAuth, clientAuth next to
# serverAuth, anyExtendedKeyUsage and no extension at all get in.
# Certificates made at test time with openssl; the exporter serves a
# recording (--from), so no BPF and no root is needed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_dmt
need_cmd curl
need_cmd openssl
REC=$TOP/tests/fixtures/lab-patched-bulk.dmtrec
[ -s "$REC" ] || fail "fixture $REC missing"

P=$TMPD/pki
make_pki "$P"
_sign "$P" srvonly ca "/CN=devmem-host-2" "extendedKeyUsage=serverAuth"
_sign "$P" codesign ca "/CN=prometheus" "extendedKeyUsage=codeSigning"
_sign "$P" both ca "/CN=prometheus" "extendedKeyUsage=serverAuth,clientAuth"
_sign "$P" anyeku ca "/CN=prometheus" "extendedKeyUsage=anyExtendedKeyUsage"
_sign "$P" noeku ca "/CN=prometheus" "basicConstraints=CA:FALSE"
openssl x509 -in "$P/noeku.crt" -noout -text | grep -q 'Extended Key Usage' &&
	fail "noeku.crt has an extended key usage"

code() {	# CERT-NAME or none: the HTTP status (000: refused in the handshake)
	local args=()
	[ "$1" = none ] || args=(--cert "$P/$1.crt" --key "$P/$1.key")
	curl -sS --max-time 10 -o /dev/null -w '%{http_code}' --cacert "$P/ca.crt" \
		"${args[@]}" "$EXP_URL/metrics" 2>"$TMPD/curl.err"
}

for auth in RequireAndVerifyClientCert VerifyClientCertIfGiven; do
	printf 'tls_server_config:\n  cert_file: srv.crt\n  key_file: srv.key\n  client_auth_type: %s\n  client_ca_file: ca.crt\n' \
		"$auth" >"$P/web.yml"
	export_start --from "$REC" --web.config.file "$P/web.yml"
	for cert in srv srvonly codesign; do
		c=$(code $cert)
		[ "$c" = 000 ] || fail "$auth: the CA's $cert certificate (no clientAuth usage) got HTTP $c, want a refused handshake"
	done
	for cert in cli both anyeku noeku; do
		c=$(code $cert)
		[ "$c" = 200 ] || fail "$auth: $cert certificate got HTTP $c, want 200 ($(cat "$TMPD/curl.err"))"
	done
	c=$(code none)
	want=000
	[ $auth = VerifyClientCertIfGiven ] && want=200
	[ "$c" = $want ] || fail "$auth: no certificate got HTTP $c, want $want"
	log "$auth: serverAuth-only and codeSigning certificates refused; clientAuth, serverAuth+clientAuth, anyExtendedKeyUsage and no EKU served"
	export_stop
done
echo PASS
