/*
 * audit-pack.h - the codec of packed audit records, the data of a row of
 * the audit_pack table (format in audit-pack.c).  Pure: no sqlite, no
 * I/O; runner/core/store.c binds the encoded bytes and hands the decoder
 * what it reads back.  Encoding keeps memory between calls in a struct
 * vg_audit_packer (zeroed to start, vg_audit_packer_release to free);
 * decoding fills a struct vg_audit_unpacked the caller releases.
 */
#ifndef VG_AUDIT_PACK_H
#define VG_AUDIT_PACK_H

#include <stddef.h>

#include "common/buf.h"
#include "runner/core/store.h"

/* One slot of vg_audit_pack_encode's tables: an address, what it was
 * given (a string's index, or where a record's fields' encoding is) and
 * the generation (the call) that filled it. */
struct vg_audit_pack_slot {
	const void	*key;
	unsigned	 val;
	unsigned	 gen;
};

/* Memory of vg_audit_pack_encode kept between calls (a writer of many
 * packed rows would otherwise map, fault in and unmap it for each row): two
 * open-addressing tables by address, of the strings stored so far
 * (str) and of the records encoded so far (rec, their fields' encoding
 * in fenc).  A slot is used when its generation is the current call's
 * (gen), so no table is cleared between rows; each grows to twice
 * the distinct strings or records of the largest row so far. */
struct vg_audit_packer {
	struct vg_audit_pack_slot *str;
	size_t			  cap;
	struct vg_audit_pack_slot *rec;
	size_t			  rcap;
	unsigned		  gen;
	struct vg_buf		  fenc;
	struct vg_buf		  body;
	struct vg_buf		  data;
};

/* One unpacked row: its strings NUL-terminated in text, its records
 * (their string fields point into text). */
struct vg_audit_unpacked {
	char			*text;
	const char		**str;
	struct vg_audit_rec	*rec;
	size_t			 n;
};

/* A decision's time as given to vg_store_audit_many: 0 (or less) means
 * now. */
double	vg_audit_pack_time(double t, double now);

/* Encodes recs[0..n) at times[0..n) (each through vg_audit_pack_time
 * with now, relative to first) into pk->data; the row's bytes start at
 * *off and end at pk->data.len.  They stay pk's, valid until the next
 * call.  Does not fail (allocation failure aborts). */
void	vg_audit_pack_encode(struct vg_audit_packer *pk,
	    const struct vg_audit_rec *const *recs, const double *times,
	    size_t n, double first, double now, size_t *off);

/* Frees the memory of pk (not pk itself). */
void	vg_audit_packer_release(struct vg_audit_packer *pk);

/* Decodes data (len bytes of any content), a row of n records whose
 * first time is first, into *pk: 0, or -1 when the bytes are not such a
 * row (pk then empty).  Safe on arbitrary input. */
int	vg_audit_pack_decode(const void *data, size_t len, double first,
	    long long n, struct vg_audit_unpacked *pk);

/* Releases an unpacked row (pk is left empty, ready for reuse). */
void	vg_audit_unpacked_release(struct vg_audit_unpacked *pk);

#endif
