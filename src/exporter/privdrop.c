// SPDX-License-Identifier: GPL-2.0
/* Drop capabilities (and root) once the BPF programs are attached. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "privdrop.h"
#include "util.h"

#define NOBODY_ID	65534

/* "nobody", "1234": uid and primary gid; 0 or -errno. */
static int lookup_user(const char *name, uid_t *uid, gid_t *gid, char *msg, size_t msglen)
{
	struct passwd *pw;
	uint64_t v;

	errno = 0;
	pw = getpwnam(name);
	if (pw) {
		*uid = pw->pw_uid;
		*gid = pw->pw_gid;
		return 0;
	}
	if (!parse_uint(name, 0xfffffffeULL, &v)) {
		*uid = v;
		*gid = v;
		return 0;
	}
	snprintf(msg, msglen, "--user '%s': no such user%s%s", name, errno ? ": " : "",
		 errno ? strerror(errno) : "");
	return -ENOENT;
}

/* 0 when the process holds no capability at all, or -EPERM + msg. */
static int check_empty(char *msg, size_t msglen)
{
	cap_t now = cap_get_proc(), none = cap_init();
	int err = 0;

	if (!now || !none) {
		err = -errno;
		snprintf(msg, msglen, "cannot read capabilities: %s", strerror(errno));
		goto out;
	}
	if (cap_compare(now, none)) {
		char *text = cap_to_text(now, NULL);

		snprintf(msg, msglen, "capabilities still held after dropping them: %s",
			 text ? text : "?");
		cap_free(text);
		err = -EPERM;
		goto out;
	}
	for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++) {
		if (cap_get_ambient(c) > 0) {
			snprintf(msg, msglen, "ambient capability %s still set", cap_to_name(c));
			err = -EPERM;
			goto out;
		}
	}
out:
	cap_free(now);
	cap_free(none);
	return err;
}

int privdrop__prepare(struct privdrop_opts *o, char *msg, size_t msglen)
{
	const char *user = o->user;
	int err;

	o->switch_user = false;
	if (o->keep)
		return 0;
	if (geteuid() != 0 && getuid() != 0) {
		if (user) {
			snprintf(msg, msglen, "--user needs the exporter to start as root (it runs as uid %u)",
				 getuid());
			return -EPERM;
		}
		return 0;
	}
	o->uid = NOBODY_ID;
	o->gid = NOBODY_ID;
	if (!user && getpwnam("nobody"))
		user = "nobody";	/* else the conventional 65534 */
	if (user) {
		err = lookup_user(user, &o->uid, &o->gid, msg, msglen);
		if (err)
			return err;
	}
	if (!o->uid) {
		snprintf(msg, msglen, "--user '%s' is root: nothing would be dropped", user);
		return -EINVAL;
	}
	o->switch_user = true;
	return 0;
}

int privdrop__apply(const struct privdrop_opts *o, char *msg, size_t msglen)
{
	cap_t none = NULL;
	int err = 0;

	if (o->keep)
		return 0;
	if (o->switch_user) {
		/* needs CAP_SETPCAP: before the switch */
		for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++) {
			if (CAP_IS_SUPPORTED(c) && cap_drop_bound(c)) {
				err = -errno;
				snprintf(msg, msglen, "cannot drop %s from the bounding set: %s",
					 cap_to_name(c), strerror(errno));
				return err;
			}
		}
		/* glibc applies these to every thread; the kernel then clears the capabilities */
		if (setgroups(0, NULL) || setresgid(o->gid, o->gid, o->gid) ||
		    setresuid(o->uid, o->uid, o->uid)) {
			err = -errno;
			snprintf(msg, msglen, "cannot switch to uid %u gid %u: %s", o->uid, o->gid,
				 strerror(errno));
			return err;
		}
	} else {
		none = cap_init();
		if (!none || cap_reset_ambient() || cap_set_proc(none)) {
			err = -errno;
			snprintf(msg, msglen, "cannot drop capabilities: %s", strerror(errno));
			goto out;
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		err = -errno;
		snprintf(msg, msglen, "cannot set no_new_privs: %s", strerror(errno));
		goto out;
	}
	err = check_empty(msg, msglen);
	if (!err && o->switch_user)
		pr_info("export: dropped all capabilities, running as uid %u gid %u\n", o->uid, o->gid);
	else if (!err)
		pr_info("export: dropped all capabilities\n");
out:
	cap_free(none);
	return err;
}
