/* What an application gets from the library without filling everything
 * in: every create function takes a NULL config as its defaults (the same
 * outcome as the config its _init function gives), and
 * imc_mcast_send_av() gives the send AV of a joined group, checked field
 * by field and end to end: a datagram sent with it on the embedded fabric
 * reaches the other member. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <infiniband/umad_sa_mcm.h>

#include "ibmcast/ibmcast.h"
#include "ibmcast/sim.h"
#include "fabric_world.h"

#define QKEY 0x1234567u

/* ---- NULL config: host library ---- */

static int tr_send(void *ctx, const uint8_t *mad, size_t len)
{
	(void)ctx;
	(void)mad;
	(void)len;
	return 0;
}

static void null_mcast(void **state)
{
	struct imc_sa_transport tr = { tr_send, NULL };
	struct imc_mcast_config def;
	struct imc_sa_client *c;
	struct imc_mcast *t, *t2;
	struct imc_loop *loop;

	(void)state;
	assert_int_equal(imc_loop_create_virtual(0, &loop), 0);
	assert_int_equal(imc_sa_client_create(loop, &tr, NULL, &c), 0);
	assert_int_equal(imc_mcast_create(loop, c, NULL, NULL, &t), 0);
	imc_mcast_config_init(&def);
	assert_int_equal(imc_mcast_create(loop, c, &def, NULL, &t2), 0);
	/* NULL loop or client is still refused. */
	assert_int_equal(imc_mcast_create(NULL, c, NULL, NULL, &t), -EINVAL);
	assert_int_equal(imc_mcast_create(loop, NULL, NULL, NULL, &t),
			 -EINVAL);
	imc_mcast_destroy(t2);
	imc_mcast_destroy(t);
	imc_sa_client_destroy(c);
	assert_int_equal(imc_loop_destroy(loop), 0);
}

static void null_mcastd(void **state)
{
	struct imc_mcastd_server_config sdef;
	struct imc_mcastd_server *s;
	struct imc_mcastd_config def;
	struct imc_mcastd *a = NULL, *b = NULL;
	struct imc_loop *loop;
	int ra, rb;

	(void)state;
	assert_int_equal(imc_loop_create_virtual(0, &loop), 0);
	assert_int_equal(imc_mcastd_server_create(loop, NULL, &s), 0);
	imc_mcastd_server_destroy(s);
	imc_mcastd_server_config_init(&sdef);
	sdef.limits.members = 0;
	assert_int_equal(imc_mcastd_server_create(loop, &sdef, &s), -EINVAL);
	assert_int_equal(imc_loop_destroy(loop), 0);

	/* The client connects to the default socket either way: the same
	 * outcome (no daemon here: an error, but not a refused config). */
	imc_mcastd_config_init(&def);
	ra = imc_mcastd_create(NULL, &a);
	rb = imc_mcastd_create(&def, &b);
	assert_int_equal(ra, rb);
	assert_int_not_equal(ra, -EINVAL);
	imc_mcastd_destroy(a);
	imc_mcastd_destroy(b);
}

static void null_umad(void **state)
{
	static const struct imc_umad_config zero;
	struct imc_mcast_umad_config mdef;
	struct imc_mcast_umad *ma = NULL, *mb = NULL;
	struct imc_umad *a = NULL, *b = NULL;
	struct imc_sa_serve_config sdef;
	struct imc_sa_serve *sa = NULL, *sb = NULL;
	struct imc_loop *loop;
	int ra, rb;

	(void)state;
	assert_int_equal(imc_loop_create_realtime(&loop), 0);
	/* Whatever port this machine has (or none): NULL is the zero
	 * config, not a refusal. */
	ra = imc_umad_open(loop, NULL, &a);
	rb = imc_umad_open(loop, &zero, &b);
	assert_int_equal(ra, rb);
	assert_int_not_equal(ra, -EINVAL);
	imc_umad_close(a);
	imc_umad_close(b);
	imc_mcast_umad_config_init(&mdef);
	ra = imc_mcast_umad_open(loop, NULL, NULL, &ma);
	rb = imc_mcast_umad_open(loop, &mdef, NULL, &mb);
	assert_int_equal(ra, rb);
	assert_int_not_equal(ra, -EINVAL);
	imc_mcast_umad_close(ma);
	imc_mcast_umad_close(mb);
	imc_sa_serve_config_init(&sdef);
	ra = imc_sa_serve_open(loop, NULL, &sa);
	rb = imc_sa_serve_open(loop, &sdef, &sb);
	assert_int_equal(ra, rb);
	assert_int_not_equal(ra, -EINVAL);
	imc_sa_serve_close(sa);
	imc_sa_serve_close(sb);
	imc_loop_destroy(loop);
}

