/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The probe's I/O loop. Per sample, outside the timed section: pick an
 * aligned offset, check it lies in the range, drop the cached block in
 * buffered mode, wait for the intended start on the cycle-time schedule.
 * Inside: one clock read, the system call, one clock read.
 */

#include "th_probe.h"
#include "probe_private.h"

#include <errno.h>
#include <inttypes.h>
#include <liburing.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* A scheduled start this much behind its intended time counts as late. */
#define LATE_NS 10000u
#define MAX_IODEPTH 1024u
/* Buffered reads drop this much around each block: the largest page-cache folio (x86-64 PMD). */
#define DROP_WINDOW (UINT64_C(2) << 20)
/* A paced probe waiting for its next start looks at the stop flag this often. */
#define STOP_SLICE_NS UINT64_C(50000000)

static const char *const kind_names[] = {
#define TH_PROBE_X(e, name) [e] = name,
	TH_PROBE_KIND_LIST(TH_PROBE_X)
#undef TH_PROBE_X
};

static const char *const engine_names[] = {
#define TH_PROBE_X(e, name) [e] = name,
	TH_PROBE_ENGINE_LIST(TH_PROBE_X)
#undef TH_PROBE_X
};

const char *
th_probe_kind_name(enum th_probe_kind k)
{
	return (unsigned int)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k] : "?";
}

const char *
th_probe_engine_name(enum th_probe_engine e)
{
	return (unsigned int)e < sizeof(engine_names) / sizeof(engine_names[0]) ? engine_names[e]
										: "?";
}

void
th_probe_config_init(struct th_probe_config *c)
{
	memset(c, 0, sizeof(*c));
	c->block_size = 4096;
	c->iodepth = 1;
	c->engine = TH_PROBE_ENGINE_PSYNC;
	c->count = 1000;
	c->flag_high = 10.0;
	c->flag_low = 0.1;
	c->flag_after = 8;
	c->seed = 1;
}

/* Everything the loop needs, set up once. */
struct run {
	const struct th_probe_config *c; /* the configuration */
	struct th_probe_result *r;       /* where results go */
	struct probe_target t;           /* the opened target */
	uint8_t *buf;                    /* aligned I/O buffers, one block per slot */
	uint64_t nblocks;                /* blocks in the range */
	uint64_t rng;                    /* xorshift64* state for offsets */
	uint64_t t0;                     /* clock at the first intended start */
	uint64_t measure_t0;             /* clock at the first measured start */
	uint64_t measure_end;            /* clock at the last measured completion (io_uring) */
	uint64_t issued;                 /* samples started */
	bool is_measuring;               /* measure_t0 is set */
	struct th_timing_clock real;     /* used when the config has no clock */
	struct th_timing_clock *clk;     /* the clock in use */
	uint64_t service_sum; /* sum of measured service times, for the running average */
};

static inline uint64_t
now(const struct run *x)
{
	return th_timing_clock_now(x->clk);
}

static void
wait_until(const struct run *x, uint64_t deadline)
{
	th_timing_clock_sleep_until(x->clk, deadline);
}

/*
 * Wait for a paced start at @p deadline in slices of STOP_SLICE_NS that look
 * at c->stop: a probe with a long cycle (--rate 0.01 is 100 s) stops within a
 * slice of SIGINT, not at its next start. @return false when asked to stop
 * (the result marked so).
 */
static bool
wait_start(const struct run *x, uint64_t deadline)
{
	const struct th_probe_config *c = x->c;
	uint64_t t;

	while ((t = now(x)) + STOP_SLICE_NS < deadline) {
		if (c->stop != NULL && *c->stop)
			break;
		wait_until(x, t + STOP_SLICE_NS);
	}
	if (c->stop != NULL && *c->stop) {
		x->r->is_stopped = true;
		return false;
	}
	wait_until(x, deadline);
	return true;
}

/* A random block of the range (xorshift64*, then Lemire's multiply-high reduction). */
static uint64_t
pick_offset(struct run *x)
{
	unsigned __int128 m;
	uint64_t v;

	x->rng ^= x->rng >> 12;
	x->rng ^= x->rng << 25;
	x->rng ^= x->rng >> 27;
	v = x->rng * 0x2545F4914F6CDD1DULL;
	m = (unsigned __int128)v * x->nblocks;
	return x->r->range_offset + (uint64_t)(m >> 64) * x->c->block_size;
}

