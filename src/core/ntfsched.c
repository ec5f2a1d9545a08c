// SPDX-License-Identifier: GPL-2.0
/* Windows for announced page pools (ntfsched.h). */
#include <errno.h>
#include "ntfsched.h"

#define NS_PER_S	1000000000ULL

int ntf_sched__add(struct ntf_sched *s, uint32_t id, uint64_t now)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].id == id)
			return 0;	/* a change of a pool already waiting */
	if (s->n == NTF_PENDING)
		return -ENOSPC;
	s->p[s->n++] = (struct ntf_pending){ .id = id, .next_ns = now };
	return 0;
}

bool ntf_sched__due(struct ntf_sched *s, uint64_t now,
		    bool (*located)(void *ctx, uint32_t id), void *ctx)
{
	bool due = false;
	size_t keep = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct ntf_pending *p = &s->p[i];

		if (p->tries >= NTF_TRIES || located(ctx, p->id))
			continue;
		if (now >= p->next_ns) {
			/* the next one 1, 1, 2, 4, 8, 16 s after this one's time */
			p->next_ns += p->tries ? NS_PER_S << (p->tries - 1) : NS_PER_S;
			p->tries++;
			due = true;
		}
		s->p[keep++] = *p;
	}
	s->n = keep;
	return due;
}
