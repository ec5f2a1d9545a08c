// SPDX-License-Identifier: GPL-2.0
/*
 * devmemtop export: serve snapshots as Prometheus metrics over HTTP.
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
 * never touched.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
#include "collector.h"
#include "commands.h"
#include "expo.h"
#include "export.h"
#include "outstream.h"
#include "promfmt.h"
#include "promproto.h"
#include "privdrop.h"
#include "publisher.h"
#include "util.h"
#include "webcfg.h"

#define EXPORT_DEFAULT_LISTEN	"127.0.0.1:9435"
#define EXPORT_DEFAULT_INTERVAL	(2ULL * 1000000000ULL)
#define CT_METRICS		"text/plain; version=0.0.4; charset=utf-8"
#define SCRAPE_TAIL_MAX		2048	/* the per-scrape lines after the shared text */

/* One HTTP connection, for the request deadline. */
struct conn_track {
	struct conn_track *next, *prev;
	int fd;			/* our dup of the connection's socket */
	uint64_t since_ns;	/* connection start or last answer */
	bool answering;		/* request in, response not yet sent */
	bool reaped;
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
	conn_answered(cls, c, false);
}

/*
 * Shut down connections past the request deadline; libmicrohttpd then
 * closes them. One still sending its request gets a 408 first: it cannot
 * be idle (libmicrohttpd closes idle ones a second earlier), so it is
 * dripping a request, and no response of ours can be on its way (the
 * handler takes conn_lock to start one). Returns the next deadline
 * (monotonic ns), UINT64_MAX when no connection has one.
 */
void export__block_signals(sigset_t *sigs)
{
	sigemptyset(sigs);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, EXPORT_WAKE_SIG);
	pthread_sigmask(SIG_BLOCK, sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
}

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

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct exporter *ex = cls;

	static int headers_seen;
	int status;

	conn_answered(ex, c, true);
	/* every path, before anything else is looked at */
	status = webcfg__authorize(ex->web, c);
	if (status == MHD_HTTP_UNAUTHORIZED) {
		struct MHD_Response *r = MHD_create_response_from_buffer(
			13, (void *)"unauthorized\n", MHD_RESPMEM_PERSISTENT);
		enum MHD_Result ret;

		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/plain; charset=utf-8");
		ret = MHD_queue_basic_auth_fail_response(c, "devmemtop", r);
		MHD_destroy_response(r);
		return ret;
	}
	if (status)
		return reply_text(c, status, "client certificate required\n");
	/*
	 * Read-only: anything but GET and HEAD is refused before its body is
	 * read (an early answer: libmicrohttpd then closes the connection).
	 */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	/* First call: headers are in. Answer on the next one, so keep-alive works. */
	if (!*con_cls) {
		*con_cls = &headers_seen;
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

/*
 * Over --max-connections: closed at accept, not left in the listen backlog
 * (libmicrohttpd stops accepting at its own limit, which is set above ours
 * so that it never does). Counted at NOTIFY_STARTED, so two connections
 * accepted at once by the two worker threads can both pass: at most one
 * over the limit, for a moment.
 */
static enum MHD_Result accept_conn(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct exporter *ex = cls;

	return __atomic_load_n(&ex->conns_open, __ATOMIC_RELAXED) < ex->max_conns ?
	       MHD_YES : MHD_NO;
}

int exporter__start(struct exporter *ex)
{
	struct MHD_OptionItem tls[8];
	unsigned int flags = webcfg__mhd_options(ex->web, tls, sizeof(tls) / sizeof(*tls));

	ex->mhd = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | flags,
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

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: devmemtop export [OPTIONS]\n"
		"Serve page pool and devmem metrics for Prometheus on /metrics.\n\n"
		"  -l, --listen ADDR:PORT   listen address (default %s; [::1]:PORT for IPv6)\n"
		"  -i, --interval DUR       time between snapshots (default 2s; 10ms..1h)\n"
		"      --http-timeout SECS  close HTTP connections idle this long, or with a\n"
		"                           request or response unfinished 1s longer (10)\n"
		"      --max-connections N  concurrent HTTP connections (default 64); more\n"
		"                           are closed at once\n"
		"      --max-connections-per-client N\n"
		"                           from one client address (default max/8, >= 2)\n"
		"      --web.config.file FILE\n"
		"                           TLS and basic auth (Prometheus exporter-toolkit\n"
		"                           format; docs/exporter.md)\n"
		"      --user USER          after attaching, run as USER with no capabilities\n"
		"                           (default nobody when started as root)\n"
		"      --keep-privileges    do not drop capabilities or switch user\n"
		"  -m, --mode MODE          auto (default: every hook this kernel allows) or\n"
		"                           light (no per-page hook: cost flat in the packet\n"
		"                           rate; refill batches sampled)\n"
		"      --sampling W/P       light mode: per-page hooks on for W every P\n"
		"                           (default 20ms/10s)\n"
		"      --bpf-stats          turn on kernel.bpf_stats_enabled for BPF run time\n"
		"      --no-netlink         do not ask netdev genl about page pools\n"
		"      --once               watch for one interval, print one scrape, exit\n"
		"      --from FILE          serve a recording (devmemtop record) instead:\n"
		"                           its snapshots at their recorded pace, then the\n"
		"                           last one; no BPF, no privileges needed\n"
		"      --speed X            --from: replay X times as fast (0.01-1000; 1)\n"
		"      --iface-include GLOB per-pool series only for interfaces matching GLOB\n"
		"      --iface-exclude GLOB none for those matching GLOB (both repeatable)\n"
		"      --max-pools N        per-pool series for at most N pools per scrape\n"
		"                           (devmem first; the rest counted, not exported)\n"
		"      --list-metrics       print every metric the exporter can emit and exit\n"
		"  -v, --verbose            more logging (twice: HTTP errors too)\n"
		"  -h, --help               this help\n\n"
		"Full manual: man devmemtop (devmemtop(8)); docs/exporter.md.\n",
		EXPORT_DEFAULT_LISTEN);
}

