/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recordings: a versioned binary file of framed records (docs/gate.md,
 * "Recording format").
 *
 *   file   := magic "DMTREC\r\n" | u32 version | u32 flags | frame*
 *   frame  := u32 type | u32 len | u32 crc32(type, len, payload) | payload
 *
 * All integers little endian. The first frame is META (kernel release, attach
 * mode, metric availability with reasons, probe log); then SNAPSHOT and EVENT
 * frames in time order; a clean recording ends with an END frame. Snapshots
 * are an explicit field-by-field encoding of struct dmt_snapshot; pools and
 * bindings are length-prefixed so later versions can append fields; a
 * snapshot repeats the metric availability only when it changed.
 *
 * Writer:  rec_writer__open() -> __meta() -> __snapshot()/__event()* -> __end()
 *          -> __close(). Every frame is flushed to the kernel when written.
 * Reader:  rec_reader__open() -> __next() until 0 (clean end) or -errno
 *          (rec_reader__error() then says what and where, in one line).
 */
#ifndef DEVMEMTOP_RECORD_H
#define DEVMEMTOP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "snapshot.h"

#define REC_MAGIC		"DMTREC\r\n"
#define REC_VERSION		1

/*
 * Header flags. A reader refuses flags it does not know. With any flag set
 * the META frame's CRC also covers the header's version and flags, so a
 * flipped bit is caught whichever way it goes; a header with flags 0 (every
 * recording before flags had a meaning) has the plain META CRC.
 */
#define REC_FLAG_KERNEL_ADDRS	(1u << 0)	/* pool/event addresses are raw */
#define REC_FLAGS_KNOWN		REC_FLAG_KERNEL_ADDRS
/* a full snapshot (REC_MAX_* below) takes less than 16 MiB */
#define REC_MAX_FRAME		(32u << 20)

/*
 * The most a writer puts in one frame, and so the most a reader accepts:
 * the collector's pool slots and overflow map plus as many pools again
 * listed by netlink only; its binding map; its programs; probe log lines.
 * A writer given more keeps the first ones and counts the rest in
 * map_full ("untracked pools/bindings"). A crafted file with more is
 * refused, so the reader's memory is bounded by these, not by the file.
 */
#define REC_MAX_POOLS		(2 * (DMT_POOL_SLOTS + DMT_MAX_POOLS))
#define REC_MAX_BINDINGS	DMT_MAX_BINDINGS
#define REC_MAX_PROGS		256
#define REC_MAX_PROBE_LOG	1024
#define REC_MAX_AVAIL		256
/* sockets holding frag tokens: one per entry of the BPF holder map */
#define REC_MAX_HOLDERS		DMT_MAX_HOLDERS
/* a token holder's tokens and niovs not known (light mode, autorelease off) */
#define REC_UNKNOWN_COUNT	UINT64_MAX

enum rec_frame_type {
	REC_META = 1,
	REC_SNAPSHOT = 2,
	REC_EVENT = 3,
	REC_END = 4,
};

enum rec_end_reason {
	REC_END_DURATION = 0,	/* --duration elapsed */
	REC_END_COMMAND = 1,	/* the command exited */
	REC_END_SIGNAL = 2,	/* SIGINT/SIGTERM */
	REC_END_ERROR = 3,	/* the collector failed mid-run */
};

struct rec_meta {
	char version[32];		/* devmemtop version that wrote it */
	char kernel[128];		/* uname -r */
	char host[64];
	char cmdline[512];		/* the command recorded, or "" */
	uint64_t start_wall_ns;
	uint64_t start_mono_ns;
	uint64_t interval_ns;
	uint32_t mode;			/* enum dmt_attach_mode */
	struct dmt_availability avail[DMT_M__COUNT];
	size_t n_probe_log;
	char **probe_log;
	/*
	 * Writer: false (the default) keeps kernel addresses out of the file:
	 * pool and event addresses are written pseudonymised with a random
	 * per-recording key (still one per object, so identity holds) and
	 * kernel addresses in probe log lines as "(hidden)". Reader: whether
	 * the file has them raw (REC_FLAG_KERNEL_ADDRS).
	 */
	bool kernel_addresses;
};

