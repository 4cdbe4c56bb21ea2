/* The fabric side of the ibsim-protocol server: one MAD agent of the
 * fabric (fabric_mad.h) per client, and the SMA's attributes for the
 * control messages. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "ibmcast/fabric_mad.h"
#include "simserve/simserve_int.h"

enum {
	ATTR_NODE_INFO = 0x0011,      /* IBA 14.2.5 Table 126 */
	ATTR_PORT_INFO = 0x0015,
	ATTR_PKEY_TABLE = 0x0016,
	OFF_MGMT_CLASS = 1,
	/* NodeInfo:PartitionCap (IBA 14.2.5.3) */
	OFF_PARTITION_CAP = 28,
};

#define SLOT_MASK (0xffffull << 48)

/* A MAD from the fabric as a struct sim_request for the client: the
 * address words as umad2sim reads them (network order in host words). */
static void recv_cb(struct imc_fabric_mad_agent *a,
		    const struct imc_fabric_mad_addr *from,
		    const uint8_t *mad, size_t len, void *ctx)
{
	const struct imc_ibsim_pkt p = { from->dlid, from->slid, from->dqp,
					 from->sqp, 0, len, mad };
	uint8_t pkt[IMC_IBSIM_REQ_SIZE];

	(void)a;
	imc_ibsim_pkt_write(pkt, &p);
	ss_client_queue(ctx, pkt);
}

int ss_agent_open(struct imc_simserve *s, struct ss_client *c)
{
	struct imc_fabric_mad_agent *a;
	int r = imc_fabric_mad_attach(s->f, c->node, c->port, recv_cb, c, &a);

	if (r < 0)
		return r;
	/* The slot rides in TID bits 48-63 of every request the client
	 * sends (simserve.c), so its responses come back by it. */
	imc_fabric_mad_set_tid_filter(a, SLOT_MASK, (uint64_t)c->slot << 48);
	c->agent = (struct ss_agent *)a;
	return 0;
}

void ss_agent_close(struct ss_client *c)
{
	imc_fabric_mad_detach((struct imc_fabric_mad_agent *)c->agent);
	c->agent = NULL;
}

int ss_agent_send(struct ss_client *c, uint8_t *buf)
{
	struct imc_fabric_mad_addr to;
	struct imc_ibsim_pkt p;
	int r = imc_ibsim_pkt_unpack(&p, buf, IMC_IBSIM_REQ_SIZE);

	if (r < 0)
		return r;
	memset(&to, 0, sizeof(to));
	to.dlid = p.dlid;
	/* 0 asks for the port's own LID, as with ibsim; umad2sim sends
	 * 0xFFFF with a permissive DLID. */
	to.slid = p.slid;
	to.dqp = p.dqp;
	/* ibsim relays all 256 bytes; an SMP is exactly 256 (IBA 14.2.1.1). */
	if ((p.mad[OFF_MGMT_CLASS] & 0x7f) == 0x01)
		p.len = IMC_FABRIC_MAD_SIZE;
	return imc_fabric_mad_send((struct imc_fabric_mad_agent *)c->agent, &to,
				   p.mad, p.len);
}

static int sma_get(struct imc_simserve *s, uint32_t node, unsigned port,
		   uint16_t attr, uint32_t mod, uint8_t out[64])
{
	int r = imc_fabric_sma_get(s->f, node, port, attr, mod, out);

	return r < 0 ? r : r ? -EIO : 0;
}

int ss_node_info(struct imc_simserve *s, uint32_t node, unsigned port,
		 uint8_t out[64])
{
	return sma_get(s, node, port, ATTR_NODE_INFO, 0, out);
}

int ss_port_info(struct imc_simserve *s, uint32_t node, unsigned port,
		 uint8_t out[64])
{
	return sma_get(s, node, port, ATTR_PORT_INFO, port, out);
}

/* The first block of the P_Key table, cut to the node's PartitionCap as
 * ibsim's sim_ctl_get_pkeys() does. */
int ss_pkeys(struct imc_simserve *s, uint32_t node, unsigned port,
	     uint8_t out[64])
{
	uint8_t ni[64];
	unsigned cap;
	int r = ss_node_info(s, node, port, ni);

	if (r < 0)
		return r;
	r = sma_get(s, node, port, ATTR_PKEY_TABLE, 0, out);
	if (r < 0)
		return r;
	cap = (unsigned)ni[OFF_PARTITION_CAP] << 8 | ni[OFF_PARTITION_CAP + 1];
	if (cap * 2 < 64)
		memset(out + cap * 2, 0, 64 - cap * 2);
	return 0;
}

int ss_set_issm(struct ss_client *c, bool issm)
{
	int r = imc_fabric_mad_set_sm((struct imc_fabric_mad_agent *)c->agent,
				      issm);

	if (r == 0)
		c->issm = issm;
	return r;
}
