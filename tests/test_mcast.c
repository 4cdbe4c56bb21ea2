/* The join tracker against the real SA engine on one virtual loop, through
 * SA clients whose transport injects faults (drop, duplicate, delay).
 *
 * Every test ends in finish(): every handle left, the loop run dry, then
 * the trackers hold nothing, no query is alive, the SA holds no membership
 * of any test port, and no timer is left armed. The SA's memberships are
 * compared with the union of the live handles' bits (check_union()) at the
 * points where each test has settled.
 *
 * The random sweep (rule 2) runs seeds 1 to 40 here; a longer run:
 *   cc -O2 -DSWEEP_FIRST=1 -DSWEEP_LAST=30000 -D_GNU_SOURCE \
 *      -DIMC_SOURCE_DIR='"."' -DIMC_BINARY_DIR='"build"' -Iinclude -Isrc \
 *      -Itests tests/test_mcast.c build/libibmcast.a -lcmocka -libumad -lm \
 *      -o /tmp/sweep && /tmp/sweep
 * (15 s). A failing seed is printed; SWEEP_FIRST=SWEEP_LAST=N replays it. */
#include "test_mcast_fixture.h"

static const char *G1 = "ff12:1234::1";
static const char *G2 = "ff12:1234::2";
static const char *G3 = "ff12:1234::3";

static int QP1, QP2;

/* ------------------------------------------------------------------ */
/* Joins and leaves. */

static void test_join_leave_basic(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *h = join(n, G1, IMC_JOIN_FULL, &QP1);
	struct imc_mcast_stats st;
	const struct logent *e;
	size_t mark;

	/* Rule 1: nothing inside join, not even the Set. */
	assert_int_equal(h->ncb, 0);
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 0);
	run();
	assert_int_equal(h->ncb, 1);
	assert_int_equal(h->ev[0], IMC_MCAST_EV_JOINED);
	assert_true(h->rec.mlid >= 0xC000);
	assert_int_equal(h->rec.qkey, 0x1234);
	assert_true(imc_gid_equal(&h->rec.mgid, &g1));
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	e = find_log(L_SEND, 2, UMAD_METHOD_SET, 0, NULL);
	assert_int_equal(e->join_state, IMC_JOIN_FULL);
	assert_int_equal(sa_js(2, &g1), IMC_JOIN_FULL);
	e = find_log(L_ATTACH, 2, 0, 0, NULL);
	assert_non_null(e);
	assert_ptr_equal(e->qp, &QP1);
	assert_int_equal(e->mlid, h->rec.mlid);
	check_union();

	assert_int_equal(subscriptions(2, 0), 0);
	st = stats(n);
	assert_int_equal(st.joins, 1);
	assert_int_equal(st.joins_local, 0);
	assert_int_equal(st.mads_sent, 1);
	assert_int_equal(st.groups, 1);
	assert_int_equal(st.members, 1);

	mark = W->nlog;
	leave(h);
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 0);
	run();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	e = find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark, NULL);
	assert_int_equal(e->join_state, IMC_JOIN_FULL);
	assert_int_equal(sa_js(2, &g1), 0);
	st = stats(n);
	assert_int_equal(st.leaves, 1);
	assert_int_equal(st.mads_sent, 2);
	assert_int_equal(st.groups, 0);
	finish();
}

/* A join whose bits are held and whose template matches sends nothing. */
static void test_local_join_no_mad(void **state)
{
	struct node *n = node(2);
	struct h *a = join(n, G1, IMC_JOIN_FULL, &QP1);
	struct imc_mcast_join_req r;
	struct h *b, *c;
	size_t mark;

	run();
	mark = W->nlog;
	/* same bits, a subset of the template */
	memset(&r, 0, sizeof(r));
	r.rec.mgid = fx_mgid(G1);
	r.rec.qkey = 0x1234;
	r.comp_mask = JOIN_MASK | CM(QKEY);
	r.join_state = IMC_JOIN_FULL;
	b = join_req(n, &r);
	c = join(n, G1, IMC_JOIN_FULL, &QP1);
	assert_int_equal(b->ncb + c->ncb, 0);
	run();
	assert_int_equal(b->ncb, 1);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(c->ev[0], IMC_MCAST_EV_JOINED);
	assert_true(imc_gid_equal(&b->rec.mgid, &a->rec.mgid));
	assert_int_equal(b->rec.mlid, a->rec.mlid);
	assert_int_equal(W->nlog - mark, 2u); /* two callbacks, no MAD */
	assert_int_equal(stats(n).joins_local, 2);
	assert_int_equal(stats(n).mads_sent, 1);
	/* and leaving them sends nothing either */
	mark = W->nlog;
	leave(b);
	leave(c);
	run();
	assert_int_equal(W->nlog, mark);
	finish();
}

/* Joins in the same round share one Set; a join that arrives while it is
 * in flight is answered from it. */
static void test_queued_joins_one_mad(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *c, *d;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	b = join(n, G1, IMC_JOIN_FULL, &QP1);
	c = join(n, G1, IMC_JOIN_FULL, NULL);
	run_now();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	assert_int_equal(stats(n).in_flight, 1);
	d = join(n, G1, IMC_JOIN_FULL, &QP2);
	run_now();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(c->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(d->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ncb + b->ncb + c->ncb + d->ncb, 4);
	assert_int_equal(stats(n).joins_local, 0);
	check_union();
	finish();
}

/* A template that does not match the group's record fails that member
 * alone with -EINVAL: locally, and when queued behind a Set. */
static void test_mismatch_fails_alone(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *c, *d;
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	size_t mark;

	a = join(n, G1, IMC_JOIN_FULL, NULL);
	r.rec.qkey = 0x9999;
	b = join_req(n, &r);        /* queued behind a's Set */
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(b->st[0], -EINVAL);
	assert_true(imc_mcast_member_state(b->m) == IMC_MCAST_FAILED);

	mark = W->nlog;
	c = join_req(n, &r);        /* local: bits held, no MAD */
	d = join(n, G1, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	assert_int_equal(c->st[0], -EINVAL);
	assert_int_equal(d->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ncb, 1); /* a heard nothing more */
	assert_int_equal(stats(n).errors, 2);
	assert_int_equal(sa_js(2, &a->rec.mgid), IMC_JOIN_FULL);
	check_union();
	finish();
}

struct selcase {
	uint64_t mask;
	uint8_t mtu_sel, mtu, rate_sel, rate, life_sel, life;
	bool ok;
};

/* Selectors: the group has MTU 4 (2048), rate 3 (10 Gb/s), lifetime 10.
 * Rate codes are not in bandwidth order: code 5 (5 Gb/s) is slower than
 * code 3, code 4 (30 Gb/s) faster. */
static void test_selectors(void **state)
{
	static const struct selcase cases[] = {
		{ CM(MTU_SEL) | CM(MTU), 0, 3, 0, 0, 0, 0, true },
		{ CM(MTU_SEL) | CM(MTU), 0, 4, 0, 0, 0, 0, false },
		{ CM(MTU_SEL) | CM(MTU), 1, 5, 0, 0, 0, 0, true },
		{ CM(MTU_SEL) | CM(MTU), 1, 4, 0, 0, 0, 0, false },
		{ CM(MTU_SEL) | CM(MTU), 2, 4, 0, 0, 0, 0, true },
		{ CM(MTU_SEL) | CM(MTU), 2, 3, 0, 0, 0, 0, false },
		{ CM(MTU_SEL) | CM(MTU), 3, 1, 0, 0, 0, 0, true },
		{ CM(MTU), 0, 4, 0, 0, 0, 0, true },
		{ CM(MTU), 0, 5, 0, 0, 0, 0, false },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 0, 5, 0, 0, true },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 0, 4, 0, 0, false },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 1, 4, 0, 0, true },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 1, 5, 0, 0, false },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 2, 3, 0, 0, true },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 3, 2, 0, 0, true },
		{ CM(LIFE_TIME_SEL) | CM(LIFE_TIME), 0, 0, 0, 0, 0, 9, true },
		{ CM(LIFE_TIME_SEL) | CM(LIFE_TIME), 0, 0, 0, 0, 0, 10, false },
		{ CM(LIFE_TIME_SEL) | CM(LIFE_TIME), 0, 0, 0, 0, 1, 11, true },
		{ CM(LIFE_TIME_SEL) | CM(LIFE_TIME), 0, 0, 0, 0, 2, 11, false },
		{ CM(LIFE_TIME_SEL) | CM(LIFE_TIME), 0, 0, 0, 0, 3, 0, true },
	};
	struct node *n = node(2);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	struct h *hs[IMC_ARRAY_SIZE(cases)];
	size_t mark;

	r.rec.life = 10;
	r.comp_mask |= CM(LIFE_TIME);
	join_req(n, &r);
	run();
	assert_int_equal(H[0].rec.mtu, 4);
	assert_int_equal(H[0].rec.rate, 3);
	assert_int_equal(H[0].rec.life, 10);
	mark = W->nlog;
	for (size_t i = 0; i < IMC_ARRAY_SIZE(cases); i++) {
		memset(&r, 0, sizeof(r));
		r.rec.mgid = fx_mgid(G1);
		r.comp_mask = JOIN_MASK | cases[i].mask;
		r.rec.mtu_sel = cases[i].mtu_sel;
		r.rec.mtu = cases[i].mtu;
		r.rec.rate_sel = cases[i].rate_sel;
		r.rec.rate = cases[i].rate;
		r.rec.life_sel = cases[i].life_sel;
		r.rec.life = cases[i].life;
		r.join_state = IMC_JOIN_FULL;
		hs[i] = join_req(n, &r);
	}
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	for (size_t i = 0; i < IMC_ARRAY_SIZE(cases); i++) {
		if (hs[i]->ev[0] != (cases[i].ok ? IMC_MCAST_EV_JOINED :
						   IMC_MCAST_EV_ERROR))
			fail_msg("selector case %zu", i);
		if (!cases[i].ok)
			assert_int_equal(hs[i]->st[0], -EINVAL);
	}
	finish();
}

