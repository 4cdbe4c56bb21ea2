/* Types and conventions shared by every ibmcast layer.
 *
 * Errors: functions return 0 (or a byte count) on success and a negative
 * errno on failure. Wire status codes (MAD status, SA status) are kept as
 * their own values and never folded into errno.
 */
#ifndef IBMCAST_COMMON_H
#define IBMCAST_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A GID or MGID (IBA 4.1.1), 16 bytes in network byte order. */
struct imc_gid {
	uint8_t raw[16];
};

#define IMC_GID_STRLEN 40 /* "xxxx:...:xxxx" plus NUL, as INET6_ADDRSTRLEN */

#define imc_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#define IMC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Library version, "MAJOR.MINOR.PATCH". */
const char *imc_version(void);

#ifdef __cplusplus
}
#endif
#endif
