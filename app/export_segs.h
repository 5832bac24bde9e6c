/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_EXPORT_SEGS_H
#define TH_EXPORT_SEGS_H

/*
 * Which segment files tracehound export reads, in which order, and what was
 * wrong with them. Every file is read once, however often it was reached;
 * headers tell trace segments from other files, and a segment from its
 * copies; the segments of one writer stream (box, kind, lcore) are read in
 * sequence as one source of th_export_run(), or as several where captures
 * wrote the stream at overlapping times. Damage, copies and overlaps are
 * named on stderr.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct th_export_config;
struct th_export_source;
struct seg;   /* one segment file (export_segs.c) */
struct chain; /* the segments one source reads (export_segs.c) */

/* What went wrong in reading, all segments together. */
struct th_segs_damage {
	unsigned int damaged; /* segments truncated, corrupt, or unreadable from their header */
	unsigned int unread;  /* of those, the ones whose header could not be read */
	unsigned int foreign; /* files that are not trace segments at all */
	uint64_t missing;     /* segments a stream's numbers show are not there */
	uint64_t lost;        /* records the capture lost, as its segments' trailers count */
	unsigned int unsearched; /* directories too deep and paths too long, not searched */
	bool is_limited;      /* a limit of this run (open files, memory) stopped a read: exit 1 */
};

/* The segments of one export; all zero before th_segs_find(). */
struct th_segs {
	struct seg *v;                    /* the files found, each once */
	size_t count;                     /* files found */
	size_t cap;                       /* allocated */
	struct seg **order;               /* readable segments, by stream, in order written */
	size_t readable;                  /* segments in order */
	size_t copies;                    /* copies of a segment skipped */
	size_t chained;                   /* segments of the streams the export reads */
	struct chain *chains;             /* one per source */
	struct th_export_source *sources; /* what th_export_run() reads */
	unsigned int sources_count;       /* sources and chains */
	struct th_segs_damage dmg;        /* what went wrong so far */
};

/** Find the segments @p paths name (directories searched), each once. @return 0 or -errno. */
int th_segs_find(struct th_segs *segs, char *const *paths, int count);

/** Whether @p path is one of the files found (an output must not be). */
bool th_segs_holds(const struct th_segs *segs, const char *path);

/**
 * Whether a file written at @p path, there or not, would be found among the
 * segments of @p paths: named as one (*.lz4, *.lz4.tmp) in a directory
 * searched. An output there would be read, as a foreign file, by the next
 * export of those paths.
 */
bool th_segs_would_find(char *const *paths, int count, const char *path);

/** Group the segments found into the sources @p c reads. @return 0, or -1 (none, or no memory). */
int th_segs_group(struct th_segs *segs, const struct th_export_config *c);

/** Segments the sources have read to their end (a rewind starts again), and in all. */
void th_segs_progress(const struct th_segs *segs, unsigned int *done, unsigned int *count);

/** Name each segment whose reading did not complete, counting it in segs->dmg (after the run). */
void th_segs_report(struct th_segs *segs);

/** ", N files not trace segments, K missing, U not searched, M copies skipped" for the summary,
 * or "", in @p buf.
 */
const char *th_segs_note(const struct th_segs *segs, char *buf, size_t size);

/** Close and free what th_segs_find() and th_segs_group() made. */
void th_segs_free(struct th_segs *segs);

#endif /* TH_EXPORT_SEGS_H */
