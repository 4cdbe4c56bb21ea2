/* ibmcast join: hold multicast memberships of a real port through the join
 * tracker on libibumad, print the group records and every later event,
 * leave on SIGINT/SIGTERM. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibmcast/gid.h"
#include "ibmcast/json.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/mcmr.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcast_umad.h"
#include "ibmcast/mcastd.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/mcast_ctl.h"
#include "mcastd_show.h"
#include "ibmcast/port_lock.h"
#include "sa_tool.h"
#include "tools.h"

static void help(FILE *f)
{
	fprintf(f,
"usage: ibmcast join [OPTIONS] MGID[=STATE] [MGID[=STATE]...]\n"
"\n"
"Joins each MGID as a member of this port's join tracker, which holds the\n"
"port's one membership per group at the Subnet Administrator through\n"
"libibumad (on InfiniBand: /dev/infiniband/umadN; on ibsim: umad2sim).\n"
"Prints each group's record once joined, and every later event of the\n"
"membership; holds the memberships until SIGINT or SIGTERM (or\n"
"--duration), then leaves them (one SA Delete per group) and exits.\n"
"\n"
"Only the SA membership is held: no QP is attached (that would take a\n"
"verbs UD QP), so the process receives no multicast traffic.\n"
"\n"
"MGID is an IPv6-notation GID (ff12:e001::1), or 0 to have the SA create\n"
"a group and choose its MGID; =STATE gives that member its own JoinState\n"
"(default --state). Each operand is one member: the same MGID twice is\n"
"two members of one group, and the port's membership at the SA carries\n"
"the union of their JoinStates.\n"
"\n"
"When ibmcastd runs (its socket answers), the members are joined through\n"
"it: the daemon's tracker holds the union of every process's members, so\n"
"any number of processes share the port (--device and --port name the\n"
"daemon's port; --watch, --poll, --audit, --timeout, --retries, --dlid and\n"
"the control socket are the daemon's business then). Without the daemon\n"
"this process owns the port alone: it takes the port's lock\n"
"(RUN_DIR/port-GUID-N.lock) and a second owner is refused, since the SA\n"
"keeps one membership per port and one owner's Delete would take the\n"
"other's bits away.\n"
"\n"
"Options:\n"
"  --device D, --port N  the port (default: libibumad's first active)\n"
"  --state S             JoinState of the MGIDs without =STATE: full\n"
"                        (default), nonmember, sendonly (SendOnlyNonMember),\n"
"                        sendonly-full (SendOnlyFullMember), or a number\n"
"                        1..15 of IBA JoinState bits\n"
"  --create              send the components OpenSM needs to create a\n"
"                        missing group: Q_Key, P_Key, SL, TClass and\n"
"                        FlowLabel (defaults 0, 0xffff, 0, 0, 0); MGID 0\n"
"                        implies it\n"
"  --qkey Q, --pkey P, --sl N, --tclass N, --flow-label N, --hop-limit N\n"
"                        a component of the record; each given one is in\n"
"                        the component mask, is sent, and must match the\n"
"                        group's\n"
"  --mtu [<|>]M, --rate [<|>]R\n"
"                        MTU (256..4096 bytes, or the IBA code 1..5) and\n"
"                        rate (the IBA code, e.g. 3 = 10 Gb/s) with a\n"
"                        selector: exactly (default), '>' greater, '<'\n"
"                        less (quote them for the shell); 'max' asks for\n"
"                        the largest (selector 3, which OpenSM 3.3\n"
"                        refuses with REQ_INVALID)\n"
"  --json                one JSON object per line instead of text\n"
"  --duration SECS       leave after SECS (default: until a signal)\n"
"  --audit SECS          membership audit period: a Get per held group;\n"
"                        NO_RECORDS re-joins everything (default 10, 0 off)\n"
"  --watch W             port changes from: auto (default: verbs async\n"
"                        events when the CA has a verbs device, else\n"
"                        polling), verbs, poll, none\n"
"  --poll SECS           umad_get_port() polling period (default 1)\n"
"  --timeout MS          the SA client's first timeout (default 200)\n"
"  --retries N           SA retries with backoff (default 3)\n"
"  --dlid LID            send SA requests to LID (default: the SM's)\n"
"  --run-dir DIR         where the control socket goes (default\n"
"                        $IBMCAST_RUN_DIR, $XDG_RUNTIME_DIR/ibmcast,\n"
"                        /run/ibmcast for root, /tmp/ibmcast-UID)\n"
"  --no-ctl              no control socket (`ibmcast mcast show` will not\n"
"                        see this process)\n"
"  --socket PATH         ibmcastd's socket (default $IBMCAST_SOCKET, else\n"
"                        RUN_DIR/ibmcastd.sock when --run-dir or\n"
"                        $IBMCAST_RUN_DIR is set, else\n"
"                        /run/ibmcast/ibmcastd.sock)\n"
"  --no-daemon           own the port without ibmcastd even if it runs\n"
"\n"
"Output (text; --json has the same fields):\n"
"  ready device=D port=N gid=G lid=L sm_lid=S watch=W audit=SECS ctl=PATH\n"
"  joined mgid=M mlid=0xc001 qkey=Q pkey=P mtu=4 mtu_bytes=2048 rate=3\n"
"         sl=N flow_label=F tclass=T hop_limit=H scope=S join_state=J\n"
"  rejoining|waiting mgid=M\n"
"  error mgid=M status=0x0200 REQ_INVALID   (an SA status as received,\n"
"         or a negative errno: -110 ETIMEDOUT, ...)\n"
"  port event=reregister cause=audit|poll|verbs\n"
"  daemon state=up|down [error=E]   (through ibmcastd: the connection;\n"
"         when it breaks the members are rejoining, and joined again\n"
"         once the daemon is back)\n"
"  left mgid=M\n"
"\n"
"Exit: 0 after leaving, 1 when a member failed (or every one did, at\n"
"once) or the port could not be opened, 2 bad usage.\n");
}

/* ---- option parsing ---- */

