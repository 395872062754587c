/*
 * analyse.c - walks the syntax tree of one command the way the shell
 * would run it, without running anything: lists and pipelines carry
 * streams (what flows on stdin and stdout, and where it came from),
 * assignments propagate constants, functions are analysed when called
 * (a function that calls itself from a pipeline or the background is a
 * fork bomb, whatever its name), loops are analysed with their values,
 * redirections are classified like the files they name.  Each simple
 * command is expanded (expand.c), unwrapped (unwrap.c) and classified
 * (classify.c); findings accumulate in the analysis record.
 */
#include <string.h>

#include "runner/policy/analyse.h"
#include "runner/policy/arena.h"
#include "runner/policy/bounds.h"
#include "runner/policy/classify.h"
#include "runner/policy/expand.h"
#include "runner/policy/parse.h"
#include "runner/policy/paths.h"
#include "runner/policy/unwrap.h"
#include "runner/policy/optrun.h"

/* Concatenates stream b after a (both known), or makes a unknown. */
static void
stream_cat(struct pl_an *an, struct pl_stream *a, const struct pl_stream *b)
{
	unsigned t = a->taint | b->taint;

	if (a->known && b->known) {
		char *s = pl_alloc(an->a, a->len + b->len + 1);

		memcpy(s, a->s, a->len);
		memcpy(s + a->len, b->s, b->len);
		a->s = s;
		a->len += b->len;
	} else {
		a->known = 0;
	}
	a->taint = t;
	if (a->producer == NULL)
		a->producer = b->producer;
}

/* A literal single-word command name of a simple command, or NULL. */
static const char *
lit_name(const struct pl_node *n, size_t *len)
{
	const struct pl_part *pt;

	if (n == NULL || n->kind != N_SIMPLE || n->words == NULL)
		return NULL;
	pt = n->words->parts;
	if (pt == NULL || pt->next != NULL || pt->kind != PT_LIT)
		return NULL;
	*len = pt->len;
	return pt->s;
}

/* True when a loop condition can never end the loop. */
static int
cond_forever(const struct pl_node *c, int until)
{
	const char *s;
	size_t n;

	while (c != NULL && c->kind == N_LIST && c->kids != NULL &&
	    c->kids->next == NULL)
		c = c->kids;
	if (c == NULL)
		return 0;
	if (c->kind == N_ARITH && c->words && c->words->parts &&
	    c->words->parts->kind == PT_LIT) {
		const struct pl_part *pt = c->words->parts;
		size_t i;
		int nz = 0;

		for (i = 0; i < pt->len; i++) {
			if (pt->s[i] >= '1' && pt->s[i] <= '9')
				nz = 1;
			else if (pt->s[i] != ' ' && pt->s[i] != '0')
				return 0;
		}
		return !until && nz;
	}
	if ((s = lit_name(c, &n)) == NULL)
		return 0;
	if (until)
		return n == 5 && memcmp(s, "false", 5) == 0 && !c->bang;
	if (c->bang)
		return n == 5 && memcmp(s, "false", 5) == 0;
	if ((n == 4 && memcmp(s, "true", 4) == 0) ||
	    (n == 1 && s[0] == ':'))
		return 1;
	if (n == 5 && memcmp(s, "sleep", 5) == 0)
		return 1;
	if ((n == 1 && s[0] == '[') || (n == 4 && memcmp(s, "test", 4) == 0)) {
		const struct pl_word *w = c->words->next;

		return w != NULL && w->parts && w->parts->kind == PT_LIT &&
		    w->parts->len == 1 && w->parts->s[0] == '1';
	}
	return 0;
}

/* True when simple command n runs "$0" (or "${0}"): the script
 * running it, started again. */
static int
runs_self(const struct pl_node *n)
{
	const struct pl_part *pt, *q;

	if (n->words == NULL || (pt = n->words->parts) == NULL ||
	    pt->kind != PT_PARAM || pt->op != PO_NONE || pt->len != 1 ||
	    pt->s[0] != '0')
		return 0;
	/* "$0" ends with the empty literal of its closing quote. */
	for (q = pt->next; q != NULL; q = q->next)
		if (q->kind != PT_LIT || q->len != 0)
			return 0;
	return 1;
}

