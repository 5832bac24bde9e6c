/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Random points, mutation and encoding: what the search walks on. Every point
 * it draws or steps to must be one the hardware can run, the walk must reach
 * the whole space, and one mutation must move the feature it was asked to.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "th_rng.h"
#include "th_space.h"

#define DRAWS 100000

static struct th_limits lim;

static int
setup(void **state)
{
	(void)state;
	th_limits_default(&lim);
	return 0;
}

static unsigned
grid_index(enum th_feat f, const struct th_wl *wl, uint64_t v)
{
	uint64_t g[TH_WL_GRID_MAX];
	unsigned n = th_wl_grid(f, wl, &lim, g, TH_WL_GRID_MAX), i;

	for (i = 0; i < n; i++)
		if (g[i] == v)
			return i;
	return UINT32_MAX;
}

static void
test_random_always_valid_and_on_grid(void **state)
{
	unsigned seen_qp[TH_QP__COUNT] = {0}, seen_opc[TH_OPC__COUNT] = {0};
	unsigned seen_mem[TH_MEM__COUNT] = {0}, seen_dir[TH_DIR__COUNT] = {0}, seen_mtu[3] = {0};
	unsigned qp_hist[TH_WL_GRID_MAX] = {0}, big_msg = 0, many_mr = 0, i, j;
	uint64_t g[TH_WL_GRID_MAX];
	unsigned nqp;
	struct th_rng rng;
	struct th_wl wl;
	char err[256];

	(void)state;
	th_rng_seed(&rng, 42);
	for (i = 0; i < DRAWS; i++) {
		th_wl_random(&wl, &lim, &rng);
		if (th_wl_check(&wl, &lim, err, sizeof(err)) != 0)
			fail_msg("draw %u invalid: %s", i, err);
		seen_qp[wl.qp_type]++;
		seen_opc[wl.opcode]++;
		seen_mem[wl.mem]++;
		seen_dir[wl.dir]++;
		seen_mtu[wl.mtu / 2048]++;
		assert_int_not_equal(grid_index(TH_F_QP_COUNT, &wl, wl.qp_count), UINT32_MAX);
		assert_int_not_equal(grid_index(TH_F_WQ_DEPTH, &wl, wl.wq_depth), UINT32_MAX);
		assert_int_not_equal(grid_index(TH_F_MR_SIZE, &wl, wl.mr_size), UINT32_MAX);
		for (j = 0; j < wl.n_msgs; j++)
			assert_int_not_equal(grid_index(TH_F_MSG, &wl, wl.msg[j]), UINT32_MAX);
		qp_hist[grid_index(TH_F_QP_COUNT, &wl, wl.qp_count)]++;
		big_msg += th_wl_msg_max(&wl) >= 65536;
		many_mr += wl.mr_count >= 12000;
	}
	/* Every value of every enumerated feature shows up often. */
	for (i = 0; i < TH_QP__COUNT; i++)
		assert_true(seen_qp[i] > DRAWS / 5);
	for (i = 0; i < TH_OPC__COUNT; i++)
		assert_true(seen_opc[i] > DRAWS / 10);
	for (i = 0; i < TH_MEM__COUNT; i++)
		assert_true(seen_mem[i] > DRAWS / 5);
	for (i = 0; i < TH_DIR__COUNT; i++)
		assert_true(seen_dir[i] > DRAWS / 5);
	assert_true(seen_mtu[0] > DRAWS / 5 && seen_mtu[1] > DRAWS / 5 && seen_mtu[2] > DRAWS / 5);
	/* QP counts uniform over their log grid: each value near DRAWS / n. */
	nqp = th_wl_grid(TH_F_QP_COUNT, &wl, &lim, g, TH_WL_GRID_MAX);
	for (i = 0; i < nqp; i++)
		if (qp_hist[i] < DRAWS / nqp * 8 / 10 || qp_hist[i] > DRAWS / nqp * 12 / 10)
			fail_msg("qp_count=%llu drawn %u times of %u", (unsigned long long)g[i],
				qp_hist[i], DRAWS);
	/* The corners the paper's anomalies live in are reachable. */
	assert_true(big_msg > DRAWS / 50);
	assert_true(many_mr > DRAWS / 20);
}

