/*
 * log.h - diagnostics to stderr for the command layer and for events that
 * have no caller to return to (signal handling, detached runs).
 *
 * Library code reports failures through struct vg_err, not through these
 * macros; logging is for progress and for debugging (VIGIL_DEBUG=1).
 */
#ifndef VG_LOG_H
#define VG_LOG_H

enum vg_log_level {
	VG_LOG_ERROR = 0,
	VG_LOG_WARN,
	VG_LOG_INFO,
	VG_LOG_DEBUG,
};

/* Sets the threshold; messages above it are dropped. */
void	vg_log_set_level(enum vg_log_level level);
enum vg_log_level vg_log_get_level(void);

/* Redirects log output to fd (default 2); used by detached runs. */
void	vg_log_set_fd(int fd);

void	vg_log_msg(enum vg_log_level level, const char *func, int line,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define vg_error(...)	vg_log_msg(VG_LOG_ERROR, __func__, __LINE__, __VA_ARGS__)
#define vg_warn(...)	vg_log_msg(VG_LOG_WARN, __func__, __LINE__, __VA_ARGS__)
#define vg_info(...)	vg_log_msg(VG_LOG_INFO, __func__, __LINE__, __VA_ARGS__)
#define vg_debug(...)	vg_log_msg(VG_LOG_DEBUG, __func__, __LINE__, __VA_ARGS__)

#endif
