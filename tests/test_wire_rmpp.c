/* RMPP (IBA 13.6) for SA MADs: segment headers checked byte by byte
 * against the PayloadLength rule Linux and OpenSM put on the wire,
 * segment -> reassemble round trips, reordering, duplicates, lost ACKs,
 * the window, STOP/ABORT, and malformed segments that must be rejected
 * without harming the transfer in progress. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/rmpp.h"

#define TID 0x0000cafe12345678ULL
#define MAXSEG 64

/* Wire offsets in a MAD (IBA 13.4.3, 13.6.2.1). */
enum {
	O_METHOD = 3,
	O_TID = 8,
	O_RVER = 24,
	O_RTYPE = 25,
	O_RFLAGS = 26,
	O_RSTATUS = 27,
	O_SEG = 28,
	O_PAYLEN = 32,
	O_ATTROFF = 44,
	O_COMPMASK = 48,
	O_DATA = 56,
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint64_t rng = 1;

static uint32_t rnd(void)
{
	/* xorshift64 */
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* A GetTableResp of MCMemberRecords (56 bytes apart: AttributeOffset 7). */
static struct imc_sa_mad tmpl_with_tid(uint64_t tid)
{
	struct imc_sa_mad t;

	memset(&t, 0, sizeof(t));
	t.mad.base_version = 1;
	t.mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
	t.mad.class_version = 2;
	t.mad.method = 0x92;
	t.mad.tid = tid;
	t.mad.attr_id = 0x0038;
	t.sa.attr_offset = 7;
	t.sa.comp_mask = 0x10003;
	return t;
}

static uint8_t *random_payload(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
	return p;
}

/* All segments of a transfer, as the sender would put them on the wire. */
struct xfer {
	struct imc_sa_mad tmpl;
	uint8_t *payload;
	size_t len;
	int n;
	uint8_t seg[MAXSEG + 1][IMC_MAD_SIZE]; /* seg[k] is segment k */
};

static struct xfer *xfer_new(size_t len)
{
	struct xfer *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	x->tmpl = tmpl_with_tid(TID);
	x->payload = random_payload(len);
	x->len = len;
	x->n = imc_rmpp_segment_count(len);
	assert_true(x->n >= 1 && x->n <= MAXSEG);
	for (int k = 1; k <= x->n; k++)
		assert_int_equal(imc_rmpp_segment_pack(&x->tmpl, x->payload,
						       len, (uint32_t)k, 0x12,
						       x->seg[k], IMC_MAD_SIZE),
				 IMC_MAD_SIZE);
	return x;
}

static void xfer_free(struct xfer *x)
{
	free(x->payload);
	free(x);
}

static void assert_payload(struct imc_rmpp_receiver *r, const struct xfer *x)
{
	uint8_t *p = NULL;
	size_t n = 0;

	assert_int_equal(imc_rmpp_receiver_state(r), IMC_RMPP_DONE);
	assert_int_equal(imc_rmpp_receiver_take(r, &p, &n), 0);
	assert_non_null(p);
	assert_int_equal(n, x->len);
	if (x->len)
		assert_memory_equal(p, x->payload, x->len);
	assert_int_equal(imc_rmpp_receiver_take(r, &p, &n), -EALREADY);
	imc_rmpp_payload_free(p);
}

static void expect_ack(struct imc_rmpp_receiver *r, uint32_t seg,
		       uint32_t newwin)
{
	uint8_t b[IMC_MAD_SIZE];

	assert_int_equal(imc_rmpp_receiver_ack_pack(r, b, sizeof(b)),
			 IMC_MAD_SIZE);
	assert_int_equal(b[O_RTYPE], IMC_RMPP_TYPE_ACK);
	assert_int_equal(be32(b + O_SEG), seg);
	assert_int_equal(be32(b + O_PAYLEN), newwin);
}

/* ------------------------------------------------------------------ */

static void test_segment_count(void **state)
{
	(void)state;
	assert_int_equal(imc_rmpp_segment_count(0), 1);
	assert_int_equal(imc_rmpp_segment_count(1), 1);
	assert_int_equal(imc_rmpp_segment_count(200), 1);
	assert_int_equal(imc_rmpp_segment_count(201), 2);
	assert_int_equal(imc_rmpp_segment_count(400), 2);
	assert_int_equal(imc_rmpp_segment_count(401), 3);
	assert_int_equal(imc_rmpp_segment_count(56 * 100), 28);
	/* Largest payload whose first PayloadLength (payload + 20 per
	 * segment) fits 32 bits: 19522579 segments, 0xFFFFFFFF exactly. */
	assert_int_equal(imc_rmpp_segment_count(3904515715u), 19522579);
	assert_int_equal(imc_rmpp_segment_count(3904515716u), -EMSGSIZE);
	assert_int_equal(imc_rmpp_segment_count(UINT32_MAX), -EMSGSIZE);
}

/* Checks one segment's bytes: headers from the template, RMPP header
 * as given, the data slice and zero padding. */
static void check_segment(const uint8_t *b, const struct xfer *x, uint32_t k,
			  uint8_t flags, uint32_t paylen)
{
	size_t off = (size_t)(k - 1) * 200;
	size_t chunk = x->len - off < 200 ? x->len - off : 200;

	if (x->len == 0)
		chunk = 0;
	assert_int_equal(b[0], 1);
	assert_int_equal(b[1], 0x03);
	assert_int_equal(b[2], 2);
	assert_int_equal(b[O_METHOD], 0x92);
	assert_int_equal(be32(b + O_TID), 0x0000cafe);
	assert_int_equal(be32(b + O_TID + 4), 0x12345678);
	assert_int_equal(b[16], 0x00);
	assert_int_equal(b[17], 0x38);
	assert_int_equal(b[O_RVER], 1);
	assert_int_equal(b[O_RTYPE], IMC_RMPP_TYPE_DATA);
	/* RRespTime 0x12 in bits 7..3, flags in 2..0. */
	assert_int_equal(b[O_RFLAGS], 0x12 << 3 | flags);
	assert_int_equal(b[O_RSTATUS], 0);
	assert_int_equal(be32(b + O_SEG), k);
	assert_int_equal(be32(b + O_PAYLEN), paylen);
	/* The SA header is repeated in every segment. */
	assert_int_equal(b[O_ATTROFF], 0);
	assert_int_equal(b[O_ATTROFF + 1], 7);
	assert_int_equal(be32(b + O_COMPMASK + 4), 0x10003);
	if (chunk)
		assert_memory_equal(b + O_DATA, x->payload + off, chunk);
	for (size_t i = chunk; i < 200; i++)
		assert_int_equal(b[O_DATA + i], 0);
}

static void test_segment_headers(void **state)
{
	struct xfer *x;

	(void)state;
	/* Empty table: one segment, FIRST|LAST|ACTIVE, just the SA header. */
	x = xfer_new(0);
	assert_int_equal(x->n, 1);
	check_segment(x->seg[1], x, 1, 0x7, 20);
	xfer_free(x);

	x = xfer_new(1);
	assert_int_equal(x->n, 1);
	check_segment(x->seg[1], x, 1, 0x7, 21);
	xfer_free(x);

	x = xfer_new(200);
	assert_int_equal(x->n, 1);
	check_segment(x->seg[1], x, 1, 0x7, 220);
	xfer_free(x);

	/* 201 bytes: 200 + 1; first = 201 + 2 * 20, last = 20 + 1. */
	x = xfer_new(201);
	assert_int_equal(x->n, 2);
	check_segment(x->seg[1], x, 1, 0x3, 241);
	check_segment(x->seg[2], x, 2, 0x5, 21);
	xfer_free(x);

	/* 100 MCMemberRecords of 56 bytes: 28 full segments;
	 * first = 5600 + 28 * 20 = 6160, middle 0, last 220. */
	x = xfer_new(56 * 100);
	assert_int_equal(x->n, 28);
	check_segment(x->seg[1], x, 1, 0x3, 6160);
	for (uint32_t k = 2; k < 28; k++)
		check_segment(x->seg[k], x, k, 0x1, 0);
	check_segment(x->seg[28], x, 28, 0x5, 220);
	xfer_free(x);
}

static void test_segment_pack_errors(void **state)
{
	struct imc_sa_mad t = tmpl_with_tid(TID);
	uint8_t p[401] = { 0 }, b[IMC_MAD_SIZE + 1];

	(void)state;
	memset(b, 0xA5, sizeof(b));
	assert_int_equal(imc_rmpp_segment_pack(&t, p, 401, 0, 0, b, 256),
			 -EINVAL);
	assert_int_equal(imc_rmpp_segment_pack(&t, p, 401, 4, 0, b, 256),
			 -EINVAL);
	assert_int_equal(imc_rmpp_segment_pack(&t, p, 401, 1, 32, b, 256),
			 -EINVAL);
	assert_int_equal(imc_rmpp_segment_pack(&t, NULL, 1, 1, 0, b, 256),
			 -EINVAL);
	assert_int_equal(imc_rmpp_segment_pack(&t, p, 401, 1, 0, b, 255),
			 -ENOSPC);
	for (size_t i = 0; i < sizeof(b); i++)
		assert_int_equal(b[i], 0xA5);
	assert_int_equal(imc_rmpp_segment_pack(&t, NULL, 0, 1, 0x1f, b, 256),
			 256);
	assert_int_equal(b[O_RFLAGS], 0xff);
	assert_int_equal(b[256], 0xA5);
	assert_int_equal(imc_rmpp_segment_pack(&t, p, 3904515716u, 1, 0, b,
					       256),
			 -EMSGSIZE);
}

/* Lossless exchange: sender and receiver in lock step. Returns the number
 * of ACKs the receiver asked for. */
static int run_lossless(const struct xfer *x, uint32_t window)
{
	struct imc_rmpp_sender *s;
	struct imc_rmpp_receiver *r;
	uint8_t ack[IMC_MAD_SIZE];
	int acks = 0, seg, guard = 0;

	assert_int_equal(imc_rmpp_sender_create(&x->tmpl, x->len, 3, &s), 0);
	assert_int_equal(imc_rmpp_receiver_create(x->len, window, &r), 0);
	assert_int_equal(imc_rmpp_sender_count(s), (uint32_t)x->n);
	while (imc_rmpp_sender_state(s) == IMC_RMPP_ACTIVE) {
		assert_true(++guard < 10000);
		while ((seg = imc_rmpp_sender_next(s)) > 0) {
			int rc = imc_rmpp_receiver_recv(r, x->seg[seg],
							IMC_MAD_SIZE, NULL);

			assert_true(rc & IMC_RMPP_RX_ACCEPTED);
			assert_int_equal(rc & IMC_RMPP_RX_DONE,
					 seg == x->n ? IMC_RMPP_RX_DONE : 0);
			if (rc & IMC_RMPP_RX_ACK) {
				acks++;
				assert_int_equal(imc_rmpp_receiver_ack_pack(
						r, ack, sizeof(ack)), 256);
				assert_int_equal(imc_rmpp_sender_recv(
						s, ack, sizeof(ack)), 0);
			}
		}
		assert_int_equal(seg, 0);
	}
	assert_int_equal(imc_rmpp_sender_state(s), IMC_RMPP_DONE);
	assert_int_equal(imc_rmpp_sender_acked(s), (uint32_t)x->n);
	assert_int_equal(imc_rmpp_sender_next(s), 0);
	assert_int_equal(imc_rmpp_sender_timeout(s), -EALREADY);
	assert_int_equal(imc_rmpp_receiver_last(r), (uint32_t)x->n);
	assert_payload(r, x);
	imc_rmpp_sender_destroy(s);
	imc_rmpp_receiver_destroy(r);
	return acks;
}

static void test_round_trip_sizes(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 52, 56, 199, 200, 201, 399,
					400, 401, 1000, 1199, 1200, 1201,
					56 * 100, 12345 };

	(void)state;
	for (size_t i = 0; i < IMC_ARRAY_SIZE(sizes); i++) {
		struct xfer *x = xfer_new(sizes[i]);

		run_lossless(x, IMC_RMPP_DEFAULT_WINDOW);
		xfer_free(x);
	}
	/* Every size over a range, with a small window. */
	for (size_t len = 0; len <= 2000; len += 7) {
		struct xfer *x = xfer_new(len);

		run_lossless(x, 3);
		xfer_free(x);
	}
}

/* ACKs come on segment 1, whenever the granted window fills, and on the
 * LAST: 28 segments with window 4 -> 1, 5, 9, 13, 17, 21, 25, 28. */
static void test_window_acks(void **state)
{
	struct xfer *x = xfer_new(56 * 100);
	struct imc_rmpp_receiver *r;
	static const uint32_t acked_at[] = { 1, 5, 9, 13, 17, 21, 25, 28 };
	size_t a = 0;

	(void)state;
	assert_int_equal(run_lossless(x, 4), 8);
	assert_int_equal(imc_rmpp_receiver_create(x->len, 4, &r), 0);
	for (uint32_t k = 1; k <= 28; k++) {
		int rc = imc_rmpp_receiver_recv(r, x->seg[k], 256, NULL);

		if (a < IMC_ARRAY_SIZE(acked_at) && k == acked_at[a]) {
			assert_int_equal(rc & IMC_RMPP_RX_ACK, IMC_RMPP_RX_ACK);
			/* The window moves by 4 from each ACK point. */
			expect_ack(r, k, k == 28 ? 29 : k + 4);
			a++;
		} else {
			assert_int_equal(rc, IMC_RMPP_RX_ACCEPTED);
		}
	}
	assert_int_equal(a, IMC_ARRAY_SIZE(acked_at));
	assert_payload(r, x);
	imc_rmpp_receiver_destroy(r);
	xfer_free(x);
}

/* The sender never has more than the granted window outstanding, and
 * starts with one segment until the first ACK. */
static void test_sender_window(void **state)
{
	struct xfer *x = xfer_new(56 * 100);
	struct imc_rmpp_sender *s;
	uint8_t ack[IMC_MAD_SIZE], ack1[IMC_MAD_SIZE];
	struct imc_rmpp_receiver *r;

	(void)state;
	assert_int_equal(imc_rmpp_sender_create(&x->tmpl, x->len, 0, &s), 0);
	assert_int_equal(imc_rmpp_receiver_create(x->len, 5, &r), 0);
	assert_int_equal(imc_rmpp_sender_next(s), 1);
	assert_int_equal(imc_rmpp_sender_next(s), 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
	expect_ack(r, 1, 6);
	imc_rmpp_receiver_ack_pack(r, ack, sizeof(ack));
	memcpy(ack1, ack, sizeof(ack));
	assert_int_equal(imc_rmpp_sender_recv(s, ack, sizeof(ack)), 0);
	/* Window 2..6 */
	for (int k = 2; k <= 6; k++)
		assert_int_equal(imc_rmpp_sender_next(s), k);
	assert_int_equal(imc_rmpp_sender_next(s), 0);
	/* The same ACK again changes nothing. */
	assert_int_equal(imc_rmpp_sender_recv(s, ack, sizeof(ack)), -EALREADY);
	assert_int_equal(imc_rmpp_sender_next(s), 0);
	for (int k = 2; k <= 6; k++) {
		int rc = imc_rmpp_receiver_recv(r, x->seg[k], 256, NULL);

		assert_int_equal(rc, k == 6 ? IMC_RMPP_RX_ACCEPTED |
						      IMC_RMPP_RX_ACK :
					      IMC_RMPP_RX_ACCEPTED);
	}
	expect_ack(r, 6, 11);
	imc_rmpp_receiver_ack_pack(r, ack, sizeof(ack));
	assert_int_equal(imc_rmpp_sender_recv(s, ack, sizeof(ack)), 0);
	assert_int_equal(imc_rmpp_sender_acked(s), 6);
	for (int k = 7; k <= 11; k++)
		assert_int_equal(imc_rmpp_sender_next(s), k);
	assert_int_equal(imc_rmpp_sender_next(s), 0);
	/* The old ACK of 1 is now stale. */
	assert_int_equal(imc_rmpp_sender_recv(s, ack1, sizeof(ack1)),
			 -EALREADY);
	assert_int_equal(imc_rmpp_sender_acked(s), 6);
	assert_int_equal(imc_rmpp_sender_next(s), 0);
	imc_rmpp_sender_destroy(s);
	imc_rmpp_receiver_destroy(r);
	xfer_free(x);
}

/* A gap drops the segment and re-ACKs the last in-order one; the missing
 * segment then fills it. */
static void test_reorder(void **state)
{
	struct xfer *x = xfer_new(1000); /* 5 segments */
	struct imc_rmpp_receiver *r;

	(void)state;
	assert_int_equal(imc_rmpp_receiver_create(x->len, 8, &r), 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[3], 256, NULL),
			 IMC_RMPP_RX_ACK | IMC_RMPP_RX_GAP);
	assert_int_equal(imc_rmpp_receiver_last(r), 1);
	expect_ack(r, 1, 9);
	/* Beyond the window (9) as well. */
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[5], 256, NULL),
			 IMC_RMPP_RX_ACK | IMC_RMPP_RX_GAP);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[3], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[4], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED);
	assert_int_equal(imc_rmpp_receiver_state(r), IMC_RMPP_ACTIVE);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[5], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK |
				 IMC_RMPP_RX_DONE);
	expect_ack(r, 5, 9);
	assert_payload(r, x);
	imc_rmpp_receiver_destroy(r);
	xfer_free(x);
}

