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
 * The kubelet's kubepods node, if the path starts with one: the systemd
 * driver's is a slice at the root ("kubepods.slice") or at the end of a
 * chain of slices from the root, each named after its parent as systemd
 * names nested slices ("kubelet.slice/kubelet-kubepods.slice": the
 * kubelet's --cgroup-root=/kubelet); the cgroupfs driver's is "/kubepods".
 * Only root and systemd make cgroups there: a delegated subtree (a
 * systemd user manager, a container that may create cgroups) lies below a
 * .service or .scope and breaks the chain. 1 and *p past it, name the
 * kubepods slice's name without ".slice" (systemd); 0: not there.
 */
static int kubelet_root(const char **p, struct podcg *pc, char *name)
{
	char seg[SEG_MAX], prefix[SEG_MAX] = "";

	while (next_seg(p, seg)) {
		size_t n = strlen(prefix);

		if (!n && !strcmp(seg, "kubepods"))
			return 1;	/* cgroupfs, at the root */
		if (!strip_suffix(seg, ".slice"))
			return 0;
		/* a slice at the root, or one named after its parent slice */
		if (n && (strncmp(seg, prefix, n) || seg[n] != '-' || !seg[n + 1]))
			return 0;
		if (!strcmp(seg + (n ? n + 1 : 0), "kubepods")) {
			pc->driver_systemd = 1;
			strcpy(name, seg);
			return 1;
		}
		strcpy(prefix, seg);
	}
	return 0;
}

/* A segment naming kubepods the way either driver does. */
static bool names_kubepods(const char *path)
{
	char seg[SEG_MAX];
	const char *p = path;

	while (next_seg(&p, seg))
		if (!strcmp(seg, "kubepods") ||
		    (strip_suffix(seg, ".slice") && (!strcmp(seg, "kubepods") ||
						     strstr(seg, "-kubepods"))))
			return true;
	return false;
}

/*
 * systemd driver, below the kubepods slice K: "K-QOS.slice", then
 * "<parent>-pod<uid>.slice". 1: seg named the pod (uid parsed), 0: the
 * QoS slice; parent: the name its child must extend.
 */
static int systemd_slice(char *seg, char *parent, struct podcg *pc)
{
	size_t n = strlen(parent);

	if (!strip_suffix(seg, ".slice") || strncmp(seg, parent, n) || seg[n] != '-')
		return -EINVAL;
	seg += n + 1;
	if (!strncmp(seg, "pod", 3))
		return parse_uid(seg + 3, '_', pc->pod_uid) ? -EINVAL : 1;
	if (pc->qos != PODCG_GUARANTEED ||
	    (strcmp(seg, "burstable") && strcmp(seg, "besteffort")))
		return -EINVAL;
	pc->qos = qos_of(seg);
	strcpy(parent + n, "-");
	strcpy(parent + n + 1, seg);
	return 0;
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
	char seg[SEG_MAX], parent[SEG_MAX] = "";
	const char *p = path;
	bool have_pod = false;
	int err;

	if (!path)
		return -EINVAL;
	/* cut to its tail (cgpath__path()): what is above is not known */
	if (!strncmp(path, "/...", 4))
		return -ENAMETOOLONG;
	if (!kubelet_root(&p, &pc, parent))
		return names_kubepods(path) ? -EPERM : -ENOENT;
	while (next_seg(&p, seg)) {
		if (have_pod) {
			err = container_seg(seg, &pc);
			if (err)
				return err;
			break;	/* anything deeper is the container's own */
		}
		if (pc.driver_systemd) {
			err = systemd_slice(seg, parent, &pc);
			if (err < 0)
				return err;
			have_pod = err;
		} else if (!strncmp(seg, "pod", 3)) {
			if (parse_uid(seg + 3, '-', pc.pod_uid))
				return -EINVAL;
			have_pod = true;
		} else if (pc.qos == PODCG_GUARANTEED &&
			   (!strcmp(seg, "burstable") || !strcmp(seg, "besteffort"))) {
			pc.qos = qos_of(seg);
		} else {
			return -EINVAL;
		}
	}
	if (!have_pod)
		return -ENOENT;	/* kubepods or a QoS slice itself: no pod */
	*out = pc;
	return 0;
}

const char *podcg_why(int err)
{
	switch (err) {
	case 0:			return "";
	case -ENOENT:		return "not a pod";
	case -EPERM:		return "not a pod: kubepods outside the kubelet's root";
	case -ENAMETOOLONG:	return "not a pod: path cut short";
	default:		return "not a pod: malformed kubelet path";
	}
}
