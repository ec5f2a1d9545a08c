// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's HTTP server: the listening socket, libmicrohttpd, request
 * deadlines, /metrics, /healthz and /. Its callers (export.c for live
 * collection, export_replay.c for export --from) publish snapshots through
 * exporter__publisher() and never see a connection.
 *
 *
 * The main thread owns the collector: it takes a snapshot every interval
 * and hands it to the publisher (publisher.c), which swaps it in as an
 * immutable, reference-counted object. libmicrohttpd's threads take a
 * reference; the first scrape of a snapshot renders its text, every scrape
 * copies that text and appends its own lines. A slow or stuck scrape never
 * delays collection, and any number of scrapes run side by side.
 *
 * HTTP hardening: libmicrohttpd answers malformed requests (400), oversized
 * request lines and headers (414/431, bounded by the per-connection memory
 * limit) and closes idle connections after --http-timeout. Its timeout is
 * an idle timeout, so a client that drips one header byte a second would
 * hold a connection forever; the main thread therefore also shuts down any
 * connection whose request has not arrived complete (or whose response has
 * not been taken) within --http-timeout (plus a second of grace) of its
 * start or of its previous response, with a 408 if it was still sending
 * its request. It does so on a dup() of the socket that it owns until
 * libmicrohttpd reports the connection closed, so a reused descriptor is
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include "expo.h"
#include "export_http.h"
#include "outstream.h"
#include "promfmt.h"
#include "promproto.h"
#include "publisher.h"
#include "util.h"
#include "webcfg.h"

#define CT_METRICS		"text/plain; version=0.0.4; charset=utf-8"
#define SCRAPE_TAIL_MAX		2048	/* the per-scrape lines after the shared text */

/* A client address without its port: who holds how many connections. */
struct client_key {
	unsigned char a[16];	/* IPv4 as the first 4 bytes */
	sa_family_t family;
};

/* One HTTP connection, for the request deadline and eviction. */
struct conn_track {
	struct conn_track *next, *prev;
	int fd;			/* our dup of the connection's socket */
	uint64_t since_ns;	/* connection start or last answer */
	bool answering;		/* request in, response not yet sent */
	bool reaped;		/* shut down by us: no longer counted */
	struct client_key client;
};

/* One request's state (con_cls): its password check, whether its headers were seen. */
struct request {
	struct webcfg_job *job;
	int auth;		/* webcfg__authorize()'s answer */
	bool headers_seen;
};

struct exporter {
	int lfd;
	char addr_str[80];
	struct MHD_Daemon *mhd;
	struct publisher *pb;
	double interval_s;
	unsigned int http_timeout_s;
	unsigned int max_conns;
	unsigned int max_conns_per_client;
	unsigned int conns_open;	/* atomic */
	struct webcfg *web;
	uint64_t scrapes;		/* atomic */
	pthread_mutex_t conn_lock;
	struct conn_track conns;	/* list head */
	uint64_t timed_out;		/* atomic: connections shut down */
	pthread_t main_thread;		/* sleeps until the next deadline */
};


/* "127.0.0.1:9435", "[::1]:9435", "localhost:9435"; 0 or -errno + msg. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sl,
			char *msg, size_t msglen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *res = NULL;
	char host[256];
	const char *port, *colon;
	uint64_t pnum;
	size_t hl;
	int rc;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':') {
			snprintf(msg, msglen, "bad --listen '%s': want [ADDR]:PORT", s);
			return -EINVAL;
		}
		hl = end - s - 1;
		port = end + 2;
		if (hl >= sizeof(host))
			goto bad;
		memcpy(host, s + 1, hl);
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon)
			goto bad;
		hl = colon - s;
		port = colon + 1;
		if (hl >= sizeof(host))
			goto bad;
		memcpy(host, s, hl);
	}
	host[hl] = '\0';
	if (!hl || parse_uint(port, 65535, &pnum))
		goto bad;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc || !res) {
		snprintf(msg, msglen, "bad --listen '%s': %s", s,
			 rc ? gai_strerror(rc) : "no address");
		if (res)
			freeaddrinfo(res);
		return -EINVAL;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sl = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
bad:
	snprintf(msg, msglen, "bad --listen '%s': want HOST:PORT (e.g. %s) with port 0-65535",
		 s, EXPORT_DEFAULT_LISTEN);
	return -EINVAL;
}

/*
 * Anything but loopback can be reached from other hosts: say so, in one
 * line, unless TLS and client authentication are both configured.
 */
