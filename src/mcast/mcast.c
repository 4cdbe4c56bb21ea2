/* Join tracker: many local joins, one SA membership per port and group
 * (see ibmcast/mcast.h).
 *
 * A member (struct imc_mcast_member) changes state only through
 * mct_mstate(), as the table in ibmcast/mcast.h says (one copy: its
 * allowed[] is that table's). FAILED is terminal until
 * imc_mcast_leave().
 *
 * PENDING and REJOINING members sit on their group's pending list, the
 * others on its member list. A member that is not FAILED counts in its
 * group's wanted bits (cnt[]).
 *
 * A group serializes its SA requests: at most one Set or Delete is in
 * flight, and a join or leave meanwhile only changes the wanted bits; the
 * group is reconciled when the request completes. mct_gstate():
 *
 *   from     to       when
 *   IDLE     SET      bits wanted but not held, or a create: one Set
 *   IDLE     DELETE   bits held that no member wants: one Delete
 *   IDLE     PACE     port up, reregister, SM or P_Key change: a re-join
 *                     after a random delay (also after an answer to a
 *                     request sent before such an event)
 *   SET      IDLE     answered or failed; never canceled by a join or a
 *   DELETE   IDLE       leave, so the SA and the group agree on what is
 *   REJOIN   IDLE       held
 *   PACE     REJOIN   its delay passed and the window has room
 *   PACE     WINDOW   its delay passed, the window is full
 *   WINDOW   REJOIN   a re-join of the port completed: room
 *   PACE|WINDOW IDLE  no member waits for the re-join any more
 *   IDLE     PROBE    a Set with no full bit refused REQ_INVALID, or a
 *                     Delete refused that leaves only non-full bits: a
 *                     Get of the MGID tells whether the group exists
 *   PROBE    IDLE     answered: found (the Set again, once), failed
 *   IDLE     ABSENT   the Get said NO_RECORDS: members WAITING
 *   ABSENT   IDLE     trap 66, fallback timer, a new join, or nobody
 *                     waits (then PACE or reconcile)
 *   any      DOWN     port down: requests canceled, what was held
 *                     in doubt (the SA may keep it: a short flap)
 *   DOWN     PACE     port up with wanted bits
 *   DOWN     IDLE     port up, nothing wanted: Delete the doubtful
 *   IDLE|DOWN freed   reconciled with no member and nothing held
 *
 * Everything that calls out (QP attach and detach, member callbacks,
 * MADs) happens from the loop: the tracker's work timer (armed at now by
 * joins, leaves and port events), the SA client's completions and the
 * groups' pacing timers. QPs are attached in mct_reconcile() right after the
 * answer is taken, before the member's callback (which runs from the work
 * timer, later), and detached in mct_reconcile() before it sends a Delete.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcmr.h"
#include "ibmcast/rng.h"
#include "mcast/mcast_int.h"
#include "util/config.h"
#include "util/mix.h"

static void on_group_timer(struct imc_timer *tm);
static void pump_window(struct imc_mcast *t);

/* ------------------------------------------------------------------ */
/* Record comparison, with the selectors. */

/* Does the group's record g satisfy template r in every component of
 * mask? imc_mcmr_match() has the rules (IBA 15.2.5.17 o15-0.2.4 item 5,
 * selectors of IBA 15.2.5.16, P_Keys of IBA 10.9.1.2). PortGID, JoinState
 * and ProxyJoin are the tracker's own. An MGID of zero (a create) matches
 * the MGID the SA chose. */
static bool rec_matches(const struct imc_mcmr *g, const struct imc_mcmr *r,
			uint64_t mask)
{
	if (imc_gid_is_zero(&r->mgid))
		mask &= ~CM(MGID);
	return imc_mcmr_match(g, r, mask);
}

/* ------------------------------------------------------------------ */
/* Work timer, events. */

static void arm_work(struct imc_mcast *t)
{
	/* -ENOMEM leaves the work for the next arm; nothing better to do. */
	if (!t->working && !imc_timer_armed(&t->work))
		(void)imc_timer_arm(t->loop, &t->work, imc_loop_now(t->loop));
}

void mct_mark_dirty(struct group *g)
{
	if (imc_list_empty(&g->dirty))
		imc_list_add_tail(&g->t->dirty, &g->dirty);
	arm_work(g->t);
}

static void notify(struct imc_mcast_member *m)
{
	struct imc_mcast *t = m->g->t;

	if (imc_list_empty(&m->ev))
		imc_list_add_tail(&t->events, &m->ev);
	arm_work(t);
}

static void count(struct group *g, uint8_t bits, int d)
{
	for (unsigned i = 0; i < 4; i++)
		if (bits & (1u << i))
			g->cnt[i] += (uint32_t)d;
}

/* ------------------------------------------------------------------ */
/* QP attachments. */

static uint64_t att_hash(const struct group *g, const void *qp)
{
	return imc_mix64((uint64_t)(uintptr_t)g ^
			 imc_mix64((uint64_t)(uintptr_t)qp));
}

static struct att *att_find(const struct imc_mcast *t, const struct group *g,
			    const void *qp)
{
	uint64_t h;
	struct imc_hnode *e;

	/* Most groups have one QP: try it before the table. */
	if (!imc_list_empty(&g->atts)) {
		struct att *a = imc_container_of(g->atts.next, struct att,
						 link);

		if (a->qp == qp)
			return a;
	}
	h = att_hash(g, qp);
	e = imc_htab_bucket(&t->atts, h);

	for (; e; e = e->next) {
		struct att *a = imc_container_of(e, struct att, node);

		if (e->hash == h && a->g == g && a->qp == qp)
			return a;
	}
	return NULL;
}

