/*
 * docker.h - the pure parts of the docker backend, exported for tests and
 * for the policy gate: API version negotiation, volume specs, the host
 * access check, the container create body, image references, and the
 * demultiplexer of the Engine API's log stream.  None of these talk to
 * the engine; docker.c does.
 */
#ifndef VG_DOCKER_H
#define VG_DOCKER_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"
#include "runner/manifest/manifest.h"
#include "backends/backend.h"
#include "runner/manifest/plugin.h"
#include "runner/policy/host-access.h"

/* The API version vigil speaks, and the oldest it accepts (NanoCpus and
 * PidsLimit need 1.25). */
#define VG_DOCKER_API_MAX	"1.41"
#define VG_DOCKER_API_MIN	"1.25"

/* Label keys on every container vigil creates. */
#define VG_DOCKER_LABEL		"vigil"		/* "1" */
#define VG_DOCKER_LABEL_RUN	"vigil.run"	/* run id */
#define VG_DOCKER_LABEL_TASK	"vigil.task"	/* task index */
#define VG_DOCKER_LABEL_ATTEMPT	"vigil.attempt"	/* 1-based */
#define VG_DOCKER_LABEL_OWNER	"vigil.owner"	/* host:pid:starttime */

/*
 * Chooses the API version: the lower of the server's ApiVersion and
 * VG_DOCKER_API_MAX, refused when below VG_DOCKER_API_MIN or below the
 * server's MinAPIVersion (NULL when the server names none).  Writes
 * "1.41" into out.
 */
int	vg_docker_api_version(const char *server, const char *server_min,
	    char out[16], struct vg_err *e);

enum vg_docker_vol_kind {
	VG_DOCKER_VOL_ANON = 0,	/* "/data": an anonymous volume */
	VG_DOCKER_VOL_NAMED,	/* "name:/data" */
	VG_DOCKER_VOL_HOST,	/* "/srv:/data", "./x:/x", "~/x:/x", "C:\x:/x" */
};

/* One entry of docker.volumes, split; strings owned. */
struct vg_docker_vol {
	enum vg_docker_vol_kind	 kind;
	char			*src;	/* NULL for anonymous volumes */
	char			*dst;
	char			*mode;	/* "ro", "rw,z", ... or NULL */
};

/*
 * Splits "SRC:DST[:MODE]" or "DST" the way the Engine API reads Binds.
 * Errors name the spec and what would be valid.
 */
int	vg_docker_vol_parse(const char *spec, struct vg_docker_vol *v,
	    struct vg_err *e);
void	vg_docker_vol_release(struct vg_docker_vol *v);

/* One entry of docker.mounts ("type=volume,source=v,target=/d,..." as
 * docker run --mount spells it), split; strings owned. */
struct vg_docker_mount {
	char		*type;		/* "bind", "volume" (default), "tmpfs" */
	char		*source;	/* NULL: tmpfs, anonymous volume */
	char		*target;
	int		 readonly;
	char		*propagation;	/* bind-propagation, or NULL */
	int		 nocopy;	/* volume-nocopy */
	char		*driver;	/* volume-driver, or NULL */
	struct vg_strv	 opts;		/* volume-opt "KEY=VALUE" */
	uint64_t	 tmpfs_size;	/* tmpfs-size in bytes; 0 = unset */
	long		 tmpfs_mode;	/* tmpfs-mode; -1 = unset */
};

/* Splits a docker.mounts entry; errors name the entry and what would be
 * valid. */
int	vg_docker_mount_parse(const char *spec, struct vg_docker_mount *mt,
	    struct vg_err *e);
void	vg_docker_mount_release(struct vg_docker_mount *mt);

/* The named volumes a create request uses, for the engine to tell what
 * they are (GET /volumes/NAME): names[i] and the manifest field that
 * names it, labels[i] ("docker.volumes 'v:/d'"). */
struct vg_docker_named {
	struct vg_strv	 names;
	struct vg_strv	 labels;
};

void	vg_docker_named_release(struct vg_docker_named *nv);

/*
 * The host access check on the create request vigil will send (body,
 * len: the JSON of vg_docker_create_body for a), so that the judged
 * request is the sent one.  Every field that can reach the host is
 * judged: HostConfig.Binds and Mounts (host paths, /proc and /sys
 * writable, engine sockets and the directories holding them, volume
 * driver configurations), VolumesFrom, Devices, DeviceCgroupRules,
 * DeviceRequests, Privileged, CapAdd, SecurityOpt, Sysctls, and the
 * network, PID, IPC, UTS, user and cgroup namespace modes; a key vigil
 * does not know, or a body that is not the expected JSON, is a finding
 * too (fail closed).  The binds of a's task and scratch directories are
 * vigil's own and not findings.  site gives the safe volume drivers (may
 * be NULL: none).  Appends one line per finding to why, the named
 * volumes to inspect to named (may be NULL), and returns the number of
 * findings.
 */
int	vg_docker_host_access(const struct vg_attempt *a, const char *body,
	    size_t len, const struct vg_host_site *site, struct vg_buf *why,
	    struct vg_docker_named *named);

/*
 * Judges a named volume from its inspect reply (GET /volumes/NAME).  It
 * stays off the host only when its driver is "local" with no bind-like,
 * network, device or unknown option, or a driver site lists as safe.
 * Returns 1 when it is host access, with "(driver 'D', options K=V ...)
 * WHAT" appended to what; 0 otherwise.  A reply that is not an object
 * or names no driver is host access.
 */
