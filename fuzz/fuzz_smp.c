/* SMPs and PMA GMPs from an agent into the embedded fabric (fabric_mad.h):
 * whatever the bytes, a send is accepted or refused with -EINVAL or
 * -ENETDOWN, the loop runs dry (no SMP travels forever: hop counts are
 * bounded and every hop pointer step is checked), and what comes back to
 * the agent is a response; the answer to a directed-route Get or Set has
 * the D bit set and its hop pointer back at 0 (IBA 14.2.2). The same MAD
 * handed straight to every SMA/PMA gives 0, 1 with a GetResp, or -EINVAL.
 *
 * Input: byte 0 flags (bit 0: send from Switch1's port 0 instead of
 * Hca1 port 1; bit 1: external SM; bit 2: the SM has configured LIDs
 * first), bytes 1-2 DLID, byte 3 DQP, then the MAD (its length is the
 * rest, up to 256 bytes).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/fabric.h"
#include "ibmcast/fabric_mad.h"
#include "ibmcast/loop.h"
#include "ibmcast/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char net[] =
	"Hca 2 \"H1\"\n[1] \"S1\"[1]\n"
	"Hca 2 \"H2\"\n[1] \"S2\"[1]\n"
	"Switch 8 \"S1\"\n[1] \"H1\"[1]\n[3] \"S2\"[3]\n[5] \"S2\"[5]\n"
	"Switch 8 \"S2\"\n[1] \"H2\"[1]\n[3] \"S1\"[3]\n[5] \"S1\"[5]\n";

struct got {
	unsigned n;
	bool bad;
	uint8_t req_method;
	uint8_t req_class;
};

static void recv_cb(struct imc_fabric_mad_agent *a,
		    const struct imc_fabric_mad_addr *from, const uint8_t *mad,
		    size_t len, void *ctx)
{
	struct got *g = ctx;

	(void)a;
	(void)from;
	g->n++;
	if (len < 24 || len > 256)
		g->bad = true;
	else if (!(mad[3] & 0x80) && mad[3] != 0x07)
		g->bad = true;
	else if (mad[1] == 0x81 && mad[3] == 0x81 && g->req_class == 0x81 &&
		 (g->req_method == 1 || g->req_method == 2) &&
		 (!(mad[4] & 0x80) || mad[6] != 0))
		g->bad = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_fabric_config cfg;
	struct imc_fabric_mad_agent *a = NULL;
	struct imc_fabric_mad_addr to = { 0 };
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	struct got g = { 0 };
	uint8_t mad[256];
	size_t len;
	int rc;

	if (size < 4)
		return 0;
	len = size - 4 > 256 ? 256 : size - 4;
	if (imc_topo_parse_string(net, NULL, &t, NULL, 0))
		abort();
	if (imc_loop_create_virtual(0, &loop))
		abort();
	imc_fabric_config_default(&cfg);
	cfg.external_sm = data[0] & 2;
	if (imc_fabric_create(t, loop, &cfg, &f))
		abort();
	if (!cfg.external_sm || (data[0] & 4))
		imc_fabric_bring_up(f);
	if (imc_loop_run(loop) < 0)
		abort();
	if (imc_fabric_mad_attach(f, data[0] & 1 ? 2 : 0, data[0] & 1 ? 0 : 1,
				  recv_cb, &g, &a))
		abort();
	to.dlid = (uint16_t)(data[1] << 8 | data[2]);
	to.dqp = data[3];
	memcpy(mad, data + 4, len);
	if (len >= 4) {
		g.req_class = mad[1];
		g.req_method = mad[3];
	}
	rc = imc_fabric_mad_send(a, &to, mad, len);
	if (rc && rc != -EINVAL && rc != -ENETDOWN)
		abort();
	if (imc_loop_run(loop) < 0 || g.bad)
		abort();
	for (uint32_t n = 0; n < t->nnodes; n++) {
		for (unsigned p = 0; p <= t->node[n].nports; p++) {
			uint8_t m2[256] = { 0 };

			memcpy(m2, data + 4, len);
			rc = imc_fabric_sma_process(f, n, p, m2, sizeof(m2));
			if (rc == 1 && m2[3] != 0x81)
				abort();
			if (rc != 0 && rc != 1 && rc != -EINVAL)
				abort();
		}
	}
	imc_fabric_mad_detach(a);
	imc_fabric_destroy(f);
	imc_loop_destroy(loop);
	imc_topo_destroy(t);
	return 0;
}
