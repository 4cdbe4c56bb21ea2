/* GID text parser and MGID rules.
 *
 * The input is tried twice: as text (up to the first NUL) for
 * imc_gid_parse(), and, when at least 16 bytes long, its first 16 bytes as
 * a raw GID for imc_gid_format() and the MGID checks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* format -> parse must give the GID back, and format is a fixed point. */
static void round_trip(const struct imc_gid *g)
{
	char text[IMC_GID_STRLEN], again[IMC_GID_STRLEN];
	struct imc_gid back;
	int n;

	n = imc_gid_format(g, text);
	if (n <= 0 || n >= IMC_GID_STRLEN || (size_t)n != strlen(text))
		abort();
	if (strchr(text, '.'))
		abort();
	if (imc_gid_parse(text, &back) != 0 || !imc_gid_equal(g, &back))
		abort();
	imc_gid_format(&back, again);
	if (strcmp(text, again) != 0)
		abort();
}

static void rules(const struct imc_gid *g)
{
	int full = imc_mgid_check(g), create = imc_mgid_check_create(g);
	enum imc_mgid_sig sig = imc_mgid_signature(g);

	if (full != 0 && full != -EINVAL && full != -EPROTO && full != -EDOM &&
	    full != -EPERM)
		abort();
	if (create != 0 && create != -EINVAL && create != -EPROTO &&
	    create != -EPERM)
		abort();
	if (full == 0 && create != 0)
		abort();
	if ((full == -EINVAL) != !imc_gid_is_multicast(g))
		abort();
	if ((sig == IMC_MGID_SIG_NONE) != !imc_gid_is_multicast(g))
		abort();
	if (full == -EPERM && (sig != IMC_MGID_SIG_SA || imc_mgid_scope(g) != 2))
		abort();
	if ((sig == IMC_MGID_SIG_IPV4 || sig == IMC_MGID_SIG_IPV6) && create != 0)
		abort();
	if (imc_gid_hash(g, 0) != imc_gid_hash(g, 0))
		abort();
	if (imc_gid_prefix(g) != ((uint64_t)g->raw[0] << 56 |
				  (uint64_t)g->raw[1] << 48 |
				  (uint64_t)g->raw[2] << 40 |
				  (uint64_t)g->raw[3] << 32 |
				  (uint64_t)g->raw[4] << 24 |
				  (uint64_t)g->raw[5] << 16 |
				  (uint64_t)g->raw[6] << 8 | g->raw[7]))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[128];
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
	struct imc_gid g, raw;
	struct in6_addr a;
	int rc;

	memcpy(text, data, n);
	text[n] = '\0';
	memset(g.raw, 0x5A, sizeof(g.raw));
	rc = imc_gid_parse(text, &g);
	if (rc == 0) {
		/* Whatever we accept, libc accepts as IPv6 text too. */
		if (inet_pton(AF_INET6, text, &a) != 1 ||
		    memcmp(a.s6_addr, g.raw, 16) != 0)
			abort();
		round_trip(&g);
		rules(&g);
	} else {
		if (rc != -EINVAL)
			abort();
		for (size_t i = 0; i < 16; i++)
			if (g.raw[i] != 0x5A)
				abort();
	}
	if (size >= 16) {
		memcpy(raw.raw, data, 16);
		round_trip(&raw);
		rules(&raw);
	}
	return 0;
}
