/* The fixture of the IPoIB core tests: a virtual loop, the real join
 * tracker over an SA client whose transport is a fake SA held by the test
 * (it answers MCMemberRecord Sets and Deletes when told), recorded ops,
 * and peers as packets built by the test and handed to imc_ipoib_recv()
 * as a UD receive would give them. Include after <cmocka.h>. */
#ifndef IMC_TESTS_IPOIB_FIXTURE_H
#define IMC_TESTS_IPOIB_FIXTURE_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/ipoib.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/mcast.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_client.h"
#include "ipoib/ipoib_int.h"
#include "util/bytes.h"

#define MS IMC_NSEC_PER_MSEC
#define SEC IMC_NSEC_PER_SEC
#define PREFIX 0xfe80000000000000ULL
#define OUR_QPN 0x48
#define OUR_LID 1
#define QKEY 0x0B1B
#define BC_MLID 0xC001
#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))

/* Parameters of the broadcast group's record, all distinct from defaults
 * so that a fabricated AV shows where each field came from. */
#define BC_SL 3
#define BC_RATE 6
#define BC_TCLASS 0x20
#define BC_FLOW 0x12345
#define BC_HOP 5
#define BC_MTU 4

#define MAXREC 256
#define MAXLEN 4200

struct sent {
	struct imc_ipoib_av av;
	uint32_t qpn, qkey;
	uint8_t data[MAXLEN];
	size_t len;
	imc_time_t at;
};

struct delivered {
	uint8_t data[MAXLEN];
	size_t len;
	bool multicast;
	struct imc_gid src;
};

struct sa_req {
	struct imc_sa_mad mad;
	struct imc_mcmr rec;
	bool answered;
};

struct fx {
	struct imc_loop *loop;
	struct imc_sa_client *sac;
	struct imc_mcast *mc;
	struct imc_ipoib *ifc;
	struct imc_ipoib_config cfg;
	int qp_token;              /* the opaque QP the tracker is given */
	/* fake SA */
	struct sa_req reqs[MAXREC];
	unsigned nreqs;
	bool hold;                 /* answer only when the test says */
	unsigned subscriptions;    /* InformInfo Sets (trap 67) */
	struct imc_sa_mad pending_inform[8];
	unsigned npending_inform;
	uint16_t status_for_next;  /* SA status of the next answer */
	uint32_t qkey_answer;      /* Q_Key of the records; 0: QKEY */
	struct imc_timer answer_timer;
	uint16_t next_mlid;
	struct { struct imc_gid mgid; uint16_t mlid; } mlids[64];
	unsigned nmlids;
	/* recorded ops */
	struct sent sent[MAXREC];
	unsigned nsent;
	struct delivered dlv[MAXREC];
	unsigned ndlv;
	bool carrier;
	unsigned carrier_calls;
	uint32_t qp_qkey;          /* as set_qkey left it */
	unsigned set_qkey_calls;
	int set_qkey_rc;
	bool in_api;
	struct { struct imc_gid mgid; uint16_t mlid; bool attach; }
		att[64];
	unsigned natt;
	/* hook: runs in the attach op (the window between attach and the join callback) */
	void (*on_attach)(struct fx *f, const struct imc_gid *mgid);
};

static struct fx *F;

/* ---- fake SA ---- */

static inline uint16_t mlid_of(struct fx *f, const struct imc_gid *mgid)
{
	struct imc_gid bc;

	imc_ipoib_bcast_mgid(0xFFFF, 2, &bc);
	if (imc_gid_equal(mgid, &bc))
		return BC_MLID;
	for (unsigned i = 0; i < f->nmlids; i++)
		if (imc_gid_equal(&f->mlids[i].mgid, mgid))
			return f->mlids[i].mlid;
	f->mlids[f->nmlids].mgid = *mgid;
	f->mlids[f->nmlids].mlid = f->next_mlid++;
	return f->mlids[f->nmlids++].mlid;
}

