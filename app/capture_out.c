/* SPDX-License-Identifier: BSD-3-Clause */

#include "capture_out.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

int
th_out_init(
	struct th_out *o, const char *name, uint32_t dest, unsigned int bufs, struct rte_ring *full)
{
	unsigned int i;

	memset(o, 0, sizeof(*o));
	o->dest = dest;
	o->full = full;
	o->free = rte_ring_create(name, rte_align32pow2(bufs + 1), (int)rte_socket_id(),
		RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (o->free == NULL)
		return -ENOMEM;
	for (i = 0; i < bufs; i++) {
		struct th_outbuf *b = malloc(sizeof(*b));

		if (b == NULL)
			return -ENOMEM;
		b->home = o->free;
		b->dest = dest;
		b->len = 0;
		rte_ring_sp_enqueue(o->free, b);
	}
	return 0;
}

void
th_out_fini(struct th_out *o)
{
	struct th_outbuf *b;

	free(o->cur);
	o->cur = NULL;
	while (o->free != NULL && rte_ring_sc_dequeue(o->free, (void **)&b) == 0)
		free(b);
	rte_ring_free(o->free);
	o->free = NULL;
}

static void
swap_buffer(struct th_out *o)
{
	if (o->cur != NULL && o->cur->len > 0) {
		/* The shared ring has room for every buffer there is: this cannot fail. */
		rte_ring_mp_enqueue(o->full, o->cur);
		o->cur = NULL;
	}
	if (o->cur == NULL && rte_ring_sc_dequeue(o->free, (void **)&o->cur) == 0)
		o->cur->len = 0;
	o->last_pass_tsc = rte_rdtsc();
}

char *
th_out_reserve(struct th_out *o)
{
	if (o->cur == NULL || TH_OUT_BUF_SIZE - o->cur->len < TH_OUT_ROOM)
		swap_buffer(o);
	if (o->cur == NULL) {
		o->dropped++;
		return NULL;
	}
	return o->cur->data + o->cur->len;
}

void
th_out_commit(struct th_out *o, size_t n)
{
	if (n < TH_OUT_ROOM)
		o->cur->len += (uint32_t)n;
	else
		o->dropped++;
}

void
th_out_tick(struct th_out *o, uint64_t now_tsc, uint64_t period_tsc)
{
	if (o->cur == NULL || (o->cur->len > 0 && now_tsc - o->last_pass_tsc > period_tsc))
		swap_buffer(o);
}

void
th_out_pass(struct th_out *o)
{
	if (o->cur != NULL && o->cur->len > 0) {
		rte_ring_mp_enqueue(o->full, o->cur);
		o->cur = NULL;
	}
}

/*
 * Write @p n bytes; @return 0, or -errno with *done the bytes that went out
 * first. A pipe, socket or terminal is waited on with poll() in slices of
 * TH_OUT_POLL_MS, never in write(): a signal that lands after *@p stop was
 * read and before a write() began would not interrupt it, and a write blocked
 * on a reader that stopped reading would hold the run until a second signal.
 * Each write takes no more than a pipe holds once poll() saw room, so it does
 * not block. Once *@p stop is set, a reader that takes nothing for
 * TH_OUT_STALL_MS is given up (-ETIMEDOUT). A regular file never waits on a
 * reader: it is written in one go.
 */
static int
write_all(int fd, bool is_file, const char *p, size_t n, size_t *done,
	const volatile sig_atomic_t *stop)
{
	unsigned int stalled_ms = 0;

	*done = 0;
	while (*done < n) {
		size_t want = n - *done;
		ssize_t w;

		if (!is_file) {
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			int r = poll(&pfd, 1, TH_OUT_POLL_MS);

			if (r < 0 && errno != EINTR)
				return -errno;
			if (r <= 0) {
				if (r == 0 && stop != NULL && *stop)
					stalled_ms += TH_OUT_POLL_MS;
				if (stalled_ms >= TH_OUT_STALL_MS)
					return -ETIMEDOUT;
				continue;
			}
			if (want > PIPE_BUF)
				want = PIPE_BUF;
		}
		w = write(fd, p + *done, want);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		*done += (size_t)w;
		stalled_ms = 0;
	}
	return 0;
}

static uint64_t
count_lines(const char *p, size_t n)
{
	const char *end = p + n;
	uint64_t lines = 0;

	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		lines++;
		p++;
	}
	return lines;
}

unsigned int
th_out_drain(struct rte_ring *full, const int fds[TH_OUT__DEST_COUNT], struct th_out_totals *t)
{
	struct th_outbuf *bufs[32];
	unsigned int n, i, total = 0;
	size_t done;
	int rc;

	while ((n = rte_ring_sc_dequeue_burst(full, (void **)bufs, 32, NULL)) > 0) {
		for (i = 0; i < n; i++) {
			struct th_outbuf *b = bufs[i];

			done = 0;
			if (!t->is_broken && fds[b->dest] >= 0) {
				/* What the destination is, asked once: files are not polled. */
				if (t->kind[b->dest] == 0) {
					struct stat st;

					t->kind[b->dest] =
						fstat(fds[b->dest], &st) == 0 && S_ISREG(st.st_mode)
							? OUT_FILE
							: OUT_STREAM;
				}
				rc = write_all(fds[b->dest], t->kind[b->dest] == OUT_FILE, b->data,
					b->len, &done, t->stop);
				if (rc == -ETIMEDOUT)
					fprintf(stderr,
						"capture: stopping: the output's reader took "
						"nothing "
						"for %d ms; the rest is not written\n",
						TH_OUT_STALL_MS);
				else if (rc < 0)
					fprintf(stderr, "capture: writing output: %s; stopping\n",
						strerror(-rc));
				if (rc < 0)
					t->is_broken = true;
				t->bytes[b->dest] += done;
			}
			/* Lines discarded (no destination, or after a failure) or cut by it. */
			if (fds[b->dest] >= 0 && done < b->len)
				t->lines_lost[b->dest] +=
					count_lines(b->data + done, b->len - done);
			b->len = 0;
			rte_ring_sp_enqueue(b->home, b);
		}
		total += n;
	}
	return total;
}
