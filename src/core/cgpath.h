/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 id -> path (issue 24, holders by pod). The BPF side keeps the
 * cgroup id of the task that received a holder's first token
 * (bpf_get_current_cgroup_id()); on cgroup v2 that id is the inode number
 * of the cgroup's directory, so a path is found by walking the cgroup2
 * mount for the inode. Results are cached, the cache and each walk are
 * bounded. A path found stays (ids are never reused while the system
 * runs); an id not found is looked for again after CGPATH_NEG_TTL_NS (a
 * walk stopped at its bound did not see the whole tree, and the tree may
 * have shrunk below it since), and one a walk stopped short of is said to
 * be so (-ERANGE), not "not found".
 *
 *   struct cgpath *cp = cgpath__new(NULL);        the host's cgroup2 mount
 *   cgpath__resolve(cp, ids, n);                  at most one walk
 *   cgpath__path(cp, id, buf, len);               0, or -ENOENT: path unknown
 *   cgpath__fill_holders(cp, holders, n);         the two above for holders
 *   cgpath__free(cp);
 */
#ifndef DEVMEMTOP_CGPATH_H
#define DEVMEMTOP_CGPATH_H

#include <stddef.h>
#include <stdint.h>

struct dmt_holder_snap;

/* Cached ids (found or not): two holder maps' worth. */
#define CGPATH_MAX_CACHE	8192
/* Directories one walk visits at most, and how deep it goes. */
#define CGPATH_MAX_WALK		65536
#define CGPATH_MAX_DEPTH	32
/* How long an id not found stays so before a walk looks for it again. */
#define CGPATH_NEG_TTL_NS	(60ULL * 1000000000ULL)

struct cgpath_stats {
	uint64_t walks;		/* walks of the cgroup tree */
	uint64_t dirs;		/* directories they visited */
	uint64_t truncated;	/* walks stopped at CGPATH_MAX_WALK */
	uint64_t evicted;	/* cache entries dropped for room */
	uint64_t not_found;	/* ids a whole-tree walk looked for and did not find */
	uint64_t cut_short;	/* ids a walk stopped at a bound did not find */
	uint64_t expired;	/* not-found entries dropped to be looked for again */
};

/*
 * root: a cgroup2 tree to walk (tests: a directory tree); NULL: the host's,
 * /sys/fs/cgroup or /sys/fs/cgroup/unified, whichever is a cgroup2 mount.
 * The root is opened here and kept open (one descriptor), so create it
 * before dropping privileges. No cgroup2 mount, or a root that cannot be
 * opened, is not an error: every path is then unknown, and cgpath__root()
 * says "".
 */
struct cgpath *cgpath__new(const char *root);
void cgpath__free(struct cgpath *cp);
const char *cgpath__root(const struct cgpath *cp);

/*
 * Make ids[0..n) known: one walk for all of them that the cache does not
 * hold yet or held as not found for CGPATH_NEG_TTL_NS (0 ids are
 * skipped). 0 or -errno (-ENOMEM); a walk that finds nothing is not an
 * error. _at: at now_ns (CLOCK_MONOTONIC; tests pass their own).
 */
int cgpath__resolve(struct cgpath *cp, const uint64_t *ids, size_t n);
int cgpath__resolve_at(struct cgpath *cp, const uint64_t *ids, size_t n, uint64_t now_ns);

/*
 * The path of id relative to the root ("/" for the root itself, else
 * "/a/b"), after cgpath__resolve(). Longer than len: its last
 * components, "/..." first. -ENOENT: not found (the cgroup was gone before
 * the walk, or is outside the mount), -ERANGE: the walk stopped at a
 * bound (CGPATH_MAX_WALK directories, CGPATH_MAX_DEPTH, PATH_MAX) before
 * it found it; buf "" for both.
 */
int cgpath__path(struct cgpath *cp, uint64_t id, char *buf, size_t len);

/* Each holder's cgroup path from its cgroup_id ("" when unknown, cgroup_cut: why). */
int cgpath__fill_holders(struct cgpath *cp, struct dmt_holder_snap *h, size_t n);

void cgpath__stats(const struct cgpath *cp, struct cgpath_stats *st);

#endif /* DEVMEMTOP_CGPATH_H */