static void
test_random_same_seed_same_points(void **state)
{
	struct th_rng a, b;
	struct th_wl x, y;
	unsigned i;

	(void)state;
	th_rng_seed(&a, 7);
	th_rng_seed(&b, 7);
	for (i = 0; i < 1000; i++) {
		th_wl_random(&x, &lim, &a);
		th_wl_random(&y, &lim, &b);
		assert_true(th_wl_equal(&x, &y));
	}
}

static void
test_random_respects_tight_limits(void **state)
{
	struct th_limits l = lim;
	struct th_rng rng;
	struct th_wl wl;
	unsigned i;

	(void)state;
	l.has_gpu = false;
	l.has_remote = false;
	l.max_qp = 24;
	l.max_mr = 4;
	l.max_msg = 8192;
	l.max_pinned = 1 << 20;
	th_rng_seed(&rng, 3);
	for (i = 0; i < 10000; i++) {
		th_wl_random(&wl, &l, &rng);
		assert_int_equal(th_wl_check(&wl, &l, NULL, 0), 0);
		assert_int_equal(wl.mem, TH_MEM_LOCAL);
	}
}

static void
test_grids(void **state)
{
	uint64_t g[TH_WL_GRID_MAX];
	struct th_wl wl;
	unsigned n, i;

	(void)state;
	th_wl_default(&wl);
	wl.mtu = 1024;
	n = th_wl_grid(TH_F_MSG, &wl, &lim, g, TH_WL_GRID_MAX);
	/* 64..MTU in powers of two, then whole MTUs: 2, 3, 4, 6, 8, ... x 1024. */
	assert_int_equal(g[0], 64);
	assert_int_equal(g[4], 1024);
	assert_int_equal(g[5], 2048);
	assert_int_equal(g[6], 3072);
	assert_int_equal(g[7], 4096);
	assert_int_equal(g[8], 6144);
	assert_int_equal(g[n - 1], lim.max_msg);
	for (i = 1; i < n; i++)
		assert_true(g[i] > g[i - 1]);
	assert_int_not_equal(grid_index(TH_F_MSG, &wl, 16384), UINT32_MAX);
	assert_int_not_equal(grid_index(TH_F_MSG, &wl, 65536), UINT32_MAX);
	assert_int_equal(grid_index(TH_F_MSG, &wl, 1536), UINT32_MAX);
	wl.mtu = 4096;
	assert_int_not_equal(grid_index(TH_F_MSG, &wl, 12288), UINT32_MAX);
	assert_int_equal(grid_index(TH_F_MSG, &wl, 3072), UINT32_MAX);
	/* Counts: 1, 2, 3, 4, 6, 8, 12, ... and the limit itself. */
	n = th_wl_grid(TH_F_MR_COUNT, &wl, &lim, g, TH_WL_GRID_MAX);
	assert_int_equal(g[2], 3);
	assert_int_equal(g[n - 1], 200000);
	assert_int_not_equal(grid_index(TH_F_MR_COUNT, &wl, 12288), UINT32_MAX);
	n = th_wl_grid(TH_F_QP_COUNT, &wl, &lim, g, TH_WL_GRID_MAX);
	assert_int_equal(g[n - 1], 20000);
	assert_int_equal(g[n - 2], 16384);
	n = th_wl_grid(TH_F_WQE_BATCH, &wl, &lim, g, TH_WL_GRID_MAX);
	assert_int_equal(n, 9); /* 1..256 */
	n = th_wl_grid(TH_F_MTU, &wl, &lim, g, TH_WL_GRID_MAX);
	assert_int_equal(n, 3);
	assert_int_equal(g[2], 4096);
	/* A short buffer is filled, never overrun. */
	assert_int_equal(th_wl_grid(TH_F_QP_COUNT, &wl, &lim, g, 3), 3);
}

