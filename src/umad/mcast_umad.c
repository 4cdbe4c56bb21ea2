/* The join tracker on a real port (see ibmcast/mcast_umad.h): the umad
 * transport, an SA client, the tracker, the port watchers (verbs events or
 * polling) and the membership audit (umad/mcast_audit.h), wired together.
 * No state of its own beyond what it last read of the port.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

#include "ibmcast/mcast_umad.h"
#include "umad/mcast_audit.h"
#include "umad/umad_int.h"
#include "util/config.h"

#if defined(__has_include)
#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#define IMC_HAVE_VERBS 1
#endif
#endif

#ifdef IMC_HAVE_VERBS
/* libibverbs, loaded at run time so that the library needs it neither to
 * build nor to run. */
struct verbs {
	void *dl;
	struct ibv_device **(*get_device_list)(int *n);
	void (*free_device_list)(struct ibv_device **l);
	const char *(*get_device_name)(struct ibv_device *d);
	struct ibv_context *(*open_device)(struct ibv_device *d);
	int (*close_device)(struct ibv_context *c);
	int (*get_async_event)(struct ibv_context *c, struct ibv_async_event *e);
	void (*ack_async_event)(struct ibv_async_event *e);
	struct ibv_context *ctx;
};
#endif

struct imc_mcast_umad {
	struct imc_loop *loop;
	struct imc_umad *u;
	struct imc_sa_client *sa;
	struct imc_mcast *t;
	struct imc_umad_port port;     /* as last read */
	bool fixed_sa_lid;
	enum imc_mcast_umad_watch watch;
	imc_time_t poll_interval;
	struct imc_timer poll_timer;
	imc_mcast_umad_port_cb port_cb;
	void *port_arg;
	struct imc_mcast_umad_stats st;
	struct imc_mcast_audit *audit;
#ifdef IMC_HAVE_VERBS
	struct verbs v;
	struct imc_fd_watch vwatch;
#endif
};

const char *imc_mcast_umad_watch_str(enum imc_mcast_umad_watch w)
{
	switch (w) {
	case IMC_MCAST_UMAD_WATCH_AUTO: return "auto";
	case IMC_MCAST_UMAD_WATCH_VERBS: return "verbs";
	case IMC_MCAST_UMAD_WATCH_POLL: return "poll";
	case IMC_MCAST_UMAD_WATCH_NONE: return "none";
	}
	return "unknown";
}

const char *imc_mcast_umad_cause_str(enum imc_mcast_umad_cause c)
{
	switch (c) {
	case IMC_MCAST_UMAD_CAUSE_VERBS: return "verbs";
	case IMC_MCAST_UMAD_CAUSE_POLL: return "poll";
	case IMC_MCAST_UMAD_CAUSE_AUDIT: return "audit";
	}
	return "unknown";
}

void imc_mcast_umad_config_init(struct imc_mcast_umad_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	imc_sa_client_config_init(&cfg->sa);
	imc_mcast_config_init(&cfg->mcast);
	cfg->watch = IMC_MCAST_UMAD_WATCH_AUTO;
	cfg->poll_interval = IMC_NSEC_PER_SEC;
	cfg->audit_interval = 10 * IMC_NSEC_PER_SEC;
	cfg->audit_window = 4;
}

/* ---- port events ---- */

static void tell(struct imc_mcast_umad *mu, enum imc_mcast_port_event ev,
		 enum imc_mcast_umad_cause cause)
{
	mu->st.port_events++;
	if (mu->audit)
		imc_mcast_audit_set_active(mu->audit,
					   mu->port.state == IMC_UMAD_PORT_ACTIVE);
	imc_mcast_port_event(mu->t, ev);
	if (mu->port_cb)
		mu->port_cb(mu->port_arg, ev, cause);
}

/* Reads the port again; returns 0 or -ENODEV. */
static int reread(struct imc_mcast_umad *mu, struct imc_umad_port *p)
{
	return imc_umad_port_read(mu->port.device, mu->port.port, p);
}

