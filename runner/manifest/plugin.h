/*
 * plugin.h - what the manifest floor knows of backends and schedulers.
 *
 * A plugin (one backend or one scheduler) owns its part of the manifest:
 * the sections it reads (their schema rows, defaults and checks), the
 * names it answers to, and its validation beyond the schema.  It
 * describes them in a struct vg_plugin, embedded first in its ops table
 * (struct vg_backend_ops, struct vg_scheduler_ops); generic code reads
 * plugins only through this header and never names one.
 *
 * The list of plugins is handed down from above: a program registers it
 * (vg_plugins_set) before it reads a manifest; runner/core/plugins.c
 * builds it from the backend and scheduler tables (vg_plugins_init).  A
 * floor below never calls up into one above, not even by a symbol left
 * for the linker (scripts/check-layers.sh checks the objects).  Adding a
 * backend is one new file (its ops with its plugin block and sections)
 * plus one line in vg_backends[].
 *
 * Each section's configuration lives inside the manifest (struct
 * vg_manifest.ext) at an offset fixed when the schema is first built;
 * vg_manifest_conf() finds it.  Sections are decoded, defaulted, merged
 * across config layers, written to the effective manifest and released
 * like the built-in ones.
 */
#ifndef VG_PLUGIN_H
#define VG_PLUGIN_H

#include <stddef.h>

#include "common/diag.h"

struct vg_manifest;
struct vg_section;

/* One top-level manifest section owned by a plugin ("docker:"). */
struct vg_msection {
	const char		*key;		/* "docker" */
	const char		*alias;		/* another accepted key, or NULL */
	const struct vg_section	*schema;	/* rows, checks (schema.h) */
	size_t			 size;		/* sizeof its C struct */
	const char		*help;		/* one line, for docs */
};

enum vg_plugin_kind {
	VG_PLUGIN_BACKEND,
	VG_PLUGIN_SCHEDULER,
};

/* Plugin flags. */
#define VG_PLUGIN_DEFAULT	0x01	/* chosen when the manifest names none
					   of its kind; one per kind */
#define VG_PLUGIN_IMAGE		0x02	/* needs the manifest's 'image' */
#define VG_PLUGIN_ELSEWHERE	0x04	/* a scheduler whose tasks run on other
					   hosts (a cluster's nodes): the
					   backend's host checks say nothing
					   of this one */
#define VG_PLUGIN_EGRESS	0x08	/* a backend that confines tasks to
					   isolation.network's allow-list
					   through vigil's egress proxy */
#define VG_PLUGIN_NONET		0x10	/* a backend that can take the
					   network away (isolation.network
					   none): local, docker */
#define VG_PLUGIN_EGRESS_RUNS	0x20	/* EGRESS holds for runs, not for
					   sessions */
#define VG_PLUGIN_NONET_RUNS	0x40	/* NONET holds for runs, not for
					   sessions */

struct vg_plugin {
	enum vg_plugin_kind	 kind;
	const char		*name;		/* as manifests spell it */
	const char		*alias;		/* another accepted name, or NULL */
	unsigned		 flags;		/* VG_PLUGIN_* */
	const char		*help;		/* one line, for docs and errors */
	/* Sections it owns, NULL-terminated; NULL when none.  A section
	 * may be listed by several plugins (the SIF cache). */
	const struct vg_msection *const *sections;
	/* Checks what the schema cannot (a bind source exists, a name
	 * resolves) when the manifest selects this plugin, adding every
	 * problem to d; returns 0 or VG_EINVAL.  Optional. */
	int	(*validate)(const struct vg_manifest *m, struct vg_diag *d);
	/* Appends to why one line for each thing this host lacks to run
	 * the tasks of m, a valid manifest selecting this plugin: an
	 * engine that does not answer, a binary, credentials, GPUs,
	 * commands ("docker: ...: what to change").  Reads the host only,
	 * records nothing; may block a few seconds (a connection with a
	 * short timeout).  Optional: NULL has nothing to check. */
	void	(*host_check)(const struct vg_manifest *m,
		    struct vg_strv *why);
	/* Appends to notes one line for each thing that will run other
	 * than the manifest may expect here, without stopping it (the
	 * local working directory not writable: "...; what to do").
	 * Optional. */
	void	(*host_notes)(const struct vg_manifest *m,
		    struct vg_strv *notes);
};

/*
 * Registers the plugins of this program: list (kept, not copied) holds
 * them, backends first, then schedulers, and ends with NULL.  Called
 * once at start, before any manifest is read (the schema is built from
 * them on first use).
 */
void	vg_plugins_set(const struct vg_plugin *const *list);
/* The i-th registered plugin, or NULL past the last one (and when none
 * were registered). */
const struct vg_plugin *vg_plugin_at(size_t i);

/* The plugin of kind named name or by its alias, or NULL. */
const struct vg_plugin *vg_plugin_find(enum vg_plugin_kind kind,
	    const char *name);
/* The default plugin of kind (VG_PLUGIN_DEFAULT); never NULL in a
 * program that links at least one plugin of that kind. */
const struct vg_plugin *vg_plugin_default(enum vg_plugin_kind kind);

/*
 * What this host cannot run of m (a valid manifest): the host_check
 * lines of m's scheduler, then those of its backend unless the
 * scheduler runs tasks elsewhere (VG_PLUGIN_ELSEWHERE), appended to why
 * (caller releases).  Returns the number of lines added; 0 means this
 * host can run m as far as vigil can tell without running it.  Blocks
 * as the ops do.
 */
size_t	vg_manifest_host_check(const struct vg_manifest *m,
	    struct vg_strv *why);

/* The host_notes lines of m's backend (unless its scheduler runs tasks
 * elsewhere), appended to notes; returns how many. */
size_t	vg_manifest_host_notes(const struct vg_manifest *m,
	    struct vg_strv *notes);

/* The name of m's plugin of kind (m->backend, m->scheduler), or the
 * default plugin's when m names none (a manifest built by hand). */
const char *vg_manifest_plugin(const struct vg_manifest *m,
	    enum vg_plugin_kind kind);

/*
 * The configuration of section s inside m: a struct of s->size bytes,
 * defaulted, owned by m (mutable only while m is being built or in
 * tests).  Aborts when s is not a section of any linked plugin: that is
 * a programming error, not an input error.
 */
void	*vg_manifest_conf(const struct vg_manifest *m,
	    const struct vg_msection *s);

#endif
