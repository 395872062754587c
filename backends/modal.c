/*
 * modal.c - the modal backend, not available in this build.
 *
 * Modal's API is gRPC over HTTP/2 (api.modal.com:443, service
 * modal.client.ModalClient in modal-labs/modal-client
 * modal_proto/api.proto; authenticated by the x-modal-token-id and
 * x-modal-token-secret metadata).  A sandbox attempt needs AppGetOrCreate,
 * ImageGetOrCreate with the server-streaming ImageJoinStreaming,
 * SandboxCreate, the server-streaming SandboxGetLogs, SandboxWait and
 * SandboxTerminate (or exec through the separate TaskCommandRouter
 * service), so a protobuf codec and gRPC framing with trailers on top of
 * libcurl's HTTP/2, and a test server speaking HTTP/2.  Until then the
 * backend says so instead of failing obscurely; docs/backends/modal.md
 * has the details.
 */
#include "backends/cloud.h"

#define MODAL_MISSING "backend 'modal' is not available in this build: " \
	"Modal's API is gRPC over HTTP/2, which vigil does not speak yet " \
	"(see docs/backends/modal.md; daytona and vercel are HTTP sandboxes " \
	"that work)"

/* Refuses every attempt with the reason. */
static int
modal_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	(void)a;
	(void)r;
	return vg_err_set(e, VG_EUNSUPPORTED, "%s", MODAL_MISSING);
}

/* Says why for `vigil doctor`. */
static void
modal_probe(struct vg_buf *out)
{
	vg_buf_printf(out, "modal: missing (%s)\n", MODAL_MISSING);
}

/* A manifest for modal cannot run: say so before any task starts. */
static int
modal_validate(const struct vg_manifest *m, struct vg_diag *d)
{
	struct vg_loc loc;

	vg_diag_add(d, vg_manifest_locf(m, &loc, "backend"), "%s",
	    MODAL_MISSING);
	return VG_EUNSUPPORTED;
}

/* The modal: section. */
static const struct vg_msection modal_msection = {
	.key = "modal",
	.schema = &vg_cloud_schema,
	.size = sizeof(struct vg_cloud_conf),
	.help = "Modal",
};

static const struct vg_msection *const modal_sections[] = {
	&modal_msection, NULL
};

const struct vg_backend_ops vg_backend_modal = {
	.p = {
		.kind = VG_PLUGIN_BACKEND,
		.name = "modal",
		.help = "a Modal sandbox",
		.sections = modal_sections,
		.validate = modal_validate,
	},
	.probe = modal_probe,
	.run = modal_run,
};
