/* The IPv4 multicast groups of /proc/net/igmp (tun_int.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "tun/tun_int.h"

static bool is_hex(char c, unsigned *v)
{
	if (c >= '0' && c <= '9')
		*v = (unsigned)(c - '0');
	else if (c >= 'a' && c <= 'f')
		*v = (unsigned)(c - 'a' + 10);
	else if (c >= 'A' && c <= 'F')
		*v = (unsigned)(c - 'A' + 10);
	else
		return false;
	return true;
}

/* A device line: its index, the decimal number it starts with. */
static bool dev_line(const char *p, const char *end, unsigned long *dev)
{
	unsigned long v = 0;
	const char *q = p;

	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		if (v > 0xFFFFFFFFul / 10)
			return false;
		v = v * 10 + (unsigned long)(*q - '0');
	}
	if (q == p || q == end || (*q != '\t' && *q != ' '))
		return false;
	*dev = v;
	return true;
}

/* A group line: tabs, then 8 hex digits and a blank. */
static bool group_line(const char *p, const char *end, uint32_t *raw)
{
	uint32_t v = 0;
	unsigned d, n = 0;

	while (p < end && *p == '\t')
		p++;
	for (; p < end && n < 8 && is_hex(*p, &d); p++, n++)
		v = v << 4 | d;
	if (n != 8 || (p < end && *p != ' ' && *p != '\t'))
		return false;
	*raw = v;
	return true;
}

int tunl_igmp_parse(const char *text, size_t len, unsigned ifindex,
		    imc_tun_mcast_fn *fn, void *ctx)
{
	const char *p = text, *end = text + len;
	unsigned long dev = 0;
	bool in_dev = false;
	int n = 0;

	if (!text || !fn)
		return -EINVAL;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		uint32_t raw;

		if (p == le || *p != '\t') {
			/* A device line, or one of no known shape: the
			 * groups that follow are not ifindex's. */
			in_dev = dev_line(p, le, &dev) && dev == ifindex;
		} else if (in_dev && group_line(p, le, &raw)) {
			/* igmp_mc_seq_show prints the __be32 with %08X: the
			 * number's bytes in memory are the address in
			 * network order. */
			uint8_t a[4];

			memcpy(a, &raw, 4);
			fn(ctx, AF_INET, a);
			n++;
		}
		p = nl ? nl + 1 : end;
	}
	return n;
}
