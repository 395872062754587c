/*
 * slurm-cli.c - talking to Slurm through its commands: sbatch --parsable,
 * sacct or squeue in parsable form, scancel, scontrol show config and
 * show partition.  Each command is started from an argv vector (no
 * shell), with a deadline; its output is parsed by the vg_slurm_parse_*
 * functions below, which take untrusted text (a fuzz harness drives them)
 * and never read past what they were given.
 *
 * Queries are batched: sacct takes every array job id of the run in one
 * -j list (each id names all elements of its array); squeue loads the
 * user's jobs once (--me) and filters by the run's job name.  One call,
 * one RPC, however many tasks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/path.h"
#include "schedulers/slurm.h"

#define ROWS_MAX	2000000		/* rows from one answer */
#define CMD_TIMEOUT_MS	60000		/* Slurm's own MessageTimeout is 10 s */

/* Copies at most n-1 bytes of [s, s+len) into a NUL-terminated buffer. */
static void
copy_field(char *dst, size_t n, const char *s, size_t len)
{
	if (len >= n)
		len = n - 1;
	memcpy(dst, s, len);
	dst[len] = '\0';
}



int
vg_slurm_run(const char *const *argv, struct vg_buf *out, struct vg_buf *err,
    int timeout_ms, struct vg_err *e)
{
	return vg_cluster_cmd(argv, out, err, timeout_ms, vg_slurm_transient,
	    e);
}

/* Messages of failures that go away by themselves (slurm_errno.h texts
 * and what the commands print around them). */
static const char *const transient[] = {
	"Socket timed out",
	"Resource temporarily unavailable",
	"temporarily unable to accept job",
	"Unable to contact slurm controller",
	"Connection refused",
	"Zero Bytes were transmitted or received",
	"Slurm backup controller in standby mode",
	"Rate limit exceeded",
	"rate limit",
	"Too many pending jobs",
	"Communication connection failure",
	"Slurmctld is busy",
	"Transport endpoint is not connected",
};

/* True when a Slurm error message describes a passing condition. */
int
vg_slurm_transient(const char *msg)
{
	size_t i;

	for (i = 0; i < sizeof transient / sizeof transient[0]; i++)
		if (strcasestr(msg, transient[i]) != NULL)
			return 1;
	return 0;
}

/* Returns the value after "Key = " on its own line of text, or NULL. */
static const char *
config_value(const char *text, const char *key, size_t *len)
{
	const char *p = text, *v;
	size_t klen = strlen(key);

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, klen) == 0 && (p[klen] == ' ' ||
		    p[klen] == '=')) {
			v = p + klen;
			while (*v == ' ')
				v++;
			if (*v == '=') {
				v++;
				while (*v == ' ')
					v++;
				*len = strcspn(v, "\n");
				return v;
			}
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return NULL;
}

/* Reads the few settings vigil needs from `scontrol show config`. */
int
vg_slurm_parse_config(const char *text, struct vg_slurm_conf_info *ci,
    struct vg_err *e)
{
	const char *v;
	size_t len;
	char buf[64];

	memset(ci, 0, sizeof *ci);
	v = config_value(text, "MaxArraySize", &len);
	if (v == NULL)
		return vg_err_set(e, VG_EPARSE, "scontrol show config: no "
		    "MaxArraySize in its output");
	copy_field(buf, sizeof buf, v, len);
	ci->max_array = atoi(buf);
	if (ci->max_array < 1)
		return vg_err_set(e, VG_EPARSE, "scontrol show config: bad "
		    "MaxArraySize '%s'", buf);
	ci->min_job_age = 300;	/* slurm.conf(5) default */
	v = config_value(text, "MinJobAge", &len);
	if (v != NULL) {
		copy_field(buf, sizeof buf, v, len);
		ci->min_job_age = atoi(buf);
	}
	v = config_value(text, "AccountingStorageType", &len);
	if (v != NULL) {
		copy_field(buf, sizeof buf, v, len);
		ci->accounting = strcmp(buf, "accounting_storage/none") != 0 &&
		    strcmp(buf, "(null)") != 0 && buf[0] != '\0';
	}
	v = config_value(text, "SLURM_VERSION", &len);
	if (v != NULL)
		copy_field(ci->version, sizeof ci->version, v, len);
	return 0;
}

