// SPDX-License-Identifier: GPL-2.0
/*
 * Test helper of 94-holder-cgroups.sh: devmemtop's own cgroup id -> path
 * resolution (src/core/cgpath.c) and pod column (tokens__holder_where()),
 * run on the host's real cgroup2 tree.
 *   cgpath_resolve ROOT ID...   one line per id: "ID<TAB>PATH<TAB>WHERE"
 * (PATH empty when unknown). Exit 0, or 1 on bad arguments or no memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cgpath.h"
#include "tokens.h"

int main(int argc, char **argv)
{
	struct dmt_holder_snap *h;
	struct cgpath *cp;
	int n = argc - 2;

	if (n < 1) {
		fprintf(stderr, "usage: %s ROOT ID...\n", argv[0]);
		return 1;
	}
	h = calloc(n, sizeof(*h));
	cp = cgpath__new(argv[1]);
	if (!h || !cp)
		return 1;
	for (int i = 0; i < n; i++) {
		char *end;

		h[i].cgroup_id = strtoull(argv[i + 2], &end, 10);
		if (*end || end == argv[i + 2]) {
			fprintf(stderr, "bad id '%s'\n", argv[i + 2]);
			return 1;
		}
	}
	if (cgpath__fill_holders(cp, h, n))
		return 1;
	for (int i = 0; i < n; i++) {
		char where[DMT_CGROUP_PATH_MAX + 64];

		printf("%llu\t%s\t%s\n", (unsigned long long)h[i].cgroup_id, h[i].cgroup,
		       tokens__holder_where(&h[i], false, where, sizeof(where)));
	}
	cgpath__free(cp);
	free(h);
	return 0;
}
