/* Restart audit of a port (mcastd_server.h): the memberships the SA
 * holds for the port when the daemon starts, minus what the clients
 * re-join within the grace period, are deleted.
 *
 *   state   event                                   next
 *   QUERY   GetTable answered                       GRACE
 *   QUERY   grace over                              LATE (await answer)
 *   QUERY   GetTable failed                         DONE (logged)
 *   LATE    GetTable answered                       DELETE
 *   GRACE   grace over                              DELETE
 *   DELETE  every Delete answered                   DONE
 *   any     server destroy                          DONE (queries cancelled)
 *
 * The SA keys a membership by MGID and PortGID and holds one JoinState
 * per port (IBA 15.2.5.17), so what the old daemon left and what the new
 * one joins never add up to two memberships. A group the tracker re-joined
 * is its own business: the answer to its Set names the port's JoinState
 * and the tracker deletes the bits it does not want. What is left is the
 * groups nobody re-joined. An SA zeroes PortGID and JoinState in records
 * for untrusted requesters (IBA 15.2.5.17, p923; OpenSM does), so the
 * bits are found by Deletes of one bit at a time, lowest first: a Delete
 * of a bit the port does not hold is refused (o15-0.1.14), and the answer
 * to one that goes through names the bits left, which narrows the rest.
 * Each Delete is sent only while the tracker has no group of that MGID,
 * so a re-join that comes later follows it to the SA.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad_sa.h>
#include <infiniband/umad_sa_mcm.h>
#include <infiniband/umad_types.h>

#include "ibmcast/gid.h"
#include "ibmcast/mad.h"
#include "mcastd/server_int.h"

enum {
	AU_NONE,
	AU_QUERY,
	AU_LATE,
	AU_GRACE,
	AU_DELETE,
	AU_DONE,
};

struct audit_del {
	struct port *p;
	struct imc_sa_query *q;
	struct imc_gid mgid;
	uint8_t cand;               /* bits the port may still hold */
	uint8_t bit;                /* the bits in flight */
	bool known;                 /* cand as a trusted answer named it */
	struct audit_del *next;
};

static void audit_set(struct port *p, int to)
{
	static const unsigned ok[] = {
		[AU_NONE] = 1u << AU_QUERY | 1u << AU_DONE,
		[AU_QUERY] = 1u << AU_GRACE | 1u << AU_LATE | 1u << AU_DONE,
		[AU_LATE] = 1u << AU_DELETE | 1u << AU_DONE,
		[AU_GRACE] = 1u << AU_DELETE | 1u << AU_DONE,
		[AU_DELETE] = 1u << AU_DONE,
		[AU_DONE] = 1u << AU_DONE,
	};

	if (!(ok[p->audit_state] & 1u << to))
		abort();   /* a bug: the table above */
	p->audit_state = to;
}

static void req_init(struct port *p, struct imc_sa_mad *m, uint8_t method,
		     const struct imc_mcmr *r, uint64_t comp)
{
	memset(m, 0, sizeof(*m));
	/* With the SM_Key the SA trusts the request and names PortGID
	 * and JoinState in its records (IBA 15.2.5.17, p923). */
	m->sa.sm_key = p->s->cfg.sm_key;
	m->mad.method = method;
	m->mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	m->sa.comp_mask = comp;
	imc_mcmr_pack(r, m->data, sizeof(m->data));
}

struct find {
	const struct imc_gid *mgid;
	bool found;
};

static void on_group(void *arg, const struct imc_mcast_group_info *g)
{
	struct find *f = arg;

	f->found |= imc_gid_equal(&g->rec.mgid, f->mgid);
}

static bool tracker_has(struct port *p, const struct imc_gid *mgid)
{
	struct find f = { .mgid = mgid };

	/* Groups still being created (MGID 0) are not listed; a create
	 * never names an MGID the SA already holds for this port. */
	if (imc_mcast_foreach_group(p->t, on_group, &f) < 0)
		return true;   /* unsure: leave it */
	return f.found;
}

static void del_free(struct audit_del *d)
{
	struct port *p = d->p;
	struct audit_del **pp;

	for (pp = &p->dels; *pp != d; pp = &(*pp)->next)
		;
	*pp = d->next;
	free(d);
	if (!p->dels && p->audit_state == AU_DELETE)
		audit_set(p, AU_DONE);
}

static void on_delete(void *arg, int err, const struct imc_sa_answer *ans);

/* Sends the Delete of d's lowest candidate bit, or ends d. */
static void probe(struct audit_del *d)
{
	struct port *p = d->p;
	struct imc_mcmr rec = { 0 };
	struct imc_sa_mad m;

	if (!d->cand || tracker_has(p, &d->mgid)) {
		del_free(d);
		return;
	}
	d->bit = d->known ? d->cand : d->cand & (uint8_t)-d->cand;
	rec.mgid = d->mgid;
	rec.port_gid = p->desc.gid;
	rec.join_state = d->bit;
	req_init(p, &m, UMAD_SA_METHOD_DELETE, &rec,
		 UMAD_SA_MCM_COMP_MASK_MGID | UMAD_SA_MCM_COMP_MASK_PORT_GID |
		 UMAD_SA_MCM_COMP_MASK_JOIN_STATE);
	if (imc_sa_query_start(p->sa, &m, on_delete, d, &d->q) < 0)
		del_free(d);
}

