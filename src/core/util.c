// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "snapshot.h"
#include "util.h"

int dmt_verbosity;

void dmt_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > dmt_verbosity)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static const char *err_cmd;

void dmt_err_cmd(const char *cmd)
{
	err_cmd = cmd;
}

void dmt_err(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	/* one call: stderr is unbuffered, and the line must not interleave */
	fprintf(stderr, "devmemtop%s%s: %s\n", err_cmd ? " " : "", err_cmd ? err_cmd : "", msg);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t now_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t now_real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

int sleep_until(uint64_t deadline_ns, const sigset_t *sigs, bool (*done)(void *), void *ctx)
{
	sigset_t old;
	int ret = 0;

	sigprocmask(SIG_BLOCK, sigs, &old);
	for (;;) {
		uint64_t now = now_mono_ns(), left;
		struct timespec ts;

		if (done && done(ctx)) {
			ret = 1;
			break;
		}
		if (now >= deadline_ns)
			break;
		left = deadline_ns - now;
		ts.tv_sec = left / 1000000000ULL;
		ts.tv_nsec = left % 1000000000ULL;
		/* a pending or arriving signal ends the sleep: its handler has run */
		if (ppoll(NULL, 0, &ts, &old) < 0 && errno == EINTR && !done)
			break;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

int parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 },
	};
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		v *= units[i].mult;
		if (v > 1e18)
			return -ERANGE;
		*out = (uint64_t)v;
		return 0;
	}
	return -EINVAL;
}

int parse_pools(const char *s, int *mode)
{
	if (s && !strcmp(s, "devmem"))
		*mode = DMT_MODE_DEVMEM;
	else if (s && !strcmp(s, "all"))
		*mode = -1;
	else
		return -EINVAL;
	return 0;
}

int parse_sampling(const char *s, unsigned int *window_ms, unsigned int *period_ms)
{
	const char *slash = s ? strchr(s, '/') : NULL;
	uint64_t w, p;
	char wbuf[32];

	if (!slash || (size_t)(slash - s) >= sizeof(wbuf))
		return -EINVAL;
	memcpy(wbuf, s, slash - s);
	wbuf[slash - s] = '\0';
	if (parse_duration_ns(wbuf, &w) || parse_duration_ns(slash + 1, &p))
		return -EINVAL;
	if (w < 1000000ULL || w > 60000000000ULL || p < 100000000ULL ||
	    p > 3600000000000ULL || p < 2 * w)
		return -EINVAL;
	*window_ms = w / 1000000;
	*period_ms = p / 1000000;
	return 0;
}

int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE || v > max)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_mode(const char *s, bool caps, int *mode)
{
	if (!strcmp(s, "devmem"))
		*mode = DMT_MODE_DEVMEM;
	else if (!strcmp(s, "full") || !strcmp(s, "auto"))
		*mode = -1;
	else if (!strcmp(s, "light"))
		*mode = DMT_MODE_LIGHT;
	else if (caps && !strcmp(s, "fentry"))
		*mode = DMT_MODE_FENTRY;
	else if (caps && !strcmp(s, "tp"))
		*mode = DMT_MODE_TP_ONLY;
	else
		return -EINVAL;
	return 0;
}

const char *mode_rename_note(const char *opt, const char *val)
{
	if (!strcmp(opt, "--pools"))
		return !strcmp(val, "devmem") ?
			"--pools devmem is now the devmem mode (-m devmem), the default" :
			"--pools all is now the full mode (-m full)";
	if (!strcmp(val, "auto"))
		return "-m auto is now -m full; the default is -m devmem";
	return NULL;
}

#ifndef CAP_PERFMON
#define CAP_PERFMON	38
#endif
#ifndef CAP_BPF
#define CAP_BPF		39
#endif

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

int check_bpf_privileges(char *buf, size_t len)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data)) {
		snprintf(buf, len, "cannot read capabilities: %s", strerror(errno));
		return -errno;
	}
	if (has_cap(data, CAP_SYS_ADMIN))
		return 0;
	if (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON))
		return 0;
	snprintf(buf, len, "needs root, or CAP_BPF and CAP_PERFMON (run with sudo)");
	return -EPERM;
}

int parse_interval_ns(const char *s, uint64_t *out)
{
	uint64_t v;

	if (parse_duration_ns(s, &v) || v < DMT_INTERVAL_MIN_NS || v > DMT_INTERVAL_MAX_NS)
		return -EINVAL;
	*out = v;
	return 0;
}

void fmt_human_ns(char *buf, size_t len, double v)
{
	if (v < 1e3)
		snprintf(buf, len, "%.0fns", v);
	else if (v < 1e6)
		snprintf(buf, len, "%.3gus", v / 1e3);
	else if (v < 1e9)
		snprintf(buf, len, "%.3gms", v / 1e6);
	else
		snprintf(buf, len, "%.3gs", v / 1e9);
}

void fmt_human_num(char *buf, size_t len, double v)
{
	double a = fabs(v);

	if (a >= 1e9)
		snprintf(buf, len, "%.3gG", v / 1e9);
	else if (a >= 1e6)
		snprintf(buf, len, "%.3gM", v / 1e6);
	else if (a >= 1e4)
		snprintf(buf, len, "%.3gk", v / 1e3);
	else
		snprintf(buf, len, "%.4g", v);
}

int check_fd_limit(unsigned long need, char *buf, size_t len)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r))
		return 0;	/* cannot tell: opening will say */
	if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < need) {
		struct rlimit want = r;

		want.rlim_cur = r.rlim_max == RLIM_INFINITY || r.rlim_max >= need ? need : r.rlim_max;
		if (!setrlimit(RLIMIT_NOFILE, &want))
			r.rlim_cur = want.rlim_cur;
	}
	if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < need) {
		snprintf(buf, len, "open file limit is %llu (ulimit -n): needs at least %lu "
			 "for its BPF programs, links and maps",
			 (unsigned long long)r.rlim_cur, need);
		return -EMFILE;
	}
	return 0;
}
