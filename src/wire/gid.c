/* GIDs and MGIDs (IBA 4.1.1). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "util/mix.h"
#include "util/bytes.h"

int imc_gid_parse(const char *s, struct imc_gid *out)
{
	struct in6_addr a;
	size_t n;

	if (!s || !out)
		return -EINVAL;
	/* The longest IPv6 text without a dotted quad is 39 characters. */
	n = strnlen(s, IMC_GID_STRLEN);
	if (n == 0 || n >= IMC_GID_STRLEN)
		return -EINVAL;
	if (memchr(s, '.', n))
		return -EINVAL;
	/* inet_pton takes only hex digits and colons from here on: no
	 * spaces, zone ids, brackets or prefix lengths. */
	if (inet_pton(AF_INET6, s, &a) != 1)
		return -EINVAL;
	memcpy(out->raw, a.s6_addr, IMC_GID_LEN);
	return 0;
}

int imc_gid_format(const struct imc_gid *g, char buf[IMC_GID_STRLEN])
{
	char tmp[INET6_ADDRSTRLEN];
	char *colon;
	size_t n;

	if (!inet_ntop(AF_INET6, g->raw, tmp, sizeof(tmp))) {
		/* Cannot happen with a big enough buffer; stay defined. */
		buf[0] = '\0';
		return 0;
	}
	/* inet_ntop writes "::a.b.c.d" and "::ffff:a.b.c.d" for GIDs that
	 * look like IPv4-compatible or -mapped addresses. Replace the dotted
	 * quad by its two hex groups: the zero run before it stays the
	 * longest, so the text is still RFC 5952 canonical. */
	if (strchr(tmp, '.')) {
		colon = strrchr(tmp, ':');
		if (colon)
			snprintf(colon + 1, sizeof(tmp) - (size_t)(colon + 1 - tmp),
				 "%x:%x", imc_get16(g->raw + 12),
				 imc_get16(g->raw + 14));
	}
	n = strlen(tmp);
	if (n >= IMC_GID_STRLEN)
		n = IMC_GID_STRLEN - 1;
	memcpy(buf, tmp, n);
	buf[n] = '\0';
	return (int)n;
}

void imc_gid_set(struct imc_gid *g, uint64_t subnet_prefix, uint64_t guid)
{
	imc_put64(g->raw, subnet_prefix);
	imc_put64(g->raw + 8, guid);
}

uint64_t imc_gid_prefix(const struct imc_gid *g)
{
	return imc_get64(g->raw);
}

uint64_t imc_gid_guid(const struct imc_gid *g)
{
	return imc_get64(g->raw + 8);
}

bool imc_gid_equal(const struct imc_gid *a, const struct imc_gid *b)
{
	return memcmp(a->raw, b->raw, IMC_GID_LEN) == 0;
}

bool imc_gid_is_zero(const struct imc_gid *g)
{
	return (imc_get64(g->raw) | imc_get64(g->raw + 8)) == 0;
}

int imc_gid_cmp(const struct imc_gid *a, const struct imc_gid *b)
{
	int c = memcmp(a->raw, b->raw, IMC_GID_LEN);

	return (c > 0) - (c < 0);
}

uint64_t imc_gid_hash(const struct imc_gid *g, uint64_t seed)
{
	return imc_mix2(imc_get64(g->raw), imc_get64(g->raw + 8), seed);
}

bool imc_gid_is_multicast(const struct imc_gid *g)
{
	return g->raw[0] == 0xFF;
}

unsigned imc_mgid_flags(const struct imc_gid *mgid)
{
	return mgid->raw[1] >> 4;
}

unsigned imc_mgid_scope(const struct imc_gid *mgid)
{
	return mgid->raw[1] & 0xF;
}

uint16_t imc_mgid_sigword(const struct imc_gid *mgid)
{
	return imc_get16(mgid->raw + 2);
}

enum imc_mgid_sig imc_mgid_signature(const struct imc_gid *mgid)
{
	if (!imc_gid_is_multicast(mgid))
		return IMC_MGID_SIG_NONE;
	switch (imc_mgid_sigword(mgid)) {
	case IMC_MGID_SIGNATURE_IPV4:
		return IMC_MGID_SIG_IPV4;
	case IMC_MGID_SIGNATURE_IPV6:
		return IMC_MGID_SIG_IPV6;
	case IMC_MGID_SIGNATURE_SA:
		return IMC_MGID_SIG_SA;
	default:
		return IMC_MGID_SIG_OTHER;
	}
}

bool imc_mgid_scope_valid(unsigned scope)
{
	switch (scope) {
	case IMC_MGID_SCOPE_LINK:
	case IMC_MGID_SCOPE_SITE:
	case IMC_MGID_SCOPE_ORG:
	case IMC_MGID_SCOPE_GLOBAL:
		return true;
	default:
		return false;
	}
}

/* o15-0.1.5: 0xA01B with link-local scope is the SA's own MGID space. */
static bool sa_space(const struct imc_gid *mgid)
{
	return imc_mgid_sigword(mgid) == IMC_MGID_SIGNATURE_SA &&
	       imc_mgid_scope(mgid) == IMC_MGID_SCOPE_LINK;
}

int imc_mgid_check(const struct imc_gid *mgid)
{
	if (!mgid || !imc_gid_is_multicast(mgid))
		return -EINVAL;
	if (imc_mgid_flags(mgid) & IMC_MGID_FLAGS_RESERVED)
		return -EPROTO;
	if (!imc_mgid_scope_valid(imc_mgid_scope(mgid)))
		return -EDOM;
	if (sa_space(mgid))
		return -EPERM;
	return 0;
}

int imc_mgid_check_create(const struct imc_gid *mgid)
{
	enum imc_mgid_sig sig;

	if (!mgid || !imc_gid_is_multicast(mgid))
		return -EINVAL;
	sig = imc_mgid_signature(mgid);
	if (sig == IMC_MGID_SIG_IPV4 || sig == IMC_MGID_SIG_IPV6)
		return 0;
	if (imc_mgid_flags(mgid) & IMC_MGID_FLAGS_RESERVED)
		return -EPROTO;
	if (sa_space(mgid))
		return -EPERM;
	return 0;
}