/* Walks a function body (name) or a script (name NULL: its calls of
 * "$0") for a call to itself from a pipe or background. */
static int
self_spawn(const struct pl_node *n, const char *name, size_t nlen,
    int ctx, int depth)
{
	const struct pl_node *k;
	const char *s;
	size_t l;

	if (n == NULL || depth > 32)
		return 0;
	if (n->kind == N_SIMPLE) {
		if (name == NULL)
			return ctx && runs_self(n);
		s = lit_name(n, &l);
		return ctx && s != NULL && l == nlen &&
		    memcmp(s, name, l) == 0;
	}
	for (k = n->kids; k != NULL; k = k->next) {
		int c = ctx || n->kind == N_PIPE ||
		    (n->kind == N_LIST && k->op == OP_BG);

		if (self_spawn(k, name, nlen, c, depth + 1))
			return 1;
	}
	return 0;
}

/* Applies the assignments of a command with no words: they persist. */
static void
do_assigns(struct pl_an *an, struct pl_word *w)
{
	for (; w != NULL && !an->over; w = w->next) {
		const struct pl_part *pt = w->parts;
		size_t nl = 0, pl;
		struct pl_field f;

		while (nl < pt->len && pt->s[nl] != '=' && pt->s[nl] != '[' &&
		    pt->s[nl] != '+')
			nl++;
		pl = nl;
		while (pl < pt->len && pt->s[pl] != '=')
			pl++;
		if (w->isarr) {
			struct pl_field *fv = NULL;
			int n = 0, cap = 0, k;
			struct vg_buf *b = pl_buf_get(an);
			struct pl_word *e;
			struct pl_var *v;
			unsigned t = 0;

			if (b == NULL)
				return;
			for (e = w->arr; e != NULL; e = e->next)
				if (pl_expand_word(an, e, &fv, &n, &cap) != 0)
					break;
			for (k = 0; k < n; k++) {
				if (k > 0)
					vg_buf_addc(b, '\0');
				vg_buf_add(b, fv[k].s, fv[k].len);
				t |= fv[k].taint;
			}
			pl_var_set(an, pt->s, nl, b->data, b->len, t);
			v = pl_var_get(an, pt->s, nl);
			if (v != NULL)
				v->isarr = 1;
			pl_buf_put(an);
			continue;
		}
		/* Expand the value: the word minus its "NAME=" prefix. */
		{
			struct pl_word vw = *w;
			struct pl_part first = *pt;

			first.s = pt->s + pl + 1;
			first.len = pt->len - pl - 1;
			vw.parts = &first;
			if (pl_expand_single(an, &vw, &f) != 0)
				return;
			if (pl > 0 && pt->s[pl - 1] == '+' && nl < pl) {
				/* NAME+=value appends. */
				struct pl_var *old = pl_var_get(an, pt->s, nl);

				if (old != NULL && old->val != NULL) {
					char *c = pl_alloc(an->a, old->vlen +
					    f.len + 1);

					memcpy(c, old->val, old->vlen);
					memcpy(c + old->vlen, f.s, f.len);
					f.s = c;
					f.len += old->vlen;
					f.taint |= old->taint;
				}
			}
			pl_var_set(an, pt->s, nl, f.s, f.len, f.taint);
			if (nl == 8 && memcmp(pt->s, "HISTFILE", 8) == 0 &&
			    f.len == 9 && memcmp(f.s, "/dev/null", 9) == 0)
				pl_find(an, VG_CAT_SYSCONFIG,
				    "builtin:history-off", w->off, w->len,
				    "shell history is disabled (HISTFILE=/dev/null)");
		}
	}
}

/* True when s names the /dev/tcp or /dev/udp pseudo-devices. */
static int
is_devnet(const char *s)
{
	return strncmp(s, "/dev/tcp/", 9) == 0 ||
	    strncmp(s, "/dev/udp/", 9) == 0;
}

/* Programs that behave as command interpreters for network analysis. */
static int
is_shellish(const char *name)
{
	static const char *const sh[] = { "sh", "bash", "zsh", "dash", "ksh",
	    "ash", "mksh", "fish", "csh", "tcsh", "python", "perl", "ruby",
	    "php", "node", "lua", "exec", "busybox", "socat", "awk", NULL };
	int k;

	for (k = 0; sh[k] != NULL; k++)
		if (strcmp(name, sh[k]) == 0)
			return 1;
	return 0;
}

