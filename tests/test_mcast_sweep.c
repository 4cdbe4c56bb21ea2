/* The join tracker's seeded sweep: deterministic simulations on the
 * embedded fabric, one per seed, each drawn whole from its seed.
 *
 * A run: a generated topology, the SA on the SM's port, a join tracker on
 * every HCA port (each on a GSI over a QP1 that is the test's, or the
 * SA's on the SM's port), and two data QPs per port. Then a few hundred
 * steps at random virtual times: members join random groups (the SA's
 * persistent groups, a pool of fixed MGIDs, groups created with MGID 0
 * and joined by the MGID they got), with or without a QP, with
 * templates that sometimes do not match; members leave, from outside or
 * from inside a callback (their own handle or another); client
 * reregisters on one port or all; port flaps, some shorter and some
 * longer than the SM's sweep; SA restarts (the SA destroyed and created
 * again, empty, followed by a reregister of every port after a while, as
 * a new SM gives) and SA moves (the SM and its SA restart on another
 * host: every port hears an SM change); P_Key table events. MADs are lost
 * (up to 30% of each MAD, on the HCA cables), duplicated and reordered
 * (every cable), and an SA may serve at a finite rate from a small queue.
 *
 * After quiescence (every cable up, the loop run dry):
 *  - every live handle is JOINED or FAILED, as its last event said, and
 *    got exactly one completion (its first JOINED or ERROR); or, with no
 *    full bit, WAITING (-ENOENT) for a group the SA does not have, with
 *    no completion yet unless it had joined;
 *  - the only timers armed are the fallbacks of the trackers' groups that
 *    wait for the SA to create them;
 *  - each tracker's groups hold at the SA exactly the union of their
 *    JOINED members' bits, and the SA's membership of every port is that
 *    union (imc_sa_foreach_group/member), group by group;
 *  - a QP is attached to a group exactly when a JOINED receiving member
 *    uses it, and no attach or detach failed;
 * throughout: no callback after a leave, event sequences as mcast.h
 * allows (nothing after ERROR, REJOINING only after a JOINED, no event
 * twice in a row, a JOINED record that carries the member's MGID and
 * bits). Then every handle leaves: the trackers hold nothing, the SA
 * holds no membership of a port but the orphans below, and once
 * everything is destroyed no timer is left armed.
 *
 * What the protocol cannot settle, and the sweep therefore allows:
 *  - Orphan creates. A create (MGID 0) is not idempotent: when the SA
 *    took it but the port never heard the answer (lost after the retries,
 *    a flap), or took it twice (a duplicate, a retry whose first answer
 *    was lost), the SA holds a group whose MGID nobody else knows, with
 *    the creating port as a member. After an SA restart the MGID may be
 *    one the port knew from before, and its tracker's Deletes of its own
 *    bits there may leave part of the orphan's.
 *  - Trap 67 Reports all lost. The SA deletes a group with its last full
 *    member (IBA 15.2.5.17, o15-0.1.9); a port that holds it without a
 *    full bit hears of it from trap 67 only (or from trap 66 when the
 *    group is created again). When the SA gave up on a Report (every copy
 *    lost; its reports_failed counter), a port may keep JOINED non-full
 *    members of a group the SA no longer has.
 *  - Reordering past a round trip. A copy of a Delete that reaches the SA
 *    after its answer and after the next Set would undo that Set; no
 *    client can prevent it against an SA that does not deduplicate
 *    (OpenSM does not). IB delivers in order on a path; the sweep
 *    reorders packets by at most one cable latency per cable, less than a
 *    round trip, and its SA answers within the client's timeout.
 *
 * Seeds: 200 from seed 1 by default; IMC_SEEDS=N and IMC_SEED_FIRST=S
 * (or --seeds N --first S) change them, IMC_SEED=N (or --seed N) runs one;
 * IMC_SWEEP_TRACE=1 (or --trace) prints every step. A failure prints the
 * seed and the command that replays it. All draws come from one
 * imc_rng per run, each into a local before it is used.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibmcast/fabric.h"
#include "ibmcast/gid.h"
#include "ibmcast/gsi.h"
#include "ibmcast/ipoib_wire.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcast_fabric.h"
#include "ibmcast/packet.h"
#include "ibmcast/rng.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_fabric.h"
#include "ibmcast/topo.h"

#include "sweep_seeds.h"

#define US IMC_NSEC_PER_USEC
#define MS IMC_NSEC_PER_MSEC
#define CM(x) ((uint64_t)UMAD_SA_MCM_COMP_MASK_##x)
#define JOIN_COMPS (CM(MGID) | CM(PORT_GID) | CM(JOIN_STATE))
#define CREATE_COMPS (CM(QKEY) | CM(TCLASS) | CM(PKEY) | CM(FLOW_LABEL) | \
		      CM(SL))
#define RECV_BITS (IMC_JOIN_FULL | IMC_JOIN_NON)
#define FULL_BITS (IMC_JOIN_FULL | IMC_JOIN_SENDONLY_FULL)

#define MAXP 24            /* ports */
#define NQP 2              /* data QPs per port */
#define NPERSIST 3         /* the SA's persistent groups */
#define NPOOL 5            /* fixed MGIDs, created by full joins */
#define MAXCREATED 64      /* MGIDs the SA gave creates, remembered */
#define QKEY 0x1234
#define QKEY_OTHER 0x5678
#define DEFAULT_SEEDS 200
#define QUIET_LIMIT (120 * IMC_NSEC_PER_SEC)

enum kind { K_PERSIST, K_POOL, K_CREATE, K_CREATED };

struct port {
	unsigned idx;
	uint32_t node;
	struct imc_gid gid;
	struct imc_gsi *gsi;
	struct imc_qp *qp1;         /* ours; NULL on the SA's port */
	struct imc_mcast_fabric *mf;
	struct imc_qp *qp[NQP];
	struct imc_timer up;        /* brings a flapped cable back */
	unsigned creates;           /* MGID 0 joins */
};

struct handle {
	unsigned id;
	struct port *p;
	struct imc_mcast_member *m;
	bool live;                  /* joined and not left */
	bool leave_in_cb;           /* leaves itself from a callback */
	bool leave_other_in_cb;     /* leaves another handle from one */
	uint8_t js;
	enum kind kind;
	struct imc_gid want;        /* the MGID asked for; zero: create */
	struct imc_gid mgid;        /* its group's, from JOINED */
	bool has_mgid;
	struct imc_qp *qp;
	unsigned completions;
	unsigned events;
	int last;                   /* last event type, -1: none */
	int status;
	bool joined_once;
	int status_wait;            /* of the last WAITING */
	size_t slot;                /* index in live[] */
};

