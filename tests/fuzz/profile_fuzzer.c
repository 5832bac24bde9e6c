/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Simulator profile loader on arbitrary text: it either loads (and then a run
 * of every documented trigger must succeed) or fails with a message that
 * names the input.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "th_sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, err[512];
	struct th_sim *s;

	text = fuzz_text(data, size, 64 * 1024);
	if (text == NULL)
		return 0;
	err[0] = '\0';
	s = th_sim_parse(text, "fuzz.ini", 1, err, sizeof(err));
	if (s == NULL) {
		if (strncmp(err, "fuzz.ini", 8) != 0)
			abort(); /* an error must say where */
	} else {
		struct th_backend b;
		struct th_sample smp[2];
		unsigned i;

		th_sim_backend(s, &b);
		for (i = 0; i < th_sim_known_count(s); i++) {
			const struct th_sim_known *k = th_sim_known_get(s, i);
			struct th_expect e;

			if (b.run(b.ctx, &k->trigger, 2, smp, err, sizeof(err)) != 0)
				abort(); /* a loaded trigger passed the limits check */
			b.expect(b.ctx, &k->trigger, &e);
			(void)b.cost_s(b.ctx, &k->trigger, 2);
		}
		th_sim_free(s);
	}
	free(text);
	return 0;
}
