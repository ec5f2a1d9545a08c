// SPDX-License-Identifier: GPL-2.0
/* Unit tests for Kubernetes pod/container ids from cgroup paths (src/core/podcg.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "podcg.h"

#define UID	"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
#define UID_	"0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0"
#define CID	"9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9"

static void expect(const char *path, const char *uid, const char *cid, const char *runtime,
		   enum podcg_qos qos, int systemd)
{
	struct podcg pc;

	if (podcg__parse(path, &pc))
		fail_msg("did not parse: %s", path);
	assert_string_equal(pc.pod_uid, uid);
	assert_string_equal(pc.container_id, cid);
	assert_string_equal(pc.runtime, runtime);
	assert_int_equal(pc.qos, qos);
	assert_int_equal(pc.driver_systemd, systemd);
}

static void test_systemd_driver(void **state)
{
	/* containerd, CRI-O, cri-dockerd; the three QoS classes */
	expect("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/"
	       "cri-containerd-" CID ".scope", UID, CID, "containerd", PODCG_BURSTABLE, 1);
	expect("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/"
	       "crio-" CID ".scope", UID, CID, "cri-o", PODCG_BESTEFFORT, 1);
	expect("/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" CID ".scope",
	       UID, CID, "docker", PODCG_GUARANTEED, 1);
	/* the pod's own cgroup: no container */
	expect("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice",
	       UID, "", "", PODCG_BURSTABLE, 1);
	/* a kubelet in its own slice (kind, some distributions), and deeper cgroups */
	expect("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	       "kubelet-kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" CID ".scope/init",
	       UID, CID, "containerd", PODCG_BESTEFFORT, 1);
	/* upper-case hex is normalised */
	expect("/kubepods.slice/kubepods-pod0F1E2D3C_4B5A_6978_8796_A5B4C3D2E1F0.slice",
	       UID, "", "", PODCG_GUARANTEED, 1);
}

static void test_cgroupfs_driver(void **state)
{
	expect("/kubepods/burstable/pod" UID "/" CID, UID, CID, "", PODCG_BURSTABLE, 0);
	expect("/kubepods/besteffort/pod" UID "/crio-" CID, UID, CID, "cri-o", PODCG_BESTEFFORT, 0);
	expect("/kubepods/pod" UID "/" CID, UID, CID, "", PODCG_GUARANTEED, 0);
	expect("/kubepods/pod" UID, UID, "", "", PODCG_GUARANTEED, 0);
}

/*
 * Issue 37, finding 2: kubepods is the kubelet's only where the kubelet
 * puts it. A directory anyone may make, named after a pod, is not a pod.
 */
static void test_impersonation(void **state)
{
	struct podcg pc;
	char path[1200];
	int n;

	/* (b) a user's delegated systemd subtree, a container's own cgroup */
	assert_int_equal(podcg__parse("/user.slice/user-1000.slice/user@1000.service/kubepods/"
				      "besteffort/pod" UID "/" CID, &pc), -EPERM);
	assert_int_equal(podcg__parse("/user.slice/user-1000.slice/user@1000.service/"
				      "kubepods.slice/kubepods-pod" UID_ ".slice", &pc), -EPERM);
	assert_int_equal(podcg__parse("/docker/1234/kubepods/burstable/pod" UID "/" CID, &pc),
			 -EPERM);
	assert_int_equal(podcg__parse("/system.slice/docker-" CID ".scope/kubelet.slice/"
				      "kubelet-kubepods.slice/kubelet-kubepods-pod" UID_ ".slice",
				      &pc), -EPERM);
	/* a slice chain broken by a name that is not its parent's */
	assert_int_equal(podcg__parse("/machine.slice/other-kubepods.slice/other-kubepods-pod"
				      UID_ ".slice", &pc), -EPERM);
	/* inside a pod: a nested kubepods is the container's, not another pod */
	assert_int_equal(podcg__parse("/kubepods.slice/kubepods-pod" UID_ ".slice/"
				      "kubepods-podffffffff_4b5a_6978_8796_a5b4c3d2e1f0.slice", &pc),
			 -EINVAL);
	/* a pod slice that is not its QoS slice's child */
	assert_int_equal(podcg__parse("/kubepods.slice/kubepods-burstable.slice/"
				      "x-pod" UID_ ".slice", &pc), -EINVAL);
	/* (a) a path cut to its tail (cgpath__path()): never parsed */
	assert_int_equal(podcg__parse("/.../kubepods/besteffort/pod" UID "/" CID, &pc),
			 -ENAMETOOLONG);
	assert_int_equal(podcg__parse("/.../kubepods.slice/kubepods-pod" UID_ ".slice", &pc),
			 -ENAMETOOLONG);
	/* pod A's container, nested directories named after pod B, cut to 511 */
	n = snprintf(path, sizeof(path), "/kubepods/pod" UID "/" CID);
	while (n < 700)
		n += snprintf(path + n, sizeof(path) - n, "/nest");
	snprintf(path + n, sizeof(path) - n, "/kubepods/pod%s/%s",
		 "ffffffff-4b5a-6978-8796-a5b4c3d2e1f0", CID);
	assert_int_equal(podcg__parse(path, &pc), 0);
	assert_string_equal(pc.pod_uid, UID);
	{
		/* what cgpath__path() keeps of it in a 512-byte field */
		const char *t = path + strlen(path) - (512 - 5);
		char cut[512];

		snprintf(cut, sizeof(cut), "/...%s", strchr(t, '/'));
		assert_int_not_equal(podcg__parse(cut, &pc), 0);
	}
	assert_string_equal(podcg_why(-EPERM), "not a pod: kubepods outside the kubelet's root");
	assert_string_equal(podcg_why(-ENAMETOOLONG), "not a pod: path cut short");
}