/* SA statuses reach the member as they are. */
static void test_sa_status_passed_through(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_mcast_join_req r;
	struct h *a, *b, *c;

	/* INSUF_COMPS: a create without the create components */
	memset(&r, 0, sizeof(r));
	r.rec.mgid = fx_mgid(G1);
	r.comp_mask = JOIN_MASK;
	r.join_state = IMC_JOIN_FULL;
	a = join_req(n, &r);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], ST_INSUF_COMPS);

	/* REQ_INVALID: a group of a partition port 2 is not in */
	fx_pkeys(&W->f, 3, 0xffff, 0x8001);
	r = create_req(G2, IMC_JOIN_FULL, NULL);
	r.rec.pkey = 0x8001;
	b = join_req(n3, &r);
	run();
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	c = join_req(n, &r);
	run();
	assert_int_equal(c->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(c->st[0], ST_REQ_INVALID);
	assert_int_equal(stats(n).errors, 2);
	assert_int_equal(stats(n).errors_by_status[6], 1);
	assert_int_equal(stats(n).errors_by_status[2], 1);
	/* a failed member holds nothing; the group waits for its leave */
	assert_int_equal(stats(n).groups, 2);
	check_union();
	finish();
}

/* When the SA refuses the template a Set carried, only that member fails;
 * the member queued with it is asked for again and joins. */
static void test_refusal_fails_trigger_only(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	struct h *a, *b;

	join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	r.rec.qkey = 0x4321;  /* not the group's: REQ_INVALID at the SA */
	a = join_req(n, &r);
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], ST_REQ_INVALID);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 2);
	assert_int_equal(sa_js(2, &b->rec.mgid), IMC_JOIN_FULL);
	check_union();
	finish();
}

/* A Delete carries exactly the bits no remaining member holds. */
static void test_delete_exact_bits(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *full1, *non, *sof, *full2;
	const struct logent *e;
	size_t mark;

	full1 = join(n, G1, IMC_JOIN_FULL, &QP1);
	non = join(n, G1, IMC_JOIN_NON, &QP2);
	sof = join(n, G1, IMC_JOIN_SENDONLY_FULL, NULL);
	full2 = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	e = find_log(L_SEND, 2, UMAD_METHOD_SET, 0, NULL);
	assert_int_equal(e->join_state, 0xB);
	assert_int_equal(sa_js(2, &g1), 0xB);

	mark = W->nlog;
	leave(non);
	run();
	e = find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark, NULL);
	assert_non_null(e);
	assert_int_equal(e->join_state, IMC_JOIN_NON);
	assert_int_equal(sa_js(2, &g1), 0x9);

	mark = W->nlog;
	leave(full1);   /* full2 still holds FullMember */
	run();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 0);

	leave(full2);
	run();
	e = find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark, NULL);
	assert_non_null(e);
	assert_int_equal(e->join_state, IMC_JOIN_FULL);
	assert_int_equal(sa_js(2, &g1), IMC_JOIN_SENDONLY_FULL);
	check_union();

	mark = W->nlog;
	leave(sof);
	run();
	e = find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark, NULL);
	assert_int_equal(e->join_state, IMC_JOIN_SENDONLY_FULL);
	assert_int_equal(sa_js(2, &g1), 0);
	finish();
}

/* SendOnlyNonMember and NonMember join an existing group like full
 * members; only NonMember attaches. */
static void test_nonmember_states(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b;
	size_t mark;

	join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	mark = W->nlog;
	a = join(n, G1, IMC_JOIN_SENDONLY_NON, &QP1);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	assert_null(find_log(L_ATTACH, 2, 0, mark, NULL));
	b = join(n, G1, IMC_JOIN_NON, &QP1);
	run();
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_non_null(find_log(L_ATTACH, 2, 0, mark, NULL));
	assert_int_equal(sa_js(2, &g1), 0x6);
	check_union();
	finish();
}

/* ------------------------------------------------------------------ */
/* Timeouts and retries. */

static bool drop_all(struct node *n, bool to_sa, const uint8_t *mad)
{
	return true;
}

static void test_timeout_after_retries(void **state)
{
	struct node *n = node(2);
	struct h *a, *b;
	struct imc_mcast_stats st;

	W->drop_fn = drop_all;
	a = join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	/* 100 + 200 + 400 ms with up to 25% jitter */
	run_for(900 * MS);
	/* one Set, sent 1 + retries times, then both covered members */
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 3);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], -ETIMEDOUT);
	assert_int_equal(b->st[0], -ETIMEDOUT);
	assert_int_equal(a->ncb, 1);
	st = stats(n);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.retries, 2);
	assert_int_equal(st.mads_sent, 2); /* the Set, then a Delete */
	assert_int_equal(st.errors, 2);
	/* The SA may have taken the Set: a Delete settles it, and is
	 * sent again until answered. */
	assert_int_equal(st.in_flight, 1);
	assert_non_null(find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, 0, NULL));
	run_for(2000 * MS);
	assert_true(sent(2, UMAD_SA_METHOD_DELETE, 0) > 3);
	W->drop_fn = NULL;
	run();
	assert_non_null(find_log(L_ANSWER, 2, UMAD_SA_METHOD_DELETE_RESP, 0,
				 NULL));
	assert_int_equal(stats(n).in_flight, 0);
	finish();
}

static unsigned deletes_to_drop;

static bool drop_deletes(struct node *n, bool to_sa, const uint8_t *mad)
{
	if (to_sa && mad[3] == UMAD_SA_METHOD_DELETE && deletes_to_drop) {
		deletes_to_drop--;
		return true;
	}
	return false;
}

/* A Delete is sent again after the client's retries, until answered. */
static void test_delete_retried_until_answered(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a = join(n, G1, IMC_JOIN_FULL, NULL);
	size_t mark;

	run();
	mark = W->nlog;
	deletes_to_drop = 7;  /* two whole queries and one more attempt */
	W->drop_fn = drop_deletes;
	leave(a);
	run();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 8);
	assert_int_equal(stats(n).timeouts, 2);
	assert_int_equal(stats(n).mads_sent, 4); /* Set + 3 Deletes */
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(stats(n).groups, 0);
	finish();
}

/* An unanswered Delete stops when the port goes down. The bit stays in
 * doubt (an SM whose sweep missed the flap keeps the port's memberships)
 * and is deleted again once the port is back. */
static void test_delete_stops_at_port_down(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a = join(n, G1, IMC_JOIN_FULL, NULL);
	size_t mark;

	run();
	mark = W->nlog;
	W->drop_fn = drop_all;
	leave(a);
	run_for(1000 * MS);
	assert_true(sent(2, UMAD_SA_METHOD_DELETE, mark) >= 4);
	port_event(n, IMC_MCAST_PORT_DOWN);
	assert_int_equal(stats(n).in_flight, 0);
	mark = W->nlog;
	run();
	assert_int_equal(W->nlog, mark);
	assert_int_equal(stats(n).groups, 1);
	assert_int_equal(sa_js(2, &g1), 0x1);
	W->drop_fn = NULL;
	port_event(n, IMC_MCAST_PORT_ACTIVE);
	run();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(stats(n).groups, 0);
	finish();
}