/* Should another sample start? (count reached, duration over, or asked to stop) */
static bool
is_more(const struct run *x, uint64_t t)
{
	const struct th_probe_config *c = x->c;

	if (c->stop != NULL && *c->stop) {
		x->r->is_stopped = true;
		return false;
	}
	if (x->issued < c->warmup)
		return true;
	if (c->count != 0 && x->issued - c->warmup >= c->count)
		return false;
	if (c->duration_ns != 0 && x->is_measuring && t - x->measure_t0 >= c->duration_ns)
		return false;
	return true;
}

/*
 * Prepare sample @p i: its offset, checked against the range (a write must
 * never land outside it), its cached block dropped in buffered mode, and
 * its intended start.
 */
static int
prepare(struct run *x, uint64_t i, uint64_t *off, uint64_t *intended)
{
	const struct th_probe_config *c = x->c;
	struct th_probe_result *r = x->r;

	*off = pick_offset(x);
	if (*off < r->range_offset || *off + c->block_size > r->range_offset + r->range_length)
		return probe__fail(
			r, EFAULT, "internal error: offset %" PRIu64 " outside the range", *off);
	if (c->is_buffered && !c->is_write) {
		/*
		 * The page cache keeps a file in folios of up to 2 MiB, and
		 * DONTNEED drops only folios wholly inside its range: the block
		 * alone would stay cached. Its aligned 2 MiB go instead.
		 */
		uint64_t lo = *off & ~(DROP_WINDOW - 1);
		uint64_t hi = (*off + c->block_size + DROP_WINDOW - 1) & ~(DROP_WINDOW - 1);

		posix_fadvise(x->t.fd, (off_t)lo, (off_t)(hi - lo), POSIX_FADV_DONTNEED);
	}
	*intended = c->cycle_ns != 0 ? x->t0 + i * c->cycle_ns : 0;
	return 0;
}

/*
 * Account one completed sample, outside the timed section: flag it against
 * the running average of the measured samples before it, count it, and hand
 * it to the caller. @p is_hist: also record it in r's histograms (the
 * io_uring loop; the psync loop takes them from the timing driver).
 */
static void
record(struct run *x, struct th_probe_sample *s, bool is_hist)
{
	const struct th_probe_config *c = x->c;
	struct th_probe_result *r = x->r;

	s->flag = TH_PROBE_FLAG_NONE;
	if (s->is_warmup) {
		r->warmup++;
	} else {
		double avg = r->samples > 0 ? (double)x->service_sum / (double)r->samples : 0;

		if (r->samples >= c->flag_after && r->samples > 0) {
			if (c->flag_high > 0 && (double)s->service_ns > avg * c->flag_high)
				s->flag = TH_PROBE_FLAG_HIGH;
			else if (c->flag_low > 0 && (double)s->service_ns < avg * c->flag_low)
				s->flag = TH_PROBE_FLAG_LOW;
		}
		r->flagged_high += s->flag == TH_PROBE_FLAG_HIGH;
		r->flagged_low += s->flag == TH_PROBE_FLAG_LOW;
		r->samples++;
		x->service_sum += s->service_ns;
		if (is_hist) {
			r->late += s->response_ns > s->service_ns + LATE_NS;
			th_hist_record(&r->service, s->service_ns);
			th_hist_record(&r->response, s->response_ns);
		}
	}
	if (c->on_sample != NULL)
		c->on_sample(c->sample_arg, s);
}

/* The measured phase starts with the first measured sample. */
static void
mark_measuring(struct run *x, uint64_t i, uint64_t start)
{
	if (!x->is_measuring && i >= x->c->warmup) {
		x->is_measuring = true;
		x->measure_t0 = start;
	}
}

