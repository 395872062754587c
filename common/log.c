/*
 * log.c - "vigil: level: message" lines on stderr (or a log file for
 * detached runs).  Debug lines carry the function and line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

static enum vg_log_level log_level = VG_LOG_INFO;
static int log_fd = 2;
static int log_env_checked;

/* Sets the threshold. */
void
vg_log_set_level(enum vg_log_level level)
{
	log_level = level;
	log_env_checked = 1;
}

/* Returns the threshold, honouring VIGIL_DEBUG on first use. */
enum vg_log_level
vg_log_get_level(void)
{
	const char *s;

	if (!log_env_checked) {
		log_env_checked = 1;
		if ((s = getenv("VIGIL_DEBUG")) != NULL && *s != '\0' &&
		    strcmp(s, "0") != 0)
			log_level = VG_LOG_DEBUG;
	}
	return log_level;
}

/* Sends log lines to fd. */
void
vg_log_set_fd(int fd)
{
	log_fd = fd;
}

/* Formats one log line and writes it with a single write(2). */
void
vg_log_msg(enum vg_log_level level, const char *func, int line,
    const char *fmt, ...)
{
	static const char *names[] = { "error", "warning", "info", "debug" };
	char buf[2048];
	int n, m;
	va_list ap;

	if (level > vg_log_get_level())
		return;
	if (level == VG_LOG_DEBUG)
		n = snprintf(buf, sizeof(buf), "vigil: debug: %s:%d: ", func,
		    line);
	else if (level == VG_LOG_INFO)
		n = snprintf(buf, sizeof(buf), "vigil: ");
	else
		n = snprintf(buf, sizeof(buf), "vigil: %s: ", names[level]);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(log_fd, buf, n);
}
