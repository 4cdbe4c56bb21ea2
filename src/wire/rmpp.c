/* RMPP segmentation, sender window and receiver reassembly for SA MADs
 * (IBA 13.6).
 *
 * Sender states:
 *   ACTIVE  --last segment ACKed-->             DONE
 *   ACTIVE  --STOP received-->                  STOPPED
 *   ACTIVE  --ABORT received / bad MAD / TMR--> ABORTED
 *
 * Receiver states:
 *   IDLE    --segment 1 accepted-->             ACTIVE (DONE if also LAST)
 *   ACTIVE  --LAST accepted in order-->         DONE
 *   ACTIVE  --STOP / ABORT received-->          STOPPED / ABORTED
 * DONE, STOPPED and ABORTED are final. A rejected MAD never moves either
 * side except as listed (the sender aborts on a protocol violation, IBA
 * 13.6.3.2; the receiver only drops it).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/rmpp.h"

enum {
	SEG_DATA = IMC_RMPP_SEG_DATA,
	SEG_HDR = IMC_SA_HDR_SIZE,
	RESP_BIT = UMAD_METHOD_RESP_MASK,
};

/* The one transition table of both sides (the comment above); a sender
 * starts ACTIVE, so it never passes through IDLE. */
static void state_set(enum imc_rmpp_state *cur, enum imc_rmpp_state to)
{
	bool ok;

	switch (*cur) {
	case IMC_RMPP_IDLE:
		ok = to == IMC_RMPP_ACTIVE || to == IMC_RMPP_DONE;
		break;
	case IMC_RMPP_ACTIVE:
		ok = to == IMC_RMPP_DONE || to == IMC_RMPP_STOPPED ||
		     to == IMC_RMPP_ABORTED;
		break;
	default:
		ok = false;
		break;
	}
	if (ok)
		*cur = to;
}

/* ------------------------------------------------------------------ */
/* Segmentation */

static uint64_t seg_count(uint64_t payload_len)
{
	uint64_t n = payload_len / SEG_DATA + (payload_len % SEG_DATA != 0);

	return n ? n : 1;
}

int imc_rmpp_segment_count(size_t payload_len)
{
	uint64_t n = seg_count(payload_len);

	/* The first segment's PayloadLength carries payload_len plus one SA
	 * header per segment in 32 bits (IBA 13.6.2.3). */
	if ((uint64_t)payload_len > UINT32_MAX ||
	    (uint64_t)payload_len + SEG_HDR * n > UINT32_MAX)
		return -EMSGSIZE;
	return (int)n;
}

int imc_rmpp_segment_pack(const struct imc_sa_mad *tmpl, const uint8_t *payload,
			  size_t payload_len, uint32_t seg_num,
			  uint8_t resp_time, uint8_t *buf, size_t len)
{
	struct imc_sa_mad m;
	size_t off, chunk;
	int n;

	if (!tmpl || !buf || (!payload && payload_len))
		return -EINVAL;
	n = imc_rmpp_segment_count(payload_len);
	if (n < 0)
		return n;
	if (seg_num == 0 || seg_num > (uint32_t)n ||
	    resp_time > IMC_RMPP_NO_RESP_TIME)
		return -EINVAL;
	if (len < IMC_MAD_SIZE)
		return -ENOSPC;

	off = (size_t)(seg_num - 1) * SEG_DATA;
	chunk = payload_len - off < SEG_DATA ? payload_len - off : SEG_DATA;

	m.mad = tmpl->mad;
	m.sa = tmpl->sa;
	m.rmpp.version = IMC_RMPP_VERSION;
	m.rmpp.type = IMC_RMPP_TYPE_DATA;
	m.rmpp.resp_time = resp_time;
	m.rmpp.flags = IMC_RMPP_FLAG_ACTIVE;
	m.rmpp.status = IMC_RMPP_STATUS_OK;
	m.rmpp.seg_num = seg_num;
	m.rmpp.paylen_newwin = 0;
	/* IBA 13.6.2.3; Linux send_next_seg(), OpenSM
	 * osmv_rmpp_send_ctx_get_seg(): the SA header counts once per
	 * segment. A single segment is both first and last. */
	if (seg_num == 1) {
		m.rmpp.flags |= IMC_RMPP_FLAG_FIRST;
		m.rmpp.paylen_newwin =
			(uint32_t)(payload_len + (size_t)SEG_HDR * (size_t)n);
	}
	if (seg_num == (uint32_t)n) {
		m.rmpp.flags |= IMC_RMPP_FLAG_LAST;
		m.rmpp.paylen_newwin = (uint32_t)(SEG_HDR + chunk);
	}
	if (chunk)
		memcpy(m.data, payload + off, chunk);
	memset(m.data + chunk, 0, sizeof(m.data) - chunk);
	return imc_sa_mad_pack(&m, buf, len);
}

