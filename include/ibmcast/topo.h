/* Fabric topology: nodes (HCAs and switches), their ports, and the cables
 * between ports. This is the static shape of a fabric; LIDs, routes and
 * link state live in the subnet manager (subnet.h) and the simulator.
 *
 * Node indices are dense (0 .. nnodes-1) and follow the order nodes were
 * added (file order for parsed topologies), so everything derived from a
 * topology is deterministic. Ports are numbered from 1 as in IBA; port 0
 * of a switch is its management port (IBA 18.2.1) and is never cabled.
 */
#ifndef IBMCAST_TOPO_H
#define IBMCAST_TOPO_H

#include <stdio.h>

#include "ibmcast/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMC_TOPO_NONE UINT32_MAX  /* no node: an uncabled port's peer */
#define IMC_TOPO_MAX_PORTS 254    /* external ports per node, IBA 14.2.5.x */
#define IMC_TOPO_MAX_NAME 255     /* bytes in a node name, NUL excluded */
#define IMC_TOPO_MAX_NODES 50000000u /* nodes in one topology */

enum imc_node_type {
	IMC_NODE_HCA = 1,    /* channel adapter ("Hca" or "Ca" in net files) */
	IMC_NODE_SWITCH = 2,
};

struct imc_topo_port {
	uint32_t peer;       /* peer node index, IMC_TOPO_NONE if not cabled */
	uint8_t peer_port;
	uint8_t width;       /* lanes: 1, 4, 8 or 12 (default 4) */
	uint64_t guid;       /* port GUID: each HCA port; a switch's port 0 */
};

struct imc_topo_node {
	enum imc_node_type type;
	uint16_t nports;             /* external ports, 1 .. nports */
	uint64_t guid;               /* node GUID */
	char *name;                  /* unique */
	struct imc_topo_port *port;  /* nports + 1 entries, [0] = port 0 */
};

struct imc_topo_index;

struct imc_topo {
	uint32_t nnodes;
	struct imc_topo_node *node;
	uint32_t sm_node;            /* where the SM runs: IMC_TOPO_NONE = none */
	uint8_t sm_port;
	struct imc_topo_index *index;  /* name -> node, private */
	uint32_t cap;                  /* private */
};

/* An empty topology; free with imc_topo_destroy. */
int imc_topo_create(struct imc_topo **out);
void imc_topo_destroy(struct imc_topo *t);

/* Adds a node; name must be unique (-EEXIST), nports 1..IMC_TOPO_MAX_PORTS
 * (-EINVAL). A guid of 0 asks for one derived from the node index. Port
 * GUIDs of HCAs are guid + port number, as real HCAs number them; a
 * switch's port 0 GUID is its node GUID. A name is 1..IMC_TOPO_MAX_NAME
 * bytes without '"' or control characters so it fits a net file (-EINVAL);
 * more than IMC_TOPO_MAX_NODES nodes give -ENOSPC. */
int imc_topo_add_node(struct imc_topo *t, enum imc_node_type type,
		      unsigned nports, const char *name, uint64_t guid,
		      uint32_t *idx);

/* Cables port pa of node a to port pb of node b. -EINVAL for a bad node
 * or port (port 0 included, or a port to itself) or a width other than
 * 0 (meaning 4), 1, 4, 8 or 12; -EBUSY when either port is already cabled
 * to something else; cabling the same pair twice is accepted (net files
 * list each cable from both ends) and sets the width again. */
int imc_topo_connect(struct imc_topo *t, uint32_t a, unsigned pa, uint32_t b,
		     unsigned pb, unsigned width);

/* Node index by name in O(1); -ENOENT if absent. */
int imc_topo_find(const struct imc_topo *t, const char *name, uint32_t *idx);

/* Reads an ibnetdiscover-format net file, the format ibsim reads. On error
 * returns a negative errno and, when err is not NULL, writes
 * "FILE:LINE: what was expected" into err.
 *
 * Nodes are indexed in file order. GUIDs follow ibsim: "caguid=" and
 * "switchguid=" set the next node's GUID, otherwise HCAs count up from
 * 0x100000 (nports + 1 GUIDs each) and switches from 0x200000; "(guid)"
 * after a port sets that port's GUID. A cable listed from one end only is
 * made anyway (ibsim 0.10 rejects it). "include FILE" reads FILE relative
 * to the including file, at most 8 deep. The SM port is named by an
 * 'smport "node"[port]' line, else it is the first port line's port, or
 * port 0 when that line belongs to a switch; IMC_TOPO_NONE when there is
 * no port line. -EINVAL for bad content, -ELOOP for include loops and
 * depth, -EFBIG for a file over 256 MiB, open()'s errno for a file that
 * cannot be read, -ENOMEM. On success *out is freed by the caller with
 * imc_topo_destroy; on error *out is NULL. */
int imc_topo_parse_file(const char *path, struct imc_topo **out, char *err,
			size_t errlen);
/* The same from a string; name (NULL: "<string>") is used in error
 * messages and as the directory base of relative includes. */
int imc_topo_parse_string(const char *text, const char *name,
			  struct imc_topo **out, char *err, size_t errlen);

/* Builds a topology from a spec such as "switch:hosts=16",
 * "fat-tree:leaves=64,hosts=30,spines=16" (two levels) or
 * "fat-tree:pods=8,leaves=8,hosts=16,aggs=8,spines=16" (three levels),
 * each optionally with ",ports=P" (switch radix; without it 36, raised
 * to what the wiring needs up to 254) and ",width=W". The first HCA runs
 * the SM. Names, port numbering and GUIDs are described in
 * src/fabric/topo_gen.c. On error returns -EINVAL (-E2BIG past
 * IMC_TOPO_MAX_NODES) and writes "generate: what" into err. */
int imc_topo_generate(const char *spec, struct imc_topo **out, char *err,
		      size_t errlen);

/* Writes t in net-file form; parsing the output gives back the same
 * topology (imc_topo_compare() == 0), and ibsim reads it. An
 * 'smport' line (which ibsim ignores) is written only when the first
 * port line would not give t's SM port. -EINVAL when t holds what a net
 * file cannot (a node GUID of 0, a non-default GUID on an uncabled port,
 * a bad SM port), -EIO when writing fails. */
int imc_topo_write(const struct imc_topo *t, FILE *f);

/* Counts of nodes by type and of cables, in O(1). Any pointer may be
 * NULL. */
void imc_topo_counts(const struct imc_topo *t, uint32_t *hcas,
		     uint32_t *switches, uint32_t *cables);

/* 0 when a and b are the same topology: same nodes in the same order with
 * the same types, names, port counts, node and port GUIDs, cables, widths
 * and SM port. Otherwise 1, and when why is not NULL a short description
 * of the first difference. */
int imc_topo_compare(const struct imc_topo *a, const struct imc_topo *b,
		     char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif
