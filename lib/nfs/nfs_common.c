/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Entry points: dispatch on program and version, names of programs,
 * procedures and statuses, and the file handle hash.
 */

#include "th_nfs.h"

#include <string.h>

#include "nfs_private.h"

enum th_nfs_status
th_nfs_decode_call(uint32_t prog, uint32_t vers, uint32_t proc, const uint8_t *body, size_t size,
	struct th_nfs_call *out)
{
	struct nfs_dec d;

	if (!th_nfs_is_known(prog, vers))
		return TH_NFS_UNKNOWN_PROG;
	nfs_dec_init(&d, body, size);
	/* Every scalar is missing until its decoder reads it whole. */
	out->missing = TH_NFS_MISSING_ALL;
	switch (prog) {
	case TH_PROG_NFS:
		if (vers == 3)
			return th_nfs__v3_call(proc, &d, out);
		if (vers == 2)
			return th_nfs__v2_call(proc, &d, out);
		return th_nfs__v4_call(proc, &d, out);
	case TH_PROG_MOUNT:
		return th_nfs__mount_call(vers, proc, &d, out);
	default:
		return th_nfs__pmap_call(vers, proc, &d, out);
	}
}

enum th_nfs_status
th_nfs_decode_reply(uint32_t prog, uint32_t vers, uint32_t proc, const uint8_t *body, size_t size,
	struct th_nfs_reply *out)
{
	return th_nfs_decode_reply_entries(prog, vers, proc, body, size, out, NULL, NULL);
}

enum th_nfs_status
th_nfs_decode_reply_entries(uint32_t prog, uint32_t vers, uint32_t proc, const uint8_t *body,
	size_t size, struct th_nfs_reply *out, th_nfs_dirent_cb cb, void *ctx)
{
	enum th_nfs_status st;
	struct nfs_dec d;

	if (!th_nfs_is_known(prog, vers))
		return TH_NFS_UNKNOWN_PROG;
	nfs_dec_init(&d, body, size);
	d.dirent = cb;
	d.dirent_ctx = ctx;
	switch (prog) {
	case TH_PROG_NFS:
		if (vers == 3)
			st = th_nfs__v3_reply(proc, &d, out);
		else if (vers == 2)
			st = th_nfs__v2_reply(proc, &d, out);
		else
			st = th_nfs__v4_reply(proc, &d, out);
		break;
	case TH_PROG_MOUNT:
		st = th_nfs__mount_reply(vers, proc, &d, out);
		break;
	default:
		st = th_nfs__pmap_reply(vers, proc, &d, out);
		break;
	}
	/* Results that open with a status word, cut before it: the status is unknown, not 0. */
	out->is_status_missing = st == TH_NFS_SHORT && size < 4 && prog != TH_PROG_PORTMAP;
	return st;
}

bool
th_nfs_is_known(uint32_t prog, uint32_t vers)
{
	switch (prog) {
	case TH_PROG_NFS:
		return vers >= 2 && vers <= 4;
	case TH_PROG_MOUNT:
		/* v2 is v1 plus PATHCONF, which is not decoded (UNKNOWN_PROC). */
		return vers >= 1 && vers <= 3;
	case TH_PROG_PORTMAP:
		/* v2 is portmap; v3 and v4 are rpcbind, which Linux clients ask first. */
		return vers >= 2 && vers <= 4;
	default:
		return false;
	}
}

#define NAME_ENTRY(name, num) [num] = #name,

static const char *const nfs3_names[] = {TH_NFS3_PROC_LIST(NAME_ENTRY)};
static const char *const nfs2_names[] = {TH_NFS2_PROC_LIST(NAME_ENTRY)};

#define MOUNT_PROC_LIST(X) X(NULL, 0) X(MNT, 1) X(DUMP, 2) X(UMNT, 3) X(UMNTALL, 4) X(EXPORT, 5)
static const char *const mount_names[] = {MOUNT_PROC_LIST(NAME_ENTRY)};

#define PMAP_PROC_LIST(X) X(NULL, 0) X(SET, 1) X(UNSET, 2) X(GETPORT, 3) X(DUMP, 4) X(CALLIT, 5)
static const char *const pmap_names[] = {PMAP_PROC_LIST(NAME_ENTRY)};

/* rpcbind v4; v3 stops at TADDR2UADDR and calls procedure 5 CALLIT. */
#define RPCB_PROC_LIST(X)                                                                          \
	X(NULL, 0)                                                                                 \
	X(SET, 1)                                                                                  \
	X(UNSET, 2)                                                                                \
	X(GETADDR, 3) X(DUMP, 4) X(BCAST, 5) X(GETTIME, 6) X(UADDR2TADDR, 7) X(TADDR2UADDR, 8)     \
		X(GETVERSADDR, 9) X(INDIRECT, 10) X(GETADDRLIST, 11) X(GETSTAT, 12)