static int
io_error(struct run *x, int err, ssize_t got, uint64_t off)
{
	const char *what = x->c->is_write ? "write" : "read";

	if (err == 0)
		return probe__fail(x->r, EIO,
			"short %s at offset %" PRIu64 ": %zd of %u bytes (the target shrank?)",
			what, off, got, x->c->block_size);
	if (err == EINVAL && x->t.is_direct)
		return probe__fail(x->r, EINVAL,
			"%s: the O_DIRECT %s at offset %" PRIu64 " failed with EINVAL: the "
			"filesystem refuses direct I/O, or needs a larger alignment than %u; rerun "
			"with --buffered (reads through the page cache, dropping the range first)",
			x->c->target, what, off, x->t.dio_align);
	return probe__fail(x->r, err, "%s: %s at offset %" PRIu64 " failed: %s", x->c->target, what,
		off, strerror(err));
}

/*
 * Queue depth 1: pread/pwrite, timed by the timing library's driver (one
 * MANUAL operation per sample), so the critical section is the system call
 * between two record_time() stamps, and the driver keeps the cycle-time
 * schedule, the ramp-up (warm-up) and the steady-state limits.
 */
static int
loop_psync(struct run *x)
{
	const struct th_probe_config *c = x->c;
	const struct th_timing_stats *stats;
	struct th_timing_driver *d;
	struct th_timing_op_info info;
	struct th_timing_config tc;
	struct th_probe_sample s;
	struct iovec iov = {x->buf, c->block_size};
	uint64_t off, unused;
	ssize_t n;
	int err = 0, ret;

	th_timing_config_init(&tc);
	th_timing_config_add_op(&tc, c->is_write ? "write" : "read", TH_TIMING_MANUAL, 1.0);
	if (c->cycle_ns != 0) {
		tc.delay = TH_TIMING_DELAY_CYCLE;
		th_timing_dist_set(&tc.delay_dist, TH_TIMING_DIST_FIXED, c->cycle_ns, 0, 0);
	}
	tc.rampup_count = c->warmup;
	tc.steady_count = c->count;
	tc.steady_ns = c->duration_ns;
	tc.late_ns = LATE_NS;
	tc.seed = c->seed;
	d = th_timing_driver_create(&tc, x->clk, 0);
	if (d == NULL)
		return probe__fail(x->r, errno, "timing driver: %s", strerror(errno));
	x->t0 = now(x);
	th_timing_driver_start(d, x->t0);
	while (th_timing_driver_is_running(d) &&
		th_timing_driver_phase(d) < TH_TIMING_PHASE_RAMPDOWN) {
		if (c->stop != NULL && *c->stop) {
			x->r->is_stopped = true;
			break;
		}
		/* The driver would sleep to the start in one go, deaf to a stop. */
		if (c->cycle_ns != 0 && !wait_start(x, x->t0 + x->issued * c->cycle_ns))
			break;
		ret = th_timing_op_begin(d);
		if (ret < 0) {
			err = probe__fail(x->r, -ret, "timing driver: %s", strerror(-ret));
			break;
		}
		err = prepare(x, x->issued, &off, &unused);
		if (err != 0)
			break;
		th_timing_record_time(d);
		/* A buffered write would end in the page cache: RWF_DSYNC takes it to the disk. */
		if (c->is_write && !x->t.is_direct)
			n = pwritev2(x->t.fd, &iov, 1, (off_t)off, RWF_DSYNC);
		else if (c->is_write)
			n = pwrite(x->t.fd, x->buf, c->block_size, (off_t)off);
		else
			n = pread(x->t.fd, x->buf, c->block_size, (off_t)off);
		th_timing_record_time(d);
		ret = n == (ssize_t)c->block_size ? 0 : (n < 0 ? errno : 0);
		th_timing_op_end(d, n == (ssize_t)c->block_size, &info);
		if (n != (ssize_t)c->block_size) {
			err = io_error(x, ret, n, off);
			break;
		}
		x->issued++;
		if (info.phase > TH_TIMING_PHASE_STEADY)
			break; /* past the steady state: not a sample */
		s.index = info.seq;
		s.offset = off;
		s.start_ns = info.start_ns - x->t0;
		s.service_ns = info.service_ns;
		s.response_ns = info.response_ns;
		s.is_warmup = info.phase == TH_TIMING_PHASE_RAMPUP;
		record(x, &s, false);
	}
	stats = th_timing_driver_stats(d);
	x->r->service = stats->ops[0].service;
	x->r->response = stats->ops[0].response;
	x->r->late = stats->ops[0].late;
	if (stats->steady_begin_ns != UINT64_MAX && stats->steady_end_ns > stats->steady_begin_ns)
		x->r->wall_ns = stats->steady_end_ns - stats->steady_begin_ns;
	th_timing_driver_free(d);
	return err;
}

