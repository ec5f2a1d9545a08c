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
 * container names. Only where the kubelet puts its hierarchy: kubepods at
 * the root of the walked cgroup2 tree, or (systemd, the kubelet's
 * --cgroup-root) at the end of a chain of slices from that root, each
 * named after its parent ("/kubelet.slice/kubelet-kubepods.slice"). Root
 * and systemd alone make cgroups there; kubepods anywhere else (a systemd
 * user manager's delegated subtree, a container that may create cgroups:
 * anyone could name a directory after any pod) is not a pod, and nor is
 * a path cut to its tail ("/..." first, cgpath__path()): what was above
 * it is not known. Pure string parsing: no I/O.
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
 * else not a pod: -ENOENT when it is not under kubepods (a host process),
 * -EPERM when it names kubepods outside the kubelet's root,
 * -ENAMETOOLONG when it was cut short ("/..."), -EINVAL when it is under
 * the kubelet's kubepods but does not parse (a malformed pod uid or
 * container id, a segment the kubelet does not make).
 */
int podcg__parse(const char *path, struct podcg *out);
/* Why podcg__parse() said err, for people: "not a pod: ..."; "" for 0. */
const char *podcg_why(int err);
const char *podcg_qos_name(enum podcg_qos q);

#endif /* DEVMEMTOP_PODCG_H */
