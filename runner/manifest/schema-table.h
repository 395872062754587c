/*
 * schema-table.h - shorthands for writing section tables (schema.h):
 * one row a field, STR(struct, "key", member, "help") and so on.  For the
 * .c files that define sections (the manifest's own in manifest.c, each
 * plugin's in its own file); never included by a header.
 */
#ifndef VG_SCHEMA_TABLE_H
#define VG_SCHEMA_TABLE_H

#include <stddef.h>

#include "runner/manifest/schema.h"

#define OFF(type, member)	offsetof(struct type, member)
#define BIG			18446744073709551615.0	/* open range */
#define YEAR			31536000.0

#define STR(st, k, m, h) \
	{ .key = k, .type = VG_F_STR, .off = OFF(st, m), .help = h }
#define SLURMSTR(st, k, m, h) \
	{ .key = k, .type = VG_F_STR, .off = OFF(st, m), \
	  .check = vg_schema_check_printable, .help = h }
#define STRDEF(st, k, m, d, h) \
	{ .key = k, .type = VG_F_STR, .off = OFF(st, m), .def = d, .help = h }
#define CHOICE(st, k, m, d, v, h) \
	{ .key = k, .type = VG_F_STR, .off = OFF(st, m), .def = d, \
	  .values = v, .help = h }
#define INT(st, k, m, d, lo, hi, h) \
	{ .key = k, .type = VG_F_INT, .off = OFF(st, m), .def = d, \
	  .min = lo, .max = hi, .help = h }
#define U64(st, k, m, lo, hi, h) \
	{ .key = k, .type = VG_F_U64, .off = OFF(st, m), .min = lo, \
	  .max = hi, .help = h }
#define BOOL(st, k, m, d, h) \
	{ .key = k, .type = VG_F_BOOL, .off = OFF(st, m), .def = d, .help = h }
#define FLOAT(st, k, m, d, lo, hi, h) \
	{ .key = k, .type = VG_F_FLOAT, .off = OFF(st, m), .def = d, \
	  .min = lo, .max = hi, .help = h }
#define BYTES(st, k, m, lo, hi, h) \
	{ .key = k, .type = VG_F_BYTES, .off = OFF(st, m), .min = lo, \
	  .max = hi, .help = h }
#define DUR(st, k, m, d, lo, hi, h) \
	{ .key = k, .type = VG_F_DUR, .off = OFF(st, m), .def = d, \
	  .min = lo, .max = hi, .help = h }
#define DURS(st, k, m, lo, hi, h) \
	{ .key = k, .type = VG_F_DUR_U64, .off = OFF(st, m), .min = lo, \
	  .max = hi, .help = h }
#define ENUM(st, k, m, d, v, iv, h) \
	{ .key = k, .type = VG_F_ENUM, .off = OFF(st, m), .def = d, \
	  .values = v, .ivalues = iv, .help = h }
#define STRV(st, k, m, h) \
	{ .key = k, .type = VG_F_STRV, .off = OFF(st, m), .help = h }
#define SECTION(st, k, m, sub_, h) \
	{ .key = k, .type = VG_F_SECTION, .off = OFF(st, m), .sub = sub_, \
	  .help = h }

#endif
