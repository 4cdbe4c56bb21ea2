/* The SA engine's protocol around MCMemberRecord: ClassPortInfo,
 * InformInfo and trap 66/67 Reports with retransmission, GetTable over
 * RMPP (100 records reassembled, timeouts, STOP), the service queue and
 * its overflow, and the answer (or silence) for every malformed MAD with
 * the state left exactly as it was. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_sa_fixture.h"
#include "util/bytes.h"

static uint16_t status_of(const struct fx_sent *s)
{
	return imc_get16(s->mad + 4);
}

/* ------------------------------------------------------------------ */

static void class_port_info(void **state)
{
	uint8_t buf[IMC_MAD_SIZE];
	const struct fx_sent *s;
	struct imc_sa_mad m;
	struct imc_class_port_info c;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	fx_mad(buf, UMAD_METHOD_GET, UMAD_ATTR_CLASS_PORT_INFO, 0x55, 0, 0,
	       NULL, 0);
	assert_int_equal(fx_recv(&f, 2, buf, sizeof(buf)), 0);
	assert_int_equal(f.nsent, 0);          /* answered from the loop */
	fx_run(&f);
	s = fx_answer(&f, 2, 0x55);
	assert_non_null(s);
	imc_sa_mad_unpack(&m, s->mad, IMC_MAD_SIZE);
	assert_int_equal(m.mad.method, UMAD_METHOD_GET_RESP);
	assert_int_equal(m.mad.status, 0);
	assert_int_equal(m.sa.attr_offset, 9);
	assert_int_equal(imc_class_port_info_unpack(&c, m.data,
						    sizeof(m.data)),
			 IMC_CLASS_PORT_INFO_SIZE);
	assert_int_equal(c.base_version, 1);
	assert_int_equal(c.class_version, 2);
	assert_int_equal(c.cap_mask, 1 << 9);          /* UD multicast */
	assert_int_equal(c.cap_mask2, 1 << 12);        /* SendOnlyFullMember */
	assert_int_equal(c.resp_time, 16);
	assert_int_equal(c.redirect_lid, 0);
	assert_int_equal(c.redirect_qp, 1);
	assert_int_equal(c.redirect_qkey, 0x80010000);
	assert_int_equal(c.trap_qkey, 0x80010000);
	/* Set(ClassPortInfo) is not served */
	fx_mad(buf, UMAD_METHOD_SET, UMAD_ATTR_CLASS_PORT_INFO, 0x56, 0, 0,
	       NULL, 0);
	assert_int_equal(fx_recv(&f, 2, buf, sizeof(buf)), 0);
	fx_run(&f);
	s = fx_answer(&f, 2, 0x56);
	assert_int_equal(status_of(s), 0x000c);
	assert_int_equal(s->mad[3], UMAD_METHOD_GET_RESP);
	fx_fini(&f);
}

static void inform(struct fx *f, uint16_t lid, uint8_t subscribe,
		   uint16_t trap, uint64_t tid, uint16_t *status,
		   uint8_t *echo)
{
	struct imc_inform_info ii;
	uint8_t rec[IMC_INFORM_INFO_SIZE], buf[IMC_MAD_SIZE];
	const struct fx_sent *s;

	memset(&ii, 0, sizeof(ii));
	ii.lid_range_begin = 0xffff;
	ii.is_generic = 1;
	ii.subscribe = subscribe;
	ii.type = 0xffff;
	ii.trap_number_or_device_id = trap;
	ii.producer_type_or_vendor_id = 0xffffff;
	assert_int_equal(imc_inform_info_pack(&ii, rec, sizeof(rec)),
			 IMC_INFORM_INFO_SIZE);
	fx_mad(buf, UMAD_METHOD_SET, UMAD_ATTR_INFORM_INFO, tid, 0, 0, rec,
	       sizeof(rec));
	assert_int_equal(fx_recv(f, lid, buf, sizeof(buf)), 0);
	fx_run(f);
	s = fx_answer(f, lid, tid);
	assert_non_null(s);
	assert_int_equal(s->mad[3], UMAD_METHOD_GET_RESP);
	*status = status_of(s);
	if (echo)
		memcpy(echo, s->mad + IMC_SA_DATA_OFFSET, IMC_INFORM_INFO_SIZE);
	if (!*status) {
		assert_memory_equal(s->mad + IMC_SA_DATA_OFFSET, rec,
				    IMC_INFORM_INFO_SIZE);
		assert_int_equal(imc_get16(s->mad + 44), 5);
	}
}

