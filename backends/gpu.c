/*
 * gpu.c - the pool of a direct run: CPUs, memory and GPUs of this host
 * or of the Slurm allocation vigil runs in, each with where it came from
 * (the order is in gpu.h).  nvidia-smi runs from an argv vector with its
 * output read through a pipe, bounded in size and in time (10 s).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/gpu.h"
#include "common/path.h"
#include "common/str.h"
#include "common/which.h"
#include "runner/manifest/schema-table.h"

/* Most of nvidia-smi's output looked at (a line is ~90 bytes a GPU). */
#define SMI_MAX		(256 * 1024)
#define SMI_WAIT_MS	10000

static const char *const vendor_names[] = { "nvidia", "amd", NULL };

static const struct vg_section pool_section = {
	.name = "pool",
	.fields = (const struct vg_field[]){
		STRV(vg_pool_conf, "gpus", gpus, "GPU ids direct runs may "
		    "use (restricts CUDA_VISIBLE_DEVICES; default: detected)"),
		CHOICE(vg_pool_conf, "gpu_vendor", gpu_vendor, "nvidia",
		    vendor_names, "vendor of the pool.gpus ids"),
		INT(vg_pool_conf, "cpus", cpus, NULL, 1, 1048576,
		    "CPUs direct runs pack tasks into (default: detected)"),
		BYTES(vg_pool_conf, "memory", memory, 1, BIG,
		    "memory direct runs pack tasks into (default: detected)"),
		{ .key = NULL },
	},
};

const struct vg_msection vg_pool_msection = {
	.key = "pool",
	.schema = &pool_section,
	.size = sizeof(struct vg_pool_conf),
	.help = "what direct runs on this host may use",
};

const struct vg_pool_conf *
vg_pool_conf_of(const struct vg_manifest *m)
{
	return vg_manifest_conf(m, &vg_pool_msection);
}

const char *
vg_gpu_vendor_name(enum vg_gpu_vendor vendor)
{
	return vendor_names[vendor == VG_GPU_AMD ? 1 : 0];
}

/* Appends a zeroed GPU to p and returns it. */
static struct vg_gpu *
gpu_add(struct vg_pool *p)
{
	struct vg_gpu *g;

	p->gpus = realloc(p->gpus, (p->ngpus + 1) * sizeof(*p->gpus));
	if (p->gpus == NULL)
		abort();
	g = &p->gpus[p->ngpus++];
	memset(g, 0, sizeof(*g));
	return g;
}

/* True when s is a decimal number. */
static int
all_digits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* Sets g's device node from its index, when the id is one. */
static void
gpu_default_dev(struct vg_gpu *g, enum vg_gpu_vendor vendor)
{
	if (g->dev[0] != '\0')
		return;
	if (vendor == VG_GPU_NVIDIA && all_digits(g->id))
		snprintf(g->dev, sizeof(g->dev), "/dev/nvidia%s", g->id);
	else if (vendor == VG_GPU_AMD && all_digits(g->id))
		/* Render nodes follow the kfd GPU order from 128. */
		snprintf(g->dev, sizeof(g->dev), "/dev/dri/renderD%d",
		    128 + atoi(g->id));
}

/* Trims spaces on both ends of s in place; returns s. */
static char *
trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

void
vg_gpu_parse_list(const char *list, enum vg_gpu_vendor vendor,
    struct vg_pool *p)
{
	char *copy = vg_xstrdup(list), *save = NULL, *tok, *s;

	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		s = trim(tok);
		if (*s == '\0')
			continue;
		/* The CUDA runtime stops at the first invalid entry. */
		if (strcmp(s, "-1") == 0 || strcmp(s, "NoDevFiles") == 0)
			break;
		vg_strlcpy(gpu_add(p)->id, s, sizeof(p->gpus[0].id));
		if (strncmp(s, "GPU-", 4) == 0)
			vg_strlcpy(p->gpus[p->ngpus - 1].uuid, s,
			    sizeof(p->gpus[0].uuid));
		gpu_default_dev(&p->gpus[p->ngpus - 1], vendor);
	}
	free(copy);
}

