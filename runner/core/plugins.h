/*
 * plugins.h - registers this program's backends and schedulers with the
 * manifest floor (runner/manifest/plugin.h).
 */
#ifndef VG_CORE_PLUGINS_H
#define VG_CORE_PLUGINS_H

/* Registers every backend and scheduler (vg_plugins_set); called at
 * start, before any manifest is read.  Calling it again does nothing. */
void	vg_plugins_init(void);

#endif
