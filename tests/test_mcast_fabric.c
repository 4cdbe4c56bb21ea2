/* Join trackers on the embedded fabric, one per HCA port, against the SA
 * served on the SM's port (which shares its QP1 with that host's tracker
 * through a GSI): overlapping groups, multicast datagrams that reach
 * exactly the members' QPs, a restarted SA with a reregister on every
 * port, a link flap on a host, QP1 shared with another SA client, and a
 * shared GSI destroyed before its tracker.
 * Every test ends with every handle left, no group at the SA but the
 * broadcast one, nothing alive in the trackers and no timer armed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/fabric.h"
#include "ibmcast/gid.h"
#include "ibmcast/gsi.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcast_fabric.h"
#include "ibmcast/packet.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_fabric.h"
#include "fabric_world.h"

#define MS IMC_NSEC_PER_MSEC
#define QKEY 0x1234
#define MAXH 16
#define NG 3

struct host {
	uint32_t node;
	struct imc_mcast_fabric *mf;
	struct imc_qp *qp;          /* the data QP members attach */
	unsigned rx[NG];            /* datagrams received, by group */
	unsigned rx_other;
};

struct member {
	struct host *h;
	struct imc_mcast_member *m;
	int g;
	uint8_t js;
	int ev[16];
	int st[16];
	int n;
	bool live;
	uint16_t mlid;
};

static struct world W;
static struct imc_sa_fabric *SF;
static struct imc_gsi *SM_GSI;     /* the SA's QP1, shared */
static struct host H[MAXH];
static unsigned NH;
static struct member M[128];
static unsigned NM;
static struct imc_gid MG[NG];

static void on_data(struct imc_qp *qp, const struct imc_ud_recv *r,
		    void *ctx)
{
	struct host *h = ctx;

	assert_true(r->has_grh);
	for (int g = 0; g < NG; g++)
		if (imc_gid_equal(&r->dgid, &MG[g])) {
			h->rx[g]++;
			return;
		}
	h->rx_other++;
}

static void on_member(void *arg, struct imc_mcast_member *m,
		      const struct imc_mcast_event *ev)
{
	struct member *x = arg;

	assert_true(x->live);
	assert_ptr_equal(x->m, m);
	assert_true(x->n < 16);
	x->ev[x->n] = ev->type;
	x->st[x->n] = ev->status;
	x->n++;
	if (ev->type == IMC_MCAST_EV_JOINED) {
		assert_true(imc_gid_equal(&ev->rec->mgid, &MG[x->g]));
		x->mlid = ev->rec->mlid;
	}
}

static void sa_up(void)
{
	struct imc_sa_fabric_config fc;

	imc_sa_fabric_config_init(&fc);
	fc.other_mad = imc_gsi_input;
	fc.other_ctx = SM_GSI;
	assert_int_equal(imc_sa_fabric_create(W.f, &fc, &SF), 0);
	imc_gsi_set_qp(SM_GSI, imc_sa_fabric_qp(SF));
}

static void sa_down(void)
{
	imc_gsi_set_qp(SM_GSI, NULL);
	imc_sa_fabric_destroy(SF);
	SF = NULL;
}

static int setup(void **state)
{
	const struct imc_topo *t;

	memset(H, 0, sizeof(H));
	memset(M, 0, sizeof(M));
	NH = NM = 0;
	world_up(&W, "fat-tree:leaves=2,hosts=3,spines=2", NULL);
	t = W.t;
	for (int g = 0; g < NG; g++) {
		char s[64];

		snprintf(s, sizeof(s), "ff12:1234::%d", g + 1);
		assert_int_equal(imc_gid_parse(s, &MG[g]), 0);
	}
	assert_int_equal(imc_gsi_create_shared(NULL, &SM_GSI), 0);
	sa_up();
	for (uint32_t n = 0; n < t->nnodes; n++) {
		struct imc_mcast_fabric_config cfg;
		struct host *h;

		if (t->node[n].type != IMC_NODE_HCA)
			continue;
		assert_true(NH < MAXH);
		h = &H[NH++];
		h->node = n;
		imc_mcast_fabric_config_init(&cfg);
		cfg.mcast.seed = n;
		cfg.mcast.rejoin_spread = 20 * MS;
		cfg.client.seed = 100 + n;
		cfg.client.timeout = 50 * MS;
		assert_int_equal(imc_mcast_fabric_create(
					 W.f, n, 1,
					 n == t->sm_node ? SM_GSI : NULL, &cfg,
					 &h->mf), 0);
		assert_int_equal(imc_qp_create(W.f, n, 1, 0, QKEY, 0xffff,
					       on_data, h, &h->qp), 0);
	}
	assert_true(NH == 6);
	assert_int_equal(H[0].node, t->sm_node);
	return 0;
}