struct opts {
	const char *device;
	unsigned port;
	uint8_t state;
	bool create;
	struct imc_mcmr rec;
	uint64_t mask;
	bool json;
	double duration, audit, poll;
	enum imc_mcast_umad_watch watch;
	imc_time_t timeout;
	unsigned retries;
	uint16_t dlid;
	const char *run_dir;
	bool no_ctl;
	const char *socket;
	bool no_daemon;
};

static int parse_secs(const char *s, double *out)
{
	return sa_tool_real(s, 86400 * 365, out);
}

/* "[<|>]VALUE" or "max": selector (IBA 15.2.5.16) and the rest. */
static int parse_sel(const char **s, uint8_t *sel)
{
	if (!strcmp(*s, "max")) {
		*sel = UMAD_SA_SELECTOR_LARGEST_AVAIL;
		return 1;
	}
	*sel = UMAD_SA_SELECTOR_EXACTLY;
	if (**s == '>') {
		*sel = UMAD_SA_SELECTOR_GREATER_THAN;
		(*s)++;
	} else if (**s == '<') {
		*sel = UMAD_SA_SELECTOR_LESS_THAN;
		(*s)++;
	}
	return 0;
}

static int parse_mtu(const char *s, uint8_t *sel, uint8_t *mtu)
{
	static const unsigned bytes[] = { 256, 512, 1024, 2048, 4096 };
	uint64_t v;

	if (parse_sel(&s, sel)) {
		*mtu = 0;
		return 0;
	}
	if (sa_tool_num(s, 4096, &v) < 0)
		return -EINVAL;
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(bytes); i++)
		if (v == bytes[i] || v == i + 1) {
			*mtu = (uint8_t)(i + 1);
			return 0;
		}
	return -EINVAL;
}

static int parse_rate(const char *s, uint8_t *sel, uint8_t *rate)
{
	uint64_t v;

	if (parse_sel(&s, sel)) {
		*rate = 0;
		return 0;
	}
	if (sa_tool_num(s, 0x3f, &v) < 0 || v < 2)
		return -EINVAL;
	*rate = (uint8_t)v;
	return 0;
}

static int parse_mgid(const char *s, struct imc_gid *g)
{
	if (!strcmp(s, "0")) {
		memset(g, 0, sizeof(*g));
		return 0;
	}
	if (imc_gid_parse(s, g) < 0 || !imc_gid_is_multicast(g))
		return -EINVAL;
	return 0;
}

/* ---- the session ---- */

struct member {
	struct session *s;
	struct imc_mcast_member *m;
	struct imc_mcastd_member *dm;   /* through ibmcastd */
	struct imc_gid mgid;         /* as asked, then as the SA named it */
	enum imc_mcast_state state;
	bool failed;
};

struct session {
	struct opts *o;
	struct imc_loop *loop;
	struct imc_mcast_umad *mu;
	struct imc_ctl_server *ctl;
	char sock[108];                 /* ibmcastd's socket */
	struct imc_mcastd *dc;          /* through ibmcastd, else NULL */
	struct imc_port_lock *lock;     /* standalone: the port is ours */
	struct member *mem;
	size_t n;
	size_t failed;
	bool any_failed;
	struct imc_timer end;
	bool ended;
};

