/*
 * leftover.h - finding processes of a run after the vigil that started
 * them is gone: a pid plus its /proc start time names one process for
 * good (pids are reused, start times of a reused pid differ), and every
 * task process carries VIGIL_RUN_ID and VIGIL_TASK_INDEX in its initial
 * environment, which /proc/PID/environ shows even after a setsid or a
 * double fork.
 *
 * Used by resume (tasks recorded RUNNING whose exit status can no longer
 * be collected are killed and run again), by cancel of a run whose vigil
 * died, and by gc.  Linux only; reads /proc.
 */
#ifndef VG_LEFTOVER_H
#define VG_LEFTOVER_H

#include <sys/types.h>

#include "common/err.h"

/*
 * Reads field 22 (starttime, clock ticks since boot) of /proc/PID/stat.
 * Returns VG_ENOENT when the process does not exist or is a zombie.
 */
int	vg_pid_start_time(pid_t pid, unsigned long long *start);

/* True when pid is alive (not a zombie) and started at start. */
int	vg_pid_is(pid_t pid, unsigned long long start);

/*
 * Kills (SIGKILL, after a SIGSTOP sweep so nothing forks meanwhile) every
 * process whose environment has VIGIL_RUN_ID=run_id and, when index >= 0,
 * VIGIL_TASK_INDEX=index; never this process or its parent.  Repeats the
 * sweep until none is left (at most a few rounds).  *killed (may be NULL)
 * gets how many processes were signalled.  Blocks for at most ~1 s.
 */
int	vg_kill_leftovers(const char *run_id, int index, int *killed,
	    struct vg_err *e);

#endif
