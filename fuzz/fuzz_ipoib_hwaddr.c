/* IPoIB hardware address: binary unpack -> pack, text format -> parse, and
 * the input as text for parse -> format. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/ipoib_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const struct imc_ipoib_hwaddr *a, const struct imc_ipoib_hwaddr *b)
{
	return a->flags == b->flags && a->qpn == b->qpn &&
	       memcmp(a->gid.raw, b->gid.raw, 16) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imc_ipoib_hwaddr a, b;
	uint8_t buf[IMC_IPOIB_HWADDR_LEN];
	char text[IMC_IPOIB_HWADDR_STRLEN], in[128];
	size_t n, i;
	int rc;

	rc = imc_ipoib_hwaddr_unpack(&a, data, size);
	if (size < IMC_IPOIB_HWADDR_LEN) {
		if (rc != -EMSGSIZE)
			abort();
	} else {
		if (rc != IMC_IPOIB_HWADDR_LEN || a.qpn > 0xFFFFFF)
			abort();
		if (imc_ipoib_hwaddr_pack(&a, buf, sizeof(buf)) != rc ||
		    memcmp(buf, data, sizeof(buf)) != 0)
			abort();
		if (imc_ipoib_hwaddr_format(&a, text) != 59 ||
		    imc_ipoib_hwaddr_parse(text, &b) != 0 || !same(&a, &b))
			abort();
	}

	n = size < sizeof(in) - 1 ? size : sizeof(in) - 1;
	memcpy(in, data, n);
	in[n] = '\0';
	memset(&b, 0, sizeof(b));
	b.qpn = 0x1000001;
	rc = imc_ipoib_hwaddr_parse(in, &b);
	if (rc == 0) {
		/* Accepted text is the canonical form up to letter case. */
		if (imc_ipoib_hwaddr_format(&b, text) != 59 || strlen(in) != 59)
			abort();
		for (i = 0; i < 59; i++) {
			char c = in[i];

			if (c >= 'A' && c <= 'F')
				c = (char)(c - 'A' + 'a');
			if (c != text[i])
				abort();
		}
	} else if (rc != -EINVAL || b.qpn != 0x1000001) {
		abort();
	}
	return 0;
}
