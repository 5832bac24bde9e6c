/* SPDX-License-Identifier: BSD-3-Clause */

/**
 * @file
 * Items from several sources, each source's in key order, taken in one key
 * order: a queue per source, and the least of their first keys goes next
 * (equal keys: the lower source). The capture's session lcores take the ops
 * of several decode lcores in the order of the frames they came from. The
 * whole holds at most a fixed number of items, allocated once.
 */

#ifndef TH_MERGE_H
#define TH_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct th_merge_slot {
	uint64_t key;
	void *item;
};

struct th_merge_queue {
	struct th_merge_slot *slot; /* mask + 1 of them */
	uint32_t head, tail;        /* free-running */
};

struct th_merge {
	struct th_merge_queue *q; /**< one per source */
	uint32_t sources;
	uint32_t mask;  /**< each queue's size less one */
	uint32_t n;     /**< items held */
	uint32_t max;   /**< at most */
	uint32_t first; /**< the source th_merge_first_key() found, or UINT32_MAX */
};

/**
 * Room for @p max items from @p sources sources, allocated now.
 * @return 0, or -ENOMEM, or -EINVAL (no sources, max 0).
 */
int th_merge_init(struct th_merge *m, uint32_t sources, uint32_t max);

void th_merge_fini(struct th_merge *m);

/**
 * Hold @p item under @p key, after what @p source gave before: its keys never
 * go down. The caller makes room first (th_merge_is_full()).
 */
void th_merge_push(struct th_merge *m, uint32_t source, uint64_t key, void *item);

/** The least first key; UINT64_MAX when empty. */
uint64_t th_merge_first_key(struct th_merge *m);

/** Take the item with the least first key. Not empty. */
void *th_merge_pop(struct th_merge *m);

static inline bool
th_merge_is_full(const struct th_merge *m)
{
	return m->n == m->max;
}

#endif
