/* SA client: queries to the SA with TIDs, timeouts, retries, a window of
 * requests in flight and RMPP reassembly (see ibmcast/sa_client.h).
 *
 * One state per query, changed only by move():
 *
 *   from      to        when
 *   QUEUED    SENT      a window slot is free: first send, timer armed
 *   QUEUED    DONE      flush (-ECANCELED)
 *   SENT      SENT      timer: retry left, same MAD sent again;
 *                       BUSY answer: timer re-armed for the backoff
 *   SENT      RMPP      first RMPP DATA segment of a GetTableResp
 *   RMPP      SENT      transfer timer expired, retry left: ABORT, resend
 *   SENT      DONE      answer, last timeout (-ETIMEDOUT), flush
 *   RMPP      DONE      last segment, STOP/ABORT, timeout, flush
 *   DONE      CALLBACK  its timer fires: the query leaves the client
 *   any but CALLBACK    freed by cancel or client destroy
 *   CALLBACK  (freed)   after the callback returns
 *
 * QUEUED queries sit on the queue list; SENT and RMPP ones on the flight
 * list and in the TID table (keyed by the low 32 bits of the TID); DONE
 * ones on the done list with their timer armed at now, so that callbacks
 * always run from the loop (docs/architecture.md, "The callback contract",
 * rule 1).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/rmpp.h"
#include "ibmcast/rng.h"
#include "ibmcast/sa_client.h"
#include "util/config.h"
#include "util/hash.h"
#include "util/list.h"
#include "util/mix.h"
#include "util/bytes.h"

enum qstate {
	Q_QUEUED,
	Q_SENT,
	Q_RMPP,
	Q_DONE,
	Q_CALLBACK,
};

struct imc_sa_query {
	struct imc_sa_client *c;
	enum qstate state;
	struct imc_list link;               /* queue, flight or done list */
	struct imc_hnode node;          /* c->tids, by tid_low */
	struct imc_timer timer;
	uint32_t tid_low;
	unsigned attempts;
	imc_sa_query_cb cb;
	void *arg;
	uint8_t req[IMC_MAD_SIZE];
	/* outcome */
	int err;
	struct imc_rmpp_receiver *rx;
	uint8_t *payload;               /* reassembled RMPP payload */
	struct imc_sa_mad ans_mad;
	struct imc_sa_answer ans;
};

/* A Report's sender sends it again, with the same TID and bytes, until a
 * ReportResp reaches it (OpenSM: its transaction timeout times its
 * retries). Each is answered, but handed to the application once: the
 * client remembers the last REPORTS_SEEN Reports for REPORT_MEMORY. The
 * memory is bounded in time as well because a restarted SM counts its
 * TIDs from the same start again. */
#define REPORTS_SEEN 64
#define REPORT_MEMORY (8 * IMC_NSEC_PER_SEC)

struct report_seen {
	struct imc_hnode node;          /* c->seen_tab, while used */
	uint64_t tid;
	uint64_t digest;                /* of the MAD's bytes */
	imc_time_t at;
	bool used;
};

struct imc_sa_client {
	struct imc_loop *loop;
	struct imc_sa_transport tr;
	struct imc_sa_client_config cfg;
	struct imc_rng rng;
	uint32_t next_tid;
	struct imc_list queue, flight, done;
	struct imc_htab tids;
	imc_sa_report_cb report_cb;
	void *report_arg;
	/* Made with the first Report: most clients never get one. */
	struct report_seen *seen;       /* REPORTS_SEEN entries, a ring */
	unsigned seen_next;             /* oldest entry, overwritten next */
	struct imc_htab seen_tab;       /* entries in use, by TID and bytes */
	struct imc_sa_client_stats st;
};

static struct imc_sa_query *link_query(struct imc_list *l)
{
	return imc_container_of(l, struct imc_sa_query, link);
}

/* ---- TID table ---- */

static uint64_t tid_hash(uint32_t tid_low)
{
	/* Consecutive TIDs spread over the buckets. */
	return imc_mix64(tid_low);
}

