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
int cmd_gate(int argc, char **argv);	/* pass/fail gates for CI, gate.c */
int cmd_record(int argc, char **argv);	/* binary recording, record.c */
int cmd_report(int argc, char **argv);	/* print a recording, report.c */
int cmd_compare(int argc, char **argv);	/* A/B verdicts over repeated runs, compare.c */

#endif /* DEVMEMTOP_COMMANDS_H */
