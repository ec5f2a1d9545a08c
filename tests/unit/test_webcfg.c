// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the web config loader (src/exporter/webcfg.c): what parses, and
 * the one-line errors (file:line: field: what) for what does not. TLS
 * files with real keys are covered by 57-export-web-config.sh.
 */
#include <crypt.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>
#include <cmocka.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include "exporter/webcfg.h"

static char dir[] = "/tmp/dmt-webcfg.XXXXXX";
static char hash[128];

static int setup(void **state)
{
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data cd = {};
	const char *h;

	if (!mkdtemp(dir))
		return -1;
	/* a real bcrypt hash, made here: cost 4 keeps the test fast */
	if (!crypt_gensalt_rn("$2b$", 4, NULL, 0, salt, sizeof(salt)))
		return -1;
	h = crypt_rn("pw", salt, &cd, sizeof(cd));
	if (!h || h[0] == '*')
		return -1;
	snprintf(hash, sizeof(hash), "%s", h);
	return 0;
}

static int teardown(void **state)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

/* Load TEXT from a file; returns the error, the message in msg. */
static int load(const char *text, struct webcfg **w, char *msg, size_t len)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "%s/web.yml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	msg[0] = '\0';
	return webcfg__load(path, w, msg, len);
}

static void expect_error(const char *text, const char *want)
{
	struct webcfg *w = (void *)1;
	char msg[512];

	assert_int_equal(load(text, &w, msg, sizeof(msg)), -EINVAL);
	assert_null(w);
	if (!strstr(msg, want))
		fail_msg("'%s' does not contain '%s'", msg, want);
	assert_null(strchr(msg, '\n'));
}

static void test_empty(void **state)
{
	struct webcfg *w;
	char msg[256];

	assert_int_equal(load("", &w, msg, sizeof(msg)), 0);
	assert_false(webcfg__tls(w));
	assert_false(webcfg__auth(w));
	webcfg__free(w);
	assert_int_equal(load("tls_server_config:\nbasic_auth_users:\n", &w, msg, sizeof(msg)), 0);
	assert_false(webcfg__tls(w));
	assert_false(webcfg__auth(w));
	webcfg__free(w);
}

static void test_users(void **state)
{
	struct webcfg *w;
	char text[512], msg[256];

	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n  bob: %s\n", hash, hash);
	assert_int_equal(load(text, &w, msg, sizeof(msg)), 0);
	assert_true(webcfg__auth(w));
	assert_false(webcfg__tls(w));
	webcfg__free(w);
	webcfg__free(NULL);
}

static void test_errors(void **state)
{
	char text[512];

	expect_error("basic_auth_users:\n  alice: secret\n",
		     "web.yml:2: basic_auth_users.alice: want a bcrypt hash");
	expect_error("basic_auth_users:\n  alice: '$2b$04$short'\n",
		     "web.yml:2: basic_auth_users.alice: not a valid bcrypt hash");
	snprintf(text, sizeof(text), "basic_auth_users:\n  a: '%s'\n  a: '%s'\n", hash, hash);
	expect_error(text, "web.yml:3: duplicate key 'a' (first at line 2)");
	expect_error("basic_auth_users: [a, b]\n", "web.yml:1: basic_auth_users: want a mapping");
	expect_error("tls_config:\n  cert_file: x\n", "web.yml:1: tls_config: unknown field");
	expect_error("http_server_config:\n  http2: false\n",
		     "http_server_config: not supported by devmemtop");
	expect_error("tls_server_config:\n  cert_file: nope.crt\n",
		     "web.yml:2: tls_server_config.cert_file: cannot read");
	expect_error("tls_server_config:\n  client_auth_type: Sometimes\n",
		     "web.yml:2: tls_server_config.client_auth_type: unknown 'Sometimes'");
	expect_error("tls_server_config:\n  min_version: TLS10\n",
		     "tls_server_config.min_version: want TLS12 or TLS13");
	expect_error("tls_server_config:\n  client_auth_type: RequireAnyClientCert\n",
		     "tls_server_config.cert_file: missing");
	expect_error("tls_server_config:\n  curve_preferences: [X25519]\n",
		     "tls_server_config.curve_preferences: not supported by devmemtop");
	expect_error("a: [\n", "not valid YAML");
	expect_error("just a string\n", "web.yml:1: top level: want a mapping");
}

static void test_missing_file(void **state)
{
	struct webcfg *w;
	char msg[256];

	assert_int_equal(webcfg__load("/nonexistent/web.yml", &w, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "cannot read web config /nonexistent/web.yml"));
}

/* A message names no raw control character: all escaped. */
static void assert_clean(const char *msg)
{
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fail_msg("raw control character 0x%02x in '%s'", *p, msg);
}

/* Issue 26 item 6: a key twice crashed (null to strcmp); a 2nd document was ignored. */
static void test_repeated_and_second_document(void **state)
{
	char text[512];

	snprintf(text, sizeof(text), "basic_auth_users:\n  a: '%s'\nbasic_auth_users:\n  b: '%s'\n",
		 hash, hash);
	expect_error(text, "web.yml:3: duplicate key 'basic_auth_users' (first at line 1)");
	expect_error("tls_server_config:\n  min_version: TLS12\n  min_version: TLS13\n",
		     "web.yml:3: duplicate key 'min_version' (first at line 2)");
	expect_error("tls_server_config:\ntls_server_config:\n",
		     "web.yml:2: duplicate key 'tls_server_config' (first at line 1)");
	snprintf(text, sizeof(text), "---\ntls_server_config:\n---\nbasic_auth_users:\n  a: '%s'\n",
		 hash);
	expect_error(text, "web.yml:3: a second YAML document");
	expect_error("{}\n---\n", "web.yml:2: a second YAML document");
}

