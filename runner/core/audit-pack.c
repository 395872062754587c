/*
 * audit-pack.c - the codec of packed audit records (the audit_pack table
 * of runner/core/store.c): vg_store_audit_many stores a group of
 * decisions as one row, since a row per decision costs more than judging
 * the command.  The row holds the group's first and last time, its run
 * id (a group never mixes runs), its count, and data:
 *
 *   varint nstr, then nstr strings (varint length, bytes);
 *   varint n, then n records: zigzag varint microseconds since first,
 *   zigzag varint task, and for run_id, mode, command, verdict,
 *   category, rule, reason a varint: 0 for NULL, k + 1 for string k.
 *
 * Strings are shared by address: records whose fields point to the same
 * text (a repeated command) store it once.  Readers unpack rows in
 * vg_store_audit_each, merged with the one-row-per-decision table by time.
 *
 * Pure: no sqlite, no I/O; the store binds and reads the rows.  The
 * decoder takes whatever a database file holds and is fuzzed by
 * tests/fuzz/fuzz-audit-pack.c.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/str.h"
#include "runner/core/audit-pack.h"

#define PACK_NF	7	/* string fields of a packed record */

/* The string fields of r, in pack order (a NULL verdict is "deny"). */
static void
pack_fields(const struct vg_audit_rec *r, const char *f[PACK_NF])
{
	f[0] = r->run_id;
	f[1] = r->mode;
	f[2] = r->command;
	f[3] = r->verdict != NULL ? r->verdict : "deny";
	f[4] = r->category;
	f[5] = r->rule;
	f[6] = r->reason;
}

/* Writes v as a little-endian base-128 varint at c (room for 10);
 * returns the bytes written. */
static size_t
put_varint(char *c, unsigned long long v)
{
	size_t n = 0;

	while (v >= 0x80) {
		c[n++] = (char)(v | 0x80);
		v >>= 7;
	}
	c[n++] = (char)v;
	return n;
}

/* Writes a signed value zigzag-coded; see put_varint. */
static size_t
put_zigzag(char *c, long long v)
{
	return put_varint(c, ((unsigned long long)v << 1) ^
	    (unsigned long long)(v < 0 ? -1 : 0));
}