static void on_delete(void *arg, int err, const struct imc_sa_answer *ans)
{
	struct audit_del *d = arg;
	struct port *p = d->p;
	char g[IMC_GID_STRLEN];
	struct imc_mcmr r;

	d->q = NULL;
	if (d->known && !err && ans->status) {
		/* The bits changed since the GetTable: one at a time. */
		d->known = false;
		probe(d);
		return;
	}
	d->cand &= (uint8_t)~d->bit;
	if (err) {
		srv_log(p->s, IMC_MCASTD_LOG_WARN,
			"audit: Delete unanswered (%d)", err);
		del_free(d);
		return;
	}
	if (!ans->status) {
		imc_gid_format(&d->mgid, g);
		p->s->st.audit_deletes++;
		srv_log(p->s, IMC_MCASTD_LOG_INFO,
			"audit: deleted JoinState 0x%x of %s: nobody re-joined",
			d->bit, g);
		/* o15-0.1.14: the answer names the bits left. */
		if (imc_mcmr_unpack(&r, ans->data, ans->len) >= 0 &&
		    imc_gid_equal(&r.mgid, &d->mgid))
			d->cand &= r.join_state;
	}
	probe(d);
}

static void add_del(struct port *p, const struct audit_rec *r)
{
	struct audit_del *d = calloc(1, sizeof(*d));

	if (!d)
		return;
	d->p = p;
	d->mgid = r->mgid;
	/* A trusted answer names the bits; an untrusted one zeroes them. */
	d->cand = r->join_state ? r->join_state : 0xf;
	d->known = r->join_state != 0;
	d->next = p->dels;
	p->dels = d;
}

static void run_deletes(struct port *p)
{
	audit_set(p, AU_DELETE);
	for (size_t i = 0; i < p->nrecs; i++)
		if (!tracker_has(p, &p->recs[i].mgid))
			add_del(p, &p->recs[i]);
	free(p->recs);
	p->recs = NULL;
	p->nrecs = 0;
	if (!p->dels) {
		audit_set(p, AU_DONE);
		return;
	}
	/* One chain per group, all groups at once: the SA client's window
	 * paces them. probe() may free d: walk a copy of the list. */
	{
		size_t n = 0, k = 0;
		struct audit_del **v;

		for (struct audit_del *d = p->dels; d; d = d->next)
			n++;
		v = calloc(n, sizeof(*v));
		if (!v) {
			srv_audit_stop(p);
			audit_set(p, AU_DONE);
			return;
		}
		for (struct audit_del *d = p->dels; d; d = d->next)
			v[k++] = d;
		for (k = 0; k < n; k++)
			probe(v[k]);
		free(v);
	}
}

static void keep_records(struct port *p, const struct imc_sa_answer *ans)
{
	p->recs = ans->count ? calloc(ans->count, sizeof(*p->recs)) : NULL;
	for (size_t i = 0; p->recs && i < ans->count; i++) {
		struct imc_mcmr r;

		if (!ans->rec_size || (i + 1) * ans->rec_size > ans->len ||
		    imc_mcmr_unpack(&r, ans->data + i * ans->rec_size,
				    ans->rec_size) < 0)
			break;
		/* The query named the port: a record of another port (an SA
		 * that ignores the component) is not ours to touch. */
		if (!imc_gid_is_zero(&r.port_gid) &&
		    !imc_gid_equal(&r.port_gid, &p->desc.gid))
			continue;
		p->recs[p->nrecs].mgid = r.mgid;
		p->recs[p->nrecs].join_state = r.join_state & 0xf;
		p->nrecs++;
	}
	srv_log(p->s, IMC_MCASTD_LOG_INFO,
		"audit: the SA holds %zu memberships of the port", p->nrecs);
}

static void on_table(void *arg, int err, const struct imc_sa_answer *ans)
{
	struct port *p = arg;

	p->audit_q = NULL;
	if (!err && ans->status &&
	    imc_sa_status_code(ans->status) != UMAD_SA_STATUS_NO_RECORDS)
		err = -EIO;
	if (err) {
		srv_log(p->s, IMC_MCASTD_LOG_WARN,
			"audit: GetTable of the port's memberships failed "
			"(%d): nothing will be cleaned", err);
		imc_timer_cancel(p->s->loop, &p->audit_timer);
		audit_set(p, AU_DONE);
		return;
	}
	if (!ans->status)
		keep_records(p, ans);
	if (p->audit_state == AU_LATE)
		run_deletes(p);
	else
		audit_set(p, AU_GRACE);
}

static void on_grace(struct imc_timer *t)
{
	struct port *p = imc_container_of(t, struct port, audit_timer);

	if (p->audit_state == AU_QUERY)
		audit_set(p, AU_LATE);
	else if (p->audit_state == AU_GRACE)
		run_deletes(p);
}

void srv_audit_start(struct port *p)
{
	struct imc_mcmr r = { 0 };
	struct imc_sa_mad m;

	imc_timer_init(&p->audit_timer, on_grace);
	r.port_gid = p->desc.gid;
	req_init(p, &m, UMAD_SA_METHOD_GET_TABLE, &r,
		 UMAD_SA_MCM_COMP_MASK_PORT_GID);
	if (imc_sa_query_start(p->sa, &m, on_table, p, &p->audit_q) < 0) {
		srv_log(p->s, IMC_MCASTD_LOG_WARN, "audit: cannot query SA");
		audit_set(p, AU_DONE);
		return;
	}
	audit_set(p, AU_QUERY);
	(void)imc_timer_arm_in(p->s->loop, &p->audit_timer, p->s->cfg.grace);
}

void srv_audit_stop(struct port *p)
{
	if (p->audit_q)
		imc_sa_query_cancel(p->audit_q);
	p->audit_q = NULL;
	if (p->sa)
		imc_timer_cancel(p->s->loop, &p->audit_timer);
	while (p->dels) {
		struct audit_del *d = p->dels;

		p->dels = d->next;
		if (d->q)
			imc_sa_query_cancel(d->q);
		free(d);
	}
	free(p->recs);
	p->recs = NULL;
}