/* Splits a line on '|' into at most n fields; returns how many. */
static size_t
split(char *line, char **f, size_t n)
{
	size_t i = 0;
	char *p = line;

	while (i < n) {
		f[i++] = p;
		p = strchr(p, '|');
		if (p == NULL)
			break;
		*p++ = '\0';
	}
	return i;
}

/* Parses a decimal number that must fill [s, end); returns -1 if not. */
static long
number(const char *s, const char **endp)
{
	long v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		if (v > (LONG_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*p++ - '0');
	}
	*endp = p;
	return v;
}

/* Appends one row per array element in spec ("3", "3-5", "1,4-6%2",
 * "[1,4-6%2]") to out, copying the rest of proto. */
static int
add_tasks(struct vg_slurm_rows *out, const struct vg_slurm_row *proto,
    const char *spec, struct vg_err *e)
{
	const char *p = spec, *end;
	long lo, hi, t;

	if (*p == '[')
		p++;
	for (;;) {
		if ((lo = number(p, &end)) < 0)
			goto bad;
		p = end;
		hi = lo;
		if (*p == '-') {
			if ((hi = number(p + 1, &end)) < lo)
				goto bad;
			p = end;
		}
		if (hi - lo >= ROWS_MAX || out->n + (size_t)(hi - lo) >=
		    ROWS_MAX)
			return vg_err_set(e, VG_ELIMIT, "slurm: more than %d "
			    "array elements in one answer", ROWS_MAX);
		for (t = lo; t <= hi; t++) {
			out->v = vg_xgrow(out->v, &out->cap, out->n + 1,
			    sizeof *out->v);
			out->v[out->n] = *proto;
			out->v[out->n++].task = t;
		}
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '%') {
			if (number(p + 1, &end) < 0)
				goto bad;
			p = end;
		}
		if (*p == ']')
			p++;
		if (*p != '\0')
			goto bad;
		return 0;
	}
bad:
	return vg_err_set(e, VG_EPARSE, "slurm: bad array task list '%s'",
	    spec);
}

/* Fills state and by_uid from "CANCELLED by 1000" or "RUNNING". */
static void
parse_state(struct vg_slurm_row *row, const char *s)
{
	const char *by = strstr(s, " by ");
	const char *end;
	long uid;

	row->by_uid = -1;
	if (by != NULL) {
		copy_field(row->state, sizeof row->state, s, (size_t)(by - s));
		uid = number(by + 4, &end);
		if (uid >= 0 && *end == '\0')
			row->by_uid = uid;
	} else
		copy_field(row->state, sizeof row->state, s, strlen(s));
}

/* Runs fn over each line of text (a copy; lines are modifiable). */
static int
each_line(const char *text, struct vg_slurm_rows *out,
    int (*fn)(char *line, struct vg_slurm_rows *out, struct vg_err *e),
    struct vg_err *e)
{
	char *copy = vg_xstrdup(text), *line, *next;
	int r = 0;

	for (line = copy; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (*line == '\0')
			continue;
		if ((r = fn(line, out, e)) != 0)
			break;
	}
	free(copy);
	return r;
}

/* The row of the job that step line row belongs to: the last row with
 * its job and task (sacct prints a job's steps right after it). */
static struct vg_slurm_row *
step_owner(struct vg_slurm_rows *out, const struct vg_slurm_row *row)
{
	size_t i = out->n;

	while (i-- > 0)
		if (out->v[i].job == row->job && out->v[i].task == row->task)
			return &out->v[i];
	return NULL;
}

