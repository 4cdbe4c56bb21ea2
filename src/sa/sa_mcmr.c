/* MCMemberRecord (IBA 15.2.5.17): Set (create or join), Delete (leave),
 * Get and GetTable, in the order and with the statuses of OpenSM's
 * osm_sa_mcmember_record.c (3.3.23 and later), except where
 * docs/conformance.md says otherwise.
 *
 * A member's JoinState bits (FullMember 1, NonMember 2, SendOnlyNonMember
 * 4, SendOnlyFullMember 8) only change here:
 *
 *   JoinState      event                       next
 *   (none)         Set with bits b             b      port enters the tree
 *   s              Set with bits b             s | b  (o15-0.1.11)
 *   s              Delete of bits b <= s       s & ~b; 0: port leaves
 *   s              port gone                   0      port leaves
 *
 * A group lives while one member is FullMember or SendOnlyFullMember
 * (IBA 1.3 lets a SendOnlyFullMember create a group and counts it as a
 * full member); when the last one goes, the group is deleted with its
 * remaining members, its MLID returns to the pool and trap 67 follows.
 * Configured broadcast groups are never deleted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/ipoib_wire.h"
#include "ibmcast/mcmr.h"
#include "sa/sa_int.h"
#include "util/bytes.h"
#include "util/vec.h"

#define CM(x) ((uint64_t)UMAD_SA_MCM_COMP_MASK_##x)

enum {
	MTU_MIN = 1,
	MTU_MAX = 5,
	LIFE_MAX = 63,
	SEL_GT = UMAD_SA_SELECTOR_GREATER_THAN,
	SEL_LT = UMAD_SA_SELECTOR_LESS_THAN,
	SEL_EQ = UMAD_SA_SELECTOR_EXACTLY,
	SEL_BEST = UMAD_SA_SELECTOR_LARGEST_AVAIL,
	JOIN_FULL = UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER,
};

/* Required components of a join and of a create (OpenSM JOIN_MC_COMP_MASK
 * and REQUIRED_MC_CREATE_COMP_MASK; o15-0.2.3 for the create). */
static const uint64_t join_mask = CM(MGID) | CM(PORT_GID) | CM(JOIN_STATE);
static const uint64_t create_mask = IMC_MCMR_CREATE_COMPS;

static uint16_t sae_status(unsigned code)
{
	return imc_sa_status(code);
}

#define REQ_INVALID sae_status(UMAD_SA_STATUS_REQ_INVALID)
#define INSUF_COMPS sae_status(UMAD_SA_STATUS_INSUF_COMPS)
#define NO_RESOURCES sae_status(UMAD_SA_STATUS_NO_RESOURCES)

/* ------------------------------------------------------------------ */
/* Rates and selectors. */

/* OpenSM's mtu_is_valid()/rate_is_valid(): a value given with its
 * selector must be a defined code, else REQ_INVALID before anything. */
static bool values_valid(uint64_t mask, const struct imc_mcmr *r)
{
	if ((mask & CM(MTU_SEL)) && (mask & CM(MTU)) &&
	    (r->mtu < MTU_MIN || r->mtu > MTU_MAX))
		return false;
	if ((mask & CM(RATE_SEL)) && (mask & CM(RATE)) && !imc_rate_valid(r->rate))
		return false;
	return true;
}

/* o15-0.2.4 item 5: MTU, rate and packet lifetime asked with a selector
 * must be met by the group. OpenSM checks MTU and rate and ignores the
 * lifetime; IBA 15.2.5.17 gives it a selector like the others. */
static bool sel_fields_match(const struct imc_mcmr *g, const struct imc_mcmr *r,
			     uint64_t mask)
{
	return imc_mcmr_match(g, r, mask & (CM(MTU_SEL) | CM(RATE_SEL) |
					    CM(LIFE_TIME_SEL)));
}

/* o15-0.2.4 item 5: every other component given must equal the group's
 * (OpenSM validate_other_comp_fields). P_Keys match on their low 15 bits
 * and not both limited (IBA 10.9.1.2). */