static struct member *join(unsigned host, int g, uint8_t js)
{
	struct member *x = &M[NM++];
	struct imc_mcast_join_req r;

	memset(&r, 0, sizeof(r));
	r.rec.mgid = MG[g];
	r.rec.qkey = QKEY;
	r.rec.pkey = 0xffff;
	r.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID |
		      UMAD_SA_MCM_COMP_MASK_PORT_GID |
		      UMAD_SA_MCM_COMP_MASK_QKEY |
		      UMAD_SA_MCM_COMP_MASK_TCLASS |
		      UMAD_SA_MCM_COMP_MASK_PKEY | UMAD_SA_MCM_COMP_MASK_SL |
		      UMAD_SA_MCM_COMP_MASK_FLOW_LABEL |
		      UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
	r.join_state = js;
	r.qp = H[host].qp;
	x->h = &H[host];
	x->g = g;
	x->js = js;
	x->live = true;
	assert_int_equal(imc_mcast_join(imc_mcast_fabric_tracker(H[host].mf),
					&r, on_member, x, &x->m), 0);
	return x;
}

static void leave(struct member *x)
{
	x->live = false;
	imc_mcast_leave(x->m);
}

static void run(void)
{
	assert_int_equal(imc_loop_run(W.loop), 0);
}

static void run_for(imc_time_t d)
{
	assert_int_equal(imc_loop_run_until(W.loop, imc_loop_now(W.loop) + d),
			 0);
}

static void clear_rx(void)
{
	for (unsigned i = 0; i < NH; i++) {
		memset(H[i].rx, 0, sizeof(H[i].rx));
		H[i].rx_other = 0;
	}
}

/* count datagrams from host to group g; returns 0 or the send error */
static int send_to(unsigned host, int g, uint16_t mlid, unsigned count)
{
	struct imc_ah ah;
	uint32_t v = 7;

	memset(&ah, 0, sizeof(ah));
	ah.dlid = mlid;
	ah.has_grh = true;
	ah.dgid = MG[g];
	for (unsigned i = 0; i < count; i++) {
		int rc = imc_qp_send(H[host].qp, &ah, 0xFFFFFF, QKEY, &v,
				     sizeof(v));

		if (rc)
			return rc;
	}
	return 0;
}

/* Exactly the hosts in mask (bit per host) got count datagrams of g. */
static void expect_rx(int g, unsigned mask, unsigned count)
{
	for (unsigned i = 0; i < NH; i++) {
		unsigned want = (mask >> i) & 1 ? count : 0;

		if (H[i].rx[g] != want)
			fail_msg("host %u got %u datagrams of group %d, not %u",
				 i, H[i].rx[g], g, want);
		assert_int_equal(H[i].rx_other, 0);
	}
}

static void finish(void)
{
	struct imc_sa_stats st;

	for (unsigned i = 0; i < NM; i++)
		if (M[i].live)
			leave(&M[i]);
	run();
	for (unsigned i = 0; i < NH; i++) {
		struct imc_mcast_stats ms;

		imc_mcast_get_stats(imc_mcast_fabric_tracker(H[i].mf), &ms);
		assert_int_equal(ms.members, 0);
		assert_int_equal(ms.groups, 0);
		assert_int_equal(ms.in_flight, 0);
	}
	imc_sa_get_stats(imc_sa_fabric_sa(SF), &st);
	assert_int_equal(st.groups, 1);        /* the broadcast group */
	assert_int_equal(st.members, 0);
}

static int teardown(void **state)
{
	for (unsigned i = 0; i < NH; i++) {
		imc_qp_destroy(H[i].qp);
		imc_mcast_fabric_destroy(H[i].mf);
	}
	sa_down();
	imc_gsi_destroy(SM_GSI);
	world_down(&W);
	return 0;
}

