/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_flow.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "th_bytes.h"
#include "th_rpc.h"
#include "th_sat.h"

enum half_state {
	HALF_UNSEEN = 0, /* no segment yet in this direction */
	HALF_HUNT,       /* looking for a record start */
	HALF_MARKER,     /* reading a fragment marker */
	HALF_BODY,       /* inside a fragment */
};

/* One direction of a connection. */
struct half {
	uint32_t next_seq;           /* next byte expected */
	uint8_t state;               /* enum half_state */
	uint8_t marker_have;         /* marker bytes gathered */
	bool is_last_frag;           /* the current fragment ends the record */
	bool is_prefix_closed;       /* keep no more bytes: a gap was stepped over, or
					the prefix filled and the record is not kept whole */
	uint8_t marker[4];           /* marker bytes gathered so far */
	uint32_t frag_left;          /* bytes left in the current fragment; while hunting,
					the bytes searched inside segments (find_record()) */
	uint32_t rec_size;           /* record bytes seen so far, all fragments */
	uint32_t kept;               /* bytes of buf in use */
	bool is_multi_frag;          /* the record has had more than one fragment */
	uint8_t tail_fill;           /* bytes of tail seen since the last gap, at most 8 */
	uint8_t held;                /* 1 + the slot of the first segment held for a late one
					(those after it: held_seg.next), or 0 */
	uint8_t tail[8];             /* the last 8 record bytes seen */
	uint8_t whole;               /* 1 + the slot of the whole-record buffer the record
					borrowed (its bytes are there, not in buf), or 0 */
	uint32_t last_after_ns;      /* the last byte seen this long after the first (saturated) */
	uint64_t first_ns;           /* time of the record's first byte */
};

/*
 * What every segment reads (key, times, record state) comes first, 144
 * bytes; the record prefixes, touched only by records that span
 * segments, come after.
 */
struct entry {
	struct th_flow_key key; /* canonical endpoints */
	uint16_t syn_mark[2];   /* each direction's SYN seen, as syn_mark() of the sequence
				   number after it; 0: not seen. In the key's padding */
	uint64_t last_ns;       /* last segment seen, either direction */
	struct half h[2];       /* direction 0: a to b; 1: b to a */
	/* each direction's record's first bytes, when not in place */
	uint8_t buf[2][TH_FLOW_PREFIX];
};
_Static_assert(offsetof(struct entry, buf) == 144, "the comment above says 144");
_Static_assert(sizeof(struct half) == 48, "whole must take a padding byte, not grow a half");

/*
 * A direction's first sequence number, cut to what the key's padding holds: 15 bits and a
 * bit that says it is known. A new connection's random one matches by chance once in 32768.
 */
static inline uint16_t
syn_mark(uint32_t first_seq)
{
	return (uint16_t)(0x8000u | (first_seq & 0x7fffu));
}

/* Direction @p dir's record prefix, @p h being that direction's state. */
static inline uint8_t *
half_buf(struct half *h, int dir)
{
	struct entry *e =
		(struct entry *)(void *)((uint8_t *)(h - dir) - offsetof(struct entry, h));

	return e->buf[dir];
}

/*
 * A segment that came after a hole in its direction's bytes, held for the
 * segment that fills it: a mirror port or a link bundle swaps neighbouring
 * frames, and without waiting the earlier one would arrive "already seen".
 * A hole is given up on (stepped over as a gap) at the next segment of the
 * connection that does not fill it, or after TH_FLOW_HOLD_NS.
 *
 * A mirror port merges the two directions too, and can swap frames across
 * them: a reply can come before the last segment of the call it answers.
 * That reply is in order in its own direction, but its acknowledgement
 * number covers bytes of the other direction the capture has not shown yet;
 * it is held the same way (is_ack_wait) until the other direction reaches
 * them, so that the call comes out whole before it. A reply of several
 * segments can overtake the call whole: each next segment of the reply that
 * acknowledges unseen bytes too waits behind the one before it (a queue per
 * direction, linked by next, of TH_FLOW_HOLD_QUEUE at most: a long reply on a
 * lossy capture must not take every slot), and they go in, in order, as the
 * bytes each acknowledges come. The wait is given up on at the next segment
 * of its own direction with bytes not seen that does not join it (one sent
 * again is trimmed and the wait goes on), at a segment of the other one that
 * leaves a hole, or after TH_FLOW_HOLD_NS: then the bytes were lost.
 */
struct held_seg {
	struct entry *e;                  /* its connection; NULL: the slot is free */
	int dir;                          /* its direction in e */
	uint32_t seq;                     /* sequence number of its first byte */
	uint32_t len;                     /* bytes in data (never cut by the capture) */
	uint32_t ack;                     /* is_ack_wait: the other direction's byte it waits for */
	bool is_ack_wait;                 /* in order in its direction, but it acknowledges bytes
					     of the other one not seen yet (see acks_unseen()) */
	uint8_t next;                     /* 1 + the slot of the segment of its direction held
					     behind it (is_ack_wait only), or 0 */
	uint64_t ts_ns;                   /* when it was captured */
	uint8_t data[TH_FLOW_HOLD_BYTES]; /* its payload */
};

