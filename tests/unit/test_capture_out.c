/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The capture's output writer (app/capture_out.c) as the control lcore runs
 * it: every line reaches a pipe whose reader keeps up, and a stop ends a
 * write to a pipe whose reader stopped reading within TH_OUT_STALL_MS and
 * a little more, however the stop came. The stop flag set with no signal to
 * interrupt the writer is what a SIGINT does when it lands after the writer
 * read the flag and before its write() began: it must not take a second
 * SIGINT to end the run. No EAL: the rings are made in plain memory.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture_out.h"

#define RING_COUNT 64
#define LINE "1700000000.000000000 RPC tcp 10.0.0.1:1000 10.0.0.2:2049 0x00000001\n"

static struct rte_ring *
ring_new(void)
{
	ssize_t size = rte_ring_get_memsize(RING_COUNT);
	struct rte_ring *r;

	assert_true(size > 0);
	r = aligned_alloc(RTE_CACHE_LINE_SIZE, (size_t)size);
	assert_non_null(r);
	assert_int_equal(rte_ring_init(r, "test", RING_COUNT, RING_F_SP_ENQ | RING_F_SC_DEQ), 0);
	return r;
}

/* A buffer of whole lines, @p size bytes at most, on its way to @p full. */
static struct th_outbuf *
buf_new(struct rte_ring *home, struct rte_ring *full, size_t size)
{
	struct th_outbuf *b = malloc(sizeof(*b));

	assert_non_null(b);
	b->home = home;
	b->dest = TH_OUT_RPC;
	b->len = 0;
	while (b->len + sizeof(LINE) - 1 <= size) {
		memcpy(b->data + b->len, LINE, sizeof(LINE) - 1);
		b->len += (uint32_t)(sizeof(LINE) - 1);
	}
	assert_int_equal(rte_ring_sp_enqueue(full, b), 0);
	return b;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct reader {
	int fd;
	size_t size; /* bytes read */
};

static void *
read_all(void *arg)
{
	struct reader *r = arg;
	char buf[65536];
	ssize_t n;

	while ((n = read(r->fd, buf, sizeof(buf))) > 0)
		r->size += (size_t)n;
	return NULL;
}

/* A reader that keeps up gets every byte, before and after a stop. */
static void
test_pipe_read_whole(void **state)
{
	struct rte_ring *full = ring_new(), *home = ring_new();
	volatile sig_atomic_t stop = 0;
	struct th_out_totals t = {.stop = &stop};
	struct reader rd = {0};
	int fds[TH_OUT__DEST_COUNT] = {-1, -1, -1}, p[2];
	struct th_outbuf *a, *b;
	pthread_t th;

	(void)state;
	assert_int_equal(pipe(p), 0);
	rd.fd = p[0];
	assert_int_equal(pthread_create(&th, NULL, read_all, &rd), 0);
	fds[TH_OUT_RPC] = p[1];
	a = buf_new(home, full, TH_OUT_BUF_SIZE);
	assert_int_equal(th_out_drain(full, fds, &t), 1);
	stop = SIGINT;
	b = buf_new(home, full, TH_OUT_BUF_SIZE);
	assert_int_equal(th_out_drain(full, fds, &t), 1);
	close(p[1]);
	pthread_join(th, NULL);
	close(p[0]);
	assert_false(t.is_broken);
	assert_int_equal(t.lines_lost[TH_OUT_RPC], 0);
	assert_int_equal(t.bytes[TH_OUT_RPC],
		2 * (sizeof(LINE) - 1) * (TH_OUT_BUF_SIZE / (sizeof(LINE) - 1)));
	assert_int_equal(rd.size, t.bytes[TH_OUT_RPC]);
	assert_int_equal(rte_ring_count(home), 2);
	free(a);
	free(b);
	free(full);
	free(home);
}

struct stopper {
	volatile sig_atomic_t *stop;
	unsigned int after_ms;
};

/* The flag as on_signal() sets it, from elsewhere: nothing interrupts the writer. */
static void *
stop_later(void *arg)
{
	struct stopper *s = arg;

	usleep(s->after_ms * 1000);
	*s->stop = SIGINT;
	return NULL;
}

static volatile sig_atomic_t alarmed;

static void
on_alarm(int sig)
{
	(void)sig;
	alarmed = 1;
}

/*
 * A pipe that is full and never read: the stop is set 300 ms into the write,
 * with no signal to the writer. The write gives up TH_OUT_STALL_MS later,
 * the lines it did not write counted. The build before sat in write() until
 * the guard's alarm (10 s) interrupted it.
 */
static void
test_stuck_pipe_stop_without_signal(void **state)
{
	struct rte_ring *full = ring_new(), *home = ring_new();
	volatile sig_atomic_t stop = 0;
	struct th_out_totals t = {.stop = &stop};
	struct stopper s = {&stop, 300};
	int fds[TH_OUT__DEST_COUNT] = {-1, -1, -1}, p[2], flags;
	struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART: it ends a write */
	struct th_outbuf *b;
	char junk[4096] = {0};
	double start, took;
	pthread_t th;

	(void)state;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	assert_int_equal(pipe(p), 0);
	/* Fill the pipe, then make it blocking again, as an output is. */
	flags = fcntl(p[1], F_GETFL);
	fcntl(p[1], F_SETFL, flags | O_NONBLOCK);
	while (write(p[1], junk, sizeof(junk)) > 0)
		;
	fcntl(p[1], F_SETFL, flags);
	fds[TH_OUT_RPC] = p[1];
	b = buf_new(home, full, TH_OUT_BUF_SIZE);
	assert_int_equal(pthread_create(&th, NULL, stop_later, &s), 0);
	alarmed = 0;
	alarm(10);
	start = now_s();
	assert_int_equal(th_out_drain(full, fds, &t), 1);
	took = now_s() - start;
	alarm(0);
	pthread_join(th, NULL);
	print_message("stopped 0.3 s in, the write gave up %.2f s in%s\n", took,
		alarmed ? ", after the guard's alarm" : "");
	assert_false(alarmed);
	assert_true(took < 0.3 + TH_OUT_STALL_MS / 1000.0 + 1.0);
	assert_true(t.is_broken);
	assert_int_equal(t.bytes[TH_OUT_RPC], 0);
	assert_int_equal(t.lines_lost[TH_OUT_RPC], TH_OUT_BUF_SIZE / (sizeof(LINE) - 1));
	close(p[0]);
	close(p[1]);
	free(b);
	free(full);
	free(home);
}

/* A regular file: written whole, a stop or not. */
static void
test_file_whole(void **state)
{
	struct rte_ring *full = ring_new(), *home = ring_new();
	volatile sig_atomic_t stop = SIGINT;
	struct th_out_totals t = {.stop = &stop};
	int fds[TH_OUT__DEST_COUNT] = {-1, -1, -1};
	char path[] = "/tmp/th-out-XXXXXX";
	struct th_outbuf *b;

	(void)state;
	fds[TH_OUT_RPC] = mkstemp(path);
	assert_true(fds[TH_OUT_RPC] >= 0);
	unlink(path);
	b = buf_new(home, full, TH_OUT_BUF_SIZE);
	assert_int_equal(th_out_drain(full, fds, &t), 1);
	assert_false(t.is_broken);
	assert_int_equal(
		t.bytes[TH_OUT_RPC], (sizeof(LINE) - 1) * (TH_OUT_BUF_SIZE / (sizeof(LINE) - 1)));
	assert_int_equal(lseek(fds[TH_OUT_RPC], 0, SEEK_END), t.bytes[TH_OUT_RPC]);
	close(fds[TH_OUT_RPC]);
	free(b);
	free(full);
	free(home);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe_read_whole),
		cmocka_unit_test(test_stuck_pipe_stop_without_signal),
		cmocka_unit_test(test_file_whole),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