static uint32_t
changed(const struct th_wl *a, const struct th_wl *b)
{
	uint32_t m = 0;
	unsigned f;

	for (f = 0; f < TH_F__COUNT; f++)
		if (f == TH_F_MSG ? (a->n_msgs != b->n_msgs ||
					    memcmp(a->msg, b->msg, sizeof(a->msg)) != 0)
				  : th_wl_get(a, (enum th_feat)f) != th_wl_get(b, (enum th_feat)f))
			m |= 1u << f;
	return m;
}

static void
test_mutate_valid_and_targeted(void **state)
{
	unsigned moved[TH_F__COUNT] = {0}, fails = 0, i;
	struct th_rng rng;
	struct th_wl wl, before;
	char err[256];

	(void)state;
	th_rng_seed(&rng, 11);
	th_wl_random(&wl, &lim, &rng);
	for (i = 0; i < 200000; i++) {
		enum th_feat f = (enum th_feat)th_rng_below(&rng, TH_F__COUNT);
		uint32_t ch;
		int r;

		before = wl;
		r = th_wl_mutate(&wl, f, &lim, &rng);
		if (r != 0) {
			/* Only a UD point's opcode has no other legal value. */
			assert_int_equal(r, -EINVAL);
			assert_true(th_wl_equal(&wl, &before));
			assert_true(f == TH_F_OPCODE && wl.qp_type == TH_QP_UD);
			fails++;
			continue;
		}
		if (th_wl_check(&wl, &lim, err, sizeof(err)) != 0)
			fail_msg("step %u (%s) made an invalid point: %s", i, th_feat_name(f), err);
		ch = changed(&before, &wl);
		if (!(ch & (1u << f)))
			fail_msg("step %u: %s did not change", i, th_feat_name(f));
		if (ch & ~(1u << f | th_wl_feat_deps(f)))
			fail_msg("step %u: mutating %s changed 0x%x", i, th_feat_name(f), ch);
		moved[f]++;
		/* Restart now and then so the walk covers the whole space. */
		if (i % 1000 == 999)
			th_wl_random(&wl, &lim, &rng);
	}
	for (i = 0; i < TH_F__COUNT; i++)
		assert_true(moved[i] > 10000);
	assert_true(fails > 0);
}

static void
test_mutate_fixes_dependents(void **state)
{
	struct th_rng rng;
	struct th_wl wl;
	unsigned i, ud = 0;

	(void)state;
	th_rng_seed(&rng, 5);
	for (i = 0; i < 2000; i++) {
		th_wl_default(&wl);
		wl.opcode = TH_OPC_READ;
		wl.msg[0] = 65536;
		assert_int_equal(th_wl_mutate(&wl, TH_F_QP_TYPE, &lim, &rng), 0);
		assert_int_not_equal(wl.qp_type, TH_QP_RC);
		assert_int_equal(wl.opcode, wl.qp_type == TH_QP_UD ? TH_OPC_SEND : wl.opcode);
		assert_int_not_equal(wl.opcode, TH_OPC_READ);
		if (wl.qp_type == TH_QP_UD) {
			assert_true(th_wl_msg_max(&wl) <= wl.mtu);
			ud++;
		}
	}
	assert_true(ud > 500);
	/* A batch larger than the queue drags the queue up with it. */
	th_wl_default(&wl);
	wl.wq_depth = 1;
	for (i = 0; i < 50; i++) {
		assert_int_equal(th_wl_mutate(&wl, TH_F_WQE_BATCH, &lim, &rng), 0);
		assert_true(wl.wq_depth >= wl.wqe_batch);
	}
	/* A UD point's opcode has nowhere to go. */
	th_wl_default(&wl);
	wl.qp_type = TH_QP_UD;
	wl.opcode = TH_OPC_SEND;
	wl.msg[0] = 1024;
	assert_int_equal(th_wl_mutate(&wl, TH_F_OPCODE, &lim, &rng), -EINVAL);
	/* An invalid point is refused, not mutated. */
	wl.opcode = TH_OPC_READ;
	assert_int_equal(th_wl_mutate(&wl, TH_F_QP_COUNT, &lim, &rng), -EINVAL);
	assert_int_equal(th_wl_mutate(&wl, TH_F__COUNT, &lim, &rng), -EINVAL);
}

