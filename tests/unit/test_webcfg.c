// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the web config loader (src/webcfg.c): what parses, and
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
#include <cmocka.h>
#include "webcfg.h"

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
	expect_error(text, "web.yml:3: basic_auth_users.a: listed twice");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_users),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_missing_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