struct sweep {
	uint64_t seed;
	bool trace;
	struct imc_rng rng;
	char err[1024];
	bool failed;

	/* the run's parameters */
	const char *spec;
	double mad_loss, dup, reorder;
	imc_time_t latency;
	uint32_t sa_rate, sa_queue;
	struct imc_mcast_fabric_config mcfg;
	unsigned steps;
	bool events;                /* restarts, moves, flaps, reregisters */

	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	struct imc_sa_fabric *sf;
	struct port *sm;            /* where the SA runs */
	struct imc_timer rereg;     /* the reregister after a restart */

	struct port ports[MAXP];
	unsigned np;
	struct imc_gid persist[NPERSIST];
	struct imc_gid pool[NPOOL];
	struct imc_gid created[MAXCREATED];
	unsigned ncreated;

	struct handle **h;          /* every handle of the run, by id */
	size_t nh, caph;
	struct handle **live;
	size_t nlive;

	uint64_t reports_failed;    /* of the SAs stopped */
	/* counted for the summary */
	unsigned n_restarts, n_moves, n_flaps, n_rereg, n_orphans;
	unsigned n_failed, n_joined, n_cb_leaves;
	unsigned n_waits;           /* WAITING (-ENOENT) events */
	unsigned n_waiting;         /* handles waiting at quiescence */
	unsigned n_unheard;         /* see "Trap 67 Reports all lost" */
};

static struct sweep S;

/* ------------------------------------------------------------------ */
/* Draws and failures. */

static uint64_t below(uint64_t n)
{
	return imc_rng_below(&S.rng, n);
}

static bool chance(unsigned permille)
{
	return imc_rng_below(&S.rng, 1000) < permille;
}

static void bad(const char *fmt, ...) CMOCKA_PRINTF_ATTRIBUTE(1, 2);

static void bad(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (S.failed)
		return;
	S.failed = true;
	n = snprintf(S.err, sizeof(S.err), "at %" PRIu64 " ns: ",
		     imc_loop_now(S.loop));
	va_start(ap, fmt);
	vsnprintf(S.err + n, sizeof(S.err) - (size_t)n, fmt, ap);
	va_end(ap);
	imc_loop_stop(S.loop);
}

static void trace(const char *fmt, ...) CMOCKA_PRINTF_ATTRIBUTE(1, 2);