/* One request in flight through io_uring. */
struct slot {
	uint64_t index;    /* sample number */
	uint64_t offset;   /* where */
	uint64_t intended; /* intended start (0: none) */
	uint64_t start;    /* clock just before submit */
};

/*
 * Queue depth N: each request is submitted on its own, timed from just
 * before io_uring_submit() to the moment its completion is reaped.
 */
static int
loop_uring(struct run *x)
{
	const struct th_probe_config *c = x->c;
	struct io_uring ring;
	struct slot *slots;
	uint32_t *free_ids, nfree, inflight = 0;
	uint64_t t;
	int err = 0, ret;
	bool is_done = false;

	ret = io_uring_queue_init(c->iodepth, &ring, 0);
	if (ret < 0)
		return probe__fail(x->r, -ret,
			"io_uring is not available (%s): the kernel lacks it or "
			"/proc/sys/kernel/io_uring_disabled forbids it; use --iodepth 1 "
			"(pread)",
			strerror(-ret));
	slots = calloc(c->iodepth, sizeof(*slots));
	free_ids = calloc(c->iodepth, sizeof(*free_ids));
	if (slots == NULL || free_ids == NULL) {
		err = probe__fail(x->r, ENOMEM, "out of memory");
		goto out_free;
	}
	for (nfree = 0; nfree < c->iodepth; nfree++)
		free_ids[nfree] = c->iodepth - 1 - nfree;
	t = now(x);
	x->t0 = t;
	for (;;) {
		struct io_uring_cqe *cqe;
		uint64_t due = 0, end;
		struct slot *s;

		/* Start every request that is due while there is room. */
		while (!is_done && nfree > 0) {
			struct io_uring_sqe *sqe;
			uint32_t id;

			if (!is_more(x, t)) {
				is_done = true;
				break;
			}
			if (c->cycle_ns != 0 && inflight > 0 &&
				now(x) < x->t0 + x->issued * c->cycle_ns) {
				/* Not yet: wait for a completion or the start time. */
				due = x->t0 + x->issued * c->cycle_ns;
				break;
			}
			id = free_ids[nfree - 1];
			s = &slots[id];
			s->index = x->issued;
			err = prepare(x, s->index, &s->offset, &s->intended);
			if (err != 0)
				goto out_drain;
			if (s->intended != 0 && !wait_start(x, s->intended)) {
				is_done = true;
				break;
			}
			sqe = io_uring_get_sqe(&ring);
			if (c->is_write) {
				io_uring_prep_write(sqe, x->t.fd,
					x->buf + (size_t)id * c->block_size, c->block_size,
					s->offset);
				if (!x->t.is_direct)
					sqe->rw_flags = RWF_DSYNC;
			} else
				io_uring_prep_read(sqe, x->t.fd,
					x->buf + (size_t)id * c->block_size, c->block_size,
					s->offset);
			io_uring_sqe_set_data64(sqe, id);
			s->start = now(x);
			ret = io_uring_submit(&ring);
			if (ret < 0) {
				err = probe__fail(
					x->r, -ret, "io_uring_submit: %s", strerror(-ret));
				goto out_drain;
			}
			nfree--;
			inflight++;
			x->issued++;
			mark_measuring(x, s->index, s->start);
			t = s->start;
		}
		if (inflight == 0)
			break;
		if (due != 0) {
			struct __kernel_timespec ts;
			uint64_t left = due > now(x) ? due - now(x) : 0;

			ts.tv_sec = (long long)(left / 1000000000u);
			ts.tv_nsec = (long long)(left % 1000000000u);
			ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		} else {
			ret = io_uring_wait_cqe(&ring, &cqe);
		}
		end = now(x);
		t = end;
		if (ret == -ETIME || ret == -EINTR)
			continue;
		if (ret < 0) {
			err = probe__fail(x->r, -ret, "io_uring_wait_cqe: %s", strerror(-ret));
			goto out_drain;
		}
		s = &slots[io_uring_cqe_get_data64(cqe)];
		ret = cqe->res;
		free_ids[nfree++] = (uint32_t)io_uring_cqe_get_data64(cqe);
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
		if (ret != (int)c->block_size) {
			err = io_error(x, ret < 0 ? -ret : 0, ret, s->offset);
			goto out_drain;
		}
		{
			struct th_probe_sample smp = {
				.index = s->index,
				.offset = s->offset,
				.start_ns = s->start - x->t0,
				.service_ns = end - s->start,
				.response_ns = s->intended != 0 && s->intended < s->start
						       ? end - s->intended
						       : end - s->start,
				.is_warmup = s->index < c->warmup,
			};

			record(x, &smp, true);
			if (!smp.is_warmup)
				x->measure_end = end;
		}
	}
	goto out_free;
out_drain:
	/* Reap what is still in flight before the buffers go away. */
	while (inflight > 0) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(&ring, &cqe) != 0)
			break;
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
	}
