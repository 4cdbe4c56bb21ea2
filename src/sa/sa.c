/* The SA engine's front: creation, the bounded service FIFO, dispatch by
 * method and attribute, answers, ClassPortInfo, deferred MFT changes and
 * notices, introspection.
 *
 * A MAD's path:
 *
 *   imc_sa_recv -+- wrong size or class ------------> dropped (counted)
 *                +- response: ReportResp -----------> sae_report_ack
 *                |            other ----------------> dropped
 *                +- RMPP ACK/STOP/ABORT ------------> sae_xfer_control
 *                +- request: FIFO full -------------> dropped
 *                            FIFO, serve timer -----> serve() -> answer
 *
 * The serve timer runs at cfg.service_rate requests per second (token
 * spacing 1 s / rate, no credit saved while idle), or serves everything
 * queued at the start of a loop round when the rate is 0. Requests are
 * copied out of the FIFO before they are served, so an ops callback may
 * feed new MADs to imc_sa_recv() while one is served.
 *
 * Deferred work (MFT changes of IMC_SA_MFT_ANSWER_FIRST or of
 * imc_sa_port_gone(), and notices of imc_sa_port_gone()) runs from the
 * work timer, entries due at or before now in the order they were queued.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/ipoib_wire.h"
#include "sa/sa_int.h"
#include "util/bytes.h"
#include "util/vec.h"

enum {
	OFF_METHOD = 3,
	OFF_STATUS = 4,
	OFF_RMPP = IMC_MAD_HDR_SIZE,
	OFF_SM_KEY = IMC_MAD_HDR_SIZE + IMC_RMPP_HDR_SIZE,
	OFF_ATTR_OFFSET = OFF_SM_KEY + 8,
	SA_CLASS_VERSION = UMAD_SA_CLASS_VERSION,
	MTU_MAX = 5,
	LIFE_MAX = 63,
	DEFAULT_QUEUE = 4096,
};

static const struct imc_sa_bcast default_bcast = {
	.pkey = 0x7fff,
	.scope = IMC_MGID_SCOPE_LINK,
	.qkey = IMC_SA_IPOIB_QKEY,
	.mtu = 4,                   /* 2048 */
	.rate = 3,                  /* 10 Gb/s */
	.sl = 0,
	.life = 18,                 /* OpenSM's default subnet_timeout */
};

void imc_sa_config_init(struct imc_sa_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->subnet_prefix = 0xfe80000000000000ULL;
	cfg->sm_key = 1;
	cfg->bcast = &default_bcast;
	cfg->n_bcast = 1;
	cfg->mlid_first = IMC_SA_MLID_FIRST;
	cfg->mlid_last = IMC_SA_MLID_LAST;
	cfg->queue_max = DEFAULT_QUEUE;
	cfg->mft_order = IMC_SA_MFT_PROGRAM_FIRST;
	cfg->report_timeout = 200 * IMC_NSEC_PER_MSEC;
	cfg->report_retries = 3;
	cfg->rmpp_timeout = 200 * IMC_NSEC_PER_MSEC;
	cfg->rmpp_retries = 3;
	cfg->max_transfers = 64;
	cfg->max_records = 1u << 20;
	cfg->max_subscriptions = 1024;
	cfg->resp_time_value = 16;
}

/* ------------------------------------------------------------------ */
/* P_Keys (IBA 10.9.1.2): equal when their low 15 bits are; bit 15 set
 * is full membership, and two limited members cannot talk. */

static bool pkey_valid(uint16_t k)
{
	return (k & 0x7fff) != 0;
}

bool sae_pkey_has(const struct imc_sa_port *p, uint16_t pkey)
{
	for (size_t i = 0; i < p->n_pkeys; i++)
		if (pkey_valid(p->pkeys[i]) &&
		    ((p->pkeys[i] ^ pkey) & 0x7fff) == 0)
			return true;
	return false;
}