static void test_overlapping_groups(void **state)
{
	struct member *a[6];

	/* G0: hosts 0 (the SM's), 1, 2; G1: 2, 3, 4 full, 5 send-only */
	a[0] = join(0, 0, IMC_JOIN_FULL);
	a[1] = join(1, 0, IMC_JOIN_FULL);
	a[2] = join(2, 0, IMC_JOIN_FULL);
	join(2, 1, IMC_JOIN_FULL);
	a[3] = join(3, 1, IMC_JOIN_FULL);
	join(4, 1, IMC_JOIN_FULL);
	a[5] = join(5, 1, IMC_JOIN_SENDONLY_FULL);
	a[4] = join(1, 0, IMC_JOIN_FULL);   /* a second member of host 1 */
	run();
	for (unsigned i = 0; i < NM; i++) {
		assert_int_equal(M[i].n, 1);
		assert_int_equal(M[i].ev[0], IMC_MCAST_EV_JOINED);
	}
	assert_int_equal(a[0]->mlid, a[1]->mlid);
	assert_true(a[0]->mlid != a[3]->mlid);

	clear_rx();
	assert_int_equal(send_to(0, 0, a[0]->mlid, 5), 0);
	assert_int_equal(send_to(5, 1, a[3]->mlid, 3), 0);
	run();
	expect_rx(0, 0x06, 5);          /* hosts 1 and 2, once each */
	expect_rx(1, 0x1c, 3);          /* 2, 3, 4; not the send-only 5 */

	/* host 3 leaves G1; host 1's first member leaves G0 (the second
	 * keeps the QP attached) */
	leave(a[3]);
	leave(a[1]);
	run();
	clear_rx();
	assert_int_equal(send_to(5, 1, a[3]->mlid, 2), 0);
	assert_int_equal(send_to(2, 0, a[0]->mlid, 2), 0);
	run();
	expect_rx(1, 0x14, 2);          /* 2 and 4 */
	expect_rx(0, 0x03, 2);          /* 0 and 1 */
	(void)a[4];
	finish();
}

/* The SA restarts empty; a client reregister on every port brings every
 * membership back, and the traffic with it. */
static void test_reregister_all(void **state)
{
	struct member *a, *b, *c;
	struct imc_sa_group_info gi;
	uint16_t mlid;

	a = join(0, 0, IMC_JOIN_FULL);
	b = join(3, 0, IMC_JOIN_FULL);
	c = join(4, 0, IMC_JOIN_NON);
	run();
	assert_int_equal(c->ev[0], IMC_MCAST_EV_JOINED);
	mlid = a->mlid;
	sa_down();
	sa_up();
	assert_int_equal(imc_sa_group_get(imc_sa_fabric_sa(SF), &MG[0], &gi),
			 -ENOENT);
	assert_int_equal(imc_fabric_client_reregister(W.f, IMC_TOPO_NONE, 0),
			 0);
	run();
	for (unsigned i = 0; i < NM; i++) {
		assert_int_equal(M[i].n, 3);
		assert_int_equal(M[i].ev[1], IMC_MCAST_EV_REJOINING);
		assert_int_equal(M[i].ev[2], IMC_MCAST_EV_JOINED);
	}
	assert_int_equal(b->mlid, mlid);
	clear_rx();
	assert_int_equal(send_to(3, 0, b->mlid, 4), 0);
	run();
	expect_rx(0, 0x11, 4);          /* 0 and 4 (a NonMember receives) */
	finish();
}

/* A host's link goes down and comes back: WAITING, then JOINED, and its
 * QP receives again. */
static void test_link_flap(void **state)
{
	struct member *a, *b;
	uint32_t node = H[4].node;

	a = join(1, 2, IMC_JOIN_FULL);
	b = join(4, 2, IMC_JOIN_FULL);
	run();
	assert_int_equal(imc_fabric_link_set(W.f, node, 1, false), 0);
	run_for(10 * MS);
	assert_int_equal(b->ev[1], IMC_MCAST_EV_WAITING);
	assert_true(imc_mcast_member_state(b->m) == IMC_MCAST_WAITING);
	assert_int_equal(a->n, 1);
	assert_int_equal(imc_fabric_link_set(W.f, node, 1, true), 0);
	run();
	assert_int_equal(b->ev[2], IMC_MCAST_EV_REJOINING);
	assert_int_equal(b->ev[3], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->n, 1);
	clear_rx();
	assert_int_equal(send_to(1, 2, a->mlid, 3), 0);
	run();
	expect_rx(2, 0x10, 3);
	finish();
}