/* Reads a varint at *p (below end) into *v; -1 when truncated. */
static int
get_varint(const unsigned char **p, const unsigned char *end,
    unsigned long long *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		unsigned char c = *(*p)++;

		*v |= (unsigned long long)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/* Reads a zigzag-coded signed value. */
static int
get_zigzag(const unsigned char **p, const unsigned char *end, long long *v)
{
	unsigned long long u;

	if (get_varint(p, end, &u) != 0)
		return -1;
	*v = (long long)(u >> 1) ^ -(long long)(u & 1);
	return 0;
}

/* Room for the varint of a row's string count before its strings. */
#define PACK_HEAD	10
/* Bytes of one record's encoded fields: a length byte and PACK_NF
 * varints of at most 10 bytes (rounded up for a fixed-size copy). */
#define PACK_FENC	72
/* The first size of vg_audit_pack_encode's two tables (they double at
 * half). */
#define PACK_SLOTS	4096

/* A decision's time as given to vg_store_audit_many: 0 means now. */
double
vg_audit_pack_time(double t, double now)
{
	return t > 0 ? t : now;
}

/* The slot of address p in a table of cap (a power of two) slots:
 * its own, or the empty one where it goes. */
static struct vg_audit_pack_slot *
pack_find(struct vg_audit_pack_slot *t, size_t cap, unsigned gen,
    const void *p)
{
	size_t h = (size_t)(((uintptr_t)p * 0x9E3779B97F4A7C15ull) >> 20) &
	    (cap - 1);

	while (t[h].gen == gen && t[h].key != p)
		h = (h + 1) & (cap - 1);
	return &t[h];
}

/* Starts a row: a new generation; both tables are kept (they grow in
 * pack_str and vg_audit_pack_encode with the distinct strings and records of a
 * row, so a row of many repeated decisions probes a table that stays
 * in the cache). */
static void
pack_start(struct vg_audit_packer *pk)
{
	if (pk->gen == UINT_MAX) {
		/* Every slot could look used: start over. */
		free(pk->str);
		free(pk->rec);
		pk->str = pk->rec = NULL;
		pk->cap = pk->rcap = 0;
		pk->gen = 0;
	}
	if (pk->cap == 0) {
		pk->cap = PACK_SLOTS;
		pk->str = vg_xcalloc(pk->cap, sizeof(*pk->str));
	}
	if (pk->rcap == 0) {
		pk->rcap = PACK_SLOTS;
		pk->rec = vg_xcalloc(pk->rcap, sizeof(*pk->rec));
	}
	pk->gen++;
}

/* Doubles table *t of *cap slots, keeping generation gen's slots. */
static void
pack_grow(struct vg_audit_pack_slot **t, size_t *cap, unsigned gen)
{
	struct vg_audit_pack_slot *old = *t, *s;
	size_t ocap = *cap, i;

	*cap *= 2;
	*t = vg_xcalloc(*cap, sizeof(**t));
	for (i = 0; i < ocap; i++)
		if (old[i].gen == gen) {
			s = pack_find(*t, *cap, gen, old[i].key);
			*s = old[i];
		}
	free(old);
}

/* The string index of f plus one; a new string is appended to data. */
static size_t
pack_str(struct vg_audit_packer *pk, const char *f, unsigned *nstr)
{
	struct vg_audit_pack_slot *t = pack_find(pk->str, pk->cap, pk->gen, f);
	size_t len;
	char lc[10];

	if (t->gen != pk->gen) {
		if ((size_t)*nstr * 2 >= pk->cap) {
			pack_grow(&pk->str, &pk->cap, pk->gen);
			t = pack_find(pk->str, pk->cap, pk->gen, f);
		}
		len = strlen(f);
		t->gen = pk->gen;
		t->key = f;
		t->val = (*nstr)++;
		vg_buf_add(&pk->data, lc, put_varint(lc, len));
		vg_buf_add(&pk->data, f, len);
	}
	return (size_t)t->val + 1;
}

/* Encodes recs[0..n) at times[0..n) with pk's memory: the strings into
 * pk->data after PACK_HEAD bytes, the records into pk->body, then the
 * records after the strings; *off is where the row starts in pk->data
 * (its string count's varint ends at PACK_HEAD).  A record given more
 * than once (the same address) has its fields encoded once, the bytes
 * copied after. */
void
vg_audit_pack_encode(struct vg_audit_packer *pk,
    const struct vg_audit_rec *const *recs, const double *times, size_t n,
    double first, double now, size_t *off)
{
	struct vg_buf *body = &pk->body, *fenc = &pk->fenc, *data = &pk->data;
	const char *f[PACK_NF];
	struct vg_audit_pack_slot *t;
	size_t i, m, fl;
	unsigned nstr = 0, nrec = 0;
	char c[10], lc[PACK_FENC];
	char *o;
	int k;

	pack_start(pk);
	vg_buf_reset(body);
	vg_buf_reset(fenc);
	vg_buf_reset(data);
	vg_buf_add(data, c, PACK_HEAD);
	vg_buf_add(body, c, put_varint(c, n));
	for (i = 0; i < n; i++) {
		/* Written in place: the time and task (at most 20 bytes),
		 * then the record's field bytes, copied PACK_FENC at once
		 * (fenc and body keep that much room beyond their ends). */
		body->data = vg_xgrow(body->data, &body->cap, body->len + 20 +
		    PACK_FENC + 1, 1);
		o = body->data + body->len;
		m = put_zigzag(o, (long long)((vg_audit_pack_time(times[i],
		    now) - first) * 1e6 + 0.5));
		m += put_zigzag(o + m, recs[i]->task_index);
		t = pack_find(pk->rec, pk->rcap, pk->gen, recs[i]);
		if (t->gen != pk->gen) {
			if ((size_t)nrec * 2 >= pk->rcap) {
				pack_grow(&pk->rec, &pk->rcap, pk->gen);
				t = pack_find(pk->rec, pk->rcap, pk->gen,
				    recs[i]);
			}
			nrec++;
			/* Its fields' varints after a byte of their length
			 * (at most 7 x 10). */
			t->gen = pk->gen;
			t->key = recs[i];
			t->val = (unsigned)fenc->len;
			pack_fields(recs[i], f);
			for (k = 0, fl = 1; k < PACK_NF; k++)
				fl += put_varint(lc + fl, f[k] == NULL ? 0 :
				    pack_str(pk, f[k], &nstr));
			lc[0] = (char)(fl - 1);
			vg_buf_add(fenc, lc, fl);
			fenc->data = vg_xgrow(fenc->data, &fenc->cap,
			    fenc->len + PACK_FENC + 1, 1);
		}
		fl = (unsigned char)fenc->data[t->val];
		memcpy(o + m, fenc->data + t->val + 1, PACK_FENC);
		body->len += m + fl;
		body->data[body->len] = '\0';
	}
	m = put_varint(c, nstr);
	*off = PACK_HEAD - m;
	memcpy(data->data + *off, c, m);
	vg_buf_add(data, body->data, body->len);
}

/* Releases an unpacked row. */
void
vg_audit_unpacked_release(struct vg_audit_unpacked *pk)
{
	free(pk->text);
	free(pk->str);
	free(pk->rec);
	memset(pk, 0, sizeof(*pk));
}

/* Decodes a row's data (len bytes, count n) into pk; -1 when it is
 * malformed. */
int
vg_audit_pack_decode(const void *data, size_t len, double first,
    long long n, struct vg_audit_unpacked *pk)
{
	const unsigned char *p = data, *end = p + len;
	unsigned long long nstr, l, v;
	long long dt, task;
	size_t i, off = 0;
	int k;

	memset(pk, 0, sizeof(*pk));
	if (get_varint(&p, end, &nstr) != 0 || nstr > len)
		goto bad;
	pk->text = vg_xmalloc(len + 1);
	pk->str = vg_xcalloc(nstr + 1, sizeof(*pk->str));
	for (i = 0; i < nstr; i++) {
		if (get_varint(&p, end, &l) != 0 || l > (size_t)(end - p))
			goto bad;
		pk->str[i] = pk->text + off;
		memcpy(pk->text + off, p, l);
		pk->text[off + l] = '\0';
		off += l + 1;
		p += l;
	}
	if (get_varint(&p, end, &v) != 0 || n < 0 || v != (unsigned long
	    long)n || v > len)
		goto bad;
	pk->rec = vg_xcalloc(v + 1, sizeof(*pk->rec));
	for (i = 0; i < v; i++) {
		const char **f[PACK_NF] = { &pk->rec[i].run_id,
		    &pk->rec[i].mode, &pk->rec[i].command,
		    &pk->rec[i].verdict, &pk->rec[i].category,
		    &pk->rec[i].rule, &pk->rec[i].reason };

		if (get_zigzag(&p, end, &dt) != 0 ||
		    get_zigzag(&p, end, &task) != 0 || task < -1 ||
		    task > 0x7fffffff)
			goto bad;
		pk->rec[i].time = first + (double)dt / 1e6;
		pk->rec[i].task_index = (int)task;
		for (k = 0; k < PACK_NF; k++) {
			if (get_varint(&p, end, &l) != 0 || l > nstr)
				goto bad;
			*f[k] = l == 0 ? NULL : pk->str[l - 1];
		}
		if (pk->rec[i].verdict == NULL)
			goto bad;
	}
	if (p != end)
		goto bad;
	pk->n = v;
	return 0;
bad:
	vg_audit_unpacked_release(pk);
	return -1;
}

/* Frees the packer's memory; see audit-pack.h. */
void
vg_audit_packer_release(struct vg_audit_packer *pk)
{
	free(pk->str);
	free(pk->rec);
	vg_buf_release(&pk->fenc);
	vg_buf_release(&pk->body);
	vg_buf_release(&pk->data);
}
