// SPDX-License-Identifier: GPL-2.0
/* Loading small YAML files with one set of bounds (yamlfile.h). */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "yamlfile.h"

int yamlfile__read(const char *path, bool regular_only, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (regular_only ? O_NONBLOCK : 0));
	char *buf = NULL;
	struct stat st;
	size_t n = 0;
	ssize_t r;
	int err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode) || (regular_only && !S_ISREG(st.st_mode))) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -ESPIPE;
		goto out;
	}
	buf = malloc(YAMLFILE_MAX_BYTES + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (n <= YAMLFILE_MAX_BYTES) {
		r = read(fd, buf + n, YAMLFILE_MAX_BYTES + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (!r)
			break;
		n += r;
	}
	if (!err && n > YAMLFILE_MAX_BYTES)
		err = -EFBIG;
	if (err) {
		free(buf);
		goto out;
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
out:
	close(fd);
	return err;
}

static int fail(struct yamlfile_err *e, enum yamlfile_why why, const yaml_mark_t *at,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(struct yamlfile_err *e, enum yamlfile_why why, const yaml_mark_t *at,
		const char *fmt, ...)
{
	va_list ap;

	e->why = why;
	e->line = at ? at->line + 1 : 0;
	e->col = at ? at->column + 1 : 0;
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
	return why == YF_NOMEM ? -ENOMEM : -EINVAL;
}

static int syntax(struct yamlfile_err *e, const yaml_parser_t *p)
{
	if (p->error == YAML_MEMORY_ERROR)
		return fail(e, YF_NOMEM, NULL, "out of memory");
	return fail(e, YF_SYNTAX, &p->problem_mark, "%s%s%s",
		    p->problem ? p->problem : "malformed", p->context ? " " : "",
		    p->context ? p->context : "");
}

/*
 * Over the event stream, before libyaml builds the document: the nesting
 * and the documents, stopping at the first offence (after reading only
 * that far). A syntax error is the loader's to report.
 */
static int prescan(const char *buf, size_t len, struct yamlfile_err *e)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int depth = 0, docs = 0, err = 0;
	bool done = false;

	if (!yaml_parser_initialize(&parser))
		return fail(e, YF_NOMEM, NULL, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done && !err && yaml_parser_parse(&parser, &ev)) {
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1)
				err = fail(e, YF_DOCUMENTS, &ev.start_mark,
					   "a second YAML document: only one YAML document is allowed");
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > YAMLFILE_MAX_DEPTH)
				err = fail(e, YF_DEPTH, &ev.start_mark,
					   "nested deeper than %d levels", YAMLFILE_MAX_DEPTH);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return err;
}

struct key_ref {
	const yaml_node_t *k;
	size_t i;	/* place in the mapping */
};

static int key_cmp(const void *a, const void *b)
{
	const struct key_ref *x = a, *y = b;
	size_t lx = x->k->data.scalar.length, ly = y->k->data.scalar.length;
	int c = memcmp(x->k->data.scalar.value, y->k->data.scalar.value, lx < ly ? lx : ly);

	if (c)
		return c;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static bool same_key(const yaml_node_t *a, const yaml_node_t *b)
{
	return a->data.scalar.length == b->data.scalar.length &&
	       !memcmp(a->data.scalar.value, b->data.scalar.value, a->data.scalar.length);
}

static bool before(const yaml_node_t *a, const yaml_node_t *b)
{
	return a->start_mark.index < b->start_mark.index;
}

/*
 * A scalar key given twice in any mapping: the earliest repeat in the
 * file, with the line of its first. Sorted per mapping, so a hostile
 * mapping of many keys costs n log n, not n^2.
 */
static int duplicates(yaml_document_t *doc, struct yamlfile_err *e)
{
	const yaml_node_t *dup = NULL, *first = NULL;
	struct key_ref *refs = NULL;
	size_t cap = 0;

	for (yaml_node_t *m = doc->nodes.start; m < doc->nodes.top; m++) {
		size_t n = 0, np;

		if (m->type != YAML_MAPPING_NODE)
			continue;
		np = m->data.mapping.pairs.top - m->data.mapping.pairs.start;
		if (np < 2)
			continue;
		if (np > cap) {
			struct key_ref *r = realloc(refs, np * sizeof(*refs));

			if (!r) {
				free(refs);
				return fail(e, YF_NOMEM, NULL, "out of memory");
			}
			refs = r;
			cap = np;
		}
		for (size_t i = 0; i < np; i++) {
			const yaml_node_t *k = yaml_document_get_node(doc,
							m->data.mapping.pairs.start[i].key);

			if (k && k->type == YAML_SCALAR_NODE)
				refs[n++] = (struct key_ref){ k, i };
		}
		qsort(refs, n, sizeof(*refs), key_cmp);
		for (size_t i = 1; i < n; i++) {
			/* refs[i - 1] is the first of a run of equal keys */
			if (!same_key(refs[i - 1].k, refs[i].k))
				continue;
			if (!dup || before(refs[i].k, dup)) {
				dup = refs[i].k;
				first = refs[i - 1].k;
			}
			while (i + 1 < n && same_key(refs[i].k, refs[i + 1].k))
				i++;
		}
	}
	free(refs);
	if (!dup)
		return 0;
	return fail(e, YF_DUPLICATE, &dup->start_mark, "duplicate key '%.*s' (first at line %zu)",
		    (int)(dup->data.scalar.length < 100 ? dup->data.scalar.length : 100),
		    (const char *)dup->data.scalar.value, first->start_mark.line + 1);
}

int yamlfile__parse(const char *buf, size_t len, yaml_document_t *doc, struct yamlfile_err *e)
{
	yaml_parser_t parser;
	int err;

	memset(e, 0, sizeof(*e));
	err = prescan(buf, len, e);
	if (err)
		return err;
	if (!yaml_parser_initialize(&parser))
		return fail(e, YF_NOMEM, NULL, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, doc)) {
		err = syntax(e, &parser);
		goto out;
	}
	err = duplicates(doc, e);
	if (err)
		yaml_document_delete(doc);
out:
	yaml_parser_delete(&parser);
	return err;
}