struct rec_end {
	uint64_t n_snapshots;
	uint64_t n_events;
	uint64_t ringbuf_drops;		/* kernel ring-buffer drops, whole run */
	uint32_t reason;		/* enum rec_end_reason */
	int32_t exit_status;		/* command's wait status, -1 none */
	/*
	 * The recorded command's CPU (its rusage, children included), in a
	 * tagged tail after the fields above: "u16 n, n x (u16 tag, u64
	 * value)", tag 1 user ns, 2 system ns. Older readers stop before it;
	 * older files have none (has_cpu false).
	 */
	bool has_cpu;
	uint64_t cpu_user_ns, cpu_sys_ns;
};

struct rec_item {
	enum rec_frame_type type;
	struct dmt_snapshot *snap;	/* REC_SNAPSHOT: caller frees (snapshot__free layout) */
	struct dmt_event ev;		/* REC_EVENT */
	struct rec_end end;		/* REC_END */
};

/* Encoding, for tests and the fuzzer: 0 or -errno. */
struct rec_buf {
	uint8_t *p;
	size_t len, cap;
	int err;
	const uint64_t *addr_key;	/* [2]: write addresses pseudonymised; NULL raw */
};
void rec_buf__free(struct rec_buf *b);
/*
 * prev_avail: the availability the reader will already know (the previous
 * snapshot's, or META's); when s->avail equals it, it is not repeated.
 * NULL: always write it.
 */
int rec_encode_snapshot(struct rec_buf *b, const struct dmt_snapshot *s,
			const struct dmt_availability *prev_avail);
int rec_encode_meta(struct rec_buf *b, const struct rec_meta *m);
/* On error returns -EBADMSG and sets why. */
/* prev_avail: what "unchanged" availability refers to; NULL: none known. */
int rec_decode_snapshot(const void *p, size_t len, const struct dmt_availability *prev_avail,
			struct dmt_snapshot **out, char *why, size_t wlen);
void rec_meta__fini(struct rec_meta *m);
/*
 * Availability of the metrics a recording of n entries predates (mode: its
 * attach mode): unknown, or derived from the key that covered them then.
 */
void rec_avail__upgrade(struct dmt_availability *a, uint32_t n, uint32_t mode);

struct rec_writer;
/* Creates path mode 0600 (an existing file is made 0600 too): it describes the kernel. */
struct rec_writer *rec_writer__open(const char *path, const struct rec_meta *meta);
int rec_writer__snapshot(struct rec_writer *w, const struct dmt_snapshot *s);
int rec_writer__event(struct rec_writer *w, const struct dmt_event *ev);
int rec_writer__end(struct rec_writer *w, const struct rec_end *end);
/* Flush and close; 0 or -errno (a failed close means lost data). */
int rec_writer__close(struct rec_writer *w);
uint64_t rec_writer__bytes(const struct rec_writer *w);

struct rec_reader;
/* Takes ownership of f. name is used in messages. */
struct rec_reader *rec_reader__open_file(FILE *f, const char *name);
struct rec_reader *rec_reader__open(const char *path);
/* NULL before META has been read successfully. */
const struct rec_meta *rec_reader__meta(const struct rec_reader *r);
/* 1 item read, 0 clean end (after END), -errno damage or I/O error. */
int rec_reader__next(struct rec_reader *r, struct rec_item *it);
/* One line: "FILE: corrupt frame 12 (snapshot) at byte 4096: CRC mismatch". */
const char *rec_reader__error(const struct rec_reader *r);
void rec_reader__free(struct rec_reader *r);

#endif /* DEVMEMTOP_RECORD_H */
