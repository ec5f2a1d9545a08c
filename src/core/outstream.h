/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output errors with their real reason. stdio keeps a failed write as an
 * error flag and errno is soon overwritten, so a full disk or a closed
 * stdout went unnoticed (exit 0) or came out as "Input/output error".
 *
 *   while (...) { print...; if (out_flush(stdout)) break; }   stop early
 *   main(): ret = cmd(); out_finish_stdout("devmemtop report", ret, 2)
 *   files:  err = out_close(f);                               0 or -errno
 */
#ifndef DEVMEMTOP_OUTSTREAM_H
#define DEVMEMTOP_OUTSTREAM_H

#include <stdio.h>

/*
 * Make fds 0-2 valid: a closed one is reopened on /dev/null read-only, so
 * no file or BPF object the program opens lands on it (and gets stdout's
 * text), and writing to a closed stdout still fails, with EBADF.
 */
void out_reserve_std_fds(void);

/*
 * -EBADF when path names the stdout that was closed (--junit /dev/stdout
 * with stdout closed would otherwise reach /dev/null), else 0.
 */
int out_check_path(const char *path);

/*
 * Flush f: 0, or -errno of its first failed write (the reason, e.g.
 * -ENOSPC, remembered from the flush that saw it; -EIO only when stdio
 * lost it). Once failed, stays failed.
 */
int out_flush(FILE *f);

/* fwrite() all of p, then out_flush(): 0 or -errno (the reason is kept). */
int out_write(FILE *f, const void *p, size_t n);

/* out_flush(), then fclose(): 0 or the first -errno. */
int out_close(FILE *f);

/*
 * For main(): flush stdout; if any write to it failed, say so once on
 * stderr ("NAME: writing to stdout failed: No space left on device") and
 * return err_exit; else return ret.
 */
int out_finish_stdout(const char *name, int ret, int err_exit);

#endif /* DEVMEMTOP_OUTSTREAM_H */
