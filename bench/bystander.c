// SPDX-License-Identifier: GPL-2.0
/*
 * Plain (not devmem) TCP traffic for bench/bystander.sh: what devmemtop
 * costs the host's ordinary TCP when it is attached.
 *
 *   bystander server ADDR PORT            serve connections until killed
 *   bystander rr ADDR PORT SECONDS SIZE   request/response: print transactions/s
 *   bystander stream ADDR PORT SECONDS    one-way stream: print bytes/s received
 *   bystander rr-slices ADDR PORT PAIRS SECONDS SIZE PID
 *   bystander stream-slices ADDR PORT PAIRS SECONDS PID
 *        one connection, PAIRS pairs of SECONDS-long slices: PID stopped
 *        (SIGSTOP) in one slice of a pair, running (SIGCONT) in the other,
 *        stopped first in odd pairs; prints "stopped running" per pair
 *        (transactions/s, or bytes/s sent), and leaves PID running
 *
 * A connection's first byte says what it is: 'R' (then SIZE as 4 bytes:
 * the server echoes SIZE-byte messages) or 'S' (the server reads 64 KiB at
 * a time until EOF and sends back the byte count). Every read is one
 * recv(), so one tcp_recvmsg, with flags 0: no MSG_SOCK_DEVMEM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define STREAM_CHUNK	65536
#define MAX_MSG		65536

static int usage(void)
{
	fprintf(stderr, "usage: bystander server ADDR PORT | rr ADDR PORT SECONDS SIZE | "
		"stream ADDR PORT SECONDS | rr-slices ADDR PORT PAIRS SECONDS SIZE PID | "
		"stream-slices ADDR PORT PAIRS SECONDS PID\n");
	return 2;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int full_io(int fd, void *buf, size_t len, int wr)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = wr ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL) :
				 recv(fd, (char *)buf + done, len - done, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

static int addr_of(const char *a, const char *p, struct sockaddr_in *sa)
{
	char *end;
	long port = strtol(p, &end, 10);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (*end || port <= 0 || port > 65535 || inet_pton(AF_INET, a, &sa->sin_addr) != 1) {
		fprintf(stderr, "bystander: bad address %s:%s\n", a, p);
		return -1;
	}
	sa->sin_port = htons(port);
	return 0;
}

static void serve_one(int c)
{
	static char buf[MAX_MSG > STREAM_CHUNK ? MAX_MSG : STREAM_CHUNK];
	uint32_t size;
	uint64_t total = 0;
	char kind;
	ssize_t r;

	if (full_io(c, &kind, 1, 0))
		return;
	if (kind == 'R') {
		if (full_io(c, &size, 4, 0) || !size || size > MAX_MSG)
			return;
		while (!full_io(c, buf, size, 0) && !full_io(c, buf, size, 1))
			;
		return;
	}
	while ((r = recv(c, buf, STREAM_CHUNK, 0)) > 0 || (r < 0 && errno == EINTR))
		if (r > 0)
			total += r;
	full_io(c, &total, sizeof(total), 1);
}

static int server(struct sockaddr_in *sa)
{
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);

	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)sa, sizeof(*sa)) || listen(s, 4)) {
		perror("bystander server");
		return 1;
	}
	for (;;) {
		int c = accept(s, NULL, NULL);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			perror("bystander accept");
			return 1;
		}
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		serve_one(c);
		close(c);
	}
}

static int dial(struct sockaddr_in *sa)
{
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);

	for (int i = 0; s >= 0 && i < 100; i++) {	/* the server may still be starting */
		if (!connect(s, (struct sockaddr *)sa, sizeof(*sa))) {
			setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return s;
		}
		usleep(50000);
	}
	perror("bystander connect");
	if (s >= 0)
		close(s);
	return -1;
}

/*
 * A connection of the given kind: SIZE-byte request/response (size > 0),
 * or a stream (size 0); -1 on an error (said).
 */
static int open_conn(struct sockaddr_in *sa, uint32_t size)
{
	int s = dial(sa);

	if (s < 0)
		return -1;
	if (size ? full_io(s, "R", 1, 1) || full_io(s, &size, 4, 1) : full_io(s, "S", 1, 1)) {
		perror("bystander hello");
		close(s);
		return -1;
	}
	return s;
}