out_free:
	free(free_ids);
	free(slots);
	io_uring_queue_exit(&ring);
	return err;
}

/* Check the parameters against the target; fill the range in @p r. */
static int
check_range(const struct th_probe_config *c, struct run *x)
{
	struct th_probe_result *r = x->r;
	uint32_t align = x->t.is_direct ? x->t.dio_align : 512;

	if (x->t.size == 0)
		return probe__fail(r, EINVAL, "%s is empty (0 bytes): nothing to probe%s",
			c->target,
			x->t.kind == TH_PROBE_KIND_FILE ? "; give a file with data, or a "
							  "directory and --size"
							: "");
	if (c->block_size == 0 || c->block_size % align != 0)
		return probe__fail(r, EINVAL,
			"block size %u is not a multiple of %u bytes, the %s alignment of %s; use "
			"e.g. 4096",
			c->block_size, align, x->t.is_direct ? "direct-I/O" : "sector", c->target);
	if (c->offset % align != 0)
		return probe__fail(r, EINVAL, "offset %" PRIu64 " is not a multiple of %u bytes",
			c->offset, align);
	if (c->offset >= x->t.size)
		return probe__fail(r, EINVAL,
			"offset %" PRIu64 " is at or past the end of %s (%" PRIu64 " bytes)",
			c->offset, c->target, x->t.size);
	r->range_offset = c->offset;
	r->range_length = c->length != 0 ? c->length : x->t.size - c->offset;
	if (r->range_length > x->t.size - c->offset)
		return probe__fail(r, EINVAL,
			"range %" PRIu64 "+%" PRIu64 " runs past the end of %s (%" PRIu64 " bytes)",
			c->offset, c->length, c->target, x->t.size);
	x->nblocks = r->range_length / c->block_size;
	if (x->nblocks == 0)
		return probe__fail(r, EINVAL,
			"block size %u is larger than the probed range (%" PRIu64 " bytes of %s)",
			c->block_size, r->range_length, c->target);
	/* The range in use is whole blocks, so the last I/O ends inside it. */
	r->range_length = x->nblocks * c->block_size;
	/*
	 * A hole (a sparse or fallocated file) has no blocks on the disk: a read
	 * of it returns zeroes from memory and a write allocates, so its times are
	 * not the disk's. SEEK_HOLE finds the first hole at or after the range's
	 * start; the end of the file counts as one, hence the range's end.
	 */
	if (x->t.kind == TH_PROBE_KIND_FILE) {
		off_t hole = lseek(x->t.fd, (off_t)r->range_offset, SEEK_HOLE);

		if (hole >= 0 && (uint64_t)hole < r->range_offset + r->range_length)
			return probe__fail(r, EINVAL,
				"%s has a hole at offset %lld, inside the probed range: the "
				"filesystem holds no data there, so a read returns zeroes without "
				"touching the disk (and a write allocates); write data over the "
				"range first, probe a range without holes (--offset, --length), or "
				"probe a directory (a temporary file filled with data)",
				c->target, (long long)hole);
	}
	return 0;
}

