/* Members that are not full members outlive their group: a NonMember or
 * SendOnlyNonMember whose group the SA does not have (never created,
 * deleted with its last full member, lost in an SA restart) waits for it
 * (WAITING, -ENOENT) and joins when it is created (trap 66, or the
 * fallback tries), against the real SA engine (test_mcast_fixture.h). */
#include "test_mcast_fixture.h"

static const char *G1 = "ff12:1234::1";

static int QP1;

/* A join with no full bit to a group the SA does not have: refused with
 * REQ_INVALID, the probe (Get by MGID) answers NO_RECORDS, and the member
 * WAITs (-ENOENT) instead of failing. Another port's full member creates
 * the group: trap 66 tells, and the member joins within a quarter of the
 * re-join spread (250 ms), before the fallback could have asked (1 s
 * after the refusal at the earliest). */
static void nonfull_waits(uint8_t js, void *qp)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	const struct logent *e;
	struct h *a;
	imc_time_t created;
	size_t mark;

	a = join(n, G1, js, qp);
	run_for(100 * MS);
	assert_int_equal(a->ncb, 1);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_WAITING);
	assert_int_equal(a->st[0], -ENOENT);
	assert_int_equal(a->ncompl, 0);
	assert_int_equal(imc_mcast_member_state(a->m), IMC_MCAST_WAITING);
	assert_int_equal(stats(n).waits, 1);
	assert_int_equal(stats(n).errors, 0);
	assert_int_equal(sent(2, UMAD_METHOD_GET, 0), 1);
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(subscriptions(2, 0), 2); /* traps 67 and 66 */
	assert_int_equal(fx_stats(&W->f).subscriptions, 2);
	mark = W->nlog;
	created = imc_loop_now(W->f.loop);
	join(n3, G1, IMC_JOIN_FULL, NULL);
	run_for(300 * MS);
	assert_int_equal(stats(n).traps_created, 1);
	assert_int_equal(a->ncb, 2);
	assert_int_equal(a->ev[1], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ncompl, 1);
	assert_int_equal(sa_js(2, &g1), js);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 1);
	e = find_log(L_CB, 2, 0, mark, NULL);
	assert_non_null(e);
	assert_true(e->at - created < 260 * MS);
	/* nobody waits: the trap 66 subscription ends */
	assert_int_equal(fx_stats(&W->f).subscriptions, 1);
	check_union();
	finish();
}

static void test_nonmember_waits_for_creation(void **state)
{
	nonfull_waits(IMC_JOIN_NON, &QP1);
}

static void test_sendonly_nonmember_waits_for_creation(void **state)
{
	nonfull_waits(IMC_JOIN_SENDONLY_NON, NULL);
}

static bool drop_reports_to_2(struct node *n, bool to_sa, const uint8_t *mad)
{
	return !to_sa && n->lid == 2 && mad[3] == UMAD_METHOD_REPORT;
}

/* Every trap 66 Report lost: the fallback asks again, 1 s after the
 * refusal and then doubling (plus up to 2 s of jitter and pacing), so
 * five times in the first minute, and joins once the group exists. */
static void test_lost_report_fallback(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a;
	size_t mark;

	W->drop_fn = drop_reports_to_2;
	a = join(n, G1, IMC_JOIN_NON, &QP1);
	run_for(100 * MS);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_WAITING);
	mark = W->nlog;
	run_for(60 * IMC_NSEC_PER_SEC);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 5);
	assert_int_equal(sent(2, UMAD_METHOD_GET, mark), 5);
	assert_int_equal(a->ncb, 1); /* told once */
	assert_int_equal(stats(n).waits, 6);
	join(n3, G1, IMC_JOIN_FULL, NULL);
	run_for(20 * IMC_NSEC_PER_SEC);
	assert_int_equal(stats(n).traps_created, 0);
	assert_int_equal(a->ncb, 2);
	assert_int_equal(a->ev[1], IMC_MCAST_EV_JOINED);
	assert_int_equal(sa_js(2, &g1), IMC_JOIN_NON);
	check_union();
	finish();
}

/* Members that wait may leave: no callback after, and the trap 66
 * subscription goes with the last of them; a creation afterwards leaves
 * the port alone. */