static volatile sig_atomic_t signals;
static _Atomic uint64_t last_signal;   /* CLOCK_MONOTONIC ns */
static struct imc_loop *signal_loop;

static void on_signal(int sig)
{
	struct timespec ts;

	signals++;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		atomic_store(&last_signal, (uint64_t)ts.tv_sec * IMC_NSEC_PER_SEC +
					   (uint64_t)ts.tv_nsec);
	if (signal_loop)
		imc_loop_wake(signal_loop);
}

static const char *port_event_name(enum imc_mcast_port_event ev)
{
	switch (ev) {
	case IMC_MCAST_PORT_ACTIVE: return "active";
	case IMC_MCAST_PORT_DOWN: return "down";
	case IMC_MCAST_PORT_LID_CHANGE: return "lid_change";
	case IMC_MCAST_PORT_SM_CHANGE: return "sm_change";
	case IMC_MCAST_PORT_REREGISTER: return "reregister";
	case IMC_MCAST_PORT_PKEY_CHANGE: return "pkey_change";
	}
	return "unknown";
}

static const char *errno_name(int e)
{
	switch (e) {
	case ETIMEDOUT: return "ETIMEDOUT";
	case ECANCELED: return "ECANCELED";
	case ENETRESET: return "ENETRESET";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	/* ibmcastd's refusals (mcastd.h) */
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EDQUOT: return "EDQUOT";
	case EAGAIN: return "EAGAIN";
	case ENODEV: return "ENODEV";
	case ESHUTDOWN: return "ESHUTDOWN";
	case EPROTO: return "EPROTO";
	default: return "ERRNO";
	}
}

/* One JSON event a line: {"event":NAME,...}. */
static void event_begin(struct imc_json *j, const char *name)
{
	imc_json_init(j, stdout, 0, 0);
	imc_json_object_begin(j);
	imc_json_kv_string(j, "event", name);
}

static void event_end(struct imc_json *j)
{
	imc_json_object_end(j);
	(void)imc_tool_json_end(j, "ibmcast join");
}

static void print_joined(const struct session *s, const struct imc_mcmr *r)
{
	char m[IMC_GID_STRLEN];
	unsigned bytes = r->mtu >= 1 && r->mtu <= 5 ? 128u << r->mtu : 0;

	imc_gid_format(&r->mgid, m);
	if (s->o->json) {
		struct imc_json j;

		event_begin(&j, "joined");
		imc_json_kv_string(&j, "mgid", m);
		imc_json_kv_u64(&j, "mlid", r->mlid);
		imc_json_kv_u64(&j, "qkey", r->qkey);
		imc_json_kv_u64(&j, "pkey", r->pkey);
		imc_json_kv_u64(&j, "mtu", r->mtu);
		imc_json_kv_u64(&j, "mtu_bytes", bytes);
		imc_json_kv_u64(&j, "rate", r->rate);
		imc_json_kv_u64(&j, "sl", r->sl);
		imc_json_kv_u64(&j, "flow_label", r->flow_label);
		imc_json_kv_u64(&j, "tclass", r->tclass);
		imc_json_kv_u64(&j, "hop_limit", r->hop_limit);
		imc_json_kv_u64(&j, "scope", r->scope);
		imc_json_kv_u64(&j, "join_state", r->join_state);
		event_end(&j);
	} else {
		printf("joined mgid=%s mlid=0x%04x qkey=0x%08x pkey=0x%04x "
		       "mtu=%u mtu_bytes=%u rate=%u sl=%u flow_label=0x%05x "
		       "tclass=%u hop_limit=%u scope=%u join_state=0x%x\n",
		       m, r->mlid, r->qkey, r->pkey, r->mtu, bytes, r->rate,
		       r->sl, r->flow_label, r->tclass, r->hop_limit, r->scope,
		       r->join_state);
	}
}

static void print_simple(const struct session *s, const char *what,
			 const struct imc_gid *mgid)
{
	char m[IMC_GID_STRLEN];

	imc_gid_format(mgid, m);
	if (s->o->json) {
		struct imc_json j;

		event_begin(&j, what);
		imc_json_kv_string(&j, "mgid", m);
		event_end(&j);
	} else {
		printf("%s mgid=%s\n", what, m);
	}
}

static void print_error(const struct session *s, const struct imc_gid *mgid,
			int status)
{
	char m[IMC_GID_STRLEN];
	const char *name = status >= 0 ? imc_mad_status_str((uint16_t)status) :
					 errno_name(-status);

	imc_gid_format(mgid, m);
	if (s->o->json) {
		struct imc_json j;

		event_begin(&j, "error");
		imc_json_kv_string(&j, "mgid", m);
		imc_json_kv_i64(&j, "status", status);
		imc_json_kv_string(&j, "status_name", name);
		event_end(&j);
	} else if (status >= 0) {
		printf("error mgid=%s status=0x%04x %s\n", m, status, name);
	} else {
		printf("error mgid=%s status=%d %s (%s)\n", m, status, name,
		       strerror(-status));
	}
}

