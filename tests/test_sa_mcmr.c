/* The SA engine's MCMemberRecord methods (IBA 15.2.5.17): every row of
 * OpenSM's observed answers (docs of reference/opensm-ibsim.md), MGID and
 * MLID assignment, JoinState arithmetic, leaves and group deletion, the
 * MLID leak OpenSM had (linux-rdma/opensm pull 43), selectors, P_Key and
 * Q_Key rules, proxy joins, trusted and untrusted queries, MFT ordering,
 * MLID sharing and departed ports. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ibmcast/ipoib_wire.h"
#include "test_sa_fixture.h"

static struct imc_sa_group_info group(struct fx *f, const struct imc_gid *g)
{
	struct imc_sa_group_info i;

	assert_int_equal(imc_sa_group_get(f->sa, g, &i), 0);
	return i;
}

static bool has_group(struct fx *f, const struct imc_gid *g)
{
	struct imc_sa_group_info i;

	return imc_sa_group_get(f->sa, g, &i) == 0;
}

struct mlist {
	struct imc_sa_member_info m[16];
	size_t n;
};

static int collect(void *arg, const struct imc_sa_member_info *m)
{
	struct mlist *l = arg;

	if (l->n < 16)
		l->m[l->n++] = *m;
	return 0;
}

static struct mlist members(struct fx *f, const struct imc_gid *g)
{
	struct mlist l = { .n = 0 };

	assert_int_equal(imc_sa_foreach_member(f->sa, g, collect, &l), 0);
	return l;
}

/* ------------------------------------------------------------------ */

static void create_assigns_mgid(void **state)
{
	struct fx f;
	struct imc_sa_mad a;
	struct imc_mcmr r;
	struct imc_sa_stats st;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 1, NULL, 1, 1, &a), 0);
	assert_int_equal(a.mad.method, UMAD_METHOD_GET_RESP);
	assert_int_equal(a.sa.attr_offset, 7);
	assert_true(a.sa.sm_key == 0);
	assert_true(a.sa.comp_mask == CREATE_MASK);
	r = fx_rec(&a);
	/* OpenSM build_new_mgid(): ff12:a01b, prefix, counter 0 */
	assert_gid_eq(&r.mgid, "ff12:a01b:fe80::");
	assert_gid_eq(&r.port_gid, "fe80::10:1");
	assert_int_equal(r.mlid, 0xc001);     /* 0xc000: broadcast group */
	assert_int_equal(r.qkey, 0x80010000);
	assert_int_equal(r.pkey, 0xffff);
	assert_int_equal(r.mtu_sel, 2);
	assert_int_equal(r.mtu, 4);            /* the port's */
	assert_int_equal(r.rate_sel, 2);
	assert_int_equal(r.rate, 3);
	assert_int_equal(r.life_sel, 2);
	assert_int_equal(r.life, 0);
	assert_int_equal(r.join_state, 1);
	assert_int_equal(r.scope, 0);          /* the request's, as OpenSM */
	assert_false(r.proxy_join);
	assert_false(imc_mcmr_reserved_set(&r));

	assert_int_equal(fx_join(&f, 2, NULL, 2, 1, &a), 0);
	r = fx_rec(&a);
	assert_gid_eq(&r.mgid, "ff12:a01b:fe80::100:0:0");
	assert_int_equal(r.mlid, 0xc002);

	/* the scope given with its component picks S of ff1S */
	{
		struct imc_mcmr q = fx_create_rec(NULL, 3, 1);

		q.scope = 5;
		assert_int_equal(fx_req(&f, 3, UMAD_METHOD_SET,
					CREATE_MASK | CM(SCOPE), &q, &a), 0);
		r = fx_rec(&a);
		assert_gid_eq(&r.mgid, "ff15:a01b:fe80::200:0:0");
		assert_int_equal(r.scope, 5);
	}
	st = fx_stats(&f);
	assert_int_equal(st.groups, 4);
	assert_int_equal(st.groups_created, 3);
	assert_int_equal(st.traps_66, 3);
	assert_int_equal(st.mlids_in_use, 4);
	assert_int_equal(st.members, 3);
	assert_int_equal(st.by_sa_status[0], 3);
	/* each new member entered its MLID's tree once */
	assert_int_equal(f.nchg, 3);
	assert_true(f.chg[0].c.add);
	assert_int_equal(f.chg[0].mlid, 0xc001);
	assert_int_equal(f.chg[0].c.lid, 1);
	assert_int_equal(f.chg[0].c.join_state, 1);
	fx_fini(&f);
}

static void create_needs_components(void **state)
{
	static const uint64_t need[] = { CM(QKEY), CM(TCLASS), CM(PKEY),
					 CM(FLOW_LABEL), CM(SL) };
	struct imc_gid g = fx_mgid("ff12:1234::9");
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	for (size_t i = 0; i < IMC_ARRAY_SIZE(need); i++) {
		struct imc_mcmr r = fx_create_rec(&g, 1, 1);
		struct imc_sa_mad a;
		struct imc_mcmr e;

		assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET,
					CREATE_MASK & ~need[i], &r, &a),
				 ST_INSUF_COMPS);
		assert_int_equal(a.mad.method, UMAD_METHOD_GET_RESP);
		/* the request's record comes back */
		e = fx_rec(&a);
		assert_true(imc_gid_equal(&e.mgid, &g));
		assert_int_equal(e.qkey, 0x80010000);
		assert_false(has_group(&f, &g));
	}
	assert_int_equal(fx_stats(&f).by_sa_status[6], 5);
	assert_int_equal(fx_stats(&f).mlids_in_use, 1);
	fx_fini(&f);
}

static void join_and_leave_need_components(void **state)
{
	static const uint64_t need[] = { CM(MGID), CM(PORT_GID),
					 CM(JOIN_STATE) };
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 1, &g, 1, 1, NULL), 0);
	for (size_t i = 0; i < IMC_ARRAY_SIZE(need); i++) {
		struct imc_mcmr r = fx_create_rec(&g, 1, 1);
		struct imc_sa_mad a;

		assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET,
					CREATE_MASK & ~need[i], &r, &a),
				 ST_INSUF_COMPS);
		assert_int_equal(fx_req(&f, 1, UMAD_SA_METHOD_DELETE,
					JOIN_MASK & ~need[i], &r, &a),
				 ST_INSUF_COMPS);
		assert_int_equal(a.mad.method, UMAD_SA_METHOD_DELETE_RESP);
	}
	assert_int_equal(group(&f, &g).members, 1);
	fx_fini(&f);
}