/* Parses "143771 MiB" into bytes; 0 when it does not parse. */
static uint64_t
smi_memory(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return 0;
	end = trim(end);
	if (strcmp(end, "MiB") == 0)
		return (uint64_t)v << 20;
	if (strcmp(end, "GiB") == 0)
		return (uint64_t)v << 30;
	return 0;
}

int
vg_gpu_parse_smi(const char *text, struct vg_pool *p, struct vg_err *e)
{
	char *copy = vg_xstrdup(text), *line, *save = NULL, *f[4], *q, *whole;
	struct vg_gpu *g;
	int lineno = 0, nf, rc = 0;

	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (*(line = trim(line)) == '\0')
			continue;
		whole = vg_xstrdup(line);	/* for a message */
		nf = 0;
		for (q = line; nf < 4; nf++) {
			f[nf] = q;
			if ((q = strchr(q, ',')) == NULL) {
				nf++;
				break;
			}
			*q++ = '\0';
		}
		if (nf != 4 || q != NULL || !all_digits(trim(f[0]))) {
			rc = vg_err_set(e, VG_EPARSE, "nvidia-smi line %d: "
			    "'%s' is not 'index, uuid, name, memory.total'",
			    lineno, whole);
			free(whole);
			break;
		}
		free(whole);
		g = gpu_add(p);
		vg_strlcpy(g->id, trim(f[0]), sizeof(g->id));
		vg_strlcpy(g->uuid, trim(f[1]), sizeof(g->uuid));
		vg_strlcpy(g->name, trim(f[2]), sizeof(g->name));
		g->memory = smi_memory(f[3]);
		gpu_default_dev(g, VG_GPU_NVIDIA);
	}
	free(copy);
	return rc;
}

/* Runs argv and collects its stdout into out (bounded); 0 when it exited
 * 0 within SMI_WAIT_MS. */
