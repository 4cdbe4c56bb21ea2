/* InformInfo subscriptions (IBA 13.4.8.3, o13-12.1.1) and the delivery
 * of traps 66 and 67 as Report(Notice) (IBA 13.4.8.2, 14.2.5.1), as
 * OpenSM's osm_sa_informinfo.c and osm_inform.c do it.
 *
 * A Report waits for its ReportResp and is sent again every
 * cfg.report_timeout until one comes or cfg.report_retries resends have
 * gone unanswered:
 *
 *   state     event                          next
 *   WAITING   ReportResp with its TID        ACKED   (freed)
 *   WAITING   timeout, resends < retries     WAITING (sent again)
 *   WAITING   timeout, resends == retries    FAILED  (freed)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "sa/sa_int.h"
#include "util/bytes.h"

enum {
	ALL16 = 0xffff,
	ALL24 = 0xffffff,
	NOTICE_WORDS = (IMC_NOTICE_SIZE + 7) / 8,
};

/* ------------------------------------------------------------------ */
/* Subscriptions. */

static uint64_t sub_hash(const struct imc_sa *sa, uint16_t lid,
			 const struct imc_inform_info *ii)
{
	uint64_t h = imc_gid_hash(&ii->gid, sa->cfg.hash_seed);

	h = sae_mix(h, (uint64_t)lid << 32 | ii->qpn);
	h = sae_mix(h, (uint64_t)ii->lid_range_begin << 48 |
			      (uint64_t)ii->lid_range_end << 32 |
			      (uint64_t)ii->type << 16 |
			      ii->trap_number_or_device_id);
	return sae_mix(h, (uint64_t)ii->is_generic << 32 |
				 ii->producer_type_or_vendor_id);
}

static bool sub_same(const struct sae_sub *s, uint16_t lid,
		     const struct imc_inform_info *ii)
{
	return s->dest.dlid == lid && s->ii.qpn == ii->qpn &&
	       imc_gid_equal(&s->ii.gid, &ii->gid) &&
	       s->ii.lid_range_begin == ii->lid_range_begin &&
	       s->ii.lid_range_end == ii->lid_range_end &&
	       s->ii.is_generic == ii->is_generic &&
	       s->ii.type == ii->type &&
	       s->ii.trap_number_or_device_id ==
		       ii->trap_number_or_device_id &&
	       s->ii.producer_type_or_vendor_id ==
		       ii->producer_type_or_vendor_id;
}

static struct sae_sub *sub_find(const struct imc_sa *sa, uint16_t lid,
			       const struct imc_inform_info *ii)
{
	uint64_t h = sub_hash(sa, lid, ii);

	for (struct imc_hnode *n = imc_htab_bucket(&sa->subs, h); n;
	     n = n->next) {
		struct sae_sub *s = imc_container_of(n, struct sae_sub, node);

		if (n->hash == h && sub_same(s, lid, ii))
			return s;
	}
	return NULL;
}

static void sub_del(struct imc_sa *sa, struct sae_sub *s)
{
	imc_htab_remove(&sa->subs, &s->node);
	imc_list_del(&s->link);
	free(s);
}

/* o13-14.1.1: the subscriber and the trap sources it names must share a
 * partition; LIDRangeBegin 0xFFFF names every source. */
static bool access_ok(struct imc_sa *sa, const struct imc_inform_info *ii,
		      const struct imc_sa_port *requester)
{
	struct imc_sa_port p;
	uint32_t end;

	if (!imc_gid_is_zero(&ii->gid))
		return sa->ops.port_by_gid(sa->ctx, &ii->gid, &p) == 0 &&
		       sae_pkey_share(&p, requester);
	if (ii->lid_range_begin == ALL16)
		return true;
	end = ii->lid_range_end ? ii->lid_range_end : ii->lid_range_begin;
	if (end >= IMC_SA_MLID_FIRST)
		end = IMC_SA_MLID_FIRST - 1;
	for (uint32_t lid = ii->lid_range_begin; lid <= end; lid++)
		if (sa->ops.port_by_lid(sa->ctx, (uint16_t)lid, &p) == 0 &&
		    !sae_pkey_share(&p, requester))
			return false;
	return true;
}

/* Set(InformInfo): subscribe or unsubscribe; the answer is a copy of the
 * request (o13-12.1.1), with Subscribe cleared on failure (o13-13.1.1). */
