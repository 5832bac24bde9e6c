/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * MFS text and membership: what anomaly reports print, what users paste back
 * to skip a known anomaly, and which workloads each MFS covers.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "th_anomaly.h"
#include "th_rng.h"

static void
round_trip(const char *text)
{
	struct th_mfs m, m2;
	char err[256] = "", out[512], out2[512];

	if (th_mfs_parse(text, &m, err, sizeof(err)) != 0)
		fail_msg("'%s' rejected: %s", text, err);
	th_mfs_format(&m, out, sizeof(out));
	assert_string_equal(out, text);
	assert_int_equal(th_mfs_parse(out, &m2, err, sizeof(err)), 0);
	th_mfs_format(&m2, out2, sizeof(out2));
	assert_string_equal(out2, out);
	assert_int_equal(m.feats, m2.feats);
}

static void
test_round_trip(void **state)
{
	(void)state;
	round_trip("pause: qp_type=UD opcode=SEND wqe_batch>=64 wq_depth>=256");
	round_trip("pause: mtu=1024|2048 qp_count=16..512");
	round_trip("low_tput: msg_max<=1024");
	round_trip("pause: msg_min>=16384");
	round_trip("pause: msg_min<=1024 msg_max>=65536");
	round_trip("low_tput: mem=remote dir=bidi");
	round_trip("pause: mem=gpu sge=1");
	round_trip("pause: qp_type=RC opcode=READ mr_count>=12288");
	round_trip("low_tput: dir=loopback mr_size<=4096 msg_max=4096");
	round_trip("pause:");
	/* Constrained but with a full range, and an empty set, survive too. */
	round_trip("pause: qp_count>=0");
	round_trip("pause: msg_max>=0");
	round_trip("pause: dir=none");
}

static void
test_parse_is_lenient_where_harmless(void **state)
{
	struct th_mfs m;
	char out[256];

	(void)state;
	/* Extra spaces, lower-case words, repeated bounds that narrow each other. */
	assert_int_equal(th_mfs_parse("  pause:\tqp_type=ud|rc   qp_count>=16 qp_count<=512\n",
		&m, NULL, 0), 0);
	th_mfs_format(&m, out, sizeof(out));
	assert_string_equal(out, "pause: qp_type=RC|UD qp_count=16..512");
	assert_int_equal(th_mfs_parse("pause: msg_min<=1024 msg_min>=64", &m, NULL, 0), 0);
	th_mfs_format(&m, out, sizeof(out));
	assert_string_equal(out, "pause: msg_min=64..1024");
	assert_int_equal(th_mfs_parse("pause: mtu=4096 mtu=2048|4096", &m, NULL, 0), 0);
	th_mfs_format(&m, out, sizeof(out));
	assert_string_equal(out, "pause: mtu=4096");
}