/* Reports sent to lid since index from: returns how many, the last in
 * *last. */
static size_t reports_to(const struct fx *f, uint16_t lid, size_t from,
			 const struct fx_sent **last)
{
	size_t n = 0;

	for (size_t i = from; i < f->nsent; i++)
		if (f->sent[i].to.dlid == lid &&
		    f->sent[i].mad[3] == UMAD_METHOD_REPORT) {
			n++;
			*last = &f->sent[i];
		}
	return n;
}

static void inform_info_and_reports(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1"), h = fx_mgid("ff12:1234::2");
	const struct fx_sent *rep = NULL;
	struct imc_notice n;
	struct imc_gid mg;
	struct imc_sa_stats st;
	uint8_t echo[IMC_INFORM_INFO_SIZE], buf[IMC_MAD_SIZE];
	uint16_t status;
	size_t mark;
	struct fx f;

	fx_init(&f);
	fx_pkeys(&f, 5, 0x8001, 0);
	fx_start(&f);
	inform(&f, 2, 1, 66, 0x100, &status, NULL);
	assert_int_equal(status, 0);
	inform(&f, 4, 1, 0xffff, 0x101, &status, NULL);
	assert_int_equal(status, 0);
	inform(&f, 5, 1, 66, 0x102, &status, NULL);   /* other partition */
	assert_int_equal(status, 0);
	assert_int_equal(fx_stats(&f).subscriptions, 3);

	mark = f.nsent;
	assert_int_equal(fx_join(&f, 3, &g, 3, 1, NULL), 0);
	assert_int_equal(reports_to(&f, 5, mark, &rep), 0);
	assert_int_equal(reports_to(&f, 4, mark, &rep), 1);
	assert_int_equal(reports_to(&f, 2, mark, &rep), 1);
	/* the Report: OpenSM's first trap TID, Notice of trap 66 */
	assert_int_equal(imc_get64(rep->mad + 8), 0x02dab001);
	assert_int_equal(imc_get16(rep->mad + 16), UMAD_ATTR_NOTICE);
	assert_int_equal(rep->mad[1], UMAD_CLASS_SUBN_ADM);
	assert_int_equal(rep->mad[2], 2);
	assert_int_equal(imc_get16(rep->mad + 44), 10);
	assert_int_equal(rep->to.dqpn, 1);
	assert_int_equal(rep->to.qkey, IMC_SA_QP1_QKEY);
	assert_int_equal(imc_notice_unpack(&n, rep->mad + IMC_SA_DATA_OFFSET,
					   IMC_NOTICE_SIZE), IMC_NOTICE_SIZE);
	assert_true(n.is_generic);
	assert_int_equal(n.type, IMC_NOTICE_TYPE_SM);
	assert_int_equal(n.producer_type_or_vendor_id, 4);
	assert_int_equal(n.trap_number_or_device_id, 66);
	assert_int_equal(n.issuer_lid, 1);
	assert_true(imc_gid_equal(&n.issuer_gid, &f.ports[1].p.gid));
	assert_int_equal(imc_notice_mcast_mgid(&n, &mg), 0);
	assert_true(imc_gid_equal(&mg, &g));

	/* LID 4 answers with ReportResp; LID 2 never does: resent every
	 * 200 ms, three times, then given up */
	memcpy(buf, rep->mad, IMC_MAD_SIZE);
	reports_to(&f, 4, mark, &rep);
	memcpy(buf, rep->mad, IMC_MAD_SIZE);
	buf[3] = UMAD_METHOD_REPORT_RESP;
	assert_int_equal(fx_recv(&f, 4, buf, sizeof(buf)), 0);
	assert_int_equal(fx_recv(&f, 4, buf, sizeof(buf)), -ENOMSG);
	fx_run_for(&f, 199 * IMC_NSEC_PER_MSEC);
	assert_int_equal(reports_to(&f, 2, mark, &rep), 1);
	fx_run_for(&f, IMC_NSEC_PER_MSEC);
	assert_int_equal(reports_to(&f, 2, mark, &rep), 2);
	assert_int_equal(rep->at, 200 * IMC_NSEC_PER_MSEC);
	assert_int_equal(imc_get64(rep->mad + 8), 0x02dab001);
	fx_run_for(&f, 2 * IMC_NSEC_PER_SEC);
	assert_int_equal(reports_to(&f, 2, mark, &rep), 4);
	assert_int_equal(rep->at, 600 * IMC_NSEC_PER_MSEC);
	assert_int_equal(reports_to(&f, 4, mark, &rep), 1);
	st = fx_stats(&f);
	assert_int_equal(st.reports_sent, 2);
	assert_int_equal(st.reports_resent, 3);
	assert_int_equal(st.reports_acked, 1);
	assert_int_equal(st.reports_failed, 1);
	assert_int_equal(st.reports_pending, 0);

	/* trap 67 goes to the "all traps" subscriber only */
	mark = f.nsent;
	assert_int_equal(fx_leave(&f, 3, &g, 3, 1, NULL), 0);
	assert_int_equal(reports_to(&f, 2, mark, &rep), 0);
	assert_int_equal(reports_to(&f, 4, mark, &rep), 1);
	imc_notice_unpack(&n, rep->mad + IMC_SA_DATA_OFFSET, IMC_NOTICE_SIZE);
	assert_int_equal(n.trap_number_or_device_id, 67);

	/* unsubscribe; then nothing more to LID 2 */
	inform(&f, 2, 0, 66, 0x103, &status, NULL);
	assert_int_equal(status, 0);
	mark = f.nsent;
	assert_int_equal(fx_join(&f, 3, &h, 3, 1, NULL), 0);
	assert_int_equal(reports_to(&f, 2, mark, &rep), 0);
	/* errors echo the request with Subscribe 0 (o13-13.1.1) */
	inform(&f, 2, 0, 66, 0x104, &status, echo);
	assert_int_equal(status, ST_REQ_INVALID);
	assert_int_equal(echo[23], 0);
	inform(&f, 2, 2, 66, 0x105, &status, echo);
	assert_int_equal(status, ST_REQ_INVALID);
	inform(&f, 40, 1, 66, 0x106, &status, echo);  /* unknown LID */
	assert_int_equal(status, ST_REQ_INVALID);
	/* only Set */
	fx_mad(buf, UMAD_METHOD_GET, UMAD_ATTR_INFORM_INFO, 0x107, 0, 0, NULL,
	       0);
	assert_int_equal(fx_recv(&f, 2, buf, sizeof(buf)), 0);
	fx_run(&f);
	assert_int_equal(status_of(fx_answer(&f, 2, 0x107)), 0x000c);
	/* a departed port loses its subscriptions */
	{
		struct imc_gid p4 = fx_gid(4);

		assert_int_equal(imc_sa_port_gone(f.sa, &p4), 0);
		assert_int_equal(fx_stats(&f).subscriptions, 1);
	}
	fx_run_for(&f, IMC_NSEC_PER_SEC);
	fx_fini(&f);
}