static void att_free(struct att *a)
{
	struct group *g = a->g;

	imc_htab_remove(&g->t->atts, &a->node);
	imc_list_del(&a->link);
	if (a == &g->att0)
		a->g = NULL;
	else
		free(a);
}

static void att_detach(struct att *a)
{
	struct imc_mcast *t = a->g->t;

	if (t->ops.detach &&
	    t->ops.detach(t->ops.ctx, a->qp, &a->g->mgid, a->mlid) < 0)
		t->st.detach_errors++;
}

/* Attaches m's QP (or shares the group's attachment of it). 0 or the
 * attach error. */
static int att_get(struct imc_mcast_member *m)
{
	struct group *g = m->g;
	struct imc_mcast *t = g->t;
	struct att *a;
	int rc;

	if (m->att || !m->req.qp || !(m->req.join_state & RECV_BITS))
		return 0;
	a = att_find(t, g, m->req.qp);
	if (a) {
		if (a->refs++ == 0)
			g->zero_atts--;
		m->att = a;
		return 0;
	}
	if (!g->att0.g) {
		a = &g->att0;
		memset(a, 0, sizeof(*a));
	} else {
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
	}
	if (t->ops.attach) {
		rc = t->ops.attach(t->ops.ctx, m->req.qp, &g->mgid,
				   g->rec.mlid);
		if (rc < 0) {
			t->st.attach_errors++;
			if (a != &g->att0)
				free(a);
			return rc;
		}
	}
	a->g = g;
	a->qp = m->req.qp;
	a->mlid = g->rec.mlid;
	a->refs = 1;
	imc_htab_insert(&t->atts, &a->node, att_hash(g, a->qp));
	imc_list_add_tail(&g->atts, &a->link);
	m->att = a;
	return 0;
}

/* The detach itself waits for mct_reconcile(): never inside an API call. */
static void att_put(struct imc_mcast_member *m)
{
	struct att *a = m->att;

	if (!a)
		return;
	m->att = NULL;
	if (--a->refs == 0)
		a->g->zero_atts++;
}

/* Detaches the QPs no member uses any more. */
static void att_sweep(struct group *g)
{
	struct imc_list *l, *next;

	if (!g->zero_atts)
		return;
	for (l = g->atts.next; l != &g->atts; l = next) {
		struct att *a = imc_container_of(l, struct att, link);

		next = l->next;
		if (a->refs)
			continue;
		att_detach(a);
		att_free(a);
		g->zero_atts--;
	}
}

/* ------------------------------------------------------------------ */
/* States. */

static void fail_count(struct imc_mcast *t, int status)
{
	t->st.errors++;
	if (status > 0) {
		unsigned code = imc_sa_status_code((uint16_t)status);

		if (code < IMC_ARRAY_SIZE(t->st.errors_by_status))
			t->st.errors_by_status[code]++;
	}
}

void mct_mstate(struct imc_mcast_member *m, enum imc_mcast_state to,
		   int status)
{
	static const unsigned allowed[] = {
		[IMC_MCAST_PENDING] = 1u << IMC_MCAST_JOINED |
				      1u << IMC_MCAST_FAILED |
				      1u << IMC_MCAST_WAITING,
		[IMC_MCAST_JOINED] = 1u << IMC_MCAST_REJOINING |
				     1u << IMC_MCAST_WAITING |
				     1u << IMC_MCAST_FAILED,
		[IMC_MCAST_REJOINING] = 1u << IMC_MCAST_JOINED |
					1u << IMC_MCAST_FAILED |
					1u << IMC_MCAST_WAITING,
		[IMC_MCAST_WAITING] = 1u << IMC_MCAST_PENDING |
				      1u << IMC_MCAST_REJOINING,
		[IMC_MCAST_FAILED] = 0,
	};
	struct group *g = m->g;
	/* A member that waits for its group is told when it joins (or
	 * fails), not of each try (mcast_events.c). */
	bool quiet = m->state == IMC_MCAST_WAITING && m->status == -ENOENT &&
		     to == IMC_MCAST_REJOINING;

	if (!(allowed[m->state] & 1u << to))
		abort();
	if (m->state == IMC_MCAST_JOINED)
		g->t->st.joined--;
	if (to == IMC_MCAST_JOINED)
		g->t->st.joined++;
	if (to == IMC_MCAST_WAITING) {
		m->resume = m->state == IMC_MCAST_PENDING ?
			    IMC_MCAST_PENDING : IMC_MCAST_REJOINING;
		m->status = status;
		/* No group at the SA, no MLID to receive on: the QP is
		 * attached again with the join (complete()). */
		if (status == -ENOENT)
			att_put(m);
	}
	if (to == IMC_MCAST_REJOINING)
		m->since = imc_loop_now(g->t->loop);
	m->state = to;
	imc_list_del(&m->link);
	if (to == IMC_MCAST_PENDING || to == IMC_MCAST_REJOINING)
		imc_list_add_tail(&g->pending, &m->link);
	else
		imc_list_add_tail(&g->members, &m->link);
	if (to == IMC_MCAST_FAILED) {
		m->status = status;
		count(g, m->req.join_state, -1);
		att_put(m);
		if (g->trigger == m)
			g->trigger = NULL;
		fail_count(g->t, status);
	}
	if (to != IMC_MCAST_PENDING && !quiet)
		notify(m);
}

