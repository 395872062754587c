/*
 * home.h - where vigil keeps its state (the "vigil home").
 *
 * Every floor that writes under the home (the store, the SIF cache, the
 * backends' per-run files) asks here, so the rule lives once.
 */
#ifndef VG_HOME_H
#define VG_HOME_H

/* Where vigil keeps state: $VIGIL_HOME, else $XDG_STATE_HOME/vigil, else
 * ~/.local/state/vigil.  Never fails; the caller frees the result. */
char	*vg_home_dir(void);

/* The user's own home directory, where other tools keep their files
 * (~/.modal.toml): $HOME when absolute, else the password database's,
 * else "/".  Never $VIGIL_HOME.  Never fails; the caller frees. */
char	*vg_user_home(void);

#endif