static void handle_event(struct member *me, const struct imc_mcast_event *ev)
{
	struct session *s = me->s;

	switch (ev->type) {
	case IMC_MCAST_EV_JOINED:
		if (ev->rec)
			me->mgid = ev->rec->mgid;
		if (ev->rec)
			print_joined(s, ev->rec);
		else
			print_simple(s, "joined", &me->mgid);
		break;
	case IMC_MCAST_EV_REJOINING:
		print_simple(s, "rejoining", &me->mgid);
		break;
	case IMC_MCAST_EV_WAITING:
		print_simple(s, "waiting", &me->mgid);
		break;
	case IMC_MCAST_EV_ERROR:
		print_error(s, &me->mgid, ev->status);
		if (!me->failed) {
			me->failed = true;
			s->failed++;
			s->any_failed = true;
		}
		/* Nothing left to hold: stop. */
		if (s->failed == s->n)
			imc_loop_stop(s->loop);
		break;
	}
	fflush(stdout);
}

static void on_event(void *arg, struct imc_mcast_member *m,
		     const struct imc_mcast_event *ev)
{
	struct member *me = arg;

	me->state = imc_mcast_member_state(m);
	handle_event(me, ev);
}

static void on_devent(void *arg, struct imc_mcastd_member *m,
		      const struct imc_mcast_event *ev)
{
	struct member *me = arg;

	me->state = imc_mcastd_member_state(m);
	handle_event(me, ev);
}

static void on_conn(void *arg, bool up, int err)
{
	struct session *s = arg;

	if (s->o->json) {
		struct imc_json j;

		event_begin(&j, "daemon");
		imc_json_kv_string(&j, "state", up ? "up" : "down");
		imc_json_kv_i64(&j, "error", err);
		event_end(&j);
	} else if (up) {
		printf("daemon state=up\n");
	} else {
		printf("daemon state=down error=%d (%s)\n", err,
		       strerror(err < 0 ? -err : err));
	}
	fflush(stdout);
}

static void on_port(void *arg, enum imc_mcast_port_event ev,
		    enum imc_mcast_umad_cause cause)
{
	struct session *s = arg;

	if (s->o->json) {
		struct imc_json j;

		event_begin(&j, "port");
		imc_json_kv_string(&j, "port_event", port_event_name(ev));
		imc_json_kv_string(&j, "cause", imc_mcast_umad_cause_str(cause));
		event_end(&j);
	} else {
		printf("port event=%s cause=%s\n", port_event_name(ev),
		       imc_mcast_umad_cause_str(cause));
	}
	fflush(stdout);
}

static void on_end(struct imc_timer *t)
{
	struct session *s = imc_container_of(t, struct session, end);

	s->ended = true;
	imc_loop_stop(s->loop);
}

static void print_ready(const struct session *s)
{
	const struct imc_umad_port *p;
	const char *w, *ctl = s->ctl ? imc_ctl_server_path(s->ctl) : "";
	char g[IMC_GID_STRLEN];

	if (s->dc) {
		if (s->o->json) {
			struct imc_json j;

			event_begin(&j, "ready");
			imc_json_kv_string(&j, "daemon", s->sock);
			event_end(&j);
		} else {
			printf("ready daemon=%s\n", s->sock);
		}
		fflush(stdout);
		return;
	}
	p = imc_mcast_umad_port(s->mu);
	w = imc_mcast_umad_watch_str(imc_mcast_umad_watching(s->mu));
	imc_gid_format(&p->gid, g);
	if (s->o->json) {
		struct imc_json j;

		event_begin(&j, "ready");
		imc_json_kv_string(&j, "device", p->device);
		imc_json_kv_u64(&j, "port", p->port);
		imc_json_kv_string(&j, "gid", g);
		imc_json_kv_u64(&j, "lid", p->lid);
		imc_json_kv_u64(&j, "sm_lid", p->sm_lid);
		imc_json_kv_string(&j, "watch", w);
		imc_json_kv_double(&j, "audit", s->o->audit, IMC_JSON_G);
		imc_json_kv_string(&j, "ctl", ctl);
		event_end(&j);
	} else {
		printf("ready device=%s port=%u gid=%s lid=%u sm_lid=%u watch=%s "
		       "audit=%g ctl=%s\n", p->device, p->port, g, p->lid,
		       p->sm_lid, w, s->o->audit, ctl[0] ? ctl : "-");
	}
	fflush(stdout);
}