bool sae_pkey_share(const struct imc_sa_port *a, const struct imc_sa_port *b)
{
	for (size_t i = 0; i < a->n_pkeys; i++)
		for (size_t j = 0; j < b->n_pkeys; j++)
			if (pkey_valid(a->pkeys[i]) &&
			    ((a->pkeys[i] ^ b->pkeys[j]) & 0x7fff) == 0 &&
			    ((a->pkeys[i] | b->pkeys[j]) & 0x8000))
				return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* Answers. */

void sae_dest_reply(const struct imc_sa_src *src, struct imc_sa_dest *d)
{
	memset(d, 0, sizeof(*d));
	d->dlid = src->slid;
	d->dqpn = src->sqpn;
	d->qkey = IMC_SA_QP1_QKEY;
	d->pkey = src->pkey;
	d->sl = src->sl;
	if (src->has_grh) {
		d->has_grh = true;
		d->dgid = src->sgid;
		d->sgid = src->dgid;
		d->flow_label = src->flow_label;
		d->tclass = src->tclass;
		d->hop_limit = src->hop_limit;
	}
}

void sae_send(struct imc_sa *sa, const struct imc_sa_dest *d,
	     const uint8_t *mad)
{
	sa->ops.send(sa->ctx, d, mad, IMC_MAD_SIZE);
}

static void count_status(struct imc_sa *sa, uint16_t status)
{
	unsigned field = imc_mad_status_field(status);
	unsigned code = imc_sa_status_code(status);

	if (field)
		sa->st.by_mad_status[field]++;
	else if (code < IMC_ARRAY_SIZE(sa->st.by_sa_status))
		sa->st.by_sa_status[code]++;
}

/* The response method: Set is answered with GetResp, every other method
 * with its own code and the response bit. */
static uint8_t resp_method(uint8_t method)
{
	if (method == UMAD_METHOD_SET)
		return UMAD_METHOD_GET_RESP;
	return method | UMAD_METHOD_RESP_MASK;
}

/* An error answer is the request with the status set, as OpenSM's
 * osm_sa_send_error() makes it: same data, SM_Key 0 (C15-0.1.5), no RMPP,
 * and AttributeOffset 0 for GetTable (no records follow). */
void sae_answer_error_data(struct sae_ctx *c, uint16_t status,
			  const uint8_t *data, size_t len)
{
	uint8_t buf[IMC_MAD_SIZE];
	struct imc_sa_dest d;

	memcpy(buf, c->raw, IMC_MAD_SIZE);
	if (data) {
		if (len > IMC_SA_DATA_SIZE)
			len = IMC_SA_DATA_SIZE;
		memcpy(buf + IMC_SA_DATA_OFFSET, data, len);
	}
	buf[OFF_METHOD] = resp_method(c->req.mad.method);
	imc_put16(buf + OFF_STATUS, status);
	memset(buf + OFF_RMPP, 0, IMC_RMPP_HDR_SIZE);
	memset(buf + OFF_SM_KEY, 0, 8);
	if (c->req.mad.method == UMAD_SA_METHOD_GET_TABLE)
		imc_put16(buf + OFF_ATTR_OFFSET, 0);
	sae_dest_reply(c->src, &d);
	count_status(c->sa, status);
	sae_send(c->sa, &d, buf);
}

void sae_answer_error(struct sae_ctx *c, uint16_t status)
{
	sae_answer_error_data(c, status, NULL, 0);
}

static void resp_hdr(const struct sae_ctx *c, struct imc_sa_mad *m,
		     size_t rec_size)
{
	memset(m, 0, sizeof(*m));
	m->mad = c->req.mad;
	m->mad.method = resp_method(c->req.mad.method);
	m->mad.status = 0;
	m->sa.sm_key = 0;
	m->sa.attr_offset = (uint16_t)((rec_size + 7) / 8);
	m->sa.comp_mask = c->req.sa.comp_mask;
}

/* A GetResp or DeleteResp carrying one record. */
void sae_answer_one(struct sae_ctx *c, const uint8_t *rec, size_t size)
{
	struct imc_sa_mad m;
	uint8_t buf[IMC_MAD_SIZE];
	struct imc_sa_dest d;

	resp_hdr(c, &m, size);
	memcpy(m.data, rec, size < IMC_SA_DATA_SIZE ? size : IMC_SA_DATA_SIZE);
	imc_sa_mad_pack(&m, buf, sizeof(buf));
	sae_dest_reply(c->src, &d);
	count_status(c->sa, 0);
	sae_send(c->sa, &d, buf);
}

/* A GetTableResp of count records of size bytes, sent as an RMPP
 * transfer (IBA 13.6) even when it fits one MAD, as OpenSM marks every
 * GetTableResp RMPP-active; takes payload. */
void sae_answer_table(struct sae_ctx *c, uint8_t *payload, size_t count,
		     size_t size)
{
	struct imc_sa_mad tmpl;
	int rc;

	resp_hdr(c, &tmpl, size);
	if (!count)
		tmpl.sa.attr_offset = 0;
	rc = sae_xfer_start(c->sa, c->src, &tmpl, payload, count * size);
	if (rc < 0) {
		sae_answer_error(c, imc_sa_status(UMAD_SA_STATUS_NO_RESOURCES));
		return;
	}
	count_status(c->sa, 0);
}

/* ------------------------------------------------------------------ */
/* Deferred work: MFT changes and notices. */

static void work_arm(struct imc_sa *sa)
{
	imc_time_t due = IMC_TIME_MAX;

	for (struct imc_list *l = sa->work.next; l != &sa->work; l = l->next) {
		struct sae_work *w = imc_container_of(l, struct sae_work, link);

		if (w->due < due)
			due = w->due;
	}
	if (due == IMC_TIME_MAX)
		imc_timer_cancel(sa->loop, &sa->work_timer);
	else if (!imc_timer_armed(&sa->work_timer) ||
		 imc_timer_deadline(&sa->work_timer) != due)
		imc_timer_arm(sa->loop, &sa->work_timer, due);
}

static void work_queue(struct imc_sa *sa, struct sae_work *w)
{
	imc_list_add_tail(&sa->work, &w->link);
	if (w->kind == SA_WORK_MFT)
		sa->work_len++;
	if (!imc_timer_armed(&sa->work_timer) ||
	    imc_timer_deadline(&sa->work_timer) > w->due)
		imc_timer_arm(sa->loop, &sa->work_timer, w->due);
}

static int mft_call(struct imc_sa *sa, const struct imc_sa_member_change *chg)
{
	int rc = sa->ops.mcast_members(sa->ctx, chg->mlid, chg);

	if (chg->add)
		sa->st.mft_adds++;
	else
		sa->st.mft_removes++;
	if (rc)
		sa->st.mft_failures++;
	return rc;
}

static void work_cb(struct imc_timer *t)
{
	struct imc_sa *sa = imc_container_of(t, struct imc_sa, work_timer);
	imc_time_t now = imc_loop_now(sa->loop);
	struct imc_list done;

	/* Take the due entries off first: a callback may queue more. */
	imc_list_init(&done);
	for (struct imc_list *l = sa->work.next, *next; l != &sa->work;
	     l = next) {
		struct sae_work *w = imc_container_of(l, struct sae_work, link);

		next = l->next;
		if (w->due > now)
			continue;
		imc_list_del(l);
		if (w->kind == SA_WORK_MFT)
			sa->work_len--;
		imc_list_add_tail(&done, l);
	}
	while (!imc_list_empty(&done)) {
		struct sae_work *w = imc_container_of(done.next,
						      struct sae_work, link);

		imc_list_del(&w->link);
		if (w->kind == SA_WORK_MFT)
			mft_call(sa, &w->chg);
		else
			sae_notice_send(sa, w->trap, &w->chg.mgid, w->pkey);
		free(w);
	}
	work_arm(sa);
}

/* A member enters (add) or leaves the tree of its group's MLID. With
 * sync and IMC_SA_MFT_PROGRAM_FIRST the MFT programmer is called now and
 * its result returned (a failed add is not counted on the MLID);
 * otherwise the change is queued, after cfg.mft_delay with
 * IMC_SA_MFT_ANSWER_FIRST. */
int sae_mft_change(struct imc_sa *sa, const struct sae_member *m, bool add,
		  bool sync)
{
	struct imc_sa_member_change chg;
	struct sae_work *w;
	uint16_t mlid = m->group->rec.mlid;
	int rc;

	if (!sa->ops.mcast_members)
		return 0;
	if (!sae_tree_ref(sa, mlid, &m->gid, add))
		return 0;
	memset(&chg, 0, sizeof(chg));
	chg.mlid = mlid;
	chg.add = add;
	chg.mgid = m->group->rec.mgid;
	chg.port_gid = m->gid;
	chg.lid = m->lid;
	chg.node = m->node_id;
	chg.port_num = m->port_num;
	chg.switch_port0 = m->switch_port0;
	chg.join_state = add ? m->join_state : 0;
	if (sync && sa->cfg.mft_order == IMC_SA_MFT_PROGRAM_FIRST) {
		rc = mft_call(sa, &chg);
		if (rc && add)
			sae_tree_ref(sa, mlid, &m->gid, false);
		return rc;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		sa->st.mft_failures++;
		return 0;
	}
	w->kind = SA_WORK_MFT;
	w->chg = chg;
	w->due = imc_loop_now(sa->loop);
	if (sa->cfg.mft_order == IMC_SA_MFT_ANSWER_FIRST)
		w->due += sa->cfg.mft_delay;
	work_queue(sa, w);
	return 0;
}

/* A trap 66/67 to send from the loop (for changes made outside it). */
void sae_work_notice(struct imc_sa *sa, uint16_t trap,
		    const struct imc_gid *mgid, uint16_t pkey)
{
	struct sae_work *w = calloc(1, sizeof(*w));

	if (!w) {
		sa->st.reports_failed++;
		return;
	}
	w->kind = SA_WORK_NOTICE;
	w->trap = trap;
	w->pkey = pkey;
	w->chg.mgid = *mgid;
	w->due = imc_loop_now(sa->loop);
	work_queue(sa, w);
}

/* ------------------------------------------------------------------ */
/* ClassPortInfo (IBA 13.4.8.1, 15.2.5.1). */

static void serve_cpi(struct sae_ctx *c)
{
	struct imc_class_port_info cpi;
	uint8_t rec[IMC_CLASS_PORT_INFO_SIZE];

	if (c->req.mad.method != UMAD_METHOD_GET) {
		sae_answer_error(c, UMAD_STATUS_ATTR_NOT_SUPPORTED);
		return;
	}
	memset(&cpi, 0, sizeof(cpi));
	cpi.base_version = IMC_MAD_BASE_VERSION;
	cpi.class_version = SA_CLASS_VERSION;
	cpi.cap_mask = UMAD_SA_CAP_MASK_IS_UD_MCAST_SUP;
	cpi.cap_mask2 = IMC_SA_CAP_MASK2_SENDONLY_FULL;
	cpi.resp_time = c->sa->cfg.resp_time_value;
	/* No redirection: QP1 and its Q_Key, as OpenSM fills them. */
	cpi.redirect_qp = 1;
	cpi.redirect_qkey = IMC_SA_QP1_QKEY;
	cpi.trap_qkey = IMC_SA_QP1_QKEY;
	imc_class_port_info_pack(&cpi, rec, sizeof(rec));
	sae_answer_one(c, rec, sizeof(rec));
}

/* ------------------------------------------------------------------ */
/* Dispatch. */

static unsigned req_kind(uint8_t method)
{
	switch (method) {
	case UMAD_METHOD_GET:
		return IMC_SA_REQ_GET;
	case UMAD_METHOD_SET:
		return IMC_SA_REQ_SET;
	case UMAD_SA_METHOD_GET_TABLE:
		return IMC_SA_REQ_GET_TABLE;
	case UMAD_SA_METHOD_DELETE:
		return IMC_SA_REQ_DELETE;
	}
	return IMC_SA_REQ_OTHER;
}

/* A request's AttributeOffset means nothing (IBA 15.2.1.1 uses it in
 * responses); accept 0 or the attribute's own size in 8-byte words,
 * rounded either way, and call anything else an invalid value. */
static bool attr_offset_ok(uint16_t off, size_t size)
{
	return off == 0 || off == size / 8 || off == (size + 7) / 8;
}

static void serve(struct imc_sa *sa, const struct sae_req *r)
{
	struct sae_ctx c;
	const struct imc_mad_hdr *h;
	size_t size;

	memset(&c, 0, sizeof(c));
	c.sa = sa;
	c.src = &r->src;
	c.raw = r->mad;
	imc_sa_mad_unpack(&c.req, r->mad, IMC_MAD_SIZE);
	h = &c.req.mad;
	sa->st.requests[req_kind(h->method)]++;

	/* IBA 13.4.7: a base or class version the class does not speak. */
	if (h->base_version != IMC_MAD_BASE_VERSION ||
	    h->class_version != SA_CLASS_VERSION) {
		sae_answer_error(&c, UMAD_STATUS_BAD_VERSION);
		return;
	}
	/* C15-0.1.5: SM_Key is 0 or the SM's; anything else is dropped. */
	if (c.req.sa.sm_key && c.req.sa.sm_key != sa->cfg.sm_key) {
		sa->st.drop_sm_key++;
		return;
	}
	c.trusted = c.req.sa.sm_key != 0;
	/* A GetTable repeated while its answer is still being sent: the
	 * transfer in progress answers it. */
	if (h->method == UMAD_SA_METHOD_GET_TABLE &&
	    sae_xfer_busy(sa, r->src.slid, h->tid)) {
		sa->st.drop_duplicate++;
		return;
	}

	switch (h->method) {
	case UMAD_METHOD_GET:
	case UMAD_METHOD_SET:
	case UMAD_SA_METHOD_GET_TABLE:
	case UMAD_SA_METHOD_DELETE:
		break;
	case UMAD_SA_METHOD_GET_MULTI:
	case UMAD_SA_METHOD_GET_TRACE_TABLE:
		/* SA methods, but not of any attribute served here (OpenSM
		 * answers GetMulti(MCMemberRecord) with 0x000C too). */
		sae_answer_error(&c, UMAD_STATUS_ATTR_NOT_SUPPORTED);
		return;
	case UMAD_METHOD_SEND:
	case UMAD_METHOD_TRAP:
	case UMAD_METHOD_TRAP_REPRESS:
		/* Methods that take no response. */
		sa->st.drop_no_answer++;
		return;
	default:
		sae_answer_error(&c, UMAD_STATUS_METHOD_NOT_SUPPORTED);
		return;
	}

	switch (h->attr_id) {
	case UMAD_ATTR_CLASS_PORT_INFO:
		size = IMC_CLASS_PORT_INFO_SIZE;
		break;
	case UMAD_ATTR_INFORM_INFO:
		size = IMC_INFORM_INFO_SIZE;
		break;
	case UMAD_SA_ATTR_MCMEMBER_REC:
		size = IMC_MCMR_SIZE;
		break;
	default:
		sae_answer_error(&c, UMAD_STATUS_ATTR_NOT_SUPPORTED);
		return;
	}
	if (!attr_offset_ok(c.req.sa.attr_offset, size)) {
		sae_answer_error(&c, UMAD_STATUS_INVALID_ATTR_VALUE);
		return;
	}
	switch (h->attr_id) {
	case UMAD_ATTR_CLASS_PORT_INFO:
		serve_cpi(&c);
		break;
	case UMAD_ATTR_INFORM_INFO:
		if (h->method != UMAD_METHOD_SET)
			sae_answer_error(&c, UMAD_STATUS_ATTR_NOT_SUPPORTED);
		else
			sae_inform_serve(&c);
		break;
	default:
		sae_mcmr_serve(&c);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Service FIFO. */

static void serve_arm(struct imc_sa *sa)
{
	imc_time_t now = imc_loop_now(sa->loop);

	if (imc_timer_armed(&sa->serve_timer) || !sa->qlen)
		return;
	if (!sa->cfg.service_rate) {
		imc_timer_arm(sa->loop, &sa->serve_timer, now);
		return;
	}
	if (sa->serve_next < now)
		sa->serve_next = now;
	imc_timer_arm(sa->loop, &sa->serve_timer, sa->serve_next);
}

static void serve_cb(struct imc_timer *t)
{
	struct imc_sa *sa = imc_container_of(t, struct imc_sa, serve_timer);
	imc_time_t now = imc_loop_now(sa->loop);
	uint64_t n, interval = 0;
	struct sae_req r;

	if (!sa->cfg.service_rate) {
		n = sa->qlen;
	} else {
		interval = IMC_NSEC_PER_SEC / sa->cfg.service_rate;
		if (!interval)
			interval = 1;
		n = 1 + (now > sa->serve_next ?
			 (now - sa->serve_next) / interval : 0);
	}
	while (n-- && sa->qlen) {
		uint32_t next = (sa->qhead + 1) % sa->qcap;

		if (n && sa->qlen > 1)
			sae_prefetch(sa, sa->q[next].mad, 1);
		if (n > 1 && sa->qlen > 2)
			sae_prefetch(sa, sa->q[(next + 1) % sa->qcap].mad, 0);
		r = sa->q[sa->qhead];
		sa->qhead = (sa->qhead + 1) % sa->qcap;
		sa->qlen--;
		if (interval)
			sa->serve_next += interval;
		serve(sa, &r);
	}
	serve_arm(sa);
}

static int enqueue(struct imc_sa *sa, const struct imc_sa_src *from,
		   const uint8_t *mad)
{
	struct sae_req *r;

	if (sa->qlen >= sa->cfg.queue_max) {
		sa->st.drop_queue_full++;
		return -ENOBUFS;
	}
	if (sa->qlen == sa->qcap) {
		uint32_t cap = sa->qcap ? sa->qcap * 2 : 16;

		if (cap > sa->cfg.queue_max)
			cap = sa->cfg.queue_max;
		if (imc_ring_grow(&sa->q, sizeof(*sa->q), sa->qhead, sa->qlen,
				  sa->qcap, cap)) {
			sa->st.drop_queue_full++;
			return -ENOBUFS;
		}
		sa->qcap = cap;
		sa->qhead = 0;
	}
	r = &sa->q[(sa->qhead + sa->qlen) % sa->qcap];
	r->src = *from;
	memcpy(r->mad, mad, IMC_MAD_SIZE);
	sa->qlen++;
	if (sa->qlen > sa->st.queue_max_seen)
		sa->st.queue_max_seen = sa->qlen;
	serve_arm(sa);
	return 0;
}

int imc_sa_recv(struct imc_sa *sa, const struct imc_sa_src *from,
		const uint8_t *mad, size_t len)
{
	uint8_t method, rmpp_type, rmpp_flags;

	if (!sa || !from || !mad)
		return -EINVAL;
	sa->st.received++;
	if (len != IMC_MAD_SIZE) {
		sa->st.drop_malformed++;
		return -EMSGSIZE;
	}
	if (mad[1] != UMAD_CLASS_SUBN_ADM) {
		sa->st.drop_malformed++;
		return -EPROTONOSUPPORT;
	}
	method = mad[OFF_METHOD];
	if (method & UMAD_METHOD_RESP_MASK) {
		if (method == UMAD_METHOD_REPORT_RESP &&
		    sae_report_ack(sa, mad) == 0)
			return 0;
		sa->st.drop_response++;
		return -ENOMSG;
	}
	rmpp_type = mad[OFF_RMPP + 1];
	rmpp_flags = mad[OFF_RMPP + 2] & 0x7;
	if ((rmpp_flags & IMC_RMPP_FLAG_ACTIVE) &&
	    rmpp_type != IMC_RMPP_TYPE_DATA) {
		if (sae_xfer_control(sa, from, mad) == 0)
			return 0;
		sa->st.drop_response++;
		return -ENOMSG;
	}
	return enqueue(sa, from, mad);
}

/* ------------------------------------------------------------------ */
/* Creation. */

static bool rate_code_valid(uint8_t rate)
{
	return rate >= 2 && rate <= 22;
}

static int check_cfg(const struct imc_sa_config *cfg)
{
	if (cfg->mlid_first < IMC_SA_MLID_FIRST ||
	    cfg->mlid_last > IMC_SA_MLID_LAST ||
	    cfg->mlid_first > cfg->mlid_last || !cfg->queue_max ||
	    cfg->mft_order > IMC_SA_MFT_ANSWER_FIRST ||
	    cfg->resp_time_value > 31 || (cfg->n_bcast && !cfg->bcast))
		return -EINVAL;
	for (size_t i = 0; i < cfg->n_bcast; i++) {
		const struct imc_sa_bcast *b = &cfg->bcast[i];

		if (!pkey_valid(b->pkey) || b->scope > 0xf || !b->mtu ||
		    b->mtu > MTU_MAX || !rate_code_valid(b->rate) ||
		    b->sl > 0xf || b->flow_label > 0xfffff ||
		    b->life > LIFE_MAX ||
		    (b->mlid && (b->mlid < cfg->mlid_first ||
				 b->mlid > cfg->mlid_last)))
			return -EINVAL;
	}
	return 0;
}

/* The broadcast groups of the configured partitions, as OpenSM's
 * osm_prtn_add_mcgroup() builds them: selectors exactly, HopLimit 0 for
 * link-local scope and 0xFF otherwise, never deleted. */
static int add_bcast(struct imc_sa *sa, const struct imc_sa_bcast *b)
{
	struct imc_mcmr rec;
	unsigned scope = b->scope ? b->scope : IMC_MGID_SCOPE_LINK;

	memset(&rec, 0, sizeof(rec));
	if (imc_ipoib_bcast_mgid(b->pkey, scope, &rec.mgid) < 0)
		return -EINVAL;
	if (sae_group_find(sa, &rec.mgid))
		return -EINVAL;
	rec.qkey = b->qkey;
	rec.mtu_sel = UMAD_SA_SELECTOR_EXACTLY;
	rec.mtu = b->mtu;
	rec.tclass = b->tclass;
	rec.pkey = b->pkey | IMC_PKEY_FULL_MEMBER;
	rec.rate_sel = UMAD_SA_SELECTOR_EXACTLY;
	rec.rate = b->rate;
	rec.life_sel = UMAD_SA_SELECTOR_EXACTLY;
	rec.life = b->life;
	rec.sl = b->sl;
	rec.flow_label = b->flow_label;
	rec.hop_limit = scope == IMC_MGID_SCOPE_LINK ? 0 : 0xff;
	rec.scope = (uint8_t)scope;
	if (sae_mlid_alloc(sa, b->mlid, &rec.mlid) < 0 ||
	    sae_group_by_mlid(sa, rec.mlid))
		return -ENOSPC;
	if (!sae_group_new(sa, &rec, true))
		return -ENOMEM;
	return 0;
}

int imc_sa_create(struct imc_loop *loop, const struct imc_sa_config *cfg,
		  const struct imc_sa_ops *ops, void *ctx,
		  struct imc_sa **out)
{
	struct imc_sa_config def;
	struct imc_sa *sa;
	int rc;

	if (!cfg) {
		imc_sa_config_init(&def);
		cfg = &def;
	}
	if (!loop || !ops || !out || !ops->send ||
	    !ops->port_by_gid || !ops->port_by_lid)
		return -EINVAL;
	rc = check_cfg(cfg);
	if (rc)
		return rc;
	sa = calloc(1, sizeof(*sa));
	if (!sa)
		return -ENOMEM;
	sa->loop = loop;
	sa->cfg = *cfg;
	sa->ops = *ops;
	sa->ctx = ctx;
	imc_list_init(&sa->work);
	imc_list_init(&sa->report_list);
	imc_list_init(&sa->sub_list);
	imc_list_init(&sa->xfer_list);
	imc_timer_init(&sa->serve_timer, serve_cb);
	imc_timer_init(&sa->work_timer, work_cb);
	/* OpenSM starts its trap TIDs at 0x02DAB000 (osm_inform.c). */
	sa->report_tid = 0x02DAB000;
	rc = -ENOMEM;
	if (cfg->n_bcast) {
		sa->bcast = calloc(cfg->n_bcast, sizeof(*sa->bcast));
		if (!sa->bcast)
			goto fail;
		memcpy(sa->bcast, cfg->bcast,
		       cfg->n_bcast * sizeof(*sa->bcast));
		sa->cfg.bcast = sa->bcast;
	}
	if (sae_store_init(sa) || imc_htab_init(&sa->reports, 16) ||
	    imc_htab_init(&sa->subs, 16) || imc_htab_init(&sa->xfers, 16))
		goto fail;
	for (size_t i = 0; i < cfg->n_bcast; i++) {
		rc = add_bcast(sa, &sa->bcast[i]);
		if (rc)
			goto fail;
	}
	*out = sa;
	return 0;
fail:
	imc_sa_destroy(sa);
	return rc;
}

void imc_sa_destroy(struct imc_sa *sa)
{
	if (!sa)
		return;
	imc_timer_cancel(sa->loop, &sa->serve_timer);
	imc_timer_cancel(sa->loop, &sa->work_timer);
	while (!imc_list_empty(&sa->work)) {
		struct imc_list *l = sa->work.next;

		imc_list_del(l);
		free(imc_container_of(l, struct sae_work, link));
	}
	sae_xfer_free_all(sa);
	sae_notice_free(sa);
	sae_store_free(sa);
	imc_htab_fini(&sa->reports);
	imc_htab_fini(&sa->subs);
	imc_htab_fini(&sa->xfers);
	free(sa->q);
	free(sa->bcast);
	free(sa);
}

int imc_sa_port_gone(struct imc_sa *sa, const struct imc_gid *port_gid)
{
	struct sae_pent *pe;
	uint32_t n = 0;

	if (!sa || !port_gid)
		return -EINVAL;
	pe = sae_port_find(sa, port_gid);
	if (pe) {
		/* The port entry is freed with its last membership. */
		n = pe->n;
		for (uint32_t i = 0; i < n; i++)
			sae_leave(sa, imc_container_of(pe->members.next,
						      struct sae_member,
						      in_port),
				 0xf, false, NULL);
	}
	sae_subs_drop_port(sa, port_gid);
	return (int)n;
}

/* ------------------------------------------------------------------ */
/* Introspection. */

static void group_info(const struct sae_group *g, struct imc_sa_group_info *o)
{
	memset(o, 0, sizeof(*o));
	o->rec = g->rec;
	o->members = g->n_members;
	o->full_members = g->n_full;
	o->persistent = g->persistent;
}

int imc_sa_group_get(const struct imc_sa *sa, const struct imc_gid *mgid,
		     struct imc_sa_group_info *out)
{
	const struct sae_group *g;

	if (!sa || !mgid || !out)
		return -EINVAL;
	g = sae_group_find(sa, mgid);
	if (!g)
		return -ENOENT;
	group_info(g, out);
	return 0;
}

int imc_sa_foreach_group(const struct imc_sa *sa,
			 int (*cb)(void *arg,
				   const struct imc_sa_group_info *g),
			 void *arg)
{
	struct sae_group **v;
	size_t n;
	int rc = 0;

	if (!sa || !cb)
		return -EINVAL;
	if (sae_groups_sorted(sa, &v, &n))
		return -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++) {
		struct imc_sa_group_info info;

		group_info(v[i], &info);
		rc = cb(arg, &info);
	}
	free(v);
	return rc;
}

int imc_sa_foreach_member(const struct imc_sa *sa, const struct imc_gid *mgid,
			  int (*cb)(void *arg,
				    const struct imc_sa_member_info *m),
			  void *arg)
{
	const struct sae_group *g;
	struct sae_member **v;
	int rc = 0;

	if (!sa || !mgid || !cb)
		return -EINVAL;
	g = sae_group_find(sa, mgid);
	if (!g)
		return -ENOENT;
	if (sae_members_sorted(g, &v))
		return -ENOMEM;
	for (uint32_t i = 0; i < g->n_members && !rc; i++) {
		struct imc_sa_member_info info;

		memset(&info, 0, sizeof(info));
		info.port_gid = v[i]->gid;
		info.lid = v[i]->lid;
		info.join_state = v[i]->join_state;
		info.proxy = v[i]->proxy;
		rc = cb(arg, &info);
	}
	free(v);
	return rc;
}

struct out {
	char *buf;
	size_t len;
	size_t pos;
};

__attribute__((format(printf, 2, 3)))
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->pos < o->len ? o->buf + o->pos : NULL,
		      o->pos < o->len ? o->len - o->pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

int imc_sa_dump(const struct imc_sa *sa, char *buf, size_t len)
{
	struct out o = { buf, buf ? len : 0, 0 };
	struct sae_group **v;
	size_t n;
	char a[IMC_GID_STRLEN];

	if (!sa)
		return -EINVAL;
	if (o.len)
		o.buf[0] = 0;
	if (sae_groups_sorted(sa, &v, &n))
		return -ENOMEM;
	put(&o, "groups %zu members %" PRIu64 " mlids %u/%u "
	    "subscriptions %zu\n", n, sa->members_total, sa->mlids.in_use,
	    sa->mlids.n, sa->subs.n);
	for (size_t i = 0; i < n; i++) {
		const struct sae_group *g = v[i];
		const struct imc_mcmr *r = &g->rec;
		struct sae_member **mv;

		imc_gid_format(&r->mgid, a);
		put(&o, "group %s mlid 0x%04x qkey 0x%08x pkey 0x%04x mtu %u "
		    "rate %u life %u sl %u flow 0x%05x hop %u tclass %u "
		    "scope %u%s members %u full %u\n", a, r->mlid, r->qkey,
		    r->pkey, r->mtu, r->rate, r->life, r->sl, r->flow_label,
		    r->hop_limit, r->tclass, r->scope,
		    g->persistent ? " persistent" : "", g->n_members,
		    g->n_full);
		if (sae_members_sorted(g, &mv)) {
			free(v);
			return -ENOMEM;
		}
		for (uint32_t k = 0; k < g->n_members; k++) {
			imc_gid_format(&mv[k]->gid, a);
			put(&o, "  member %s lid %u join 0x%x%s\n", a,
			    mv[k]->lid, mv[k]->join_state,
			    mv[k]->proxy ? " proxy" : "");
		}
		free(mv);
	}
	free(v);
	for (struct imc_list *l = sa->sub_list.next; l != &sa->sub_list;
	     l = l->next) {
		const struct sae_sub *s = imc_container_of(l, struct sae_sub,
							  link);

		imc_gid_format(&s->subscriber, a);
		put(&o, "subscription %s lid %u qpn 0x%06x trap %u type 0x%04x "
		    "producer 0x%06x\n", a, s->dest.dlid, s->ii.qpn,
		    s->ii.trap_number_or_device_id, s->ii.type,
		    s->ii.producer_type_or_vendor_id);
	}
	if (o.pos > INT32_MAX)
		return -ENOMEM;
	return (int)o.pos;
}

void imc_sa_get_stats(const struct imc_sa *sa, struct imc_sa_stats *st)
{
	if (!sa || !st)
		return;
	*st = sa->st;
	st->queue_len = sa->qlen;
	st->groups = (uint32_t)sa->groups.n;
	st->members = sa->members_total;
	st->mlids_in_use = sa->mlids.in_use;
	st->mlids_total = sa->mlids.n;
	st->subscriptions = (uint32_t)sa->subs.n;
	st->reports_pending = (uint32_t)sa->reports.n;
	st->transfers_active = (uint32_t)sa->xfers.n;
	st->mft_pending = sa->work_len;
}