/* An ACK, STOP or ABORT built on a segment's headers. */
static int ctl_pack(const struct imc_mad_hdr *mad, const struct imc_sa_hdr *sa,
		    bool flip, uint8_t type, uint8_t status, uint32_t seg,
		    uint32_t newwin, uint8_t *buf, size_t len)
{
	struct imc_sa_mad m;

	memset(&m, 0, sizeof(m));
	m.mad = *mad;
	/* The answer goes the other way: Linux format_ack()/nack_recv()
	 * and OpenSM osmv_rmpp_send_ack() flip the response bit. */
	if (flip)
		m.mad.method ^= RESP_BIT;
	m.sa = *sa;
	m.rmpp.version = IMC_RMPP_VERSION;
	m.rmpp.type = type;
	m.rmpp.resp_time = IMC_RMPP_NO_RESP_TIME;
	m.rmpp.flags = IMC_RMPP_FLAG_ACTIVE;
	m.rmpp.status = status;
	m.rmpp.seg_num = seg;
	m.rmpp.paylen_newwin = newwin;
	return imc_sa_mad_pack(&m, buf, len);
}

/* STOP carries RESX only; ABORT 118..127 (IBA 13.6.2.2). */
static int nak_type(uint8_t status)
{
	if (status == IMC_RMPP_STATUS_RESX)
		return IMC_RMPP_TYPE_STOP;
	if (status >= IMC_RMPP_STATUS_ABORT_MIN &&
	    status <= IMC_RMPP_STATUS_ABORT_MAX)
		return IMC_RMPP_TYPE_ABORT;
	return -EINVAL;
}

int imc_rmpp_nak_pack(const uint8_t *mad, size_t mad_len, uint8_t status,
		      uint8_t *buf, size_t len)
{
	struct imc_sa_mad m;
	int type, rc;

	if (!mad || !buf)
		return -EINVAL;
	type = nak_type(status);
	if (type < 0)
		return type;
	rc = imc_sa_mad_unpack(&m, mad, mad_len);
	if (rc < 0)
		return rc;
	return ctl_pack(&m.mad, &m.sa, true, (uint8_t)type, status, 0, 0, buf,
			len);
}

/* ------------------------------------------------------------------ */
/* Sender */

struct imc_rmpp_sender {
	enum imc_rmpp_state state;
	struct imc_mad_hdr mad;
	struct imc_sa_hdr sa;
	uint32_t count;        /* segments in the transfer */
	uint32_t next;         /* next segment next() hands out */
	uint32_t max_sent;     /* highest segment ever handed out */
	uint32_t acked;        /* highest segment ACKed */
	uint32_t window_last;  /* NewWindowLast of the receiver */
	unsigned retries;
	unsigned max_retries;
	uint8_t status;
};

int imc_rmpp_sender_create(const struct imc_sa_mad *tmpl, size_t payload_len,
			   unsigned max_retries, struct imc_rmpp_sender **out)
{
	struct imc_rmpp_sender *s;
	int n;

	if (!tmpl || !out)
		return -EINVAL;
	n = imc_rmpp_segment_count(payload_len);
	if (n < 0)
		return n;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->state = IMC_RMPP_ACTIVE;
	s->mad = tmpl->mad;
	s->sa = tmpl->sa;
	s->count = (uint32_t)n;
	s->next = 1;
	/* The sender may send one segment before the receiver's first ACK
	 * grants a window (Linux init_newwin(), OpenSM window_last = 1). */
	s->window_last = 1;
	s->max_retries = max_retries;
	*out = s;
	return 0;
}