/* One sacct line: JobID|State|ExitCode|Reason|NodeList, then the usage
 * fields of VG_SLURM_SACCT_FORMAT (an older answer of five fields has no
 * usage).  Lines of steps ("12_3.batch") add their usage to the job's
 * row. */
static int
sacct_line(char *line, struct vg_slurm_rows *out, struct vg_err *e)
{
	struct vg_slurm_row row, *job_row;
	char *f[VG_SLURM_SACCT_FIELDS + 1], orig[208];
	const char *end, *us;
	long job, code, sig, task;
	size_t nf;

	snprintf(orig, sizeof orig, "%s", line);
	nf = split(line, f, VG_SLURM_SACCT_FIELDS + 1);
	if (nf != 5 && nf != VG_SLURM_SACCT_FIELDS)
		return vg_err_set(e, VG_EPARSE, "sacct: expected %d fields "
		    "(or 5) separated by '|' in '%s'", VG_SLURM_SACCT_FIELDS,
		    orig);
	memset(&row, 0, sizeof row);
	if ((job = number(f[0], &end)) < 0 || (*end != '\0' && *end != '_' &&
	    *end != '.'))
		return vg_err_set(e, VG_EPARSE, "sacct: bad JobID '%.100s'",
		    f[0]);
	if (nf == VG_SLURM_SACCT_FIELDS)
		vg_slurm_parse_usage(f + 5, &row);
	if (strchr(end, '.') != NULL) {
		/* A step: "12.batch" or "12_3.0". */
		row.job = (unsigned long)job;
		row.task = -1;
		if (*end == '_' && (task = number(end + 1, &end)) >= 0)
			row.task = task;
		if (*end == '.' && (job_row = step_owner(out, &row)) != NULL)
			vg_slurm_add_step(job_row, &row);
		return 0;
	}
	row.job = (unsigned long)job;
	row.task = row.task_hi = -1;
	parse_state(&row, f[1]);
	row.exit_code = -1;
	if ((code = number(f[2], &end)) >= 0 && *end == ':' &&
	    (sig = number(end + 1, &end)) >= 0 && *end == '\0') {
		row.exit_code = (int)(code & 0xff);
		row.signal = (int)(sig & 0x7f);
	}
	copy_field(row.reason, sizeof row.reason, f[3], strlen(f[3]));
	copy_field(row.nodes, sizeof row.nodes, f[4], strlen(f[4]));
	us = strchr(f[0], '_');
	if (us == NULL) {
		out->v = vg_xgrow(out->v, &out->cap, out->n + 1,
		    sizeof *out->v);
		out->v[out->n++] = row;
		return 0;
	}
	return add_tasks(out, &row, us + 1, e);
}

/* Parses sacct -P lines into rows, expanding pending ranges. */
int
vg_slurm_parse_sacct(const char *text, struct vg_slurm_rows *out,
    struct vg_err *e)
{
	return each_line(text, out, sacct_line, e);
}

/* One squeue line: ArrayJobID|ArrayTaskID|State|Reason|exit_code|Nodes. */
static int
squeue_line(char *line, struct vg_slurm_rows *out, struct vg_err *e)
{
	struct vg_slurm_row row;
	char *f[7], orig[208];
	const char *end;
	long job, ws;

	snprintf(orig, sizeof orig, "%s", line);
	if (split(line, f, 7) != 6)
		return vg_err_set(e, VG_EPARSE, "squeue: expected 6 fields "
		    "separated by '|' in '%s'", orig);
	memset(&row, 0, sizeof row);
	if ((job = number(f[0], &end)) < 0 || *end != '\0')
		return vg_err_set(e, VG_EPARSE, "squeue: bad ArrayJobID "
		    "'%.100s'", f[0]);
	row.job = (unsigned long)job;
	row.task = row.task_hi = -1;
	parse_state(&row, f[2]);
	copy_field(row.reason, sizeof row.reason, f[3], strlen(f[3]));
	/* squeue's exit_code is the raw wait status. */
	row.exit_code = -1;
	if ((ws = number(f[4], &end)) >= 0 && *end == '\0') {
		if ((ws & 0x7f) != 0) {
			row.signal = (int)(ws & 0x7f);
			row.exit_code = 0;
		} else
			row.exit_code = (int)((ws >> 8) & 0xff);
	}
	copy_field(row.nodes, sizeof row.nodes, f[5], strlen(f[5]));
	if (strcmp(f[1], "N/A") == 0) {
		out->v = vg_xgrow(out->v, &out->cap, out->n + 1,
		    sizeof *out->v);
		out->v[out->n++] = row;
		return 0;
	}
	return add_tasks(out, &row, f[1], e);
}

