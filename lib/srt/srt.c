/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_srt.h"

#include <inttypes.h>
#include <string.h>

#include "th_nfs.h"

void
th_srt_init(struct th_srt *s)
{
	atomic_init(&s->rows, 0);
	memset(s->slot, 0, sizeof(s->slot));
	s->untimed_rows = 0;
	s->untimed_clock = 0;
}

static inline int
same_proc(const struct th_srt_proc *a, const struct th_srt_proc *b)
{
	return a->prog == b->prog && a->vers == b->vers && a->proc == b->proc;
}

int32_t
th_srt_row_of(struct th_srt *s, const struct th_srt_proc *p)
{
	uint32_t i = th_srt_hash(p), r, rows = atomic_load_explicit(&s->rows, memory_order_relaxed);

	/* Twice the slots of the rows: a probe always ends at an empty slot. */
	for (; s->slot[i] != 0; i = (i + 1) & (TH_SRT_SLOTS - 1))
		if (same_proc(&s->id[s->slot[i] - 1], p))
			return s->slot[i] - 1;
	if (rows == TH_SRT_ROWS)
		return -1;
	r = rows;
	s->id[r] = *p;
	memset(&s->row[r], 0, sizeof(s->row[r]));
	atomic_init(&s->row[r].count, 0);
	s->row[r].min = UINT64_MAX;
	memset(s->buckets[r], 0, sizeof(s->buckets[r]));
	s->slot[i] = (uint8_t)(r + 1);
	/* Set up before it is counted: a reader that sees the row sees it whole. */
	atomic_store_explicit(&s->rows, r + 1, memory_order_release);
	return (int32_t)r;
}

void
th_srt_add(struct th_srt *sum, const struct th_srt *s)
{
	uint32_t r, b, rows = atomic_load_explicit(&s->rows, memory_order_acquire);

	for (r = 0; r < rows; r++) {
		uint64_t n = atomic_load_explicit(&s->row[r].count, memory_order_acquire);
		struct th_srt_row *d;
		int32_t to;

		if (n == 0)
			continue; /* taken, its first value not yet in */
		to = th_srt_row_of(sum, &s->id[r]);
		if (to < 0) {
			sum->untimed_rows += n;
			continue;
		}
		d = &sum->row[to];
		atomic_store_explicit(&d->count,
			atomic_load_explicit(&d->count, memory_order_relaxed) + n,
			memory_order_relaxed);
		d->min = s->row[r].min < d->min ? s->row[r].min : d->min;
		d->max = s->row[r].max > d->max ? s->row[r].max : d->max;
		d->sum_ns += s->row[r].sum_ns;
		for (b = 0; b < TH_SRT_BUCKETS; b++)
			sum->buckets[to][b] += s->buckets[r][b];
	}
	sum->untimed_rows += s->untimed_rows;
	sum->untimed_clock += s->untimed_clock;
}

uint64_t
th_srt_percentile(const struct th_srt *s, uint32_t r, double p)
{
	const struct th_srt_row *w = &s->row[r];

	return th_hist_percentile_at(s->buckets[r], TH_SRT_BITS, w->count, w->min, w->max, p);
}

void
th_srt_label(const struct th_srt_proc *p, char *label, size_t size)
{
	char text[TH_NFS_LABEL_MAX];

	*th_nfs_label(text, p->prog, p->vers, p->proc) = '\0';
	snprintf(label, size, "%s", text);
}

static int
proc_order(const struct th_srt_proc *a, const struct th_srt_proc *b)
{
	if (a->prog != b->prog)
		return a->prog < b->prog ? -1 : 1;
	if (a->vers != b->vers)
		return a->vers < b->vers ? -1 : 1;
	return a->proc < b->proc ? -1 : a->proc > b->proc;
}

static const double pct[] = {50, 90, 99, 99.9};

/* Row @p r's figures in microseconds, as every table and row has them: min, p50, p90, p99,
 * p99.9, max, mean. */
