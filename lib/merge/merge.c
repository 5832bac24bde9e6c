/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_merge.h"

#include <errno.h>
#include <stdlib.h>

int
th_merge_init(struct th_merge *m, uint32_t sources, uint32_t max)
{
	uint32_t size = 1, s;

	*m = (struct th_merge){.first = UINT32_MAX};
	if (sources == 0 || max == 0 || max > (1u << 30))
		return -EINVAL;
	while (size < max) /* one source may hold them all */
		size <<= 1;
	m->q = calloc(sources, sizeof(*m->q));
	if (m->q == NULL)
		return -ENOMEM;
	m->sources = sources;
	for (s = 0; s < sources; s++) {
		m->q[s].slot = calloc(size, sizeof(*m->q[s].slot));
		if (m->q[s].slot == NULL) {
			th_merge_fini(m);
			return -ENOMEM;
		}
	}
	m->mask = size - 1;
	m->max = max;
	return 0;
}

void
th_merge_fini(struct th_merge *m)
{
	if (m->q != NULL)
		for (uint32_t s = 0; s < m->sources; s++)
			free(m->q[s].slot);
	free(m->q);
	*m = (struct th_merge){.first = UINT32_MAX};
}

void
th_merge_push(struct th_merge *m, uint32_t source, uint64_t key, void *item)
{
	struct th_merge_queue *q = &m->q[source];

	q->slot[q->tail++ & m->mask] = (struct th_merge_slot){key, item};
	m->n++;
	m->first = UINT32_MAX; /* a new first key, perhaps */
}

uint64_t
th_merge_first_key(struct th_merge *m)
{
	uint64_t least = UINT64_MAX;
	uint32_t s;

	if (m->first != UINT32_MAX)
		return m->q[m->first].slot[m->q[m->first].head & m->mask].key;
	for (s = 0; s < m->sources; s++) {
		const struct th_merge_queue *q = &m->q[s];

		if (q->head != q->tail &&
			(m->first == UINT32_MAX || q->slot[q->head & m->mask].key < least)) {
			least = q->slot[q->head & m->mask].key;
			m->first = s;
		}
	}
	return least;
}

void *
th_merge_pop(struct th_merge *m)
{
	struct th_merge_queue *q;

	if (m->first == UINT32_MAX)
		th_merge_first_key(m);
	q = &m->q[m->first];
	m->first = UINT32_MAX;
	m->n--;
	return q->slot[q->head++ & m->mask].item;
}
