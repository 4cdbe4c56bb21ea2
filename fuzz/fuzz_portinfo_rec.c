/* PortInfoRecord: unpack -> pack gives the input bytes back (reserved bits
 * included), a second round gives the same bytes, the rate is a defined
 * code or 0, and short inputs are refused with -EMSGSIZE. PortInfo alone
 * is checked the same way on the record's PortInfo bytes. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/sa_records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t o1[IMC_PORT_INFO_REC_SIZE], o2[IMC_PORT_INFO_REC_SIZE];
	struct imc_port_info_rec a, b;
	struct imc_port_info pi;
	uint8_t rate;
	int rc;

	memset(&pi, 0, sizeof(pi));
	rc = imc_port_info_rec_unpack(&a, data, size);

	if (size < IMC_PORT_INFO_REC_SIZE) {
		if (rc != -EMSGSIZE)
			abort();
		return 0;
	}
	if (rc != IMC_PORT_INFO_REC_SIZE ||
	    imc_port_info_rec_pack(&a, o1, sizeof(o1)) != rc ||
	    memcmp(o1, data, sizeof(o1)))
		abort();
	if (imc_port_info_rec_unpack(&b, o1, sizeof(o1)) != rc ||
	    imc_port_info_rec_pack(&b, o2, sizeof(o2)) != rc ||
	    memcmp(o1, o2, sizeof(o1)))
		abort();
	if (imc_port_info_unpack(&pi, data + 4, size - 4) != IMC_PORT_INFO_SIZE ||
	    imc_port_info_pack(&pi, o2, sizeof(o2)) != IMC_PORT_INFO_SIZE ||
	    memcmp(o2, data + 4, IMC_PORT_INFO_SIZE) ||
	    memcmp(&pi, &a.info, sizeof(pi)))
		abort();
	rate = imc_port_info_rate(&a.info);
	if (rate == 1 || rate > 22)
		abort();
	return 0;
}
