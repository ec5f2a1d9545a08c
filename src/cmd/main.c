// SPDX-License-Identifier: GPL-2.0
/* devmemtop: dispatch to a subcommand; the live view is the default. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include "commands.h"
#include "outstream.h"
#include "util.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
	int err_exit;		/* its exit status for an error (a failed write to stdout) */
};

static const struct cmd cmds[] = {
	{ "top",	cmd_top,
	  "live view of page pools and devmem bindings (default)", 1 },
	{ "export",	cmd_export,	"serve metrics for Prometheus on /metrics", 1 },
	{ "gate",	cmd_gate,	"check a spec's thresholds (CI gate: exit 0/1/2)", 2 },
	{ "record",	cmd_record,	"record snapshots and events to a file", 2 },
	{ "report",	cmd_report,	"print a recording's tables and histograms", 2 },
	{ "compare",	cmd_compare,	"A/B verdicts over repeated runs (exit 0/1/2)", 2 },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: devmemtop [COMMAND] [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'devmemtop COMMAND --help' describes a command's options.\n"
		   "Without a command, devmemtop runs 'top' with the given options.\n"
		   "Full manual: man devmemtop (devmemtop(8)).\n");
}

int main(int argc, char **argv)
{
	char name[32];
	int ret;

	/*
	 * Not dumpable, before any BPF fd exists: a process that is (a user
	 * started with ambient CAP_BPF, capabilities dropped after attach) lets
	 * any process of its uid take its fds with pidfd_getfd or ptrace, and
	 * with them our programs and maps. Also no core file of kernel data.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		dmt_err("prctl(PR_SET_DUMPABLE): %s", strerror(errno));
		return 1;
	}
	out_reserve_std_fds();
	if (argc >= 2 && (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return out_finish_stdout("devmemtop", 0, 2);
	}
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("devmemtop %s\n", DEVMEMTOP_VERSION);
		return out_finish_stdout("devmemtop", 0, 2);
	}
	if (argc >= 2 && argv[1][0] != '-') {
		for (size_t i = 0; i < ARRAY_SIZE(cmds); i++) {
			if (strcmp(argv[1], cmds[i].name))
				continue;
			/* errors say "devmemtop CMD: ..."; the live view's "devmemtop: ..." */
			dmt_err_cmd(cmds[i].fn == cmd_top ? NULL : cmds[i].name);
			ret = cmds[i].fn(argc - 1, argv + 1);
			/* every command: a failed write to stdout is an error, with its reason */
			snprintf(name, sizeof(name), "devmemtop %s", cmds[i].name);
			return out_finish_stdout(name, ret, cmds[i].err_exit);
		}
		dmt_err("unknown command '%s' (try 'devmemtop help')", argv[1]);
		return 2;
	}
	ret = cmd_top(argc, argv);
	return out_finish_stdout("devmemtop", ret, 1);
}
