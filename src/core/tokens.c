// SPDX-License-Identifier: GPL-2.0
/* Frag token accounting: see tokens.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "podcg.h"
#include "tokens.h"

static int cmp_by_niov(const void *a, const void *b)
{
	const struct dmt_tok_entry *x = a, *y = b;

	if (x->val.binding_id != y->val.binding_id)
		return x->val.binding_id < y->val.binding_id ? -1 : 1;
	if (x->val.niov_idx != y->val.niov_idx)
		return x->val.niov_idx < y->val.niov_idx ? -1 : 1;
	return 0;
}

static int cmp_by_socket(const void *a, const void *b)
{
	const struct dmt_tok_entry *x = a, *y = b;

	if (x->key.sk != y->key.sk)
		return x->key.sk < y->key.sk ? -1 : 1;
	return cmp_by_niov(a, b);
}

static int cmp_holder(const void *a, const void *b)
{
	const struct dmt_holder_snap *x = a, *y = b;

	if (x->tokens != y->tokens)
		return x->tokens > y->tokens ? -1 : 1;
	if (x->oldest_age_ns != y->oldest_age_ns)
		return x->oldest_age_ns > y->oldest_age_ns ? -1 : 1;
	return x->sk < y->sk ? -1 : x->sk > y->sk;
}

static const struct dmt_holder *holder_find(const struct dmt_holder *h, size_t nh, uint64_t sk)
{
	for (size_t i = 0; i < nh; i++)
		if (h[i].sk == sk)
			return &h[i];
	return NULL;
}

/* Tokens an entry stands for: a niov's count without autorelease, else 1. */
static uint64_t tok_count(const struct dmt_tok_entry *t)
{
	return t->key.sk ? 1 : t->val.count;
}

static int count_bindings(struct dmt_tok_entry *toks, size_t n, struct tok_agg *out)
{
	if (n)	/* qsort(NULL, 0) is undefined behaviour */
		qsort(toks, n, sizeof(*toks), cmp_by_niov);
	for (size_t i = 0; i < n; i++) {
		struct tok_binding_held *b;
		bool new_niov = !i || cmp_by_niov(&toks[i - 1], &toks[i]);

		if (!i || toks[i - 1].val.binding_id != toks[i].val.binding_id) {
			b = realloc(out->bindings, (out->n_bindings + 1) * sizeof(*b));
			if (!b)
				return -ENOMEM;
			out->bindings = b;
			b = &b[out->n_bindings++];
			memset(b, 0, sizeof(*b));
			b->binding_id = toks[i].val.binding_id;
		}
		b = &out->bindings[out->n_bindings - 1];
		b->tokens += tok_count(&toks[i]);
		if (new_niov)
			b->niovs++;
		if (!toks[i].key.sk)
			b->manual_niovs++;
	}
	return 0;
}

/* A zeroed row at the end of out->holders, NULL when out of memory. */
static struct dmt_holder_snap *holder_new(struct tok_agg *out)
{
	struct dmt_holder_snap *h = realloc(out->holders, (out->n_holders + 1) * sizeof(*h));

	if (!h)
		return NULL;
	out->holders = h;
	h = &h[out->n_holders++];
	memset(h, 0, sizeof(*h));
	return h;
}

/* What the BPF side's holder entry says of a socket, into its snapshot row. */
static void holder_fill(struct dmt_holder_snap *h, const struct dmt_holder *src)
{
	h->pid = src->tgid;
	memcpy(h->comm, src->comm, sizeof(h->comm));
	h->comm[sizeof(h->comm) - 1] = '\0';
	h->binding_id = src->binding_id;
	h->handed = src->handed;
	h->returned = src->returned;
	h->released = src->released;
	h->cgroup_id = src->cgroup_id;
}

/*
 * Sockets without autorelease: one row each from the holder map, tokens =
 * got - returned, niovs = their binding's niovs with such tokens, the age
 * of the binding's oldest such niov.
 */
static int count_manual(const struct dmt_tok_entry *toks, size_t n,
			const struct dmt_holder *holders, size_t nh, uint64_t now_ns,
			struct tok_agg *out)
{
	for (size_t k = 0; k < nh; k++) {
		const struct dmt_holder *src = &holders[k];
		const struct tok_binding_held *b;
		struct dmt_holder_snap *h;

		if (!src->manual || src->handed <= src->returned)
			continue;
		h = holder_new(out);
		if (!h)
			return -ENOMEM;
		h->sk = src->sk;
		holder_fill(h, src);
		h->manual = true;
		h->tokens = src->handed - src->returned;
		b = tok_agg__binding(out, src->binding_id);
		h->niovs = b ? b->manual_niovs : 0;
		for (size_t i = 0; i < n; i++) {
			uint64_t age;

			if (toks[i].key.sk || toks[i].val.binding_id != src->binding_id)
				continue;
			age = now_ns > toks[i].val.ts_ns ? now_ns - toks[i].val.ts_ns : 0;
			if (age > h->oldest_age_ns)
				h->oldest_age_ns = age;
		}
	}
	return 0;
}

