/* SPDX-License-Identifier: BSD-3-Clause */

/* Classic pcap reading and writing: global header, then records of a 16-byte
 * header (seconds, sub-seconds, caplen, wirelen) and the frame bytes. */

#include "th_pcap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GLOBAL_HDR_SIZE 24
#define REC_HDR_SIZE 16
#define PCAPNG_MAGIC 0x0a0d0d0a

struct th_pcap_reader {
	FILE *f;           /**< the stream, owned */
	uint32_t linktype; /**< LINKTYPE_* */
	uint32_t snaplen;  /**< from the header */
	uint32_t limit;    /**< largest caplen accepted */
	bool is_swapped;   /**< file byte order differs from ours */
	bool is_nsec;      /**< sub-second field counts ns */
	int err;           /**< sticky -errno once a read failed */
	uint64_t rec_no;   /**< records returned so far */
	uint64_t offset;   /**< file offset of the next record header */
	uint8_t *buf;      /**< frame buffer, limit bytes */
	char msg[160];     /**< text of err */
};

struct th_pcap_writer {
	FILE *f;          /**< the stream, owned */
	uint32_t snaplen; /**< frames are cut to this */
	int err;          /**< first write error, -errno */
	uint64_t count;   /**< records written */
	char *vbuf;       /**< stdio buffer: big, since the generator writes millions of frames */
};

static uint32_t
swap32(uint32_t v)
{
	return __builtin_bswap32(v);
}

static uint32_t
get32(const uint8_t *p, bool is_swapped)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return is_swapped ? swap32(v) : v;
}

/* Check the global header; fills the format fields of @p r. */
static int
parse_global(const uint8_t *h, size_t size, struct th_pcap_reader *r)
{
	uint32_t magic;

	if (size < GLOBAL_HDR_SIZE) {
		/* An empty file or one cut inside the header cannot be a capture. */
		return -EBADMSG;
	}
	memcpy(&magic, h, 4);
	if (magic == TH_PCAP_MAGIC_USEC || magic == TH_PCAP_MAGIC_NSEC) {
		r->is_swapped = false;
	} else if (swap32(magic) == TH_PCAP_MAGIC_USEC || swap32(magic) == TH_PCAP_MAGIC_NSEC) {
		r->is_swapped = true;
		magic = swap32(magic);
	} else if (magic == PCAPNG_MAGIC) {
		return -EPROTONOSUPPORT;
	} else {
		return -EBADMSG;
	}
	r->is_nsec = magic == TH_PCAP_MAGIC_NSEC;
	r->snaplen = get32(h + 16, r->is_swapped);
	r->linktype = get32(h + 20, r->is_swapped) & 0x0fffffff; /* upper bits: FCS info */
	/* Some writers leave the snap length 0 or absurd: the cap bounds memory anyway. */
	r->limit = (r->snaplen == 0 || r->snaplen > TH_PCAP_CAPLEN_MAX) ? TH_PCAP_CAPLEN_MAX
									: r->snaplen;
	return 0;
}

struct th_pcap_reader *
th_pcap_reader_fopen(FILE *f)
{
	uint8_t h[GLOBAL_HDR_SIZE];
	struct th_pcap_reader *r;
	size_t got;
	int rc;

	if (f == NULL) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		goto fail_close;
	got = fread(h, 1, sizeof(h), f);
	if (got < sizeof(h) && ferror(f)) {
		errno = EIO;
		goto fail_free;
	}
	rc = parse_global(h, got, r);
	if (rc != 0) {
		errno = -rc;
		goto fail_free;
	}
	r->buf = malloc(r->limit);
	if (r->buf == NULL)
		goto fail_free;
	r->f = f;
	r->offset = GLOBAL_HDR_SIZE;
	return r;

fail_free:
	rc = errno;
	free(r);
	errno = rc;
fail_close:
	rc = errno;
	fclose(f);
	errno = rc;
	return NULL;
}

struct th_pcap_reader *
th_pcap_reader_open(const char *path)
{
	FILE *f = fopen(path, "rb");

	if (f == NULL)
		return NULL;
	return th_pcap_reader_fopen(f);
}

/* Remember the error and say where it happened; @p what ends in the value when it has one. */
static int
reader_fail(struct th_pcap_reader *r, int err, const char *what, uint32_t value, bool has_value)
{
	int n;

	r->err = err;
	n = snprintf(r->msg, sizeof(r->msg), "record %llu at offset %llu: %s",
		(unsigned long long)r->rec_no + 1, (unsigned long long)r->offset, what);
	if (has_value && n > 0 && (size_t)n < sizeof(r->msg))
		snprintf(r->msg + n, sizeof(r->msg) - (size_t)n, " %lu", (unsigned long)value);
	return err;
}

