/*
 * unixhttpd.h - a forked test server on a unix socket in a private temp
 * directory, for the HTTP client tests: the child accepts connections
 * one at a time and hands each to the test's serve function, so state
 * that serve keeps in statics lives across the requests of one test.
 */
#ifndef VG_TEST_UNIXHTTPD_H
#define VG_TEST_UNIXHTTPD_H

#include <sys/types.h>

struct unixhttpd {
	char	dir[64];
	char	sock[128];
	char	endpoint[160];		/* "unix:///tmp/.../s.sock" */
	pid_t	pid;
};

/*
 * Makes /tmp/<prefix>.XXXXXX, listens on s.sock in it and forks the
 * server, which calls serve(fd) for each connection and closes fd after.
 * Returns 0, or -1 with errno set (nothing left behind).
 */
int	unixhttpd_start(struct unixhttpd *s, const char *prefix,
	    void (*serve)(int fd));

/* Kills and reaps the server, removes the socket and the directory. */
void	unixhttpd_stop(struct unixhttpd *s);

#endif