/* SA requests go to the SM's LID (IBA 15.4.1) unless a LID was given. */
static void follow_sm(struct imc_mcast_umad *mu, uint16_t sm_lid)
{
	if (!mu->fixed_sa_lid && sm_lid)
		imc_umad_set_sa_lid(mu->u, sm_lid);
}

static void on_poll(struct imc_timer *tm)
{
	struct imc_mcast_umad *mu =
		imc_container_of(tm, struct imc_mcast_umad, poll_timer);
	struct imc_umad_port now, was = mu->port;
	bool up_was = was.state == IMC_UMAD_PORT_ACTIVE;
	bool up_now;

	mu->st.polls++;
	(void)imc_timer_arm_in(mu->loop, &mu->poll_timer, mu->poll_interval);
	if (reread(mu, &now) < 0)
		return;
	mu->port = now;
	up_now = now.state == IMC_UMAD_PORT_ACTIVE;
	follow_sm(mu, now.sm_lid);
	if (up_was && !up_now) {
		tell(mu, IMC_MCAST_PORT_DOWN, IMC_MCAST_UMAD_CAUSE_POLL);
		return;
	}
	if (!up_now)
		return;
	if (!up_was) {
		/* Coming up re-joins everything: LID and SM changes are
		 * part of it. */
		tell(mu, IMC_MCAST_PORT_ACTIVE, IMC_MCAST_UMAD_CAUSE_POLL);
		return;
	}
	if (now.lid != was.lid)
		tell(mu, IMC_MCAST_PORT_LID_CHANGE, IMC_MCAST_UMAD_CAUSE_POLL);
	if (now.sm_lid != was.sm_lid)
		tell(mu, IMC_MCAST_PORT_SM_CHANGE, IMC_MCAST_UMAD_CAUSE_POLL);
}

#ifdef IMC_HAVE_VERBS

static void verbs_close(struct imc_mcast_umad *mu)
{
	struct verbs *v = &mu->v;

	imc_loop_unwatch_fd(mu->loop, &mu->vwatch);
	if (v->ctx)
		v->close_device(v->ctx);
	v->ctx = NULL;
	if (v->dl)
		dlclose(v->dl);
	v->dl = NULL;
}

static int verbs_load(struct verbs *v)
{
	v->dl = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!v->dl)
		return -ENODEV;
	*(void **)&v->get_device_list = dlsym(v->dl, "ibv_get_device_list");
	*(void **)&v->free_device_list = dlsym(v->dl, "ibv_free_device_list");
	*(void **)&v->get_device_name = dlsym(v->dl, "ibv_get_device_name");
	*(void **)&v->open_device = dlsym(v->dl, "ibv_open_device");
	*(void **)&v->close_device = dlsym(v->dl, "ibv_close_device");
	*(void **)&v->get_async_event = dlsym(v->dl, "ibv_get_async_event");
	*(void **)&v->ack_async_event = dlsym(v->dl, "ibv_ack_async_event");
	if (!v->get_device_list || !v->free_device_list ||
	    !v->get_device_name || !v->open_device || !v->close_device ||
	    !v->get_async_event || !v->ack_async_event)
		return -ENODEV;
	return 0;
}

static void on_verbs(struct imc_fd_watch *w, unsigned int events)
{
	struct imc_mcast_umad *mu =
		imc_container_of(w, struct imc_mcast_umad, vwatch);
	struct ibv_async_event e;

	/* The fd is non-blocking: read what is there. */
	while (mu->v.ctx && mu->v.get_async_event(mu->v.ctx, &e) == 0) {
		enum ibv_event_type type = e.event_type;
		int port = e.element.port_num;
		struct imc_umad_port now;
		int ev = -1;

		mu->st.verbs_events++;
		mu->v.ack_async_event(&e);
		switch (type) {
		case IBV_EVENT_PORT_ACTIVE: ev = IMC_MCAST_PORT_ACTIVE; break;
		case IBV_EVENT_PORT_ERR: ev = IMC_MCAST_PORT_DOWN; break;
		case IBV_EVENT_LID_CHANGE: ev = IMC_MCAST_PORT_LID_CHANGE; break;
		case IBV_EVENT_SM_CHANGE: ev = IMC_MCAST_PORT_SM_CHANGE; break;
		case IBV_EVENT_CLIENT_REREGISTER:
			ev = IMC_MCAST_PORT_REREGISTER;
			break;
		case IBV_EVENT_PKEY_CHANGE: ev = IMC_MCAST_PORT_PKEY_CHANGE; break;
		default: break;
		}
		if (ev < 0 || port != (int)mu->port.port)
			continue;
		if (reread(mu, &now) == 0) {
			mu->port = now;
			follow_sm(mu, now.sm_lid);
		}
		tell(mu, (enum imc_mcast_port_event)ev,
		     IMC_MCAST_UMAD_CAUSE_VERBS);
	}
}

