/* One multicast spanning tree over the switches, programmed into MFTs.
 *
 * Built on the public fabric API only, as the SA engine programs MFTs:
 * breadth first search from the switch of the first member over cables
 * that are up, each switch's ports in increasing order (so the tree is
 * the same on every run), then the path from each member's switch to the
 * root. A switch's mask holds its tree edges plus the ports of its member
 * HCAs; a packet entering a tree switch leaves by every other tree port,
 * so it crosses each tree edge once and reaches each member port once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/fabric.h"
#include "ibmcast/packet.h"

struct tnode {
	uint32_t parent;       /* IMC_TOPO_NONE at the root and off the tree */
	uint8_t up_port;       /* port toward parent */
	uint8_t down_port;     /* parent's port toward this switch */
	bool seen;
	bool linked;           /* edge to parent already in the masks */
	struct imc_portmask mask;
};

static bool member_ok(const struct imc_topo *t, uint32_t node, unsigned port)
{
	return node < t->nnodes && t->node[node].type == IMC_NODE_HCA &&
	       port >= 1 && port <= t->node[node].nports &&
	       t->node[node].port[port].peer != IMC_TOPO_NONE;
}

/* The switch a member hangs off, IMC_TOPO_NONE when its cable is down or
 * leads to another HCA. */
static uint32_t attach_switch(const struct imc_fabric *f, uint32_t node,
			      unsigned port)
{
	const struct imc_topo *t = imc_fabric_topo(f);
	uint32_t peer = t->node[node].port[port].peer;

	if (!imc_fabric_link_up(f, node, port) ||
	    t->node[peer].type != IMC_NODE_SWITCH)
		return IMC_TOPO_NONE;
	return peer;
}

static void bfs(const struct imc_fabric *f, struct tnode *tn, uint32_t root,
		uint32_t *queue)
{
	const struct imc_topo *t = imc_fabric_topo(f);
	size_t head = 0, tail = 0;

	tn[root].seen = true;
	queue[tail++] = root;
	while (head < tail) {
		uint32_t s = queue[head++];
		const struct imc_topo_node *sn = &t->node[s];

		for (unsigned p = 1; p <= sn->nports; p++) {
			uint32_t peer = sn->port[p].peer;

			if (peer == IMC_TOPO_NONE ||
			    t->node[peer].type != IMC_NODE_SWITCH ||
			    tn[peer].seen || !imc_fabric_link_up(f, s, p))
				continue;
			tn[peer].seen = true;
			tn[peer].parent = s;
			tn[peer].up_port = sn->port[p].peer_port;
			tn[peer].down_port = (uint8_t)p;
			queue[tail++] = peer;
		}
	}
}

int imc_fabric_mft_program_tree(struct imc_fabric *f, uint16_t mlid,
				const uint32_t *nodes, const unsigned *ports,
				size_t n)
{
	const struct imc_topo *t = imc_fabric_topo(f);
	uint32_t root = IMC_TOPO_NONE;
	struct tnode *tn;
	uint32_t *queue;
	int reached = 0, err = 0;

	if (!imc_lid_is_mcast(mlid) || (n && (!nodes || !ports)))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!member_ok(t, nodes[i], ports[i]))
			return -EINVAL;
		if (root == IMC_TOPO_NONE)
			root = attach_switch(f, nodes[i], ports[i]);
	}
	tn = calloc(t->nnodes ? t->nnodes : 1, sizeof(*tn));
	queue = malloc((t->nnodes ? t->nnodes : 1) * sizeof(*queue));
	if (!tn || !queue) {
		free(tn);
		free(queue);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->nnodes; i++)
		tn[i].parent = IMC_TOPO_NONE;
	if (root != IMC_TOPO_NONE)
		bfs(f, tn, root, queue);

	for (size_t i = 0; i < n; i++) {
		uint32_t s = attach_switch(f, nodes[i], ports[i]);
		unsigned sp;

		if (s == IMC_TOPO_NONE || !tn[s].seen)
			continue;
		sp = t->node[nodes[i]].port[ports[i]].peer_port;
		if (!imc_portmask_test(&tn[s].mask, sp))
			reached++;
		imc_portmask_set(&tn[s].mask, sp);
		/* Up to the root, or to a branch already joined. */
		while (tn[s].parent != IMC_TOPO_NONE && !tn[s].linked) {
			uint32_t up = tn[s].parent;

			imc_portmask_set(&tn[s].mask, tn[s].up_port);
			imc_portmask_set(&tn[up].mask, tn[s].down_port);
			tn[s].linked = true;
			s = up;
		}
	}

	for (uint32_t i = 0; i < t->nnodes && !err; i++)
		if (t->node[i].type == IMC_NODE_SWITCH)
			err = imc_fabric_mft_set(f, i, mlid, &tn[i].mask);
	free(tn);
	free(queue);
	return err ? err : reached;
}