static inline void answer(struct fx *f, unsigned i)
{
	struct sa_req *r = &f->reqs[i];
	struct imc_sa_mad a = r->mad;
	struct imc_mcmr rec = r->rec;
	uint8_t buf[IMC_MAD_SIZE];

	assert_false(r->answered);
	r->answered = true;
	a.mad.method = a.mad.method == UMAD_METHOD_SET ? UMAD_METHOD_GET_RESP :
		       UMAD_SA_METHOD_DELETE_RESP;
	a.mad.status = f->status_for_next;
	f->status_for_next = 0;
	rec.qkey = f->qkey_answer ? f->qkey_answer : QKEY;
	rec.mlid = mlid_of(f, &rec.mgid);
	rec.mtu_sel = UMAD_SA_SELECTOR_EXACTLY;
	rec.mtu = BC_MTU;
	rec.tclass = BC_TCLASS;
	rec.pkey = 0xFFFF;
	rec.rate_sel = UMAD_SA_SELECTOR_EXACTLY;
	rec.rate = BC_RATE;
	rec.sl = BC_SL;
	rec.flow_label = BC_FLOW;
	rec.hop_limit = BC_HOP;
	rec.scope = 2;
	memset(a.data, 0, sizeof(a.data));
	assert_true(imc_mcmr_pack(&rec, a.data, sizeof(a.data)) > 0);
	assert_int_equal(imc_sa_mad_pack(&a, buf, sizeof(buf)), IMC_MAD_SIZE);
	imc_sa_client_recv(f->sac, buf, sizeof(buf));
}

static inline void answer_all(struct fx *f)
{
	for (unsigned i = 0; i < f->nreqs; i++)
		if (!f->reqs[i].answered)
			answer(f, i);
}

static inline void answer_fire(struct imc_timer *t)
{
	struct fx *f = imc_container_of(t, struct fx, answer_timer);

	/* Subscriptions are always answered, joins unless held. */
	while (f->npending_inform) {
		uint8_t buf[IMC_MAD_SIZE];

		imc_sa_mad_pack(&f->pending_inform[--f->npending_inform], buf,
				sizeof(buf));
		imc_sa_client_recv(f->sac, buf, sizeof(buf));
	}
	if (!f->hold)
		answer_all(f);
}

static inline int sa_send(void *ctx, const uint8_t *mad, size_t len)
{
	struct fx *f = ctx;
	struct sa_req *r;

	assert_int_equal(len, IMC_MAD_SIZE);
	assert_true(f->nreqs < MAXREC);
	r = &f->reqs[f->nreqs];
	memset(r, 0, sizeof(*r));
	assert_int_equal(imc_sa_mad_unpack(&r->mad, mad, len), IMC_MAD_SIZE);
	/* Never a PathRecord: joins and leaves (MCMemberRecord), and the
	 * tracker's trap 67 subscription (InformInfo) once it holds a
	 * group without a full bit. */
	assert_int_not_equal(r->mad.mad.attr_id, UMAD_SA_ATTR_PATH_REC);
	if (r->mad.mad.attr_id == UMAD_ATTR_INFORM_INFO) {
		struct imc_sa_mad a = r->mad;
		uint8_t buf[IMC_MAD_SIZE];

		f->subscriptions++;
		a.mad.method = UMAD_METHOD_GET_RESP;
		assert_int_equal(imc_sa_mad_pack(&a, buf, sizeof(buf)),
				 IMC_MAD_SIZE);
		f->pending_inform[f->npending_inform++] = a;
		imc_timer_arm(f->loop, &f->answer_timer,
			      imc_loop_now(f->loop) + MS);
		return 0;
	}
	assert_int_equal(r->mad.mad.attr_id, UMAD_SA_ATTR_MCMEMBER_REC);
	assert_true(imc_mcmr_unpack(&r->rec, r->mad.data,
				    sizeof(r->mad.data)) > 0);
	/* A retry of an unanswered request counts once. */
	for (unsigned i = 0; i < f->nreqs; i++)
		if (f->reqs[i].mad.mad.tid == r->mad.mad.tid &&
		    !f->reqs[i].answered)
			return 0;
	f->nreqs++;
	imc_timer_arm(f->loop, &f->answer_timer, imc_loop_now(f->loop) + MS);
	return 0;
}

