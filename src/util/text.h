/* Small text helpers shared by the parsers and the printers. */
#ifndef IMC_UTIL_TEXT_H
#define IMC_UTIL_TEXT_H

#include <stdio.h>

/* Value of a hex digit, or -1. */
static inline int imc_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