/* Parses squeue -O lines into rows, expanding pending ranges. */
int
vg_slurm_parse_squeue(const char *text, struct vg_slurm_rows *out,
    struct vg_err *e)
{
	return each_line(text, out, squeue_line, e);
}

/* Parses the job id sbatch --parsable prints. */
int
vg_slurm_parse_jobid(const char *text, unsigned long *job, struct vg_err *e)
{
	const char *end;
	long v;

	*job = 0;
	v = number(text, &end);
	if (v <= 0 || (*end != '\0' && *end != ';' && *end != '\n'))
		return vg_err_set(e, VG_EPARSE, "sbatch: expected a job id, "
		    "got '%.100s'", text);
	*job = (unsigned long)v;
	return 0;
}

/* Parses a Slurm time ("M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S")
 * into seconds; returns -1 when malformed. */
static long long
slurm_time(const char *s)
{
	long long d = 0, v[3];
	const char *p = s, *end;
	int n = 0, days = 0;
	long x;

	if ((x = number(p, &end)) < 0)
		return -1;
	if (*end == '-') {
		d = x;
		days = 1;
		p = end + 1;
	}
	for (;;) {
		if ((x = number(p, &end)) < 0 || n == 3)
			return -1;
		v[n++] = x;
		if (*end != ':')
			break;
		p = end + 1;
	}
	if (*end != '\0' && *end != ' ' && *end != '\n')
		return -1;
	if (days)	/* D-H, D-H:M, D-H:M:S */
		return d * 86400 + v[0] * 3600 + (n > 1 ? v[1] * 60 : 0) +
		    (n > 2 ? v[2] : 0);
	if (n == 1)
		return v[0] * 60;
	if (n == 2)
		return v[0] * 60 + v[1];
	return v[0] * 3600 + v[1] * 60 + v[2];
}

/* Parses MaxTime out of one `scontrol show partition -o` line. */
int
vg_slurm_parse_maxtime(const char *text, uint64_t *secs, struct vg_err *e)
{
	const char *p = strstr(text, "MaxTime=");
	char buf[64];
	long long t;

	*secs = 0;
	if (p == NULL)
		return vg_err_set(e, VG_EPARSE, "scontrol show partition: no "
		    "MaxTime in its output");
	p += 8;
	copy_field(buf, sizeof buf, p, strcspn(p, " \n"));
	if (strcmp(buf, "UNLIMITED") == 0 || strcmp(buf, "INFINITE") == 0)
		return 0;
	if ((t = slurm_time(buf)) < 0)
		return vg_err_set(e, VG_EPARSE, "scontrol show partition: bad "
		    "MaxTime '%s'", buf);
	*secs = (uint64_t)t;
	return 0;
}

/* `scontrol show config`. */
static int
cli_config(struct vg_slurm_conf_info *ci, struct vg_err *e)
{
	const char *argv[] = { "scontrol", "show", "config", NULL };
	struct vg_buf out = VG_BUF_INIT;
	int r;

	if ((r = vg_slurm_run(argv, &out, NULL, CMD_TIMEOUT_MS, e)) == 0)
		r = vg_slurm_parse_config(vg_buf_str(&out), ci, e);
	vg_buf_release(&out);
	return r;
}