static void gettable_100_records_rmpp(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_mcmr q;
	uint16_t st, off;
	size_t n;
	uint8_t *p;
	struct fx f;

	fx_init(&f);
	for (uint16_t lid = 100; lid < 200; lid++)
		fx_port(&f, lid);
	fx_start(&f);
	/* joined in decreasing order: the answer still comes sorted */
	for (uint16_t lid = 199; lid >= 100; lid--)
		assert_int_equal(fx_join(&f, lid, &g, lid, lid % 2 ? 1 : 3,
					 NULL), 0);
	memset(&q, 0, sizeof(q));
	q.mgid = g;
	p = fx_table(&f, 1, 1, CM(MGID), &q, &n, &st, &off);
	assert_int_equal(st, 0);
	assert_int_equal(off, 7);
	assert_int_equal(n, 100);
	for (size_t i = 0; i < n; i++) {
		struct imc_mcmr r = fx_table_rec(p, i);
		struct imc_gid want = fx_gid((uint16_t)(100 + i));

		assert_true(imc_gid_equal(&r.port_gid, &want));
		assert_true(imc_gid_equal(&r.mgid, &g));
		assert_int_equal(r.join_state, (100 + i) % 2 ? 1 : 3);
		assert_int_equal(r.mlid, 0xc001);
	}
	free(p);
	/* 5600 bytes: 28 segments of 200 */
	assert_int_equal(fx_stats(&f).rmpp_segments, 28);
	assert_int_equal(fx_stats(&f).transfers_done, 1);
	assert_int_equal(fx_stats(&f).transfers_active, 0);
	fx_fini(&f);
}

