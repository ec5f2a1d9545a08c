// SPDX-License-Identifier: GPL-2.0
/* Kubernetes pod/container ids from cgroup paths (podcg.h). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "podcg.h"

#define SEG_MAX	256

const char *podcg_qos_name(enum podcg_qos q)
{
	switch (q) {
	case PODCG_GUARANTEED:	return "guaranteed";
	case PODCG_BURSTABLE:	return "burstable";
	case PODCG_BESTEFFORT:	return "besteffort";
	}
	return "";
}

/* The next '/'-separated segment of *p into seg; false at the end. */
static bool next_seg(const char **p, char *seg)
{
	size_t n;

	while (**p == '/')
		(*p)++;
	if (!**p)
		return false;
	n = strcspn(*p, "/");
	if (n >= SEG_MAX)
		n = SEG_MAX - 1;	/* a segment this long matches nothing below */
	memcpy(seg, *p, n);
	seg[n] = '\0';
	*p += strcspn(*p, "/");
	return true;
}

static bool strip_suffix(char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	if (n < m || strcmp(s + n - m, suffix))
		return false;
	s[n - m] = '\0';
	return true;
}

/* A pod uid, '-' or (systemd) '_' separated, into out as 8-4-4-4-12 lower hex. */
static int parse_uid(const char *s, char sep, char *out)
{
	static const int groups[5] = { 8, 4, 4, 4, 12 };
	int k = 0;

	for (int g = 0; g < 5; g++) {
		for (int i = 0; i < groups[g]; i++, s++) {
			if (!isxdigit((unsigned char)*s))
				return -EINVAL;
			out[k++] = tolower((unsigned char)*s);
		}
		if (g < 4) {
			if (*s++ != sep)
				return -EINVAL;
			out[k++] = '-';
		}
	}
	out[k] = '\0';
	return *s ? -EINVAL : 0;
}

static int parse_cid(const char *s, char *out)
{
	size_t n = strlen(s);

	if (n != 64)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return -EINVAL;
		out[i] = tolower((unsigned char)s[i]);
	}
	out[n] = '\0';
	return 0;
}

static enum podcg_qos qos_of(const char *s)
{
	if (!strncmp(s, "burstable", 9))
		return PODCG_BURSTABLE;
	if (!strncmp(s, "besteffort", 10))
		return PODCG_BESTEFFORT;
	return PODCG_GUARANTEED;
}

/*
 * systemd driver: "kubepods[-QOS][-pod<uid>].slice" segments; returns 1
 * when seg named the pod (uid parsed), 0 for a QoS/parent slice.
 */
static int systemd_slice(char *seg, struct podcg *pc)
{
	char *pod, *k;

	if (!strip_suffix(seg, ".slice"))
		return -EINVAL;
	k = strstr(seg, "kubepods-");
	if (k && strncmp(k + 9, "pod", 3))
		pc->qos = qos_of(k + 9);
	pod = strstr(seg, "-pod");
	if (!pod)
		return 0;
	return parse_uid(pod + 4, '_', pc->pod_uid) ? -EINVAL : 1;
}

/* A container segment below the pod: "<runtime>-<id>.scope" or a bare/crio- id. */
static int container_seg(char *seg, struct podcg *pc)
{
	static const struct { const char *prefix, *runtime; } rt[] = {
		{ "cri-containerd-", "containerd" },
		{ "crio-", "cri-o" },
		{ "docker-", "docker" },
	};
	bool scope = strip_suffix(seg, ".scope");

	if (!strncmp(seg, "crio-conmon-", 12))
		return 0;	/* CRI-O's monitor process, not a container */
	for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
		size_t n = strlen(rt[i].prefix);

		if (!strncmp(seg, rt[i].prefix, n)) {
			pc->runtime = rt[i].runtime;
			return parse_cid(seg + n, pc->container_id);
		}
	}
	if (scope)
		return -EINVAL;
	pc->runtime = "";	/* cgroupfs with containerd: the bare id */
	return parse_cid(seg, pc->container_id);
}

int podcg__parse(const char *path, struct podcg *out)
{
	struct podcg pc = { .runtime = "", .qos = PODCG_GUARANTEED };
	char seg[SEG_MAX];
	const char *p = path;
	bool in_kubepods = false, have_pod = false;
	int err;

	if (!path)
		return -EINVAL;
	while (next_seg(&p, seg)) {
		if (have_pod) {
			err = container_seg(seg, &pc);
			if (err)
				return err;
			break;	/* anything deeper is the container's own */
		}
		if (!in_kubepods) {
			/* "kubepods.slice", "kubelet-kubepods.slice", "kubepods" */
			if (!strcmp(seg, "kubepods")) {
				in_kubepods = true;
			} else if (!strcmp(seg, "kubepods.slice") ||
				   (strstr(seg, "-kubepods") && strip_suffix(seg, ".slice"))) {
				in_kubepods = true;
				pc.driver_systemd = 1;
			}
			continue;
		}
		if (pc.driver_systemd) {
			err = systemd_slice(seg, &pc);
			if (err < 0)
				return err;
			have_pod = err;
		} else if (!strncmp(seg, "pod", 3)) {
			if (parse_uid(seg + 3, '-', pc.pod_uid))
				return -EINVAL;
			have_pod = true;
		} else if (!strcmp(seg, "burstable") || !strcmp(seg, "besteffort")) {
			pc.qos = qos_of(seg);
		} else {
			return -EINVAL;
		}
	}
	if (!in_kubepods)
		return -ENOENT;
	if (!have_pod)
		return -ENOENT;	/* a QoS slice itself: no pod */
	*out = pc;
	return 0;
}