static int
capture(char *const argv[], struct vg_buf *out)
{
	char buf[4096];
	struct pollfd pfd;
	long long deadline;
	int pfds[2], devnull, ws, ok = 1;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfds, O_CLOEXEC) != 0)
		return -1;
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		close(pfds[0]);
		close(pfds[1]);
		return -1;
	}
	if ((pid = fork()) < 0) {
		close(pfds[0]);
		close(pfds[1]);
		close(devnull);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(devnull, 0);
		dup2(pfds[1], 1);
		dup2(devnull, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfds[1]);
	close(devnull);
	deadline = vg_mono_ms() + SMI_WAIT_MS;
	pfd.fd = pfds[0];
	pfd.events = POLLIN;
	for (;;) {
		long long left = deadline - vg_mono_ms();

		if (left <= 0 || poll(&pfd, 1, (int)left) == 0) {
			kill(-pid, SIGKILL);
			ok = 0;
			break;
		}
		n = read(pfds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out->len + (size_t)n > SMI_MAX) {
			kill(-pid, SIGKILL);
			ok = 0;
			break;
		}
		vg_buf_add(out, buf, (size_t)n);
	}
	close(pfds[0]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	return ok && WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : -1;
}

typedef int (*smi_parse_fn)(const char *text, struct vg_pool *p,
    struct vg_err *e);

/* GPUs from tool (on PATH) run with the arguments args (at most 3),
 * its output read by parse; 1 when it answered with some. */
static int
from_tool(const char *tool, const char *const *args, smi_parse_fn parse,
    struct vg_pool *p)
{
	char *bin = vg_which(tool), *argv[5];
	struct vg_buf out;
	struct vg_err e;
	size_t i;
	int ok = 0;

	if (bin == NULL)
		return 0;
	argv[0] = bin;
	for (i = 0; i < 3 && args[i] != NULL; i++)
		argv[i + 1] = (char *)(uintptr_t)args[i];
	argv[i + 1] = NULL;
	vg_buf_init(&out);
	vg_err_init(&e);
	if (capture(argv, &out) == 0 && parse(vg_buf_str(&out), p, &e) == 0 &&
	    p->ngpus > 0)
		ok = 1;
	else
		p->ngpus = 0;
	vg_buf_release(&out);
	free(bin);
	return ok;
}

/* GPUs from nvidia-smi on PATH; 1 when it answered with some. */
static int
from_smi(struct vg_pool *p)
{
	static const char *const args[] = {
		"--query-gpu=index,uuid,name,memory.total",
		"--format=csv,noheader", NULL };

	return from_tool("nvidia-smi", args, vg_gpu_parse_smi, p);
}

/* Index of the column named name (case aside) in the header fields, or
 * -1. */
static int
csv_col(char *const *h, int nh, const char *name)
{
	int i;

	for (i = 0; i < nh; i++)
		if (strcasecmp(h[i], name) == 0)
			return i;
	return -1;
}

/* Splits line at commas into at most max trimmed fields; returns how
 * many, or max + 1 when there are more. */
static int
csv_split(char *line, char **f, int max)
{
	char *q = line;
	int n = 0, i;

	for (;;) {
		if (n == max)
			return max + 1;
		f[n++] = q;
		if ((q = strchr(q, ',')) == NULL)
			break;
		*q++ = '\0';
	}
	for (i = 0; i < n; i++)
		f[i] = trim(f[i]);
	return n;
}

int
vg_gpu_parse_rocm(const char *text, struct vg_pool *p, struct vg_err *e)
{
	char *copy = vg_xstrdup(text), *line, *save = NULL, *h[32], *f[32];
	char *hline = NULL;
	int lineno = 0, nh = 0, nf, cname = -1, cuid = -1, rc = 0;
	struct vg_gpu *g;

	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (*(line = trim(line)) == '\0')
			continue;
		if (hline == NULL) {
			/* Banners ("=== ROCm System Management ...") come
			 * before the header on some versions. */
			if (strncasecmp(line, "device,", 7) != 0)
				continue;
			hline = line;
			if ((nh = csv_split(line, h, 32)) > 32) {
				rc = vg_err_set(e, VG_EPARSE, "rocm-smi line "
				    "%d: more than 32 columns", lineno);
				break;
			}
			cname = csv_col(h, nh, "Card series");
			if (cname < 0)
				cname = csv_col(h, nh, "Card model");
			cuid = csv_col(h, nh, "Unique ID");
			continue;
		}
		if (strncmp(line, "card", 4) != 0)
			continue;
		nf = csv_split(line, f, 32);
		if (nf != nh || !all_digits(f[0] + 4)) {
			rc = vg_err_set(e, VG_EPARSE, "rocm-smi line %d: '%s' "
			    "does not match its header (%d fields, the first "
			    "cardN)", lineno, f[0], nh);
			break;
		}
		g = gpu_add(p);
		vg_strlcpy(g->id, f[0] + 4, sizeof(g->id));
		if (cname >= 0)
			vg_strlcpy(g->name, f[cname], sizeof(g->name));
		if (cuid >= 0 && strcmp(f[cuid], "N/A") != 0)
			vg_strlcpy(g->uuid, f[cuid], sizeof(g->uuid));
		gpu_default_dev(g, VG_GPU_AMD);
	}
	if (rc == 0 && hline == NULL && p->ngpus == 0)
		rc = vg_err_set(e, VG_EPARSE, "rocm-smi: no 'device,...' CSV "
		    "header in its output");
	free(copy);
	return rc;
}

/* AMD GPUs from rocm-smi on PATH; 1 when it answered with some. */
static int
from_rocm_smi(struct vg_pool *p)
{
	static const char *const args[] = { "--showproductname",
		"--showuniqueid", "--csv", NULL };

	if (!from_tool("rocm-smi", args, vg_gpu_parse_rocm, p))
		return 0;
	p->vendor = VG_GPU_AMD;
	return 1;
}

