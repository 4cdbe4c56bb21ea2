/* SA client on a virtual loop with a fake transport: TIDs, retries and
 * backoff, timeouts, cancel, duplicates, the window, flush, destroy from a
 * callback, BUSY, RMPP reassembly, ibsim's cut GetTableResp (a real
 * OpenSM capture), Reports, bad input, and a seeded random sweep in which
 * every query completes exactly once. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/rmpp.h"
#include "ibmcast/rng.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_client.h"
#include "util/bytes.h"

#define MS IMC_NSEC_PER_MSEC
#define T0 (1000 * MS)
#define MAXSENT 4096
#define MAXQ 2048

/* ---- fake transport: remembers what was sent and when ---- */

struct sent {
	imc_time_t at;
	uint8_t mad[IMC_MAD_SIZE];
};

static struct imc_loop *loop;
static struct imc_sa_client *cl;
static struct sent *sent;
static size_t nsent;
static int send_result;
static bool in_api;

static int fake_send(void *ctx, const uint8_t *mad, size_t len)
{
	assert_ptr_equal(ctx, &nsent);
	assert_int_equal(len, IMC_MAD_SIZE);
	assert_true(nsent < MAXSENT);
	sent[nsent].at = imc_loop_now(loop);
	memcpy(sent[nsent].mad, mad, len);
	nsent++;
	return send_result;
}

/* ---- completion log ---- */

struct done {
	int calls;
	int err;
	uint16_t status;
	uint8_t method;
	size_t count, len, rec_size;
	bool truncated;
	unsigned attempts;
	imc_time_t at;
	uint8_t data[1024];
};

static struct done done[MAXQ];
static struct imc_sa_query *handle[MAXQ];

static void on_done(void *arg, int err, const struct imc_sa_answer *a)
{
	struct done *d = arg;

	/* Rule 1: never from inside an API call. */
	assert_false(in_api);
	d->calls++;
	d->err = err;
	d->at = imc_loop_now(loop);
	if (err) {
		assert_null(a);
		return;
	}
	assert_non_null(a);
	d->status = a->status;
	d->method = a->method;
	d->count = a->count;
	d->len = a->len;
	d->rec_size = a->rec_size;
	d->truncated = a->truncated;
	d->attempts = a->attempts;
	assert_true(a->len <= sizeof(d->data));
	memcpy(d->data, a->data, a->len);
}

static struct imc_sa_client_config config(void)
{
	struct imc_sa_client_config cfg;

	imc_sa_client_config_init(&cfg);
	cfg.timeout = 100 * MS;
	cfg.max_timeout = 1000 * MS;
	cfg.retries = 3;
	cfg.window = 32;
	cfg.seed = 42;
	return cfg;
}

static void make_client(const struct imc_sa_client_config *cfg)
{
	struct imc_sa_transport tr = { fake_send, &nsent };

	assert_int_equal(imc_sa_client_create(loop, &tr, cfg, &cl), 0);
}

static int setup(void **state)
{
	struct imc_sa_client_config cfg = config();

	nsent = 0;
	send_result = 0;
	memset(done, 0, sizeof(done));
	memset(handle, 0, sizeof(handle));
	sent = calloc(MAXSENT, sizeof(*sent));
	if (!sent || imc_loop_create_virtual(T0, &loop) < 0)
		return -1;
	make_client(&cfg);
	return 0;
}

/* Every test ends with no query alive and nothing armed. */
static int teardown(void **state)
{
	struct imc_sa_client_stats st;
	size_t left;

	if (cl) {
		imc_sa_client_get_stats(cl, &st);
		if (st.alive)
			fprintf(stderr, "%zu queries alive\n", st.alive);
		imc_sa_client_destroy(cl);
		cl = NULL;
	}
	left = imc_loop_destroy(loop);
	free(sent);
	if (left)
		fprintf(stderr, "%zu timers left armed\n", left);
	return left ? -1 : 0;
}

static void check_none_alive(void)
{
	struct imc_sa_client_stats st;

	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.alive, 0);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.in_flight, 0);
}

/* ---- request and answer builders ---- */

static const struct imc_gid mgid_a = { { 0xff, 0x12, 0x12, 0x34, 0, 0, 0, 0,
					 0, 0, 0, 0, 0, 0, 0, 0x01 } };

static struct imc_sa_mad mcmr_req(uint8_t method)
{
	struct imc_sa_mad m;
	struct imc_mcmr r;

	memset(&m, 0, sizeof(m));
	memset(&r, 0, sizeof(r));
	m.mad.method = method;
	m.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	/* the client must overwrite these */
	m.mad.base_version = 9;
	m.mad.mgmt_class = 0x81;
	m.mad.class_version = 7;
	m.mad.tid = 0x1122334455667788ull;
	m.rmpp.version = 1;
	m.rmpp.flags = IMC_RMPP_FLAG_ACTIVE;
	m.sa.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID;
	r.mgid = mgid_a;
	r.qkey = 0x0b1b;
	assert_int_equal(imc_mcmr_pack(&r, m.data, sizeof(m.data)),
			 IMC_MCMR_SIZE);
	return m;
}

static int start(uint8_t method, struct done *d, struct imc_sa_query **h)
{
	struct imc_sa_mad m = mcmr_req(method);
	int r;

	in_api = true;
	r = imc_sa_query_start(cl, &m, on_done, d, h);
	in_api = false;
	return r;
}

static uint64_t tid_of(const uint8_t *mad)
{
	return imc_get64(mad + 8);
}

/* The answer to sent MAD i: the request with the response method, the
 * given status, and the upper half of the TID rewritten as in transit. */
static void answer_of(size_t i, uint8_t method, uint16_t status,
		      uint8_t *out)
{
	memcpy(out, sent[i].mad, IMC_MAD_SIZE);
	out[3] = method;
	imc_put16(out + 4, status);
	imc_put32(out + 8, 0xdead0000u | (uint32_t)i);
	imc_put16(out + 44, IMC_MCMR_SIZE / 8);
}