static int count_sockets(struct dmt_tok_entry *toks, size_t n, const struct dmt_holder *holders,
			 size_t nh, uint64_t now_ns, struct tok_agg *out)
{
	int err;

	if (n)
		qsort(toks, n, sizeof(*toks), cmp_by_socket);
	err = count_manual(toks, n, holders, nh, now_ns, out);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		const struct dmt_tok_entry *t = &toks[i];
		struct dmt_holder_snap *h;
		uint64_t age;

		if (!t->key.sk)
			continue;	/* counted per niov: count_manual() */
		if (!i || toks[i - 1].key.sk != t->key.sk) {
			const struct dmt_holder *src = holder_find(holders, nh, t->key.sk);

			h = holder_new(out);
			if (!h)
				return -ENOMEM;
			h->sk = t->key.sk;
			h->binding_id = t->val.binding_id;
			if (src)
				holder_fill(h, src);
		}
		h = &out->holders[out->n_holders - 1];
		h->tokens++;
		if (!i || cmp_by_socket(&toks[i - 1], t))
			h->niovs++;
		age = now_ns > t->val.ts_ns ? now_ns - t->val.ts_ns : 0;
		if (age > h->oldest_age_ns)
			h->oldest_age_ns = age;
	}
	if (out->n_holders)
		qsort(out->holders, out->n_holders, sizeof(*out->holders), cmp_holder);
	return 0;
}

int tokens__aggregate(struct dmt_tok_entry *toks, size_t n, const struct dmt_holder *holders,
		      size_t nh, uint64_t now_ns, struct tok_agg *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = count_bindings(toks, n, out);
	if (!err)
		err = count_sockets(toks, n, holders, nh, now_ns, out);
	if (err)
		tok_agg__free(out);
	return err;
}

const struct tok_binding_held *tok_agg__binding(const struct tok_agg *a, uint32_t binding_id)
{
	for (size_t i = 0; i < a->n_bindings; i++)
		if (a->bindings[i].binding_id == binding_id)
			return &a->bindings[i];
	return NULL;
}

void tok_agg__free(struct tok_agg *a)
{
	if (!a)
		return;
	free(a->bindings);
	free(a->holders);
	memset(a, 0, sizeof(*a));
}

struct dmt_holder_key tokens__holder_key(const struct dmt_holder_snap *h)
{
	struct dmt_holder_key k = { .pid = h->pid, .binding_id = h->binding_id };

	if (!h->pid)
		k.sock_ino = h->sock_ino;
	if (!h->pid && !h->sock_ino)
		k.cgroup_id = h->cgroup_id;
	return k;
}

bool tokens__holder_key_eq(const struct dmt_holder_key *a, const struct dmt_holder_key *b)
{
	return a->pid == b->pid && a->binding_id == b->binding_id &&
	       a->sock_ino == b->sock_ino && a->cgroup_id == b->cgroup_id;
}

char *tokens__holder_where(const struct dmt_holder_snap *h, bool short_id, char *buf,
			   size_t len)
{
	struct podcg pc;
	int err = h->cgroup[0] ? podcg__parse(h->cgroup, &pc) : -ENOENT;

	if (h->cgroup[0] && !err) {
		int n = snprintf(buf, len, "pod %s", pc.pod_uid);

		if (pc.container_id[0] && n >= 0 && (size_t)n < len)
			snprintf(buf + n, len - n, " %s%s%.*s", pc.runtime,
				 pc.runtime[0] ? "://" : "", short_id ? 12 : 64,
				 pc.container_id);
	} else if (h->cgroup[0] && err != -ENOENT) {
		/* it looks like a pod's and is not: say so */
		snprintf(buf, len, "%s (%s)", h->cgroup, podcg_why(err));
	} else if (h->cgroup[0]) {
		snprintf(buf, len, "%s", h->cgroup);
	} else if (h->cgroup_id) {
		snprintf(buf, len, "cgroup %llu (path unknown%s)",
			 (unsigned long long)h->cgroup_id,
			 h->cgroup_cut ? ": cgroup walk stopped at its bound" : "");
	} else {
		snprintf(buf, len, "?");
	}
	return buf;
}

static void log2_copy(struct hist_log2 *dst, const struct dmt_log2_hist *src)
{
	memcpy(dst->slots, src->slots, sizeof(dst->slots));
	dst->count = src->count;
	dst->sum = src->sum;
}

void tok_cost_from_bpf(struct dmt_tok_cost *dst, const struct dmt_tok_stats *src)
{
	log2_copy(&dst->per_recvmsg, &src->per_recvmsg);
	log2_copy(&dst->per_dontneed, &src->per_dontneed);
	log2_copy(&dst->dontneed_ns, &src->dontneed_ns);
	log2_copy(&dst->dontneed_ns_token, &src->dontneed_ns_token);
	dst->map_full = src->map_full;
	dst->no_socket = src->no_socket;
	dst->dontneed_mismatch = src->dontneed_mismatch;
	dst->holders_full = src->holders_full;
}
