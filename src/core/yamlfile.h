/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One way to load the small YAML files devmemtop reads (gate specs,
 * compare specs, the exporter's web config), with the same bounds for
 * all: at most YAMLFILE_MAX_BYTES, one document, nesting no deeper than
 * YAMLFILE_MAX_DEPTH (libyaml's scanner does work per token proportional
 * to the open flow collections: 500k unclosed '[' cost minutes), and no
 * mapping with a key given twice (a later key would silently win).
 *
 *   struct yamlfile_err e;
 *   yaml_document_t doc;
 *
 *   if (yamlfile__parse(buf, len, &doc, &e))
 *           printf("%s:%zu:%zu: %s\n", path, e.line, e.col, e.text);
 *   else
 *           ... walk doc, then yaml_document_delete(&doc);
 *
 * The caller says where (its own prefix) and escapes e.text for its output:
 * a duplicate key is quoted from the file.
 */
#ifndef DEVMEMTOP_YAMLFILE_H
#define DEVMEMTOP_YAMLFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#define YAMLFILE_MAX_BYTES	(1 << 20)
/* the deepest format needs 4 levels (a gate spec); twice that */
#define YAMLFILE_MAX_DEPTH	8

enum yamlfile_why {
	YF_SYNTAX,	/* not YAML: text is libyaml's problem (and context) */
	YF_DEPTH,	/* nested deeper than YAMLFILE_MAX_DEPTH */
	YF_DOCUMENTS,	/* a second document */
	YF_DUPLICATE,	/* a key given twice in one mapping */
	YF_NOMEM,
};

struct yamlfile_err {
	enum yamlfile_why why;
	size_t line, col;	/* 1-based; 0 when there is no place */
	char text[256];
};

/*
 * The whole file at path (NUL-terminated, at most YAMLFILE_MAX_BYTES).
 * regular_only: refuse what is not a regular file (-EISDIR, -ESPIPE)
 * without blocking on it. 0 or -errno (-EFBIG: too large); *buf to free().
 */
int yamlfile__read(const char *path, bool regular_only, char **buf, size_t *len);

/* The one document of buf in doc. 0, or -EINVAL / -ENOMEM with e filled. */
int yamlfile__parse(const char *buf, size_t len, yaml_document_t *doc, struct yamlfile_err *e);

#endif /* DEVMEMTOP_YAMLFILE_H */
