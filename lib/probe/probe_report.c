/* SPDX-License-Identifier: BSD-3-Clause */

/* The probe's text summary and JSON, and the schedule for the appliance's control lcore. */

#include "th_probe.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

/* Percentiles the summary reports, and their JSON keys. */
static const struct {
	double p;         /* percentile */
	const char *name; /* label in text and JSON */
} pcts[] = {
	{50.0, "p50"},
	{90.0, "p90"},
	{99.0, "p99"},
	{99.9, "p99_9"},
};

static double
us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static void
print_line(FILE *out, const char *label, const struct th_hist *h)
{
	size_t i;

	fprintf(out, "%-13s min %.1f", label, us(h->count ? h->min : 0));
	for (i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		fprintf(out, " %s %.1f", pcts[i].name, us(th_hist_percentile(h, pcts[i].p)));
	fprintf(out, " max %.1f mean %.1f stddev %.1f\n", us(h->max), h->mean / 1000.0,
		th_hist_stddev(h) / 1000.0);
}

void
th_probe_print_summary(FILE *out, const struct th_probe_result *r, unsigned int hist_rows)
{
	fprintf(out, "target        %s, %" PRIu64 " bytes; range %" PRIu64 "+%" PRIu64 "\n",
		th_probe_kind_name(r->kind), r->target_size, r->range_offset, r->range_length);
	if (r->memory_fs != NULL)
		fprintf(out,
			"note          the target is on %s: its blocks are memory, so these are "
			"memory latencies, not a disk's\n",
			r->memory_fs);
	if (r->is_direct)
		fprintf(out,
			"mode          %s, %u-byte blocks, O_DIRECT (alignment %u), %s, "
			"iodepth %u, seed %" PRIu64 "\n",
			r->is_write ? "write" : "read", r->block_size, r->dio_align,
			th_probe_engine_name(r->engine), r->iodepth, r->seed);
	else
		fprintf(out,
			"mode          %s, %u-byte blocks, BUFFERED: %s, %s, iodepth %u, "
			"seed %" PRIu64 "\n",
			r->is_write ? "write" : "read", r->block_size,
			r->is_write ? "each write synced to the device (RWF_DSYNC)"
				    : "page cache range dropped (posix_fadvise DONTNEED) before "
				      "each read",
			th_probe_engine_name(r->engine), r->iodepth, r->seed);
	if (r->cycle_ns != 0)
		fprintf(out,
			"rate          cycle time %.1f us (%.1f IOPS); %" PRIu64
			" starts more than 10 us late\n",
			us(r->cycle_ns), 1e9 / (double)r->cycle_ns, r->late);
	else
		fprintf(out, "rate          back to back (no cycle time)\n");
	fprintf(out,
		"samples       %" PRIu64 " measured, %" PRIu64 " warm-up discarded, "
		"%.3f s%s\n",
		r->samples, r->warmup, (double)r->wall_ns / 1e9,
		r->is_stopped ? " (stopped early)" : "");
	print_line(out, "service us", &r->service);
	if (r->cycle_ns != 0)
		print_line(out, "response us", &r->response);
	fprintf(out, "IOPS          %.0f by latency (1/mean), %.0f by wall time\n",
		th_probe_iops_latency(r), th_probe_iops_wall(r));
	fprintf(out,
		"flagged       %" PRIu64 " high, %" PRIu64 " low (against the running "
		"average)\n",
		r->flagged_high, r->flagged_low);
	if (hist_rows > 0 && r->service.count > 0) {
		fprintf(out, "histogram (service time, us):\n");
		th_hist_print(out, &r->service, hist_rows);
	}
}

static void
json_hist(FILE *out, const struct th_hist *h)
{
	size_t i;

	fprintf(out,
		"{\"count\": %" PRIu64 ", \"min_us\": %.3f, \"max_us\": %.3f, "
		"\"mean_us\": %.3f, \"stddev_us\": %.3f",
		h->count, us(h->count ? h->min : 0), us(h->max), h->mean / 1000.0,
		th_hist_stddev(h) / 1000.0);
	for (i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		fprintf(out, ", \"%s_us\": %.3f", pcts[i].name,
			us(th_hist_percentile(h, pcts[i].p)));
	fputc('}', out);
}

int
th_probe_write_json(FILE *out, const struct th_probe_result *r)
{
	fprintf(out,
		"{\n  \"kind\": \"%s\",\n  \"memory_fs\": %s%s%s,\n"
		"  \"target_size\": %" PRIu64 ",\n"
		"  \"range_offset\": %" PRIu64 ",\n  \"range_length\": %" PRIu64 ",\n"
		"  \"op\": \"%s\",\n  \"block_size\": %u,\n  \"direct\": %s,\n"
		"  \"buffered_cache_drop\": %s,\n  \"engine\": \"%s\",\n  \"iodepth\": %u,\n"
		"  \"seed\": %" PRIu64 ",\n"
		"  \"cycle_us\": %.3f,\n  \"samples\": %" PRIu64 ",\n  \"warmup\": %" PRIu64 ",\n"
		"  \"wall_s\": %.6f,\n  \"stopped_early\": %s,\n"
		"  \"iops_latency\": %.1f,\n  \"iops_wall\": %.1f,\n"
		"  \"flagged_high\": %" PRIu64 ",\n  \"flagged_low\": %" PRIu64 ",\n"
		"  \"late\": %" PRIu64 ",\n  \"service\": ",
		th_probe_kind_name(r->kind), r->memory_fs != NULL ? "\"" : "",
		r->memory_fs != NULL ? r->memory_fs : "null", r->memory_fs != NULL ? "\"" : "",
		r->target_size, r->range_offset, r->range_length, r->is_write ? "write" : "read",
		r->block_size, r->is_direct ? "true" : "false", r->is_buffered ? "true" : "false",
		th_probe_engine_name(r->engine), r->iodepth, r->seed, us(r->cycle_ns), r->samples,
		r->warmup, (double)r->wall_ns / 1e9, r->is_stopped ? "true" : "false",
		th_probe_iops_latency(r), th_probe_iops_wall(r), r->flagged_high, r->flagged_low,
		r->late);
	json_hist(out, &r->service);
	fprintf(out, ",\n  \"response\": ");
	json_hist(out, &r->response);
	fprintf(out, "\n}\n");
	return ferror(out) ? -EIO : 0;
}

int
th_probe_schedule_init(struct th_probe_schedule *s, const struct th_probe_config *c,
	uint64_t interval_ns, double percentile, uint64_t threshold_ns, uint64_t now_ns)
{
	if (interval_ns == 0 || !(percentile >= 0 && percentile <= 100))
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->config = *c;
	s->interval_ns = interval_ns;
	s->percentile = percentile;
	s->threshold_ns = threshold_ns;
	s->next_ns = now_ns;
	return 0;
}

int
th_probe_schedule_poll(
	struct th_probe_schedule *s, uint64_t now_ns, struct th_probe_result *r, bool *is_alarm)
{
	int err;

	*is_alarm = false;
	if (now_ns < s->next_ns)
		return 0;
	/* Stay on the original grid; a poll that came late skips the missed slots. */
	s->next_ns += s->interval_ns;
	while (s->next_ns <= now_ns) {
		s->next_ns += s->interval_ns;
		s->skipped++;
	}
	err = th_probe_run(&s->config, r);
	if (err != 0) {
		s->failures++;
		return err;
	}
	s->runs++;
	s->last_value_ns = th_hist_percentile(&r->service, s->percentile);
	*is_alarm = th_probe_is_alarm(r, s->percentile, s->threshold_ns);
	s->alarms += *is_alarm;
	return 1;
}