static const char *const rpcb_names[] = {RPCB_PROC_LIST(NAME_ENTRY)};
#define RPCB3_PROC_COUNT 9

#define NFS4_PROC_LIST(X) X(NULL, 0) X(COMPOUND, 1)
static const char *const nfs4_names[] = {NFS4_PROC_LIST(NAME_ENTRY)};

#define LOOKUP_NAME(table, i) ((i) < sizeof(table) / sizeof((table)[0]) ? (table)[i] : NULL)

const char *
th_nfs_proc_name(uint32_t prog, uint32_t vers, uint32_t proc)
{
	if (!th_nfs_is_known(prog, vers))
		return NULL;
	switch (prog) {
	case TH_PROG_NFS:
		if (vers == 3)
			return LOOKUP_NAME(nfs3_names, proc);
		if (vers == 2)
			return LOOKUP_NAME(nfs2_names, proc);
		return LOOKUP_NAME(nfs4_names, proc);
	case TH_PROG_MOUNT:
		return LOOKUP_NAME(mount_names, proc);
	default:
		if (vers == 2)
			return LOOKUP_NAME(pmap_names, proc);
		if (vers == 3 && proc == TH_PMAP_CALLIT)
			return "CALLIT";
		if (vers == 3 && proc >= RPCB3_PROC_COUNT)
			return NULL;
		return LOOKUP_NAME(rpcb_names, proc);
	}
}

