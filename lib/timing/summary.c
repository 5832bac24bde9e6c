/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Run summaries: JSON for machines (keys documented in th_timing.h) and a
 * text table for people. Both read only the merged statistics.
 */

#include "th_timing.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>

/* JSON has no NaN or infinity: write 0 so the document still parses. */
static double
json_num(double x)
{
	return isfinite(x) ? x : 0.0;
}

static void
json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s != NULL && *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void
json_hist(FILE *out, const struct th_hist *h)
{
	fprintf(out,
		"{\"count\": %" PRIu64 ", \"min\": %" PRIu64 ", \"mean\": %.1f, \"stddev\": %.1f, "
		"\"max\": %" PRIu64 ", \"p50\": %" PRIu64 ", \"p90\": %" PRIu64
		", \"p99\": %" PRIu64 ", \"p99_9\": %" PRIu64 "}",
		h->count, h->count ? h->min : 0, json_num(h->mean), json_num(th_hist_stddev(h)),
		h->max, th_hist_percentile(h, 50), th_hist_percentile(h, 90),
		th_hist_percentile(h, 99), th_hist_percentile(h, 99.9));
}

static uint64_t
counted(const struct th_timing_stats *s, uint32_t ops)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = 0; i < ops && i < TH_TIMING_MAX_OPS; i++)
		total += s->ops[i].count;
	return total;
}

static uint64_t
steady_span(const struct th_timing_stats *s)
{
	if (s->steady_begin_ns == UINT64_MAX || s->steady_end_ns <= s->steady_begin_ns)
		return 0;
	return s->steady_end_ns - s->steady_begin_ns;
}

static const char *
op_name(const struct th_timing_config *cfg, int op)
{
	if (op < 0 || op >= (int)cfg->op_count)
		return NULL;
	return cfg->ops[op].name;
}

int
th_timing_summary_json(FILE *out, const struct th_timing_config *cfg,
	const struct th_timing_stats *s, const struct th_timing_verdict *v)
{
	uint32_t n = cfg->op_count < TH_TIMING_MAX_OPS ? cfg->op_count : TH_TIMING_MAX_OPS, i;
	uint64_t total = counted(s, n);

	fprintf(out,
		"{\"passed\": %s, \"threads\": %u, \"throughput_ops_s\": %.3f, "
		"\"steady_ns\": %" PRIu64 ",\n",
		v == NULL      ? "null"
		: v->is_passed ? "true"
			       : "false",
		s->threads, json_num(th_timing_stats_throughput(s)), steady_span(s));
	fprintf(out,
		" \"delay\": {\"kind\": \"%s\", \"dist\": \"%s\", \"mean_ns\": %" PRIu64
		", \"min_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64
		", \"achieved_mean_ns\": %.1f},\n",
		th_timing_delay_kind_name(cfg->delay),
		cfg->delay == TH_TIMING_DELAY_NONE ? "none"
						   : th_timing_dist_kind_name(cfg->delay_dist.kind),
		cfg->delay_dist.mean_ns, cfg->delay_dist.min_ns, cfg->delay_dist.max_ns,
		s->delay_count ? json_num(s->delay_sum_ns / (double)s->delay_count) : 0.0);
	fprintf(out, " \"ops\": [");
	for (i = 0; i < n; i++) {
		const struct th_timing_op_stats *o = &s->ops[i];

		fprintf(out, "%s\n  {\"name\": ", i ? "," : "");
		json_string(out, cfg->ops[i].name);
		fprintf(out,
			", \"count\": %" PRIu64 ", \"errors\": %" PRIu64 ", \"late\": %" PRIu64
			", \"outside\": %" PRIu64 ", \"share_pct\": %.3f,\n   \"service\": ",
			o->count, o->errors, o->late, o->outside,
			total ? 100.0 * (double)o->count / (double)total : 0.0);
		json_hist(out, &o->service);
		fprintf(out, ",\n   \"response\": ");
		json_hist(out, &o->response);
		fputc('}', out);
	}
	fprintf(out, "],\n \"checks\": [");
	for (i = 0; v != NULL && i < v->count && i < TH_TIMING_MAX_CHECKS; i++) {
		const struct th_timing_check *c = &v->checks[i];
		const char *name = op_name(cfg, c->op);

		fprintf(out, "%s\n  {\"kind\": \"%s\", \"op\": ", i ? "," : "",
			th_timing_check_kind_name(c->kind));
		if (name == NULL)
			fprintf(out, "null");
		else
			json_string(out, name);
		fprintf(out,
			", \"measured\": %.3f, \"target\": %.3f, \"tolerance\": %.3f, "
			"\"passed\": %s}",
			json_num(c->measured), json_num(c->target), json_num(c->tolerance),
			c->is_passed ? "true" : "false");
	}
	fprintf(out, "]}\n");
	return ferror(out) ? -EIO : 0;
}