void mct_gstate(struct group *g, enum gstate to)
{
	static const unsigned allowed[] = {
		[G_IDLE] = 1u << G_SET | 1u << G_DELETE | 1u << G_PACE |
			   1u << G_DOWN | 1u << G_PROBE | 1u << G_ABSENT,
		[G_SET] = 1u << G_IDLE | 1u << G_DOWN,
		[G_DELETE] = 1u << G_IDLE | 1u << G_DOWN,
		[G_PACE] = 1u << G_REJOIN | 1u << G_WINDOW | 1u << G_IDLE |
			   1u << G_DOWN,
		[G_WINDOW] = 1u << G_REJOIN | 1u << G_IDLE | 1u << G_DOWN,
		[G_REJOIN] = 1u << G_IDLE | 1u << G_DOWN,
		[G_DOWN] = 1u << G_PACE | 1u << G_IDLE,
		[G_PROBE] = 1u << G_IDLE | 1u << G_DOWN,
		[G_ABSENT] = 1u << G_IDLE | 1u << G_DOWN,
	};
	struct imc_mcast *t = g->t;

	if (!(allowed[g->state] & 1u << to))
		abort();
	if (g->state == G_REJOIN)
		t->rejoins_in_flight--;
	if (g->state == G_WINDOW || g->state == G_ABSENT)
		imc_list_del(&g->wait);
	if (to == G_REJOIN)
		t->rejoins_in_flight++;
	if (to == G_WINDOW)
		imc_list_add_tail(&t->window, &g->wait);
	if (g->state == G_ABSENT)
		t->st.groups_absent--;
	if (to == G_ABSENT) {
		imc_list_add_tail(&t->absent, &g->wait);
		t->st.groups_absent++;
	}
	g->state = to;
}

/* ------------------------------------------------------------------ */
/* Groups. */

struct group *mct_group_find(const struct imc_mcast *t,
				const struct imc_gid *mgid)
{
	uint64_t h = imc_gid_hash(mgid, t->hash_seed);
	struct imc_hnode *e = imc_htab_bucket(&t->groups, h);

	for (; e; e = e->next) {
		struct group *g = imc_container_of(e, struct group, node);

		if (e->hash == h && imc_gid_equal(&g->mgid, mgid))
			return g;
	}
	return NULL;
}

static void group_key(struct group *g, const struct imc_gid *mgid)
{
	struct imc_mcast *t = g->t;

	g->mgid = *mgid;
	imc_htab_insert(&t->groups, &g->node, imc_gid_hash(mgid, t->hash_seed));
}

static struct group *group_new(struct imc_mcast *t, const struct imc_gid *mgid)
{
	struct group *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->t = t;
	imc_list_init(&g->dirty);
	imc_list_init(&g->wait);
	imc_list_init(&g->pending);
	imc_list_init(&g->members);
	imc_list_init(&g->atts);
	imc_timer_init(&g->timer, on_group_timer);
	g->state = t->port == P_DOWN ? G_DOWN : G_IDLE;
	if (!imc_gid_is_zero(mgid))
		group_key(g, mgid);
	imc_list_add_tail(&t->all, &g->all);
	t->st.groups++;
	return g;
}

/* Cancels what g has in flight or scheduled. */
void mct_group_stop(struct group *g)
{
	if (g->q) {
		imc_sa_query_cancel(g->q);
		g->q = NULL;
		g->t->st.in_flight--;
	}
	imc_timer_cancel(g->t->loop, &g->timer);
}

/* Frees g and whatever it still holds, without telling anyone. */
static void group_free(struct group *g)
{
	struct imc_mcast *t = g->t;

	mct_group_stop(g);
	mct_absent_end(g);
	if (g->state == G_REJOIN)
		t->rejoins_in_flight--;
	if (g->state == G_ABSENT)
		t->st.groups_absent--;
	while (!imc_list_empty(&g->atts))
		att_free(imc_container_of(g->atts.next, struct att, link));
	if (!imc_gid_is_zero(&g->mgid))
		imc_htab_remove(&t->groups, &g->node);
	imc_list_del(&g->all);
	imc_list_del(&g->dirty);
	imc_list_del(&g->wait);
	t->st.groups--;
	free(g);
}

/* ------------------------------------------------------------------ */
/* SA requests. */

static void on_set(void *arg, int err, const struct imc_sa_answer *ans);
static void on_delete(void *arg, int err, const struct imc_sa_answer *ans);

int mct_send_mcmr(struct group *g, uint8_t method, const struct imc_mcmr *rec,
		  uint64_t mask, imc_sa_query_cb cb)
{
	struct imc_mcast *t = g->t;
	struct imc_sa_mad m;
	int rc;

	memset(&m, 0, sizeof(m));
	m.mad.method = method;
	m.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	m.sa.comp_mask = mask;
	rc = imc_mcmr_pack(rec, m.data, sizeof(m.data));
	if (rc < 0)
		return rc;
	rc = imc_sa_query_start(t->sa, &m, cb, g, &g->q);
	if (rc < 0)
		return rc;
	imc_timer_cancel(t->loop, &g->timer);
	g->epoch = t->epoch;
	t->st.mads_sent++;
	t->st.in_flight++;
	return 0;
}

/* Retry mct_reconcile() later when a request could not even start. */
static void retry_later(struct group *g)
{
	(void)imc_timer_arm_in(g->t->loop, &g->timer, IMC_NSEC_PER_SEC);
}

/* A port that holds a group with no full bit hears of the group's
 * deletion only through trap 67 (the SA deletes a group with its last
 * full member, IBA 15.2.5.17): subscribed before the request that leaves
 * it so goes out, as the SA serves in order, no deletion after it goes
 * unheard. */
static void need_sub(struct imc_mcast *t, uint8_t bits)
{
	if (!(bits & FULL_BITS) && !t->sub_needed && t->cfg.subscribe) {
		t->sub_needed = true;
		mct_sub_kick(&t->deleted);
	}
}

/* The Set that asks for every wanted bit: with the trigger member's
 * template (a first join, a create, new bits), or with the group's record
 * (a re-join). */