void sae_inform_serve(struct sae_ctx *c)
{
	struct imc_sa *sa = c->sa;
	struct imc_inform_info ii;
	struct imc_sa_port requester;
	uint8_t data[IMC_INFORM_INFO_SIZE];
	uint16_t invalid = imc_sa_status(UMAD_SA_STATUS_REQ_INVALID);
	struct sae_sub *s;

	imc_inform_info_unpack(&ii, c->req.data, sizeof(c->req.data));
	memcpy(data, c->req.data, sizeof(data));
	if (sa->ops.port_by_lid(sa->ctx, c->src->slid, &requester) ||
	    ii.subscribe > 1) {
		sae_answer_error(c, invalid);
		return;
	}
	/* Reports go to the QP the Set came from (OpenSM keeps the
	 * request's address and QPN). */
	ii.qpn = c->src->sqpn & 0xffffff;
	s = sub_find(sa, c->src->slid, &ii);
	data[23] = 0;   /* Subscribe, for the error answers below */
	if (ii.subscribe) {
		if (!access_ok(sa, &ii, &requester)) {
			sae_answer_error_data(c, invalid, data, sizeof(data));
			return;
		}
		if (!s) {
			if (sa->subs.n >= sa->cfg.max_subscriptions ||
			    !(s = calloc(1, sizeof(*s)))) {
				uint16_t st = imc_sa_status(
					UMAD_SA_STATUS_NO_RESOURCES);

				sae_answer_error_data(c, st, data,
						      sizeof(data));
				return;
			}
			imc_htab_insert(&sa->subs, &s->node,
				     sub_hash(sa, c->src->slid, &ii));
			imc_list_add_tail(&sa->sub_list, &s->link);
		}
		s->ii = ii;
		s->subscriber = requester.gid;
		sae_dest_reply(c->src, &s->dest);
	} else {
		if (!s) {
			sae_answer_error_data(c, invalid, data, sizeof(data));
			return;
		}
		sub_del(sa, s);
	}
	sae_answer_one(c, c->req.data, IMC_INFORM_INFO_SIZE);
}

