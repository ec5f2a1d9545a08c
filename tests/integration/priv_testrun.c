// SPDX-License-Identifier: GPL-2.0
/*
 * What the exporter's binding walk does after its privileges are dropped:
 * load a raw_tp program as root, switch to uid/gid 65534 with no
 * capabilities (as privdrop.c does), then BPF_PROG_TEST_RUN it through the
 * fd opened before. Prints the capabilities it ran with; exit 0 when the
 * run succeeded and returned what the program computes.
 *   priv_testrun PROG.bpf.o
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

int main(int argc, char **argv)
{
	unsigned long long ctx[1] = { 42 };
	LIBBPF_OPTS(bpf_test_run_opts, t, .ctx_in = ctx, .ctx_size_in = sizeof(ctx));
	struct bpf_program *p;
	struct bpf_object *o;
	char line[256];
	FILE *f;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: priv_testrun PROG.bpf.o\n");
		return 2;
	}
	o = bpf_object__open_file(argv[1], NULL);
	if (!o || bpf_object__load(o)) {
		perror("priv_testrun: load");
		return 2;
	}
	p = bpf_object__find_program_by_name(o, "walk");
	if (!p)
		return 2;
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534)) {
		perror("priv_testrun: setresuid");
		return 2;
	}
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Uid:", 4) || !strncmp(line, "CapEff:", 7) ||
		    !strncmp(line, "CapPrm:", 7))
			fputs(line, stdout);
	if (f)
		fclose(f);
	err = bpf_prog_test_run_opts(bpf_program__fd(p), &t);
	printf("BPF_PROG_TEST_RUN: %s, retval %u\n", err ? strerror(-err) : "ok", t.retval);
	return err || t.retval != 7;
}
