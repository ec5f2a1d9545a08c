// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the recording reader (header, frames, CRC, META, the
 * snapshot decoder) on arbitrary bytes, and gate evaluation of whatever
 * snapshots decode. The CRC would stop most mutations at the frame check,
 * so the first input byte chooses: even = the file as given, odd = the
 * rest is one snapshot payload fed to the decoder directly.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gate_eval.h"
#include <zlib.h>
#include "record.h"

static struct gate_spec *spec;

static const char spec_yaml[] =
	"thresholds:\n"
	"  - metric: pool.refill_batch\n"
	"    expect: [p(50) >= 1, max <= 64, count > 0, rate > 0, avg > 1, min >= 1]\n"
	"  - metric: pool.holds\n"
	"    interface: \"e*\"\n"
	"    expect: [count > 0, rate > 0]\n"
	"  - metric: pool.inflight\n"
	"    expect: [max < 100, last >= 0]\n"
	"  - metric: pool.destroy_inflight\n"
	"    expect: [max == 0]\n"
	"  - metric: binding.alloc_latency\n"
	"    expect: [p(99) < 20us, p(1) > 1ns, max < 1s]\n"
	"  - metric: binding.occupancy\n"
	"    expect: [max < 95%]\n"
	"  - metric: binding.used_bytes\n"
	"    expect: [max < 1GiB]\n"
	"  - metric: binding.leaked_niovs\n"
	"    expect: [sum == 0]\n"
	"  - metric: tool.ringbuf_drops\n"
	"    expect: [count == 0]\n";

static uint32_t rd32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Recompute the CRC of every whole frame in a copy of the file. */
static void fix_crcs(uint8_t *d, size_t n)
{
	size_t off = 16;

	while (off + 12 <= n) {
		uint32_t len = rd32(d + off + 4), c;

		if (len > n - off - 12)
			return;
		c = crc32(0L, Z_NULL, 0);
		c = crc32(c, d + off, 8);
		c = crc32(c, d + off + 12, len);
		for (int i = 0; i < 4; i++)
			d[off + 8 + i] = c >> (8 * i);
		off += 12 + len;
	}
}

static void eval(struct gate_eval *e, const struct dmt_snapshot *s)
{
	/* any decoded snapshot must be safe to aggregate */
	gate_eval__add(e, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gate_report rep = {};
	struct gate_eval *e;
	char err[2048];

	if (!spec) {
		spec = gate_spec__parse_buf(spec_yaml, sizeof(spec_yaml) - 1, "s", err, sizeof(err));
		if (!spec)
			abort();
	}
	if (!size)
		return 0;
	e = gate_eval__new(spec);
	if (!e)
		return 0;
	if (data[0] % 3 == 1) {
		static const struct dmt_availability prev[DMT_M__COUNT];
		struct dmt_snapshot *s = NULL;

		/* bit 2 of the mode byte: is a previous availability known? */
		if (!rec_decode_snapshot(data + 1, size - 1, data[0] & 4 ? prev : NULL, &s, err,
					 sizeof(err))) {
			eval(e, s);
			eval(e, s);
			snapshot__free(s);
		} else if (s || !err[0] || strchr(err, '\n')) {
			abort();
		}
	} else {
		uint8_t *copy = malloc(size);
		struct rec_reader *r;
		struct rec_item it;
		FILE *f;
		int ret;

		if (!copy)
			goto out;
		memcpy(copy, data + 1, size - 1);
		if (data[0] % 3 == 2)
			fix_crcs(copy, size - 1);
		f = fmemopen(copy, size > 1 ? size - 1 : 1, "rb");
		if (!f) {
			free(copy);
			goto out;
		}
		r = rec_reader__open_file(f, "fuzz");
		if (!r) {
			free(copy);
			goto out;
		}
		if (rec_reader__meta(r)) {
			while ((ret = rec_reader__next(r, &it)) > 0) {
				if (it.type == REC_SNAPSHOT) {
					eval(e, it.snap);
					snapshot__free(it.snap);
				}
			}
			if (ret < 0 && (!rec_reader__error(r) || strchr(rec_reader__error(r), '\n')))
				abort();
		} else if (!rec_reader__error(r)) {
			abort();
		}
		rec_reader__free(r);
		free(copy);
	}
	if (!gate_eval__finish(e, &rep))
		gate_report__fini(&rep);
out:
	gate_eval__free(e);
	return 0;
}