/* Analyses a simple command: expansion, redirections, dispatch. */
static void
analyse_simple(struct pl_an *an, struct pl_node *n, struct pl_stream *in,
    struct pl_stream *out)
{
	struct pl_field *argv = NULL, rf;
	struct pl_word *w;
	struct pl_redir *r;
	struct pl_stream cin = *in, cout;
	const char *outfile = NULL, *prog = NULL;
	int argc = 0, cap = 0, netout = 0, outpath = 0;
	size_t off = n->off, len = n->len;

	pl_span(an, &off, &len);
	for (w = n->words; w != NULL && !an->over; w = w->next)
		if (pl_expand_word(an, w, &argv, &argc, &cap) != 0)
			return;
	if (an->over)
		return;
	if (argc > 0 && !(argv[0].flags & F_UNK))
		prog = pl_prog_name(an->a, argv[0].s, argv[0].len);
	/* Input redirections and here-documents feed stdin. */
	for (r = n->redirs; r != NULL && !an->over; r = r->next) {
		int infd = r->kind == R_IN || r->kind == R_HEREDOC ||
		    r->kind == R_HERESTR || r->kind == R_RW ||
		    r->kind == R_DUPIN;

		if (r->target == NULL)
			continue;
		if (pl_expand_single(an, r->target, &rf) != 0)
			return;
		if (r->kind == R_HEREDOC || r->kind == R_HERESTR) {
			if (r->fd > 0)
				continue;
			if (rf.flags & F_UNK)
				pl_stream_unknown(&cin, rf.taint | T_VAR);
			else if (r->kind == R_HERESTR) {
				char *s = pl_alloc(an->a, rf.len + 2);

				memcpy(s, rf.s, rf.len);
				s[rf.len] = '\n';
				pl_stream_text(&cin, s, rf.len + 1, rf.taint);
			} else {
				pl_stream_text(&cin, rf.s, rf.len, rf.taint);
			}
			continue;
		}
		if (is_devnet(rf.s)) {
			if (prog != NULL && is_shellish(prog))
				pl_find(an, VG_CAT_REVERSE_SHELL,
				    "builtin:devtcp-shell", off, len,
				    "'%s' has its input or output connected "
				    "to a network socket (%.*s)", prog,
				    (int)(rf.len > 60 ? 60 : rf.len), rf.s);
			else if (argc == 0 && r->kind == R_RW)
				pl_find(an, VG_CAT_REVERSE_SHELL,
				    "builtin:devtcp-fd", off, len,
				    "opens a network socket as a shell file "
				    "descriptor (%.*s)",
				    (int)(rf.len > 60 ? 60 : rf.len), rf.s);
			if (infd)
				pl_stream_unknown(&cin, T_SOCK | T_NET);
			if (!infd || r->kind == R_RW)
				netout = 1;
			continue;
		}
		if (r->kind == R_DUPIN || r->kind == R_DUPOUT) {
			/* >&N, <&N, >&- : descriptors, not files. */
			if (rf.len == 0 || rf.s[0] == '-' ||
			    (rf.s[0] >= '0' && rf.s[0] <= '9'))
				continue;
		}
		if (infd) {
			if (r->fd > 0 && r->kind != R_RW)
				continue;
			if (rf.proc != NULL) {
				cin = *rf.proc;
			} else {
				struct pl_path pp;
				struct pl_file *tf;

				pl_path_classify(an, &rf, &pp);
				tf = pl_file_find(an, pp.abs);
				if (tf != NULL && tf->content != NULL)
					pl_stream_text(&cin, tf->content,
					    tf->clen, tf->taint);
				else
					pl_stream_unknown(&cin, (tf ?
					    tf->taint : 0) | T_PROG);
				if (pp.attr & PA_SECRET) {
					cin.taint |= T_SECRET;
					cin.producer = pp.abs;
				}
			}
			if (r->kind != R_RW)
				continue;
		}
		/* Output: the target is written. */
		if (rf.proc != NULL)
			continue;
		pl_classify_write(an, &rf, r->kind == R_APPEND ||
		    r->kind == R_ALLAPP, "redirection");
		if (r->fd <= 1 || r->kind == R_ALL || r->kind == R_ALLAPP) {
			struct pl_path pp;

			pl_path_classify(an, &rf, &pp);
			if (pp.cls != PC_SPECIAL)
				outfile = pp.abs;
			outpath = 1;
		}
	}
	if (an->over)
		return;
	if (argc == 0) {
		do_assigns(an, n->assigns);
		pl_stream_text(out, "", 0, 0);
		return;
	}
	if (n->assigns != NULL) {
		/* Prefix assignments are expanded for their substitutions;
		 * a few change how the program behaves. */
		for (w = n->assigns; w != NULL; w = w->next) {
			const struct pl_part *pt = w->parts;

			if (pl_expand_single(an, w, &rf) != 0)
				return;
			pl_optrun_env(an, &rf, w->off, w->len);
			if (pt->len >= 11 && memcmp(pt->s, "LD_PRELOAD=", 11)
			    == 0 && rf.len > 11) {
				struct pl_field pf = rf;
				struct pl_path pp;

				pf.s += 11;
				pf.len -= 11;
				pl_path_classify(an, &pf, &pp);
				if (pp.cls == PC_PROTECTED &&
				    !(pp.attr & PA_SYSBIN))
					pl_find(an, VG_CAT_SYSCONFIG,
					    "builtin:ld-preload", w->off,
					    w->len, "preloads a library "
					    "from '%s'", pp.abs);
			}
		}
	}
	pl_stream_unknown(&cout, 0);
	pl_run_argv(an, argv, argc, off, len, &cin, &cout, 0);
	if (netout && (cout.taint & (T_SECRET | T_ENVDUMP)))
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:devtcp-exfil", off,
		    len, "sends %s to a network socket",
		    (cout.taint & T_SECRET) ? "secret data" :
		    "the environment");
	if (outfile != NULL)
		pl_file_note(an, outfile, cout.taint, cout.known ? cout.s :
		    NULL, cout.len);
	if (outpath || netout)
		pl_stream_text(out, "", 0, 0);
	else
		*out = cout;
}

