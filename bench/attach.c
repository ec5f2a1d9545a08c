// SPDX-License-Identifier: GPL-2.0
/*
 * bench/attach OBJ: load a BPF object, attach every program, print "ready"
 * and hold them until SIGINT/SIGTERM. The baseline loader for overhead.sh.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;

static void on_sig(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_link *links[16] = {};
	struct bpf_object *obj;
	struct bpf_program *p;
	int n = 0, err = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: attach OBJ\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "attach: cannot load %s: %s\n", argv[1], strerror(errno));
		goto cleanup;
	}
	bpf_object__for_each_program(p, obj) {
		if (n == 16)
			break;
		links[n] = bpf_program__attach(p);
		if (!links[n]) {
			fprintf(stderr, "attach: %s: %s\n", bpf_program__name(p), strerror(errno));
			goto cleanup;
		}
		n++;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	err = 0;
cleanup:
	for (int i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
	return err;
}
