/* GIDs and multicast GIDs (IBA 4.1.1): text form, construction, ordering,
 * hashing, and the rules a multicast GID must follow.
 *
 * A GID is 16 bytes in network order: a 64-bit subnet prefix followed by a
 * 64-bit interface id (the port GUID). A multicast GID (MGID) is
 *
 *   byte 0   0xFF
 *   byte 1   flags (high nibble, 000T) : scope (low nibble)
 *   2-3      signature (0x401B IPv4 over IB, 0x601B IPv6 over IB,
 *            0xA01B assigned by the SA) or the start of a group id
 *   4-15     rest of the group id (for 0xA01B OpenSM puts its subnet
 *            prefix in 4-11 and a counter in 12-15)
 *
 * Nothing here allocates; every function may be called with any GID value.
 */
#ifndef IBMCAST_GID_H
#define IBMCAST_GID_H

#include <stdbool.h>
#include <stdint.h>

#include "ibmcast/common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	IMC_GID_LEN = 16,
};

/* Text form. imc_gid_parse() accepts IPv6 address notation only (RFC 4291
 * 2.2 forms 1 and 2: full, or with one "::"), hex digits in either case.
 * It rejects NULL, the empty string, any surrounding or embedded space,
 * zone ids ("%ib0"), brackets, prefix lengths, and the embedded dotted-quad
 * form ("::ffff:1.2.3.4"): a GID never carries an IPv4 address, and
 * accepting that form would give one GID two spellings. Returns 0, or
 * -EINVAL without touching *out.
 *
 * imc_gid_format() writes the canonical text of RFC 5952 (lower case,
 * leading zeros dropped, the longest run of two or more zero groups
 * replaced by "::", first run on a tie), never a dotted quad, so that
 * imc_gid_parse() of the result gives back the same GID. Returns the length
 * written, without the NUL (at most IMC_GID_STRLEN - 1). */
int imc_gid_parse(const char *s, struct imc_gid *out);
int imc_gid_format(const struct imc_gid *g, char buf[IMC_GID_STRLEN]);

/* Construction from and access to the two halves, in host order. */
void imc_gid_set(struct imc_gid *g, uint64_t subnet_prefix, uint64_t guid);
uint64_t imc_gid_prefix(const struct imc_gid *g);
uint64_t imc_gid_guid(const struct imc_gid *g);

bool imc_gid_equal(const struct imc_gid *a, const struct imc_gid *b);
bool imc_gid_is_zero(const struct imc_gid *g);
/* Total order of the 128-bit values (byte-wise on the wire form):
 * negative, 0 or positive. */
int imc_gid_cmp(const struct imc_gid *a, const struct imc_gid *b);

/* Hash for hash tables: each half goes through the splitmix64 finalizer
 * (a bijection), chained as mix(mix(prefix ^ seed) ^ guid). For a fixed
 * prefix and seed, distinct GUIDs therefore never collide, and all 64 bits
 * depend on every input bit, so any mask of the result makes a bucket
 * index. Tables fed by the network should pass a random seed; seed 0 gives
 * the same value on every run. */
uint64_t imc_gid_hash(const struct imc_gid *g, uint64_t seed);

/* Multicast GIDs (IBA 4.1.1). */
enum {
	IMC_MGID_FLAG_T = 0x1,            /* transient (not well-known) */
	IMC_MGID_FLAGS_RESERVED = 0xE,    /* the "000" of 000T */
};

enum imc_mgid_scope {
	IMC_MGID_SCOPE_LINK = 0x2,
	IMC_MGID_SCOPE_SITE = 0x5,
	IMC_MGID_SCOPE_ORG = 0x8,
	IMC_MGID_SCOPE_GLOBAL = 0xE,
};

enum {
	IMC_MGID_SIGNATURE_IPV4 = 0x401B, /* RFC 4391 4 */
	IMC_MGID_SIGNATURE_IPV6 = 0x601B, /* RFC 4391 4 */
	IMC_MGID_SIGNATURE_SA = 0xA01B,   /* IBA 15.2.5.17, o15-0.1.5 */
};

enum imc_mgid_sig {
	IMC_MGID_SIG_NONE,  /* not a multicast GID */
	IMC_MGID_SIG_OTHER, /* multicast, no signature known here */
	IMC_MGID_SIG_IPV4,
	IMC_MGID_SIG_IPV6,
	IMC_MGID_SIG_SA,
};

bool imc_gid_is_multicast(const struct imc_gid *g);
/* Fields of byte 1 and bytes 2-3, read whatever byte 0 holds. */
unsigned imc_mgid_flags(const struct imc_gid *mgid);
unsigned imc_mgid_scope(const struct imc_gid *mgid);
uint16_t imc_mgid_sigword(const struct imc_gid *mgid);
enum imc_mgid_sig imc_mgid_signature(const struct imc_gid *mgid);
/* True for the four scopes IBA 4.1.1 defines: 2, 5, 8 and 0xE. */
bool imc_mgid_scope_valid(unsigned scope);

/* imc_mgid_check() applies every IBA 4.1.1 rule, in this order:
 *   -EINVAL   NULL, or byte 0 is not 0xFF (not a multicast GID)
 *   -EPROTO   a reserved flag bit (0x2, 0x4, 0x8 of the flags nibble) is set
 *   -EDOM     scope is not 2, 5, 8 or 0xE (0, 1, 3, 4, 6, 7, 9-0xD and 0xF
 *             are reserved or unassigned; scope 1, interface-local in IPv6,
 *             means nothing on a fabric)
 *   -EPERM    signature 0xA01B with link-local scope: o15-0.1.5 keeps that
 *             combination for MGIDs the SA assigns itself
 *   0         otherwise.
 *
 * imc_mgid_check_create() is the check OpenSM (validate_requested_mgid in
 * osm_sa_mcmember_record.c, 3.3.x to current) applies when a Set names the
 * MGID of a group it creates, with the same error values:
 *   - byte 0 must be 0xFF (-EINVAL);
 *   - an IPoIB signature (0x401B, 0x601B) ends the check: valid;
 *   - reserved flag bits (-EPROTO), then 0xA01B with link-local scope
 *     (-EPERM);
 *   - the scope is not checked (osmtest creates ff1f:a01c:... and expects
 *     success).
 * No other signature is special there.
 * An MGID that passes imc_mgid_check() passes imc_mgid_check_create(). */
int imc_mgid_check(const struct imc_gid *mgid);
int imc_mgid_check_create(const struct imc_gid *mgid);

#ifdef __cplusplus
}
#endif
#endif
