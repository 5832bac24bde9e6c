/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Segment writer. Records are chunk-coded (th_trace_chunk_*) straight into a
 * 256 KiB staging buffer; a full buffer becomes one LZ4 block (autoFlush, so liblz4 keeps nothing
 * back), and compressed blocks collect in an output buffer written with one
 * write() per 256 KiB. A crash therefore loses what is staged or not yet
 * written, which the flush interval bounds.
 *
 * A failed write truncates the file back to the end of the last complete
 * write, so the .tmp left behind ends on a block boundary and every record
 * counted as written can be read back; the records that were in flight are
 * counted as lost, by reason.
 */

#include "th_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lz4frame.h>

#include "segment_private.h"

/*
 * The stage is one LZ4 block and one chunk (th_trace.h). A chunk's tables
 * pay for each handle once per chunk, so a larger one is smaller on disk:
 * bench_segment measured 29.8 bytes a record with 64 KiB, 21.5 with 256 KiB
 * and 18.3 with 1 MiB, whose tables and stage no longer stay in the cache
 * (6.6 M records/s at best against 8.0-8.3 for 256 KiB).
 */
#define STAGE_SIZE (256 * 1024)
#define STAGE_BLOCK LZ4F_max256KB
#define WRITE_SIZE (256 * 1024)
#define NO_CHUNK SIZE_MAX

struct th_segment_writer {
	struct th_segment_config cfg; /**< copy; dir and prefix point into this struct */
	char dir[PATH_MAX];
	char prefix[64];
	LZ4F_cctx *cctx;          /**< compression state, reused across segments */
	LZ4F_preferences_t prefs; /**< 256 KiB linked blocks, both checksums */
	uint8_t *stage;           /**< raw records not yet compressed */
	size_t stage_used;
	uint64_t stage_records;       /**< records in stage */
	struct th_trace_chunk *chunk; /**< tables of the chunk being written */
	size_t chunk_at;              /**< stage offset of its frame header; NO_CHUNK: none open */
	uint8_t *out;                 /**< compressed bytes not yet written */
	size_t out_used;
	size_t out_cap;
	uint64_t out_records; /**< records in out */
	int fd;               /**< open segment, -1 when none */
	char tmp_path[PATH_MAX + 176];
	char path[PATH_MAX + 160];
	uint64_t seg_seq;         /**< number of the open segment */
	uint64_t last_created_ns; /**< keeps names unique and increasing */
	uint64_t seg_offset;      /**< file bytes written for the open segment */
	uint64_t seg_by_type[4];  /**< records in the open segment, by enum th_trace_type */
	uint64_t seg_first_ns;
	uint64_t seg_last_ns;
	uint64_t seg_start_ns;  /**< tick clock when the segment began; 0: not yet seen */
	uint64_t last_flush_ns; /**< tick clock of the last flush; 0: not yet seen */
	bool is_dirty;          /**< records since the last flush */
	atomic_int error;       /**< 0 or the -errno that stopped the stream */
	char msg[2 * PATH_MAX];
	struct th_segment_counters ctr;
};

static const char *const loss_names[] = {
#define TH_SEGMENT_X(name, text) [TH_SEGMENT_LOSS_##name] = text,
	TH_SEGMENT_LOSS_LIST(TH_SEGMENT_X)
#undef TH_SEGMENT_X
};

static const char *const kind_names[] = {
#define TH_SEGMENT_X(name, num, text) [num] = text,
	TH_SEGMENT_KIND_LIST(TH_SEGMENT_X)
#undef TH_SEGMENT_X
};

const char *
th_segment_loss_name(unsigned int reason)
{
	return reason < TH_SEGMENT_LOSS_MAX ? loss_names[reason] : "?";
}

const char *
th_segment_kind_name(unsigned int kind)
{
	if (kind >= sizeof(kind_names) / sizeof(kind_names[0]) || kind_names[kind] == NULL)
		return "?";
	return kind_names[kind];
}

