/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Subcommands of the devmemtop binary. Each lives in its own file and is
 * listed in the command table in main.c. A command returns the process exit
 * status; errors are printed as one line on stderr by the command itself.
 */
#ifndef DEVMEMTOP_COMMANDS_H
#define DEVMEMTOP_COMMANDS_H

int cmd_top(int argc, char **argv);	/* live view (default), top.c */
int cmd_export(int argc, char **argv);	/* Prometheus exporter, export.c */

#endif /* DEVMEMTOP_COMMANDS_H */
