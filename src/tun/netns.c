/* Named network namespaces, as iproute2 lays them out (see ibmcast/tun.h).
 *
 * iproute2 (ip netns add) names a namespace by bind-mounting its nsfs file
 * on /run/netns/NAME, and makes /run/netns a shared mount first so that an
 * unmount in one mount namespace reaches the copies other mount namespaces
 * hold (ip netns exec runs commands in a mount namespace of their own).
 * Doing the same here keeps ibmcast's namespaces usable with `ip netns
 * exec NAME` and `ip -n NAME`, and `ip netns list` shows them.
 *
 * Leftovers: a killed process cannot unmount its namespaces. While a
 * namespace made here lives, its creator holds an flock on
 * /run/ibmcast/netns/NAME.lock. The kernel drops the lock when the holder
 * dies, however it dies, and in whatever PID namespace: a lock that can be
 * taken marks a namespace nobody owns any more (imc_netns_reap). The lock
 * file is made under a temporary name, locked, then linked to its final
 * name, so a reaper never sees an unlocked lock of a live creator.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tun/tun_int.h"
#include "util/vec.h"

#define NETNS_DIR "/run/netns"
#define LOCK_PARENT "/run/ibmcast"
#define LOCK_DIR "/run/ibmcast/netns"
#define SELF_NS "/proc/thread-self/ns/net"

struct imc_netns {
	int fd;          /* the namespace (nsfs), for setns */
	int lockfd;      /* held flock while we own it; -1 when opened */
	char name[IMC_NETNS_NAME_MAX];
};

static bool name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n >= IMC_NETNS_NAME_MAX || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return false;
	}
	return true;
}

static void path_of(char *buf, size_t len, const char *dir, const char *name,
		    const char *suffix)
{
	snprintf(buf, len, "%s/%s%s", dir, name, suffix);
}

static int mkdir_one(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* /run/netns as a shared mount point (see the top of the file). */
static int share_netns_dir(void)
{
	bool bound = false;

	while (mount("", NETNS_DIR, "none", MS_SHARED | MS_REC, NULL) < 0) {
		/* EINVAL: not a mount point yet; make it one, once. */
		if (errno != EINVAL || bound)
			return -errno;
		if (mount(NETNS_DIR, NETNS_DIR, "none", MS_BIND | MS_REC,
			  NULL) < 0)
			return -errno;
		bound = true;
	}
	return 0;
}

/* Takes the lock of name: created under a temporary name, locked, then
 * linked to NAME.lock. Returns the fd holding the lock, -EEXIST when the
 * lock exists (a live namespace of that name, or a leftover to reap). */
static int lock_take(const char *name)
{
	char tmp[256], final[256];
	int fd, rc;

	rc = mkdir_one(LOCK_PARENT);
	if (!rc)
		rc = mkdir_one(LOCK_DIR);
	if (rc)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.tmp", LOCK_DIR, name,
		 (long)getpid());
	path_of(final, sizeof(final), LOCK_DIR, name, ".lock");
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = -errno;
		goto fail;
	}
	if (link(tmp, final) < 0) {
		rc = -errno;
		goto fail;
	}
	unlink(tmp);
	return fd;
fail:
	unlink(tmp);
	close(fd);
	return rc;
}

static void lock_drop(const char *name, int fd)
{
	char final[256];

	path_of(final, sizeof(final), LOCK_DIR, name, ".lock");
	unlink(final);
	close(fd);
}

/* Unmounts and unlinks /run/netns/NAME; a name that is not there is not
 * an error. */
static int unname(const char *name)
{
	char path[256];

	path_of(path, sizeof(path), NETNS_DIR, name, "");
	if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL &&
	    errno != ENOENT)
		return -errno;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int loopback_up(void)
{
	struct ifreq ifr;
	int s, rc = 0;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		rc = -errno;
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
			rc = -errno;
	}
	close(s);
	return rc;
}

