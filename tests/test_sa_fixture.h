/* Shared fixture of the SA engine tests: a fake port directory, a virtual
 * loop, a log of everything the SA sends and every MFT change, and helpers
 * that build MCMemberRecord requests and collect their answers (GetTable
 * answers reassembled with the RMPP receiver of ibmcast/rmpp.h).
 * Include after <cmocka.h>. */
#ifndef IMC_TESTS_SA_FIXTURE_H
#define IMC_TESTS_SA_FIXTURE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/rmpp.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_attr.h"

#define FX_MAX_PORTS 512
#define FX_PREFIX 0xfe80000000000000ULL

#define CM(x) ((uint64_t)UMAD_SA_MCM_COMP_MASK_##x)
#define JOIN_MASK (CM(MGID) | CM(PORT_GID) | CM(JOIN_STATE))
#define CREATE_MASK (JOIN_MASK | CM(QKEY) | CM(TCLASS) | CM(PKEY) | \
		     CM(FLOW_LABEL) | CM(SL))

#define ST_REQ_INVALID 0x0200
#define ST_NO_RESOURCES 0x0100
#define ST_NO_RECORDS 0x0300
#define ST_TOO_MANY 0x0400
#define ST_INVALID_GID 0x0500
#define ST_INSUF_COMPS 0x0600

struct fx_port {
	bool present;
	struct imc_sa_port p;
	uint16_t pkeys[4];
};

struct fx_sent {
	struct imc_sa_dest to;
	uint8_t mad[IMC_MAD_SIZE];
	imc_time_t at;
	unsigned seq;               /* position among sends and MFT calls */
};

struct fx_chg {
	uint16_t mlid;
	struct imc_sa_member_change c;
	imc_time_t at;
	unsigned seq;
};

struct fx {
	struct imc_loop *loop;
	struct imc_sa *sa;
	struct imc_sa_config cfg;
	struct fx_port ports[FX_MAX_PORTS];
	struct fx_sent *sent;
	size_t nsent, capsent;
	struct fx_chg *chg;
	size_t nchg, capchg;
	int mft_result;             /* what mcast_members returns */
	unsigned seq;
	uint64_t tid;
	bool in_recv;               /* a send inside imc_sa_recv() is a bug */
};

static inline uint64_t fx_guid(uint16_t lid)
{
	return 0x0000000000100000ULL | lid;
}

static inline struct imc_gid fx_gid(uint16_t lid)
{
	struct imc_gid g;

	imc_gid_set(&g, FX_PREFIX, fx_guid(lid));
	return g;
}

static inline struct imc_gid fx_mgid(const char *s)
{
	struct imc_gid g;

	assert_int_equal(imc_gid_parse(s, &g), 0);
	return g;
}

static inline int fx_by_gid(void *ctx, const struct imc_gid *gid,
		     struct imc_sa_port *out)
{
	struct fx *f = ctx;

	for (size_t i = 0; i < FX_MAX_PORTS; i++)
		if (f->ports[i].present &&
		    imc_gid_equal(&f->ports[i].p.gid, gid)) {
			*out = f->ports[i].p;
			return 0;
		}
	return -ENOENT;
}

static inline int fx_by_lid(void *ctx, uint16_t lid, struct imc_sa_port *out)
{
	struct fx *f = ctx;

	if (lid >= FX_MAX_PORTS || !f->ports[lid].present)
		return -ENOENT;
	*out = f->ports[lid].p;
	return 0;
}

static inline void fx_send(void *ctx, const struct imc_sa_dest *to,
		    const uint8_t *mad, size_t len)
{
	struct fx *f = ctx;

	assert_false(f->in_recv);
	assert_int_equal(len, IMC_MAD_SIZE);
	if (f->nsent == f->capsent) {
		f->capsent = f->capsent ? f->capsent * 2 : 64;
		f->sent = realloc(f->sent, f->capsent * sizeof(*f->sent));
		assert_non_null(f->sent);
	}
	f->sent[f->nsent].to = *to;
	memcpy(f->sent[f->nsent].mad, mad, IMC_MAD_SIZE);
	f->sent[f->nsent].at = imc_loop_now(f->loop);
	f->sent[f->nsent].seq = f->seq++;
	f->nsent++;
}

