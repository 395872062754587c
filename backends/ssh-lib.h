/*
 * ssh-lib.h - libssh is loaded on the ssh backend's first call
 * (backends/ssh-lib.c): include <libssh/libssh.h> as usual.
 */
#ifndef VG_BACKENDS_SSH_LIB_H
#define VG_BACKENDS_SSH_LIB_H

/* NULL when libssh is loaded; else why it cannot be ("cannot load
 * libssh.so.4: ... (install libssh-4, or name the library in
 * VIGIL_LIBSSH)"). */
const char *vg_ssh_lib_error(void);

#endif