static int recv_mad(const uint8_t *mad, size_t len)
{
	int r;

	in_api = true;
	r = imc_sa_client_recv(cl, mad, len);
	in_api = false;
	return r;
}

static int recv_answer(size_t i, uint8_t method, uint16_t status)
{
	uint8_t a[IMC_MAD_SIZE];

	answer_of(i, method, status, a);
	return recv_mad(a, sizeof(a));
}

static void run_all(void)
{
	assert_int_equal(imc_loop_run(loop), 0);
}

/* ---- tests ---- */

static void test_get_answer(void **state)
{
	struct imc_sa_mad m;
	struct imc_mcmr r;

	assert_int_equal(start(UMAD_METHOD_GET, &done[0], NULL), 0);
	assert_int_equal(nsent, 1);
	assert_int_equal(imc_sa_mad_unpack(&m, sent[0].mad, IMC_MAD_SIZE),
			 IMC_MAD_SIZE);
	assert_int_equal(m.mad.base_version, 1);
	assert_int_equal(m.mad.mgmt_class, UMAD_CLASS_SUBN_ADM);
	assert_int_equal(m.mad.class_version, 2);
	assert_int_equal(m.mad.method, UMAD_METHOD_GET);
	assert_int_equal(m.mad.attr_id, UMAD_SA_ATTR_MCMEMBER_REC);
	assert_int_equal(m.mad.tid >> 32, 0);
	assert_int_not_equal(m.mad.tid, 0);
	assert_int_equal(m.rmpp.version, 0);
	assert_int_equal(m.rmpp.flags, 0);
	assert_int_equal(m.sa.comp_mask, UMAD_SA_MCM_COMP_MASK_MGID);
	assert_int_equal(sent[0].at, T0);

	/* The SA status is passed as is: NO_RECORDS is an answer. */
	assert_int_equal(recv_answer(0, UMAD_METHOD_GET_RESP,
				     imc_sa_status(UMAD_SA_STATUS_NO_RECORDS)),
			 0);
	assert_int_equal(done[0].calls, 0);
	run_all();
	assert_int_equal(done[0].calls, 1);
	assert_int_equal(done[0].err, 0);
	assert_int_equal(done[0].status, 0x0300);
	assert_int_equal(done[0].method, UMAD_METHOD_GET_RESP);
	assert_int_equal(done[0].count, 1);
	assert_int_equal(done[0].len, IMC_SA_DATA_SIZE);
	assert_int_equal(done[0].rec_size, IMC_MCMR_SIZE);
	assert_int_equal(done[0].attempts, 1);
	assert_int_equal(done[0].at, T0);
	assert_int_equal(imc_mcmr_unpack(&r, done[0].data, done[0].len),
			 IMC_MCMR_SIZE);
	assert_true(imc_gid_equal(&r.mgid, &mgid_a));
	assert_int_equal(r.qkey, 0x0b1b);
	check_none_alive();
}

static void test_tid_low_match(void **state)
{
	uint8_t a[IMC_MAD_SIZE];
	struct imc_sa_client_stats st;
	uint64_t t0, t1;

	assert_int_equal(start(UMAD_METHOD_GET, &done[0], &handle[0]), 0);
	assert_int_equal(start(UMAD_METHOD_SET, &done[1], &handle[1]), 0);
	t0 = tid_of(sent[0].mad);
	t1 = tid_of(sent[1].mad);
	assert_int_not_equal((uint32_t)t0, (uint32_t)t1);
	assert_int_equal(imc_sa_query_tid(handle[0]), t0);
	assert_int_equal(imc_sa_query_tid(handle[1]), t1);

	/* A TID whose low half matches nobody: ignored. */
	answer_of(0, UMAD_METHOD_GET_RESP, 0, a);
	imc_put32(a + 12, (uint32_t)t0 + 1000);
	assert_int_equal(recv_mad(a, sizeof(a)), -ESRCH);
	/* The upper half rewritten (answer_of always does): matched. */
	assert_int_equal(recv_answer(1, UMAD_METHOD_GET_RESP, 0), 0);
	assert_int_equal(recv_answer(0, UMAD_METHOD_GET_RESP, 0), 0);
	run_all();
	assert_int_equal(done[0].calls, 1);
	assert_int_equal(done[1].calls, 1);
	assert_int_equal(done[0].err, 0);
	assert_int_equal(done[1].err, 0);
	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.stale, 1);
	assert_int_equal(st.answered, 2);
	check_none_alive();
}

static void test_duplicate_ignored(void **state)
{
	struct imc_sa_client_stats st;

	assert_int_equal(start(UMAD_METHOD_GET, &done[0], NULL), 0);
	assert_int_equal(recv_answer(0, UMAD_METHOD_GET_RESP, 0), 0);
	/* Same answer again, before and after the callback ran. */
	assert_int_equal(recv_answer(0, UMAD_METHOD_GET_RESP, 0), -ESRCH);
	run_all();
	assert_int_equal(recv_answer(0, UMAD_METHOD_GET_RESP, 0), -ESRCH);
	run_all();
	assert_int_equal(done[0].calls, 1);
	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.stale, 2);
	assert_int_equal(nsent, 1);
	check_none_alive();
}

/* Attempt k waits timeout * 2^k, capped, plus up to 25% jitter. */
static void check_backoff(imc_time_t timeout, imc_time_t cap)
{
	for (size_t k = 1; k < nsent; k++) {
		imc_time_t base = timeout << (k - 1);
		imc_time_t gap = sent[k].at - sent[k - 1].at;

		if (base > cap)
			base = cap;
		assert_true(gap >= base);
		assert_true(gap <= base + base / 4);
		/* A retry is the same MAD, same TID. */
		assert_memory_equal(sent[k].mad, sent[0].mad, IMC_MAD_SIZE);
	}
}