static void join_must_match_group(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_mcmr r;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 1, &g, 1, 1, NULL), 0);
	r = fx_create_rec(&g, 2, 1);
	r.qkey = 0x1234;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	r = fx_create_rec(&g, 2, 1);
	r.tclass = 1;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	r = fx_create_rec(&g, 2, 1);
	r.sl = 3;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	r = fx_create_rec(&g, 2, 1);
	r.flow_label = 7;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	r = fx_create_rec(&g, 2, 1);
	r.hop_limit = 2;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET,
				CREATE_MASK | CM(HOP_LIMIT), &r, NULL),
			 ST_REQ_INVALID);
	/* a value outside the mask is a wildcard */
	r = fx_create_rec(&g, 2, 1);
	r.qkey = 0x1234;
	r.hop_limit = 2;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, JOIN_MASK, &r, NULL),
			 0);
	assert_int_equal(group(&f, &g).members, 2);
	fx_fini(&f);
}

static void join_state_rules(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_gid h = fx_mgid("ff12:1234::2");
	struct imc_sa_mad a;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 1, &g, 1, 0, NULL), ST_REQ_INVALID);
	assert_int_equal(fx_join(&f, 1, &g, 1, 2, NULL), ST_REQ_INVALID);
	assert_int_equal(fx_join(&f, 1, &g, 1, 4, NULL), ST_REQ_INVALID);
	assert_false(has_group(&f, &g));
	/* SendOnlyFullMember creates (IBA 1.3, CapabilityMask2 bit 12) */
	assert_int_equal(fx_join(&f, 1, &h, 1, 8, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 8);
	assert_int_equal(group(&f, &h).full_members, 1);
	/* JoinState 0 on an existing group */
	assert_int_equal(fx_join(&f, 2, &h, 2, 0, NULL), ST_REQ_INVALID);
	assert_int_equal(group(&f, &h).members, 1);
	fx_fini(&f);
}

static void mtu_4096_on_2048_port(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_mcmr r;
	struct imc_sa_mad a;
	char *before, *after;
	struct fx f;

	fx_init(&f);
	fx_port(&f, 9)->p.mtu = 5;
	fx_start(&f);
	before = fx_dump(&f);
	r = fx_create_rec(&g, 1, 1);
	r.mtu_sel = 2;
	r.mtu = 5;
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET,
				CREATE_MASK | CM(MTU_SEL) | CM(MTU), &r, NULL),
			 ST_REQ_INVALID);
	after = fx_dump(&f);
	assert_string_equal(before, after);
	assert_int_equal(f.nchg, 0);
	free(after);
	/* a 4096 port may */
	r.port_gid = fx_gid(9);
	assert_int_equal(fx_req(&f, 9, UMAD_METHOD_SET,
				CREATE_MASK | CM(MTU_SEL) | CM(MTU), &r, &a),
			 0);
	assert_int_equal(fx_rec(&a).mtu, 5);
	/* and then the 2048 port cannot join it */
	assert_int_equal(fx_join(&f, 1, &g, 1, 1, NULL), ST_REQ_INVALID);
	free(before);
	fx_fini(&f);
}

static void mgid_validation(void **state)
{
	struct imc_gid g;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	g = fx_mgid("ff32:1234::1");   /* reserved flag bit */
	assert_int_equal(fx_join(&f, 1, &g, 1, 1, NULL), ST_REQ_INVALID);
	g = fx_mgid("ff12:a01b::1");   /* SA signature, link-local */
	assert_int_equal(fx_join(&f, 1, &g, 1, 1, NULL), ST_REQ_INVALID);
	g = fx_mgid("fe80::1");        /* not multicast */
	assert_int_equal(fx_join(&f, 1, &g, 1, 1, NULL), ST_REQ_INVALID);
	g = fx_mgid("ff15:a01b::1");   /* SA signature, site-local */
	assert_int_equal(fx_join(&f, 1, &g, 1, 1, NULL), 0);
	g = fx_mgid("ff1f:a01c::1");   /* scope not checked (osmtest) */
	assert_int_equal(fx_join(&f, 1, &g, 1, 1, NULL), 0);
	assert_int_equal(fx_stats(&f).groups, 3);
	fx_fini(&f);
}

static void ipoib_qkey_rule(void **state)
{
	struct imc_gid v4a, v4b, v4c, v6, bc;
	uint8_t a6[16] = { 0xff, 0x02, [15] = 1 };
	struct imc_mcmr r;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(0xe0000001, 0xffff, 2, &v4a),
			 0);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(0xe0000002, 0xffff, 2, &v4b),
			 0);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(0xe0000001, 0x8001, 2, &v4c),
			 0);
	assert_int_equal(imc_ipoib_mgid_from_ipv6(a6, 0xffff, 2, &v6), 0);
	assert_int_equal(imc_ipoib_bcast_mgid(0xffff, 2, &bc), 0);

	r = fx_create_rec(&v4a, 1, 1);
	r.qkey = IMC_SA_IPOIB_QKEY;
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 0);
	r = fx_create_rec(&v4b, 1, 1);      /* Q_Key of the request */
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	r = fx_create_rec(&v4b, 1, 1);
	r.qkey = IMC_SA_IPOIB_QKEY;
	r.tclass = 1;                       /* TClass differs too */
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	r = fx_create_rec(&v4c, 1, 1);      /* no broadcast group there */
	r.qkey = IMC_SA_IPOIB_QKEY;
	r.pkey = 0x8001;
	fx_pkeys(&f, 1, 0xffff, 0x8001);
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	r = fx_create_rec(&v6, 1, 1);
	r.qkey = IMC_SA_IPOIB_QKEY;
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 0);
	/* the broadcast group itself, joined with its Q_Key */
	r = fx_create_rec(&bc, 2, 1);
	r.qkey = IMC_SA_IPOIB_QKEY;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 0);
	r.qkey = 0x80010000;
	r.port_gid = fx_gid(3);
	assert_int_equal(fx_req(&f, 3, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	assert_int_equal(fx_stats(&f).groups, 3);
	fx_fini(&f);
}

static void port_gid_checks(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_mcmr r;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	r = fx_create_rec(&g, 1, 1);
	imc_gid_set(&r.port_gid, FX_PREFIX, 0x99);   /* no such port */
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	imc_gid_set(&r.port_gid, 0xfec0000000000000ULL, fx_guid(1));
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_INVALID_GID);
	assert_int_equal(fx_req(&f, 1, UMAD_SA_METHOD_DELETE, JOIN_MASK, &r,
				NULL), ST_INVALID_GID);
	assert_int_equal(fx_stats(&f).by_sa_status[5], 2);
	assert_false(has_group(&f, &g));
	fx_fini(&f);
}