static bool other_fields_match(const struct imc_mcmr *g,
			       const struct imc_mcmr *r, uint64_t mask)
{
	return imc_mcmr_match(g, r, mask & (CM(QKEY) | CM(PKEY) | CM(TCLASS) |
					    CM(SL) | CM(FLOW_LABEL) |
					    CM(HOP_LIMIT)));
}

/* The port can carry the group's traffic (OpenSM validate_port_caps). */
static bool port_caps_ok(const struct imc_mcmr *g,
			 const struct imc_sa_port *port)
{
	return port->mtu >= g->mtu && imc_rate_cmp(port->rate, g->rate) >= 0;
}

/* The port is in the group's partition: a P_Key of the same base, and
 * not limited on both sides (IBA 10.9.1.2). */
static bool port_in_partition(const struct imc_sa_port *port, uint16_t pkey)
{
	for (size_t i = 0; i < port->n_pkeys; i++)
		if ((port->pkeys[i] & 0x7fff) &&
		    ((port->pkeys[i] ^ pkey) & 0x7fff) == 0 &&
		    ((port->pkeys[i] | pkey) & IMC_PKEY_FULL_MEMBER))
			return true;
	return false;
}

/* An ordered MCMemberRecord field: MTU codes rise with the MTU, rate
 * codes do not (IBA 15.2.5.16; imc_rate_cmp compares bandwidths). */
struct order {
	int (*cmp)(unsigned a, unsigned b);
	unsigned (*below)(unsigned v); /* next lower; out of range if none */
};

static int mtu_cmp(unsigned a, unsigned b)
{
	return (a > b) - (a < b);
}

static unsigned mtu_below(unsigned v)
{
	return v - 1; /* 0 wraps past MTU_MAX */
}

static unsigned rate_below(unsigned v)
{
	return imc_rate_step(v, -1); /* 0, not a rate, below the lowest */
}

static const struct order mtu_order = { mtu_cmp, mtu_below };
static const struct order rate_order = { imc_rate_cmp, rate_below };

/* The value a selector (IBA 15.2.5.16: MTUSelector and RateSelector,
 * as MCMemberRecord carries them, 15.2.5.17) picks within cap, the
 * port's capability: cap when the field is not given or "largest
 * available"; "greater than": cap if above the given value, else none
 * (false); "less than": cap if below it, else the next value below the
 * given one; "exactly": the given value. */
static bool pick(bool given, uint8_t sel, unsigned val, unsigned cap,
		 const struct order *o, unsigned *out)
{
	if (!given || sel == SEL_BEST) {
		*out = cap;
		return true;
	}
	if (sel == SEL_GT) {
		*out = cap;
		return o->cmp(val, cap) < 0;
	}
	if (sel == SEL_LT)
		*out = o->cmp(val, cap) > 0 ? cap : o->below(val);
	else
		*out = val;
	return true;
}

/* o15-0.2.3: the SA picks what a creator leaves open. MTU and rate as
 * OpenSM's mgrp_request_is_realizable() does: the port's own when not
 * given or "largest available", else the selector applied to the given
 * value within the port's capability. The lifetime follows its selector
 * the same way (smallest available: 0), else the value given. */
static bool realize(uint64_t mask, struct imc_mcmr *rec,
		    const struct imc_sa_port *port)
{
	unsigned mtu, rate, life;

	if (!pick((mask & CM(MTU)) && (mask & CM(MTU_SEL)), rec->mtu_sel,
		  rec->mtu, port->mtu, &mtu_order, &mtu) ||
	    mtu < MTU_MIN || mtu > MTU_MAX)
		return false;
	if (!pick((mask & CM(RATE)) && (mask & CM(RATE_SEL)), rec->rate_sel,
		  rec->rate, port->rate, &rate_order, &rate) ||
	    !imc_rate_valid(rate))
		return false;

	life = rec->life;
	if ((mask & CM(LIFE_TIME)) && (mask & CM(LIFE_TIME_SEL))) {
		if (rec->life_sel == SEL_GT)
			life = rec->life + 1u;
		else if (rec->life_sel == SEL_LT)
			life = rec->life ? rec->life - 1u : LIFE_MAX + 1u;
		else if (rec->life_sel == SEL_BEST)
			life = 0;
	}
	if (life > LIFE_MAX)
		return false;

	rec->mtu_sel = rec->rate_sel = rec->life_sel = SEL_EQ;
	rec->mtu = (uint8_t)mtu;
	rec->rate = (uint8_t)rate;
	rec->life = (uint8_t)life;
	return true;
}

