/* MCMemberRecord: unpack -> pack gives the input bytes back (reserved bits
 * included), a second unpack -> pack gives the same bytes, and short inputs
 * are refused with -EMSGSIZE.
 * imc_mcmr_reserved_set() is true exactly when a reserved bit is set. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/sa_attr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reserved(const struct imc_mcmr *r, const uint8_t *data)
{
	bool resv = data[49] & 0x7f;

	for (size_t i = 50; i < IMC_MCMR_SIZE; i++)
		resv |= data[i] != 0;
	if (imc_mcmr_reserved_set(r) != resv ||
	    r->proxy_join != !!(data[49] & 0x80))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t o1[IMC_MCMR_SIZE], o2[IMC_MCMR_SIZE];
	struct imc_mcmr a, b;
	int rc = imc_mcmr_unpack(&a, data, size);

	if (size < IMC_MCMR_SIZE) {
		if (rc != -EMSGSIZE)
			abort();
		return 0;
	}
	if (rc != IMC_MCMR_SIZE ||
	    imc_mcmr_pack(&a, o1, sizeof(o1)) != rc ||
	    memcmp(o1, data, sizeof(o1)))
		abort();
	if (imc_mcmr_unpack(&b, o1, sizeof(o1)) != rc ||
	    imc_mcmr_pack(&b, o2, sizeof(o2)) != rc ||
	    memcmp(o1, o2, sizeof(o1)))
		abort();
	check_reserved(&a, data);
	return 0;
}
