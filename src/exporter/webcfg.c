// SPDX-License-Identifier: GPL-2.0
/*
 * --web.config.file: TLS and basic auth in the Prometheus exporter-toolkit
 * format (see webcfg.h for the API):
 *
 *   tls_server_config:
 *     cert_file: server.crt          # relative paths: to the config file
 *     key_file: server.key
 *     client_auth_type: RequireAndVerifyClientCert
 *     client_ca_file: ca.crt
 *     min_version: TLS12             # or TLS13
 *   basic_auth_users:
 *     prometheus: $2y$10$...         # bcrypt (htpasswd -nBC 10 USER)
 *
 * What the toolkit has and devmemtop does not (max_version, cipher_suites,
 * curve_preferences, client_allowed_sans, inline cert/key,
 * http_server_config) is refused by name rather than ignored.
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <yaml.h>
#include "textsafe.h"
#include "webcfg.h"
#include "yamlfile.h"

/* the file and the files it names: yamlfile.h's bounds (1 MiB, 8 levels, no key twice) */
/*
 * bcrypt cost above this is refused: each step doubles the time. Measured
 * on the test host: cost 10 (the toolkit's example) 61 ms of CPU, 14
 * 959 ms; a cost-31 hash takes about 1.5 days per request. A first scrape,
 * and every wrong password, pays one check; above 14 that nears
 * Prometheus' default 10 s scrape timeout on a busy host.
 */
#define WEBCFG_BCRYPT_COST_MAX	14
#define MAC_LEN			32	/* HMAC-SHA256 */
/*
 * Password checks (bcrypt) run on one verifier thread at low priority,
 * never on the threads that answer scrapes. Per client address: 3 wrong
 * passwords free, then a wait that doubles from 1 s to 60 s before the
 * next check; two checks pending at a time; 32 pending in all. Over any
 * of these: 429 at once, no bcrypt.
 */
#define AUTH_FREE_FAILS		3
#define AUTH_BACKOFF_MAX_NS	(60ULL * 1000000000ULL)
#define AUTH_QUEUE_MAX		32
#define AUTH_PENDING_MAX	2	/* per address: a Prometheus scrapes jobs side by side */
#define AUTH_WAITERS		4	/* requests that wait for one check of one pair */
#define AUTH_CLIENTS		256	/* addresses remembered (least recent go) */
#define AUTH_NICE		10
/*
 * Wrong user:password pairs remembered (most recent): one repeated is a
 * 401 at once, with no bcrypt and none of its address's budget, so a
 * misconfigured scraper does not lock out the right one beside it.
 */
#define AUTH_BAD_CACHE		64

enum client_auth {
	CA_NONE,		/* NoClientCert */
	CA_REQUEST,		/* RequestClientCert */
	CA_REQUIRE_ANY,		/* RequireAnyClientCert */
	CA_VERIFY_IF_GIVEN,	/* VerifyClientCertIfGiven */
	CA_REQUIRE_VERIFY,	/* RequireAndVerifyClientCert */
};

static const char *const client_auth_names[] = {
	[CA_NONE] = "NoClientCert",
	[CA_REQUEST] = "RequestClientCert",
	[CA_REQUIRE_ANY] = "RequireAnyClientCert",
	[CA_VERIFY_IF_GIVEN] = "VerifyClientCertIfGiven",
	[CA_REQUIRE_VERIFY] = "RequireAndVerifyClientCert",
};

struct web_user {
	char *name;
	char *hash;
	bool ok;			/* ok_mac is the last password that matched */
	unsigned char ok_mac[MAC_LEN];
};

/* One client address's password failures. */
struct auth_client {
	unsigned char addr[17];		/* family byte + address */
	bool used;
	unsigned int pending;		/* checks queued or running */
	unsigned int fails;
	uint64_t retry_ns, seen_ns;	/* no check before retry_ns */
};

/* One password check for the verifier thread. */
struct webcfg_job {
	struct webcfg_job *next;
	struct webcfg *w;
	/* the same user:password while it is checked: one bcrypt for all */
	struct MHD_Connection *conns[AUTH_WAITERS];
	unsigned int n_conns, refs;	/* refs: under w->lock */
	struct web_user *u;		/* NULL: unknown user (checked all the same) */
	struct auth_client *client;
	char *pass;
	unsigned char mac[MAC_LEN];	/* of the password */
	unsigned char pair_mac[MAC_LEN];	/* of user and password */
	int status;			/* 0 or 401; 503 at shutdown */
};