static char *
put_name(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

static char *
put_decimal(char *p, uint32_t v)
{
	char digits[10];
	int n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = digits[--n];
	return p;
}

char *
th_nfs_label(char *p, uint32_t prog, uint32_t vers, uint32_t proc)
{
	const char *prog_name = th_nfs_prog_name(prog);
	const char *proc_name = th_nfs_proc_name(prog, vers, proc);

	if (prog_name != NULL) {
		p = put_name(p, prog_name);
	} else {
		p = put_decimal(p, prog);
		*p++ = '.';
	}
	p = put_decimal(p, vers);
	*p++ = ' ';
	return proc_name != NULL ? put_name(p, proc_name) : put_decimal(p, proc);
}

const char *
th_nfs_prog_name(uint32_t prog)
{
	switch (prog) {
	case TH_PROG_PORTMAP:
		return "PORTMAP";
	case TH_PROG_NFS:
		return "NFS";
	case TH_PROG_MOUNT:
		return "MOUNT";
	case TH_PROG_NLM:
		return "NLM";
	case TH_PROG_NFSACL:
		return "NFSACL";
	default:
		return NULL;
	}
}

/* nfsstat3 (RFC 1813 section 2.6); NFSv2's nfsstat uses the same numbers. */
/* clang-format off */
#define NFSSTAT3_LIST(X)                                                                          \
	X(OK, 0) X(PERM, 1) X(NOENT, 2) X(IO, 5) X(NXIO, 6) X(ACCES, 13) X(EXIST, 17)             \
	X(XDEV, 18) X(NODEV, 19) X(NOTDIR, 20) X(ISDIR, 21) X(INVAL, 22) X(FBIG, 27)              \
	X(NOSPC, 28) X(ROFS, 30) X(MLINK, 31) X(NAMETOOLONG, 63) X(NOTEMPTY, 66) X(DQUOT, 69)     \
	X(STALE, 70) X(REMOTE, 71) X(BADHANDLE, 10001) X(NOT_SYNC, 10002) X(BAD_COOKIE, 10003)   \
	X(NOTSUPP, 10004) X(TOOSMALL, 10005) X(SERVERFAULT, 10006) X(BADTYPE, 10007)              \
	X(JUKEBOX, 10008)

/* mountstat3 (RFC 1813 appendix I); MOUNT v1 returns UNIX errors with the same numbers. */
#define MOUNTSTAT3_LIST(X)                                                                        \
	X(OK, 0) X(PERM, 1) X(NOENT, 2) X(IO, 5) X(ACCES, 13) X(NOTDIR, 20) X(INVAL, 22)          \
	X(NAMETOOLONG, 63) X(NOTSUPP, 10004) X(SERVERFAULT, 10006)
/* clang-format on */

#define CASE_NAME(name, num)                                                                       \
	case num:                                                                                  \
		return #name;

static const char *
nfsstat_name(uint32_t vers, uint32_t status)
{
	switch (status) {
		NFSSTAT3_LIST(CASE_NAME)
	case 99: /* NFSERR_WFLUSH, v2 only */
		return vers == 2 ? "WFLUSH" : NULL;
	default:
		return NULL;
	}
}

static const char *
mountstat_name(uint32_t status)
{
	switch (status) {
		MOUNTSTAT3_LIST(CASE_NAME)
	default:
		return NULL;
	}
}

const char *
th_nfs_status_name(uint32_t prog, uint32_t vers, uint32_t status)
{
	if (prog == TH_PROG_NFS && (vers == 2 || vers == 3))
		return nfsstat_name(vers, status);
	if (prog == TH_PROG_MOUNT && vers >= 1 && vers <= 3)
		return mountstat_name(status);
	return NULL;
}

/*
 * CRC-32 (reflected, polynomial 0xEDB88320), eight bytes a step ("slicing
 * by 8": a byte at a time was a dependent table load per byte, 13% of a
 * decode lcore's time with text lines on). Table 0 is built by the
 * preprocessor; the seven others, each one more zero byte on, before main()
 * by a constructor, so no lcore initialises anything at run time.
 */
#define CRC_POLY 0xEDB88320u
#define CRC_STEP(c) (((c) >> 1) ^ (CRC_POLY & (0u - ((c)&1u))))
#define CRC_STEP2(c) CRC_STEP(CRC_STEP(c))
#define CRC_STEP8(c) CRC_STEP2(CRC_STEP2(CRC_STEP2(CRC_STEP2(c))))
#define CRC_ENTRY(i) CRC_STEP8((uint32_t)(i)),
#define CRC_4(i) CRC_ENTRY(i) CRC_ENTRY(i + 1) CRC_ENTRY(i + 2) CRC_ENTRY(i + 3)
#define CRC_16(i) CRC_4(i) CRC_4(i + 4) CRC_4(i + 8) CRC_4(i + 12)
#define CRC_64(i) CRC_16(i) CRC_16(i + 16) CRC_16(i + 32) CRC_16(i + 48)

static uint32_t crc_table[8][256] = {{CRC_64(0) CRC_64(64) CRC_64(128) CRC_64(192)}};

__attribute__((constructor)) static void
crc_tables_init(void)
{
	unsigned int k, i;

	for (k = 1; k < 8; k++)
		for (i = 0; i < 256; i++)
			crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^
					  crc_table[0][crc_table[k - 1][i] & 0xff];
}

uint32_t
th_nfs_fh_hash(const struct th_nfs_fh *fh)
{
	return th_nfs_crc32(fh->data, fh->len <= TH_NFS_FH_MAX ? fh->len : TH_NFS_FH_MAX);
}

uint32_t
th_nfs_crc32(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xffffffffu, lo, hi;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		lo = th_le_get32(p + i) ^ crc;
		hi = th_le_get32(p + i + 4);
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
	}
	for (; i < len; i++)
		crc = crc_table[0][(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

/* NFS file types as st_mode's type bits, and the letter ls -l gives each. */
static const struct {
	uint32_t bits;
	char letter;
} file_types[] = {
	[TH_NFS_REG] = {0100000, '-'},
	[TH_NFS_DIR] = {0040000, 'd'},
	[TH_NFS_BLK] = {0060000, 'b'},
	[TH_NFS_CHR] = {0020000, 'c'},
	[TH_NFS_LNK] = {0120000, 'l'},
	[TH_NFS_SOCK] = {0140000, 's'},
	[TH_NFS_FIFO] = {0010000, 'p'},
};
#define FILE_TYPES (sizeof(file_types) / sizeof(file_types[0]))

uint32_t
th_nfs_st_mode(const struct th_nfs_attr *a)
{
	if (!a->is_present || a->type >= FILE_TYPES || file_types[a->type].bits == 0)
		return 0;
	return file_types[a->type].bits | (a->mode & 07777);
}

void
th_nfs_mode_text(uint32_t st_mode, char out[TH_NFS_MODE_TEXT])
{
	static const char rwx[] = "rwxrwxrwx";
	size_t t = TH_NFS_REG;

	while (t < FILE_TYPES && file_types[t].bits != (st_mode & 0170000))
		t++;
	if (t == FILE_TYPES) {
		strcpy(out, "-");
		return;
	}
	out[0] = file_types[t].letter;
	for (int i = 0; i < 9; i++)
		out[1 + i] = st_mode & (0400u >> i) ? rwx[i] : '-';
	if (st_mode & 04000)
		out[3] = out[3] == 'x' ? 's' : 'S';
	if (st_mode & 02000)
		out[6] = out[6] == 'x' ? 's' : 'S';
	if (st_mode & 01000)
		out[9] = out[9] == 'x' ? 't' : 'T';
	out[10] = '\0';
}

size_t
th_nfs_name_text(const char *name, size_t len, char *out, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		bool is_plain = c >= 0x21 && c <= 0x7e && c != '|' && c != '\\';

		if (o + (is_plain ? 1 : 4) >= size)
			break;
		if (is_plain) {
			out[o++] = (char)c;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = digits[c >> 4];
		out[o++] = digits[c & 15];
	}
	out[o] = '\0';
	return o;
}