static void unknown_requester_gets_no_answer(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	/* LID 40 is not in the directory: OpenSM drops such a join */
	assert_int_equal(fx_join(&f, 40, &g, 1, 1, NULL), -1);
	assert_int_equal(fx_stats(&f).drop_requester, 1);
	assert_false(has_group(&f, &g));
	fx_fini(&f);
}

static void proxy_join(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_sa_mad a;
	struct mlist l;
	struct fx f;

	fx_init(&f);
	fx_pkeys(&f, 4, 0x8001, 0);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &g, 2, 1, NULL), 0);
	/* LID 1 joins port 3: allowed, recorded as a proxy join */
	assert_int_equal(fx_join(&f, 1, &g, 3, 1, &a), 0);
	assert_true(fx_rec(&a).proxy_join);
	l = members(&f, &g);
	assert_int_equal(l.n, 2);
	assert_gid_eq(&l.m[0].port_gid, "fe80::10:2");
	assert_false(l.m[0].proxy);
	assert_gid_eq(&l.m[1].port_gid, "fe80::10:3");
	assert_true(l.m[1].proxy);
	/* port 4 shares no partition with LID 1 */
	assert_int_equal(fx_join(&f, 1, &g, 4, 1, NULL), ST_REQ_INVALID);
	/* o15-0.2.1: port 2's own record is its own to change */
	assert_int_equal(fx_join(&f, 1, &g, 2, 2, NULL), ST_REQ_INVALID);
	assert_int_equal(fx_leave(&f, 1, &g, 2, 1, NULL), ST_REQ_INVALID);
	assert_int_equal(fx_join(&f, 2, &g, 2, 2, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 3);
	/* a proxy record may be changed from the group's partition */
	assert_int_equal(fx_join(&f, 5, &g, 3, 2, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 3);
	assert_int_equal(fx_leave(&f, 6, &g, 3, 3, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 0);
	assert_int_equal(group(&f, &g).members, 1);
	fx_fini(&f);
}

static void join_state_or(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_sa_mad a;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &g, 2, 1, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 0x1);
	assert_int_equal(fx_join(&f, 2, &g, 2, 8, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 0x9);
	assert_int_equal(fx_join(&f, 2, &g, 2, 2, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 0xb);
	assert_int_equal(members(&f, &g).m[0].join_state, 0xb);
	/* one port, one tree entry */
	assert_int_equal(f.nchg, 1);
	assert_int_equal(fx_stats(&f).members, 1);
	fx_fini(&f);
}

static void leave_semantics(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_gid none = fx_mgid("ff12:1234::7");
	struct imc_sa_mad a;
	struct imc_mcmr r;
	struct imc_sa_stats st;
	struct fx f;
	uint16_t mlid;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &g, 2, 1, &a), 0);
	mlid = fx_rec(&a).mlid;
	assert_int_equal(fx_join(&f, 3, &g, 3, 3, NULL), 0);
	assert_int_equal(fx_join(&f, 4, &g, 4, 2, NULL), 0);

	assert_int_equal(fx_leave(&f, 3, &g, 3, 2, &a), 0);
	assert_int_equal(a.mad.method, UMAD_SA_METHOD_DELETE_RESP);
	r = fx_rec(&a);
	assert_int_equal(r.join_state, 1);
	assert_true(imc_gid_equal(&r.mgid, &g));
	assert_gid_eq(&r.port_gid, "fe80::10:3");
	assert_int_equal(r.mtu_sel, 2);
	assert_int_equal(r.rate_sel, 2);
	assert_int_equal(r.life_sel, 2);
	/* not a member, absent group, bits not held, no bits */
	assert_int_equal(fx_leave(&f, 5, &g, 5, 1, &a), ST_REQ_INVALID);
	assert_int_equal(a.mad.method, UMAD_SA_METHOD_DELETE_RESP);
	assert_int_equal(fx_leave(&f, 3, &none, 3, 1, NULL), ST_REQ_INVALID);
	assert_int_equal(fx_leave(&f, 3, &g, 3, 2, NULL), ST_REQ_INVALID);
	assert_int_equal(fx_leave(&f, 3, &g, 3, 0, NULL), ST_REQ_INVALID);
	assert_int_equal(fx_leave(&f, 3, &g, 3, 3, NULL), ST_REQ_INVALID);

	/* port 2 leaves; port 3 is still full: the group stays */
	assert_int_equal(fx_leave(&f, 2, &g, 2, 1, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 0);
	assert_int_equal(group(&f, &g).members, 2);
	/* the last full member leaves: group, NonMember 4 and MLID go */
	f.nchg = 0;
	assert_int_equal(fx_leave(&f, 3, &g, 3, 1, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 0);
	assert_false(has_group(&f, &g));
	st = fx_stats(&f);
	assert_int_equal(st.groups_deleted, 1);
	assert_int_equal(st.traps_67, 1);
	assert_int_equal(st.mlids_in_use, 1);
	assert_int_equal(st.members, 0);
	assert_int_equal(f.nchg, 2);
	assert_false(f.chg[0].c.add);
	assert_false(f.chg[1].c.add);
	assert_int_equal(f.chg[0].mlid, mlid);
	assert_int_equal(f.chg[0].c.lid, 3);
	assert_int_equal(f.chg[1].c.lid, 4);
	fx_fini(&f);
}

static void broadcast_group_persists(void **state)
{
	struct imc_gid bc;
	struct imc_mcmr r;
	struct imc_sa_group_info gi;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(imc_ipoib_bcast_mgid(0xffff, 2, &bc), 0);
	gi = group(&f, &bc);
	assert_true(gi.persistent);
	assert_int_equal(gi.rec.mlid, 0xc000);
	assert_int_equal(gi.rec.qkey, 0x0b1b);
	assert_int_equal(gi.rec.pkey, 0xffff);
	assert_int_equal(gi.rec.mtu, 4);
	assert_int_equal(gi.rec.rate, 3);
	assert_int_equal(gi.rec.life, 18);
	assert_int_equal(gi.rec.scope, 2);
	assert_int_equal(gi.rec.hop_limit, 0);
	r = fx_create_rec(&bc, 2, 1);
	r.qkey = 0x0b1b;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 0);
	r.join_state = 2;
	r.port_gid = fx_gid(3);
	assert_int_equal(fx_req(&f, 3, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 0);
	assert_int_equal(fx_leave(&f, 2, &bc, 2, 1, NULL), 0);
	gi = group(&f, &bc);
	assert_int_equal(gi.members, 1);      /* NonMember 3 stays */
	assert_int_equal(gi.full_members, 0);
	assert_int_equal(fx_stats(&f).traps_67, 0);
	assert_int_equal(fx_stats(&f).mlids_in_use, 1);
	fx_fini(&f);
}

static void sendonly_full_keeps_group(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_sa_mad a;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &g, 2, 9, NULL), 0);
	assert_int_equal(fx_leave(&f, 2, &g, 2, 1, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 8);
	assert_int_equal(group(&f, &g).full_members, 1);
	assert_int_equal(f.nchg, 1);          /* still on the tree */
	assert_int_equal(fx_leave(&f, 2, &g, 2, 8, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 0);
	assert_false(has_group(&f, &g));
	assert_int_equal(fx_stats(&f).mlids_in_use, 1);
	assert_int_equal(f.nchg, 2);
	fx_fini(&f);
}

/* linux-rdma/opensm pull 43: JoinState 0x9, leave 0x1, leave 0x8 pinned
 * OpenSM's MLIDs until creates failed with NO_RESOURCES after ~1018
 * cycles of 1024 MLIDs. Here the pool is exactly as before. */
static void mlid_leak_1100_cycles(void **state)
{
	struct imc_sa_stats st;
	char *before, *after;
	struct fx f;
	int i;

	fx_init(&f);
	f.cfg.mlid_last = 0xc3ff;              /* 1024 MLIDs, as ibsim */
	fx_start(&f);
	before = fx_dump(&f);
	for (i = 0; i < 1100; i++) {
		struct imc_sa_mad a;
		struct imc_gid g;

		assert_int_equal(fx_join(&f, 2, NULL, 2, 9, &a), 0);
		g = fx_rec(&a).mgid;
		assert_int_equal(fx_leave(&f, 2, &g, 2, 1, &a), 0);
		assert_int_equal(fx_rec(&a).join_state, 8);
		assert_int_equal(fx_leave(&f, 2, &g, 2, 8, &a), 0);
		assert_int_equal(fx_rec(&a).join_state, 0);
		assert_int_equal(fx_join(&f, 3, NULL, 3, 1, &a), 0);
		g = fx_rec(&a).mgid;
		assert_int_equal(fx_leave(&f, 3, &g, 3, 1, NULL), 0);
		f.nsent = 0;
	}
	after = fx_dump(&f);
	assert_string_equal(before, after);
	st = fx_stats(&f);
	assert_int_equal(st.mlids_in_use, 1);
	assert_int_equal(st.mlids_total, 1024);
	assert_int_equal(st.groups, 1);
	assert_int_equal(st.groups_created, 2200);
	assert_int_equal(st.groups_deleted, 2200);
	/* the whole pool is still there: 1023 creates fit, one more not */
	for (i = 0; i < 1023; i++)
		assert_int_equal(fx_join(&f, 2, NULL, 2, 1, NULL), 0);
	assert_int_equal(fx_join(&f, 2, NULL, 2, 1, NULL), ST_NO_RESOURCES);
	assert_int_equal(fx_stats(&f).mlids_in_use, 1024);
	free(before);
	free(after);
	fx_fini(&f);
}

static void mlid_reuse(void **state)
{
	struct imc_gid ga = fx_mgid("ff12:1234::a");
	struct imc_gid gb = fx_mgid("ff12:1234::b");
	struct imc_gid gc = fx_mgid("ff12:1234::c");
	struct imc_gid gd = fx_mgid("ff12:1234::d");
	struct imc_gid ge = fx_mgid("ff12:1234::e");
	struct imc_gid gf = fx_mgid("ff12:1234::f");
	struct imc_gid gg = fx_mgid("ff12:1234::10");
	struct imc_sa_mad a;
	struct imc_mcmr r;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 1, &ga, 1, 1, &a), 0);
	assert_int_equal(fx_rec(&a).mlid, 0xc001);
	assert_int_equal(fx_join(&f, 1, &gb, 1, 1, &a), 0);
	assert_int_equal(fx_rec(&a).mlid, 0xc002);
	assert_int_equal(fx_join(&f, 1, &gc, 1, 1, &a), 0);
	assert_int_equal(fx_rec(&a).mlid, 0xc003);
	assert_int_equal(fx_leave(&f, 1, &gb, 1, 1, NULL), 0);
	assert_int_equal(fx_join(&f, 1, &gd, 1, 1, &a), 0);
	assert_int_equal(fx_rec(&a).mlid, 0xc002);       /* lowest free */
	/* a requested MLID, free: honoured */
	r = fx_create_rec(&ge, 1, 1);
	r.mlid = 0xc010;
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK | CM(MLID),
				&r, &a), 0);
	assert_int_equal(fx_rec(&a).mlid, 0xc010);
	/* in use: the lowest free instead */
	r = fx_create_rec(&gf, 1, 1);
	r.mlid = 0xc001;
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK | CM(MLID),
				&r, &a), 0);
	assert_int_equal(fx_rec(&a).mlid, 0xc004);
	/* without its component the MLID field is a wildcard */
	r = fx_create_rec(&gg, 1, 1);
	r.mlid = 0xc020;
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK, &r, &a),
			 0);
	assert_int_equal(fx_rec(&a).mlid, 0xc005);
	fx_fini(&f);
}