static void test_not_a_pod(void **state)
{
	struct podcg pc;

	assert_int_equal(podcg__parse("/", &pc), -ENOENT);
	assert_int_equal(podcg__parse("", &pc), -ENOENT);
	assert_int_equal(podcg__parse("/user.slice/user-0.slice/session-1.scope", &pc), -ENOENT);
	assert_int_equal(podcg__parse("/system.slice/containerd.service", &pc), -ENOENT);
	assert_int_equal(podcg__parse("/kubepods.slice/kubepods-burstable.slice", &pc), -ENOENT);
	assert_int_equal(podcg__parse("/kubepods/besteffort", &pc), -ENOENT);
	/* CRI-O's conmon beside the container is the pod, not a container */
	assert_int_equal(podcg__parse("/kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" CID
				      ".scope", &pc), 0);
	assert_string_equal(pc.container_id, "");
}

static void test_malformed(void **state)
{
	struct podcg pc;

	/* short, non-hex, wrong separator for the driver, trailing junk */
	assert_int_equal(podcg__parse("/kubepods/pod0f1e2d3c-4b5a-6978-8796", &pc), -EINVAL);
	assert_int_equal(podcg__parse("/kubepods/podzf1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", &pc),
			 -EINVAL);
	assert_int_equal(podcg__parse("/kubepods.slice/kubepods-pod" UID ".slice", &pc), -EINVAL);
	assert_int_equal(podcg__parse("/kubepods/pod" UID "x", &pc), -EINVAL);
	/* a container id that is not 64 hex digits */
	assert_int_equal(podcg__parse("/kubepods/pod" UID "/abc", &pc), -EINVAL);
	assert_int_equal(podcg__parse("/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-"
				      "abc.scope", &pc), -EINVAL);
	assert_int_equal(podcg__parse("/kubepods.slice/kubepods-pod" UID_ ".slice/other-" CID
				      ".scope", &pc), -EINVAL);
	/* an unknown segment under cgroupfs kubepods, a systemd segment that is no slice */
	assert_int_equal(podcg__parse("/kubepods/guaranteed/pod" UID, &pc), -EINVAL);
	assert_int_equal(podcg__parse("/kubepods.slice/foo.scope", &pc), -EINVAL);
	assert_int_equal(podcg__parse(NULL, &pc), -EINVAL);
	{
		/* a segment longer than any id: refused, not overflowed */
		char path[1024] = "/kubepods/pod" UID "/";

		memset(path + strlen(path), 'a', 600);
		path[strlen("/kubepods/pod" UID "/") + 600] = '\0';
		assert_int_equal(podcg__parse(path, &pc), -EINVAL);
	}
	assert_string_equal(podcg_qos_name(PODCG_BURSTABLE), "burstable");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_systemd_driver),
		cmocka_unit_test(test_cgroupfs_driver),
		cmocka_unit_test(test_not_a_pod),
		cmocka_unit_test(test_impersonation),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests_name("podcg", tests, NULL, NULL);
}