void imc_rmpp_sender_destroy(struct imc_rmpp_sender *s)
{
	free(s);
}

int imc_rmpp_sender_next(struct imc_rmpp_sender *s)
{
	uint32_t limit;

	if (!s)
		return -EINVAL;
	if (s->state == IMC_RMPP_STOPPED || s->state == IMC_RMPP_ABORTED)
		return -ECONNABORTED;
	if (s->state != IMC_RMPP_ACTIVE)
		return 0;
	limit = s->window_last < s->count ? s->window_last : s->count;
	if (s->next > limit)
		return 0;
	if (s->next > s->max_sent)
		s->max_sent = s->next;
	return (int)s->next++;
}

static int tx_fail(struct imc_rmpp_sender *s, uint8_t status)
{
	state_set(&s->state, IMC_RMPP_ABORTED);
	s->status = status;
	return -EPROTO;
}

/* IBA 13.6.3.2 and Linux process_rmpp_ack(). */
static int tx_ack(struct imc_rmpp_sender *s, const struct imc_rmpp_hdr *h)
{
	uint32_t seg = h->seg_num, newwin = h->paylen_newwin;

	if (h->status != IMC_RMPP_STATUS_OK)
		return tx_fail(s, IMC_RMPP_STATUS_BAD_STATUS);
	if (newwin < seg)
		return tx_fail(s, IMC_RMPP_STATUS_W2S);
	/* Acknowledging a segment never sent. */
	if (seg > s->max_sent)
		return tx_fail(s, IMC_RMPP_STATUS_S2B);
	/* Late or repeated ACK: the window never shrinks. */
	if (seg < s->acked || newwin < s->window_last ||
	    (seg == s->acked && newwin == s->window_last))
		return -EALREADY;
	if (seg > s->acked) {
		s->acked = seg;
		s->retries = 0;
	}
	s->window_last = newwin;
	if (s->next <= s->acked)
		s->next = s->acked + 1;
	if (s->acked == s->count)
		state_set(&s->state, IMC_RMPP_DONE);
	return 0;
}

int imc_rmpp_sender_recv(struct imc_rmpp_sender *s, const uint8_t *mad,
			 size_t len)
{
	struct imc_mad_hdr mh;
	struct imc_rmpp_hdr h;

	if (!s || !mad)
		return -EINVAL;
	if (len != IMC_MAD_SIZE)
		return -EMSGSIZE;
	imc_mad_hdr_unpack(&mh, mad, len);
	imc_rmpp_hdr_unpack(&h, mad + IMC_MAD_HDR_SIZE, len - IMC_MAD_HDR_SIZE);
	if (!(h.flags & IMC_RMPP_FLAG_ACTIVE))
		return -ENOMSG;
	if (mh.tid != s->mad.tid || mh.mgmt_class != s->mad.mgmt_class)
		return -ESRCH;
	if (s->state == IMC_RMPP_DONE)
		return -EALREADY;
	if (s->state != IMC_RMPP_ACTIVE)
		return -ECONNABORTED;
	if (h.version != IMC_RMPP_VERSION)
		return tx_fail(s, IMC_RMPP_STATUS_UNV);

	switch (h.type) {
	case IMC_RMPP_TYPE_ACK:
		return tx_ack(s, &h);
	case IMC_RMPP_TYPE_STOP:
	case IMC_RMPP_TYPE_ABORT:
		if (nak_type(h.status) != h.type)
			return tx_fail(s, IMC_RMPP_STATUS_BAD_STATUS);
		state_set(&s->state, h.type == IMC_RMPP_TYPE_STOP
					     ? IMC_RMPP_STOPPED
					     : IMC_RMPP_ABORTED);
		s->status = h.status;
		return -ECONNABORTED;
	case IMC_RMPP_TYPE_DATA:
		return -ENOMSG;
	default:
		return tx_fail(s, IMC_RMPP_STATUS_BADT);
	}
}

