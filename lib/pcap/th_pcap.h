/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_PCAP_H
#define TH_PCAP_H

/**
 * @file
 * Classic pcap files (not pcapng), without libpcap.
 *
 * The reader takes both byte orders and both the microsecond (0xa1b2c3d4)
 * and nanosecond (0xa1b23c4d) magics, and returns timestamps in nanoseconds
 * since the epoch whatever the file holds. A file is input like any other:
 * a record that claims more bytes than the snap length or than
 * TH_PCAP_CAPLEN_MAX, or a file that ends inside a record, is reported as
 * -EBADMSG with a message saying where, never trusted.
 *
 * The writer always writes the nanosecond format in host byte order, the
 * way the generator and tests want it (tshark, tcpdump and DPDK net_pcap read it).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Largest record the reader accepts, whatever the file's snap length says. */
#define TH_PCAP_CAPLEN_MAX (256u * 1024u)

/** pcap file magics, as read in host order from a file in the same order. */
enum {
	TH_PCAP_MAGIC_USEC = 0xa1b2c3d4,
	TH_PCAP_MAGIC_NSEC = 0xa1b23c4d,
};

/** One record. */
struct th_pcap_rec {
	uint64_t ts_ns;      /**< capture time, ns since the epoch */
	uint32_t caplen;     /**< bytes in data */
	uint32_t wirelen;    /**< bytes the frame had on the wire */
	const uint8_t *data; /**< frame bytes; owned by the reader or file */
};

struct th_pcap_reader;
struct th_pcap_writer;

/**
 * Open a pcap file for reading and check its global header.
 * @return a reader, or NULL with errno set: any fopen() error (ENOENT,
 *         EACCES, ...), EBADMSG for a file too short or with an unknown
 *         magic, EPROTONOSUPPORT for a pcapng file, ENOMEM.
 */
struct th_pcap_reader *th_pcap_reader_open(const char *path);

/**
 * Read from an already open stream (a pipe, fmemopen() in fuzzers). The
 * reader takes ownership of @p f and closes it in th_pcap_reader_close().
 * Errors as th_pcap_reader_open(); on error @p f is closed too.
 */
struct th_pcap_reader *th_pcap_reader_fopen(FILE *f);

/**
 * Read the next record. rec->data stays valid until the next call.
 * @return 1 with @p rec filled, 0 at a clean end of file, -EBADMSG for a
 *         record that is bigger than the snap length or TH_PCAP_CAPLEN_MAX
 *         or cut by the end of the file, -EIO (or another -errno) for a read
 *         error. After an error every later call returns the same error;
 *         th_pcap_reader_error() says what and where.
 */
int th_pcap_read(struct th_pcap_reader *r, struct th_pcap_rec *rec);

/** LINKTYPE_* of the file (1 Ethernet, 113 Linux SLL, ...). */
uint32_t th_pcap_reader_linktype(const struct th_pcap_reader *r);

/**
 * The LINKTYPE_* of a capture file without reading it: a classic pcap's, or a
 * pcapng's first interface (what a reader that takes pcapng, as libpcap does,
 * hands frames over in). @return 0, or -errno: a fopen() error, EBADMSG for
 * a file that is neither (or has no interface in its first 64 KiB).
 */
int th_pcap_file_linktype(const char *path, uint32_t *linktype);

/** The same from a file's first @p size bytes. @return 0 or -EBADMSG. */
int th_pcap_linktype_of(const uint8_t *b, size_t size, uint32_t *linktype);

/** Snap length from the global header. */
uint32_t th_pcap_reader_snaplen(const struct th_pcap_reader *r);

/** What th_pcap_scan_records() found in a file's first record headers. */
struct th_pcap_scan {
	uint32_t snaplen;      /**< the snap length the file's header gives (0: none) */
	uint64_t over_snaplen; /**< the first record (from 1) holding more bytes than it, or 0 */
	uint32_t over_caplen;  /**< that record's captured length */
	uint64_t past_2038;    /**< the first record stamped past 2038-01-19, or 0 */
	uint32_t past_secs;    /**< that record's seconds */
};

