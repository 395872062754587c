/*
 * test-modal.c - the modal backend's pure parts: gRPC framing and
 * deframing across piece boundaries and its bounds, trailer parsing with
 * an RPCRetryPolicy detail, grpc-timeout values, the TOML reader and its
 * errors, the mapping of sandbox results to exit codes, where direct
 * credentials are looked up.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backends/modal.h"

struct got {
	int	n;
	char	last[64];
};

/* Keeps the last message. */
static int
keep(void *arg, const uint8_t *p, size_t n)
{
	struct got *g = arg;

	g->n++;
	snprintf(g->last, sizeof(g->last), "%.*s", (int)n, (const char *)p);
	return 0;
}

/* Framing then deframing one byte at a time gives the messages back. */
static void
test_deframe(void **state)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_grpc_deframer d;
	struct got g = { 0 };
	size_t i;

	(void)state;
	vg_grpc_frame(&b, "hello", 5);
	vg_grpc_frame(&b, "", 0);
	vg_grpc_frame(&b, "world", 5);
	vg_grpc_deframer_init(&d, 16, keep, &g);
	for (i = 0; i < b.len; i++)
		assert_int_equal(vg_grpc_deframe(&d, b.data + i, 1), 0);
	assert_int_equal(g.n, 3);
	assert_string_equal(g.last, "world");
	assert_false(vg_grpc_deframer_partial(&d));
	vg_grpc_deframer_release(&d);
	/* Above the bound, and compressed: refused. */
	vg_grpc_deframer_init(&d, 4, keep, &g);
	assert_int_equal(vg_grpc_deframe(&d, b.data, b.len), VG_EPARSE);
	assert_non_null(strstr(d.err, "above the limit of 4"));
	vg_grpc_deframer_release(&d);
	vg_grpc_deframer_init(&d, 16, keep, &g);
	assert_int_equal(vg_grpc_deframe(&d, "\1\0\0\0\0", 5), VG_EPARSE);
	vg_grpc_deframer_release(&d);
	vg_buf_release(&b);
}

/* Trailers: code, percent-decoded message, retry policy detail. */
static void
test_status(void **state)
{
	Modal__Client__RPCRetryPolicy pol = MODAL__CLIENT__RPCRETRY_POLICY__INIT;
	Modal__Client__Any any = MODAL__CLIENT__ANY__INIT, *pany = &any;
	Modal__Client__RPCStatus rs = MODAL__CLIENT__RPCSTATUS__INIT;
	struct vg_grpc_status st = { .code = -1 };
	uint8_t pb[64], raw[128];
	char line[400], b64[200];
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n, i, k = 0;

	(void)state;
	vg_grpc_status_line(&st, "grpc-status: 8\r\n", 16);
	assert_int_equal(st.code, 8);
	vg_grpc_status_line(&st, "grpc-message: slow%20down\r\n", 27);
	assert_string_equal(st.message, "slow down");
	pol.has_retry_after_secs = 1;
	pol.retry_after_secs = 1.5f;
	any.type_url = (char []){ "type.modal.com/modal.client.RPCRetryPolicy" };
	any.has_value = 1;
	any.value.data = pb;
	any.value.len = modal__client__rpcretry_policy__pack(&pol, pb);
	rs.has_code = 1;
	rs.code = 8;
	rs.n_details = 1;
	rs.details = &pany;
	n = modal__client__rpcstatus__pack(&rs, raw);
	for (i = 0; i < n; i += 3) {	/* unpadded base64, as gRPC sends */
		unsigned v = (unsigned)raw[i] << 16 | (i + 1 < n ?
		    (unsigned)raw[i + 1] << 8 : 0) | (i + 2 < n ? raw[i + 2] :
		    0);

		b64[k++] = tab[v >> 18 & 63];
		b64[k++] = tab[v >> 12 & 63];
		if (i + 1 < n)
			b64[k++] = tab[v >> 6 & 63];
		if (i + 2 < n)
			b64[k++] = tab[v & 63];
	}
	b64[k] = '\0';
	snprintf(line, sizeof(line), "grpc-status-details-bin: %s\r\n", b64);
	vg_grpc_status_line(&st, line, strlen(line));
	assert_true(st.retry_after > 1.49 && st.retry_after < 1.51);
	assert_int_equal(vg_grpc_b64_decode("@@", 2, raw, sizeof(raw)), -1);
	assert_string_equal(vg_grpc_code_name(14), "UNAVAILABLE");
	assert_true(vg_grpc_transient(14));
	assert_false(vg_grpc_transient(16));
	vg_grpc_timeout_value(55.0, line, sizeof(line));
	assert_string_equal(line, "55000m");
}

