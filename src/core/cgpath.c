// SPDX-License-Identifier: GPL-2.0
/* cgroup v2 id -> path by walking the cgroup2 mount (cgpath.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include "cgpath.h"
#include "tokens.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC	0x63677270
#endif

/*
 * One id the cache knows: path NULL when the walk did not find it, until
 * expires (then walked for again); cut: that walk stopped at a bound
 * before it saw the whole tree.
 */
struct cgent {
	uint64_t id;
	uint64_t gen;		/* the last cgpath__resolve() that asked for it */
	uint64_t expires_ns;	/* not found: look again from then on */
	char *path;
	bool cut;
};

struct cgpath {
	char root[PATH_MAX];	/* "" when there is no cgroup2 tree to walk */
	int root_fd;		/* opened at creation: walks need no access above it */
	struct cgent *ents;	/* sorted by id */
	size_t n;
	uint64_t gen;
	struct cgpath_stats st;
};

/* One walk: the ids it looks for (sorted) and what it found. */
struct walk {
	const uint64_t *want;
	char **found;		/* found[i]: the path of want[i] */
	size_t n_want, left;
	size_t visited;		/* directories so far, at most CGPATH_MAX_WALK */
	dev_t dev;
	char path[PATH_MAX];
	struct cgpath_stats *st;
	bool stop;
	bool cut;		/* a bound left part of the tree unseen */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_ent(const void *a, const void *b)
{
	return cmp_u64(&((const struct cgent *)a)->id, &((const struct cgent *)b)->id);
}

static bool is_cgroup2(const char *dir)
{
	struct statfs sf;

	return !statfs(dir, &sf) && (unsigned long)sf.f_type == CGROUP2_SUPER_MAGIC;
}

struct cgpath *cgpath__new(const char *root)
{
	static const char *const host[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct cgpath *cp = calloc(1, sizeof(*cp));

	if (!cp)
		return NULL;
	cp->root_fd = -1;
	if (root) {
		snprintf(cp->root, sizeof(cp->root), "%s", root);
	} else {
		for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++) {
			if (is_cgroup2(host[i])) {
				snprintf(cp->root, sizeof(cp->root), "%s", host[i]);
				break;
			}
		}
	}
	/*
	 * Now, while the caller may still be root: after a privilege drop the
	 * path to the mount may not be searchable any more, the tree still is.
	 */
	if (cp->root[0])
		cp->root_fd = open(cp->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cp->root_fd < 0)
		cp->root[0] = '\0';
	return cp;
}

void cgpath__free(struct cgpath *cp)
{
	if (!cp)
		return;
	for (size_t i = 0; i < cp->n; i++)
		free(cp->ents[i].path);
	free(cp->ents);
	if (cp->root_fd >= 0)
		close(cp->root_fd);
	free(cp);
}

const char *cgpath__root(const struct cgpath *cp)
{
	return cp->root;
}

void cgpath__stats(const struct cgpath *cp, struct cgpath_stats *st)
{
	*st = cp->st;
}

static struct cgent *find(const struct cgpath *cp, uint64_t id)
{
	struct cgent key = { .id = id };

	if (!cp->n)
		return NULL;
	return bsearch(&key, cp->ents, cp->n, sizeof(*cp->ents), cmp_ent);
}

/* A directory seen: found if its inode is wanted. */
static void walk_match(struct walk *w, uint64_t ino)
{
	const uint64_t *k = bsearch(&ino, w->want, w->n_want, sizeof(*w->want), cmp_u64);
	size_t i;

	if (!k)
		return;
	i = k - w->want;
	if (w->found[i])
		return;
	w->found[i] = strdup(w->path[0] ? w->path : "/");
	if (w->found[i] && !--w->left)
		w->stop = true;
}

/* Walk the directory open as dfd, whose path (relative to the root) is w->path. */
static void walk_dir(struct walk *w, int dfd, int depth)
{
	size_t plen = strlen(w->path);
	struct dirent *de;
	DIR *d = fdopendir(dfd);

	if (!d) {
		close(dfd);
		return;
	}
	while (!w->stop && (de = readdir(d))) {
		struct stat st;
		uint64_t ino = de->d_ino;
		int cfd;

		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/*
		 * kernfs gives each entry's type and inode (= cgroup id) in the
		 * directory itself: a stat only where a filesystem does not
		 */
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
			    !S_ISDIR(st.st_mode) || st.st_dev != w->dev)
				continue;
			ino = st.st_ino;
		}
		if (++w->visited > CGPATH_MAX_WALK) {
			w->st->truncated++;
			w->stop = true;
			w->cut = true;
			break;
		}
		if (plen + 1 + strlen(de->d_name) >= sizeof(w->path)) {
			w->cut = true;	/* a path longer than PATH_MAX: not ours to show */
			continue;
		}
		snprintf(w->path + plen, sizeof(w->path) - plen, "/%s", de->d_name);
		walk_match(w, ino);
		/* what is below the depth bound was not seen */
		if (!w->stop && depth >= CGPATH_MAX_DEPTH)
			w->cut = true;
		if (!w->stop && depth < CGPATH_MAX_DEPTH) {
			cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				     O_CLOEXEC);
			if (cfd >= 0)
				walk_dir(w, cfd, depth + 1);
		}
		w->path[plen] = '\0';
	}
	closedir(d);
}