enum {
	OPT_HTTP_TIMEOUT = 256,
	OPT_SAMPLING,
	OPT_MAX_CONNS,
	OPT_BPF_STATS,
	OPT_NO_NETLINK,
	OPT_ONCE,
	OPT_LIST,
	OPT_MAX_CONNS_CLIENT,
	OPT_WEB_CONFIG,
	OPT_USER,
	OPT_KEEP_PRIVS,
	OPT_FROM,
	OPT_SPEED,
	OPT_IFACE_INCLUDE,
	OPT_IFACE_EXCLUDE,
	OPT_MAX_POOLS,
};

/* Cardinality options (expo.h, struct expo_limits): 0 or -EINVAL after one line. */
#define EXPORT_MAX_GLOBS	32
static const char *iface_include[EXPORT_MAX_GLOBS], *iface_exclude[EXPORT_MAX_GLOBS];
static struct expo_limits limits = { .include = iface_include, .exclude = iface_exclude };

static int limits_opt(int opt, const char *arg)
{
	size_t *n = opt == OPT_IFACE_INCLUDE ? &limits.n_include : &limits.n_exclude;
	const char **globs = opt == OPT_IFACE_INCLUDE ? iface_include : iface_exclude;
	uint64_t v;

	if (opt == OPT_MAX_POOLS) {
		if (parse_uint(arg, 1000000, &v) || !v) {
			fprintf(stderr, "devmemtop export: bad --max-pools '%s': want 1-1000000\n", arg);
			return -EINVAL;
		}
		limits.max_pools = v;
		return 0;
	}
	if (!*arg || *n == EXPORT_MAX_GLOBS) {
		fprintf(stderr, "devmemtop export: bad %s '%s': want a non-empty glob, at most %d of them\n",
			opt == OPT_IFACE_INCLUDE ? "--iface-include" : "--iface-exclude", arg,
			EXPORT_MAX_GLOBS);
		return -EINVAL;
	}
	globs[(*n)++] = arg;
	return 0;
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

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "http-timeout", required_argument, NULL, OPT_HTTP_TIMEOUT },
		{ "max-connections", required_argument, NULL, OPT_MAX_CONNS },
		{ "bpf-stats", no_argument, NULL, OPT_BPF_STATS },
		{ "no-netlink", no_argument, NULL, OPT_NO_NETLINK },
		{ "mode", required_argument, NULL, 'm' },
		{ "sampling", required_argument, NULL, OPT_SAMPLING },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "list-metrics", no_argument, NULL, OPT_LIST },
		{ "max-connections-per-client", required_argument, NULL, OPT_MAX_CONNS_CLIENT },
		{ "web.config.file", required_argument, NULL, OPT_WEB_CONFIG },
		{ "user", required_argument, NULL, OPT_USER },
		{ "keep-privileges", no_argument, NULL, OPT_KEEP_PRIVS },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "speed", required_argument, NULL, OPT_SPEED },
		{ "iface-include", required_argument, NULL, OPT_IFACE_INCLUDE },
		{ "iface-exclude", required_argument, NULL, OPT_IFACE_EXCLUDE },
		{ "max-pools", required_argument, NULL, OPT_MAX_POOLS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct exporter_opts eo = { .listen = EXPORT_DEFAULT_LISTEN, .http_timeout_s = 10,
				    .max_conns = 64 };
	struct collector_opts co = { .log = NULL, .force_mode = -1 };
	uint64_t interval_ns = EXPORT_DEFAULT_INTERVAL, v, collections = 0, errors = 0;
	struct expo_totals totals = {};
	struct dmt_snapshot *snap = NULL;
	struct collector *col = NULL;
	struct exporter *ex = NULL;
	struct privdrop_opts po = {};
	const char *web_config = NULL, *from = NULL, *live_opt = NULL;
	double speed = 1;
	bool once = false;
	char msg[512];
	sigset_t sigs;
	int opt, err = 0, ret = 1;

	optind = 1;
	opterr = 0;	/* our own one-line messages */
	while ((opt = getopt_long(argc, argv, ":l:i:m:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			eo.listen = optarg;
			break;
		case 'i':
			live_opt = "--interval";
			if (parse_interval_ns(optarg, &interval_ns)) {
				fprintf(stderr, "devmemtop export: bad --interval '%s': want "
					DMT_INTERVAL_RANGE " (e.g. 2s)\n", optarg);
				return 2;
			}
			break;
		case OPT_HTTP_TIMEOUT:
			if (parse_uint(optarg, 3600, &v) || !v) {
				fprintf(stderr, "devmemtop export: bad --http-timeout '%s': want 1-3600 seconds\n",
					optarg);
				return 2;
			}
			eo.http_timeout_s = v;
			break;
		case OPT_MAX_CONNS:
			if (parse_uint(optarg, 4096, &v) || !v) {
				fprintf(stderr, "devmemtop export: bad --max-connections '%s': want 1-4096\n",
					optarg);
				return 2;
			}
			eo.max_conns = v;
			break;
		case OPT_MAX_CONNS_CLIENT:
			if (parse_uint(optarg, 4096, &v) || !v) {
				fprintf(stderr, "devmemtop export: bad --max-connections-per-client '%s': want 1-4096\n",
					optarg);
				return 2;
			}
			eo.max_conns_per_client = v;
			break;
		case OPT_WEB_CONFIG:
			web_config = optarg;
			break;
		case OPT_IFACE_INCLUDE:
		case OPT_IFACE_EXCLUDE:
		case OPT_MAX_POOLS:
			if (limits_opt(opt, optarg))
				return 2;
			break;
		case OPT_USER:
			po.user = optarg;
			break;
		case OPT_KEEP_PRIVS:
			po.keep = true;
			break;
		case OPT_BPF_STATS:
			live_opt = "--bpf-stats";
			co.enable_bpf_stats = true;
			break;
		case OPT_NO_NETLINK:
			live_opt = "--no-netlink";
			co.no_netlink = true;
			break;
		case 'm':
			live_opt = "--mode";
			if (!strcmp(optarg, "auto")) {
				co.force_mode = -1;
			} else if (!strcmp(optarg, "light")) {
				co.force_mode = DMT_MODE_LIGHT;
			} else {
				fprintf(stderr, "devmemtop export: bad mode '%s': auto or light\n",
					optarg);
				return 2;
			}
			break;
		case OPT_SAMPLING:
			live_opt = "--sampling";
			if (parse_sampling(optarg, &co.light_window_ms, &co.light_period_ms)) {
				fprintf(stderr, "devmemtop export: bad sampling '%s': "
					DMT_SAMPLING_RANGE "\n", optarg);
				return 2;
			}
			break;
		case OPT_ONCE:
			once = true;
			break;
		case OPT_FROM:
			from = optarg;
			break;
		case OPT_SPEED: {
			char *end;

			errno = 0;
			speed = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(speed >= 0.01 && speed <= 1000)) {
				fprintf(stderr, "devmemtop export: bad --speed '%s': want 0.01-1000\n",
					optarg);
				return 2;
			}
			break;
		}
		case OPT_LIST:
			expo_list_metrics(stdout);
			return 0;
		case 'v':
			dmt_verbosity++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "devmemtop export: option '%s' needs a value (try --help)\n",
				argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "devmemtop export: unknown option '%s' (try --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "devmemtop export: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!eo.max_conns_per_client) {
		eo.max_conns_per_client = eo.max_conns / 8 < 2 ? 2 : eo.max_conns / 8;
		if (eo.max_conns_per_client > eo.max_conns)
			eo.max_conns_per_client = eo.max_conns;
	} else if (eo.max_conns_per_client > eo.max_conns) {
		fprintf(stderr, "devmemtop export: --max-connections-per-client %u is above --max-connections %u\n",
			eo.max_conns_per_client, eo.max_conns);
		return 2;
	}
	if (!from && speed != 1) {
		fprintf(stderr, "devmemtop export: --speed is for --from\n");
		return 2;
	}
	if (from && live_opt) {
		fprintf(stderr, "devmemtop export: %s is for live collection, not --from (the recording sets the pace; see --speed)\n",
			live_opt);
		return 2;
	}
	if (from && export_replay__check(from, speed, &interval_ns, msg, sizeof(msg))) {
		fprintf(stderr, "devmemtop export: %s\n", msg);
		return 1;
	}
	if (po.keep && po.user) {
		fprintf(stderr, "devmemtop export: --user and --keep-privileges exclude each other\n");
		return 2;
	}
	if (!once && privdrop__prepare(&po, msg, sizeof(msg))) {
		fprintf(stderr, "devmemtop export: %s\n", msg);
		return 1;
	}
	eo.interval_s = (double)interval_ns / 1e9;
	expo__set_limits(&limits);
	co.verbosity = dmt_verbosity;
	co.log = dmt_verbosity ? dmt_log : NULL;

	if (web_config && !once) {
		if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
			fprintf(stderr, "devmemtop export: this libmicrohttpd has no TLS support\n");
			return 1;
		}
		if (webcfg__load(web_config, &eo.web, msg, sizeof(msg))) {
			fprintf(stderr, "devmemtop export: %s\n", msg);
			return 1;
		}
	}
	if (!once) {
		ex = exporter__new(&eo, msg, sizeof(msg));
		if (!ex) {
			fprintf(stderr, "devmemtop export: %s\n", msg);
			return 1;
		}
	}
	if (from) {
		ret = export_replay__run(ex, from, speed, once, &po);
		goto cleanup;
	}
	if (check_bpf_privileges(msg, sizeof(msg))) {
		fprintf(stderr, "devmemtop export: %s\n", msg);
		goto cleanup;
	}
	/*
	 * Block the stop signals before any thread starts so they all inherit
	 * the mask; the main thread takes them with sigtimedwait().
	 */
	export__block_signals(&sigs);

	co.errbuf = msg;
	co.errlen = sizeof(msg);
	col = collector__new(&co);
	if (!col) {
		fprintf(stderr, "devmemtop export: cannot start the collector: %s\n", msg);
		goto cleanup;
	}
	if (once) {
		/* pools show up with their first events: watch for one interval */
		struct timespec ts = { .tv_sec = interval_ns / 1000000000ULL,
				       .tv_nsec = interval_ns % 1000000000ULL };
		int sig = sigtimedwait(&sigs, NULL, &ts);

		if (sig == SIGINT || sig == SIGTERM)
			goto cleanup;
	}
	err = collector__snapshot(col, &snap);
	if (err) {
		fprintf(stderr, "devmemtop export: first snapshot failed: %s\n", strerror(-err));
		goto cleanup;
	}
	collections++;
	expo_totals__account(&totals, snap);
	if (once) {
		err = export__print_once(snap, &totals, eo.interval_s, 1);
		if (err && !out_flush(stdout))	/* a stdout error: main() says it */
			fprintf(stderr, "devmemtop export: %s\n", strerror(-err));
		else
			ret = 0;
		goto cleanup;
	}
	err = publisher__publish(ex->pb, snap, &totals, collections, errors, 0);
	snap = NULL;
	/* programs attached, first snapshot taken: the HTTP threads start without */
	if (!err && privdrop__apply(&po, msg, sizeof(msg))) {
		fprintf(stderr, "devmemtop export: %s\n", msg);
		goto cleanup;
	}
	if (!err)
		err = exporter__start(ex);
	if (err) {
		fprintf(stderr, "devmemtop export: cannot start the HTTP server on %s\n",
			ex->addr_str);
		goto cleanup;
	}
	fprintf(stderr, "devmemtop export: serving %s://%s/metrics (mode %s, every %gs)\n",
		webcfg__tls(eo.web) ? "https" : "http", ex->addr_str,
		dmt_mode_name(collector__mode(col)), eo.interval_s);

	/*
	 * Snapshots every interval; a connection's request deadline when it
	 * comes. One wake-up per event, no tick: a wake-up costs ~50 us of
	 * CPU on a VM, which an idle always-on exporter should not pay 4x a
	 * second. A new connection wakes us (EXPORT_WAKE_SIG) for its deadline.
	 */
	for (uint64_t next = now_mono_ns() + interval_ns;;) {
		uint64_t now, wait, reap_at;
		struct timespec ts;
		int sig;

		reap_at = exporter__reap(ex);
		now = now_mono_ns();
		if (now < next) {
			wait = (reap_at < next ? reap_at : next);
			wait = wait > now ? wait - now : 0;
			ts.tv_sec = wait / 1000000000ULL;
			ts.tv_nsec = wait % 1000000000ULL;
			sig = sigtimedwait(&sigs, NULL, &ts);
			if (sig == SIGINT || sig == SIGTERM)
				break;
			continue;
		}
		next += interval_ns;
		if (next <= now)	/* fell behind (suspend, slow collection): no burst */
			next = now + interval_ns;
		err = collector__snapshot(col, &snap);
		if (err) {
			errors++;
			pr_info("export: snapshot failed: %s\n", strerror(-err));
			publisher__count_error(ex->pb, errors);
			continue;
		}
		collections++;
		expo_totals__account(&totals, snap);
		publisher__publish(ex->pb, snap, &totals, collections, errors, 0);
		snap = NULL;
	}
	ret = 0;

cleanup:
	exporter__free(ex);
	webcfg__free(eo.web);
	snapshot__free(snap);
	collector__free(col);
	return ret;
}
