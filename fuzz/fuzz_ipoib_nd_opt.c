/* IPoIB ND link-layer address option: unpack -> pack gives the same bytes
 * with the reserved ones cleared; every refusal has its documented reason. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/ipoib_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_ipoib_nd_opt o, q;
	uint8_t buf[IMC_IPOIB_ND_OPT_LEN];
	int rc;

	o.type = 0xEE;
	rc = imc_ipoib_nd_opt_unpack(&o, data, size);
	if (size < 2) {
		if (rc != -EMSGSIZE)
			abort();
	} else if ((data[0] != 1 && data[0] != 2) || data[1] != 3) {
		if (rc != -EINVAL)
			abort();
	} else if (size < IMC_IPOIB_ND_OPT_LEN) {
		if (rc != -EMSGSIZE)
			abort();
	} else {
		if (rc != IMC_IPOIB_ND_OPT_LEN || o.type != data[0])
			abort();
		if (imc_ipoib_nd_opt_pack(&o, buf, sizeof(buf)) != rc)
			abort();
		if (memcmp(buf, data, 2) != 0 || buf[2] != 0 || buf[3] != 0 ||
		    memcmp(buf + 4, data + 4, IMC_IPOIB_HWADDR_LEN) != 0)
			abort();
		if (imc_ipoib_nd_opt_unpack(&q, buf, sizeof(buf)) != rc ||
		    q.type != o.type || q.addr.flags != o.addr.flags ||
		    q.addr.qpn != o.addr.qpn ||
		    memcmp(q.addr.gid.raw, o.addr.gid.raw, 16) != 0)
			abort();
		return 0;
	}
	if (o.type != 0xEE)
		abort();
	return 0;
}
