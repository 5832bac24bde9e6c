/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_CAPTURE_H
#define TH_CAPTURE_H

/*
 * tracehound capture's state, private to app/: the settings, the lcores'
 * tables and the ports. cmd_capture.c sets it up and runs the data path;
 * capture_settings.c reads the settings, capture_rx.c reads the ports, and
 * capture_stats.c adds up and prints what it counted.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_rwlock.h>
#include <rte_telemetry.h>

#include "capture_out.h"
#include "capture_replay.h"
#include "th_conf.h"
#include "th_decode.h"
#include "th_merge.h"
#include "th_pkt.h"
#include "th_segment.h"
#include "th_session.h"

#define MAX_DECODE 32
#define MAX_PORTS 16
#define MAX_SESSION 16
#define SESS_BURST 32

/* Settings, from the config file and the command line. */
struct settings {
	const char *output;          /* "-" for stdout */
	uint64_t decode_lcores;      /* 0: all worker lcores */
	uint64_t stats_interval_ns;  /* 0: only the final block */
	bool is_interval_given;      /* -s set stats_interval_ns, not the config */
	uint64_t mbufs;              /* mbuf pool size */
	uint64_t burst;              /* rx burst */
	uint64_t ring_size;          /* dispatcher -> decode ring entries */
	uint64_t rx_desc;            /* rx descriptors per queue */
	struct th_decode_config dec; /* table sizes and timeouts */
	const char *records;         /* inferred opens to this file; NULL: inference off */
	const char *trace_dir;       /* [trace] dir: opens and names as LZ4 segments */
	uint64_t box_id;             /* this capture box, in every segment */
	uint64_t rotate_bytes;       /* segment size limit */
	uint64_t rotate_ns;          /* segment age limit (checkpoint) */
	uint64_t flush_ns;           /* flush interval: what a crash may lose */
	uint64_t is_rpc_trace;       /* also write every RPC to the segments (per decode lcore) */
	const char *names;           /* handle-to-name map to this file; NULL: off */
	uint64_t session_lcores;     /* session lcores (0: not set, one) */
	struct th_sess_config sess;  /* inference thresholds and table sizes */
	const char *probe_target;    /* [probe] target: scheduled disk probes, or NULL */
	uint64_t probe_every_ns;     /* time between probe starts */
	uint64_t probe_seconds_ns;   /* how long each probe runs */
	uint64_t probe_rate;         /* its IOPS (cycle time 1/rate) */
	uint64_t probe_size;         /* temporary file size for a directory target */
	uint64_t probe_percentile;   /* watched service-time percentile */
	uint64_t probe_alarm_ns;     /* alarm above this */
};

struct rxq {
	uint16_t port;
	uint16_t queue;
};

/* Per decode lcore; only its lcore writes it, the control lcore reads counters. */
struct decode_lcore {
	unsigned int lcore_id;              /* EAL lcore */
	unsigned int index;                 /* 0..n_decode-1 */
	struct th_decode *dec;              /* the pipeline */
	struct rte_ring *in;                /* from the dispatcher, or NULL */
	struct rxq rxq[MAX_PORTS];          /* queues polled directly */
	unsigned int n_rxq;                 /* how many */
	struct th_out out;                  /* RPC lines to the control lcore */
	struct th_segment_writer *rpc_seg;  /* RPC records as trace segments, or NULL */
	struct th_segment_counters rpc_ctr; /* its counters at close */
	struct th_sess_op
		*pending[MAX_SESSION][SESS_BURST]; /* ops on their way, per session lcore */
	unsigned int n_pending[MAX_SESSION];
	uint64_t sess_not_used;      /* ops inference does not use (th_sess_op_is_used()) */
	uint64_t sess_pool_empty;    /* ops not passed to inference: no free event */
	uint64_t sess_copies;        /* copies of directory ops for the other session lcores */
	uint64_t sess_ring_full;     /* ops not passed to inference: session ring full */
	struct th_sess_op inline_op; /* the op being reduced for inline inference, or an event
				      built here to be copied to every session lcore */
	uint8_t *scratch;            /* linear copy of multi-segment frames */
	atomic_uint_fast64_t freed;  /* frames from the ring decoded and their mbufs freed */
	/* Behind the dispatcher, with session lcores (is_merged): the merge key of the ops
	 * this lcore emits now (KEY_FRAME(), KEY_AGE()), every op keyed below sess_done_key
	 * is on the session rings (UINT64_MAX once it is done), and the dispatcher's ageing
	 * points this lcore has aged at. */
	uint64_t key;
	atomic_uint_fast64_t sess_done_key;
	atomic_uint_fast64_t aged;
	uint64_t strays;             /* frames whose stamp was a stray, taken at the clock's time */
	atomic_bool is_done;         /* flushed and finished */
} __rte_cache_aligned;

