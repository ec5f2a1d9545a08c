/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Snapshot -> JSON, schema "devmemtop.snapshot" version 1 (docs/json-schema.md).
 * Fields that are unknown on this kernel are null, never a made-up number.
 */
#ifndef DEVMEMTOP_JSON_OUT_H
#define DEVMEMTOP_JSON_OUT_H

#include <json-c/json.h>
#include "snapshot.h"

#define DMT_JSON_SCHEMA		"devmemtop.snapshot"
#define DMT_JSON_VERSION	1

struct json_object *json_log2_hist(const struct hist_log2 *h, double unit_scale);
struct json_object *json_batch_hist(const struct hist_batch *h);
/* One JSON object per snapshot; NULL on allocation failure. */
struct json_object *json_snapshot(const struct dmt_snapshot *s);

#endif /* DEVMEMTOP_JSON_OUT_H */