/* Another SA client shares host 1's QP1 with its tracker through the
 * GSI: each gets its own answers. */
static struct imc_sa_client *other;
static struct imc_gsi *G1;
static int got_status = -1;

static int other_send(void *ctx, const uint8_t *mad, size_t len)
{
	struct imc_port_attr pa;

	assert_int_equal(imc_fabric_port_attr(W.f, H[1].node, 1, &pa), 0);
	return imc_gsi_send(G1, pa.sm_lid, mad, len);
}

static int other_recv(struct imc_gsi_agent *a, const struct imc_ud_recv *r)
{
	return imc_sa_client_recv(other, r->data, r->len);
}

static void on_get(void *arg, int err, const struct imc_sa_answer *ans)
{
	assert_int_equal(err, 0);
	got_status = ans->status;
}

static void test_shared_qp1(void **state)
{
	struct imc_sa_transport tr = { other_send, NULL };
	struct imc_sa_client_config cc;
	struct imc_mcast_fabric_config cfg;
	struct imc_gsi_agent agent = { .recv = other_recv };
	struct imc_gsi_stats gs;
	struct imc_sa_mad q;
	struct imc_mcmr rec;
	struct member *a;

	/* host 1's tracker again, on a GSI the test owns */
	imc_mcast_fabric_destroy(H[1].mf);
	assert_int_equal(imc_gsi_create(W.f, H[1].node, 1, &G1), 0);
	imc_mcast_fabric_config_init(&cfg);
	cfg.client.seed = 5;
	assert_int_equal(imc_mcast_fabric_create(W.f, H[1].node, 1, G1, &cfg,
						 &H[1].mf), 0);
	imc_sa_client_config_init(&cc);
	cc.seed = 6;
	assert_int_equal(imc_sa_client_create(W.loop, &tr, &cc, &other), 0);
	imc_gsi_add(G1, &agent);

	a = join(1, 0, IMC_JOIN_FULL);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	/* a Get of the group through the other client */
	memset(&q, 0, sizeof(q));
	memset(&rec, 0, sizeof(rec));
	rec.mgid = MG[0];
	q.mad.method = UMAD_METHOD_GET;
	q.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	q.sa.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID;
	assert_int_equal(imc_mcmr_pack(&rec, q.data, sizeof(q.data)),
			 IMC_MCMR_SIZE);
	assert_int_equal(imc_sa_query_start(other, &q, on_get, NULL, NULL), 0);
	join(1, 1, IMC_JOIN_FULL);      /* and a join at the same time */
	run();
	assert_int_equal(got_status, 0);
	assert_int_equal(M[1].ev[0], IMC_MCAST_EV_JOINED);
	imc_gsi_get_stats(G1, &gs);
	assert_int_equal(gs.unclaimed, 0);
	assert_true(gs.received >= 3);
	finish();
	imc_gsi_remove(&agent);
	imc_sa_client_destroy(other);
	imc_mcast_fabric_destroy(H[1].mf);
	H[1].mf = NULL;
	imc_gsi_destroy(G1);
}

/* The owner of a shared GSI may destroy it before the tracker (a run
 * that frees its SA clients first): the tracker's Delete after a leave
 * then fails as a send error and touches nothing freed. */
static void test_gsi_gone_first(void **state)
{
	struct imc_sa_client_stats cs;
	struct imc_mcast_fabric_config cfg;
	struct member *a;

	imc_mcast_fabric_destroy(H[1].mf);
	assert_int_equal(imc_gsi_create(W.f, H[1].node, 1, &G1), 0);
	imc_mcast_fabric_config_init(&cfg);
	assert_int_equal(imc_mcast_fabric_create(W.f, H[1].node, 1, G1, &cfg,
						 &H[1].mf), 0);
	a = join(1, 0, IMC_JOIN_FULL);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	imc_gsi_destroy(G1);
	G1 = NULL;
	leave(a);
	run_for(MS);    /* the Delete goes from the loop */
	imc_sa_client_get_stats(imc_mcast_fabric_client(H[1].mf), &cs);
	assert_int_equal(cs.sent, 2);
	assert_int_equal(cs.send_errors, 1);
	imc_mcast_fabric_destroy(H[1].mf);
	H[1].mf = NULL;
	run();
	assert_int_equal(a->n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_overlapping_groups, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reregister_all, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_link_flap, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_shared_qp1, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_gsi_gone_first, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