static imc_time_t secs_ns(double v)
{
	return (imc_time_t)llround(v * 1e9);
}

/* Leaves every member, then waits (at most 5 s, or until another signal)
 * for the SA to answer the Deletes. A signal within half a second of the
 * start is the same one delivered twice (timeout(1) sends it to the
 * child and to its process group). */
static void leave_all(struct session *s)
{
	struct imc_mcast_stats st;
	imc_time_t start = imc_loop_now(s->loop);

	if (s->dc) {
		/* The daemon sends the Deletes that are due, for the port's
		 * last holder of each bit (it may be another process). */
		for (size_t i = 0; i < s->n; i++) {
			if (!s->mem[i].dm)
				continue;
			imc_mcastd_leave(s->mem[i].dm);
			s->mem[i].dm = NULL;
			print_simple(s, "left", &s->mem[i].mgid);
		}
		fflush(stdout);
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		if (!s->mem[i].m)
			continue;
		imc_mcast_leave(s->mem[i].m);
		s->mem[i].m = NULL;
		print_simple(s, "left", &s->mem[i].mgid);
	}
	fflush(stdout);
	s->ended = false;
	imc_timer_arm_in(s->loop, &s->end, 5 * IMC_NSEC_PER_SEC);
	for (;;) {
		imc_mcast_get_stats(imc_mcast_umad_tracker(s->mu), &st);
		/* A group goes once its Delete is answered (the tracker
		 * sends it from the loop, after imc_mcast_leave()). */
		if (!st.groups || s->ended ||
		    atomic_load(&last_signal) > start + 500 * IMC_NSEC_PER_MSEC)
			break;
		if (imc_loop_run_once(s->loop) < 0)
			break;
	}
	imc_timer_cancel(s->loop, &s->end);
	if (st.groups)
		fprintf(stderr, "ibmcast join: %zu groups not given up at the SA "
			"(Delete unanswered) at exit\n", st.groups);
}

/* Connects to ibmcastd. Returns 1 connected, 0 no daemon (standalone),
 * or a negative errno (reported). */
static int open_daemon(struct session *s)
{
	struct imc_mcastd_config cfg;
	int r;

	if (s->o->no_daemon)
		return 0;
	r = imc_mcastd_socket_path(s->o->socket, s->o->run_dir, s->sock,
				   sizeof(s->sock));
	if (r < 0) {
		fprintf(stderr, "ibmcast join: ibmcastd's socket path is too "
			"long\n");
		return r;
	}
	imc_mcastd_config_init(&cfg);
	cfg.path = s->sock;
	cfg.conn_cb = on_conn;
	cfg.conn_arg = s;
	r = imc_mcastd_create(&cfg, &s->dc);
	if (r == -ENOENT || r == -ECONNREFUSED)
		return 0;
	if (r < 0) {
		fprintf(stderr, "ibmcast join: ibmcastd at %s: %s%s\n", s->sock,
			strerror(-r), r == -EACCES ? " (its socket admits "
			"root and its group only)" : "");
		return r;
	}
	r = imc_mcastd_loop_attach(s->dc, s->loop);
	if (r < 0) {
		fprintf(stderr, "ibmcast join: ibmcastd: %s\n", strerror(-r));
		return r;
	}
	return 1;
}

