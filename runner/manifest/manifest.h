/*
 * manifest.h - the job manifest as vigil uses it after parsing, defaults
 * and validation.  This struct is the contract between the parser
 * (manifest.c, schema.c, yaml-tree.c, config.c) and everything downstream
 * (expansion, policy, schedulers, backends).
 *
 * Every string is owned by the manifest and freed by vg_manifest_free.
 * Zero / NULL means "not set" unless a field says otherwise; the parser
 * fills documented defaults.  Each section keeps the source location of
 * its key so later stages can report "FILE:LINE:COL: ..." too.
 */
#ifndef VG_MANIFEST_H
#define VG_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/diag.h"
#include "common/err.h"

struct vg_kv {
	char		*key;
	char		*value;
	struct vg_loc	 loc;		/* env: the value; matrix include/
					   exclude: the key; line 0 = none */
};

struct vg_kvs {
	struct vg_kv	*v;
	size_t		 n;
	size_t		 cap;
};

void	vg_kvs_set(struct vg_kvs *kvs, const char *key, const char *value);
const char *vg_kvs_get(const struct vg_kvs *kvs, const char *key);
void	vg_kvs_release(struct vg_kvs *kvs);

/* command: a string runs under /bin/sh -c; a list is exec'd as argv. */
struct vg_command {
	int		 is_argv;
	char		*shell;		/* when !is_argv */
	struct vg_strv	 argv;		/* when is_argv */
	struct vg_loc	 loc;
};

struct vg_matrix_axis {
	char		*name;
	struct vg_strv	 values;	/* scalars rendered as strings */
	struct vg_loc	 loc;
};

struct vg_matrix {
	struct vg_matrix_axis	*axes;
	size_t			 naxes;
	struct vg_kvs		*include;	/* extra combinations */
	size_t			 ninclude;
	struct vg_kvs		*exclude;	/* partial combinations */
	size_t			 nexclude;
};

struct vg_resources {
	int		 cpus;		/* 0 = unset */
	uint64_t	 memory;	/* bytes */
	int		 gpus;
	uint64_t	 time;		/* seconds (Slurm time limit) */
	char		*partition;
	char		*account;
	char		*qos;
	char		*constraint;
	/* Parallel tasks (Slurm): 0 = unset.  cpus_per_task is cpus by
	 * another name (either may be given, not both differently). */
	int		 nodes;
	int		 ntasks;
	int		 ntasks_per_node;
	int		 cpus_per_task;
	uint64_t	 mem_per_cpu;	/* bytes */
	int		 gpus_per_task;
	int		 exclusive;	/* whole nodes */
	char		*launcher;	/* "srun" | "none"; NULL = srun when
					   more than one Slurm task */
	char		*gpu_type;	/* Slurm gres type, cloud GPU type */
	/* Values holding ${{ ... }}, by key ("cpus" -> "${{ matrix.c }}"),
	 * loc at the value: each task decodes its own (vg_task.resources,
	 * runner/manifest/expand.c); the field's value here is then not
	 * what any task asks: read a task's, or vg_expand_peak. */
	struct vg_kvs	 tmpl;
};

enum vg_retry_on {
	VG_RETRY_FAILED		= 1 << 0,
	VG_RETRY_TIMEOUT	= 1 << 1,
	VG_RETRY_OOM		= 1 << 2,
	VG_RETRY_NODE_FAIL	= 1 << 3,
	VG_RETRY_PREEMPTED	= 1 << 4,
	VG_RETRY_LOST		= 1 << 5,
	VG_RETRY_BACKEND_ERROR	= 1 << 6,	/* transient causes only */
};

struct vg_retry {
	int		 max;		/* extra attempts; 0 = no retry */
	unsigned	 on;		/* enum vg_retry_on bits */
	double		 backoff;	/* seconds before the first retry */
	double		 backoff_max;	/* cap; doubles each attempt */
	double		 memory_factor;	/* OOM: memory *= factor (>= 1) */
	double		 time_factor;	/* TIMEOUT: time *= factor (>= 1) */
};

struct vg_task;

/* outputs.when: after which attempts files are collected. */
enum vg_out_when {
	VG_OUT_ALWAYS = 0,
	VG_OUT_SUCCESS,
	VG_OUT_FAILURE,
};

/*
 * outputs: files collected from a task's scratch and task directories
 * after each attempt (runner/core/outputs.c, docs/manifest.md).  The
 * manifest may give a list of globs (paths only) or a mapping; zero
 * values mean the defaults.
 */
