/*
 * fuzz-manifest.c - libFuzzer harness for the manifest front end: YAML
 * tree (limits, aliases, duplicate keys), schema decoding, templates and
 * the expansion check, then the JSON round trip and expansion of whatever
 * loads.  Configs are off so that the input is the only file read.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner/core/plugins.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_load_opts opts = { .no_configs = 1 };
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_manifest *m = NULL, *back = NULL;
	struct vg_buf a = VG_BUF_INIT, b = VG_BUF_INIT;
	struct vg_taskset ts;
	struct vg_err e;

	vg_plugins_init();
	if (vg_manifest_load_mem("fuzz.yaml", (const char *)data, size, &opts,
	    &m, &diag, &e) != 0)
		goto out;
	/* The effective manifest must read back to the same JSON. */
	vg_manifest_to_json(m, &a);
	if (vg_manifest_from_json(a.data, a.len, &back, &e) != 0)
		abort();
	vg_manifest_to_json(back, &b);
	if (strcmp(a.data, b.data) != 0)
		abort();
	/* Expanding a loaded manifest cannot fail; keep it small. */
	if (vg_expand_count(m) <= 1000) {
		if (vg_expand(m, &ts, &diag, &e) != 0)
			abort();
		if (ts.n != vg_expand_count(m))
			abort();
		vg_taskset_release(&ts);
	}
out:
	vg_buf_release(&a);
	vg_buf_release(&b);
	vg_manifest_free(back);
	vg_manifest_free(m);
	vg_diag_release(&diag);
	return 0;
}
