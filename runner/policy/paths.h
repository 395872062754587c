/*
 * paths.h - what path classification (paths.c) offers: an operand is
 * resolved against the working directory, home and the task's
 * workspace, then put in a class (workspace, user, protected, device,
 * network ...) with attributes (/etc, ssh keys, shell startup files ...)
 * that the classifier turns into findings.
 */
#ifndef VG_POLICY_PATHS_H
#define VG_POLICY_PATHS_H

#include <stddef.h>

#include "runner/policy/actx.h"

enum pl_pclass {
	PC_WORKSPACE = 0,	/* task dir, cwd subtree, temp/scratch/cache */
	PC_USER,		/* the user's files outside the workspace */
	PC_OTHER,		/* other non-system paths */
	PC_SPECIAL,		/* /dev/null and friends */
	PC_NET,			/* /dev/tcp, /dev/udp */
	PC_DEVICE,		/* block/char devices: raw disk */
	PC_PROTECTED,		/* system trees, home, roots, dotfiles */
};

/* Attributes besides the class. */
#define PA_ETC		0x01	/* under /etc */
#define PA_RC		0x02	/* shell startup file, autostart */
#define PA_SSH		0x04	/* ~/.ssh */
#define PA_SECRET	0x08	/* private key, credentials, shadow */
#define PA_SUDOERS	0x10	/* sudoers, passwd, shadow, group */
#define PA_KERNEL	0x20	/* /proc/sys, /sys, sysrq-trigger */
#define PA_CRON		0x40	/* cron spools and cron.d */
#define PA_ROOT		0x80	/* "/" itself or a glob over it */
#define PA_UNRESOLVED	0x100	/* could not be resolved */
#define PA_SYSBIN	0x200	/* system binaries and libraries */
#define PA_HOME		0x400	/* the home directory itself */
#define PA_PRELOAD	0x800	/* ld.so.preload */
#define PA_HISTORY	0x1000	/* shell history */
#define PA_SYSRQ	0x2000	/* /proc/sysrq-trigger */
#define PA_AUTHKEYS	0x4000	/* authorized_keys */
#define PA_TMPROOT	0x8000	/* a temp or scratch root itself */
#define PA_SOFTWARE	0x10000	/* under /usr or /opt (/usr/local, /opt/X) */

struct pl_path {
	int		 cls;		/* enum pl_pclass */
	unsigned	 attr;		/* PA_* */
	const char	*abs;		/* resolved, in the arena */
};

/* Resolves and classifies field f into out (abs in the arena). */
void	pl_path_classify(struct pl_an *an, const struct pl_field *f,
	    struct pl_path *out);
/* True when p (classified) is "/", the home directory, /home or a
 * system tree itself, or a glob over one: what the built-in floor
 * protects from recursive deletion and overwrite. */
int	pl_path_top(const struct pl_an *an, const struct pl_path *p);
/* Resolves len bytes of s against the current directory (/ when
 * unknown) and folds . and ..; the result is in the arena. */
const char *pl_path_resolve(struct pl_an *an, const char *s, size_t len);

#endif