/**
 * Read the record headers of classic pcap @p path, among its first @p max, for what libpcap
 * reads otherwise than tshark: a record holding more bytes than the header's snap length
 * (libpcap cuts it there; th_pcap_read() refuses it), and seconds past 2^31 - 1 (libpcap
 * takes them as signed, so such a time reads as before 1970).
 * @return 0 with @p out filled, or -errno when the file cannot be read as a classic pcap.
 */
int th_pcap_scan_records(const char *path, uint64_t max, struct th_pcap_scan *out);

/** True when the file has nanosecond timestamps. */
bool th_pcap_reader_is_nsec(const struct th_pcap_reader *r);

/** True when the file's byte order differs from the host's. */
bool th_pcap_reader_is_swapped(const struct th_pcap_reader *r);

/**
 * Text of the last error, with the record number and file offset, e.g.
 * "record 7 at offset 1234: caplen 300000 exceeds the 65535 snap length";
 * "" when there was none.
 */
const char *th_pcap_reader_error(const struct th_pcap_reader *r);

/** Close the reader and its stream. NULL is accepted. */
void th_pcap_reader_close(struct th_pcap_reader *r);

/** A whole pcap file in memory: for benchmarks that replay without I/O. */
struct th_pcap_file {
	uint32_t linktype;        /**< LINKTYPE_* */
	uint32_t snaplen;         /**< from the global header */
	size_t count;             /**< records in recs */
	struct th_pcap_rec *recs; /**< records in file order; data points into frames */
	uint8_t *frames;          /**< all frame bytes, back to back */
	uint64_t frame_bytes;     /**< sum of caplen */
};

/**
 * Load every record of a pcap file into memory.
 * @param path file to read
 * @param err  optional buffer for a message on failure (may be NULL)
 * @param err_size bytes in err
 * @return the file, or NULL with errno set as th_pcap_reader_open() and
 *         th_pcap_read() do (EBADMSG for a bad record: nothing is returned
 *         from a file that does not read cleanly to its end), ENOMEM.
 */
struct th_pcap_file *th_pcap_load(const char *path, char *err, size_t err_size);

/** Free a loaded file. NULL is accepted. */
void th_pcap_file_free(struct th_pcap_file *f);

/**
 * Create (or truncate) a nanosecond pcap file and write its global header.
 * @param linktype LINKTYPE_* of the frames to come
 * @param snaplen  snap length recorded in the header; frames longer than
 *                 this are cut to it when written (1..TH_PCAP_CAPLEN_MAX)
 * @return a writer, or NULL with errno set: any fopen()/fwrite() error,
 *         EINVAL for a snap length of 0 or above TH_PCAP_CAPLEN_MAX, ENOMEM.
 */
struct th_pcap_writer *th_pcap_writer_open(const char *path, uint32_t linktype, uint32_t snaplen);

/**
 * Append one record.
 * @param ts_ns   capture time, ns since the epoch
 * @param frame   frame bytes
 * @param caplen  bytes of frame to store (cut to the snap length)
 * @param wirelen length of the frame on the wire (at least caplen)
 * @return 0, -EINVAL when wirelen < caplen, -ERANGE for a time past the
 *         format's 32-bit seconds (2106-02-07; nothing written), or -errno of
 *         a failed write (the writer keeps the first error; later calls
 *         return it).
 */
int th_pcap_write(struct th_pcap_writer *w, uint64_t ts_ns, const void *frame, uint32_t caplen,
	uint32_t wirelen);

/** Records written so far. */
uint64_t th_pcap_writer_count(const struct th_pcap_writer *w);

/**
 * Flush and close.
 * @return 0, or -errno of the first failed write, flush or close (ENOSPC,
 *         EIO, ...). The writer is freed in both cases. NULL returns 0.
 */
int th_pcap_writer_close(struct th_pcap_writer *w);

#endif /* TH_PCAP_H */