/* A session lcore: inference for the files that hash to it. */
struct session_lcore {
	unsigned int lcore_id;              /* EAL lcore (UINT32_MAX: inline on decode lcore 0) */
	struct th_sess_table *t;            /* the tables */
	struct rte_ring *in;                /* ops from every decode lcore */
	struct th_out records;              /* record lines */
	struct th_out names;                /* name map lines */
	struct th_segment_writer *seg;      /* opens and names as segments, or NULL */
	struct th_segment_counters seg_ctr; /* its counters at close */
	struct th_merge merge;              /* ops waiting for their turn, by frame (is_merged) */
	uint64_t merge_early;               /* ops let go before their turn: merge full */
	atomic_bool is_done;                /* flushed and finished */
} __rte_cache_aligned;

/* A replay's tables age at the frame that passes each second of its clock. */
struct age_point {
	uint64_t seq; /* before this frame */
	uint64_t ns;  /* at its time */
};

#define AGE_POINTS 4096 /* points the dispatcher keeps for the slowest decode lcore */

struct dispatch_lcore {
	unsigned int lcore_id;
	struct rxq rxq[MAX_PORTS];
	unsigned int n_rxq;
	uint64_t ring_full;          /* mbufs dropped: a decode ring was full */
	uint64_t handed[MAX_DECODE]; /* frames put on each decode lcore's ring */
	uint64_t next_seq;           /* the number the next frame gets */
	uint64_t strays;             /* frames whose stamp was a stray (see stamp_next()) */
	atomic_uint_fast64_t handed_seq; /* every frame numbered below it is on its ring */
	uint8_t *scratch;            /* FRAME_MAX bytes: a chained frame's headers */
	/* A replay's ageing points, when is_merged: every decode lcore ages its tables at the
	 * same frames, as one decode lcore would (age_until()). */
	uint64_t next_age_ns;
	struct age_point age[AGE_POINTS];               /* point n at n % AGE_POINTS */
	atomic_uint_fast64_t n_age __rte_cache_aligned; /* points published */
} __rte_cache_aligned;

