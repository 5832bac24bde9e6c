/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Client behaviour: what a client does next. Today a client first goes
 * through its mount sequence on every mount (GETPORT, MNT, FSINFO), then
 * draws procedures from the mix's weights. User-level behaviour (ls -l,
 * cp, cat, caches, close-to-open) is the users workload, in gen_users.c.
 */

#include "gen_private.h"

struct weight {
	uint32_t proc;   /**< NFSv3 procedure */
	uint32_t weight; /**< relative frequency */
};

#define END                                                                                        \
	{                                                                                          \
		0, 0                                                                               \
	}

/* Metadata-heavy: what a build or a find over a tree looks like, small frames only. */
static const struct weight meta_mix[] = {
	{TH_NFS3_GETATTR, 400},
	{TH_NFS3_LOOKUP, 250},
	{TH_NFS3_ACCESS, 200},
	{TH_NFS3_READDIRPLUS, 30},
	{TH_NFS3_SETATTR, 20},
	{TH_NFS3_CREATE, 25},
	{TH_NFS3_REMOVE, 20},
	{TH_NFS3_RENAME, 10},
	{TH_NFS3_MKDIR, 5},
	{TH_NFS3_COMMIT, 10},
	{TH_NFS3_NULL, 5},
	{TH_NFS3_FSINFO, 5},
	END,
};

/* Data-heavy: streaming READ and WRITE with the metadata they need. */
static const struct weight data_mix[] = {
	{TH_NFS3_READ, 450},
	{TH_NFS3_WRITE, 350},
	{TH_NFS3_COMMIT, 80},
	{TH_NFS3_GETATTR, 60},
	{TH_NFS3_LOOKUP, 30},
	{TH_NFS3_ACCESS, 20},
	{TH_NFS3_CREATE, 10},
	END,
};

static const struct weight mixed_mix[] = {
	{TH_NFS3_GETATTR, 250},
	{TH_NFS3_LOOKUP, 150},
	{TH_NFS3_ACCESS, 120},
	{TH_NFS3_READ, 150},
	{TH_NFS3_WRITE, 100},
	{TH_NFS3_COMMIT, 30},
	{TH_NFS3_READDIRPLUS, 40},
	{TH_NFS3_SETATTR, 30},
	{TH_NFS3_CREATE, 40},
	{TH_NFS3_REMOVE, 30},
	{TH_NFS3_RENAME, 20},
	{TH_NFS3_MKDIR, 10},
	{TH_NFS3_NULL, 10},
	{TH_NFS3_FSINFO, 10},
	END,
};

/* Pipelined bursts: calls small enough to share a segment. */
static const struct weight small_mix[] = {
	{TH_NFS3_GETATTR, 5},
	{TH_NFS3_LOOKUP, 3},
	{TH_NFS3_ACCESS, 2},
	END,
};

static uint32_t
draw(struct th_rng *rng, const struct weight *w)
{
	uint32_t total = 0, x, i;

	for (i = 0; w[i].weight != 0; i++)
		total += w[i].weight;
	x = th_rng_below(rng, total);
	for (i = 0; w[i].weight != 0; i++) {
		if (x < w[i].weight)
			return w[i].proc;
		x -= w[i].weight;
	}
	return TH_NFS3_GETATTR;
}

void
gen_mix_next(struct gen_world *w, struct gen_client *c, uint64_t now, bool is_small_only,
	struct gen_rpc *rpc)
{
	const struct weight *mix;
	struct gen_mount *m;
	uint32_t i;

	for (i = 0; i < c->n_mounts; i++) {
		if (c->mounts[i].state != GEN_MOUNT_READY) {
			gen_model_session(w, c, &c->mounts[i], now, rpc);
			return;
		}
	}
	/* Bursts stay on the first mount so they share one connection. */
	m = is_small_only ? &c->mounts[0] : &c->mounts[th_rng_below(&w->rng, c->n_mounts)];
	if (is_small_only)
		mix = small_mix;
	else if (w->cfg->mix == TH_GEN_MIX_META)
		mix = meta_mix;
	else if (w->cfg->mix == TH_GEN_MIX_DATA)
		mix = data_mix;
	else
		mix = mixed_mix;
	gen_model_nfs(w, c, m, draw(&w->rng, mix), now, rpc);
}

bool
gen_mix_is_ready(const struct gen_client *c)
{
	uint32_t i;

	for (i = 0; i < c->n_mounts; i++)
		if (c->mounts[i].state != GEN_MOUNT_READY)
			return false;
	return true;
}