/* Reads a small file into buf; 0 on success. */
static int
read_small(const char *path, char *buf, size_t n)
{
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	got = read(fd, buf, n - 1);
	close(fd);
	if (got < 0)
		return -1;
	buf[got] = '\0';
	return 0;
}

/* The value of "key: value" in text, trimmed into out. */
static void
info_value(const char *text, const char *key, char *out, size_t n)
{
	const char *s = strstr(text, key);
	size_t len;

	out[0] = '\0';
	if (s == NULL)
		return;
	s += strlen(key);
	while (*s == ' ' || *s == '\t' || *s == ':')
		s++;
	len = strcspn(s, "\n");
	if (len >= n)
		len = n - 1;
	memcpy(out, s, len);
	out[len] = '\0';
	trim(out);
}

/* Orders GPUs by numeric id. */
static int
by_id(const void *a, const void *b)
{
	return atoi(((const struct vg_gpu *)a)->id) -
	    atoi(((const struct vg_gpu *)b)->id);
}

/* GPUs from the NVIDIA driver's /proc files; 1 when it found some. */
static int
from_proc(struct vg_pool *p)
{
	char path[512], text[4096], minor[32];
	struct dirent *de;
	struct vg_gpu *g;
	DIR *d = opendir("/proc/driver/nvidia/gpus");

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/"
		    "information", de->d_name);
		if (read_small(path, text, sizeof(text)) != 0)
			continue;
		info_value(text, "Device Minor", minor, sizeof(minor));
		if (!all_digits(minor))
			continue;
		g = gpu_add(p);
		vg_strlcpy(g->id, minor, sizeof(g->id));
		info_value(text, "Model", g->name, sizeof(g->name));
		info_value(text, "GPU UUID", g->uuid, sizeof(g->uuid));
		snprintf(g->dev, sizeof(g->dev), "/dev/nvidia%s", minor);
	}
	closedir(d);
	if (p->ngpus > 0)
		qsort(p->gpus, p->ngpus, sizeof(*p->gpus), by_id);
	return p->ngpus > 0;
}

/* Orders kfd topology nodes by number. */
static int
by_node(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* AMD GPUs from the kfd topology; 1 when it found some. */
static int
from_kfd(struct vg_pool *p)
{
	const char *top = "/sys/class/kfd/kfd/topology/nodes";
	char path[512], text[8192], *s;
	int nodes[256], nn = 0, i, render;
	struct dirent *de;
	struct vg_gpu *g;
	DIR *d = opendir(top);

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && nn < 256)
		if (all_digits(de->d_name))
			nodes[nn++] = atoi(de->d_name);
	closedir(d);
	qsort(nodes, (size_t)nn, sizeof(*nodes), by_node);
	for (i = 0; i < nn; i++) {
		snprintf(path, sizeof(path), "%s/%d/gpu_id", top, nodes[i]);
		if (read_small(path, text, sizeof(text)) != 0 ||
		    strtoul(text, NULL, 10) == 0)
			continue;	/* a CPU node */
		snprintf(path, sizeof(path), "%s/%d/properties", top,
		    nodes[i]);
		render = -1;
		if (read_small(path, text, sizeof(text)) == 0 &&
		    (s = strstr(text, "drm_render_minor ")) != NULL)
			render = atoi(s + 17);
		g = gpu_add(p);
		snprintf(g->id, sizeof(g->id), "%zu", p->ngpus - 1);
		snprintf(path, sizeof(path), "%s/%d/name", top, nodes[i]);
		if (read_small(path, text, sizeof(text)) == 0)
			vg_strlcpy(g->name, trim(text), sizeof(g->name));
		if (render > 0)
			snprintf(g->dev, sizeof(g->dev), "/dev/dri/renderD%d",
			    render);
	}
	if (p->ngpus > 0)
		p->vendor = VG_GPU_AMD;
	return p->ngpus > 0;
}