/* The capture: one per process, set up by cmd_capture.c, read by capture_stats.c. */
struct capture {
	struct settings set;
	struct decode_lcore dl[MAX_DECODE];
	unsigned int n_decode;
	struct dispatch_lcore disp;
	bool has_dispatcher;
	struct session_lcore sl[MAX_SESSION];
	unsigned int n_session;        /* 0: inference off */
	bool is_inline_session;        /* one decode lcore runs inference itself */
	bool is_merged;         /* several decode lcores feed the session lcores, which take their
				   ops in frame order: see session_main() */
	int seq_offset;         /* mbuf dynfield: the frame's number, when is_merged */
	unsigned int merge_max; /* ops a session lcore holds for their turn, at most */
	struct rte_mempool *sess_pool; /* th_sess_op events in flight */
	struct rte_ring *out_ring;     /* filled output buffers, all lcores -> control */
	struct rte_mempool *pool;
	uint16_t ports[MAX_PORTS];
	unsigned int n_ports;
	bool is_file_port[RTE_MAX_ETHPORTS];      /* by port id: a pcap file, read to its end */
	unsigned int file_segs[RTE_MAX_ETHPORTS]; /* mbufs its largest record takes */
	uint64_t file_nombuf[RTE_MAX_ETHPORTS];   /* its rx_nombuf when last looked at */
	bool has_live_port;                       /* a port stamped with the host clock */
	int ts_offset;                            /* mbuf timestamp dynfield, or -1 */
	uint32_t ts_mult[RTE_MAX_ETHPORTS];       /* dynfield units to ns, per port */
	enum th_pkt_link link[RTE_MAX_ETHPORTS];  /* what each port's frames start with */
	/* Telemetry's thread reads the lcores' tables until the process ends (DPDK has no
	 * way to unregister a command): teardown shuts it out before freeing them. */
	rte_rwlock_t tel_lock;
	bool is_tel_off;
	uint64_t ts_flag;       /* its ol_flags bit */
	/* TSC to wall clock: two copies, the control lcore rewrites the one not in use each
	 * second (clock_steer()) and then flips clock_slot; readers take the slot first. A
	 * reader that stalls a second or more after that finds its copy rewritten: each
	 * copy's seq is odd while it is written and moves on, and the reader reads again
	 * (clock_get()). */
	struct wallclock_slot {
		atomic_uint seq;
		_Atomic uint64_t base_tsc;
		_Atomic uint64_t base_ns;  /* wall clock at base_tsc */
		_Atomic double ns_per_tsc; /* steered: the measured rate, corrected toward it */
	} clock[2];
	atomic_uint clock_slot;
	uint64_t clock_start_tsc; /* for the measured rate: */
	uint64_t clock_start_raw; /* CLOCK_MONOTONIC_RAW then */
	int64_t clock_error_ns;   /* wall clock less the TSC's reading at the last steering */
	double ns_per_tsc;        /* EAL's nominal rate, for periods */
	int out_fds[TH_OUT__DEST_COUNT]; /* per destination; -1: not written */
	struct th_out_totals out_totals; /* written, lost; a write failed: stop */
	unsigned int n_packet_sockets;   /* AF_PACKET sockets: kernel drops counted */
	atomic_bool stop_rx;             /* signal or output error: stop receiving */
	atomic_bool is_rx_done;          /* the dispatcher has stopped */
	/* File frames handed on while a file could not be read for want of mbufs:
	 * its next frame may have been earlier. */
	atomic_uint_fast64_t files_out_of_order;
	pthread_t probe_thread;          /* scheduled disk probes, when configured */
	bool has_probe_thread;           /* probe_thread was started */
	volatile int probe_stop;         /* tells a running probe to stop */
	uint64_t probe_runs;             /* scheduled probes run */
	uint64_t probe_alarms;           /* runs whose watched percentile passed the threshold */
	uint64_t probe_failures;         /* runs that could not probe (the reason went to stderr) */
};

extern struct capture cap;

/*
 * The most bytes of one frame capture reads: a data room (net_pcap's first
 * mbuf) and 64 KiB. net_pcap (DPDK 22.11) reads the rest of a record after
 * its first mbuf by a 16-bit length, so its mbufs hold 2048 + ((caplen -
 * 2048) mod 65536) bytes of a longer record, yet it sets pkt_len to the
 * whole record.
 */
#define FRAME_MAX (RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM + 65536)

/*
 * The bytes frame @p m holds: its pkt_len, or less where its segments end
 * first (a net_pcap record past FRAME_MAX); the decoder counts the rest as
 * cut by the capture length.
 */
static inline uint32_t
mbuf_held(const struct rte_mbuf *m)
{
	uint32_t n = 0, want = rte_pktmbuf_pkt_len(m);

	/* One segment: no look at m->next, in the mbuf's second cache line. */
	if (likely(m->nb_segs == 1))
		return rte_pktmbuf_data_len(m) < want ? rte_pktmbuf_data_len(m) : want;
	for (; m != NULL && n < want; m = m->next)
		n += rte_pktmbuf_data_len(m);
	return n < want ? n : want;
}

/* The frame's time: its port's stamp in ns (a pcap record's time on replay), else @p burst_ns. */
static inline uint64_t
mbuf_time(const struct rte_mbuf *m, uint64_t burst_ns)
{
	if (cap.ts_offset >= 0 && (m->ol_flags & cap.ts_flag) && cap.ts_mult[m->port] != 0)
		return *RTE_MBUF_DYNFIELD(m, cap.ts_offset, rte_mbuf_timestamp_t *) *
		       cap.ts_mult[m->port];
	return burst_ns;
}

/* capture_rx.c */

#define FILE_HOLD 16 /* frames held per file port while several files are read by time */

/* Frames read from a file port and held back until the other files' are as late. */
struct file_hold {
	struct rte_mbuf *m[FILE_HOLD];
	unsigned int head, n;
	unsigned int max; /* frames read at once: half the pool shared by the files */
};