/* The port flaps and members leave meanwhile. When the SM dropped the
 * port, the Delete at port up is refused and settles the doubt; when the
 * flap was shorter than the SM's sweep, the SA still holds the
 * membership and the Delete gives it up (the tracker used to forget it
 * at port down, and the SA kept it for good). A member that stays is
 * joined again with its bits only. */
static void test_flap_leave_while_down(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1), g2 = fx_mgid(G2);
	struct h *a, *b, *c;
	size_t mark;

	/* a FullMember elsewhere keeps G2 alive for the NonMember */
	join(n3, G2, IMC_JOIN_FULL, NULL);
	for (int dropped = 0; dropped < 2; dropped++) {
		a = join(n, G1, IMC_JOIN_FULL, &QP1);
		b = join(n, G2, IMC_JOIN_FULL, NULL);
		c = join(n, G2, IMC_JOIN_NON, NULL);
		run();
		assert_int_equal(sa_js(2, &g1), 0x1);
		assert_int_equal(sa_js(2, &g2), 0x3);
		link_set(n, true);
		port_event(n, IMC_MCAST_PORT_DOWN);
		if (dropped)
			assert_int_equal(imc_sa_port_gone(
						 W->f.sa, &W->f.ports[2].p.gid),
					 2);
		leave(a);
		leave(b);
		run();
		/* kept while down: the SA may hold them */
		assert_int_equal(stats(n).groups, 2);
		mark = W->nlog;
		link_set(n, false);
		port_event(n, IMC_MCAST_PORT_ACTIVE);
		run();
		assert_int_equal(c->ev[1], IMC_MCAST_EV_WAITING);
		assert_int_equal(c->ev[2], IMC_MCAST_EV_REJOINING);
		assert_int_equal(c->ev[3], IMC_MCAST_EV_JOINED);
		assert_int_equal(sa_js(2, &g1), 0);
		assert_int_equal(sa_js(2, &g2), 0x2);
		assert_int_equal(stats(n).groups, 1);
		/* One Delete for G1's bit in doubt, one for G2's FullMember
		 * bit, each answered (held) or refused (dropped). */
		assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 2);
		assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 1);
		check_union();
		leave(c);
		run();
		assert_int_equal(sa_js(2, &g2), 0);
	}
	finish();
}

/* A reregister puts what the port held in doubt: a join that comes while
 * the re-join is on its way is not answered from a bit the SA lost (the
 * re-join asked for fewer bits than the port held before). */
static void test_rejoin_doubts_held_bits(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *b, *c;
	size_t mark;

	join(n3, G1, IMC_JOIN_FULL, NULL); /* keeps G1 for NonMembers */
	join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_NON, NULL);
	run();
	assert_int_equal(sa_js(2, &g1), 0x3);
	imc_sa_destroy(W->f.sa);
	sa_start();
	port_event(n3, IMC_MCAST_PORT_REREGISTER);
	run();
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	leave(b);
	while (!sent(2, UMAD_METHOD_SET, mark))
		assert_true(imc_loop_run_once(W->f.loop) > 0);
	c = join(n, G1, IMC_JOIN_NON, NULL);
	run();
	assert_int_equal(c->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 2);
	assert_int_equal(sa_js(2, &g1), 0x3);
	check_union();
	finish();
}

static bool drop_delete_answers(struct node *n, bool to_sa,
				const uint8_t *mad)
{
	return !to_sa && mad[3] == UMAD_SA_METHOD_DELETE_RESP;
}

/* A Delete whose answers are all lost may have been taken: a join that
 * wants its bits back asks the SA for them. */
static void test_delete_unanswered_then_join(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b;
	size_t mark;

	a = join(n, G1, IMC_JOIN_FULL, NULL);
	run();
	W->drop_fn = drop_delete_answers;
	leave(a);
	run_now();
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	mark = W->nlog;
	run();
	assert_int_equal(stats(n).timeouts, 1);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 1);
	assert_int_equal(sa_js(2, &g1), 0x1);
	check_union();
	finish();
}

/* Drops the first answer to a Set and takes the second partition from
 * port 2 at that moment: the retry is refused. */
static bool drop_set_answer_take_pkey(struct node *n, bool to_sa,
				      const uint8_t *mad)
{
	static bool done;

	if (!n) {
		done = false;
		return false;
	}
	if (to_sa || done || mad[3] != UMAD_METHOD_GET_RESP)
		return false;
	done = true;
	fx_pkeys(&W->f, 2, 0xffff, 0);
	return true;
}

/* The SA took a Set whose answer was lost and refused its retry (the
 * port left the partition meanwhile; the SA does not deduplicate): the
 * bits are in doubt, and nobody wants them, so a Delete settles them. */
static void test_retry_refused_after_taken(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	struct h *a;

	fx_pkeys(&W->f, 2, 0xffff, 0x8001);
	r.rec.pkey = 0x8001;
	drop_set_answer_take_pkey(NULL, false, NULL);
	W->drop_fn = drop_set_answer_take_pkey;
	a = join_req(n, &r);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], UMAD_SA_STATUS_REQ_INVALID << 8);
	assert_true(sent(2, UMAD_METHOD_SET, 0) == 2);
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, 0), 1);
	assert_int_equal(sa_js(2, &g1), 0);
	finish();
}

/* A REJOINING member that the re-join's answer fails (its group came back
 * with another record: a create of the same port, to which the new SA
 * gave the group's MGID) has its QP detached, though nothing else happens
 * in the group afterwards. */
static void test_rejoin_mismatch_detaches(void **state)
{
	struct node *n = node(2);
	struct imc_mcast_join_req r;
	const struct logent *e;
	struct h *a, *b;
	size_t mark, at;

	a = join(n, NULL, IMC_JOIN_FULL, &QP1);
	run();
	a->mgid = a->rec.mgid;
	imc_sa_destroy(W->f.sa);
	sa_start();
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	r = create_req(NULL, IMC_JOIN_FULL, &QP2);
	r.rec.qkey = 0x5678;
	b = join_req(n, &r);
	mark = W->nlog;
	run();
	assert_true(imc_gid_equal(&b->rec.mgid, &a->mgid));
	b->mgid = b->rec.mgid;
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(a->ev[2], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[2], -ENETRESET);
	e = find_log(L_DETACH, 2, 0, mark, &at);
	assert_non_null(e);
	assert_ptr_equal(e->qp, &QP1);
	assert_null(find_log(L_DETACH, 2, 0, at + 1, NULL));
	check_union();
	finish();
}

/* A re-join left unanswered after the retries fails nobody: it is paced
 * again (the SA may only be too busy) until the SA answers; a join that
 * comes meanwhile waits for it. */
static void test_rejoin_unanswered_paced_again(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	W->drop_fn = drop_all;
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	run_for(10000 * MS);
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	run_for(10000 * MS);
	assert_true(stats(n).timeouts >= 2);
	assert_int_equal(stats(n).errors, 0);
	assert_int_equal(a->ncb, 2);
	assert_int_equal(a->ev[1], IMC_MCAST_EV_REJOINING);
	assert_true(imc_mcast_member_state(a->m) == IMC_MCAST_REJOINING);
	assert_int_equal(b->ncb, 0);
	W->drop_fn = NULL;
	run();
	assert_int_equal(a->ev[2], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(stats(n).errors, 0);
	assert_int_equal(sa_js(2, &g1), 0x1);
	check_union();
	finish();
}

/* ------------------------------------------------------------------ */
/* QP attach and detach order. */

static void test_attach_detach_order(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *s, *c;
	size_t i_ans = 0, i_att = 0, i_cb = 0, i_det = 0, i_del = 0, mark;
	int natt = 0;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	/* Set sent, answered, then attach, then the callback */
	assert_non_null(find_log(L_ANSWER, 2, UMAD_METHOD_GET_RESP, 0,
				 &i_ans));
	assert_non_null(find_log(L_ATTACH, 2, 0, 0, &i_att));
	assert_non_null(find_log(L_CB, 2, 0, 0, &i_cb));
	assert_true(i_ans < i_att);
	assert_true(i_att < i_cb);

	/* the same QP again: attached once; send-only: never */
	mark = W->nlog;
	b = join(n, G1, IMC_JOIN_FULL, &QP1);
	s = join(n, G1, IMC_JOIN_SENDONLY_FULL, &QP2);
	run();
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(s->ev[0], IMC_MCAST_EV_JOINED);
	assert_null(find_log(L_ATTACH, 2, 0, mark, NULL));
	c = join(n, G2, IMC_JOIN_FULL, &QP1);
	run();
	for (size_t i = 0; i < W->nlog; i++)
		natt += W->log[i].kind == L_ATTACH;
	assert_int_equal(natt, 2); /* QP1 on G1 and on G2 */

	/* the first leave keeps the QP (b uses it) */
	mark = W->nlog;
	leave(a);
	run();
	assert_null(find_log(L_DETACH, 2, 0, mark, NULL));
	/* the last one detaches, before the Delete of FullMember */
	leave(b);
	run();
	assert_non_null(find_log(L_DETACH, 2, 0, mark, &i_det));
	assert_non_null(find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark,
				 &i_del));
	assert_true(i_det < i_del);
	assert_ptr_equal(W->log[i_det].qp, &QP1);
	assert_int_equal(W->log[i_det].mlid, a->rec.mlid);
	assert_int_equal(W->log[i_del].join_state, IMC_JOIN_FULL);
	/* the send-only member leaves: a Delete, nothing to detach */
	mark = W->nlog;
	leave(s);
	run();
	assert_null(find_log(L_DETACH, 2, 0, mark, NULL));
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	(void)c;
	finish();
}

