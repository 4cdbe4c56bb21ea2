/* Arbitrary MADs into an SA that already has a few groups.
 *
 * Input: records of one byte (the requester's LID, 0..15; some LIDs are
 * unknown to the directory, some in another partition) followed by up to
 * 256 bytes of MAD; a record shorter than 257 bytes ends the input and is
 * delivered with its length. Between records virtual time moves by the
 * low bits of the LID byte, so retransmission timers fire too.
 *
 * Checked after every MAD, abort() on failure:
 *  - every MAD the SA sends is 256 bytes of the SA class, a response
 *    method or a Report, with SM_Key 0 in every answer, and decodes and
 *    re-encodes to the same bytes; a successful MCMemberRecord answer
 *    carries a valid record (selectors "exactly", a group's MLID in a
 *    GetResp, no reserved bit), and nothing is sent from inside
 *    imc_sa_recv();
 *  - MLIDs in use equal the groups (no sharing configured); every group
 *    has a distinct MLID in the pool; groups come in increasing MGID
 *    order; a group that is not persistent has a full member; the members
 *    listed add up to the member count; no member has JoinState 0.
 * At the end the SA is destroyed after its timers ran out, and the loop
 * must have no timer left (no leak of Reports or transfers).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_attr.h"
#include "util/bytes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MLID_LAST 0xc00f
#define NPORTS 12

struct env {
	struct imc_loop *loop;
	struct imc_sa *sa;
	struct imc_sa_port ports[NPORTS];
	uint16_t pkeys[NPORTS][2];
	bool in_recv;
};

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_sa_request: %s\n", what);
		abort();
	}
}

static int by_gid(void *ctx, const struct imc_gid *gid,
		  struct imc_sa_port *out)
{
	struct env *e = ctx;

	for (int i = 1; i < NPORTS; i++)
		if (imc_gid_equal(&e->ports[i].gid, gid)) {
			*out = e->ports[i];
			return 0;
		}
	return -1;
}

static int by_lid(void *ctx, uint16_t lid, struct imc_sa_port *out)
{
	struct env *e = ctx;

	if (lid == 0 || lid >= NPORTS)
		return -1;
	*out = e->ports[lid];
	return 0;
}

static void on_send(void *ctx, const struct imc_sa_dest *to,
		    const uint8_t *mad, size_t len)
{
	struct env *e = ctx;
	struct imc_sa_mad m;
	uint8_t again[IMC_MAD_SIZE];
	uint8_t method;

	check(!e->in_recv, "sent from inside imc_sa_recv");
	check(len == IMC_MAD_SIZE, "answer length");
	check(mad[1] == UMAD_CLASS_SUBN_ADM, "answer class");
	method = mad[3];
	check((method & UMAD_METHOD_RESP_MASK) || method == UMAD_METHOD_REPORT,
	      "answer method");
	check(imc_sa_mad_unpack(&m, mad, len) == IMC_MAD_SIZE, "unpack");
	check(imc_sa_mad_pack(&m, again, sizeof(again)) == IMC_MAD_SIZE &&
	      !memcmp(again, mad, IMC_MAD_SIZE), "re-encode");
	check(m.sa.sm_key == 0, "SM_Key in an answer");
	check(to->qkey == IMC_SA_QP1_QKEY, "Q_Key");
	if (method == UMAD_METHOD_REPORT) {
		struct imc_notice n;
		struct imc_gid g;

		check(imc_notice_unpack(&n, m.data, sizeof(m.data)) > 0 &&
		      imc_notice_mcast_mgid(&n, &g) == 0, "Report notice");
		return;
	}
	if (m.mad.attr_id == UMAD_SA_ATTR_MCMEMBER_REC && m.mad.status == 0 &&
	    !(m.rmpp.flags & 1) && m.mad.base_version == 1) {
		struct imc_mcmr r;
		uint8_t rec[IMC_MCMR_SIZE];

		check(imc_mcmr_unpack(&r, m.data, sizeof(m.data)) > 0, "rec");
		check(imc_mcmr_pack(&r, rec, sizeof(rec)) == IMC_MCMR_SIZE &&
		      !memcmp(rec, m.data, sizeof(rec)), "record bytes");
		check(!imc_mcmr_reserved_set(&r), "reserved bits answered");
		check(r.mtu_sel == 2 && r.rate_sel == 2 && r.life_sel == 2,
		      "selectors");
		/* Get and Set answers carry a group's MLID */
		if (method == UMAD_METHOD_GET_RESP)
			check(r.mlid >= 0xc000 && r.mlid <= MLID_LAST, "MLID");
	}
}

