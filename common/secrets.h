/*
 * secrets.h - what is secret and must not be recorded.  Redaction by
 * shape (runner/policy/audit.c) finds tokens that look like tokens; this
 * adds what vigil knows: the value of every ${{ env.NAME }} it put into
 * a command, and of every variable whose name looks secret, noted when a
 * task is expanded, is replaced by "[redacted:NAME]" wherever a command
 * is recorded (the audit file and table, and what is built from them:
 * events, status, report).
 */
#ifndef VG_SECRETS_H
#define VG_SECRETS_H

#include <stddef.h>

/* True when a variable, option or header name looks secret: TOKEN,
 * SECRET, PASSWORD or PASSWD anywhere, or a KEY, PASS, APIKEY or
 * CREDENTIALS segment (GITHUB_TOKEN, api-key; not keyframes). */
int	vg_secret_name(const char *s, size_t n);

/* True when pat (upper case) is in s[0..n), ignoring case. */
int	vg_icontains(const char *s, size_t n, const char *pat);

/* Notes value (named name) as secret for the rest of the process;
 * values under 4 bytes are not noted.  Thread-safe. */
void	vg_secret_note(const char *name, const char *value);

/* The length of the longest noted value s[0..n) starts with (0: none),
 * *name its name (valid until vg_secret_forget). */
size_t	vg_secret_at(const char *s, size_t n, const char **name);

/* Forgets every noted value (tests). */
void	vg_secret_forget(void);

#endif
