/* Notice: unpack -> pack gives the input bytes back (reserved bits
 * included), a second unpack -> pack gives the same bytes, and short inputs
 * are refused with -EMSGSIZE.
 * The MGID of a trap 66/67 is read from Notice bytes 16..31. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/sa_attr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_mgid(const struct imc_notice *n, const uint8_t *data)
{
	struct imc_gid mgid;
	bool mc = (data[0] & 0x80) && data[4] == 0 &&
		  (data[5] == 66 || data[5] == 67);

	if (imc_notice_mcast_mgid(n, &mgid) != (mc ? 0 : -EINVAL))
		abort();
	if (mc && memcmp(mgid.raw, data + 16, 16))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t o1[IMC_NOTICE_SIZE], o2[IMC_NOTICE_SIZE];
	struct imc_notice a, b;
	int rc = imc_notice_unpack(&a, data, size);

	if (size < IMC_NOTICE_SIZE) {
		if (rc != -EMSGSIZE)
			abort();
		return 0;
	}
	if (rc != IMC_NOTICE_SIZE ||
	    imc_notice_pack(&a, o1, sizeof(o1)) != rc ||
	    memcmp(o1, data, sizeof(o1)))
		abort();
	if (imc_notice_unpack(&b, o1, sizeof(o1)) != rc ||
	    imc_notice_pack(&b, o2, sizeof(o2)) != rc ||
	    memcmp(o1, o2, sizeof(o1)))
		abort();
	check_mgid(&a, data);
	return 0;
}
