/* One owner per port on a host (mcastd_lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ibmcast/port_lock.h"

struct imc_port_lock {
	int fd;
	char path[4096];
};

static void read_holder(int fd, char *holder, size_t len)
{
	ssize_t n;

	if (!holder || !len)
		return;
	n = pread(fd, holder, len - 1, 0);
	if (n < 0)
		n = 0;
	holder[n] = '\0';
	holder[strcspn(holder, "\n")] = '\0';
}

/* Opens and locks l->path. A holder that releases unlinks the file, so
 * a lock won on an inode that is no longer the path's is let go and
 * taken again on the new file. */
static int open_locked(struct imc_port_lock *l, char *holder, size_t len)
{
	for (int tries = 0; tries < 16; tries++) {
		struct stat a, b;
		int r;

		l->fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			     0644);
		if (l->fd < 0)
			return -errno;
		if (flock(l->fd, LOCK_EX | LOCK_NB) < 0) {
			r = errno == EWOULDBLOCK ? -EBUSY : -errno;
			read_holder(l->fd, holder, len);
			close(l->fd);
			return r;
		}
		if (fstat(l->fd, &a) == 0 && stat(l->path, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return 0;
		close(l->fd);
	}
	return -EAGAIN;
}

int imc_port_lock_take(const char *run_dir, uint64_t guid, unsigned port_num,
		       const char *who, struct imc_port_lock **out,
		       char *holder, size_t holder_len)
{
	struct imc_port_lock *l;
	char line[128];
	int n, r;

	if (holder && holder_len)
		holder[0] = '\0';
	if (mkdir(run_dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	n = snprintf(l->path, sizeof(l->path), "%s/port-%016" PRIx64 "-%u.lock",
		     run_dir, guid, port_num);
	if (n < 0 || (size_t)n >= sizeof(l->path)) {
		free(l);
		return -ENAMETOOLONG;
	}
	r = open_locked(l, holder, holder_len);
	if (r < 0) {
		free(l);
		return r;
	}
	n = snprintf(line, sizeof(line), "%ld %s\n", (long)getpid(),
		     who ? who : "?");
	if (ftruncate(l->fd, 0) < 0 ||
	    pwrite(l->fd, line, (size_t)n, 0) != n) {
		r = -errno;
		close(l->fd);
		free(l);
		return r ? r : -EIO;
	}
	*out = l;
	return 0;
}

const char *imc_port_lock_path(const struct imc_port_lock *l)
{
	return l->path;
}

void imc_port_lock_release(struct imc_port_lock *l)
{
	if (!l)
		return;
	/* Unlink while still holding the lock: a process that opened the
	 * file before us and now waits for it finds it gone by name, and
	 * a new taker creates a new file. */
	(void)unlink(l->path);
	close(l->fd);
	free(l);
}