static void
test_mutate_mostly_neighbours(void **state)
{
	struct th_rng rng;
	struct th_wl wl;
	unsigned i, near = 0;

	(void)state;
	th_rng_seed(&rng, 9);
	for (i = 0; i < 1000; i++) {
		unsigned a, b;

		th_wl_default(&wl);
		wl.qp_count = 256;
		a = grid_index(TH_F_QP_COUNT, &wl, wl.qp_count);
		assert_int_equal(th_wl_mutate(&wl, TH_F_QP_COUNT, &lim, &rng), 0);
		b = grid_index(TH_F_QP_COUNT, &wl, wl.qp_count);
		near += a + 1 == b || b + 1 == a;
	}
	/* Most steps are neighbours (annealing), some are jumps (escape). */
	assert_true(near > 600 && near < 900);
}

/*
 * A random pattern is the whole request vector, each size drawn alone: a
 * pattern of only small (or only large) requests is a rare corner, as it is
 * in the space, and the walk reaches it by moves that change every request at
 * once (the whole pattern a grid step, one of its sizes alone).
 */
static void
test_pattern_vector_and_moves(void **state)
{
	unsigned i, j, small = 0, alone = 0, shifted = 0;
	struct th_rng rng;
	struct th_wl wl, w;

	(void)state;
	th_rng_seed(&rng, 5);
	for (i = 0; i < DRAWS; i++) {
		th_wl_random(&wl, &lim, &rng);
		assert_int_equal(wl.n_msgs, TH_WL_MSGS_MAX);
		/* UD's requests fit one MTU: small at a 1K MTU whatever is drawn. */
		if (wl.qp_type != TH_QP_UD)
			small += th_wl_msg_max(&wl) <= 1024;
	}
	print_message("RC/UC patterns of requests <= 1 KiB only: %u of %u\n", small, DRAWS);
	assert_true(small < DRAWS / 1000);
	for (i = 0; i < 2000; i++) {
		unsigned up = 0, down = 0, same = 0;

		th_wl_random(&wl, &lim, &rng);
		w = wl;
		assert_int_equal(th_wl_mutate(&w, TH_F_MSG, &lim, &rng), 0);
		assert_int_equal(th_wl_check(&w, &lim, NULL, 0), 0);
		alone += w.n_msgs == 1;
		if (w.n_msgs != wl.n_msgs)
			continue;
		for (j = 0; j < wl.n_msgs; j++) {
			unsigned a = grid_index(TH_F_MSG, &wl, wl.msg[j]);
			unsigned b = grid_index(TH_F_MSG, &w, w.msg[j]);

			up += b == a + 1;
			down += b + 1 == a;
			same += b == a;
		}
		/* Every request a step the same way (those at an end of the grid stay). */
		shifted += (up > 1 && up + same == wl.n_msgs) ||
			   (down > 1 && down + same == wl.n_msgs);
	}
	print_message("one size alone %u, whole pattern shifted %u of 2000\n", alone, shifted);
	/* Each of the two moves is about one step in seven. */
	assert_true(alone > 2000 / 10 && alone < 2000 / 4);
	assert_true(shifted > 2000 / 20);
}

/* Distinct request sizes in @p wl's pattern, at most three counted. */
static unsigned
sizes_in(const struct th_wl *wl)
{
	uint32_t seen[3];
	unsigned n = 0, i, j;

	for (i = 0; i < wl->n_msgs && n < 3; i++) {
		for (j = 0; j < n && seen[j] != wl->msg[i]; j++)
			;
		if (j == n)
			seen[n++] = wl->msg[i];
	}
	return n;
}