static void trace(const char *fmt, ...)
{
	va_list ap;

	if (!S.trace)
		return;
	printf("%10.6f ms  ", (double)imc_loop_now(S.loop) / 1e6);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static const char *gidstr(const struct imc_gid *g, char buf[IMC_GID_STRLEN])
{
	imc_gid_format(g, buf);
	return buf;
}

/* ------------------------------------------------------------------ */
/* Handles. */

static void live_del(struct handle *h)
{
	struct handle *last = S.live[--S.nlive];

	S.live[h->slot] = last;
	last->slot = h->slot;
	h->live = false;
}

static void leave(struct handle *h, const char *why)
{
	trace("leave h%u (port %u, %s)%s", h->id, h->p->idx,
	      imc_mcast_state_str(imc_mcast_member_state(h->m)), why);
	live_del(h);
	imc_mcast_leave(h->m);
	h->m = NULL;
}

static void remember_created(const struct imc_gid *mgid)
{
	for (unsigned i = 0; i < S.ncreated; i++)
		if (imc_gid_equal(&S.created[i], mgid))
			return;
	if (S.ncreated < MAXCREATED)
		S.created[S.ncreated++] = *mgid;
}

static void on_event(void *arg, struct imc_mcast_member *m,
		     const struct imc_mcast_event *ev)
{
	struct handle *h = arg;
	char b[IMC_GID_STRLEN];

	if (!h->live) {
		bad("callback (%s) for handle %u after its leave",
		    imc_mcast_event_str(ev->type), h->id);
		return;
	}
	if (h->m != m)
		bad("callback of handle %u names another member", h->id);
	h->events++;
	trace("event h%u %s status %d%s%s", h->id,
	      imc_mcast_event_str(ev->type), ev->status,
	      ev->rec ? " " : "", ev->rec ? gidstr(&ev->rec->mgid, b) : "");
	if (h->last == IMC_MCAST_EV_ERROR)
		bad("handle %u: %s after its error",
		    h->id, imc_mcast_event_str(ev->type));
	if ((int)ev->type == h->last &&
	    (ev->type != IMC_MCAST_EV_WAITING || ev->status == h->status_wait))
		bad("handle %u: %s twice in a row", h->id,
		    imc_mcast_event_str(ev->type));
	switch (ev->type) {
	case IMC_MCAST_EV_JOINED:
		if (!ev->rec || ev->status) {
			bad("handle %u: JOINED without a record", h->id);
			return;
		}
		if (!imc_gid_is_zero(&h->want) &&
		    !imc_gid_equal(&ev->rec->mgid, &h->want))
			bad("handle %u joined %s, not the MGID it asked for",
			    h->id, gidstr(&ev->rec->mgid, b));
		if (h->has_mgid && !imc_gid_equal(&ev->rec->mgid, &h->mgid))
			bad("handle %u: its group's MGID changed", h->id);
		if ((ev->rec->join_state & h->js) != h->js)
			bad("handle %u: JOINED with JoinState 0x%x, not its 0x%x",
			    h->id, ev->rec->join_state, h->js);
		h->mgid = ev->rec->mgid;
		h->has_mgid = true;
		h->joined_once = true;
		if (h->kind == K_CREATE)
			remember_created(&h->mgid);
		if (!h->completions++)
			S.n_joined++;
		else
			h->completions = 1; /* later events, not completions */
		break;
	case IMC_MCAST_EV_ERROR:
		if (!ev->status)
			bad("handle %u: an error without a status", h->id);
		h->status = ev->status;
		if (!h->completions++)
			S.n_failed++;
		else
			h->completions = 1;
		break;
	case IMC_MCAST_EV_REJOINING:
		if (!h->joined_once)
			bad("handle %u: REJOINING before it ever joined",
			    h->id);
		break;
	case IMC_MCAST_EV_WAITING:
		h->status_wait = ev->status;
		S.n_waits += ev->status == -ENOENT;
		break;
	}
	h->last = (int)ev->type;
	/* Rule 4: a callback may leave its own member, or another. */
	if (h->leave_other_in_cb && S.nlive > 1) {
		uint64_t k = below(S.nlive);
		struct handle *o = S.live[k];

		h->leave_other_in_cb = false;
		if (o != h) {
			S.n_cb_leaves++;
			leave(o, " from another's callback");
		}
	}
	if (h->leave_in_cb) {
		S.n_cb_leaves++;
		leave(h, " from its callback");
	}
}

static struct handle *handle_new(struct port *p)
{
	struct handle *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	if (S.nh == S.caph) {
		size_t n = S.caph ? S.caph * 2 : 256;

		S.h = realloc(S.h, n * sizeof(*S.h));
		S.live = realloc(S.live, n * sizeof(*S.live));
		assert_non_null(S.h);
		assert_non_null(S.live);
		S.caph = n;
	}
	h->id = (unsigned)S.nh;
	h->p = p;
	h->last = -1;
	S.h[S.nh++] = h;
	return h;
}

static uint8_t draw_state(void)
{
	static const uint8_t any[] = {
		IMC_JOIN_FULL, IMC_JOIN_FULL, IMC_JOIN_NON,
		IMC_JOIN_SENDONLY_NON, IMC_JOIN_SENDONLY_FULL,
		IMC_JOIN_FULL | IMC_JOIN_NON,
		IMC_JOIN_NON | IMC_JOIN_SENDONLY_NON,
		IMC_JOIN_FULL | IMC_JOIN_SENDONLY_FULL,
	};
	uint64_t i = below(IMC_ARRAY_SIZE(any));

	return any[i];
}

static void do_join(void)
{
	uint64_t pi = below(S.np);
	struct port *p = &S.ports[pi];
	struct imc_mcast_join_req r;
	struct handle *h;
	uint64_t k = below(100), x;
	uint64_t qsel = below(NQP + 1);
	bool mismatch = chance(60);
	bool no_create = chance(80);
	char b[IMC_GID_STRLEN];
	int rc;

	h = handle_new(p);
	memset(&r, 0, sizeof(r));
	if (k < 35 || (k >= 90 && !S.ncreated)) {
		h->kind = K_PERSIST;
		x = below(NPERSIST);
		r.rec.mgid = S.persist[x];
		r.comp_mask = CM(MGID);
		if (chance(300)) {
			/* the group's own Q_Key, or a wrong one */
			r.rec.qkey = mismatch ? QKEY_OTHER : IMC_SA_IPOIB_QKEY;
			r.comp_mask |= CM(QKEY);
		}
		if (chance(200)) {
			/* MTU 2048 or more: the groups have 2048 */
			r.rec.mtu_sel = mismatch ? UMAD_SA_SELECTOR_GREATER_THAN :
				UMAD_SA_SELECTOR_EXACTLY;
			r.rec.mtu = IMC_MTU_2048;
			r.comp_mask |= CM(MTU_SEL) | CM(MTU);
		}
	} else if (k < 65) {
		h->kind = K_POOL;
		x = below(NPOOL);
		r.rec.mgid = S.pool[x];
	} else if (k < 90) {
		h->kind = K_CREATE;
		p->creates++;
	} else {
		h->kind = K_CREATED;
		x = below(S.ncreated);
		r.rec.mgid = S.created[x];
	}
	if (h->kind != K_PERSIST) {
		r.rec.qkey = mismatch ? QKEY_OTHER : QKEY;
		r.rec.pkey = 0xffff;
		r.comp_mask = CM(MGID);
		/* Creates need these (o15-0.2.3); joins of a group that
		 * is gone fail without them (INSUF_COMPS). */
		if (h->kind == K_CREATE || h->kind == K_POOL || no_create)
			r.comp_mask |= CREATE_COMPS;
	}
	/* Non-full members join any group: one that loses its last full
	 * member (trap 67) leaves them WAITING until it is created again
	 * (trap 66, or the fallback). */
	h->js = draw_state();
	if (h->kind == K_CREATE && !(h->js & FULL_BITS))
		h->js |= IMC_JOIN_FULL;
	r.join_state = h->js;
	h->want = r.rec.mgid;
	if (qsel < NQP)
		h->qp = p->qp[qsel];
	r.qp = h->qp;
	h->leave_in_cb = chance(40);
	h->leave_other_in_cb = chance(15);
	rc = imc_mcast_join(imc_mcast_fabric_tracker(p->mf), &r, on_event, h,
			    &h->m);
	if (rc) {
		bad("imc_mcast_join: %d", rc);
		return;
	}
	h->live = true;
	h->slot = S.nlive;
	S.live[S.nlive++] = h;
	trace("join h%u port %u %s js 0x%x kind %d qp %s%s%s", h->id, p->idx,
	      imc_gid_is_zero(&h->want) ? "0" : gidstr(&h->want, b), h->js,
	      h->kind, h->qp ? "yes" : "no", mismatch ? " mismatch" : "",
	      h->leave_in_cb ? " leaves-in-cb" : "");
}

static void do_leave(void)
{
	uint64_t k;

	if (!S.nlive)
		return;
	k = below(S.nlive);
	leave(S.live[k], "");
}

/* Applications let go of the members that failed. */
static void leave_failed(struct port *p)
{
	for (size_t i = 0; i < S.nlive;) {
		struct handle *h = S.live[i];

		if ((!p || h->p == p) &&
		    imc_mcast_member_state(h->m) == IMC_MCAST_FAILED)
			leave(h, " (failed)");
		else
			i++;
	}
}

/* ------------------------------------------------------------------ */
/* The world. */

static void qp1_recv(struct imc_qp *qp, const struct imc_ud_recv *r,
		     void *ctx)
{
	struct port *p = ctx;

	(void)qp;
	imc_gsi_input(p->gsi, r);
}

static void data_recv(struct imc_qp *qp, const struct imc_ud_recv *r,
		      void *ctx)
{
	(void)qp;
	(void)r;
	(void)ctx;
}

static void own_qp1(struct port *p)
{
	int rc = imc_qp_create(S.f, p->node, 1, IMC_QP1, IMC_QP1_QKEY, 0xffff,
			       qp1_recv, p, &p->qp1);

	assert_int_equal(rc, 0);
	imc_gsi_set_qp(p->gsi, p->qp1);
}

static void drop_qp1(struct port *p)
{
	imc_gsi_set_qp(p->gsi, NULL);
	imc_qp_destroy(p->qp1);
	p->qp1 = NULL;
}

static void sa_start(struct port *p)
{
	static const struct imc_sa_bcast bc[NPERSIST] = {
		{ .pkey = 0xffff, .scope = 2, .qkey = IMC_SA_IPOIB_QKEY,
		  .mtu = IMC_MTU_2048, .rate = 3, .life = 18 },
		{ .pkey = 0xffff, .scope = 5, .qkey = IMC_SA_IPOIB_QKEY,
		  .mtu = IMC_MTU_2048, .rate = 3, .life = 18 },
		{ .pkey = 0xffff, .scope = 8, .qkey = IMC_SA_IPOIB_QKEY,
		  .mtu = IMC_MTU_2048, .rate = 3, .life = 18 },
	};
	struct imc_sa_fabric_config fc;
	int rc;

	imc_sa_fabric_config_init(&fc);
	fc.sa.bcast = bc;
	fc.sa.n_bcast = NPERSIST;
	fc.sa.service_rate = S.sa_rate;
	if (S.sa_queue)
		fc.sa.queue_max = S.sa_queue;
	fc.sa.hash_seed = S.seed;
	fc.other_mad = imc_gsi_input;
	fc.other_ctx = p->gsi;
	rc = imc_sa_fabric_create(S.f, &fc, &S.sf);
	if (rc) {
		bad("imc_sa_fabric_create: %d", rc);
		return;
	}
	imc_gsi_set_qp(p->gsi, imc_sa_fabric_qp(S.sf));
	S.sm = p;
	for (unsigned i = 0; i < NPERSIST; i++)
		assert_int_equal(imc_ipoib_bcast_mgid(bc[i].pkey, bc[i].scope,
						      &S.persist[i]), 0);
}

/* Reports the SA gave up on (every copy lost), over its lives. */
static uint64_t reports_failed(void)
{
	struct imc_sa_stats st;

	imc_sa_get_stats(imc_sa_fabric_sa(S.sf), &st);
	return S.reports_failed + st.reports_failed;
}

static void sa_stop(void)
{
	S.reports_failed = reports_failed();
	imc_gsi_set_qp(S.sm->gsi, NULL);
	imc_sa_fabric_destroy(S.sf);
	S.sf = NULL;
}

static void on_rereg(struct imc_timer *tm)
{
	(void)tm;
	trace("reregister all (the new SA's SM)");
	assert_int_equal(imc_fabric_client_reregister(S.f, IMC_TOPO_NONE, 0),
			 0);
}

/* The SA restarts in place, empty; a reregister of every port follows
 * after a while, as a new SM starting there gives. */
static void do_restart(void)
{
	uint64_t d = below(20 * MS);

	S.n_restarts++;
	trace("SA restart; reregister in %" PRIu64 " ns", d);
	sa_stop();
	sa_start(S.sm);
	if (!imc_timer_armed(&S.rereg))
		imc_timer_arm_in(S.loop, &S.rereg, d);
}

static bool port_active(const struct port *p)
{
	struct imc_port_attr pa;

	return !imc_fabric_port_attr(S.f, p->node, 1, &pa) &&
	       pa.state == IMC_PORT_ACTIVE;
}

/* The SM and its SA move to another host: every port hears an SM
 * change. */
static void do_move(void)
{
	uint64_t k = below(S.np);
	struct port *to = &S.ports[k];
	struct port *from = S.sm;

	if (to == from || !port_active(to) || !port_active(from))
		return;
	S.n_moves++;
	trace("SA moves from port %u to port %u", from->idx, to->idx);
	sa_stop();
	own_qp1(from);
	drop_qp1(to);
	assert_int_equal(imc_fabric_sm_move(S.f, to->node, 1), 0);
	sa_start(to);
}

static void on_up(struct imc_timer *tm)
{
	struct port *p = imc_container_of(tm, struct port, up);

	trace("cable of port %u up", p->idx);
	assert_int_equal(imc_fabric_link_set(S.f, p->node, 1, true), 0);
}

static void do_flap(void)
{
	uint64_t k = below(S.np);
	struct port *p = &S.ports[k];
	/* Shorter and longer than the SM's sweep (1 ms): the SA keeps or
	 * drops the port's memberships. */
	uint64_t d = 100 * US + below(6 * MS);

	if (imc_timer_armed(&p->up))
		return;
	S.n_flaps++;
	trace("cable of port %u down for %" PRIu64 " ns", p->idx, d);
	assert_int_equal(imc_fabric_link_set(S.f, p->node, 1, false), 0);
	imc_timer_arm_in(S.loop, &p->up, d);
}

static void do_rereg(bool all)
{
	uint64_t k = below(S.np);
	struct port *p = &S.ports[k];

	S.n_rereg++;
	if (all) {
		trace("reregister all");
		assert_int_equal(imc_fabric_client_reregister(
					 S.f, IMC_TOPO_NONE, 0), 0);
		return;
	}
	if (!port_active(p))
		return;
	trace("reregister port %u", p->idx);
	assert_int_equal(imc_fabric_client_reregister(S.f, p->node, 1), 0);
}

static void do_pkey_event(void)
{
	uint64_t k = below(S.np);
	struct port *p = &S.ports[k];
	struct imc_port_attr pa;

	if (imc_fabric_port_attr(S.f, p->node, 1, &pa))
		return;
	trace("P_Key table of port %u set again", p->idx);
	assert_int_equal(imc_fabric_pkey_set(S.f, p->node, 1, pa.pkeys,
					     pa.npkeys), 0);
}

/* The run's parameters, all from the seed. */
static void draw_params(void)
{
	static const char *const specs[] = {
		"switch:hosts=4",
		"fat-tree:leaves=2,hosts=3,spines=2",
		"fat-tree:leaves=3,hosts=3,spines=2",
		"fat-tree:leaves=4,hosts=2,spines=2",
		"fat-tree:leaves=4,hosts=4,spines=2",
	};
	static const unsigned loss_pct[] = { 0, 0, 5, 10, 20, 30 };
	uint64_t x;
	struct imc_mcast_config *mc = &S.mcfg.mcast;
	struct imc_sa_client_config *cc = &S.mcfg.client;

	x = below(IMC_ARRAY_SIZE(specs));
	S.spec = specs[x];
	x = below(IMC_ARRAY_SIZE(loss_pct));
	S.mad_loss = loss_pct[x] / 100.0;
	S.dup = chance(500) ? 0 : 0.02 * (double)(1 + below(5));
	S.reorder = chance(500) ? 0 : 0.05 * (double)(1 + below(4));
	S.latency = 100 + below(900);
	S.events = !chance(150);
	S.sa_rate = 0;
	S.sa_queue = 0;
	if (chance(250)) {
		/* a finite SA: drops when its queue is full, but every
		 * answer within the timeout (2 ms of queue at most) */
		S.sa_rate = 20000 + (uint32_t)below(80000);
		x = below(S.sa_rate / 500);
		S.sa_queue = 8 + (uint32_t)x;
	}
	imc_mcast_fabric_config_init(&S.mcfg);
	mc->rejoin = chance(300) ? IMC_MCAST_REJOIN_IMMEDIATE :
				   IMC_MCAST_REJOIN_PACED;
	mc->rejoin_spread = below(20 * MS);
	mc->rejoin_window = 1 + (unsigned)below(16);
	cc->timeout = 5 * MS + below(15 * MS);
	cc->max_timeout = 80 * MS;
	cc->retries = 2 + (unsigned)below(7);
	cc->window = chance(300) ? 1 + (unsigned)below(4) :
				   IMC_SA_DEFAULT_WINDOW;
	S.steps = 150 + (unsigned)below(450);
}

static void world_start(void)
{
	struct imc_fabric_config fc;
	struct imc_link_params lp;
	const struct imc_topo *t;
	unsigned sm = 0;
	double host_loss;

	assert_int_equal(imc_topo_generate(S.spec, &S.t, NULL, 0), 0);
	assert_int_equal(imc_loop_create_virtual(0, &S.loop), 0);
	imc_fabric_config_default(&fc);
	fc.seed = S.seed;
	fc.link.latency = S.latency;
	fc.link.dup = S.dup;
	fc.link.reorder = S.reorder;
	/* Held back by at most one cable's latency: less than a round trip
	 * (see the top of the file). */
	fc.link.reorder_delay = S.latency;
	assert_int_equal(imc_fabric_create(S.t, S.loop, &fc, &S.f), 0);
	assert_int_equal(imc_fabric_bring_up(S.f), 0);
	assert_int_equal(imc_loop_run(S.loop), 0);
	t = S.t;
	/* A MAD crosses two HCA cables: each loses 1 - sqrt(1 - loss), so
	 * that a MAD is lost with mad_loss. */
	host_loss = 1.0;
	if (S.mad_loss > 0) {
		/* sqrt without libm: a few Newton steps */
		double v = 1.0 - S.mad_loss, s = 1.0;

		for (int i = 0; i < 30; i++)
			s = 0.5 * (s + v / s);
		host_loss = 1.0 - s;
	}
	lp = fc.link;
	lp.loss = S.mad_loss > 0 ? host_loss : 0;
	S.np = 0;
	for (uint32_t n = 0; n < t->nnodes; n++) {
		struct port *p;
		struct imc_port_attr pa;

		if (t->node[n].type != IMC_NODE_HCA)
			continue;
		assert_true(S.np < MAXP);
		p = &S.ports[S.np];
		memset(p, 0, sizeof(*p));
		p->idx = S.np++;
		p->node = n;
		imc_timer_init(&p->up, on_up);
		assert_int_equal(imc_fabric_port_attr(S.f, n, 1, &pa), 0);
		p->gid = pa.gid;
		assert_int_equal(imc_gsi_create_shared(NULL, &p->gsi), 0);
		if (n == t->sm_node)
			sm = p->idx;
		else
			own_qp1(p);
		assert_int_equal(imc_fabric_link_params_set(S.f, n, 1, &lp),
				 0);
	}
	sa_start(&S.ports[sm]);
	for (unsigned i = 0; i < NPERSIST; i++)
		assert_true(imc_gid_is_multicast(&S.persist[i]));
	for (unsigned i = 0; i < S.np; i++) {
		struct port *p = &S.ports[i];
		struct imc_mcast_fabric_config cfg = S.mcfg;

		cfg.mcast.seed = S.seed * 1000 + i;
		cfg.client.seed = S.seed * 1000 + 500 + i;
		assert_int_equal(imc_mcast_fabric_create(S.f, p->node, 1,
							 p->gsi, &cfg, &p->mf),
				 0);
		for (unsigned q = 0; q < NQP; q++)
			assert_int_equal(imc_qp_create(S.f, p->node, 1, 0,
						       QKEY, 0xffff, data_recv,
						       p, &p->qp[q]), 0);
	}
	for (unsigned i = 0; i < NPOOL; i++) {
		char s[64];

		snprintf(s, sizeof(s), "ff15:1234:5eed::%u", i + 1);
		assert_int_equal(imc_gid_parse(s, &S.pool[i]), 0);
	}
}

static void world_stop(void)
{
	size_t left;

	for (unsigned i = 0; i < S.np; i++) {
		struct port *p = &S.ports[i];

		imc_timer_cancel(S.loop, &p->up);
		imc_mcast_fabric_destroy(p->mf);
		for (unsigned q = 0; q < NQP; q++)
			imc_qp_destroy(p->qp[q]);
		if (p->qp1)
			drop_qp1(p);
	}
	imc_timer_cancel(S.loop, &S.rereg);
	if (S.sf)
		sa_stop();
	for (unsigned i = 0; i < S.np; i++)
		imc_gsi_destroy(S.ports[i].gsi);
	imc_fabric_destroy(S.f);
	left = imc_loop_destroy(S.loop);
	if (left && !S.failed) {
		S.failed = true;
		snprintf(S.err, sizeof(S.err),
			 "%zu timers left armed once everything was destroyed",
			 left);
	}
	imc_topo_destroy(S.t);
	for (size_t i = 0; i < S.nh; i++)
		free(S.h[i]);
	free(S.h);
	free(S.live);
	S.h = S.live = NULL;
	S.nh = S.caph = S.nlive = 0;
}

static size_t in_flight(void)
{
	size_t n = 0;

	for (unsigned i = 0; i < S.np; i++) {
		struct imc_mcast_stats st;

		imc_mcast_get_stats(imc_mcast_fabric_tracker(S.ports[i].mf),
				    &st);
		n += st.in_flight;
	}
	return n;
}

/* Runs until nothing is armed (QUIET_LIMIT at most). */
static void quiesce(const char *what)
{
	struct imc_loop_stats ls;
	size_t absent = 0, waiting_ports = 0;

	if (S.failed)
		return;
	imc_loop_run_until(S.loop, imc_loop_now(S.loop) + QUIET_LIMIT);
	/* A group that waits for the SA tries again now and then (every
	 * 33 s at most): end between two tries, with nothing in flight. */
	for (unsigned k = 0; k < 4000 && in_flight(); k++)
		imc_loop_run_until(S.loop, imc_loop_now(S.loop) + 10 * MS);
	imc_loop_get_stats(S.loop, &ls);
	/* Groups whose members wait for the SA to create them keep a
	 * fallback timer each, and their port may retry its trap 66
	 * subscription; nothing else may be armed. */
	for (unsigned i = 0; i < S.np; i++) {
		struct imc_mcast_stats st;

		imc_mcast_get_stats(imc_mcast_fabric_tracker(S.ports[i].mf),
				    &st);
		absent += st.groups_absent;
		waiting_ports += st.groups_absent > 0;
	}
	if (!S.failed && (ls.timers_armed < absent ||
			  ls.timers_armed > absent + waiting_ports))
		bad("%s: %zu timers still armed after %llu s (%zu groups wait for the SA)",
		    what, ls.timers_armed,
		    (unsigned long long)(QUIET_LIMIT / IMC_NSEC_PER_SEC),
		    absent);
}

/* ------------------------------------------------------------------ */
/* Checks. */

struct expect {
	unsigned port;
	struct imc_gid mgid;
	uint8_t bits;           /* of the JOINED handles */
	bool seen_sa;
	bool seen_tracker;
};

struct check {
	struct expect *e;
	size_t n, cap;
	unsigned port;          /* for the tracker walk */
};

static struct expect *expect_get(struct check *c, unsigned port,
				 const struct imc_gid *mgid, bool add)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].port == port && imc_gid_equal(&c->e[i].mgid, mgid))
			return &c->e[i];
	if (!add)
		return NULL;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->e = realloc(c->e, c->cap * sizeof(*c->e));
		assert_non_null(c->e);
	}
	memset(&c->e[c->n], 0, sizeof(c->e[c->n]));
	c->e[c->n].port = port;
	c->e[c->n].mgid = *mgid;
	return &c->e[c->n++];
}