static int on_mcast(void *ctx, uint16_t mlid,
		    const struct imc_sa_member_change *c)
{
	struct env *e = ctx;

	check(!e->in_recv, "MFT call from inside imc_sa_recv");
	check(mlid >= 0xc000 && mlid <= MLID_LAST && c->mlid == mlid,
	      "MFT MLID");
	return 0;
}

struct walk {
	const struct imc_sa *sa;
	struct imc_gid last;
	bool first;
	uint64_t members;
	uint32_t groups;
	uint8_t used[MLID_LAST - 0xc000 + 1];
	uint32_t in_group;
};

static int count_member(void *arg, const struct imc_sa_member_info *m)
{
	struct walk *w = arg;

	check(m->join_state != 0 && m->join_state <= 0xf, "member JoinState");
	w->in_group++;
	return 0;
}

static int walk_group(void *arg, const struct imc_sa_group_info *g)
{
	struct walk *w = arg;

	check(w->first || imc_gid_cmp(&w->last, &g->rec.mgid) < 0,
	      "group order");
	w->first = false;
	w->last = g->rec.mgid;
	check(g->rec.mlid >= 0xc000 && g->rec.mlid <= MLID_LAST, "group MLID");
	check(!w->used[g->rec.mlid - 0xc000], "MLID shared");
	w->used[g->rec.mlid - 0xc000] = 1;
	check(g->persistent || g->full_members > 0,
	      "group without full member");
	check(g->full_members <= g->members, "full members");
	w->in_group = 0;
	check(imc_sa_foreach_member(w->sa, &g->rec.mgid, count_member, w) == 0,
	      "members walk");
	check(w->in_group == g->members, "member count");
	w->members += g->members;
	w->groups++;
	return 0;
}

static void invariants(struct env *e)
{
	struct imc_sa_stats st;
	struct walk w;

	memset(&w, 0, sizeof(w));
	w.sa = e->sa;
	w.first = true;
	imc_sa_get_stats(e->sa, &st);
	check(imc_sa_foreach_group(e->sa, walk_group, &w) == 0, "groups walk");
	check(st.mlids_in_use == st.groups, "MLIDs in use != groups");
	check(w.groups == st.groups, "groups count");
	check(w.members == st.members, "members count");
	check(st.queue_len <= 64, "queue bound");
}

static void feed(struct env *e, uint16_t lid, const uint8_t *mad, size_t len)
{
	struct imc_sa_src src;

	memset(&src, 0, sizeof(src));
	src.slid = lid;
	src.sqpn = 1;
	src.pkey = 0xffff;
	e->in_recv = true;
	imc_sa_recv(e->sa, &src, mad, len);
	e->in_recv = false;
}

/* Seed state: ff12:1234::1 (ports 1, 2), ff12:1234::2 (port 3), and
 * port 4 subscribed to every trap. */