static int send_set(struct group *g, bool rejoin)
{
	struct imc_mcast *t = g->t;
	struct imc_mcmr rec;
	uint64_t mask;
	uint8_t w = want(g);
	int rc;

	if (rejoin && g->rec_valid) {
		rec = g->rec;
		rec.mtu_sel = rec.rate_sel = rec.life_sel =
			UMAD_SA_SELECTOR_EXACTLY;
		rec.proxy_join = false;
		rec.resv49 = 0;
		memset(rec.resv, 0, sizeof(rec.resv));
		mask = REJOIN_MASK;
		g->trigger = NULL;
	} else {
		struct imc_mcast_member *m = g->trigger;

		if (!m || m->state != IMC_MCAST_PENDING) {
			m = imc_container_of(g->pending.next,
					     struct imc_mcast_member, link);
			g->trigger = m;
		}
		rec = m->req.rec;
		mask = m->req.comp_mask | JOIN_MASK;
		if (!imc_gid_is_zero(&g->mgid))
			rec.mgid = g->mgid;
	}
	rec.port_gid = t->cfg.port_gid;
	rec.join_state = w;
	need_sub(t, w);
	g->rejoin_rec = rejoin && g->rec_valid;
	g->req_bits = w;
	g->sent_gen = t->gen;
	rc = mct_send_mcmr(g, UMAD_METHOD_SET, &rec, mask, on_set);
	if (rc == 0 && rejoin)
		t->st.rejoins++;
	return rc;
}

static int send_delete(struct group *g, uint8_t bits)
{
	struct imc_mcmr rec;
	uint8_t left = g->held & (uint8_t)~bits;

	/* Giving up the port's last full bit leaves the others at the
	 * mercy of other ports' full members, as a join without one. */
	if (left)
		need_sub(g->t, left);
	memset(&rec, 0, sizeof(rec));
	rec.mgid = g->mgid;
	rec.port_gid = g->t->cfg.port_gid;
	rec.join_state = bits;
	g->req_bits = bits;
	return mct_send_mcmr(g, UMAD_SA_METHOD_DELETE, &rec, JOIN_MASK, on_delete);
}

void mct_count_answer(struct imc_mcast *t, int err,
			 const struct imc_sa_answer *ans)
{
	t->st.in_flight--;
	if (ans)
		t->st.retries += ans->attempts ? ans->attempts - 1 : 0;
	else if (err == -ETIMEDOUT)
		t->st.retries += t->sa_retries;
	if (err == -ETIMEDOUT)
		t->st.timeouts++;
}

/* Fails the members the Set covered: pending when it was sent. */
static void fail_covered(struct group *g, int status)
{
	struct imc_list *l, *next;

	for (l = g->pending.next; l != &g->pending; l = next) {
		struct imc_mcast_member *m =
			imc_container_of(l, struct imc_mcast_member, link);

		next = l->next;
		if (m->gen <= g->sent_gen)
			mct_mstate(m, IMC_MCAST_FAILED, status);
	}
}

/* Re-attaches the group's QPs when a re-join brought a new MLID. */
static void remap_mlid(struct group *g, uint16_t mlid)
{
	struct imc_mcast *t = g->t;
	struct imc_list *l, *next;

	att_sweep(g); /* what nobody uses goes with the old MLID */
	for (l = g->atts.next; l != &g->atts; l = next) {
		struct att *a = imc_container_of(l, struct att, link);
		struct imc_list *lists[2] = { &g->members, &g->pending };
		int rc = 0;

		next = l->next;
		if (a->mlid == mlid)
			continue;
		att_detach(a);
		a->mlid = mlid;
		if (t->ops.attach)
			rc = t->ops.attach(t->ops.ctx, a->qp, &g->mgid, mlid);
		if (rc >= 0)
			continue;
		t->st.attach_errors++;
		/* Its members lost their QP's membership: they fail. */
		for (unsigned i = 0; i < 2; i++) {
			struct imc_list *ml, *mnext;

			for (ml = lists[i]->next; ml != lists[i]; ml = mnext) {
				struct imc_mcast_member *m = imc_container_of(
					ml, struct imc_mcast_member, link);

				mnext = ml->next;
				if (m->att == a)
					mct_mstate(m, IMC_MCAST_FAILED, rc);
			}
		}
		/* No member left on it, and it is not attached any more. */
		g->zero_atts--;
		att_free(a);
	}
}

/* Moves every member on list from to list to of group x; counted: their
 * JoinState bits count in x (pending members; failed ones do not). */
static void move_members(struct group *x, struct imc_list *from,
			 struct imc_list *to, bool counted)
{
	for (struct imc_list *l = from->next, *next; l != from; l = next) {
		struct imc_mcast_member *m =
			imc_container_of(l, struct imc_mcast_member, link);

		next = l->next;
		imc_list_del(&m->link);
		imc_list_add_tail(to, &m->link);
		m->g = x;
		if (counted)
			count(x, m->req.join_state, 1);
		x->n_members++;
	}
}

/* A create answered with MGID mgid: key the group, or hand its members
 * to the group of that MGID the port already has. Returns the group the
 * members are in now. */
static struct group *key_created(struct group *g, const struct imc_gid *mgid)
{
	struct group *x = mct_group_find(g->t, mgid);

	if (!x) {
		group_key(g, mgid);
		return g;
	}
	/* The SA now holds our bits on x too. */
	x->held |= g->held;
	move_members(x, &g->pending, &x->pending, true);
	/* Failed members, if any, move too. */
	move_members(x, &g->members, &x->members, false);
	group_free(g);
	mct_mark_dirty(x);
	return x;
}

/* A Set refused for good: the members it judged fail. */
void mct_refused(struct group *g, uint16_t status, bool by_rec)
{
	if (by_rec)
		/* A re-join refused: its whole group, status as received. */
		fail_covered(g, status);
	else if (g->trigger)
		/* A join: the SA judged the trigger's template; the others
		 * are asked for again, each gets its own status. */
		mct_mstate(g->trigger, IMC_MCAST_FAILED, status);
}