/* Duplicates are re-ACKed with the last in-order segment, also after
 * DONE (the sender lost the final ACK); a segment past LAST is refused. */
static void test_duplicates(void **state)
{
	struct xfer *x = xfer_new(450); /* 3 segments */
	struct imc_rmpp_receiver *r;
	uint8_t st = 0xff, bad[IMC_MAD_SIZE];

	(void)state;
	assert_int_equal(imc_rmpp_receiver_create(x->len, 32, &r), 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256, &st),
			 IMC_RMPP_RX_ACK | IMC_RMPP_RX_DUPLICATE);
	assert_int_equal(st, 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 256, NULL),
			 IMC_RMPP_RX_ACK | IMC_RMPP_RX_DUPLICATE);
	expect_ack(r, 2, 33);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[3], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK |
				 IMC_RMPP_RX_DONE);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[3], 256, NULL),
			 IMC_RMPP_RX_ACK | IMC_RMPP_RX_DUPLICATE);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256, NULL),
			 IMC_RMPP_RX_ACK | IMC_RMPP_RX_DUPLICATE);
	expect_ack(r, 3, 33);
	memcpy(bad, x->seg[2], 256);
	put32(bad + O_SEG, 4);
	assert_int_equal(imc_rmpp_receiver_recv(r, bad, 256, &st), -EPROTO);
	assert_int_equal(st, IMC_RMPP_STATUS_S2B);
	assert_payload(r, x);
	/* Still re-ACKs after the payload was taken. */
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[3], 256, NULL),
			 IMC_RMPP_RX_ACK | IMC_RMPP_RX_DUPLICATE);
	expect_ack(r, 3, 33);
	imc_rmpp_receiver_destroy(r);
	xfer_free(x);
}

