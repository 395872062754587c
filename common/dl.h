/*
 * dl.h - a shared library loaded on first use.
 *
 * Some libraries cost every vigil process's start more than all else it
 * does (libcurl with its TLS, Kerberos and LDAP libraries; libssh with
 * libcrypto and Kerberos), yet only the code paths that speak HTTP or ssh
 * use them.  Those are not linked: a file of their owner's floor defines
 * the library's functions vigil calls (common/curl.c, backends/ssh-lib.c)
 * and forwards each to the library, which the first call loads here.
 */
#ifndef VG_COMMON_DL_H
#define VG_COMMON_DL_H

#include <pthread.h>
#include <stddef.h>

struct vg_dl {
	const char *soname;	/* the soname built against: "libssh.so.4" */
	const char *env;	/* names another file to load, or NULL */
	const char *package;	/* what to install: "libssh-4" */
	/* After dlopen: fills the caller's table from the handle (with
	 * vg_dl_sym) and does the library's one-time initialisation; 0 or
	 * -1 with d->why set. */
	int (*bind)(struct vg_dl *d, void *handle);
	pthread_once_t once;	/* PTHREAD_ONCE_INIT */
	int ok;
	char why[320];		/* why it could not be loaded */
};

/* Loads d once (thread-safe); 0 when its functions can be called. */
int vg_dl_ready(struct vg_dl *d, void (*once)(void));

/* The loader of d, for vg_dl_ready's `once` (pthread_once has no
 * argument: each library has a two-line function calling this). */
void vg_dl_load(struct vg_dl *d);

/* *slot = the address of symbol `name` in handle; 0, or -1 with d->why
 * naming the missing symbol. */
int vg_dl_sym(struct vg_dl *d, void *handle, const char *name, void **slot);

#endif
