/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The diagnostic counters lead: as a workload walks toward one of an
 * anomaly's conditions (that feature moved step by step toward its
 * threshold, every other condition kept), the anomaly's diagnostic counter
 * rises at every step while no symptom shows yet. That slope is what a
 * counter-guided search (annealing on diagnostic counters, the paper's
 * Figure 6) follows to anomalies that random sampling rarely hits.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "th_sim.h"

#define SAMPLES 4

/* One walk: profile, known anomaly id, the feature moved and its steps. */
struct walk {
	const char *profile;
	const char *id;
	enum th_ctr ctr;    /* the diagnostic counter that must rise */
	unsigned host;      /* the host that counts it */
	enum th_feat feat;  /* TH_F_MSG sets every request to the step */
	uint64_t steps[12]; /* from far away toward the threshold; 0 ends */
};

static const struct walk walks[] = {
	/* F#7: MTT/MPT cache fills as MRs grow toward mtt_entries; smaller
	 * messages touch translations more often. */
	{ "F", "F#7", TH_CTR_MTT_MISS, 0, TH_F_MR_COUNT,
		{ 64, 256, 1024, 2048, 4096, 6144, 8192 } },
	{ "F", "F#7", TH_CTR_MTT_MISS, 0, TH_F_MSG, { 65536, 16384, 4096, 2048 } },
	/* F#8: QPC cache fills as QPs grow toward qpc_entries. */
	{ "F", "F#8", TH_CTR_QPC_MISS, 0, TH_F_QP_COUNT, { 16, 64, 128, 192, 256, 384 } },
	{ "F", "F#8", TH_CTR_QPC_MISS, 0, TH_F_MSG, { 65536, 16384, 4096, 2048 } },
	/* F#1: the receive-WQE prefetcher falls behind as batches approach its
	 * lead and rings approach its window. */
	{ "F", "F#1", TH_CTR_RWQE_MISS, 1, TH_F_WQE_BATCH, { 1, 4, 8, 16, 32 } },
	{ "F", "F#1", TH_CTR_RWQE_MISS, 1, TH_F_WQ_DEPTH, { 64, 128 } },
	/* H#15: same prefetcher, H's window and tracked queues. */
	{ "H", "H#15", TH_CTR_RWQE_MISS, 1, TH_F_WQ_DEPTH, { 4, 8, 16, 32 } },
	{ "H", "H#15", TH_CTR_RWQE_MISS, 1, TH_F_QP_COUNT, { 2, 4, 8, 12, 16, 24 } },
	/* F#5: continuation packets of multi-packet SENDs look their receive
	 * WQE's scatter list up again; deeper rings and bigger batches evict more
	 * of them, smaller MTUs and longer messages make more continuations. */
	{ "F", "F#5", TH_CTR_RWQE_MISS, 1, TH_F_WQE_BATCH, { 1, 4, 16, 32, 48 } },
	{ "F", "F#5", TH_CTR_RWQE_MISS, 1, TH_F_WQ_DEPTH, { 64, 128, 256, 512 } },
	{ "F", "F#5", TH_CTR_RWQE_MISS, 1, TH_F_MTU, { 4096, 2048 } },
	/* F#6: send descriptors read per posted batch and again when many deep
	 * queues crowd the WQE cache: PU time held on descriptor reads. */
	{ "F", "F#6", TH_CTR_PU_BUSY, 0, TH_F_WQE_BATCH, { 64, 48, 32, 24 } },
	{ "F", "F#6", TH_CTR_PU_BUSY, 0, TH_F_WQ_DEPTH, { 128, 256, 512 } },
	{ "F", "F#6", TH_CTR_PU_BUSY, 0, TH_F_QP_COUNT, { 4, 8, 16, 24 } },
	{ "F", "F#6", TH_CTR_PU_BUSY, 0, TH_F_MSG, { 8192, 4096, 2048 } },
	/* H#17: H's prefetcher has no lead; rings past its window and more
	 * queues than it tracks make receive WQEs late. */
	{ "H", "H#17", TH_CTR_RWQE_MISS, 1, TH_F_WQ_DEPTH, { 16, 32, 48, 64 } },
	{ "H", "H#17", TH_CTR_RWQE_MISS, 1, TH_F_QP_COUNT, { 8, 16, 24, 32 } },
};

static struct th_sim *
load(const char *name)
{
	char path[512], err[512];
	struct th_sim *s;

	snprintf(path, sizeof(path), "%s/config/rdma/%s.ini", TH_SOURCE_ROOT, name);
	s = th_sim_load(path, 11, err, sizeof(err));
	if (s == NULL)
		fail_msg("%s", err);
	return s;
}

