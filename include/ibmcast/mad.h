/* MAD formats: the common MAD header (IBA 13.4.3), the RMPP header
 * (IBA 13.6.2) and the SA header (IBA 15.2.1.1), in host byte order.
 *
 * Wire layouts and constants come from rdma-core (<infiniband/umad_*.h>);
 * these structs are their decoded, host-order views.
 *
 * pack() functions write exactly the structure's wire size into a buffer of
 * at least that size and return the size, or -ENOSPC when the buffer is too
 * short. unpack() functions return the number of bytes consumed, or
 * -EMSGSIZE when the input is too short (never reading past len).
 * imc_rmpp_hdr_pack() and imc_sa_mad_pack() return -EINVAL, writing
 * nothing, when resp_time or flags do not fit their 5 and 3 bits.
 */
#ifndef IBMCAST_MAD_H
#define IBMCAST_MAD_H

#include <infiniband/umad_sa.h>
#include <infiniband/umad_sa_mcm.h>
#include <infiniband/umad_types.h>

#include "ibmcast/common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	IMC_MAD_SIZE = 256,
	IMC_MAD_HDR_SIZE = 24,
	IMC_RMPP_HDR_SIZE = 12,
	IMC_SA_HDR_SIZE = 20,          /* SM_Key, AttributeOffset, rsvd, ComponentMask */
	IMC_SA_DATA_OFFSET = 56,
	IMC_SA_DATA_SIZE = UMAD_LEN_SA_DATA, /* 200 */
	IMC_MAD_BASE_VERSION = 1,
};

/* IBA 13.4.3 common MAD header. */
struct imc_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint16_t resv;
	uint32_t attr_mod;
};

/* IBA 13.6.2.1 RMPP header. */
enum imc_rmpp_type {
	IMC_RMPP_TYPE_NONE = 0,
	IMC_RMPP_TYPE_DATA = 1,
	IMC_RMPP_TYPE_ACK = 2,
	IMC_RMPP_TYPE_STOP = 3,
	IMC_RMPP_TYPE_ABORT = 4,
};

enum {
	IMC_RMPP_FLAG_ACTIVE = 0x1,
	IMC_RMPP_FLAG_FIRST = 0x2,
	IMC_RMPP_FLAG_LAST = 0x4,
};

struct imc_rmpp_hdr {
	uint8_t version;        /* 1, or 0 when RMPP is not in use */
	uint8_t type;           /* enum imc_rmpp_type */
	uint8_t resp_time;      /* RRespTime, 5 bits */
	uint8_t flags;          /* IMC_RMPP_FLAG_*, 3 bits */
	uint8_t status;
	uint32_t seg_num;
	uint32_t paylen_newwin; /* PayloadLength (DATA) or NewWindowLast (ACK) */
};

/* IBA 15.2.1.1 SA header, after the RMPP header. */
struct imc_sa_hdr {
	uint64_t sm_key;
	uint16_t attr_offset;   /* in 8-byte words */
	uint16_t reserved;
	uint64_t comp_mask;
};

/* A whole SA MAD (256 bytes): headers decoded, data area kept raw. */
struct imc_sa_mad {
	struct imc_mad_hdr mad;
	struct imc_rmpp_hdr rmpp;
	struct imc_sa_hdr sa;
	uint8_t data[IMC_SA_DATA_SIZE];
};

int imc_mad_hdr_pack(const struct imc_mad_hdr *h, uint8_t *buf, size_t len);
int imc_mad_hdr_unpack(struct imc_mad_hdr *h, const uint8_t *buf, size_t len);
int imc_rmpp_hdr_pack(const struct imc_rmpp_hdr *h, uint8_t *buf, size_t len);
int imc_rmpp_hdr_unpack(struct imc_rmpp_hdr *h, const uint8_t *buf, size_t len);
int imc_sa_hdr_pack(const struct imc_sa_hdr *h, uint8_t *buf, size_t len);
int imc_sa_hdr_unpack(struct imc_sa_hdr *h, const uint8_t *buf, size_t len);

/* Whole SA MAD: pack writes IMC_MAD_SIZE bytes; unpack requires exactly
 * IMC_MAD_SIZE bytes (-EMSGSIZE otherwise). Neither judges field values:
 * that is the SA engine's job, which answers with the right MAD status. */
int imc_sa_mad_pack(const struct imc_sa_mad *m, uint8_t *buf, size_t len);
int imc_sa_mad_unpack(struct imc_sa_mad *m, const uint8_t *buf, size_t len);

/* MAD status (IBA 13.4.7): bit 0 busy, bit 1 redirect, bits 2..4 the
 * invalid-field code (UMAD_STATUS_BAD_VERSION ... _INVALID_ATTR_VALUE),
 * bits 8..15 class specific; the SA puts its code (UMAD_SA_STATUS_*) in
 * bits 8..14 (IBA 15.2.1.1). */
enum {
	IMC_SA_STATUS_SHIFT = 8,
	IMC_SA_STATUS_MASK = 0x7f00,
};

/* The SA-specific code (UMAD_SA_STATUS_*) of an SA MAD status. */
static inline unsigned imc_sa_status_code(uint16_t status)
{
	return (status & IMC_SA_STATUS_MASK) >> IMC_SA_STATUS_SHIFT;
}

/* The MAD status that carries SA code @code (UMAD_SA_STATUS_*). */
static inline uint16_t imc_sa_status(unsigned code)
{
	return (uint16_t)(code << IMC_SA_STATUS_SHIFT & IMC_SA_STATUS_MASK);
}

/* The generic invalid-field code (bits 2..4) as 0..7: 1 bad version,
 * 2 method unsupported, 3 method/attribute unsupported, 7 invalid value. */
static inline unsigned imc_mad_status_field(uint16_t status)
{
	return (status & UMAD_STATUS_INVALID_FIELD_MASK) >> 2;
}

/* Name of an SA MAD status: "SUCCESS", the SA code ("NO_RECORDS",
 * "INSUF_COMPS", ...) when set, else the invalid-field code
 * ("BAD_VERSION", "METHOD_UNSUPPORTED", "METHOD_ATTR_UNSUPPORTED",
 * "INVALID_ATTR_VALUE"), else "BUSY" or "REDIRECT". Static string. */
const char *imc_mad_status_str(uint16_t status);

/* The text form of captured MADs, one a line (tests/vectors/, read by
 * `ibmcast decode`):
 *
 *   # comment
 *   tx 1 0103020200...   (direction, source LID, 256 bytes as 512 hex digits)
 *
 * "tx" is a client request, "rx" the SA's answer. */
enum imc_mad_dir {
	IMC_MAD_TX,
	IMC_MAD_RX,
};

struct imc_mad_line {
	enum imc_mad_dir dir;
	uint16_t lid;
	uint8_t mad[IMC_MAD_SIZE];
};

/* Parses one line of that form (a trailing newline is allowed) into v.
 * Returns 1 when v was filled, 0 for a blank or comment line, -EINVAL for
 * anything else (bad direction, LID out of range, non-hex digit, trailing
 * text) and -EMSGSIZE when the hex is not exactly IMC_MAD_SIZE bytes. */
int imc_mad_line_parse(const char *line, struct imc_mad_line *v);

#ifdef __cplusplus
}
#endif
#endif
