/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The bounded set-associative table (lib/sat): what its users count on. A
 * key is found until its way is given up; a full set gives up the way with
 * the oldest timestamp (th_sat_claim()) or, in a table that only adds, the
 * way claimed first (th_sat_claim_turn()); the memory it reports is what it
 * holds.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "th_sat.h"

struct entry {
	uint64_t key;
	uint64_t t;
};

/* Keys that all fall in set 0 of a table with @p sets sets: the hash is the key itself. */
static uint32_t
hash_in_set0(uint64_t key, uint32_t sets)
{
	return (uint32_t)(key * sets);
}

static struct entry *
add(struct th_sat *s, uint64_t key, uint64_t t, bool is_turn, bool *evicted)
{
	uint32_t h = hash_in_set0(key, th_sat_sets(s));
	struct entry *e = is_turn ? th_sat_claim_turn(s, h, evicted)
				  : th_sat_claim(s, h, offsetof(struct entry, t), evicted);

	e->key = key;
	e->t = t;
	return e;
}

static bool
has(const struct th_sat *s, uint64_t key)
{
	return th_sat_find(s, hash_in_set0(key, th_sat_sets(s)), &key, sizeof(key)) != NULL;
}

/*
 * A table of 64 entries (lazy for th_sat_claim_turn()) with keys 1..TH_SAT_WAYS in set 0,
 * timestamps falling (later keys look older), none evicted.
 */
static void
full_set0(struct th_sat *s, bool is_turn)
{
	bool evicted;

	assert_int_equal(is_turn ? th_sat_init_lazy(s, 64, sizeof(struct entry))
				 : th_sat_init(s, 64, sizeof(struct entry)),
		0);
	for (uint64_t k = 1; k <= TH_SAT_WAYS; k++) {
		add(s, k, 100 - k, is_turn, &evicted);
		assert_false(evicted);
	}
	assert_int_equal(s->used, TH_SAT_WAYS);
}

/* A full set gives up the way whose timestamp is oldest, whatever the order of claims. */
static void
test_claim_oldest(void **state)
{
	struct th_sat s;
	bool evicted;
	uint64_t k;

	(void)state;
	full_set0(&s, false);
	add(&s, 100, 200, false, &evicted);
	assert_true(evicted);
	assert_false(has(&s, TH_SAT_WAYS)); /* timestamp 92, the oldest */
	for (k = 1; k < TH_SAT_WAYS; k++)
		assert_true(has(&s, k));
	assert_true(has(&s, 100));
	th_sat_fini(&s);
}

/* In a table that only adds, a full set gives its ways up in the order they were claimed
 * (the timestamps, falling, would say the opposite). */
static void
test_claim_turn(void **state)
{
	struct th_sat s;
	bool evicted;
	uint64_t k;

	(void)state;
	full_set0(&s, true);
	for (k = 1; k <= 2 * TH_SAT_WAYS + 3; k++) {
		add(&s, 100 + k, 0, true, &evicted);
		assert_true(evicted);
		/* The entry claimed TH_SAT_WAYS claims ago is gone; the ones after it stay. */
		assert_false(has(&s, k <= TH_SAT_WAYS ? k : 100 + k - TH_SAT_WAYS));
		assert_true(has(&s, 100 + k));
		if (k > 1)
			assert_true(has(&s, 100 + k - 1));
	}
	assert_int_equal(s.used, TH_SAT_WAYS);
	/* Other sets are untouched: set 1 has a free way. */
	assert_non_null(th_sat_claim_turn(&s, 1, &evicted));
	assert_false(evicted);
	th_sat_fini(&s);
}

/* Released ways are found free again; the memory reported covers signatures, entries, turns. */
static void
test_release_and_memory(void **state)
{
	struct th_sat s;
	struct entry *e;
	bool evicted;

	(void)state;
	assert_int_equal(th_sat_init(&s, 100, sizeof(struct entry)), 0);
	assert_int_equal(th_sat_sets(&s), 16); /* 100 entries: 16 sets of 8 */
	assert_int_equal(th_sat_memory(&s), 128 * (sizeof(uint32_t) + sizeof(struct entry)));
	e = add(&s, 7, 1, false, &evicted);
	assert_true(has(&s, 7));
	th_sat_release(&s, e);
	assert_false(has(&s, 7));
	assert_int_equal(s.used, 0);
	th_sat_fini(&s);
	assert_int_equal(th_sat_init_lazy(&s, 100, sizeof(struct entry)), 0);
	assert_int_equal(th_sat_memory(&s), 128 * (sizeof(uint32_t) + sizeof(struct entry)) + 16);
	th_sat_fini(&s);
	assert_int_equal(th_sat_init(&s, 0, sizeof(struct entry)), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claim_oldest),
		cmocka_unit_test(test_claim_turn),
		cmocka_unit_test(test_release_and_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
