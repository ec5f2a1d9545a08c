// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshot memory: plain data, no libbpf, so the recording reader and its
 * fuzz target can use it without the collector.
 */
#include <stdlib.h>
#include <string.h>
#include "collector.h"

void snapshot__free(struct dmt_snapshot *s)
{
	if (!s)
		return;
	free(s->pools);
	free(s->bindings);
	free(s->progs);
	free(s->holders);
	free(s);
}

struct dmt_snapshot *snapshot__dup(const struct dmt_snapshot *s)
{
	struct dmt_snapshot *d = malloc(sizeof(*d));

	if (!d)
		return NULL;
	*d = *s;
	d->pools = NULL;
	d->bindings = NULL;
	d->progs = NULL;
	d->holders = NULL;
	if (s->n_pools && !(d->pools = malloc(s->n_pools * sizeof(*s->pools))))
		goto err;
	if (s->n_bindings && !(d->bindings = malloc(s->n_bindings * sizeof(*s->bindings))))
		goto err;
	if (s->n_progs && !(d->progs = malloc(s->n_progs * sizeof(*s->progs))))
		goto err;
	if (s->n_holders && !(d->holders = malloc(s->n_holders * sizeof(*s->holders))))
		goto err;
	if (s->n_holders)
		memcpy(d->holders, s->holders, s->n_holders * sizeof(*s->holders));
	if (s->n_pools)
		memcpy(d->pools, s->pools, s->n_pools * sizeof(*s->pools));
	if (s->n_bindings)
		memcpy(d->bindings, s->bindings, s->n_bindings * sizeof(*s->bindings));
	if (s->n_progs)
		memcpy(d->progs, s->progs, s->n_progs * sizeof(*s->progs));
	return d;
err:
	snapshot__free(d);
	return NULL;
}