int
th_pcap_read(struct th_pcap_reader *r, struct th_pcap_rec *rec)
{
	uint8_t h[REC_HDR_SIZE];
	uint32_t sec, sub, caplen, wirelen;
	size_t got;

	if (r->err != 0)
		return r->err;
	got = fread(h, 1, sizeof(h), r->f);
	if (got == 0 && feof(r->f))
		return 0;
	if (got < sizeof(h)) {
		if (ferror(r->f))
			return reader_fail(r, -EIO, "read error", 0, false);
		return reader_fail(r, -EBADMSG, "file ends inside the record header", 0, false);
	}
	sec = get32(h, r->is_swapped);
	sub = get32(h + 4, r->is_swapped);
	caplen = get32(h + 8, r->is_swapped);
	wirelen = get32(h + 12, r->is_swapped);
	if (caplen > r->limit) {
		if (r->limit == TH_PCAP_CAPLEN_MAX)
			return reader_fail(
				r, -EBADMSG, "caplen above the 262144-byte limit:", caplen, true);
		return reader_fail(r, -EBADMSG, "caplen above the snap length:", caplen, true);
	}
	got = fread(r->buf, 1, caplen, r->f);
	if (got < caplen) {
		if (ferror(r->f))
			return reader_fail(r, -EIO, "read error", 0, false);
		return reader_fail(
			r, -EBADMSG, "file ends inside the frame of caplen", caplen, true);
	}
	rec->ts_ns =
		(uint64_t)sec * 1000000000u + (r->is_nsec ? (uint64_t)sub : (uint64_t)sub * 1000u);
	rec->caplen = caplen;
	rec->wirelen = wirelen;
	rec->data = r->buf;
	r->rec_no++;
	r->offset += REC_HDR_SIZE + caplen;
	return 1;
}

uint32_t
th_pcap_reader_linktype(const struct th_pcap_reader *r)
{
	return r->linktype;
}

uint32_t
th_pcap_reader_snaplen(const struct th_pcap_reader *r)
{
	return r->snaplen;
}

int
th_pcap_scan_records(const char *path, uint64_t max, struct th_pcap_scan *out)
{
	struct th_pcap_reader *r = th_pcap_reader_open(path);
	uint8_t h[REC_HDR_SIZE];
	uint64_t n = 0;

	memset(out, 0, sizeof(*out));
	if (r == NULL)
		return -errno;
	out->snaplen = r->snaplen;
	/* Record headers only, their frames skipped: a snap length of 0 is "no limit" to
	 * libpcap too. */
	while (n < max && (out->over_snaplen == 0 || out->past_2038 == 0) &&
		fread(h, 1, sizeof(h), r->f) == sizeof(h)) {
		uint32_t secs = get32(h, r->is_swapped), caplen = get32(h + 8, r->is_swapped);

		n++;
		if (out->over_snaplen == 0 && out->snaplen != 0 && caplen > out->snaplen) {
			out->over_snaplen = n;
			out->over_caplen = caplen;
		}
		if (out->past_2038 == 0 && secs > INT32_MAX) {
			out->past_2038 = n;
			out->past_secs = secs;
		}
		if (fseeko(r->f, (off_t)caplen, SEEK_CUR) != 0)
			break;
	}
	th_pcap_reader_close(r);
	return 0;
}

bool
th_pcap_reader_is_nsec(const struct th_pcap_reader *r)
{
	return r->is_nsec;
}

bool
th_pcap_reader_is_swapped(const struct th_pcap_reader *r)
{
	return r->is_swapped;
}

const char *
th_pcap_reader_error(const struct th_pcap_reader *r)
{
	return r->err ? r->msg : "";
}

void
th_pcap_reader_close(struct th_pcap_reader *r)
{
	if (r == NULL)
		return;
	fclose(r->f);
	free(r->buf);
	free(r);
}

/*
 * Two passes over one reader would double the I/O; instead records are
 * appended to growing arrays, and data pointers are fixed up at the end
 * (the frame array may move while it grows).
 */