/* Index of the GPU with id (or UUID) id in p, or -1. */
static long
pool_find(const struct vg_pool *p, const char *id)
{
	size_t i;

	for (i = 0; i < p->ngpus; i++)
		if (strcmp(p->gpus[i].id, id) == 0 ||
		    (p->gpus[i].uuid[0] != '\0' &&
		    strcmp(p->gpus[i].uuid, id) == 0))
			return (long)i;
	return -1;
}

/* Keeps only the GPUs conf lists; VG_EINVAL naming one it lacks. */
static int
restrict_to(struct vg_pool *p, const struct vg_strv *ids, struct vg_err *e)
{
	struct vg_gpu *keep;
	size_t i, n = 0;
	long j;

	keep = vg_xcalloc(ids->n + 1, sizeof(*keep));
	for (i = 0; i < ids->n; i++) {
		if ((j = pool_find(p, ids->v[i])) < 0) {
			free(keep);
			return vg_err_set(e, VG_EINVAL, "pool.gpus: '%s' is "
			    "not among the GPUs of %s", ids->v[i],
			    p->gpu_from);
		}
		keep[n++] = p->gpus[j];
	}
	free(p->gpus);
	p->gpus = keep;
	p->ngpus = n;
	return 0;
}

/* Who says what allocation vigil runs in (vg_pool_alloc_source). */
static int (*alloc_source)(struct vg_alloc *a);

void
vg_pool_alloc_source(int (*fn)(struct vg_alloc *a))
{
	alloc_source = fn;
}

/* The allocation vigil runs in: 1 and *a filled when there is one. */
static int
alloc_get(struct vg_alloc *a)
{
	memset(a, 0, sizeof(*a));
	return alloc_source != NULL && alloc_source(a) == 1;
}

/* Physical device nodes of an allocation's GPUs: a scheduler may
 * renumber CUDA_VISIBLE_DEVICES from 0 (Slurm does) while the ids it
 * says keep the host's. */
static void
alloc_devs(struct vg_pool *p, const struct vg_alloc *al)
{
	struct vg_pool phys;
	size_t i;

	if (al->gpus[0] == '\0' || p->vendor != VG_GPU_NVIDIA)
		return;
	memset(&phys, 0, sizeof(phys));
	vg_gpu_parse_list(al->gpus, VG_GPU_NVIDIA, &phys);
	if (phys.ngpus == p->ngpus)
		for (i = 0; i < p->ngpus; i++)
			memcpy(p->gpus[i].dev, phys.gpus[i].dev,
			    sizeof(p->gpus[i].dev));
	free(phys.gpus);
}

/* GPUs from vigil's environment, else from the allocation's word; 1
 * when one said. */
static int
from_env(struct vg_pool *p, const struct vg_alloc *al)
{
	static const struct {
		const char		*name;
		enum vg_gpu_vendor	 vendor;
	} vars[] = {
		{ .name = "CUDA_VISIBLE_DEVICES", .vendor = VG_GPU_NVIDIA },
		{ .name = "ROCR_VISIBLE_DEVICES", .vendor = VG_GPU_AMD },
		{ .name = "HIP_VISIBLE_DEVICES", .vendor = VG_GPU_AMD },
	};
	const char *v;
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		if ((v = getenv(vars[i].name)) == NULL)
			continue;
		p->vendor = vars[i].vendor;
		vg_gpu_parse_list(v, p->vendor, p);
		snprintf(p->gpu_from, sizeof(p->gpu_from), "%s=%s",
		    vars[i].name, v);
		if (i == 0)
			alloc_devs(p, al);
		return 1;
	}
	if (al->gpus[0] == '\0')
		return 0;
	p->vendor = VG_GPU_NVIDIA;
	if (access("/dev/kfd", F_OK) == 0 && access("/dev/nvidiactl", F_OK) !=
	    0)
		p->vendor = VG_GPU_AMD;
	vg_gpu_parse_list(al->gpus, p->vendor, p);
	snprintf(p->gpu_from, sizeof(p->gpu_from), "%s", al->gpus_from);
	return 1;
}

