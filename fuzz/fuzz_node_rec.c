/* NodeRecord: unpack -> pack gives the input bytes back, a second round
 * the same bytes, NodeInfo alone the same, and short inputs are refused
 * with -EMSGSIZE. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/sa_records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t o1[IMC_NODE_REC_SIZE], o2[IMC_NODE_REC_SIZE];
	struct imc_node_rec a, b;
	struct imc_node_info ni;
	int rc;

	/* Struct padding must not decide the comparisons below. */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&ni, 0, sizeof(ni));
	rc = imc_node_rec_unpack(&a, data, size);

	if (size < IMC_NODE_REC_SIZE) {
		if (rc != -EMSGSIZE)
			abort();
		return 0;
	}
	if (rc != IMC_NODE_REC_SIZE ||
	    imc_node_rec_pack(&a, o1, sizeof(o1)) != rc ||
	    memcmp(o1, data, sizeof(o1)))
		abort();
	if (imc_node_rec_unpack(&b, o1, sizeof(o1)) != rc ||
	    imc_node_rec_pack(&b, o2, sizeof(o2)) != rc ||
	    memcmp(o1, o2, sizeof(o1)) || memcmp(&a, &b, sizeof(a)))
		abort();
	if (imc_node_info_unpack(&ni, data + 4, size - 4) != IMC_NODE_INFO_SIZE ||
	    memcmp(&ni, &a.info, sizeof(ni)) ||
	    imc_node_info_pack(&ni, o2, sizeof(o2)) != IMC_NODE_INFO_SIZE ||
	    memcmp(o2, data + 4, IMC_NODE_INFO_SIZE))
		abort();
	return 0;
}