struct kv {
	char	out[512];
};

/* Collects "table.key=value" lines. */
static int
collect(void *arg, const char *t, const char *k, const char *v, int b)
{
	struct kv *x = arg;
	size_t n = strlen(x->out);

	snprintf(x->out + n, sizeof(x->out) - n, "%s.%s=%s%s;", t, k, v,
	    b ? "(b)" : "");
	return 0;
}

/* TOML: tables, both string kinds, booleans, comments; errors placed. */
static void
test_toml(void **state)
{
	static const char doc[] =
	    "# c\n[default]\ntoken_id = \"ak-1\" # x\n"
	    "token_secret = 'as-\\2'\n[\"my ws\"]\nactive = true\nn = 3\n";
	struct kv x = { "" };
	struct vg_err e;
	char *cut;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_modal_toml(doc, strlen(doc), collect, &x, &e), 0);
	assert_string_equal(x.out, "default.token_id=ak-1;"
	    "default.token_secret=as-\\2;my ws.active=true(b);my ws.n=3;");
	assert_int_equal(vg_modal_toml("a = [1]\n", 8, collect, &x, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "1:5: arrays and inline tables are not "
	    "read here");
	assert_int_equal(vg_modal_toml("[x\n", 3, collect, &x, &e), VG_EPARSE);
	assert_string_equal(e.msg, "1:3: a table header is [name]");
	assert_int_equal(vg_modal_toml("k = \"open\n", 10, collect, &x, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "1:5: unterminated string");
	assert_int_equal(vg_modal_toml("k = v\n", 6, collect, &x, &e),
	    VG_EPARSE);
	/* A header cut at the end of the text, which has no NUL after it. */
	cut = vg_xmalloc(2);
	memcpy(cut, "[x", 2);
	assert_int_equal(vg_modal_toml(cut, 2, collect, &x, &e), VG_EPARSE);
	assert_string_equal(e.msg, "1:3: a table header is [name]");
	free(cut);
}

/* Collects log bytes; refuses once *arg is "full". */
static int
logs_out(void *arg, const char *p, size_t n)
{
	struct vg_buf *b = arg;

	if (b->len >= 4)
		return VG_EIO;
	vg_buf_add(b, p, n);
	return 0;
}

/* Log batches: items in order, entry_id and eof; refusals kept apart. */
static void
test_logs_batch(void **state)
{
	Modal__Client__TaskLogsBatch b = MODAL__CLIENT__TASK_LOGS_BATCH__INIT;
	Modal__Client__TaskLogs it[2], *pit[2] = { &it[0], &it[1] };
	struct vg_buf out = VG_BUF_INIT;
	uint8_t wire[256], d1[] = "ab", d2[] = "cd";
	char entry[16] = "", e7[] = "7-0", e8[] = "8-0";
	size_t n, items;
	int eof = 0;

	(void)state;
	modal__client__task_logs__init(&it[0]);
	modal__client__task_logs__init(&it[1]);
	it[0].has_data = it[1].has_data = 1;
	it[0].data.data = d1;
	it[0].data.len = 2;
	it[1].data.data = d2;
	it[1].data.len = 2;
	b.n_items = 2;
	b.items = pit;
	b.entry_id = e7;
	n = modal__client__task_logs_batch__pack(&b, wire);
	assert_int_equal(vg_modal_logs_batch(wire, n, logs_out, &out, entry,
	    sizeof(entry), &eof, &items), 0);
	assert_int_equal(items, 2);
	assert_string_equal(vg_buf_str(&out), "abcd");
	assert_string_equal(entry, "7-0");
	assert_int_equal(eof, 0);
	/* The file refuses: the entry does not move, the error comes back. */
	b.entry_id = e8;
	b.has_eof = b.eof = 1;
	n = modal__client__task_logs_batch__pack(&b, wire);
	assert_int_equal(vg_modal_logs_batch(wire, n, logs_out, &out, entry,
	    sizeof(entry), &eof, &items), VG_EIO);
	assert_string_equal(entry, "7-0");
	assert_int_equal(eof, 1);
	/* Not a batch. */
	assert_int_equal(vg_modal_logs_batch((const uint8_t *)"\xff", 1,
	    logs_out, &out, entry, sizeof(entry), &eof, &items), VG_EPARSE);
	assert_int_equal(items, 0);
	vg_buf_release(&out);
}

/* Exec output batches: bytes (else text) in order, batch_index moves
 * only once the file took them, exit_code ends the stream. */
static void
test_exec_batch(void **state)
{
	Modal__Client__RuntimeOutputBatch b =
	    MODAL__CLIENT__RUNTIME_OUTPUT_BATCH__INIT;
	Modal__Client__RuntimeOutputMessage it[2], *pit[2] = { &it[0],
	    &it[1] };
	struct vg_buf out = VG_BUF_INIT;
	uint8_t wire[256], d1[] = "a\0";
	char text[] = "cd";
	unsigned long long batch = 0;
	size_t n, items;
	int eof = 0;

	(void)state;
	modal__client__runtime_output_message__init(&it[0]);
	modal__client__runtime_output_message__init(&it[1]);
	it[0].has_message_bytes = 1;
	it[0].message_bytes.data = d1;
	it[0].message_bytes.len = 2;
	it[1].message = text;
	b.n_items = 2;
	b.items = pit;
	b.has_batch_index = 1;
	b.batch_index = 5;
	n = modal__client__runtime_output_batch__pack(&b, wire);
	assert_int_equal(vg_modal_exec_batch(wire, n, logs_out, &out, &batch,
	    &eof, &items), 0);
	assert_int_equal(items, 2);
	assert_int_equal(out.len, 4);
	assert_memory_equal(out.data, "a\0cd", 4);
	assert_int_equal(batch, 5);
	assert_int_equal(eof, 0);
	/* The file refuses: the batch does not move; an exit code ends. */
	b.batch_index = 6;
	b.has_exit_code = 1;
	b.exit_code = 3;
	n = modal__client__runtime_output_batch__pack(&b, wire);
	assert_int_equal(vg_modal_exec_batch(wire, n, logs_out, &out, &batch,
	    &eof, &items), VG_EIO);
	assert_int_equal(batch, 5);
	assert_int_equal(eof, 1);
	assert_int_equal(vg_modal_exec_batch((const uint8_t *)"\xff", 1,
	    logs_out, &out, &batch, &eof, &items), VG_EPARSE);
	vg_buf_release(&out);
}

/* File operation output: chunks in order and eof, or the error's text. */
static void
test_fs_batch(void **state)
{
	Modal__Client__FilesystemRuntimeOutputBatch b =
	    MODAL__CLIENT__FILESYSTEM_RUNTIME_OUTPUT_BATCH__INIT;
	Modal__Client__SystemErrorMessage em =
	    MODAL__CLIENT__SYSTEM_ERROR_MESSAGE__INIT;
	ProtobufCBinaryData chunks[2];
	struct vg_buf out = VG_BUF_INIT;
	uint8_t wire[256], d1[] = "xy", d2[] = "z";
	char err[64] = "", msg[] = "no such file";
	size_t n;
	int eof = 0;

	(void)state;
	chunks[0].data = d1;
	chunks[0].len = 2;
	chunks[1].data = d2;
	chunks[1].len = 1;
	b.n_output = 2;
	b.output = chunks;
	b.has_eof = b.eof = 1;
	n = modal__client__filesystem_runtime_output_batch__pack(&b, wire);
	assert_int_equal(vg_modal_fs_batch(wire, n, logs_out, &out, &eof, err,
	    sizeof(err)), 0);
	assert_string_equal(vg_buf_str(&out), "xyz");
	assert_int_equal(eof, 1);
	/* An error: its message, nothing written. */
	em.error_message = msg;
	b.error = &em;
	eof = 0;
	n = modal__client__filesystem_runtime_output_batch__pack(&b, wire);
	assert_int_equal(vg_modal_fs_batch(wire, n, logs_out, &out, &eof, err,
	    sizeof(err)), VG_EBACKEND);
	assert_string_equal(err, "no such file");
	assert_string_equal(vg_buf_str(&out), "xyz");
	assert_int_equal(vg_modal_fs_batch((const uint8_t *)"\xff", 1,
	    logs_out, &out, &eof, err, sizeof(err)), VG_EPARSE);
	vg_buf_release(&out);
}

/* Results: the SDK's exit codes, failures of the platform as errors. */
static void
test_result(void **state)
{
	Modal__Client__GenericResult g = MODAL__CLIENT__GENERIC_RESULT__INIT;
	struct vg_err e;
	long code;
	int ended;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_modal_result(&g, &ended, &code, &e), 0);
	assert_false(ended);
	g.has_status = 1;
	g.status = MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_FAILURE;
	g.has_exitcode = 1;
	g.exitcode = 7;
	assert_int_equal(vg_modal_result(&g, &ended, &code, &e), 0);
	assert_true(ended);
	assert_int_equal(code, 7);
	g.status = MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_TIMEOUT;
	assert_int_equal(vg_modal_result(&g, &ended, &code, &e), 0);
	assert_int_equal(code, 124);
	g.status = MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_TERMINATED;
	assert_int_equal(vg_modal_result(&g, &ended, &code, &e), 0);
	assert_int_equal(code, 137);
	g.status = MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_INIT_FAILURE;
	g.exception = (char []){ "bad mount" };
	assert_int_equal(vg_modal_result(&g, &ended, &code, &e), VG_EBACKEND);
	assert_string_equal(e.msg, "modal: the sandbox failed to start: bad "
	    "mount");
}

