/* IPoIB ARP: unpack -> pack gives the same 56 bytes; every refusal has the
 * reason the header promises. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/ipoib_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_ipoib_arp p, q;
	uint8_t buf[IMC_IPOIB_ARP_LEN];
	int rc, fixed_ok;

	memset(&p, 0, sizeof(p));
	p.op = 0xBEEF;
	rc = imc_ipoib_arp_unpack(&p, data, size);
	if (size < IMC_IPOIB_ARP_LEN) {
		if (rc != -EMSGSIZE || p.op != 0xBEEF)
			abort();
		return 0;
	}
	fixed_ok = data[0] == 0 && data[1] == 32 && data[2] == 0x08 &&
		   data[3] == 0x00 && data[4] == 20 && data[5] == 4;
	if (!fixed_ok) {
		if (rc != -EINVAL || p.op != 0xBEEF)
			abort();
		return 0;
	}
	if (rc != IMC_IPOIB_ARP_LEN)
		abort();
	if (imc_ipoib_arp_pack(&p, buf, sizeof(buf)) != IMC_IPOIB_ARP_LEN ||
	    memcmp(buf, data, sizeof(buf)) != 0)
		abort();
	if (imc_ipoib_arp_unpack(&q, buf, sizeof(buf)) != IMC_IPOIB_ARP_LEN ||
	    q.op != p.op || q.spa != p.spa || q.tpa != p.tpa ||
	    q.sha.flags != p.sha.flags || q.sha.qpn != p.sha.qpn ||
	    q.tha.flags != p.tha.flags || q.tha.qpn != p.tha.qpn ||
	    memcmp(q.sha.gid.raw, p.sha.gid.raw, 16) != 0 ||
	    memcmp(q.tha.gid.raw, p.tha.gid.raw, 16) != 0)
		abort();
	if (imc_ipoib_arp_pack(&p, buf, sizeof(buf) - 1) != -ENOSPC)
		abort();
	return 0;
}