struct selcase {
	uint8_t sel, val, want;   /* want 0: REQ_INVALID */
};

static void create_with(struct fx *f, unsigned i, uint64_t bits,
			const struct selcase *c, uint8_t *mtu, uint8_t *rate,
			uint8_t *life)
{
	struct imc_gid g;
	struct imc_mcmr r;
	struct imc_sa_mad a;
	int st;

	imc_gid_set(&g, 0xff12000100000000ULL, 0x100 + i);
	r = fx_create_rec(&g, 1, 1);
	if (bits & CM(MTU)) {
		r.mtu_sel = c->sel;
		r.mtu = c->val;
	}
	if (bits & CM(RATE)) {
		r.rate_sel = c->sel;
		r.rate = c->val;
	}
	if (bits & CM(LIFE_TIME)) {
		r.life_sel = c->sel;
		r.life = c->val;
	}
	st = fx_req(f, 1, UMAD_METHOD_SET, CREATE_MASK | bits, &r, &a);
	if (!c->want) {
		assert_int_equal(st, ST_REQ_INVALID);
		assert_false(has_group(f, &g));
		return;
	}
	assert_int_equal(st, 0);
	r = fx_rec(&a);
	*mtu = r.mtu;
	*rate = r.rate;
	*life = r.life;
}

