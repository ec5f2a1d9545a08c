// SPDX-License-Identifier: GPL-2.0
/* Output errors with their real reason (outstream.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "outstream.h"

static int stdout_err;	/* first -errno seen on stdout */
static struct stat closed_stdout;	/* st_ino != 0: stdout was closed, this is fd 1 now */

void out_reserve_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		n = open("/dev/null", O_RDONLY);
		if (n >= 0 && n != fd) {
			dup2(n, fd);
			close(n);
		}
		if (fd == 1 && fstat(1, &closed_stdout))
			closed_stdout.st_ino = 0;
	}
}

int out_check_path(const char *path)
{
	struct stat st;

	if (closed_stdout.st_ino && !stat(path, &st) && st.st_dev == closed_stdout.st_dev &&
	    st.st_ino == closed_stdout.st_ino)
		return -EBADF;
	return 0;
}

int out_flush(FILE *f)
{
	int err = 0;

	if (fflush(f))
		err = errno ? -errno : -EIO;
	else if (ferror(f))
		err = -EIO;	/* failed earlier and stdio dropped the data */
	if (f == stdout) {
		if (err && (!stdout_err || stdout_err == -EIO))
			stdout_err = err;
		return stdout_err;
	}
	return err;
}

int out_write(FILE *f, const void *p, size_t n)
{
	int err = 0;

	/* a large write bypasses the buffer: its errno is the only trace */
	errno = 0;
	if (fwrite(p, 1, n, f) != n)
		err = errno ? -errno : -EIO;
	if (err && f == stdout && (!stdout_err || stdout_err == -EIO))
		stdout_err = err;
	return out_flush(f) ?: err;
}

int out_close(FILE *f)
{
	int err = out_flush(f);

	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	return err;
}

int out_finish_stdout(const char *name, int ret, int err_exit)
{
	int err = out_flush(stdout);

	if (!err)
		return ret;
	fprintf(stderr, "%s: writing to stdout failed: %s\n", name, strerror(-err));
	return err_exit;
}