struct webcfg {
	bool tls;
	char *cert, *key, *ca;		/* PEM, NUL-terminated */
	enum client_auth client_auth;
	bool tls13;			/* min_version: TLS13 */
	struct web_user *users;
	size_t n_users;
	pthread_mutex_t lock;		/* users[].ok and ok_mac */
	unsigned char mac_key[32];
	char warning[384];		/* "" or one line for the start */
	/* the verifier: all under lock */
	pthread_t verifier;
	bool verifier_on, stopping;
	pthread_cond_t cond;
	struct webcfg_job *head, **tail, *running;
	unsigned int queued;
	void (*resume)(struct MHD_Connection *c);
	struct auth_client clients[AUTH_CLIENTS];
	unsigned char bad[AUTH_BAD_CACHE][MAC_LEN];	/* pair_mac of recent failures */
	unsigned int n_bad, next_bad;
};

struct loader {
	const char *path;
	char dir[PATH_MAX];
	yaml_document_t *doc;
	struct webcfg *w;
	char *msg;
	size_t msglen;
};

static int bad(struct loader *l, const yaml_node_t *n, const char *field, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (n)
		snprintf(l->msg, l->msglen, "web config %s:%lu: %s: %s", l->path,
			 (unsigned long)n->start_mark.line + 1, field, what);
	else
		snprintf(l->msg, l->msglen, "web config %s: %s: %s", l->path, field, what);
	return -EINVAL;
}

/* Why yamlfile__read() failed, for "cannot read FILE: why". */
static const char *read_error(int err)
{
	switch (err) {
	case -EFBIG:
		return "larger than 1 MiB";
	case -EISDIR:
		return "is a directory, not a file";
	case -ESPIPE:
		return "not a regular file (a FIFO, socket or device)";
	default:
		return strerror(-err);
	}
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null"));
}

/* A file named by field: read relative to the config file's directory. */
static int load_file(struct loader *l, const yaml_node_t *v, const char *field, char **out)
{
	const char *name = scalar(v);
	char path[PATH_MAX * 2];
	int err;

	if (!name || !*name)
		return bad(l, v, field, "want a file name");
	if (name[0] == '/' || !l->dir[0])
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%s%s", l->dir, name);	/* dir ends in / */
	free(*out);
	*out = NULL;
	err = yamlfile__read(path, true, out, NULL);
	if (err)
		return bad(l, v, field, "cannot read %s: %s", path, read_error(err));
	return 0;
}

/*
 * An expired (or not yet valid) server certificate still loads: clients
 * that verify it refuse it, so say so at the start, in w->warning.
 */
static void check_validity(struct loader *l, const yaml_node_t *cert_n)
{
	struct webcfg *w = l->w;
	gnutls_datum_t c = { (unsigned char *)w->cert, strlen(w->cert) };
	gnutls_x509_crt_t crt;
	time_t now = time(NULL), t;
	bool expired;
	char when[64];
	struct tm tm;

	if (gnutls_x509_crt_init(&crt) < 0)
		return;
	if (gnutls_x509_crt_import(crt, &c, GNUTLS_X509_FMT_PEM) < 0)
		goto out;
	t = gnutls_x509_crt_get_expiration_time(crt);
	expired = t != (time_t)-1 && t < now;
	if (!expired) {
		t = gnutls_x509_crt_get_activation_time(crt);
		if (t == (time_t)-1 || t <= now)
			goto out;
	}
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	snprintf(w->warning, sizeof(w->warning),
		 "web config %s:%lu: tls_server_config.cert_file: warning: the server certificate %s %s; clients that verify it will refuse to connect",
		 l->path, cert_n ? (unsigned long)cert_n->start_mark.line + 1 : 0UL,
		 expired ? "expired on" : "is not valid before", when);
out:
	gnutls_x509_crt_deinit(crt);
}

