/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * MFS text (lib/anomaly): any text is rejected with a message or parses to an
 * MFS whose text form parses back to the same text; membership tests never
 * read outside the structure; a point drawn inside it is valid and inside;
 * it lies within itself, its parsed-back copy and the empty MFS of its
 * symptom, and the empty one within it when it constrains nothing; dropping
 * the conditions that admit every valid value keeps membership.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "th_anomaly.h"
#include "th_rng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "", out[1024], out2[1024], *text;
	struct th_limits lim;
	struct th_mfs m, m2, none;
	struct th_rng rng;
	struct th_wl wl;
	int r;

	text = fuzz_text(data, size, 16 * 1024);
	if (text == NULL)
		return 0;
	r = th_mfs_parse(text, &m, err, sizeof(err));
	free(text);
	if (r != 0) {
		if (strncmp(err, "mfs: ", 5) != 0 || m.feats != 0)
			abort();
		return 0;
	}
	if (th_mfs_format(&m, out, sizeof(out)) >= (int)sizeof(out))
		abort();
	if (th_mfs_parse(out, &m2, err, sizeof(err)) != 0)
		abort();
	th_mfs_format(&m2, out2, sizeof(out2));
	if (strcmp(out, out2) != 0 || m.feats != m2.feats || m.symptom != m2.symptom)
		abort();
	th_wl_default(&wl);
	if (th_mfs_covers(&m, &wl) != th_mfs_covers(&m2, &wl))
		abort();
	memset(&none, 0, sizeof(none));
	none.symptom = m.symptom;
	if (!th_mfs_within(&m, &m) || !th_mfs_within(&m, &m2) || !th_mfs_within(&m2, &m) ||
		!th_mfs_within(&m, &none) || (m.feats == 0 && !th_mfs_within(&none, &m)))
		abort();
	th_limits_default(&lim);
	th_rng_seed(&rng, size);
	if (th_mfs_draw(&m, &lim, &rng, &wl) == 0 &&
		(th_wl_check(&wl, &lim, NULL, 0) != 0 || !th_mfs_covers(&m, &wl)))
		abort();
	/* Dropping void conditions changes no valid point's membership. */
	m2 = m;
	th_mfs_drop_void(&m2, &lim);
	for (int i = 0; i < 8; i++) {
		th_wl_random(&wl, &lim, &rng);
		if (th_mfs_covers(&m, &wl) != th_mfs_covers(&m2, &wl) || !th_mfs_within(&m, &m2))
			abort();
	}
	return 0;
}