uint64_t
th_segment_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static enum th_segment_loss
loss_reason(int err)
{
	switch (err) {
	case -ENOSPC:
	case -EDQUOT:
		return TH_SEGMENT_LOSS_NOSPACE;
	case -EACCES:
	case -EPERM:
	case -EROFS:
		return TH_SEGMENT_LOSS_PERM;
	case -ENOMEM:
		return TH_SEGMENT_LOSS_NOMEM;
	default:
		return TH_SEGMENT_LOSS_IO;
	}
}

/*
 * Stop the stream: what was in flight is lost, the .tmp keeps what was
 * written before (cut back to a block boundary by the caller).
 */
static int
fail(struct th_segment_writer *w, int err, const char *what, const char *path)
{
	const char *hint = "check the disk";

	if (err == -ENOSPC || err == -EDQUOT)
		hint = "free space on the trace disk, then resume the stream";
	else if (err == -EACCES || err == -EPERM || err == -EROFS)
		hint = "make the directory writable, then resume the stream";
	snprintf(w->msg, sizeof(w->msg), "%s: %s: %s; stream %u stopped, its records are lost: %s",
		path, what, strerror(-err), w->cfg.stream_id, hint);
	w->ctr.lost[loss_reason(err)] += w->stage_records + w->out_records;
	w->ctr.records -= w->stage_records + w->out_records;
	w->stage_records = w->out_records = 0;
	w->stage_used = w->out_used = 0;
	w->chunk_at = NO_CHUNK;
	w->ctr.errors++;
	if (w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
	}
	atomic_store_explicit(&w->error, err, memory_order_release);
	return err;
}

static int
write_out(struct th_segment_writer *w)
{
	size_t done = 0;

	while (done < w->out_used) {
		ssize_t n = write(w->fd, w->out + done, w->out_used - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -ENOSPC;
			const char *what = "write";
			char cut_failed[128];

			/*
			 * Cut a partial block off, so the file ends where its last good
			 * write did. Should that fail too, the file ends inside a block,
			 * which the reader takes for a crash's cut: the message says so.
			 */
			if (done > 0 && ftruncate(w->fd, (off_t)w->seg_offset) != 0) {
				snprintf(cut_failed, sizeof(cut_failed),
					"write (and cutting the partial block off failed: %s)",
					strerror(errno));
				what = cut_failed;
			}
			return fail(w, err, what, w->tmp_path);
		}
		done += (size_t)n;
	}
	w->seg_offset += w->out_used;
	w->ctr.file_bytes += w->out_used;
	w->out_used = 0;
	w->out_records = 0;
	return 0;
}

/* End the open chunk: its frame header gets the length, and the next record starts a new one. */
static void
close_chunk(struct th_segment_writer *w)
{
	if (w->chunk_at == NO_CHUNK)
		return;
	th_le_put16(w->stage + w->chunk_at, TH_SEGMENT_CHUNK_TYPE);
	th_le_put16(w->stage + w->chunk_at + 2, 4);
	th_le_put32(w->stage + w->chunk_at + 4,
		(uint32_t)(w->stage_used - w->chunk_at - SEG_CHUNK_HDR));
	w->chunk_at = NO_CHUNK;
}

/*
 * Compress the stage into one LZ4 block. The chunk ends with it, so a block
 * needs nothing from earlier blocks but what LZ4 itself links.
 */
static int
compress_stage(struct th_segment_writer *w)
{
	size_t n;
	int ret;

	close_chunk(w);
	if (w->stage_used == 0)
		return 0;
	if (w->out_cap - w->out_used < LZ4F_compressBound(w->stage_used, &w->prefs)) {
		ret = write_out(w);
		if (ret < 0)
			return ret;
	}
	n = LZ4F_compressUpdate(w->cctx, w->out + w->out_used, w->out_cap - w->out_used, w->stage,
		w->stage_used, NULL);
	if (LZ4F_isError(n))
		return fail(w, -EIO, LZ4F_getErrorName(n), w->tmp_path);
	w->out_used += n;
	w->out_records += w->stage_records;
	w->stage_records = 0;
	w->stage_used = 0;
	if (w->out_used >= WRITE_SIZE)
		return write_out(w);
	return 0;
}

