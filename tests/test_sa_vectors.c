/* The SA engine against OpenSM 3.3.23: the requests OpenSM answered in
 * tests/vectors/opensm-mcmr.txt, fed to the engine, get answers equal to
 * OpenSM's field by field (the MLID OpenSM assigned excepted, and the
 * bytes past the records that OpenSM leaves uninitialised), and every row
 * of the "What OpenSM answered" table of reference/opensm-ibsim.md gets
 * the same status. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ibmcast/ipoib_wire.h"
#include "ibmcast/mad.h"
#include "test_sa_fixture.h"

#define VECTORS IMC_SOURCE_DIR "/tests/vectors/opensm-mcmr.txt"
#define GARBAGE_AT 176   /* OpenSM's answers carry stale bytes from here */

static struct imc_mad_line vecs[16];
static size_t nvecs;

static void load(void)
{
	char line[2048];
	FILE *f = fopen(VECTORS, "r");

	nvecs = 0;
	if (!f) {
		printf("skipping: cannot open %s\n", VECTORS);
		skip();
	}
	while (fgets(line, sizeof(line), f) && nvecs < IMC_ARRAY_SIZE(vecs)) {
		int rc = imc_mad_line_parse(line, &vecs[nvecs]);

		assert_true(rc >= 0);
		nvecs += (size_t)rc;
	}
	fclose(f);
	assert_int_equal(nvecs, 8);
}

/* The requester of every vector: LID 1, port GUID 0x10002d. */
static void setup(struct fx *f)
{
	fx_init(f);
	imc_gid_set(&f->ports[1].p.gid, FX_PREFIX, 0x10002d);
	fx_start(f);
}

static void same_headers(const struct imc_sa_mad *ours,
			 const struct imc_sa_mad *osm)
{
	assert_int_equal(ours->mad.base_version, osm->mad.base_version);
	assert_int_equal(ours->mad.mgmt_class, osm->mad.mgmt_class);
	assert_int_equal(ours->mad.class_version, osm->mad.class_version);
	assert_int_equal(ours->mad.method, osm->mad.method);
	assert_int_equal(ours->mad.status, osm->mad.status);
	assert_int_equal(ours->mad.class_specific, osm->mad.class_specific);
	/* ibsim rewrites the TID's high half in transit */
	assert_int_equal((uint32_t)ours->mad.tid, (uint32_t)osm->mad.tid);
	assert_int_equal(ours->mad.attr_id, osm->mad.attr_id);
	assert_int_equal(ours->mad.attr_mod, osm->mad.attr_mod);
	assert_true(ours->sa.sm_key == osm->sa.sm_key);
	assert_int_equal(ours->sa.attr_offset, osm->sa.attr_offset);
	assert_true(ours->sa.comp_mask == osm->sa.comp_mask);
}

/* Every field but MLID; ProxyJoin where OpenSM puts it (bit 0 of byte
 * 49, see tests/test_wire_golden.c) against the spec's bit 7. */
static void same_record(const struct imc_mcmr *a, const struct imc_mcmr *b,
			bool mgid)
{
	if (mgid)
		assert_true(imc_gid_equal(&a->mgid, &b->mgid));
	assert_true(imc_gid_equal(&a->port_gid, &b->port_gid));
	assert_int_equal(a->qkey, b->qkey);
	assert_int_equal(a->mtu_sel, b->mtu_sel);
	assert_int_equal(a->mtu, b->mtu);
	assert_int_equal(a->tclass, b->tclass);
	assert_int_equal(a->pkey, b->pkey);
	assert_int_equal(a->rate_sel, b->rate_sel);
	assert_int_equal(a->rate, b->rate);
	assert_int_equal(a->life_sel, b->life_sel);
	assert_int_equal(a->life, b->life);
	assert_int_equal(a->sl, b->sl);
	assert_int_equal(a->flow_label, b->flow_label);
	assert_int_equal(a->hop_limit, b->hop_limit);
	assert_int_equal(a->scope, b->scope);
	assert_int_equal(a->join_state, b->join_state);
	assert_int_equal(a->proxy_join, (b->resv49 & 1) != 0);
	assert_int_equal(a->resv49, 0);
	assert_true(!b->proxy_join);
}

