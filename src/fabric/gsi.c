/* QP1 of a fabric port shared by several agents (see ibmcast/gsi.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gsi.h"
#include "ibmcast/packet.h"
#include "util/bytes.h"

struct imc_gsi {
	struct imc_qp *qp;
	bool owned;                 /* created here: destroyed here */
	struct imc_gsi_agent agents; /* list head */
	bool *gone;                 /* set by destroy during dispatch */
	struct imc_gsi_stats st;
};

static struct imc_gsi *gsi_new(void)
{
	struct imc_gsi *g = calloc(1, sizeof(*g));

	if (g)
		g->agents.next = g->agents.prev = &g->agents;
	return g;
}

/* The high TID word of a response (IBA 13.4.5: R bit of the method;
 * 13.4.2: TransactionID at bytes 8..15), 0 for anything else. */
static uint32_t response_tid_high(const struct imc_ud_recv *r)
{
	if (r->len < 16 || !(r->data[3] & 0x80))
		return 0;
	return imc_get32(r->data + 8);
}

static void dispatch(struct imc_gsi *g, const struct imc_ud_recv *r)
{
	struct imc_gsi_agent *a, *owner = NULL;
	uint32_t hi = response_tid_high(r);
	bool gone = false;

	g->st.received++;
	if (hi) {
		for (a = g->agents.next; a != &g->agents && !owner;
		     a = a->next)
			if (a->tid_high == hi)
				owner = a;
	}
	g->gone = &gone;
	for (a = owner ? owner : g->agents.next; a != &g->agents;
	     a = a->next) {
		if (!owner && a->tid_high)
			continue;
		/* An agent that takes the MAD may change the list or free
		 * the GSI: nothing is touched after it. */
		if (a->recv(a, r) == 0) {
			if (!gone)
				g->gone = NULL;
			return;
		}
		if (owner)
			break;
	}
	g->gone = NULL;
	g->st.unclaimed++;
}

static void qp1_recv(struct imc_qp *qp, const struct imc_ud_recv *r,
		     void *ctx)
{
	(void)qp;
	dispatch(ctx, r);
}

void imc_gsi_input(void *ctx, const struct imc_ud_recv *r)
{
	dispatch(ctx, r);
}

static bool has_pkey(const struct imc_port_attr *pa, uint16_t pkey)
{
	for (unsigned i = 0; i < pa->npkeys; i++)
		if (pa->pkeys[i] == pkey)
			return true;
	return false;
}

int imc_gsi_create(struct imc_fabric *f, uint32_t node, unsigned port,
		   struct imc_gsi **out)
{
	const struct imc_topo *t = imc_fabric_topo(f);
	struct imc_port_attr pa;
	uint16_t pkey = IMC_PKEY_DEFAULT;
	struct imc_gsi *g;
	int rc;

	if (!out || node >= t->nnodes || t->node[node].type != IMC_NODE_HCA ||
	    imc_fabric_port_attr(f, node, port, &pa))
		return -EINVAL;
	/* The GSI sends with a P_Key of the port's table (IBA 13.5.3):
	 * the default partition's, full membership first. */
	if (pa.npkeys && !has_pkey(&pa, pkey))
		pkey = has_pkey(&pa, 0x7fff) ? 0x7fff : pa.pkeys[0];
	g = gsi_new();
	if (!g)
		return -ENOMEM;
	rc = imc_qp_create(f, node, port, IMC_QP1, IMC_QP1_QKEY, pkey,
			   qp1_recv, g, &g->qp);
	if (rc < 0) {
		free(g);
		return rc;
	}
	g->owned = true;
	*out = g;
	return 0;
}

int imc_gsi_create_shared(struct imc_qp *qp, struct imc_gsi **out)
{
	struct imc_gsi *g;

	if (!out)
		return -EINVAL;
	g = gsi_new();
	if (!g)
		return -ENOMEM;
	g->qp = qp;
	*out = g;
	return 0;
}

void imc_gsi_set_qp(struct imc_gsi *g, struct imc_qp *qp)
{
	g->qp = qp;
}

void imc_gsi_destroy(struct imc_gsi *g)
{
	struct imc_gsi_agent *a, *next;

	if (!g)
		return;
	if (g->gone)
		*g->gone = true;
	for (a = g->agents.next; a != &g->agents; a = next) {
		next = a->next;
		a->next = a->prev = NULL;
		a->gsi = NULL;
	}
	if (g->owned)
		imc_qp_destroy(g->qp);
	free(g);
}

void imc_gsi_add(struct imc_gsi *g, struct imc_gsi_agent *a)
{
	a->gsi = g;
	a->prev = g->agents.prev;
	a->next = &g->agents;
	g->agents.prev->next = a;
	g->agents.prev = a;
}

void imc_gsi_remove(struct imc_gsi_agent *a)
{
	if (!a->gsi)
		return;
	a->prev->next = a->next;
	a->next->prev = a->prev;
	a->next = a->prev = NULL;
	a->gsi = NULL;
}

struct imc_qp *imc_gsi_qp(const struct imc_gsi *g)
{
	return g->qp;
}

int imc_gsi_send(struct imc_gsi *g, uint16_t dlid, const uint8_t *mad,
		 size_t len)
{
	struct imc_ah ah;
	int rc;

	if (!g->qp || !dlid) {
		g->st.send_errors++;
		return -ENETDOWN;
	}
	memset(&ah, 0, sizeof(ah));
	ah.dlid = dlid;
	rc = imc_qp_send(g->qp, &ah, IMC_QP1, IMC_QP1_QKEY, mad, len);
	if (rc < 0)
		g->st.send_errors++;
	else
		g->st.sent++;
	return rc;
}

void imc_gsi_get_stats(const struct imc_gsi *g, struct imc_gsi_stats *st)
{
	*st = g->st;
}
