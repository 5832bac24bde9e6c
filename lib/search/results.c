/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What a search leaves behind: a JSON line per experiment, the anomaly list
 * (workload files and a command that reproduces each), a summary table,
 * scoring against a profile's documented anomalies, and the chart of
 * anomalies found versus testbed time.
 */

#include "search_private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @str as a JSON string (quotes included). */
static void
json_str(FILE *f, const char *str)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)str; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/*
 * A number JSON accepts (no nan or inf), in the fewest digits that read back
 * as @p v: six significant digits showed a pause ratio just under the
 * threshold as the threshold itself beside "pause":false, and byte counters
 * as 2.49841e+10. Whole numbers up to 1e17 print as integers.
 */
static void
json_num(FILE *f, double v)
{
	char buf[32];

	if (!isfinite(v)) {
		fputs("null", f);
		return;
	}
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof(buf), "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

/* One sample's counters as a JSON array with an object per host. */
static void
json_hosts(FILE *f, const struct th_sample *smp)
{
	unsigned h, c;

	fputc('[', f);
	for (h = 0; h < TH_HOSTS; h++) {
		fputs(h != 0 ? ",{" : "{", f);
		for (c = 0; c < TH_CTR__COUNT; c++) {
			fprintf(f, "%s\"%s\":", c != 0 ? "," : "", th_ctr_name((enum th_ctr)c));
			json_num(f, smp->v[h][c]);
		}
		fputc('}', f);
	}
	fputc(']', f);
}

int
th_search_log_exp(FILE *f, const char *algo, uint64_t seed, const struct th_search_exp *e)
{
	char wl[1024];
	unsigned i;

	if (th_wl_format(&e->wl, wl, sizeof(wl)) < 0)
		snprintf(wl, sizeof(wl), "?");
	fputs("{\"algo\":", f);
	json_str(f, algo);
	fprintf(f, ",\"seed\":%llu,\"i\":%u,\"t_s\":", (unsigned long long)seed, e->index);
	/* To the millisecond at any budget: six significant digits tie neighbours past 277 h. */
	if (isfinite(e->t_s))
		fprintf(f, "%.3f", e->t_s);
	else
		fputs("null", f);
	fprintf(f, ",\"mfs\":%s,\"rc\":%d,", e->is_mfs ? "true" : "false", e->rc);
	if (e->rc < 0) {
		fputs("\"err\":", f);
		json_str(f, e->err != NULL ? e->err : "");
		fputc(',', f);
	}
	fputs("\"wl\":", f);
	json_str(f, wl);
	fprintf(f, ",\"pause\":%s,\"low_tput\":%s,\"pause_ratio\":", e->v.pause ? "true" : "false",
		e->v.low_tput ? "true" : "false");
	json_num(f, e->v.pause_ratio);
	fputs(",\"bps_frac\":", f);
	json_num(f, e->v.bps_frac);
	fputs(",\"pps_frac\":", f);
	json_num(f, e->v.pps_frac);
	fprintf(f, ",\"anomaly\":%d,\"ctr\":", e->anomaly);
	json_hosts(f, &e->mean);
	fputs(",\"samples\":[", f);
	for (i = 0; e->samples != NULL && i < e->n_samples; i++) {
		if (i != 0)
			fputc(',', f);
		json_hosts(f, &e->samples[i]);
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* An anomaly's MFS as text, or what stands in for it. */
static void
describe_mfs(const struct th_search_anomaly *a, char *buf, size_t size)
{
	if (a->has_mfs && th_mfs_format(&a->mfs, buf, size) >= 0)
		return;
	if (a->same_as >= 0)
		snprintf(buf, size, "= %d (its MFS widened to this trigger)", a->same_as);
	else
		snprintf(buf, size, "none (%s)",
			a->mfs_runs != 0 ? "the search ended during its extraction"
					 : "not extracted");
}

/*
 * The anomaly whose MFS holds anomaly @p i's (an earlier one when two are
 * alike), or -1: @p i is then a special case the search met of a cause it
 * also found under wider conditions.
 */
static int
inside_of(const struct th_search *s, unsigned i)
{
	const struct th_search_anomaly *a = th_search_anomaly_get(s, i);
	unsigned j;

	if (!a->has_mfs)
		return -1;
	for (j = 0; j < th_search_anomaly_count(s); j++) {
		const struct th_search_anomaly *b = th_search_anomaly_get(s, j);

		if (j != i && b->has_mfs && th_mfs_within(&a->mfs, &b->mfs) &&
			(j < i || !th_mfs_within(&b->mfs, &a->mfs)))
			return (int)b->id;
	}
	return -1;
}

/* DIR/mfs.txt: every MFS the search holds, given ones first, one per line. */
static int
write_mfs_list(const struct th_search *s, const char *dir)
{
	char path[4096], text[2048];
	unsigned i;
	FILE *f;
	int rc;

	if (snprintf(path, sizeof(path), "%s/mfs.txt", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "w");
	if (f == NULL)
		return -errno;
	fputs("# minimal feature sets, one per line: tracehound search --skip-mfs this file\n", f);
	for (i = 0; i < s->given_count; i++)
		if (th_mfs_format(&s->given[i], text, sizeof(text)) >= 0)
			fprintf(f, "%s\n", text);
	for (i = 0; i < th_search_anomaly_count(s); i++) {
		const struct th_search_anomaly *a = th_search_anomaly_get(s, i);

		if (a->has_mfs && th_mfs_format(&a->mfs, text, sizeof(text)) >= 0)
			fprintf(f, "%s\n", text);
	}
	rc = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	return rc;
}

/* @p w as one shell word: as it is when that is safe, else in single quotes. */
static void
put_shell_word(FILE *f, const char *w)
{
	if (w[0] != '\0' && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				      "0123456789_./-+=:,@%") == strlen(w)) {
		fputs(w, f);
		return;
	}
	fputc('\'', f);
	for (; *w != '\0'; w++) {
		if (*w == '\'')
			fputs("'\\''", f);
		else
			fputc(*w, f);
	}
	fputc('\'', f);
}

/* The monitor's settings that differ from the defaults, as options: the verdict depends on them. */
static void
put_monitor(FILE *f, const struct th_monitor_cfg *m)
{
	struct th_monitor_cfg d;

	th_monitor_cfg_default(&d);
	if (m->samples != d.samples)
		fprintf(f, " --samples %u", m->samples);
	if (m->pause_ratio != d.pause_ratio)
		fprintf(f, " --pause-ratio %.15g", m->pause_ratio);
	if (m->shortfall != d.shortfall)
		fprintf(f, " --shortfall %.15g", m->shortfall);
}

int
th_search_write_anomalies(const struct th_search *s, const char *dir, const char *profile)
{
	char path[4096], text[2048];
	unsigned i, n = th_search_anomaly_count(s);
	FILE *f;
	int rc = 0, inside;

	if (snprintf(path, sizeof(path), "%s/anomalies.txt", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "w");
	if (f == NULL)
		return -errno;
	fprintf(f, "# %u anomalies; replay one with the command under it\n", n);
	for (i = 0; i < n; i++) {
		const struct th_search_anomaly *a = th_search_anomaly_get(s, i);

		if (snprintf(path, sizeof(path), "%s/anomaly-%u.ini", dir, a->id) >=
			(int)sizeof(path)) {
			rc = -ENAMETOOLONG;
			break;
		}
		rc = th_wl_write(&a->trigger, path);
		if (rc < 0)
			break;
		fprintf(f, "\nanomaly %u: %s, found at %.2f testbed hours\n", a->id,
			th_symptom_name((enum th_symptom)a->symptom), a->t_found_s / 3600);
		describe_mfs(a, text, sizeof(text));
		fprintf(f, "  mfs: %s  (%u experiment%s)\n", text, a->mfs_runs,
			a->mfs_runs == 1 ? "" : "s");
		if (a->met_in >= 0)
			fprintf(f, "  met while extracting anomaly %d's MFS\n", a->met_in);
		inside = inside_of(s, i);
		if (inside >= 0)
			fprintf(f, "  a special case of anomaly %d (its MFS holds this one)\n",
				inside);
		if (th_wl_format(&a->trigger, text, sizeof(text)) >= 0)
			fprintf(f, "  trigger: %s\n", text);
		fputs("  reproduce: tracehound search --profile ", f);
		put_shell_word(f, profile);
		fputs(" --replay ", f);
		put_shell_word(f, path);
		put_monitor(f, &s->cfg.mon);
		fputc('\n', f);
	}
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	return rc < 0 ? rc : write_mfs_list(s, dir);
}

void
th_search_print_summary(const struct th_search *s, FILE *f, bool has_table)
{
	struct th_search_stats st;
	char text[2048];
	unsigned i, n = th_search_anomaly_count(s), causes = 0;
	int inside;

	th_search_get_stats(s, &st);
	if (s->given_count != 0)
		fprintf(f, "%u MFS given: points inside them were not run\n", s->given_count);
	if (has_table)
		fprintf(f, "%4s  %-8s  %8s  %s\n", "id", "symptom", "found_h",
			"minimal feature set");
	for (i = 0; i < n; i++) {
		const struct th_search_anomaly *a = th_search_anomaly_get(s, i);

		inside = inside_of(s, i);
		if (inside < 0 && a->same_as < 0)
			causes++;
		if (!has_table)
			continue;
		describe_mfs(a, text, sizeof(text));
		fprintf(f, "%4u  %-8s  %8.2f  %s", a->id,
			th_symptom_name((enum th_symptom)a->symptom), a->t_found_s / 3600, text);
		if (a->met_in >= 0)
			fprintf(f, "  (met extracting %d)", a->met_in);
		if (inside >= 0)
			fprintf(f, "  (inside %d)", inside);
		fputc('\n', f);
	}
	fprintf(f,
		"%u anomalies, %u distinct (the rest lie inside another's MFS or were merged "
		"into one), in "
		"%.2f testbed hours%s: %u experiments, %u for MFS, %u failed, "
		"%u skipped (covered), %u rejected, %u restarts, %u moves accepted, %u known "
		"anomalies shown again, %u confirming runs, %u anomalous points not confirmed\n",
		n, causes, st.t_s / 3600, st.is_interrupted ? " (interrupted)" : "", st.runs,
		st.mfs_runs, st.failed, st.skipped, st.rejected, st.restarts, st.accepted,
		st.duplicates, st.confirm_runs, st.unconfirmed);
	if (st.refine_runs != 0)
		fprintf(f,
			"refining the MFS (--refine): %u of those MFS experiments, %.2f of those "
			"testbed hours\n",
			st.refine_runs, st.refine_s / 3600);
}

/* Jaccard similarity of two sets of constrained features. */
static double
feat_similarity(uint32_t a, uint32_t b)
{
	unsigned inter = (unsigned)__builtin_popcount(a & b);
	unsigned uni = (unsigned)__builtin_popcount(a | b);

	return uni != 0 ? (double)inter / uni : 1;
}

unsigned
th_search_score(const struct th_search *s, const struct th_search_known *known,
	unsigned known_count, double *first_s)
{
	unsigned i, k, unknown = 0;

	for (k = 0; k < known_count; k++)
		first_s[k] = -1;
	/* Anomalies are in order of finding, so the first credit is the earliest. */
	for (i = 0; i < th_search_anomaly_count(s); i++) {
		const struct th_search_anomaly *a = th_search_anomaly_get(s, i);
		bool is_match = false;
		int best = -1;
		double best_sim = -1;

		for (k = 0; k < known_count; k++) {
			double sim;

			if (known[k].mfs->symptom != a->symptom ||
				!th_mfs_covers(known[k].mfs, &a->trigger))
				continue;
			is_match = true;
			if (first_s[k] >= 0)
				continue;
			/*
			 * A trigger inside overlapping conditions (a bidirectional GPU
			 * point with mixed sizes and many SGEs is in two of Table 2's
			 * rows) goes to the row its own MFS resembles most.
			 */
			sim = a->has_mfs ? feat_similarity(a->mfs.feats, known[k].mfs->feats) : 0;
			if (sim > best_sim) {
				best_sim = sim;
				best = (int)k;
			}
		}
		if (best >= 0)
			first_s[best] = a->t_found_s;
		if (!is_match)
			unknown++;
	}
	return unknown;
}

static const char *const colours[] = {
	"#d62728", "#ff7f0e", "#9467bd", "#2ca02c", "#1f77b4", "#8c564b", "#e377c2",
};

int
th_search_write_chart(const char *path, unsigned panel_count, const char *const *panel_name,
	const unsigned *known, unsigned algo_count, const char *const *algo_name,
	unsigned point_count, double hours, const double *count)
{
	const double pw = 460, ph = 320, ml = 50, mr = 20, mt = 40, mb = 50;
	unsigned p, a, k, t;
	FILE *f;

	if (panel_count == 0 || algo_count == 0 || point_count < 2 || !(hours > 0))
		return -EINVAL;
	f = fopen(path, "w");
	if (f == NULL)
		return -errno;
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		pw * panel_count, ph + 24.0 * ((algo_count + 2) / 3));
	for (p = 0; p < panel_count; p++) {
		double x0 = pw * p + ml, y0 = mt, w = pw - ml - mr, h = ph - mt - mb, ymax;
		unsigned ystep;

		ymax = known[p];
		for (a = 0; a < algo_count; a++)
			for (k = 0; k < point_count; k++)
				ymax = fmax(ymax, count[((size_t)p * algo_count + a) * point_count + k]);
		ymax = ceil(ymax) + 1;
		ystep = ymax > 12 ? (unsigned)ceil(ymax / 6) : 1;
		fprintf(f, "<text x=\"%.1f\" y=\"24\" font-size=\"14\">profile %s: anomalies found "
			"(mean over seeds)</text>\n", x0, panel_name[p]);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
			"stroke=\"#444\"/>\n", x0, y0, w, h);
		for (t = 0; t <= (unsigned)ymax; t += ystep) {
			double y = y0 + h - h * t / ymax;

			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%u"
				"</text>\n", x0, y, x0 + w, y, x0 - 4, y + 4, t);
		}
		for (t = 0; t <= 10; t++) {
			double x = x0 + w * t / 10;

			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.3g</text>\n",
				x, y0 + h + 16, hours * t / 10);
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">testbed hours</text>\n",
			x0 + w / 2, y0 + h + 34);
		if (known[p] != 0) {
			double y = y0 + h - h * known[p] / ymax;

			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke=\"#000\" stroke-dasharray=\"4 3\"/><text x=\"%.1f\" "
				"y=\"%.1f\">%u known</text>\n", x0, y, x0 + w, y, x0 + 4, y - 4,
				known[p]);
		}
		for (a = 0; a < algo_count; a++) {
			const double *c = &count[((size_t)p * algo_count + a) * point_count];

			fprintf(f, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\" points=\"",
				colours[a % (sizeof(colours) / sizeof(colours[0]))]);
			for (k = 0; k < point_count; k++)
				fprintf(f, "%s%.1f,%.1f", k != 0 ? " " : "",
					x0 + w * k / (point_count - 1), y0 + h - h * c[k] / ymax);
			fputs("\"/>\n", f);
		}
	}
	for (a = 0; a < algo_count; a++) {
		double x = ml + 200.0 * (a % 3), y = ph + 24.0 * (a / 3);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-width=\"3\" "
			"stroke=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x, y, x + 24, y,
			colours[a % (sizeof(colours) / sizeof(colours[0]))], x + 30, y + 4,
			algo_name[a]);
	}
	fputs("</svg>\n", f);
	return fclose(f) != 0 ? -EIO : 0;
}