static struct imc_sa_query *table_find(const struct imc_sa_client *c,
				       uint32_t tid_low)
{
	uint64_t h = tid_hash(tid_low);

	for (struct imc_hnode *n = imc_htab_bucket(&c->tids, h); n;
	     n = n->next) {
		struct imc_sa_query *q = imc_container_of(n, struct imc_sa_query,
							  node);

		if (q->tid_low == tid_low)
			return q;
	}
	return NULL;
}

static void table_add(struct imc_sa_client *c, struct imc_sa_query *q)
{
	imc_htab_insert(&c->tids, &q->node, tid_hash(q->tid_low));
}

static void table_del(struct imc_sa_client *c, struct imc_sa_query *q)
{
	imc_htab_remove(&c->tids, &q->node);
}

/* ---- state ---- */

static void move(struct imc_sa_query *q, enum qstate to)
{
	static const unsigned allowed[] = {
		[Q_QUEUED] = 1u << Q_SENT | 1u << Q_DONE,
		[Q_SENT] = 1u << Q_SENT | 1u << Q_RMPP | 1u << Q_DONE,
		[Q_RMPP] = 1u << Q_SENT | 1u << Q_DONE,
		[Q_DONE] = 1u << Q_CALLBACK,
		[Q_CALLBACK] = 0,
	};

	if (!(allowed[q->state] & 1u << to))
		abort();
	q->state = to;
}

static imc_time_t attempt_timeout(struct imc_sa_client *c, unsigned attempt)
{
	imc_time_t t = c->cfg.timeout;

	for (unsigned i = 0; i < attempt && t < c->cfg.max_timeout; i++)
		t = t > IMC_TIME_MAX / 2 ? IMC_TIME_MAX : t * 2;
	if (t > c->cfg.max_timeout)
		t = c->cfg.max_timeout;
	/* Up to 25% jitter, so that clients that lost the same SA do not
	 * come back in step (the join storms of protocol.md). */
	return t + imc_rng_below(&c->rng, t / 4 + 1);
}

static void xmit(struct imc_sa_client *c, const uint8_t *mad)
{
	if (c->tr.send(c->tr.ctx, mad, IMC_MAD_SIZE) < 0)
		c->st.send_errors++;
}

static void arm(struct imc_sa_query *q, imc_time_t delay)
{
	/* -ENOMEM here leaves the timer as it was; the query would then
	 * wait for an answer or a flush, which is the best left to do. */
	(void)imc_timer_arm_in(q->c->loop, &q->timer, delay);
}

static uint32_t new_tid(struct imc_sa_client *c)
{
	uint32_t t;

	do
		t = c->next_tid++;
	while (t == 0 || table_find(c, t));
	return t;
}

static void send_first(struct imc_sa_query *q)
{
	struct imc_sa_client *c = q->c;

	imc_list_del(&q->link);
	c->st.queued--;
	q->tid_low = new_tid(c);
	/* The upper half is left 0: the kernel puts its agent id there. */
	imc_put64(q->req + 8, q->tid_low);
	table_add(c, q);
	imc_list_add_tail(&c->flight, &q->link);
	if (++c->st.in_flight > c->st.max_in_flight)
		c->st.max_in_flight = c->st.in_flight;
	move(q, Q_SENT);
	q->attempts = 1;
	c->st.sent++;
	xmit(c, q->req);
	arm(q, attempt_timeout(c, 0));
}

static void pump(struct imc_sa_client *c)
{
	while (c->st.in_flight < c->cfg.window && !imc_list_empty(&c->queue))
		send_first(link_query(c->queue.next));
}

/* Leave the flight (or queue) and wait for the loop to call back. */
static void complete(struct imc_sa_query *q, int err)
{
	struct imc_sa_client *c = q->c;
	bool flying = q->state != Q_QUEUED;

	imc_list_del(&q->link);
	if (flying) {
		table_del(c, q);
		c->st.in_flight--;
	} else {
		c->st.queued--;
	}
	if (q->rx) {
		imc_rmpp_receiver_destroy(q->rx);
		q->rx = NULL;
	}
	q->err = err;
	move(q, Q_DONE);
	imc_list_add_tail(&c->done, &q->link);
	imc_timer_cancel(c->loop, &q->timer);
	(void)imc_timer_arm(c->loop, &q->timer, imc_loop_now(c->loop));
	if (flying)
		pump(c);
}