static bool mgid_fixed(const struct imc_gid *mgid)
{
	for (unsigned i = 0; i < NPERSIST; i++)
		if (imc_gid_equal(mgid, &S.persist[i]))
			return true;
	for (unsigned i = 0; i < NPOOL; i++)
		if (imc_gid_equal(mgid, &S.pool[i]))
			return true;
	return false;
}

static struct port *port_by_gid(const struct imc_gid *gid)
{
	for (unsigned i = 0; i < S.np; i++)
		if (imc_gid_equal(&S.ports[i].gid, gid))
			return &S.ports[i];
	return NULL;
}

static void tracker_group(void *arg, const struct imc_mcast_group_info *g)
{
	struct check *c = arg;
	struct expect *e = expect_get(c, c->port, &g->rec.mgid, true);
	uint8_t want = e->bits;
	char b[IMC_GID_STRLEN];

	e->seen_tracker = true;
	if (g->waiting || (!want && !g->join_state && g->wanted &&
			   !(g->wanted & FULL_BITS))) {
		/* (or a try of its fallback under way) */
		/* its members WAITING (check_waiting()), nothing held */
		if (want || g->join_state || g->joined ||
		    (g->wanted & FULL_BITS))
			bad("port %u group %s waits for the SA, holding 0x%x (wanted 0x%x), its JOINED members 0x%x",
			    c->port, gidstr(&g->rec.mgid, b), g->join_state,
			    g->wanted, want);
	} else if (g->wanted != want || g->join_state != want ||
		   (want && !g->joined))
		bad("port %u group %s: the tracker holds 0x%x (wanted 0x%x, %s), its JOINED members 0x%x",
		    c->port, gidstr(&g->rec.mgid, b), g->join_state, g->wanted,
		    g->joined ? "joined" : "not joined", want);
	/* QPs: attached exactly for JOINED receiving members. */
	for (unsigned q = 0; q < NQP && !S.failed; q++) {
		struct imc_qp *qp = S.ports[c->port].qp[q];
		bool used = false;
		int rc;

		for (size_t i = 0; i < S.nlive; i++) {
			const struct handle *h = S.live[i];

			if (h->p->idx == c->port && h->qp == qp &&
			    (h->js & RECV_BITS) && h->has_mgid &&
			    imc_gid_equal(&h->mgid, &g->rec.mgid) &&
			    imc_mcast_member_state(h->m) == IMC_MCAST_JOINED)
				used = true;
		}
		if (!g->rec.mlid)
			continue;
		rc = imc_qp_attach(qp, &g->rec.mgid, g->rec.mlid);
		if (used && rc != -EEXIST)
			bad("port %u QP %u is not attached to %s (MLID 0x%x) though a JOINED member uses it",
			    c->port, q, gidstr(&g->rec.mgid, b), g->rec.mlid);
		if (!used && rc != 0)
			bad("port %u QP %u is attached to %s with no JOINED member on it (%d)",
			    c->port, q, gidstr(&g->rec.mgid, b), rc);
		if (!used && rc == 0)
			imc_qp_detach(qp, &g->rec.mgid, g->rec.mlid);
	}
}

