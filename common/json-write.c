/*
 * json-write.c - the streaming JSON writer: escapes, commas, nesting.
 * Output is always valid UTF-8-transparent JSON; control bytes are escaped
 * and other bytes are copied as they are.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"

void
vg_json_writer_init(struct vg_json_writer *w, struct vg_buf *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

/* Emits the separator owed before a new value or key. */
static void
json_sep(struct vg_json_writer *w)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (w->depth > 0 && w->need_comma[w->depth - 1])
		vg_buf_addc(w->out, ',');
	if (w->depth > 0)
		w->need_comma[w->depth - 1] = 1;
}

static void
json_open(struct vg_json_writer *w, char c)
{
	json_sep(w);
	vg_buf_addc(w->out, c);
	if (w->depth < VG_JSON_MAX_DEPTH)
		w->need_comma[w->depth] = 0;
	w->depth++;
}

static void
json_close(struct vg_json_writer *w, char c)
{
	if (w->depth > 0)
		w->depth--;
	vg_buf_addc(w->out, c);
}

void vg_json_obj_begin(struct vg_json_writer *w) { json_open(w, '{'); }
void vg_json_obj_end(struct vg_json_writer *w) { json_close(w, '}'); }
void vg_json_arr_begin(struct vg_json_writer *w) { json_open(w, '['); }
void vg_json_arr_end(struct vg_json_writer *w) { json_close(w, ']'); }

void
vg_json_quote(struct vg_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, start = 0;
	unsigned char c;

	vg_buf_addc(b, '"');
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		vg_buf_add(b, s + start, i - start);
		start = i + 1;
		switch (c) {
		case '"':  vg_buf_adds(b, "\\\""); break;
		case '\\': vg_buf_adds(b, "\\\\"); break;
		case '\n': vg_buf_adds(b, "\\n"); break;
		case '\r': vg_buf_adds(b, "\\r"); break;
		case '\t': vg_buf_adds(b, "\\t"); break;
		default:
			vg_buf_adds(b, "\\u00");
			vg_buf_addc(b, hex[c >> 4]);
			vg_buf_addc(b, hex[c & 15]);
		}
	}
	vg_buf_add(b, s + start, n - start);
	vg_buf_addc(b, '"');
}

void
vg_json_key(struct vg_json_writer *w, const char *key)
{
	json_sep(w);
	vg_json_quote(w->out, key, strlen(key));
	vg_buf_addc(w->out, ':');
	w->after_key = 1;
}

void
vg_json_strn(struct vg_json_writer *w, const char *s, size_t n)
{
	json_sep(w);
	vg_json_quote(w->out, s, n);
}

void
vg_json_str(struct vg_json_writer *w, const char *s)
{
	if (s == NULL) {
		vg_json_null(w);
		return;
	}
	vg_json_strn(w, s, strlen(s));
}

void
vg_json_int(struct vg_json_writer *w, long long v)
{
	json_sep(w);
	vg_buf_printf(w->out, "%lld", v);
}

void
vg_json_num(struct vg_json_writer *w, double v)
{
	json_sep(w);
	if (!isfinite(v))
		vg_buf_adds(w->out, "null");
	else
		vg_buf_printf(w->out, "%.17g", v);
}

void
vg_json_bool(struct vg_json_writer *w, int v)
{
	json_sep(w);
	vg_buf_adds(w->out, v ? "true" : "false");
}

void
vg_json_null(struct vg_json_writer *w)
{
	json_sep(w);
	vg_buf_adds(w->out, "null");
}

void
vg_json_value_write(struct vg_json_writer *w, const struct vg_json_value *v)
{
	size_t i;

	switch (v->type) {
	case VG_JSON_NULL:
		vg_json_null(w);
		break;
	case VG_JSON_BOOL:
		vg_json_bool(w, v->b);
		break;
	case VG_JSON_NUMBER:
		vg_json_num(w, v->num);
		break;
	case VG_JSON_STRING:
		vg_json_strn(w, v->str, v->len);
		break;
	case VG_JSON_ARRAY:
		vg_json_arr_begin(w);
		for (i = 0; i < v->len; i++)
			vg_json_value_write(w, v->items[i]);
		vg_json_arr_end(w);
		break;
	case VG_JSON_OBJECT:
		vg_json_obj_begin(w);
		for (i = 0; i < v->len; i++) {
			vg_json_key(w, v->keys[i]);
			vg_json_value_write(w, v->items[i]);
		}
		vg_json_obj_end(w);
		break;
	}
}

/* Appends n bytes of s to out as valid UTF-8: each byte that does not
 * start a well-formed sequence becomes U+FFFD. */
void
vg_json_utf8_clean(struct vg_buf *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k, len;

	while (i < n) {
		unsigned c = u[i];
		unsigned min;

		if (c < 0x80) {
			for (k = i; k < n && u[k] < 0x80; k++)
				;
			vg_buf_add(out, s + i, k - i);
			i = k;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2, min = 0x80;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3, min = 0x800;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4, min = 0x10000;
		else
			len = 0, min = 0;
		if (len > 0 && i + len <= n) {
			unsigned cp = c & (0xff >> (len + 1));

			for (k = 1; k < len && (u[i + k] & 0xc0) == 0x80; k++)
				cp = (cp << 6) | (u[i + k] & 0x3f);
			if (k == len && cp >= min && cp <= 0x10ffff &&
			    !(cp >= 0xd800 && cp <= 0xdfff)) {
				vg_buf_add(out, s + i, len);
				i += len;
				continue;
			}
		}
		vg_buf_adds(out, "\xef\xbf\xbd");
		i++;
	}
}