static size_t segs_to(const struct fx *f, uint16_t lid, size_t from,
		      const struct fx_sent **last)
{
	size_t n = 0;

	for (size_t i = from; i < f->nsent; i++)
		if (f->sent[i].to.dlid == lid &&
		    f->sent[i].mad[3] == UMAD_SA_METHOD_GET_TABLE_RESP) {
			n++;
			*last = &f->sent[i];
		}
	return n;
}

static void rmpp_timeouts_and_stop(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	const struct fx_sent *s = NULL;
	struct imc_sa_mad m;
	struct imc_mcmr q;
	uint8_t buf[IMC_MAD_SIZE];
	struct imc_rmpp_receiver *rx;
	struct fx f;

	fx_init(&f);
	for (uint16_t lid = 100; lid < 110; lid++)
		fx_port(&f, lid);
	fx_start(&f);
	for (uint16_t lid = 100; lid < 110; lid++)
		assert_int_equal(fx_join(&f, lid, &g, lid, 1, NULL), 0);
	memset(&q, 0, sizeof(q));
	q.mgid = g;

	/* never ACKed: segment 1 again every 200 ms, then ABORT (TMR) */
	fx_mcmr_mad(buf, UMAD_SA_METHOD_GET_TABLE, 0x900, 1, CM(MGID), &q);
	assert_int_equal(fx_recv(&f, 1, buf, sizeof(buf)), 0);
	fx_run(&f);
	assert_int_equal(segs_to(&f, 1, 0, &s), 1);
	/* the same request again while it runs: not answered twice */
	assert_int_equal(fx_recv(&f, 1, buf, sizeof(buf)), 0);
	fx_run(&f);
	assert_int_equal(segs_to(&f, 1, 0, &s), 1);
	assert_int_equal(fx_stats(&f).drop_duplicate, 1);
	fx_run_for(&f, 2 * IMC_NSEC_PER_SEC);
	assert_int_equal(segs_to(&f, 1, 0, &s), 5);
	imc_sa_mad_unpack(&m, s->mad, IMC_MAD_SIZE);
	assert_int_equal(m.rmpp.type, IMC_RMPP_TYPE_ABORT);
	assert_int_equal(m.rmpp.status, IMC_RMPP_STATUS_TMR);
	assert_int_equal(fx_stats(&f).transfers_failed, 1);
	assert_int_equal(fx_stats(&f).transfers_active, 0);

	/* the requester STOPs: nothing more is sent */
	fx_mcmr_mad(buf, UMAD_SA_METHOD_GET_TABLE, 0x901, 1, CM(MGID), &q);
	assert_int_equal(fx_recv(&f, 2, buf, sizeof(buf)), 0);
	fx_run(&f);
	assert_int_equal(segs_to(&f, 2, 0, &s), 1);
	assert_int_equal(imc_rmpp_receiver_create(4096, 1, &rx), 0);
	assert_true(imc_rmpp_receiver_recv(rx, s->mad, IMC_MAD_SIZE, NULL) >=
		    0);
	assert_int_equal(imc_rmpp_receiver_abort_pack(rx, IMC_RMPP_STATUS_RESX,
						      buf, sizeof(buf)),
			 IMC_MAD_SIZE);
	imc_rmpp_receiver_destroy(rx);
	assert_int_equal(fx_recv(&f, 2, buf, sizeof(buf)), 0);
	fx_run_for(&f, 2 * IMC_NSEC_PER_SEC);
	assert_int_equal(segs_to(&f, 2, 0, &s), 1);
	assert_int_equal(fx_stats(&f).transfers_failed, 2);
	assert_int_equal(fx_stats(&f).transfers_active, 0);
	fx_fini(&f);
}

