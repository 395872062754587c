/*
 * dl.c - a shared library loaded on first use (dl.h).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/dl.h"

void
vg_dl_load(struct vg_dl *d)
{
	const char *lib = d->env != NULL ? getenv(d->env) : NULL;
	void *h;

	if (lib == NULL || *lib == '\0')
		lib = d->soname;
	if ((h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		const char *why = dlerror();

		snprintf(d->why, sizeof(d->why), "cannot load %s: %s "
		    "(install %s%s%s)", d->soname, why != NULL ? why : lib,
		    d->package, d->env != NULL ? ", or name the library in " :
		    "", d->env != NULL ? d->env : "");
		return;
	}
	if (d->bind(d, h) != 0) {
		dlclose(h);
		return;
	}
	d->ok = 1;
}

int
vg_dl_ready(struct vg_dl *d, void (*once)(void))
{
	pthread_once(&d->once, once);
	return d->ok ? 0 : -1;
}

int
vg_dl_sym(struct vg_dl *d, void *handle, const char *name, void **slot)
{
	if ((*slot = dlsym(handle, name)) != NULL)
		return 0;
	snprintf(d->why, sizeof(d->why), "%s has no %s (a version older "
	    "than the one vigil was built with?)", d->soname, name);
	return -1;
}