struct sa_walk {
	struct check *c;
	const struct imc_sa_group_info *g;
};

/* A port's membership is checked where its tracker has JOINED members
 * in the group. Elsewhere it can only be an orphan create: an MGID the SA
 * chose, a port that made creates. An SA started again may choose an
 * MGID the port's tracker knew from before, even one it still keeps for
 * FAILED members or is re-joining: the tracker's Deletes of its own bits
 * may then take the orphan's full bit and leave the others. */
static int sa_member(void *arg, const struct imc_sa_member_info *m)
{
	struct sa_walk *w = arg;
	const struct imc_gid *mgid = &w->g->rec.mgid;
	struct port *p = port_by_gid(&m->port_gid);
	char b[IMC_GID_STRLEN], b2[IMC_GID_STRLEN];
	struct expect *e;

	if (!p) {
		bad("the SA has a member %s of %s that is no port of ours",
		    gidstr(&m->port_gid, b), gidstr(mgid, b2));
		return 0;
	}
	e = expect_get(w->c, p->idx, mgid, false);
	if (e)
		e->seen_sa = true;
	/* A group the tracker keeps for FAILED members only (its bits
	 * given back) may share the MGID of an orphan: judged as one. */
	if (e && (e->bits || mgid_fixed(mgid))) {
		if (e->bits != m->join_state)
			bad("the SA holds 0x%x of port %u in %s; its JOINED members have 0x%x",
			    m->join_state, p->idx, gidstr(mgid, b), e->bits);
		return 0;
	}
	if (mgid_fixed(mgid) || !p->creates) {
		bad("the SA holds 0x%x of port %u in %s, a group its tracker does not have",
		    m->join_state, p->idx, gidstr(mgid, b));
		return 0;
	}
	S.n_orphans++;
	return 0;
}

