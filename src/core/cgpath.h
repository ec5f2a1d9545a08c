/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 id -> path (issue 24, holders by pod). The BPF side keeps the
 * cgroup id of the task that received a holder's first token
 * (bpf_get_current_cgroup_id()); on cgroup v2 that id is the inode number
 * of the cgroup's directory, so a path is found by walking the cgroup2
 * mount for the inode. Results are cached (found and not found: ids are
 * never reused while the system runs, so a cgroup that is gone stays
 * gone), the cache and each walk are bounded.
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

struct cgpath_stats {
	uint64_t walks;		/* walks of the cgroup tree */
	uint64_t dirs;		/* directories they visited */
	uint64_t truncated;	/* walks stopped at CGPATH_MAX_WALK */
	uint64_t evicted;	/* cache entries dropped for room */
	uint64_t not_found;	/* ids a walk looked for and did not find */
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
 * hold yet (0 ids are skipped). 0 or -errno (-ENOMEM); a walk that finds
 * nothing is not an error.
 */
int cgpath__resolve(struct cgpath *cp, const uint64_t *ids, size_t n);

/*
 * The path of id relative to the root ("/" for the root itself, else
 * "/a/b"), after cgpath__resolve(). Longer than len: its last
 * components, "/..." first. -ENOENT: not found (the cgroup was gone before
 * the walk, or is outside the mount), buf "".
 */
int cgpath__path(struct cgpath *cp, uint64_t id, char *buf, size_t len);

/* Each holder's cgroup path from its cgroup_id ("" when unknown). */
int cgpath__fill_holders(struct cgpath *cp, struct dmt_holder_snap *h, size_t n);

void cgpath__stats(const struct cgpath *cp, struct cgpath_stats *st);

#endif /* DEVMEMTOP_CGPATH_H */