static void test_timeout_retries(void **state)
{
	struct imc_sa_client_stats st;
	imc_time_t last;

	assert_int_equal(start(UMAD_METHOD_GET, &done[0], NULL), 0);
	run_all();
	assert_int_equal(nsent, 4); /* 1 + 3 retries */
	check_backoff(100 * MS, 1000 * MS);
	assert_int_equal(done[0].calls, 1);
	assert_int_equal(done[0].err, -ETIMEDOUT);
	/* The last attempt waited 800 ms and up to 25% more. */
	last = done[0].at - sent[3].at;
	assert_true(last >= 800 * MS && last <= 1000 * MS);
	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.resent, 3);
	assert_int_equal(st.timed_out, 1);
	/* An answer after the timeout finds nobody. */
	assert_int_equal(recv_answer(0, UMAD_METHOD_GET_RESP, 0), -ESRCH);
	check_none_alive();
}

static void test_backoff_cap_and_seed(void **state)
{
	struct imc_sa_client_config cfg = config();
	imc_time_t first[8];
	size_t n;

	imc_sa_client_destroy(cl);
	cfg.retries = 6;
	cfg.max_timeout = 300 * MS;
	make_client(&cfg);
	assert_int_equal(start(UMAD_METHOD_GET, &done[0], NULL), 0);
	run_all();
	assert_int_equal(nsent, 7);
	check_backoff(100 * MS, 300 * MS);
	assert_int_equal(done[0].err, -ETIMEDOUT);
	n = nsent;
	for (size_t i = 0; i < n; i++)
		first[i] = sent[i].at - sent[0].at;

	/* The same seed gives the same jitter. */
	imc_sa_client_destroy(cl);
	make_client(&cfg);
	nsent = 0;
	assert_int_equal(start(UMAD_METHOD_GET, &done[1], NULL), 0);
	run_all();
	assert_int_equal(nsent, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sent[i].at - sent[0].at, first[i]);

	/* Another seed does not (with overwhelming probability). */
	imc_sa_client_destroy(cl);
	cfg.seed = 43;
	make_client(&cfg);
	nsent = 0;
	assert_int_equal(start(UMAD_METHOD_GET, &done[2], NULL), 0);
	run_all();
	assert_int_equal(nsent, n);
	bool differ = false;
	for (size_t i = 1; i < n; i++)
		differ |= sent[i].at - sent[0].at != first[i];
	assert_true(differ);
	check_none_alive();
}

static void test_answer_to_retry(void **state)
{
	assert_int_equal(start(UMAD_METHOD_SET, &done[0], NULL), 0);
	/* First attempt lost: run to the first retry only. */
	assert_int_equal(imc_loop_run_until(loop, T0 + 130 * MS), 0);
	assert_int_equal(nsent, 2);
	assert_int_equal(recv_answer(1, UMAD_METHOD_GET_RESP, 0), 0);
	run_all();
	assert_int_equal(done[0].calls, 1);
	assert_int_equal(done[0].err, 0);
	assert_int_equal(done[0].attempts, 2);
	assert_int_equal(nsent, 2);
	check_none_alive();
}

static void test_zero_retries(void **state)
{
	struct imc_sa_client_config cfg = config();

	imc_sa_client_destroy(cl);
	cfg.retries = 0;
	make_client(&cfg);
	assert_int_equal(start(UMAD_METHOD_GET, &done[0], NULL), 0);
	run_all();
	assert_int_equal(nsent, 1);
	assert_int_equal(done[0].err, -ETIMEDOUT);
	assert_true(done[0].at - T0 >= 100 * MS);
	assert_true(done[0].at - T0 <= 125 * MS);
	check_none_alive();
}

static int cancel_result;

static void cancel_self(void *arg, int err, const struct imc_sa_answer *a)
{
	struct done *d = arg;

	d->calls++;
	cancel_result = imc_sa_query_cancel(handle[d - done]);
}

static void test_cancel(void **state)
{
	struct imc_sa_client_stats st;
	struct imc_sa_mad m = mcmr_req(UMAD_METHOD_GET);

	/* In flight. */
	assert_int_equal(start(UMAD_METHOD_GET, &done[0], &handle[0]), 0);
	assert_int_equal(imc_sa_query_cancel(handle[0]), 0);
	assert_int_equal(recv_answer(0, UMAD_METHOD_GET_RESP, 0), -ESRCH);
	/* Answered, callback pending. */
	assert_int_equal(start(UMAD_METHOD_GET, &done[1], &handle[1]), 0);
	assert_int_equal(recv_answer(1, UMAD_METHOD_GET_RESP, 0), 0);
	assert_int_equal(imc_sa_query_cancel(handle[1]), 0);
	/* Completed by flush, callback pending. */
	assert_int_equal(start(UMAD_METHOD_GET, &done[2], &handle[2]), 0);
	imc_sa_client_flush(cl);
	assert_int_equal(imc_sa_query_cancel(handle[2]), 0);
	run_all();
	assert_int_equal(done[0].calls + done[1].calls + done[2].calls, 0);
	assert_int_equal(nsent, 3); /* no retries of cancelled queries */

	/* Cancel from its own callback: refused, freed afterwards. */
	assert_int_equal(imc_sa_query_start(cl, &m, cancel_self, &done[3],
					    &handle[3]), 0);
	assert_int_equal(recv_answer(3, UMAD_METHOD_GET_RESP, 0), 0);
	run_all();
	assert_int_equal(done[3].calls, 1);
	assert_int_equal(cancel_result, -EALREADY);
	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.canceled, 3);
	check_none_alive();
}