/* ---- tracker ops ---- */

static inline int mc_attach(void *ctx, void *qp, const struct imc_gid *mgid,
		     uint16_t mlid)
{
	struct fx *f = ctx;

	assert_ptr_equal(qp, &f->qp_token);
	f->att[f->natt].mgid = *mgid;
	f->att[f->natt].mlid = mlid;
	f->att[f->natt++].attach = true;
	if (f->on_attach)
		f->on_attach(f, mgid);
	return 0;
}

static inline int mc_detach(void *ctx, void *qp, const struct imc_gid *mgid,
		     uint16_t mlid)
{
	struct fx *f = ctx;

	assert_ptr_equal(qp, &f->qp_token);
	f->att[f->natt].mgid = *mgid;
	f->att[f->natt].mlid = mlid;
	f->att[f->natt++].attach = false;
	return 0;
}

/* ---- interface ops ---- */

static inline int op_send(void *ctx, const struct imc_ipoib_av *av, uint32_t qpn,
		   uint32_t qkey, const uint8_t *data, size_t len)
{
	struct fx *f = ctx;
	struct sent *s;

	assert_true(f->nsent < MAXREC);
	assert_true(len <= MAXLEN);
	s = &f->sent[f->nsent++];
	s->av = *av;
	s->qpn = qpn;
	s->qkey = qkey;
	memcpy(s->data, data, len);
	s->len = len;
	s->at = imc_loop_now(f->loop);
	/* Never a multicast AV other than one a join answered. */
	if (qpn == 0xFFFFFF) {
		struct imc_ipoib_endpoint_info e;

		assert_true(av->dlid >= 0xC000);
		assert_int_equal(imc_ipoib_endpoint_get(f->ifc, &av->dgid, &e),
				 0);
		assert_true(e.multicast);
		assert_true(e.has_av);
		assert_int_equal(mlid_of(f, &av->dgid), av->dlid);
	} else {
		assert_true(av->dlid < 0xC000);
		assert_false(imc_gid_is_multicast(&av->dgid));
	}
	return 0;
}

static inline void op_deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	struct fx *f = ctx;
	struct delivered *d;

	assert_true(f->ndlv < MAXREC);
	d = &f->dlv[f->ndlv++];
	memcpy(d->data, p->data, p->len);
	d->len = p->len;
	d->multicast = p->multicast;
	d->src = p->src_gid;
}

static inline void op_carrier(void *ctx, bool up)
{
	struct fx *f = ctx;

	/* Callback rule 1: from the loop, never inside an API call. */
	assert_false(f->in_api);
	assert_true(up != f->carrier);
	f->carrier = up;
	f->carrier_calls++;
}

static inline int op_set_qkey(void *ctx, uint32_t qkey)
{
	struct fx *f = ctx;

	assert_false(f->in_api);
	f->set_qkey_calls++;
	if (f->set_qkey_rc)
		return f->set_qkey_rc;
	f->qp_qkey = qkey;
	return 0;
}

/* ---- set-up ---- */

static inline struct imc_gid port_gid(uint64_t guid)
{
	struct imc_gid g;

	imc_gid_set(&g, PREFIX, guid);
	return g;
}

static inline struct imc_gid bcast_mgid(void)
{
	struct imc_gid g;

	imc_ipoib_bcast_mgid(0xFFFF, 2, &g);
	return g;
}

static inline void fx_make_ifc(struct fx *f)
{
	struct imc_ipoib_ops ops = {
		.send = op_send,
		.deliver = op_deliver,
		.carrier = op_carrier,
		.set_qkey = op_set_qkey,
		.ctx = f,
	};

	assert_int_equal(imc_ipoib_create(f->loop, f->mc, &f->qp_token,
					  &f->cfg, &ops, &f->ifc), 0);
}