static void warn_if_exposed(const struct exporter *ex, const struct sockaddr_storage *ss)
{
	bool loop, tls = webcfg__tls(ex->web), auth = webcfg__auth(ex->web);

	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;

		loop = IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	} else {
		loop = (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	}
	if (loop || (tls && auth))
		return;
	fprintf(stderr, "devmemtop export: warning: %s is not loopback and is served %s: anyone who can reach it %s (see --web.config.file)\n",
		ex->addr_str,
		!tls && !auth ? "without TLS or authentication" :
		!tls ? "without TLS (basic auth passwords travel in clear)" :
		       "with TLS but no client authentication",
		auth ? "can read the traffic" : "can read the metrics");
}

/* Binds the socket (so address errors come before loading BPF). */
struct exporter *exporter__new(const struct exporter_opts *o, char *msg, size_t msglen)
{
	struct sockaddr_storage ss = {};
	socklen_t sl = sizeof(ss);
	struct exporter *ex;
	char host[INET6_ADDRSTRLEN];
	int one = 1, err;

	ex = calloc(1, sizeof(*ex));
	if (!ex) {
		snprintf(msg, msglen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	ex->lfd = -1;
	pthread_mutex_init(&ex->conn_lock, NULL);
	ex->conns.next = ex->conns.prev = &ex->conns;
	ex->interval_s = o->interval_s;
	ex->main_thread = pthread_self();
	ex->pb = publisher__new(o->interval_s);
	if (!ex->pb) {
		err = -ENOMEM;
		snprintf(msg, msglen, "out of memory");
		goto err_free;
	}
	ex->http_timeout_s = o->http_timeout_s;
	ex->max_conns = o->max_conns;
	ex->max_conns_per_client = o->max_conns_per_client;
	ex->web = o->web;

	err = parse_listen(o->listen, &ss, &sl, msg, msglen);
	if (err)
		goto err_free;
	ex->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ex->lfd < 0) {
		err = -errno;
		snprintf(msg, msglen, "socket: %s", strerror(errno));
		goto err_free;
	}
	setsockopt(ex->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(ex->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(ex->lfd, (struct sockaddr *)&ss, sl) || listen(ex->lfd, 64)) {
		err = -errno;
		snprintf(msg, msglen, "cannot listen on %s: %s", o->listen, strerror(errno));
		goto err_free;
	}
	sl = sizeof(ss);
	getsockname(ex->lfd, (struct sockaddr *)&ss, &sl);
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		snprintf(ex->addr_str, sizeof(ex->addr_str), "[%s]:%u", host, ntohs(a->sin6_port));
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		snprintf(ex->addr_str, sizeof(ex->addr_str), "%s:%u", host, ntohs(a->sin_port));
	}
	warn_if_exposed(ex, &ss);
	return ex;

err_free:
	exporter__free(ex);
	errno = -err;
	return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *ctype,
			     char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, mode);
	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status,
				  const char *text)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)text, strlen(text),
		     MHD_RESPMEM_PERSISTENT);
}