static void
test_parse_rejects_with_the_bad_word(void **state)
{
	static const struct {
		const char *text;
		const char *expect;
	} cases[] = {
		{"", "'pause:' or 'low_tput:'"},
		{"qp_type=UD", "'qp_type=UD': expected 'pause:' or 'low_tput:' first"},
		{"stall: qp_type=UD", "'stall:'"},
		{"pause: qp=UD", "'qp=UD': unknown feature 'qp'"},
		{"pause: qp_type=XRC", "'qp_type=XRC': expected RC|UC|UD"},
		{"pause: qp_type=", "'qp_type=': missing value"},
		{"pause: qp_type=UD|", "'qp_type=UD|'"},
		{"pause: qp_type>=UD", "'qp_type>=UD': an enumerated feature takes '='"},
		{"pause: mtu=1500", "'mtu=1500': expected 1024|2048|4096"},
		{"pause: qp_count>16", "'qp_count>16': use >= or <="},
		{"pause: qp_count", "'qp_count': expected feature=value"},
		{"pause: qp_count>=1k", "'qp_count>=1k': expected a whole number"},
		{"pause: qp_count>=-1", "expected a whole number"},
		{"pause: qp_count=512..16", "'qp_count=512..16': expected LO..HI with LO <= HI"},
		{"pause: qp_count=..16", "expected LO..HI"},
		{"pause: qp_count>=99999999999999999999", "expected a whole number"},
		{"pause: qp_count>=512 qp_count<=16", "'qp_count<=16': no value meets"},
		{"pause: qp_type=UD qp_type=RC", "'qp_type=RC': no value meets"},
		{"pause: msg=1024", "unknown feature 'msg'"},
		{"pause: msg_min<=abc", "'msg_min<=abc'"},
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct th_mfs m;
		char err[256] = "";

		if (th_mfs_parse(cases[i].text, &m, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' accepted", cases[i].text);
		if (strstr(err, cases[i].expect) == NULL)
			fail_msg("'%s': message '%s' lacks '%s'", cases[i].text, err,
				cases[i].expect);
		assert_int_equal(m.feats, 0);
	}
	assert_int_equal(th_mfs_parse(NULL, &(struct th_mfs){0}, NULL, 0), -EINVAL);
}

static void
test_covers(void **state)
{
	struct th_mfs m;
	struct th_wl wl;

	(void)state;
	assert_int_equal(th_mfs_parse("pause: qp_type=UD wqe_batch>=64 wq_depth=256..1024", &m,
		NULL, 0), 0);
	th_wl_default(&wl);
	wl.qp_type = TH_QP_UD;
	wl.opcode = TH_OPC_SEND;
	wl.msg[0] = 1024;
	wl.wqe_batch = 64;
	wl.wq_depth = 256;
	assert_true(th_mfs_covers(&m, &wl));
	wl.wq_depth = 1024;
	assert_true(th_mfs_covers(&m, &wl));
	wl.wq_depth = 1025;
	assert_false(th_mfs_covers(&m, &wl));
	wl.wq_depth = 256;
	wl.wqe_batch = 63;
	assert_false(th_mfs_covers(&m, &wl));
	wl.wqe_batch = 64;
	wl.qp_type = TH_QP_RC;
	assert_false(th_mfs_covers(&m, &wl));

	/* A mixed message pattern: small and large requests together. */
	assert_int_equal(th_mfs_parse("low_tput: msg_min<=1024 msg_max>=65536", &m, NULL, 0), 0);
	th_wl_default(&wl);
	wl.n_msgs = 2;
	wl.msg[0] = 65536;
	wl.msg[1] = 512;
	assert_true(th_mfs_covers(&m, &wl));
	wl.msg[1] = 2048;
	assert_false(th_mfs_covers(&m, &wl)); /* large only */
	wl.msg[0] = 1024;
	wl.msg[1] = 512;
	assert_false(th_mfs_covers(&m, &wl)); /* small only */

	/* MTU bits: 1024 is bit 0. */
	assert_int_equal(th_mfs_parse("pause: mtu=1024|4096", &m, NULL, 0), 0);
	th_wl_default(&wl);
	wl.mtu = 2048;
	assert_false(th_mfs_covers(&m, &wl));
	wl.mtu = 1024;
	assert_true(th_mfs_covers(&m, &wl));

	/* An empty MFS covers everything; any symptom. */
	assert_int_equal(th_mfs_parse("low_tput:", &m, NULL, 0), 0);
	assert_true(th_mfs_covers(&m, &wl));
}

static void
test_format_truncates_safely(void **state)
{
	struct th_mfs m;
	char small[12];
	int need;

	(void)state;
	assert_int_equal(th_mfs_parse("pause: qp_type=UD wqe_batch>=64", &m, NULL, 0), 0);
	need = th_mfs_format(&m, small, sizeof(small));
	assert_int_equal(need, (int)strlen("pause: qp_type=UD wqe_batch>=64"));
	assert_string_equal(small, "pause: qp_t");
	assert_int_equal(th_mfs_format(&m, NULL, 0), need);
}

static bool
same(const char *a, const char *b)
{
	struct th_mfs x, y;

	assert_int_equal(th_mfs_parse(a, &x, NULL, 0), 0);
	assert_int_equal(th_mfs_parse(b, &y, NULL, 0), 0);
	return th_mfs_same(&x, &y);
}

static void
test_same_with_implied_conditions(void **state)
{
	struct th_mfs m;
	char out[256];

	(void)state;
	assert_true(same("pause: opcode=READ mr_count>=12288",
		"pause: qp_type=RC opcode=READ mr_count>=12288"));
	assert_true(same("pause: qp_type=UD wqe_batch>=64",
		"pause: qp_type=UD opcode=SEND wqe_batch>=64"));
	assert_true(same("pause: opcode=WRITE", "pause: qp_type=RC|UC opcode=WRITE"));
	assert_true(same("pause: qp_type=UC|UD opcode=SEND|WRITE", "pause: qp_type=UC|UD"));
	assert_false(same("pause: opcode=READ", "low_tput: opcode=READ"));
	assert_false(same("pause: opcode=SEND", "pause: qp_type=RC opcode=SEND"));
	assert_false(same("pause: wqe_batch>=64", "pause: wqe_batch>=32"));
	assert_false(same("pause: msg_min<=1024", "pause: msg_max<=1024"));
	assert_int_equal(th_mfs_parse("pause: opcode=READ|WRITE", &m, NULL, 0), 0);
	th_mfs_normalize(&m);
	th_mfs_format(&m, out, sizeof(out));
	assert_string_equal(out, "pause: qp_type=RC|UC opcode=WRITE|READ");
}

/*
 * Points drawn inside an MFS are valid and inside it, also where random
 * points practically never are (every request large, F#3's shape), and
 * spread over what it leaves free; an MFS no valid point meets gives
 * -ENOENT, never a point outside it.
 */
static void
test_draw_inside(void **state)
{
	static const char *const shapes[] = {
		"pause: qp_type=RC opcode=READ mtu=1024 msg_min>=16384",
		"pause: qp_type=RC opcode=SEND mtu=1024 wqe_batch>=64 wq_depth>=1024 "
		"msg_min>=2048 msg_max<=8192",
		"low_tput: qp_type=RC opcode=WRITE wqe_batch=1 wq_depth<=16 qp_count>=500 "
		"msg_max<=1024",
		"pause: dir=bidi sge>=3 msg_min<=1024 msg_max>=65536",
	};
	struct th_limits l;
	struct th_rng rng, again;
	struct th_mfs m;
	struct th_wl w, w2;
	unsigned i, k, mems;

	(void)state;
	th_limits_default(&l);
	th_rng_seed(&rng, 5);
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		assert_int_equal(th_mfs_parse(shapes[i], &m, NULL, 0), 0);
		mems = 0;
		for (k = 0; k < 200; k++) {
			again = rng;
			assert_int_equal(th_mfs_draw(&m, &l, &rng, &w), 0);
			assert_int_equal(th_wl_check(&w, &l, NULL, 0), 0);
			assert_true(th_mfs_covers(&m, &w));
			mems |= 1u << w.mem;
			assert_int_equal(th_mfs_draw(&m, &l, &again, &w2), 0);
			assert_true(th_wl_equal(&w, &w2));
		}
		assert_int_equal(mems, 7u);
	}
	/* UD carries only SEND: nothing valid meets this. */
	m.feats = 0;
	assert_int_equal(th_mfs_parse("pause: qp_type=UD wqe_batch>=64", &m, NULL, 0), 0);
	m.feats |= 1u << TH_F_OPCODE;
	m.set[TH_F_OPCODE] = 1u << TH_OPC_READ;
	assert_int_equal(th_mfs_draw(&m, &l, &rng, &w), -ENOENT);
	assert_int_equal(th_mfs_draw(NULL, &l, &rng, &w), -EINVAL);
}

static bool
within(const char *a, const char *b)
{
	struct th_mfs x, y;

	if (th_mfs_parse(a, &x, NULL, 0) != 0 || th_mfs_parse(b, &y, NULL, 0) != 0)
		fail_msg("'%s' or '%s' rejected", a, b);
	return th_mfs_within(&x, &y);
}

/*
 * An anomaly's MFS inside another's marks it as a special case of that
 * cause in the report (a search met F#12's GPU pauses first under eleven
 * conditions, then under three). Within means: every point inside the
 * first is inside the second, which points drawn inside check.
 */
static void
test_within(void **state)
{
	static const char *const pairs[][2] = {
		{"pause: mem=gpu qp_type=UC opcode=SEND|WRITE dir=bidi mtu=2048 sge>=32 "
		 "wq_depth=1024..4096 qp_count=16 mr_count=196608 mr_size<=16384 msg_min=256..512",
			"pause: mem=gpu dir=bidi mtu=2048|4096"},
		{"pause: mem=gpu qp_type=UC dir=bidi mtu=4096 sge>=2",
			"pause: mem=gpu dir=bidi mtu=2048|4096"},
		{"pause: dir=bidi sge>=4 msg_min<=512 msg_max>=131072",
			"pause: dir=bidi sge>=3 msg_min<=1024 msg_max>=65536"},
		/* UD carries only SEND: its MFS holds opcode=SEND without saying so. */
		{"pause: qp_type=UD wqe_batch>=128", "pause: opcode=SEND wqe_batch>=64"},
	};
	static const char *const outside[][2] = {
		{"pause: mem=gpu", "low_tput:"},
		{"pause:", "pause: mem=gpu"},
		{"pause: qp_count=16..1024", "pause: qp_count>=32"},
		{"pause: qp_count=16..1024", "pause: qp_count<=512"},
		{"pause: msg_min<=1024 msg_max>=65536", "pause: msg_max>=131072"},
		{"pause: msg_max<=2048", "pause: msg_min<=1024 msg_max<=2048"},
		{"pause: mtu=1024|2048", "pause: mtu=1024|4096"},
	};
	struct th_limits l;
	struct th_rng rng;
	struct th_mfs x, y;
	struct th_wl w;
	unsigned i, k;

	(void)state;
	th_limits_default(&l);
	th_rng_seed(&rng, 9);
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		assert_true(within(pairs[i][0], pairs[i][1]));
		assert_false(within(pairs[i][1], pairs[i][0]));
		assert_true(within(pairs[i][0], pairs[i][0]));
		assert_int_equal(th_mfs_parse(pairs[i][0], &x, NULL, 0), 0);
		assert_int_equal(th_mfs_parse(pairs[i][1], &y, NULL, 0), 0);
		for (k = 0; k < 100; k++) {
			assert_int_equal(th_mfs_draw(&x, &l, &rng, &w), 0);
			assert_true(th_mfs_covers(&y, &w));
		}
	}
	/*
	 * Any MFS lies within the empty one of its symptom, never of the other;
	 * one bound of a range outside is enough to fall out, so is one message
	 * bound or one value of a set.
	 */
	assert_true(within("pause: mem=gpu", "pause:"));
	for (i = 0; i < sizeof(outside) / sizeof(outside[0]); i++)
		if (within(outside[i][0], outside[i][1]))
			fail_msg("'%s' within '%s'", outside[i][0], outside[i][1]);
}