static void selectors_at_create(void **state)
{
	/* port: MTU 4 (2048), rate 3 (10 Gb/s) */
	static const struct selcase mtu[] = {
		{ 0, 3, 4 }, { 0, 4, 0 }, { 1, 4, 3 }, { 1, 5, 4 },
		{ 2, 3, 3 }, { 2, 5, 0 }, { 3, 1, 4 }, { 1, 1, 0 },
	};
	/* rate codes by bandwidth: 2 = 2.5, 5 = 5, 3 = 10, 6 = 20 Gb/s */
	static const struct selcase rate[] = {
		{ 0, 2, 3 }, { 0, 3, 0 }, { 1, 3, 5 }, { 1, 6, 3 },
		{ 2, 3, 3 }, { 2, 6, 0 }, { 3, 2, 3 }, { 1, 2, 0 },
	};
	static const struct selcase life[] = {
		{ 0, 5, 6 }, { 1, 5, 4 }, { 1, 0, 0 }, { 2, 7, 7 },
		{ 3, 9, 0xff }, { 0, 63, 0 },
	};
	uint8_t m, r, l;
	unsigned i = 0;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	for (size_t k = 0; k < IMC_ARRAY_SIZE(mtu); k++, i++) {
		create_with(&f, i, CM(MTU_SEL) | CM(MTU), &mtu[k], &m, &r, &l);
		if (mtu[k].want)
			assert_int_equal(m, mtu[k].want);
	}
	for (size_t k = 0; k < IMC_ARRAY_SIZE(rate); k++, i++) {
		create_with(&f, i, CM(RATE_SEL) | CM(RATE), &rate[k], &m, &r,
			    &l);
		if (rate[k].want)
			assert_int_equal(r, rate[k].want);
	}
	for (size_t k = 0; k < IMC_ARRAY_SIZE(life); k++, i++) {
		create_with(&f, i, CM(LIFE_TIME_SEL) | CM(LIFE_TIME), &life[k],
			    &m, &r, &l);
		if (life[k].want)
			assert_int_equal(l, life[k].want == 0xff ? 0 :
					 life[k].want);
	}
	fx_fini(&f);
}

static int join_sel(struct fx *f, const struct imc_gid *g, uint64_t bits,
		    uint8_t sel, uint8_t val)
{
	struct imc_mcmr r = fx_create_rec(g, 2, 1);

	if (bits & CM(MTU)) {
		r.mtu_sel = sel;
		r.mtu = val;
	}
	if (bits & CM(RATE)) {
		r.rate_sel = sel;
		r.rate = val;
	}
	if (bits & CM(LIFE_TIME)) {
		r.life_sel = sel;
		r.life = val;
	}
	return fx_req(f, 2, UMAD_METHOD_SET, JOIN_MASK | bits, &r, NULL);
}

static void selectors_against_group(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	const uint64_t MTU = CM(MTU_SEL) | CM(MTU);
	const uint64_t RATE = CM(RATE_SEL) | CM(RATE);
	const uint64_t LIFE = CM(LIFE_TIME_SEL) | CM(LIFE_TIME);
	struct imc_mcmr r;
	struct imc_sa_mad a;
	struct fx f;

	fx_init(&f);
	fx_port(&f, 10)->p.mtu = 2;
	fx_port(&f, 11)->p.rate = 2;
	fx_start(&f);
	/* the group: MTU 3 (1024), rate 5 (5 Gb/s), life 10 */
	r = fx_create_rec(&g, 1, 1);
	r.mtu_sel = r.rate_sel = r.life_sel = 2;
	r.mtu = 3;
	r.rate = 5;
	r.life = 10;
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET,
				CREATE_MASK | MTU | RATE | LIFE, &r, &a), 0);
	r = fx_rec(&a);
	assert_int_equal(r.mtu, 3);
	assert_int_equal(r.rate, 5);
	assert_int_equal(r.life, 10);

	assert_int_equal(join_sel(&f, &g, MTU, 0, 2), 0);
	assert_int_equal(join_sel(&f, &g, MTU, 0, 3), ST_REQ_INVALID);
	assert_int_equal(join_sel(&f, &g, MTU, 1, 4), 0);
	assert_int_equal(join_sel(&f, &g, MTU, 1, 3), ST_REQ_INVALID);
	assert_int_equal(join_sel(&f, &g, MTU, 2, 3), 0);
	assert_int_equal(join_sel(&f, &g, MTU, 2, 4), ST_REQ_INVALID);
	assert_int_equal(join_sel(&f, &g, MTU, 3, 1), 0);
	/* rates compare by bandwidth: 5 Gb/s is less than code 3's 10 */
	assert_int_equal(join_sel(&f, &g, RATE, 0, 2), 0);
	assert_int_equal(join_sel(&f, &g, RATE, 0, 5), ST_REQ_INVALID);
	assert_int_equal(join_sel(&f, &g, RATE, 1, 3), 0);
	assert_int_equal(join_sel(&f, &g, RATE, 1, 5), ST_REQ_INVALID);
	assert_int_equal(join_sel(&f, &g, RATE, 2, 5), 0);
	assert_int_equal(join_sel(&f, &g, RATE, 2, 3), ST_REQ_INVALID);
	assert_int_equal(join_sel(&f, &g, RATE, 3, 2), 0);
	assert_int_equal(join_sel(&f, &g, LIFE, 0, 9), 0);
	assert_int_equal(join_sel(&f, &g, LIFE, 0, 10), ST_REQ_INVALID);
	assert_int_equal(join_sel(&f, &g, LIFE, 1, 11), 0);
	assert_int_equal(join_sel(&f, &g, LIFE, 1, 10), ST_REQ_INVALID);
	assert_int_equal(join_sel(&f, &g, LIFE, 2, 10), 0);
	assert_int_equal(join_sel(&f, &g, LIFE, 2, 9), ST_REQ_INVALID);
	assert_int_equal(join_sel(&f, &g, LIFE, 3, 0), 0);
	/* undefined codes given with their selector */
	assert_int_equal(join_sel(&f, &g, MTU, 2, 6), ST_REQ_INVALID);
	assert_int_equal(join_sel(&f, &g, RATE, 2, 1), ST_REQ_INVALID);
	/* the ports themselves: MTU 512 and 2.5 Gb/s are too small */
	assert_int_equal(fx_join(&f, 10, &g, 10, 1, NULL), ST_REQ_INVALID);
	assert_int_equal(fx_join(&f, 11, &g, 11, 1, NULL), ST_REQ_INVALID);
	assert_int_equal(group(&f, &g).members, 2);
	fx_fini(&f);
}