/* `scontrol show partition -o [NAME]`: MaxTime of NAME or the default. */
static int
cli_maxtime(const char *partition, uint64_t *secs, struct vg_err *e)
{
	const char *argv[] = { "scontrol", "show", "partition", "-o", NULL,
	    NULL };
	struct vg_buf out = VG_BUF_INIT;
	const char *line;
	int r;

	*secs = 0;
	argv[4] = partition;
	if ((r = vg_slurm_run(argv, &out, NULL, CMD_TIMEOUT_MS, e)) != 0)
		goto out;
	line = vg_buf_str(&out);
	if (partition == NULL) {
		/* One line per partition; the default says Default=YES. */
		while (*line != '\0') {
			size_t len = strcspn(line, "\n");
			char *l = vg_xstrndup(line, len);
			int dflt = strstr(l, " Default=YES") != NULL;

			free(l);
			if (dflt)
				break;
			line += len + (line[len] == '\n');
		}
		if (*line == '\0')
			goto out;	/* no default partition: no cap */
	}
	r = vg_slurm_parse_maxtime(line, secs, e);
out:
	vg_buf_release(&out);
	return r;
}

/* `sbatch --parsable SCRIPT`. */
static int
cli_submit(const struct vg_slurm_job *j, const char *script,
    const char *script_path, unsigned long *job, struct vg_err *e)
{
	const char *argv[] = { "sbatch", "--parsable", NULL, NULL };
	struct vg_buf out = VG_BUF_INIT;
	int r;

	(void)j;
	(void)script;
	argv[2] = script_path;
	if ((r = vg_slurm_run(argv, &out, NULL, CMD_TIMEOUT_MS, e)) == 0)
		r = vg_slurm_parse_jobid(vg_buf_str(&out), job, e);
	vg_buf_release(&out);
	return r;
}

/* One sacct (accounting) or squeue (queue only) call for the run. */
static int
cli_query(const char *name, const unsigned long *jobs, size_t n,
    int accounting, struct vg_slurm_rows *out, struct vg_err *e)
{
	struct vg_buf out_text = VG_BUF_INIT, ids = VG_BUF_INIT;
	struct vg_buf namearg = VG_BUF_INIT;
	const char *sacct[] = { "sacct", "-n", "-P", "--noconvert", "-o",
	    VG_SLURM_SACCT_FORMAT, "-j", NULL, NULL };
	const char *squeue[] = { "squeue", "-h", "-r", "-t", "all", "--me",
	    NULL, "-O", VG_SLURM_SQUEUE_FORMAT, NULL };
	size_t i;
	int r;

	if (accounting) {
		for (i = 0; i < n; i++)
			vg_buf_printf(&ids, "%s%lu", i > 0 ? "," : "",
			    jobs[i]);
		sacct[7] = vg_buf_str(&ids);
		r = vg_slurm_run(sacct, &out_text, NULL, CMD_TIMEOUT_MS, e);
		if (r == 0)
			r = vg_slurm_parse_sacct(vg_buf_str(&out_text), out,
			    e);
	} else {
		vg_buf_printf(&namearg, "--name=%s", name);
		squeue[6] = vg_buf_str(&namearg);
		r = vg_slurm_run(squeue, &out_text, NULL, CMD_TIMEOUT_MS, e);
		if (r == 0)
			r = vg_slurm_parse_squeue(vg_buf_str(&out_text), out,
			    e);
	}
	vg_buf_release(&out_text);
	vg_buf_release(&ids);
	vg_buf_release(&namearg);
	return r;
}

/* `scancel HANDLE`. */
static int
cli_cancel(const char *handle, struct vg_err *e)
{
	const char *argv[] = { "scancel", NULL, NULL };

	argv[1] = handle;
	return vg_slurm_run(argv, NULL, NULL, CMD_TIMEOUT_MS, e);
}

const struct vg_slurm_iface vg_slurm_cli = {
	.name = "cli",
	.config = cli_config,
	.maxtime = cli_maxtime,
	.submit = cli_submit,
	.query = cli_query,
	.cancel = cli_cancel,
};
