// SPDX-License-Identifier: GPL-2.0
/* Held frag tokens read at snapshot time: see tokiter.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tokiter.h"

int tok_iter__entries(const struct dmt_iter_sock *socks, size_t ns,
		     const struct dmt_iter_rec *recs, size_t nr,
		     struct dmt_tok_entry **toks, size_t *n, struct dmt_holder **holders,
		     size_t *nh)
{
	struct dmt_tok_entry *t = NULL;
	struct dmt_holder *h = NULL;
	int err = -EINVAL;

	*toks = NULL;
	*holders = NULL;
	*n = *nh = 0;
	for (size_t i = 0; i < ns; i++)
		if (socks[i].first_rec > nr || socks[i].tokens > nr - socks[i].first_rec)
			return -EINVAL;
	t = calloc(nr ? nr : 1, sizeof(*t));
	h = calloc(ns ? ns : 1, sizeof(*h));
	if (!t || !h) {
		err = -ENOMEM;
		goto err;
	}
	for (size_t i = 0; i < ns; i++) {
		h[i].sk = socks[i].sk;
		h[i].cgroup_id = socks[i].cgroup_id;
		if (socks[i].tokens)
			h[i].binding_id = recs[socks[i].first_rec].binding_id;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct dmt_iter_sock *s;

		if (recs[i].sock >= ns)
			goto err;
		s = &socks[recs[i].sock];
		if (i < s->first_rec || i - s->first_rec >= s->tokens)
			goto err;	/* a record outside its socket's range */
		t[i].key.sk = s->sk;
		t[i].key.token = recs[i].token;
		t[i].val.binding_id = recs[i].binding_id;
		t[i].val.niov_idx = recs[i].niov_idx;
	}
	*toks = t;
	*holders = h;
	*n = nr;
	*nh = ns;
	return 0;
err:
	free(t);
	free(h);
	return err;
}

const char *tok_iter__why(uint32_t flags, char *buf, size_t len)
{
	static const struct { uint32_t bit; const char *why; } tab[] = {
		{ DMT_ITER_LAYOUT, "net_iov owner layout not known to this devmemtop" },
		{ DMT_ITER_FAULT, "a kernel read failed during the xarray walk" },
		{ DMT_ITER_TRUNC_RECS, "more than 262144 held tokens (iterator bound)" },
		{ DMT_ITER_TRUNC_SOCKS, "more than 4096 sockets holding tokens (iterator bound)" },
		{ DMT_ITER_TRUNC_STEPS, "a socket's xarray walk hit its 1048576-slot bound" },
		{ DMT_ITER_DEEP, "a token xarray deeper than 8 levels" },
		{ DMT_ITER_PAGE, "a socket holds a page, not a net_iov, under a token" },
		{ DMT_ITER_MANUAL, "a socket reads with SO_DEVMEM_AUTORELEASE off: its tokens "
				   "are not in its xarray" },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (flags & tab[i].bit) {
			snprintf(buf, len, "%s", tab[i].why);
			return buf;
		}
	return NULL;
}

static int ino_index(const uint64_t *inos, size_t n, uint64_t ino)
{
	for (size_t i = 0; i < n; i++)
		if (inos[i] == ino)
			return (int)i;
	return -1;
}

/* one process: its socket fds against the inodes still unfound */
static size_t scan_pid(int procfd, const char *pid, const uint64_t *inos, size_t n,
		       uint32_t *pids, char (*comms)[16])
{
	char path[300], link[64];
	struct dirent *de;
	size_t found = 0;
	DIR *d;
	int fd;

	snprintf(path, sizeof(path), "%s/fd", pid);
	fd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		unsigned long long ino;
		ssize_t l;
		int k;

		if (de->d_name[0] == '.')
			continue;
		l = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if (sscanf(link, "socket:[%llu]", &ino) != 1)
			continue;
		k = ino_index(inos, n, ino);
		if (k < 0 || pids[k])
			continue;
		pids[k] = (uint32_t)strtoul(pid, NULL, 10);
		snprintf(path, sizeof(path), "%s/comm", pid);
		fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			l = read(fd, comms[k], 15);
			comms[k][l > 0 ? l : 0] = '\0';
			comms[k][strcspn(comms[k], "\n")] = '\0';
			close(fd);
		}
		found++;
	}
	closedir(d);
	return found;
}

size_t tok_iter__socket_pids(const char *proc, const uint64_t *inos, size_t n, uint32_t *pids,
			    char (*comms)[16])
{
	struct dirent *de;
	size_t found = 0;
	int procfd;
	DIR *d;

	memset(pids, 0, n * sizeof(*pids));
	memset(comms, 0, n * sizeof(*comms));
	if (!n)
		return 0;
	procfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return 0;
	d = fdopendir(dup(procfd));
	while (d && found < n && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			found += scan_pid(procfd, de->d_name, inos, n, pids, comms);
	if (d)
		closedir(d);
	close(procfd);
	return found;
}