/* Let GnuTLS check the files now, not at the first connection. */
static int check_tls_files(struct loader *l, const yaml_node_t *m, const yaml_node_t *cert_n,
			   const yaml_node_t *ca_n)
{
	struct webcfg *w = l->w;
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t c = { (unsigned char *)w->cert, strlen(w->cert) };
	gnutls_datum_t k = { (unsigned char *)w->key, strlen(w->key) };
	int rc;

	if (gnutls_certificate_allocate_credentials(&cred) < 0)
		return bad(l, m, "tls_server_config", "out of memory");
	rc = gnutls_certificate_set_x509_key_mem(cred, &c, &k, GNUTLS_X509_FMT_PEM);
	if (rc < 0) {
		gnutls_certificate_free_credentials(cred);
		return bad(l, cert_n, "tls_server_config.cert_file/key_file",
			   "not a PEM certificate and its private key: %s", gnutls_strerror(rc));
	}
	if (w->ca) {
		gnutls_datum_t a = { (unsigned char *)w->ca, strlen(w->ca) };

		rc = gnutls_certificate_set_x509_trust_mem(cred, &a, GNUTLS_X509_FMT_PEM);
		if (rc <= 0) {
			gnutls_certificate_free_credentials(cred);
			return bad(l, ca_n, "tls_server_config.client_ca_file",
				   "no PEM CA certificate in it%s%s",
				   rc < 0 ? ": " : "", rc < 0 ? gnutls_strerror(rc) : "");
		}
	}
	gnutls_certificate_free_credentials(cred);
	check_validity(l, cert_n);
	return 0;
}

static int parse_tls(struct loader *l, yaml_node_t *m)
{
	static const char *const unsupported[] = {
		"max_version", "cipher_suites", "curve_preferences", "prefer_server_cipher_suites",
		"client_allowed_sans", "cert", "key", "client_ca",
	};
	yaml_node_t *cert_n = NULL, *ca_n = NULL, *auth_n = NULL;
	struct webcfg *w = l->w;
	yaml_node_pair_t *p;
	bool auth_set = false;
	int err;

	if (is_null(m))
		return 0;
	if (m->type != YAML_MAPPING_NODE)
		return bad(l, m, "tls_server_config", "want a mapping");
	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(l->doc, p->value);
		const char *key = scalar(k);
		char field[96];

		if (!key)
			return bad(l, k, "tls_server_config", "keys must be plain names");
		snprintf(field, sizeof(field), "tls_server_config.%s", key);
		if (!strcmp(key, "cert_file")) {
			cert_n = v;
			err = load_file(l, v, field, &w->cert);
		} else if (!strcmp(key, "key_file")) {
			err = load_file(l, v, field, &w->key);
		} else if (!strcmp(key, "client_ca_file")) {
			ca_n = v;
			err = load_file(l, v, field, &w->ca);
		} else if (!strcmp(key, "client_auth_type")) {
			const char *s = scalar(v);
			size_t i;

			auth_n = v;
			for (i = 0; s && i < sizeof(client_auth_names) / sizeof(*client_auth_names); i++)
				if (!strcmp(s, client_auth_names[i]))
					break;
			if (!s || i == sizeof(client_auth_names) / sizeof(*client_auth_names))
				return bad(l, v, field, "unknown '%s' (want NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert)",
					   s ? s : "");
			w->client_auth = i;
			auth_set = true;
			err = 0;
		} else if (!strcmp(key, "min_version")) {
			const char *s = scalar(v);

			if (s && !strcmp(s, "TLS13"))
				w->tls13 = true;
			else if (!s || strcmp(s, "TLS12"))
				return bad(l, v, field, "want TLS12 or TLS13, not '%s'", s ? s : "");
			err = 0;
		} else {
			for (size_t i = 0; i < sizeof(unsupported) / sizeof(*unsupported); i++)
				if (!strcmp(key, unsupported[i]))
					return bad(l, k, field, "not supported by devmemtop");
			return bad(l, k, field, "unknown field");
		}
		if (err)
			return err;
	}
	if (!w->cert && !w->key && !w->ca && !auth_set)
		return 0;	/* as the toolkit: an empty section means plain HTTP */
	if (!w->cert)
		return bad(l, m, "tls_server_config.cert_file", "missing");
	if (!w->key)
		return bad(l, m, "tls_server_config.key_file", "missing");
	if (w->ca && w->client_auth == CA_NONE)
		return bad(l, ca_n, "tls_server_config.client_ca_file",
			   "set, but client_auth_type is NoClientCert (no client certificate is asked for)");
	if (!w->ca && (w->client_auth == CA_VERIFY_IF_GIVEN || w->client_auth == CA_REQUIRE_VERIFY))
		return bad(l, auth_n, "tls_server_config.client_ca_file",
			   "missing: client_auth_type %s verifies client certificates against it",
			   client_auth_names[w->client_auth]);
	w->tls = true;
	return check_tls_files(l, m, cert_n, ca_n);
}

