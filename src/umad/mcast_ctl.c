/* The control socket of `ibmcast join` (see mcast_ctl.h). */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ibmcast/gid.h"
#include "ibmcast/mcast_ctl.h"
#include "util/unix.h"

enum {
	IO_TIMEOUT_MS = 2000,        /* a stuck peer does not hold us */
	MAX_LISTING = 64 << 20,      /* bytes read from one socket */
};

int imc_ctl_run_dir(const char *opt, char *buf, size_t len)
{
	const char *env = getenv("IBMCAST_RUN_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (opt && *opt)
		n = snprintf(buf, len, "%s", opt);
	else if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (xdg && *xdg)
		n = snprintf(buf, len, "%s/ibmcast", xdg);
	else if (getuid() == 0)
		n = snprintf(buf, len, "/run/ibmcast");
	else
		n = snprintf(buf, len, "/tmp/ibmcast-%u", (unsigned)getuid());
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* ---- the listing ---- */

struct wctx {
	FILE *f;
};

static void write_group(void *arg, const struct imc_mcast_group_info *g)
{
	struct wctx *w = arg;
	const struct imc_mcmr *r = &g->rec;
	char m[IMC_GID_STRLEN];

	imc_gid_format(&r->mgid, m);
	fprintf(w->f, "group %s %u %u %u %u %u %u %u %u %u %u %u %u %u %u\n",
		m, r->mlid, g->join_state, g->wanted, g->members,
		g->joined ? 1u : 0u, r->qkey, r->pkey, r->mtu, r->rate, r->sl,
		r->tclass, r->flow_label, r->hop_limit, r->scope);
}

void imc_ctl_write_listing(FILE *f, const struct imc_umad_port *p,
			   const char *watch, const struct imc_mcast *t)
{
	struct wctx w = { f };
	char g[IMC_GID_STRLEN];

	imc_gid_format(&p->gid, g);
	fprintf(f, "%s\n", IMC_CTL_MAGIC);
	fprintf(f, "port %s %u %s %u %u %ld %s\n", p->device[0] ? p->device : "-",
		p->port, g, p->lid, p->sm_lid, (long)getpid(), watch);
	imc_mcast_foreach_group(t, write_group, &w);
	fprintf(f, "end\n");
}

static const struct timeval io_timeout = {
	IO_TIMEOUT_MS / 1000, IO_TIMEOUT_MS % 1000 * 1000
};

static void set_timeouts(int fd)
{
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &io_timeout,
			 sizeof(io_timeout));
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &io_timeout,
			 sizeof(io_timeout));
}

/* ---- server ---- */