static inline int setup_cfg(void **state, void (*tweak)(struct imc_ipoib_config *))
{
	struct fx *f = calloc(1, sizeof(*f));
	struct imc_sa_transport tr = { .send = sa_send, .ctx = f };
	struct imc_mcast_config mcfg;
	struct imc_mcast_ops mops = {
		.attach = mc_attach, .detach = mc_detach, .ctx = f,
	};

	assert_non_null(f);
	F = f;
	f->next_mlid = 0xC010;
	imc_timer_init(&f->answer_timer, answer_fire);
	assert_int_equal(imc_loop_create_virtual(0, &f->loop), 0);
	assert_int_equal(imc_sa_client_create(f->loop, &tr, NULL, &f->sac), 0);
	imc_mcast_config_init(&mcfg);
	mcfg.port_gid = port_gid(1);
	mcfg.rejoin = IMC_MCAST_REJOIN_IMMEDIATE;
	assert_int_equal(imc_mcast_create(f->loop, f->sac, &mcfg, &mops,
					  &f->mc), 0);
	imc_ipoib_config_init(&f->cfg);
	f->cfg.port_gid = port_gid(1);
	f->cfg.qpn = OUR_QPN;
	if (tweak)
		tweak(&f->cfg);
	fx_make_ifc(f);
	*state = f;
	return 0;
}

static inline int setup(void **state)
{
	return setup_cfg(state, NULL);
}

static inline int teardown(void **state)
{
	struct fx *f = *state;

	imc_ipoib_destroy(f->ifc);
	imc_mcast_destroy(f->mc);
	imc_sa_client_destroy(f->sac);
	imc_timer_cancel(f->loop, &f->answer_timer);
	/* Nothing left alive: every timer was cancelled. */
	assert_int_equal(imc_loop_destroy(f->loop), 0);
	free(f);
	return 0;
}

static inline void run_for(struct fx *f, imc_time_t d)
{
	imc_loop_run_until(f->loop, imc_loop_now(f->loop) + d);
}

static inline struct imc_ipoib_stats stats(struct fx *f)
{
	struct imc_ipoib_stats st;

	imc_ipoib_get_stats(f->ifc, &st);
	return st;
}

static inline void up(struct fx *f)
{
	f->in_api = true;
	assert_int_equal(imc_ipoib_up(f->ifc), 0);
	f->in_api = false;
}

static inline void add_addr(struct fx *f, const char *text)
{
	struct imc_ip_addr a;
	unsigned plen;

	assert_int_equal(imc_ip_addr_parse(text, &a, &plen), 0);
	f->in_api = true;
	assert_int_equal(imc_ipoib_addr_add(f->ifc, &a, plen), 0);
	f->in_api = false;
}