/* Analyses the redirections of a compound command (writes only). */
static void
compound_redirs(struct pl_an *an, struct pl_node *n, struct pl_stream *in)
{
	struct pl_redir *r;
	struct pl_field rf;

	for (r = n->redirs; r != NULL && !an->over; r = r->next) {
		if (r->target == NULL)
			continue;
		if (pl_expand_single(an, r->target, &rf) != 0)
			return;
		if (r->kind == R_HEREDOC || r->kind == R_HERESTR) {
			if (rf.flags & F_UNK)
				pl_stream_unknown(in, rf.taint);
			else
				pl_stream_text(in, rf.s, rf.len, rf.taint);
			continue;
		}
		if (r->kind == R_IN || r->kind == R_DUPIN ||
		    r->kind == R_DUPOUT)
			continue;
		if (is_devnet(rf.s)) {
			pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:devtcp-shell",
			    n->off, n->len, "a command group has its input or "
			    "output connected to a network socket");
			continue;
		}
		pl_classify_write(an, &rf, r->kind == R_APPEND ||
		    r->kind == R_ALLAPP, "redirection");
	}
}

/* Analyses a loop body with the loop state set up. */
static void
loop_body(struct pl_an *an, struct pl_node *body, struct pl_stream *in,
    struct pl_stream *out, int forever, long iters, size_t off, size_t len)
{
	int sinf = an->infloop, sbg = an->loopbg, swait = an->loopwait;
	int spoll = an->looppoll;
	long sit = an->loopiter;

