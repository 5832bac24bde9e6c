/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SESSION_PRIVATE_H
#define SESSION_PRIVATE_H

/*
 * Internal layout of a session table. Everything lives in arrays allocated
 * once and linked by 32-bit indexes (NIL ends a list), so an entry costs its
 * bytes plus one 4-byte hash bucket and nothing grows at run time.
 *
 * - files: one per (server, handle) with state; the only place a handle is
 *   kept. Freed when its last session or history entry goes.
 * - clients: one per client address, referenced by sessions (refs); a client
 *   without references waits on an idle list and is reused when needed.
 * - sessions: one per (file, client, uid, kind). Kinds: an open for read or
 *   write in progress (ACTIVE list, ordered by last use, which is also the
 *   idle-timeout order since ops arrive in about time order), a GETATTR or
 *   ACCESS waiting to become a cache read (PENDING list, FIFO by arrival,
 *   which is deadline order), and a client's read/write history of a file
 *   (HIST list, by last use, expiring after cache_window_ns).
 */

#include <string.h>

#include "th_sat.h"
#include "th_session.h"

#define NIL UINT32_MAX

/* Session kinds (part of the key). */
enum {
	SK_READ = 0,    /* open for read (or directory read) */
	SK_WRITE = 1,   /* open for write (or directory write) */
	SK_PENDING = 2, /* GETATTR/ACCESS awaiting confirmation */
	SK_HIST = 3,    /* the client's last read/write of the file (uid 0) */
};

/* Session flags. */
enum {
	SF_SAW_ZERO = 1 << 0,    /* an op at offset (cookie) 0 belongs to the session */
	SF_IS_DIR = 1 << 1,      /* a directory read */
	SF_SAW_ACCESS = 1 << 2,  /* PENDING: an ACCESS was part of it */
	SF_SAW_GETATTR = 1 << 3, /* PENDING: a GETATTR was part of it */
	SF_TOUCHED = 1 << 4,     /* WRITE: a touch (SETATTR of times) ended it */
	SF_SETTLE = 1 << 5,      /* PENDING: soon after the client's own write */
	SF_BURST = 1 << 6,       /* PENDING: one of a user's GETATTR burst (ls -l) */
	SF_TRUNCATED = 1 << 7,   /* WRITE: a truncate (SETATTR of the size) was part of it */
};

struct list {
	uint32_t head; /* most recent */
	uint32_t tail; /* oldest */
};

/* One session: 96 bytes. */
struct sess {
	uint32_t file;   /* key: index into files */
	uint32_t client; /* key: index into clients */
	uint32_t uid;    /* key: user (0 for SK_HIST) */
	uint8_t kind;    /* key: SK_* */
	uint8_t flags;   /* SF_* */
	uint8_t vers;    /* NFS version of the first op */
	uint8_t is_used; /* on a list (not free) */
	union {
		uint32_t gid;      /* opens: group of the first op */
		uint32_t attr_sig; /* SK_HIST: the attributes the client saw last (attr_sig()) */
	};
	uint32_t hnext; /* hash chain */
	uint32_t prev;  /* list links (ACTIVE, PENDING, HIST or free) */
	uint32_t next;
	uint32_t fnext;   /* next session of the same file */
	uint32_t fprev;   /* previous one; NIL: the file's first */
	uint32_t ops;     /* operations in the session */
	uint64_t open_ns; /* first op's call; SK_HIST: unused */
	uint64_t last_ns; /* last op's reply (call without a reply); SK_HIST: last read;
			     SK_PENDING: the first op's (or the held GETATTR's), which
			     confirm_ns runs from */
	union {
		struct {
			uint64_t transferred; /* bytes moved */
			uint64_t seq_bytes;   /* bytes at the offset the previous op ended */
		};
		/* SK_PENDING: a GETATTR after the entry's GETATTR and ACCESS, held until
		 * READs say it is the same open (libnfs's fstat) or none come and it is
		 * the next one; 0: none. pending_end() zeroes them for the open. */
		struct {
			uint64_t held_ns;     /* its call */
			uint64_t held_end_ns; /* its reply */
		};
		/* SK_HIST: users (uid + 1, 0 empty) whose access rights the client has
		 * cached for the file, as Linux keeps one ACCESS answer per credential
		 * until the attributes show a change. */
		uint32_t acc_uid[4];
	};
	union {
		uint64_t next_off; /* where the previous op ended; SK_HIST: last write */
		uint64_t end_ns;   /* SK_PENDING: the latest reply of its ops (GETATTR,
				      ACCESS), where the open ends */
	};
	uint64_t size;     /* the file's size as this open's last op saw it */
};