static void
test_shaped_patterns(void **state)
{
	unsigned one = 0, two = 0, small = 0, i;
	struct th_rng a, b;
	struct th_wl wl, w2;

	(void)state;
	th_rng_seed(&a, 9);
	th_rng_seed(&b, 9);
	for (i = 0; i < DRAWS; i++) {
		th_wl_random_shaped(&wl, &lim, &a);
		th_wl_random_shaped(&w2, &lim, &b);
		assert_true(th_wl_equal(&wl, &w2));
		assert_int_equal(th_wl_check(&wl, &lim, NULL, 0), 0);
		assert_int_equal(wl.n_msgs, TH_WL_MSGS_MAX);
		one += sizes_in(&wl) == 1;
		two += sizes_in(&wl) == 2;
		if (wl.qp_type != TH_QP_UD)
			small += th_wl_msg_max(&wl) <= 1024;
	}
	print_message("shaped: one size %u, two sizes %u, RC/UC requests <= 1 KiB only %u of %u\n",
		one, two, small, DRAWS);
	/* Half one size, a quarter two (fewer: both draws can be one size). */
	assert_true(one > DRAWS * 48 / 100 && one < DRAWS * 56 / 100);
	assert_true(two > DRAWS * 20 / 100 && two < DRAWS * 25 / 100);
	/* What th_wl_random() all but never draws (test_pattern_vector_and_moves). */
	assert_true(small > DRAWS / 20);
}

static void
test_encode_in_unit_cube(void **state)
{
	double x[TH_WL_DIMS], y[TH_WL_DIMS];
	struct th_rng rng;
	struct th_wl wl;
	unsigned i, d;

	(void)state;
	th_rng_seed(&rng, 1);
	for (i = 0; i < 20000; i++) {
		th_wl_random(&wl, &lim, &rng);
		th_wl_encode(&wl, &lim, x);
		for (d = 0; d < TH_WL_DIMS; d++)
			assert_true(x[d] >= 0 && x[d] <= 1);
	}
	/* The ends of each range map to 0 and 1, on log scales. */
	th_wl_default(&wl);
	wl.qp_count = 1;
	th_wl_encode(&wl, &lim, x);
	wl.qp_count = 20000;
	th_wl_encode(&wl, &lim, y);
	assert_true(x[8] == 0 && y[8] == 1);
	wl.qp_count = 141; /* about the geometric middle of 1..20000 */
	th_wl_encode(&wl, &lim, y);
	assert_true(y[8] > 0.45 && y[8] < 0.55);
	/* Points that differ in one feature differ in the encoding. */
	th_wl_default(&wl);
	th_wl_encode(&wl, &lim, x);
	wl.dir = TH_DIR_BIDI;
	th_wl_encode(&wl, &lim, y);
	assert_true(memcmp(x, y, sizeof(x)) != 0);
	/* Garbage is clamped, not propagated. */
	memset(&wl, 0xff, sizeof(wl));
	th_wl_encode(&wl, &lim, x);
	for (d = 0; d < TH_WL_DIMS; d++)
		assert_true(x[d] >= 0 && x[d] <= 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_always_valid_and_on_grid),
		cmocka_unit_test(test_random_same_seed_same_points),
		cmocka_unit_test(test_random_respects_tight_limits),
		cmocka_unit_test(test_grids),
		cmocka_unit_test(test_mutate_valid_and_targeted),
		cmocka_unit_test(test_mutate_fixes_dependents),
		cmocka_unit_test(test_mutate_mostly_neighbours),
		cmocka_unit_test(test_pattern_vector_and_moves),
		cmocka_unit_test(test_shaped_patterns),
		cmocka_unit_test(test_encode_in_unit_cube),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