static void free_query(struct imc_sa_query *q)
{
	if (q->rx)
		imc_rmpp_receiver_destroy(q->rx);
	imc_rmpp_payload_free(q->payload);
	free(q);
}

static void dispatch(struct imc_sa_query *q)
{
	struct imc_sa_client *c = q->c;

	imc_list_del(&q->link);
	move(q, Q_CALLBACK);
	c->st.alive--;
	if (q->err == 0)
		c->st.answered++;
	else if (q->err == -ETIMEDOUT)
		c->st.timed_out++;
	else if (q->err == -ECANCELED)
		c->st.canceled++;
	/* The query no longer belongs to the client: the callback may
	 * destroy it, and nothing here touches c again. */
	q->c = NULL;
	q->ans.attempts = q->attempts;
	q->cb(q->arg, q->err, q->err ? NULL : &q->ans);
	free_query(q);
}

static void retry_or_fail(struct imc_sa_query *q)
{
	struct imc_sa_client *c = q->c;

	if (q->attempts > c->cfg.retries) {
		complete(q, -ETIMEDOUT);
		return;
	}
	if (q->state == Q_RMPP)
		move(q, Q_SENT);
	c->st.resent++;
	xmit(c, q->req);
	arm(q, attempt_timeout(c, q->attempts));
	q->attempts++;
}

static void on_timer(struct imc_timer *t)
{
	struct imc_sa_query *q = imc_container_of(t, struct imc_sa_query, timer);
	uint8_t buf[IMC_MAD_SIZE];

	switch (q->state) {
	case Q_DONE:
		dispatch(q);
		return;
	case Q_RMPP:
		/* IBA 13.6.3.3: the receiver that gives up says so with
		 * ABORT, status T2L (total time too long). */
		if (imc_rmpp_receiver_abort_pack(q->rx, IMC_RMPP_STATUS_T2L,
						 buf, sizeof(buf)) > 0)
			xmit(q->c, buf);
		imc_rmpp_receiver_destroy(q->rx);
		q->rx = NULL;
		retry_or_fail(q);
		return;
	case Q_SENT:
		retry_or_fail(q);
		return;
	case Q_QUEUED:
	case Q_CALLBACK:
		break;
	}
}

/* ---- public API ---- */

void imc_sa_client_config_init(struct imc_sa_client_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->timeout = IMC_SA_DEFAULT_TIMEOUT;
	cfg->max_timeout = IMC_SA_DEFAULT_MAX_TIMEOUT;
	cfg->retries = IMC_SA_DEFAULT_RETRIES;
	cfg->window = IMC_SA_DEFAULT_WINDOW;
	cfg->max_payload = IMC_SA_DEFAULT_MAX_PAYLOAD;
}

int imc_sa_client_create(struct imc_loop *loop,
			 const struct imc_sa_transport *tr,
			 const struct imc_sa_client_config *cfg,
			 struct imc_sa_client **out)
{
	struct imc_sa_client_config def;
	struct imc_sa_client *c;

	cfg = IMC_CONFIG_OR_DEFAULT(cfg, def, imc_sa_client_config_init);
	if (!loop || !tr || !tr->send || !out || !cfg->timeout ||
	    cfg->max_timeout < cfg->timeout || !cfg->window ||
	    cfg->window > 4096 || !cfg->max_payload)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* Two buckets per query in flight at most. */
	if (imc_htab_init(&c->tids, 2 * cfg->window) < 0) {
		free(c);
		return -ENOMEM;
	}
	c->loop = loop;
	c->tr = *tr;
	c->cfg = *cfg;
	imc_rng_seed(&c->rng, cfg->seed);
	c->next_tid = (uint32_t)imc_rng_next(&c->rng);
	imc_list_init(&c->queue);
	imc_list_init(&c->flight);
	imc_list_init(&c->done);
	*out = c;
	return 0;
}

static void drop_list(struct imc_sa_client *c, struct imc_list *h)
{
	while (!imc_list_empty(h)) {
		struct imc_sa_query *q = link_query(h->next);

		imc_list_del(&q->link);
		imc_timer_cancel(c->loop, &q->timer);
		free_query(q);
	}
}