static void
encode_header(struct th_segment_writer *w, uint64_t created_ns)
{
	uint8_t *p = w->stage;

	memset(p, 0, TH_SEGMENT_HEADER_SIZE);
	memcpy(p, SEG_HEADER_MAGIC, 8);
	th_le_put16(p + 8, TH_SEGMENT_VERSION);
	th_le_put16(p + 10, TH_SEGMENT_HEADER_SIZE);
	th_le_put16(p + 12, TH_TRACE_VERSION);
	th_le_put16(p + 14, w->cfg.stream_id);
	p[16] = (uint8_t)w->cfg.kind;
	th_le_put64(p + 24, w->cfg.box_id);
	th_le_put64(p + 32, created_ns);
	th_le_put64(p + 40, w->seg_seq);
	th_le_put64(p + 48, w->cfg.flush_ns);
	w->stage_used = TH_SEGMENT_HEADER_SIZE;
	w->chunk_at = NO_CHUNK;
	w->ctr.raw_bytes += TH_SEGMENT_HEADER_SIZE;
}

static int
segment_open(struct th_segment_writer *w)
{
	uint64_t created = realtime_ns();
	size_t n;

	for (int tries = 0;; tries++) {
		if (created <= w->last_created_ns)
			created = w->last_created_ns + 1;
		w->last_created_ns = created;
		snprintf(w->path, sizeof(w->path), "%s/%s-%" PRIu64 "-%05u-%020" PRIu64 "%s",
			w->dir, w->prefix, w->cfg.box_id, w->cfg.stream_id, created,
			TH_SEGMENT_SUFFIX);
		snprintf(w->tmp_path, sizeof(w->tmp_path), "%s%s", w->path, TH_SEGMENT_TMP_SUFFIX);
		w->fd = open(w->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (w->fd >= 0)
			break;
		/* Another writer with the same box and stream id: never overwrite its file. */
		if (errno != EEXIST || tries > 16)
			return fail(w, -errno, "create", w->tmp_path);
	}
	n = LZ4F_compressBegin(w->cctx, w->out, w->out_cap, &w->prefs);
	if (LZ4F_isError(n))
		return fail(w, -EIO, LZ4F_getErrorName(n), w->tmp_path);
	w->out_used = n;
	w->seg_offset = 0;
	memset(w->seg_by_type, 0, sizeof(w->seg_by_type));
	w->seg_first_ns = UINT64_MAX;
	w->seg_last_ns = 0;
	w->seg_start_ns = 0;
	encode_header(w, created);
	w->is_dirty = true;
	return 0;
}

/* Records in the open segment. */
static inline uint64_t
seg_records(const struct th_segment_writer *w)
{
	return w->seg_by_type[TH_TRACE_OPEN] + w->seg_by_type[TH_TRACE_NAME] +
	       w->seg_by_type[TH_TRACE_RPC];
}

static void
encode_trailer(struct th_segment_writer *w)
{
	uint64_t lost = 0, records = seg_records(w);
	uint8_t *p;

	close_chunk(w);
	p = w->stage + w->stage_used;
	for (unsigned int i = 0; i < TH_SEGMENT_LOSS_MAX; i++)
		lost += w->ctr.lost[i];
	th_le_put16(p, TH_SEGMENT_TRAILER_TYPE);
	th_le_put16(p + 2, TH_SEGMENT_TRAILER_SIZE);
	p += SEG_REC_HDR;
	memcpy(p, SEG_TRAILER_MAGIC, 8);
	th_le_put64(p + 8, records > 0 ? w->seg_first_ns : 0);
	th_le_put64(p + 16, w->seg_last_ns);
	th_le_put64(p + 24, records);
	th_le_put64(p + 32, w->seg_by_type[TH_TRACE_OPEN]);
	th_le_put64(p + 40, w->seg_by_type[TH_TRACE_NAME]);
	th_le_put64(p + 48, w->seg_by_type[TH_TRACE_RPC]);
	th_le_put64(p + 56, lost);
	w->stage_used += SEG_REC_HDR + TH_SEGMENT_TRAILER_SIZE;
	w->ctr.raw_bytes += SEG_REC_HDR + TH_SEGMENT_TRAILER_SIZE;
}

static int
sync_dir(struct th_segment_writer *w)
{
	int fd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0 && errno != EINVAL)
		ret = -errno;
	close(fd);
	return ret;
}

