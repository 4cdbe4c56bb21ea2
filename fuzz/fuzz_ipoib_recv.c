/* The IPoIB interface's receive and transmit paths: any datagram, with or
 * without a GRH, on a group or unicast, from this partition or another,
 * and any packet from the host, is parsed within its length, counted, and
 * leaves nothing behind once the interface is destroyed.
 *
 * Input: byte 0 holds flags (bit 0 GRH, bit 1 to the broadcast group,
 * bit 2 another P_Key, bit 3 also hand the packet after the IPoIB header
 * to imc_ipoib_xmit(), bit 4 the sender's GID is ours), the rest is the
 * datagram (IPoIB header and packet). The SA never answers: the
 * interface stays JOINING, so answers and sends wait in their queues. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/ipoib.h"
#include "ibmcast/mcast.h"
#include "ibmcast/sa_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sa_send(void *ctx, const uint8_t *mad, size_t len)
{
	(void)ctx;
	(void)mad;
	(void)len;
	return 0;
}

static int op_send(void *ctx, const struct imc_ipoib_av *av, uint32_t qpn,
		   uint32_t qkey, const uint8_t *d, size_t len)
{
	(void)ctx;
	(void)av;
	(void)qpn;
	(void)qkey;
	(void)d;
	(void)len;
	abort();   /* nothing may be sent without the broadcast record */
}

static void op_deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	size_t *n = ctx;
	volatile uint8_t sink = 0;

	for (size_t i = 0; i < p->len; i++)
		sink ^= p->data[i];
	(void)sink;
	(*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_loop *loop;
	struct imc_sa_client *sac;
	struct imc_mcast *mc;
	struct imc_ipoib *ifc;
	struct imc_sa_transport tr = { .send = sa_send };
	struct imc_mcast_config mcfg;
	struct imc_ipoib_config cfg;
	struct imc_ipoib_ops ops = { .send = op_send, .deliver = op_deliver };
	struct imc_ipoib_rx rx;
	struct imc_ipoib_stats st;
	struct imc_ip_addr a;
	unsigned plen;
	size_t delivered = 0;
	uint8_t *copy;
	int qp;

	if (size < 1)
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	if (imc_loop_create_virtual(0, &loop) ||
	    imc_sa_client_create(loop, &tr, NULL, &sac))
		abort();
	imc_mcast_config_init(&mcfg);
	imc_gid_set(&mcfg.port_gid, 0xfe80000000000000ULL, 1);
	if (imc_mcast_create(loop, sac, &mcfg, NULL, &mc))
		abort();
	imc_ipoib_config_init(&cfg);
	cfg.port_gid = mcfg.port_gid;
	cfg.qpn = 0x48;
	ops.ctx = &delivered;
	if (imc_ipoib_create(loop, mc, &qp, &cfg, &ops, &ifc))
		abort();
	imc_ip_addr_parse("10.0.0.1/24", &a, &plen);
	imc_ipoib_addr_add(ifc, &a, plen);
	imc_ip_addr_parse("fd00::1/64", &a, &plen);
	imc_ipoib_addr_add(ifc, &a, plen);
	imc_ipoib_up(ifc);

	memset(&rx, 0, sizeof(rx));
	rx.src_qp = 0x99;
	rx.slid = 7;
	rx.pkey = data[0] & 4 ? 0x8001 : 0xFFFF;
	rx.has_grh = data[0] & 1;
	imc_gid_set(&rx.sgid, 0xfe80000000000000ULL, data[0] & 16 ? 1 : 2);
	if (data[0] & 2)
		imc_ipoib_bcast_mgid(0xFFFF, 2, &rx.dgid);
	else
		rx.dgid = cfg.port_gid;
	rx.data = copy;
	rx.len = size - 1;
	imc_ipoib_recv(ifc, &rx);
	if ((data[0] & 8) && size > 5)
		imc_ipoib_xmit(ifc, copy + 4, size - 5);
	imc_loop_run_until(loop, 100 * IMC_NSEC_PER_MSEC);

	imc_ipoib_get_stats(ifc, &st);
	if (st.rx_packets != delivered || st.tx_packets != 0 ||
	    st.queued > cfg.queue_total)
		abort();
	imc_ipoib_destroy(ifc);
	imc_mcast_destroy(mc);
	imc_sa_client_destroy(sac);
	if (imc_loop_destroy(loop) != 0)
		abort();
	free(copy);
	return 0;
}
