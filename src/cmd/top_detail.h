/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live view's interactive parts, apart from the tables in top.c: row
 * selection (arrows, j/k), the detail pane of one pool or binding (Enter;
 * Esc returns) with its histograms as bars, an occupancy gauge and
 * sparklines of the last minute, the help overlay, and netns names.
 *
 *   struct top_ui *u = top_ui__new();          NULL on ENOMEM
 *   top_ui__feed(u, snap);                     every snapshot: history
 *   top_ui__key(u, ch, rows, n);               rows: the table's, in order
 *   if (top_ui__detail_open(u)) top_ui__draw_detail(u, snap);
 *   top_ui__free(u);
 *
 * The pane is built as text first (top_ui__detail_lines), so it is tested
 * without a terminal; every line fits in the given width.
 */
#ifndef DEVMEMTOP_TOP_DETAIL_H
#define DEVMEMTOP_TOP_DETAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "snapshot.h"

enum top_sel_kind {
	TOP_SEL_NONE = 0,
	TOP_SEL_BINDING,
	TOP_SEL_POOL,
};

/* A selectable table row. */
struct top_sel {
	enum top_sel_kind kind;
	uint32_t id;		/* binding id, pool netlink id */
	uint64_t addr;		/* pools: kernel address (id 0: unlisted) */
};

struct top_ui;

struct top_ui *top_ui__new(void);
void top_ui__free(struct top_ui *u);
/* Remember holds/s, inflight and occupancy of every object for a minute. */
void top_ui__feed(struct top_ui *u, const struct dmt_snapshot *s);
/*
 * Handle a key; rows are the table's selectable rows in display order.
 * Returns true when the key was the UI's (selection, detail, Esc).
 */
bool top_ui__key(struct top_ui *u, int ch, const struct top_sel *rows, size_t n);
bool top_ui__detail_open(const struct top_ui *u);
/* Whether row r is the selected one (for the table's highlight). */
bool top_ui__is_selected(const struct top_ui *u, const struct top_sel *r);
/* Keep the selection on a row that still exists (first row otherwise). */
void top_ui__fix_selection(struct top_ui *u, const struct top_sel *rows, size_t n);

struct top_dlines {
	char **v;
	int *bold;
	size_t n;
};
/*
 * The detail pane for the selected object as at most rows lines of at most
 * cols columns; utf8 picks block characters for sparklines. 0 or -ENOMEM.
 */
int top_ui__detail_lines(const struct top_ui *u, const struct dmt_snapshot *s, int rows,
			 int cols, bool utf8, struct top_dlines *out);
void top_dlines__free(struct top_dlines *d);
/* Draw the pane on stdscr (erase, lines, refresh is the caller's). */
void top_ui__draw_detail(const struct top_ui *u, const struct dmt_snapshot *s);
/* The key help over the table, on a cleared box. */
void top_ui__draw_help(void);
/* The bottom line's key summary. */
const char *top_ui__keys_line(const struct top_ui *u);

/*
 * A network namespace's name from /run/netns (as `ip netns` knows it) by
 * inode, else the inode in decimal; "-" for 0. Rescans at most every 2 s.
 */
const char *top_netns_name(uint32_t ino, char *buf, size_t len);

#endif /* DEVMEMTOP_TOP_DETAIL_H */