struct vg_outputs {
	struct vg_strv	 paths;		/* globs, relative */
	char		*dest;		/* ${{ }} template; NULL: tasks/<i>/
					   outputs in the run directory */
	int		 when;		/* enum vg_out_when */
	uint64_t	 max_bytes;	/* 0: VG_OUTPUTS_MAX_BYTES */
	int		 max_files;	/* 0: VG_OUTPUTS_MAX_FILES */
	int		 move;		/* mode: move (1) or copy (0) */
};

#define VG_OUTPUTS_MAX_BYTES	(1ull << 30)
#define VG_OUTPUTS_MAX_FILES	10000

/*
 * The destination directory of o for task t of run_id, attempt: o->dest
 * with ${{ matrix.NAME }}, ${{ env.NAME }} and ${{ task.index }}
 * substituted (a relative one is below workdir, the run's working
 * directory), else run_dir/tasks/<index>/outputs.  VG_EINVAL naming the
 * template when it is malformed or names what the task lacks.  Caller
 * frees *out.
 */
int	vg_outputs_dest(const struct vg_outputs *o, const struct vg_task *t,
	    const char *run_dir, const char *workdir, char **out,
	    struct vg_err *e);

/* One allow or deny rule of the policy gate. */
struct vg_rule {
	char		*id;
	char		*match;		/* glob on the normalised command */
	char		*category;	/* or a category name */
	char		*reason;
	char		*command;	/* allow: glob on the whole command */
	char		*url;		/* allow: remote-code source prefix */
	struct vg_loc	 loc;
};

struct vg_policy_conf {
	char		*mode;		/* auto-deny|auto-approve|interactive */
	char		*file;		/* a policy file layered over the
					   site's (adds rules, only tightens) */
	char		*site_file;	/* the site's own policy file: set by
					   the site config alone, never by a
					   manifest, user config or --set */
	char		*audit_log;	/* optional JSON-lines file */
	struct vg_rule	*allow;
	size_t		 nallow;
	struct vg_rule	*deny;
	size_t		 ndeny;
};

enum vg_keep {
	VG_KEEP_ON_FAILURE = 0,		/* default */
	VG_KEEP_ALWAYS,
	VG_KEEP_NEVER,
};

struct vg_scratch_conf {
	char		*path;		/* base directory override */
	enum vg_keep	 keep;
	uint64_t	 min_free;	/* bytes required free; 0 = default */
};

enum vg_isolation_level {
	VG_ISO_STANDARD = 0,		/* default */
	VG_ISO_NONE,
	VG_ISO_STRICT,
};

/* Where task output goes (top-level `output:`; docs/state.md). */
enum vg_output_mode {
	VG_OUTPUT_FILES = 0,		/* default: RUN/tasks/I/{stdout,stderr} */
	VG_OUTPUT_STREAM,		/* framed files RUN/stream/N.* */
};

/* isolation.network (docs/egress.md): what a task may reach. */
enum vg_net_mode {
	VG_NET_LEVEL = 0,		/* default, and false: by level (strict
					   none, else host) */
	VG_NET_NONE,			/* loopback only */
	VG_NET_HOST,			/* the host's network; also true */
	VG_NET_ALLOW,			/* only the listed hosts, through
					   vigil's proxy */
};

struct vg_net_conf {
	enum vg_net_mode	 mode;
	struct vg_strv		 allow;		/* VG_NET_ALLOW: patterns
						   (common/egress-match.h) */
	struct vg_strv		 deny;		/* win over allow */
};

struct vg_isolation_conf {
	enum vg_isolation_level	 level;
	int			 required;	/* refuse downgrades */
	struct vg_strv		 writable;	/* extra writable paths */
	struct vg_strv		 readable;	/* extra readable (strict) */
	char			*ptrace;	/* "children" (default) | "deny" */
	struct vg_net_conf	 network;
	char			*network_max;	/* the site's ceiling: "host"
						   (default), "allow" or
						   "none" */
	struct vg_strv		 devices;	/* device paths opened read-write
						   (and ioctl) besides GPUs' */
	struct vg_strv		 capabilities;	/* kept by the task (names,
						   common/caps.h): host
						   access */
	struct vg_strv		 sockets;	/* host sockets left reachable
						   (host access) */
	char			*workdir;	/* "write" | "read"; NULL: by
						   level (standard writes) */
};

/* Per-process limits (setrlimit); 0 = inherit, except core (default 0);
 * pids is per task (its cgroup). */
struct vg_limits {
	uint64_t	 cpu_time;	/* seconds */
	uint64_t	 address_space;	/* bytes */
	uint64_t	 nofile;
	uint64_t	 nproc;
	uint64_t	 fsize;		/* bytes */
	uint64_t	 core;		/* bytes; default 0 (off) */
	int		 core_set;
	uint64_t	 pids;		/* cgroup pids.max of the task (local
					   backend); 0 = none */
};

