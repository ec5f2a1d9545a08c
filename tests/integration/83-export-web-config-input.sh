#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Hostile and careless web configs at the command level (issue 26 items 6,
# 7, 9): each is refused with exit 1 and one line on stderr within a few
# seconds (no crash, no hang), with what is wrong in words and no raw
# control character; an expired server certificate starts with a warning.
# Covers: a key twice (crashed), a second YAML document (ignored: its basic
# auth was not applied), 100k nested brackets (36 s), a FIFO as cert_file
# (hung forever), a bcrypt hash of cost 31 (a day), a directory as
# cert_file or as the config ("Input/output error"), an escape sequence in
# a key. The exporter serves a recording (--from): no BPF, no root needed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_dmt
need_cmd openssl
need_cmd python3
REC=$TOP/tests/fixtures/lab-patched-bulk.dmtrec
[ -s "$REC" ] || fail "fixture $REC missing"
P=$TMPD/pki
make_pki "$P"
HASH=$(bcrypt_hash 'pw')

refused() {	# NAME WANT-IN-MESSAGE CONFIG-PATH
	local rc=0 t0=$SECONDS
	timeout 20 "$DMT" export --listen 127.0.0.1:0 --from "$REC" --web.config.file "$3" \
		>/dev/null 2>"$TMPD/err" || rc=$?
	[ "$rc" = 1 ] || fail "$1: exit $rc, want 1 (124: hung; 134/139: crashed): $(cat -v "$TMPD/err")"
	[ "$(wc -l <"$TMPD/err")" = 1 ] || fail "$1: want one line, got: $(cat -v "$TMPD/err")"
	grep -qF -- "$2" "$TMPD/err" || fail "$1: '$(cat -v "$TMPD/err")' does not say '$2'"
	LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMPD/err" &&
		fail "$1: raw control character on stderr: $(cat -v "$TMPD/err")"
	[ $((SECONDS - t0)) -le 10 ] || fail "$1: took $((SECONDS - t0)) s"
	log "$1: $(cut -c1-150 "$TMPD/err")"
}

printf "basic_auth_users:\n  a: '%s'\nbasic_auth_users:\n  b: '%s'\n" "$HASH" "$HASH" >"$P/twice.yml"
refused "key twice" "twice.yml:3: duplicate key 'basic_auth_users' (first at line 1)" "$P/twice.yml"
printf -- "---\ntls_server_config:\n---\nbasic_auth_users:\n  a: '%s'\n" "$HASH" >"$P/docs.yml"
refused "second document" "docs.yml:3: a second YAML document" "$P/docs.yml"
python3 -c 'import sys; sys.stdout.write("[" * 100000 + "]" * 100000 + "\n")' >"$P/deep.yml"
refused "100k nested brackets" "deep.yml:1: nested deeper than 8 levels" "$P/deep.yml"
mkfifo "$P/fifo"
printf 'tls_server_config:\n  cert_file: fifo\n  key_file: srv.key\n' >"$P/fifo.yml"
refused "FIFO as cert_file" "fifo: not a regular file" "$P/fifo.yml"
printf "basic_auth_users:\n  a: '\$2b\$31\$%s'\n" "${HASH:7}" >"$P/cost.yml"
refused "bcrypt cost 31" "bcrypt cost 31 is above 14" "$P/cost.yml"
printf 'tls_server_config:\n  cert_file: /\n  key_file: srv.key\n' >"$P/dir.yml"
refused "directory as cert_file" "cannot read /: is a directory, not a file" "$P/dir.yml"
refused "directory as config" "cannot read web config $P: is a directory, not a file" "$P"
printf '"\\e]0;owned\\a\\e[2J": 1\n' >"$P/esc.yml"
refused "escape sequence in a key" '\x1b]0;owned\x07\x1b[2J: unknown field' "$P/esc.yml"

# an expired server certificate (made with openssl ca and dates in 2000)
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
	-keyout "$P/old.key" -out "$P/old.csr" 2>>"$P/openssl.log" || fail "openssl req"
: >"$P/index.txt"
echo 01 >"$P/serial"
cat >"$P/ca.cnf" <<EOF
[ ca ]
default_ca = d
[ d ]
database = $P/index.txt
new_certs_dir = $P
serial = $P/serial
default_md = sha256
policy = p
[ p ]
commonName = supplied
EOF
openssl ca -batch -config "$P/ca.cnf" -cert "$P/ca.crt" -keyfile "$P/ca.key" -in "$P/old.csr" \
	-out "$P/old.crt" -startdate 20000101000000Z -enddate 20010101000000Z 2>>"$P/openssl.log" ||
	fail "openssl ca: $(tail -2 "$P/openssl.log")"
printf 'tls_server_config:\n  cert_file: old.crt\n  key_file: old.key\n' >"$P/old.yml"
export_start --from "$REC" --web.config.file "$P/old.yml"
grep -q 'old.yml:2: tls_server_config.cert_file: warning: the server certificate expired on 2001-01-01 00:00:00 UTC' \
	"$TMPD/export.err" || fail "no warning for the expired certificate: $(cat "$TMPD/export.err")"
log "expired server certificate: $(grep warning "$TMPD/export.err" | cut -c1-150)"
export_stop
echo PASS
