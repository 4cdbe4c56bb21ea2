/* The multicast forwarding of one MLID as Graphviz DOT, read from the
 * switches' MFT entries as programmed (IBA 18.2.4.4), not from what an SA
 * meant to program: the drawing shows what packets would do.
 *
 * A switch with an entry is a box listing its entry's ports. A cable
 * whose both ends forward to each other is a tree edge (solid). A cable
 * forwarded over from one side only is drawn dashed red: a packet going
 * that way is dropped at the far switch, or a loop is open. An HCA port
 * a switch forwards to is a receiving member (ellipse). Order: switches
 * by node index, ports ascending, so the text is the same for the same
 * tables.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "ibmcast/fabric.h"
#include "ibmcast/packet.h"
#include "ibmcast/topo.h"

static void mask_print(FILE *out, const struct imc_portmask *m,
		       unsigned nports)
{
	const char *sep = "";

	for (unsigned p = 0; p <= nports; p++)
		if (imc_portmask_test(m, p)) {
			fprintf(out, "%s%u", sep, p);
			sep = ",";
		}
}

static int entry(const struct imc_fabric *f, uint32_t sw, uint16_t mlid,
		 struct imc_portmask *m)
{
	const struct imc_topo *t = imc_fabric_topo(f);

	if (sw >= t->nnodes || t->node[sw].type != IMC_NODE_SWITCH) {
		*m = (struct imc_portmask){ { 0 } };
		return 0;
	}
	return imc_fabric_mft_get(f, sw, mlid, m);
}

int imc_fabric_mft_dot(const struct imc_fabric *f, uint16_t mlid,
		       const char *title, FILE *out)
{
	const struct imc_topo *t;
	unsigned switches = 0, members = 0, edges = 0, broken = 0;

	if (!f || !out || !imc_lid_is_mcast(mlid))
		return -EINVAL;
	t = imc_fabric_topo(f);
	fprintf(out, "graph \"mlid_0x%04" PRIx16 "\" {\n", mlid);
	fprintf(out, "\tlabel=\"%s%sMLID 0x%04" PRIx16 "\";\n"
		"\tlabelloc=t;\n"
		"\tnode [fontname=\"monospace\" fontsize=10];\n"
		"\tedge [fontname=\"monospace\" fontsize=8];\n",
		title ? title : "", title ? "  " : "", mlid);
	for (uint32_t sw = 0; sw < t->nnodes; sw++) {
		const struct imc_topo_node *n = &t->node[sw];
		struct imc_portmask m;

		if (n->type != IMC_NODE_SWITCH)
			continue;
		if (imc_fabric_mft_get(f, sw, mlid, &m))
			return -EINVAL;
		if (!(m.bits[0] | m.bits[1] | m.bits[2] | m.bits[3]))
			continue;
		switches++;
		fprintf(out, "\t\"%s\" [shape=box label=\"%s\\nMFT ", n->name,
			n->name);
		mask_print(out, &m, n->nports);
		fprintf(out, "\"];\n");
		for (unsigned p = 1; p <= n->nports; p++) {
			const struct imc_topo_port *tp = &n->port[p];
			const struct imc_topo_node *pn;
			struct imc_portmask pm;

			if (!imc_portmask_test(&m, p) ||
			    tp->peer == IMC_TOPO_NONE)
				continue;
			pn = &t->node[tp->peer];
			if (pn->type != IMC_NODE_SWITCH) {
				members++;
				fprintf(out, "\t\"%s:%u\" [shape=ellipse];\n"
					"\t\"%s\" -- \"%s:%u\" "
					"[taillabel=\"%u\"];\n",
					pn->name, tp->peer_port, n->name,
					pn->name, tp->peer_port, p);
				continue;
			}
			if (entry(f, tp->peer, mlid, &pm))
				return -EINVAL;
			if (imc_portmask_test(&pm, tp->peer_port)) {
				/* Both ends forward: one tree edge, drawn
				 * from the lower node index. */
				if (tp->peer < sw)
					continue;
				edges++;
				fprintf(out, "\t\"%s\" -- \"%s\" [taillabel="
					"\"%u\" headlabel=\"%u\"];\n", n->name,
					pn->name, p, tp->peer_port);
			} else {
				broken++;
				fprintf(out, "\t\"%s\" -- \"%s\" [taillabel="
					"\"%u\" headlabel=\"%u\" style=dashed "
					"color=red];\n", n->name, pn->name, p,
					tp->peer_port);
			}
		}
	}
	fprintf(out, "\t// switches %u, tree edges %u, one-sided %u, "
		"receiving ports %u\n}\n", switches, edges, broken, members);
	return ferror(out) ? -EIO : 0;
}