/* The final ACK and an intermediate ACK are lost: the sender's timer
 * rewinds to the first unacknowledged segment, the receiver re-ACKs the
 * duplicates, and the transfer completes. */
static void test_lost_acks(void **state)
{
	struct xfer *x = xfer_new(1000); /* 5 segments */
	struct imc_rmpp_sender *s;
	struct imc_rmpp_receiver *r;
	uint8_t ack[IMC_MAD_SIZE];
	int rc;

	(void)state;
	assert_int_equal(imc_rmpp_sender_create(&x->tmpl, x->len, 2, &s), 0);
	assert_int_equal(imc_rmpp_receiver_create(x->len, 2, &r), 0);

	/* Segment 1; its ACK (window 3) is lost. */
	assert_int_equal(imc_rmpp_sender_next(s), 1);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
	assert_int_equal(imc_rmpp_sender_next(s), 0);
	assert_int_equal(imc_rmpp_sender_timeout(s), 0);
	assert_int_equal(imc_rmpp_sender_next(s), 1);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256, NULL),
			 IMC_RMPP_RX_ACK | IMC_RMPP_RX_DUPLICATE);
	imc_rmpp_receiver_ack_pack(r, ack, sizeof(ack));
	assert_int_equal(imc_rmpp_sender_recv(s, ack, 256), 0);
	assert_int_equal(imc_rmpp_sender_acked(s), 1);

	/* 2 and 3; the ACK of 3 (window 5) arrives. */
	assert_int_equal(imc_rmpp_sender_next(s), 2);
	assert_int_equal(imc_rmpp_sender_next(s), 3);
	assert_int_equal(imc_rmpp_sender_next(s), 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[3], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
	imc_rmpp_receiver_ack_pack(r, ack, sizeof(ack));
	assert_int_equal(imc_rmpp_sender_recv(s, ack, 256), 0);

	/* 4 and 5 (LAST); the final ACK is lost. */
	assert_int_equal(imc_rmpp_sender_next(s), 4);
	assert_int_equal(imc_rmpp_sender_next(s), 5);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[4], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[5], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK |
				 IMC_RMPP_RX_DONE);
	assert_int_equal(imc_rmpp_sender_state(s), IMC_RMPP_ACTIVE);
	assert_int_equal(imc_rmpp_sender_timeout(s), 0);
	/* Go back to 4, the first unacknowledged. */
	assert_int_equal(imc_rmpp_sender_next(s), 4);
	assert_int_equal(imc_rmpp_sender_next(s), 5);
	assert_int_equal(imc_rmpp_sender_next(s), 0);
	rc = imc_rmpp_receiver_recv(r, x->seg[4], 256, NULL);
	assert_int_equal(rc, IMC_RMPP_RX_ACK | IMC_RMPP_RX_DUPLICATE);
	imc_rmpp_receiver_ack_pack(r, ack, sizeof(ack));
	assert_int_equal(imc_rmpp_sender_recv(s, ack, 256), 0);
	assert_int_equal(imc_rmpp_sender_state(s), IMC_RMPP_DONE);
	/* Late ACKs after DONE are ignored. */
	assert_int_equal(imc_rmpp_sender_recv(s, ack, 256), -EALREADY);
	assert_payload(r, x);
	imc_rmpp_sender_destroy(s);
	imc_rmpp_receiver_destroy(r);
	xfer_free(x);
}