/* One file: 112 bytes. */
struct file {
	struct th_addr server; /* key ... */
	uint8_t fh[TH_SESS_FH_MAX];
	uint8_t fh_len; /* ... 0: free entry */
	uint8_t pad[3];
	uint32_t sig;   /* attr_sig() of the last attributes seen, 0: none */
	uint32_t hnext; /* hash chain */
	uint32_t prev;  /* LRU list */
	uint32_t next;
	uint32_t sess_head; /* its sessions, by fnext */
	uint64_t size;      /* last size seen (attributes after) */
};

/* One client: 144 bytes. */
struct client {
	struct th_addr addr; /* key */
	uint32_t hnext;      /* hash chain */
	uint32_t refs;       /* sessions that point here; 0: on the idle list */
	uint32_t prev;       /* idle list */
	uint32_t next;
	uint64_t listing_from_ns; /* GETATTRs in [from, until] are listing phantoms */
	uint64_t listing_until_ns;
	uint64_t listing_prev_from_ns; /* the window before: its GETATTRs may still wait */
	uint64_t listing_prev_until_ns;
	uint64_t burst_start_ns; /* current LOOKUP burst: first ... */
	uint64_t burst_last_ns;  /* ... and latest LOOKUP */
	uint32_t burst_count;    /* LOOKUPs in it */
	uint32_t is_used;
	uint64_t ga_start_ns; /* current GETATTR burst (ls -l): first ... */
	uint64_t ga_last_ns;  /* ... and latest GETATTR on a regular file */
	uint64_t ga_fileid;   /* the latest one's file */
	uint64_t ga_from_ns;  /* GETATTRs in [from, until] are part of a burst */
	uint64_t ga_until_ns;
	uint32_t ga_uid;    /* the burst's user */
	uint32_t ga_count;  /* GETATTRs in it */
	uint32_t burst_dir; /* the LOOKUP burst's directory (hash of its handle) */
	uint32_t pad;
};

struct th_sess_table {
	struct th_sess_config cfg;
	th_sess_record_cb record_cb;
	th_sess_name_cb name_cb;
	void *ctx;
	struct th_sess_counters ctr;
	uint64_t now_ns; /* latest time seen (op or tick) */

	struct sess *sess;
	uint32_t *sess_bucket;
	uint32_t sess_free; /* free list by next */
	struct list active;
	struct list pending;
	struct list hist;

	struct file *files;
	uint32_t *file_bucket;
	uint32_t file_free;
	struct list file_lru;
	uint32_t pin_file; /* file being worked on: never freed or evicted now */

	struct client *clients;
	uint32_t *client_bucket;
	uint32_t clients_used; /* entries ever handed out */
	struct list client_idle;

	struct names *names; /* NULL when names are off */
	size_t memory;
};

/* @p ns a step of @p back_ns earlier; 0 (none) stays 0, and a time before the epoch is 1. */
static inline uint64_t
earlier(uint64_t ns, uint64_t back_ns)
{
	if (ns == 0)
		return 0;
	return ns > back_ns ? ns - back_ns : 1;
}

/*
 * Whether @p name can name an entry of a directory. "." and ".." name the directory and its
 * parent, not an entry (as names they would make a path walk go round in circles), and a '/'
 * is in no component name.
 */
static inline bool
is_component(const void *name, unsigned int name_len)
{
	const uint8_t *b = name;

	if (name_len == 0 || memchr(b, '/', name_len) != NULL)
		return false;
	return !(b[0] == '.' && (name_len == 1 || (name_len == 2 && b[1] == '.')));
}

/* names.c: the handle-to-name map. */
struct names;
struct names *names_create(uint32_t entries, size_t *memory);
void names_free(struct names *n);
/* A name appears: (dir, name) -> fh from at, the file's st_mode (0 unknown). */
void names_add(struct th_sess_table *t, const struct th_addr *server, const uint8_t *dir,
	unsigned int dir_len, const char *name, unsigned int name_len, const uint8_t *fh,
	unsigned int fh_len, uint32_t mode, uint64_t at);
/* A name stops being valid at @at; its handle is copied to fh and its mode to
 * *mode (when not NULL). @return the handle length, 0 when the name was not known. */
unsigned int names_end(struct th_sess_table *t, const struct th_addr *server, const uint8_t *dir,
	unsigned int dir_len, const char *name, unsigned int name_len, uint64_t at, uint8_t *fh,
	uint32_t *mode);
/* The capture's clock went back @p back_ns: every name still valid starts that much
 * earlier, so that it holds on both sides of the step (its end comes after it). */
void names_clock_back(struct th_sess_table *t, uint64_t back_ns);
/* Emit every name still valid (to_ns 0) and forget them. */
void names_flush(struct th_sess_table *t);

#endif /* SESSION_PRIVATE_H */