static void seed(struct env *e)
{
	static const uint64_t create = 0x130c7;
	struct imc_sa_mad m;
	struct imc_mcmr r;
	uint8_t buf[IMC_MAD_SIZE];
	const struct {
		uint16_t lid;
		uint8_t last;
	} joins[] = { { 1, 1 }, { 2, 1 }, { 3, 2 } };

	for (size_t i = 0; i < 3; i++) {
		memset(&m, 0, sizeof(m));
		memset(&r, 0, sizeof(r));
		m.mad.base_version = 1;
		m.mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
		m.mad.class_version = 2;
		m.mad.method = UMAD_METHOD_SET;
		m.mad.tid = 0x10 + i;
		m.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
		m.sa.comp_mask = create;
		imc_gid_set(&r.mgid, 0xff12123400000000ULL, joins[i].last);
		r.port_gid = e->ports[joins[i].lid].gid;
		r.qkey = 0x80010000;
		r.pkey = 0xffff;
		r.join_state = 1;
		imc_mcmr_pack(&r, m.data, sizeof(m.data));
		imc_sa_mad_pack(&m, buf, sizeof(buf));
		feed(e, joins[i].lid, buf, sizeof(buf));
	}
	{
		struct imc_inform_info ii;

		memset(&m, 0, sizeof(m));
		memset(&ii, 0, sizeof(ii));
		m.mad.base_version = 1;
		m.mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
		m.mad.class_version = 2;
		m.mad.method = UMAD_METHOD_SET;
		m.mad.tid = 0x20;
		m.mad.attr_id = UMAD_ATTR_INFORM_INFO;
		ii.lid_range_begin = 0xffff;
		ii.is_generic = 1;
		ii.subscribe = 1;
		ii.type = 0xffff;
		ii.trap_number_or_device_id = 0xffff;
		ii.producer_type_or_vendor_id = 0xffffff;
		imc_inform_info_pack(&ii, m.data, sizeof(m.data));
		imc_sa_mad_pack(&m, buf, sizeof(buf));
		feed(e, 4, buf, sizeof(buf));
	}
	imc_loop_run_until(e->loop, imc_loop_now(e->loop));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct imc_sa_ops ops = {
		.port_by_gid = by_gid,
		.port_by_lid = by_lid,
		.send = on_send,
		.mcast_members = on_mcast,
	};
	struct imc_sa_config cfg;
	struct env e;
	size_t pos = 0;

	memset(&e, 0, sizeof(e));
	if (imc_loop_create_virtual(0, &e.loop))
		abort();
	for (int i = 1; i < NPORTS; i++) {
		struct imc_sa_port *p = &e.ports[i];

		imc_gid_set(&p->gid, 0xfe80000000000000ULL, 0x100000 + i);
		p->lid = (uint16_t)i;
		p->mtu = i == 5 ? 2 : 4;
		p->rate = i == 6 ? 2 : 3;
		e.pkeys[i][0] = i == 7 ? 0x8001 : i == 8 ? 0x7fff : 0xffff;
		e.pkeys[i][1] = i == 9 ? 0x8001 : 0;
		p->pkeys = e.pkeys[i];
		p->n_pkeys = e.pkeys[i][1] ? 2 : 1;
		p->node = (uint32_t)i;
		p->port_num = 1;
	}
	imc_sa_config_init(&cfg);
	cfg.mlid_last = MLID_LAST;
	cfg.queue_max = 64;
	cfg.max_transfers = 4;
	cfg.max_subscriptions = 8;
	cfg.sa_lid = 1;
	cfg.sa_gid = e.ports[1].gid;
	if (imc_sa_create(e.loop, &cfg, &ops, &e, &e.sa))
		abort();
	seed(&e);
	invariants(&e);

	while (pos < size) {
		uint8_t lid = data[pos++] & 0x0f;
		size_t len = size - pos < IMC_MAD_SIZE ? size - pos :
							 IMC_MAD_SIZE;

		feed(&e, lid, data + pos, len);
		pos += len;
		imc_loop_run_until(e.loop, imc_loop_now(e.loop) +
				   (imc_time_t)(data[pos - len - 1] >> 4) *
					   50 * IMC_NSEC_PER_MSEC);
		invariants(&e);
	}
	/* let Reports and transfers run out */
	imc_loop_run_until(e.loop,
			   imc_loop_now(e.loop) + 10 * IMC_NSEC_PER_SEC);
	invariants(&e);
	{
		struct imc_sa_stats st;

		imc_sa_get_stats(e.sa, &st);
		check(st.reports_pending == 0 && st.transfers_active == 0 &&
		      st.queue_len == 0 && st.mft_pending == 0, "work left");
	}
	imc_sa_destroy(e.sa);
	check(imc_loop_destroy(e.loop) == 0, "timers left after destroy");
	return 0;
}
