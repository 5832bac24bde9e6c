/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Workload files (lib/space): any text either fails with a message or gives a
 * point whose one-line form (th_wl_format()) reads back (th_wl_parse()) as the
 * same point. Points that also pass the default limits are mutated a few steps
 * and must stay valid: the search never hands a backend an impossible workload.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "th_conf.h"
#include "th_rng.h"
#include "th_space.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct th_limits lim;
	struct th_conf *c;
	struct th_wl wl, back;
	struct th_rng rng;
	double x[TH_WL_DIMS];
	char err[256] = "", line[512], *text;
	unsigned i;

	text = fuzz_text(data, size, 64 * 1024);
	if (text == NULL)
		return 0;
	c = th_conf_parse(text, "fuzz.ini", err, sizeof(err));
	free(text);
	if (c == NULL)
		return 0;
	if (th_wl_from_conf(c, "workload", &wl, err, sizeof(err)) != 0) {
		if (strncmp(err, "fuzz.ini", 8) != 0)
			abort();
		th_conf_free(c);
		return 0;
	}
	th_conf_free(c);
	if (th_wl_format(&wl, line, sizeof(line)) >= (int)sizeof(line) ||
		th_wl_parse(line, &back, err, sizeof(err)) != 0 || !th_wl_equal(&wl, &back))
		abort();

	th_limits_default(&lim);
	th_wl_encode(&wl, &lim, x);
	for (i = 0; i < TH_WL_DIMS; i++)
		if (!(x[i] >= 0 && x[i] <= 1))
			abort();
	if (th_wl_check(&wl, &lim, err, sizeof(err)) != 0)
		return 0;
	th_rng_seed(&rng, size);
	for (i = 0; i < 32; i++) {
		enum th_feat f = (enum th_feat)th_rng_below(&rng, TH_F__COUNT);

		if (th_wl_mutate(&wl, f, &lim, &rng) == 0 && th_wl_check(&wl, &lim, NULL, 0) != 0)
			abort();
	}
	return 0;
}