static void service_queue(void **state)
{
	uint8_t buf[IMC_MAD_SIZE];
	struct imc_sa_stats st;
	struct fx f;
	int ok = 0, full = 0;

	fx_init(&f);
	f.cfg.service_rate = 10;                   /* one per 100 ms */
	f.cfg.queue_max = 4;
	fx_start(&f);
	for (int i = 0; i < 10; i++) {
		int rc;

		fx_mad(buf, UMAD_METHOD_GET, UMAD_ATTR_CLASS_PORT_INFO,
		       0x200 + (uint64_t)i, 0, 0, NULL, 0);
		rc = fx_recv(&f, 2, buf, sizeof(buf));
		ok += rc == 0;
		full += rc == -ENOBUFS;
	}
	assert_int_equal(ok, 4);
	assert_int_equal(full, 6);
	st = fx_stats(&f);
	assert_int_equal(st.drop_queue_full, 6);
	assert_int_equal(st.queue_len, 4);
	assert_int_equal(st.queue_max_seen, 4);
	assert_int_equal(imc_loop_run(f.loop), 0);
	assert_int_equal(f.nsent, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(f.sent[i].at, (imc_time_t)i * 100 *
					       IMC_NSEC_PER_MSEC);
		assert_int_equal(imc_get64(f.sent[i].mad + 8), 0x200 + i);
	}
	assert_int_equal(fx_stats(&f).queue_len, 0);
	/* an idle SA saves no credit: the next is served on arrival, the
	 * one after 100 ms later */
	fx_run_for(&f, IMC_NSEC_PER_SEC);
	fx_recv(&f, 2, buf, sizeof(buf));
	fx_recv(&f, 2, buf, sizeof(buf));
	fx_run(&f);
	assert_int_equal(f.nsent, 5);
	fx_run_for(&f, 100 * IMC_NSEC_PER_MSEC);
	assert_int_equal(f.nsent, 6);
	assert_int_equal(f.sent[5].at - f.sent[4].at, 100 * IMC_NSEC_PER_MSEC);
	fx_fini(&f);
}

/* A valid join of port 2 to ff12:1234::9 (which would change the state),
 * as a raw MAD to spoil. */
static void join_mad(uint8_t *buf, uint64_t tid)
{
	struct imc_gid g = fx_mgid("ff12:1234::9");
	struct imc_mcmr r = fx_create_rec(&g, 2, 1);

	fx_mcmr_mad(buf, UMAD_METHOD_SET, tid, 0, CREATE_MASK, &r);
}

struct bad {
	const char *what;
	void (*spoil)(uint8_t *m);
	size_t len;
	int rc;                 /* of imc_sa_recv() */
	int status;             /* of the answer, -1: none */
	uint8_t method;         /* of the answer */
};

static void base2(uint8_t *m) { m[0] = 2; }
static void class1(uint8_t *m) { m[2] = 1; }
static void meth4(uint8_t *m) { m[3] = 0x04; }
static void multi(uint8_t *m) { m[3] = UMAD_SA_METHOD_GET_MULTI; }
static void report(uint8_t *m) { m[3] = UMAD_METHOD_REPORT; }
static void sendm(uint8_t *m) { m[3] = UMAD_METHOD_SEND; }
static void trapm(uint8_t *m) { m[3] = UMAD_METHOD_TRAP; }
static void resp(uint8_t *m) { m[3] = UMAD_METHOD_GET_RESP; }
static void represp(uint8_t *m) { m[3] = UMAD_METHOD_REPORT_RESP; }
static void path(uint8_t *m) { imc_put16(m + 16, UMAD_SA_ATTR_PATH_REC); }
static void attr9999(uint8_t *m) { imc_put16(m + 16, 0x9999); }
static void notice(uint8_t *m) { imc_put16(m + 16, UMAD_ATTR_NOTICE); }
static void offset3(uint8_t *m) { imc_put16(m + 44, 3); }
static void smkey(uint8_t *m) { imc_put64(m + 36, 0x1234); }
static void smclass(uint8_t *m) { m[1] = 0x01; }
static void ack(uint8_t *m) { m[25] = IMC_RMPP_TYPE_ACK; m[26] = 1; }
static void none(uint8_t *m) { (void)m; }

