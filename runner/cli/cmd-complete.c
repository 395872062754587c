/*
 * cmd-complete.c - vigil __complete runs|sessions: the ids (and names)
 * that shell completion offers for a command's RUN or SESSION argument,
 * one a line, newest first.  Hidden; written for the completion script
 * (doc.c), so it is quick and quiet: no vigil home yet, an unreadable
 * database or a bad word print nothing and exit 0, and it never creates
 * the home or the database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/home.h"
#include "runner/cli/cmd.h"
#include "runner/core/store.h"

/* Candidates listed at most: completion of an older one takes a prefix. */
#define COMPLETE_MAX	500

struct complete_ctx {
	struct vg_buf	*out;
	int		 n;
};

/* Adds a run's id (runs are looked up by id, prefix or "last"). */
static int
run_cb(void *arg, const struct vg_run_info *r)
{
	struct complete_ctx *c = arg;

	vg_buf_printf(c->out, "%s\n", r->id);
	return ++c->n >= COMPLETE_MAX;
}

/* Adds a session's id and name (open sessions only: the others take no
 * command). */
static int
session_cb(void *arg, const struct vg_session_rec *r)
{
	struct complete_ctx *c = arg;

	vg_buf_printf(c->out, "%s\n", r->id);
	if (r->name[0] != '\0' && (strcmp(r->state, "active") == 0 ||
	    strcmp(r->state, "starting") == 0))
		vg_buf_printf(c->out, "%s\n", r->name);
	return ++c->n >= COMPLETE_MAX;
}

static int
cmd_complete_exec(struct vg_args *a)
{
	struct vg_buf out = VG_BUF_INIT, db = VG_BUF_INIT;
	struct complete_ctx c = { &out, 0 };
	struct vg_store *st = NULL;
	struct vg_err e;
	char *home = vg_home_dir();
	int runs = strcmp(a->argv[0], "runs") == 0;

	vg_err_init(&e);
	/* Never create a home or a database to complete a word. */
	vg_buf_printf(&db, "%s/vigil.db", home);
	if ((!runs && strcmp(a->argv[0], "sessions") != 0) ||
	    access(vg_buf_str(&db), R_OK | W_OK) != 0 ||
	    vg_store_open(home, &st, &e) != 0)
		goto out;
	if (runs) {
		vg_buf_adds(&out, "last\n");
		(void)vg_store_run_list(st, run_cb, &c, &e);
	} else {
		(void)vg_store_session_list(st, session_cb, &c, &e);
	}
	fputs(vg_buf_str(&out), stdout);
out:
	vg_store_close(st);
	vg_buf_release(&out);
	vg_buf_release(&db);
	free(home);
	return VG_EXIT_OK;
}

const struct vg_cmd_entry vg_cmd_complete = {
	.name = "__complete",
	.args_usage = "runs|sessions",
	.summary = "list run or session ids for shell completion",
	.help = "Prints the ids that complete a RUN or SESSION argument, one "
	    "a line,\nnewest first; nothing when there are none or the "
	    "database cannot be read.",
	.opts = (const struct vg_opt[]){ { NULL } },
	.min_args = 1,
	.max_args = 1,
	.hidden = 1,
	.exec = cmd_complete_exec,
};
