/* `ibmcast mcast show` through ibmcastd (mcastd_show.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/json.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcastd.h"
#include "mcastd_show.h"

enum { SHOW_TIMEOUT_MS = 3000 };

int imc_mcastd_socket_path(const char *opt, const char *run_dir, char *buf,
			   size_t len)
{
	const char *env = getenv("IBMCAST_SOCKET");
	const char *dir = getenv("IBMCAST_RUN_DIR");
	int n;

	if (opt && *opt)
		n = snprintf(buf, len, "%s", opt);
	else if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if ((run_dir && *run_dir) || (dir && *dir))
		n = snprintf(buf, len, "%s/ibmcastd.sock",
			     run_dir && *run_dir ? run_dir : dir);
	else
		n = snprintf(buf, len, "%s", IMC_MCASTD_SOCKET_DEFAULT);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

struct ask {
	struct imc_loop *loop;
	struct imc_mcastd *c;
	struct imc_timer timeout;
	FILE *f;
	const char *path;
	uint64_t guid;
	bool json;
	int status;                 /* 1 done, or a negative errno */
};

static bool port_wanted(const struct ask *a, const struct imc_gid *gid)
{
	return !a->guid || imc_gid_guid(gid) == a->guid;
}

static bool client_wanted(const struct ask *a,
			  const struct imc_mcastd_show_client *c)
{
	if (c->self)
		return false;
	if (!a->guid || !c->n_members)
		return true;
	for (size_t i = 0; i < c->n_members; i++)
		if (port_wanted(a, &c->members[i].port_gid))
			return true;
	return false;
}

static void text_client(const struct ask *a,
			const struct imc_mcastd_show_client *c)
{
	char g[IMC_GID_STRLEN], p[IMC_GID_STRLEN];

	fprintf(a->f, "  client pid=%u uid=%u gid=%u comm=%s members=%zu\n",
		c->pid, c->uid, c->gid, c->comm, c->n_members);
	for (size_t i = 0; i < c->n_members; i++) {
		const struct imc_mcastd_show_member *m = &c->members[i];

		if (!port_wanted(a, &m->port_gid))
			continue;
		imc_gid_format(&m->mgid, g);
		imc_gid_format(&m->port_gid, p);
		fprintf(a->f, "    member mgid=%s port_gid=%s join_state=0x%x "
			"state=%s status=%d\n", g, p, m->join_state,
			imc_mcast_state_str(m->state), m->status);
	}
}

static void write_text(const struct ask *a, const struct imc_mcastd_show *s)
{
	char g[IMC_GID_STRLEN];

	fprintf(a->f, "daemon socket=%s ports=%zu clients=%zu groups=%zu\n",
		a->path, s->n_ports, s->n_clients ? s->n_clients - 1 : 0,
		s->n_groups);
	for (size_t i = 0; i < s->n_ports; i++) {
		const struct imc_mcastd_show_port *p = &s->ports[i];

		if (!port_wanted(a, &p->gid))
			continue;
		imc_gid_format(&p->gid, g);
		fprintf(a->f, "port device=%s port=%u gid=%s\n", p->device,
			p->port_num, g);
		for (size_t j = 0; j < s->n_groups; j++) {
			const struct imc_mcastd_show_group *x = &s->groups[j];

			if (!imc_gid_equal(&x->port_gid, &p->gid))
				continue;
			imc_gid_format(&x->mgid, g);
			fprintf(a->f, "  group %s mlid=0x%04x join_state=0x%x "
				"wanted=0x%x members=%u %s\n", g, x->mlid,
				x->join_state, x->wanted, x->members,
				x->joined ? "joined" : "pending");
		}
	}
	for (size_t i = 0; i < s->n_clients; i++)
		if (client_wanted(a, &s->clients[i]))
			text_client(a, &s->clients[i]);
}

static void json_client(const struct ask *a, struct imc_json *j,
			const struct imc_mcastd_show_client *c)
{
	imc_json_object_begin(j);
	imc_json_kv_u64(j, "pid", c->pid);
	imc_json_kv_u64(j, "uid", c->uid);
	imc_json_kv_u64(j, "gid", c->gid);
	imc_json_kv_string(j, "comm", c->comm);
	imc_json_key(j, "members");
	imc_json_array_begin(j);
	for (size_t i = 0; i < c->n_members; i++) {
		const struct imc_mcastd_show_member *m = &c->members[i];

		if (!port_wanted(a, &m->port_gid))
			continue;
		imc_json_object_begin(j);
		imc_json_kv_gid(j, "mgid", &m->mgid);
		imc_json_kv_gid(j, "port_gid", &m->port_gid);
		imc_json_kv_u64(j, "join_state", m->join_state);
		imc_json_kv_string(j, "state", imc_mcast_state_str(m->state));
		imc_json_kv_i64(j, "status", m->status);
		imc_json_object_end(j);
	}
	imc_json_array_end(j);
	imc_json_object_end(j);
}