static const struct th_sim_known *
find(const struct th_sim *s, const char *id)
{
	unsigned i;

	for (i = 0; i < th_sim_known_count(s); i++)
		if (strcmp(th_sim_known_get(s, i)->id, id) == 0)
			return th_sim_known_get(s, i);
	fail_msg("no known anomaly %s", id);
	return NULL;
}

/* Mean counter over the samples, and whether the symptom shows. */
static double
measure(struct th_sim *s, const struct th_wl *wl, enum th_ctr c, unsigned host,
	enum th_symptom sy, bool *shows)
{
	struct th_backend b;
	struct th_monitor_cfg mc;
	struct th_expect e;
	struct th_sample smp[SAMPLES];
	struct th_verdict v;
	char err[256];
	double sum = 0;
	unsigned i;

	th_sim_backend(s, &b);
	if (th_wl_check(wl, b.limits, err, sizeof(err)) < 0)
		fail_msg("walk point invalid: %s", err);
	assert_int_equal(b.run(b.ctx, wl, SAMPLES, smp, err, sizeof(err)), 0);
	b.expect(b.ctx, wl, &e);
	th_monitor_cfg_default(&mc);
	th_monitor_judge(&mc, &e, smp, SAMPLES, &v);
	*shows = th_verdict_has(&v, sy);
	for (i = 0; i < SAMPLES; i++)
		sum += smp[i].v[host][c];
	return sum / SAMPLES;
}

static void
test_walks(void **state)
{
	unsigned w, i;

	(void)state;
	for (w = 0; w < sizeof(walks) / sizeof(walks[0]); w++) {
		const struct walk *wk = &walks[w];
		struct th_sim *s = load(wk->profile);
		const struct th_sim_known *k = find(s, wk->id);
		double prev = -1;
		bool shows;

		for (i = 0; i < 12 && wk->steps[i] != 0; i++) {
			struct th_wl wl = k->trigger;
			double x;
			unsigned j;

			if (wk->feat == TH_F_MSG) {
				for (j = 0; j < wl.n_msgs; j++)
					wl.msg[j] = (uint32_t)wk->steps[i];
			} else {
				th_wl_set(&wl, wk->feat, wk->steps[i]);
			}
			/* Each step is outside the anomaly, the others conditions kept. */
			assert_false(th_mfs_covers(&k->mfs, &wl));
			x = measure(s, &wl, wk->ctr, wk->host, k->mfs.symptom, &shows);
			if (shows)
				fail_msg("%s: %s=%llu already shows the symptom", wk->id,
					th_feat_name(wk->feat), (unsigned long long)wk->steps[i]);
			/* Rising beyond the counters' own noise (0.5%), at every step. */
			if (!(x > prev * 1.02))
				fail_msg("%s: %s %s=%llu: %g after %g, not rising", wk->id,
					th_ctr_name(wk->ctr), th_feat_name(wk->feat),
					(unsigned long long)wk->steps[i], x, prev);
			prev = x;
		}
		/* At the trigger the counter is higher still, and the symptom shows. */
		{
			double x = measure(s, &k->trigger, wk->ctr, wk->host, k->mfs.symptom,
				&shows);

			if (!shows || !(x > prev))
				fail_msg("%s: %s at the trigger: %g after %g, symptom %s", wk->id,
					th_ctr_name(wk->ctr), x, prev, shows ? "shows" : "missing");
		}
		th_sim_free(s);
	}
}

/*
 * A pause drags throughput down too; a pause anomaly's trigger must still not
 * sit inside a documented low-throughput anomaly by accident, or a search
 * that finds it would be scored for the wrong one.
 */
static void
test_triggers_apart(void **state)
{
	const char *names[] = { "F", "H" };
	unsigned p, i, j;

	(void)state;
	for (p = 0; p < 2; p++) {
		struct th_sim *s = load(names[p]);

		for (i = 0; i < th_sim_known_count(s); i++) {
			const struct th_sim_known *k = th_sim_known_get(s, i);

			if (k->mfs.symptom != TH_SYM_PAUSE)
				continue;
			for (j = 0; j < th_sim_known_count(s); j++) {
				const struct th_sim_known *o = th_sim_known_get(s, j);

				if (o->mfs.symptom == TH_SYM_LOW_TPUT &&
					th_mfs_covers(&o->mfs, &k->trigger))
					fail_msg("%s's trigger lies in %s", k->id, o->id);
			}
		}
		th_sim_free(s);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walks),
		cmocka_unit_test(test_triggers_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
