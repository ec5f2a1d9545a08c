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
#include "snapshot.h"
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
		if (socks[i].flags & DMT_ITER_MANUAL) {
			h[i].manual = 1;
			h[i].binding_id = socks[i].binding_id;
		}
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

int tok_iter__add_urefs(struct dmt_tok_entry **toks, size_t *n, uint32_t binding_id,
			const struct dmt_uref_rec *recs, size_t nr, uint64_t now_ns)
{
	struct dmt_tok_entry *t;
	size_t k = 0;

	if (!nr)
		return 0;
	t = realloc(*toks, (*n + nr) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	*toks = t;
	t += *n;
	for (size_t i = 0; i < nr; i++) {
		if (!recs[i].uref)
			continue;
		memset(&t[k], 0, sizeof(t[k]));
		t[k].key.token = recs[i].niov_idx;
		t[k].key.pad = binding_id;
		t[k].val.ts_ns = now_ns;
		t[k].val.binding_id = binding_id;
		t[k].val.niov_idx = recs[i].niov_idx;
		t[k].val.count = recs[i].uref;
		k++;
	}
	*n += k;
	return 0;
}

int tok_iter__manual_holders(const struct dmt_iter_sock *socks, size_t ns,
			     const struct dmt_holder *holders, struct tok_agg *agg)
{
	size_t add = 0;
	struct dmt_holder_snap *h;

	for (size_t i = 0; i < ns; i++)
		add += !!(socks[i].flags & DMT_ITER_MANUAL);
	if (!add)
		return 0;
	h = realloc(agg->holders, (agg->n_holders + add) * sizeof(*h));
	if (!h)
		return -ENOMEM;
	agg->holders = h;
	for (size_t i = 0; i < ns; i++) {
		if (!(socks[i].flags & DMT_ITER_MANUAL))
			continue;
		h = &agg->holders[agg->n_holders++];
		memset(h, 0, sizeof(*h));
		h->sk = socks[i].sk;
		h->binding_id = socks[i].binding_id;
		h->cgroup_id = socks[i].cgroup_id;
		h->sock_ino = socks[i].ino;
		h->pid = holders[i].tgid;
		memcpy(h->comm, holders[i].comm, sizeof(h->comm));
		h->comm[sizeof(h->comm) - 1] = '\0';
		h->manual = true;
		h->counts_unknown = true;
	}
	return 0;
}

static int cmp_sock_sk(const void *a, const void *b)
{
	uint64_t x = ((const struct dmt_iter_sock *)a)->sk, y = ((const struct dmt_iter_sock *)b)->sk;

	return x < y ? -1 : x > y;
}

void tok_iter__holder_inodes(const struct dmt_iter_sock *socks, size_t ns, struct tok_agg *agg)
{
	struct dmt_iter_sock *by_sk;

	if (!ns || !agg->n_holders)
		return;
	by_sk = malloc(ns * sizeof(*by_sk));
	if (by_sk) {
		memcpy(by_sk, socks, ns * sizeof(*by_sk));
		qsort(by_sk, ns, sizeof(*by_sk), cmp_sock_sk);
	}
	for (size_t i = 0; i < agg->n_holders; i++) {
		struct dmt_holder_snap *h = &agg->holders[i];
		const struct dmt_iter_sock key = { .sk = h->sk }, *s = NULL;

		if (by_sk)
			s = bsearch(&key, by_sk, ns, sizeof(*by_sk), cmp_sock_sk);
		for (size_t k = 0; !by_sk && !s && k < ns; k++)	/* no memory: look */
			if (socks[k].sk == h->sk)
				s = &socks[k];
		if (s && !h->sock_ino)
			h->sock_ino = s->ino;
	}
	free(by_sk);
}

uint32_t tok_iter__held_why(uint32_t iter_flags, const struct dmt_iter_sock *socks, size_t ns,
			    const struct tok_uref_status *urefs, size_t nu, bool uref_kernel,
			    uint32_t binding_id)
{
	bool manual = false;

	if (iter_flags & ~(uint32_t)DMT_ITER_MANUAL)
		return DMT_HELD_ITER_INCOMPLETE;
	if (uref_kernel) {
		for (size_t i = 0; i < nu; i++)
			if (urefs[i].binding_id == binding_id)
				return urefs[i].flags ? DMT_HELD_UREF_INCOMPLETE :
							DMT_HELD_NO_REASON;
		return DMT_HELD_UREF_INCOMPLETE;
	}
	for (size_t i = 0; i < ns && !manual; i++)
		manual = (socks[i].flags & DMT_ITER_MANUAL) &&
			 (!socks[i].binding_id || socks[i].binding_id == binding_id);
	if (manual || ((iter_flags & DMT_ITER_MANUAL) && !ns))
		return DMT_HELD_NO_UREF;
	return DMT_HELD_NO_REASON;
}

const char *tok_iter__uref_why(uint32_t flags, char *buf, size_t len)
{
	static const struct { uint32_t bit; const char *why; } tab[] = {
		{ DMT_UREF_NOFIELD, "the kernel's net_iov has no uref" },
		{ DMT_UREF_UNKNOWN, "not a live binding devmemtop saw created" },
		{ DMT_UREF_LAYOUT, "binding or net_iov layout not known to this devmemtop" },
		{ DMT_UREF_FAULT, "a kernel read failed during the net_iov walk" },
		{ DMT_UREF_TRUNC_NIOVS, "more than 4194304 net_iovs in the binding (walk bound)" },
		{ DMT_UREF_TRUNC_RECS, "more than 262144 net_iovs with tokens (record bound)" },
		{ DMT_UREF_NEGATIVE, "a net_iov's uref count is below 0" },
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