static void write_json(const struct ask *a, const struct imc_mcastd_show *s)
{
	struct imc_json j;

	imc_json_init(&j, a->f, 0, 0);
	imc_json_object_begin(&j);
	imc_json_kv_string(&j, "socket", a->path);
	imc_json_key(&j, "ports");
	imc_json_array_begin(&j);
	for (size_t i = 0; i < s->n_ports; i++) {
		if (!port_wanted(a, &s->ports[i].gid))
			continue;
		imc_json_object_begin(&j);
		imc_json_kv_string(&j, "device", s->ports[i].device);
		imc_json_kv_u64(&j, "port", s->ports[i].port_num);
		imc_json_kv_gid(&j, "gid", &s->ports[i].gid);
		imc_json_object_end(&j);
	}
	imc_json_array_end(&j);
	imc_json_key(&j, "groups");
	imc_json_array_begin(&j);
	for (size_t k = 0; k < s->n_groups; k++) {
		const struct imc_mcastd_show_group *x = &s->groups[k];

		if (!port_wanted(a, &x->port_gid))
			continue;
		imc_json_object_begin(&j);
		imc_json_kv_gid(&j, "port_gid", &x->port_gid);
		imc_json_kv_gid(&j, "mgid", &x->mgid);
		imc_json_kv_u64(&j, "mlid", x->mlid);
		imc_json_kv_u64(&j, "join_state", x->join_state);
		imc_json_kv_u64(&j, "wanted", x->wanted);
		imc_json_kv_u64(&j, "members", x->members);
		imc_json_kv_bool(&j, "is_joined", x->joined);
		imc_json_object_end(&j);
	}
	imc_json_array_end(&j);
	imc_json_key(&j, "clients");
	imc_json_array_begin(&j);
	for (size_t i = 0; i < s->n_clients; i++)
		if (client_wanted(a, &s->clients[i]))
			json_client(a, &j, &s->clients[i]);
	imc_json_array_end(&j);
	imc_json_object_end(&j);
	/* The caller reads the stream's error; a writer's error shows as
	 * an unbalanced document only in a bug, which the tests catch. */
	(void)imc_json_finish(&j);
}

static void on_show(void *arg, int status, const struct imc_mcastd_show *s)
{
	struct ask *a = arg;

	if (status < 0) {
		a->status = status;
	} else {
		if (a->json)
			write_json(a, s);
		else
			write_text(a, s);
		a->status = 1;
	}
	imc_loop_stop(a->loop);
}

static void on_conn(void *arg, bool up, int err)
{
	struct ask *a = arg;
	int r;

	if (!up || a->status)
		return;
	r = imc_mcastd_show(a->c, on_show, a);
	if (r < 0) {
		a->status = r;
		imc_loop_stop(a->loop);
	}
}

static void on_timeout(struct imc_timer *t)
{
	struct ask *a = imc_container_of(t, struct ask, timeout);

	a->status = -ETIMEDOUT;
	imc_loop_stop(a->loop);
}

int imc_mcastd_show_write(FILE *f, const char *path, uint64_t guid,
			  bool json)
{
	struct ask a = { .f = f, .path = path, .guid = guid, .json = json };
	struct imc_mcastd_config cfg;
	int r;

	imc_mcastd_config_init(&cfg);
	cfg.path = path;
	cfg.comm = "mcast-show";
	cfg.conn_cb = on_conn;
	cfg.conn_arg = &a;
	r = imc_loop_create_realtime(&a.loop);
	if (r < 0)
		return r;
	imc_timer_init(&a.timeout, on_timeout);
	r = imc_mcastd_create(&cfg, &a.c);
	if (r == -ENOENT || r == -ECONNREFUSED) {
		imc_loop_destroy(a.loop);
		return 0;
	}
	if (r == 0)
		r = imc_mcastd_loop_attach(a.c, a.loop);
	if (r == 0)
		r = imc_timer_arm_in(a.loop, &a.timeout,
				     SHOW_TIMEOUT_MS * IMC_NSEC_PER_MSEC);
	/* The hello may be accepted inside create: ask at once then. */
	if (r == 0 && imc_mcastd_connected(a.c))
		on_conn(&a, true, 0);
	while (r == 0 && !a.status) {
		r = imc_loop_run(a.loop);
		if (r == 0 && !a.status)
			r = -EIO;
	}
	imc_timer_cancel(a.loop, &a.timeout);
	imc_mcastd_destroy(a.c);
	imc_loop_destroy(a.loop);
	if (r == 0 && a.status < 0)
		r = a.status;
	if (r < 0) {
		fprintf(stderr, "ibmcast mcast: ibmcastd at %s: %s\n", path,
			strerror(-r));
		return r;
	}
	return 1;
}