	an->infloop = sinf || forever;
	an->loopbg = 0;
	an->loopwait = 0;
	an->looppoll = 0;
	if (iters > 0)
		an->loopiter = (sit > 0 ? sit : 1) * iters;
	pl_analyse_node(an, body, in, out);
	if (forever && an->loopbg > 0 && an->loopwait == 0)
		pl_find(an, VG_CAT_DISRUPTION, "builtin:spawn-loop", off, len,
		    "an endless loop starts background processes without "
		    "waiting for them");
	if (forever && an->looppoll > 0 && an->loopwait == 0)
		pl_find(an, VG_CAT_SCHEDULER, "builtin:poll-loop", off, len,
		    "an endless loop queries the scheduler without pausing");
	an->looppoll = spoll;
	an->infloop = sinf;
	an->loopbg = sbg + an->loopbg;
	an->loopwait = swait;
	an->loopiter = sit;
}

void
pl_analyse_node(struct pl_an *an, struct pl_node *n, struct pl_stream *in,
    struct pl_stream *out)
{
	struct pl_node *k;
	struct pl_stream s, o, cin;
	size_t off, len;

	pl_stream_unknown(out, 0);
	if (n == NULL || an->over || !pl_step(an, 1))
		return;
	off = n->off;
	len = n->len;
	pl_span(an, &off, &len);
	switch (n->kind) {
	case N_SIMPLE:
		analyse_simple(an, n, in, out);
		break;
	case N_LIST: {
		int first = 1, sbg = an->bg;

		for (k = n->kids; k != NULL && !an->over; k = k->next) {
			an->bg = k->op == OP_BG;
			if (an->bg && an->loopiter + an->infloop > 0)
				an->loopbg++;
			pl_analyse_node(an, k, in, &o);
			if (an->bg) {
				pl_stream_text(&o, "", 0, o.taint);
			}
			if (first)
				*out = o;
			else
				stream_cat(an, out, &o);
			first = 0;
		}
		an->bg = sbg;
		if (first)
			pl_stream_text(out, "", 0, 0);
		break;
	}
	case N_PIPE: {
		an->inpipe++;
		s = *in;
		for (k = n->kids; k != NULL && !an->over; k = k->next) {
			pl_analyse_node(an, k, &s, &o);
			s = o;
		}
		an->inpipe--;
		*out = s;
		break;
	}
	case N_SUBSHELL:
	case N_GROUP: {
		const char *scwd = an->cwd;

		cin = *in;
		compound_redirs(an, n, &cin);
		pl_analyse_node(an, n->kids, &cin, out);
		if (n->kind == N_SUBSHELL)
			an->cwd = scwd;
		break;
	}
	case N_IF:
		cin = *in;
		compound_redirs(an, n, &cin);
		pl_stream_text(out, "", 0, 0);
		for (k = n->kids; k != NULL && !an->over; k = k->next) {
			pl_analyse_node(an, k, &cin, &o);
			stream_cat(an, out, &o);
		}
		out->known = 0;
		break;
	case N_WHILE:
	case N_UNTIL: {
		int forever = cond_forever(n->kids, n->kind == N_UNTIL);

		cin = *in;
		compound_redirs(an, n, &cin);
		pl_analyse_node(an, n->kids, &cin, &o);
		if (n->kids != NULL)
			loop_body(an, n->kids->next, &cin, out, forever, 0,
			    off, len);
		out->known = 0;
		break;
	}
	case N_FOR: {
		struct pl_field *fv = NULL;
		struct pl_word *w;
		int nf = 0, cap = 0, i;
		long iters, shint = an->loopiter;

		cin = *in;
		compound_redirs(an, n, &cin);
		an->loopiter = 0;
		if (n->arith != NULL) {
			/* for ((i=0; i<N; i++)): the largest literal is a
			 * fair bound for how often the body runs. */
			long big = 0, v = 0;
			size_t q;

			for (q = 0; q <= n->arithlen; q++) {
				char c = q < n->arithlen ? n->arith[q] : ' ';

				if (c >= '0' && c <= '9') {
					if (v < 100000000)
						v = v * 10 + (c - '0');
				} else {
					if (v > big)
						big = v;
					v = 0;
				}
			}
			if (pl_expand_single(an, n->words, fv = pl_alloc(an->a,
			    sizeof(*fv))) != 0)
				break;
			iters = big > 0 ? big : 1;
			if (strstr(n->arith, ";;") != NULL)
				iters = 1000000000;
			an->loopiter = shint;
			loop_body(an, n->kids, &cin, out, iters >= 1000000000,
			    iters, off, len);
			out->known = 0;
			break;
		}
		for (w = n->words; w != NULL && !an->over; w = w->next)
			if (pl_expand_word(an, w, &fv, &nf, &cap) != 0)
				break;
		iters = an->loopiter > nf ? an->loopiter : nf;
		if (!n->forin)
			iters = 1;
		an->loopiter = shint;
		if (nf == 0 || !n->forin) {
			if (n->forin == 0 && n->name != NULL)
				pl_var_set(an, n->name, n->namelen, "\001", 1,
				    T_VAR);
			loop_body(an, n->kids, &cin, out, 0, iters, off, len);
		}
		for (i = 0; i < nf && i < 4 && !an->over; i++) {
			int pick = i < 3 ? i : nf - 1;

			if (i == 3 && nf <= 4)
				break;
			pl_var_set(an, n->name, n->namelen, fv[pick].s,
			    fv[pick].len, fv[pick].taint);
			loop_body(an, n->kids, &cin, &o, 0, iters, off, len);
		}
		out->known = 0;
		break;
	}
	case N_CASE: {
		struct pl_field f;

		cin = *in;
		compound_redirs(an, n, &cin);
		if (n->subject != NULL && pl_expand_single(an, n->subject, &f))
			break;
		for (k = n->kids; k != NULL && !an->over; k = k->next)
			pl_analyse_node(an, k->kids, &cin, &o);
		out->known = 0;
		break;
	}
	case N_CASEITEM:
		pl_analyse_node(an, n->kids, in, out);
		break;
	case N_FUNC: {
		struct pl_func *f = pl_alloc(an->a, sizeof(*f));

		f->name = n->name;
		f->nlen = n->namelen;
		f->body = n->kids;
		f->next = an->funcs;
		an->funcs = f;
		if (self_spawn(n->kids, n->name, n->namelen, 0, 0))
			pl_find_floor(an, PL_FLOOR_FORKBOMB, VG_CAT_DISRUPTION,
			    "builtin:fork-bomb",
			    off, len, "function '%.*s' starts copies of "
			    "itself in a pipeline or the background "
			    "(fork bomb)", (int)(n->namelen > 40 ? 40 :
			    n->namelen), n->name);
		pl_stream_text(out, "", 0, 0);
		break;
	}
	case N_ARITH:
	case N_COND: {
		struct pl_field *fv = NULL;
		struct pl_word *w;
		int nf = 0, cap = 0;

		for (w = n->words; w != NULL && !an->over; w = w->next)
			if (pl_expand_word(an, w, &fv, &nf, &cap) != 0)
				break;
		pl_stream_text(out, "", 0, 0);
		break;
	}
	}
}