/* Issue 26 item 7: none of these may hang the start (each took from a minute to forever). */
static void test_no_hang(void **state)
{
	char text[512], path[128];
	size_t n = 100000;
	char *deep = malloc(2 * n + 2);
	time_t t0 = time(NULL);

	assert_non_null(deep);
	alarm(20);	/* a hang fails the test instead of the build */
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\n';
	deep[2 * n + 1] = '\0';
	expect_error(deep, "web.yml:1: nested deeper than 8 levels");
	free(deep);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_error("tls_server_config:\n  cert_file: fifo\n  key_file: fifo\n",
		     "tls_server_config.cert_file: cannot read");
	expect_error("tls_server_config:\n  cert_file: fifo\n  key_file: fifo\n",
		     "fifo: not a regular file");
	unlink(path);
	/* cost 31: about a day per check */
	snprintf(text, sizeof(text), "basic_auth_users:\n  a: '$2b$31$%s'\n", hash + 7);
	expect_error(text, "web.yml:2: basic_auth_users.a: bcrypt cost 31 is above 14");
	snprintf(text, sizeof(text), "basic_auth_users:\n  a: '$2b$15$%s'\n", hash + 7);
	expect_error(text, "bcrypt cost 15 is above 14");
	alarm(0);
	assert_true(time(NULL) - t0 < 10);
}

/* Issue 26 item 9: the messages. */
static void test_messages(void **state)
{
	struct webcfg *w = (void *)1;
	char msg[512];

	expect_error("\"\\e[2Jkey\\x07\": 1\n", "web.yml:1: \\x1b[2Jkey\\x07: unknown field");
	assert_int_equal(load("\"a\\tb\\u009b\": 1\n", &w, msg, sizeof(msg)), -EINVAL);
	assert_clean(msg);
	expect_error("tls_server_config:\n  cert_file: /\n  key_file: /\n",
		     "tls_server_config.cert_file: cannot read /: is a directory, not a file");
	assert_int_equal(webcfg__load(dir, &w, msg, sizeof(msg)), -EISDIR);
	assert_null(w);
	if (!strstr(msg, "is a directory, not a file"))
		fail_msg("'%s'", msg);
}

/* Write a PEM datum to dir/name. */
static void write_pem(const char *name, const gnutls_datum_t *d)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(d->data, 1, d->size, f), d->size);
	fclose(f);
}

/* A self-signed certificate valid from..until, as dir/name.crt and name.key. */
static void make_cert(const char *name, time_t from, time_t until)
{
	gnutls_x509_privkey_t key;
	gnutls_x509_crt_t crt;
	gnutls_datum_t d;
	char file[64];
	unsigned char serial = 1;

	assert_int_equal(gnutls_x509_privkey_init(&key), 0);
	assert_int_equal(gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
			GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0), 0);
	assert_int_equal(gnutls_x509_crt_init(&crt), 0);
	assert_int_equal(gnutls_x509_crt_set_version(crt, 3), 0);
	assert_int_equal(gnutls_x509_crt_set_serial(crt, &serial, 1), 0);
	assert_int_equal(gnutls_x509_crt_set_dn(crt, "CN=devmemtop-test", NULL), 0);
	assert_int_equal(gnutls_x509_crt_set_issuer_dn(crt, "CN=devmemtop-test", NULL), 0);
	assert_int_equal(gnutls_x509_crt_set_activation_time(crt, from), 0);
	assert_int_equal(gnutls_x509_crt_set_expiration_time(crt, until), 0);
	assert_int_equal(gnutls_x509_crt_set_key(crt, key), 0);
	assert_int_equal(gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0), 0);
	assert_int_equal(gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &d), 0);
	snprintf(file, sizeof(file), "%s.crt", name);
	write_pem(file, &d);
	gnutls_free(d.data);
	assert_int_equal(gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &d), 0);
	snprintf(file, sizeof(file), "%s.key", name);
	write_pem(file, &d);
	gnutls_free(d.data);
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
}

/* Issue 26 item 9: an expired server certificate loads, with a warning for the start. */
static void test_expired_cert(void **state)
{
	struct webcfg *w;
	char msg[512];
	time_t now = time(NULL);

	make_cert("old", 946684800, 978307200);		/* 2000-01-01 .. 2001-01-01 */
	make_cert("new", now - 3600, now + 86400);
	assert_int_equal(load("tls_server_config:\n  cert_file: old.crt\n  key_file: old.key\n",
			      &w, msg, sizeof(msg)), 0);
	assert_true(webcfg__tls(w));
	assert_non_null(webcfg__warning(w));
	if (!strstr(webcfg__warning(w), "web.yml:2: tls_server_config.cert_file: warning: the server certificate expired on 2001-01-01 00:00:00 UTC"))
		fail_msg("'%s'", webcfg__warning(w));
	webcfg__free(w);
	assert_int_equal(load("tls_server_config:\n  cert_file: new.crt\n  key_file: new.key\n",
			      &w, msg, sizeof(msg)), 0);
	assert_null(webcfg__warning(w));
	webcfg__free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_users),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_repeated_and_second_document),
		cmocka_unit_test(test_no_hang),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_expired_cert),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