/* A failed attach fails the member and gives its bits back. */
static void test_attach_failure(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a;
	size_t mark;

	n->attach_result = -ENOSPC;
	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], -ENOSPC);
	assert_int_equal(stats(n).attach_errors, 1);
	/* bits given back: the Set's FullMember is deleted again */
	assert_non_null(find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, 0, NULL));
	assert_int_equal(sa_js(2, &g1), 0);
	n->attach_result = 0;
	mark = W->nlog;
	leave(a);
	run();
	assert_null(find_log(L_DETACH, 2, 0, mark, NULL));
	finish();
}

/* A QP that goes while the tracker lives on: released at once once its
 * members left, refused while one still uses it; no detach of it after. */
static void test_release_qp(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *c;
	size_t mark;
	int ndet = 0;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	b = join(n, G2, IMC_JOIN_FULL, &QP1);
	c = join(n, G1, IMC_JOIN_FULL, &QP2);
	run();
	assert_int_equal(stats(n).joined, 3);
	mark = W->nlog;
	assert_int_equal(imc_mcast_release_qp(n->t, &QP1), -EBUSY);
	leave(a);
	assert_int_equal(stats(n).joined, 2);
	assert_int_equal(imc_mcast_release_qp(n->t, &QP1), -EBUSY);
	assert_null(find_log(L_DETACH, 2, 0, mark, NULL));
	leave(b);
	assert_int_equal(imc_mcast_release_qp(n->t, &QP1), 0);
	for (size_t i = mark; i < W->nlog; i++)
		if (W->log[i].kind == L_DETACH) {
			assert_ptr_equal(W->log[i].qp, &QP1);
			ndet++;
		}
	assert_int_equal(ndet, 2);
	mark = W->nlog;
	run();
	/* the Deletes go; QP2 stays attached and QP1 is not touched */
	assert_null(find_log(L_DETACH, 2, 0, mark, NULL));
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	assert_int_equal(stats(n).joined, 1);
	assert_int_equal(imc_mcast_release_qp(n->t, NULL), -EINVAL);
	(void)c;
	finish();
}

/* ------------------------------------------------------------------ */
/* Port events. */

static void test_port_down_up(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b, *c;
	size_t mark;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	b = join(n, G1, IMC_JOIN_NON, NULL);
	run_now();                  /* b's Set in flight */
	assert_int_equal(stats(n).in_flight, 1);
	port_event(n, IMC_MCAST_PORT_DOWN);
	assert_int_equal(stats(n).in_flight, 0);
	link_set(n, true);
	assert_int_equal(imc_sa_port_gone(W->f.sa, &W->f.ports[2].p.gid), 1);
	c = join(n, G2, IMC_JOIN_FULL, NULL); /* while down */
	mark = W->nlog;
	run();
	/* nothing sent while down (the transport would show it) */
	assert_null(find_log(L_SEND, 2, UMAD_METHOD_SET, mark, NULL));
	assert_int_equal(a->ev[1], IMC_MCAST_EV_WAITING);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_WAITING);
	assert_int_equal(c->ev[0], IMC_MCAST_EV_WAITING);
	assert_true(imc_mcast_member_state(b->m) == IMC_MCAST_WAITING);
	assert_int_equal(a->ncb, 2);
	assert_int_equal(stats(n).groups, 2);

	link_set(n, false);
	port_event(n, IMC_MCAST_PORT_ACTIVE);
	assert_int_equal(a->ncb, 2);
	run();
	/* a: REJOINING then JOINED; b and c: their first completion */
	assert_int_equal(a->ev[2], IMC_MCAST_EV_REJOINING);
	assert_int_equal(a->ev[3], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ncb, 4);
	assert_int_equal(b->ev[1], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ncompl, 1);
	assert_int_equal(c->ev[1], IMC_MCAST_EV_JOINED);
	assert_int_equal(sa_js(2, &g1), 0x3);
	assert_int_equal(stats(n).rejoins, 2);
	assert_int_equal(stats(n).port_events[IMC_MCAST_PORT_DOWN], 1);
	check_union();
	finish();
}

/* The SA restarts empty; a client reregister (or an SM change) brings
 * every membership back without an error. */