static void on_set(void *arg, int err, const struct imc_sa_answer *ans)
{
	struct group *g = arg;
	struct imc_mcast *t = g->t;
	bool rejoin = g->state == G_REJOIN;
	bool by_rec = g->rejoin_rec;
	bool stale = g->epoch != t->epoch;
	bool again = false;
	struct imc_mcmr rec;
	uint16_t status;

	g->q = NULL;
	mct_count_answer(t, err, ans);
	mct_gstate(g, G_IDLE);
	status = ans ? ans->status : 0;
	if (!err && !status &&
	    (imc_mcmr_unpack(&rec, ans->data, ans->len) < 0 ||
	     !imc_gid_is_multicast(&rec.mgid) ||
	     (!imc_gid_is_zero(&g->mgid) &&
	      !imc_gid_equal(&rec.mgid, &g->mgid))))
		err = -EPROTO; /* not an answer to this Set */
	if ((err || (status && ans->attempts > 1)) &&
	    !imc_gid_is_zero(&g->mgid)) {
		/* The SA may have taken the Set and lost only the answers,
		 * or taken a first copy and refused the retry (a P_Key
		 * table changed meanwhile; the SA does not deduplicate):
		 * its bits are in doubt until a Delete settles them. (A
		 * create that went unanswered cannot be settled: its MGID
		 * is the SA's secret.) */
		g->doubt |= g->req_bits & (uint8_t)~sure(g);
		g->held |= g->req_bits;
	}
	if (!err && !status) {
		/* IBA 15.2.5.17: the answer carries the port's JoinState.
		 * An answer to a Set sent before a reregister or an SM
		 * change says nothing of the SA the port has now: its bits
		 * stay in doubt until the re-join that follows. */
		g->held |= g->req_bits | rec.join_state;
		if (stale)
			g->doubt |= g->req_bits | rec.join_state;
		else
			g->doubt &= (uint8_t)~(g->req_bits | rec.join_state);
		if (imc_gid_is_zero(&g->mgid))
			g = key_created(g, &rec.mgid);
		if (g->rec_valid && g->rec.mlid != rec.mlid)
			remap_mlid(g, rec.mlid);
		g->rec = rec;
		g->rec.port_gid = t->cfg.port_gid;
		g->rec_valid = true;
		g->rejoin_fails = 0;
		g->probe_found = 0;
		mct_absent_end(g);
	} else if (stale) {
		/* Sent before a reregister or an SM change: its failure
		 * says nothing of the SA the port has now. */
	} else if (err == -ETIMEDOUT && rejoin) {
		/* No answer to a re-join after the retries: an SA that
		 * drops what its queue cannot hold says nothing else, and
		 * after a reregister of a whole subnet that is the rule.
		 * The members gave nothing up: the re-join is paced again,
		 * over a spread doubled each time in a row, until the SA
		 * answers or the port goes down. */
		if (g->rejoin_fails < REJOIN_BACKOFF_MAX)
			g->rejoin_fails++;
		again = true;
	} else if (err) {
		/* -ETIMEDOUT after the retries, -ECANCELED flushed by the
		 * client's owner, -EPROTO: every member it covered. */
		fail_covered(g, err);
	} else if (mct_probe(g, status, rejoin, by_rec) == 0) {
		/* A Set with no full bit refused: the group may be gone
		 * (mcast_events.c); the trigger stays for the verdict. */
	} else {
		mct_refused(g, status, by_rec);
	}
	if (g->state != G_PROBE)
		g->trigger = NULL;
	if (g->state == G_IDLE) {
		/* the answer predates the event, or none came */
		if ((stale || again) && want(g))
			mct_pace(g);
		else
			mct_reconcile(g, true);
	}
	if (rejoin)
		pump_window(t);
}

static void on_delete(void *arg, int err, const struct imc_sa_answer *ans)
{
	struct group *g = arg;
	bool stale = g->epoch != g->t->epoch;
	struct imc_mcmr rec;
	uint8_t gone = 0;

	g->q = NULL;
	mct_count_answer(g->t, err, ans);
	mct_gstate(g, G_IDLE);
	/* Answered with success, or refused for one bit: the SA does not
	 * hold those bits. A refused Delete of several bits may have named
	 * one the SA did not have (an SA checks the port holds them all,
	 * o15-0.1.14): they are deleted one by one. Unanswered: mct_reconcile()
	 * sends it again (until the port goes away), or a Set if they are
	 * wanted again meanwhile. */
	if (err || (ans->status && (g->req_bits & (g->req_bits - 1)))) {
		/* Unanswered, the SA may have taken it: a member that wants
		 * those bits again must not count on them. */
		g->doubt |= g->req_bits;
	} else {
		uint8_t js = g->req_bits;

		/* The answer carries the port's JoinState left when some is
		 * left (o15-0.1.14; OpenSM answers the old one when none
		 * is, and some SAs echo the request): bits it names that
		 * were not known (a create whose answers were lost left
		 * them) are given up like any unwanted one; when it names
		 * none of the bits kept, they went with the group, which
		 * the SA deletes with its last full member. */
		if (!ans->status && !stale &&
		    imc_mcmr_unpack(&rec, ans->data, ans->len) >= 0 &&
		    imc_gid_equal(&rec.mgid, &g->mgid))
			js = rec.join_state & 0xf;
		if (js != g->req_bits)
			gone = sure(g) & (uint8_t)~g->req_bits &
			       (uint8_t)~js;
		g->held &= (uint8_t)~(g->req_bits | gone);
		g->doubt &= (uint8_t)~(g->req_bits | gone);
		js &= (uint8_t)~(g->req_bits | g->held);
		g->held |= js;
		g->doubt |= js;
	}
	if (gone) {
		g->t->st.groups_lost++;
		mct_group_lost(g);
	} else if (!err && !stale && ans->status &&
		   imc_sa_status_code(ans->status) ==
			   UMAD_SA_STATUS_REQ_INVALID &&
		   (sure(g) & want(g)) && !(g->held & FULL_BITS) &&
		   mct_verify(g) == 0) {
		/* Refused: the SA lacks the bits, maybe with the group,
		 * and the bits left have no full one (a deletion before
		 * the port's trap 67 subscription went unheard). A Get of
		 * the group tells (mcast_events.c). */
	} else if (stale && want(g)) {
		mct_pace(g);
	} else {
		mct_reconcile(g, true);
	}
}

