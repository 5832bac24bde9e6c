/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What a session lcore pays to take several decode lcores' ops in frame
 * order (lib/merge).
 *
 *     bench_merge [-r RUNS]
 *
 * Two and four sources, each a run of frame numbers, one of them behind the
 * others, so about HELD ops (64, 1024, 8192) wait as they would while a slow
 * decode lcore catches up: each round pushes a batch of 64 ops from the
 * sources in turn and pops what is below the slowest. Items are inference
 * events (struct th_sess_op); their keys are written just before each round,
 * so this is the merge's own cost (on the session lcore, the first read of an
 * op from another core is a miss inference would take anyway). Only push and
 * pop are timed. Prints ns per op (push and pop), median of RUNS (default 5).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "th_merge.h"
#include "th_session.h"

#define EVENTS 65536u
#define OPS (4u * 1000 * 1000)

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One run: ns per op. */
static double
run(struct th_sess_op *ev, unsigned int sources, unsigned int held)
{
	struct th_merge m;
	uint64_t seq = 0, sink = 0;
	unsigned int next = 0, done = 0;
	double t0, elapsed = 0;

	uint64_t lag = held / (sources - 1); /* frames ahead: `held` ops wait */

	if (th_merge_init(&m, sources, 2 * held + 1024) != 0) {
		fprintf(stderr, "bench_merge: out of memory\n");
		exit(2);
	}
	while (done < OPS) {
		struct th_sess_op *batch[64];
		unsigned int i;

		/* Frame numbers handed round the sources; the last one lags. */
		for (i = 0; i < 64; i++) {
			batch[i] = &ev[(next++ * 37u) % EVENTS];
			batch[i]->seq = seq + (i % sources == sources - 1 ? 0 : lag);
			if (i % sources == sources - 1)
				seq++;
		}
		t0 = now_ns();
		for (i = 0; i < 64; i++)
			th_merge_push(&m, i % sources, batch[i]->seq, batch[i]);
		while (th_merge_first_key(&m) < seq) {
			struct th_sess_op *op = th_merge_pop(&m);

			sink += op->call_ns;
			done++;
		}
		elapsed += now_ns() - t0;
	}
	th_merge_fini(&m);
	if (sink == 1)
		puts("");
	return elapsed / done;
}

int
main(int argc, char **argv)
{
	static const unsigned int helds[] = {64, 1024, 8192};
	unsigned int runs = 5, s, h, r;
	struct th_sess_op *ev;
	double t[32];
	int c;

	while ((c = getopt(argc, argv, "r:")) != -1) {
		if (c != 'r' || (runs = (unsigned int)atoi(optarg)) == 0 || runs > 32) {
			fprintf(stderr, "usage: bench_merge [-r RUNS (1-32)]\n");
			return 2;
		}
	}
	ev = calloc(EVENTS, sizeof(*ev));
	if (ev == NULL) {
		fprintf(stderr, "bench_merge: out of memory\n");
		return 2;
	}
	printf("%-8s %-10s %s\n", "sources", "held", "ns/op (push + pop), median");
	for (s = 2; s <= 4; s += 2) {
		for (h = 0; h < sizeof(helds) / sizeof(helds[0]); h++) {
			for (r = 0; r < runs; r++)
				t[r] = run(ev, s, helds[h]);
			qsort(t, runs, sizeof(t[0]), cmp_double);
			printf("%-8u %-10u %.1f\n", s, helds[h], t[runs / 2]);
		}
	}
	free(ev);
	return 0;
}