/* Let liblz4 emit what it holds (a flush, or the end of the frame) and write it all out. */
static int
drain_lz4(struct th_segment_writer *w, bool is_end)
{
	size_t n;
	int ret;

	if (w->out_cap - w->out_used < LZ4F_compressBound(0, &w->prefs)) {
		ret = write_out(w);
		if (ret < 0)
			return ret;
	}
	n = is_end ? LZ4F_compressEnd(w->cctx, w->out + w->out_used, w->out_cap - w->out_used, NULL)
		   : LZ4F_flush(w->cctx, w->out + w->out_used, w->out_cap - w->out_used, NULL);
	if (LZ4F_isError(n))
		return fail(w, -EIO, LZ4F_getErrorName(n), w->tmp_path);
	w->out_used += n;
	return write_out(w);
}

/* Close the open segment: trailer, end of frame, fsync, rename. */
static int
segment_close(struct th_segment_writer *w, bool is_final)
{
	int ret;

	if (w->fd < 0)
		return 0;
	/* Nothing recorded in it: a file with only a header tells nobody anything. */
	if (is_final && seg_records(w) == 0) {
		close(w->fd);
		w->fd = -1;
		unlink(w->tmp_path);
		w->stage_used = w->out_used = 0;
		w->chunk_at = NO_CHUNK;
		return 0;
	}
	if (STAGE_SIZE - w->stage_used < SEG_REC_HDR + TH_SEGMENT_TRAILER_SIZE) {
		ret = compress_stage(w);
		if (ret < 0)
			return ret;
	}
	encode_trailer(w);
	ret = compress_stage(w);
	if (ret < 0)
		return ret;
	ret = drain_lz4(w, true);
	if (ret < 0)
		return ret;
	if (fsync(w->fd) != 0)
		return fail(w, -errno, "fsync", w->tmp_path);
	close(w->fd);
	w->fd = -1;
	if (rename(w->tmp_path, w->path) != 0)
		return fail(w, -errno, "rename", w->tmp_path);
	/* The rename is only durable once the directory is. */
	ret = sync_dir(w);
	if (ret < 0)
		return fail(w, ret, "fsync directory", w->dir);
	w->ctr.segments++;
	w->seg_seq++;
	return 0;
}

struct th_segment_writer *
th_segment_writer_create(const struct th_segment_config *c)
{
	struct th_segment_writer *w;
	const char *prefix;

	if (c == NULL || c->dir == NULL || c->dir[0] == '\0' || strlen(c->dir) >= PATH_MAX - 64 ||
		c->kind < TH_SEGMENT_KIND_OPENS || c->kind > TH_SEGMENT_KIND_MIXED) {
		errno = EINVAL;
		return NULL;
	}
	prefix = c->prefix != NULL ? c->prefix : th_segment_kind_name(c->kind);
	if (prefix[0] == '\0' || strlen(prefix) >= 64 || strchr(prefix, '/') != NULL) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		goto fail_alloc;
	w->fd = -1;
	w->cfg = *c;
	snprintf(w->dir, sizeof(w->dir), "%s", c->dir);
	snprintf(w->prefix, sizeof(w->prefix), "%s", prefix);
	w->cfg.dir = w->dir;
	w->cfg.prefix = w->prefix;
	if (w->cfg.max_bytes == 0)
		w->cfg.max_bytes = 256u << 20;
	if (w->cfg.rotate_ns == 0)
		w->cfg.rotate_ns = 3600ull * 1000000000u;
	if (w->cfg.flush_ns == 0)
		w->cfg.flush_ns = 1000000000u;
	w->prefs.frameInfo.blockSizeID = STAGE_BLOCK;
	w->prefs.frameInfo.blockMode = LZ4F_blockLinked;
	w->prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
	w->prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
	w->prefs.compressionLevel = c->level;
	/* Hand every block over at once: liblz4 must not hold records back from a flush. */
	w->prefs.autoFlush = 1;
	if (LZ4F_isError(LZ4F_createCompressionContext(&w->cctx, LZ4F_VERSION)))
		goto fail_cctx;
	w->chunk = th_trace_chunk_create();
	w->chunk_at = NO_CHUNK;
	w->stage = malloc(STAGE_SIZE);
	w->out_cap = WRITE_SIZE + LZ4F_compressBound(STAGE_SIZE, &w->prefs) + LZ4F_HEADER_SIZE_MAX;
	w->out = malloc(w->out_cap);
	if (w->stage == NULL || w->out == NULL || w->chunk == NULL)
		goto fail_buffers;
	snprintf(w->msg, sizeof(w->msg), "ok");
	segment_open(w);
	return w;

fail_buffers:
	th_trace_chunk_free(w->chunk);
	free(w->stage);
	free(w->out);
	LZ4F_freeCompressionContext(w->cctx);
fail_cctx:
	free(w);
fail_alloc:
	errno = ENOMEM;
	return NULL;
}

