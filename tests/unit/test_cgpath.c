// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for cgroup id -> path (src/core/cgpath.c) on a fake cgroup
 * tree in a temporary directory: a directory's inode number stands for
 * the cgroup id, as on cgroup2. And a holder's pod/cgroup column
 * (tokens__holder_where()).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "cgpath.h"
#include "tokens.h"

#define UID	"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
#define UID_	"0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0"
#define CID	"9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9"
#define POD_SLICE "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice"
#define CTR_SCOPE POD_SLICE "/cri-containerd-" CID ".scope"

static char root[64];

static void mkdirs(const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	assert_true(!mkdir(p, 0755) || errno == EEXIST);
}

static uint64_t ino(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	assert_int_equal(stat(p, &st), 0);
	return st.st_ino;
}

static int setup(void **state)
{
	char p[PATH_MAX];
	FILE *f;

	/* tmpfs where there is one: test_walk_bound makes 65,537 directories */
	snprintf(root, sizeof(root), "%s/dmt-cgpath-XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	if (!mkdtemp(root))
		return -1;
	mkdirs(CTR_SCOPE);
	mkdirs("/system.slice/containerd.service");
	mkdirs("/user.slice/user-0.slice/session-1.scope");
	/* files and symlinks are not cgroups: never matched, never followed */
	snprintf(p, sizeof(p), "%s/cgroup.procs", root);
	f = fopen(p, "w");
	if (!f)
		return -1;
	fclose(f);
	snprintf(p, sizeof(p), "%s/link", root);
	if (symlink(root, p))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

static void rmtree(const char *rel)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s%s'", root, rel);
	assert_int_equal(system(cmd), 0);
}

static void expect_path(struct cgpath *cp, uint64_t id, const char *want)
{
	char buf[DMT_CGROUP_PATH_MAX];

	assert_int_equal(cgpath__path(cp, id, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void test_resolve(void **state)
{
	uint64_t ids[] = { ino(CTR_SCOPE), ino("/user.slice/user-0.slice/session-1.scope"),
			   ino(""), ino(POD_SLICE), 0, ino(CTR_SCOPE) };
	struct cgpath *cp = cgpath__new(root);
	struct cgpath_stats st;
	char buf[64];

	assert_non_null(cp);
	assert_string_equal(cgpath__root(cp), root);
	assert_int_equal(cgpath__resolve(cp, ids, 6), 0);
	expect_path(cp, ids[0], CTR_SCOPE);
	expect_path(cp, ids[1], "/user.slice/user-0.slice/session-1.scope");
	expect_path(cp, ids[2], "/");
	expect_path(cp, ids[3], POD_SLICE);
	/* id 0 (no holder entry) is never looked for */
	assert_int_equal(cgpath__path(cp, 0, buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "");
	cgpath__stats(cp, &st);
	assert_int_equal(st.walks, 1);
	/* known ids: no walk */
	assert_int_equal(cgpath__resolve(cp, ids, 4), 0);
	cgpath__stats(cp, &st);
	assert_int_equal(st.walks, 1);
	/* a new one: one more walk, which stops once it found it */
	ids[0] = ino("/system.slice");
	assert_int_equal(cgpath__resolve(cp, ids, 1), 0);
	expect_path(cp, ids[0], "/system.slice");
	cgpath__stats(cp, &st);
	assert_int_equal(st.walks, 2);
	cgpath__free(cp);
}

/*
 * A cgroup removed before the walk: path unknown, not walked for again
 * until CGPATH_NEG_TTL_NS has passed.
 */
static void test_gone(void **state)
{
	struct cgpath *cp = cgpath__new(root);
	struct cgpath_stats st;
	char p[PATH_MAX], buf[64] = "x";
	uint64_t id;

	mkdirs("/kubepods.slice/gone.scope");
	id = ino("/kubepods.slice/gone.scope");
	snprintf(p, sizeof(p), "%s/kubepods.slice/gone.scope", root);
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(cgpath__resolve_at(cp, &id, 1, 1000), 0);
	assert_int_equal(cgpath__path(cp, id, buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "");
	assert_int_equal(cgpath__resolve_at(cp, &id, 1, 1000 + CGPATH_NEG_TTL_NS - 1), 0);
	cgpath__stats(cp, &st);
	assert_int_equal(st.walks, 1);
	assert_int_equal(st.not_found, 1);
	assert_int_equal(st.cut_short, 0);
	assert_true(st.dirs >= 9);	/* the whole tree, the symlink not followed */
	assert_true(st.dirs < 20);
	/* expired: looked for once more */
	assert_int_equal(cgpath__resolve_at(cp, &id, 1, 1000 + CGPATH_NEG_TTL_NS), 0);
	cgpath__stats(cp, &st);
	assert_int_equal(st.walks, 2);
	assert_int_equal(st.expired, 1);
	assert_int_equal(cgpath__path(cp, id, buf, sizeof(buf)), -ENOENT);
	cgpath__free(cp);

	/* no tree at all (no cgroup2 mount): every path unknown, no error */
	cp = cgpath__new("/nonexistent/dmt-cgpath");
	id = 1;
	assert_int_equal(cgpath__resolve(cp, &id, 1), 0);
	assert_int_equal(cgpath__path(cp, id, buf, sizeof(buf)), -ENOENT);
	cgpath__free(cp);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Issue 37, finding 6: a walk stopped at its depth bound did not see the
 * cgroup; that is said (-ERANGE, cut_short), not "not found", and once the
 * tree is shallower again (the cgroup moved up: same inode) a later walk
 * finds it.
 */
static void test_depth_bound(void **state)
{
	char deep[PATH_MAX] = "/deep", from[PATH_MAX], to[PATH_MAX], buf[64];
	struct cgpath *cp = cgpath__new(root);
	struct dmt_holder_snap h = { .pid = 7 };
	struct cgpath_stats st;
	uint64_t id, t0 = mono_ns();	/* fill_holders() reads the clock */

	for (int i = 0; i < CGPATH_MAX_DEPTH + 1; i++)
		strcat(deep, "/d");
	mkdirs(deep);
	id = ino(deep);	/* at depth CGPATH_MAX_DEPTH + 2 */
	h.cgroup_id = id;
	assert_int_equal(cgpath__resolve_at(cp, &id, 1, t0), 0);
	assert_int_equal(cgpath__path(cp, id, buf, sizeof(buf)), -ERANGE);
	cgpath__stats(cp, &st);
	assert_int_equal(st.cut_short, 1);
	assert_int_equal(st.not_found, 0);
	assert_int_equal(cgpath__fill_holders(cp, &h, 1), 0);
	assert_true(h.cgroup_cut);
	{
		char w[DMT_CGROUP_PATH_MAX + 64];

		tokens__holder_where(&h, true, w, sizeof(w));
		assert_non_null(strstr(w, "path unknown: cgroup walk stopped at its bound"));
	}
	/* the tree shrinks: the cgroup is now at depth 2 */
	snprintf(from, sizeof(from), "%s%s", root, deep);
	snprintf(to, sizeof(to), "%s/deep/up", root);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(ino("/deep/up"), id);
	assert_int_equal(cgpath__resolve_at(cp, &id, 1, t0 + 2 * CGPATH_NEG_TTL_NS), 0);
	assert_int_equal(cgpath__path(cp, id, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/deep/up");
	assert_int_equal(cgpath__fill_holders(cp, &h, 1), 0);
	assert_false(h.cgroup_cut);
	cgpath__free(cp);
	rmtree("/deep");
}

/* The same for the directory bound: past CGPATH_MAX_WALK, nothing is "not found". */
static void test_walk_bound(void **state)
{
	char p[PATH_MAX], buf[64];
	struct cgpath *cp = cgpath__new(root);
	struct cgpath_stats st;
	uint64_t id = (1ULL << 42) + 1;	/* no such inode */
	int n;

	mkdirs("/wide");
	for (int i = 0; i <= CGPATH_MAX_WALK; i++) {
		snprintf(p, sizeof(p), "%s/wide/%d", root, i);
		assert_int_equal(mkdir(p, 0755), 0);
	}
	assert_int_equal(cgpath__resolve_at(cp, &id, 1, 0), 0);
	assert_int_equal(cgpath__path(cp, id, buf, sizeof(buf)), -ERANGE);
	cgpath__stats(cp, &st);
	assert_int_equal(st.truncated, 1);
	assert_int_equal(st.cut_short, 1);
	assert_int_equal(st.not_found, 0);
	/* the tree shrinks; the next look, once expired, sees all of it */
	for (n = 0; n <= CGPATH_MAX_WALK; n++) {
		snprintf(p, sizeof(p), "%s/wide/%d", root, n);
		assert_int_equal(rmdir(p), 0);
	}
	assert_int_equal(cgpath__resolve_at(cp, &id, 1, CGPATH_NEG_TTL_NS / 2), 0);
	cgpath__stats(cp, &st);
	assert_int_equal(st.walks, 1);	/* not before it expired */
	assert_int_equal(cgpath__resolve_at(cp, &id, 1, CGPATH_NEG_TTL_NS), 0);
	assert_int_equal(cgpath__path(cp, id, buf, sizeof(buf)), -ENOENT);
	cgpath__stats(cp, &st);
	assert_int_equal(st.walks, 2);
	assert_int_equal(st.not_found, 1);
	cgpath__free(cp);
	rmtree("/wide");
}

/* A path longer than the buffer keeps its last components. */
static void test_long_path(void **state)
{
	struct cgpath *cp = cgpath__new(root);
	uint64_t id = ino(CTR_SCOPE);
	char buf[96];

	assert_int_equal(cgpath__resolve(cp, &id, 1), 0);
	assert_int_equal(cgpath__path(cp, id, buf, sizeof(buf)), 0);
	assert_true(strlen(buf) < sizeof(buf));
	assert_string_equal(buf, "/.../cri-containerd-" CID ".scope");
	assert_int_equal(cgpath__path(cp, id, buf, 4), -ENOSPC);
	cgpath__free(cp);
}

/* The cache is bounded: ids no recent resolve asked for make room. */
static void test_cache_bound(void **state)
{
	struct cgpath *cp = cgpath__new(root);
	uint64_t *ids = calloc(CGPATH_MAX_CACHE, sizeof(*ids));
	uint64_t more[2] = { ino(CTR_SCOPE), (1ULL << 40) + 5 };
	struct cgpath_stats st;

	assert_non_null(ids);
	for (size_t i = 0; i < CGPATH_MAX_CACHE; i++)
		ids[i] = (1ULL << 40) + i;	/* no such inode in the tree */
	assert_int_equal(cgpath__resolve(cp, ids, CGPATH_MAX_CACHE), 0);
	cgpath__stats(cp, &st);
	assert_int_equal(st.walks, 1);
	assert_int_equal(st.evicted, 0);
	/* one id new, one cached: the full cache drops what was not asked for */
	assert_int_equal(cgpath__resolve(cp, more, 2), 0);
	cgpath__stats(cp, &st);
	assert_int_equal(st.walks, 2);
	assert_int_equal(st.evicted, CGPATH_MAX_CACHE - 1);
	expect_path(cp, more[0], CTR_SCOPE);
	/* the one asked for again stayed: known, not walked for */
	assert_int_equal(cgpath__resolve(cp, &more[1], 1), 0);
	cgpath__stats(cp, &st);
	assert_int_equal(st.walks, 2);
	free(ids);
	cgpath__free(cp);
}

static const char *where(const struct dmt_holder_snap *h, bool short_id)
{
	static char buf[DMT_CGROUP_PATH_MAX + 64];

	return tokens__holder_where(h, short_id, buf, sizeof(buf));
}

/* Holders get their paths; the column says pod, path, or why not. */
static void test_holders(void **state)
{
	struct dmt_holder_snap h[4] = {
		{ .pid = 1, .cgroup_id = ino(CTR_SCOPE) },
		{ .pid = 2, .cgroup_id = ino("/user.slice/user-0.slice/session-1.scope") },
		{ .pid = 3, .cgroup_id = 1ULL << 41 },	/* gone */
		{ .pid = 4 },				/* no holder entry */
	};
	struct cgpath *cp = cgpath__new(root);

	assert_int_equal(cgpath__fill_holders(cp, h, 4), 0);
	assert_string_equal(h[0].cgroup, CTR_SCOPE);
	assert_string_equal(h[1].cgroup, "/user.slice/user-0.slice/session-1.scope");
	assert_string_equal(h[2].cgroup, "");
	assert_string_equal(h[3].cgroup, "");
	assert_string_equal(where(&h[0], true), "pod " UID " containerd://9a8b7c6d5e4f");
	assert_string_equal(where(&h[0], false), "pod " UID " containerd://" CID);
	assert_string_equal(where(&h[1], true), "/user.slice/user-0.slice/session-1.scope");
	assert_string_equal(where(&h[2], true), "cgroup 2199023255552 (path unknown)");
	assert_string_equal(where(&h[3], true), "?");
	/* the pod's own cgroup; cgroupfs driver with a bare containerd id */
	snprintf(h[0].cgroup, sizeof(h[0].cgroup), POD_SLICE);
	assert_string_equal(where(&h[0], true), "pod " UID);
	snprintf(h[0].cgroup, sizeof(h[0].cgroup), "/kubepods/besteffort/pod" UID "/" CID);
	assert_string_equal(where(&h[0], true), "pod " UID " 9a8b7c6d5e4f");
	/* kubepods, but not a pod we can parse: shown as the path, and why */
	snprintf(h[0].cgroup, sizeof(h[0].cgroup), "/kubepods.slice/foo.scope");
	assert_string_equal(where(&h[0], true),
			    "/kubepods.slice/foo.scope (not a pod: malformed kubelet path)");
	/* issue 37: named after a pod where anyone may make directories */
	snprintf(h[0].cgroup, sizeof(h[0].cgroup), "/user.slice/user-1000.slice/"
		 "user@1000.service/kubepods/besteffort/pod" UID "/" CID);
	assert_string_equal(where(&h[0], true), "/user.slice/user-1000.slice/user@1000.service/"
			    "kubepods/besteffort/pod" UID "/" CID
			    " (not a pod: kubepods outside the kubelet's root)");
	snprintf(h[0].cgroup, sizeof(h[0].cgroup), "/.../kubepods/pod" UID "/" CID);
	assert_string_equal(where(&h[0], true), "/.../kubepods/pod" UID "/" CID
			    " (not a pod: path cut short)");
	assert_int_equal(cgpath__fill_holders(cp, NULL, 0), 0);
	cgpath__free(cp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_depth_bound),
		cmocka_unit_test(test_walk_bound),
		cmocka_unit_test(test_long_path),
		cmocka_unit_test(test_cache_bound),
		cmocka_unit_test(test_holders),
	};

	return cmocka_run_group_tests_name("cgpath", tests, setup, teardown);
}