static void pkey_rules(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1"), l = fx_mgid("ff12:1234::2");
	struct imc_gid x = fx_mgid("ff12:1234::3");
	struct imc_mcmr r;
	struct fx f;

	fx_init(&f);
	fx_pkeys(&f, 3, 0x7fff, 0);        /* limited member */
	fx_pkeys(&f, 5, 0x8001, 0);        /* another partition */
	fx_pkeys(&f, 6, 0x7fff, 0);
	fx_start(&f);
	r = fx_create_rec(&x, 1, 1);
	r.pkey = 0x0000;
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	r.pkey = 0x8000;
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	assert_false(has_group(&f, &x));

	assert_int_equal(fx_join(&f, 1, &g, 1, 1, NULL), 0);    /* 0xffff */
	r = fx_create_rec(&g, 2, 1);
	r.pkey = 0x7fff;       /* same base, one side full: matches */
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 0);
	r = fx_create_rec(&g, 4, 1);
	r.pkey = 0x8001;       /* another base */
	assert_int_equal(fx_req(&f, 4, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	/* a port outside the group's partition */
	assert_int_equal(fx_join(&f, 5, &g, 5, 1, NULL), ST_REQ_INVALID);
	/* a limited member joins a full-member group */
	assert_int_equal(fx_join(&f, 6, &g, 6, 1, NULL), 0);

	/* a group on the limited P_Key 0x7fff */
	r = fx_create_rec(&l, 2, 1);
	r.pkey = 0x7fff;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 0);
	assert_int_equal(group(&f, &l).rec.pkey, 0x7fff);
	r = fx_create_rec(&l, 4, 1);
	r.pkey = 0x7fff;       /* both limited */
	assert_int_equal(fx_req(&f, 4, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	/* limited port, limited group: IBA 10.9.1.2 */
	r = fx_create_rec(&l, 3, 1);
	assert_int_equal(fx_req(&f, 3, UMAD_METHOD_SET, JOIN_MASK, &r, NULL),
			 ST_REQ_INVALID);
	r = fx_create_rec(&l, 4, 1);
	assert_int_equal(fx_req(&f, 4, UMAD_METHOD_SET, JOIN_MASK, &r, NULL),
			 0);
	assert_int_equal(group(&f, &g).members, 3);
	assert_int_equal(group(&f, &l).members, 2);
	fx_fini(&f);
}

static void queries(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1"), none = fx_mgid("ff12::77");
	struct imc_gid bc;
	struct imc_mcmr q, r;
	struct imc_sa_mad a;
	uint16_t st, off;
	uint8_t *p;
	size_t n;
	struct fx f;

	fx_init(&f);
	fx_pkeys(&f, 7, 0x8001, 0);
	fx_start(&f);
	assert_int_equal(imc_ipoib_bcast_mgid(0xffff, 2, &bc), 0);
	assert_int_equal(fx_join(&f, 3, &g, 3, 3, NULL), 0);
	assert_int_equal(fx_join(&f, 2, &g, 2, 1, NULL), 0);
	assert_int_equal(fx_join(&f, 4, &g, 4, 2, NULL), 0);

	/* trusted GetTable by MGID: a record per member, PortGID order */
	memset(&q, 0, sizeof(q));
	q.mgid = g;
	p = fx_table(&f, 1, 1, CM(MGID), &q, &n, &st, &off);
	assert_int_equal(st, 0);
	assert_int_equal(off, 7);
	assert_int_equal(n, 3);
	r = fx_table_rec(p, 0);
	assert_gid_eq(&r.port_gid, "fe80::10:2");
	assert_int_equal(r.join_state, 1);
	r = fx_table_rec(p, 1);
	assert_gid_eq(&r.port_gid, "fe80::10:3");
	assert_int_equal(r.join_state, 3);
	r = fx_table_rec(p, 2);
	assert_gid_eq(&r.port_gid, "fe80::10:4");
	assert_int_equal(r.join_state, 2);
	assert_true(imc_gid_equal(&r.mgid, &g));
	assert_int_equal(r.qkey, 0x80010000);
	assert_int_equal(r.mtu_sel, 2);
	free(p);

	/* untrusted: one record per group, PortGID/JoinState/ProxyJoin 0 */
	p = fx_table(&f, 1, 0, CM(MGID), &q, &n, &st, &off);
	assert_int_equal(n, 1);
	r = fx_table_rec(p, 0);
	assert_true(imc_gid_is_zero(&r.port_gid));
	assert_int_equal(r.join_state, 0);
	assert_false(r.proxy_join);
	assert_true(imc_gid_equal(&r.mgid, &g));
	free(p);

	/* every group, MGID order; the memberless broadcast group shows
	 * to the untrusted only */
	p = fx_table(&f, 1, 0, 0, &q, &n, &st, &off);
	assert_int_equal(n, 2);
	r = fx_table_rec(p, 0);
	assert_true(imc_gid_equal(&r.mgid, &g));
	r = fx_table_rec(p, 1);
	assert_true(imc_gid_equal(&r.mgid, &bc));
	free(p);
	p = fx_table(&f, 1, 1, 0, &q, &n, &st, &off);
	assert_int_equal(n, 3);
	free(p);

	/* JoinState as a component */
	q.join_state = 3;
	p = fx_table(&f, 1, 1, CM(MGID) | CM(JOIN_STATE), &q, &n, &st, &off);
	assert_int_equal(n, 1);
	r = fx_table_rec(p, 0);
	assert_gid_eq(&r.port_gid, "fe80::10:3");
	free(p);

	/* by MLID, and by PortGID alone (the port's memberships) */
	memset(&q, 0, sizeof(q));
	q.mlid = 0xc001;
	p = fx_table(&f, 1, 1, CM(MLID), &q, &n, &st, &off);
	assert_int_equal(n, 3);
	r = fx_table_rec(p, 2);
	assert_gid_eq(&r.port_gid, "fe80::10:4");
	free(p);
	q.mlid = 0xc002;
	p = fx_table(&f, 1, 1, CM(MLID), &q, &n, &st, &off);
	assert_int_equal(n, 0);
	free(p);
	q.port_gid = fx_gid(3);
	p = fx_table(&f, 1, 1, CM(PORT_GID), &q, &n, &st, &off);
	assert_int_equal(n, 1);
	r = fx_table_rec(p, 0);
	assert_true(imc_gid_equal(&r.mgid, &g));
	assert_int_equal(r.join_state, 3);
	free(p);
	q.mgid = g;

	/* a requester outside the group's partition sees nothing */
	p = fx_table(&f, 7, 1, 0, &q, &n, &st, &off);
	assert_int_equal(st, 0);
	assert_int_equal(n, 0);
	free(p);

	/* no match: success with no records, AttributeOffset 0 */
	q.mgid = none;
	p = fx_table(&f, 1, 1, CM(MGID), &q, &n, &st, &off);
	assert_int_equal(st, 0);
	assert_int_equal(n, 0);
	assert_int_equal(off, 0);
	free(p);

	/* Get: one record, else NO_RECORDS or TOO_MANY_RECORDS */
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_GET, CM(MGID), &q, &a),
			 ST_NO_RECORDS);
	assert_int_equal(a.mad.method, UMAD_METHOD_GET_RESP);
	q.mgid = g;
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_GET, CM(MGID), &q, &a), 0);
	r = fx_rec(&a);
	assert_true(imc_gid_is_zero(&r.port_gid));    /* untrusted */
	q.port_gid = fx_gid(4);
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_GET,
				CM(MGID) | CM(PORT_GID), &q, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 0);
	{
		uint8_t buf[IMC_MAD_SIZE];
		const struct fx_sent *s;
		struct imc_mcmr e;

		fx_mcmr_mad(buf, UMAD_METHOD_GET, 0x77, 1, CM(MGID), &q);
		assert_int_equal(fx_recv(&f, 1, buf, sizeof(buf)), 0);
		fx_run(&f);
		s = fx_answer(&f, 1, 0x77);
		assert_non_null(s);
		assert_int_equal(s->mad[4] << 8 | s->mad[5], ST_TOO_MANY);

		fx_mcmr_mad(buf, UMAD_METHOD_GET, 0x78, 1,
			    CM(MGID) | CM(PORT_GID), &q);
		assert_int_equal(fx_recv(&f, 1, buf, sizeof(buf)), 0);
		fx_run(&f);
		s = fx_answer(&f, 1, 0x78);
		assert_non_null(s);
		assert_int_equal(s->mad[4] << 8 | s->mad[5], 0);
		imc_mcmr_unpack(&e, s->mad + IMC_SA_DATA_OFFSET, IMC_MCMR_SIZE);
		assert_gid_eq(&e.port_gid, "fe80::10:4");
		assert_int_equal(e.join_state, 2);
	}
	assert_int_equal(fx_stats(&f).transfers_active, 0);
	assert_int_equal(fx_stats(&f).transfers_done, 10);
	fx_fini(&f);
}

