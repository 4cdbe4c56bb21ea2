/* IPoIB encapsulation header: unpack -> pack -> unpack. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/ipoib_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_ipoib_hdr h, h2;
	uint8_t buf[IMC_IPOIB_HDR_LEN];
	int rc;

	h.type = 0x1234;
	rc = imc_ipoib_hdr_unpack(&h, data, size);
	if (size < IMC_IPOIB_HDR_LEN) {
		if (rc != -EMSGSIZE || h.type != 0x1234)
			abort();
		return 0;
	}
	if (rc != IMC_IPOIB_HDR_LEN)
		abort();
	if (imc_ipoib_hdr_pack(&h, buf, sizeof(buf)) != IMC_IPOIB_HDR_LEN)
		abort();
	/* Same EtherType, reserved bits cleared. */
	if (memcmp(buf, data, 2) != 0 || buf[2] != 0 || buf[3] != 0)
		abort();
	if (imc_ipoib_hdr_unpack(&h2, buf, sizeof(buf)) != IMC_IPOIB_HDR_LEN ||
	    h2.type != h.type)
		abort();
	if (imc_ipoib_hdr_pack(&h, buf, sizeof(buf) - 1) != -ENOSPC)
		abort();
	return 0;
}