static inline int
lost(struct th_segment_writer *w, int err)
{
	w->ctr.lost[loss_reason(err)]++;
	return err;
}

/* Make room for one record; after a size rotation the record goes into the new segment. */
static int
make_room(struct th_segment_writer *w)
{
	int ret = compress_stage(w);

	if (ret < 0)
		return ret;
	if (w->seg_offset + w->out_used >= w->cfg.max_bytes) {
		ret = segment_close(w, false);
		if (ret == 0)
			ret = segment_open(w);
	}
	return ret;
}

/* Account for a record just encoded into the stage. */
static inline void
accepted(struct th_segment_writer *w, size_t n, unsigned int type, uint64_t t)
{
	w->stage_used += n;
	w->stage_records++;
	w->seg_by_type[type]++;
	if (t < w->seg_first_ns)
		w->seg_first_ns = t;
	if (t > w->seg_last_ns)
		w->seg_last_ns = t;
	w->ctr.records++;
	w->ctr.by_type[type]++;
	w->ctr.raw_bytes += n;
	w->is_dirty = true;
}

/* Common checks before encoding: stream state, kind, room in the stage. */
static inline int
admit(struct th_segment_writer *w, enum th_segment_kind kind)
{
	int err = atomic_load_explicit(&w->error, memory_order_relaxed);

	if (err != 0)
		return lost(w, err);
	if (w->cfg.kind != kind && w->cfg.kind != TH_SEGMENT_KIND_MIXED) {
		w->ctr.lost[TH_SEGMENT_LOSS_INVALID]++;
		return -EINVAL;
	}
	if (STAGE_SIZE - w->stage_used < SEG_CHUNK_HDR + TH_TRACE_RECORD_MAX ||
		(w->chunk_at != NO_CHUNK && !th_trace_chunk_has_room(w->chunk))) {
		err = make_room(w);
		if (err < 0)
			return lost(w, err);
	}
	if (w->chunk_at == NO_CHUNK) {
		w->chunk_at = w->stage_used;
		w->stage_used += SEG_CHUNK_HDR;
		w->ctr.raw_bytes += SEG_CHUNK_HDR;
		th_trace_chunk_reset(w->chunk);
	}
	return 0;
}

/* A record encoded into the stage (n bytes, 0: it did not encode) is in, or counted lost. */
static int
take(struct th_segment_writer *w, size_t n, enum th_trace_type type, uint64_t time_ns)
{
	if (n == 0) {
		w->ctr.lost[TH_SEGMENT_LOSS_INVALID]++;
		return -EINVAL;
	}
	accepted(w, n, type, time_ns);
	return 0;
}

int
th_segment_write_open(struct th_segment_writer *w, const struct th_trace_open *r)
{
	int ret = admit(w, TH_SEGMENT_KIND_OPENS);

	if (ret < 0)
		return ret;
	return take(w,
		th_trace_chunk_encode_open(
			w->chunk, r, w->stage + w->stage_used, STAGE_SIZE - w->stage_used),
		TH_TRACE_OPEN, th_trace_open_time(r));
}