static int sa_group(void *arg, const struct imc_sa_group_info *g)
{
	struct check *c = arg;
	struct sa_walk w = { c, g };

	assert_int_equal(imc_sa_foreach_member(imc_sa_fabric_sa(S.sf),
					       &g->rec.mgid, sa_member, &w),
			 0);
	return 0;
}

/* A handle may wait after quiescence only for a group the SA does not
 * have (a fallback runs every 33 s at most, so one that exists would
 * have been joined by now), when it has no full bit to create it. */
static void check_waiting(const struct handle *h)
{
	struct imc_sa_group_info gi;
	char b[IMC_GID_STRLEN];

	if (h->last != IMC_MCAST_EV_WAITING || h->status_wait != -ENOENT)
		bad("handle %u is WAITING but was last told %d (%d)", h->id,
		    h->last, h->status_wait);
	else if (h->js & FULL_BITS)
		bad("handle %u waits with a full bit 0x%x", h->id, h->js);
	else if (h->completions != (h->joined_once ? 1u : 0u))
		bad("handle %u waits with %u completions", h->id,
		    h->completions);
	else if (imc_sa_group_get(imc_sa_fabric_sa(S.sf), &h->want, &gi) == 0)
		bad("handle %u waits for %s, which the SA has", h->id,
		    gidstr(&h->want, b));
	else
		S.n_waiting++;
}