static int
check_config(const struct th_probe_config *c, struct th_probe_result *r)
{
	if (c->iodepth == 0 || c->iodepth > MAX_IODEPTH)
		return probe__fail(
			r, EINVAL, "iodepth %u is outside 1..%u", c->iodepth, MAX_IODEPTH);
	if (c->iodepth > 1 && c->engine != TH_PROBE_ENGINE_URING)
		return probe__fail(r, EINVAL, "iodepth %u needs the io_uring engine", c->iodepth);
	if (c->block_size > (64u << 20))
		return probe__fail(r, EINVAL, "block size %u is above 64 MiB", c->block_size);
	if (c->flag_high < 0 || c->flag_low < 0 || (c->flag_high > 0 && c->flag_high < 1) ||
		c->flag_low > 1)
		return probe__fail(r, EINVAL,
			"flag factors: high must be 0 (off) or >= 1, low between 0 and 1");
	return 0;
}

int
th_probe_run(const struct th_probe_config *c, struct th_probe_result *r)
{
	struct run x;
	size_t align;
	int err, old_slack;

	memset(r, 0, sizeof(*r));
	th_hist_init(&r->service);
	th_hist_init(&r->response);
	r->engine = c->engine;
	r->block_size = c->block_size;
	r->iodepth = c->iodepth;
	r->cycle_ns = c->cycle_ns;
	r->seed = c->seed;
	r->is_write = c->is_write;
	r->is_buffered = c->is_buffered;
	err = check_config(c, r);
	if (err != 0)
		return err;
	memset(&x, 0, sizeof(x));
	x.c = c;
	x.r = r;
	x.rng = c->seed != 0 ? c->seed : 0x9E3779B97F4A7C15ULL;
	th_timing_clock_init_real(&x.real);
	x.clk = c->clock != NULL ? c->clock : &x.real;
	err = probe__open_target(c, &x.t, r);
	if (err != 0)
		return err;
	r->kind = x.t.kind;
	r->target_size = x.t.size;
	r->is_direct = x.t.is_direct;
	r->memory_fs = x.t.memory_fs;
	r->dio_align = x.t.dio_align;
	err = check_range(c, &x);
	if (err != 0)
		goto out_close;
	align = x.t.mem_align > 4096 ? x.t.mem_align : 4096;
	if (posix_memalign((void **)&x.buf, align, (size_t)c->block_size * c->iodepth) != 0) {
		err = probe__fail(r, ENOMEM, "cannot allocate %u aligned buffers of %u bytes",
			c->iodepth, c->block_size);
		goto out_close;
	}
	/* Writes put real data down (not zeroes a device might shortcut). */
	for (size_t i = 0; i < (size_t)c->block_size * c->iodepth; i++)
		x.buf[i] = (uint8_t)(i * 131 + 7);
	/*
	 * The default timer slack (50 µs) lets clock_nanosleep wake past the
	 * clock's spin window, and every paced start would count as late;
	 * restored afterwards.
	 */
	old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (c->cycle_ns != 0)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (c->engine == TH_PROBE_ENGINE_URING) {
		err = loop_uring(&x);
		/* To the last completion, as the pread driver's steady state: a probe stopped
		 * while it waited for its next start did no I/O in the wait. */
		if (x.is_measuring && x.measure_end > x.measure_t0)
			r->wall_ns = x.measure_end - x.measure_t0;
	} else {
		err = loop_psync(&x);
	}
	if (c->cycle_ns != 0 && old_slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)old_slack, 0, 0, 0);
	/* A summary of no samples would print zeroes as latencies. */
	if (err == 0 && r->is_stopped && r->samples == 0)
		err = probe__fail(r, EINTR,
			"stopped before a sample was measured (%" PRIu64 " warm-up samples taken)",
			r->warmup);
	free(x.buf);
out_close:
	probe__close_target(&x.t);
	return err;
}

double
th_probe_iops_latency(const struct th_probe_result *r)
{
	return r->service.count > 0 && r->service.mean > 0 ? 1e9 / r->service.mean : 0;
}

double
th_probe_iops_wall(const struct th_probe_result *r)
{
	return r->wall_ns > 0 ? (double)r->samples * 1e9 / (double)r->wall_ns : 0;
}

bool
th_probe_is_alarm(const struct th_probe_result *r, double percentile, uint64_t threshold_ns)
{
	return r->service.count > 0 && th_hist_percentile(&r->service, percentile) > threshold_ns;
}