static inline int fx_mcast(void *ctx, uint16_t mlid,
		    const struct imc_sa_member_change *c)
{
	struct fx *f = ctx;

	assert_false(f->in_recv);
	if (f->nchg == f->capchg) {
		f->capchg = f->capchg ? f->capchg * 2 : 64;
		f->chg = realloc(f->chg, f->capchg * sizeof(*f->chg));
		assert_non_null(f->chg);
	}
	f->chg[f->nchg].mlid = mlid;
	f->chg[f->nchg].c = *c;
	f->chg[f->nchg].at = imc_loop_now(f->loop);
	f->chg[f->nchg].seq = f->seq++;
	f->nchg++;
	return f->mft_result;
}

static const struct imc_sa_ops fx_ops = {
	.port_by_gid = fx_by_gid,
	.port_by_lid = fx_by_lid,
	.send = fx_send,
	.mcast_members = fx_mcast,
};

/* Port lid with GUID fx_guid(lid), MTU 2048, 10 Gb/s, P_Key 0xffff. */
static inline struct fx_port *fx_port(struct fx *f, uint16_t lid)
{
	struct fx_port *p = &f->ports[lid];

	memset(p, 0, sizeof(*p));
	p->present = true;
	p->p.gid = fx_gid(lid);
	p->p.lid = lid;
	p->p.mtu = 4;
	p->p.rate = 3;
	p->p.node = lid;
	p->p.port_num = 1;
	p->pkeys[0] = 0xffff;
	p->p.pkeys = p->pkeys;
	p->p.n_pkeys = 1;
	return p;
}

static inline void fx_pkeys(struct fx *f, uint16_t lid, uint16_t a, uint16_t b)
{
	struct fx_port *p = &f->ports[lid];

	p->pkeys[0] = a;
	p->pkeys[1] = b;
	p->p.n_pkeys = b ? 2 : 1;
}

/* Creates the SA from f->cfg (set up by fx_init and maybe changed). */
static inline void fx_start(struct fx *f)
{
	assert_int_equal(imc_sa_create(f->loop, &f->cfg, &fx_ops, f, &f->sa),
			 0);
}

static inline void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(imc_loop_create_virtual(0, &f->loop), 0);
	imc_sa_config_init(&f->cfg);
	f->cfg.sa_lid = 1;
	f->cfg.sa_gid = fx_gid(1);
	f->tid = 0x1000;
	for (uint16_t lid = 1; lid <= 16; lid++)
		fx_port(f, lid);
}

/* Destroys the SA and the loop and checks that no timer was left. */
static inline void fx_fini(struct fx *f)
{
	imc_sa_destroy(f->sa);
	assert_int_equal(imc_loop_destroy(f->loop), 0);
	free(f->sent);
	free(f->chg);
}

static inline void fx_run(struct fx *f)
{
	assert_int_equal(imc_loop_run_until(f->loop, imc_loop_now(f->loop)),
			 0);
}

static inline void fx_run_for(struct fx *f, imc_time_t t)
{
	assert_int_equal(imc_loop_run_until(f->loop,
					    imc_loop_now(f->loop) + t), 0);
}

static inline struct imc_sa_src fx_src(uint16_t lid)
{
	struct imc_sa_src s;

	memset(&s, 0, sizeof(s));
	s.slid = lid;
	s.sqpn = 1;
	s.pkey = 0xffff;
	return s;
}

static inline int fx_recv(struct fx *f, uint16_t lid, const uint8_t *mad,
			  size_t len)
{
	struct imc_sa_src s = fx_src(lid);
	int rc;

	f->in_recv = true;
	rc = imc_sa_recv(f->sa, &s, mad, len);
	f->in_recv = false;
	return rc;
}

/* An SA request MAD. */
static inline void fx_mad(uint8_t *buf, uint8_t method, uint16_t attr,
			  uint64_t tid, uint64_t sm_key, uint64_t mask,
			  const uint8_t *data, size_t len)
{
	struct imc_sa_mad m;

	memset(&m, 0, sizeof(m));
	m.mad.base_version = 1;
	m.mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
	m.mad.class_version = 2;
	m.mad.method = method;
	m.mad.tid = tid;
	m.mad.attr_id = attr;
	m.sa.sm_key = sm_key;
	m.sa.comp_mask = mask;
	if (data)
		memcpy(m.data, data, len);
	assert_int_equal(imc_sa_mad_pack(&m, buf, IMC_MAD_SIZE),
			 IMC_MAD_SIZE);
}