int tunl_netns_enter(const struct imc_netns *ns, int *saved)
{
	int fd;

	*saved = -1;
	if (!ns)
		return 0;
	fd = open(SELF_NS, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(ns->fd, CLONE_NEWNET) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	*saved = fd;
	return 0;
}

int tunl_netns_leave(int saved)
{
	int rc = 0;

	if (saved < 0)
		return 0;
	if (setns(saved, CLONE_NEWNET) < 0)
		rc = -errno;
	close(saved);
	return rc;
}

/* In a new namespace: names it at path, brings lo up, comes back. */
static int make_ns(const char *path)
{
	int saved, rc = 0, rc2;

	saved = open(SELF_NS, O_RDONLY | O_CLOEXEC);
	if (saved < 0)
		return -errno;
	if (unshare(CLONE_NEWNET) < 0) {
		rc = -errno;
		close(saved);
		return rc;
	}
	if (mount(SELF_NS, path, "none", MS_BIND, NULL) < 0)
		rc = -errno;
	else
		rc = loopback_up();
	rc2 = tunl_netns_leave(saved);
	return rc ? rc : rc2;
}

/* A handle for a valid name that holds neither the namespace nor its
 * lock yet. */
static int ns_alloc(const char *name, struct imc_netns **out)
{
	struct imc_netns *ns;

	if (!name_ok(name))
		return -EINVAL;
	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	strcpy(ns->name, name);
	ns->fd = -1;
	ns->lockfd = -1;
	*out = ns;
	return 0;
}

int imc_netns_create(const char *name, struct imc_netns **out)
{
	struct imc_netns *ns;
	char path[256];
	int fd, rc;

	*out = NULL;
	rc = ns_alloc(name, &ns);
	if (rc)
		return rc;
	rc = mkdir_one(NETNS_DIR);
	if (rc)
		goto fail;
	rc = lock_take(name);
	if (rc < 0)
		goto fail;
	ns->lockfd = rc;
	rc = share_netns_dir();
	if (rc)
		goto fail_lock;
	path_of(path, sizeof(path), NETNS_DIR, name, "");
	fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto fail_lock;
	}
	close(fd);
	rc = make_ns(path);
	if (!rc) {
		ns->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (ns->fd < 0)
			rc = -errno;
	}
	if (rc) {
		unname(name);
		goto fail_lock;
	}
	*out = ns;
	return 0;
fail_lock:
	lock_drop(name, ns->lockfd);
fail:
	free(ns);
	return rc;
}

int imc_netns_open(const char *name, struct imc_netns **out)
{
	struct imc_netns *ns;
	char path[256];
	int rc;

	*out = NULL;
	rc = ns_alloc(name, &ns);
	if (rc)
		return rc;
	path_of(path, sizeof(path), NETNS_DIR, name, "");
	ns->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ns->fd < 0) {
		rc = -errno;
		free(ns);
		return rc;
	}
	*out = ns;
	return 0;
}

void imc_netns_destroy(struct imc_netns *ns)
{
	if (!ns)
		return;
	close(ns->fd);
	if (ns->lockfd >= 0) {
		unname(ns->name);
		lock_drop(ns->name, ns->lockfd);
	}
	free(ns);
}

const char *imc_netns_name(const struct imc_netns *ns)
{
	return ns->name;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the lock files under LOCK_DIR that start with prefix, sorted
 * (callbacks then come in name order, not directory order). */
static int list_locks(const char *prefix, char ***out, size_t *n)
{
	size_t plen = strlen(prefix), cap = 0;
	char **v = NULL;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	*n = 0;
	d = opendir(LOCK_DIR);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *name;

		if (de->d_name[0] == '.' || len <= 5 ||
		    strcmp(de->d_name + len - 5, ".lock") ||
		    strncmp(de->d_name, prefix, plen))
			continue;
		if (IMC_VEC_RESERVE(&v, &cap, *n + 1))
			goto nomem;
		name = strndup(de->d_name, len - 5);
		if (!name)
			goto nomem;
		v[(*n)++] = name;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	*out = v;
	return 0;
nomem:
	closedir(d);
	for (size_t i = 0; i < *n; i++)
		free(v[i]);
	free(v);
	*n = 0;
	return -ENOMEM;
}

int imc_netns_reap(const char *prefix,
		   void (*removed)(const char *name, void *ctx), void *ctx)
{
	char **names;
	size_t n;
	int rc, count = 0;

	rc = list_locks(prefix ? prefix : "", &names, &n);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		char path[256];
		int fd;

		if (rc || !name_ok(names[i]))
			goto next;
		path_of(path, sizeof(path), LOCK_DIR, names[i], ".lock");
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			goto next;
		/* Held: its creator lives. */
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			close(fd);
			goto next;
		}
		rc = unname(names[i]);
		if (!rc) {
			lock_drop(names[i], fd);
			count++;
			if (removed)
				removed(names[i], ctx);
		} else {
			close(fd);
		}
next:
		free(names[i]);
	}
	free(names);
	return rc ? rc : count;
}
