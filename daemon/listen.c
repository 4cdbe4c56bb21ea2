/* ibmcastd's socket: a Unix stream socket in the runtime directory, mode
 * and group set so that only permitted users connect (the file system is
 * the first gate; the policy the second). Every client is identified at
 * accept by SO_PEERCRED (unix(7)), which the kernel fills in at connect:
 * the client cannot forge it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ibmcastd.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59          /* Linux 4.13 */
#endif

/* True when something accepts connections at path: another daemon. */
static bool someone_listens(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool yes;

	if (fd < 0)
		return false;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	yes = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return yes;
}

/* The peer's supplementary groups (SO_PEERGROUPS, Linux 4.13: as the
 * kernel knew them at connect, like SO_PEERCRED), and whether gid is
 * among them or is its primary group. */
static bool peer_groups(int fd, gid_t primary, bool has_gid, gid_t gid,
			struct imc_mcastd_cred *cr)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);
	bool in = has_gid && primary == gid;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return in;
	for (size_t i = 0; i < len / sizeof(gid_t); i++) {
		if (has_gid && groups[i] == gid)
			in = true;
		if (groups[i] != primary && cr->n_groups < IMC_MCASTD_MAX_GROUPS)
			cr->groups[cr->n_groups++] = (uint32_t)groups[i];
	}
	return in;
}

static void accept_one(struct daemon *d, int c)
{
	struct imc_mcastd_cred cr = { 0 };
	struct ucred uc;
	socklen_t len = sizeof(uc);
	int r;

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0) {
		dlog(IMC_MCASTD_LOG_WARN, "client without credentials: %s",
		     strerror(errno));
		close(c);
		return;
	}
	cr.pid = (uint32_t)uc.pid;
	cr.uid = (uint32_t)uc.uid;
	cr.gid = (uint32_t)uc.gid;
	cr.in_group = peer_groups(c, uc.gid, d->has_gid, d->gid, &cr);
	r = imc_mcastd_server_accept(d->srv, c, &cr, NULL);
	if (r < 0) {
		dlog(IMC_MCASTD_LOG_WARN, "client pid=%u uid=%u refused: %s",
		     cr.pid, cr.uid, r == -EUSERS ?
		     "too many connections for this uid (--max-conns-per-uid) "
		     "or in all" : strerror(-r));
		close(c);
		return;
	}
	dlog(IMC_MCASTD_LOG_DEBUG, "client pid=%u uid=%u gid=%u connected",
	     cr.pid, cr.uid, cr.gid);
}

static void on_accept(struct imc_fd_watch *w, unsigned int events)
{
	struct daemon *d = imc_container_of(w, struct daemon, listen_watch);

	/* Level-triggered: a few per round keeps the loop fair. */
	for (int i = 0; i < 64; i++) {
		int c = accept4(d->listen_fd, NULL, NULL,
				SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (c < 0) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				dlog(IMC_MCASTD_LOG_WARN, "accept: %s",
				     strerror(errno));
			return;
		}
		accept_one(d, c);
	}
}

static int set_access(struct daemon *d)
{
	if (d->has_gid && chown(d->sock_path, (uid_t)-1, d->gid) < 0) {
		dlog(IMC_MCASTD_LOG_ERR, "chown %s to group %u: %s",
		     d->sock_path, (unsigned)d->gid, strerror(errno));
		return -errno;
	}
	if (chmod(d->sock_path, d->o.mode) < 0) {
		dlog(IMC_MCASTD_LOG_ERR, "chmod %s %04o: %s", d->sock_path,
		     d->o.mode, strerror(errno));
		return -errno;
	}
	return 0;
}

int daemon_listen(struct daemon *d)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	mode_t old;
	int n, r;

	if (mkdir(d->o.runtime_dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		dlog(IMC_MCASTD_LOG_ERR, "runtime directory %s: %s",
		     d->o.runtime_dir, strerror(-r));
		return r;
	}
	if (d->o.socket)
		n = snprintf(d->sock_path, sizeof(d->sock_path), "%s",
			     d->o.socket);
	else
		n = snprintf(d->sock_path, sizeof(d->sock_path),
			     "%s/ibmcastd.sock", d->o.runtime_dir);
	if (n < 0 || (size_t)n >= sizeof(d->sock_path)) {
		dlog(IMC_MCASTD_LOG_ERR, "socket path too long (at most %zu "
		     "bytes)", sizeof(d->sock_path) - 1);
		return -ENAMETOOLONG;
	}
	if (someone_listens(d->sock_path)) {
		dlog(IMC_MCASTD_LOG_ERR, "another ibmcastd listens on %s",
		     d->sock_path);
		return -EADDRINUSE;
	}
	(void)unlink(d->sock_path);  /* a dead daemon's socket */
	memcpy(a.sun_path, d->sock_path, (size_t)n + 1);
	d->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
			      SOCK_CLOEXEC, 0);
	if (d->listen_fd < 0)
		return -errno;
	/* Born owner-only: nobody connects before the mode and group are
	 * right. */
	old = umask(0177);
	r = bind(d->listen_fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (r < 0 || listen(d->listen_fd, 128) < 0) {
		r = -errno;
		dlog(IMC_MCASTD_LOG_ERR, "socket %s: %s", d->sock_path,
		     strerror(-r));
		goto fail;
	}
	r = set_access(d);
	if (r < 0)
		goto fail;
	imc_fd_watch_init(&d->listen_watch, d->listen_fd, on_accept);
	r = imc_loop_watch_fd(d->loop, &d->listen_watch, IMC_EV_READ);
	if (r < 0)
		goto fail;
	return 0;
fail:
	close(d->listen_fd);
	d->listen_fd = -1;
	(void)unlink(d->sock_path);
	return r;
}

void daemon_unlisten(struct daemon *d)
{
	if (d->listen_fd < 0)
		return;
	imc_loop_unwatch_fd(d->loop, &d->listen_watch);
	close(d->listen_fd);
	d->listen_fd = -1;
	(void)unlink(d->sock_path);
}
