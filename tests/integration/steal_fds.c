// SPDX-License-Identifier: GPL-2.0
/*
 * What another process can do with a running devmemtop's file descriptors
 * (85-steal-fds.sh, issue 26 item 1).
 *
 *   steal_fds take PID
 *	Try pidfd_getfd on every fd number 0..1023 of PID. Prints how many
 *	fds, and how many BPF objects among them, it got. Exit 0 when it got
 *	none (the first error is printed), 1 when it got any, 2 on usage.
 *
 *   steal_fds read PID ADDR
 *	As root (pidfd_getfd then works on any process): take PID's fds, find
 *	its walk_binding and light_read programs, its pools map and its .bss,
 *	and test-run both programs on ADDR, a kernel address the exporter never
 *	recorded (light_read after writing ADDR into the pools map, as a stolen
 *	writable fd allows). Prints one line per program:
 *	  walk_binding: err E id I ifindex X size S total T free F
 *	  light_read: status S id I hold H release R
 *	Exit 0 when both ran, 2 when something was missing.
 *
 * Built against build/skel/devmemtop.skel.h for the .bss layout and
 * bpf/devmemtop.h for the structures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include "devmemtop.h"
#include "devmemtop.skel.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#define MAX_FD 1024

struct stolen {
	int walk, light, pools, bss;
};

/* 'p' for a BPF program, 'm' for a map, 0 for anything else */
static int bpf_kind(int fd)
{
	char path[64], link[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = '\0';
	if (!strcmp(link, "anon_inode:bpf-prog"))
		return 'p';
	if (!strcmp(link, "anon_inode:bpf-map"))
		return 'm';
	return strncmp(link, "anon_inode:bpf", 14) ? 0 : '?';
}

/* Take every fd of pid into ours; fills st by object name. Returns fds taken. */
static int take(int pid, struct stolen *st, int *first_err)
{
	int pidfd, n = 0, bpf = 0;

	*first_err = 0;
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		*first_err = errno;
		return -1;
	}
	for (int i = 0; i < MAX_FD; i++) {
		struct bpf_prog_info pi = {};
		struct bpf_map_info mi = {};
		__u32 len;
		int kind, fd = syscall(SYS_pidfd_getfd, pidfd, i, 0);

		if (fd < 0) {
			if (errno != EBADF && !*first_err)
				*first_err = errno;
			continue;
		}
		n++;
		kind = bpf_kind(fd);
		if (!kind)
			continue;
		bpf++;
		len = sizeof(pi);
		if (kind == 'p' && !bpf_obj_get_info_by_fd(fd, &pi, &len)) {
			if (!strcmp(pi.name, "walk_binding"))
				st->walk = fd;
			else if (!strcmp(pi.name, "light_read"))
				st->light = fd;
			continue;
		}
		len = sizeof(mi);
		if (kind == 'm' && !bpf_obj_get_info_by_fd(fd, &mi, &len)) {
			size_t l = strlen(mi.name);

			if (!strcmp(mi.name, "pools"))
				st->pools = fd;
			/* devmemtop's own .bss, not the token iterator's (tokiter.bss) */
			else if (l >= 4 && !strcmp(mi.name + l - 4, ".bss") &&
				 !strncmp(mi.name, "devmemt", 7))
				st->bss = fd;
		}
	}
	printf("took %d fds (%d BPF objects) of pid %d\n", n, bpf, pid);
	return bpf;
}

static int read_bss(int fd, struct devmemtop__bss *out)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi), zero = 0;
	char *buf;
	int err;

	if (bpf_obj_get_info_by_fd(fd, &mi, &len) || mi.value_size < sizeof(*out))
		return -1;
	buf = calloc(1, mi.value_size);
	if (!buf)
		return -1;
	err = bpf_map_lookup_elem(fd, &zero, buf);
	if (!err)
		memcpy(out, buf, sizeof(*out));
	free(buf);
	return err;
}

static int read_at(struct stolen *st, unsigned long long addr)
{
	unsigned long long args[2] = { addr, 4242 };
	struct dmt_pool_key k = { .addr = addr, .id = 4242 };
	struct dmt_pool v = { .addr = addr, .id = 4242 };
	struct devmemtop__bss bss;
	int err;

	if (st->walk < 0 || st->light < 0 || st->pools < 0 || st->bss < 0) {
		fprintf(stderr, "steal_fds: missing walk_binding %d light_read %d pools %d .bss %d\n",
			st->walk, st->light, st->pools, st->bss);
		return 2;
	}
	{
		LIBBPF_OPTS(bpf_test_run_opts, t, .ctx_in = args, .ctx_size_in = 8);

		err = bpf_prog_test_run_opts(st->walk, &t);
		if (err || read_bss(st->bss, &bss)) {
			fprintf(stderr, "steal_fds: test run of walk_binding: %s\n", strerror(errno));
			return 2;
		}
		printf("walk_binding: err %d id %u ifindex %d size %llu total %llu free %llu\n",
		       bss.walk_out.err, bss.walk_out.id, bss.walk_out.ifindex,
		       (unsigned long long)bss.walk_out.dmabuf_size,
		       (unsigned long long)bss.walk_out.total_niovs,
		       (unsigned long long)bss.walk_out.free_niovs);
	}
	/* a stolen fd of the pools map is writable: plant the address there */
	if (bpf_map_update_elem(st->pools, &k, &v, BPF_ANY))
		printf("pools: cannot write: %s\n", strerror(errno));
	{
		LIBBPF_OPTS(bpf_test_run_opts, t, .ctx_in = args, .ctx_size_in = sizeof(args));

		err = bpf_prog_test_run_opts(st->light, &t);
		if (err || read_bss(st->bss, &bss)) {
			fprintf(stderr, "steal_fds: test run of light_read: %s\n", strerror(errno));
			return 2;
		}
		printf("light_read: status %u id %u hold %u release %u\n",
		       bss.light_out.status, bss.light_out.id, bss.light_out.hold_cnt,
		       bss.light_out.release_cnt);
	}
	bpf_map_delete_elem(st->pools, &k);
	return 0;
}

int main(int argc, char **argv)
{
	struct stolen st = { -1, -1, -1, -1 };
	int n, e;

	if (argc == 3 && !strcmp(argv[1], "take")) {
		n = take(atoi(argv[2]), &st, &e);
		if (n <= 0)
			printf("no BPF fd taken: %s\n", e ? strerror(e) : "none open");
		return n > 0;
	}
	if (argc == 4 && !strcmp(argv[1], "read")) {
		if (take(atoi(argv[2]), &st, &e) <= 0) {
			fprintf(stderr, "steal_fds: no BPF fd taken: %s\n", strerror(e));
			return 2;
		}
		return read_at(&st, strtoull(argv[3], NULL, 0));
	}
	fprintf(stderr, "usage: steal_fds take PID | steal_fds read PID ADDR\n");
	return 2;
}