/* Feeds vector i (a request from LID 1) and returns the answer sent. */
static void answer_to(struct fx *f, size_t i, struct imc_sa_mad *ans)
{
	struct imc_sa_mad req;
	const struct fx_sent *s;

	assert_int_equal(vecs[i].dir, IMC_MAD_TX);
	imc_sa_mad_unpack(&req, vecs[i].mad, IMC_MAD_SIZE);
	assert_int_equal(fx_recv(f, vecs[i].lid, vecs[i].mad, IMC_MAD_SIZE), 0);
	fx_run(f);
	s = fx_answer(f, vecs[i].lid, req.mad.tid);
	assert_non_null(s);
	assert_int_equal(s->to.dlid, 1);
	assert_int_equal(s->to.dqpn, 1);
	assert_int_equal(s->to.qkey, IMC_SA_QP1_QKEY);
	imc_sa_mad_unpack(ans, s->mad, IMC_MAD_SIZE);
}

static void pair1_create(void **state)
{
	struct imc_sa_mad ours, osm;
	struct imc_mcmr a, b;
	struct fx f;

	load();
	setup(&f);
	answer_to(&f, 0, &ours);
	imc_sa_mad_unpack(&osm, vecs[1].mad, IMC_MAD_SIZE);
	same_headers(&ours, &osm);
	assert_int_equal(ours.rmpp.flags, 0);
	assert_int_equal(osm.rmpp.flags, 0);
	a = fx_rec(&ours);
	b = fx_rec(&osm);
	/* the same SA-assigned MGID (first of its counter) */
	same_record(&a, &b, true);
	assert_gid_eq(&a.mgid, "ff12:a01b:fe80::");
	assert_int_equal(b.mlid, 0xc00e);
	assert_int_equal(a.mlid, 0xc001);
	assert_memory_equal(ours.data + IMC_MCMR_SIZE, osm.data + IMC_MCMR_SIZE,
			    GARBAGE_AT - IMC_MCMR_SIZE);
	fx_fini(&f);
}

static void pair2_insuf_comps(void **state)
{
	struct imc_sa_mad ours, osm;
	struct fx f;

	load();
	setup(&f);
	answer_to(&f, 2, &ours);
	imc_sa_mad_unpack(&osm, vecs[3].mad, IMC_MAD_SIZE);
	same_headers(&ours, &osm);
	assert_int_equal(ours.mad.status, ST_INSUF_COMPS);
	assert_memory_equal(ours.data, osm.data, GARBAGE_AT);
	assert_int_equal(ours.rmpp.flags, 0);
	fx_fini(&f);
}

static void pair3_delete_absent(void **state)
{
	struct imc_sa_mad ours, osm;
	struct fx f;

	load();
	setup(&f);
	answer_to(&f, 4, &ours);
	imc_sa_mad_unpack(&osm, vecs[5].mad, IMC_MAD_SIZE);
	same_headers(&ours, &osm);
	assert_int_equal(ours.mad.method, UMAD_SA_METHOD_DELETE_RESP);
	assert_int_equal(ours.mad.status, ST_REQ_INVALID);
	assert_memory_equal(ours.data, osm.data, GARBAGE_AT);
	fx_fini(&f);
}

/* OpenSM's state at the GetTable: ff12:1234:3d:: on MLID 0xC001 with port
 * 3 joined by itself and ports 5 and 7 joined by LID 1 (their records
 * carry OpenSM's ProxyJoin bit). */
