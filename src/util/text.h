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

/* s as a JSON string (RFC 8259 section 7): quote and backslash escaped,
 * control characters and DEL as six-character escapes. */
static inline void imc_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

#endif
