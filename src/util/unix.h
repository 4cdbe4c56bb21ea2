/* A Unix stream socket connected by path: the clients of ibmcastd
 * (mcastd/client.c) and of the control socket of `ibmcast join`
 * (umad/mcast_ctl.c). */
#ifndef IMC_UTIL_UNIX_H
#define IMC_UTIL_UNIX_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* A close-on-exec socket connected to path, its sends and receives (and
 * the connect itself) bounded by timeout when not NULL. Returns the fd,
 * -ENAMETOOLONG when path does not fit sun_path, or -errno of socket()
 * or connect() (-ENOENT, -ECONNREFUSED for a stale socket, ...). */
static inline int imc_unix_connect(const char *path,
				   const struct timeval *timeout)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	int fd;

	if (len >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, len + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (timeout) {
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, timeout,
				 sizeof(*timeout));
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, timeout,
				 sizeof(*timeout));
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

#endif