static void test_window(void **state)
{
	struct imc_sa_client_config cfg = config();
	struct imc_sa_client_stats st;

	imc_sa_client_destroy(cl);
	cfg.window = 4;
	make_client(&cfg);
	for (int i = 0; i < 10; i++)
		assert_int_equal(start(UMAD_METHOD_GET, &done[i], &handle[i]),
				 0);
	assert_int_equal(nsent, 4);
	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.in_flight, 4);
	assert_int_equal(st.queued, 6);
	assert_int_equal(imc_sa_query_tid(handle[4]), 0);

	/* An answer frees a slot: the next query goes, in start order. */
	assert_int_equal(recv_answer(2, UMAD_METHOD_GET_RESP, 0), 0);
	assert_int_equal(nsent, 5);
	assert_int_equal(tid_of(sent[4].mad), imc_sa_query_tid(handle[4]));
	/* Cancelling a flying one frees a slot too; a queued one does not
	 * send anything. */
	assert_int_equal(imc_sa_query_cancel(handle[9]), 0);
	assert_int_equal(nsent, 5);
	assert_int_equal(imc_sa_query_cancel(handle[0]), 0);
	assert_int_equal(nsent, 6);
	assert_int_equal(tid_of(sent[5].mad), imc_sa_query_tid(handle[5]));

	/* Answer everything as it is sent. */
	for (size_t i = 0; i < nsent; i++) {
		if (i == 0 || i == 2)
			continue;
		assert_int_equal(recv_answer(i, UMAD_METHOD_GET_RESP, 0), 0);
	}
	run_all();
	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.max_in_flight, 4);
	/* Every query once but the one cancelled while queued. */
	assert_int_equal(nsent, 9);
	for (int i = 1; i < 9; i++)
		assert_int_equal(done[i].calls, 1);
	assert_int_equal(done[0].calls, 0);
	assert_int_equal(done[9].calls, 0);
	check_none_alive();
}

static void test_flush(void **state)
{
	struct imc_sa_client_config cfg = config();

	imc_sa_client_destroy(cl);
	cfg.window = 2;
	make_client(&cfg);
	for (int i = 0; i < 5; i++)
		assert_int_equal(start(UMAD_METHOD_GET, &done[i], NULL), 0);
	assert_int_equal(nsent, 2);
	in_api = true;
	imc_sa_client_flush(cl);
	in_api = false;
	/* Nothing sent to be flushed, nothing called back inside flush. */
	assert_int_equal(nsent, 2);
	run_all();
	for (int i = 0; i < 5; i++) {
		assert_int_equal(done[i].calls, 1);
		assert_int_equal(done[i].err, -ECANCELED);
		assert_int_equal(done[i].at, T0);
	}
	check_none_alive();
}

static void destroy_in_cb(void *arg, int err, const struct imc_sa_answer *a)
{
	struct done *d = arg;

	d->calls++;
	imc_sa_client_destroy(cl);
	cl = NULL;
}

static void test_destroy(void **state)
{
	struct imc_sa_mad m = mcmr_req(UMAD_METHOD_GET);

	/* Destroy with queries pending: no callback, nothing armed. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(start(UMAD_METHOD_GET, &done[i], NULL), 0);
	assert_int_equal(recv_answer(0, UMAD_METHOD_GET_RESP, 0), 0);
	imc_sa_client_destroy(cl);
	cl = NULL;
	run_all();
	for (int i = 0; i < 3; i++)
		assert_int_equal(done[i].calls, 0);

	/* Destroy from a callback while others are answered too. */
	make_client(NULL);
	nsent = 0;
	assert_int_equal(imc_sa_query_start(cl, &m, destroy_in_cb, &done[4],
					    NULL), 0);
	assert_int_equal(start(UMAD_METHOD_GET, &done[5], NULL), 0);
	assert_int_equal(start(UMAD_METHOD_GET, &done[6], NULL), 0);
	assert_int_equal(recv_answer(0, UMAD_METHOD_GET_RESP, 0), 0);
	assert_int_equal(recv_answer(1, UMAD_METHOD_GET_RESP, 0), 0);
	run_all();
	assert_int_equal(done[4].calls, 1);
	assert_int_equal(done[5].calls, 0);
	assert_int_equal(done[6].calls, 0);
	assert_null(cl);
}

static void test_busy(void **state)
{
	struct imc_sa_client_stats st;
	struct imc_sa_client_config cfg = config();

	/* BUSY, then the retry is answered. */
	assert_int_equal(start(UMAD_METHOD_SET, &done[0], NULL), 0);
	assert_int_equal(recv_answer(0, UMAD_METHOD_GET_RESP, UMAD_STATUS_BUSY),
			 0);
	assert_int_equal(imc_loop_run_until(loop, T0 + 10 * MS), 0);
	assert_int_equal(done[0].calls, 0);
	assert_int_equal(imc_loop_run_until(loop, T0 + 130 * MS), 0);
	assert_int_equal(nsent, 2);
	assert_true(sent[1].at - T0 >= 100 * MS);
	assert_int_equal(recv_answer(1, UMAD_METHOD_GET_RESP, 0), 0);
	run_all();
	assert_int_equal(done[0].calls, 1);
	assert_int_equal(done[0].status, 0);
	assert_int_equal(done[0].attempts, 2);

	/* BUSY to the last attempt is delivered as is. */
	imc_sa_client_destroy(cl);
	cfg.retries = 1;
	make_client(&cfg);
	nsent = 0;
	assert_int_equal(start(UMAD_METHOD_SET, &done[1], NULL), 0);
	assert_int_equal(recv_answer(0, UMAD_METHOD_GET_RESP, UMAD_STATUS_BUSY),
			 0);
	assert_int_equal(imc_loop_run_until(loop, imc_loop_now(loop) +
						  130 * MS), 0);
	assert_int_equal(nsent, 2);
	assert_int_equal(recv_answer(1, UMAD_METHOD_GET_RESP, UMAD_STATUS_BUSY),
			 0);
	run_all();
	assert_int_equal(done[1].calls, 1);
	assert_int_equal(done[1].err, 0);
	assert_int_equal(done[1].status, UMAD_STATUS_BUSY);
	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.busy, 2);
	check_none_alive();
}

/* A GetTableResp of n MCMemberRecords for the query sent as MAD i, in
 * RMPP segments; returns the segment count. */