static void check_quiet(void)
{
	struct check c = { 0 };
	char b[IMC_GID_STRLEN];

	if (S.failed)
		return;
	/* Handles. */
	for (size_t i = 0; i < S.nlive && !S.failed; i++) {
		struct handle *h = S.live[i];
		enum imc_mcast_state st = imc_mcast_member_state(h->m);

		/* (or trying again: a fallback may be under way when the
		 * quiet time ends) */
		if (st == IMC_MCAST_WAITING ||
		    ((st == IMC_MCAST_PENDING || st == IMC_MCAST_REJOINING) &&
		     h->last == IMC_MCAST_EV_WAITING))
			check_waiting(h);
		else if (h->completions != 1)
			bad("handle %u: %u completions", h->id,
			    h->completions);
		else if (st == IMC_MCAST_JOINED)
			h->last == IMC_MCAST_EV_JOINED ? (void)0 :
			bad("handle %u is JOINED but was last told %d",
			    h->id, h->last);
		else if (st == IMC_MCAST_FAILED)
			h->last == IMC_MCAST_EV_ERROR ? (void)0 :
			bad("handle %u is FAILED but was last told %d",
			    h->id, h->last);
		else
			bad("handle %u is %s after quiescence", h->id,
			    imc_mcast_state_str(st));
		if (st == IMC_MCAST_JOINED)
			expect_get(&c, h->p->idx, &h->mgid, true)->bits |=
				h->js;
	}
	/* Each tracker against its members. */
	for (unsigned i = 0; i < S.np && !S.failed; i++) {
		struct imc_mcast_stats st;
		struct imc_mcast *t = imc_mcast_fabric_tracker(S.ports[i].mf);

		c.port = i;
		assert_int_equal(imc_mcast_foreach_group(t, tracker_group, &c),
				 0);
		imc_mcast_get_stats(t, &st);
		if (st.in_flight)
			bad("port %u: %zu requests in flight", i,
			    st.in_flight);
		if (st.attach_errors || st.detach_errors)
			bad("port %u: %" PRIu64 " attach and %" PRIu64
			    " detach errors", i, st.attach_errors,
			    st.detach_errors);
	}
	/* The SA against the trackers' members. */
	if (!S.failed)
		assert_int_equal(imc_sa_foreach_group(imc_sa_fabric_sa(S.sf),
						      sa_group, &c), 0);
	for (size_t i = 0; i < c.n && !S.failed; i++) {
		if (!c.e[i].bits)
			continue;
		if (!c.e[i].seen_sa && !(c.e[i].bits & FULL_BITS) &&
		    reports_failed())
			S.n_unheard++; /* see "Trap 67 Reports all lost" */
		else if (!c.e[i].seen_sa)
			bad("port %u has JOINED members of %s (0x%x) the SA does not hold",
			    c.e[i].port, gidstr(&c.e[i].mgid, b), c.e[i].bits);
		else if (!c.e[i].seen_tracker)
			bad("port %u has JOINED members of %s its tracker does not list",
			    c.e[i].port, gidstr(&c.e[i].mgid, b));
	}
	free(c.e);
}

/* Every handle gone: nothing in the trackers, the SA only with orphan
 * creates. */
static void check_empty(void)
{
	struct check c = { 0 };
	unsigned orphans = S.n_orphans;

	if (S.failed)
		return;
	for (unsigned i = 0; i < S.np && !S.failed; i++) {
		struct imc_mcast_stats st;

		imc_mcast_get_stats(imc_mcast_fabric_tracker(S.ports[i].mf),
				    &st);
		if (st.groups || st.members || st.in_flight)
			bad("port %u keeps %zu groups, %zu members, %zu requests after every leave",
			    i, st.groups, st.members, st.in_flight);
	}
	S.n_orphans = 0;
	if (!S.failed)
		assert_int_equal(imc_sa_foreach_group(imc_sa_fabric_sa(S.sf),
						      sa_group, &c), 0);
	free(c.e);
	S.n_orphans = orphans;
}

/* ------------------------------------------------------------------ */
/* One run. */

static void step(void)
{
	uint64_t r = below(1000);

	if (r < 380) {
		do_join();
	} else if (r < 640) {
		do_leave();
	} else if (r < 670) {
		uint64_t k = below(S.np);

		leave_failed(&S.ports[k]);
	} else if (!S.events) {
		/* time passes */
	} else if (r < 700) {
		do_rereg(false);
	} else if (r < 708) {
		do_rereg(true);
	} else if (r < 750) {
		do_flap();
	} else if (r < 758) {
		do_restart();
	} else if (r < 764) {
		do_move();
	} else if (r < 772) {
		do_pkey_event();
	}
}