void
pl_script_self_spawn(struct pl_an *an, const struct pl_node *root,
    size_t off, size_t len)
{
	if (self_spawn(root, NULL, 0, 0, 0))
		pl_find_floor(an, PL_FLOOR_FORKBOMB, VG_CAT_DISRUPTION,
		    "builtin:fork-bomb", off, len, "the script starts copies "
		    "of itself ($0) in a pipeline or the background (fork "
		    "bomb)");
}

/* Runs a function defined earlier in the command. */
static void
call_func(struct pl_an *an, struct pl_func *f, struct pl_field *argv,
    int argc, size_t off, size_t len, struct pl_stream *in,
    struct pl_stream *out)
{
	const char *spos[9];
	int snpos = an->npos;
	unsigned staint = an->postaint;

	if (f->active) {
		if (an->bg || an->inpipe)
			pl_find_floor(an, PL_FLOOR_FORKBOMB, VG_CAT_DISRUPTION,
			    "builtin:fork-bomb",
			    off, len, "function '%.*s' starts copies of "
			    "itself in a pipeline or the background "
			    "(fork bomb)", (int)(f->nlen > 40 ? 40 : f->nlen),
			    f->name);
		pl_stream_unknown(out, 0);
		return;
	}
	if (an->fdepth >= 16) {
		pl_stream_unknown(out, 0);
		return;
	}
	memcpy(spos, an->pos, sizeof(spos));
	pl_pos_set(an, argv + 1, argc - 1);
	f->active = 1;
	an->fdepth++;
	pl_analyse_node(an, f->body, in, out);
	an->fdepth--;
	f->active = 0;
	memcpy(an->pos, spos, sizeof(spos));
	an->npos = snpos;
	an->postaint = staint;
}