/* max_retries timeouts without progress abort with TMR. */
static void test_sender_retries(void **state)
{
	struct imc_sa_mad t = tmpl_with_tid(TID);
	struct imc_rmpp_sender *s;
	uint8_t b[IMC_MAD_SIZE];

	(void)state;
	assert_int_equal(imc_rmpp_sender_create(&t, 1000, 2, &s), 0);
	assert_int_equal(imc_rmpp_sender_abort_pack(s, b, sizeof(b)), -EINVAL);
	assert_int_equal(imc_rmpp_sender_next(s), 1);
	assert_int_equal(imc_rmpp_sender_timeout(s), 0);
	assert_int_equal(imc_rmpp_sender_next(s), 1);
	assert_int_equal(imc_rmpp_sender_timeout(s), 0);
	assert_int_equal(imc_rmpp_sender_next(s), 1);
	assert_int_equal(imc_rmpp_sender_timeout(s), -ETIMEDOUT);
	assert_int_equal(imc_rmpp_sender_state(s), IMC_RMPP_ABORTED);
	assert_int_equal(imc_rmpp_sender_status(s), IMC_RMPP_STATUS_TMR);
	assert_int_equal(imc_rmpp_sender_next(s), -ECONNABORTED);
	assert_int_equal(imc_rmpp_sender_timeout(s), -ECONNABORTED);
	assert_int_equal(imc_rmpp_sender_abort_pack(s, b, sizeof(b)), 256);
	/* The sender's own headers, unflipped: GetTableResp. */
	assert_int_equal(b[O_METHOD], 0x92);
	assert_int_equal(b[O_RVER], 1);
	assert_int_equal(b[O_RTYPE], IMC_RMPP_TYPE_ABORT);
	assert_int_equal(b[O_RFLAGS], 0x1f << 3 | IMC_RMPP_FLAG_ACTIVE);
	assert_int_equal(b[O_RSTATUS], 126);
	assert_int_equal(be32(b + O_SEG), 0);
	assert_int_equal(be32(b + O_PAYLEN), 0);
	assert_int_equal(be32(b + O_TID + 4), 0x12345678);
	imc_rmpp_sender_destroy(s);
}

/* An ACK/STOP/ABORT as a receiver would send it for transfer TID. */
static void ctl(uint8_t *b, uint8_t ver, uint8_t type, uint8_t flags,
		uint8_t status, uint32_t seg, uint32_t nwl)
{
	struct imc_sa_mad m = tmpl_with_tid(TID);

	m.mad.method = 0x12;
	m.rmpp.version = ver;
	m.rmpp.type = type;
	m.rmpp.flags = flags;
	m.rmpp.status = status;
	m.rmpp.seg_num = seg;
	m.rmpp.paylen_newwin = nwl;
	assert_int_equal(imc_sa_mad_pack(&m, b, IMC_MAD_SIZE), 256);
}

/* Sends segments 1..3 (window granted to 3) to a fresh sender. */
static struct imc_rmpp_sender *sender_at_3(void)
{
	struct imc_sa_mad t = tmpl_with_tid(TID);
	struct imc_rmpp_sender *s;
	uint8_t b[IMC_MAD_SIZE];

	assert_int_equal(imc_rmpp_sender_create(&t, 2000, 5, &s), 0);
	assert_int_equal(imc_rmpp_sender_next(s), 1);
	ctl(b, 1, IMC_RMPP_TYPE_ACK, 1, 0, 1, 3);
	assert_int_equal(imc_rmpp_sender_recv(s, b, 256), 0);
	assert_int_equal(imc_rmpp_sender_next(s), 2);
	assert_int_equal(imc_rmpp_sender_next(s), 3);
	assert_int_equal(imc_rmpp_sender_next(s), 0);
	return s;
}

/* Feeds one MAD to a sender at segment 3 and checks result, state and,
 * when it aborts, the status in its ABORT. */
static void sender_case(uint8_t ver, uint8_t type, uint8_t flags,
			uint8_t status, uint32_t seg, uint32_t nwl, int want,
			enum imc_rmpp_state want_state, uint8_t want_status)
{
	struct imc_rmpp_sender *s = sender_at_3();
	uint8_t b[IMC_MAD_SIZE];

	ctl(b, ver, type, flags, status, seg, nwl);
	assert_int_equal(imc_rmpp_sender_recv(s, b, 256), want);
	assert_int_equal(imc_rmpp_sender_state(s), want_state);
	assert_int_equal(imc_rmpp_sender_status(s), want_status);
	if (want == -EPROTO) {
		assert_int_equal(imc_rmpp_sender_abort_pack(s, b, 256), 256);
		assert_int_equal(b[O_RTYPE], IMC_RMPP_TYPE_ABORT);
		assert_int_equal(b[O_RSTATUS], want_status);
	}
	if (want_state != IMC_RMPP_ACTIVE && want_state != IMC_RMPP_DONE)
		assert_int_equal(imc_rmpp_sender_next(s), -ECONNABORTED);
	imc_rmpp_sender_destroy(s);
}

