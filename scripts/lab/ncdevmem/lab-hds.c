// SPDX-License-Identifier: GPL-2.0
/*
 * lab-hds: turn a NIC's TCP header split (ethtool "tcp-data-split") on or
 * off, or print it, over ethtool netlink (ETHTOOL_MSG_RINGS_SET/GET).
 *
 *   lab-hds IFNAME on|off     set it; exit 0 only if the kernel accepted it
 *   lab-hds IFNAME            print "on", "off" or "unknown"
 *
 * Debian 12's ethtool (6.1) prints tcp-data-split but has no option to set
 * it (ethtool -G learnt it in 6.7). The lab guest's ethtool wrapper hands
 * "ethtool -G IF tcp-data-split on|off" to this tool and everything else to
 * the real ethtool, so ncdevmem runs unmodified.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <linux/ethtool_netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

static int hds_value = -1;	/* ETHTOOL_TCP_DATA_SPLIT_* from a RINGS_GET reply */

static int hds_parse_reply(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[ETHTOOL_A_RINGS_MAX + 1];
	struct genlmsghdr *gnlh = nlmsg_data(nlmsg_hdr(msg));

	if (nla_parse(tb, ETHTOOL_A_RINGS_MAX, genlmsg_attrdata(gnlh, 0),
		      genlmsg_attrlen(gnlh, 0), NULL))
		return NL_SKIP;
	hds_value = tb[ETHTOOL_A_RINGS_TCP_DATA_SPLIT] ?
		    nla_get_u8(tb[ETHTOOL_A_RINGS_TCP_DATA_SPLIT]) :
		    ETHTOOL_TCP_DATA_SPLIT_UNKNOWN;
	return NL_OK;
}

/* One RINGS_SET (value >= 0) or RINGS_GET (value < 0) request: 0 or -errno. */
static int hds_request(const char *ifname, int value)
{
	struct nl_sock *sk = NULL;
	struct nl_msg *msg = NULL;
	struct nlattr *hdr;
	int family, err;

	sk = nl_socket_alloc();
	if (!sk)
		return -NLE_NOMEM;
	err = genl_connect(sk);
	if (err)
		goto out;
	family = genl_ctrl_resolve(sk, ETHTOOL_GENL_NAME);
	if (family < 0) {
		err = family;
		goto out;
	}
	msg = nlmsg_alloc();
	if (!msg) {
		err = -NLE_NOMEM;
		goto out;
	}
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST,
			 value < 0 ? ETHTOOL_MSG_RINGS_GET : ETHTOOL_MSG_RINGS_SET,
			 ETHTOOL_GENL_VERSION)) {
		err = -NLE_NOMEM;
		goto out;
	}
	hdr = nla_nest_start(msg, ETHTOOL_A_RINGS_HEADER);
	if (!hdr || nla_put_string(msg, ETHTOOL_A_HEADER_DEV_NAME, ifname)) {
		err = -NLE_NOMEM;
		goto out;
	}
	nla_nest_end(msg, hdr);
	if (value >= 0 && nla_put_u8(msg, ETHTOOL_A_RINGS_TCP_DATA_SPLIT, value)) {
		err = -NLE_NOMEM;
		goto out;
	}
	if (value < 0)
		nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, hds_parse_reply, NULL);
	err = nl_send_auto(sk, msg);
	if (err >= 0)
		err = nl_wait_for_ack(sk);
	if (err >= 0 && value < 0 && hds_value < 0)
		err = -NLE_MSG_TRUNC;
out:
	nlmsg_free(msg);
	nl_socket_free(sk);
	return err < 0 ? err : 0;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "unknown", "off", "on" };
	int value = -1, err;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "on") &&
				     strcmp(argv[2], "off"))) {
		fprintf(stderr, "usage: lab-hds IFNAME [on|off]\n");
		return 2;
	}
	if (!if_nametoindex(argv[1])) {
		fprintf(stderr, "lab-hds: no interface '%s'\n", argv[1]);
		return 2;
	}
	if (argc == 3)
		value = strcmp(argv[2], "on") ? ETHTOOL_TCP_DATA_SPLIT_DISABLED :
						ETHTOOL_TCP_DATA_SPLIT_ENABLED;
	err = hds_request(argv[1], value);
	if (err) {
		fprintf(stderr, "lab-hds: %s tcp-data-split on %s: %s\n",
			value < 0 ? "reading" : "setting", argv[1], nl_geterror(err));
		return 1;
	}
	if (value < 0)
		printf("%s\n", hds_value <= ETHTOOL_TCP_DATA_SPLIT_ENABLED ?
		       names[hds_value] : "unknown");
	return 0;
}