static void port_gone(void **state)
{
	struct imc_gid g1 = fx_mgid("ff12:1234::1");
	struct imc_gid g2 = fx_mgid("ff12:1234::2");
	struct imc_gid p3 = fx_gid(3), p2 = fx_gid(2);
	struct imc_sa_stats st;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &g1, 2, 1, NULL), 0);
	assert_int_equal(fx_join(&f, 3, &g1, 3, 2, NULL), 0);
	assert_int_equal(fx_join(&f, 3, &g2, 3, 1, NULL), 0);
	assert_int_equal(fx_join(&f, 4, &g2, 4, 1, NULL), 0);
	f.nchg = 0;
	f.in_recv = true;      /* nothing may be called back from inside */
	assert_int_equal(imc_sa_port_gone(f.sa, &p3), 2);
	f.in_recv = false;
	assert_int_equal(f.nchg, 0);
	assert_int_equal(fx_stats(&f).mft_pending, 2);
	assert_int_equal(group(&f, &g1).members, 1);
	assert_int_equal(group(&f, &g2).members, 1);
	fx_run(&f);
	assert_int_equal(f.nchg, 2);
	assert_false(f.chg[0].c.add);
	assert_true(imc_gid_equal(&f.chg[0].c.port_gid, &p3));
	assert_true(imc_gid_equal(&f.chg[1].c.port_gid, &p3));
	/* port 2 was g1's last full member: the group goes, trap 67 from
	 * the loop */
	f.in_recv = true;
	assert_int_equal(imc_sa_port_gone(f.sa, &p2), 1);
	f.in_recv = false;
	assert_false(has_group(&f, &g1));
	assert_int_equal(fx_stats(&f).traps_67, 0);
	fx_run(&f);
	st = fx_stats(&f);
	assert_int_equal(st.traps_67, 1);
	assert_int_equal(st.mft_pending, 0);
	assert_int_equal(st.members, 1);
	assert_int_equal(imc_sa_port_gone(f.sa, &p2), 0);
	fx_fini(&f);
}