static void
text_hist_row(FILE *out, const char *name, const char *what, const struct th_hist *h)
{
	fprintf(out, "%-16s %-8s %10" PRIu64 " %11.3f %11.3f %11.3f %11.3f %11.3f %11.3f %11.3f\n",
		name, what, h->count, (h->count ? (double)h->min : 0.0) / 1e3, h->mean / 1e3,
		(double)th_hist_percentile(h, 50) / 1e3, (double)th_hist_percentile(h, 90) / 1e3,
		(double)th_hist_percentile(h, 99) / 1e3, (double)th_hist_percentile(h, 99.9) / 1e3,
		(double)h->max / 1e3);
}

int
th_timing_summary_text(FILE *out, const struct th_timing_config *cfg,
	const struct th_timing_stats *s, const struct th_timing_verdict *v)
{
	uint32_t n = cfg->op_count < TH_TIMING_MAX_OPS ? cfg->op_count : TH_TIMING_MAX_OPS, i;
	uint64_t total = counted(s, n);

	fprintf(out, "threads %u, steady state %.3f s, %" PRIu64 " operations, %.3f ops/s\n",
		s->threads, (double)steady_span(s) / 1e9, total, th_timing_stats_throughput(s));
	if (cfg->delay != TH_TIMING_DELAY_NONE)
		fprintf(out, "%s time: %s, mean %.3f us (min %.3f, max %.3f), achieved %.3f us\n",
			th_timing_delay_kind_name(cfg->delay),
			th_timing_dist_kind_name(cfg->delay_dist.kind),
			(double)cfg->delay_dist.mean_ns / 1e3, (double)cfg->delay_dist.min_ns / 1e3,
			(double)cfg->delay_dist.max_ns / 1e3,
			s->delay_count ? s->delay_sum_ns / (double)s->delay_count / 1e3 : 0.0);
	fprintf(out, "%-16s %-8s %10s %11s %11s %11s %11s %11s %11s %11s\n", "operation", "time",
		"count", "min_us", "mean_us", "p50_us", "p90_us", "p99_us", "p99.9_us", "max_us");
	for (i = 0; i < n; i++) {
		const struct th_timing_op_stats *o = &s->ops[i];

		text_hist_row(out, cfg->ops[i].name, "response", &o->response);
		text_hist_row(out, cfg->ops[i].name, "service", &o->service);
		fprintf(out,
			"%-16s share %.2f%%, errors %" PRIu64 ", late %" PRIu64
			", outside steady state %" PRIu64 "\n",
			cfg->ops[i].name, total ? 100.0 * (double)o->count / (double)total : 0.0,
			o->errors, o->late, o->outside);
	}
	for (i = 0; v != NULL && i < v->count && i < TH_TIMING_MAX_CHECKS; i++) {
		const struct th_timing_check *c = &v->checks[i];
		const char *name = op_name(cfg, c->op);

		fprintf(out, "%s %-10s %-16s measured %.3f target %.3f tolerance %.3f\n",
			c->is_passed ? "PASS" : "FAIL", th_timing_check_kind_name(c->kind),
			name ? name : "(all)", c->measured, c->target, c->tolerance);
	}
	if (v != NULL)
		fprintf(out, "verdict: %s\n", v->is_passed ? "PASS" : "FAIL");
	return ferror(out) ? -EIO : 0;
}