/* imc_ipoib_create() alone needs its config: the port GID and QPN have no
 * default. */
static int ipo_send(void *ctx, const struct imc_ipoib_av *av,
		    uint32_t remote_qpn, uint32_t qkey, const uint8_t *data,
		    size_t len)
{
	(void)ctx; (void)av; (void)remote_qpn; (void)qkey; (void)data;
	(void)len;
	return 0;
}

static void ipo_deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	(void)ctx;
	(void)p;
}

static void null_ipoib_refused(void **state)
{
	struct imc_sa_transport tr = { tr_send, NULL };
	struct imc_ipoib_ops ops;
	struct imc_sa_client *c;
	struct imc_ipoib *ifc = NULL;
	struct imc_mcast *t;
	struct imc_loop *loop;

	(void)state;
	memset(&ops, 0, sizeof(ops));
	ops.send = ipo_send;
	ops.deliver = ipo_deliver;
	assert_int_equal(imc_loop_create_virtual(0, &loop), 0);
	assert_int_equal(imc_sa_client_create(loop, &tr, NULL, &c), 0);
	assert_int_equal(imc_mcast_create(loop, c, NULL, NULL, &t), 0);
	assert_int_equal(imc_ipoib_create(loop, t, NULL, NULL, &ops, &ifc),
			 -EINVAL);
	assert_null(ifc);
	imc_mcast_destroy(t);
	imc_sa_client_destroy(c);
	assert_int_equal(imc_loop_destroy(loop), 0);
}

/* ---- NULL config: simulator library ---- */

static int dir_gid(void *ctx, const struct imc_gid *gid,
		   struct imc_sa_port *out)
{
	(void)ctx; (void)gid; (void)out;
	return -ENOENT;
}

static int dir_lid(void *ctx, uint16_t lid, struct imc_sa_port *out)
{
	(void)ctx; (void)lid; (void)out;
	return -ENOENT;
}

static void sa_send(void *ctx, const struct imc_sa_dest *to,
		    const uint8_t *mad, size_t len)
{
	(void)ctx; (void)to; (void)mad; (void)len;
}

static void null_sa(void **state)
{
	struct imc_sa_ops ops = {
		.port_by_gid = dir_gid,
		.port_by_lid = dir_lid,
		.send = sa_send,
	};
	struct imc_loop *loop;
	struct imc_sa *sa;

	(void)state;
	assert_int_equal(imc_loop_create_virtual(0, &loop), 0);
	assert_int_equal(imc_sa_create(loop, NULL, &ops, NULL, &sa), 0);
	imc_sa_destroy(sa);
	assert_int_equal(imc_loop_destroy(loop), 0);
}

/* A fabric, its SA, a tracker and an IPoIB interface, all from NULL
 * configs, come up as with their defaults: the interface joins the
 * broadcast group through the tracker. */
static void on_deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	(void)ctx;
	(void)p;
}

static void null_fabric(void **state)
{
	struct imc_ipoib_host_ops host = { .deliver = on_deliver };
	struct imc_mcast_fabric *mf;
	struct imc_ipoib_fabric *x;
	struct imc_sa_fabric *sf;
	struct world w;
	uint32_t node = UINT32_MAX;

	(void)state;
	world_topo(&w, "switch:hosts=2");
	imc_topo_counts(w.t, &w.nhcas, NULL, NULL);
	assert_int_equal(imc_loop_create_virtual(0, &w.loop), 0);
	assert_int_equal(imc_fabric_create(w.t, w.loop, NULL, &w.f), 0);
	world_bring_up(&w);
	assert_int_equal(imc_sa_fabric_create(w.f, NULL, &sf), 0);
	for (uint32_t n = 0; n < w.t->nnodes; n++)
		if (w.t->node[n].type == IMC_NODE_HCA && n != w.t->sm_node)
			node = n;
	assert_true(node != UINT32_MAX);
	assert_int_equal(imc_mcast_fabric_create(w.f, node, 1, NULL, NULL,
						 &mf), 0);
	assert_int_equal(imc_ipoib_fabric_create(w.f, node, 1,
						 imc_mcast_fabric_tracker(mf),
						 NULL, IMC_IPOIB_FABRIC_QKEY,
						 &host, &x), 0);
	assert_int_equal(imc_ipoib_up(imc_ipoib_fabric_ipoib(x)), 0);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(imc_ipoib_state(imc_ipoib_fabric_ipoib(x)),
			 IMC_IPOIB_UP);
	imc_ipoib_fabric_stop(x);
	assert_int_equal(imc_loop_run(w.loop), 0);
	imc_ipoib_fabric_destroy(x);
	imc_mcast_fabric_destroy(mf);
	imc_sa_fabric_destroy(sf);
	world_down(&w);
}

