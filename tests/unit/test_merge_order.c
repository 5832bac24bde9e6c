/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Taking items of several ordered sources in one order (lib/merge): by key,
 * each source's items in its own order, whatever the sources' interleaving.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "th_merge.h"
#include "th_rng.h"

struct item {
	uint64_t key;
	unsigned int source;
	unsigned int index; /* within its source */
};

/*
 * Three sources, each in key order and some with several items under one key
 * (a frame's ops), arrive interleaved in random runs: what comes out is in key
 * order, and each source's items in its own order.
 */
static void
test_sources_interleaved(void **state)
{
	enum { SOURCES = 3, PER = 2000 };
	static struct item items[SOURCES][PER];
	unsigned int next[SOURCES] = {0}, pushed = 0, taken = 0, last_index[SOURCES] = {0};
	struct th_rng rng;
	struct th_merge m;
	uint64_t key = 0, last_key = 0;

	(void)state;
	th_rng_seed(&rng, 7);
	for (unsigned int total = 0; total < SOURCES * PER;) {
		unsigned int s = th_rng_below(&rng, SOURCES), run = 1 + th_rng_below(&rng, 3);

		if (next[s] == PER)
			continue;
		key++;
		for (unsigned int r = 0; r < run && next[s] < PER; r++, total++) {
			items[s][next[s]] = (struct item){key, s, next[s]};
			next[s]++;
		}
	}
	for (unsigned int s = 0; s < SOURCES; s++)
		next[s] = 0;
	assert_int_equal(th_merge_init(&m, SOURCES, SOURCES * PER), 0);
	while (pushed < SOURCES * PER) {
		unsigned int s = th_rng_below(&rng, SOURCES), run = 1 + th_rng_below(&rng, 50);

		for (unsigned int r = 0; r < run && next[s] < PER; r++, pushed++) {
			struct item *it = &items[s][next[s]++];

			th_merge_push(&m, s, it->key, it);
		}
	}
	assert_true(th_merge_is_full(&m));
	while (th_merge_first_key(&m) != UINT64_MAX) {
		uint64_t first = th_merge_first_key(&m);
		struct item *it = th_merge_pop(&m);

		assert_int_equal(it->key, first);
		assert_true(it->key >= last_key);
		if (it->index > 0)
			assert_int_equal(it->index, last_index[it->source] + 1);
		last_key = it->key;
		last_index[it->source] = it->index;
		taken++;
	}
	assert_int_equal(taken, SOURCES * PER);
	th_merge_fini(&m);
}

/*
 * Pushes between looks: a push can bring a new least key (the slow source's
 * next frame), and a pop without a look first still takes the least. Equal
 * keys of one source leave in its order; of two sources, the lower first.
 */
static void
test_push_between_pops(void **state)
{
	int v[8];
	struct th_merge m;

	(void)state;
	assert_int_equal(th_merge_init(&m, 2, 5), 0);
	th_merge_push(&m, 0, 10, &v[0]);
	th_merge_push(&m, 0, 10, &v[1]);
	th_merge_push(&m, 0, 12, &v[2]);
	assert_int_equal(th_merge_first_key(&m), 10);
	th_merge_push(&m, 1, 4, &v[3]);
	assert_int_equal(th_merge_first_key(&m), 4);
	assert_ptr_equal(th_merge_pop(&m), &v[3]);
	th_merge_push(&m, 1, 12, &v[4]);
	th_merge_push(&m, 1, 13, &v[5]);
	assert_true(th_merge_is_full(&m));
	assert_ptr_equal(th_merge_pop(&m), &v[0]);
	assert_ptr_equal(th_merge_pop(&m), &v[1]);
	assert_ptr_equal(th_merge_pop(&m), &v[2]);
	assert_ptr_equal(th_merge_pop(&m), &v[4]);
	assert_ptr_equal(th_merge_pop(&m), &v[5]);
	assert_int_equal(th_merge_first_key(&m), UINT64_MAX);
	th_merge_fini(&m);
}

/* One source may hold every item: its queue wraps round without losing any. */
static void
test_one_source_wraps(void **state)
{
	static int v[100];
	struct th_merge m;
	unsigned int in = 0, out = 0;

	(void)state;
	assert_int_equal(th_merge_init(&m, 4, 6), 0);
	while (out < 100) {
		while (in < 100 && !th_merge_is_full(&m)) {
			th_merge_push(&m, 2, in, &v[in]);
			in++;
		}
		assert_int_equal(th_merge_first_key(&m), out);
		assert_ptr_equal(th_merge_pop(&m), &v[out]);
		out++;
	}
	th_merge_fini(&m);
}

static void
test_no_room_refused(void **state)
{
	struct th_merge m;

	(void)state;
	assert_int_equal(th_merge_init(&m, 2, 0), -EINVAL);
	assert_int_equal(th_merge_init(&m, 0, 8), -EINVAL);
	assert_null(m.q);
	th_merge_fini(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sources_interleaved),
		cmocka_unit_test(test_push_between_pops),
		cmocka_unit_test(test_one_source_wraps),
		cmocka_unit_test(test_no_room_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