/* Without the daemon: the port, its lock, and the control socket. */
static int open_port(struct session *s)
{
	const struct opts *o = s->o;
	struct imc_mcast_umad_config cfg;
	const struct imc_umad_port *p;
	char dir[256], holder[128], g[IMC_GID_STRLEN];
	int r;

	imc_mcast_umad_config_init(&cfg);
	cfg.device = o->device;
	cfg.port = o->port;
	cfg.sa_lid = o->dlid;
	cfg.sa.timeout = o->timeout;
	if (cfg.sa.max_timeout < cfg.sa.timeout)
		cfg.sa.max_timeout = cfg.sa.timeout;
	cfg.sa.retries = o->retries;
	cfg.watch = o->watch;
	cfg.poll_interval = secs_ns(o->poll);
	cfg.audit_interval = secs_ns(o->audit);
	cfg.port_cb = on_port;
	cfg.port_arg = s;
	r = imc_mcast_umad_open(s->loop, &cfg, NULL, &s->mu);
	if (r < 0) {
		fprintf(stderr, "ibmcast join: cannot open %s port %u: %s\n",
			o->device ? o->device : "the default CA", o->port,
			strerror(-r));
		imc_port_hint("ibmcast join", r);
		return r;
	}
	p = imc_mcast_umad_port(s->mu);
	imc_gid_format(&p->gid, g);
	r = imc_ctl_run_dir(o->run_dir, dir, sizeof(dir));
	if (r == 0)
		r = imc_port_lock_take(dir, imc_gid_guid(&p->gid), p->port,
				       "ibmcast-join", &s->lock, holder,
				       sizeof(holder));
	if (r == -EBUSY) {
		fprintf(stderr, "ibmcast join: port %s:%u (%s) is already "
			"owned by process %s: two owners of one port delete "
			"each other's memberships at the SA. %s\n", p->device,
			p->port, g, holder[0] ? holder : "?",
			strstr(holder, "ibmcastd") ?
			"Join through the daemon (its socket: --socket)." :
			"Run ibmcastd and join through it, or stop that "
			"process.");
		return r;
	}
	if (r < 0)
		fprintf(stderr, "ibmcast join: warning: port lock in %s: %s "
			"(another process on this port would not be "
			"refused)\n", dir, strerror(-r));
	if (!o->no_ctl) {
		const char *w = imc_mcast_umad_watch_str(
			imc_mcast_umad_watching(s->mu));

		r = imc_ctl_run_dir(o->run_dir, dir, sizeof(dir));
		if (r == 0)
			r = imc_ctl_server_open(s->loop, dir, p, w,
						imc_mcast_umad_tracker(s->mu),
						&s->ctl);
		if (r < 0) {
			fprintf(stderr, "ibmcast join: control socket in %s: %s "
				"(--no-ctl to go without)\n", dir, strerror(-r));
			return r;
		}
	}
	return 0;
}

static int join_one(struct session *s, size_t i, const struct imc_gid *mgid,
		    uint8_t state)
{
	const struct opts *o = s->o;
	struct imc_mcast_join_req req;
	struct imc_mcastd_port port;

	memset(&req, 0, sizeof(req));
	req.rec = o->rec;
	req.rec.mgid = *mgid;
	req.comp_mask = o->mask | UMAD_SA_MCM_COMP_MASK_MGID;
	if (o->create || imc_gid_is_zero(mgid))
		/* The components an SA needs to create (o15-0.2.3). */
		req.comp_mask |= IMC_MCMR_CREATE_COMPS;
	req.join_state = state;
	s->mem[i].s = s;
	s->mem[i].mgid = *mgid;
	if (!s->dc)
		return imc_mcast_join(imc_mcast_umad_tracker(s->mu), &req,
				      on_event, &s->mem[i], &s->mem[i].m);
	memset(&port, 0, sizeof(port));
	if (o->device) {
		snprintf(port.device, sizeof(port.device), "%s", o->device);
		port.port_num = (uint8_t)(o->port ? o->port : 1);
	}
	return imc_mcastd_join(s->dc, o->device ? &port : NULL, &req,
			       on_devent, &s->mem[i], &s->mem[i].dm);
}