/* CPUs and memory. */
static void
host_size(const struct vg_pool_conf *conf, const struct vg_alloc *al,
    struct vg_pool *p)
{
	char text[4096], *s;
	cpu_set_t set;
	long n;

	if (conf != NULL && conf->cpus > 0) {
		p->cpus = conf->cpus;
		vg_strlcpy(p->cpu_from, "pool.cpus", sizeof(p->cpu_from));
	} else if (al->cpus > 0) {
		p->cpus = al->cpus;
		vg_strlcpy(p->cpu_from, al->cpus_from, sizeof(p->cpu_from));
	} else if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		p->cpus = CPU_COUNT(&set);
		vg_strlcpy(p->cpu_from, "CPU affinity", sizeof(p->cpu_from));
	} else {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		p->cpus = n > 0 ? (int)n : 1;
		vg_strlcpy(p->cpu_from, "online CPUs", sizeof(p->cpu_from));
	}
	if (conf != NULL && conf->memory > 0) {
		p->memory = conf->memory;
		vg_strlcpy(p->mem_from, "pool.memory", sizeof(p->mem_from));
	} else if (al->memory > 0) {
		p->memory = al->memory;
		vg_strlcpy(p->mem_from, al->mem_from, sizeof(p->mem_from));
	} else if (al->memory_unknown) {
		/* A job that does not say its memory: MemTotal is the
		 * node's, not the job's; its scheduler refuses a task that
		 * asks more than the job holds. */
		p->memory = 0;
		vg_strlcpy(p->mem_from, al->mem_from, sizeof(p->mem_from));
	} else if (read_small("/proc/meminfo", text, sizeof(text)) == 0 &&
	    (s = strstr(text, "MemTotal:")) != NULL) {
		p->memory = (uint64_t)strtoull(s + 9, NULL, 10) << 10;
		vg_strlcpy(p->mem_from, "/proc/meminfo", sizeof(p->mem_from));
	}
}

int
vg_pool_host(const struct vg_pool_conf *conf, int want_gpus,
    struct vg_pool *p, struct vg_err *e)
{
	const struct vg_strv *ids = conf != NULL ? &conf->gpus : NULL;
	struct vg_alloc al;
	size_t i;
	int rc;

	memset(p, 0, sizeof(*p));
	(void)alloc_get(&al);
	host_size(conf, &al, p);
	if (!want_gpus) {
		vg_strlcpy(p->gpu_from, "not looked up", sizeof(p->gpu_from));
		return 0;
	}
	if (from_env(p, &al)) {
		if (ids != NULL && ids->n > 0 &&
		    (rc = restrict_to(p, ids, e)) != 0) {
			vg_pool_release(p);
			return rc;
		}
		return 0;
	}
	if (ids != NULL && ids->n > 0) {
		p->vendor = conf->gpu_vendor != NULL &&
		    strcmp(conf->gpu_vendor, "amd") == 0 ? VG_GPU_AMD :
		    VG_GPU_NVIDIA;
		for (i = 0; i < ids->n; i++)
			vg_gpu_parse_list(ids->v[i], p->vendor, p);
		vg_strlcpy(p->gpu_from, "pool.gpus", sizeof(p->gpu_from));
		return 0;
	}
	if (from_smi(p))
		vg_strlcpy(p->gpu_from, "nvidia-smi", sizeof(p->gpu_from));
	else if (from_proc(p))
		vg_strlcpy(p->gpu_from, "/proc/driver/nvidia/gpus",
		    sizeof(p->gpu_from));
	else if (from_kfd(p))
		vg_strlcpy(p->gpu_from, "/sys/class/kfd",
		    sizeof(p->gpu_from));
	else if (from_rocm_smi(p))
		vg_strlcpy(p->gpu_from, "rocm-smi", sizeof(p->gpu_from));
	else
		vg_strlcpy(p->gpu_from, "none found (no CUDA_VISIBLE_DEVICES,"
		    " pool.gpus, nvidia-smi, kfd or rocm-smi)",
		    sizeof(p->gpu_from));
	return 0;
}