void imc_sa_client_destroy(struct imc_sa_client *c)
{
	if (!c)
		return;
	drop_list(c, &c->queue);
	drop_list(c, &c->flight);
	drop_list(c, &c->done);
	imc_htab_fini(&c->tids);
	if (c->seen) {
		imc_htab_fini(&c->seen_tab);
		free(c->seen);
	}
	free(c);
}

void imc_sa_client_flush(struct imc_sa_client *c)
{
	/* Queued ones first, so that nothing is sent only to be flushed. */
	while (!imc_list_empty(&c->queue))
		complete(link_query(c->queue.next), -ECANCELED);
	while (!imc_list_empty(&c->flight))
		complete(link_query(c->flight.next), -ECANCELED);
}

int imc_sa_query_start(struct imc_sa_client *c, const struct imc_sa_mad *req,
		       imc_sa_query_cb cb, void *arg, struct imc_sa_query **out)
{
	struct imc_sa_mad m;
	struct imc_sa_query *q;

	if (!c || !req || !cb || (req->mad.method & UMAD_METHOD_RESP_MASK))
		return -EINVAL;
	m = *req;
	m.mad.base_version = IMC_MAD_BASE_VERSION;
	m.mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
	m.mad.class_version = UMAD_SA_CLASS_VERSION;
	m.mad.tid = 0;
	memset(&m.rmpp, 0, sizeof(m.rmpp));
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	if (imc_sa_mad_pack(&m, q->req, sizeof(q->req)) < 0) {
		free(q);
		return -EINVAL;
	}
	q->c = c;
	q->cb = cb;
	q->arg = arg;
	q->state = Q_QUEUED;
	imc_timer_init(&q->timer, on_timer);
	imc_list_add_tail(&c->queue, &q->link);
	c->st.queued++;
	c->st.alive++;
	c->st.started++;
	if (out)
		*out = q;
	pump(c);
	return 0;
}

int imc_sa_query_cancel(struct imc_sa_query *q)
{
	struct imc_sa_client *c;

	if (!q || q->state == Q_CALLBACK)
		return -EALREADY;
	c = q->c;
	imc_list_del(&q->link);
	imc_timer_cancel(c->loop, &q->timer);
	switch (q->state) {
	case Q_QUEUED:
		c->st.queued--;
		break;
	case Q_SENT:
	case Q_RMPP:
		table_del(c, q);
		c->st.in_flight--;
		break;
	case Q_DONE:
	case Q_CALLBACK:
		break;
	}
	c->st.alive--;
	c->st.canceled++;
	free_query(q);
	pump(c);
	return 0;
}

uint64_t imc_sa_query_tid(const struct imc_sa_query *q)
{
	return q->tid_low;
}

void imc_sa_client_set_report_handler(struct imc_sa_client *c,
				      imc_sa_report_cb fn, void *arg)
{
	c->report_cb = fn;
	c->report_arg = arg;
}

void imc_sa_client_get_stats(const struct imc_sa_client *c,
			     struct imc_sa_client_stats *st)
{
	*st = c->st;
}

void imc_sa_client_get_config(const struct imc_sa_client *c,
			      struct imc_sa_client_config *cfg)
{
	*cfg = c->cfg;
}

/* ---- receive ---- */

static bool is_table_resp(uint8_t method)
{
	return method == UMAD_SA_METHOD_GET_TABLE_RESP ||
	       method == UMAD_SA_METHOD_GET_MULTI_RESP;
}

static void fill_answer(struct imc_sa_query *q, const uint8_t *data,
			size_t len, bool table)
{
	struct imc_sa_answer *a = &q->ans;
	const struct imc_sa_mad *m = &q->ans_mad;

	a->status = m->mad.status;
	a->method = m->mad.method;
	a->attr_id = m->mad.attr_id;
	a->tid = m->mad.tid;
	a->mad = m;
	a->data = data;
	a->len = len;
	a->rec_size = (size_t)m->sa.attr_offset * 8;
	if (table)
		a->count = a->rec_size ? len / a->rec_size : 0;
	else
		a->count = 1;
}

static uint64_t mad_digest(const uint8_t *buf, size_t len)
{
	uint64_t h = len, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, buf + i, 8);
		h = imc_mix2(h, w, 0);
	}
	for (; i < len; i++)
		h = imc_mix2(h, buf[i], 0);
	return h;
}

