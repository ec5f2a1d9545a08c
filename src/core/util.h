/* SPDX-License-Identifier: GPL-2.0 */
#ifndef DEVMEMTOP_UTIL_H
#define DEVMEMTOP_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#define DEVMEMTOP_VERSION "0.1.0"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Leveled logging to stderr, gated by the global verbosity (-v). */
extern int dmt_verbosity;
void dmt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_warn(...)	dmt_log(0, __VA_ARGS__)
#define pr_info(...)	dmt_log(1, __VA_ARGS__)
#define pr_debug(...)	dmt_log(2, __VA_ARGS__)

/*
 * Errors (bpftool's p_err()): the one line a command prints for an error,
 * "devmemtop CMD: message" ("devmemtop: message" for the default live
 * view). Print each error once, where it is handled; callers below return
 * -errno with the reason in a buffer. A trailing newline in fmt is dropped.
 */
void dmt_err_cmd(const char *cmd);		/* main(): the command running, or NULL */
void dmt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t now_mono_ns(void);
uint64_t now_real_ns(void);

/*
 * Sleep until the monotonic deadline, or until one of the signals in sigs
 * arrives (their handlers set the caller's flags), or until done(ctx) says
 * so. The signals are blocked while done() runs and unblocked atomically
 * by the sleep (ppoll), so a signal cannot slip in between: one wake-up
 * per call, however long, where a polling loop would wake every tick
 * (about 50 us of CPU per wake-up on a VM). done may be NULL. Returns 1 when
 * done() said so, else 0.
 */
int sleep_until(uint64_t deadline_ns, const sigset_t *sigs, bool (*done)(void *), void *ctx);

/*
 * Parse a duration ("500ms", "2s", "1m", "1.5", plain seconds) into ns.
 * Returns 0 or -EINVAL.
 */
int parse_duration_ns(const char *s, uint64_t *out);
/*
 * The collection interval of every command and of a gate spec: one parser,
 * one range (DMT_INTERVAL_RANGE says it for messages). 0 or -EINVAL.
 */
#define DMT_INTERVAL_MIN_NS	10000000ULL		/* 10ms */
#define DMT_INTERVAL_MAX_NS	3600000000000ULL	/* 1h */
#define DMT_INTERVAL_RANGE	"a duration from 10ms to 1h"
int parse_interval_ns(const char *s, uint64_t *out);
/*
 * Light mode's sampling: "WINDOW/PERIOD" ("20ms/10s"): the per-page hooks
 * are attached for WINDOW every PERIOD. WINDOW from 1ms to 60s, PERIOD from
 * 100ms to 1h and at least twice WINDOW. 0 or -EINVAL.
 */
#define DMT_SAMPLING_RANGE \
	"WINDOW/PERIOD, window 1ms..60s, period 100ms..1h and >= 2x window"
int parse_sampling(const char *s, unsigned int *window_ms, unsigned int *period_ms);
/*
 * --pools, folded into --mode by issue 36 and still read: "devmem" is
 * DMT_MODE_DEVMEM, "all" the full mode (-1). 0 or -EINVAL.
 */
int parse_pools(const char *s, int *mode);
/* Parse a non-negative integer that must fit in max; 0 or -EINVAL/-ERANGE. */
int parse_uint(const char *s, uint64_t max, uint64_t *out);
/*
 * --mode: "devmem" (DMT_MODE_DEVMEM: per-event programs for devmem only),
 * "full" (-1: every hook on every pool; "auto", its name until issue 36, is
 * still read) or "light" (DMT_MODE_LIGHT); with caps also "fentry" and "tp"
 * (the full mode capped, for comparisons). 0 or -EINVAL.
 */
int parse_mode(const char *s, bool caps, int *mode);
/*
 * The one-line note for a mode spelled by its old name (opt "--pools" or
 * "--mode", val its value): what it is called now. NULL for current names.
 */
const char *mode_rename_note(const char *opt, const char *val);

/* Check we may load BPF: 0, or -EPERM with a one-line reason in buf. */
int check_bpf_privileges(char *buf, size_t len);

/*
 * At least `need` file descriptors: raises the soft RLIMIT_NOFILE towards
 * the hard one when lower. -EMFILE with a one-line reason in buf when the
 * hard limit is below need (e.g. after `ulimit -n 4`).
 */
int check_fd_limit(unsigned long need, char *buf, size_t len);

/* v nanoseconds as "850ns", "12.3us", "4.5ms", "1.2s" (live view, HTML report). */
void fmt_human_ns(char *buf, size_t len, double v);
/* v with a k/M/G suffix past 10^4 (chart axes, sparklines). */
void fmt_human_num(char *buf, size_t len, double v);

#endif /* DEVMEMTOP_UTIL_H */