static int parse_users(struct loader *l, yaml_node_t *m)
{
	struct webcfg *w = l->w;
	struct crypt_data *cd;
	yaml_node_pair_t *p;
	size_t n;
	int err = 0;

	if (is_null(m))
		return 0;
	if (m->type != YAML_MAPPING_NODE)
		return bad(l, m, "basic_auth_users", "want a mapping of user names to bcrypt hashes");
	n = m->data.mapping.pairs.top - m->data.mapping.pairs.start;
	w->users = calloc(n ? n : 1, sizeof(*w->users));
	cd = calloc(1, sizeof(*cd));
	if (!w->users || !cd) {
		free(cd);
		return bad(l, m, "basic_auth_users", "out of memory");
	}
	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(l->doc, p->value);
		const char *user = scalar(k), *hash = scalar(v), *out;
		char field[160];

		if (!user || !*user || strchr(user, ':')) {
			err = bad(l, k, "basic_auth_users", "a user name must be a non-empty string without ':'");
			goto out;
		}
		snprintf(field, sizeof(field), "basic_auth_users.%.128s", user);
		if (!hash || (strncmp(hash, "$2a$", 4) && strncmp(hash, "$2b$", 4) &&
			      strncmp(hash, "$2y$", 4))) {
			err = bad(l, v, field, "want a bcrypt hash ($2a$, $2b$ or $2y$; htpasswd -nB)");
			goto out;
		}
		if (hash[4] >= '0' && hash[4] <= '9' && hash[5] >= '0' && hash[5] <= '9' &&
		    (hash[4] - '0') * 10 + (hash[5] - '0') > WEBCFG_BCRYPT_COST_MAX) {
			err = bad(l, v, field, "bcrypt cost %.2s is above %d, the most devmemtop accepts (each step doubles the time of every check)",
				  hash + 4, WEBCFG_BCRYPT_COST_MAX);
			goto out;
		}
		/* libxcrypt answers a malformed setting with a "*" string */
		out = crypt_rn("", hash, cd, sizeof(*cd));
		if (!out || out[0] == '*') {
			err = bad(l, v, field, "not a valid bcrypt hash");
			goto out;
		}
		w->users[w->n_users].name = strdup(user);
		w->users[w->n_users].hash = strdup(hash);
		if (!w->users[w->n_users].name || !w->users[w->n_users].hash) {
			w->n_users++;
			err = bad(l, v, field, "out of memory");
			goto out;
		}
		w->n_users++;
	}
out:
	free(cd);
	return err;
}

/* The top-level mapping: its two sections. */
static int parse_root(struct loader *l, yaml_node_t *root)
{
	yaml_node_pair_t *p;
	int err = 0;

	if (!root || is_null(root))
		return 0;
	if (root->type != YAML_MAPPING_NODE)
		return bad(l, root, "top level", "want a mapping (tls_server_config, basic_auth_users)");
	for (p = root->data.mapping.pairs.start; !err && p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(l->doc, p->value);
		const char *key = scalar(k);

		if (key && !strcmp(key, "tls_server_config"))
			err = parse_tls(l, v);
		else if (key && !strcmp(key, "basic_auth_users"))
			err = parse_users(l, v);
		else if (key && !strcmp(key, "http_server_config"))
			err = bad(l, k, key, "not supported by devmemtop");
		else
			err = bad(l, k, key ? key : "top level", "unknown field");
	}
	return err;
}

int webcfg__load(const char *path, struct webcfg **out, char *msg, size_t msglen)
{
	struct loader l = { .path = path, .msg = msg, .msglen = msglen };
	struct yamlfile_err ye;
	yaml_document_t doc;
	bool doc_ok = false;
	const char *slash;
	char *text = NULL;
	size_t len;
	int err;

	*out = NULL;
	l.w = calloc(1, sizeof(*l.w));
	if (!l.w) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&l.w->lock, NULL);
	pthread_cond_init(&l.w->cond, NULL);
	l.w->tail = &l.w->head;
	slash = strrchr(path, '/');
	if (slash)
		snprintf(l.dir, sizeof(l.dir), "%.*s", (int)(slash - path + 1), path);
	err = yamlfile__read(path, true, &text, &len);
	if (err) {
		snprintf(msg, msglen, "cannot read web config %s: %s", path, read_error(err));
		goto out;
	}
	err = yamlfile__parse(text, len, &doc, &ye);
	if (err == -ENOMEM) {
		snprintf(msg, msglen, "web config %s: out of memory", path);
		goto out;
	}
	if (err) {
		snprintf(msg, msglen, "web config %s:%zu: %s%s", path, ye.line,
			 ye.why == YF_SYNTAX ? "not valid YAML: " : "", ye.text);
		goto out;
	}
	doc_ok = true;
	l.doc = &doc;
	err = parse_root(&l, yaml_document_get_root_node(&doc));
	if (err)
		goto out;
	if (gnutls_rnd(GNUTLS_RND_KEY, l.w->mac_key, sizeof(l.w->mac_key)) < 0) {
		err = bad(&l, NULL, "basic_auth_users", "no random key");
		goto out;
	}
	textsafe_line(l.w->warning, sizeof(l.w->warning));
	*out = l.w;
	l.w = NULL;
