/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Least privilege after attach: once the BPF programs are loaded and
 * attached, collection works through what is already open (map, program,
 * link and ring buffer fds; the BPF stats fd; the listen socket) and needs
 * no capability (measured: docs/exporter.md, "Scraping a fleet"). So the
 * exporter drops them all before its HTTP threads start.
 *
 *   struct privdrop_opts o = { .user = NULL };        NULL: nobody, if root
 *   err = privdrop__prepare(&o, msg, sizeof(msg));    at start: resolve the user
 *   ... load and attach ...
 *   err = privdrop__apply(&o, msg, sizeof(msg));      0 or -errno + one line
 *
 * As root: empty the capability bounding set, set no_new_privs, switch to
 * the user (its primary group, no supplementary groups). As another user
 * with capabilities (systemd's AmbientCapabilities=): clear the effective,
 * permitted, inheritable and ambient sets. Either way the result is checked
 * and a process that still holds a capability is an error. Must be called
 * while the process has a single thread (capability sets are per thread).
 */
#ifndef DEVMEMTOP_PRIVDROP_H
#define DEVMEMTOP_PRIVDROP_H

#include <stdbool.h>
#include <stddef.h>

#include <sys/types.h>

struct privdrop_opts {
	const char *user;	/* name or uid; NULL: "nobody" (65534) when root */
	bool keep;		/* change nothing (--keep-privileges) */
	/* set by privdrop__prepare() */
	bool switch_user;
	uid_t uid;
	gid_t gid;
};

/* Before anything is loaded: resolve and check the user; 0 or -errno + msg. */
int privdrop__prepare(struct privdrop_opts *o, char *msg, size_t msglen);
/* After attach, single-threaded: drop; 0 or -errno + msg. */
int privdrop__apply(const struct privdrop_opts *o, char *msg, size_t msglen);

#endif /* DEVMEMTOP_PRIVDROP_H */