struct th_flow_table {
	struct th_sat sat;           /* struct entry, keyed by th_flow_key */
	struct held_seg *hold;       /* TH_FLOW_HOLD_SLOTS segments waiting for a late one */
	uint32_t n_held;             /* slots in use */
	uint64_t hold_due_ns;        /* when the earliest held segment is given up on */
	uint64_t idle_ns;            /* a flow idle this long is forgotten */
	uint64_t now_ns;             /* the time th_flow_table_age() was called with */
	th_flow_record_cb on_record; /* record consumer */
	th_flow_hunt_cb on_hunt;     /* record-start confirmation, may be NULL */
	th_flow_gap_cb on_gap;       /* lost record boundaries, may be NULL */
	th_flow_whole_cb on_whole;   /* which records to keep whole; NULL: none */
	uint8_t *whole_buf;          /* whole_count buffers of whole_size bytes, or NULL */
	uint32_t whole_size;         /* bytes of one whole-record buffer */
	uint32_t whole_count;        /* buffers at whole_buf */
	uint32_t n_whole_free;       /* slots on the free stack */
	uint8_t whole_free[TH_FLOW_WHOLE_MAX]; /* free slots, the last freed on top */
	void *ctx;                   /* passed to every callback */
	struct th_flow_counters c;   /* counters */
};

static void release(
	struct th_flow_table *t, struct entry *e, int dir, uint64_t now_ns, bool is_filled);
static void release_both(struct th_flow_table *t, struct entry *e);
static void release_slot(struct th_flow_table *t, uint32_t slot);

/*
 * Any fixed order of two addresses gives each connection one key: compare
 * them as two native words, without a library call per segment.
 */
static int
addr_cmp(const struct th_addr *x, const struct th_addr *y)
{
	uint64_t a[2], b[2];

	memcpy(a, x->b, sizeof(a));
	memcpy(b, y->b, sizeof(b));
	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return (a[1] > b[1]) - (a[1] < b[1]);
}

int
th_flow_key_of(const struct th_pkt_meta *m, struct th_flow_key *key)
{
	int c = addr_cmp(&m->src, &m->dst);

	if (c < 0 || (c == 0 && m->sport <= m->dport)) {
		key->a = m->src;
		key->b = m->dst;
		key->pa = m->sport;
		key->pb = m->dport;
		return 0;
	}
	key->a = m->dst;
	key->b = m->src;
	key->pa = m->dport;
	key->pb = m->sport;
	return 1;
}