/* ---- the send AV of a joined group ---- */

static struct imc_mcmr joined_rec(void)
{
	struct imc_mcmr r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(imc_gid_parse("ff12:401b:ffff::1", &r.mgid), 0);
	assert_int_equal(imc_gid_parse("fe80::2:c903:a:1", &r.port_gid), 0);
	r.qkey = 0x0B1B;
	r.mlid = 0xC00A;
	r.mtu_sel = 2;
	r.mtu = 4;
	r.tclass = 0x20;
	r.pkey = 0xFFFF;
	r.rate_sel = 2;
	r.rate = 7;
	r.sl = 5;
	r.flow_label = 0xABCDE;
	r.hop_limit = 64;
	r.scope = 2;
	r.join_state = IMC_JOIN_FULL;
	return r;
}

static void send_av_fields(void **state)
{
	struct imc_mcmr r = joined_rec();
	struct imc_mcast_av av;

	(void)state;
	memset(&av, 0xAA, sizeof(av));
	assert_int_equal(imc_mcast_send_av(&r, &av), 0);
	assert_int_equal(av.dlid, 0xC00A);
	assert_int_equal(av.sl, 5);
	assert_int_equal(av.rate, 7);
	assert_true(av.grh);
	assert_true(imc_gid_equal(&av.dgid, &r.mgid));
	assert_int_equal(av.tclass, 0x20);
	assert_int_equal(av.flow_label, 0xABCDE);
	assert_int_equal(av.hop_limit, 64);
	assert_int_equal(av.remote_qpn, 0xFFFFFF);
	assert_int_equal(av.qkey, 0x0B1B);
	assert_int_equal(av.pkey, 0xFFFF);
}

static void send_av_refused(void **state)
{
	struct imc_mcmr r = joined_rec();
	struct imc_mcast_av av;

	(void)state;
	assert_int_equal(imc_mcast_send_av(NULL, &av), -EINVAL);
	assert_int_equal(imc_mcast_send_av(&r, NULL), -EINVAL);
	r.mlid = 0;             /* a record before the SA answered */
	assert_int_equal(imc_mcast_send_av(&r, &av), -EINVAL);
	r.mlid = 0xBFFF;        /* unicast LID */
	assert_int_equal(imc_mcast_send_av(&r, &av), -EINVAL);
	r.mlid = 0xFFFF;        /* the permissive LID */
	assert_int_equal(imc_mcast_send_av(&r, &av), -EINVAL);
	r.mlid = 0xC000;
	assert_int_equal(imc_mcast_send_av(&r, &av), 0);
	r.mlid = 0xFFFE;
	assert_int_equal(imc_mcast_send_av(&r, &av), 0);
	r.pkey = 0x8000;        /* IBA 10.9.1.2: invalid */
	assert_int_equal(imc_mcast_send_av(&r, &av), -EINVAL);
	r = joined_rec();
	assert_int_equal(imc_gid_parse("fe80::1", &r.mgid), 0);
	assert_int_equal(imc_mcast_send_av(&r, &av), -EINVAL);
}

/* End to end: two hosts join a group; the sender's datagram, addressed
 * with the AV of its JOINED record, reaches the receiver's QP. */
struct peer {
	struct imc_mcast_fabric *mf;
	struct imc_qp *qp;
	struct imc_mcast_member *m;
	struct imc_mcmr rec;
	int joined;
	unsigned rx;
	uint32_t last;
};

