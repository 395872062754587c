/*
 * secrets.c - what is secret and must not be recorded: names that look
 * secret, and the values vigil put into commands from places it knows
 * hold secrets; see secrets.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/secrets.h"

/* Shorter values are not redacted by value: too many false matches. */
#define SECRET_MIN	4

static pthread_mutex_t secrets_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vg_strv secrets;		/* name, value, name, value, ... */

/* Case-insensitive substring test within s[0..n). */
int
vg_icontains(const char *s, size_t n, const char *pat)
{
	size_t pl = strlen(pat), i, k;

	for (i = 0; i + pl <= n; i++) {
		for (k = 0; k < pl; k++) {
			char a = s[i + k], b = pat[k];

			if (a >= 'a' && a <= 'z')
				a = (char)(a - 32);
			if (a != b)
				break;
		}
		if (k == pl)
			return 1;
	}
	return 0;
}

/* True when a variable, option or header name looks secret: TOKEN,
 * SECRET, PASSWORD or PASSWD anywhere, or a KEY, PASS, APIKEY or
 * CREDENTIALS segment (GITHUB_TOKEN, api-key; not keyframes). */
int
vg_secret_name(const char *s, size_t n)
{
	static const char *const seg[] = { "KEY", "PASS", "APIKEY",
	    "ACCESSKEY", "SECRETKEY", "PRIVATEKEY", "CREDENTIAL",
	    "CREDENTIALS", "PASSPHRASE", "AUTH", NULL };
	size_t i = 0, j, k;

	if (vg_icontains(s, n, "TOKEN") || vg_icontains(s, n, "SECRET") ||
	    vg_icontains(s, n, "PASSWORD") || vg_icontains(s, n, "PASSWD"))
		return 1;
	while (i < n) {
		j = i;
		while (j < n && s[j] != '_' && s[j] != '-')
			j++;
		for (k = 0; seg[k] != NULL; k++)
			if (strlen(seg[k]) == j - i &&
			    vg_icontains(s + i, j - i, seg[k]))
				return 1;
		i = j + 1;
	}
	return 0;
}


void
vg_secret_note(const char *name, const char *value)
{
	size_t i;

	if (value == NULL || strlen(value) < SECRET_MIN)
		return;
	pthread_mutex_lock(&secrets_lock);
	for (i = 0; i + 1 < secrets.n; i += 2)
		if (strcmp(secrets.v[i + 1], value) == 0)
			break;
	if (i + 1 >= secrets.n) {
		vg_strv_push(&secrets, name);
		vg_strv_push(&secrets, value);
	}
	pthread_mutex_unlock(&secrets_lock);
}

size_t
vg_secret_at(const char *s, size_t n, const char **name)
{
	size_t i, len, best = 0;

	/* Unlocked first look: most processes note nothing. */
	if (__atomic_load_n(&secrets.n, __ATOMIC_RELAXED) == 0)
		return 0;
	pthread_mutex_lock(&secrets_lock);
	for (i = 0; i + 1 < secrets.n; i += 2) {
		len = strlen(secrets.v[i + 1]);
		if (len > best && len <= n &&
		    memcmp(s, secrets.v[i + 1], len) == 0) {
			best = len;
			*name = secrets.v[i];
		}
	}
	pthread_mutex_unlock(&secrets_lock);
	return best;
}

void
vg_secret_forget(void)
{
	pthread_mutex_lock(&secrets_lock);
	vg_strv_release(&secrets);
	pthread_mutex_unlock(&secrets_lock);
}
