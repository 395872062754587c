/*
 * plugin.c - the registry of plugins (runner/manifest/plugin.h): the list
 * a program registers at start, finding a plugin by name, alias or kind,
 * the plugins a manifest names, and their host checks and notes.
 */
#include <stddef.h>
#include <string.h>

#include "runner/manifest/manifest.h"
#include "runner/manifest/plugin.h"
/* The registered plugins (vg_plugins_set), NULL-terminated. */
static const struct vg_plugin *const *plugins;

void
vg_plugins_set(const struct vg_plugin *const *list)
{
	plugins = list;
}

const struct vg_plugin *
vg_plugin_at(size_t i)
{
	size_t n;

	for (n = 0; plugins != NULL && plugins[n] != NULL; n++)
		if (n == i)
			return plugins[n];
	return NULL;
}

const struct vg_plugin *
vg_plugin_find(enum vg_plugin_kind kind, const char *name)
{
	const struct vg_plugin *p;
	size_t i;

	for (i = 0; name != NULL && (p = vg_plugin_at(i)) != NULL; i++)
		if (p->kind == kind && (strcmp(p->name, name) == 0 ||
		    (p->alias != NULL && strcmp(p->alias, name) == 0)))
			return p;
	return NULL;
}

/* The plugins of m: its scheduler (*sc) and, when its tasks run on this
 * host, its backend (*be); each NULL when there is none. */
static void
host_plugins(const struct vg_manifest *m, const struct vg_plugin **sc,
    const struct vg_plugin **be)
{
	*sc = vg_plugin_find(VG_PLUGIN_SCHEDULER,
	    vg_manifest_plugin(m, VG_PLUGIN_SCHEDULER));
	*be = vg_plugin_find(VG_PLUGIN_BACKEND,
	    vg_manifest_plugin(m, VG_PLUGIN_BACKEND));
	if (*sc != NULL && ((*sc)->flags & VG_PLUGIN_ELSEWHERE))
		*be = NULL;
}

size_t
vg_manifest_host_check(const struct vg_manifest *m, struct vg_strv *why)
{
	const struct vg_plugin *be, *sc;
	size_t n = why->n;

	host_plugins(m, &sc, &be);
	if (sc != NULL && sc->host_check != NULL)
		sc->host_check(m, why);
	if (be != NULL && be->host_check != NULL)
		be->host_check(m, why);
	return why->n - n;
}

size_t
vg_manifest_host_notes(const struct vg_manifest *m, struct vg_strv *notes)
{
	const struct vg_plugin *be, *sc;
	size_t n = notes->n;

	host_plugins(m, &sc, &be);
	if (be != NULL && be->host_notes != NULL)
		be->host_notes(m, notes);
	return notes->n - n;
}

const char *
vg_manifest_plugin(const struct vg_manifest *m, enum vg_plugin_kind kind)
{
	const char *name = kind == VG_PLUGIN_BACKEND ? m->backend :
	    m->scheduler;
	const struct vg_plugin *p;

	if (name != NULL)
		return name;
	p = vg_plugin_default(kind);
	return p != NULL ? p->name : "";
}

const struct vg_plugin *
vg_plugin_default(enum vg_plugin_kind kind)
{
	const struct vg_plugin *p;
	size_t i;

	for (i = 0; (p = vg_plugin_at(i)) != NULL; i++)
		if (p->kind == kind && (p->flags & VG_PLUGIN_DEFAULT))
			return p;
	return NULL;
}