struct th_pcap_file *
th_pcap_load(const char *path, char *err, size_t err_size)
{
	struct th_pcap_reader *r;
	struct th_pcap_file *pf;
	struct th_pcap_rec rec;
	size_t rec_cap = 0, frame_cap = 0, i;
	uint64_t at = 0;
	int rc, e;

	r = th_pcap_reader_open(path);
	if (r == NULL) {
		e = errno;
		if (err != NULL)
			snprintf(err, err_size, "%s: %s", path,
				e == EBADMSG           ? "not a pcap file (bad or short header)"
				: e == EPROTONOSUPPORT ? "pcapng is not supported, convert it "
							 "with 'editcap -F pcap'"
						       : strerror(e));
		errno = e;
		return NULL;
	}
	pf = calloc(1, sizeof(*pf));
	if (pf == NULL)
		goto fail_nomem;
	pf->linktype = r->linktype;
	pf->snaplen = r->snaplen;
	while ((rc = th_pcap_read(r, &rec)) == 1) {
		if (pf->count == rec_cap) {
			size_t n = rec_cap ? rec_cap * 2 : 1024;
			struct th_pcap_rec *p = realloc(pf->recs, n * sizeof(*p));

			if (p == NULL)
				goto fail_nomem;
			pf->recs = p;
			rec_cap = n;
		}
		if (pf->frame_bytes + rec.caplen > frame_cap) {
			size_t n = frame_cap ? frame_cap * 2 : 1u << 20;
			uint8_t *p;

			while (n < pf->frame_bytes + rec.caplen)
				n *= 2;
			p = realloc(pf->frames, n);
			if (p == NULL)
				goto fail_nomem;
			pf->frames = p;
			frame_cap = n;
		}
		memcpy(pf->frames + pf->frame_bytes, rec.data, rec.caplen);
		pf->recs[pf->count] = rec;
		/* Offset for now; made a pointer once frames stops moving. */
		pf->recs[pf->count].data = NULL;
		pf->count++;
		pf->frame_bytes += rec.caplen;
	}
	if (rc < 0) {
		if (err != NULL)
			snprintf(err, err_size, "%s: %s", path, th_pcap_reader_error(r));
		th_pcap_reader_close(r);
		th_pcap_file_free(pf);
		errno = -rc;
		return NULL;
	}
	th_pcap_reader_close(r);
	for (i = 0; i < pf->count; i++) {
		pf->recs[i].data = pf->frames + at;
		at += pf->recs[i].caplen;
	}
	return pf;

fail_nomem:
	if (err != NULL)
		snprintf(err, err_size, "%s: out of memory loading the file", path);
	th_pcap_reader_close(r);
	th_pcap_file_free(pf);
	errno = ENOMEM;
	return NULL;
}

void
th_pcap_file_free(struct th_pcap_file *f)
{
	if (f == NULL)
		return;
	free(f->recs);
	free(f->frames);
	free(f);
}

struct th_pcap_writer *
th_pcap_writer_open(const char *path, uint32_t linktype, uint32_t snaplen)
{
	struct th_pcap_writer *w;
	uint32_t h[6];
	int e;

	if (snaplen == 0 || snaplen > TH_PCAP_CAPLEN_MAX) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	w->vbuf = malloc(1u << 20);
	if (w->vbuf == NULL)
		goto fail_free;
	w->f = fopen(path, "wb");
	if (w->f == NULL)
		goto fail_free;
	setvbuf(w->f, w->vbuf, _IOFBF, 1u << 20);
	w->snaplen = snaplen;
	h[0] = TH_PCAP_MAGIC_NSEC;
	/* version_major 2 and version_minor 4: two u16 in host order. */
	memcpy(&h[1], (const uint16_t[2]){2, 4}, 4);
	h[2] = 0; /* thiszone */
	h[3] = 0; /* sigfigs */
	h[4] = snaplen;
	h[5] = linktype;
	if (fwrite(h, sizeof(h), 1, w->f) != 1) {
		e = errno ? errno : EIO;
		fclose(w->f);
		errno = e;
		goto fail_free;
	}
	return w;

fail_free:
	e = errno;
	free(w->vbuf);
	free(w);
	errno = e;
	return NULL;
}

int
th_pcap_write(struct th_pcap_writer *w, uint64_t ts_ns, const void *frame, uint32_t caplen,
	uint32_t wirelen)
{
	uint32_t h[4];

	if (w->err != 0)
		return w->err;
	if (wirelen < caplen)
		return -EINVAL;
	/* The record's seconds are 32 bits: a later time would be written wrapped, silently. */
	if (ts_ns / 1000000000u > UINT32_MAX)
		return -ERANGE;
	if (caplen > w->snaplen)
		caplen = w->snaplen;
	h[0] = (uint32_t)(ts_ns / 1000000000u);
	h[1] = (uint32_t)(ts_ns % 1000000000u);
	h[2] = caplen;
	h[3] = wirelen;
	if (fwrite(h, sizeof(h), 1, w->f) != 1 ||
		(caplen > 0 && fwrite(frame, caplen, 1, w->f) != 1)) {
		w->err = errno ? -errno : -EIO;
		return w->err;
	}
	w->count++;
	return 0;
}

uint64_t
th_pcap_writer_count(const struct th_pcap_writer *w)
{
	return w->count;
}