static void test_leave_while_waiting(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b;
	size_t mark;

	a = join(n, G1, IMC_JOIN_NON, &QP1);
	b = join(n, G1, IMC_JOIN_SENDONLY_NON, NULL);
	run_for(100 * MS);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_WAITING);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_WAITING);
	assert_int_equal(fx_stats(&W->f).subscriptions, 2);
	leave(a);
	run_for(100 * MS);
	assert_int_equal(fx_stats(&W->f).subscriptions, 2);
	assert_int_equal(stats(n).groups, 1);
	leave(b);
	run_for(100 * MS);
	assert_int_equal(fx_stats(&W->f).subscriptions, 1);
	assert_int_equal(stats(n).groups, 0);
	assert_int_equal(a->ncb, 1);
	assert_int_equal(b->ncb, 1);
	mark = W->nlog;
	join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	assert_int_equal(sa_js(2, &g1), 0);
	finish();
}

/* The SA restarts empty and the NonMember's re-join reaches it before the
 * full member re-created the group: it waits, then joins when the full
 * member's port re-joins (trap 66 to its new subscription). */
static void test_restart_nonfull_waits(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *non, *so, *full;

	full = join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	non = join(n, G1, IMC_JOIN_NON, &QP1);
	so = join(n, G1, IMC_JOIN_SENDONLY_NON, NULL);
	run();
	assert_int_equal(sa_js(2, &g1), 0x6);
	imc_sa_destroy(W->f.sa);
	sa_start();
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	run_for(1500 * MS);
	assert_int_equal(non->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(non->ev[2], IMC_MCAST_EV_WAITING);
	assert_int_equal(non->st[2], -ENOENT);
	assert_int_equal(so->ev[2], IMC_MCAST_EV_WAITING);
	assert_int_equal(sa_js(2, &g1), 0);
	port_event(n3, IMC_MCAST_PORT_REREGISTER);
	run_for(2100 * MS);
	assert_int_equal(full->ev[2], IMC_MCAST_EV_JOINED);
	assert_int_equal(stats(n).traps_created, 1);
	assert_int_equal(non->ev[3], IMC_MCAST_EV_JOINED);
	assert_int_equal(so->ev[3], IMC_MCAST_EV_JOINED);
	assert_int_equal(non->ncb, 4);
	assert_int_equal(non->nerr + so->nerr, 0);
	assert_int_equal(sa_js(2, &g1), 0x6);
	check_union();
	finish();
}

/* The SA dropped the port (its sweep found it gone) and the group went
 * with another port's last full member: no trap 67 reaches a port that
 * is no member. The port's FullMember leaves; the Delete is refused
 * (REQ_INVALID), and what the port keeps has no full bit: a Get of the
 * group finds it gone, and the NonMember waits instead of staying JOINED
 * to a group the SA does not have. */
static void test_refused_delete_verifies(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *c, *other;
	size_t mark;

	other = join(n3, G1, IMC_JOIN_FULL, NULL);
	a = join(n, G1, IMC_JOIN_FULL, NULL);
	c = join(n, G1, IMC_JOIN_NON, &QP1);
	run();
	assert_int_equal(sa_js(2, &g1), 0x3);
	assert_int_equal(imc_sa_port_gone(W->f.sa, &W->f.ports[2].p.gid), 1);
	leave(other);
	run();
	mark = W->nlog;
	leave(a);
	run_for(100 * MS);
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	assert_int_equal(sent(2, UMAD_METHOD_GET, mark), 1);
	assert_int_equal(c->ev[1], IMC_MCAST_EV_WAITING);
	assert_int_equal(c->st[1], -ENOENT);
	assert_non_null(find_log(L_DETACH, 2, 0, mark, NULL));
	finish();
}

/* A non-full join refused by an existing group (a Q_Key that differs)
 * does not wait: the probe finds the group, the Set goes once more (the
 * group may have been created meanwhile), and the refusal stands. */
static void test_nonfull_mismatch_fails(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_NON, NULL);
	struct h *a;

	join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	r.rec.qkey = 0x9999;
	a = join_req(n, &r);
	run();
	assert_int_equal(a->ncb, 1);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], ST_REQ_INVALID);
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 2);
	assert_int_equal(sent(2, UMAD_METHOD_GET, 0), 2);
	assert_int_equal(stats(n).waits, 0);
	finish();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(x) cmocka_unit_test_setup_teardown(x, setup, teardown)
		T(test_nonmember_waits_for_creation),
		T(test_sendonly_nonmember_waits_for_creation),
		T(test_lost_report_fallback),
		T(test_leave_while_waiting),
		T(test_restart_nonfull_waits),
		T(test_nonfull_mismatch_fails),
		T(test_refused_delete_verifies),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
