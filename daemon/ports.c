/* ibmcastd's ports: one join tracker per local port over libibumad
 * (mcast_umad.h), each held under the port's lock (mcastd_lock.h) and
 * served by the server core. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/umad.h>

#include "ibmcast/gid.h"
#include "ibmcastd.h"

static imc_time_t secs_ns(double v)
{
	return (imc_time_t)llround(v * 1e9);
}

static void on_port(void *arg, enum imc_mcast_port_event ev,
		    enum imc_mcast_umad_cause cause)
{
	static const char *const names[] = {
		[IMC_MCAST_PORT_ACTIVE] = "active",
		[IMC_MCAST_PORT_DOWN] = "down",
		[IMC_MCAST_PORT_LID_CHANGE] = "lid_change",
		[IMC_MCAST_PORT_SM_CHANGE] = "sm_change",
		[IMC_MCAST_PORT_REREGISTER] = "reregister",
		[IMC_MCAST_PORT_PKEY_CHANGE] = "pkey_change",
	};
	struct daemon_port *p = arg;

	dlog(IMC_MCASTD_LOG_INFO, "port %s:%u event=%s cause=%s",
	     p->desc.device, p->desc.port_num,
	     (unsigned)ev < IMC_ARRAY_SIZE(names) && names[ev] ? names[ev] : "?",
	     imc_mcast_umad_cause_str(cause));
}

/* Every active port of every CA libibumad knows (IBA 14.2.5.6 PortState
 * 4 = Active), when no --port was given. */
static void find_ports(struct daemon_opts *o)
{
	char cas[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
	int n = umad_get_cas_names(cas, UMAD_MAX_DEVICES);

	for (int i = 0; i < n && o->n_ports < IBMCASTD_MAX_PORTS; i++) {
		umad_ca_t ca;

		if (umad_get_ca(cas[i], &ca) < 0)
			continue;
		for (int p = 1; p <= ca.numports && p < UMAD_CA_MAX_PORTS &&
		     o->n_ports < IBMCASTD_MAX_PORTS; p++) {
			struct port_spec *s = &o->ports[o->n_ports];

			if (!ca.ports[p] || ca.ports[p]->state != 4)
				continue;
			if (strlen(cas[i]) >= sizeof(s->device))
				continue;
			memcpy(s->device, cas[i], strlen(cas[i]) + 1);
			s->port = (unsigned)p;
			o->n_ports++;
		}
		umad_release_ca(&ca);
	}
}

static int open_port(struct daemon *d, const struct port_spec *s,
		     struct daemon_port *p)
{
	const char *dev = s->device[0] ? s->device : "the default CA";
	struct imc_mcast_umad_config cfg;
	const struct imc_umad_port *up;
	char holder[128], g[IMC_GID_STRLEN];
	int r;

	imc_mcast_umad_config_init(&cfg);
	cfg.device = s->device[0] ? s->device : NULL;
	cfg.port = s->port;
	cfg.sa.timeout = d->o.timeout;
	if (cfg.sa.max_timeout < cfg.sa.timeout)
		cfg.sa.max_timeout = cfg.sa.timeout;
	cfg.sa.retries = d->o.retries;
	cfg.watch = d->o.watch;
	cfg.poll_interval = secs_ns(d->o.poll);
	cfg.audit_interval = secs_ns(d->o.audit);
	cfg.port_cb = on_port;
	cfg.port_arg = p;
	p->d = d;
	r = imc_mcast_umad_open(d->loop, &cfg, NULL, &p->mu);
	if (r < 0) {
		dlog(IMC_MCASTD_LOG_ERR, "cannot open %s port %u: %s", dev,
		     s->port, strerror(-r));
		return r;
	}
	up = imc_mcast_umad_port(p->mu);
	imc_gid_format(&up->gid, g);
	/* Before any MAD: a standalone `ibmcast join` on the port would
	 * delete our members' bits with its own Deletes, and we its. */
	r = imc_port_lock_take(d->o.runtime_dir, imc_gid_guid(&up->gid),
			       up->port, "ibmcastd", &p->lock, holder,
			       sizeof(holder));
	if (r < 0) {
		if (r == -EBUSY)
			dlog(IMC_MCASTD_LOG_ERR, "port %s:%u (%s) is held by "
			     "process %s: stop it first (one owner per port)",
			     up->device, up->port, g, holder[0] ? holder : "?");
		else
			dlog(IMC_MCASTD_LOG_ERR, "lock of port %s:%u in %s: %s",
			     up->device, up->port, d->o.runtime_dir,
			     strerror(-r));
		return r;
	}
	p->desc.gid = up->gid;
	snprintf(p->desc.device, sizeof(p->desc.device), "%s", up->device);
	p->desc.port_num = (uint8_t)up->port;
	r = imc_mcastd_server_add_port(d->srv, &p->desc,
				       imc_mcast_umad_tracker(p->mu),
				       imc_mcast_umad_sa(p->mu));
	if (r < 0) {
		dlog(IMC_MCASTD_LOG_ERR, "serving port %s:%u: %s", up->device,
		     up->port, strerror(-r));
		return r;
	}
	dlog(IMC_MCASTD_LOG_INFO, "port %s:%u gid=%s lid=%u sm_lid=%u watch=%s",
	     up->device, up->port, g, up->lid, up->sm_lid,
	     imc_mcast_umad_watch_str(imc_mcast_umad_watching(p->mu)));
	return 0;
}

static bool opened(const struct daemon *d, const struct port_spec *s)
{
	for (size_t i = 0; i < d->n_ports; i++)
		if (!strcmp(d->ports[i].desc.device, s->device) &&
		    d->ports[i].desc.port_num == s->port)
			return true;
	return false;
}

/* Without --port: libibumad's default port first, then every other
 * active port. (umad2sim answers the enumeration correctly only once a
 * port is open.) */
int daemon_open_ports(struct daemon *d)
{
	struct daemon_opts all;
	bool every = !d->o.n_ports;
	int r;

	if (every)
		d->o.n_ports = 1;  /* device "", port 0: the default */
	for (size_t i = 0; i < d->o.n_ports; i++) {
		r = open_port(d, &d->o.ports[i], &d->ports[i]);
		d->n_ports = i + 1;
		if (r < 0)
			return r;
	}
	if (!every)
		return 0;
	memset(&all, 0, sizeof(all));
	find_ports(&all);
	for (size_t i = 0; i < all.n_ports; i++) {
		if (!all.ports[i].device[0] || opened(d, &all.ports[i]))
			continue;
		if (d->n_ports == IBMCASTD_MAX_PORTS) {
			dlog(IMC_MCASTD_LOG_WARN, "more than %d active ports: "
			     "serving the first %d", IBMCASTD_MAX_PORTS,
			     IBMCASTD_MAX_PORTS);
			break;
		}
		r = open_port(d, &all.ports[i], &d->ports[d->n_ports]);
		d->n_ports++;
		if (r < 0)
			return r;
	}
	return 0;
}

/* After the server is gone: the trackers hold no member by then (the
 * shutdown left them) or the daemon is exiting on an error. */
void daemon_close_ports(struct daemon *d)
{
	for (size_t i = 0; i < d->n_ports; i++) {
		imc_mcast_umad_close(d->ports[i].mu);
		imc_port_lock_release(d->ports[i].lock);
		memset(&d->ports[i], 0, sizeof(d->ports[i]));
	}
	d->n_ports = 0;
}