/* Opens the verbs device named as the umad CA and watches its async
 * events. umad2sim has no verbs device: not even looked for there. */
static int verbs_open(struct imc_mcast_umad *mu)
{
	struct verbs *v = &mu->v;
	struct ibv_device **list;
	int n = 0, r = -ENODEV, fl;

	if (dlsym(RTLD_DEFAULT, "sim_client_init"))
		return -ENODEV;
	if (verbs_load(v) < 0)
		goto fail;
	list = v->get_device_list(&n);
	if (!list)
		goto fail;
	for (int i = 0; i < n; i++) {
		const char *name = v->get_device_name(list[i]);

		if (name && !strcmp(name, mu->port.device)) {
			v->ctx = v->open_device(list[i]);
			break;
		}
	}
	v->free_device_list(list);
	if (!v->ctx)
		goto fail;
	fl = fcntl(v->ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(v->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		r = -errno;
		goto fail;
	}
	imc_fd_watch_init(&mu->vwatch, v->ctx->async_fd, on_verbs);
	r = imc_loop_watch_fd(mu->loop, &mu->vwatch, IMC_EV_READ);
	if (r < 0)
		goto fail;
	return 0;
fail:
	verbs_close(mu);
	return r;
}

#else

static int verbs_open(struct imc_mcast_umad *mu)
{
	return -ENODEV;
}

static void verbs_close(struct imc_mcast_umad *mu)
{
}

#endif

/* ---- the audit ---- */

static void on_lost(void *arg, const struct imc_gid *mgid)
{
	struct imc_mcast_umad *mu = arg;

	/* The SA lost a membership the tracker holds: whatever the SA
	 * lost, a reregister re-joins all of it (IBA 14.4.11). */
	mu->st.audit_reregisters++;
	tell(mu, IMC_MCAST_PORT_REREGISTER, IMC_MCAST_UMAD_CAUSE_AUDIT);
}

void imc_mcast_umad_audit(struct imc_mcast_umad *mu)
{
	if (mu->audit)
		imc_mcast_audit_run(mu->audit);
}

/* ---- open / close ---- */

int imc_mcast_umad_open(struct imc_loop *loop,
			const struct imc_mcast_umad_config *cfg,
			const struct imc_mcast_ops *ops,
			struct imc_mcast_umad **out)
{
	struct imc_umad_config ucfg = { 0 };
	struct imc_mcast_config tcfg;
	struct imc_sa_transport tr;
	struct imc_mcast_umad *mu;
	int r;

	struct imc_mcast_audit_config acfg;
	struct imc_mcast_umad_config def;

	cfg = IMC_CONFIG_OR_DEFAULT(cfg, def, imc_mcast_umad_config_init);
	if (!loop || !out || !cfg->audit_window ||
	    cfg->watch > IMC_MCAST_UMAD_WATCH_NONE)
		return -EINVAL;
	mu = calloc(1, sizeof(*mu));
	if (!mu)
		return -ENOMEM;
	mu->loop = loop;
	mu->poll_interval = cfg->poll_interval;
	mu->port_cb = cfg->port_cb;
	mu->port_arg = cfg->port_arg;
	imc_timer_init(&mu->poll_timer, on_poll);

	ucfg.device = cfg->device;
	ucfg.port = cfg->port;
	ucfg.mode = IMC_UMAD_CLIENT;
	r = imc_umad_open(loop, &ucfg, &mu->u);
	if (r < 0)
		goto fail;
	mu->port = *imc_umad_port(mu->u);
	if (cfg->sa_lid) {
		mu->fixed_sa_lid = true;
		imc_umad_set_sa_lid(mu->u, cfg->sa_lid);
	}
	imc_umad_sa_transport(mu->u, &tr);
	r = imc_sa_client_create(loop, &tr, &cfg->sa, &mu->sa);
	if (r < 0)
		goto fail;
	imc_umad_attach(mu->u, mu->sa);
	tcfg = cfg->mcast;
	tcfg.port_gid = mu->port.gid;
	r = imc_mcast_create(loop, mu->sa, &tcfg, ops, &mu->t);
	if (r < 0)
		goto fail;
	if (mu->port.state != IMC_UMAD_PORT_ACTIVE)
		imc_mcast_port_event(mu->t, IMC_MCAST_PORT_DOWN);
	memset(&acfg, 0, sizeof(acfg));
	acfg.interval = cfg->audit_interval;
	acfg.window = cfg->audit_window;
	acfg.port_gid = mu->port.gid;
	acfg.lost = on_lost;
	acfg.arg = mu;
	r = imc_mcast_audit_create(loop, mu->sa, mu->t, &acfg, &mu->audit);
	if (r < 0)
		goto fail;
	imc_mcast_audit_set_active(mu->audit,
				   mu->port.state == IMC_UMAD_PORT_ACTIVE);

	mu->watch = cfg->watch;
	if (mu->watch == IMC_MCAST_UMAD_WATCH_AUTO ||
	    mu->watch == IMC_MCAST_UMAD_WATCH_VERBS) {
		r = verbs_open(mu);
		if (r == 0)
			mu->watch = IMC_MCAST_UMAD_WATCH_VERBS;
		else if (mu->watch == IMC_MCAST_UMAD_WATCH_VERBS)
			goto fail;
		else
			mu->watch = IMC_MCAST_UMAD_WATCH_POLL;
	}
	if (mu->watch == IMC_MCAST_UMAD_WATCH_POLL && !mu->poll_interval)
		mu->watch = IMC_MCAST_UMAD_WATCH_NONE;
	r = 0;
	if (mu->watch == IMC_MCAST_UMAD_WATCH_POLL)
		r = imc_timer_arm_in(loop, &mu->poll_timer, mu->poll_interval);
	if (r < 0)
		goto fail;
	*out = mu;
	return 0;
fail:
	imc_mcast_umad_close(mu);
	return r;
}

void imc_mcast_umad_close(struct imc_mcast_umad *mu)
{
	if (!mu)
		return;
	imc_timer_cancel(mu->loop, &mu->poll_timer);
	imc_mcast_audit_destroy(mu->audit);
	verbs_close(mu);
	imc_mcast_destroy(mu->t);
	if (mu->u)
		imc_umad_attach(mu->u, NULL);
	imc_sa_client_destroy(mu->sa);
	imc_umad_close(mu->u);
	free(mu);
}

/* ---- accessors ---- */

struct imc_mcast *imc_mcast_umad_tracker(struct imc_mcast_umad *mu)
{
	return mu->t;
}

struct imc_umad *imc_mcast_umad_umad(struct imc_mcast_umad *mu)
{
	return mu->u;
}

struct imc_sa_client *imc_mcast_umad_sa(struct imc_mcast_umad *mu)
{
	return mu->sa;
}

const struct imc_umad_port *imc_mcast_umad_port(const struct imc_mcast_umad *mu)
{
	return &mu->port;
}

enum imc_mcast_umad_watch imc_mcast_umad_watching(const struct imc_mcast_umad *mu)
{
	return mu->watch;
}

void imc_mcast_umad_get_stats(const struct imc_mcast_umad *mu,
			      struct imc_mcast_umad_stats *st)
{
	struct imc_mcast_audit_stats as;

	*st = mu->st;
	if (!mu->audit)
		return;
	imc_mcast_audit_get_stats(mu->audit, &as);
	st->audit_rounds = as.rounds;
	st->audit_gets = as.gets;
	st->audit_lost = as.lost;
	st->audit_errors = as.errors;
}