/*
 * One lcore's queues and how their reading goes. Several pcap files on one
 * lcore (one per tap, say, or per direction) are read in the order of their
 * frames' times, as they happened: each file's next frames are held until
 * every other file has shown one as late, or ended.
 */
struct rx_poll {
	struct rxq *q;
	unsigned int n_q;
	unsigned int empty[MAX_PORTS];    /* empty bursts in a row, per queue */
	struct file_hold hold[MAX_PORTS]; /* per queue, when merging */
	unsigned int n_held;              /* frames held, every queue */
	unsigned int next;                /* the turn rx_poll() starts at */
	bool is_merge;                    /* several file queues, read by time */
};

/** Start polling @p n_q queues @p q (the lcore's own) with nothing held. */
void th_rx_poll_init(struct rx_poll *p, struct rxq *q, unsigned int n_q);

/**
 * The next frames of an lcore's queues into @p pkts (at most @p burst), and
 * *@p got_from the queue they came from; 0 when none are there yet. Once
 * receiving stops, the frames still held, earliest first. *@p is_over is set
 * when no more will come: every port is a file that has ended, or the stop's
 * held frames are all handed on.
 */
unsigned int th_rx_next(struct rx_poll *p, struct rte_mbuf **pkts, unsigned int burst,
	unsigned int *got_from, bool *is_over);

/* capture_settings.c */

/**
 * Settings from the config file @p config (NULL: defaults only) into @p s;
 * *@p conf_out keeps the file's values (free with th_conf_free()).
 * @return 0, or -EINVAL with @p err saying file:line and why.
 */
int th_settings_load(
	struct settings *s, const char *config, struct th_conf **conf_out, char *err, size_t esz);

/**
 * Settings that parse but do not fit together, once the command line has had
 * its say: a key whose feature is off (session.names without records), a
 * time of 0 that cannot work (probe.every), an empty file name, progress
 * lines less than 0.1 s apart. @return 0, or -EINVAL with @p err saying
 * file:line (or the option, for a value the command line gave) and why.
 */
int th_settings_check(const struct settings *s, const struct th_conf *c, char *err, size_t esz);

/**
 * Files the run would write over before reading them, or write twice: an output
 * (-o, -r, session.names) that is the config, another output, or a pcap a port
 * reads, and a tx_pcap= that is one. @return true after saying which.
 */
bool th_settings_outputs_clash(const struct settings *s, int argc, char **argv, const char *config);

/**
 * The files the EAL arguments @p argv have net_pcap read (rx_pcap=), before
 * EAL opens them: each that exists must be a regular file, not a pipe, a
 * device or a directory. @return 0, or -EINVAL after saying which.
 */
int th_settings_inputs_check(int argc, char **argv);

/**
 * EAL argv: program name, [eal] args from the config, then the command line's.
 * *@p out points into *@p copy_out (the config's arguments, split); free both
 * after EAL. @return the count, or -ENOMEM.
 */
int th_settings_eal_argv(struct th_conf *c, int argc, char **argv, char ***out, char **copy_out);

/** The next rx_pcap= file in a net_pcap vdev's arguments from *@p args on; moves past it. */
bool th_rx_pcap_next(const char **args, char *path, size_t size);

/* cmd_capture.c */

/* The file a net_pcap port reads (its first rx_pcap=) into @p path; false for other ports. */
bool th_capture_port_pcap_path(uint16_t port, char *path, size_t size);

/* capture_stats.c */

/** One progress line on stderr: counters so far, and the RPCs matched since the last. */
void th_stats_progress(uint64_t start_tsc);

/**
 * The final statistics block to @p out, @p secs after the start, ending with
 * the summary line. @return true when an input file had records not read.
 */
bool th_stats_final(FILE *out, double secs);

/** Trace records lost by every stream, for every reason. */
uint64_t th_stats_trace_lost(void);

/** /tracehound/stats: every counter the final block prints, as they run. */
int th_stats_telemetry(const char *cmd, const char *params, struct rte_tel_data *d);

/** /tracehound/srt: response times by procedure since the start. */
int th_stats_telemetry_srt(const char *cmd, const char *params, struct rte_tel_data *d);

#endif /* TH_CAPTURE_H */
