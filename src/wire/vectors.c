#include <errno.h>
#include <string.h>

#include "ibmcast/mad.h"
#include "util/text.h"


static const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

int imc_mad_line_parse(const char *line, struct imc_mad_line *v)
{
	const char *p = skip_blank(line);
	unsigned long lid = 0;
	size_t n = 0;

	if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
		return 0;
	if (!strncmp(p, "tx", 2))
		v->dir = IMC_MAD_TX;
	else if (!strncmp(p, "rx", 2))
		v->dir = IMC_MAD_RX;
	else
		return -EINVAL;
	p += 2;
	if (*p != ' ' && *p != '\t')
		return -EINVAL;
	p = skip_blank(p);
	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		lid = lid * 10 + (unsigned long)(*p++ - '0');
		if (lid > 0xffff)
			return -EINVAL;
	}
	v->lid = (uint16_t)lid;
	if (*p != ' ' && *p != '\t')
		return -EINVAL;
	p = skip_blank(p);
	for (;;) {
		int hi = imc_hexval(p[0]), lo;

		if (hi < 0)
			break;
		lo = imc_hexval(p[1]);
		if (lo < 0)
			return -EINVAL; /* odd number of digits */
		if (n == IMC_MAD_SIZE)
			return -EMSGSIZE;
		v->mad[n++] = (uint8_t)(hi << 4 | lo);
		p += 2;
	}
	p = skip_blank(p);
	if (*p == '\r')
		p++;
	if (*p == '\n')
		p++;
	if (*p != '\0')
		return -EINVAL;
	return n == IMC_MAD_SIZE ? 1 : -EMSGSIZE;
}