struct th_flow_table *
th_flow_table_create(uint32_t flows, uint64_t idle_ns, th_flow_record_cb on_record,
	th_flow_hunt_cb on_hunt, th_flow_gap_cb on_gap, void *ctx)
{
	struct th_flow_table *t;
	int rc;

	if (on_record == NULL) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = th_sat_init(&t->sat, flows, sizeof(struct entry));
	if (rc != 0) {
		free(t);
		errno = -rc;
		return NULL;
	}
	t->hold = malloc(TH_FLOW_HOLD_SLOTS * sizeof(*t->hold));
	if (t->hold == NULL) {
		th_sat_fini(&t->sat);
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	memset(t->hold, 0, TH_FLOW_HOLD_SLOTS * sizeof(*t->hold)); /* committed now, as the table */
	t->idle_ns = idle_ns;
	t->on_record = on_record;
	t->on_hunt = on_hunt;
	t->on_gap = on_gap;
	t->ctx = ctx;
	return t;
}

void
th_flow_table_free(struct th_flow_table *t)
{
	if (t == NULL)
		return;
	th_sat_fini(&t->sat);
	free(t->hold);
	if (t->whole_buf != NULL)
		munmap(t->whole_buf, (size_t)t->whole_count * t->whole_size);
	free(t);
}

int
th_flow_table_set_whole(
	struct th_flow_table *t, uint32_t count, uint32_t size, th_flow_whole_cb on_whole)
{
	void *buf;

	if (count == 0 || count > TH_FLOW_WHOLE_MAX || size <= TH_FLOW_PREFIX || on_whole == NULL ||
		t->whole_buf != NULL)
		return -EINVAL;
	/*
	 * Mapped apart from the heap and committed now, as the table: a large
	 * malloc'd block freed would move malloc's mmap threshold and change which
	 * pages the other tables of the next pipeline reuse (a benchmark creating
	 * a pipeline per run took hundreds of page faults in its timed loop).
	 */
	buf = mmap(NULL, (size_t)count * size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		return -ENOMEM;
	t->whole_buf = buf;
	t->whole_size = size;
	t->whole_count = count;
	/* Slot 0 on top: a quiet link keeps reusing one buffer, warm in the caches. */
	for (uint32_t i = 0; i < count; i++)
		t->whole_free[i] = (uint8_t)(count - 1 - i);
	t->n_whole_free = count;
	t->on_whole = on_whole;
	return 0;
}

uint32_t
th_flow_table_count(const struct th_flow_table *t)
{
	return t->sat.used;
}

size_t
th_flow_table_memory(const struct th_flow_table *t)
{
	return sizeof(*t) + th_sat_memory(&t->sat) + TH_FLOW_HOLD_SLOTS * sizeof(*t->hold) +
	       (size_t)t->whole_count * t->whole_size;
}

const struct th_flow_counters *
th_flow_table_counters(const struct th_flow_table *t)
{
	return &t->c;
}

/* The record's kept bytes: its borrowed whole-record buffer, or its prefix. */
static inline uint8_t *
kept_buf(struct th_flow_table *t, struct half *h, int dir)
{
	if (h->whole != 0)
		return t->whole_buf + (size_t)(h->whole - 1) * t->whole_size;
	return half_buf(h, dir);
}

/* Whole-record buffer @p whole (1 + its slot; 0: none) is free again. */
static inline void
free_whole(struct th_flow_table *t, uint8_t whole)
{
	if (whole != 0)
		t->whole_free[t->n_whole_free++] = (uint8_t)(whole - 1);
}

/* The record of @p h gives its whole-record buffer, if it borrowed one, back. */
static inline void
give_back_whole(struct th_flow_table *t, struct half *h)
{
	free_whole(t, h->whole);
	h->whole = 0;
}

/* The record state of @p h, cleared for the next record (no buffer borrowed). */
static inline void
half_clear_record(struct half *h)
{
	h->marker_have = 0;
	h->is_last_frag = false;
	h->is_prefix_closed = false;
	h->is_multi_frag = false;
	h->frag_left = 0;
	h->rec_size = 0;
	h->kept = 0;
	h->tail_fill = 0;
	h->last_after_ns = 0;
}

/* The record of @p h ends (lost, given up): its buffer goes back, its state is cleared. */
static void
half_reset_record(struct th_flow_table *t, struct half *h)
{
	give_back_whole(t, h);
	half_clear_record(h);
}

/* Keep the last 8 bytes of the record: results that end a record (READDIR eof) live there. */
static inline void
keep_tail(struct half *h, const uint8_t *p, uint32_t n)
{
	if (n >= 8) {
		memcpy(h->tail, p + n - 8, 8);
		h->tail_fill = 8;
		return;
	}
	memmove(h->tail, h->tail + n, 8 - n);
	memcpy(h->tail + 8 - n, p, n);
	h->tail_fill = (uint8_t)(h->tail_fill + n > 8 ? 8 : h->tail_fill + n);
}

/* Halves of a flow (0-2) in the middle of a record: bytes or marker bytes gathered. */
static inline uint32_t
records_open(const struct entry *e)
{
	uint32_t n = 0;

	for (int d = 0; d < 2; d++)
		n += e->h[d].rec_size > 0 || e->h[d].marker_have > 0;
	return n;
}

/* A new flow: a free way of its set, or the set's least recently seen flow. */
static struct entry *
flow_new(struct th_flow_table *t, const struct th_flow_key *key, uint32_t hash, uint64_t now_ns)
{
	struct entry *e;
	bool evicted;
	int d;

	e = th_sat_claim(&t->sat, hash, offsetof(struct entry, last_ns), &evicted);
	if (evicted) {
		t->c.flows_evicted++;
		release_both(t, e);
		t->c.records_lost_gap += records_open(e);
	}
	e->key = *key;
	e->last_ns = now_ns;
	for (d = 0; d < 2; d++) {
		e->syn_mark[d] = 0;
		e->h[d].state = HALF_UNSEEN;
		e->h[d].held = 0;
		half_reset_record(t, &e->h[d]);
	}
	t->c.flows_created++;
	return e;
}

static bool
is_idle(void *ctx, void *entry)
{
	struct th_flow_table *t = ctx;
	struct entry *e = entry;

	if (t->now_ns < e->last_ns || t->now_ns - e->last_ns < t->idle_ns)
		return false;
	release_both(t, e);
	t->c.records_lost_idle += records_open(e);
	for (int d = 0; d < 2; d++)
		give_back_whole(t, &e->h[d]); /* a claim of this way finds none borrowed */
	return true;
}

static bool
count_unfinished(void *ctx, void *entry)
{
	struct th_flow_table *t = ctx;

	t->c.records_unfinished += records_open(entry);
	return false;
}

/*
 * Holes left open TH_FLOW_HOLD_NS were losses: their held segments go in over
 * them. Looked at when a segment passes hold_due_ns, and by the table's ageing.
 */
static void
release_overdue(struct th_flow_table *t, uint64_t now_ns)
{
	uint64_t due = UINT64_MAX;

	for (uint32_t i = 0; i < TH_FLOW_HOLD_SLOTS && t->n_held > 0; i++) {
		const struct held_seg *s = &t->hold[i];

		if (s->e == NULL)
			continue;
		if ((int64_t)(now_ns - s->ts_ns) >= (int64_t)TH_FLOW_HOLD_NS)
			release_slot(t, i);
		else if (s->ts_ns + TH_FLOW_HOLD_NS < due)
			due = s->ts_ns + TH_FLOW_HOLD_NS;
	}
	t->hold_due_ns = due;
}

void
th_flow_table_finish(struct th_flow_table *t)
{
	for (uint32_t i = 0; i < TH_FLOW_HOLD_SLOTS && t->n_held > 0; i++)
		if (t->hold[i].e != NULL)
			release_slot(t, i);
	th_sat_sweep_all(&t->sat, count_unfinished, t);
}

uint32_t
th_flow_table_age(struct th_flow_table *t, uint64_t now_ns)
{
	uint32_t aged;

	if (t->n_held > 0)
		release_overdue(t, now_ns);
	/* A slice per call keeps the housekeeping pause short and bounded. */
	t->now_ns = now_ns;
	aged = th_sat_sweep(&t->sat, 256, is_idle, t);
	t->c.flows_aged += aged;
	return aged;
}

static bool
looks_like_record(struct th_flow_table *t, const struct th_flow_key *key, int dir, const uint8_t *p,
	uint32_t len)
{
	uint32_t marker, flen, n;

	if (len < 4 + 12)
		return false;
	marker = th_be_get32(p);
	flen = marker & 0x7fffffffu;
	if (flen < 12 || flen > TH_FLOW_FRAG_MAX)
		return false;
	n = len - 4 < flen ? len - 4 : flen;
	if (t->on_hunt != NULL)
		return t->on_hunt(t->ctx, key, dir, p + 4, n);
	return th_rpc_looks_like_call(p + 4, n) || th_rpc_looks_like_reply(p + 4, n);
}

/*
 * Bytes of a hunting direction searched for a record start inside its segments: more than
 * the longest record (Linux sends READs and WRITEs of up to 1 MiB), so that a hunt that
 * starts in a stream of the longest records finds the next one wherever it begins.
 */
#define HUNT_SEARCH_MAX ((2u << 20) + 4096)

/* Whether @p p (@p len bytes) starts with a marker and a call or reply header, cheaply. */
static inline bool
may_be_record(const uint8_t *p, uint32_t len)
{
	uint32_t flen = th_be_get32(p) & 0x7fffffffu;

	return len >= 4 + 12 && flen >= 12 && flen <= TH_FLOW_FRAG_MAX &&
	       th_be_get32(p + 8) <= TH_RPC_REPLY && th_be_get32(p + 12) <= 2;
}

/*
 * Where a record starts in the @p len bytes at @p p of hunting direction @p h: at the first
 * byte (a segment that begins one), else at the first later byte that looks like it, or
 * @p len. Records do not start where segments do: TCP cuts a stream of pipelined calls (a
 * bulk write of 1 MiB WRITEs) at its MSS, so a capture begun inside such a stream, or one
 * that lost bytes of it, would otherwise hunt until the stream paused. A start inside the
 * segment whose first fragment ends inside it too must be followed by another marker there;
 * the bytes searched inside segments are bounded (HUNT_SEARCH_MAX a hunt), so that a
 * direction that never finds one (the replies of calls the capture never saw) costs no more
 * than a look at each segment's first bytes after that.
 */
static uint32_t
find_record(struct th_flow_table *t, const struct th_flow_key *key, int dir, struct half *h,
	const uint8_t *p, uint32_t len)
{
	uint32_t end, o;

	if (looks_like_record(t, key, dir, p, len))
		return 0;
	if (len < 1 + 4 + 12 || h->frag_left >= HUNT_SEARCH_MAX)
		return len;
	end = len - (4 + 12);
	if (end > HUNT_SEARCH_MAX - h->frag_left)
		end = HUNT_SEARCH_MAX - h->frag_left;
	for (o = 1; o <= end; o++) {
		uint32_t flen, next;

		if (!may_be_record(p + o, len - o))
			continue;
		flen = th_be_get32(p + o) & 0x7fffffffu;
		next = o + 4 + flen;
		if ((th_be_get32(p + o) >> 31) != 0 && next + 4 + 12 <= len &&
			!may_be_record(p + next, len - next))
			continue;
		if (looks_like_record(t, key, dir, p + o, len - o))
			break;
	}
	h->frag_left += o <= end ? o : end;
	return o <= end ? o : len;
}

static void skip_unseen(struct th_flow_table *t, const struct th_flow_key *key, int dir,
	struct half *h, uint32_t gap, uint64_t now_ns);

/*
 * A reply (@p reply, @p size bytes, direction @p dir) to the call the other
 * direction is still reading proves that the call's last bytes were sent: the
 * capture lost them. Step over them as a gap now, so that the call comes out
 * (cut) before its reply and the two match, rather than a reply without call
 * now and a call without reply at the client's next call. The call ends, as
 * far as the capture can tell, at the last of its bytes it saw.
 */
static void
finish_answered_call(struct th_flow_table *t, const struct th_flow_key *key, int dir,
	struct half *h, const uint8_t *reply, uint32_t size)
{
	struct half *o = h + (dir == 0 ? 1 : -1);
	const uint8_t *call;

	if (size < 8 || th_be_get32(reply + 4) != 1 || o->state != HALF_BODY || !o->is_last_frag ||
		o->frag_left == 0 || o->kept < 8)
		return;
	call = kept_buf(t, o, dir ^ 1);
	if (th_be_get32(call + 4) != 0 || memcmp(call, reply, 4) != 0)
		return;
	o->next_seq += o->frag_left;
	skip_unseen(t, key, dir ^ 1, o, o->frag_left, o->first_ns + o->last_after_ns);
}

/*
 * Hand the record of @p h over: its @p size bytes lie at @p in_place in the
 * segment, or (NULL) are the kept ones.
 */
static void
deliver(struct th_flow_table *t, const struct th_flow_key *key, int dir, struct half *h,
	const uint8_t *in_place, uint32_t size, uint64_t now_ns)
{
	uint8_t tail[8];
	struct th_flow_record rec;
	uint8_t whole = h->whole;
	/* A borrowed buffer's record was kept whole unless a cut (size, gap) closed it. */
	bool is_whole = whole != 0 && !h->is_prefix_closed;
	const uint8_t *data = in_place != NULL ? in_place : kept_buf(t, h, dir);

	finish_answered_call(t, key, dir, h, data, size);
	rec = (struct th_flow_record){
		.data = data,
		.size = size,
		.wire_size = h->rec_size,
		.tail = NULL,
		.first_ns = h->first_ns,
		/* A held segment goes in at its own time, which may precede a record that a
		 * later segment began: a record never ends before it starts. */
		.last_ns = now_ns > h->first_ns ? now_ns : h->first_ns,
	};

	if (in_place != NULL) {
		/* In place: the record is whole in data. */
		rec.tail = size >= 8 ? data + size - 8 : NULL;
	} else if (h->tail_fill == 8) {
		memcpy(tail, h->tail, 8); /* the reset below clears h */
		rec.tail = tail;
	}
	t->c.records++;
	if (h->is_multi_frag)
		t->c.records_multi_frag++;
	/* The borrowed buffer holds data until the consumer is done with it. */
	h->whole = 0;
	half_clear_record(h);
	t->on_record(t->ctx, key, dir, &rec);
	if (is_whole)
		t->c.whole_records++;
	free_whole(t, whole);
}

/* Whether the consumer wants the record whose prefix (full) @p h holds kept whole. */
static bool
wants_whole(struct th_flow_table *t, const struct th_flow_key *key, int dir, struct half *h)
{
	return t->on_whole != NULL && t->on_whole(t->ctx, key, dir, half_buf(h, dir), h->kept);
}

/*
 * Whether the @p n bytes of the record of @p h that come next (seen or lost) take it past
 * its prefix, when a gap closed that prefix before it filled (the only way a prefix closes
 * short: the other closes come with it full).
 */
static inline bool
passes_short_prefix(const struct half *h, uint32_t n)
{
	return h->is_prefix_closed && h->kept < TH_FLOW_PREFIX && h->rec_size <= TH_FLOW_PREFIX &&
	       n > TH_FLOW_PREFIX - h->rec_size;
}

/*
 * The record of @p h, its prefix cut short by a gap, passes the prefix's end: the
 * point where it would have been asked to be kept whole. Ask now, with the bytes
 * before the gap, so that a gap in a listing's first bytes counts as its cut, as a
 * later gap does; a record that ends within its prefix is never asked, as before.
 */
static void
count_short_prefix_cut(
	struct th_flow_table *t, const struct th_flow_key *key, int dir, struct half *h)
{
	if (wants_whole(t, key, dir, h))
		t->c.whole_cut_gap++;
}

/*
 * Bytes of a record past its full prefix: keep them in a whole-record buffer
 * when the consumer asks for it (it is asked once a record, here) and one is
 * free; otherwise the prefix is closed. Returns the bytes kept.
 */
static uint32_t
keep_whole(struct th_flow_table *t, const struct th_flow_key *key, int dir, struct half *h,
	const uint8_t *p, uint32_t n)
{
	uint32_t room;

	if (h->whole == 0) {
		if (!wants_whole(t, key, dir, h)) {
			h->is_prefix_closed = true;
			return 0;
		}
		if (t->n_whole_free == 0) {
			t->c.whole_cut_busy++;
			h->is_prefix_closed = true;
			return 0;
		}
		h->whole = (uint8_t)(t->whole_free[--t->n_whole_free] + 1);
		memcpy(kept_buf(t, h, dir), half_buf(h, dir), h->kept);
	}
	room = t->whole_size - h->kept;
	if (n > room) {
		t->c.whole_cut_size++;
		h->is_prefix_closed = true;
		n = room;
	}
	memcpy(kept_buf(t, h, dir) + h->kept, p, n);
	h->kept += n;
	return n;
}

/* Walk the bytes of one in-order segment through the record-marking state. */
static void
consume(struct th_flow_table *t, const struct th_flow_key *key, int dir, struct half *h,
	const uint8_t *p, uint32_t len, uint64_t now_ns)
{
	while (len > 0) {
		switch (h->state) {
		case HALF_HUNT: {
			/* A segment's first byte, then (bounded) the bytes inside it. */
			uint32_t at = find_record(t, key, dir, h, p, len);

			t->c.hunt_bytes += at;
			if (at == len) {
				t->c.hunt_segments++;
				return;
			}
			p += at;
			len -= at;
			t->c.resyncs++;
			half_reset_record(t, h);
			h->state = HALF_MARKER;
			break;
		}

		case HALF_MARKER: {
			uint32_t take = 4u - h->marker_have, marker, flen;

			if (take > len)
				take = len;
			if (h->marker_have == 0 && h->rec_size == 0)
				h->first_ns = now_ns;
			memcpy(h->marker + h->marker_have, p, take);
			h->marker_have += (uint8_t)take;
			p += take;
			len -= take;
			if (h->marker_have < 4)
				return;
			h->marker_have = 0;
			marker = th_be_get32(h->marker);
			flen = marker & 0x7fffffffu;
			if (flen > TH_FLOW_FRAG_MAX ||
				(uint64_t)h->rec_size + flen > TH_FLOW_FRAG_MAX) {
				t->c.bad_markers++;
				half_reset_record(t, h);
				h->state = HALF_HUNT; /* the rest of the segment may hold the next
							 record */
				break;
			}
			if (h->rec_size > 0)
				h->is_multi_frag = true;
			h->is_last_frag = (marker >> 31) != 0;
			h->frag_left = flen;
			h->state = HALF_BODY;
			if (flen == 0 && h->is_last_frag) {
				h->state = HALF_MARKER;
				deliver(t, key, dir, h, NULL, h->kept, now_ns);
			} else if (flen == 0) {
				h->state = HALF_MARKER;
			}
			break;
		}

		case HALF_BODY: {
			uint32_t n = len < h->frag_left ? len : h->frag_left;
			uint32_t copy = 0;

			if (h->rec_size == 0 && h->is_last_frag && n == h->frag_left) {
				/* The whole record is in this segment: decode it in place. */
				h->rec_size = n;
				h->state = HALF_MARKER;
				t->c.records_in_place++;
				deliver(t, key, dir, h, p, n, now_ns);
				p += n;
				len -= n;
				break;
			}
			if (!h->is_prefix_closed && h->kept < TH_FLOW_PREFIX) {
				copy = TH_FLOW_PREFIX - h->kept;
				if (copy > n)
					copy = n;
				memcpy(half_buf(h, dir) + h->kept, p, copy);
				h->kept += copy;
			}
			if (copy < n && !h->is_prefix_closed)
				copy += keep_whole(t, key, dir, h, p + copy, n - copy);
			else if (passes_short_prefix(h, n))
				count_short_prefix_cut(t, key, dir, h);
			t->c.bytes_skipped += n - copy;
			keep_tail(h, p, n);
			/* Only later: a held segment goes in at its own, earlier time. */
			if (now_ns > h->first_ns + h->last_after_ns)
				h->last_after_ns = now_ns - h->first_ns < UINT32_MAX
							   ? (uint32_t)(now_ns - h->first_ns)
							   : UINT32_MAX;
			h->frag_left -= n;
			h->rec_size += n;
			p += n;
			len -= n;
			if (h->frag_left == 0) {
				h->state = HALF_MARKER;
				if (h->is_last_frag)
					deliver(t, key, dir, h, NULL, h->kept, now_ns);
			}
			break;
		}

		default:
			return;
		}
	}
}

/*
 * Bytes are missing before this segment. Step over them when only record data was lost;
 * returns true when they took a record boundary, or came while hunting (gaps_lost).
 */
static bool
pass_gap(struct th_flow_table *t, const struct th_flow_key *key, int dir, struct half *h,
	uint32_t gap)
{
	if (h->state == HALF_HUNT) {
		t->c.gaps_lost++; /* no boundary left to lose, but bytes were missed */
		return true;
	}
	if (h->state == HALF_BODY && gap <= h->frag_left) {
		t->c.gaps_payload++;
		h->tail_fill = 0;
		if (!h->is_prefix_closed && h->kept == h->rec_size) {
			/*
			 * Every byte so far is kept: those after the gap must not join
			 * them. A record kept whole (or that would have been, its prefix
			 * just full) is cut here; one whose prefix is not full yet is
			 * asked about when its bytes pass the prefix (below, or in
			 * consume()).
			 */
			if (h->whole != 0 ||
				(h->kept == TH_FLOW_PREFIX && wants_whole(t, key, dir, h)))
				t->c.whole_cut_gap++;
			h->is_prefix_closed = true;
		}
		if (passes_short_prefix(h, gap))
			count_short_prefix_cut(t, key, dir, h);
		h->frag_left -= gap;
		h->rec_size += gap;
		if (h->frag_left == 0)
			h->state = HALF_MARKER;
		/*
		 * A last fragment that ended inside the gap cannot be delivered
		 * here: its end time is unknown. It goes out with the next byte.
		 */
		return false;
	}
	t->c.gaps_lost++;
	if (h->rec_size > 0 || h->marker_have > 0)
		t->c.records_lost_gap++;
	half_reset_record(t, h);
	h->state = HALF_HUNT;
	return true;
}

/*
 * Bytes were missed: step over them if they were record data; a record they ended completes.
 * A boundary they took is reported.
 */
static void
skip_unseen(struct th_flow_table *t, const struct th_flow_key *key, int dir, struct half *h,
	uint32_t gap, uint64_t now_ns)
{
	if (pass_gap(t, key, dir, h, gap) && t->on_gap != NULL)
		t->on_gap(t->ctx, key, dir, now_ns);
	if (h->state == HALF_MARKER && h->is_last_frag && h->frag_left == 0 && h->rec_size > 0)
		deliver(t, key, dir, h, NULL, h->kept, now_ns);
}

/*
 * Bytes [seq, seq + len) of direction @p dir, seq + wire_len being where the
 * segment ended on the wire (the rest cut by the capture), in the stream.
 */
static inline __attribute__((always_inline)) void
segment_in(struct th_flow_table *t, const struct th_flow_key *key, int dir, struct half *h,
	uint32_t seq, const uint8_t *payload, uint32_t len, uint32_t wire_len, uint64_t now_ns)
{
	uint32_t end = seq + wire_len;
	int32_t diff;

	if ((int32_t)(end - h->next_seq) <= 0) {
		t->c.segments_retrans++;
		t->c.bytes_retrans += len;
		return;
	}
	diff = (int32_t)(seq - h->next_seq);
	if (diff < 0) {
		uint32_t old = (uint32_t) - (int64_t)diff;

		if (old > len)
			old = len;
		t->c.bytes_retrans += old;
		payload += old;
		len -= old;
		seq += old;
	} else if (diff > 0) {
		skip_unseen(t, key, dir, h, (uint32_t)diff, now_ns);
	}
	consume(t, key, dir, h, payload, len, now_ns);
	h->next_seq = seq + len;
	/*
	 * The cut tail is a gap we know about now, at this segment's time: a
	 * record ending in it ends here, not at the next segment we see.
	 */
	if ((int32_t)(end - h->next_seq) > 0)
		skip_unseen(t, key, dir, h, end - h->next_seq, now_ns);
	h->next_seq = end;
}

/*
 * Hold a segment that came after a hole, or (@p is_ack_wait) one that acknowledges
 * bytes of the other direction up to @p ack not seen yet; false when every slot is taken.
 */
static bool
hold(struct th_flow_table *t, struct entry *e, int dir, uint32_t seq, const uint8_t *payload,
	uint32_t len, uint64_t now_ns, bool is_ack_wait, uint32_t ack)
{
	struct held_seg *s = NULL;
	uint8_t *link = &e->h[dir].held;

	if (t->n_held == TH_FLOW_HOLD_SLOTS)
		return false;
	while (*link != 0) /* behind those of its direction held already */
		link = &t->hold[*link - 1].next;
	for (uint32_t i = 0; i < TH_FLOW_HOLD_SLOTS; i++) {
		if (t->hold[i].e == NULL) {
			s = &t->hold[i];
			*link = (uint8_t)(i + 1);
			break;
		}
	}
	s->e = e;
	s->dir = dir;
	s->seq = seq;
	s->len = len;
	s->ack = ack;
	s->is_ack_wait = is_ack_wait;
	s->next = 0;
	s->ts_ns = now_ns;
	memcpy(s->data, payload, len);
	if (t->n_held++ == 0 || now_ns + TH_FLOW_HOLD_NS < t->hold_due_ns)
		t->hold_due_ns = now_ns + TH_FLOW_HOLD_NS;
	if (is_ack_wait)
		t->c.segments_held_ack++;
	else
		t->c.segments_held++;
	return true;
}

/*
 * Let direction @p dir's (first) held segment in: after what filled its hole (@p is_filled: at
 * @p now_ns, that segment's time, when later, since its bytes were complete then), or over
 * the hole as a gap, at its own time. A segment that waited for the other direction's
 * bytes keeps its own time either way: its direction had no hole. On a port that stamps
 * frames on arrival a reply then reads as stamped before its call's end (a signed latency
 * in the log, untimed and counted in --srt) rather than a latency of 0 nobody saw.
 */
static void
release(struct th_flow_table *t, struct entry *e, int dir, uint64_t now_ns, bool is_filled)
{
	struct half *h = &e->h[dir];
	struct held_seg *s = &t->hold[h->held - 1];
	uint64_t ts = s->ts_ns;

	h->held = s->next;
	if (is_filled && s->is_ack_wait) {
		t->c.segments_ack_reordered++;
	} else if (is_filled) {
		t->c.segments_reordered++;
		ts = now_ns > ts ? now_ns : ts;
	}
	segment_in(t, &e->key, dir, h, s->seq, s->data, s->len, s->len, ts);
	s->e = NULL;
	t->n_held--;
}

/* Every held segment of direction @p dir in, in order: what they wait for is not coming. */
static void
release_all(struct th_flow_table *t, struct entry *e, int dir, uint64_t now_ns)
{
	while (e->h[dir].held)
		release(t, e, dir, now_ns, false);
}

/* Every held segment of entry @p e in (before it is aged, evicted or counted). */
static void
release_both(struct th_flow_table *t, struct entry *e)
{
	for (int d = 0; d < 2; d++)
		release_all(t, e, d, 0);
}

/*
 * The segment held in @p slot in, given up on, with every one of its direction: those
 * held with it wait for the same late bytes (or come after the hole it waits for).
 */
static void
release_slot(struct th_flow_table *t, uint32_t slot)
{
	release_all(t, t->hold[slot].e, t->hold[slot].dir, 0);
}

/*
 * Let in direction @p dir's segments that wait for bytes of the other direction they
 * acknowledge (is_ack_wait), in order, as far as that direction's bytes (or FIN) reached.
 */
static void
release_acked(struct th_flow_table *t, struct entry *e, int dir, uint64_t now_ns)
{
	const struct half *h = &e->h[dir];

	while (h->held && t->hold[h->held - 1].is_ack_wait &&
		(int32_t)(e->h[dir ^ 1].next_seq - t->hold[h->held - 1].ack) >= 0)
		release(t, e, dir, now_ns, true);
}

/*
 * Where the last segment held in direction @p h ends (the sequence number after it), and
 * (@p count) how many are held.
 */
static uint32_t
held_end(const struct th_flow_table *t, const struct half *h, uint32_t *count)
{
	const struct held_seg *s = &t->hold[h->held - 1];

	for (*count = 1; s->next != 0; ++*count)
		s = &t->hold[s->next - 1];
	return s->seq + s->len;
}

/*
 * Whether segment @p m (@p len bytes of @p wire_len from @p seq), in order in its direction
 * @p h, acknowledges bytes of the other direction @p o that the capture has not shown yet,
 * and may wait for them: it was sent after they arrived. Not while @p o waits itself (each
 * would wait for the other), nor for a FIN or RST (nothing of theirs is held), nor when
 * every byte of it was seen (a retransmission, trimmed whenever it goes in).
 */
static inline bool
acks_unseen(const struct th_pkt_meta *m, const struct half *h, const struct half *o, uint32_t seq,
	uint32_t len, uint32_t wire_len)
{
	/* The acknowledgement first: it is what rules out almost every segment. */
	return (int32_t)(m->tcp_ack - o->next_seq) > 0 &&
	       (m->tcp_flags & (TH_TCP_ACK | TH_TCP_FIN | TH_TCP_RST)) == TH_TCP_ACK &&
	       o->state != HALF_UNSEEN && !o->held && len == wire_len &&
	       len <= TH_FLOW_HOLD_BYTES && (int32_t)(seq + wire_len - h->next_seq) > 0;
}

/*
 * One segment of direction @p dir of entry @p e, with a segment of its own direction held
 * or not: put in, held, or let a held one in.
 */
static void
take(struct th_flow_table *t, struct entry *e, int dir, const struct th_pkt_meta *m, uint32_t seq,
	const uint8_t *payload, uint32_t len, uint32_t wire_len, uint64_t now_ns)
{
	const struct th_flow_key *key = &e->key;
	struct half *h = &e->h[dir], *o = &e->h[dir ^ 1];
	bool may_wait_ack = true;

	if (h->held) {
		const struct held_seg *s = &t->hold[h->held - 1];
		uint32_t count, end = held_end(t, h, &count);

		if ((int32_t)(seq - s->seq) >= 0 && (int32_t)(seq + wire_len - end) <= 0) {
			/* A copy of held bytes (a mirror port sends some twice): keep
			 * waiting. */
			t->c.segments_retrans++;
			t->c.bytes_retrans += len;
			return;
		}
		if (s->is_ack_wait && (int32_t)(seq + wire_len - h->next_seq) <= 0) {
			/* Bytes before the held segment, every one seen: a retransmission, not
			 * this direction moving on. Counted, and the wait goes on. */
			segment_in(t, key, dir, h, seq, payload, len, wire_len, now_ns);
			return;
		}
		if (s->is_ack_wait && seq == end && count < TH_FLOW_HOLD_QUEUE &&
			acks_unseen(m, h, o, seq, len, wire_len) &&
			hold(t, e, dir, seq, payload, len, now_ns, true, m->tcp_ack))
			return; /* the reply's next segment, also before bytes it acknowledges */
		if (s->is_ack_wait) {
			/*
			 * This direction moved on before the other's bytes came: they were
			 * lost. The held segments go in first (they are in order), and this
			 * one does not wait for the same bytes again.
			 */
			release_all(t, e, dir, now_ns);
			may_wait_ack = false;
		} else if ((int32_t)(seq - h->next_seq) > 0) {
			/* A second segment past the hole: lost, not late. Both in order. */
			if ((int32_t)(seq - s->seq) < 0) {
				segment_in(t, key, dir, h, seq, payload, len, wire_len, now_ns);
				release(t, e, dir, now_ns, false);
			} else {
				release(t, e, dir, now_ns, false);
				segment_in(t, key, dir, h, seq, payload, len, wire_len, now_ns);
			}
			return;
		} else {
			segment_in(t, key, dir, h, seq, payload, len, wire_len, now_ns);
			if ((int32_t)(s->seq - h->next_seq) <= 0)
				release(t, e, dir, now_ns, true); /* the hole is filled */
			return;
		}
	}
	if ((int32_t)(seq - h->next_seq) > 0 && len == wire_len && len <= TH_FLOW_HOLD_BYTES &&
		!(m->tcp_flags & (TH_TCP_FIN | TH_TCP_RST)) &&
		hold(t, e, dir, seq, payload, len, now_ns, false, 0))
		return;
	if (acks_unseen(m, h, o, seq, len, wire_len) && may_wait_ack &&
		(int32_t)(seq - h->next_seq) <= 0 &&
		hold(t, e, dir, seq, payload, len, now_ns, true, m->tcp_ack))
		return;
	segment_in(t, key, dir, h, seq, payload, len, wire_len, now_ns);
}

/*
 * A FIN ending direction @p dir at @p end takes a sequence number, and the other direction
 * acknowledges it: once every byte before it is in, count it, and let in a segment of the
 * other direction that waited for it.
 */
static void
fin_in(struct th_flow_table *t, struct entry *e, int dir, uint32_t end, uint64_t now_ns)
{
	struct half *h = &e->h[dir];

	if (h->state == HALF_UNSEEN || h->held || h->next_seq != end)
		return;
	h->next_seq++;
	release_acked(t, e, dir ^ 1, now_ns); /* the FIN it acknowledged came */
}

/*
 * Whether a SYN (or SYN-ACK) of direction @p dir at @p seq is a copy of the one that began
 * the direction's bytes, sent again or twice by a mirror port after data went: the same
 * first sequence number, not ahead of the bytes seen since. Taken for a new connection it
 * would throw those bytes' state away, and the next ones would read as after a hole. A new
 * connection on the same ports picks a new first sequence number; one whose SYN the capture
 * did not show is taken for new, as before.
 */
static inline bool
is_syn_copy(const struct entry *e, int dir, uint32_t seq)
{
	return e->syn_mark[dir] == syn_mark(seq + 1) &&
	       (int32_t)(seq + 1 - e->h[dir].next_seq) <= 0;
}

bool
th_flow_tcp_input(struct th_flow_table *t, const struct th_pkt_meta *m, const uint8_t *payload,
	uint32_t len, uint32_t wire_len, uint64_t now_ns, bool is_rpc_port)
{
	struct th_flow_key key;
	struct entry *e;
	struct half *h, *o;
	uint32_t seq = m->tcp_seq, hash;
	int dir;

	/* The capture's clock gives up on holes as it passes them, whenever ageing runs. */
	if (t->n_held > 0 && (int64_t)(now_ns - t->hold_due_ns) >= 0)
		release_overdue(t, now_ns);
	dir = th_flow_key_of(m, &key);
	hash = th_pkt_flow_hash(m);
	e = th_sat_find(&t->sat, hash, &key, sizeof(key));
	if (e == NULL) {
		if (!is_rpc_port && !looks_like_record(t, &key, dir, payload, len))
			return false;
		e = flow_new(t, &key, hash, now_ns);
	}
	e->last_ns = now_ns;
	h = &e->h[dir];

	if (m->tcp_flags & TH_TCP_SYN) {
		if (is_syn_copy(e, dir, seq)) {
			t->c.syn_copies++;
			return true;
		}
		/*
		 * A new connection on these ports: the old one's holes stay holes, and what
		 * its segments waited for in either direction is not coming (the other
		 * direction's bytes are the old connection's until its own SYN).
		 */
		release_both(t, e);
		half_reset_record(t, h);
		h->state = HALF_MARKER;
		h->next_seq = seq + 1;
		e->syn_mark[dir] = syn_mark(seq + 1);
		seq++;
	}
	if (wire_len < len)
		wire_len = len;
	if (wire_len == 0) {
		if (m->tcp_flags & TH_TCP_FIN)
			fin_in(t, e, dir, seq, now_ns);
		return true;
	}
	if (h->state == HALF_UNSEEN) {
		h->state = HALF_HUNT;
		h->next_seq = seq;
	}
	o = &e->h[dir ^ 1];
	/*
	 * Nearly every segment: nothing held either way, in order, acknowledging nothing unseen
	 * (or the other direction never seen: a tap of one direction), no FIN.
	 */
	if (!h->held && !o->held && (int32_t)(seq - h->next_seq) <= 0 &&
		((int32_t)(m->tcp_ack - o->next_seq) <= 0 || o->state == HALF_UNSEEN) &&
		!(m->tcp_flags & TH_TCP_FIN)) {
		segment_in(t, &key, dir, h, seq, payload, len, wire_len, now_ns);
		return true;
	}
	if (o->held) {
		const struct held_seg *w = &t->hold[o->held - 1];

		/*
		 * The other direction moved on: what its held segment waits for was lost,
		 * unless it waits for bytes of this direction and these come in order.
		 */
		if (!w->is_ack_wait || h->held || (int32_t)(seq - h->next_seq) > 0)
			release_all(t, e, dir ^ 1, now_ns);
	}
	take(t, e, dir, m, seq, payload, len, wire_len, now_ns);
	release_acked(t, e, dir ^ 1, now_ns); /* the bytes it acknowledged came */
	if (m->tcp_flags & TH_TCP_FIN)
		fin_in(t, e, dir, seq + wire_len, now_ns);
	return true;
}