static void pair4_get_table(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234:3d::");
	struct imc_sa_mad ours, osm;
	const struct fx_sent *s;
	struct imc_mcmr r;
	uint8_t ack[IMC_MAD_SIZE];
	struct imc_rmpp_receiver *rx;
	uint8_t *p;
	size_t len;
	struct fx f;
	int rc;

	load();
	setup(&f);
	r = fx_create_rec(&g, 3, 1);
	r.scope = 2;
	assert_int_equal(fx_req(&f, 3, UMAD_METHOD_SET, CREATE_MASK | CM(SCOPE),
				&r, NULL), 0);
	assert_int_equal(fx_join(&f, 1, &g, 5, 1, NULL), 0);
	assert_int_equal(fx_join(&f, 1, &g, 7, 1, NULL), 0);
	answer_to(&f, 6, &ours);
	imc_sa_mad_unpack(&osm, vecs[7].mad, IMC_MAD_SIZE);
	same_headers(&ours, &osm);
	/* both RMPP-active; ours is a whole one-segment transfer */
	assert_true(ours.rmpp.flags & IMC_RMPP_FLAG_ACTIVE);
	assert_true(osm.rmpp.flags & IMC_RMPP_FLAG_ACTIVE);
	assert_int_equal(ours.rmpp.flags, 7);
	assert_int_equal(ours.rmpp.type, IMC_RMPP_TYPE_DATA);
	assert_int_equal(ours.rmpp.paylen_newwin, 20 + 3 * IMC_MCMR_SIZE);
	for (unsigned i = 0; i < 3; i++) {
		struct imc_mcmr a, b;

		imc_mcmr_unpack(&a, ours.data + i * IMC_MCMR_SIZE,
				IMC_MCMR_SIZE);
		imc_mcmr_unpack(&b, osm.data + i * IMC_MCMR_SIZE,
				IMC_MCMR_SIZE);
		same_record(&a, &b, true);
		assert_int_equal(a.mlid, b.mlid);
	}
	/* the requester's ACK ends the transfer */
	assert_int_equal(imc_rmpp_receiver_create(4096, 1, &rx), 0);
	s = fx_answer(&f, 1, ours.mad.tid);
	rc = imc_rmpp_receiver_recv(rx, s->mad, IMC_MAD_SIZE, NULL);
	assert_true(rc & IMC_RMPP_RX_DONE);
	assert_int_equal(imc_rmpp_receiver_ack_pack(rx, ack, sizeof(ack)),
			 IMC_MAD_SIZE);
	assert_int_equal(fx_recv(&f, 1, ack, sizeof(ack)), 0);
	fx_run(&f);
	assert_int_equal(imc_rmpp_receiver_take(rx, &p, &len), 0);
	assert_int_equal(len, 3 * IMC_MCMR_SIZE);
	imc_rmpp_payload_free(p);
	imc_rmpp_receiver_destroy(rx);
	assert_int_equal(fx_stats(&f).transfers_done, 1);
	assert_int_equal(fx_stats(&f).transfers_active, 0);
	fx_fini(&f);
}