static int table_segments(size_t i, unsigned n, uint8_t segs[][IMC_MAD_SIZE],
			  uint8_t *payload)
{
	struct imc_sa_mad t;
	struct imc_mcmr r;
	int count;

	assert_int_equal(imc_sa_mad_unpack(&t, sent[i].mad, IMC_MAD_SIZE),
			 IMC_MAD_SIZE);
	t.mad.method = UMAD_SA_METHOD_GET_TABLE_RESP;
	t.mad.tid |= 0xbeef00000000ull;
	t.sa.attr_offset = IMC_MCMR_SIZE / 8;
	for (unsigned k = 0; k < n; k++) {
		memset(&r, 0, sizeof(r));
		r.mgid = mgid_a;
		r.mgid.raw[15] = (uint8_t)k;
		r.mlid = (uint16_t)(0xc000 + k);
		r.qkey = k;
		assert_int_equal(imc_mcmr_pack(&r, payload + k * IMC_MCMR_SIZE,
					       IMC_MCMR_SIZE), IMC_MCMR_SIZE);
	}
	count = imc_rmpp_segment_count(n * IMC_MCMR_SIZE);
	for (int s = 1; s <= count; s++)
		assert_int_equal(imc_rmpp_segment_pack(&t, payload,
						       n * IMC_MCMR_SIZE,
						       (uint32_t)s, 0, segs[s - 1],
						       IMC_MAD_SIZE),
				 IMC_MAD_SIZE);
	return count;
}

static void test_rmpp_table(void **state)
{
	uint8_t segs[4][IMC_MAD_SIZE];
	uint8_t payload[16 * IMC_MCMR_SIZE];
	struct imc_sa_mad ack;
	struct imc_sa_client_stats st;
	int n;

	assert_int_equal(start(UMAD_SA_METHOD_GET_TABLE, &done[0], NULL), 0);
	n = table_segments(0, 9, segs, payload); /* 504 bytes: 3 segments */
	assert_int_equal(n, 3);

	assert_int_equal(recv_mad(segs[0], IMC_MAD_SIZE), 0);
	/* IBA 13.6.3.3: the first segment is ACKed, window granted. */
	assert_int_equal(nsent, 2);
	assert_int_equal(imc_sa_mad_unpack(&ack, sent[1].mad, IMC_MAD_SIZE),
			 IMC_MAD_SIZE);
	assert_int_equal(ack.mad.method, UMAD_SA_METHOD_GET_TABLE);
	assert_int_equal(ack.rmpp.type, IMC_RMPP_TYPE_ACK);
	assert_int_equal(ack.rmpp.seg_num, 1);
	assert_int_equal(ack.rmpp.paylen_newwin, 1 + IMC_RMPP_DEFAULT_WINDOW);
	assert_int_equal((uint32_t)ack.mad.tid, (uint32_t)tid_of(sent[0].mad));
	/* A duplicate is re-ACKed; the transfer goes on. */
	assert_int_equal(recv_mad(segs[0], IMC_MAD_SIZE), 0);
	assert_int_equal(nsent, 3);
	assert_int_equal(recv_mad(segs[1], IMC_MAD_SIZE), 0);
	assert_int_equal(nsent, 3);
	assert_int_equal(recv_mad(segs[2], IMC_MAD_SIZE), 0);
	/* The LAST one is ACKed. */
	assert_int_equal(nsent, 4);
	assert_int_equal(imc_sa_mad_unpack(&ack, sent[3].mad, IMC_MAD_SIZE),
			 IMC_MAD_SIZE);
	assert_int_equal(ack.rmpp.seg_num, 3);
	run_all();
	assert_int_equal(done[0].calls, 1);
	assert_int_equal(done[0].err, 0);
	assert_int_equal(done[0].method, UMAD_SA_METHOD_GET_TABLE_RESP);
	assert_int_equal(done[0].count, 9);
	assert_int_equal(done[0].len, 9 * IMC_MCMR_SIZE);
	assert_false(done[0].truncated);
	assert_memory_equal(done[0].data, payload, 9 * IMC_MCMR_SIZE);
	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.rmpp_segments, 3);
	check_none_alive();
}

static void test_rmpp_timeout_retry(void **state)
{
	uint8_t segs[4][IMC_MAD_SIZE];
	uint8_t payload[16 * IMC_MCMR_SIZE];
	struct imc_sa_mad ab;

	assert_int_equal(start(UMAD_SA_METHOD_GET_TABLE, &done[0], NULL), 0);
	assert_int_equal(table_segments(0, 5, segs, payload), 2);
	assert_int_equal(recv_mad(segs[0], IMC_MAD_SIZE), 0);
	assert_int_equal(nsent, 2); /* ACK */
	/* The rest never comes: ABORT T2L, then the request again. */
	assert_int_equal(imc_loop_run_until(loop, T0 + 130 * MS), 0);
	assert_int_equal(nsent, 4);
	assert_int_equal(imc_sa_mad_unpack(&ab, sent[2].mad, IMC_MAD_SIZE),
			 IMC_MAD_SIZE);
	assert_int_equal(ab.rmpp.type, IMC_RMPP_TYPE_ABORT);
	assert_int_equal(ab.rmpp.status, IMC_RMPP_STATUS_T2L);
	assert_memory_equal(sent[3].mad, sent[0].mad, IMC_MAD_SIZE);
	/* The whole transfer again. */
	assert_int_equal(recv_mad(segs[0], IMC_MAD_SIZE), 0);
	assert_int_equal(recv_mad(segs[1], IMC_MAD_SIZE), 0);
	run_all();
	assert_int_equal(done[0].err, 0);
	assert_int_equal(done[0].count, 5);
	assert_int_equal(done[0].attempts, 2);
	assert_memory_equal(done[0].data, payload, 5 * IMC_MCMR_SIZE);
	check_none_alive();
}

