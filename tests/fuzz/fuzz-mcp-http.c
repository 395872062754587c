/*
 * fuzz-mcp-http.c - libFuzzer harness for the HTTP/1.1 request parser of
 * vigil mcp --listen (runner/cli/mcp-httpreq.c), which reads whatever a
 * local client sends.  A head still incomplete leaves the buffer as it
 * was; a head read lies within the input and the head limit, names its
 * method and target, and holds only lowercase token field names,
 * values without control characters and a body length under the
 * maximum; a refusal has a status among those documented and says why.
 * Seeds: tests/fuzz/corpus/fuzz-mcp-http/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cli/mcp-http.h"

#define MAX_BODY	4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Checks a head that was read. */
static void
check_head(const struct vg_httpreq *r, size_t size)
{
	const char *p;
	size_t k;

	if (r->head_len == 0 || r->head_len > size || r->head_len >
	    VG_HTTP_MAX_HEAD + 8 || r->method == NULL || r->target == NULL ||
	    r->method[0] == '\0' || r->target[0] == '\0' ||
	    strlen(r->target) > VG_HTTP_MAX_TARGET ||
	    (r->minor != 0 && r->minor != 1) || r->body_len > MAX_BODY ||
	    r->nfields > VG_HTTP_MAX_FIELDS)
		abort();
	if (r->has_length != (vg_httpreq_field(r, "content-length") != NULL) ||
	    vg_httpreq_field(r, "transfer-encoding") != NULL)
		abort();
	for (k = 0; k < r->nfields; k++) {
		for (p = r->fields[k].name; *p != '\0'; p++)
			if ((*p >= 'A' && *p <= 'Z') || *p == ':' ||
			    (unsigned char)*p <= ' ')
				abort();
		if (r->fields[k].name[0] == '\0')
			abort();
		for (p = r->fields[k].value; *p != '\0'; p++)
			if (((unsigned char)*p < ' ' && *p != '\t') ||
			    *p == 0x7f)
				abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_httpreq r;
	struct vg_err e;
	char *buf = malloc(size + 1), *copy = malloc(size + 1);
	int rc, status;

	memcpy(buf, data, size);
	memcpy(copy, data, size);
	vg_err_init(&e);
	rc = vg_httpreq_parse(buf, size, MAX_BODY, &r, &status, &e);
	if (rc == 0 && (memcmp(buf, copy, size) != 0 || size >=
	    VG_HTTP_MAX_HEAD + 8))
		abort();	/* incomplete: untouched, and not too long */
	if (rc == 1)
		check_head(&r, size);
	if (rc < 0 && (e.msg[0] == '\0' || (status != 400 && status != 413 &&
	    status != 414 && status != 431 && status != 501 &&
	    status != 505)))
		abort();
	if (rc < -1 || rc > 1)
		abort();
	free(buf);
	free(copy);
	return 0;
}
