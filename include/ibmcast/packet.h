/* InfiniBand packet headers (LRH, GRH, BTH, DETH), whole UD packets and
 * their CRCs (ICRC, VCRC), in host byte order.
 *
 * Header pack() functions write exactly the header's wire size and return
 * it, -ENOSPC when the buffer is too short, or -EINVAL when a field does not
 * fit its wire width (nothing is written then). Header unpack() functions
 * return the number of bytes consumed or -EMSGSIZE when the input is too
 * short, never reading past len; they do not judge field values.
 *
 * Reserved bits (LRH resv2/resv5, BTH resv7, DETH resv8) are kept as
 * received, so that unpack followed by pack gives back the same bytes; IBA
 * says they are sent as 0 and ignored on receipt, and a zeroed struct sends
 * 0. BTH resv8a is likewise kept; it is a variant field (IBA 9.2, 7.8.1).
 */
#ifndef IBMCAST_PACKET_H
#define IBMCAST_PACKET_H

#include "ibmcast/common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	IMC_LRH_SIZE = 8,   /* IBA 7.7 */
	IMC_GRH_SIZE = 40,  /* IBA 8.3 */
	IMC_BTH_SIZE = 12,  /* IBA 9.2 */
	IMC_DETH_SIZE = 8,  /* IBA 9.3.3 */
	IMC_IMMDT_SIZE = 4, /* IBA 9.3.5 */
	IMC_ICRC_SIZE = 4,  /* IBA 7.8.1 */
	IMC_VCRC_SIZE = 2,  /* IBA 7.8.2 */
	IMC_LRH_PKTLEN_MAX = 0x7ff, /* 11 bits of 4-byte words */
};

/* LRH Link Next Header (IBA 7.7). */
enum imc_lnh {
	IMC_LNH_RAW = 0,        /* raw packet, no ICRC */
	IMC_LNH_IP = 1,         /* IPv6 non-IBA transport, no ICRC */
	IMC_LNH_IBA_LOCAL = 2,  /* BTH follows */
	IMC_LNH_IBA_GLOBAL = 3, /* GRH, then BTH, follows */
};

#define IMC_GRH_IPVER 6           /* IBA 8.3 */
#define IMC_GRH_NEXT_HDR_IBA 0x1b /* IBA 8.3: an IBA transport follows */

/* BTH opcodes of the UD transport (IBA 9.2). */
#define IMC_BTH_OP_UD_SEND_ONLY 0x64
#define IMC_BTH_OP_UD_SEND_ONLY_IMM 0x65

#define IMC_QPN_MAX 0xffffffu
#define IMC_MCAST_QPN 0xffffffu     /* IBA 10.5: multicast destination QP */
#define IMC_MLID_MIN 0xc000u        /* IBA 7.11: multicast LID range */
#define IMC_MLID_MAX 0xfffeu
#define IMC_LID_PERMISSIVE 0xffffu  /* IBA 7.11 */
#define IMC_QP1 1u                  /* IBA 13.5: the GSI is QP1 */
#define IMC_QP1_QKEY 0x80010000u    /* IBA 13.5: the GSI's well-known Q_Key */
#define IMC_PKEY_DEFAULT 0xffffu

static inline bool imc_lid_is_mcast(uint16_t lid)
{
	return lid >= IMC_MLID_MIN && lid <= IMC_MLID_MAX;
}

/* IBA 7.7 Local Route Header. */
struct imc_lrh {
	uint8_t vl;       /* 4 bits */
	uint8_t lver;     /* 4 bits; 0 is the only link version */
	uint8_t sl;       /* 4 bits */
	uint8_t resv2;    /* 2 reserved bits */
	uint8_t lnh;      /* 2 bits, enum imc_lnh */
	uint16_t dlid;
	uint8_t resv5;    /* 5 reserved bits */
	uint16_t pkt_len; /* 11 bits: 4-byte words from LRH through ICRC */
	uint16_t slid;
};

/* IBA 8.3 Global Route Header. */
struct imc_grh {
	uint8_t ipver;       /* 4 bits, IMC_GRH_IPVER */
	uint8_t tclass;
	uint32_t flow_label; /* 20 bits */
	uint16_t pay_len;    /* bytes after the GRH up to and including ICRC */
	uint8_t next_hdr;    /* IMC_GRH_NEXT_HDR_IBA */
	uint8_t hop_limit;
	struct imc_gid sgid;
	struct imc_gid dgid;
};

/* IBA 9.2 Base Transport Header. */
struct imc_bth {
	uint8_t opcode;
	bool se;
	bool migreq;
	uint8_t pad_cnt;  /* 2 bits: pad bytes after the payload */
	uint8_t tver;     /* 4 bits, 0 */
	uint16_t pkey;
	uint8_t resv8a;   /* variant; FECN/BECN in later IBA releases */
	uint32_t dest_qp; /* 24 bits */
	bool ack_req;
	uint8_t resv7;    /* 7 reserved bits */
	uint32_t psn;     /* 24 bits */
};

/* IBA 9.3.3 Datagram Extended Transport Header. */
struct imc_deth {
	uint32_t qkey;
	uint8_t resv8;
	uint32_t src_qp;  /* 24 bits */
};

