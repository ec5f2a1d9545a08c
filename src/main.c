// SPDX-License-Identifier: GPL-2.0
/* devmemtop: dispatch to a subcommand; the live view is the default. */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "util.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd cmds[] = {
	{ "top",	cmd_top,	"live view of page pools and devmem bindings (default)" },
	{ "export",	cmd_export,	"serve metrics for Prometheus on /metrics" },
	{ "gate",	cmd_gate,	"check a spec's thresholds (CI gate: exit 0/1/2)" },
	{ "record",	cmd_record,	"record snapshots and events to a file" },
	{ "report",	cmd_report,	"print a recording's tables and histograms" },
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
	if (argc >= 2 && (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("devmemtop %s\n", DEVMEMTOP_VERSION);
		return 0;
	}
	if (argc >= 2 && argv[1][0] != '-') {
		for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
			if (!strcmp(argv[1], cmds[i].name))
				return cmds[i].fn(argc - 1, argv + 1);
		fprintf(stderr, "devmemtop: unknown command '%s' (try 'devmemtop help')\n",
			argv[1]);
		return 2;
	}
	return cmd_top(argc, argv);
}