/* An SA-assigned MGID laid out as OpenSM's build_new_mgid() does it:
 * ff1S:a01b, the subnet prefix in bytes 4-11, then a 32-bit counter
 * written little-endian (OpenSM copies its host-order counter on x86)
 * over bytes 10-13. S is the requested scope, else link-local: o15-0.1.5
 * keeps 0xA01B with link-local scope for MGIDs the SA assigns. */
static bool new_mgid(struct imc_sa *sa, uint64_t mask, const struct imc_mcmr *r,
		     struct imc_gid *mgid)
{
	uint8_t scope = (mask & CM(SCOPE)) ? r->scope : IMC_MGID_SCOPE_LINK;

	memset(mgid, 0, sizeof(*mgid));
	mgid->raw[0] = 0xff;
	mgid->raw[1] = (uint8_t)(0x10 | scope);
	mgid->raw[2] = 0xa0;
	mgid->raw[3] = 0x1b;
	imc_put64(mgid->raw + 4, sa->cfg.subnet_prefix);
	/* At most one try per existing group can collide. */
	for (size_t tries = 0; tries <= sa->groups.n; tries++) {
		uint32_t n = sa->mgid_counter++;

		mgid->raw[10] = (uint8_t)n;
		mgid->raw[11] = (uint8_t)(n >> 8);
		mgid->raw[12] = (uint8_t)(n >> 16);
		mgid->raw[13] = (uint8_t)(n >> 24);
		if (!sae_group_find(sa, mgid))
			return true;
	}
	return false;
}

/* A requested MGID of a new group: OpenSM's validate_requested_mgid()
 * (o15-0.1.5), then for an IPoIB MGID other than its partition's
 * broadcast group, that broadcast group must exist and the request must
 * agree with it (RFC 4391 section 4: the other groups take the broadcast
 * group's parameters; OpenSM ipoib_mcgroup_creation_validation). */
static uint16_t check_new_mgid(struct imc_sa *sa, uint64_t mask,
			       const struct imc_mcmr *r)
{
	struct imc_gid bcast;
	const struct sae_group *bg;

	if (imc_mgid_check_create(&r->mgid) < 0)
		return REQ_INVALID;
	if (imc_ipoib_bcast_of(&r->mgid, &bcast) < 0 ||
	    imc_gid_equal(&bcast, &r->mgid))
		return 0;
	bg = sae_group_find(sa, &bcast);
	if (!bg || !other_fields_match(&bg->rec, r, mask))
		return REQ_INVALID;
	return 0;
}

static uint16_t create_group(struct sae_ctx *c, const struct imc_mcmr *r,
			     const struct imc_sa_port *port,
			     struct sae_group **out)
{
	struct imc_sa *sa = c->sa;
	uint64_t mask = c->req.sa.comp_mask;
	struct imc_mcmr rec = *r;
	uint16_t st;

	if (imc_gid_is_zero(&r->mgid)) {
		if (!new_mgid(sa, mask, r, &rec.mgid))
			return NO_RESOURCES;
	} else {
		st = check_new_mgid(sa, mask, r);
		if (st)
			return st;
	}
	if (!realize(mask, &rec, port))
		return REQ_INVALID;
	/* A requested MLID is honoured only when given (IBA 15.2.1.1: a
	 * component outside the ComponentMask is a wildcard). */
	if (sae_mlid_alloc(sa, (mask & CM(MLID)) ? r->mlid : 0, &rec.mlid) < 0)
		return NO_RESOURCES;
	rec.resv49 = 0;
	memset(rec.resv, 0, sizeof(rec.resv));
	*out = sae_group_new(sa, &rec, false);
	return *out ? 0 : NO_RESOURCES;
}