static inline void fx_mcmr_mad(uint8_t *buf, uint8_t method, uint64_t tid,
			       uint64_t sm_key, uint64_t mask,
			       const struct imc_mcmr *r)
{
	uint8_t rec[IMC_MCMR_SIZE];

	assert_int_equal(imc_mcmr_pack(r, rec, sizeof(rec)), IMC_MCMR_SIZE);
	fx_mad(buf, method, UMAD_SA_ATTR_MCMEMBER_REC, tid, sm_key, mask, rec,
	       sizeof(rec));
}

/* The last MAD sent to lid with this TID, or NULL. */
static inline const struct fx_sent *fx_answer(const struct fx *f,
					      uint16_t lid, uint64_t tid)
{
	for (size_t i = f->nsent; i-- > 0;) {
		const uint8_t *m = f->sent[i].mad;
		uint64_t t = (uint64_t)m[8] << 56 | (uint64_t)m[9] << 48 |
			     (uint64_t)m[10] << 40 | (uint64_t)m[11] << 32 |
			     (uint64_t)m[12] << 24 | (uint64_t)m[13] << 16 |
			     (uint64_t)m[14] << 8 | m[15];

		if (f->sent[i].to.dlid == lid && t == tid)
			return &f->sent[i];
	}
	return NULL;
}

/* Sends one MCMemberRecord request from lid, runs the loop, and returns
 * the answer's status (decoded into *ans when not NULL); -1 if none. */
static inline int fx_req(struct fx *f, uint16_t lid, uint8_t method,
			 uint64_t mask, const struct imc_mcmr *r,
			 struct imc_sa_mad *ans)
{
	uint8_t buf[IMC_MAD_SIZE];
	uint64_t tid = ++f->tid;
	const struct fx_sent *s;
	struct imc_sa_mad m;

	fx_mcmr_mad(buf, method, tid, 0, mask, r);
	assert_int_equal(fx_recv(f, lid, buf, sizeof(buf)), 0);
	fx_run(f);
	s = fx_answer(f, lid, tid);
	if (!s)
		return -1;
	assert_int_equal(imc_sa_mad_unpack(&m, s->mad, IMC_MAD_SIZE),
			 IMC_MAD_SIZE);
	if (ans)
		*ans = m;
	return m.mad.status;
}

/* The record of an answer (first record of its data area). */
static inline struct imc_mcmr fx_rec(const struct imc_sa_mad *m)
{
	struct imc_mcmr r;

	assert_int_equal(imc_mcmr_unpack(&r, m->data, sizeof(m->data)),
			 IMC_MCMR_SIZE);
	return r;
}

/* A create request of OpenSM's usual shape (Linux ib_sa fills the same
 * fields): Q_Key 0x80010000, P_Key 0xffff, TClass/SL/FlowLabel 0. */
static inline struct imc_mcmr fx_create_rec(const struct imc_gid *mgid,
					    uint16_t port_lid, uint8_t js)
{
	struct imc_mcmr r;

	memset(&r, 0, sizeof(r));
	if (mgid)
		r.mgid = *mgid;
	r.port_gid = fx_gid(port_lid);
	r.qkey = 0x80010000;
	r.pkey = 0xffff;
	r.join_state = js;
	return r;
}

static inline int fx_join(struct fx *f, uint16_t lid,
			  const struct imc_gid *mgid, uint16_t port_lid,
			  uint8_t js, struct imc_sa_mad *ans)
{
	struct imc_mcmr r = fx_create_rec(mgid, port_lid, js);

	return fx_req(f, lid, UMAD_METHOD_SET, CREATE_MASK, &r, ans);
}