/* Where one key path of the manifest was written ("docker.volumes",
 * "ssh.stage_in[2]", "" for the document), for messages. */
struct vg_mloc {
	char		*path;
	struct vg_loc	 key;		/* the key (a list item: the item) */
	struct vg_loc	 value;		/* its value (a mapping: first key) */
};

struct vg_mlocs {
	struct vg_mloc	*v;		/* in decoding order; later wins */
	size_t		 n;
	size_t		 cap;
};

/* concurrency: overlap control of a group of runs (runner/core/group.h). */
struct vg_concurrency {
	char		*group;		/* NULL = the manifest name */
	char		*overlap;	/* skip|wait|replace|allow; NULL =
					   allow, skip under --cron */
	double		 wait;		/* seconds: the bound of wait, and of
					   replace's wait for the holder */
};

/* notify.on bits. */
enum vg_notify_on {
	VG_NOTIFY_FAILURE	= 1 << 0,	/* the run ended FAILED */
	VG_NOTIFY_SUCCESS	= 1 << 1,
	VG_NOTIFY_ALWAYS	= 1 << 2,
	VG_NOTIFY_DENIED	= 1 << 3,
};

/* One notify.webhook entry. */
struct vg_webhook {
	char		*url;
	struct vg_kvs	 headers;	/* values may use ${{ env.NAME }} */
	struct vg_loc	 loc;
};

/* notify: who hears of a run's end (runner/core/notify.h). */
struct vg_notify_conf {
	unsigned	 on;		/* enum vg_notify_on bits */
	struct vg_webhook *webhook;
	size_t		 nwebhook;
	struct vg_strv	 email;		/* recipients, through sendmail -t */
	struct vg_strv	 command;	/* argv; the payload on stdin */
	char		*sendmail;	/* program; default "sendmail" */
	struct vg_strv	 env_allow;	/* config only: variables a webhook
					   header may expand */
	int		 allow_private;	/* config only: webhooks may go to
					   loopback, link-local, private */
	double		 timeout;	/* seconds per delivery attempt */
	double		 total;		/* seconds for every delivery */
};

/* after: a run this run waits for (runner/manifest/after.c). */
enum vg_after_cond {
	VG_AFTER_OK = 0,	/* it succeeded (default) */
	VG_AFTER_ANY,		/* it ended */
	VG_AFTER_NOTOK,		/* it ended and did not succeed */
};

struct vg_after {
	char		*run;		/* id or name; an id once created */
	int		 cond;		/* enum vg_after_cond */
	struct vg_loc	 loc;
};

struct vg_afters {
	struct vg_after	*v;
	size_t		 n;
	size_t		 cap;
};

/* Room for every plugin section's struct; checked when the schema is
 * built (runner/manifest/manifest.c). */
#define VG_MANIFEST_EXT	2048

/* Seconds from SIGTERM to SIGKILL when neither the manifest nor a config
 * says (kill_grace); kill_grace: 0 means SIGKILL at once. */
#define VG_KILL_GRACE_DEFAULT	10

struct vg_manifest {
	char			*file;		/* path as given */
	struct vg_strv		 sources;	/* names of every file (and
						   --set) the manifest was built
						   from; vg_loc.file points into
						   these */
	int			 version;	/* 1 */
	char			*name;
	char			*scheduler;	/* a scheduler plugin's name */
	char			*backend;	/* a backend plugin's name */
	char			*image;
	struct vg_command	 command;
	struct vg_kvs		 env;
	struct vg_matrix	 matrix;
	struct vg_resources	 resources;
	double			 timeout;	/* seconds; 0 = none */
	double			 kill_grace;	/* seconds (VG_KILL_GRACE_DEFAULT);
						   0: SIGKILL at once */
	struct vg_retry		 retry;
	struct vg_policy_conf	 policy;
	struct vg_scratch_conf	 scratch;
	struct vg_outputs	 outputs;	/* collected after attempts */
	char			*workdir;	/* cwd for the task */
	struct vg_isolation_conf isolation;
	struct vg_limits	 limits;
	struct vg_concurrency	 concurrency;
	struct vg_notify_conf	 notify;
	/* The plugins' sections (plugin.h), at offsets fixed when the
	 * schema is built; read them with vg_manifest_conf(). */
	_Alignas(16) unsigned char ext[VG_MANIFEST_EXT];
	/* Where each key and list item of the sections was written, in
	 * every layer (empty for a manifest read back from JSON); read it
	 * with vg_manifest_loc(). */
	struct vg_mlocs		 locs;
	struct vg_afters	 after;		/* runs waited for */
	enum vg_output_mode	 output;	/* files (default) | stream */
	/* reuse: a task whose key matches an earlier successful attempt
	 * is not run (runner/core/reuse.h, docs/reuse.md). */
	int			 reuse;
	struct vg_strv		 inputs;	/* globs, relative to the
						   working directory: their
						   contents are in the key */
};