static void test_sender_ack_checks(void **state)
{
	const enum imc_rmpp_state A = IMC_RMPP_ACTIVE, X = IMC_RMPP_ABORTED;
	struct imc_rmpp_sender *s;
	uint8_t b[IMC_MAD_SIZE];

	(void)state;
	/* Good ACK of 3 with a larger window. */
	sender_case(1, 2, 1, 0, 3, 8, 0, A, 0);
	/* Window that does not move: old/duplicate, ignored. */
	sender_case(1, 2, 1, 0, 1, 3, -EALREADY, A, 0);
	sender_case(1, 2, 1, 0, 1, 2, -EALREADY, A, 0);
	sender_case(1, 2, 1, 0, 0, 3, -EALREADY, A, 0);
	/* NewWindowLast below SegmentNumber: W2S. */
	sender_case(1, 2, 1, 0, 3, 2, -EPROTO, X, IMC_RMPP_STATUS_W2S);
	/* ACK of a segment never sent: S2B. */
	sender_case(1, 2, 1, 0, 4, 9, -EPROTO, X, IMC_RMPP_STATUS_S2B);
	/* ACK with a status: illegal status. */
	sender_case(1, 2, 1, 5, 2, 9, -EPROTO, X, IMC_RMPP_STATUS_BAD_STATUS);
	/* RMPPVersion 2: unsupported version. */
	sender_case(2, 2, 1, 0, 2, 9, -EPROTO, X, IMC_RMPP_STATUS_UNV);
	/* RMPPType 7: bad type. */
	sender_case(1, 7, 1, 0, 2, 9, -EPROTO, X, IMC_RMPP_STATUS_BADT);
	/* STOP with ResX; STOP with another status. */
	sender_case(1, 3, 1, 1, 0, 0, -ECONNABORTED, IMC_RMPP_STOPPED, 1);
	sender_case(1, 3, 1, 118, 0, 0, -EPROTO, X,
		    IMC_RMPP_STATUS_BAD_STATUS);
	/* ABORT with T2L; ABORT with a status outside 118..127. */
	sender_case(1, 4, 1, 118, 0, 0, -ECONNABORTED, X, 118);
	sender_case(1, 4, 1, 127, 0, 0, -ECONNABORTED, X, 127);
	sender_case(1, 4, 1, 1, 0, 0, -EPROTO, X, IMC_RMPP_STATUS_BAD_STATUS);
	sender_case(1, 4, 1, 128, 0, 0, -EPROTO, X,
		    IMC_RMPP_STATUS_BAD_STATUS);
	/* ACTIVE clear, or a DATA segment: not for the sender. */
	sender_case(1, 2, 0, 0, 3, 8, -ENOMSG, A, 0);
	sender_case(1, 1, 1, 0, 3, 8, -ENOMSG, A, 0);

	/* Another TID, a short MAD. */
	s = sender_at_3();
	ctl(b, 1, 2, 1, 0, 3, 9);
	b[O_TID + 7] ^= 1;
	assert_int_equal(imc_rmpp_sender_recv(s, b, 256), -ESRCH);
	b[O_TID + 7] ^= 1;
	assert_int_equal(imc_rmpp_sender_recv(s, b, 255), -EMSGSIZE);
	/* A timeout rewinds to 2, an ACK of 3 then moves next() past it. */
	assert_int_equal(imc_rmpp_sender_timeout(s), 0);
	assert_int_equal(imc_rmpp_sender_next(s), 2);
	assert_int_equal(imc_rmpp_sender_recv(s, b, 256), 0);
	assert_int_equal(imc_rmpp_sender_next(s), 4);
	/* After an ABORT nothing more is accepted. */
	ctl(b, 1, 4, 1, 120, 0, 0);
	assert_int_equal(imc_rmpp_sender_recv(s, b, 256), -ECONNABORTED);
	ctl(b, 1, 2, 1, 0, 4, 9);
	assert_int_equal(imc_rmpp_sender_recv(s, b, 256), -ECONNABORTED);
	assert_int_equal(imc_rmpp_sender_status(s), 120);
	imc_rmpp_sender_destroy(s);

	/* Bad arguments. */
	assert_int_equal(imc_rmpp_sender_create(NULL, 1, 0, &s), -EINVAL);
	assert_int_equal(imc_rmpp_sender_create(&(struct imc_sa_mad){ 0 },
						3904515716u, 0, &s),
			 -EMSGSIZE);
}

/* Every malformed segment is rejected with its errno and status while a
 * transfer is in progress, and the transfer then completes. */
static void test_malformed_segments(void **state)
{
	struct xfer *x = xfer_new(600); /* 3 segments */
	struct imc_rmpp_receiver *r;
	uint8_t b[IMC_MAD_SIZE], st;
	uint32_t want_last = 1;

	(void)state;
	assert_int_equal(imc_rmpp_receiver_create(x->len, 32, &r), 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);

#define BAD(k, edit, err, status)                                          \
	do {                                                                 \
		memcpy(b, x->seg[k], 256);                                   \
		edit;                                                        \
		st = 0xee;                                                   \
		assert_int_equal(imc_rmpp_receiver_recv(r, b, 256, &st), err); \
		assert_int_equal(st, status);                                \
		assert_int_equal(imc_rmpp_receiver_last(r), want_last);      \
		assert_int_equal(imc_rmpp_receiver_state(r), IMC_RMPP_ACTIVE); \
	} while (0)

	BAD(2, b[O_RVER] = 2, -EPROTONOSUPPORT, IMC_RMPP_STATUS_UNV);
	BAD(2, b[O_RVER] = 0, -EPROTONOSUPPORT, IMC_RMPP_STATUS_UNV);
	BAD(2, b[O_RFLAGS] &= (uint8_t)~IMC_RMPP_FLAG_ACTIVE, -ENOMSG, 0);
	BAD(2, b[O_TID + 7] ^= 0x40, -ESRCH, 0);
	BAD(2, b[O_METHOD] = 0x81, -ESRCH, 0);
	BAD(2, b[17] = 0x35, -ESRCH, 0);
	BAD(2, b[1] = 0x04, -ENOMSG, 0);
	BAD(2, b[0] = 2, -ENOMSG, 0);
	BAD(3, b[O_RFLAGS] |= IMC_RMPP_FLAG_FIRST, -EPROTO,
	    IMC_RMPP_STATUS_BAD_SEG);
	BAD(2, put32(b + O_SEG, 0), -EPROTO, IMC_RMPP_STATUS_BAD_SEG);
	BAD(2, put32(b + O_SEG, 1), -EPROTO, IMC_RMPP_STATUS_BAD_SEG);
	BAD(2, b[O_RTYPE] = 0, -EBADMSG, IMC_RMPP_STATUS_BADT);
	BAD(2, b[O_RTYPE] = 9, -EBADMSG, IMC_RMPP_STATUS_BADT);
	BAD(2, b[O_RTYPE] = IMC_RMPP_TYPE_ACK, -ENOMSG, 0);
	BAD(2, b[O_RSTATUS] = 1, -EBADMSG, IMC_RMPP_STATUS_BAD_STATUS);
	/* STOP/ABORT with the wrong status for its type. */
	BAD(2, (b[O_RTYPE] = IMC_RMPP_TYPE_ABORT, b[O_RSTATUS] = 1), -EBADMSG,
	    IMC_RMPP_STATUS_BAD_STATUS);
	BAD(2, (b[O_RTYPE] = IMC_RMPP_TYPE_STOP, b[O_RSTATUS] = 120), -EBADMSG,
	    IMC_RMPP_STATUS_BAD_STATUS);
	/* A STOP/ABORT of another transaction. */
	BAD(2, (b[O_RTYPE] = IMC_RMPP_TYPE_ABORT, b[O_RSTATUS] = 120,
		b[O_TID] = 1), -ESRCH, 0);
	/* Short and long MADs. */
	st = 0xee;
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 255, &st),
			 -EMSGSIZE);
	assert_int_equal(st, 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 0, &st),
			 -EMSGSIZE);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 257, &st),
			 -EMSGSIZE);
	/* Segment 1 of another transfer does not restart this one. */
	BAD(1, b[O_TID] = 7, -ESRCH, 0);

	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED);
	want_last = 2;
	/* LAST PayloadLength outside 20..220 (its SA header plus at most
	 * 200 data bytes). */
	BAD(3, put32(b + O_PAYLEN, 221), -EPROTO, IMC_RMPP_STATUS_BAD_LEN);
	BAD(3, put32(b + O_PAYLEN, 19), -EPROTO, IMC_RMPP_STATUS_BAD_LEN);
	BAD(3, put32(b + O_PAYLEN, 0), -EPROTO, IMC_RMPP_STATUS_BAD_LEN);
	BAD(3, put32(b + O_PAYLEN, 0xffffffff), -EPROTO,
	    IMC_RMPP_STATUS_BAD_LEN);
	/* A segment ahead of the next expected is a gap, not an error. */
	BAD(3, put32(b + O_SEG, 4), IMC_RMPP_RX_ACK | IMC_RMPP_RX_GAP, 0);