/* ------------------------------------------------------------------ */
/* Reconcile: make the SA hold exactly the wanted bits. */

static void complete(struct group *g, bool answered)
{
	struct imc_mcast *t = g->t;
	struct imc_list *l, *next;

	for (l = g->pending.next; l != &g->pending; l = next) {
		struct imc_mcast_member *m =
			imc_container_of(l, struct imc_mcast_member, link);
		int rc;

		next = l->next;
		if ((m->req.join_state & sure(g)) != m->req.join_state)
			continue;
		if (!rec_matches(&g->rec, &m->req.rec, m->req.comp_mask)) {
			mct_mstate(m, IMC_MCAST_FAILED,
			       m->state == IMC_MCAST_REJOINING ? -ENETRESET :
								 -EINVAL);
			continue;
		}
		/* IBA 15.2.5.17 leaves the order to us: the QP is attached
		 * once the SA holds the membership, before the member hears
		 * of it (the other order loses the receives that arrive
		 * before the group's AV is set). */
		rc = att_get(m);
		if (rc < 0) {
			mct_mstate(m, IMC_MCAST_FAILED, rc);
			continue;
		}
		if (!answered && m->state == IMC_MCAST_PENDING)
			t->st.joins_local++;
		mct_mstate(m, IMC_MCAST_JOINED, 0);
	}
}

void mct_reconcile(struct group *g, bool answered)
{
	uint8_t w, extra;

	imc_list_del(&g->dirty);
	att_sweep(g);
	if (g->state == G_DOWN) {
		if (!g->n_members && !g->held)
			group_free(g);
		return;
	}
	if (g->state == G_ABSENT) {
		/* A new join may create the group (or be refused as the
		 * others were); a group nobody waits for any more goes. */
		if (imc_list_empty(&g->pending) && want(g))
			return;
		mct_absent_wake(g);
	}
	if (!want(g))
		mct_absent_end(g); /* nobody waits for a creation */
	if (g->state != G_IDLE)
		return;
	if (g->rec_valid) {
		complete(g, answered);
		/* Members it failed let go of their QPs now: nothing else
		 * may come to this group for a long time. */
		att_sweep(g);
	}
	w = want(g);
	if (!imc_list_empty(&g->pending) && (w & ~sure(g) || !g->rec_valid)) {
		if (send_set(g, false) == 0)
			mct_gstate(g, G_SET);
		else
			retry_later(g);
		return;
	}
	extra = g->held & (uint8_t)~w;
	if (extra) {
		uint8_t bits = extra & (uint8_t)~g->doubt;

		/* The bits known held in one Delete; doubtful ones alone,
		 * so that one the SA lacks does not keep another there. */
		if (!bits)
			bits = extra & (uint8_t)-extra;
		/* Members that gave up receiving bits were detached by
		 * att_sweep() above, before this Delete. */
		if (send_delete(g, bits) == 0)
			mct_gstate(g, G_DELETE);
		else
			retry_later(g);
		return;
	}
	if (!g->n_members)
		group_free(g);
}

/* ------------------------------------------------------------------ */
/* Re-joins: paced by a random delay and a window per port. */

/* Starts g's re-join when the window has room, else queues it. */
static void start_rejoin(struct group *g)
{
	struct imc_mcast *t = g->t;

	if (!want(g) || imc_list_empty(&g->pending)) {
		/* Everyone left or failed meanwhile: give back what is
		 * held, if anything. */
		mct_gstate(g, G_IDLE);
		mct_reconcile(g, false);
		return;
	}
	if (t->rejoins_in_flight >= t->cfg.rejoin_window) {
		if (g->state != G_WINDOW)
			mct_gstate(g, G_WINDOW);
		return;
	}
	if (send_set(g, true) == 0) {
		mct_gstate(g, G_REJOIN);
		return;
	}
	mct_gstate(g, G_IDLE);
	retry_later(g);
}

static void pump_window(struct imc_mcast *t)
{
	while (!imc_list_empty(&t->window) &&
	       t->rejoins_in_flight < t->cfg.rejoin_window) {
		struct group *g = imc_container_of(t->window.next,
						   struct group, wait);

		start_rejoin(g);
	}
}

static void on_group_timer(struct imc_timer *tm)
{
	struct group *g = imc_container_of(tm, struct group, timer);

	if (g->state == G_PACE)
		start_rejoin(g);
	else if (g->state == G_IDLE)
		mct_reconcile(g, false);
	else if (g->state == G_ABSENT)
		/* no Report came: ask again (the timer had its jitter) */
		mct_absent_retry(g, 0);
}

/* Schedules g's re-join: a random delay in [0, rejoin_spread) drawn from
 * the tracker's seeded stream, so that ports told at once (a reregister
 * of the whole subnet) spread their Sets over the spread instead of
 * storming the SA (protocol.md, "Known problems"); the spread doubles
 * for each re-join of g left unanswered in a row. */
void mct_pace(struct group *g)
{
	mct_pace_over(g, g->t->cfg.rejoin_spread);
}