static void client_key(const struct sockaddr *sa, struct client_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = sa->sa_family;
	if (sa->sa_family == AF_INET6)
		memcpy(k->a, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	else if (sa->sa_family == AF_INET)
		memcpy(k->a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
}

static int client_cmp(const struct client_key *x, const struct client_key *y)
{
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return memcmp(x->a, y->a, sizeof(x->a));
}

static void notify_conn(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode toe)
{
	struct exporter *ex = cls;
	const union MHD_ConnectionInfo *ci;
	struct conn_track *t;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		__atomic_add_fetch(&ex->conns_open, 1, __ATOMIC_RELAXED);
		webcfg__conn_started(ex->web, c);
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		t = calloc(1, sizeof(*t));
		if (!t || !ci)
			goto no_track;
		t->fd = fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 0);
		if (t->fd < 0)
			goto no_track;
		t->since_ns = now_mono_ns();
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ci && ci->client_addr)
			client_key(ci->client_addr, &t->client);
		pthread_mutex_lock(&ex->conn_lock);
		t->next = ex->conns.next;
		t->prev = &ex->conns;
		ex->conns.next->prev = t;
		ex->conns.next = t;
		pthread_mutex_unlock(&ex->conn_lock);
		*socket_context = t;
		/* its deadline may come before the main thread's next wake-up */
		pthread_kill(ex->main_thread, EXPORT_WAKE_SIG);
		return;
no_track:
		/* still served, only without the deadline (idle timeout applies) */
		free(t);
		*socket_context = NULL;
		return;
	}
	__atomic_sub_fetch(&ex->conns_open, 1, __ATOMIC_RELAXED);
	t = *socket_context;
	if (!t)
		return;
	pthread_mutex_lock(&ex->conn_lock);
	t->prev->next = t->next;
	t->next->prev = t->prev;
	pthread_mutex_unlock(&ex->conn_lock);
	close(t->fd);
	free(t);
	*socket_context = NULL;
}

/*
 * A request arrived complete (answering), or its response went out (not
 * answering, waiting for the next request): restart the deadline.
 */
static void conn_answered(struct exporter *ex, struct MHD_Connection *c, bool answering)
{
	const union MHD_ConnectionInfo *ci;
	struct conn_track *t;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	t = ci ? ci->socket_context : NULL;
	if (!t)
		return;
	pthread_mutex_lock(&ex->conn_lock);
	t->since_ns = now_mono_ns();
	t->answering = answering;
	pthread_mutex_unlock(&ex->conn_lock);
}

static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			      enum MHD_RequestTerminationCode toe)
{
	struct request *rq = *con_cls;

	conn_answered(cls, c, false);
	if (rq) {
		webcfg__job_free(rq->job);
		free(rq);
		*con_cls = NULL;
	}
}

void export__block_signals(sigset_t *sigs)
{
	sigemptyset(sigs);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, EXPORT_WAKE_SIG);
	pthread_sigmask(SIG_BLOCK, sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
}


/*
 * Shut down connections past the request deadline; libmicrohttpd then
 * closes them. One still sending its request gets a 408 first: it cannot
 * be idle (libmicrohttpd closes idle ones a second earlier), so it is
 * dripping a request, and no response of ours can be on its way (the
 * handler takes conn_lock to start one). Returns the next deadline
 * (monotonic ns), UINT64_MAX when no connection has one.
 */
