/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_NFS_H
#define TH_NFS_H

/**
 * @file
 * Decoding of the ONC RPC programs a tracer follows: NFS v2 (RFC 1094),
 * NFS v3 (RFC 1813), MOUNT v1/v3, portmap v2 (RFC 1833), and recognition of
 * NFSv4 COMPOUNDs (RFC 7530/8881), which are counted, not decoded, for now.
 *
 * Input is the procedure's argument or result bytes, i.e. what follows the
 * RPC call header (after the verifier) or the accepted reply header (after
 * accept_stat). The buffer may be a prefix of the record: READ/WRITE data
 * and long directory listings are not kept. Decoders fill what the prefix
 * holds and say so with TH_NFS_SHORT.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** RPC program numbers. */
enum th_rpc_prog {
	TH_PROG_PORTMAP = 100000,
	TH_PROG_NFS = 100003,
	TH_PROG_MOUNT = 100005,
	TH_PROG_NLM = 100021,
	TH_PROG_NFSACL = 100227,
};

/** NFSv3 procedures (RFC 1813). */
#define TH_NFS3_PROC_LIST(X)                                                                       \
	X(NULL, 0)                                                                                 \
	X(GETATTR, 1)                                                                              \
	X(SETATTR, 2) X(LOOKUP, 3) X(ACCESS, 4) X(READLINK, 5) X(READ, 6) X(WRITE, 7) X(CREATE, 8) \
		X(MKDIR, 9) X(SYMLINK, 10) X(MKNOD, 11) X(REMOVE, 12) X(RMDIR, 13) X(RENAME, 14)   \
			X(LINK, 15) X(READDIR, 16) X(READDIRPLUS, 17) X(FSSTAT, 18) X(FSINFO, 19)  \
				X(PATHCONF, 20) X(COMMIT, 21)

enum th_nfs3_proc {
#define TH_NFS3_X(name, num) TH_NFS3_##name = num,
	TH_NFS3_PROC_LIST(TH_NFS3_X)
#undef TH_NFS3_X
		TH_NFS3__PROC_COUNT
};

/** NFSv2 procedures (RFC 1094). */
#define TH_NFS2_PROC_LIST(X)                                                                       \
	X(NULL, 0)                                                                                 \
	X(GETATTR, 1)                                                                              \
	X(SETATTR, 2) X(ROOT, 3) X(LOOKUP, 4) X(READLINK, 5) X(READ, 6) X(WRITECACHE, 7)           \
		X(WRITE, 8) X(CREATE, 9) X(REMOVE, 10) X(RENAME, 11) X(LINK, 12) X(SYMLINK, 13)    \
			X(MKDIR, 14) X(RMDIR, 15) X(READDIR, 16) X(STATFS, 17)

enum th_nfs2_proc {
#define TH_NFS2_X(name, num) TH_NFS2_##name = num,
	TH_NFS2_PROC_LIST(TH_NFS2_X)
#undef TH_NFS2_X
		TH_NFS2__PROC_COUNT
};

/** MOUNT procedures (v1 and v3 share numbers). */
enum th_mount_proc {
	TH_MOUNT_NULL = 0,
	TH_MOUNT_MNT = 1,
	TH_MOUNT_DUMP = 2,
	TH_MOUNT_UMNT = 3,
	TH_MOUNT_UMNTALL = 4,
	TH_MOUNT_EXPORT = 5,
};

/** Portmap v2 procedures. */
enum th_pmap_proc {
	TH_PMAP_NULL = 0,
	TH_PMAP_SET = 1,
	TH_PMAP_UNSET = 2,
	TH_PMAP_GETPORT = 3,
	TH_PMAP_DUMP = 4,
	TH_PMAP_CALLIT = 5,
};

/** Decoder outcomes. */
enum th_nfs_status {
	TH_NFS_OK = 0,       /**< every field the procedure defines that we keep was read */
	TH_NFS_SHORT,        /**< the buffer ended early; fields read so far are valid */
	TH_NFS_MALFORMED,    /**< a value out of range (length, discriminant) */
	TH_NFS_UNKNOWN_PROC, /**< procedure number not defined for the program/version */
	TH_NFS_UNKNOWN_PROG, /**< program or version this decoder does not handle */
	TH_NFS_V4_COMPOUND,  /**< an NFSv4 COMPOUND: recognised and counted, not decoded */
};

#define TH_NFS_FH_MAX 64    /**< NFSv3 limit; a v2 handle is 32 bytes */
#define TH_NFS_NAME_MAX 255 /**< longer names are cut and flagged */

/** A file handle as the server sent it. */
struct th_nfs_fh {
	uint8_t len;                 /**< bytes in data; 0 when absent */
	uint8_t data[TH_NFS_FH_MAX]; /**< handle bytes */
};

/** A component name (not NUL-terminated in the wire, NUL-terminated here). */
struct th_nfs_name {
	uint16_t len;                /**< bytes kept, without the NUL */
	bool is_cut;                 /**< the wire name was longer than TH_NFS_NAME_MAX */
	bool is_present;             /**< read from the wire, even when empty (len 0) */
	char s[TH_NFS_NAME_MAX + 1]; /**< name, NUL-terminated */
};