/*
 * One slice of an open connection: SIZE-byte transactions (size > 0) or
 * 64 KiB sends (size 0) for secs; the rate, or -1 on an error.
 */
static double slice(int s, double secs, uint32_t size)
{
	static char buf[MAX_MSG > STREAM_CHUNK ? MAX_MSG : STREAM_CHUNK];
	uint64_t n = 0;
	double t0 = now(), t;

	do {
		for (int i = 0; i < (size ? 64 : 16); i++, n++)
			if (size ? full_io(s, buf, size, 1) || full_io(s, buf, size, 0) :
				   full_io(s, buf, STREAM_CHUNK, 1))
				return -1;
		t = now();
	} while (t - t0 < secs);
	return (size ? n : n * STREAM_CHUNK) / (t - t0);
}

static int rr(struct sockaddr_in *sa, double secs, uint32_t size)
{
	int s = open_conn(sa, size);
	double v;

	if (s < 0)
		return 1;
	v = slice(s, secs, size);
	if (v < 0)
		perror("bystander rr");
	else
		printf("%.1f\n", v);
	close(s);
	return v < 0;
}

/* bytes/s as the receiver counted them, once it has read everything */
static int stream(struct sockaddr_in *sa, double secs)
{
	uint64_t got = 0;
	int s = open_conn(sa, 0), err = 1;
	double t0 = now();

	if (s < 0)
		return 1;
	if (slice(s, secs, 0) < 0)
		goto out;
	shutdown(s, SHUT_WR);
	if (full_io(s, &got, sizeof(got), 0))
		goto out;
	printf("%.0f\n", got / (now() - t0));
	err = 0;
out:
	if (err)
		perror("bystander stream");
	close(s);
	return err;
}

/*
 * Pairs of slices on one connection with @pid stopped in one and running
 * in the other: no connection set-up or slow start inside a slice, and the
 * switch is exactly at the slice's edge.
 */
static int slices(struct sockaddr_in *sa, long pairs, double secs, uint32_t size, pid_t pid)
{
	int s = open_conn(sa, size), err = 1;
	double v[2];

	if (s < 0)
		return 1;
	for (long i = 1; i <= pairs; i++) {
		for (int k = 0; k < 2; k++) {
			int stopped = (k == 0) == (i % 2 == 1);

			if (kill(pid, stopped ? SIGSTOP : SIGCONT)) {
				perror("bystander kill");
				goto out;
			}
			v[!stopped] = slice(s, secs, size);
			if (v[!stopped] < 0) {
				perror("bystander slice");
				goto out;
			}
		}
		printf("%.1f %.1f\n", v[0], v[1]);
		fflush(stdout);
	}
	err = 0;
out:
	kill(pid, SIGCONT);
	close(s);
	return err;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	double secs;
	long size;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 4 || addr_of(argv[2], argv[3], &sa))
		return usage();
	if (!strcmp(argv[1], "server") && argc == 4)
		return server(&sa);
	if (!strcmp(argv[1], "rr-slices") || !strcmp(argv[1], "stream-slices")) {
		int rr_ = argv[1][0] == 'r';
		long pairs = argc > 4 ? strtol(argv[4], NULL, 10) : 0;
		long pid = argc == 7 + rr_ ? strtol(argv[6 + rr_], NULL, 10) : 0;

		secs = argc > 5 ? atof(argv[5]) : 0;
		size = rr_ && argc > 6 ? strtol(argv[6], NULL, 10) : 0;
		if (argc != 7 + rr_ || pairs <= 0 || pairs > 100000 || secs <= 0 || secs > 600 ||
		    pid <= 1 || (rr_ && (size <= 0 || size > MAX_MSG)))
			return usage();
		return slices(&sa, pairs, secs, size, pid);
	}
	secs = argc > 4 ? atof(argv[4]) : 0;
	if (secs <= 0 || secs > 600)
		return usage();
	if (!strcmp(argv[1], "rr") && argc == 6) {
		size = strtol(argv[5], NULL, 10);
		if (size <= 0 || size > MAX_MSG)
			return usage();
		return rr(&sa, secs, size);
	}
	if (!strcmp(argv[1], "stream") && argc == 5)
		return stream(&sa, secs);
	return usage();
}
