/* RMPP receiver (IBA 13.6.3.3) on arbitrary MADs: the input is cut into
 * 256-byte MADs fed to one receiver, whose answers are checked against a
 * shadow copy of what it accepted. The same input is then used as an SA
 * payload: segmenting it and reassembling the segments must give back the
 * same bytes. Any broken property aborts. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/rmpp.h"
#include "util/bytes.h"

#define LIMIT 1000
#define WINDOW 3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static bool known_error(int rc, uint8_t st)
{
	switch (rc) {
	case -EMSGSIZE:
	case -ENOMSG:
	case -ESRCH:
	case -EALREADY:
	case -ECONNABORTED:
		return st == 0;
	case -EPROTONOSUPPORT:
		return st == IMC_RMPP_STATUS_UNV;
	case -EBADMSG:
		return st == IMC_RMPP_STATUS_BADT ||
		       st == IMC_RMPP_STATUS_BAD_STATUS;
	case -EPROTO:
		return st == IMC_RMPP_STATUS_BAD_SEG ||
		       st == IMC_RMPP_STATUS_BAD_LEN ||
		       st == IMC_RMPP_STATUS_S2B;
	case -EFBIG:
		return st == IMC_RMPP_STATUS_RESX;
	default:
		return false;
	}
}

static void check_ack(const struct imc_rmpp_receiver *r)
{
	uint8_t b[IMC_MAD_SIZE];
	struct imc_sa_mad m;

	check(imc_rmpp_receiver_ack_pack(r, b, sizeof(b)) == IMC_MAD_SIZE);
	check(imc_sa_mad_unpack(&m, b, sizeof(b)) == IMC_MAD_SIZE);
	check(m.rmpp.version == IMC_RMPP_VERSION);
	check(m.rmpp.type == IMC_RMPP_TYPE_ACK);
	check(m.rmpp.flags == IMC_RMPP_FLAG_ACTIVE);
	check(m.rmpp.seg_num == imc_rmpp_receiver_last(r));
	check(m.rmpp.paylen_newwin >= m.rmpp.seg_num);
	/* Never more than the window outstanding past the ACKed point. */
	check(m.rmpp.paylen_newwin - m.rmpp.seg_num <= WINDOW);
	check(m.mad.tid == imc_rmpp_receiver_first(r)->mad.tid);
}

static void feed(const uint8_t *data, size_t size)
{
	struct imc_rmpp_receiver *r;
	uint8_t shadow[LIMIT + IMC_SA_DATA_SIZE];
	size_t shadow_len = 0;

	check(imc_rmpp_receiver_create(LIMIT, WINDOW, &r) == 0);
	for (size_t off = 0; off < size; off += IMC_MAD_SIZE) {
		const uint8_t *mad = data + off;
		size_t n = size - off < IMC_MAD_SIZE ? size - off : IMC_MAD_SIZE;
		enum imc_rmpp_state before = imc_rmpp_receiver_state(r), after;
		uint32_t last = imc_rmpp_receiver_last(r);
		uint8_t st = 0xee;
		int rc = imc_rmpp_receiver_recv(r, mad, n, &st);

		after = imc_rmpp_receiver_state(r);
		if (n < IMC_MAD_SIZE)
			check(rc == -EMSGSIZE);
		if (rc < 0) {
			check(known_error(rc, st));
			check(imc_rmpp_receiver_last(r) == last);
			/* Only the sender's STOP/ABORT moves a rejected MAD's
			 * receiver, and only out of ACTIVE. */
			if (before != after)
				check(rc == -ECONNABORTED &&
				      before == IMC_RMPP_ACTIVE &&
				      (after == IMC_RMPP_STOPPED ||
				       after == IMC_RMPP_ABORTED));
			continue;
		}
		check(st == 0);
		check((rc & ~0x1f) == 0);
		check(mad[IMC_MAD_HDR_SIZE + 1] == IMC_RMPP_TYPE_DATA);
		if (rc & IMC_RMPP_RX_ACCEPTED) {
			check(!(rc & (IMC_RMPP_RX_DUPLICATE | IMC_RMPP_RX_GAP)));
			check(imc_rmpp_receiver_last(r) == last + 1);
			check(imc_get32(mad + IMC_MAD_HDR_SIZE + 4) == last + 1);
			check(shadow_len + IMC_SA_DATA_SIZE <= sizeof(shadow));
			memcpy(shadow + shadow_len, mad + IMC_SA_DATA_OFFSET,
			       IMC_SA_DATA_SIZE);
			shadow_len += IMC_SA_DATA_SIZE;
			check(shadow_len <= LIMIT + IMC_SA_DATA_SIZE);
		} else {
			check(imc_rmpp_receiver_last(r) == last);
			check(rc & IMC_RMPP_RX_ACK);
		}
		if (rc & IMC_RMPP_RX_DONE) {
			uint8_t *p = NULL;
			size_t len = 0;
			uint32_t paylen = imc_get32(mad + IMC_MAD_HDR_SIZE + 8);

			/* Completion only on an in-order LAST segment. */
			check(rc & IMC_RMPP_RX_ACCEPTED);
			check(mad[IMC_MAD_HDR_SIZE + 2] & IMC_RMPP_FLAG_LAST);
			check(before != IMC_RMPP_DONE && after == IMC_RMPP_DONE);
			check(imc_rmpp_receiver_take(r, &p, &len) == 0);
			check(p != NULL && len <= LIMIT);
			check(len == (size_t)last * IMC_SA_DATA_SIZE + paylen -
					     IMC_SA_HDR_SIZE);
			check(memcmp(p, shadow, len) == 0);
			imc_rmpp_payload_free(p);
			check(imc_rmpp_receiver_take(r, &p, &len) == -EALREADY);
		} else {
			check(after == before ||
			      (before == IMC_RMPP_IDLE && after == IMC_RMPP_ACTIVE));
			check(after != IMC_RMPP_DONE || before == IMC_RMPP_DONE);
		}
		if (rc & IMC_RMPP_RX_ACK)
			check_ack(r);
	}
	imc_rmpp_receiver_destroy(r);
}