int imc_rmpp_sender_timeout(struct imc_rmpp_sender *s)
{
	if (!s)
		return -EINVAL;
	if (s->state == IMC_RMPP_DONE)
		return -EALREADY;
	if (s->state != IMC_RMPP_ACTIVE)
		return -ECONNABORTED;
	if (++s->retries > s->max_retries) {
		state_set(&s->state, IMC_RMPP_ABORTED);
		s->status = IMC_RMPP_STATUS_TMR;
		return -ETIMEDOUT;
	}
	/* Go back N: resend from the first segment not acknowledged
	 * (IBA 13.6.3.2; Linux ib_retry_rmpp()). */
	s->next = s->acked + 1;
	return 0;
}

enum imc_rmpp_state imc_rmpp_sender_state(const struct imc_rmpp_sender *s)
{
	return s->state;
}

uint8_t imc_rmpp_sender_status(const struct imc_rmpp_sender *s)
{
	return s->status;
}

uint32_t imc_rmpp_sender_acked(const struct imc_rmpp_sender *s)
{
	return s->acked;
}

uint32_t imc_rmpp_sender_count(const struct imc_rmpp_sender *s)
{
	return s->count;
}

int imc_rmpp_sender_abort_pack(const struct imc_rmpp_sender *s, uint8_t *buf,
			       size_t len)
{
	if (!s || !buf || s->state != IMC_RMPP_ABORTED)
		return -EINVAL;
	return ctl_pack(&s->mad, &s->sa, false, IMC_RMPP_TYPE_ABORT, s->status,
			0, 0, buf, len);
}

/* ------------------------------------------------------------------ */
/* Receiver */

struct imc_rmpp_receiver {
	enum imc_rmpp_state state;
	size_t max_payload;
	uint32_t window;       /* segments granted per ACK */
	uint32_t last;         /* last segment received in order */
	uint32_t newwin;       /* NewWindowLast granted */
	uint8_t status;
	struct imc_sa_mad first;
	uint8_t *buf;          /* data in order; NULL once taken */
	size_t len;
	size_t cap;
};

int imc_rmpp_receiver_create(size_t max_payload, uint32_t window,
			     struct imc_rmpp_receiver **out)
{
	struct imc_rmpp_receiver *r;

	if (!out || window == 0 || window > IMC_RMPP_MAX_WINDOW)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->state = IMC_RMPP_IDLE;
	r->max_payload = max_payload;
	r->window = window;
	*out = r;
	return 0;
}

void imc_rmpp_receiver_destroy(struct imc_rmpp_receiver *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}

static int reject(uint8_t *st, uint8_t status, int err)
{
	*st = status;
	return err;
}

static bool same_txn(const struct imc_rmpp_receiver *r,
		     const struct imc_mad_hdr *h, uint8_t method_mask)
{
	const struct imc_mad_hdr *f = &r->first.mad;

	return h->tid == f->tid && h->mgmt_class == f->mgmt_class &&
	       h->class_version == f->class_version &&
	       h->attr_id == f->attr_id &&
	       ((h->method ^ f->method) & method_mask) == 0;
}

/* Data bytes a first-segment PayloadLength announces (inverse of
 * payload_len + 20 * segments), 0 when unknown. */
static uint64_t announced(uint32_t paylen)
{
	uint64_t n = paylen / IMC_RMPP_SEG_PAYLOAD +
		     (paylen % IMC_RMPP_SEG_PAYLOAD != 0);

	return paylen > SEG_HDR * n ? paylen - SEG_HDR * n : 0;
}

/* Store a segment's data at the end; capacity grows geometrically but
 * never past what the length checks allowed. */
static int append(struct imc_rmpp_receiver *r, const uint8_t *data, size_t n)
{
	size_t need = r->len + n;

	if (need > r->cap || !r->buf) {
		size_t cap = r->cap > SIZE_MAX / 2 ? SIZE_MAX : r->cap * 2;
		uint8_t *p;

		if (cap < need)
			cap = need;
		if (cap > r->max_payload && need <= r->max_payload)
			cap = r->max_payload;
		if (cap == 0)
			cap = 1;
		p = realloc(r->buf, cap);
		if (!p)
			return -ENOMEM;
		r->buf = p;
		r->cap = cap;
	}
	if (n)
		memcpy(r->buf + r->len, data, n);
	r->len = need;
	return 0;
}

