/*
 * unixhttpd.c - the forked unix-socket test server; see unixhttpd.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unixhttpd.h"

/* Listens, forks the accept loop; see unixhttpd.h. */
int
unixhttpd_start(struct unixhttpd *s, const char *prefix,
    void (*serve)(int fd))
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd, fd, err;

	memset(s, 0, sizeof(*s));
	s->pid = -1;
	snprintf(s->dir, sizeof(s->dir), "/tmp/%.40s.XXXXXX", prefix);
	if (mkdtemp(s->dir) == NULL)
		return -1;
	snprintf(s->sock, sizeof(s->sock), "%s/s.sock", s->dir);
	snprintf(s->endpoint, sizeof(s->endpoint), "unix://%s", s->sock);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", s->sock);
	if ((lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		goto fail;
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(lfd, 16) != 0 || (s->pid = fork()) < 0) {
		err = errno;
		close(lfd);
		errno = err;
		goto fail;
	}
	if (s->pid == 0) {
		for (;;) {
			if ((fd = accept(lfd, NULL, NULL)) < 0)
				_exit(0);
			serve(fd);
			close(fd);
		}
	}
	close(lfd);
	return 0;
fail:
	err = errno;
	unlink(s->sock);
	rmdir(s->dir);
	errno = err;
	return -1;
}

/* Stops the server and removes its files; see unixhttpd.h. */
void
unixhttpd_stop(struct unixhttpd *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
		s->pid = -1;
	}
	unlink(s->sock);
	rmdir(s->dir);
}