out:
	if (err)
		textsafe_line(msg, msglen);
	if (doc_ok)
		yaml_document_delete(&doc);
	free(text);
	webcfg__free(l.w);
	return err;
}

const char *webcfg__warning(const struct webcfg *w)
{
	return w && w->warning[0] ? w->warning : NULL;
}

void webcfg__free(struct webcfg *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n_users; i++) {
		free(w->users[i].name);
		free(w->users[i].hash);
	}
	free(w->users);
	free(w->cert);
	if (w->key) {
		explicit_bzero(w->key, strlen(w->key));
		free(w->key);
	}
	free(w->ca);
	webcfg__stop(w);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	explicit_bzero(w, sizeof(*w));
	free(w);
}

bool webcfg__tls(const struct webcfg *w)
{
	return w && w->tls;
}

bool webcfg__auth(const struct webcfg *w)
{
	return w && (w->n_users || (w->tls && (w->client_auth == CA_REQUIRE_VERIFY)));
}

unsigned int webcfg__mhd_options(const struct webcfg *w, struct MHD_OptionItem *items, size_t n)
{
	size_t i = 0;

	if (n < 6)
		return 0;
	if (webcfg__tls(w)) {
		items[i++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, w->cert };
		items[i++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, w->key };
		if (w->ca)
			items[i++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0, w->ca };
		/* the toolkit's default minimum is TLS 1.2 */
		items[i++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
			w->tls13 ? "NORMAL:-VERS-ALL:+VERS-TLS1.3" :
				   "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2" };
	}
	items[i] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	return webcfg__tls(w) ? MHD_USE_TLS : 0;
}

static gnutls_session_t tls_session(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	return ci ? (gnutls_session_t)ci->tls_session : NULL;
}

/*
 * The peer's certificate chain verifies against client_ca_file and is fit
 * for client authentication: a certificate that states an extended key
 * usage must list clientAuth (or anyExtendedKeyUsage), as Go's
 * exporter-toolkit requires; one without the extension is not limited.
 * GnuTLS checks that purpose on every certificate of the chain. Without
 * it, any certificate the CA signed (the exporters' own server
 * certificates too) logged in as a scraper.
 */
static bool client_chain_ok(gnutls_session_t s)
{
	gnutls_typed_vdata_st purpose = {
		.type = GNUTLS_DT_KEY_PURPOSE_OID,
		.data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT,
	};
	unsigned int status = ~0U;

	return gnutls_certificate_verify_peers(s, &purpose, 1, &status) == 0 && status == 0;
}

/*
 * Run by GnuTLS in the handshake, once the client's certificate message is
 * in: non-zero ends the handshake. gnutls_session_set_verify_cert() would
 * also refuse a client that sends none, which VerifyClientCertIfGiven allows.
 */
static int verify_peer(gnutls_session_t s, bool required)
{
	unsigned int n = 0;

	if (!gnutls_certificate_get_peers(s, &n) || !n)
		return required ? -1 : 0;
	return client_chain_ok(s) ? 0 : -1;
}

static int verify_if_given(gnutls_session_t s)
{
	return verify_peer(s, false);
}

static int verify_required(gnutls_session_t s)
{
	return verify_peer(s, true);
}