static void rejoin_after_restart(enum imc_mcast_port_event ev)
{
	struct node *n = node(2), *n3 = node(3);
	struct h *a, *b, *c;
	struct imc_gid g1 = fx_mgid(G1);
	uint16_t mlid;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	b = join(n, G1, IMC_JOIN_SENDONLY_FULL, NULL);
	c = join(n3, G1, IMC_JOIN_FULL, &QP1);
	run();
	mlid = a->rec.mlid;
	imc_sa_destroy(W->f.sa);
	sa_start();
	assert_int_equal(sa_js(2, &g1), 0);
	port_event(n, ev);
	port_event(n3, ev);
	run();
	assert_int_equal(a->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(a->ev[2], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(b->ev[2], IMC_MCAST_EV_JOINED);
	assert_int_equal(c->ev[2], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ncompl, 2);
	assert_int_equal(a->rec.qkey, 0x1234);
	assert_int_equal(a->rec.mlid, mlid);
	assert_int_equal(sa_js(2, &g1), 0x9);
	assert_int_equal(sa_js(3, &g1), 0x1);
	assert_int_equal(stats(n).rejoins, 1);
	check_union();
	finish();
}

static void test_reregister_rejoins(void **state)
{
	rejoin_after_restart(IMC_MCAST_PORT_REREGISTER);
}

static void test_sm_change_rejoins(void **state)
{
	rejoin_after_restart(IMC_MCAST_PORT_SM_CHANGE);
}

/* A re-join that brings a new MLID moves the QP's attachment. */
static void test_rejoin_new_mlid(void **state)
{
	struct node *n = node(2);
	struct h *a, *x;
	size_t mark, i = 0;
	uint16_t old;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	old = a->rec.mlid;
	imc_sa_destroy(W->f.sa);
	sa_start();
	/* another port takes the old MLID in the new SA first */
	x = join(node(3), G2, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(x->rec.mlid, old);
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	run();
	assert_int_equal(a->ev[2], IMC_MCAST_EV_JOINED);
	assert_true(a->rec.mlid != old);
	assert_non_null(find_log(L_DETACH, 2, 0, mark, &i));
	assert_int_equal(W->log[i].mlid, old);
	assert_non_null(find_log(L_ATTACH, 2, 0, mark, &i));
	assert_int_equal(W->log[i].mlid, a->rec.mlid);
	check_union();
	finish();
}

/* A re-join that fails reports ERROR to every member of its group, and
 * what was held is given back. */
static void test_rejoin_failure_fails_group(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	struct h *a, *b, *c;

	fx_pkeys(&W->f, 2, 0xffff, 0x8001);
	fx_pkeys(&W->f, 3, 0xffff, 0x8001);
	r.rec.pkey = 0x8001;
	a = join_req(n, &r);
	b = join_req(n, &r);
	c = join_req(n3, &r);
	join(n, G2, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	/* port 2 leaves the partition */
	fx_pkeys(&W->f, 2, 0xffff, 0);
	port_event(n, IMC_MCAST_PORT_PKEY_CHANGE);
	run();
	assert_int_equal(a->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(a->ev[2], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[2], ST_REQ_INVALID);
	assert_int_equal(b->ev[2], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->ncompl, 2);
	assert_int_equal(c->ncb, 1); /* the other port is not concerned */
	assert_int_equal(H[3].ev[2], IMC_MCAST_EV_JOINED); /* G2 fine */
	/* the failed group's membership was given back */
	check_union();
	finish();
}

/* The SA deletes a group when its last full member leaves, from another
 * port here: the port that holds NonMember hears it from trap 67 (it
 * subscribed when it joined without a full bit), its member re-joins, is
 * refused, and waits for the group (its QP stays attached); a full
 * member of the port creates the group again and the NonMember is back.
 * The trap 66 subscription goes with the last member that waits. */
static void test_group_deleted_trap67(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *full, *non, *again;
	size_t mark;

	full = join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(subscriptions(3, 0), 0); /* full: not needed */
	non = join(n, G1, IMC_JOIN_NON, &QP1);
	run();
	assert_int_equal(non->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(subscriptions(2, 0), 1);
	assert_int_equal(fx_stats(&W->f).subscriptions, 1);
	mark = W->nlog;
	leave(full);
	run_for(900 * MS);
	assert_int_equal(stats(n).traps, 1);
	assert_int_equal(stats(n).groups_lost, 1);
	assert_int_equal(non->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(non->ev[2], IMC_MCAST_EV_WAITING);
	assert_int_equal(non->st[2], -ENOENT);
	assert_int_equal(non->ncb, 3);
	assert_int_equal(imc_mcast_member_state(non->m), IMC_MCAST_WAITING);
	assert_int_equal(stats(n).waits, 1);
	assert_non_null(find_log(L_DETACH, 2, 0, mark, NULL));
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(fx_stats(&W->f).subscriptions, 2); /* 67 and 66 */
	/* a full member of the port creates the group again */
	again = join(n, G1, IMC_JOIN_FULL, &QP1);
	run_for(100 * MS);
	assert_int_equal(again->ev[0], IMC_MCAST_EV_JOINED);
	/* the tries of a member that waits are not events */
	assert_int_equal(non->ev[3], IMC_MCAST_EV_JOINED);
	assert_int_equal(non->ncb, 4);
	assert_int_equal(sa_js(2, &g1), IMC_JOIN_FULL | IMC_JOIN_NON);
	assert_int_equal(fx_stats(&W->f).subscriptions, 1); /* 66 ended */
	/* after a reregister the port subscribes again */
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	run();
	assert_int_equal(subscriptions(2, mark), 1);
	check_union();
	finish();
}

/* A trap 67 Report can come late (sent again after a lost ReportResp,
 * IBA 13.4.8.2) and tell of a deletion older than the port's last join:
 * the tracker gives up nothing the SA may still hold. Here it comes while
 * the Delete of one member's bit is on its way and the other member has
 * left too: its bit is deleted after (it used to stay at the SA). */
static void test_trap67_late(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1), sa_gid = fx_gid(1);
	struct imc_sa_mad rep;
	struct imc_notice no;
	struct h *a, *b;
	size_t mark;

	a = join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_SENDONLY_FULL, NULL);
	run();
	assert_int_equal(sa_js(2, &g1), 0x9);
	mark = W->nlog;
	leave(a);
	run_now();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	leave(b);
	memset(&rep, 0, sizeof(rep));
	rep.mad.method = UMAD_METHOD_REPORT;
	rep.mad.attr_id = UMAD_ATTR_NOTICE;
	assert_int_equal(imc_notice_mcast_init(&no, IMC_TRAP_MCAST_GROUP_DELETED,
					       &g1, 1, &sa_gid), 0);
	assert_true(imc_notice_pack(&no, rep.data, sizeof(rep.data)) > 0);
	W->in_api = true;
	imc_mcast_report(n->t, &rep);
	W->in_api = false;
	run();
	assert_int_equal(stats(n).groups_lost, 1);
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 2);
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(stats(n).groups, 0);
	finish();
}

/* The port's own Delete of its last full bit deletes the group, with the
 * port's other bits (no other port is a full member): the Delete's answer
 * says what is left (nothing), and the member that stays is told, as by
 * trap 67: it re-joins, is refused and waits for the group. */
static void test_delete_takes_group(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b;

	a = join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_SENDONLY_NON, &QP1);
	run();
	assert_int_equal(sa_js(2, &g1), 0x5);
	leave(a);
	run_for(900 * MS);
	assert_int_equal(stats(n).groups_lost, 1);
	assert_int_equal(b->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(b->ev[2], IMC_MCAST_EV_WAITING);
	assert_int_equal(b->st[2], -ENOENT);
	assert_int_equal(sa_js(2, &g1), 0);
	check_union();
	finish();
}

/* A Delete that leaves the port without a full bit subscribes to trap 67
 * first, as a join without one does: when another port's full member
 * leaves later, the port hears that the group is gone. */
static void test_delete_subscribes(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b, *other;
	size_t mark;

	other = join(n3, G1, IMC_JOIN_FULL, NULL);
	a = join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_NON, NULL);
	run();
	assert_int_equal(subscriptions(2, 0), 0);
	mark = W->nlog;
	leave(a);
	run();
	assert_int_equal(subscriptions(2, mark), 1);
	assert_int_equal(sa_js(2, &g1), 0x2);
	leave(other);
	run_for(900 * MS);
	assert_int_equal(stats(n).traps, 1);
	assert_int_equal(b->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(b->ev[2], IMC_MCAST_EV_WAITING);
	assert_int_equal(sa_js(2, &g1), 0);
	check_union();
	finish();
}

/* The SA holds a bit of the port that the tracker never knew of (a
 * create of the port whose answers were all lost leaves such bits): the
 * Delete's answer names the port's JoinState left, and the tracker gives
 * that bit up too. */
static void test_delete_answer_names_what_is_left(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	uint8_t mad[IMC_MAD_SIZE];
	struct imc_mcmr r;
	struct h *a;
	size_t mark;

	join(n3, G1, IMC_JOIN_FULL, NULL); /* keeps G1 for the NonMember */
	a = join(n, G1, IMC_JOIN_FULL, NULL);
	run();
	/* NonMember for port 2, from port 2 with a TID of nobody's */
	memset(&r, 0, sizeof(r));
	r.mgid = g1;
	r.port_gid = fx_gid(2);
	r.join_state = IMC_JOIN_NON;
	fx_mcmr_mad(mad, UMAD_METHOD_SET, 0x7e57, 0, JOIN_MASK, &r);
	assert_int_equal(fx_recv(&W->f, 2, mad, sizeof(mad)), 0);
	run();
	assert_int_equal(sa_js(2, &g1), 0x3);
	mark = W->nlog;
	leave(a);
	run();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 2);
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(stats(n).groups, 0);
	finish();
}

/* LID change: nothing at the SA. */
static void test_lid_change(void **state)
{
	struct node *n = node(2);
	struct h *a = join(n, G1, IMC_JOIN_FULL, NULL);
	size_t mark;

	run();
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_LID_CHANGE);
	run();
	assert_int_equal(W->nlog, mark);
	assert_int_equal(a->ncb, 1);
	assert_int_equal(stats(n).port_events[IMC_MCAST_PORT_LID_CHANGE], 1);
	finish();
}

/* Re-joins after a reregister (of an SA that lost everything). */
struct rj {
	imc_time_t t0, first, last;
	unsigned sets, at_first;
	struct node *n;
};

static void reregister_many(struct rj *o, enum imc_mcast_rejoin policy,
			    imc_time_t spread, unsigned window,
			    imc_time_t delay)
{
	struct imc_mcast_config mc = tracker_cfg(2);
	struct imc_sa_client_config cc = client_cfg(2);
	char mg[64];
	size_t mark;

	mc.rejoin = policy;
	mc.rejoin_window = window;
	mc.rejoin_spread = spread;
	cc.window = 64;
	o->n = node_cfg(2, &mc, &cc);
	W->delay_min = W->delay_max = delay;
	for (int i = 0; i < 100; i++) {
		snprintf(mg, sizeof(mg), "ff12:1234::%x", 0x100 + i);
		join(o->n, mg, IMC_JOIN_FULL, NULL);
	}
	run();
	o->n->sets_out_max = 0;
	mark = W->nlog;
	o->t0 = imc_loop_now(W->f.loop);
	imc_sa_destroy(W->f.sa);
	sa_start();
	port_event(o->n, IMC_MCAST_PORT_REREGISTER);
	run();
	o->first = IMC_TIME_MAX;
	o->last = 0;
	o->sets = 0;
	for (size_t i = mark; i < W->nlog; i++) {
		if (W->log[i].kind != L_SEND ||
		    W->log[i].method != UMAD_METHOD_SET)
			continue;
		o->sets++;
		if (W->log[i].at < o->first)
			o->first = W->log[i].at;
		if (W->log[i].at > o->last)
			o->last = W->log[i].at;
	}
	o->at_first = 0;
	for (size_t i = mark; i < W->nlog; i++)
		o->at_first += W->log[i].kind == L_SEND &&
			       W->log[i].method == UMAD_METHOD_SET &&
			       W->log[i].at == o->first;
	assert_int_equal(o->sets, 100);
	for (size_t i = 0; i < nh; i++) {
		assert_int_equal(H[i].ncb, 3);
		assert_int_equal(H[i].ev[1], IMC_MCAST_EV_REJOINING);
		assert_int_equal(H[i].ev[2], IMC_MCAST_EV_JOINED);
	}
	assert_int_equal(stats(o->n).rejoins, 100);
	check_union();
}

/* Paced: never more than the window in flight (and the window is used
 * when the re-joins crowd). */
static void test_rejoin_paced_window(void **state)
{
	struct rj o;

	reregister_many(&o, IMC_MCAST_REJOIN_PACED, 5 * MS, 4, 1 * MS);
	assert_int_equal(o.n->sets_out_max, 4);
	assert_true(o.first >= o.t0);
	finish();
}

/* Paced: the re-joins start spread over [0, rejoin_spread). */
static void test_rejoin_paced_spread(void **state)
{
	struct rj o;

	reregister_many(&o, IMC_MCAST_REJOIN_PACED, 50 * MS, 1000, 10 * US);
	assert_true(o.first >= o.t0);
	assert_true(o.last < o.t0 + 50 * MS);
	assert_true(o.last - o.first > 40 * MS);
	assert_true(o.at_first < 3);
	assert_true(o.n->sets_out_max < 10);
	finish();
}

/* Immediate, as Linux consumers do: every re-join at once, up to the
 * client's window. */
static void test_rejoin_immediate(void **state)
{
	struct rj o;

	reregister_many(&o, IMC_MCAST_REJOIN_IMMEDIATE, 50 * MS, 4, 1 * MS);
	assert_int_equal(o.first, o.t0);
	assert_int_equal(o.at_first, 64);
	assert_int_equal(o.n->sets_out_max, 64);
	finish();
}

/* ------------------------------------------------------------------ */
/* The observer: how long joins and re-joins take. */

struct obs {
	unsigned n;
	const struct imc_mcast_member *m[16];
	int type[16];
	bool first[16];
	imc_time_t elapsed[16];
	int ncb[16];                /* callbacks the handle had by then */
};

static struct obs OBS;

static void on_obs(void *ctx, const struct imc_mcast_member *m,
		   const struct imc_mcast_event *ev, bool first,
		   imc_time_t elapsed)
{
	struct obs *o = ctx;

	assert_ptr_equal(o, &OBS);
	assert_false(W->in_api);
	assert_true(o->n < 16);
	o->m[o->n] = m;
	o->type[o->n] = ev->type;
	o->first[o->n] = first;
	o->elapsed[o->n] = elapsed;
	o->ncb[o->n] = -1;
	for (size_t i = 0; i < nh; i++)
		if (H[i].live && H[i].m == m)
			o->ncb[o->n] = H[i].ncb;
	o->n++;
}

/* Loop time of the callback of h with event ev after log position from. */
static imc_time_t cb_at(const struct h *h, int ev, size_t from)
{
	for (size_t i = from; i < W->nlog; i++)
		if (W->log[i].kind == L_CB && W->log[i].lid == h->n->lid &&
		    W->log[i].ev == ev && imc_gid_equal(&W->log[i].mgid,
							&h->mgid))
			return W->log[i].at;
	fail_msg("no callback %d", ev);
	return 0;
}

static void test_observer(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_mcast_observer o = { on_obs, &OBS };
	struct imc_mcast_join_req bad = create_req(G1, IMC_JOIN_FULL, NULL);
	struct h *a, *b, *c, *d, *e;
	imc_time_t t0, t1;
	size_t mark;

	memset(&OBS, 0, sizeof(OBS));
	imc_mcast_set_observer(n->t, &o);
	/* A Set there and back, 5 us each way; told before the callback. */
	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	assert_int_equal(OBS.n, 1);
	assert_ptr_equal(OBS.m[0], a->m);
	assert_int_equal(OBS.type[0], IMC_MCAST_EV_JOINED);
	assert_true(OBS.first[0]);
	assert_int_equal(OBS.elapsed[0], 10 * US);
	assert_int_equal(OBS.ncb[0], 0);
	assert_int_equal(a->ncb, 1);
	/* Answered without a MAD: no time at all; a mismatch fails alone,
	 * at once too. n3 has no observer. */
	run_for(1 * MS);
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	bad.rec.qkey = 0x9999;
	c = join_req(n, &bad);
	join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(OBS.n, 3);
	assert_ptr_equal(OBS.m[1], b->m);
	assert_true(OBS.first[1]);
	assert_int_equal(OBS.elapsed[1], 0);
	assert_ptr_equal(OBS.m[2], c->m);
	assert_int_equal(OBS.type[2], IMC_MCAST_EV_ERROR);
	assert_true(OBS.first[2]);
	assert_int_equal(OBS.elapsed[2], 0);

	/* A reregister: re-joins, timed from the event. */
	run_for(1 * MS);
	t0 = imc_loop_now(W->f.loop);
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	run();
	assert_int_equal(OBS.n, 5);
	for (unsigned i = 3; i < 5; i++) {
		const struct h *x = OBS.m[i] == a->m ? a : b;

		assert_true(OBS.m[i] == a->m || OBS.m[i] == b->m);
		assert_false(OBS.first[i]);
		assert_int_equal(OBS.type[i], IMC_MCAST_EV_JOINED);
		assert_int_equal(OBS.elapsed[i],
				 cb_at(x, IMC_MCAST_EV_JOINED, mark) - t0);
		assert_true(OBS.elapsed[i] >= 10 * US);
	}

	/* A flap: a re-joins, timed from port up; d, joined while the
	 * port was down, completes its request, timed from its join. */
	port_event(n, IMC_MCAST_PORT_DOWN);
	link_set(n, true);
	run();
	assert_int_equal(OBS.n, 5);        /* WAITING is not observed */
	t0 = imc_loop_now(W->f.loop);
	d = join(n, G2, IMC_JOIN_FULL, NULL);
	run_for(3 * MS);
	link_set(n, false);
	t1 = imc_loop_now(W->f.loop);
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_ACTIVE);
	run();
	assert_int_equal(OBS.n, 8);
	for (unsigned i = 5; i < 8; i++) {
		if (OBS.m[i] == d->m) {
			assert_true(OBS.first[i]);
			assert_int_equal(OBS.elapsed[i],
					 cb_at(d, IMC_MCAST_EV_JOINED, mark) -
					 t0);
			assert_true(OBS.elapsed[i] > 3 * MS);
		} else {
			const struct h *x = OBS.m[i] == a->m ? a : b;

			assert_true(OBS.m[i] == a->m || OBS.m[i] == b->m);
			assert_false(OBS.first[i]);
			assert_int_equal(OBS.elapsed[i],
					 cb_at(x, IMC_MCAST_EV_JOINED, mark) -
					 t1);
		}
	}

	/* Cleared: nothing more. */
	imc_mcast_set_observer(n->t, NULL);
	e = join(n, G3, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(e->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(OBS.n, 8);
	finish();
}

/* ------------------------------------------------------------------ */
/* MGID 0, sequencing, duplicates, validation, listing. */

static void test_create_mgid_zero(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *c;
	struct imc_mcast_join_req r;
	size_t mark;

	a = join(n, NULL, IMC_JOIN_FULL, &QP1);
	b = join(n, NULL, IMC_JOIN_FULL, &QP1);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_false(imc_gid_equal(&a->rec.mgid, &b->rec.mgid));
	assert_int_equal(imc_mgid_sigword(&a->rec.mgid), 0xA01B);
	assert_int_equal(stats(n).groups, 2);
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 2);
	/* keyed by the answered MGID: a join of it is local */
	mark = W->nlog;
	r = create_req(NULL, IMC_JOIN_FULL, NULL);
	r.rec.mgid = a->rec.mgid;
	c = join_req(n, &r);
	run();
	assert_int_equal(c->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	assert_int_equal(sa_js(2, &a->rec.mgid), IMC_JOIN_FULL);
	a->mgid = a->rec.mgid;
	b->mgid = b->rec.mgid;
	check_union();
	finish();
}

/* A create is answered with an MGID the port already has a group for
 * (its own join of that MGID queued behind the create): the create's
 * member moves to that group, which holds what the create brought. */
static void test_create_merges_into_known_mgid(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct h *probe, *a, *b;
	struct imc_mcast_join_req r;
	struct imc_gid next;
	uint32_t c;

	/* The SA numbers the MGIDs it assigns: learn the next one. */
	probe = join(n3, NULL, IMC_JOIN_FULL, NULL);
	run();
	next = probe->rec.mgid;
	leave(probe);
	run();
	c = (uint32_t)next.raw[10] | (uint32_t)next.raw[11] << 8 |
	    (uint32_t)next.raw[12] << 16 | (uint32_t)next.raw[13] << 24;
	c++;
	next.raw[10] = (uint8_t)c;
	next.raw[11] = (uint8_t)(c >> 8);
	next.raw[12] = (uint8_t)(c >> 16);
	next.raw[13] = (uint8_t)(c >> 24);
	/* the create goes out first and gets that MGID; the join of it,
	 * sent right after, joins the group the create made */
	a = join(n, NULL, IMC_JOIN_FULL, &QP1);
	r = create_req(NULL, IMC_JOIN_FULL, &QP1);
	r.rec.mgid = next;
	b = join_req(n, &r);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_true(imc_gid_equal(&a->rec.mgid, &next));
	assert_int_equal(stats(n).groups, 1);
	assert_int_equal(sa_js(2, &next), IMC_JOIN_FULL);
	a->mgid = next;
	check_union();
	leave(a);
	run();
	assert_int_equal(sa_js(2, &next), IMC_JOIN_FULL);
	leave(b);
	run();
	assert_int_equal(sa_js(2, &next), 0);
	finish();
}

/* The last member leaves (a Delete goes out) and a new one joins the same
 * MGID at once: the Set waits for the Delete's answer. */
static void test_delete_then_join_sequenced(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a = join(n, G1, IMC_JOIN_FULL, &QP1), *b;
	size_t mark, i_del = 0, i_ans = 0, i_set = 0;

	run();
	mark = W->nlog;
	leave(a);
	run_now();                  /* Delete in flight */
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	b = join(n, G1, IMC_JOIN_FULL, &QP1);
	run_now();
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	assert_int_equal(stats(n).groups, 1);
	run();
	assert_non_null(find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark,
				 &i_del));
	assert_non_null(find_log(L_ANSWER, 2, UMAD_SA_METHOD_DELETE_RESP,
				 mark, &i_ans));
	assert_non_null(find_log(L_SEND, 2, UMAD_METHOD_SET, mark, &i_set));
	assert_true(i_del < i_ans && i_ans < i_set);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(sa_js(2, &g1), IMC_JOIN_FULL);
	assert_int_equal(stats(n).groups, 1);
	check_union();
	finish();
}

/* Every MAD duplicated, and delayed at random (reordered): one callback
 * per event all the same. */
static void test_duplicates_and_reordering(void **state)
{
	struct node *n = node(2);
	char mg[64];

	W->dup = 1.0;
	W->delay_min = 1 * US;
	W->delay_max = 3 * MS;
	for (int i = 0; i < 20; i++) {
		snprintf(mg, sizeof(mg), "ff12:1234::%x", i % 5 + 1);
		join(n, mg, i % 3 ? IMC_JOIN_FULL : IMC_JOIN_NON, NULL);
	}
	run();
	for (size_t i = 0; i < nh; i++) {
		assert_int_equal(H[i].ncb, 1);
		assert_int_equal(H[i].ev[0], IMC_MCAST_EV_JOINED);
	}
	check_union();
	for (size_t i = 0; i < nh; i += 2)
		leave(&H[i]);
	run();
	check_union();
	finish();
}

static void test_join_invalid(void **state)
{
	struct node *n = node(2);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	struct imc_mcast_member *m = NULL;

	r.join_state = 0;
	assert_int_equal(imc_mcast_join(n->t, &r, on_cb, NULL, &m), -EINVAL);
	r.join_state = 0x10;
	assert_int_equal(imc_mcast_join(n->t, &r, on_cb, NULL, &m), -EINVAL);
	r.join_state = 1;
	assert_int_equal(imc_mcast_join(n->t, &r, NULL, NULL, &m), -EINVAL);
	r.rec.mgid = fx_gid(5); /* unicast */
	assert_int_equal(imc_mcast_join(n->t, &r, on_cb, NULL, &m), -EINVAL);
	r = create_req(G1, IMC_JOIN_FULL, NULL);
	r.rec.sl = 16;          /* does not fit its 4 bits */
	assert_int_equal(imc_mcast_join(n->t, &r, on_cb, NULL, &m), -EINVAL);
	assert_null(m);
	run();
	assert_int_equal(stats(n).joins, 0);
	assert_int_equal(stats(n).groups, 0);
	assert_int_equal(W->nlog, 0);
	finish();
}

struct listing {
	struct imc_gid mgid[8];
	uint8_t js[8], wanted[8];
	unsigned members[8];
	bool joined[8];
	int n;
};

static void list_cb(void *arg, const struct imc_mcast_group_info *g)
{
	struct listing *l = arg;

	assert_true(l->n < 8);
	l->mgid[l->n] = g->rec.mgid;
	l->js[l->n] = g->join_state;
	l->wanted[l->n] = g->wanted;
	l->members[l->n] = g->members;
	l->joined[l->n] = g->joined;
	l->n++;
}

static void test_foreach_group_order(void **state)
{
	struct node *n = node(2);
	struct listing l;

	join(n, G3, IMC_JOIN_FULL, NULL);
	join(n, G1, IMC_JOIN_FULL, NULL);
	join(n, G1, IMC_JOIN_NON, NULL);
	join(n, G2, IMC_JOIN_SENDONLY_FULL, NULL);
	join(n, NULL, IMC_JOIN_FULL, NULL); /* not listed until answered */
	memset(&l, 0, sizeof(l));
	assert_int_equal(imc_mcast_foreach_group(n->t, list_cb, &l), 0);
	assert_int_equal(l.n, 3);
	assert_false(l.joined[0]);
	assert_int_equal(l.js[0], 0);
	assert_int_equal(l.wanted[0], 0x3);
	run();
	memset(&l, 0, sizeof(l));
	assert_int_equal(imc_mcast_foreach_group(n->t, list_cb, &l), 0);
	assert_int_equal(l.n, 4);
	for (int i = 1; i < l.n; i++)
		assert_true(imc_gid_cmp(&l.mgid[i - 1], &l.mgid[i]) < 0);
	assert_true(imc_gid_equal(&l.mgid[0], &H[1].mgid));
	assert_int_equal(l.js[0], 0x3);
	assert_int_equal(l.members[0], 2);
	assert_true(l.joined[0]);
	H[4].mgid = H[4].rec.mgid;
	finish();
}

/* ------------------------------------------------------------------ */
/* The callback contract, rule by rule. */

/* Rule 1: never inside join, leave, port_event or destroy (on_cb and
 * the ops assert it in every test); here the calls that could call back
 * at once are made with events pending. */
static void test_rule1_never_inside_api(void **state)
{
	struct node *n = node(2);
	struct h *a = join(n, G1, IMC_JOIN_FULL, NULL), *b;

	run();
	b = join(n, G1, IMC_JOIN_FULL, NULL);   /* local: still deferred */
	port_event(n, IMC_MCAST_PORT_DOWN);     /* WAITING: deferred */
	assert_int_equal(b->ncb, 0);
	assert_int_equal(a->ncb, 1);
	port_event(n, IMC_MCAST_PORT_ACTIVE);
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	assert_int_equal(a->ncb, 1);
	run();
	assert_true(a->ncb >= 2);
	assert_int_equal(b->ncompl, 1);
	finish();
}

/* Rule 2: each join completes exactly once, whatever happens: a short
 * random sweep with loss, duplicates, delays, flaps and reregisters. */
static void test_rule2_exactly_once_sweep(void **state)
{
	static const char *mg[] = { "ff12:1234::1", "ff12:1234::2",
				    "ff12:1234::3", "ff12:1234::4" };
	static const uint8_t bits[] = { 1, 2, 8, 1, 4 };

	for (uint64_t seed = SWEEP_FIRST; seed <= SWEEP_LAST; seed++) {
		struct node *ns[3];
		struct imc_rng r;

		sweep_seed = seed;
		imc_rng_seed(&r, seed);
		imc_rng_seed(&W->rng, seed);
		/* Loss and duplicates; the wire keeps its order (a copy
		 * of a Set overtaking a later Delete would make the SA
		 * hold what nobody asked for any more). */
		W->drop = 0.3;
		W->dup = 0.1;
		W->delay_min = W->delay_max = 1 * MS;
		for (int i = 0; i < 3; i++) {
			struct imc_mcast_config mc = tracker_cfg(2 + i);
			struct imc_sa_client_config cc = client_cfg(2 + i);

			mc.seed = seed * 10 + i;
			cc.seed = seed * 100 + i;
			/* The anchors' port never gives up: were every full
			 * member of a group to fail, the SA would delete the
			 * group with the others' memberships, and nobody
			 * tells their trackers (o15-0.1.9). */
			cc.retries = i == 0 ? 30 : 2;
			ns[i] = node_cfg(2 + i, &mc, &cc);
		}
		/* a full member on each group first, so that non-full
		 * joins have a group */
		for (unsigned g = 0; g < 4; g++)
			join(ns[0], mg[g], IMC_JOIN_FULL, &QP1);
		for (int step = 0; step < 300; step++) {
			struct node *n = ns[imc_rng_below(&r, 3)];
			unsigned what = (unsigned)imc_rng_below(&r, 20);

			if (what < 9) {
				/* one draw per statement: the order of
				 * arguments is the compiler's */
				const char *g = mg[imc_rng_below(&r, 4)];
				uint8_t js = bits[imc_rng_below(&r, 5)];
				bool q1 = imc_rng_chance(&r, 0.5);

				join(n, g, js, q1 ? &QP1 : &QP2);
			} else if (what < 17) {
				size_t k = (size_t)imc_rng_below(&r, nh);

				if (H[k].live && k >= 4)
					leave(&H[k]);
			} else if (what == 17) {
				port_event(n, IMC_MCAST_PORT_REREGISTER);
			} else if (what == 18 && n != ns[0]) {
				port_event(n, IMC_MCAST_PORT_DOWN);
				link_set(n, true);
				run_for(imc_rng_below(&r, 50 * MS));
				(void)imc_sa_port_gone(
					W->f.sa, &W->f.ports[n->lid].p.gid);
				link_set(n, false);
				port_event(n, IMC_MCAST_PORT_ACTIVE);
			}
			run_for(imc_rng_below(&r, 20 * MS));
		}
		/* quiesce without faults */
		W->drop = W->dup = 0;
		run();
		for (size_t i = 0; i < nh; i++)
			if (H[i].live && H[i].ncompl < 1)
				fail_msg("handle %zu never completed (seed %llu)",
					 i, (unsigned long long)seed);
		check_union();
		finish();
		memset(W->nodes, 0, sizeof(W->nodes));
		nh = 0;
		W->nlog = 0;
		sweep_seed = 0;
	}
}

/* Rule 3: no callback after leave returns, even with the answer in
 * flight; the membership the answer brought is given back. */
static void test_rule3_leave_with_answer_in_flight(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a = join(n, G1, IMC_JOIN_FULL, &QP1);

	run_now();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	leave(a);                   /* on_cb asserts a->live */
	run();
	assert_int_equal(a->ncb, 0);
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, 0), 1);
	assert_null(find_log(L_ATTACH, 2, 0, 0, NULL));
	finish();
}