/* mct_pace() over spread instead of rejoin_spread. */
void mct_pace_over(struct group *g, imc_time_t spread)
{
	struct imc_mcast *t = g->t;
	imc_time_t delay = 0;

	if (t->cfg.rejoin == IMC_MCAST_REJOIN_PACED && spread)
		delay = imc_rng_below(&t->rng, spread << g->rejoin_fails);
	mct_gstate(g, G_PACE);
	(void)imc_timer_arm_in(t->loop, &g->timer, delay);
}

/* ------------------------------------------------------------------ */
/* Dispatch. */

static void dispatch(struct imc_mcast *t)
{
	struct imc_list local;
	struct guard guard = { false };

	imc_list_init(&local);
	imc_list_splice(&local, &t->events);
	t->guard = &guard;
	while (!imc_list_empty(&local)) {
		struct imc_mcast_member *m =
			imc_container_of(local.next, struct imc_mcast_member,
					 ev);
		struct imc_mcast_event ev;
		struct imc_mcmr rec;

		imc_list_del(&m->ev);
		/* WAITING is told again when its reason changed (port
		 * down, 0; no group at the SA, -ENOENT). */
		if ((m->state == m->told &&
		     (m->state != IMC_MCAST_WAITING ||
		      m->status == m->told_status)) ||
		    m->state == IMC_MCAST_PENDING)
			continue;
		memset(&ev, 0, sizeof(ev));
		switch (m->state) {
		case IMC_MCAST_JOINED:
			ev.type = IMC_MCAST_EV_JOINED;
			/* A copy: the callback may free the group. */
			rec = m->g->rec;
			rec.join_state = sure(m->g);
			ev.rec = &rec;
			break;
		case IMC_MCAST_FAILED:
			ev.type = IMC_MCAST_EV_ERROR;
			ev.status = m->status;
			break;
		case IMC_MCAST_REJOINING:
			/* Lost before its JOINED was told (a trap came
			 * between the answer and this dispatch): the join
			 * request completes later, as JOINED or ERROR. */
			if (m->told == IMC_MCAST_PENDING ||
			    (m->told == IMC_MCAST_WAITING &&
			     m->resume == IMC_MCAST_PENDING))
				continue;
			ev.type = IMC_MCAST_EV_REJOINING;
			break;
		case IMC_MCAST_WAITING:
		case IMC_MCAST_PENDING:
			ev.type = IMC_MCAST_EV_WAITING;
			ev.status = m->status;
			break;
		}
		if (t->obs.done && (ev.type == IMC_MCAST_EV_JOINED ||
				    ev.type == IMC_MCAST_EV_ERROR))
			/* The request completes unless the member had
			 * joined before: told nothing yet, or WAITING with
			 * the join still to make. */
			t->obs.done(t->obs.ctx, m, &ev,
				    m->told == IMC_MCAST_PENDING ||
				    (m->told == IMC_MCAST_WAITING &&
				     m->resume == IMC_MCAST_PENDING),
				    imc_loop_now(t->loop) - m->since);
		m->told = m->state;
		m->told_status = m->status;
		/* m may be freed, t destroyed: touch neither after. */
		m->cb(m->arg, m, &ev);
		if (guard.destroyed)
			return;
	}
	t->guard = NULL;
}

static void on_work(struct imc_timer *tm)
{
	struct imc_mcast *t = imc_container_of(tm, struct imc_mcast, work);

	/* Reconcile first, so that QPs are attached before the callbacks
	 * that announce them. Work queued meanwhile is done in this pass,
	 * not in another round. */
	t->working = true;
	while (!imc_list_empty(&t->dirty))
		mct_reconcile(imc_container_of(t->dirty.next, struct group, dirty),
			  false);
	t->working = false;
	dispatch(t); /* t may be gone after */
}

/* ------------------------------------------------------------------ */
/* Public API. */

void imc_mcast_config_init(struct imc_mcast_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	/* From the join storm study (docs/performance.md, "Join storm"):
	 * 10,000 ports re-joining 3 groups each against an SA serving
	 * 40,000 requests/s from a queue of 1,000 are all back in 1.0 s
	 * without a MAD lost when spread over 1 s (100 ms: 3.9 s and 55,000
	 * lost); one re-join in flight per port clocks each port by the
	 * SA's answers, which keeps the losses lowest when the spread is
	 * too short for the load. */
	cfg->rejoin = IMC_MCAST_REJOIN_PACED;
	cfg->rejoin_spread = IMC_NSEC_PER_SEC;
	cfg->rejoin_window = 1;
	cfg->subscribe = true;
}

int imc_mcast_create(struct imc_loop *loop, struct imc_sa_client *sa,
		     const struct imc_mcast_config *cfg,
		     const struct imc_mcast_ops *ops, struct imc_mcast **out)
{
	struct imc_mcast_config def;
	struct imc_sa_client_config cc;
	struct imc_mcast *t;

	cfg = IMC_CONFIG_OR_DEFAULT(cfg, def, imc_mcast_config_init);
	if (!loop || !sa || !out ||
	    (cfg->rejoin != IMC_MCAST_REJOIN_PACED &&
	     cfg->rejoin != IMC_MCAST_REJOIN_IMMEDIATE) ||
	    (cfg->rejoin == IMC_MCAST_REJOIN_PACED && !cfg->rejoin_window))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (imc_htab_init(&t->groups, 16) < 0 ||
	    imc_htab_init(&t->atts, 16) < 0) {
		imc_htab_fini(&t->groups);
		free(t);
		return -ENOMEM;
	}
	t->loop = loop;
	t->sa = sa;
	t->cfg = *cfg;
	if (cfg->rejoin == IMC_MCAST_REJOIN_IMMEDIATE)
		t->cfg.rejoin_window = UINT32_MAX;
	if (ops)
		t->ops = *ops;
	imc_rng_seed(&t->rng, cfg->seed);
	t->hash_seed = imc_rng_next(&t->rng);
	imc_sa_client_get_config(sa, &cc);
	t->sa_retries = cc.retries;
	t->port = P_ACTIVE;
	imc_list_init(&t->all);
	imc_list_init(&t->dirty);
	imc_list_init(&t->window);
	imc_list_init(&t->events);
	imc_timer_init(&t->work, on_work);
	imc_list_init(&t->absent);
	mct_subs_init(t);
	if (cfg->subscribe)
		imc_sa_client_set_report_handler(sa, mct_on_report, t);
	*out = t;
	return 0;
}