void
vg_pool_release(struct vg_pool *p)
{
	free(p->gpus);
	p->gpus = NULL;
	p->ngpus = 0;
}

/* Appends item to the comma-separated list in buf (size n), truncating. */
static void
list_add(char *buf, size_t n, const char *item)
{
	size_t len = strlen(buf);

	if (len < n)
		snprintf(buf + len, n - len, "%s%s", len > 0 ? "," : "", item);
}

void
vg_gpu_give(char *ids, size_t nids, char *devs, size_t ndevs,
    const struct vg_gpu *g)
{
	list_add(ids, nids, g->id);
	if (g->dev[0] != '\0')
		list_add(devs, ndevs, g->dev);
}

void
vg_gpu_shared_nodes(enum vg_gpu_vendor vendor, struct vg_strv *out)
{
	static const char *const nvidia[] = { "/dev/nvidiactl",
		"/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
		"/dev/nvidia-modeset" };
	glob_t g;
	size_t i;

	if (vendor == VG_GPU_AMD) {
		if (access("/dev/kfd", F_OK) == 0)
			vg_strv_push(out, "/dev/kfd");
		return;
	}
	for (i = 0; i < sizeof(nvidia) / sizeof(nvidia[0]); i++)
		if (access(nvidia[i], F_OK) == 0)
			vg_strv_push(out, nvidia[i]);
	memset(&g, 0, sizeof(g));
	if (glob("/dev/nvidia-caps/*", 0, NULL, &g) == 0)
		for (i = 0; i < g.gl_pathc; i++)
			vg_strv_push(out, g.gl_pathv[i]);
	globfree(&g);
}

void
vg_pool_report(const struct vg_pool *p, struct vg_buf *out)
{
	struct vg_strv shared;
	size_t i;

	vg_buf_printf(out, "pool cpus: %d (from %s)\n", p->cpus, p->cpu_from);
	if (p->memory > 0)
		vg_buf_printf(out, "pool memory: %llu MiB (from %s)\n",
		    (unsigned long long)(p->memory >> 20), p->mem_from);
	else if (p->mem_from[0] != '\0')
		vg_buf_printf(out, "pool memory: not limited (%s)\n",
		    p->mem_from);
	vg_buf_printf(out, "pool gpus: %zu %s (from %s)\n", p->ngpus,
	    vg_gpu_vendor_name(p->vendor), p->gpu_from);
	for (i = 0; i < p->ngpus; i++) {
		const struct vg_gpu *g = &p->gpus[i];

		vg_buf_printf(out, "gpu %s:", g->id);
		if (g->name[0] != '\0')
			vg_buf_printf(out, " %s", g->name);
		if (g->uuid[0] != '\0' && strcmp(g->uuid, g->id) != 0)
			vg_buf_printf(out, " %s", g->uuid);
		if (g->memory > 0)
			vg_buf_printf(out, " %llu MiB",
			    (unsigned long long)(g->memory >> 20));
		vg_buf_printf(out, "%ssandbox grants %s%s\n",
		    g->name[0] != '\0' || g->memory > 0 ? "; " : " ", g->dev[0] ?
		    g->dev : "no own node (id is not an index)",
		    g->dev[0] && access(g->dev, F_OK) != 0 ?
		    " (not present)" : "");
	}
	memset(&shared, 0, sizeof(shared));
	vg_gpu_shared_nodes(p->vendor, &shared);
	vg_buf_adds(out, "gpu shared nodes granted to tasks with gpus:");
	for (i = 0; i < shared.n; i++)
		vg_buf_printf(out, " %s", shared.v[i]);
	vg_buf_adds(out, shared.n == 0 ? " none present\n" : "\n");
	vg_strv_release(&shared);
}