/* Options for loading: overrides and which configs to layer under. */
struct vg_load_opts {
	const char	**sets;		/* "key.path=value", NULL-terminated */
	const char	 *site_config;	/* NULL = /etc/vigil/config.yaml */
	const char	 *user_config;	/* NULL = $XDG_CONFIG_HOME/... */
	int		  no_configs;	/* ignore site and user configs */
	int		  session;	/* a session's: no command, no matrix
					   (docs/sessions.md) */
};

/*
 * Loads, validates and defaults a manifest.  On success *mp is owned by the
 * caller.  On failure returns VG_EPARSE or VG_EINVAL with every problem in
 * diag and *mp NULL; VG_EIO/VG_ENOENT/VG_ELIMIT for file trouble (in e).
 */
int	vg_manifest_load(const char *path, const struct vg_load_opts *opts,
	    struct vg_manifest **mp, struct vg_diag *diag, struct vg_err *e);
/* Same from memory; name is used in diagnostics. */
int	vg_manifest_load_mem(const char *name, const char *text, size_t len,
	    const struct vg_load_opts *opts, struct vg_manifest **mp,
	    struct vg_diag *diag, struct vg_err *e);
void	vg_manifest_free(struct vg_manifest *m);

/*
 * Serialises the effective manifest as JSON (stored with the run so that
 * resume and task-exec use exactly what was submitted) and reads it back.
 */
void	vg_manifest_to_json(const struct vg_manifest *m, struct vg_buf *out);
int	vg_manifest_from_json(const char *json, size_t len,
	    struct vg_manifest **mp, struct vg_err *e);

/*
 * Where key path (as messages spell it: "ssh.host", "docker.volumes[1]",
 * "image") was written, for a problem about it.  Returns 0 with *loc at
 * the key (a list item: the item) of the last layer that set it.  For a
 * path no layer set, returns VG_ENOENT with *loc at the mapping that
 * lacks it: the value of the nearest ancestor that was set, else the
 * manifest's top-level mapping (its first key; line 1, column 1 when it
 * is empty).  A manifest read back from JSON has no places: *loc is then
 * the file alone (line 0).
 */
/*
 * Appends to out the absolute directories m's tasks can write beyond
 * their own: isolation.writable and the fixed part of outputs.dest
 * (before its first ${{ }}).  What vigil runs outside any sandbox must
 * not come from there (vg_program_refusal).
 */
void	vg_manifest_task_writable(const struct vg_manifest *m,
	    struct vg_strv *out);

int	vg_manifest_loc(const struct vg_manifest *m, const char *path,
	    struct vg_loc *loc);
/* The same for a path made like printf; returns loc, filled. */
const struct vg_loc *vg_manifest_locf(const struct vg_manifest *m,
	    struct vg_loc *loc, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/* What isolation.network of iso comes to: VG_NET_NONE, VG_NET_HOST or
 * VG_NET_ALLOW (VG_NET_LEVEL resolved by the level: strict none, else
 * host); and the mode's name as manifests write it. */
enum vg_net_mode vg_isolation_net(const struct vg_isolation_conf *iso);
const char *vg_net_mode_name(enum vg_net_mode mode);

/*
 * Refuses, into d, each resources row that m sets (a value, or a
 * ${{ }} template) and the scheduler named who does not turn into a
 * request: rows lists what it takes besides cpus, memory, gpus and
 * time, NULL-terminated.  A scheduler that would drop a row silently
 * calls this from its validate.  Returns 0 or VG_EINVAL.
 */
int	vg_resources_refuse_rows(const struct vg_manifest *m, const char *who,
	    const char *const *rows, struct vg_diag *d);

/* Appends to out a text that is the same for two resources exactly when
 * every row of them is (the JSON of its fields): tasks that ask the same
 * can share one Slurm array. */
void	vg_resources_key(const struct vg_resources *r, struct vg_buf *out);

/* Parses "10", "1.5G", "512MiB" into bytes; "30", "5m", "1h30m",
 * "1-00:00:00" (Slurm) into seconds.  Return VG_EINVAL on bad input. */
int	vg_parse_bytes(const char *s, uint64_t *out);
int	vg_parse_duration(const char *s, double *out);

#endif