/* Rule 3 for destroy: an answer in flight, events queued. */
static void test_rule3_destroy_with_answer_in_flight(void **state)
{
	struct node *n = node(2);
	struct h *a = join(n, G1, IMC_JOIN_FULL, NULL), *b;

	run();
	b = join(n, G2, IMC_JOIN_FULL, NULL);
	run_now();
	port_event(n, IMC_MCAST_PORT_REREGISTER); /* REJOINING queued */
	destroy(n);
	run();
	assert_int_equal(a->ncb, 1);
	assert_int_equal(b->ncb, 0);
	/* destroy tells the SA nothing: the SM would drop the port */
	assert_int_equal(imc_sa_port_gone(W->f.sa, &W->f.ports[2].p.gid), 2);
	finish();
}

/* Rule 4: a callback may leave its own member, leave another member
 * whose event is due in the same round, or destroy the tracker. */
static void test_rule4_leave_self_in_callback(void **state)
{
	struct node *n = node(2);
	struct h *a = join(n, G1, IMC_JOIN_FULL, &QP1), *b;

	a->act = ACT_LEAVE_SELF;
	b = join(n, G1, IMC_JOIN_FULL, &QP1);
	b->act = ACT_LEAVE_SELF;
	run();
	assert_int_equal(a->ncb, 1);
	assert_int_equal(b->ncb, 1);
	assert_false(a->live);
	assert_int_equal(stats(n).members, 0);
	assert_int_equal(stats(n).groups, 0);
	assert_non_null(find_log(L_DETACH, 2, 0, 0, NULL));
	finish();
}