int sae_subs_drop_port(struct imc_sa *sa, const struct imc_gid *gid)
{
	int n = 0;

	for (struct imc_list *l = sa->sub_list.next, *next;
	     l != &sa->sub_list; l = next) {
		struct sae_sub *s = imc_container_of(l, struct sae_sub, link);

		next = l->next;
		if (imc_gid_equal(&s->subscriber, gid)) {
			sub_del(sa, s);
			n++;
		}
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* Reports. */

static void report_free(struct imc_sa *sa, struct sae_report *r)
{
	imc_timer_cancel(sa->loop, &r->timer);
	imc_htab_remove(&sa->reports, &r->node);
	imc_list_del(&r->link);
	free(r);
}

static void report_state(struct imc_sa *sa, struct sae_report *r,
			 enum sae_report_state to)
{
	r->state = to;
	if (to == SA_REPORT_ACKED)
		sa->st.reports_acked++;
	else if (to == SA_REPORT_FAILED)
		sa->st.reports_failed++;
	if (to != SA_REPORT_WAITING)
		report_free(sa, r);
}

static void report_cb(struct imc_timer *t)
{
	struct sae_report *r = imc_container_of(t, struct sae_report, timer);
	struct imc_sa *sa = r->sa;

	if (r->resends >= sa->cfg.report_retries) {
		report_state(sa, r, SA_REPORT_FAILED);
		return;
	}
	r->resends++;
	sa->st.reports_resent++;
	imc_timer_arm_in(sa->loop, &r->timer, sa->cfg.report_timeout);
	sae_send(sa, &r->dest, r->mad);
}

static void report_send(struct imc_sa *sa, const struct sae_sub *s,
			const uint8_t *notice)
{
	struct sae_report *r = calloc(1, sizeof(*r));
	struct imc_sa_mad m;

	if (!r) {
		sa->st.reports_failed++;
		return;
	}
	if (++sa->report_tid == 0)
		++sa->report_tid;
	r->sa = sa;
	r->tid = sa->report_tid;
	r->dest = s->dest;
	imc_timer_init(&r->timer, report_cb);
	memset(&m, 0, sizeof(m));
	m.mad.base_version = IMC_MAD_BASE_VERSION;
	m.mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
	m.mad.class_version = UMAD_SA_CLASS_VERSION;
	m.mad.method = UMAD_METHOD_REPORT;
	m.mad.tid = r->tid;
	m.mad.attr_id = UMAD_ATTR_NOTICE;
	m.sa.attr_offset = NOTICE_WORDS;
	memcpy(m.data, notice, IMC_NOTICE_SIZE);
	imc_sa_mad_pack(&m, r->mad, sizeof(r->mad));
	imc_htab_insert(&sa->reports, &r->node,
		      sae_mix(sa->cfg.hash_seed, r->tid));
	imc_list_add_tail(&sa->report_list, &r->link);
	r->state = SA_REPORT_WAITING;
	sa->st.reports_sent++;
	imc_timer_arm_in(sa->loop, &r->timer, sa->cfg.report_timeout);
	sae_send(sa, &r->dest, r->mad);
}

/* OpenSM match_notice_to_inf_rec(): GID or LID range of the issuer,
 * generic, type, trap number and producer, each with its wildcard. */
static bool sub_matches(const struct imc_sa *sa, const struct sae_sub *s,
			const struct imc_notice *n)
{
	const struct imc_inform_info *ii = &s->ii;

	if (!imc_gid_is_zero(&ii->gid)) {
		if (!imc_gid_equal(&ii->gid, &n->issuer_gid))
			return false;
	} else if (ii->lid_range_begin != ALL16) {
		uint16_t end = ii->lid_range_end ? ii->lid_range_end :
						   ii->lid_range_begin;

		if (n->issuer_lid < ii->lid_range_begin ||
		    n->issuer_lid > end)
			return false;
	}
	if (!ii->is_generic)
		return false;
	if (ii->type != ALL16 && ii->type != n->type)
		return false;
	if (ii->trap_number_or_device_id != ALL16 &&
	    ii->trap_number_or_device_id != n->trap_number_or_device_id)
		return false;
	return ii->producer_type_or_vendor_id == ALL24 ||
	       ii->producer_type_or_vendor_id == n->producer_type_or_vendor_id;
}

/* Trap 66 or 67 for mgid to every matching subscriber that is in the
 * group's partition (o13-17.1.1). */
void sae_notice_send(struct imc_sa *sa, uint16_t trap,
		    const struct imc_gid *mgid, uint16_t pkey)
{
	struct imc_notice n;
	uint8_t buf[IMC_NOTICE_SIZE];

	if (trap == IMC_TRAP_MCAST_GROUP_CREATED)
		sa->st.traps_66++;
	else
		sa->st.traps_67++;
	if (imc_list_empty(&sa->sub_list))
		return;
	if (imc_notice_mcast_init(&n, trap, mgid, sa->cfg.sa_lid,
				  &sa->cfg.sa_gid) < 0 ||
	    imc_notice_pack(&n, buf, sizeof(buf)) < 0)
		return;
	for (struct imc_list *l = sa->sub_list.next; l != &sa->sub_list;
	     l = l->next) {
		const struct sae_sub *s = imc_container_of(l, struct sae_sub,
							  link);
		struct imc_sa_port p;

		if (!sub_matches(sa, s, &n))
			continue;
		if (sa->ops.port_by_lid(sa->ctx, s->dest.dlid, &p) ||
		    !sae_pkey_has(&p, pkey))
			continue;
		report_send(sa, s, buf);
	}
}

/* A ReportResp: its TID names the Report (the low 32 bits: the high
 * half may be rewritten on the way). */
int sae_report_ack(struct imc_sa *sa, const uint8_t *mad)
{
	uint32_t tid = imc_get32(mad + 12);
	uint64_t h = sae_mix(sa->cfg.hash_seed, tid);

	if (imc_get16(mad + 16) != UMAD_ATTR_NOTICE)
		return -ENOENT;
	for (struct imc_hnode *n = imc_htab_bucket(&sa->reports, h); n;
	     n = n->next) {
		struct sae_report *r = imc_container_of(n, struct sae_report,
						       node);

		if (n->hash == h && r->tid == tid) {
			report_state(sa, r, SA_REPORT_ACKED);
			return 0;
		}
	}
	return -ENOENT;
}

void sae_notice_free(struct imc_sa *sa)
{
	while (!imc_list_empty(&sa->report_list))
		report_free(sa, imc_container_of(sa->report_list.next,
						 struct sae_report, link));
	while (!imc_list_empty(&sa->sub_list))
		sub_del(sa, imc_container_of(sa->sub_list.next,
					     struct sae_sub, link));
}