int	vg_docker_volume_judge(const struct vg_json_value *vol,
	    const struct vg_host_site *site, struct vg_buf *what);

/*
 * Builds the JSON body of POST /containers/create for a: image, command
 * (Entrypoint = argv[0], Cmd = the rest, so the image's entrypoint never
 * wraps it), environment, working directory, binds of the task and
 * scratch directories at the same paths, labels (owner names the process
 * that watches the container), and the hardened HostConfig.
 */
void	vg_docker_create_body(const struct vg_attempt *a, const char *owner,
	    struct vg_buf *out);

/*
 * Splits an image reference into the fromImage and tag query values of
 * POST /images/create: "busybox" -> busybox, latest;
 * "reg:5000/a/b:1" -> reg:5000/a/b, 1; "a@sha256:..." -> a@sha256:..., "".
 * Returns VG_EINVAL for characters outside the reference grammar.
 */
int	vg_docker_image_ref(const char *image, struct vg_buf *from,
	    struct vg_buf *tag, struct vg_err *e);

/*
 * The log stream of a container without a TTY: frames of an 8-byte
 * header (byte 0 the stream: 0 stdin, 1 stdout, 2 stderr; bytes 4-7 the
 * big-endian payload length) and the payload.  The demultiplexer keeps
 * only the header between calls, so memory is bounded whatever the
 * pieces' sizes.
 */
struct vg_docker_demux {
	unsigned char	hdr[8];
	size_t		hlen;		/* header bytes held */
	size_t		left;		/* payload bytes still due */
	int		stream;
	unsigned long long offset;	/* bytes consumed, for errors */
	/* Receives each payload piece: stream 1 or 2.  Returns 0 or a
	 * negative vg_rc that stops the feed. */
	int		(*out)(void *arg, int stream, const char *p, size_t n);
	void		*arg;
	/* A frame of stream 3 is the engine's own error (the Engine
	 * API's "systemerr"): its first bytes, kept for the message. */
	char		sys[256];
	size_t		syslen;
	/* Why a feed through vg_docker_demux_sink stopped. */
	struct vg_err	err;
};

void	vg_docker_demux_init(struct vg_docker_demux *d,
	    int (*out)(void *, int, const char *, size_t), void *arg);
/* Feeds n bytes; returns 0, the sink's error, VG_EPARSE (a stream
 * other than 0 to 3), or VG_EBACKEND at the end of a stream-3 frame
 * (e says the engine's words). */
int	vg_docker_demux_feed(struct vg_docker_demux *d, const char *p,
	    size_t n, struct vg_err *e);
/* vg_http_sink feeding demultiplexer arg; why it stopped is in its
 * err. */
int	vg_docker_demux_sink(void *arg, const char *p, size_t n);
/* True when the stream ended between frames. */
int	vg_docker_demux_done(const struct vg_docker_demux *d);


struct vg_docker_conf {
	char		*host;		/* DOCKER_HOST override */
	struct vg_strv	 volumes;	/* "src:dst[:ro]" as written */
	char		*network;	/* "none" (default), "bridge", ... */
	int		 read_only;
	char		*user;
	struct vg_strv	 cap_add;
	struct vg_strv	 devices;
	int		 privileged;
	char		*pid_mode;
	char		*ipc_mode;
	char		*pull;		/* "missing" (default)|"always"|"never" */
	uint64_t	 pids_limit;
	struct vg_strv	 mounts;	/* --mount style, as written */
	struct vg_strv	 security_opt;	/* added to no-new-privileges */
	struct vg_kvs	 sysctls;
	char		*uts_mode;
	char		*userns_mode;
	struct vg_strv	 volumes_from;	/* container names */
	struct vg_strv	 device_cgroup_rules;	/* "c 1:3 mr" */
};

/* The docker: section (owned by the docker backend). */
extern const struct vg_msection vg_docker_msection;

/* The docker section of m (defaulted; owned by m). */
static inline struct vg_docker_conf *
vg_docker_of(const struct vg_manifest *m)
{
	return vg_manifest_conf(m, &vg_docker_msection);
}

/*
 * One reply of GET /containers/ID/stats?stream=false, reduced to what
 * accounting keeps.  CPU: cpu_stats.cpu_usage.usage_in_usermode and
 * usage_in_kernelmode (nanoseconds; total_usage as user time when the
 * engine splits nothing).  Memory: memory_stats.max_usage when the
 * engine gives it (dockerd on cgroup v1: the cgroup's own peak), else
 * memory_stats.usage (podman 4.3 gives only usage and limit; dockerd on
 * cgroup v2 has no peak either), so a peak is then the largest sample.
 * An empty reply, which podman 4.3 sends for a container that has
 * exited, or one read at the zero time, which dockerd sends then, holds
 * nothing.
 */
struct vg_docker_stats {
	unsigned	known;		/* VG_USAGE_CPU, VG_USAGE_RSS bits */
	double		cpu_user;	/* seconds */
	double		cpu_sys;	/* seconds */
	long long	mem;		/* bytes: max_usage, else usage */
	int		mem_exact;	/* mem is the engine's own peak */
};

/* Parses one stats reply into s (zeroed first); VG_EPARSE when it is not
 * a stats object, VG_ENOENT when it holds no sample. */
int	vg_docker_stats_parse(const char *body, size_t len,
	    struct vg_docker_stats *s, struct vg_err *e);
/* Folds sample s into acc: the largest CPU times and memory seen, as
 * every counter only grows while the container runs. */
void	vg_docker_stats_merge(struct vg_docker_stats *acc,
	    const struct vg_docker_stats *s);

#endif