#undef BAD

	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[3], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK |
				 IMC_RMPP_RX_DONE);
	assert_payload(r, x);
	imc_rmpp_receiver_destroy(r);
	xfer_free(x);
}

/* Before any transfer: only segment 1 starts one; a bad first segment
 * leaves the receiver IDLE for the right one. */
static void test_first_segment(void **state)
{
	struct xfer *x = xfer_new(600);
	struct imc_rmpp_receiver *r;
	uint8_t b[IMC_MAD_SIZE], st, *p;
	size_t n;

	(void)state;
	assert_int_equal(imc_rmpp_receiver_create(x->len, 32, &r), 0);
	assert_null(imc_rmpp_receiver_first(r));
	assert_int_equal(imc_rmpp_receiver_ack_pack(r, b, 256), -EINVAL);
	assert_int_equal(imc_rmpp_receiver_abort_pack(r, 118, b, 256), -EINVAL);
	assert_int_equal(imc_rmpp_receiver_take(r, &p, &n), -EAGAIN);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 256, &st), -ESRCH);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[3], 256, &st), -ESRCH);
	memcpy(b, x->seg[1], 256);
	b[O_RFLAGS] &= (uint8_t)~IMC_RMPP_FLAG_FIRST;
	assert_int_equal(imc_rmpp_receiver_recv(r, b, 256, &st), -EPROTO);
	assert_int_equal(st, IMC_RMPP_STATUS_BAD_SEG);
	memcpy(b, x->seg[1], 256);
	b[O_RTYPE] = IMC_RMPP_TYPE_ABORT;
	b[O_RSTATUS] = 118;
	assert_int_equal(imc_rmpp_receiver_recv(r, b, 256, &st), -ESRCH);
	assert_int_equal(imc_rmpp_receiver_state(r), IMC_RMPP_IDLE);
	assert_int_equal(imc_rmpp_receiver_last(r), 0);

	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256, &st),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
	assert_int_equal(imc_rmpp_receiver_take(r, &p, &n), -EAGAIN);
	assert_non_null(imc_rmpp_receiver_first(r));
	assert_int_equal(imc_rmpp_receiver_first(r)->sa.attr_offset, 7);
	assert_int_equal(imc_rmpp_receiver_first(r)->rmpp.paylen_newwin, 660);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[3], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK |
				 IMC_RMPP_RX_DONE);
	assert_payload(r, x);
	imc_rmpp_receiver_destroy(r);
	xfer_free(x);

	assert_int_equal(imc_rmpp_receiver_create(1, 0, &r), -EINVAL);
	assert_int_equal(imc_rmpp_receiver_create(1, IMC_RMPP_MAX_WINDOW + 1,
						  &r),
			 -EINVAL);
	assert_int_equal(imc_rmpp_receiver_create(1, IMC_RMPP_MAX_WINDOW, &r),
			 0);
	imc_rmpp_receiver_destroy(r);
	imc_rmpp_receiver_destroy(NULL);
}

/* The LAST segment's PayloadLength alone fixes the length (trimmed to
 * its data); the first segment's total is a hint, so a sender that counts
 * it another way (20 + data, or 0 for unknown) still gets through. */
static void test_last_length_rules(void **state)
{
	struct xfer *x = xfer_new(600);
	struct imc_rmpp_receiver *r;
	uint8_t b1[IMC_MAD_SIZE], b3[IMC_MAD_SIZE], *p;
	size_t n;

	(void)state;
	for (int variant = 0; variant < 3; variant++) {
		static const uint32_t first[] = { 660, 620, 0 };
		static const uint32_t last[] = { 219, 220, 20 };
		static const size_t len[] = { 599, 600, 400 };

		memcpy(b1, x->seg[1], 256);
		put32(b1 + O_PAYLEN, first[variant]);
		memcpy(b3, x->seg[3], 256);
		put32(b3 + O_PAYLEN, last[variant]);
		assert_int_equal(imc_rmpp_receiver_create(600, 32, &r), 0);
		assert_int_equal(imc_rmpp_receiver_recv(r, b1, 256, NULL),
				 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
		assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 256,
							NULL),
				 IMC_RMPP_RX_ACCEPTED);
		assert_int_equal(imc_rmpp_receiver_recv(r, b3, 256, NULL),
				 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK |
					 IMC_RMPP_RX_DONE);
		assert_int_equal(imc_rmpp_receiver_take(r, &p, &n), 0);
		assert_int_equal(n, len[variant]);
		assert_memory_equal(p, x->payload, n);
		imc_rmpp_payload_free(p);
		imc_rmpp_receiver_destroy(r);
	}
	xfer_free(x);
}

/* The size limit: a first segment announcing more is refused (STOP ResX
 * would answer it) and a later right-sized transfer still completes; a
 * transfer of unknown length (first PayloadLength 0) that outgrows the
 * limit has its segment refused. */
