/* PathRecord: unpack -> pack gives the input bytes back (reserved bits
 * included), a second unpack -> pack gives the same bytes, and short inputs
 * are refused with -EMSGSIZE. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/sa_attr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t o1[IMC_PATH_REC_SIZE], o2[IMC_PATH_REC_SIZE];
	struct imc_path_rec a, b;
	int rc = imc_path_rec_unpack(&a, data, size);

	if (size < IMC_PATH_REC_SIZE) {
		if (rc != -EMSGSIZE)
			abort();
		return 0;
	}
	if (rc != IMC_PATH_REC_SIZE ||
	    imc_path_rec_pack(&a, o1, sizeof(o1)) != rc ||
	    memcmp(o1, data, sizeof(o1)))
		abort();
	if (imc_path_rec_unpack(&b, o1, sizeof(o1)) != rc ||
	    imc_path_rec_pack(&b, o2, sizeof(o2)) != rc ||
	    memcmp(o1, o2, sizeof(o1)))
		abort();
	return 0;
}