int imc_lrh_pack(const struct imc_lrh *h, uint8_t *buf, size_t len);
int imc_lrh_unpack(struct imc_lrh *h, const uint8_t *buf, size_t len);
int imc_grh_pack(const struct imc_grh *h, uint8_t *buf, size_t len);
int imc_grh_unpack(struct imc_grh *h, const uint8_t *buf, size_t len);
int imc_bth_pack(const struct imc_bth *h, uint8_t *buf, size_t len);
int imc_bth_unpack(struct imc_bth *h, const uint8_t *buf, size_t len);
int imc_deth_pack(const struct imc_deth *h, uint8_t *buf, size_t len);
int imc_deth_unpack(struct imc_deth *h, const uint8_t *buf, size_t len);

/* A whole UD SEND ONLY packet: LRH [GRH] BTH DETH [ImmDt] payload pad
 * ICRC VCRC. payload points at payload_len bytes owned by the caller (after
 * a parse: into the parsed buffer, which must outlive the struct). */
struct imc_ud_packet {
	struct imc_lrh lrh;
	bool has_grh;
	struct imc_grh grh;
	struct imc_bth bth;
	struct imc_deth deth;
	uint32_t imm_data;   /* when bth.opcode is IMC_BTH_OP_UD_SEND_ONLY_IMM */
	const uint8_t *payload;
	size_t payload_len;
};

/* Wire size of the packet p would build, CRCs included. */
size_t imc_ud_packet_size(const struct imc_ud_packet *p);

/* Builds p into buf and returns the bytes written. Fills in p first, from
 * the packet's shape: lrh.lnh, lrh.pkt_len, bth.pad_cnt and, with a GRH,
 * grh.ipver, grh.next_hdr and grh.pay_len (IBA 7.7, 8.3, 9.2). Pad
 * bytes are 0; the ICRC and VCRC are appended. Errors: -EINVAL (opcode not
 * UD SEND ONLY[_IMM], a field too wide, payload NULL with a length),
 * -EMSGSIZE (more than PktLen can describe), -ENOSPC (buf too short). */
int imc_ud_packet_build(struct imc_ud_packet *p, uint8_t *buf, size_t len);

/* Parses and validates one whole packet of exactly len bytes, LRH through
 * VCRC; returns len. Checks in this order, each with its own error:
 *   -EMSGSIZE        shorter than the headers it announces plus CRCs
 *   -ERANGE          LRH PktLen * 4 + 2 != len, or GRH PayLen disagrees
 *   -EILSEQ          VCRC mismatch (IBA 7.8.2)
 *   -EPROTONOSUPPORT LVer not 0, or LNH not IBA local/global (IBA 7.7)
 *   -EPROTO          GRH IPVer not 6 or NxtHdr not 0x1B (IBA 8.3)
 *   -EOPNOTSUPP      opcode not UD SEND ONLY[_IMM], or TVer not 0
 *   -EINVAL          PadCnt larger than the payload area (IBA 9.2)
 *   -EBADMSG         ICRC mismatch (IBA 7.8.1)
 * On success p->payload points into buf (pad excluded). */
int imc_ud_packet_parse(struct imc_ud_packet *p, const uint8_t *buf,
			size_t len);

/* CRC-32 of IEEE 802.3 (polynomial 0x04C11DB7, reflected, initial value
 * and final XOR 0xFFFFFFFF). Start with crc = 0 and chain by passing the
 * previous result: imc_crc32(0, "123456789", 9) == 0xCBF43926. */
uint32_t imc_crc32(uint32_t crc, const void *buf, size_t len);

/* The IBA VCRC's CRC-16 (IBA 7.8.2: polynomial 0x100B, reflected like the
 * ICRC, initial value and final XOR 0xFFFF). Chains like imc_crc32;
 * imc_crc16(0, "123456789", 9) == 0x0A3D. */
uint16_t imc_crc16(uint16_t crc, const void *buf, size_t len);

/* ICRC (IBA 7.8.1) of pkt[0..len), LRH through the pad bytes: CRC-32 with
 * the variant fields taken as all ones. Variant are the LRH VL of a local
 * packet, the whole LRH of a global one (a router rewrites it), the GRH
 * TClass, FlowLabel and HopLmt, and BTH resv8a. On the wire it follows the
 * pad, least significant byte first. Errors: -EPROTONOSUPPORT for raw
 * packets (LNH 0 or 1 carry no ICRC), -EMSGSIZE if len is too short for
 * the headers. */
int imc_icrc_compute(const uint8_t *pkt, size_t len, uint32_t *icrc);

/* VCRC (IBA 7.8.2) of pkt[0..len), LRH through ICRC; nothing is masked.
 * On the wire it follows the ICRC, least significant byte first. */
uint16_t imc_vcrc_compute(const uint8_t *pkt, size_t len);

/* Rewrites the CRCs at the end of a whole packet of len bytes (LRH through
 * VCRC): the ICRC for IBA packets, then the VCRC. A switch or router that
 * changed a variant field calls this. Errors as imc_icrc_compute, and
 * -EMSGSIZE if len cannot hold the CRCs. */
int imc_packet_crc_fill(uint8_t *pkt, size_t len);

/* Checks the CRCs of a whole packet: 0, -EILSEQ (VCRC), -EBADMSG (ICRC),
 * or the errors of imc_icrc_compute. */
int imc_packet_crc_check(const uint8_t *pkt, size_t len);

#ifdef __cplusplus
}
#endif
#endif
