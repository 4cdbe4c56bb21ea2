/* Control messages of ibsim's client protocol (struct sim_ctl of ibsim
 * 0.10's ibsim.h: magic, clientid, type, len and 64 data bytes, all in
 * the host's order), answered in place as ibsim.c's sim_ctl() does.
 *
 * Beyond ibsim: a message that names an attached slot must come from the
 * control socket that connected it, so that one client cannot detach
 * another; CONNECT also takes a node or CA port GUID ("0x...") as node id.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "ibmcast/sa_records.h"
#include "simserve/simserve_int.h"

/* struct sim_client_info: id, qp, issm, nodeid[32]. */
static int do_connect(struct imc_simserve *s, uint8_t *d,
		      const struct sockaddr_un *from, socklen_t fromlen)
{
	char nodeid[IMC_IBSIM_NODEID_LEN + 1];
	const char *name;
	struct ss_client *c;
	uint32_t node = s->default_node;
	bool issm = ss_get32(d + 8) != 0;
	size_t n;

	memcpy(nodeid, d + 12, IMC_IBSIM_NODEID_LEN);
	nodeid[IMC_IBSIM_NODEID_LEN] = 0;
	if (nodeid[0] && ss_node_lookup(s, nodeid, &node) < 0)
		return -ENOENT;
	/* One SM per node (ibsim's sm_exists()); one that was killed
	 * does not count. */
	if (issm && ss_node_sm_busy(s, node, NULL))
		return -EBUSY;
	if (ss_client_attach(s, ss_get32(d), node, ss_get32(d + 4), issm, from,
			     fromlen, &c) < 0)
		return -EIO;
	ss_put32(d, c->slot);
	/* The node actually attached to, cut to the field like ibsim's
	 * strncpy(..., sizeof - 1). */
	name = s->topo->node[node].name;
	n = strnlen(name, IMC_IBSIM_NODEID_LEN - 1);
	memset(d + 12, 0, IMC_IBSIM_NODEID_LEN);
	memcpy(d + 12, name, n);
	return 0;
}

static int get_port(struct imc_simserve *s, struct ss_client *c,
		    uint8_t *d)
{
	struct imc_port_info pi;
	uint8_t raw[64];
	uint16_t lid;
	int r = ss_port_info(s, c->node, c->port, raw);

	if (r < 0 || imc_port_info_unpack(&pi, raw, sizeof(raw)) < 0)
		return r < 0 ? r : -EIO;
	/* struct sim_port: lid (host order), state. */
	memset(d, 0, IMC_IBSIM_CTL_DATA);
	lid = pi.lid;
	memcpy(d, &lid, 2);
	d[2] = pi.state;
	return 0;
}

static int get_vendor(struct imc_simserve *s, struct ss_client *c,
		      uint8_t *d)
{
	struct imc_node_info ni;
	uint8_t raw[64];
	uint64_t fw = 1;
	int r = ss_node_info(s, c->node, c->port, raw);

	if (r < 0 || imc_node_info_unpack(&ni, raw, sizeof(raw)) < 0)
		return r < 0 ? r : -EIO;
	/* struct sim_vendor: vendor id, part id, hw version, (4 bytes of
	 * padding), fw version (ibsim answers 1). */
	memset(d, 0, IMC_IBSIM_CTL_DATA);
	ss_put32(d, ni.vendor_id);
	ss_put32(d + 4, ni.device_id);
	ss_put32(d + 8, ni.revision);
	memcpy(d + 16, &fw, 8);
	return 0;
}

/* The GID as ibsim answers it: the port's subnet prefix (network order)
 * and the node GUID as the host holds it. */
static int get_gid(struct imc_simserve *s, struct ss_client *c, uint8_t *d,
		   bool prefix)
{
	uint8_t raw[64];
	uint64_t guid = s->topo->node[c->node].guid;
	int r = 0;

	if (prefix)
		r = ss_port_info(s, c->node, c->port, raw);
	if (r < 0)
		return r;
	memset(d, 0, IMC_IBSIM_CTL_DATA);
	if (prefix) {
		memcpy(d, raw + 8, 8);     /* PortInfo:GidPrefix */
		memcpy(d + 8, &guid, 8);
	} else {
		memcpy(d, &guid, 8);
	}
	return 0;
}

/* PortInfo of the port in data[0]: 0 or past the last port is the
 * client's own; a CA's ports count from 1, a switch's from 0. */
static int get_portinfo(struct imc_simserve *s, struct ss_client *c,
			uint8_t *d)
{
	const struct imc_topo_node *tn = &s->topo->node[c->node];
	unsigned p = d[0];

	if (p == 0 || p > tn->nports)
		p = c->port;
	return ss_port_info(s, c->node, p, d);
}

static int set_issm(struct imc_simserve *s, struct ss_client *c,
		    const uint8_t *d)
{
	bool on = ss_get32(d) != 0;

	if (on && ss_node_sm_busy(s, c->node, c))
		return -EBUSY;
	return ss_set_issm(c, on);
}

static int dispatch(struct imc_simserve *s, struct ss_client *c,
		    uint32_t type, uint8_t *d)
{
	switch (type) {
	case IMC_IBSIM_CTL_DISCONNECT:
		ss_client_detach(c);
		return 0;
	case IMC_IBSIM_CTL_GET_PORT:
		return get_port(s, c, d);
	case IMC_IBSIM_CTL_GET_VENDOR:
		return get_vendor(s, c, d);
	case IMC_IBSIM_CTL_GET_GID:
		return get_gid(s, c, d, true);
	case IMC_IBSIM_CTL_GET_GUID:
		return get_gid(s, c, d, false);
	case IMC_IBSIM_CTL_GET_NODEINFO:
		return ss_node_info(s, c->node, c->port, d);
	case IMC_IBSIM_CTL_GET_PORTINFO:
		return get_portinfo(s, c, d);
	case IMC_IBSIM_CTL_SET_ISSM:
		return set_issm(s, c, d);
	case IMC_IBSIM_CTL_GET_PKEYS:
		return ss_pkeys(s, c->node, c->port, d);
	default:
		return -EOPNOTSUPP;
	}
}

bool ss_ctl_handle(struct imc_simserve *s, uint8_t *buf,
		   const struct sockaddr_un *from, socklen_t fromlen)
{
	uint32_t type = ss_get32(buf + IMC_IBSIM_CTL_OFF_TYPE);
	uint32_t slot = ss_get32(buf + IMC_IBSIM_CTL_OFF_CLIENT);
	uint8_t *d = buf + IMC_IBSIM_CTL_OFF_DATA;
	struct ss_client *c;
	int r;

	if (ss_get32(buf) != IMC_IBSIM_MAGIC)
		return false;           /* not ibsim's; ibsim ignores it too */
	s->st.ctl_requests++;
	if (type == IMC_IBSIM_CTL_CONNECT) {
		r = do_connect(s, d, from, fromlen);
	} else if (!(c = ss_client_get(s, slot))) {
		/* ibsim answers DISCONNECT of a free slot with success. */
		r = type == IMC_IBSIM_CTL_DISCONNECT &&
				    slot < IMC_SIMSERVE_MAX_CLIENTS
			    ? 0
			    : -ENOENT;
	} else if (fromlen != c->ctl_len ||
		   memcmp(from, &c->ctl_addr, fromlen)) {
		r = -EPERM;
	} else {
		r = dispatch(s, c, type, d);
	}
	if (r < 0) {
		ss_put32(buf + IMC_IBSIM_CTL_OFF_TYPE, IMC_IBSIM_CTL_ERROR);
		s->st.ctl_errors++;
	}
	return true;
}