/* o15-0.2.1: a stored record may be changed by its own port, or, when it
 * was made by proxy, by any port of the group's partition. */
static bool modify_ok(const struct sae_member *m, uint16_t group_pkey,
		      const struct imc_sa_port *requester)
{
	if (!m->proxy)
		return imc_gid_equal(&m->gid, &requester->gid);
	return sae_pkey_has(requester, group_pkey);
}

/* Sends a as the answer of a Set or Delete: selectors "exactly" (as
 * OpenSM's mcmr_rcv_respond()), the port's JoinState, reserved bits
 * clear. */
static void answer_send(struct sae_ctx *c, struct imc_mcmr *a,
			uint8_t join_state)
{
	uint8_t buf[IMC_MCMR_SIZE];

	a->mtu_sel = a->rate_sel = a->life_sel = SEL_EQ;
	a->join_state = join_state;
	a->resv49 = 0;
	memset(a->resv, 0, sizeof(a->resv));
	imc_mcmr_pack(a, buf, sizeof(buf));
	sae_answer_one(c, buf, sizeof(buf));
}

/* The answer of a Set: the request with the group's parameters. */
static void answer_rec(struct sae_ctx *c, const struct imc_mcmr *req,
		       const struct imc_mcmr *g, uint8_t join_state,
		       bool proxy)
{
	struct imc_mcmr a = *req;

	if (g) {
		a.mgid = g->mgid;
		a.qkey = g->qkey;
		a.mlid = g->mlid;
		a.tclass = g->tclass;
		a.pkey = g->pkey;
		a.sl = g->sl;
		a.flow_label = g->flow_label;
		a.hop_limit = g->hop_limit;
		a.scope = g->scope;
		a.mtu = g->mtu;
		a.rate = g->rate;
		a.life = g->life;
		a.proxy_join = proxy;
	}
	answer_send(c, &a, join_state);
}

/* What a Set and a Delete check first, in OpenSM's order: the join
 * components (join_mask), MTU and rate codes given with
 * their selectors, and a PortGID of this subnet. 0 or the status. */