static inline int fx_leave(struct fx *f, uint16_t lid,
			   const struct imc_gid *mgid, uint16_t port_lid,
			   uint8_t js, struct imc_sa_mad *ans)
{
	struct imc_mcmr r;

	memset(&r, 0, sizeof(r));
	r.mgid = *mgid;
	r.port_gid = fx_gid(port_lid);
	r.join_state = js;
	return fx_req(f, lid, UMAD_SA_METHOD_DELETE, JOIN_MASK, &r, ans);
}

/* GetTable from lid: answers the RMPP transfer with ACKs as a client's
 * RMPP receiver does, and returns the records (caller frees) and their
 * count; the answer's status in *status. */
static inline uint8_t *fx_table(struct fx *f, uint16_t lid, uint64_t sm_key,
				uint64_t mask, const struct imc_mcmr *r,
				size_t *count, uint16_t *status,
				uint16_t *attr_offset)
{
	uint8_t buf[IMC_MAD_SIZE], ack[IMC_MAD_SIZE];
	uint64_t tid = ++f->tid;
	struct imc_rmpp_receiver *rx;
	size_t seen;
	uint8_t *payload = NULL;
	size_t len = 0;
	bool done = false;

	assert_int_equal(imc_rmpp_receiver_create(1 << 24, 4, &rx), 0);
	fx_mcmr_mad(buf, UMAD_SA_METHOD_GET_TABLE, tid, sm_key, mask, r);
	seen = f->nsent;
	assert_int_equal(fx_recv(f, lid, buf, sizeof(buf)), 0);
	for (int rounds = 0; rounds < 10000 && !done; rounds++) {
		fx_run(f);
		while (seen < f->nsent && !done) {
			const struct fx_sent *s = &f->sent[seen++];
			struct imc_sa_mad m;
			int rc;

			if (s->to.dlid != lid)
				continue;
			imc_sa_mad_unpack(&m, s->mad, IMC_MAD_SIZE);
			if (m.mad.tid != tid)
				continue;
			*status = m.mad.status;
			if (!(m.rmpp.flags & IMC_RMPP_FLAG_ACTIVE)) {
				/* an error answer: one MAD, no RMPP */
				*count = 0;
				*attr_offset = m.sa.attr_offset;
				imc_rmpp_receiver_destroy(rx);
				return NULL;
			}
			rc = imc_rmpp_receiver_recv(rx, s->mad, IMC_MAD_SIZE,
						    NULL);
			assert_true(rc >= 0);
			if (rc & IMC_RMPP_RX_ACK) {
				assert_int_equal(imc_rmpp_receiver_ack_pack(
					rx, ack, sizeof(ack)), IMC_MAD_SIZE);
				assert_int_equal(fx_recv(f, lid, ack,
							 sizeof(ack)), 0);
			}
			if (rc & IMC_RMPP_RX_DONE)
				done = true;
		}
		if (!done && seen == f->nsent)
			fx_run_for(f, IMC_NSEC_PER_MSEC);
	}
	assert_true(done);
	fx_run(f);
	*attr_offset = imc_rmpp_receiver_first(rx)->sa.attr_offset;
	assert_int_equal(imc_rmpp_receiver_take(rx, &payload, &len), 0);
	imc_rmpp_receiver_destroy(rx);
	if (*attr_offset)
		*count = len / ((size_t)*attr_offset * 8);
	else
		*count = 0;
	return payload;
}

static inline struct imc_mcmr fx_table_rec(const uint8_t *payload, size_t i)
{
	struct imc_mcmr r;

	assert_int_equal(imc_mcmr_unpack(&r, payload + i * IMC_MCMR_SIZE,
					 IMC_MCMR_SIZE), IMC_MCMR_SIZE);
	return r;
}

static inline struct imc_sa_stats fx_stats(const struct fx *f)
{
	struct imc_sa_stats st;

	imc_sa_get_stats(f->sa, &st);
	return st;
}

static inline char *fx_dump(const struct fx *f)
{
	int n = imc_sa_dump(f->sa, NULL, 0);
	char *s;

	assert_true(n > 0);
	s = malloc((size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(imc_sa_dump(f->sa, s, (size_t)n + 1), n);
	return s;
}

static inline void assert_gid_eq(const struct imc_gid *a, const char *b)
{
	char s[IMC_GID_STRLEN];

	imc_gid_format(a, s);
	assert_string_equal(s, b);
}

#endif