void webcfg__conn_started(const struct webcfg *w, struct MHD_Connection *c)
{
	gnutls_session_t s;

	if (!webcfg__tls(w) || w->client_auth == CA_NONE)
		return;
	s = tls_session(c);
	if (!s)
		return;	/* webcfg__authorize() refuses its requests */
	gnutls_certificate_server_set_request(s, w->client_auth == CA_REQUIRE_ANY ||
					      w->client_auth == CA_REQUIRE_VERIFY ?
					      GNUTLS_CERT_REQUIRE : GNUTLS_CERT_REQUEST);
	/* a certificate that does not verify fails the handshake */
	if (w->client_auth == CA_VERIFY_IF_GIVEN)
		gnutls_session_set_verify_function(s, verify_if_given);
	else if (w->client_auth == CA_REQUIRE_VERIFY)
		gnutls_session_set_verify_function(s, verify_required);
}

static bool equal_ct(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return !d;
}

/*
 * The client certificate, checked again per request: the handshake should
 * have refused a missing or unverified one already; this holds even if
 * the per-connection policy could not be set.
 */
static bool client_cert_ok(const struct webcfg *w, struct MHD_Connection *c)
{
	gnutls_session_t s;
	unsigned int n = 0;
	bool verify;

	if (!webcfg__tls(w) || w->client_auth == CA_NONE || w->client_auth == CA_REQUEST)
		return true;
	s = tls_session(c);
	if (!s)
		return false;
	verify = w->client_auth == CA_VERIFY_IF_GIVEN || w->client_auth == CA_REQUIRE_VERIFY;
	if (!gnutls_certificate_get_peers(s, &n) || !n)
		return w->client_auth == CA_VERIFY_IF_GIVEN;
	if (!verify)
		return true;
	return client_chain_ok(s);
}

/* pass matches u's hash (u NULL: an unknown user, who costs a bcrypt too). */
static bool bcrypt_ok(const struct webcfg *w, const struct web_user *u, const char *pass)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	/* an unknown user costs a bcrypt too: no timing tells names apart */
	const char *hash = u ? u->hash : w->users[0].hash;
	const char *h = cd ? crypt_rn(pass, hash, cd, sizeof(*cd)) : NULL;
	bool ok = u && h && h[0] != '*' && strlen(h) == strlen(hash) &&
		  equal_ct(h, hash, strlen(hash));

	if (cd) {
		explicit_bzero(cd, sizeof(*cd));
		free(cd);
	}
	return ok;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A check's outcome for its user and its client address; under w->lock. */
static void job_account(struct webcfg *w, struct webcfg_job *j, bool ok)
{
	struct auth_client *cl = j->client;
	unsigned int over;

	if (ok) {
		memcpy(j->u->ok_mac, j->mac, sizeof(j->mac));
		j->u->ok = true;
	}
	cl->pending--;
	if (ok) {
		cl->fails = 0;
		cl->retry_ns = 0;
		return;
	}
	memcpy(w->bad[w->next_bad], j->pair_mac, MAC_LEN);
	w->next_bad = (w->next_bad + 1) % AUTH_BAD_CACHE;
	if (w->n_bad < AUTH_BAD_CACHE)
		w->n_bad++;
	cl->fails++;
	if (cl->fails <= AUTH_FREE_FAILS)
		return;
	over = cl->fails - AUTH_FREE_FAILS - 1;
	cl->retry_ns = mono_ns() + (over >= 6 ? AUTH_BACKOFF_MAX_NS : 1000000000ULL << over);
}

/*
 * Somebody still waits for j: a waiting client that closed its side (gave
 * up) or whose connection the request deadline shut down shows as
 * POLLRDHUP/POLLHUP on its socket. A check nobody waits for is not worth
 * a bcrypt: after a burst of guesses the queue empties at once instead of
 * checking passwords for clients long gone. (An HTTP client does not
 * half-close while it waits for its answer.)
 */