int
th_segment_write_name(struct th_segment_writer *w, const struct th_trace_name *r)
{
	int ret = admit(w, TH_SEGMENT_KIND_NAMES);

	if (ret < 0)
		return ret;
	return take(w,
		th_trace_chunk_encode_name(
			w->chunk, r, w->stage + w->stage_used, STAGE_SIZE - w->stage_used),
		TH_TRACE_NAME, r->from_ns);
}

int
th_segment_write_rpc(struct th_segment_writer *w, const struct th_trace_rpc *r)
{
	int ret = admit(w, TH_SEGMENT_KIND_RPCS);

	if (ret < 0)
		return ret;
	return take(w,
		th_trace_chunk_encode_rpc(
			w->chunk, r, w->stage + w->stage_used, STAGE_SIZE - w->stage_used),
		TH_TRACE_RPC, th_trace_rpc_time(r));
}

int
th_segment_writer_flush(struct th_segment_writer *w)
{
	int ret = atomic_load_explicit(&w->error, memory_order_relaxed);

	if (ret != 0)
		return ret;
	if (w->fd < 0)
		return 0;
	ret = compress_stage(w);
	if (ret < 0)
		return ret;
	/* autoFlush leaves nothing inside liblz4; LZ4F_flush makes that a guarantee. */
	ret = drain_lz4(w, false);
	if (ret < 0)
		return ret;
	if (fdatasync(w->fd) != 0)
		return fail(w, -errno, "fdatasync", w->tmp_path);
	w->ctr.flushes++;
	w->is_dirty = false;
	return 0;
}

int
th_segment_writer_rotate(struct th_segment_writer *w)
{
	int ret = atomic_load_explicit(&w->error, memory_order_relaxed);

	if (ret != 0)
		return ret;
	ret = segment_close(w, false);
	if (ret == 0)
		ret = segment_open(w);
	return ret;
}

int
th_segment_writer_tick(struct th_segment_writer *w, uint64_t now_ns)
{
	int ret = atomic_load_explicit(&w->error, memory_order_relaxed);

	if (ret != 0)
		return ret;
	if (w->last_flush_ns == 0)
		w->last_flush_ns = now_ns;
	if (w->seg_start_ns == 0)
		w->seg_start_ns = now_ns;
	if (now_ns - w->seg_start_ns >= w->cfg.rotate_ns && seg_records(w) > 0) {
		/* Closing fsyncs everything: it is a flush too. */
		ret = th_segment_writer_rotate(w);
		w->seg_start_ns = now_ns;
		w->last_flush_ns = now_ns;
		return ret;
	}
	if (now_ns - w->last_flush_ns >= w->cfg.flush_ns) {
		w->last_flush_ns = now_ns;
		if (w->is_dirty)
			return th_segment_writer_flush(w);
	}
	return 0;
}

int
th_segment_writer_resume(struct th_segment_writer *w)
{
	if (atomic_load_explicit(&w->error, memory_order_acquire) == 0)
		return 0;
	atomic_store_explicit(&w->error, 0, memory_order_release);
	snprintf(w->msg, sizeof(w->msg), "ok");
	w->last_flush_ns = 0;
	return segment_open(w);
}

int
th_segment_writer_error(const struct th_segment_writer *w)
{
	return atomic_load_explicit(&w->error, memory_order_acquire);
}

const char *
th_segment_writer_describe(const struct th_segment_writer *w)
{
	return w->msg;
}

void
th_segment_writer_counters(const struct th_segment_writer *w, struct th_segment_counters *c)
{
	*c = w->ctr;
}

int
th_segment_writer_close(struct th_segment_writer *w, struct th_segment_counters *last)
{
	int ret;

	if (w == NULL)
		return 0;
	ret = atomic_load_explicit(&w->error, memory_order_relaxed);
	if (ret == 0)
		ret = segment_close(w, true);
	if (last != NULL)
		th_segment_writer_counters(w, last);
	if (w->fd >= 0)
		close(w->fd);
	LZ4F_freeCompressionContext(w->cctx);
	th_trace_chunk_free(w->chunk);
	free(w->stage);
	free(w->out);
	free(w);
	return ret;
}
