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
 * one joins never add up to two memberships; what is left to do is give
 * up the bits nobody wants any more (a Delete names exactly those bits).
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
	uint8_t bits;
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

static void req_init(struct imc_sa_mad *m, uint8_t method,
		     const struct imc_mcmr *r, uint64_t comp)
{
	memset(m, 0, sizeof(*m));
	m->mad.method = method;
	m->mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	m->sa.comp_mask = comp;
	imc_mcmr_pack(r, m->data, sizeof(m->data));
}

static void on_delete(void *arg, int err, const struct imc_sa_answer *ans)
{
	struct audit_del *d = arg, **pp;
	struct port *p = d->p;
	char g[IMC_GID_STRLEN];

	imc_gid_format(&d->mgid, g);
	if (err || ans->status)
		srv_log(p->s, IMC_MCASTD_LOG_WARN,
			"audit: Delete of %s bits 0x%x: %s 0x%04x", g,
			d->bits, err ? "error" : "status",
			err ? (unsigned)-err : ans->status);
	else
		srv_log(p->s, IMC_MCASTD_LOG_INFO,
			"audit: deleted %s bits 0x%x nobody re-joined", g,
			d->bits);
	for (pp = &p->dels; *pp != d; pp = &(*pp)->next)
		;
	*pp = d->next;
	free(d);
	if (!p->dels)
		audit_set(p, AU_DONE);
}

struct held {
	struct imc_gid mgid;
	uint8_t bits;
};

struct held_list {
	struct held *v;
	size_t n;
	int err;
};

static void on_group(void *arg, const struct imc_mcast_group_info *g)
{
	struct held_list *l = arg;
	struct held *v;

	if (l->err)
		return;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v) {
		l->err = -ENOMEM;
		return;
	}
	l->v = v;
	v[l->n].mgid = g->rec.mgid;
	v[l->n].bits = g->join_state | g->wanted;
	l->n++;
}

static int held_cmp(const void *a, const void *b)
{
	return imc_gid_cmp(&((const struct held *)a)->mgid,
			   &((const struct held *)b)->mgid);
}

static void send_delete(struct port *p, const struct audit_rec *r,
			uint8_t bits)
{
	struct audit_del *d = calloc(1, sizeof(*d));
	struct imc_mcmr rec = { 0 };
	struct imc_sa_mad m;

	if (!d)
		return;
	rec.mgid = r->mgid;
	rec.port_gid = p->desc.gid;
	rec.join_state = bits;
	req_init(&m, UMAD_SA_METHOD_DELETE, &rec,
		 UMAD_SA_MCM_COMP_MASK_MGID | UMAD_SA_MCM_COMP_MASK_PORT_GID |
		 UMAD_SA_MCM_COMP_MASK_JOIN_STATE);
	d->p = p;
	d->mgid = r->mgid;
	d->bits = bits;
	if (imc_sa_query_start(p->sa, &m, on_delete, d, &d->q) < 0) {
		free(d);
		return;
	}
	d->next = p->dels;
	p->dels = d;
	p->s->st.audit_deletes++;
}

static void run_deletes(struct port *p)
{
	struct held_list l = { 0 };

	audit_set(p, AU_DELETE);
	/* In MGID order already: bsearch needs nothing more. */
	if (imc_mcast_foreach_group(p->t, on_group, &l) < 0 || l.err) {
		srv_log(p->s, IMC_MCASTD_LOG_ERR, "audit: out of memory");
		free(l.v);
		audit_set(p, AU_DONE);
		return;
	}
	for (size_t i = 0; i < p->nrecs; i++) {
		struct held key = { .mgid = p->recs[i].mgid };
		struct held *h = l.n ? bsearch(&key, l.v, l.n, sizeof(*l.v),
					       held_cmp) : NULL;
		uint8_t extra = p->recs[i].join_state & ~(h ? h->bits : 0);

		if (extra)
			send_delete(p, &p->recs[i], extra);
	}
	free(l.v);
	free(p->recs);
	p->recs = NULL;
	p->nrecs = 0;
	if (!p->dels)
		audit_set(p, AU_DONE);
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
		/* An SA may answer with more than the port's records. */
		if (!imc_gid_equal(&r.port_gid, &p->desc.gid) || !r.join_state)
			continue;
		p->recs[p->nrecs].mgid = r.mgid;
		p->recs[p->nrecs].join_state = r.join_state;
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
	req_init(&m, UMAD_SA_METHOD_GET_TABLE, &r,
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
		imc_sa_query_cancel(d->q);
		free(d);
	}
	free(p->recs);
	p->recs = NULL;
}
