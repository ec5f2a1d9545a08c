// SPDX-License-Identifier: GPL-2.0
/*
 * core_load [-v] OBJ PROG...: load only the named programs of BPF object OBJ
 * against the running kernel (its BTF, or DEVMEMTOP_KERNEL_BTF's file), so
 * that a test can see one program's CO-RE relocations resolve on this
 * kernel's layout without the rest of the object (fentry is refused on the
 * host). Prints "loaded PROG" per program, or the one error; exit 0 when
 * all loaded, 1 when the load failed, 2 on usage. -v: libbpf's debug lines
 * too (each CO-RE relocation and the candidate it matched), on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

static int verbose;

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN || verbose ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = getenv("DEVMEMTOP_KERNEL_BTF"));
	struct bpf_object *obj;
	struct bpf_program *p;
	int i, err, rc = 1;

	if (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = 1;
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: core_load [-v] OBJ PROG...\n");
		return 2;
	}
	libbpf_set_print(quiet);
	obj = bpf_object__open_file(argv[1], &oo);
	if (!obj) {
		fprintf(stderr, "core_load: open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, false);
	for (i = 2; i < argc; i++) {
		p = bpf_object__find_program_by_name(obj, argv[i]);
		if (!p) {
			fprintf(stderr, "core_load: no program %s in %s\n", argv[i], argv[1]);
			rc = 2;
			goto out;
		}
		bpf_program__set_autoload(p, true);
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "core_load: load failed: %s\n", strerror(-err));
		goto out;
	}
	for (i = 2; i < argc; i++)
		printf("loaded %s\n", argv[i]);
	rc = 0;
out:
	bpf_object__close(obj);
	return rc;
}