static void malformed_mads(void **state)
{
	static const struct bad cases[] = {
		{ "base version 2", base2, 256, 0, 0x0004, 0x81 },
		{ "class version 1", class1, 256, 0, 0x0004, 0x81 },
		{ "method 0x04", meth4, 256, 0, 0x0008, 0x84 },
		{ "GetMulti", multi, 256, 0, 0x000c, 0x94 },
		{ "Report to the SA", report, 256, 0, 0x0008, 0x86 },
		{ "PathRecord", path, 256, 0, 0x000c, 0x81 },
		{ "attribute 0x9999", attr9999, 256, 0, 0x000c, 0x81 },
		{ "Set(Notice)", notice, 256, 0, 0x000c, 0x81 },
		{ "AttributeOffset 3", offset3, 256, 0, 0x001c, 0x81 },
		{ "Send", sendm, 256, 0, -1, 0 },
		{ "Trap", trapm, 256, 0, -1, 0 },
		{ "SM_Key neither 0 nor ours", smkey, 256, 0, -1, 0 },
		{ "a GetResp", resp, 256, -ENOMSG, -1, 0 },
		{ "a ReportResp for no Report", represp, 256, -ENOMSG, -1, 0 },
		{ "an RMPP ACK for no transfer", ack, 256, -ENOMSG, -1, 0 },
		{ "SMP class", smclass, 256, -EPROTONOSUPPORT, -1, 0 },
		{ "255 bytes", none, 255, -EMSGSIZE, -1, 0 },
		{ "24 bytes", none, 24, -EMSGSIZE, -1, 0 },
		{ "0 bytes", none, 0, -EMSGSIZE, -1, 0 },
	};
	struct imc_gid g = fx_mgid("ff12:1234::1");
	char *before, *after;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 3, &g, 3, 1, NULL), 0);
	before = fx_dump(&f);
	for (size_t i = 0; i < IMC_ARRAY_SIZE(cases); i++) {
		uint8_t buf[IMC_MAD_SIZE + 1], orig[IMC_MAD_SIZE];
		uint64_t tid = 0x700 + i;
		size_t mark = f.nsent;
		const struct fx_sent *s;

		join_mad(buf, tid);
		cases[i].spoil(buf);
		memcpy(orig, buf, IMC_MAD_SIZE);
		print_message("%s\n", cases[i].what);
		assert_int_equal(fx_recv(&f, 2, buf, cases[i].len),
				 cases[i].rc);
		fx_run(&f);
		s = fx_answer(&f, 2, tid);
		if (cases[i].status < 0) {
			assert_int_equal(f.nsent, mark);
		} else {
			assert_int_equal(f.nsent, mark + 1);
			assert_non_null(s);
			assert_int_equal(status_of(s), cases[i].status);
			assert_int_equal(s->mad[3], cases[i].method);
			/* the request's data comes back */
			assert_memory_equal(s->mad + IMC_SA_DATA_OFFSET,
					    orig + IMC_SA_DATA_OFFSET,
					    IMC_SA_DATA_SIZE);
			assert_int_equal(imc_get64(s->mad + 36), 0);
		}
		after = fx_dump(&f);
		assert_string_equal(before, after);
		free(after);
	}
	{
		struct imc_sa_stats st = fx_stats(&f);

		assert_int_equal(st.by_mad_status[1], 2);
		assert_int_equal(st.by_mad_status[2], 2);
		assert_int_equal(st.by_mad_status[3], 4);
		assert_int_equal(st.by_mad_status[7], 1);
		assert_int_equal(st.drop_no_answer, 2);
		assert_int_equal(st.drop_sm_key, 1);
		assert_int_equal(st.drop_response, 3);
		assert_int_equal(st.drop_malformed, 4);
	}
	assert_int_equal(f.nchg, 1);
	free(before);
	fx_fini(&f);
}

static void reserved_bits_ignored(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_mcmr r = fx_create_rec(&g, 2, 1);
	struct imc_sa_mad a;
	struct imc_mcmr e;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	r.resv49 = 0x7f;
	memset(r.resv, 0xee, sizeof(r.resv));
	/* o15-0.2.4: "ProxyJoin and Reserved, which are ignored by SA" */
	r.proxy_join = true;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, &a),
			 0);
	e = fx_rec(&a);
	assert_false(imc_mcmr_reserved_set(&e));
	assert_false(e.proxy_join);
	assert_int_equal(e.join_state, 1);
	{
		struct imc_sa_group_info gi;

		assert_int_equal(imc_sa_group_get(f.sa, &g, &gi), 0);
		assert_int_equal(gi.members, 1);
	}
	fx_fini(&f);
}