static void on_event(void *arg, struct imc_mcast_member *m,
		     const struct imc_mcast_event *ev)
{
	struct peer *p = arg;

	(void)m;
	assert_int_equal(ev->type, IMC_MCAST_EV_JOINED);
	p->rec = *ev->rec;
	p->joined++;
}

static void on_recv(struct imc_qp *qp, const struct imc_ud_recv *r,
		    void *ctx)
{
	struct peer *p = ctx;

	(void)qp;
	assert_int_equal(r->len, sizeof(p->last));
	memcpy(&p->last, r->data, sizeof(p->last));
	p->rx++;
}

static void send_av_on_fabric(void **state)
{
	struct peer P[2];
	struct imc_sa_fabric *sf;
	struct imc_mcast_av av;
	struct world w;
	uint32_t v = 0xC0FFEE;
	unsigned np = 0;

	(void)state;
	memset(P, 0, sizeof(P));
	world_up(&w, "switch:hosts=3", NULL);
	assert_int_equal(imc_sa_fabric_create(w.f, NULL, &sf), 0);
	for (uint32_t n = 0; n < w.t->nnodes && np < 2; n++) {
		struct imc_mcast_join_req req;
		struct peer *p;

		if (w.t->node[n].type != IMC_NODE_HCA || n == w.t->sm_node)
			continue;
		p = &P[np++];
		assert_int_equal(imc_mcast_fabric_create(w.f, n, 1, NULL, NULL,
							 &p->mf), 0);
		assert_int_equal(imc_qp_create(w.f, n, 1, 0, QKEY, 0xFFFF,
					       on_recv, p, &p->qp), 0);
		memset(&req, 0, sizeof(req));
		assert_int_equal(imc_gid_parse("ff12:1234::7", &req.rec.mgid), 0);
		req.rec.qkey = QKEY;
		req.rec.pkey = 0xFFFF;
		req.rec.sl = 3;
		req.rec.flow_label = 0x123;
		req.rec.tclass = 8;
		req.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID |
				UMAD_SA_MCM_COMP_MASK_PORT_GID |
				UMAD_SA_MCM_COMP_MASK_QKEY |
				UMAD_SA_MCM_COMP_MASK_TCLASS |
				UMAD_SA_MCM_COMP_MASK_PKEY |
				UMAD_SA_MCM_COMP_MASK_SL |
				UMAD_SA_MCM_COMP_MASK_FLOW_LABEL |
				UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
		req.join_state = IMC_JOIN_FULL;
		req.qp = p->qp;
		assert_int_equal(imc_mcast_join(imc_mcast_fabric_tracker(p->mf),
						&req, on_event, p, &p->m), 0);
	}
	assert_int_equal(np, 2);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(P[0].joined, 1);
	assert_int_equal(P[1].joined, 1);

	assert_int_equal(imc_mcast_send_av(&P[0].rec, &av), 0);
	assert_int_equal(av.sl, 3);
	assert_int_equal(av.flow_label, 0x123);
	assert_int_equal(av.tclass, 8);
	assert_int_equal(av.qkey, QKEY);
	assert_int_equal(imc_mcast_fabric_send(P[0].qp, &av, &v, sizeof(v)), 0);
	assert_int_equal(imc_mcast_fabric_send(NULL, &av, &v, sizeof(v)),
			 -EINVAL);
	assert_int_equal(imc_loop_run(w.loop), 0);
	assert_int_equal(P[1].rx, 1);
	assert_int_equal(P[1].last, 0xC0FFEE);
	assert_int_equal(P[0].rx, 0);   /* no loopback to the sender */

	for (unsigned i = 0; i < np; i++) {
		imc_mcast_leave(P[i].m);
		assert_int_equal(imc_loop_run(w.loop), 0);
		imc_qp_destroy(P[i].qp);
		imc_mcast_fabric_destroy(P[i].mf);
	}
	imc_sa_fabric_destroy(sf);
	world_down(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(null_mcast),
		cmocka_unit_test(null_mcastd),
		cmocka_unit_test(null_umad),
		cmocka_unit_test(null_ipoib_refused),
		cmocka_unit_test(null_sa),
		cmocka_unit_test(null_fabric),
		cmocka_unit_test(send_av_fields),
		cmocka_unit_test(send_av_refused),
		cmocka_unit_test(send_av_on_fabric),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
