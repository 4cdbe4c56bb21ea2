/* The GSI of each fabric port (QP1, IBA 13.5), the run's: one per port,
 * shared by every MAD user of the port (SA clients, join trackers). The
 * port's QP1 is the run's, unless a MAD engine of the port's own (the
 * SA) has it lent: the engine then feeds the GSI the MADs it does not
 * take. The GSIs outlive the run data (their users), which remove their
 * agents when they go. */
#include <errno.h>
#include <stdlib.h>

#include "ibmcast/gsi.h"
#include "ibmcast/packet.h"
#include "scenario/runner.h"
#include "scenario/scn.h"

struct port_gsi {
	struct imc_gsi *gsi;
	struct imc_qp *qp1;       /* the run's QP1, or NULL */
	bool lent;                /* QP1 is an engine's (no QP1 of the run's) */
	uint32_t node;
	unsigned port;
};

struct scn_port_gsis {
	struct scn_ports ports;   /* struct port_gsi, made on first use */
};

static void qp1_recv(struct imc_qp *qp, const struct imc_ud_recv *rv,
		     void *ctx)
{
	struct port_gsi *pg = ctx;

	(void)qp;
	imc_gsi_input(pg->gsi, rv);
}

static bool pkey_in(const struct imc_port_attr *pa, uint16_t pkey)
{
	for (unsigned i = 0; i < pa->npkeys; i++)
		if (pa->pkeys[i] == pkey)
			return true;
	return false;
}

/* node:port's slot with its GSI (no QP yet when new). */
static struct port_gsi *slot_get(struct imc_scn_ctx *c, uint32_t node,
				 unsigned port)
{
	const struct imc_topo *t = imc_scn_topo(c);
	struct scn_port_gsis **gp = scn_ctx_port_gsis(c);
	struct port_gsi *pg;
	void **slot;

	if (node >= t->nnodes || port > t->node[node].nports)
		return NULL;
	if (!*gp && (*gp = calloc(1, sizeof(**gp))) &&
	    scn_ports_init(&(*gp)->ports, t)) {
		free(*gp);
		*gp = NULL;
	}
	if (!*gp)
		return NULL;
	slot = scn_ports_at(&(*gp)->ports, node, port);
	pg = *slot;
	if (!pg && (pg = *slot = calloc(1, sizeof(*pg))))
		*pg = (struct port_gsi){ .node = node, .port = port };
	if (pg && !pg->gsi && imc_gsi_create_shared(NULL, &pg->gsi))
		return NULL;
	return pg;
}

/* A QP1 of the run's for the GSI, unless lent. The GSI sends with a
 * P_Key of the port's table (IBA 13.5.3): the default partition's, full
 * membership first, else the table's first. */
static int own_qp1(struct imc_scn_ctx *c, struct port_gsi *pg)
{
	struct imc_fabric *f = imc_scn_fabric(c);
	struct imc_port_attr pa;
	uint16_t pkey = IMC_PKEY_DEFAULT;
	int rc;

	if (pg->qp1 || pg->lent)
		return 0;
	if (!imc_fabric_port_attr(f, pg->node, pg->port, &pa) && pa.npkeys) {
		pkey = scn_local_pkey(f, pg->node, pg->port, IMC_PKEY_DEFAULT);
		if ((pkey & 0x7fff) != 0x7fff || !pkey_in(&pa, pkey))
			pkey = pa.pkeys[0];
	}
	rc = imc_qp_create(f, pg->node, pg->port, IMC_QP1, IMC_QP1_QKEY, pkey,
			   qp1_recv, pg, &pg->qp1);
	if (!rc)
		imc_gsi_set_qp(pg->gsi, pg->qp1);
	return rc;
}

int scn_port_gsi(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		 struct imc_gsi **out)
{
	struct port_gsi *pg = slot_get(c, node, port);

	if (!pg)
		return -ENOMEM;
	*out = pg->gsi;
	return own_qp1(c, pg);
}

int scn_port_qp1_lend(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		      struct imc_gsi **out)
{
	struct port_gsi *pg = slot_get(c, node, port);

	if (!pg)
		return -ENOMEM;
	imc_gsi_set_qp(pg->gsi, NULL);
	imc_qp_destroy(pg->qp1);
	pg->qp1 = NULL;
	pg->lent = true;
	*out = pg->gsi;
	return 0;
}

int scn_port_qp1_return(struct imc_scn_ctx *c, uint32_t node, unsigned port)
{
	struct port_gsi *pg = slot_get(c, node, port);

	if (!pg)
		return -ENOMEM;
	imc_gsi_set_qp(pg->gsi, NULL);
	pg->lent = false;
	return own_qp1(c, pg);
}

static void pg_free(void *data)
{
	struct port_gsi *pg = data;

	imc_gsi_destroy(pg->gsi);
	imc_qp_destroy(pg->qp1);
	free(pg);
}

void scn_port_gsis_free(struct scn_port_gsis *g)
{
	if (!g)
		return;
	scn_ports_fini(&g->ports, pg_free);
	free(g);
}