static void test_size_limit(void **state)
{
	struct xfer *big = xfer_new(601), *ok = xfer_new(400), *one;
	struct imc_rmpp_receiver *r;
	uint8_t b[IMC_MAD_SIZE], st;

	(void)state;
	assert_int_equal(imc_rmpp_receiver_create(400, 32, &r), 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, big->seg[1], 256, &st),
			 -EFBIG);
	assert_int_equal(st, IMC_RMPP_STATUS_RESX);
	assert_int_equal(imc_rmpp_receiver_state(r), IMC_RMPP_IDLE);
	/* The STOP that answers it. */
	assert_int_equal(imc_rmpp_nak_pack(big->seg[1], 256, st, b, 256), 256);
	assert_int_equal(b[O_RTYPE], IMC_RMPP_TYPE_STOP);
	assert_int_equal(b[O_RSTATUS], 1);
	assert_int_equal(b[O_METHOD], 0x12);

	assert_int_equal(imc_rmpp_receiver_recv(r, ok->seg[1], 256, &st),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
	assert_int_equal(imc_rmpp_receiver_recv(r, ok->seg[2], 256, &st),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK |
				 IMC_RMPP_RX_DONE);
	assert_payload(r, ok);
	imc_rmpp_receiver_destroy(r);

	/* Unknown length: 601 bytes arrive as 200 + 200 + 200 + 1. */
	assert_int_equal(imc_rmpp_receiver_create(400, 32, &r), 0);
	memcpy(b, big->seg[1], 256);
	put32(b + O_PAYLEN, 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, b, 256, &st),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
	assert_int_equal(imc_rmpp_receiver_recv(r, big->seg[2], 256, &st),
			 IMC_RMPP_RX_ACCEPTED);
	assert_int_equal(imc_rmpp_receiver_recv(r, big->seg[3], 256, &st),
			 -EFBIG);
	assert_int_equal(st, IMC_RMPP_STATUS_RESX);
	assert_int_equal(imc_rmpp_receiver_last(r), 2);
	assert_int_equal(imc_rmpp_receiver_state(r), IMC_RMPP_ACTIVE);
	/* The receiver ends it with a STOP of its own. */
	assert_int_equal(imc_rmpp_receiver_abort_pack(r, 1, b, 256), 256);
	assert_int_equal(b[O_RTYPE], IMC_RMPP_TYPE_STOP);
	assert_int_equal(b[O_RSTATUS], 1);
	assert_int_equal(b[O_METHOD], 0x12);
	assert_int_equal(be32(b + O_SEG), 0);
	imc_rmpp_receiver_destroy(r);

	/* A single LAST segment over the limit. */
	one = xfer_new(150);
	assert_int_equal(imc_rmpp_receiver_create(149, 32, &r), 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, one->seg[1], 256, &st),
			 -EFBIG);
	assert_int_equal(st, IMC_RMPP_STATUS_RESX);
	imc_rmpp_receiver_destroy(r);
	/* And at the limit exactly; limit 0 takes the empty table only. */
	assert_int_equal(imc_rmpp_receiver_create(150, 32, &r), 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, one->seg[1], 256, &st),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK |
				 IMC_RMPP_RX_DONE);
	assert_payload(r, one);
	imc_rmpp_receiver_destroy(r);
	xfer_free(one);
	one = xfer_new(0);
	assert_int_equal(imc_rmpp_receiver_create(0, 32, &r), 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, ok->seg[1], 256, &st),
			 -EFBIG);
	assert_int_equal(imc_rmpp_receiver_recv(r, one->seg[1], 256, &st),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK |
				 IMC_RMPP_RX_DONE);
	assert_payload(r, one);
	imc_rmpp_receiver_destroy(r);
	xfer_free(one);
	xfer_free(ok);
	xfer_free(big);
}

/* STOP and ABORT from the sender end the transfer; the receiver's own
 * ABORT (e.g. its transfer timer, T2L) carries its headers. */
static void test_receiver_stop_abort(void **state)
{
	struct xfer *x = xfer_new(600);
	struct imc_rmpp_receiver *r;
	uint8_t b[IMC_MAD_SIZE], st, *p;
	size_t n;

	(void)state;
	for (int type = IMC_RMPP_TYPE_STOP; type <= IMC_RMPP_TYPE_ABORT;
	     type++) {
		uint8_t status = type == IMC_RMPP_TYPE_STOP ? 1 : 126;

		assert_int_equal(imc_rmpp_receiver_create(x->len, 32, &r), 0);
		assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256,
							NULL),
				 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
		memcpy(b, x->seg[1], 256);
		b[O_RTYPE] = (uint8_t)type;
		b[O_RSTATUS] = status;
		b[O_RFLAGS] = IMC_RMPP_FLAG_ACTIVE;
		assert_int_equal(imc_rmpp_receiver_recv(r, b, 256, &st),
				 -ECONNABORTED);
		assert_int_equal(st, 0);
		assert_int_equal(imc_rmpp_receiver_state(r),
				 type == IMC_RMPP_TYPE_STOP ? IMC_RMPP_STOPPED :
							      IMC_RMPP_ABORTED);
		assert_int_equal(imc_rmpp_receiver_status(r), status);
		assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 256,
							NULL),
				 -ECONNABORTED);
		assert_int_equal(imc_rmpp_receiver_recv(r, b, 256, NULL),
				 -ECONNABORTED);
		assert_int_equal(imc_rmpp_receiver_take(r, &p, &n), -EAGAIN);
		imc_rmpp_receiver_destroy(r);
	}

	assert_int_equal(imc_rmpp_receiver_create(x->len, 32, &r), 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
	assert_int_equal(imc_rmpp_receiver_abort_pack(r, 0, b, 256), -EINVAL);
	assert_int_equal(imc_rmpp_receiver_abort_pack(r, 2, b, 256), -EINVAL);
	assert_int_equal(imc_rmpp_receiver_abort_pack(r, 128, b, 256), -EINVAL);
	assert_int_equal(imc_rmpp_receiver_abort_pack(r, 118, b, 255), -ENOSPC);
	assert_int_equal(imc_rmpp_receiver_abort_pack(r, 118, b, 256), 256);
	assert_int_equal(b[O_METHOD], 0x12);
	assert_int_equal(b[O_RTYPE], IMC_RMPP_TYPE_ABORT);
	assert_int_equal(b[O_RSTATUS], 118);
	/* An ABORT after DONE is ignored. */
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[2], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[3], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK |
				 IMC_RMPP_RX_DONE);
	memcpy(b, x->seg[1], 256);
	b[O_RTYPE] = IMC_RMPP_TYPE_ABORT;
	b[O_RSTATUS] = 118;
	assert_int_equal(imc_rmpp_receiver_recv(r, b, 256, NULL), -EALREADY);
	assert_int_equal(imc_rmpp_receiver_state(r), IMC_RMPP_DONE);
	/* The payload is freed by destroy when not taken (ASan checks). */
	imc_rmpp_receiver_destroy(r);
	xfer_free(x);
}

