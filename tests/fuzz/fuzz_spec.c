// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the gate spec parser (YAML via libyaml, our tree walk,
 * the threshold expression grammar), then evaluation of whatever parsed
 * over a small synthetic run, and every output writer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gate_eval.h"
#include "gate_spec.h"

static struct dmt_snapshot *mk(uint64_t t, uint64_t holds)
{
	struct dmt_snapshot *s = calloc(1, sizeof(*s));

	s->ts_ns = t;
	s->n_pools = 1;
	s->pools = calloc(1, sizeof(*s->pools));
	s->pools[0].addr = 1;
	s->pools[0].holds = holds;
	s->pools[0].destroy_inflight = -1;
	snprintf(s->pools[0].ifname, sizeof(s->pools[0].ifname), "eth0");
	hist_batch_add(&s->pools[0].refill, 64, holds / 64);
	s->n_bindings = 1;
	s->bindings = calloc(1, sizeof(*s->bindings));
	s->bindings[0].id = 1;
	s->bindings[0].layout = "freelist";
	s->bindings[0].occupancy = 0.5;
	s->bindings[0].out_at_free = holds ? 0 : -1;
	hist_log2_add(&s->bindings[0].alloc_lat_ns, holds * 3, 7);
	for (int i = 0; i < DMT_M__COUNT; i++)
		s->avail[i].available = i & 1;
	return s;
}

static void free_snap(struct dmt_snapshot *s)
{
	free(s->pools);
	free(s->bindings);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gate_spec *spec;
	struct gate_eval *e;
	struct gate_report rep = {};
	char err[2048];

	spec = gate_spec__parse_buf((const char *)data, size, "fuzz.yaml", err, sizeof(err));
	if (!spec) {
		/* every error is one line with a position or a file name */
		if (!err[0] || strchr(err, '\n') || strncmp(err, "fuzz.yaml", 9))
			abort();
		return 0;
	}
	e = gate_eval__new(spec);
	if (e) {
		struct dmt_snapshot *a = mk(0, 0), *b = mk(1000000000ULL, 6400);

		gate_eval__add(e, a);
		gate_eval__add(e, b);
		gate_eval__check_avail(spec, b->avail, err, sizeof(err));
		if (!gate_eval__finish(e, &rep)) {
			FILE *null = fopen("/dev/null", "w");

			gate_report__mark_unavailable(&rep, b->avail);
			if (null) {
				gate_report__print(&rep, null);
				fclose(null);
			}
			gate_report__write_junit(&rep, "/dev/null");
			gate_report__fini(&rep);
		}
		free_snap(a);
		free_snap(b);
		gate_eval__free(e);
	}
	gate_spec__free(spec);
	return 0;
}
