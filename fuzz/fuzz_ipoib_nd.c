/* IPv6 ND for IPoIB: whatever the bytes, the parser reads only len bytes
 * and answers 0, -ENOENT or -EINVAL; what it accepts, built again, parses
 * to the same message. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipoib/ipoib_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipo_nd nd, again;
	struct imc_ip_hdr ip;
	uint8_t buf[256];
	int rc, n;

	/* A copy of exactly size bytes, so that ASan sees any overread. */
	uint8_t *p = malloc(size ? size : 1);

	if (!p)
		return 0;
	memcpy(p, data, size);
	rc = imc_ip_parse(p, size, &ip);
	if (rc == 0 && (ip.len > size || (ip.family != IMC_IPV4 &&
					  ip.family != IMC_IPV6)))
		abort();
	rc = ipo_nd_parse(p, size, &nd);
	if (rc != 0 && rc != -ENOENT && rc != -EINVAL)
		abort();
	if (rc == 0) {
		if (nd.type != IPO_ICMP6_NS && nd.type != IPO_ICMP6_NA)
			abort();
		if (nd.target[0] == 0xFF)
			abort();
		n = ipo_nd_build(&nd, buf, sizeof(buf));
		if (n <= 0 || ipo_nd_parse(buf, (size_t)n, &again) != 0)
			abort();
		if (again.type != nd.type || again.flags != nd.flags ||
		    again.has_lladdr != nd.has_lladdr ||
		    memcmp(again.src, nd.src, 16) ||
		    memcmp(again.dst, nd.dst, 16) ||
		    memcmp(again.target, nd.target, 16))
			abort();
		if (nd.has_lladdr &&
		    (again.lladdr.qpn != nd.lladdr.qpn ||
		     again.lladdr.flags != nd.lladdr.flags ||
		     memcmp(again.lladdr.gid.raw, nd.lladdr.gid.raw, 16)))
			abort();
	}
	free(p);
	return 0;
}
