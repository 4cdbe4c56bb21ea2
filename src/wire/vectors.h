/* Text form of captured MADs, one per line, as in tests/vectors/:
 *
 *   # comment
 *   tx 1 0103020200...   (direction, source LID, 256 bytes as 512 hex digits)
 *
 * "tx" is a client request, "rx" the SA's answer.
 */
#ifndef IBMCAST_VECTORS_H
#define IBMCAST_VECTORS_H

#include "ibmcast/mad.h"

#ifdef __cplusplus
extern "C" {
#endif

enum imc_vector_dir {
	IMC_VECTOR_TX,
	IMC_VECTOR_RX,
};

struct imc_vector {
	enum imc_vector_dir dir;
	uint16_t lid;
	uint8_t mad[IMC_MAD_SIZE];
};

/* Parses one line (a trailing newline is allowed). Returns 1 when v was
 * filled, 0 for a blank or comment line, -EINVAL for anything else (bad
 * direction, LID out of range, non-hex digit, trailing text) and
 * -EMSGSIZE when the hex is not exactly IMC_MAD_SIZE bytes. */
int imc_vector_parse_line(const char *line, struct imc_vector *v);

#ifdef __cplusplus
}
#endif
#endif