/* Records the normalised text of a simple command for glob rules. */
static void
note_norm(struct pl_an *an, struct pl_field *argv, int argc, size_t off,
    size_t len)
{
	struct vg_buf *b = pl_buf_get(an);
	struct pl_normcmd *nc;
	int k;
	size_t i;

	if (b == NULL)
		return;
	for (k = 0; k < argc; k++) {
		if (k > 0)
			vg_buf_addc(b, ' ');
		for (i = 0; i < argv[k].len; i++)
			vg_buf_addc(b, argv[k].s[i] == PL_UNK ? '?' :
			    argv[k].s[i]);
	}
	nc = pl_alloc(an->a, sizeof(*nc));
	nc->s = pl_strndup(an->a, b->data, b->len);
	nc->off = off;
	nc->len = len;
	nc->nest = an->nest;
	nc->next = an->norms;
	an->norms = nc;
	an->curnorm = nc->s;
	pl_buf_put(an);
}

/* A command whose name is not known statically. */
static void
dynamic_cmd(struct pl_an *an, struct pl_field *argv, int argc, size_t off,
    size_t len, struct pl_stream *in, struct pl_stream *out, int priv)
{
	struct pl_field *f0 = &argv[0];
	const char *slash = NULL;
	size_t i;
	int k;

	if (f0->taint & T_NET) {
		pl_find(an, VG_CAT_REMOTE_CODE, "builtin:net-command", off, len,
		    "the program to run comes from downloaded content");
		pl_find_floor(an, PL_FLOOR_OPAQUE, VG_CAT_OPAQUE,
		    "builtin:opaque-command", off, len, "the program to run is "
		    "only known at run time");
		return;
	}
	if (f0->taint & T_DECODED) {
		pl_find(an, VG_CAT_OBFUSCATION, "builtin:decoded-command", off,
		    len, "the program to run is produced by decoding data");
		pl_find_floor(an, PL_FLOOR_OPAQUE, VG_CAT_OPAQUE,
		    "builtin:opaque-command", off, len, "the program to run is "
		    "only known at run time");
		return;
	}
	/* "$PREFIX/bin/python", "$(git rev-parse --show-toplevel)/build.sh":
	 * the base name is known, only the directory is not. */
	for (i = 0; i < f0->len; i++)
		if (f0->s[i] == '/')
			slash = f0->s + i;
	if (slash != NULL && (slash[1] == '\0' ||
	    memchr(slash, PL_UNK, f0->len - (size_t)(slash - f0->s)) != NULL))
		slash = NULL;
	/* The program's name is the output of a program, read from a file
	 * or a stream: only known at run time, unlike a name the task's
	 * environment gives ("$CC", "$EDITOR"). */
	if (slash == NULL && (f0->taint & (T_PROG | T_SHELL | T_SECRET |
	    T_SOCK)) && !(f0->taint & T_SETUP)) {
		pl_find_floor(an, PL_FLOOR_OPAQUE, VG_CAT_OPAQUE,
		    "builtin:opaque-command", off, len, "the program to run is "
		    "the output of another program, only known at run time");
		pl_stream_unknown(out, T_PROG);
		return;
	}
	if (slash != NULL) {
		struct pl_field *nv = pl_alloc(an->a, (size_t)argc *
		    sizeof(*nv));

		memcpy(nv, argv, (size_t)argc * sizeof(*nv));
		nv[0].s = slash + 1;
		nv[0].len = f0->len - (size_t)(slash + 1 - f0->s);
		nv[0].flags &= ~(unsigned)F_UNK;
		pl_run_argv(an, nv, argc, off, len, in, out, priv);
		return;
	}
	pl_stream_unknown(out, T_PROG);
	for (k = 1; k < argc; k++) {
		struct pl_path pp;

		if (argv[k].len == 0 || argv[k].s[0] == '-')
			continue;
		pl_path_classify(an, &argv[k], &pp);
		if ((pp.cls == PC_PROTECTED && !(pp.attr & PA_UNRESOLVED)) ||
		    pp.cls == PC_DEVICE) {
			pl_find(an, VG_CAT_OBFUSCATION, "builtin:dynamic-command",
			    off, len, "a program chosen at run time is given "
			    "the protected path '%s'", pp.abs);
			return;
		}
	}
}