/*
 * One walk for want[0..n) (sorted, distinct, none cached); true when it
 * stopped at a bound before it saw the whole tree.
 */
static bool walk(struct cgpath *cp, const uint64_t *want, size_t n, char **found)
{
	struct walk w = { .want = want, .found = found, .n_want = n, .left = n, .st = &cp->st };
	struct stat st;
	int fd;

	if (cp->root_fd < 0)
		return false;
	/* a descriptor of its own: readdir moves its offset */
	fd = openat(cp->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st)) {
		close(fd);
		return false;
	}
	cp->st.walks++;
	w.dev = st.st_dev;
	walk_match(&w, st.st_ino);	/* the root cgroup itself */
	if (!w.stop)
		walk_dir(&w, fd, 1);
	else
		close(fd);
	cp->st.dirs += w.visited;
	return w.cut && w.left;
}

/* Room for k more entries: drop those no recent resolve asked for. */
static size_t make_room(struct cgpath *cp, size_t k)
{
	size_t o = 0;

	if (cp->n + k <= CGPATH_MAX_CACHE)
		return k;
	for (size_t i = 0; i < cp->n; i++) {
		if (cp->ents[i].gen == cp->gen) {
			cp->ents[o++] = cp->ents[i];
		} else {
			free(cp->ents[i].path);
			cp->st.evicted++;
		}
	}
	cp->n = o;
	return cp->n + k <= CGPATH_MAX_CACHE ? k : CGPATH_MAX_CACHE - cp->n;
}

/* Drop the not-found entries that expired: their ids are walked for again. */
static void expire(struct cgpath *cp, uint64_t now_ns)
{
	size_t o = 0;

	for (size_t i = 0; i < cp->n; i++)
		if (cp->ents[i].path || now_ns < cp->ents[i].expires_ns)
			cp->ents[o++] = cp->ents[i];
		else
			cp->st.expired++;
	cp->n = o;
}

int cgpath__resolve(struct cgpath *cp, const uint64_t *ids, size_t n)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return cgpath__resolve_at(cp, ids, n, (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
}

int cgpath__resolve_at(struct cgpath *cp, const uint64_t *ids, size_t n, uint64_t now_ns)
{
	uint64_t *want = NULL;
	char **found = NULL;
	size_t nw = 0, room;
	bool cut;
	int err = 0;

	cp->gen++;
	expire(cp, now_ns);
	if (n && !(want = malloc(n * sizeof(*want))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct cgent *e = ids[i] ? find(cp, ids[i]) : NULL;

		if (e)
			e->gen = cp->gen;
		else if (ids[i])
			want[nw++] = ids[i];
	}
	if (!nw)
		goto out;
	qsort(want, nw, sizeof(*want), cmp_u64);
	room = 0;
	for (size_t i = 0; i < nw; i++)	/* distinct */
		if (!room || want[room - 1] != want[i])
			want[room++] = want[i];
	nw = room;
	found = calloc(nw, sizeof(*found));
	if (!found) {
		err = -ENOMEM;
		goto out;
	}
	cut = walk(cp, want, nw, found);
	for (size_t i = 0; i < nw; i++) {
		cp->st.not_found += !found[i] && !cut;
		cp->st.cut_short += !found[i] && cut;
	}
	room = make_room(cp, nw);
	if (room) {
		struct cgent *ne = realloc(cp->ents, (cp->n + room) * sizeof(*ne));

		if (!ne) {
			err = -ENOMEM;
			goto out;
		}
		cp->ents = ne;
	}
	for (size_t i = 0; i < room; i++) {
		cp->ents[cp->n++] = (struct cgent){ .id = want[i], .gen = cp->gen,
						    .path = found[i], .cut = !found[i] && cut,
						    .expires_ns = now_ns + CGPATH_NEG_TTL_NS };
		found[i] = NULL;
	}
	qsort(cp->ents, cp->n, sizeof(*cp->ents), cmp_ent);
out:
	for (size_t i = 0; found && i < nw; i++)
		free(found[i]);
	free(found);
	free(want);
	return err;
}

int cgpath__path(struct cgpath *cp, uint64_t id, char *buf, size_t len)
{
	const struct cgent *e = id ? find(cp, id) : NULL;
	const char *p, *t;
	size_t plen;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	if (e && !e->path && e->cut)
		return -ERANGE;
	if (!e || !e->path)
		return -ENOENT;
	p = e->path;
	plen = strlen(p);
	if (plen < len) {
		memcpy(buf, p, plen + 1);
		return 0;
	}
	if (len < 8)
		return -ENOSPC;
	/* the last components, which name the pod and the container */
	t = p + plen - (len - 5);
	snprintf(buf, len, "/...%s", strchr(t, '/') ? strchr(t, '/') : t);
	return 0;
}

int cgpath__fill_holders(struct cgpath *cp, struct dmt_holder_snap *h, size_t n)
{
	uint64_t *ids;
	int err;

	if (!n)
		return 0;
	ids = malloc(n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		ids[i] = h[i].cgroup_id;
	err = cgpath__resolve(cp, ids, n);
	for (size_t i = 0; i < n; i++)
		h[i].cgroup_cut = cgpath__path(cp, h[i].cgroup_id, h[i].cgroup,
					       sizeof(h[i].cgroup)) == -ERANGE;
	free(ids);
	return err;
}