static void test_rmpp_abort_by_sa(void **state)
{
	uint8_t segs[4][IMC_MAD_SIZE];
	uint8_t payload[16 * IMC_MCMR_SIZE];
	uint8_t stop[IMC_MAD_SIZE];

	assert_int_equal(start(UMAD_SA_METHOD_GET_TABLE, &done[0], NULL), 0);
	assert_int_equal(table_segments(0, 5, segs, payload), 2);
	assert_int_equal(recv_mad(segs[0], IMC_MAD_SIZE), 0);
	/* The SA gives up: ABORT with status UNSPEC, in the ACK's method. */
	assert_int_equal(imc_rmpp_nak_pack(sent[1].mad, IMC_MAD_SIZE,
					   IMC_RMPP_STATUS_UNSPEC, stop,
					   sizeof(stop)), IMC_MAD_SIZE);
	assert_int_equal(stop[3], UMAD_SA_METHOD_GET_TABLE_RESP);
	assert_int_equal(recv_mad(stop, sizeof(stop)), 0);
	run_all();
	assert_int_equal(done[0].calls, 1);
	assert_int_equal(done[0].err, -ECONNABORTED);
	check_none_alive();
}

static void test_rmpp_too_big(void **state)
{
	struct imc_sa_client_config cfg = config();
	uint8_t segs[4][IMC_MAD_SIZE];
	uint8_t payload[16 * IMC_MCMR_SIZE];
	struct imc_sa_mad st;

	imc_sa_client_destroy(cl);
	cfg.max_payload = 300;
	make_client(&cfg);
	assert_int_equal(start(UMAD_SA_METHOD_GET_TABLE, &done[0], NULL), 0);
	assert_int_equal(table_segments(0, 9, segs, payload), 3);
	/* 504 bytes announced > 300: STOP with RESX (IBA 13.6.3.3). */
	assert_int_equal(recv_mad(segs[0], IMC_MAD_SIZE), -EPROTO);
	assert_int_equal(nsent, 2);
	assert_int_equal(imc_sa_mad_unpack(&st, sent[1].mad, IMC_MAD_SIZE),
			 IMC_MAD_SIZE);
	assert_int_equal(st.rmpp.type, IMC_RMPP_TYPE_STOP);
	assert_int_equal(st.rmpp.status, IMC_RMPP_STATUS_RESX);
	run_all();
	assert_int_equal(done[0].err, -EFBIG);
	check_none_alive();
}

/* The last answer of tests/vectors/opensm-mcmr.txt: OpenSM's
 * GetTableResp as umad2sim delivers it, RMPPVersion 0 with ACTIVE set,
 * three records and garbage after them. */
static void load_capture(uint8_t *mad)
{
	char path[512], line[1024];
	struct imc_mad_line v;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/vectors/opensm-mcmr.txt",
		 IMC_SOURCE_DIR);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (imc_mad_line_parse(line, &v) == 1 &&
		    v.dir == IMC_MAD_RX &&
		    v.mad[3] == UMAD_SA_METHOD_GET_TABLE_RESP) {
			memcpy(mad, v.mad, IMC_MAD_SIZE);
			found = true;
		}
	fclose(f);
	assert_true(found);
}

static void test_ibsim_cut_table(void **state)
{
	uint8_t mad[IMC_MAD_SIZE];
	struct imc_mcmr r;
	char s[IMC_GID_STRLEN];

	load_capture(mad);
	assert_int_equal(mad[24], 0); /* RMPPVersion 0 */
	assert_int_equal(mad[26] & IMC_RMPP_FLAG_ACTIVE, IMC_RMPP_FLAG_ACTIVE);

	/* Cut at 256 bytes: more records may have been lost. */
	assert_int_equal(start(UMAD_SA_METHOD_GET_TABLE, &done[0], NULL), 0);
	imc_put32(mad + 12, (uint32_t)tid_of(sent[0].mad));
	assert_int_equal(recv_mad(mad, IMC_MAD_SIZE), 0);
	assert_int_equal(nsent, 1); /* no RMPP ACK for a non-RMPP MAD */
	run_all();
	assert_int_equal(done[0].err, 0);
	assert_int_equal(done[0].status, 0);
	assert_int_equal(done[0].rec_size, IMC_MCMR_SIZE);
	assert_int_equal(done[0].count, 3);
	assert_true(done[0].truncated);
	assert_int_equal(imc_mcmr_unpack(&r, done[0].data, IMC_MCMR_SIZE),
			 IMC_MCMR_SIZE);
	imc_gid_format(&r.mgid, s);
	assert_string_equal(s, "ff12:1234:3d::");
	assert_int_equal(r.mlid, 0xc001);
	assert_int_equal(imc_mcmr_unpack(&r, done[0].data + 2 * IMC_MCMR_SIZE,
					 IMC_MCMR_SIZE), IMC_MCMR_SIZE);
	assert_int_equal(r.join_state, 1);

	/* The same answer with its real length (3 records, 224 bytes, as
	 * umad2sim reports when nothing was cut): complete. */
	assert_int_equal(start(UMAD_SA_METHOD_GET_TABLE, &done[1], NULL), 0);
	imc_put32(mad + 12, (uint32_t)tid_of(sent[1].mad));
	assert_int_equal(recv_mad(mad, IMC_SA_DATA_OFFSET + 3 * IMC_MCMR_SIZE),
			 0);
	/* Cut in transit to 224 bytes (umad2sim): still 3 records, marked
	 * truncated. */
	assert_int_equal(start(UMAD_SA_METHOD_GET_TABLE, &done[3], NULL), 0);
	imc_put32(mad + 12, (uint32_t)tid_of(sent[2].mad));
	in_api = true;
	assert_int_equal(imc_sa_client_recv_cut(cl, mad, 224), 0);
	in_api = false;
	/* An empty table: just the headers. */
	assert_int_equal(start(UMAD_SA_METHOD_GET_TABLE, &done[2], NULL), 0);
	imc_put32(mad + 12, (uint32_t)tid_of(sent[3].mad));
	assert_int_equal(recv_mad(mad, IMC_SA_DATA_OFFSET), 0);
	run_all();
	assert_int_equal(done[3].count, 3);
	assert_int_equal(done[3].len, 3 * IMC_MCMR_SIZE);
	assert_true(done[3].truncated);
	assert_int_equal(done[1].count, 3);
	assert_false(done[1].truncated);
	assert_int_equal(done[1].len, 3 * IMC_MCMR_SIZE);
	assert_int_equal(done[2].count, 0);
	assert_int_equal(done[2].len, 0);
	assert_false(done[2].truncated);
	check_none_alive();
}