/* reference/opensm-ibsim.md, "What OpenSM answered", row by row. */
static void opensm_observed_table(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1"), bc, v4;
	struct imc_sa_mad a;
	struct imc_mcmr r;
	uint16_t st, off;
	size_t n;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(imc_ipoib_bcast_mgid(0xffff, 2, &bc), 0);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(0xe0000005, 0xffff, 2, &v4),
			 0);

	/* create with MGID 0 and the five components: ff12:a01b:fe80::,
	 * MLID from 0xC001 */
	assert_int_equal(fx_join(&f, 1, NULL, 1, 1, &a), 0);
	r = fx_rec(&a);
	assert_gid_eq(&r.mgid, "ff12:a01b:fe80::");
	assert_int_equal(r.mlid, 0xc001);
	/* create missing one of those components */
	r = fx_create_rec(&g, 1, 1);
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, CREATE_MASK & ~CM(SL),
				&r, NULL), ST_INSUF_COMPS);
	/* Set/Delete without PortGID or JoinState */
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET,
				CREATE_MASK & ~CM(PORT_GID), &r, NULL),
			 ST_INSUF_COMPS);
	assert_int_equal(fx_req(&f, 1, UMAD_SA_METHOD_DELETE,
				JOIN_MASK & ~CM(JOIN_STATE), &r, NULL),
			 ST_INSUF_COMPS);
	/* Q_Key differs from the existing group */
	assert_int_equal(fx_join(&f, 1, &g, 1, 1, NULL), 0);
	r = fx_create_rec(&g, 2, 1);
	r.qkey = 0x11;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	/* JoinState 0, or NonMember creating a group */
	assert_int_equal(fx_join(&f, 2, &g, 2, 0, NULL), ST_REQ_INVALID);
	{
		struct imc_gid h = fx_mgid("ff12:1234::2");

		assert_int_equal(fx_join(&f, 2, &h, 2, 2, NULL),
				 ST_REQ_INVALID);
	}
	/* MTU exactly 4096 on a 2048 port */
	{
		struct imc_gid h = fx_mgid("ff12:1234::3");

		r = fx_create_rec(&h, 2, 1);
		r.mtu_sel = 2;
		r.mtu = 5;
		assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET,
					CREATE_MASK | CM(MTU_SEL) | CM(MTU),
					&r, NULL), ST_REQ_INVALID);
	}
	/* reserved flag bits; a01b with link-local scope */
	{
		struct imc_gid h = fx_mgid("ff52:1234::1");
		struct imc_gid k = fx_mgid("ff12:a01b::5");

		assert_int_equal(fx_join(&f, 2, &h, 2, 1, NULL),
				 ST_REQ_INVALID);
		assert_int_equal(fx_join(&f, 2, &k, 2, 1, NULL),
				 ST_REQ_INVALID);
	}
	/* IPoIB-signed MGID with another Q_Key than the broadcast group */
	assert_int_equal(fx_join(&f, 2, &v4, 2, 1, NULL), ST_REQ_INVALID);
	/* unknown port GID; wrong subnet prefix */
	r = fx_create_rec(&g, 2, 1);
	imc_gid_set(&r.port_gid, FX_PREFIX, 0xabcdef);
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_REQ_INVALID);
	imc_gid_set(&r.port_gid, 0xfe80000000000001ULL, fx_guid(2));
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, NULL),
			 ST_INVALID_GID);
	/* proxy join for another existing port */
	assert_int_equal(fx_join(&f, 1, &g, 3, 1, NULL), 0);
	/* repeated joins OR: 1, 8, 2 -> 0xB */
	assert_int_equal(fx_join(&f, 4, &g, 4, 1, &a), 0);
	assert_int_equal(fx_join(&f, 4, &g, 4, 8, &a), 0);
	assert_int_equal(fx_join(&f, 4, &g, 4, 2, &a), 0);
	assert_int_equal(fx_rec(&a).join_state, 0xb);
	/* Delete: 0x95, the request with the remaining JoinState */
	assert_int_equal(fx_leave(&f, 4, &g, 4, 8, &a), 0);
	assert_int_equal(a.mad.method, 0x95);
	r = fx_rec(&a);
	assert_int_equal(r.join_state, 0x3);
	assert_true(imc_gid_equal(&r.mgid, &g));
	assert_gid_eq(&r.port_gid, "fe80::10:4");
	/* Delete when not a member, or of an absent group */
	assert_int_equal(fx_leave(&f, 5, &g, 5, 1, NULL), ST_REQ_INVALID);
	{
		struct imc_gid h = fx_mgid("ff12:1234::99");

		assert_int_equal(fx_leave(&f, 5, &h, 5, 1, NULL),
				 ST_REQ_INVALID);
	}
	/* last FullMember leaves: deleted; the broadcast group is kept */
	assert_int_equal(fx_leave(&f, 1, &g, 1, 1, NULL), 0);
	assert_int_equal(fx_leave(&f, 1, &g, 3, 1, NULL), 0);
	assert_int_equal(fx_leave(&f, 4, &g, 4, 3, NULL), 0);
	{
		struct imc_sa_group_info gi;

		assert_int_equal(imc_sa_group_get(f.sa, &g, &gi), -ENOENT);
		r = fx_create_rec(&bc, 2, 1);
		r.qkey = 0x0b1b;
		assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK,
					&r, NULL), 0);
		assert_int_equal(fx_leave(&f, 2, &bc, 2, 1, NULL), 0);
		assert_int_equal(imc_sa_group_get(f.sa, &bc, &gi), 0);
	}
	/* Get by MGID of a missing group */
	memset(&r, 0, sizeof(r));
	r.mgid = g;
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_GET, CM(MGID), &r, NULL),
			 ST_NO_RECORDS);
	/* GetTable with no match: success with 0 records */
	free(fx_table(&f, 1, 1, CM(MGID), &r, &n, &st, &off));
	assert_int_equal(st, 0);
	assert_int_equal(n, 0);
	/* method GetMulti */
	assert_int_equal(fx_req(&f, 1, UMAD_SA_METHOD_GET_MULTI, CM(MGID), &r,
				&a), 0x000c);
	assert_int_equal(a.mad.method, UMAD_SA_METHOD_GET_MULTI_RESP);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pair1_create),
		cmocka_unit_test(pair2_insuf_comps),
		cmocka_unit_test(pair3_delete_absent),
		cmocka_unit_test(pair4_get_table),
		cmocka_unit_test(opensm_observed_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