/** File types (ftype3; v2 values are mapped to these). */
enum th_nfs_ftype {
	TH_NFS_NON = 0,
	TH_NFS_REG = 1,
	TH_NFS_DIR = 2,
	TH_NFS_BLK = 3,
	TH_NFS_CHR = 4,
	TH_NFS_LNK = 5,
	TH_NFS_SOCK = 6,
	TH_NFS_FIFO = 7,
};

/** The attributes tracing needs (fattr3 / fattr subset). */
struct th_nfs_attr {
	bool is_present;   /**< attributes_follow / always for v2 */
	uint32_t type;     /**< enum th_nfs_ftype */
	uint32_t mode;     /**< permission bits */
	uint32_t nlink;    /**< link count */
	uint32_t uid;      /**< owner */
	uint32_t gid;      /**< group */
	uint64_t size;     /**< bytes */
	uint64_t fileid;   /**< inode number */
	uint64_t mtime_ns; /**< modification time, ns since the epoch */
	uint64_t ctime_ns; /**< change time, ns since the epoch */
};

/** wcc_attr: what the file looked like before the operation. */
struct th_nfs_pre_attr {
	bool is_present; /**< attributes_follow */
	uint64_t size;   /**< bytes */
	uint64_t mtime_ns;
	uint64_t ctime_ns;
};

/**
 * Fields a cut record did not reach, in th_nfs_call.missing. Handles,
 * names and attributes need no bit: they are kept whole or not at all
 * (length 0, is_present false).
 */
enum {
	TH_NFS_MISSING_OFFSET = 1 << 0,
	TH_NFS_MISSING_COUNT = 1 << 1,
	TH_NFS_MISSING_STABLE = 1 << 2,
	TH_NFS_MISSING_ACCESS = 1 << 3,
	TH_NFS_MISSING_ALL = 0x0f,
};

/** Arguments of a call, the fields tracing keeps. */
struct th_nfs_call {
	struct th_nfs_fh fh;      /**< object, or directory for name operations */
	struct th_nfs_name name;  /**< LOOKUP/CREATE/MKDIR/SYMLINK/MKNOD/REMOVE/RMDIR name,
				     RENAME from-name, LINK new name, MNT dirpath */
	struct th_nfs_fh fh2;     /**< RENAME to-dir, LINK target dir */
	struct th_nfs_name name2; /**< RENAME to-name, SYMLINK target path */
	uint64_t offset;          /**< READ/WRITE/COMMIT/READDIR cookie */
	uint32_t count;           /**< READ/WRITE/COMMIT/READDIR count */
	uint32_t stable;          /**< WRITE stable_how; CREATE createmode */
	uint32_t access;          /**< ACCESS mask */
	bool has_set_size;        /**< SETATTR/CREATE sets the size (truncate) */
	uint64_t set_size;        /**< the size set */
	bool has_set_mode;        /**< SETATTR/CREATE/MKDIR set the mode */
	uint32_t set_mode;        /**< the mode set */
	uint32_t pmap_prog;       /**< portmap GETPORT/SET: program */
	uint32_t pmap_vers;       /**< portmap GETPORT/SET: version */
	uint32_t pmap_prot;       /**< portmap GETPORT/SET: IPPROTO_TCP/UDP */
	uint32_t v4_minor;        /**< NFSv4 COMPOUND minorversion */
	uint32_t v4_ops;          /**< NFSv4 COMPOUND operation count */
	uint8_t missing;          /**< TH_NFS_MISSING_*: scalars the record ended before */
};

/** Results of a reply, the fields tracing keeps. */
struct th_nfs_reply {
	uint32_t status;             /**< nfsstat3 / nfsstat / mountstat3; 0 is success */
	struct th_nfs_fh fh;         /**< LOOKUP/CREATE/MKDIR/SYMLINK/MKNOD result, MNT root */
	struct th_nfs_attr attr;     /**< object attributes after (obj / post_op / wcc after) */
	struct th_nfs_pre_attr pre;  /**< wcc before */
	struct th_nfs_attr dir_attr; /**< LOOKUP directory attributes, or wcc after of the
					second directory for RENAME/LINK */
	uint32_t count;              /**< READ/WRITE bytes done; READDIR entries seen */
	bool eof;                    /**< READ/READDIR eof */
	bool is_count_partial;       /**< READDIR(PLUS) with status 0: the body ended (or
					broke) before the end of its entry list, so count
					is of the entries before that point, not all */
	uint32_t committed;          /**< WRITE committed stable_how */
	uint32_t port;               /**< portmap GETPORT result */
	uint32_t v4_ops;             /**< NFSv4 COMPOUND result operation count */
	bool is_status_missing;      /**< the record ended before the status word */
};

/**
 * Decode the arguments of a call.
 * @param prog, vers, proc from the RPC call header
 * @param body arguments (after the verifier), possibly a prefix
 * @param size bytes in body
 * @param out  zero it before calling; filled as far as decoding went
 */
enum th_nfs_status th_nfs_decode_call(uint32_t prog, uint32_t vers, uint32_t proc,
	const uint8_t *body, size_t size, struct th_nfs_call *out);

