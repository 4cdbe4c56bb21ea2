/* The runner's traffic flows: count datagrams from one port's QP,
 * interval apart, each carrying the scenario header (magic, flow number,
 * sequence) that the receivers count duplicates by. The send and mcast
 * verbs, sa-mcast, mcast-send and sa-join's send= all send through it.
 * A flow lives until the run ends (run data keyed by the flow). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/packet.h"
#include "scenario/scn.h"
#include "util/bytes.h"

struct flow {
	struct imc_timer timer;
	struct imc_scn_ctx *c;
	struct scn_flow f;
	uint32_t seq;
	uint8_t buf[];
};

uint16_t scn_local_pkey(struct imc_fabric *f, uint32_t node, unsigned port,
			uint16_t pkey)
{
	struct imc_port_attr pa;
	uint16_t best = pkey;
	bool found = false;

	if (imc_fabric_port_attr(f, node, port, &pa))
		return pkey;
	for (unsigned i = 0; i < pa.npkeys; i++) {
		if ((pa.pkeys[i] & 0x7fff) != (pkey & 0x7fff))
			continue;
		if (!found || (pa.pkeys[i] & 0x8000))
			best = pa.pkeys[i];
		found = true;
	}
	return best;
}

static void flow_free(void *data)
{
	struct flow *fl = data;

	imc_timer_cancel(imc_scn_loop(fl->c), &fl->timer);
	free(fl);
}

static void flow_fire(struct imc_timer *t)
{
	struct flow *fl = imc_container_of(t, struct flow, timer);
	const struct scn_flow *f = &fl->f;
	struct imc_scn_ctx *c = fl->c;
	struct imc_ah ah = f->ah;
	int rc;

	if (f->follow) {
		struct imc_port_attr pa;

		/* The LID as it is now: a LID change is followed. */
		memset(&ah.dgid, 0, sizeof(ah.dgid));
		ah.dlid = 0;
		if (!imc_fabric_port_attr(imc_scn_fabric(c), f->to.node,
					  f->to.port, &pa)) {
			ah.dlid = pa.lid;
			ah.dgid = pa.gid;
		}
	}
	if (f->size >= IMC_SCN_HDR_SIZE)
		imc_put32(fl->buf + 8, fl->seq);
	rc = imc_qp_send(f->qp, &ah, f->dqpn, f->qkey, fl->buf, f->size);
	imc_scn_count_send(c, f->from.node, f->from.port, rc);
	if (++fl->seq < f->count)
		imc_timer_arm_in(imc_scn_loop(c), &fl->timer, f->interval);
}

int scn_flow_start(struct imc_scn_ctx *c, const struct scn_flow *f)
{
	struct flow *fl = calloc(1, sizeof(*fl) + (f->size ? f->size : 1));
	int rc;

	if (!fl)
		return -ENOMEM;
	fl->c = c;
	fl->f = *f;
	for (uint32_t i = 0; i < f->size; i++)
		fl->buf[i] = (uint8_t)i;
	if (f->size >= IMC_SCN_HDR_SIZE) {
		imc_put32(fl->buf, IMC_SCN_MAGIC);
		imc_put32(fl->buf + 4, f->id);
	}
	imc_timer_init(&fl->timer, flow_fire);
	rc = imc_scn_data_set(c, fl, fl, flow_free);
	if (rc) {
		free(fl);
		return rc;
	}
	/* The first datagram leaves now, from the loop. */
	return imc_timer_arm_in(imc_scn_loop(c), &fl->timer, 0);
}

int scn_flow_to_group(struct imc_scn_ctx *c, const struct scn_flow *tmpl,
		      const struct scn_group *g)
{
	struct scn_flow f = *tmpl;
	int rc;

	/* A member sends from the QP it has attached: the group's Q_Key
	 * and its port's P_Key of the group's partition. */
	rc = imc_scn_qp(c, f.from.node, f.from.port,
			scn_local_pkey(imc_scn_fabric(c), f.from.node,
				       f.from.port, g->pkey),
			g->qkey, &f.qp);
	if (rc)
		return rc;
	/* IBA 10.5.2.5: multicast goes to QP 0xFFFFFF with a GRH. */
	f.dqpn = IMC_MCAST_QPN;
	f.qkey = g->qkey;
	f.ah.dlid = g->mlid;
	f.ah.has_grh = true;
	f.ah.dgid = g->mgid;
	f.ah.hop_limit = 0xff;
	return scn_flow_start(c, &f);
}