struct imc_ctl_server {
	struct imc_loop *loop;
	int fd;
	struct imc_fd_watch watch;
	const struct imc_umad_port *port;
	char watch_name[16];
	const struct imc_mcast *t;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

static void serve(struct imc_ctl_server *s, int c)
{
	char *buf = NULL;
	size_t len = 0, off = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	imc_ctl_write_listing(f, s->port, s->watch_name, s->t);
	if (fclose(f) != 0) {
		free(buf);
		return;
	}
	set_timeouts(c);
	while (off < len) {
		ssize_t n = send(c, buf + off, len - off, MSG_NOSIGNAL);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(buf);
}

static void on_accept(struct imc_fd_watch *w, unsigned int events)
{
	struct imc_ctl_server *s = imc_container_of(w, struct imc_ctl_server,
						    watch);
	int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return;
	serve(s, c);
	close(c);
}

int imc_ctl_server_open(struct imc_loop *loop, const char *run_dir,
			const struct imc_umad_port *p, const char *watch,
			const struct imc_mcast *t, struct imc_ctl_server **out)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct imc_ctl_server *s;
	int n, r;

	if (mkdir(run_dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->loop = loop;
	s->port = p;
	s->t = t;
	snprintf(s->watch_name, sizeof(s->watch_name), "%s", watch);
	n = snprintf(s->path, sizeof(s->path), "%s/%016" PRIx64 "-%ld.sock",
		     run_dir, imc_gid_guid(&p->gid), (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(s->path)) {
		free(s);
		return -ENAMETOOLONG;
	}
	memcpy(a.sun_path, s->path, (size_t)n + 1);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		r = -errno;
		free(s);
		return r;
	}
	/* A socket of an earlier process with our pid is stale. */
	(void)unlink(s->path);
	if (bind(s->fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s->fd, 16) < 0) {
		r = -errno;
		close(s->fd);
		free(s);
		return r;
	}
	imc_fd_watch_init(&s->watch, s->fd, on_accept);
	r = imc_loop_watch_fd(loop, &s->watch, IMC_EV_READ);
	if (r < 0) {
		close(s->fd);
		unlink(s->path);
		free(s);
		return r;
	}
	*out = s;
	return 0;
}

const char *imc_ctl_server_path(const struct imc_ctl_server *s)
{
	return s->path;
}

void imc_ctl_server_close(struct imc_ctl_server *s)
{
	if (!s)
		return;
	imc_loop_unwatch_fd(s->loop, &s->watch);
	close(s->fd);
	unlink(s->path);
	free(s);
}

/* ---- client ---- */

/* Accepts a line only as the writer spells it: sscanf alone lets "group1"
 * pass for "group 1", leading spaces, signs and numbers that wrap. */
static bool canonical(const char *line, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return n > 0 && (size_t)n < sizeof(buf) && !strcmp(buf, line);
}

static int parse_group(const char *line, struct imc_ctl_group *g)
{
	char m[64];
	unsigned mlid, js, want, mem, joined, qkey, pkey, mtu, rate, sl, tc,
		fl, hop, scope;
	int n;

	if (sscanf(line, "group %63s %u %u %u %u %u %u %u %u %u %u %u %u %u %u%n",
		   m, &mlid, &js, &want, &mem, &joined, &qkey, &pkey, &mtu,
		   &rate, &sl, &tc, &fl, &hop, &scope, &n) != 15 ||
	    line[n] != '\0')
		return -EPROTO;
	memset(g, 0, sizeof(*g));
	if (imc_gid_parse(m, &g->rec.mgid) < 0 || mlid > 0xffff || js > 0xf ||
	    want > 0xf || joined > 1 || pkey > 0xffff || mtu > 0x3f ||
	    rate > 0x3f || sl > 0xf || tc > 0xff || fl > 0xfffff ||
	    hop > 0xff || scope > 0xf)
		return -EPROTO;
	{
		char cm[IMC_GID_STRLEN];

		imc_gid_format(&g->rec.mgid, cm);
		if (!canonical(line, "group %s %u %u %u %u %u %u %u %u %u %u %u %u %u %u",
			       cm, mlid, js, want, mem, joined, qkey, pkey,
			       mtu, rate, sl, tc, fl, hop, scope))
			return -EPROTO;
	}
	g->rec.mlid = (uint16_t)mlid;
	g->join_state = g->rec.join_state = (uint8_t)js;
	g->wanted = (uint8_t)want;
	g->members = mem;
	g->joined = joined;
	g->rec.qkey = qkey;
	g->rec.pkey = (uint16_t)pkey;
	g->rec.mtu = (uint8_t)mtu;
	g->rec.rate = (uint8_t)rate;
	g->rec.sl = (uint8_t)sl;
	g->rec.tclass = (uint8_t)tc;
	g->rec.flow_label = fl;
	g->rec.hop_limit = (uint8_t)hop;
	g->rec.scope = (uint8_t)scope;
	return 0;
}

static int parse_port(const char *line, struct imc_ctl_listing *l)
{
	char dev[IMC_UMAD_NAME_LEN], gid[64], watch[16];
	unsigned port, lid, sm_lid;
	long pid;
	int n;

	if (sscanf(line, "port %19s %u %63s %u %u %ld %15s%n", dev, &port, gid,
		   &lid, &sm_lid, &pid, watch, &n) != 7 || line[n] != '\0' ||
	    imc_gid_parse(gid, &l->port_gid) < 0 || lid > 0xffff ||
	    sm_lid > 0xffff)
		return -EPROTO;
	{
		char cg[IMC_GID_STRLEN];

		imc_gid_format(&l->port_gid, cg);
		if (!canonical(line, "port %s %u %s %u %u %ld %s", dev, port,
			       cg, lid, sm_lid, pid, watch))
			return -EPROTO;
	}
	memcpy(l->device, dev, sizeof(l->device));
	memcpy(l->watch, watch, sizeof(l->watch));
	l->port = port;
	l->lid = (uint16_t)lid;
	l->sm_lid = (uint16_t)sm_lid;
	l->pid = pid;
	return 0;
}

int imc_ctl_parse(const char *text, struct imc_ctl_listing *l)
{
	char *copy = strdup(text), *save = NULL, *line;
	size_t cap = 0;
	int state = 0, r = 0;   /* 0 magic, 1 port, 2 groups, 3 end */

	memset(l, 0, sizeof(*l));
	if (!copy)
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save); line && !r;
	     line = strtok_r(NULL, "\n", &save)) {
		if (state == 0) {
			r = strcmp(line, IMC_CTL_MAGIC) ? -EPROTO : 0;
			state = 1;
		} else if (state == 1) {
			r = parse_port(line, l);
			state = 2;
		} else if (state == 2 && !strcmp(line, "end")) {
			state = 3;
		} else if (state == 2) {
			if (l->n == cap) {
				size_t c = cap ? 2 * cap : 16;
				struct imc_ctl_group *p =
					realloc(l->groups, c * sizeof(*p));

				if (!p) {
					r = -ENOMEM;
					break;
				}
				l->groups = p;
				cap = c;
			}
			r = parse_group(line, &l->groups[l->n]);
			if (!r)
				l->n++;
		} else {
			r = -EPROTO;
		}
	}
	free(copy);
	if (!r && state != 3)
		r = -EPROTO;
	if (r)
		imc_ctl_listing_free(l);
	return r;
}

void imc_ctl_listing_free(struct imc_ctl_listing *l)
{
	free(l->groups);
	l->groups = NULL;
	l->n = 0;
}

int imc_ctl_fetch(const char *path, struct imc_ctl_listing *l)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd = imc_unix_connect(path, &io_timeout), r = 0;

	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *p;

			cap = cap ? 2 * cap : 8192;
			if (cap > MAX_LISTING) {
				r = -EMSGSIZE;
				break;
			}
			p = realloc(buf, cap + 1);
			if (!p) {
				r = -ENOMEM;
				break;
			}
			buf = p;
		}
		n = recv(fd, buf + len, cap - len, 0);
		if (n < 0) {
			r = errno == EAGAIN ? -ETIMEDOUT : -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!r) {
		buf[len] = '\0';
		r = imc_ctl_parse(buf, l);
	}
	free(buf);
	return r;
}
