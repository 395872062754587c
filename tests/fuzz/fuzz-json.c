/*
 * fuzz-json.c - libFuzzer harness for the JSON parser.  Each input is
 * parsed with small limits (so deep and wide inputs hit the limit paths);
 * a successful parse is walked, re-serialised with the writer, and parsed
 * again: the second tree must match the first.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Compares two trees built from the same data (numbers excepted: the
 * writer keeps 15 digits). */
static int
same(const struct vg_json_value *a, const struct vg_json_value *b)
{
	size_t i;

	if (a->type != b->type || (a->type != VG_JSON_NUMBER &&
	    a->len != b->len))
		return 0;
	switch (a->type) {
	case VG_JSON_BOOL:
		return a->b == b->b;
	case VG_JSON_STRING:
		return memcmp(a->str, b->str, a->len) == 0;
	case VG_JSON_OBJECT:
	case VG_JSON_ARRAY:
		for (i = 0; i < a->len; i++) {
			if (a->type == VG_JSON_OBJECT &&
			    strcmp(a->keys[i], b->keys[i]) != 0)
				return 0;
			if (!same(a->items[i], b->items[i]))
				return 0;
		}
		return 1;
	default:
		return 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_json_limits lim = {
		.max_bytes = 1 << 16, .max_depth = 32, .max_values = 4096,
	};
	struct vg_json_doc *doc, *doc2;
	struct vg_json_writer w;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	if (vg_json_parse((const char *)data, size, &lim, &doc, &e) != 0) {
		if (doc != NULL || e.msg[0] == '\0')
			abort();
		return 0;
	}
	vg_json_writer_init(&w, &b);
	vg_json_value_write(&w, vg_json_root(doc));
	/* Keys with an embedded NUL are shortened by the writer. */
	if (vg_json_parse(b.data, b.len, NULL, &doc2, &e) != 0)
		abort();
	(void)vg_json_get_str(vg_json_root(doc2), "Id", NULL);
	(void)vg_json_get_num(vg_json_root(doc2), "StatusCode", 0);
	if (memchr(data, 0, size) == NULL && !same(vg_json_root(doc),
	    vg_json_root(doc2)))
		abort();
	vg_json_free(doc2);
	vg_json_free(doc);
	vg_buf_release(&b);
	return 0;
}
