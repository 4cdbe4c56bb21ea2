/* imc_ip_view() and imc_ip_echo_answer() on any bytes: a view stays
 * inside the packet, and an answered echo reads back as a reply of the
 * same identifier and sequence whose checksums hold. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/ip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_ip_view v, w;
	uint16_t id, seq, id2, seq2;
	uint8_t *copy;
	bool req;

	if (imc_ip_view(data, size, &v))
		return 0;
	if (v.len > size || v.l4 + v.l4_len != data + v.len ||
	    v.src < data || v.dst + (v.version == 4 ? 4 : 16) > data + size)
		abort();
	if (imc_ip_echo_read(&v, &req, &id, &seq) || !req)
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (imc_ip_echo_answer(copy, size) || imc_ip_view(copy, size, &w) ||
	    imc_ip_echo_read(&w, &req, &id2, &seq2) || req || id2 != id ||
	    seq2 != seq)
		abort();
	if (w.version == 4 ? imc_inet_csum(0, w.l4, w.l4_len) != 0 :
	    imc_inet_l4_csum(6, w.src, w.dst, IMC_IPPROTO_ICMPV6, w.l4,
			     w.l4_len) != 0)
		abort();
	free(copy);
	return 0;
}