static void mft_program_first(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1"), h = fx_mgid("ff12:1234::2");
	const struct fx_sent *s;
	char *before, *after;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &g, 2, 1, NULL), 0);
	s = fx_answer(&f, 2, f.tid);
	assert_non_null(s);
	assert_int_equal(f.nchg, 1);
	assert_true(f.chg[0].seq < s->seq);     /* programmed, then answered */
	assert_int_equal(f.chg[0].mlid, 0xc001);
	/* the MFT cannot be programmed: nothing happened */
	f.mft_result = -EIO;
	before = fx_dump(&f);
	assert_int_equal(fx_join(&f, 3, &g, 3, 1, NULL), ST_NO_RESOURCES);
	assert_int_equal(fx_join(&f, 3, &h, 3, 1, NULL), ST_NO_RESOURCES);
	after = fx_dump(&f);
	assert_string_equal(before, after);
	assert_int_equal(fx_stats(&f).mft_failures, 2);
	assert_int_equal(fx_stats(&f).mlids_in_use, 2);
	free(before);
	free(after);
	fx_fini(&f);
}

static void mft_answer_first(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	const struct fx_sent *s;
	struct fx f;

	fx_init(&f);
	f.cfg.mft_order = IMC_SA_MFT_ANSWER_FIRST;
	f.cfg.mft_delay = 5 * IMC_NSEC_PER_MSEC;
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &g, 2, 1, NULL), 0);
	s = fx_answer(&f, 2, f.tid);
	assert_non_null(s);
	assert_int_equal(s->at, 0);
	assert_int_equal(f.nchg, 0);
	assert_int_equal(fx_stats(&f).mft_pending, 1);
	fx_run_for(&f, 4 * IMC_NSEC_PER_MSEC);
	assert_int_equal(f.nchg, 0);
	fx_run_for(&f, IMC_NSEC_PER_MSEC);
	assert_int_equal(f.nchg, 1);
	assert_int_equal(f.chg[0].at, 5 * IMC_NSEC_PER_MSEC);
	assert_true(f.chg[0].c.add);
	/* a leave is answered at once and unprogrammed 5 ms later */
	assert_int_equal(fx_leave(&f, 2, &g, 2, 1, NULL), 0);
	assert_int_equal(f.nchg, 1);
	fx_run_for(&f, 5 * IMC_NSEC_PER_MSEC);
	assert_int_equal(f.nchg, 2);
	assert_false(f.chg[1].c.add);
	assert_int_equal(f.chg[1].at, 10 * IMC_NSEC_PER_MSEC);
	fx_fini(&f);
}

static void mlid_share(void **state)
{
	struct imc_gid a = fx_mgid("ff12:1234::a"), b = fx_mgid("ff12:1234::b");
	struct imc_gid c = fx_mgid("ff12:1234::c");
	struct imc_sa_mad ans;
	struct fx f;

	fx_init(&f);
	f.cfg.mlid_last = 0xc001;
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &a, 2, 1, &ans), 0);
	assert_int_equal(fx_rec(&ans).mlid, 0xc001);
	assert_int_equal(fx_join(&f, 2, &b, 2, 1, NULL), ST_NO_RESOURCES);
	fx_fini(&f);

	fx_init(&f);
	f.cfg.mlid_last = 0xc001;
	f.cfg.mlid_share = true;
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &a, 2, 1, &ans), 0);
	assert_int_equal(fx_rec(&ans).mlid, 0xc001);
	assert_int_equal(fx_join(&f, 2, &b, 2, 1, &ans), 0);
	assert_int_equal(fx_rec(&ans).mlid, 0xc000);
	assert_int_equal(fx_join(&f, 2, &c, 2, 1, &ans), 0);
	assert_int_equal(fx_rec(&ans).mlid, 0xc001);
	assert_int_equal(fx_stats(&f).mlids_in_use, 2);
	assert_int_equal(fx_stats(&f).groups, 4);
	/* port 2 is on 0xc001's tree once for a and c */
	assert_int_equal(f.nchg, 2);
	assert_int_equal(f.chg[0].mlid, 0xc001);
	assert_int_equal(f.chg[1].mlid, 0xc000);
	assert_int_equal(fx_leave(&f, 2, &a, 2, 1, NULL), 0);
	assert_int_equal(f.nchg, 2);
	assert_int_equal(fx_stats(&f).mlids_in_use, 2);
	assert_int_equal(fx_leave(&f, 2, &c, 2, 1, NULL), 0);
	assert_int_equal(f.nchg, 3);
	assert_false(f.chg[2].c.add);
	assert_int_equal(f.chg[2].mlid, 0xc001);
	assert_int_equal(fx_stats(&f).mlids_in_use, 1);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(create_assigns_mgid),
		cmocka_unit_test(create_needs_components),
		cmocka_unit_test(join_and_leave_need_components),
		cmocka_unit_test(join_must_match_group),
		cmocka_unit_test(join_state_rules),
		cmocka_unit_test(mtu_4096_on_2048_port),
		cmocka_unit_test(mgid_validation),
		cmocka_unit_test(ipoib_qkey_rule),
		cmocka_unit_test(port_gid_checks),
		cmocka_unit_test(unknown_requester_gets_no_answer),
		cmocka_unit_test(proxy_join),
		cmocka_unit_test(join_state_or),
		cmocka_unit_test(leave_semantics),
		cmocka_unit_test(broadcast_group_persists),
		cmocka_unit_test(sendonly_full_keeps_group),
		cmocka_unit_test(mlid_leak_1100_cycles),
		cmocka_unit_test(mlid_reuse),
		cmocka_unit_test(selectors_at_create),
		cmocka_unit_test(selectors_against_group),
		cmocka_unit_test(pkey_rules),
		cmocka_unit_test(queries),
		cmocka_unit_test(port_gone),
		cmocka_unit_test(mft_program_first),
		cmocka_unit_test(mft_answer_first),
		cmocka_unit_test(mlid_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