void
pl_run_argv(struct pl_an *an, struct pl_field *argv, int argc, size_t off,
    size_t len, struct pl_stream *in, struct pl_stream *out, int priv)
{
	struct pl_cmd c;
	struct pl_func *f;
	int guard, handled, k;

	pl_stream_unknown(out, T_PROG);
	for (guard = 0; guard < 24 && argc > 0 && !an->over; guard++) {
		if (!pl_step(an, 1))
			return;
		if (argv[0].flags & F_UNK) {
			dynamic_cmd(an, argv, argc, off, len, in, out, priv);
			return;
		}
		memset(&c, 0, sizeof(c));
		c.argv = argv;
		c.argc = argc;
		c.name = pl_prog_name(an->a, argv[0].s, argv[0].len);
		c.off = off;
		c.len = len;
		c.in = in;
		c.out = out;
		c.wrapped_priv = priv;
		if (an->want_norm)
			note_norm(an, argv, argc, off, len);
		if (memchr(argv[0].s, '/', argv[0].len) == NULL) {
			for (f = an->funcs; f != NULL; f = f->next) {
				if (f->nlen == argv[0].len &&
				    memcmp(f->name, argv[0].s, f->nlen) == 0) {
					call_func(an, f, argv, argc, off, len,
					    in, out);
					return;
				}
			}
		}
		pl_optrun(an, &c);
		handled = 0;
		k = pl_unwrap(an, &c, &priv, &handled);
		if (handled)
			return;
		if (k > 0 && k < argc) {
			argv += k;
			argc -= k;
			continue;
		}
		if (k > 0)
			return;		/* a wrapper with no command */
		pl_classify(an, &c);
		return;
	}
}

int
pl_analyse_text(struct pl_an *an, const char *text, size_t len, size_t off,
    size_t slen, struct pl_stream *in, struct pl_stream *out)
{
	struct pl_parse_err err;
	struct pl_node *n;
	char *copy;
	int sfix = an->spanfix;
	size_t soff = an->span_off, slen0 = an->span_len, i;

	pl_stream_unknown(out, T_PROG);
	if (an->nest >= PL_MAX_NEST) {
		an->over = 1;
		an->overwhy = "nested code too deep";
		return -1;
	}
	/* Unknown bytes become a reference to a variable that is never
	 * set, so "rm -rf $X" stays "rm -rf <unknown>" in nested code. */
	if (memchr(text, PL_UNK, len) != NULL) {
		struct vg_buf *b = pl_buf_get(an);

		if (b == NULL)
			return -1;
		for (i = 0; i < len; i++) {
			if (text[i] == PL_UNK)
				vg_buf_adds(b, "${__vigil_unknown}");
			else
				vg_buf_addc(b, text[i]);
		}
		copy = pl_strndup(an->a, b->data, b->len);
		len = b->len;
		pl_buf_put(an);
	} else {
		copy = pl_strndup(an->a, text, len);
	}
	for (i = 0; i < len; i++)
		if (copy[i] == PL_BOPEN || copy[i] == PL_BCOMMA ||
		    copy[i] == PL_BCLOSE)
			copy[i] = ' ';
	n = pl_parse(an->a, copy, len, &an->work, &err);
	if (n == NULL) {
		if (an->work < 0) {
			an->over = 1;
			an->overwhy = "too complex (step limit)";
			return -1;
		}
		pl_find(an, VG_CAT_UNPARSEABLE, "builtin:nested-parse", off,
		    slen, "nested shell code does not parse: %s",
		    err.msg ? err.msg : "syntax error");
		return -1;
	}
	if (!sfix) {
		an->spanfix = 1;
		an->span_off = off;
		an->span_len = slen;
	}
	an->nest++;
	pl_script_self_spawn(an, n, off, slen);
	pl_analyse_node(an, n, in, out);
	an->nest--;
	an->spanfix = sfix;
	an->span_off = soff;
	an->span_len = slen0;
	return 0;
}