static void
row_us(const struct th_srt *s, uint32_t r, double us[7])
{
	const struct th_srt_row *w = &s->row[r];

	us[0] = (double)w->min / 1e3;
	for (unsigned int k = 0; k < 4; k++)
		us[1 + k] = (double)th_srt_percentile(s, r, pct[k]) / 1e3;
	us[5] = (double)w->max / 1e3;
	us[6] = w->sum_ns / (double)w->count / 1e3;
}

/* The rows in print order; @return how many. */
static uint32_t
sorted_rows(const struct th_srt *s, uint32_t *order)
{
	uint32_t rows = atomic_load_explicit(&s->rows, memory_order_acquire), i, j;

	/* Insertion sort: a few dozen rows. */
	for (i = 0; i < rows; i++) {
		for (j = i; j > 0 && proc_order(&s->id[order[j - 1]], &s->id[i]) > 0; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	return rows;
}

/* A name where there is one (letters and digits: nothing to quote), else the number. */
static void
put_name(FILE *out, const char *key, const char *name, uint32_t number, bool is_json)
{
	if (is_json)
		fprintf(out, "\"%s\":", key);
	if (name == NULL)
		fprintf(out, "%" PRIu32, number);
	else
		fprintf(out, is_json ? "\"%s\"" : "%s", name);
}

void
th_srt_write_rows(FILE *out, const struct th_srt *s, bool is_json)
{
	static const char *const keys[] = {"program", "version", "procedure", "rpcs", "min_us",
		"p50_us", "p90_us", "p99_us", "p999_us", "max_us", "mean_us"};
	uint32_t order[TH_SRT_ROWS], rows = sorted_rows(s, order), i, k;

	if (!is_json) {
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			fprintf(out, "%s%s", k > 0 ? "," : "", keys[k]);
		fputc('\n', out);
	}
	for (i = 0; i < rows; i++) {
		const struct th_srt_proc *p = &s->id[order[i]];
		const struct th_srt_row *w = &s->row[order[i]];
		double us[7];

		row_us(s, order[i], us);
		fputs(is_json ? "{" : "", out);
		put_name(out, keys[0], th_nfs_prog_name(p->prog), p->prog, is_json);
		fputc(',', out);
		put_name(out, keys[1], NULL, p->vers, is_json);
		fputc(',', out);
		put_name(out, keys[2], th_nfs_proc_name(p->prog, p->vers, p->proc), p->proc,
			is_json);
		fprintf(out, is_json ? ",\"%s\":%" PRIu64 : ",%.0s%" PRIu64, keys[3], w->count);
		for (k = 0; k < 7; k++)
			fprintf(out, is_json ? ",\"%s\":%.3f" : ",%.0s%.3f", keys[4 + k], us[k]);
		fputs(is_json ? "}\n" : "\n", out);
	}
}

void
th_srt_print(FILE *out, const struct th_srt *s, const char *what)
{
	uint32_t order[TH_SRT_ROWS], i, k;
	uint32_t rows = sorted_rows(s, order);
	char label[64];
	int width = 22; /* "NFS3 READDIRPLUS" and its kind; wider for a long number pair */

	for (i = 0; i < rows; i++) {
		th_srt_label(&s->id[order[i]], label, sizeof(label));
		if ((int)strlen(label) > width)
			width = (int)strlen(label);
	}
	fprintf(out, "server response time by procedure, microseconds (%s)\n", what);
	fprintf(out, "  %-*s %12s %11s %11s %11s %11s %11s %11s %11s\n", width, "procedure", "rpcs",
		"min", "p50", "p90", "p99", "p99.9", "max", "mean");
	for (i = 0; i < rows; i++) {
		double us[7];

		row_us(s, order[i], us);
		th_srt_label(&s->id[order[i]], label, sizeof(label));
		fprintf(out, "  %-*s %12" PRIu64, width, label, s->row[order[i]].count);
		for (k = 0; k < 7; k++)
			fprintf(out, " %11.3f", us[k]);
		fputc('\n', out);
	}
	fprintf(out, "  %-14" PRIu64 " RPCs not timed: reply stamped before the call's end\n",
		s->untimed_clock);
	fprintf(out, "  %-14" PRIu64 " RPCs not timed: procedures past the first %d\n",
		s->untimed_rows, TH_SRT_ROWS);
}