static int run_session(struct opts *o, const struct imc_gid *mgids,
		       const uint8_t *states, size_t n)
{
	struct session s = { .o = o };
	struct sigaction sa;
	int r, rc = IMC_EXIT_FAIL;

	imc_timer_init(&s.end, on_end);
	r = imc_loop_create_realtime(&s.loop);
	if (r < 0) {
		fprintf(stderr, "ibmcast join: loop: %s\n", strerror(-r));
		return IMC_EXIT_FAIL;
	}
	r = open_daemon(&s);
	if (r == 0)
		r = open_port(&s);
	if (r < 0)
		goto out;
	s.mem = calloc(n, sizeof(*s.mem));
	if (!s.mem)
		goto out;
	s.n = n;
	for (size_t i = 0; i < n; i++) {
		r = join_one(&s, i, &mgids[i], states[i]);
		if (r < 0) {
			fprintf(stderr, "ibmcast join: join: %s\n", strerror(-r));
			goto leave;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	signal_loop = s.loop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	print_ready(&s);
	if (o->duration > 0)
		imc_timer_arm_in(s.loop, &s.end, secs_ns(o->duration));
	while (!signals && !s.ended && s.failed < s.n) {
		r = imc_loop_run(s.loop);
		if (r < 0) {
			fprintf(stderr, "ibmcast join: loop: %s\n", strerror(-r));
			break;
		}
	}
	imc_timer_cancel(s.loop, &s.end);
leave:
	leave_all(&s);
	rc = s.any_failed || r < 0 ? IMC_EXIT_FAIL : IMC_EXIT_OK;
out:
	imc_mcastd_destroy(s.dc);
	imc_ctl_server_close(s.ctl);
	imc_mcast_umad_close(s.mu);
	imc_port_lock_release(s.lock);
	signal_loop = NULL;
	imc_loop_destroy(s.loop);
	free(s.mem);
	return rc;
}

/* ---- entry ---- */

enum {
	OPT_DEVICE = 256, OPT_PORT, OPT_STATE, OPT_CREATE, OPT_QKEY, OPT_PKEY,
	OPT_SL, OPT_TCLASS, OPT_FLOW, OPT_HOP, OPT_MTU, OPT_RATE, OPT_JSON,
	OPT_DURATION, OPT_AUDIT, OPT_WATCH, OPT_POLL, OPT_TIMEOUT, OPT_RETRIES,
	OPT_DLID, OPT_RUN_DIR, OPT_NO_CTL, OPT_SOCKET, OPT_NO_DAEMON,
};

static const char *opt_name(const struct option *lo, int ch)
{
	for (; lo->name; lo++)
		if (lo->val == ch)
			return lo->name;
	return "?";
}

/* The value of option ch in [min, max]; IMC_EXIT_USAGE once told. */
static int num(const struct option *lo, int ch, uint64_t min, uint64_t max,
	       uint64_t *v)
{
	return imc_opt_num("ibmcast join", opt_name(lo, ch), optarg, min, max,
			   v);
}

static int usage_error(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "ibmcast join: %s '%s' (try 'ibmcast join --help')\n",
			what, arg);
	else
		fprintf(stderr, "ibmcast join: %s (try 'ibmcast join --help')\n",
			what);
	return IMC_EXIT_USAGE;
}

static const struct option lo[] = {
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "create", no_argument, NULL, OPT_CREATE },
	{ "qkey", required_argument, NULL, OPT_QKEY },
	{ "pkey", required_argument, NULL, OPT_PKEY },
	{ "sl", required_argument, NULL, OPT_SL },
	{ "tclass", required_argument, NULL, OPT_TCLASS },
	{ "flow-label", required_argument, NULL, OPT_FLOW },
	{ "hop-limit", required_argument, NULL, OPT_HOP },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "audit", required_argument, NULL, OPT_AUDIT },
	{ "watch", required_argument, NULL, OPT_WATCH },
	{ "poll", required_argument, NULL, OPT_POLL },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "retries", required_argument, NULL, OPT_RETRIES },
	{ "dlid", required_argument, NULL, OPT_DLID },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "no-ctl", no_argument, NULL, OPT_NO_CTL },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "no-daemon", no_argument, NULL, OPT_NO_DAEMON },
	{ NULL, 0, NULL, 0 },
};

/* An option that sets a field of the MCMemberRecord template and its
 * component mask bits (any other leaves o alone): 0, nonzero for a bad
 * value, IMC_EXIT_USAGE when num() told so already. */
static int rec_opt(struct opts *o, int ch)
{
	/* Options of one number field: its range and component bit come
	 * from the record's field table (mcmr.h). */
	static const struct {
		int ch;
		const char *field;
	} num_fields[] = {
		{ OPT_QKEY, "qkey" }, { OPT_PKEY, "pkey" }, { OPT_SL, "sl" },
		{ OPT_TCLASS, "tclass" }, { OPT_FLOW, "flow_label" },
		{ OPT_HOP, "hop_limit" },
	};
	uint64_t v;
	int bad = 0;

	for (size_t i = 0; i < IMC_ARRAY_SIZE(num_fields); i++) {
		const struct imc_mcmr_field *f;

		if (num_fields[i].ch != ch)
			continue;
		f = imc_mcmr_field_find(num_fields[i].field, false);
		bad = num(lo, ch, 0, f->max, &v);
		if (!bad)
			imc_mcmr_field_set(&o->rec, f, v);
		o->mask |= f->comp;
		return bad;
	}
	switch (ch) {
	case OPT_MTU:
		bad = parse_mtu(optarg, &o->rec.mtu_sel, &o->rec.mtu);
		o->mask |= UMAD_SA_MCM_COMP_MASK_MTU_SEL |
			   UMAD_SA_MCM_COMP_MASK_MTU;
		break;
	case OPT_RATE:
		bad = parse_rate(optarg, &o->rec.rate_sel, &o->rec.rate);
		o->mask |= UMAD_SA_MCM_COMP_MASK_RATE_SEL |
			   UMAD_SA_MCM_COMP_MASK_RATE;
		break;
	}
	return bad;
}

/* --watch MODE. */
static int watch_opt(struct opts *o)
{
	if (!strcmp(optarg, "auto"))
		o->watch = IMC_MCAST_UMAD_WATCH_AUTO;
	else if (!strcmp(optarg, "verbs"))
		o->watch = IMC_MCAST_UMAD_WATCH_VERBS;
	else if (!strcmp(optarg, "poll"))
		o->watch = IMC_MCAST_UMAD_WATCH_POLL;
	else if (!strcmp(optarg, "none"))
		o->watch = IMC_MCAST_UMAD_WATCH_NONE;
	else
		return 1;
	return 0;
}