static void heal(void)
{
	for (unsigned i = 0; i < S.np; i++) {
		struct port *p = &S.ports[i];

		if (imc_timer_armed(&p->up)) {
			imc_timer_cancel(S.loop, &p->up);
			assert_int_equal(imc_fabric_link_set(S.f, p->node, 1,
							     true), 0);
		}
	}
}

static void summary(void)
{
	printf("  seed %" PRIu64 ": %s, %u ports, loss %.0f%% dup %.2f reorder %.2f, SA %s%" PRIu32 "/s q%" PRIu32 ", %s spread %.1fms window %u, timeout %.1fms retries %u window %u, %u steps, %zu handles (%u joined, %u failed, %u left in callbacks), %u restarts, %u moves, %u flaps, %u reregisters, %u orphans\n",
	       S.seed, S.spec, S.np, S.mad_loss * 100, S.dup, S.reorder,
	       S.sa_rate ? "" : "rate ", S.sa_rate, S.sa_queue,
	       S.mcfg.mcast.rejoin == IMC_MCAST_REJOIN_PACED ? "paced" :
							       "immediate",
	       (double)S.mcfg.mcast.rejoin_spread / 1e6,
	       S.mcfg.mcast.rejoin_window,
	       (double)S.mcfg.client.timeout / 1e6, S.mcfg.client.retries,
	       S.mcfg.client.window, S.steps, S.nh, S.n_joined, S.n_failed,
	       S.n_cb_leaves, S.n_restarts, S.n_moves, S.n_flaps, S.n_rereg,
	       S.n_orphans);
}

/* Totals over the seeds run, for the last line. */
static struct {
	uint64_t handles, joined, failed, cb_leaves, restarts, moves, flaps,
		rereg, orphans, steps, waits, waiting, unheard;
} T;

static void add_totals(void)
{
	T.handles += S.nh;
	T.joined += S.n_joined;
	T.failed += S.n_failed;
	T.cb_leaves += S.n_cb_leaves;
	T.restarts += S.n_restarts;
	T.moves += S.n_moves;
	T.flaps += S.n_flaps;
	T.rereg += S.n_rereg;
	T.orphans += S.n_orphans;
	T.steps += S.steps;
	T.waits += S.n_waits;
	T.waiting += S.n_waiting;
	T.unheard += S.n_unheard;
}

static bool run_seed(uint64_t seed, bool trace_on, bool verbose)
{
	memset(&S, 0, sizeof(S));
	S.seed = seed;
	S.trace = trace_on;
	imc_rng_seed(&S.rng, seed);
	imc_timer_init(&S.rereg, on_rereg);
	draw_params();
	world_start();
	for (unsigned i = 0; i < S.steps && !S.failed; i++) {
		uint64_t d = chance(250) ? 0 : below(3 * MS);

		imc_loop_run_until(S.loop, imc_loop_now(S.loop) + d);
		if (!S.failed)
			step();
	}
	heal();
	quiesce("after the steps");
	check_quiet();
	/* Applications clean up: every handle leaves, in random order. */
	while (S.nlive && !S.failed)
		do_leave();
	quiesce("after every leave");
	check_empty();
	if (verbose || S.failed)
		summary();
	add_totals();
	world_stop();
	return !S.failed;
}

/* ------------------------------------------------------------------ */

static struct sweep_seeds seeds = { .first = 1, .count = DEFAULT_SEEDS };
static bool arg_trace, arg_verbose;

static void test_sweep(void **state)
{
	unsigned nfail = 0;
	uint64_t first_fail = 0;
	struct timespec a, b;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (uint64_t i = 0; i < (seeds.one ? 1 : seeds.count); i++) {
		uint64_t seed = seeds.one ? seeds.seed : seeds.first + i;

		if (run_seed(seed, arg_trace, arg_verbose))
			continue;
		printf("mcast_sweep: seed %" PRIu64 " failed: %s\n"
		       "  replay: IMC_SEED=%" PRIu64
		       " ctest --test-dir build -R mcast_sweep --output-on-failure\n"
		       "      or: build/tests/test_mcast_sweep --seed %" PRIu64
		       " --trace\n", seed, S.err, seed, seed);
		if (!nfail++)
			first_fail = seed;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("mcast_sweep: %" PRIu64 " seeds from %" PRIu64 ", %u failed, %.2f s\n"
	       "  %" PRIu64 " steps, %" PRIu64 " joins (%" PRIu64 " completed JOINED, %" PRIu64
	       " ERROR, %" PRIu64 " leaves from callbacks), %" PRIu64
	       " SA restarts, %" PRIu64 " SA moves, %" PRIu64 " flaps, %" PRIu64
	       " reregisters, %" PRIu64 " orphan creates\n"
	       "  %" PRIu64 " WAITING for a group the SA did not have, %" PRIu64
	       " still waiting at quiescence, %" PRIu64
	       " JOINED after a trap 67 the SA gave up on\n",
	       seeds.one ? 1 : seeds.count, seeds.one ? seeds.seed : seeds.first, nfail,
	       (double)(b.tv_sec - a.tv_sec) +
		       (double)(b.tv_nsec - a.tv_nsec) / 1e9,
	       T.steps, T.handles, T.joined, T.failed, T.cb_leaves,
	       T.restarts, T.moves, T.flaps, T.rereg, T.orphans, T.waits,
	       T.waiting, T.unheard);
	if (nfail)
		fail_msg("%u seeds failed, the first %" PRIu64, nfail,
			 first_fail);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: test_mcast_sweep [--seed N | --first N --seeds N] [--trace] [--verbose]\n"
		"  env: IMC_SEED, IMC_SEED_FIRST, IMC_SEEDS, IMC_SWEEP_TRACE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep),
	};
	const char *e;

	if (!sweep_seeds_env(&seeds))
		usage();
	if ((e = getenv("IMC_SWEEP_TRACE")) && *e && strcmp(e, "0"))
		arg_trace = true;
	for (int i = 1; i < argc; i++) {
		int taken = sweep_seeds_arg(&seeds, argc, argv, &i);

		if (taken < 0)
			usage();
		if (taken > 0)
			continue;
		if (!strcmp(argv[i], "--trace")) {
			arg_trace = true;
		} else if (!strcmp(argv[i], "--verbose")) {
			arg_verbose = true;
		} else {
			usage();
		}
	}
	if (arg_trace)
		arg_verbose = true;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
