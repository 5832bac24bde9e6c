/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The workload space refuses every point the hardware cannot run, before any
 * backend sees it, and says which feature is at fault.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "th_backend.h"
#include "th_space.h"

static struct th_limits lim;

static int
setup(void **state)
{
	(void)state;
	th_limits_default(&lim);
	return 0;
}

/* A valid point; every case below breaks exactly one thing in it. */
static void
good(struct th_wl *wl)
{
	th_wl_default(wl);
	wl->qp_type = TH_QP_RC;
	wl->opcode = TH_OPC_WRITE;
	wl->mtu = 1024;
	wl->wqe_batch = 16;
	wl->wq_depth = 256;
	wl->sge = 4;
	wl->qp_count = 64;
	wl->mr_count = 128;
	wl->mr_size = 1 << 20;
	wl->n_msgs = 2;
	wl->msg[0] = 1024;
	wl->msg[1] = 65536;
}

static void
expect_reject(const struct th_wl *wl, const char *feature_word)
{
	char err[256] = "";

	assert_int_equal(th_wl_check(wl, &lim, err, sizeof(err)), -EINVAL);
	if (strstr(err, feature_word) == NULL)
		fail_msg("reason '%s' does not name '%s'", err, feature_word);
}

static void
test_limits_are_the_papers(void **state)
{
	(void)state;
	assert_int_equal(lim.max_qp, 20000);
	assert_int_equal(lim.max_mr, 200000);
	assert_true(lim.has_gpu);
	assert_true(lim.has_remote);
	assert_true(lim.max_pinned >= (uint64_t)lim.max_mr * 4096);
}

static void
test_good_point_passes(void **state)
{
	struct th_wl wl;
	char err[256] = "";

	(void)state;
	good(&wl);
	assert_int_equal(th_wl_check(&wl, &lim, err, sizeof(err)), 0);
	th_wl_default(&wl);
	assert_int_equal(th_wl_check(&wl, &lim, err, sizeof(err)), 0);
	/* A NULL reason buffer is allowed. */
	assert_int_equal(th_wl_check(&wl, &lim, NULL, 0), 0);
}

static void
test_opcode_per_qp_type(void **state)
{
	static const struct {
		uint8_t qp, opc;
		bool ok;
	} cases[] = {
		{TH_QP_RC, TH_OPC_SEND, true},  {TH_QP_RC, TH_OPC_WRITE, true},
		{TH_QP_RC, TH_OPC_READ, true},  {TH_QP_UC, TH_OPC_SEND, true},
		{TH_QP_UC, TH_OPC_WRITE, true}, {TH_QP_UC, TH_OPC_READ, false},
		{TH_QP_UD, TH_OPC_SEND, true},  {TH_QP_UD, TH_OPC_WRITE, false},
		{TH_QP_UD, TH_OPC_READ, false},
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct th_wl wl;

		good(&wl);
		wl.qp_type = cases[i].qp;
		wl.opcode = cases[i].opc;
		if (wl.qp_type == TH_QP_UD) {
			wl.msg[0] = 512;
			wl.msg[1] = 1024;
		}
		if (cases[i].ok)
			assert_int_equal(th_wl_check(&wl, &lim, NULL, 0), 0);
		else
			expect_reject(&wl, "opcode");
	}
	{
		struct th_wl wl;
		char err[256];

		good(&wl);
		wl.qp_type = TH_QP_UC;
		wl.opcode = TH_OPC_READ;
		th_wl_check(&wl, &lim, err, sizeof(err));
		assert_non_null(strstr(err, "RC"));
	}
}

