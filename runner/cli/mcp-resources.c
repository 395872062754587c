/*
 * mcp-resources.c - vigil:// resources of vigil mcp: a run's report
 * (vigil://runs/RUN/report, the data of vigil report --json) and a
 * task's output (vigil://runs/RUN/tasks/TASK/log, vigil logs RUN/TASK;
 * .../stderr for its stderr).  Listed: the report of each run vigil
 * status knows, newest first; the task logs through a template.
 */
#include <string.h>

#include "runner/cli/mcp.h"

#define PREFIX		"vigil://runs/"
/* Most runs resources/list shows. */
#define LIST_MAX	200

void
vg_mcp_resources_templates(struct vg_json_writer *w)
{
	static const char *const t[][4] = {
		{ PREFIX "{run}/report", "run-report", "application/json",
		  "a run's report data (vigil report --json)" },
		{ PREFIX "{run}/tasks/{task}/log", "task-log", "text/plain",
		  "a task's stdout (vigil logs RUN/TASK)" },
		{ PREFIX "{run}/tasks/{task}/stderr", "task-stderr",
		  "text/plain", "a task's stderr (vigil logs --stderr)" },
	};
	size_t k;

	vg_json_obj_begin(w);
	vg_json_key(w, "resourceTemplates");
	vg_json_arr_begin(w);
	for (k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		vg_json_obj_begin(w);
		vg_json_key(w, "uriTemplate");
		vg_json_str(w, t[k][0]);
		vg_json_key(w, "name");
		vg_json_str(w, t[k][1]);
		vg_json_key(w, "mimeType");
		vg_json_str(w, t[k][2]);
		vg_json_key(w, "description");
		vg_json_str(w, t[k][3]);
		vg_json_obj_end(w);
	}
	vg_json_arr_end(w);
	vg_json_obj_end(w);
}

/* Whether the n bytes of s are a plain name: no '/', not empty, no
 * control bytes. */
static int
plain(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 255)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] == '/' || (unsigned char)s[i] < 0x20)
			return 0;
	return 1;
}

int
vg_mcp_resource_argv(const struct vg_mcp_conf *conf, const char *uri,
    struct vg_strv *argv, const char **mime, struct vg_err *e)
{
	const char *run, *slash, *rest, *task, *end;

	*mime = NULL;
	if (strncmp(uri, PREFIX, strlen(PREFIX)) != 0)
		return vg_err_set(e, VG_EINVAL, "unknown resource '%s' (valid: "
		    PREFIX "RUN/report, " PREFIX "RUN/tasks/TASK/log or "
		    "/stderr)", uri);
	run = uri + strlen(PREFIX);
	if ((slash = strchr(run, '/')) == NULL || !plain(run,
	    (size_t)(slash - run)))
		return vg_err_set(e, VG_EINVAL, "resource '%s': no run id",
		    uri);
	rest = slash + 1;
	vg_strv_push(argv, conf->self);
	if (strcmp(rest, "report") == 0) {
		vg_strv_push(argv, "report");
		vg_strv_push(argv, "--json");
		vg_strv_push(argv, "--");
		vg_strv_take(argv, vg_xstrndup(run, (size_t)(slash - run)));
		*mime = "application/json";
		return 0;
	}
	if (strncmp(rest, "tasks/", 6) == 0) {
		task = rest + 6;
		end = strchr(task, '/');
		if (end != NULL && plain(task, (size_t)(end - task)) &&
		    (strcmp(end, "/log") == 0 || strcmp(end, "/stderr") == 0)) {
			vg_strv_push(argv, "logs");
			if (strcmp(end, "/stderr") == 0)
				vg_strv_push(argv, "--stderr");
			vg_strv_push(argv, "--");
			vg_strv_pushf(argv, "%.*s/%.*s", (int)(slash - run),
			    run, (int)(end - task), task);
			*mime = "text/plain";
			return 0;
		}
	}
	vg_strv_release(argv);
	return vg_err_set(e, VG_EINVAL, "unknown resource '%s' (valid: "
	    PREFIX "RUN/report, " PREFIX "RUN/tasks/TASK/log or /stderr)",
	    uri);
}

void
vg_mcp_resources_from_status(const struct vg_buf *out,
    struct vg_json_writer *w)
{
	const struct vg_json_value *runs = NULL, *r;
	struct vg_json_doc *doc = NULL;
	struct vg_json_limits lim = { (size_t)64 << 20, 16, (size_t)1 << 22 };
	struct vg_buf uri = VG_BUF_INIT;
	struct vg_err e;
	const char *id;
	size_t i;

	vg_err_init(&e);
	if (out->len > 0 && vg_json_parse(out->data, out->len, &lim, &doc,
	    &e) == 0)
		runs = vg_json_get(vg_json_root(doc), "runs");
	vg_json_obj_begin(w);
	vg_json_key(w, "resources");
	vg_json_arr_begin(w);
	for (i = 0; runs != NULL && runs->type == VG_JSON_ARRAY &&
	    i < runs->len && i < LIST_MAX; i++) {
		r = runs->items[i];
		if ((id = vg_json_get_str(r, "id", NULL)) == NULL)
			continue;
		vg_buf_reset(&uri);
		vg_buf_printf(&uri, PREFIX "%s/report", id);
		vg_json_obj_begin(w);
		vg_json_key(w, "uri");
		vg_json_str(w, vg_buf_str(&uri));
		vg_json_key(w, "name");
		vg_buf_printf(&uri, " (%s)", vg_json_get_str(r, "name", ""));
		vg_json_str(w, vg_buf_str(&uri) + strlen(PREFIX));
		vg_json_key(w, "mimeType");
		vg_json_str(w, "application/json");
		vg_json_obj_end(w);
	}
	vg_json_arr_end(w);
	vg_json_obj_end(w);
	vg_json_free(doc);
	vg_buf_release(&uri);
}