uint64_t exporter__reap(struct exporter *ex)
{
	static const char msg408[] = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
				     "Content-Type: text/plain; charset=utf-8\r\n"
				     "Content-Length: 16\r\n\r\nrequest timeout\n";
	/* a second of grace: idle keep-alive connections are libmicrohttpd's to close */
	uint64_t now = now_mono_ns(), limit = (ex->http_timeout_s + 1) * 1000000000ULL;
	uint64_t next = UINT64_MAX;
	struct conn_track *t;

	pthread_mutex_lock(&ex->conn_lock);
	for (t = ex->conns.next; t != &ex->conns; t = t->next) {
		if (t->reaped)
			continue;
		if (now < t->since_ns || now - t->since_ns <= limit) {
			if (t->since_ns + limit + 1 < next)
				next = t->since_ns + limit + 1;
			continue;
		}
		/* no plain-text 408 into a TLS stream */
		if (!t->answering && !webcfg__tls(ex->web) && send(t->fd, msg408, sizeof(msg408) - 1,
					  MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			pr_debug("export: 408: %s\n", strerror(errno));
		shutdown(t->fd, SHUT_RDWR);
		t->reaped = true;
		__atomic_add_fetch(&ex->timed_out, 1, __ATOMIC_RELAXED);
		pr_info("export: closed an HTTP connection past the %us request deadline\n",
			ex->http_timeout_s);
	}
	pthread_mutex_unlock(&ex->conn_lock);
	return next;
}

static const char index_html[] =
	"<!DOCTYPE html>\n<html><head><title>devmemtop exporter</title></head>\n"
	"<body><h1>devmemtop exporter</h1>\n"
	"<p>Page pool and devmem TCP metrics for Prometheus.</p>\n<ul>\n"
	"<li><a href=\"/metrics\">/metrics</a>: Prometheus text format 0.0.4\n"
	"(protobuf, with native histograms, on request)</li>\n"
	"<li><a href=\"/healthz\">/healthz</a>: 200 while snapshots are fresh, 503 when stale</li>\n"
	"</ul></body></html>\n";

static enum MHD_Result serve_metrics(struct exporter *ex, struct MHD_Connection *c)
{
	struct expo_scrape sc = {};
	uint64_t t0 = now_mono_ns();
	struct promfmt *tail = NULL;
	const char *text, *tt;
	struct pubsnap *p;
	size_t len, tl;
	char *body = NULL;
	int err;
	/* content negotiation: protobuf (native histograms) for those who ask */
	bool proto = promproto_accepts(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								   MHD_HTTP_HEADER_ACCEPT));

	p = publisher__get(ex->pb);
	if (!p)
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no snapshot yet\n");
	err = proto ? pubsnap__proto(p, &text, &len) : pubsnap__text(p, &text, &len);
	if (!err) {
		tail = proto ? promfmt__new_proto() : promfmt__new();
		/* the text is immutable: copy it with no lock held */
		body = malloc(len + SCRAPE_TAIL_MAX);
		if (!tail || !body)
			err = -ENOMEM;
	}
	if (!err) {
		memcpy(body, text, len);
		sc.scrapes = __atomic_add_fetch(&ex->scrapes, 1, __ATOMIC_RELAXED);
		sc.http_timeouts = __atomic_load_n(&ex->timed_out, __ATOMIC_RELAXED);
		sc.snapshots_held = publisher__live(ex->pb);
		sc.seconds = (double)(now_mono_ns() - t0) / 1e9;
		err = expo__render_scrape(tail, &sc);
		if (!err)
			err = promfmt__end(tail);
	}
	if (!err) {
		tt = promfmt__text(tail, &tl);
		if (tl > SCRAPE_TAIL_MAX)
			err = -ENOSPC;
	}
	pubsnap__put(p);
	if (err) {
		pr_warn("export: rendering failed: %s\n", strerror(-err));
		free(body);
		promfmt__free(tail);
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "rendering failed\n");
	}
	memcpy(body + len, tt, tl);
	promfmt__free(tail);
	return reply(c, MHD_HTTP_OK, proto ? PROMPROTO_CONTENT_TYPE : CT_METRICS, body, len + tl,
		     MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result serve_healthz(struct exporter *ex, struct MHD_Connection *c)
{
	struct pubsnap *p = publisher__get(ex->pb);
	double age, limit = 3 * ex->interval_s + 1;
	char *body;
	int n;

	if (!p)
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no snapshot yet\n");
	age = (double)(now_mono_ns() - pubsnap__published_ns(p)) / 1e9;
	pubsnap__put(p);
	n = asprintf(&body, "%s: last snapshot %.3f s ago (limit %.3f s)\n",
		     age <= limit ? "ok" : "stale", age, limit);
	if (n < 0)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return reply(c, age <= limit ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
		     "text/plain; charset=utf-8", body, n, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result reply_auth(struct MHD_Connection *c, int status)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (status == MHD_HTTP_FORBIDDEN)
		return reply_text(c, status, "client certificate required\n");
	if (status == MHD_HTTP_TOO_MANY_REQUESTS)
		return reply_text(c, status, "too many wrong passwords from this address: retry later\n");
	if (status != MHD_HTTP_UNAUTHORIZED)
		return reply_text(c, status, "password check unavailable\n");
	r = MHD_create_response_from_buffer(13, (void *)"unauthorized\n", MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	ret = MHD_queue_basic_auth_fail_response(c, "devmemtop", r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct exporter *ex = cls;
	struct request *rq = *con_cls;

	if (!rq) {
		/* every path, before anything else is looked at */
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		conn_answered(ex, c, true);
		rq->auth = webcfg__authorize(ex->web, c, &rq->job);
		if (rq->auth == WEBCFG_PENDING) {
			/* the verifier thread resumes it: this thread serves others */
			MHD_suspend_connection(c);
			return MHD_YES;
		}
	} else if (rq->auth == WEBCFG_PENDING) {
		rq->auth = webcfg__job_status(rq->job);
	}
	if (rq->auth)
		return reply_auth(c, rq->auth);
	/*
	 * Read-only: anything but GET and HEAD is refused before its body is
	 * read (an early answer: libmicrohttpd then closes the connection).
	 */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	/* First call: headers are in. Answer on the next one, so keep-alive works. */
	if (!rq->headers_seen) {
		rq->headers_seen = true;
		return MHD_YES;
	}
	if (*upload_data_size)
		return reply_text(c, MHD_HTTP_BAD_REQUEST, "GET takes no body\n");
	if (!strcmp(url, "/metrics"))
		return serve_metrics(ex, c);
	if (!strcmp(url, "/healthz"))
		return serve_healthz(ex, c);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", (char *)index_html,
			     sizeof(index_html) - 1, MHD_RESPMEM_PERSISTENT);
	return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	if (dmt_verbosity < 2)
		return;
	fprintf(stderr, "export: http: ");
	vfprintf(stderr, fmt, ap);
}

/* By client address, then oldest first. */
static int track_cmp(const void *a, const void *b)
{
	const struct conn_track *x = *(struct conn_track *const *)a;
	const struct conn_track *y = *(struct conn_track *const *)b;
	int c = client_cmp(&x->client, &y->client);

	if (c)
		return c;
	return x->since_ns < y->since_ns ? -1 : x->since_ns > y->since_ns;
}

/*
 * The table is full and a client holding `mine` connections knocks. The
 * victim: the oldest idle connection (no request being answered) of the
 * address that holds the most, if that is at least two more than `mine`
 * (so two clients never take turns evicting each other). At most
 * --max-connections entries, sorted: O(n log n), only when full.
 */
static struct conn_track *pick_victim(struct conn_track **v, size_t n,
				      const struct client_key *newcomer)
{
	struct conn_track *victim = NULL;
	size_t i, j, mine = 0, best = 0;

	qsort(v, n, sizeof(*v), track_cmp);
	for (i = 0; i < n; i = j) {
		struct conn_track *idle = NULL;

		for (j = i; j < n && !client_cmp(&v[i]->client, &v[j]->client); j++)
			if (!idle && !v[j]->answering)
				idle = v[j];
		if (!client_cmp(&v[i]->client, newcomer))
			mine = j - i;
		else if (idle && j - i > best)
			best = j - i, victim = idle;
	}
	return best >= mine + 2 ? victim : NULL;
}

/* Shut down one idle connection for a new client; true if one went. */
static bool evict_for(struct exporter *ex, const struct sockaddr *addr)
{
	struct conn_track **v, *t, *victim = NULL;
	struct client_key newcomer;
	size_t n = 0;

	client_key(addr, &newcomer);
	v = calloc(ex->max_conns + 8, sizeof(*v));
	if (!v)
		return false;
	pthread_mutex_lock(&ex->conn_lock);
	for (t = ex->conns.next; t != &ex->conns && n < ex->max_conns + 8; t = t->next)
		if (!t->reaped)
			v[n++] = t;
	victim = pick_victim(v, n, &newcomer);
	if (victim) {
		shutdown(victim->fd, SHUT_RDWR);	/* libmicrohttpd closes it */
		victim->reaped = true;
	}
	pthread_mutex_unlock(&ex->conn_lock);
	free(v);
	if (victim)
		pr_info("export: connection table full: closed the oldest idle connection of the busiest client for a new one\n");
	return victim;
}

/*
 * Over --max-connections: closed at accept, not left in the listen backlog
 * (libmicrohttpd stops accepting at its own limit, which is set above ours
 * so that it never does), unless an idle connection of a client holding
 * more can make room (evict_for): 8 addresses x 8 connections must not
 * lock every other scraper out until they time out. Counted at
 * NOTIFY_STARTED, so two connections accepted at once by the two worker
 * threads can both pass: at most one over the limit, for a moment.
 */
static enum MHD_Result accept_conn(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct exporter *ex = cls;

	if (__atomic_load_n(&ex->conns_open, __ATOMIC_RELAXED) < ex->max_conns)
		return MHD_YES;
	return addr && evict_for(ex, addr) ? MHD_YES : MHD_NO;
}

int exporter__start(struct exporter *ex)
{
	struct MHD_OptionItem tls[8];
	unsigned int flags = webcfg__mhd_options(ex->web, tls, sizeof(tls) / sizeof(*tls));

	if (webcfg__start(ex->web, MHD_resume_connection))
		return -EAGAIN;
	ex->mhd = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
				   MHD_ALLOW_SUSPEND_RESUME | flags,
				   0, accept_conn, ex, handle, ex,
				   MHD_OPTION_LISTEN_SOCKET, ex->lfd,
				   MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)2,
				   /* split between the 2 threads; each must have room */
				   MHD_OPTION_CONNECTION_LIMIT, 2 * ex->max_conns + 4,
				   /* over it: closed at once by libmicrohttpd */
				   MHD_OPTION_PER_IP_CONNECTION_LIMIT, ex->max_conns_per_client,
				   MHD_OPTION_ARRAY, tls,
				   MHD_OPTION_CONNECTION_TIMEOUT, ex->http_timeout_s,
				   /* request line + headers must fit in this */
				   MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
				   /* RFC 7230: e.g. 400 for HTTP/1.1 without Host */
				   MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
				   MHD_OPTION_NOTIFY_CONNECTION, notify_conn, ex,
				   MHD_OPTION_NOTIFY_COMPLETED, request_completed, ex,
				   MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				   MHD_OPTION_END);
	if (!ex->mhd)
		return -EIO;
	return 0;
}

void exporter__free(struct exporter *ex)
{
	if (!ex)
		return;
	/* resumes every connection waiting for a password check */
	webcfg__stop(ex->web);
	if (ex->mhd)
		MHD_stop_daemon(ex->mhd);	/* joins the HTTP threads */
	if (ex->lfd >= 0)
		close(ex->lfd);
	publisher__free(ex->pb);
	pthread_mutex_destroy(&ex->conn_lock);
	free(ex);
}

struct publisher *exporter__publisher(struct exporter *ex)
{
	return ex->pb;
}

const char *exporter__addr(const struct exporter *ex)
{
	return ex->addr_str;
}

const char *exporter__scheme(const struct exporter *ex)
{
	return webcfg__tls(ex->web) ? "https" : "http";
}

int export__print_once(struct dmt_snapshot *snap, const struct expo_totals *t, double interval_s,
		       uint64_t collections)
{
	struct expo_input in = { .snap = snap, .totals = t, .interval_s = interval_s,
				 .collections = collections };
	uint64_t t0 = now_mono_ns();
	struct promfmt *w = promfmt__new();
	const char *text;
	size_t len;
	int err;

	if (!w)
		return -ENOMEM;
	err = expo__render(w, &in);
	if (!err)
		err = expo__render_scrape(w, &(struct expo_scrape){
			.scrapes = 1, .snapshots_held = 1,
			.seconds = (double)(now_mono_ns() - t0) / 1e9 });
	if (!err) {
		text = promfmt__text(w, &len);
		err = out_write(stdout, text, len);	/* the real reason; main() prints it */
	}
	promfmt__free(w);
	return err;
}