void imc_mcast_set_observer(struct imc_mcast *t,
			    const struct imc_mcast_observer *o)
{
	if (o)
		t->obs = *o;
	else
		memset(&t->obs, 0, sizeof(t->obs));
}

void imc_mcast_destroy(struct imc_mcast *t)
{
	if (!t)
		return;
	if (t->guard)
		t->guard->destroyed = true;
	while (!imc_list_empty(&t->all)) {
		struct group *g = imc_container_of(t->all.next, struct group,
						   all);
		struct imc_list *l;

		/* The one exception to "ops from the loop": there is no
		 * later for a tracker that goes. */
		for (l = g->atts.next; l != &g->atts; l = l->next) {
			struct att *a = imc_container_of(l, struct att, link);

			att_detach(a);
		}
		while (!imc_list_empty(&g->pending)) {
			l = g->pending.next;
			imc_list_del(l);
			free(imc_container_of(l, struct imc_mcast_member,
					      link));
		}
		while (!imc_list_empty(&g->members)) {
			l = g->members.next;
			imc_list_del(l);
			free(imc_container_of(l, struct imc_mcast_member,
					      link));
		}
		group_free(g);
	}
	imc_timer_cancel(t->loop, &t->work);
	mct_subs_stop(t);
	if (t->cfg.subscribe)
		imc_sa_client_set_report_handler(t->sa, NULL, NULL);
	imc_htab_fini(&t->groups);
	imc_htab_fini(&t->atts);
	free(t);
}

int imc_mcast_join(struct imc_mcast *t, const struct imc_mcast_join_req *req,
		   imc_mcast_cb cb, void *arg, struct imc_mcast_member **out)
{
	struct imc_mcast_member *m;
	struct group *g;
	struct imc_mcmr probe;
	uint8_t buf[IMC_MCMR_SIZE];

	if (!t || !req || !cb || !out || !req->join_state ||
	    req->join_state > 0xf ||
	    (!imc_gid_is_zero(&req->rec.mgid) &&
	     !imc_gid_is_multicast(&req->rec.mgid)))
		return -EINVAL;
	/* A template that does not fit the wire would fail at send time. */
	probe = req->rec;
	probe.join_state = req->join_state;
	if (imc_mcmr_pack(&probe, buf, sizeof(buf)) < 0)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	g = imc_gid_is_zero(&req->rec.mgid) ? NULL :
					      mct_group_find(t, &req->rec.mgid);
	if (!g) {
		g = group_new(t, &req->rec.mgid);
		if (!g) {
			free(m);
			return -ENOMEM;
		}
	}
	m->g = g;
	m->req = *req;
	m->cb = cb;
	m->arg = arg;
	m->state = m->told = IMC_MCAST_PENDING;
	m->since = imc_loop_now(t->loop);
	m->gen = ++t->gen;
	imc_list_init(&m->ev);
	imc_list_add_tail(&g->pending, &m->link);
	count(g, req->join_state, 1);
	g->n_members++;
	t->st.joins++;
	t->st.members++;
	if (t->port == P_DOWN)
		mct_mstate(m, IMC_MCAST_WAITING, 0);
	mct_mark_dirty(g);
	*out = m;
	return 0;
}

void imc_mcast_leave(struct imc_mcast_member *m)
{
	struct group *g;
	struct imc_mcast *t;

	if (!m)
		return;
	g = m->g;
	t = g->t;
	imc_list_del(&m->ev);
	imc_list_del(&m->link);
	if (m->state != IMC_MCAST_FAILED)
		count(g, m->req.join_state, -1);
	if (m->state == IMC_MCAST_JOINED)
		t->st.joined--;
	att_put(m);
	if (g->trigger == m)
		g->trigger = NULL;
	g->n_members--;
	t->st.leaves++;
	t->st.members--;
	free(m);
	mct_mark_dirty(g);
}

int imc_mcast_release_qp(struct imc_mcast *t, const void *qp)
{
	struct imc_list *l, *al, *next;

	if (!t || !qp)
		return -EINVAL;
	for (l = t->all.next; l != &t->all; l = l->next) {
		struct group *g = imc_container_of(l, struct group, all);

		for (al = g->atts.next; al != &g->atts; al = al->next) {
			struct att *a = imc_container_of(al, struct att, link);

			if (a->qp == qp && a->refs)
				return -EBUSY;
		}
	}
	/* As in imc_mcast_destroy(): the QP goes, so there is no later for
	 * its detach. */
	for (l = t->all.next; l != &t->all; l = l->next) {
		struct group *g = imc_container_of(l, struct group, all);

		for (al = g->atts.next; al != &g->atts; al = next) {
			struct att *a = imc_container_of(al, struct att, link);

			next = al->next;
			if (a->qp != qp)
				continue;
			att_detach(a);
			att_free(a);
			g->zero_atts--;
		}
	}
	return 0;
}

enum imc_mcast_state imc_mcast_member_state(const struct imc_mcast_member *m)
{
	return m->state;
}