static struct imc_sa_mad got_report;
static int reports;

static void on_report(void *arg, const struct imc_sa_mad *m)
{
	assert_ptr_equal(arg, &reports);
	reports++;
	got_report = *m;
}

/* A Report of trap 66 or 67 for mgid_a under tid, packed into buf. */
static void report_mad(struct imc_sa_mad *m, uint8_t *buf, uint16_t trap,
		       uint64_t tid)
{
	struct imc_gid issuer = { { 0xfe, 0x80, [15] = 1 } };
	struct imc_notice n;

	memset(m, 0, sizeof(*m));
	m->mad.base_version = 1;
	m->mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
	m->mad.class_version = 2;
	m->mad.method = UMAD_METHOD_REPORT;
	m->mad.attr_id = UMAD_ATTR_NOTICE;
	m->mad.tid = tid;
	assert_int_equal(imc_notice_mcast_init(&n, trap, &mgid_a, 1, &issuer),
			 0);
	assert_int_equal(imc_notice_pack(&n, m->data, sizeof(m->data)),
			 IMC_NOTICE_SIZE);
	assert_int_equal(imc_sa_mad_pack(m, buf, IMC_MAD_SIZE), IMC_MAD_SIZE);
}

static void test_report(void **state)
{
	struct imc_notice n;
	struct imc_sa_mad m;
	uint8_t buf[IMC_MAD_SIZE];
	struct imc_gid mgid;

	imc_sa_client_set_report_handler(cl, on_report, &reports);
	report_mad(&m, buf, IMC_TRAP_MCAST_GROUP_CREATED, 0x0000000500000077ull);
	assert_int_equal(recv_mad(buf, sizeof(buf)), 0);
	/* IBA 13.4.6.4: ReportResp, same TID and attribute. */
	assert_int_equal(nsent, 1);
	assert_int_equal(sent[0].mad[3], UMAD_METHOD_REPORT_RESP);
	assert_int_equal(tid_of(sent[0].mad), 0x0000000500000077ull);
	assert_memory_equal(sent[0].mad + 16, buf + 16, IMC_MAD_SIZE - 16);
	assert_int_equal(reports, 1);
	assert_int_equal(imc_notice_unpack(&n, got_report.data,
					   sizeof(got_report.data)),
			 IMC_NOTICE_SIZE);
	assert_int_equal(n.trap_number_or_device_id, 66);
	assert_int_equal(imc_notice_mcast_mgid(&n, &mgid), 0);
	assert_true(imc_gid_equal(&mgid, &mgid_a));

	/* Without a handler it is still answered. */
	imc_sa_client_set_report_handler(cl, NULL, NULL);
	m.mad.tid++;
	assert_int_equal(imc_sa_mad_pack(&m, buf, sizeof(buf)), IMC_MAD_SIZE);
	assert_int_equal(recv_mad(buf, sizeof(buf)), 0);
	assert_int_equal(nsent, 2);
	assert_int_equal(reports, 1);
	check_none_alive();
}

/* The SA resends a Report until a ReportResp reaches it: every copy is
 * answered, the handler sees it once; a new TID, new bytes under the same
 * TID, or the same Report long after (a restarted SM reusing its TIDs) is
 * a new Report. */
static void test_report_resent(void **state)
{
	struct imc_sa_client_stats st;
	struct imc_sa_mad m;
	uint8_t buf[IMC_MAD_SIZE];

	imc_sa_client_set_report_handler(cl, on_report, &reports);
	reports = 0;
	report_mad(&m, buf, IMC_TRAP_MCAST_GROUP_CREATED, 0x02dab001ull);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(recv_mad(buf, sizeof(buf)), 0);
		assert_int_equal(imc_loop_run_until(loop, imc_loop_now(loop) +
						    200 * MS), 0);
	}
	assert_int_equal(nsent, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tid_of(sent[i].mad), 0x02dab001ull);
	assert_int_equal(reports, 1);
	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.reports, 1);
	assert_int_equal(st.reports_repeated, 2);

	/* Same TID, another trap: new. */
	report_mad(&m, buf, IMC_TRAP_MCAST_GROUP_DELETED, 0x02dab001ull);
	assert_int_equal(recv_mad(buf, sizeof(buf)), 0);
	assert_int_equal(reports, 2);
	/* Its copy 9 s later: new again. */
	assert_int_equal(imc_loop_run_until(loop, imc_loop_now(loop) +
					    9000 * MS), 0);
	assert_int_equal(recv_mad(buf, sizeof(buf)), 0);
	assert_int_equal(reports, 3);
	/* More than the remembered 64 Reports: the oldest is forgotten. */
	for (uint64_t t = 1; t <= 64; t++) {
		m.mad.tid = 0x10000ull + t;
		assert_int_equal(imc_sa_mad_pack(&m, buf, sizeof(buf)),
				 IMC_MAD_SIZE);
		assert_int_equal(recv_mad(buf, sizeof(buf)), 0);
	}
	assert_int_equal(reports, 67);
	m.mad.tid = 0x10001ull;  /* remembered still: the 64 newest */
	assert_int_equal(imc_sa_mad_pack(&m, buf, sizeof(buf)), IMC_MAD_SIZE);
	assert_int_equal(recv_mad(buf, sizeof(buf)), 0);
	assert_int_equal(reports, 67);
	m.mad.tid = 0x02dab001ull; /* pushed out by them */
	assert_int_equal(imc_sa_mad_pack(&m, buf, sizeof(buf)), IMC_MAD_SIZE);
	assert_int_equal(recv_mad(buf, sizeof(buf)), 0);
	assert_int_equal(reports, 68);
	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.reports, 68);
	assert_int_equal(st.reports_repeated, 3);
	assert_int_equal(nsent, 3 + 1 + 1 + 64 + 1 + 1);
	check_none_alive();
}