/* One option ch (of lo) with its optarg: 0, nonzero for a bad value,
 * IMC_EXIT_USAGE when num() told so already. */
static int opt_one(struct opts *o, int ch)
{
	uint64_t v;
	int bad = 0;

	switch (ch) {
	case OPT_DEVICE: o->device = optarg; break;
	case OPT_PORT:
		bad = num(lo, ch, 0, 255, &v);
		o->port = (unsigned)v;
		break;
	case OPT_STATE: bad = sa_tool_join_state(optarg, &o->state); break;
	case OPT_CREATE: o->create = true; break;
	case OPT_JSON: o->json = true; break;
	case OPT_DURATION: bad = parse_secs(optarg, &o->duration); break;
	case OPT_AUDIT: bad = parse_secs(optarg, &o->audit); break;
	case OPT_POLL: bad = parse_secs(optarg, &o->poll); break;
	case OPT_WATCH: bad = watch_opt(o); break;
	case OPT_TIMEOUT:
		bad = num(lo, ch, 1, 3600000, &v);
		o->timeout = v * IMC_NSEC_PER_MSEC;
		break;
	case OPT_RETRIES:
		bad = num(lo, ch, 0, 100, &v);
		o->retries = (unsigned)v;
		break;
	case OPT_DLID:
		bad = num(lo, ch, 1, 0xbfff, &v);
		o->dlid = (uint16_t)v;
		break;
	case OPT_RUN_DIR: o->run_dir = optarg; break;
	case OPT_NO_CTL: o->no_ctl = true; break;
	case OPT_SOCKET: o->socket = optarg; break;
	case OPT_NO_DAEMON: o->no_daemon = true; break;
	default:
		return rec_opt(o, ch);
	}
	return bad;
}

/* The MGID[=JoinState] arguments: *mgids and *states (the caller frees
 * them), *np of each. 0, or the exit code once told. */
static int parse_targets(int argc, char **argv, const struct opts *o,
			 struct imc_gid **mgids, uint8_t **states, size_t *np)
{
	size_t n;

	if (optind >= argc)
		return usage_error("expected at least one MGID", NULL);
	n = (size_t)(argc - optind);
	*mgids = calloc(n, sizeof(**mgids));
	*states = calloc(n, sizeof(**states));
	if (!*mgids || !*states)
		return IMC_EXIT_FAIL;
	for (size_t i = 0; i < n; i++) {
		char *a = argv[optind + (int)i], *eq = strchr(a, '=');
		int bad;

		(*states)[i] = o->state;
		if (eq)
			*eq = '\0';
		bad = parse_mgid(a, &(*mgids)[i]) < 0;
		if (eq)
			*eq = '=';
		if (bad || (eq && sa_tool_join_state(eq + 1, &(*states)[i]) < 0))
			return usage_error(bad ? "bad MGID (a multicast GID, ff..., "
					   "or 0)" : "bad JoinState in", a);
	}
	*np = n;
	return 0;
}

static int run(int argc, char **argv)
{
	struct opts o;
	struct imc_gid *mgids = NULL;
	uint8_t *states = NULL;
	size_t n = 0;
	int ch, rc;

	memset(&o, 0, sizeof(o));
	o.state = IMC_JOIN_FULL;
	o.rec.pkey = 0xffff;
	o.audit = 10;
	o.poll = 1;
	o.timeout = IMC_SA_DEFAULT_TIMEOUT;
	o.retries = IMC_SA_DEFAULT_RETRIES;
	o.watch = IMC_MCAST_UMAD_WATCH_AUTO;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		int bad;

		if (ch < OPT_DEVICE || ch > OPT_NO_DAEMON)
			return usage_error("unknown option or missing value",
					   argv[optind - 1]);
		bad = opt_one(&o, ch);
		if (bad == IMC_EXIT_USAGE)
			return bad;   /* told by num() */
		if (bad)
			return imc_opt_bad("ibmcast join", opt_name(lo, ch),
					   optarg,
					   "not a valid value (try 'ibmcast join --help')");
	}
	rc = parse_targets(argc, argv, &o, &mgids, &states, &n);
	if (!rc)
		rc = run_session(&o, mgids, states, n);
	free(mgids);
	free(states);
	return rc;
}

const struct imc_cmd imc_cmd_join = {
	.name = "join",
	.summary = "hold multicast memberships through the join tracker (libibumad)",
	.run = run,
	.help = help,
};
