/* /proc/net/igmp text (tunl_igmp_parse): any bytes, for the device index
 * the first byte gives; every group handed over is an IPv4 one, there are
 * as many as the parser counts, and a group line is never longer than
 * the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tun/tun_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	unsigned n;
};

static void one(void *ctx, int family, const uint8_t *addr)
{
	struct seen *s = ctx;
	uint8_t copy[4];

	if (family != AF_INET || !addr)
		abort();
	memcpy(copy, addr, 4);
	s->n++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen s = { 0 };
	unsigned ifindex;
	char *text;
	int n;

	if (!size)
		return 0;
	ifindex = data[0];
	/* Not NUL-terminated: the parser must stay within size. */
	text = malloc(size - 1 ? size - 1 : 1);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	n = tunl_igmp_parse(text, size - 1, ifindex, one, &s);
	if (n < 0 || (unsigned)n != s.n || (size_t)n * 9 > size)
		abort();
	free(text);
	return 0;
}