static void test_rule4_leave_other_in_callback(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *c;

	a = join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	c = join(n, G1, IMC_JOIN_FULL, NULL);
	a->act = ACT_LEAVE_OTHER;
	a->other = b;               /* b's JOINED is due in the same round */
	run();
	assert_int_equal(a->ncb, 1);
	assert_int_equal(b->ncb, 0);
	assert_int_equal(c->ncb, 1);
	assert_int_equal(stats(n).members, 2);
	finish();
}

static void test_rule4_destroy_in_callback(void **state)
{
	struct node *n = node(2);
	struct h *a, *b;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	b = join(n, G1, IMC_JOIN_FULL, &QP1);
	a->act = ACT_DESTROY;
	run();
	assert_int_equal(a->ncb, 1);
	assert_int_equal(b->ncb, 0);
	assert_null(n->t);
	/* the SM drops the port the tracker left behind */
	assert_int_equal(imc_sa_port_gone(W->f.sa, &W->f.ports[2].p.gid), 1);
	finish();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(x) cmocka_unit_test_setup_teardown(x, setup, teardown)
		T(test_join_leave_basic),
		T(test_local_join_no_mad),
		T(test_queued_joins_one_mad),
		T(test_mismatch_fails_alone),
		T(test_selectors),
		T(test_sa_status_passed_through),
		T(test_refusal_fails_trigger_only),
		T(test_delete_exact_bits),
		T(test_nonmember_states),
		T(test_timeout_after_retries),
		T(test_delete_retried_until_answered),
		T(test_delete_stops_at_port_down),
		T(test_flap_leave_while_down),
		T(test_rejoin_doubts_held_bits),
		T(test_delete_unanswered_then_join),
		T(test_retry_refused_after_taken),
		T(test_rejoin_mismatch_detaches),
		T(test_rejoin_unanswered_paced_again),
		T(test_attach_detach_order),
		T(test_attach_failure),
		T(test_release_qp),
		T(test_port_down_up),
		T(test_reregister_rejoins),
		T(test_sm_change_rejoins),
		T(test_rejoin_new_mlid),
		T(test_rejoin_failure_fails_group),
		T(test_group_deleted_trap67),
		T(test_trap67_late),
		T(test_delete_takes_group),
		T(test_delete_subscribes),
		T(test_delete_answer_names_what_is_left),
		T(test_lid_change),
		T(test_rejoin_paced_window),
		T(test_rejoin_paced_spread),
		T(test_rejoin_immediate),
		T(test_observer),
		T(test_create_mgid_zero),
		T(test_create_merges_into_known_mgid),
		T(test_delete_then_join_sequenced),
		T(test_duplicates_and_reordering),
		T(test_join_invalid),
		T(test_foreach_group_order),
		T(test_rule1_never_inside_api),
		T(test_rule2_exactly_once_sweep),
		T(test_rule3_leave_with_answer_in_flight),
		T(test_rule3_destroy_with_answer_in_flight),
		T(test_rule4_leave_self_in_callback),
		T(test_rule4_leave_other_in_callback),
		T(test_rule4_destroy_in_callback),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