/*
 * A condition that admits every value a workload may have says nothing: it
 * goes, and nothing else does. Widening and bisection leave such conditions
 * ("qp_count=1..20000" after a trigger with one QP widened one with many).
 */
static void
test_drop_void(void **state)
{
	static const char *const cases[][2] = {
		{"pause: mtu=1024|2048|4096 dir=loopback sge=1..32 qp_count=1..20000 "
		 "msg_min=64..786432",
			"pause: dir=loopback msg_min=64..786432"},
		{"pause: mtu=1024|4096 sge=2..32 qp_count<=19999 msg_min<=1048576 "
		 "msg_max<=1048576",
			"pause: mtu=1024|4096 sge=2..32 qp_count<=19999"},
		{"low_tput: qp_type=RC|UC|UD mr_size<=1073741824 mr_count>=0 wq_depth=1..32768",
			"low_tput:"},
		{"pause: msg_max<=1048576", "pause:"},
		{"pause: msg_min<=1024 msg_max<=1048576", "pause: msg_min<=1024"},
		{"pause: msg_min=0..1048576 msg_max>=65536", "pause: msg_max>=65536"},
		/* A bound at the grid's first value still excludes smaller valid values. */
		{"pause: mr_size>=4096 msg_min>=64", "pause: mr_size>=4096 msg_min>=64"},
		{"pause: sge=2..32 qp_count=1..19999", "pause: sge=2..32 qp_count=1..19999"},
	};
	struct th_limits l;
	struct th_rng rng;
	struct th_mfs m, d;
	struct th_wl w;
	char out[512];
	unsigned i, k, inside = 0;

	(void)state;
	th_limits_default(&l);
	th_rng_seed(&rng, 3);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(th_mfs_parse(cases[i][0], &m, NULL, 0), 0);
		d = m;
		th_mfs_drop_void(&d, &l);
		th_mfs_format(&d, out, sizeof(out));
		assert_string_equal(out, cases[i][1]);
		for (k = 0; k < 2000; k++) {
			th_wl_random(&w, &l, &rng);
			/* Every tenth point off the grids: valid values start at 1. */
			if (k % 10 == 0) {
				w.mr_size = 1 + th_rng_below(&rng, 4095);
				w.msg[0] = 1 + th_rng_below(&rng, 63);
				w.sge = 1;
			}
			if (th_wl_check(&w, &l, NULL, 0) != 0)
				continue;
			assert_int_equal(th_mfs_covers(&m, &w), th_mfs_covers(&d, &w));
			inside += th_mfs_covers(&m, &w);
		}
	}
	assert_true(inside > 100);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_parse_is_lenient_where_harmless),
		cmocka_unit_test(test_parse_rejects_with_the_bad_word),
		cmocka_unit_test(test_covers),
		cmocka_unit_test(test_format_truncates_safely),
		cmocka_unit_test(test_same_with_implied_conditions),
		cmocka_unit_test(test_draw_inside),
		cmocka_unit_test(test_within),
		cmocka_unit_test(test_drop_void),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