static void
test_each_impossible_case(void **state)
{
	struct th_wl wl;
	struct th_limits small;

	(void)state;
	good(&wl), wl.mem = 7, expect_reject(&wl, "mem");
	good(&wl), wl.qp_type = 3, expect_reject(&wl, "qp_type");
	good(&wl), wl.opcode = 3, expect_reject(&wl, "opcode");
	good(&wl), wl.dir = 3, expect_reject(&wl, "dir");
	good(&wl), wl.mtu = 1500, expect_reject(&wl, "mtu");
	good(&wl), wl.mtu = 0, expect_reject(&wl, "mtu");
	good(&wl), wl.qp_count = 20001, expect_reject(&wl, "qp_count");
	good(&wl), wl.qp_count = 0, expect_reject(&wl, "qp_count");
	good(&wl), wl.mr_count = 200001, expect_reject(&wl, "mr_count");
	good(&wl), wl.mr_count = 0, expect_reject(&wl, "mr_count");
	good(&wl), wl.mr_size = 0, expect_reject(&wl, "mr_size");
	good(&wl), wl.mr_size = lim.max_mr_size * 2, expect_reject(&wl, "mr_size");
	/* 100K MRs of 1 GiB each: every one is legal, together they pin too much. */
	good(&wl), wl.mr_count = 100000, wl.mr_size = 1 << 30;
	expect_reject(&wl, "max_pinned");
	expect_reject(&wl, "mr_count");
	good(&wl), wl.sge = 0, expect_reject(&wl, "sge");
	good(&wl), wl.sge = lim.max_sge + 1, expect_reject(&wl, "sge");
	good(&wl), wl.wqe_batch = 0, expect_reject(&wl, "wqe_batch");
	good(&wl), wl.wqe_batch = lim.max_wqe_batch + 1, wl.wq_depth = 4096;
	expect_reject(&wl, "wqe_batch");
	good(&wl), wl.wq_depth = 8, expect_reject(&wl, "wq_depth");
	good(&wl), wl.wq_depth = lim.max_wq_depth + 1, expect_reject(&wl, "wq_depth");
	good(&wl), wl.n_msgs = 0, expect_reject(&wl, "msg");
	good(&wl), wl.n_msgs = TH_WL_MSGS_MAX + 1, expect_reject(&wl, "msg");
	good(&wl), wl.msg[1] = 0, expect_reject(&wl, "msg");
	good(&wl), wl.msg[1] = lim.max_msg + 1, expect_reject(&wl, "max_msg");
	/* UD carries one MTU per message. */
	good(&wl), wl.qp_type = TH_QP_UD, wl.opcode = TH_OPC_SEND, wl.msg[1] = 1025;
	expect_reject(&wl, "MTU");
	good(&wl), wl.qp_type = TH_QP_UD, wl.opcode = TH_OPC_SEND, wl.msg[1] = 1024;
	assert_int_equal(th_wl_check(&wl, &lim, NULL, 0), 0);
	/* Each SGE carries at least one byte, and fits in one MR. */
	good(&wl), wl.sge = 32, wl.msg[0] = 16, expect_reject(&wl, "sge");
	good(&wl), wl.mr_size = 4096, wl.sge = 4, wl.msg[1] = 4 * 4096 + 1;
	expect_reject(&wl, "mr_size");
	good(&wl), wl.mr_size = 4096, wl.sge = 4, wl.msg[1] = 4 * 4096;
	assert_int_equal(th_wl_check(&wl, &lim, NULL, 0), 0);

	small = lim;
	small.has_gpu = false;
	small.has_remote = false;
	good(&wl), wl.mem = TH_MEM_GPU;
	assert_int_equal(th_wl_check(&wl, &lim, NULL, 0), 0);
	assert_int_equal(th_wl_check(&wl, &small, NULL, 0), -EINVAL);
	good(&wl), wl.mem = TH_MEM_REMOTE;
	assert_int_equal(th_wl_check(&wl, &small, NULL, 0), -EINVAL);
}

static void
test_limits_edges_inclusive(void **state)
{
	struct th_wl wl;

	(void)state;
	good(&wl), wl.qp_count = 20000;
	assert_int_equal(th_wl_check(&wl, &lim, NULL, 0), 0);
	good(&wl), wl.mr_count = 200000, wl.mr_size = 4096;
	wl.msg[1] = 4 * 4096;
	assert_int_equal(th_wl_check(&wl, &lim, NULL, 0), 0);
	good(&wl), wl.wq_depth = wl.wqe_batch;
	assert_int_equal(th_wl_check(&wl, &lim, NULL, 0), 0);
	good(&wl), wl.mr_count = 65, wl.mr_size = lim.max_mr_size;
	assert_int_equal(th_wl_check(&wl, &lim, NULL, 0), -EINVAL); /* one MR too many */
	good(&wl), wl.mr_count = 64, wl.mr_size = lim.max_mr_size;
	assert_int_equal(th_wl_check(&wl, &lim, NULL, 0), 0); /* exactly max_pinned */
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(th_feat_name(TH_F_QP_COUNT), "qp_count");
	assert_string_equal(th_feat_name(TH_F_MSG), "msg");
	assert_string_equal(th_feat_name(TH_F__COUNT), "?");
	assert_string_equal(th_ctr_name(TH_CTR_PAUSE_US), "tx_pause_duration_us");
	assert_string_equal(th_ctr_name(TH_CTR_TX_BYTES), "port_xmit_data");
	assert_false(th_ctr_is_diag(TH_CTR_TX_BYTES));
	assert_false(th_ctr_is_diag(TH_CTR_PAUSE_FRAMES));
	assert_true(th_ctr_is_diag(TH_CTR_QPC_MISS));
	assert_true(th_ctr_is_diag(TH_CTR_PU_BUSY));
	assert_string_equal(th_ctr_name(TH_CTR__COUNT), "?");
	assert_int_equal(th_feat_parse_value(TH_F_QP_TYPE, "ud"), TH_QP_UD);
	assert_int_equal(th_feat_parse_value(TH_F_MTU, "2048"), 1);
	assert_int_equal(th_feat_parse_value(TH_F_DIR, "sideways"), -EINVAL);
	assert_int_equal(th_feat_parse_value(TH_F_QP_COUNT, "1"), -EINVAL);
	assert_string_equal(th_feat_value_name(TH_F_MEM, TH_MEM_GPU), "gpu");
	assert_null(th_feat_value_name(TH_F_MEM, 3));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits_are_the_papers),
		cmocka_unit_test(test_good_point_passes),
		cmocka_unit_test(test_opcode_per_qp_type),
		cmocka_unit_test(test_each_impossible_case),
		cmocka_unit_test(test_limits_edges_inclusive),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