/* True if this Report (same TID, same bytes) was handed over less than
 * REPORT_MEMORY ago; else remembers it, in place of the oldest. */
static bool report_seen(struct imc_sa_client *c, const uint8_t *buf,
			size_t len)
{
	uint64_t tid = imc_get64(buf + 8), dg = mad_digest(buf, len);
	uint64_t h = imc_mix2(tid, dg, 0);
	imc_time_t now = imc_loop_now(c->loop);
	struct report_seen *e;

	if (!c->seen) {
		/* Without memory for it, Reports are handed over every time
		 * they come: a copy too, but none lost. */
		c->seen = calloc(REPORTS_SEEN, sizeof(*c->seen));
		if (!c->seen)
			return false;
		if (imc_htab_init(&c->seen_tab, REPORTS_SEEN) < 0) {
			free(c->seen);
			c->seen = NULL;
			return false;
		}
	}
	for (struct imc_hnode *n = imc_htab_bucket(&c->seen_tab, h); n;
	     n = n->next) {
		e = imc_container_of(n, struct report_seen, node);
		if (n->hash == h && e->tid == tid && e->digest == dg &&
		    now - e->at < REPORT_MEMORY)
			return true;
	}
	e = &c->seen[c->seen_next];
	c->seen_next = (c->seen_next + 1) % REPORTS_SEEN;
	if (e->used)
		imc_htab_remove(&c->seen_tab, &e->node);
	e->tid = tid;
	e->digest = dg;
	e->at = now;
	e->used = true;
	imc_htab_insert(&c->seen_tab, &e->node, h);
	return false;
}

/* IBA 13.4.6.4: a Report is acknowledged with a ReportResp carrying the
 * same TID and attribute; every copy is acknowledged, since the sender
 * resends until one ReportResp reaches it. */
static int on_report(struct imc_sa_client *c, const uint8_t *buf, size_t len)
{
	uint8_t resp[IMC_MAD_SIZE];
	struct imc_sa_mad m;
	imc_sa_report_cb fn = c->report_cb;

	memcpy(resp, buf, IMC_MAD_SIZE);
	resp[3] = UMAD_METHOD_REPORT_RESP;
	resp[4] = resp[5] = 0;
	xmit(c, resp);
	if (imc_sa_mad_unpack(&m, buf, IMC_MAD_SIZE) < 0)
		return -EMSGSIZE;
	if (report_seen(c, buf, len)) {
		c->st.reports_repeated++;
		return 0;
	}
	c->st.reports++;
	if (fn)
		fn(c->report_arg, &m); /* may destroy c: nothing after */
	return 0;
}

static int on_rmpp(struct imc_sa_query *q, const uint8_t *buf)
{
	struct imc_sa_client *c = q->c;
	uint8_t out[IMC_MAD_SIZE];
	uint8_t rstat = 0;
	int r;

	if (!q->rx) {
		r = imc_rmpp_receiver_create(c->cfg.max_payload,
					     IMC_RMPP_DEFAULT_WINDOW, &q->rx);
		if (r < 0)
			return r;
	}
	r = imc_rmpp_receiver_recv(q->rx, buf, IMC_MAD_SIZE, &rstat);
	if (r < 0) {
		if (rstat && imc_rmpp_nak_pack(buf, IMC_MAD_SIZE, rstat, out,
					       sizeof(out)) > 0)
			xmit(c, out);
		if (r == -ECONNABORTED) {
			complete(q, -ECONNABORTED);
			return 0;
		}
		if (rstat) {
			/* Our STOP or ABORT ended the transfer. */
			complete(q, r == -EFBIG ? -EFBIG : -EPROTO);
			return -EPROTO;
		}
		/* A segment before the first: wait for the first. */
		return r == -ESRCH ? 0 : r;
	}
	if (q->state == Q_SENT)
		move(q, Q_RMPP);
	if (r & IMC_RMPP_RX_ACCEPTED) {
		c->st.rmpp_segments++;
		/* Progress: the transfer gets a fresh timeout. */
		arm(q, attempt_timeout(c, q->attempts - 1));
	}
	if ((r & (IMC_RMPP_RX_ACK | IMC_RMPP_RX_DUPLICATE | IMC_RMPP_RX_GAP)) &&
	    imc_rmpp_receiver_ack_pack(q->rx, out, sizeof(out)) > 0)
		xmit(c, out);
	if (r & IMC_RMPP_RX_DONE) {
		size_t len;

		if (imc_rmpp_receiver_take(q->rx, &q->payload, &len) < 0) {
			complete(q, -EPROTO);
			return 0;
		}
		q->ans_mad = *imc_rmpp_receiver_first(q->rx);
		fill_answer(q, q->payload, len, true);
		complete(q, 0);
	}
	return 0;
}

