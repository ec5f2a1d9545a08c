// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "runner.h"
#include "util.h"

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

static void on_child(int sig)
{
}

void run__catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void run__describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "ended with wait status 0x%x", status);
}

/* fork + exec; a CLOEXEC pipe reports exec failure. 0 or -errno. */
static int spawn(char **argv, pid_t *pid, char *err, size_t errlen)
{
	int p[2], e = 0;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	*pid = fork();
	if (*pid < 0) {
		e = -errno;
		close(p[0]);
		close(p[1]);
		snprintf(err, errlen, "cannot fork: %s", strerror(-e));
		return e;
	}
	if (*pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		close(p[0]);
		execvp(argv[0], argv);
		e = errno;
		if (write(p[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(p[1]);
	do {
		n = read(p[0], &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n == sizeof(e)) {
		waitpid(*pid, NULL, 0);
		*pid = -1;
		snprintf(err, errlen, "cannot run '%s': %s", argv[0], strerror(e));
		return -e;
	}
	return 0;
}

struct ev_ctx {
	const struct run_opts *o;
	struct run_result *res;
	int err;
};

static int ev_cb(void *ctx, const struct dmt_event *ev)
{
	struct ev_ctx *x = ctx;
	int err;

	x->res->n_events++;
	err = x->o->on_event(x->o->ctx, ev);
	if (err) {
		x->err = err;
		return err;
	}
	return 0;
}

static int deliver(struct collector *c, struct dmt_snapshot *s, const struct run_opts *o,
		   struct run_result *res)
{
	int err;

	if (!s) {
		err = collector__snapshot(c, &s);
		if (err) {
			snprintf(res->err, sizeof(res->err), "snapshot failed: %s", strerror(-err));
			return err;
		}
	}
	res->n_snapshots++;
	res->ringbuf_drops = s->ringbuf_drops;
	err = o->on_snapshot(o->ctx, s);
	snapshot__free(s);
	if (err && !res->err[0])
		snprintf(res->err, sizeof(res->err), "%s", strerror(-err));
	return err;
}

struct child_wait {
	pid_t *child;
	struct run_result *res;
	bool exited;		/* the command exited during this wait */
};

/* waitpid() that also keeps the command's CPU time (compare's run.cpu_per_gib). */
static pid_t wait_cmd(pid_t pid, int *status, int flags, struct run_result *res)
{
	struct rusage ru;
	pid_t r = wait4(pid, status, flags, &ru);

	if (r == pid) {
		res->has_cpu = true;
		res->cpu_user_ns = ru.ru_utime.tv_sec * 1000000000ULL + ru.ru_utime.tv_usec * 1000ULL;
		res->cpu_sys_ns = ru.ru_stime.tv_sec * 1000000000ULL + ru.ru_stime.tv_usec * 1000ULL;
	}
	return r;
}

/* The command exited (or a stop signal came): record how, and stop waiting. */
static bool child_done(void *ctx)
{
	struct child_wait *w = ctx;
	int status;

	if (stop_sig)
		return true;
	if (*w->child > 0 && wait_cmd(*w->child, &status, WNOHANG, w->res) == *w->child) {
		*w->child = -1;
		w->res->cmd_status = status;
		w->res->end = RUN_END_COMMAND;
		w->exited = true;
		return true;
	}
	return false;
}

/*
 * Drain events (or sleep) until the deadline, a signal or the child's exit.
 * One wake-up per deadline or per batch of events, no polling tick: the
 * stop signals and SIGCHLD stay blocked while we check for them and are
 * let in only by the sleep itself (ppoll, epoll_pwait), so none is missed.
 */
static int wait_until(struct collector *c, uint64_t deadline, const struct run_opts *o,
		      struct run_result *res, pid_t *child)
{
	struct child_wait w = { .child = child, .res = res };
	struct ev_ctx x = { .o = o, .res = res };
	int efd, n, err = 0;
	sigset_t sigs, old;
	uint64_t now;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGCHLD);
	if (!o->events) {
		sleep_until(deadline, &sigs, child_done, &w);
		return w.exited;
	}
	efd = collector__events_fd(c);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	while (!child_done(&w) && (now = now_mono_ns()) < deadline) {
		uint64_t left_ms = (deadline - now + 999999) / 1000000;
		struct epoll_event ev;

		epoll_pwait(efd, &ev, 1, left_ms > INT_MAX ? INT_MAX : (int)left_ms, &old);
		n = collector__poll_events(c, 0, ev_cb, &x);
		if (x.err) {
			snprintf(res->err, sizeof(res->err), "event sink failed: %s",
				 strerror(-x.err));
			err = x.err;
			break;
		}
		if (n < 0) {
			snprintf(res->err, sizeof(res->err), "polling events failed: %s",
				 strerror(-n));
			err = n;
			break;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err ? err : w.exited;
}

static void reap(pid_t child, struct run_result *res)
{
	int status;

	if (child <= 0)
		return;
	kill(child, SIGTERM);
	for (int i = 0; i < 50; i++) {
		if (wait_cmd(child, &status, WNOHANG, res) == child) {
			res->cmd_status = status;
			return;
		}
		usleep(100000);
	}
	kill(child, SIGKILL);
	if (wait_cmd(child, &status, 0, res) == child)
		res->cmd_status = status;
}

int run__collect(struct collector *c, struct dmt_snapshot *first, const struct run_opts *o,
		 struct run_result *res)
{
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	struct sigaction chld = { .sa_handler = on_child }, old_chld;
	uint64_t start, next, stop_at = 0;
	pid_t child = -1;
	int err, r;

	memset(res, 0, sizeof(*res));
	res->cmd_status = -1;
	/* not reset: a stop signal caught since run__catch_signals() ends this run too */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	/* a handler, so the child's exit interrupts the sleep (default: discarded) */
	sigaction(SIGCHLD, &chld, &old_chld);

	err = deliver(c, first, o, res);
	if (err)
		goto out_err;
	start = now_mono_ns();
	if (o->cmd) {
		err = spawn(o->cmd, &child, res->err, sizeof(res->err));
		if (err)
			goto out_err;
	}
	if (o->duration_ns)
		stop_at = start + o->duration_ns;
	next = start;
	for (;;) {
		uint64_t deadline;

		next += o->interval_ns;
		deadline = next;
		if (stop_at && stop_at < deadline)
			deadline = stop_at;
		r = wait_until(c, deadline, o, res, &child);
		if (r < 0) {
			err = r;
			goto out_err;
		}
		if (stop_sig) {
			res->end = RUN_END_SIGNAL;
			break;
		}
		if (r == 1) {
			/* the command is done; what it started may still be tearing down */
			if (!o->linger_ns)
				break;
			stop_at = now_mono_ns() + o->linger_ns;
		}
		if (stop_at && now_mono_ns() >= stop_at) {
			if (res->end != RUN_END_COMMAND)
				res->end = RUN_END_DURATION;
			break;
		}
		err = deliver(c, NULL, o, res);
		if (err)
			goto out_err;
	}
	reap(child, res);
	child = -1;
	/* events that arrived since the last poll, then the final snapshot */
	if (o->events) {
		struct ev_ctx x = { .o = o, .res = res };

		collector__poll_events(c, 0, ev_cb, &x);
		if (x.err) {
			err = x.err;
			snprintf(res->err, sizeof(res->err), "event sink failed: %s",
				 strerror(-err));
			goto out_err;
		}
	}
	err = deliver(c, NULL, o, res);
	if (err)
		goto out_err;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	return 0;

out_err:
	reap(child, res);
	res->end = RUN_END_ERROR;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	return err;
}