static void grh_answer(void **state)
{
	uint8_t buf[IMC_MAD_SIZE];
	struct imc_sa_src src = fx_src(2);
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	src.has_grh = true;
	src.sgid = fx_gid(2);
	src.dgid = fx_gid(1);
	src.flow_label = 0x12345;
	src.tclass = 7;
	src.hop_limit = 64;
	src.sl = 3;
	src.pkey = 0x7fff;
	src.sqpn = 1;
	fx_mad(buf, UMAD_METHOD_GET, UMAD_ATTR_CLASS_PORT_INFO, 0x42, 0, 0,
	       NULL, 0);
	assert_int_equal(imc_sa_recv(f.sa, &src, buf, sizeof(buf)), 0);
	fx_run(&f);
	assert_int_equal(f.nsent, 1);
	assert_int_equal(f.sent[0].to.dlid, 2);
	assert_true(f.sent[0].to.has_grh);
	assert_true(imc_gid_equal(&f.sent[0].to.dgid, &src.sgid));
	assert_true(imc_gid_equal(&f.sent[0].to.sgid, &src.dgid));
	assert_int_equal(f.sent[0].to.flow_label, 0x12345);
	assert_int_equal(f.sent[0].to.tclass, 7);
	assert_int_equal(f.sent[0].to.sl, 3);
	assert_int_equal(f.sent[0].to.pkey, 0x7fff);
	fx_fini(&f);
}

static void create_rejects_bad_config(void **state)
{
	struct imc_sa_config cfg;
	struct imc_sa_bcast b[2];
	struct imc_loop *loop;
	struct imc_sa *sa = NULL;

	assert_int_equal(imc_loop_create_virtual(0, &loop), 0);
	imc_sa_config_init(&cfg);
	cfg.mlid_first = 0xbfff;
	assert_int_equal(imc_sa_create(loop, &cfg, &fx_ops, NULL, &sa),
			 -EINVAL);
	imc_sa_config_init(&cfg);
	cfg.queue_max = 0;
	assert_int_equal(imc_sa_create(loop, &cfg, &fx_ops, NULL, &sa),
			 -EINVAL);
	/* two broadcast groups but one MLID */
	imc_sa_config_init(&cfg);
	memset(b, 0, sizeof(b));
	b[0].pkey = 0x7fff;
	b[1].pkey = 0x0001;
	b[0].mtu = b[1].mtu = 4;
	b[0].rate = b[1].rate = 3;
	cfg.bcast = b;
	cfg.n_bcast = 2;
	cfg.mlid_last = 0xc000;
	assert_int_equal(imc_sa_create(loop, &cfg, &fx_ops, NULL, &sa),
			 -ENOSPC);
	/* the same partition twice */
	b[1].pkey = 0xffff;
	cfg.mlid_last = 0xc001;
	assert_int_equal(imc_sa_create(loop, &cfg, &fx_ops, NULL, &sa),
			 -EINVAL);
	b[1].pkey = 0x0001;
	assert_int_equal(imc_sa_create(loop, &cfg, &fx_ops, NULL, &sa), 0);
	{
		struct imc_sa_stats st;

		imc_sa_get_stats(sa, &st);
		assert_int_equal(st.groups, 2);
		assert_int_equal(st.mlids_in_use, 2);
		assert_int_equal(st.mlids_total, 2);
	}
	imc_sa_destroy(sa);
	assert_int_equal(imc_loop_destroy(loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(class_port_info),
		cmocka_unit_test(inform_info_and_reports),
		cmocka_unit_test(gettable_100_records_rmpp),
		cmocka_unit_test(rmpp_timeouts_and_stop),
		cmocka_unit_test(service_queue),
		cmocka_unit_test(malformed_mads),
		cmocka_unit_test(reserved_bits_ignored),
		cmocka_unit_test(grh_answer),
		cmocka_unit_test(create_rejects_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