static int recv_mad(struct imc_sa_client *c, const uint8_t *mad, size_t len,
		    bool cut)
{
	uint8_t buf[IMC_MAD_SIZE] = { 0 };
	struct imc_sa_query *q;
	struct imc_sa_mad m;
	size_t dlen;
	bool table, rmpp;

	if (!c || !mad || len < IMC_SA_DATA_OFFSET || len > IMC_MAD_SIZE)
		return -EMSGSIZE;
	memcpy(buf, mad, len);
	if (buf[1] != UMAD_CLASS_SUBN_ADM)
		return -ENOMSG;
	/* IBA 13.4.4: base version 1, SA class version 2 (15.2.1.1);
	 * nothing else is ours to interpret or answer. */
	if (buf[0] != IMC_MAD_BASE_VERSION || buf[2] != UMAD_SA_CLASS_VERSION)
		return -EPROTONOSUPPORT;
	if (buf[3] == UMAD_METHOD_REPORT)
		return on_report(c, buf, len);
	if (imc_sa_mad_unpack(&m, buf, IMC_MAD_SIZE) < 0)
		return -EMSGSIZE;
	/* IBA 13.6.2.1: RMPP is in use when the version is set and ACTIVE
	 * is on. ibsim hands over only the first 256 bytes of OpenSM's
	 * GetTableResp, RMPPVersion 0 with ACTIVE set: that is one MAD. */
	rmpp = m.rmpp.version == IMC_RMPP_VERSION &&
	       (m.rmpp.flags & IMC_RMPP_FLAG_ACTIVE);
	/* A sender's STOP or ABORT may carry the method of our ACK. */
	if (!(m.mad.method & UMAD_METHOD_RESP_MASK) &&
	    !(rmpp && (m.rmpp.type == IMC_RMPP_TYPE_STOP ||
		       m.rmpp.type == IMC_RMPP_TYPE_ABORT)))
		return -ENOMSG;
	table = is_table_resp(m.mad.method | UMAD_METHOD_RESP_MASK);
	if (rmpp && (!table || m.rmpp.type == IMC_RMPP_TYPE_ACK))
		return -ENOMSG;
	q = table_find(c, (uint32_t)m.mad.tid);
	if (!q) {
		c->st.stale++;
		return -ESRCH;
	}
	if (rmpp)
		return on_rmpp(q, buf);
	if (q->state == Q_RMPP)
		return -EPROTO;
	if ((m.mad.status & UMAD_STATUS_BUSY) && q->attempts <= c->cfg.retries) {
		/* IBA 13.4.7: busy, try again later: the backoff of the
		 * attempt, then the retry the timer sends. */
		c->st.busy++;
		arm(q, attempt_timeout(c, q->attempts - 1));
		return 0;
	}
	if (m.mad.status & UMAD_STATUS_BUSY)
		c->st.busy++;
	q->ans_mad = m;
	dlen = len - IMC_SA_DATA_OFFSET;
	fill_answer(q, q->ans_mad.data, table ? dlen : IMC_SA_DATA_SIZE, table);
	q->ans.truncated = table && (m.rmpp.flags & IMC_RMPP_FLAG_ACTIVE) &&
			   (cut || len == IMC_MAD_SIZE);
	complete(q, 0);
	return 0;
}

int imc_sa_client_recv(struct imc_sa_client *c, const uint8_t *mad,
		       size_t len)
{
	return recv_mad(c, mad, len, false);
}

int imc_sa_client_recv_cut(struct imc_sa_client *c, const uint8_t *mad,
			   size_t len)
{
	return recv_mad(c, mad, len, true);
}
