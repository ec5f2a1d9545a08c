// SPDX-License-Identifier: GPL-2.0
/* Immutable, reference-counted snapshots from the collector to HTTP threads. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "promfmt.h"
#include "publisher.h"
#include "util.h"

struct pubsnap {
	int ref;			/* atomic */
	struct publisher *pb;		/* for the live count; outlives readers */
	struct dmt_snapshot *snap;
	struct expo_totals totals;
	uint64_t collections;
	uint64_t errors;
	uint64_t published_ns;		/* CLOCK_MONOTONIC */
	double interval_s;
	pthread_mutex_t text_lock;
	char *text;			/* NULL until rendered */
	size_t text_len;
	int text_err;
	char *proto;			/* the protobuf format: NULL until asked for */
	size_t proto_len;
	int proto_err;
};

struct publisher {
	pthread_mutex_t lock;
	struct pubsnap *cur;
	double interval_s;
	uint64_t live;			/* atomic */
};

struct publisher *publisher__new(double interval_s)
{
	struct publisher *pb = calloc(1, sizeof(*pb));

	if (!pb)
		return NULL;
	pthread_mutex_init(&pb->lock, NULL);
	pb->interval_s = interval_s;
	return pb;
}

void pubsnap__put(struct pubsnap *p)
{
	if (!p || __atomic_sub_fetch(&p->ref, 1, __ATOMIC_ACQ_REL))
		return;
	__atomic_sub_fetch(&p->pb->live, 1, __ATOMIC_RELAXED);
	snapshot__free(p->snap);
	pthread_mutex_destroy(&p->text_lock);
	free(p->text);
	free(p->proto);
	free(p);
}

/*
 * Readers must be done (all their references put) before the publisher is
 * freed: the exporter stops its HTTP server first.
 */
void publisher__free(struct publisher *pb)
{
	if (!pb)
		return;
	pubsnap__put(pb->cur);
	pthread_mutex_destroy(&pb->lock);
	free(pb);
}

int publisher__publish(struct publisher *pb, struct dmt_snapshot *snap,
		       const struct expo_totals *t, uint64_t collections, uint64_t errors,
		       uint64_t published_ns)
{
	struct pubsnap *p = calloc(1, sizeof(*p)), *old;

	if (!p) {
		snapshot__free(snap);
		return -ENOMEM;
	}
	p->ref = 1;
	p->pb = pb;
	pthread_mutex_init(&p->text_lock, NULL);
	p->snap = snap;
	p->totals = *t;
	p->collections = collections;
	p->errors = errors;
	p->interval_s = pb->interval_s;
	p->published_ns = published_ns ? published_ns : now_mono_ns();
	__atomic_add_fetch(&pb->live, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&pb->lock);
	old = pb->cur;
	pb->cur = p;
	pthread_mutex_unlock(&pb->lock);
	pubsnap__put(old);
	return 0;
}

struct pubsnap *publisher__get(struct publisher *pb)
{
	struct pubsnap *p;

	pthread_mutex_lock(&pb->lock);
	p = pb->cur;
	if (p)
		__atomic_add_fetch(&p->ref, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&pb->lock);
	return p;
}

int publisher__count_error(struct publisher *pb, uint64_t errors)
{
	struct pubsnap *old = publisher__get(pb);
	struct dmt_snapshot *dup;
	int err;

	if (!old)
		return 0;
	dup = snapshot__dup(old->snap);
	if (!dup) {
		pubsnap__put(old);
		return -ENOMEM;
	}
	/* the old publication time: /healthz must see the data's age */
	err = publisher__publish(pb, dup, &old->totals, old->collections, errors,
				 old->published_ns);
	pubsnap__put(old);
	return err;
}

uint64_t publisher__live(const struct publisher *pb)
{
	return __atomic_load_n(&pb->live, __ATOMIC_RELAXED);
}

/*
 * One rendering per snapshot and format, made by the first reader that asks
 * and shared by the rest: out, out_len and out_err are the text's or the
 * protobuf's. An allocation failure is not sticky: the next caller tries again.
 */
static int render_once(struct pubsnap *p, bool proto, char **out, size_t *out_len,
		       int *out_err, const char **data, size_t *len)
{
	struct expo_input in = { .snap = p->snap, .totals = &p->totals,
				 .interval_s = p->interval_s, .collections = p->collections,
				 .collection_errors = p->errors };
	struct promfmt *w;
	int err = 0;

	pthread_mutex_lock(&p->text_lock);
	if (*out || *out_err)
		goto out;
	w = proto ? promfmt__new_proto() : promfmt__new();
	if (!w) {
		err = -ENOMEM;
		goto unlock;
	}
	*out_err = expo__render(w, &in);
	if (!*out_err) {
		*out = promfmt__take(w, out_len);
		if (!*out)
			*out_err = -errno;
	}
	promfmt__free(w);
out:
	err = *out_err;
	if (!err) {
		*data = *out;
		*len = *out_len;
	}
unlock:
	pthread_mutex_unlock(&p->text_lock);
	return err;
}

int pubsnap__text(struct pubsnap *p, const char **text, size_t *len)
{
	return render_once(p, false, &p->text, &p->text_len, &p->text_err, text, len);
}

int pubsnap__proto(struct pubsnap *p, const char **data, size_t *len)
{
	return render_once(p, true, &p->proto, &p->proto_len, &p->proto_err, data, len);
}

uint64_t pubsnap__published_ns(const struct pubsnap *p)
{
	return p->published_ns;
}

uint64_t pubsnap__collections(const struct pubsnap *p)
{
	return p->collections;
}