static inline void bring_up(struct fx *f)
{
	add_addr(f, "10.0.0.1/24");
	up(f);
	run_for(f, 10 * MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	assert_true(f->carrier);
}

static inline int xmit(struct fx *f, const uint8_t *p, size_t len)
{
	int rc;

	f->in_api = true;
	rc = imc_ipoib_xmit(f->ifc, p, len);
	f->in_api = false;
	return rc;
}

/* ---- packets ---- */

/* An ICMP echo request (type 8) or reply (0) with seq and `extra` bytes
 * of payload; the IP checksum is not the interface's business. */
static inline size_t ping4(uint8_t *p, uint32_t src, uint32_t dst, uint8_t type,
		    uint16_t seq, size_t extra)
{
	size_t len = 20 + 8 + extra;

	memset(p, 0, len);
	p[0] = 0x45;
	imc_put16(p + 2, (uint16_t)len);
	p[8] = 64;
	p[9] = 1;
	imc_put32(p + 12, src);
	imc_put32(p + 16, dst);
	p[20] = type;
	imc_put16(p + 26, seq);
	return len;
}

static inline size_t udp6(uint8_t *p, const char *src, const char *dst, size_t extra)
{
	struct imc_ip_addr s, d;

	assert_int_equal(imc_ip_addr_parse(src, &s, NULL), 0);
	assert_int_equal(imc_ip_addr_parse(dst, &d, NULL), 0);
	memset(p, 0, 48 + extra);
	p[0] = 0x60;
	imc_put16(p + 4, (uint16_t)(8 + extra));
	p[6] = 17;
	p[7] = 64;
	memcpy(p + 8, s.v6, 16);
	memcpy(p + 24, d.v6, 16);
	return 48 + extra;
}

struct peer {
	struct imc_gid gid;
	uint16_t lid;
	uint32_t qpn;
	uint32_t ip;
};

static inline struct peer peer(unsigned n)
{
	struct peer p = {
		.gid = port_gid(0x100 + n),
		.lid = (uint16_t)(10 + n),
		.qpn = 0x200 + n,
		.ip = IP4(10, 0, 0, 1 + n),
	};

	return p;
}

static inline void rx_from(struct fx *f, const struct peer *pr,
		    const struct imc_gid *dgid, uint16_t type,
		    const uint8_t *pkt, size_t len)
{
	uint8_t buf[MAXLEN];
	struct imc_ipoib_rx rx;

	imc_put16(buf, type);
	imc_put16(buf + 2, 0);
	memcpy(buf + 4, pkt, len);
	memset(&rx, 0, sizeof(rx));
	rx.src_qp = pr->qpn;
	rx.slid = pr->lid;
	rx.pkey = 0xFFFF;
	rx.has_grh = true;
	rx.sgid = pr->gid;
	rx.dgid = dgid ? *dgid : port_gid(1);
	rx.data = buf;
	rx.len = len + 4;
	imc_ipoib_recv(f->ifc, &rx);
}

static inline void rx_arp(struct fx *f, const struct peer *pr, uint16_t op,
		   uint32_t tpa, bool to_bcast)
{
	struct imc_ipoib_arp a;
	uint8_t buf[IMC_IPOIB_ARP_LEN];
	struct imc_gid bc = bcast_mgid();

	memset(&a, 0, sizeof(a));
	a.op = op;
	a.sha.qpn = pr->qpn;
	a.sha.gid = pr->gid;
	a.spa = pr->ip;
	if (op == IMC_ARP_OP_REPLY) {
		a.tha.qpn = OUR_QPN;
		a.tha.gid = port_gid(1);
	}
	a.tpa = tpa;
	assert_int_equal(imc_ipoib_arp_pack(&a, buf, sizeof(buf)),
			 IMC_IPOIB_ARP_LEN);
	rx_from(f, pr, to_bcast ? &bc : NULL, IMC_ETHERTYPE_ARP, buf,
		sizeof(buf));
}

static inline void parse_arp(const struct sent *s, struct imc_ipoib_arp *a)
{
	assert_int_equal(imc_get16(s->data), IMC_ETHERTYPE_ARP);
	assert_int_equal(imc_ipoib_arp_unpack(a, s->data + 4, s->len - 4),
			 IMC_IPOIB_ARP_LEN);
}

/* The unicast AV an endpoint must get: its GID, LID and QPN, and the
 * broadcast record's SL, rate, TClass, FlowLabel and HopLimit. */
static inline void assert_fabricated(const struct sent *s, const struct peer *pr)
{
	assert_int_equal(s->av.dlid, pr->lid);
	assert_true(imc_gid_equal(&s->av.dgid, &pr->gid));
	assert_int_equal(s->qpn, pr->qpn);
	assert_int_equal(s->qkey, QKEY);
	assert_int_equal(s->av.sl, BC_SL);
	assert_int_equal(s->av.rate, BC_RATE);
	assert_int_equal(s->av.tclass, BC_TCLASS);
	assert_int_equal(s->av.flow_label, BC_FLOW);
	assert_int_equal(s->av.hop_limit, BC_HOP);
}

static inline void assert_to_bcast(const struct sent *s)
{
	struct imc_gid bc = bcast_mgid();

	assert_int_equal(s->qpn, 0xFFFFFF);
	assert_int_equal(s->av.dlid, BC_MLID);
	assert_true(imc_gid_equal(&s->av.dgid, &bc));
	assert_int_equal(s->av.sl, BC_SL);
	assert_int_equal(s->av.hop_limit, BC_HOP);
}


#endif