/* Writes text to dir/name. */
static void
put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* Direct credentials come from the user's ~/.modal.toml ($HOME), never
 * from vigil's state directory; MODAL_CONFIG_PATH names another file. */
static void
test_creds_home(void **state)
{
	char home[] = "/tmp/vg-modal-home-XXXXXX";
	char state_dir[] = "/tmp/vg-modal-state-XXXXXX";
	char want[700], other[256];
	struct vg_modal_direct d;
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_non_null(mkdtemp(home));
	assert_non_null(mkdtemp(state_dir));
	unsetenv("MODAL_TOKEN_ID");
	unsetenv("MODAL_TOKEN_SECRET");
	unsetenv("MODAL_CONFIG_PATH");
	unsetenv("MODAL_PROFILE");
	unsetenv("MODAL_SERVER_URL");
	unsetenv("MODAL_ENVIRONMENT");
	setenv("HOME", home, 1);
	setenv("VIGIL_HOME", state_dir, 1);
	/* A file in the state directory is not Modal's. */
	put(state_dir, ".modal.toml", "[default]\ntoken_id = \"ak-state\"\n"
	    "token_secret = \"as-state\"\n");
	assert_int_equal(vg_modal_direct_find(&d, &e), VG_ENOENT);
	snprintf(want, sizeof(want), "direct needs MODAL_TOKEN_ID and "
	    "MODAL_TOKEN_SECRET, or token_id and token_secret in profile "
	    "'default' of %s/.modal.toml (no such file; MODAL_CONFIG_PATH and "
	    "MODAL_PROFILE choose another; `modal token new` writes one)",
	    home);
	assert_string_equal(e.msg, want);
	vg_modal_direct_release(&d);

	/* What `modal token new` writes is found. */
	put(home, ".modal.toml", "[me]\ntoken_id = \"ak-1\"\n"
	    "token_secret = \"as-1\"\nactive = true\n");
	assert_int_equal(vg_modal_direct_find(&d, &e), 0);
	assert_string_equal(d.token_id, "ak-1");
	snprintf(want, sizeof(want), "profile 'me' of %s/.modal.toml", home);
	assert_string_equal(d.where, want);
	vg_modal_direct_release(&d);

	/* MODAL_CONFIG_PATH wins over the home's file. */
	snprintf(other, sizeof(other), "%s/other.toml", state_dir);
	put(state_dir, "other.toml", "[default]\ntoken_id = \"ak-2\"\n"
	    "token_secret = \"as-2\"\n");
	setenv("MODAL_CONFIG_PATH", other, 1);
	assert_int_equal(vg_modal_direct_find(&d, &e), 0);
	assert_string_equal(d.token_id, "ak-2");
	snprintf(want, sizeof(want), "profile 'default' of %s", other);
	assert_string_equal(d.where, want);
	vg_modal_direct_release(&d);
	unsetenv("MODAL_CONFIG_PATH");

	/* No usable $HOME: the password database's home, not "/" or the
	 * state directory. */
	setenv("HOME", "relative", 1);
	(void)vg_modal_direct_find(&d, &e);
	assert_null(strstr(e.msg, state_dir));
	assert_null(strstr(d.where, state_dir));
	vg_modal_direct_release(&d);

	snprintf(want, sizeof(want), "rm -rf '%s' '%s'", home, state_dir);
	assert_int_equal(system(want), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deframe),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_toml),
		cmocka_unit_test(test_logs_batch),
		cmocka_unit_test(test_exec_batch),
		cmocka_unit_test(test_fs_batch),
		cmocka_unit_test(test_result),
		cmocka_unit_test(test_creds_home),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
