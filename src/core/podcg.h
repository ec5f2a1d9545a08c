/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kubernetes pod and container ids from a cgroup path, as the kubelet lays
 * them out (issue 24, holders by pod): the systemd cgroup driver
 *   /kubepods.slice/kubepods-burstable.slice/
 *     kubepods-burstable-pod<uid, '_' for '-'>.slice/cri-containerd-<id>.scope
 * and the cgroupfs driver
 *   /kubepods/burstable/pod<uid>/<id>       (containerd; CRI-O: crio-<id>)
 * for the three QoS classes (guaranteed pods sit right under kubepods),
 * containerd (cri-containerd-), CRI-O (crio-) and cri-dockerd (docker-)
 * container names, anywhere below a prefix (kind nodes, a kubelet in its
 * own slice). Pure string parsing: no I/O.
 *
 *   struct podcg pc;
 *   if (!podcg__parse("/kubepods/besteffort/pod.../abc...", &pc)) pc.pod_uid ...
 */
#ifndef DEVMEMTOP_PODCG_H
#define DEVMEMTOP_PODCG_H

enum podcg_qos { PODCG_GUARANTEED, PODCG_BURSTABLE, PODCG_BESTEFFORT };

struct podcg {
	char pod_uid[37];		/* 8-4-4-4-12 lower-case hex, dashes */
	char container_id[65];		/* 64 hex; "" for the pod's own cgroup */
	const char *runtime;		/* "containerd", "cri-o", "docker", "" */
	enum podcg_qos qos;
	unsigned char driver_systemd;	/* 1: systemd driver, 0: cgroupfs */
};

/*
 * 0 and *out filled when path is a Kubernetes pod's cgroup or below one;
 * -ENOENT when it is not under kubepods (a host process); -EINVAL when it
 * is but does not parse (a malformed pod uid or container id).
 */
int podcg__parse(const char *path, struct podcg *out);
const char *podcg_qos_name(enum podcg_qos q);

#endif /* DEVMEMTOP_PODCG_H */