int
th_pcap_writer_close(struct th_pcap_writer *w)
{
	int rc;

	if (w == NULL)
		return 0;
	rc = w->err;
	if (fflush(w->f) != 0 && rc == 0)
		rc = errno ? -errno : -EIO;
	if (fclose(w->f) != 0 && rc == 0)
		rc = errno ? -errno : -EIO;
	free(w->vbuf);
	free(w);
	return rc;
}

/* pcapng: a section header's byte-order magic, and the interface description block. */
#define PCAPNG_BYTE_ORDER 0x1a2b3c4d
#define PCAPNG_IDB 1
#define LINKTYPE_PEEK (64 * 1024)

/*
 * The interfaces in the pcapng blocks at @p b (@p n bytes from a block's start):
 * *linktype and *seen once one is; *next, the offset of the first block not whole
 * in the bytes. @return 0, -EBADMSG for a malformed block, -EPROTO for interfaces
 * of two link types (libpcap stops at the first packet of the second).
 */
static int
pcapng_blocks(
	const uint8_t *b, size_t n, bool is_swapped, uint32_t *linktype, bool *seen, size_t *next)
{
	uint32_t len;
	size_t off;

	for (off = 0; off + 12 <= n; off += len) {
		len = get32(b + off + 4, is_swapped);
		if (len < 12 || len % 4 != 0)
			return -EBADMSG;
		if (len > n - off)
			break;
		if (get32(b + off, is_swapped) == PCAPNG_IDB && len >= 16) {
			uint16_t lt;

			memcpy(&lt, b + off + 8, 2);
			lt = is_swapped ? (uint16_t)(lt << 8 | lt >> 8) : lt;
			if (*seen && lt != *linktype)
				return -EPROTO;
			*linktype = lt;
			*seen = true;
		}
	}
	*next = off;
	return 0;
}

/*
 * What the first bytes of a capture file say: 0 with *linktype for a classic pcap,
 * 1 for a pcapng (*is_swapped its byte order), -EBADMSG for neither.
 */
static int
file_kind(const uint8_t *b, size_t n, uint32_t *linktype, bool *is_swapped)
{
	uint32_t magic, order;

	if (n < GLOBAL_HDR_SIZE)
		return -EBADMSG;
	memcpy(&magic, b, 4);
	*is_swapped = swap32(magic) == TH_PCAP_MAGIC_USEC || swap32(magic) == TH_PCAP_MAGIC_NSEC;
	if (*is_swapped || magic == TH_PCAP_MAGIC_USEC || magic == TH_PCAP_MAGIC_NSEC) {
		*linktype = get32(b + 20, *is_swapped) & 0x0fffffff;
		return 0;
	}
	if (magic != PCAPNG_MAGIC)
		return -EBADMSG;
	memcpy(&order, b + 8, 4);
	*is_swapped = order != PCAPNG_BYTE_ORDER;
	return 1;
}

int
th_pcap_linktype_of(const uint8_t *b, size_t n, uint32_t *linktype)
{
	bool is_swapped, seen = false;
	size_t next;
	int rc = file_kind(b, n, linktype, &is_swapped);

	if (rc <= 0)
		return rc;
	/* Every interface in the bytes given must agree; one is enough to answer. */
	rc = pcapng_blocks(b, n, is_swapped, linktype, &seen, &next);
	return rc < 0 ? rc : seen ? 0 : -EBADMSG;
}

int
th_pcap_file_linktype(const char *path, uint32_t *linktype)
{
	uint8_t *b = malloc(LINKTYPE_PEEK);
	bool is_swapped, seen = false;
	size_t n, next;
	long at = 0;
	FILE *f;
	int rc;

	if (b == NULL)
		return -ENOMEM;
	f = fopen(path, "rb");
	if (f == NULL) {
		rc = -errno;
		free(b);
		return rc;
	}
	n = fread(b, 1, LINKTYPE_PEEK, f);
	rc = file_kind(b, n, linktype, &is_swapped);
	/* pcapng: its blocks a window at a time, to the first interface (a long comment or
	 * a large block may come before it); the rest of that window is checked too. */
	while (rc == 1) {
		rc = pcapng_blocks(b, n, is_swapped, linktype, &seen, &next);
		if (rc < 0 || seen)
			break;
		if (next == 0) /* one block larger than the window: past it */
			next = get32(b + 4, is_swapped);
		at += (long)next;
		if (fseek(f, at, SEEK_SET) != 0 || (n = fread(b, 1, LINKTYPE_PEEK, f)) < 12)
			rc = -EBADMSG;
		else
			rc = 1;
	}
	fclose(f);
	free(b);
	return rc;
}