static uint16_t request_check(const struct imc_sa *sa, uint64_t mask,
			      const struct imc_mcmr *r)
{
	if ((mask & join_mask) != join_mask)
		return INSUF_COMPS;
	if (!values_valid(mask, r))
		return REQ_INVALID;
	if (imc_gid_prefix(&r->port_gid) != sa->cfg.subnet_prefix)
		return sae_status(UMAD_SA_STATUS_INVALID_GID);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Set: create or join (o15-0.2.3, o15-0.2.4). */

static void mcmr_set(struct sae_ctx *c, const struct imc_mcmr *r)
{
	struct imc_sa *sa = c->sa;
	uint64_t mask = c->req.sa.comp_mask;
	struct imc_sa_port port, requester;
	struct sae_group *g;
	struct sae_member *m = NULL;
	uint8_t js = r->join_state;
	bool created = false, proxy;
	uint16_t st;

	st = request_check(sa, mask, r);
	if (st) {
		sae_answer_error(c, st);
		return;
	}
	if (sa->ops.port_by_gid(sa->ctx, &r->port_gid, &port)) {
		sae_answer_error(c, REQ_INVALID);
		return;
	}
	/* OpenSM gives no answer when the requester is unknown. */
	if (sa->ops.port_by_lid(sa->ctx, c->src->slid, &requester)) {
		sa->st.drop_requester++;
		return;
	}
	port.gid = r->port_gid;
	proxy = !imc_gid_equal(&port.gid, &requester.gid);
	if (proxy && !sae_pkey_share(&port, &requester)) {
		sae_answer_error(c, REQ_INVALID);
		return;
	}
	if ((mask & CM(PKEY)) && !(r->pkey & 0x7fff)) {
		sae_answer_error(c, REQ_INVALID);
		return;
	}

	g = imc_gid_is_zero(&r->mgid) ? NULL : sae_group_find(sa, &r->mgid);
	if (!g) {
		/* o15-0.1.9: only a full member creates. */
		if (!sae_join_full(js)) {
			sae_answer_error(c, REQ_INVALID);
			return;
		}
		if ((mask & create_mask) != create_mask) {
			sae_answer_error(c, INSUF_COMPS);
			return;
		}
		st = create_group(c, r, &port, &g);
		if (st) {
			sae_answer_error(c, st);
			return;
		}
		created = true;
	} else if (!other_fields_match(&g->rec, r, mask)) {
		sae_answer_error(c, REQ_INVALID);
		return;
	}

	st = 0;
	if (!sel_fields_match(&g->rec, r, mask) ||
	    !port_caps_ok(&g->rec, &port) || !js ||
	    !port_in_partition(&port, g->rec.pkey))
		st = REQ_INVALID;
	if (!st && !created) {
		m = sae_member_find(sa, g, &port.gid);
		if (m && !modify_ok(m, g->rec.pkey, &requester))
			st = REQ_INVALID;
	}
	if (!st && !m) {
		m = sae_member_add(sa, g, &port, js, proxy);
		if (!m)
			st = NO_RESOURCES;
		else if (sae_mft_change(sa, m, true, true)) {
			sae_member_del(sa, m);
			st = NO_RESOURCES;
		}
	} else if (!st) {
		sae_member_set_state(sa, m, m->join_state | js);
	}
	if (st) {
		if (created)
			sae_group_free(sa, g);
		sae_answer_error(c, st);
		return;
	}
	answer_rec(c, r, &g->rec, m->join_state, m->proxy);
	if (created) {
		sa->st.groups_created++;
		sae_notice_send(sa, IMC_TRAP_MCAST_GROUP_CREATED, &g->rec.mgid,
			       g->rec.pkey);
	}
}

/* ------------------------------------------------------------------ */
/* Leaving. */

/* Clears bits of m's JoinState. When no full member is left the group
 * goes (unless persistent): its members leave the tree and trap 67 is
 * sent now when sync, else from the loop. *left gets the port's JoinState
 * afterwards. Returns 1 when the group was deleted. */
int sae_leave(struct imc_sa *sa, struct sae_member *m, uint8_t bits, bool sync,
	     uint8_t *left)
{
	struct sae_group *g = m->group;
	uint8_t js = m->join_state & (uint8_t)~bits;
	struct imc_gid mgid;
	uint16_t pkey;

	if (js) {
		sae_member_set_state(sa, m, js);
	} else {
		sae_mft_change(sa, m, false, sync);
		sae_member_del(sa, m);
	}
	if (g->n_full || g->persistent) {
		if (left)
			*left = js;
		return 0;
	}
	while (!imc_list_empty(&g->members)) {
		struct sae_member *o = imc_container_of(g->members.next,
						       struct sae_member,
						       in_group);

		sae_mft_change(sa, o, false, sync);
		sae_member_del(sa, o);
	}
	mgid = g->rec.mgid;
	pkey = g->rec.pkey;
	sae_group_free(sa, g);
	sa->st.groups_deleted++;
	if (sync)
		sae_notice_send(sa, IMC_TRAP_MCAST_GROUP_DELETED, &mgid, pkey);
	else
		sae_work_notice(sa, IMC_TRAP_MCAST_GROUP_DELETED, &mgid, pkey);
	if (left)
		*left = 0;
	return 1;
}

/* Delete: o15-0.1.14, OpenSM validate_delete(). */
static void mcmr_delete(struct sae_ctx *c, const struct imc_mcmr *r)
{
	struct imc_sa *sa = c->sa;
	uint64_t mask = c->req.sa.comp_mask;
	struct imc_sa_port requester;
	struct sae_group *g;
	struct sae_member *m;
	struct imc_mcmr a;
	uint8_t left;
	uint16_t st;

	st = request_check(sa, mask, r);
	if (st) {
		sae_answer_error(c, st);
		return;
	}
	g = sae_group_find(sa, &r->mgid);
	m = g ? sae_member_find(sa, g, &r->port_gid) : NULL;
	if (!m || !(r->join_state & m->join_state) ||
	    (r->join_state & ~m->join_state) ||
	    sa->ops.port_by_lid(sa->ctx, c->src->slid, &requester) ||
	    !modify_ok(m, g->rec.pkey, &requester)) {
		sae_answer_error(c, REQ_INVALID);
		return;
	}
	/* The answer is the request with the port's remaining JoinState
	 * (OpenSM osm_mgrp_remove_port() and mcmr_rcv_respond()). */
	a = *r;
	a.scope = g->rec.scope;
	sae_leave(sa, m, r->join_state, true, &left);
	answer_send(c, &a, left);
}

/* ------------------------------------------------------------------ */
/* Get and GetTable. */

struct recs {
	uint8_t *buf;
	size_t n;
	size_t cap;
	bool overflow;
};

static void emit(struct recs *o, const struct sae_group *g,
		 const struct sae_member *m, bool trusted, size_t max)
{
	struct imc_mcmr a = g->rec;

	if (o->n >= max) {
		o->overflow = true;
		return;
	}
	if (imc_vec_reserve(&o->buf, &o->cap, o->n + 1, IMC_MCMR_SIZE)) {
		o->overflow = true;
		return;
	}
	/* p923 (IBA 15.2.5.17): PortGID, JoinState and ProxyJoin are zero
	 * unless the request is trusted. */
	if (m && trusted) {
		a.port_gid = m->gid;
		a.join_state = m->join_state;
		a.proxy_join = m->proxy;
	}
	imc_mcmr_pack(&a, o->buf + o->n * IMC_MCMR_SIZE, IMC_MCMR_SIZE);
	o->n++;
}

static bool member_match(const struct sae_member *m, const struct imc_mcmr *r,
			 uint64_t mask)
{
	if ((mask & CM(JOIN_STATE)) && m->join_state != r->join_state)
		return false;
	if ((mask & CM(PROXY_JOIN)) && m->proxy != r->proxy_join)
		return false;
	return true;
}

/* OpenSM mcmr_by_comp_mask(): the group must match every component and
 * be in a partition of the requester; a trusted request without PortGID
 * gets one record per member, any other one record. */
static void match_group(struct sae_ctx *c, const struct sae_group *g,
			const struct imc_mcmr *r,
			const struct imc_sa_port *requester, struct recs *o,
			size_t max)
{
	uint64_t mask = c->req.sa.comp_mask;
	const struct sae_member *m;
	struct sae_member **v;

	if (!sae_pkey_has(requester, g->rec.pkey))
		return;
	/* MTU, rate and lifetime compare through their selectors only. */
	if (!imc_mcmr_match(&g->rec, r, mask & ~(CM(MTU) | CM(RATE) |
						 CM(LIFE_TIME))))
		return;

	if (mask & CM(PORT_GID)) {
		m = sae_member_find(c->sa, g, &r->port_gid);
		if (m && member_match(m, r, mask))
			emit(o, g, m, c->trusted, max);
		return;
	}
	if (!g->n_members && !(mask & (CM(JOIN_STATE) | CM(PROXY_JOIN)))) {
		/* A group without members still exists (a broadcast
		 * group); an untrusted requester sees it like any. */
		if (!c->trusted)
			emit(o, g, NULL, false, max);
		return;
	}
	if (!c->trusted) {
		/* One zeroed record: which member matched does not show. */
		for (const struct imc_list *l = g->members.next;
		     l != &g->members; l = l->next)
			if (member_match(imc_container_of(l, struct sae_member,
							  in_group), r, mask)) {
				emit(o, g, NULL, false, max);
				break;
			}
		return;
	}
	if (sae_members_sorted(g, &v)) {
		o->overflow = true;
		return;
	}
	for (uint32_t i = 0; i < g->n_members; i++)
		if (member_match(v[i], r, mask))
			emit(o, g, v[i], true, max);
	free(v);
}

static int cmp_group_ptr(const void *a, const void *b)
{
	const struct sae_group *x = *(const struct sae_group *const *)a;
	const struct sae_group *y = *(const struct sae_group *const *)b;

	return imc_gid_cmp(&x->rec.mgid, &y->rec.mgid);
}

/* The groups a query without MGID can match, in MGID order: by MLID, by
 * the PortGID's memberships, else all. */
static int candidates(struct sae_ctx *c, const struct imc_mcmr *r,
		      struct sae_group ***out, size_t *n)
{
	struct imc_sa *sa = c->sa;
	uint64_t mask = c->req.sa.comp_mask;
	struct sae_group **v;
	size_t k = 0;

	if (mask & CM(MLID)) {
		size_t cnt = 0;

		for (struct sae_group *g = sae_group_by_mlid(sa, r->mlid); g;
		     g = g->mlid_next)
			cnt++;
		v = malloc((cnt ? cnt : 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (struct sae_group *g = sae_group_by_mlid(sa, r->mlid); g;
		     g = g->mlid_next)
			v[k++] = g;
	} else if (mask & CM(PORT_GID)) {
		struct sae_pent *pe = sae_port_find(sa, &r->port_gid);

		v = malloc((pe && pe->n ? pe->n : 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (struct imc_list *l = pe ? pe->members.next : NULL;
		     pe && l != &pe->members; l = l->next)
			v[k++] = imc_container_of(l, struct sae_member,
						  in_port)->group;
	} else {
		return sae_groups_sorted(sa, out, n);
	}
	qsort(v, k, sizeof(*v), cmp_group_ptr);
	*out = v;
	*n = k;
	return 0;
}

static void mcmr_query(struct sae_ctx *c, const struct imc_mcmr *r)
{
	struct imc_sa *sa = c->sa;
	bool get = c->req.mad.method == UMAD_METHOD_GET;
	struct imc_sa_port requester;
	struct recs o = { 0 };
	struct sae_group **v;
	size_t n, max = get ? 2 : sa->cfg.max_records;

	if (!values_valid(c->req.sa.comp_mask, r)) {
		sae_answer_error(c, REQ_INVALID);
		return;
	}
	if (sa->ops.port_by_lid(sa->ctx, c->src->slid, &requester)) {
		sa->st.drop_requester++;
		return;
	}
	if (c->req.sa.comp_mask & CM(MGID)) {
		/* the common case: one probe, no list */
		const struct sae_group *g = sae_group_find(sa, &r->mgid);

		if (g)
			match_group(c, g, r, &requester, &o, max);
	} else {
		if (candidates(c, r, &v, &n)) {
			sae_answer_error(c, NO_RESOURCES);
			return;
		}
		for (size_t i = 0; i < n && !o.overflow; i++)
			match_group(c, v[i], r, &requester, &o, max);
		free(v);
	}

	if (get) {
		/* C15-0.1.30: Get answers one record or an error. */
		if (o.n == 0)
			sae_answer_error(c,
				sae_status(UMAD_SA_STATUS_NO_RECORDS));
		else if (o.n > 1)
			sae_answer_error(c,
				sae_status(UMAD_SA_STATUS_TOO_MANY_RECORDS));
		else
			sae_answer_one(c, o.buf, IMC_MCMR_SIZE);
		free(o.buf);
		return;
	}
	if (o.overflow) {
		free(o.buf);
		sae_answer_error(c, NO_RESOURCES);
		return;
	}
	sae_answer_table(c, o.buf, o.n, IMC_MCMR_SIZE);
}

void sae_mcmr_serve(struct sae_ctx *c)
{
	struct imc_mcmr r;

	/* Reserved bits are ignored (o15-0.2.4 item 5: "ProxyJoin and
	 * Reserved, which are ignored by SA"). */
	imc_mcmr_unpack(&r, c->req.data, sizeof(c->req.data));
	switch (c->req.mad.method) {
	case UMAD_METHOD_SET:
		mcmr_set(c, &r);
		break;
	case UMAD_SA_METHOD_DELETE:
		mcmr_delete(c, &r);
		break;
	default:
		mcmr_query(c, &r);
		break;
	}
}
