/*
 * fuzz-egress-record.c - libFuzzer harness for the reading of the egress
 * proxy's record lines (vg_egress_event_parse: the proxy parses what
 * tasks send, so vigil reads its lines as hostile).  A line that parses
 * is written back (vg_egress_event_json) and parsed again: the second
 * record must equal the first, and every string must be printable and
 * terminated within its field.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/egress-run.h"
#include "common/buf.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether s is a printable string that ends inside its len bytes. */
static int
printable(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && s[i] != '\0'; i++)
		if (s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return i < len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_egress_event a, b;
	struct vg_buf out = VG_BUF_INIT;

	memset(&a, 0, sizeof(a));
	if (vg_egress_event_parse((const char *)data, size, &a) != 0)
		return 0;
	if (!printable(a.proto, sizeof(a.proto)) ||
	    !printable(a.host, sizeof(a.host)) ||
	    !printable(a.addr, sizeof(a.addr)) ||
	    !printable(a.rule, sizeof(a.rule)) ||
	    !printable(a.error, sizeof(a.error)) || a.port > 65535)
		abort();
	a.task = 1;
	a.attempt = 2;
	vg_egress_event_json(&a, &out);
	memset(&b, 0, sizeof(b));
	if (vg_egress_event_parse(out.data, out.len, &b) != 0)
		abort();
	b.task = 1;
	b.attempt = 2;
	if (memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	vg_buf_release(&out);
	return 0;
}