static void test_bad_input(void **state)
{
	struct imc_sa_client_config cfg = config();
	struct imc_sa_transport tr = { fake_send, &nsent };
	struct imc_sa_client *c2;
	struct imc_sa_mad m = mcmr_req(UMAD_METHOD_GET);
	uint8_t a[IMC_MAD_SIZE + 1];

	assert_int_equal(start(UMAD_METHOD_GET, &done[0], NULL), 0);
	answer_of(0, UMAD_METHOD_GET_RESP, 0, a);
	assert_int_equal(recv_mad(a, IMC_SA_DATA_OFFSET - 1), -EMSGSIZE);
	assert_int_equal(recv_mad(a, IMC_MAD_SIZE + 1), -EMSGSIZE);
	assert_int_equal(imc_sa_client_recv(cl, NULL, 100), -EMSGSIZE);
	a[1] = UMAD_CLASS_PERF_MGMT;
	assert_int_equal(recv_mad(a, IMC_MAD_SIZE), -ENOMSG);
	a[1] = UMAD_CLASS_SUBN_ADM;
	a[0] = 2;
	assert_int_equal(recv_mad(a, IMC_MAD_SIZE), -EPROTONOSUPPORT);
	a[0] = 1;
	a[2] = 1;
	assert_int_equal(recv_mad(a, IMC_MAD_SIZE), -EPROTONOSUPPORT);
	a[2] = 2;
	a[3] = UMAD_METHOD_GET; /* a request: not for a client */
	assert_int_equal(recv_mad(a, IMC_MAD_SIZE), -ENOMSG);
	a[3] = UMAD_METHOD_GET_RESP;
	assert_int_equal(recv_mad(a, IMC_MAD_SIZE), 0);
	run_all();
	assert_int_equal(done[0].calls, 1);

	m.mad.method = UMAD_METHOD_GET_RESP;
	assert_int_equal(imc_sa_query_start(cl, &m, on_done, &done[1], NULL),
			 -EINVAL);
	m.mad.method = UMAD_METHOD_GET;
	assert_int_equal(imc_sa_query_start(cl, &m, NULL, NULL, NULL),
			 -EINVAL);
	assert_int_equal(imc_sa_query_cancel(NULL), -EALREADY);

	cfg.timeout = 0;
	assert_int_equal(imc_sa_client_create(loop, &tr, &cfg, &c2), -EINVAL);
	cfg = config();
	cfg.max_timeout = cfg.timeout - 1;
	assert_int_equal(imc_sa_client_create(loop, &tr, &cfg, &c2), -EINVAL);
	cfg = config();
	cfg.window = 0;
	assert_int_equal(imc_sa_client_create(loop, &tr, &cfg, &c2), -EINVAL);
	cfg.window = 4097;
	assert_int_equal(imc_sa_client_create(loop, &tr, &cfg, &c2), -EINVAL);
	tr.send = NULL;
	assert_int_equal(imc_sa_client_create(loop, &tr, NULL, &c2), -EINVAL);
	check_none_alive();
}

static void test_send_errors(void **state)
{
	struct imc_sa_client_stats st;

	/* A transport that fails counts as a lost MAD: retries, timeout. */
	send_result = -EHOSTUNREACH;
	assert_int_equal(start(UMAD_METHOD_GET, &done[0], NULL), 0);
	run_all();
	assert_int_equal(done[0].err, -ETIMEDOUT);
	imc_sa_client_get_stats(cl, &st);
	assert_int_equal(st.send_errors, 4);
	check_none_alive();
}

/* Many queries through a lossy, duplicating, reordering SA, seeded:
 * every query completes exactly once, with an answer iff one of its
 * attempts was answered before it timed out. */
static void test_random_sweep(void **state)
{
	struct imc_sa_client_config cfg = config();
	struct imc_sa_client_stats st;
	struct imc_rng rng;
	const int nq = 1000;
	size_t seen = 0;

	imc_sa_client_destroy(cl);
	cfg.window = 8;
	cfg.retries = 2;
	make_client(&cfg);
	imc_rng_seed(&rng, 7);
	for (int i = 0; i < nq; i++)
		assert_int_equal(start(UMAD_METHOD_GET, &done[i], &handle[i]),
				 0);
	while (imc_loop_run_once(loop) > 0 || seen < nsent) {
		/* Answer (some of) what was sent since last time. */
		for (; seen < nsent; seen++) {
			if (imc_rng_chance(&rng, 0.3))
				continue; /* lost */
			recv_answer(seen, UMAD_METHOD_GET_RESP, 0);
			if (imc_rng_chance(&rng, 0.2))
				recv_answer(seen, UMAD_METHOD_GET_RESP, 0);
		}
		/* Cancel a few along the way. */
		if (imc_rng_chance(&rng, 0.05)) {
			int k = (int)imc_rng_below(&rng, nq);

			if (!done[k].calls && handle[k]) {
				assert_int_equal(imc_sa_query_cancel(handle[k]),
						 0);
				handle[k] = NULL;
				done[k].calls = -1000; /* must stay so */
			}
		}
	}
	imc_sa_client_get_stats(cl, &st);
	int ok = 0, timed = 0, canceled = 0;
	for (int i = 0; i < nq; i++) {
		if (done[i].calls == -1000) {
			canceled++;
			continue;
		}
		assert_int_equal(done[i].calls, 1);
		if (done[i].err == 0) {
			ok++;
		} else {
			assert_int_equal(done[i].err, -ETIMEDOUT);
			timed++;
		}
	}
	assert_int_equal(ok, st.answered);
	assert_int_equal(timed, st.timed_out);
	assert_int_equal(canceled, st.canceled);
	assert_int_equal(ok + timed + canceled, nq);
	assert_true(ok > nq / 2);
	assert_true(st.max_in_flight <= 8);
	assert_int_equal(st.started, nq);
	check_none_alive();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_get_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tid_low_match, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_cap_and_seed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answer_to_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rmpp_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rmpp_timeout_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rmpp_abort_by_sa, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rmpp_too_big, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ibsim_cut_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_resent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_sweep, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
