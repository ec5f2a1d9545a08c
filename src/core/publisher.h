/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hands snapshots from the collector thread to the exporter's HTTP threads.
 *
 *   struct publisher *pb = publisher__new(interval_s);  NULL on ENOMEM
 *   publisher__publish(pb, snap, &totals, n, errs, 0);  collector thread
 *   struct pubsnap *p = publisher__get(pb);             any thread; NULL before
 *   pubsnap__text(p, &text, &len);                       the first publish
 *   pubsnap__put(p);
 *   publisher__free(pb);
 *
 * A published snapshot is immutable and reference counted. Publishing swaps
 * a pointer under a mutex held only for that swap (and get's reference
 * increment), so a reader holding an old snapshot, however long, never
 * blocks the collector. A snapshot's text is rendered once, by the first
 * pubsnap__text() caller, under that snapshot's own lock.
 */
#ifndef DEVMEMTOP_PUBLISHER_H
#define DEVMEMTOP_PUBLISHER_H

#include <stddef.h>
#include <stdint.h>
#include "snapshot.h"
#include "expo.h"

struct publisher;
struct pubsnap;

struct publisher *publisher__new(double interval_s);
/* Frees the current snapshot; readers may still hold theirs. */
void publisher__free(struct publisher *pb);

/* Takes ownership of snap (freed on error too); published_ns 0 = now. */
int publisher__publish(struct publisher *pb, struct dmt_snapshot *snap,
		       const struct expo_totals *t, uint64_t collections, uint64_t errors,
		       uint64_t published_ns);
/* Republish the current snapshot with a new error count, keeping its age. */
int publisher__count_error(struct publisher *pb, uint64_t errors);
/* Snapshot versions alive: the current one plus those readers still hold. */
uint64_t publisher__live(const struct publisher *pb);

/* A reference to the current snapshot, or NULL before the first publish. */
struct pubsnap *publisher__get(struct publisher *pb);
void pubsnap__put(struct pubsnap *p);
/* Its exposition text (rendered on first use); 0 or -errno. Valid until put. */
int pubsnap__text(struct pubsnap *p, const char **text, size_t *len);
/* The same in the protobuf format (delimited MetricFamily messages). */
int pubsnap__proto(struct pubsnap *p, const char **data, size_t *len);
uint64_t pubsnap__published_ns(const struct pubsnap *p);
uint64_t pubsnap__collections(const struct pubsnap *p);

#endif /* DEVMEMTOP_PUBLISHER_H */