/* ACK and NAK MADs byte by byte. */
static void test_ack_nak_bytes(void **state)
{
	struct xfer *x = xfer_new(600);
	struct imc_rmpp_receiver *r;
	uint8_t b[IMC_MAD_SIZE];

	(void)state;
	assert_int_equal(imc_rmpp_receiver_create(x->len, 32, &r), 0);
	assert_int_equal(imc_rmpp_receiver_recv(r, x->seg[1], 256, NULL),
			 IMC_RMPP_RX_ACCEPTED | IMC_RMPP_RX_ACK);
	assert_int_equal(imc_rmpp_receiver_ack_pack(r, b, 255), -ENOSPC);
	assert_int_equal(imc_rmpp_receiver_ack_pack(r, b, 256), 256);
	/* Headers of segment 1, method GetTableResp -> GetTable. */
	assert_memory_equal(b, x->seg[1], 3);
	assert_int_equal(b[O_METHOD], 0x12);
	assert_memory_equal(b + 4, x->seg[1] + 4, 20);
	assert_memory_equal(b + 36, x->seg[1] + 36, 20);
	/* 01 02 F9 00 | 00000001 | 00000021: ACK of 1, window to 33. */
	static const uint8_t rmpp[12] = { 0x01, 0x02, 0xf9, 0x00, 0, 0, 0, 1,
					  0, 0, 0, 33 };
	assert_memory_equal(b + 24, rmpp, 12);
	for (int i = O_DATA; i < 256; i++)
		assert_int_equal(b[i], 0);
	imc_rmpp_receiver_destroy(r);

	/* NAK of segment 2 with BAD_SEG: an ABORT, SegmentNumber 0. */
	assert_int_equal(imc_rmpp_nak_pack(x->seg[2], 256, 120, b, 256), 256);
	static const uint8_t abort_hdr[12] = { 0x01, 0x04, 0xf9, 120, 0, 0, 0,
					       0, 0, 0, 0, 0 };
	assert_memory_equal(b + 24, abort_hdr, 12);
	assert_int_equal(b[O_METHOD], 0x12);
	assert_memory_equal(b + 8, x->seg[2] + 8, 8);
	assert_int_equal(imc_rmpp_nak_pack(x->seg[2], 256, 0, b, 256), -EINVAL);
	assert_int_equal(imc_rmpp_nak_pack(x->seg[2], 256, 117, b, 256),
			 -EINVAL);
	assert_int_equal(imc_rmpp_nak_pack(x->seg[2], 255, 120, b, 256),
			 -EMSGSIZE);
	assert_int_equal(imc_rmpp_nak_pack(x->seg[2], 256, 120, b, 255),
			 -ENOSPC);
	xfer_free(x);
}

/* Lossy, reordering, duplicating channel in both directions. The sender's
 * timer fires whenever nothing is in flight. */
struct chan {
	uint8_t (*q)[IMC_MAD_SIZE];
	size_t n, cap;
};

static void push(struct chan *c, const uint8_t *mad, unsigned drop_pct,
		 unsigned dup_pct)
{
	int copies = 1;

	if (rnd() % 100 < drop_pct)
		return;
	if (rnd() % 100 < dup_pct)
		copies = 2;
	while (copies--) {
		if (c->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 16;
			c->q = realloc(c->q, c->cap * IMC_MAD_SIZE);
			assert_non_null(c->q);
		}
		memcpy(c->q[c->n++], mad, IMC_MAD_SIZE);
	}
}

static void pop_any(struct chan *c, uint8_t *mad)
{
	size_t i = rnd() % c->n;

	memcpy(mad, c->q[i], IMC_MAD_SIZE);
	memmove(c->q[i], c->q[i + 1], (c->n - i - 1) * IMC_MAD_SIZE);
	c->n--;
}

static void lossy_run(uint64_t seed, size_t len, uint32_t window)
{
	struct xfer *x;
	struct imc_rmpp_sender *s;
	struct imc_rmpp_receiver *r;
	struct chan down = { 0 }, up = { 0 };
	uint8_t mad[IMC_MAD_SIZE];
	int seg, max_seg = 0, steps = 0;

	rng = seed;
	x = xfer_new(len);
	assert_int_equal(imc_rmpp_sender_create(&x->tmpl, len, 100, &s), 0);
	assert_int_equal(imc_rmpp_receiver_create(len, window, &r), 0);
	while (imc_rmpp_sender_state(s) != IMC_RMPP_DONE) {
		int rc;

		if (++steps > 200000) {
			print_message("lossy_run: no progress, seed %llu\n",
				      (unsigned long long)seed);
			fail();
		}
		while ((seg = imc_rmpp_sender_next(s)) > 0) {
			if (seg > max_seg)
				max_seg = seg;
			/* Outstanding never exceeds the granted window. */
			if ((uint32_t)max_seg - imc_rmpp_sender_acked(s) >
			    window) {
				print_message("window exceeded, seed %llu\n",
					      (unsigned long long)seed);
				fail();
			}
			push(&down, x->seg[seg], 15, 10);
		}
		assert_int_equal(seg, 0);
		if (!down.n && !up.n) {
			assert_int_equal(imc_rmpp_sender_timeout(s), 0);
			continue;
		}
		if (down.n && (!up.n || rnd() % 2)) {
			pop_any(&down, mad);
			rc = imc_rmpp_receiver_recv(r, mad, 256, NULL);
			assert_true(rc >= 0);
			if (rc & IMC_RMPP_RX_ACK) {
				imc_rmpp_receiver_ack_pack(r, mad, 256);
				push(&up, mad, 15, 10);
			}
		} else {
			pop_any(&up, mad);
			rc = imc_rmpp_sender_recv(s, mad, 256);
			assert_true(rc == 0 || rc == -EALREADY);
		}
	}
	assert_payload(r, x);
	free(down.q);
	free(up.q);
	imc_rmpp_sender_destroy(s);
	imc_rmpp_receiver_destroy(r);
	xfer_free(x);
}

static void test_lossy_channel(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 60; seed++)
		lossy_run(seed, (size_t)(seed * 97 % 6000),
			  (uint32_t)(seed % 7) + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_segment_count),
		cmocka_unit_test(test_segment_headers),
		cmocka_unit_test(test_segment_pack_errors),
		cmocka_unit_test(test_round_trip_sizes),
		cmocka_unit_test(test_window_acks),
		cmocka_unit_test(test_sender_window),
		cmocka_unit_test(test_reorder),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_lost_acks),
		cmocka_unit_test(test_sender_retries),
		cmocka_unit_test(test_sender_ack_checks),
		cmocka_unit_test(test_malformed_segments),
		cmocka_unit_test(test_first_segment),
		cmocka_unit_test(test_last_length_rules),
		cmocka_unit_test(test_size_limit),
		cmocka_unit_test(test_receiver_stop_abort),
		cmocka_unit_test(test_ack_nak_bytes),
		cmocka_unit_test(test_lossy_channel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