static uint32_t sat_add(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

static int rx_data(struct imc_rmpp_receiver *r, const struct imc_sa_mad *m,
		   uint8_t *st)
{
	const struct imc_rmpp_hdr *h = &m->rmpp;
	uint32_t seg = h->seg_num;
	bool first = h->flags & IMC_RMPP_FLAG_FIRST;
	bool last = h->flags & IMC_RMPP_FLAG_LAST;
	uint64_t total;
	size_t n = SEG_DATA;
	int rc, res;

	if (h->status != IMC_RMPP_STATUS_OK)
		return reject(st, IMC_RMPP_STATUS_BAD_STATUS, -EBADMSG);
	/* Segments count from 1 and only segment 1 is FIRST (IBA 13.6.2.3;
	 * Linux process_rmpp_data()). */
	if (seg == 0 || first != (seg == 1))
		return reject(st, IMC_RMPP_STATUS_BAD_SEG, -EPROTO);

	if (r->state == IMC_RMPP_IDLE) {
		if (seg != 1)
			return -ESRCH;
	} else {
		if (!same_txn(r, &m->mad, 0xff))
			return -ESRCH;
		if (r->state == IMC_RMPP_STOPPED ||
		    r->state == IMC_RMPP_ABORTED)
			return -ECONNABORTED;
		if (seg <= r->last)
			return IMC_RMPP_RX_ACK | IMC_RMPP_RX_DUPLICATE;
		if (r->state == IMC_RMPP_DONE)
			return reject(st, IMC_RMPP_STATUS_S2B, -EPROTO);
		/* IBA 13.6.3.3: out of sequence, drop and ACK what we have. */
		if (seg != r->last + 1)
			return IMC_RMPP_RX_ACK | IMC_RMPP_RX_GAP;
	}

	total = (uint64_t)(seg - 1) * SEG_DATA;
	if (last) {
		/* The LAST PayloadLength is its SA header plus its data and
		 * alone fixes the length; the first segment's total is only
		 * a hint (Linux get_mad_len() ignores it too). */
		if (h->paylen_newwin < SEG_HDR ||
		    h->paylen_newwin > IMC_RMPP_SEG_PAYLOAD)
			return reject(st, IMC_RMPP_STATUS_BAD_LEN, -EPROTO);
		n = h->paylen_newwin - SEG_HDR;
		total += n;
	} else {
		total += SEG_DATA;
		if (seg == 1 && announced(h->paylen_newwin) > r->max_payload)
			return reject(st, IMC_RMPP_STATUS_RESX, -EFBIG);
	}
	if (total > r->max_payload)
		return reject(st, IMC_RMPP_STATUS_RESX, -EFBIG);

	rc = append(r, m->data, n);
	if (rc < 0)
		return rc;
	res = IMC_RMPP_RX_ACCEPTED;
	r->last = seg;
	if (seg == 1) {
		r->first = *m;
		r->newwin = sat_add(1, r->window);
		state_set(&r->state, last ? IMC_RMPP_DONE : IMC_RMPP_ACTIVE);
		res |= IMC_RMPP_RX_ACK;
	} else if (seg == r->newwin) {
		/* Window used up: grant the next one (Linux continue_rmpp()). */
		r->newwin = sat_add(seg, r->window);
		res |= IMC_RMPP_RX_ACK;
	}
	if (last) {
		if (seg > 1)
			state_set(&r->state, IMC_RMPP_DONE);
		res |= IMC_RMPP_RX_ACK | IMC_RMPP_RX_DONE;
	}
	return res;
}

/* STOP or ABORT from the sender. */
static int rx_end(struct imc_rmpp_receiver *r, const struct imc_sa_mad *m,
		  uint8_t *st)
{
	/* The sender's STOP/ABORT may answer our ACK, whose method has the
	 * response bit flipped: match the transaction without it. */
	if (r->state == IMC_RMPP_IDLE ||
	    !same_txn(r, &m->mad, (uint8_t)~RESP_BIT))
		return -ESRCH;
	if (r->state == IMC_RMPP_DONE)
		return -EALREADY;
	if (r->state != IMC_RMPP_ACTIVE)
		return -ECONNABORTED;
	if (nak_type(m->rmpp.status) != m->rmpp.type)
		return reject(st, IMC_RMPP_STATUS_BAD_STATUS, -EBADMSG);
	state_set(&r->state, m->rmpp.type == IMC_RMPP_TYPE_STOP
				     ? IMC_RMPP_STOPPED
				     : IMC_RMPP_ABORTED);
	r->status = m->rmpp.status;
	return -ECONNABORTED;
}

int imc_rmpp_receiver_recv(struct imc_rmpp_receiver *r, const uint8_t *mad,
			   size_t len, uint8_t *rmpp_status)
{
	struct imc_sa_mad m;
	uint8_t ignored;
	uint8_t *st = rmpp_status ? rmpp_status : &ignored;
	int rc;

	*st = IMC_RMPP_STATUS_OK;
	if (!r || !mad)
		return -EINVAL;
	rc = imc_sa_mad_unpack(&m, mad, len);
	if (rc < 0)
		return rc;
	if (!(m.rmpp.flags & IMC_RMPP_FLAG_ACTIVE) ||
	    m.mad.base_version != IMC_MAD_BASE_VERSION ||
	    m.mad.mgmt_class != UMAD_CLASS_SUBN_ADM)
		return -ENOMSG;
	if (m.rmpp.version != IMC_RMPP_VERSION)
		return reject(st, IMC_RMPP_STATUS_UNV, -EPROTONOSUPPORT);

	switch (m.rmpp.type) {
	case IMC_RMPP_TYPE_DATA:
		return rx_data(r, &m, st);
	case IMC_RMPP_TYPE_STOP:
	case IMC_RMPP_TYPE_ABORT:
		return rx_end(r, &m, st);
	case IMC_RMPP_TYPE_ACK:
		/* Only a double-sided transfer ACKs a receiver. */
		return -ENOMSG;
	default:
		return reject(st, IMC_RMPP_STATUS_BADT, -EBADMSG);
	}
}

int imc_rmpp_receiver_ack_pack(const struct imc_rmpp_receiver *r, uint8_t *buf,
			       size_t len)
{
	if (!r || !buf || r->state == IMC_RMPP_IDLE)
		return -EINVAL;
	return ctl_pack(&r->first.mad, &r->first.sa, true, IMC_RMPP_TYPE_ACK,
			IMC_RMPP_STATUS_OK, r->last, r->newwin, buf, len);
}

int imc_rmpp_receiver_abort_pack(const struct imc_rmpp_receiver *r,
				 uint8_t status, uint8_t *buf, size_t len)
{
	int type = nak_type(status);

	if (!r || !buf || r->state == IMC_RMPP_IDLE || type < 0)
		return -EINVAL;
	return ctl_pack(&r->first.mad, &r->first.sa, true, (uint8_t)type,
			status, 0, 0, buf, len);
}

enum imc_rmpp_state imc_rmpp_receiver_state(const struct imc_rmpp_receiver *r)
{
	return r->state;
}

uint8_t imc_rmpp_receiver_status(const struct imc_rmpp_receiver *r)
{
	return r->status;
}

uint32_t imc_rmpp_receiver_last(const struct imc_rmpp_receiver *r)
{
	return r->last;
}

const struct imc_sa_mad *
imc_rmpp_receiver_first(const struct imc_rmpp_receiver *r)
{
	return r->state == IMC_RMPP_IDLE ? NULL : &r->first;
}

int imc_rmpp_receiver_take(struct imc_rmpp_receiver *r, uint8_t **payload,
			   size_t *payload_len)
{
	if (!r || !payload || !payload_len)
		return -EINVAL;
	if (r->state != IMC_RMPP_DONE)
		return -EAGAIN;
	if (!r->buf)
		return -EALREADY;
	*payload = r->buf;
	*payload_len = r->len;
	r->buf = NULL;
	r->cap = 0;
	return 0;
}

void imc_rmpp_payload_free(uint8_t *payload)
{
	free(payload);
}