/**
 * Decode the results of an accepted, successful (accept_stat SUCCESS)
 * reply. Procedure and version come from the matching call.
 */
enum th_nfs_status th_nfs_decode_reply(uint32_t prog, uint32_t vers, uint32_t proc,
	const uint8_t *body, size_t size, struct th_nfs_reply *out);

/**
 * One entry of an NFSv3 READDIRPLUS reply that carried a handle
 * (name_handle present): where its name and handle lie in the body, valid
 * during the callback only. The name is as the wire has it (not cut, not
 * NUL-terminated, up to 4096 bytes).
 */
struct th_nfs_dirent {
	uint64_t fileid;     /**< the entry's inode number */
	const uint8_t *name; /**< name bytes in the body */
	uint32_t name_len;   /**< bytes at name */
	const uint8_t *fh;   /**< handle bytes in the body */
	uint8_t fh_len;      /**< bytes at fh, 1 to TH_NFS_FH_MAX */
	struct th_nfs_attr attr; /**< name_attributes, when the entry carried them */
};

/** Receives each whole entry with a handle, in wire order. */
typedef void (*th_nfs_dirent_cb)(void *ctx, const struct th_nfs_dirent *e);

/**
 * th_nfs_decode_reply(), and for an NFSv3 READDIRPLUS reply with status 0,
 * @p cb for every entry the body holds whole and that carries a name and a
 * handle, in the same walk that counts the entries (reply->count counts all
 * whole entries, with or without a handle). An entry cut by the end of the
 * body, or malformed (a length or discriminant out of range), is not handed
 * on; nor is any entry after it. @p cb may be NULL (then this is
 * th_nfs_decode_reply()); other procedures never call it.
 */
enum th_nfs_status th_nfs_decode_reply_entries(uint32_t prog, uint32_t vers, uint32_t proc,
	const uint8_t *body, size_t size, struct th_nfs_reply *out, th_nfs_dirent_cb cb, void *ctx);

/** True when this decoder knows the program and version. */
bool th_nfs_is_known(uint32_t prog, uint32_t vers);

/** Procedure name ("READ", "MNT", "GETPORT", "COMPOUND"), or NULL when unknown. */
const char *th_nfs_proc_name(uint32_t prog, uint32_t vers, uint32_t proc);

/** Short program name ("NFS", "MOUNT", "PORTMAP", "NLM", "NFSACL"), or NULL. */
const char *th_nfs_prog_name(uint32_t prog);

/** Room for th_nfs_label()'s longest label and a NUL. */
#define TH_NFS_LABEL_MAX 48

/**
 * PROGRAM PROC as every output names a procedure: "NFS3 READ", "MOUNT3 MNT",
 * "PORTMAP4 GETADDR"; an unknown program by number and version ("100024.1"),
 * an unknown procedure by number ("100024.1 0", "NFS3 22"). Writes at most
 * TH_NFS_LABEL_MAX - 1 bytes at @p p, without a NUL. @return the end.
 */
char *th_nfs_label(char *p, uint32_t prog, uint32_t vers, uint32_t proc);

/**
 * Name of a procedure result status: nfsstat3 / nfsstat names without the
 * prefix ("OK", "NOENT", "STALE"), mountstat3 alike. NULL when unknown.
 */
const char *th_nfs_status_name(uint32_t prog, uint32_t vers, uint32_t status);

/**
 * An object's type and permission bits as one st_mode (S_IFREG | 0644, the
 * values POSIX systems share): what the name map keeps. 0 when @p a is not
 * present or has no type.
 */
uint32_t th_nfs_st_mode(const struct th_nfs_attr *a);

/** Room for th_nfs_mode_text()'s text and a NUL. */
#define TH_NFS_MODE_TEXT 11

/**
 * An st_mode as ls -l writes it: a type letter, then rwx three times with
 * s/S and t/T ("-rw-r--r--", "drwxrwxrwt"); "-" for a mode without a type.
 */
void th_nfs_mode_text(uint32_t st_mode, char out[TH_NFS_MODE_TEXT]);

/** Bytes th_nfs_name_text() may write for a name of @p len bytes, its NUL included. */
#define TH_NFS_NAME_TEXT(len) (4 * (len) + 1)

/**
 * A name (or a path) as the names file writes it: bytes outside '!'..'~', and
 * '|' and the backslash, become "\xHH", so a field holds no blank, no separator
 * and no control byte, and reads back unambiguously. Stops before an escape
 * that would not fit whole.
 * @return the text's length, NUL-terminated in @p out (@p size > 0).
 */
size_t th_nfs_name_text(const char *name, size_t len, char *out, size_t size);

/** CRC-32 (IEEE 802.3, as zlib and tshark's nfs.fh.hash) of the handle bytes. */
uint32_t th_nfs_fh_hash(const struct th_nfs_fh *fh);

/** The same CRC-32 of any @p len bytes (a handle kept elsewhere, or its pseudonym). */
uint32_t th_nfs_crc32(const uint8_t *p, size_t len);

#endif /* TH_NFS_H */
