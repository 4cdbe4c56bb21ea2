/* The fabric side of the ibsim-protocol server, before the fabric has
 * MAD agents: the attributes come from the topology and the fabric's
 * port attributes, and no MAD can be sent (every packet goes back with
 * status 110). */
#include <errno.h>
#include <string.h>

#include "ibmcast/sa_records.h"
#include "simserve/simserve_int.h"

int ss_agent_open(struct imc_simserve *s, struct ss_client *c)
{
	(void)s;
	c->agent = NULL;
	return 0;
}

void ss_agent_close(struct ss_client *c)
{
	c->agent = NULL;
}

int ss_agent_send(struct ss_client *c, uint8_t *buf)
{
	(void)c;
	(void)buf;
	return -ENOSYS;
}

int ss_node_info(struct imc_simserve *s, uint32_t node, unsigned port,
		 uint8_t out[64])
{
	const struct imc_topo_node *tn = &s->topo->node[node];
	struct imc_node_info ni;

	memset(&ni, 0, sizeof(ni));
	ni.base_version = 1;
	ni.class_version = 1;
	ni.node_type = tn->type == IMC_NODE_SWITCH ? IMC_NODE_TYPE_SWITCH
						   : IMC_NODE_TYPE_CA;
	ni.num_ports = (uint8_t)tn->nports;
	ni.sys_image_guid = tn->guid;
	ni.node_guid = tn->guid;
	ni.port_guid = tn->port[port].guid;
	ni.partition_cap = IMC_PKEY_TABLE_MAX;
	ni.local_port = (uint8_t)port;
	memset(out, 0, 64);
	return imc_node_info_pack(&ni, out, 64) < 0 ? -EIO : 0;
}

int ss_port_info(struct imc_simserve *s, uint32_t node, unsigned port,
		 uint8_t out[64])
{
	struct imc_port_attr pa;
	struct imc_port_info pi;
	int r = imc_fabric_port_attr(s->f, node, port, &pa);

	if (r < 0)
		return r;
	memset(&pi, 0, sizeof(pi));
	pi.gid_prefix = 0xfe80000000000000ull;
	pi.lid = pa.lid;
	pi.master_sm_lid = pa.sm_lid;
	pi.local_port = (uint8_t)port;
	pi.state = (uint8_t)pa.state;
	pi.phys_state = pa.state == IMC_PORT_DOWN ? 2 : 5;
	pi.width_active = 2;
	pi.speed_active = 4;
	pi.mtu_cap = (uint8_t)pa.mtu;
	pi.neighbor_mtu = (uint8_t)pa.mtu;
	memset(out, 0, 64);
	return imc_port_info_pack(&pi, out, 64) < 0 ? -EIO : 0;
}

int ss_pkeys(struct imc_simserve *s, uint32_t node, unsigned port,
	     uint8_t out[64])
{
	struct imc_port_attr pa;
	int r = imc_fabric_port_attr(s->f, node, port, &pa);

	if (r < 0)
		return r;
	memset(out, 0, 64);
	for (unsigned i = 0; i < pa.npkeys && i < 32; i++) {
		out[2 * i] = (uint8_t)(pa.pkeys[i] >> 8);
		out[2 * i + 1] = (uint8_t)pa.pkeys[i];
	}
	return 0;
}

int ss_set_issm(struct ss_client *c, bool issm)
{
	c->issm = issm;
	return 0;
}