/* Segment the input as a payload; deliver every segment, the ones picked
 * by the input's bytes twice, and some ahead of time (a gap); the
 * reassembled payload must be the input. */
static void round_trip(const uint8_t *data, size_t size)
{
	struct imc_sa_mad t;
	struct imc_rmpp_sender *s;
	struct imc_rmpp_receiver *r;
	uint8_t seg[IMC_MAD_SIZE], ack[IMC_MAD_SIZE], *p = NULL;
	uint32_t window = size ? (uint32_t)(data[0] % 4) + 1 : 1;
	size_t len = 0;
	int k, n = imc_rmpp_segment_count(size), guard = 0;

	check(n >= 1);
	memset(&t, 0, sizeof(t));
	t.mad.base_version = 1;
	t.mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
	t.mad.class_version = 2;
	t.mad.method = 0x92;
	t.mad.tid = size;
	t.mad.attr_id = 0x38;
	t.sa.attr_offset = 7;
	check(imc_rmpp_sender_create(&t, size, 4, &s) == 0);
	check(imc_rmpp_receiver_create(size, window, &r) == 0);
	while (imc_rmpp_sender_state(s) == IMC_RMPP_ACTIVE) {
		check(++guard < 10000);
		while ((k = imc_rmpp_sender_next(s)) > 0) {
			uint8_t pick = data[(size_t)k % size];
			int rc, copies = pick & 1 ? 2 : 1;

			check(imc_rmpp_segment_pack(&t, data, size, (uint32_t)k,
						    0, seg, sizeof(seg)) ==
			      IMC_MAD_SIZE);
			/* An early look at the next segment is a gap (once
			 * segment 1 has opened the transfer). */
			if (pick & 2 && k > 1 && k < n &&
			    imc_rmpp_receiver_last(r) == (uint32_t)k - 1) {
				uint8_t ahead[IMC_MAD_SIZE];

				check(imc_rmpp_segment_pack(&t, data, size,
							    (uint32_t)k + 1, 0,
							    ahead,
							    sizeof(ahead)) ==
				      IMC_MAD_SIZE);
				rc = imc_rmpp_receiver_recv(r, ahead,
							    sizeof(ahead),
							    NULL);
				check(rc == (IMC_RMPP_RX_ACK | IMC_RMPP_RX_GAP));
			}
			while (copies--) {
				rc = imc_rmpp_receiver_recv(r, seg, sizeof(seg),
							    NULL);
				check(rc > 0);
				if (!(rc & IMC_RMPP_RX_ACK))
					continue;
				check(imc_rmpp_receiver_ack_pack(
					      r, ack, sizeof(ack)) ==
				      IMC_MAD_SIZE);
				rc = imc_rmpp_sender_recv(s, ack, sizeof(ack));
				check(rc == 0 || rc == -EALREADY);
			}
		}
		check(k == 0);
		if (imc_rmpp_sender_state(s) == IMC_RMPP_ACTIVE)
			check(imc_rmpp_sender_timeout(s) == 0);
	}
	check(imc_rmpp_sender_state(s) == IMC_RMPP_DONE);
	check(imc_rmpp_receiver_take(r, &p, &len) == 0);
	check(len == size && (size == 0 || memcmp(p, data, size) == 0));
	imc_rmpp_payload_free(p);
	imc_rmpp_sender_destroy(s);
	imc_rmpp_receiver_destroy(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	feed(data, size);
	if (size)
		round_trip(data, size);
	return 0;
}