static bool job_wanted(const struct webcfg_job *j)
{
	for (unsigned int i = 0; i < j->n_conns; i++) {
		const union MHD_ConnectionInfo *ci;
		struct pollfd pfd = { .events = POLLRDHUP };

		ci = MHD_get_connection_info(j->conns[i], MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!ci)
			return true;	/* cannot tell: check it */
		pfd.fd = ci->connect_fd;
		if (poll(&pfd, 1, 0) == 0 || !(pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
			return true;
	}
	return false;
}

/*
 * Resume every request waiting for j; called and returns with w->lock
 * held. The handlers drop their references once resumed, so j is not
 * touched after the first resume: its connections are copied first.
 */
static void resume_all(struct webcfg *w, struct webcfg_job *j)
{
	struct MHD_Connection *conns[AUTH_WAITERS];
	unsigned int n = j->n_conns;

	memcpy(conns, j->conns, n * sizeof(*conns));
	pthread_mutex_unlock(&w->lock);
	for (unsigned int i = 0; i < n; i++)
		w->resume(conns[i]);
	pthread_mutex_lock(&w->lock);
}

/*
 * The verifier thread: one bcrypt at a time, at nice AUTH_NICE, so that
 * password guessing costs at most one core at low priority and the
 * threads that answer scrapes never wait for it.
 */
static void *verifier_main(void *arg)
{
	struct webcfg *w = arg;
	struct webcfg_job *j;
	bool ok;

	setpriority(PRIO_PROCESS, gettid(), AUTH_NICE);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->stopping)
			pthread_cond_wait(&w->cond, &w->lock);
		j = w->head;
		if (!j)
			break;	/* stopping, queue drained */
		w->head = j->next;
		if (!w->head)
			w->tail = &w->head;
		w->queued--;
		w->running = j;
		if (w->stopping || !job_wanted(j)) {
			j->client->pending--;
			j->status = w->stopping ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_UNAUTHORIZED;
		} else {
			pthread_mutex_unlock(&w->lock);
			ok = bcrypt_ok(w, j->u, j->pass);
			pthread_mutex_lock(&w->lock);
			job_account(w, j, ok);
			j->status = ok ? 0 : MHD_HTTP_UNAUTHORIZED;
		}
		w->running = NULL;
		resume_all(w, j);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int webcfg__start(struct webcfg *w, void (*resume)(struct MHD_Connection *c))
{
	int err;

	if (!w || !w->n_users || w->verifier_on)
		return 0;
	w->resume = resume;
	w->stopping = false;
	err = pthread_create(&w->verifier, NULL, verifier_main, w);
	if (err)
		return -err;
	w->verifier_on = true;
	return 0;
}

void webcfg__stop(struct webcfg *w)
{
	if (!w || !w->verifier_on)
		return;
	pthread_mutex_lock(&w->lock);
	/* from here on a password no cache vouches for gets 503 */
	__atomic_store_n(&w->stopping, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->verifier, NULL);
	__atomic_store_n(&w->verifier_on, false, __ATOMIC_RELAXED);
}

/* The failure record of c's address (a new or the least recent one); under w->lock. */
static struct auth_client *client_of(struct webcfg *w, struct MHD_Connection *c, uint64_t now)
{
	const union MHD_ConnectionInfo *ci;
	unsigned char key[17] = {};
	struct auth_client *cl, *lru = NULL;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr) {
		const struct sockaddr *sa = ci->client_addr;

		key[0] = sa->sa_family;
		if (sa->sa_family == AF_INET6)
			memcpy(key + 1, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		else if (sa->sa_family == AF_INET)
			memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	}
	for (size_t i = 0; i < AUTH_CLIENTS; i++) {
		cl = &w->clients[i];
		if (cl->used && !memcmp(cl->addr, key, sizeof(key))) {
			cl->seen_ns = now;
			return cl;
		}
		if (!cl->pending && (!lru || !cl->used || (lru->used && cl->seen_ns < lru->seen_ns)))
			lru = cl;
	}
	if (!lru)
		return NULL;	/* every record has a check pending: the queue is full anyway */
	memset(lru, 0, sizeof(*lru));
	memcpy(lru->addr, key, sizeof(key));
	lru->used = true;
	lru->seen_ns = now;
	return lru;
}

/*
 * A password no cache vouches for: queue it for the verifier, or refuse
 * it at once (429) when its address is waiting out its backoff or has a
 * check pending, or the queue is full. Takes pass.
 */
static int queue_check(struct webcfg *w, struct MHD_Connection *c, struct web_user *u,
		       char *pass, const unsigned char *mac, const unsigned char *pair_mac,
		       struct webcfg_job **job)
{
	uint64_t now = mono_ns();
	struct auth_client *cl;
	struct webcfg_job *j;
	int status = MHD_HTTP_TOO_MANY_REQUESTS;

	pthread_mutex_lock(&w->lock);
	if (w->stopping) {
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		goto out;
	}
	for (unsigned int i = 0; i < w->n_bad; i++) {
		if (!memcmp(w->bad[i], pair_mac, MAC_LEN)) {
			status = MHD_HTTP_UNAUTHORIZED;	/* known wrong */
			goto out;
		}
	}
	for (j = w->running ? w->running : w->head; j; j = j == w->running ? w->head : j->next) {
		if (!memcmp(j->pair_mac, pair_mac, MAC_LEN) && j->n_conns < AUTH_WAITERS) {
			j->conns[j->n_conns++] = c;	/* no second bcrypt for it */
			j->refs++;
			*job = j;
			status = WEBCFG_PENDING;
			goto out;
		}
	}
	cl = client_of(w, c, now);
	if (!cl || cl->pending >= AUTH_PENDING_MAX || now < cl->retry_ns || w->queued >= AUTH_QUEUE_MAX)
		goto out;
	j = calloc(1, sizeof(*j));
	if (!j) {
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		goto out;
	}
	j->w = w;
	j->conns[0] = c;
	j->n_conns = 1;
	j->refs = 1;
	j->u = u;
	j->client = cl;
	j->pass = pass;
	pass = NULL;
	memcpy(j->mac, mac, MAC_LEN);
	memcpy(j->pair_mac, pair_mac, MAC_LEN);
	cl->pending++;
	*w->tail = j;
	w->tail = &j->next;
	w->queued++;
	pthread_cond_signal(&w->cond);
	*job = j;
	status = WEBCFG_PENDING;
out:
	pthread_mutex_unlock(&w->lock);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		free(pass);
	}
	return status;
}

int webcfg__job_status(const struct webcfg_job *j)
{
	return j->status;
}

void webcfg__job_free(struct webcfg_job *j)
{
	unsigned int left;

	if (!j)
		return;
	pthread_mutex_lock(&j->w->lock);
	left = --j->refs;
	pthread_mutex_unlock(&j->w->lock);
	if (left)
		return;
	explicit_bzero(j->pass, strlen(j->pass));
	free(j->pass);
	free(j);
}

/* HMAC of "user\0password" under the per-process key; 0 or -1. */
static int pair_hmac(const struct webcfg *w, const char *user, const char *pass,
		     unsigned char *out)
{
	gnutls_hmac_hd_t h;

	if (gnutls_hmac_init(&h, GNUTLS_MAC_SHA256, w->mac_key, sizeof(w->mac_key)) < 0)
		return -1;
	if (gnutls_hmac(h, user, strlen(user) + 1) < 0 || gnutls_hmac(h, pass, strlen(pass)) < 0) {
		gnutls_hmac_deinit(h, NULL);
		return -1;
	}
	gnutls_hmac_deinit(h, out);
	return 0;
}

int webcfg__authorize(struct webcfg *w, struct MHD_Connection *c, struct webcfg_job **job)
{
	unsigned char mac[MAC_LEN];
	struct web_user *u = NULL;
	char *user, *pass = NULL;
	int status = MHD_HTTP_UNAUTHORIZED;
	bool ok = false;

	*job = NULL;
	if (!w)
		return 0;
	if (!client_cert_ok(w, c))
		return MHD_HTTP_FORBIDDEN;
	if (!w->n_users)
		return 0;
	user = MHD_basic_auth_get_username_password(c, &pass);
	if (!user || !pass)
		goto out;
	for (size_t i = 0; i < w->n_users; i++)
		if (!strcmp(w->users[i].name, user))
			u = &w->users[i];
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, w->mac_key, sizeof(w->mac_key), pass,
			     strlen(pass), mac) < 0)
		goto out;
	if (u) {
		pthread_mutex_lock(&w->lock);
		ok = u->ok && equal_ct(u->ok_mac, mac, sizeof(mac));
		pthread_mutex_unlock(&w->lock);
	}
	if (ok) {
		status = 0;
	} else if (__atomic_load_n(&w->verifier_on, __ATOMIC_RELAXED) ||
		   __atomic_load_n(&w->stopping, __ATOMIC_RELAXED)) {	/* stopping: 503 */
		unsigned char pair_mac[MAC_LEN];
		char *copy = strdup(pass);

		if (copy && !pair_hmac(w, user, pass, pair_mac)) {
			status = queue_check(w, c, u, copy, mac, pair_mac, job);
		} else {
			free(copy);	/* (pair_hmac failed: nothing in it yet) */
			status = MHD_HTTP_SERVICE_UNAVAILABLE;
		}
	} else if (bcrypt_ok(w, u, pass)) {	/* no verifier thread (tests): inline */
		pthread_mutex_lock(&w->lock);
		memcpy(u->ok_mac, mac, sizeof(mac));
		u->ok = true;
		pthread_mutex_unlock(&w->lock);
		status = 0;
	}
out:
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
	return status;
}
