/* SA records of the fabric's ports, in host byte order: PortInfoRecord
 * (IBA 15.2.5.3, attribute 0x0012, around PortInfo of IBA 14.2.5.6),
 * NodeRecord (IBA 15.2.5.2, attribute 0x0011, around NodeInfo of IBA
 * 14.2.5.3) and P_KeyTableRecord (IBA 15.2.5.11, attribute 0x0033, around
 * one P_KeyTable block of IBA 14.2.5.7). An SA beside another SM learns
 * its port directory from them.
 *
 * Conventions are those of sa_attr.h: pack() writes exactly the record's
 * wire size and returns it, -ENOSPC when len is shorter (nothing written)
 * or -EINVAL when a field does not fit its bits (nothing written);
 * unpack() returns the size consumed or -EMSGSIZE when len is shorter, and
 * never reads past len. Reserved bits are kept raw, so unpack then pack
 * gives back the same bytes.
 */
#ifndef IBMCAST_SA_RECORDS_H
#define IBMCAST_SA_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	IMC_PORT_INFO_SIZE = 64,
	IMC_PORT_INFO_REC_SIZE = 68,       /* EndportLID, PortNum, Options */
	IMC_NODE_INFO_SIZE = 40,
	IMC_NODE_DESC_SIZE = 64,
	IMC_NODE_REC_SIZE = 108,           /* LID, reserved, NodeInfo, desc */
	IMC_PKEY_BLOCK_SIZE = 32,          /* P_Keys per block */
	IMC_PKEY_TABLE_REC_SIZE = 72,
};

/* Attribute ids (IBA 15.2.5 Table 204). */
enum {
	IMC_SA_ATTR_NODE_REC = 0x0011,
	IMC_SA_ATTR_PORT_INFO_REC = 0x0012,
	IMC_SA_ATTR_PKEY_TABLE_REC = 0x0033,
};

/* Component mask bits (the record's fields in order, IBA 15.2.5). */
enum {
	IMC_PIR_COMP_LID = 1u << 0,
	IMC_PIR_COMP_PORT_NUM = 1u << 1,
	IMC_NR_COMP_LID = 1u << 0,
	IMC_NR_COMP_NODE_GUID = 1u << 7,   /* NodeInfo:NodeGUID */
	IMC_NR_COMP_PORT_GUID = 1u << 8,   /* NodeInfo:PortGUID */
	IMC_PKR_COMP_LID = 1u << 0,
	IMC_PKR_COMP_BLOCK = 1u << 1,
	IMC_PKR_COMP_PORT_NUM = 1u << 2,
};

/* PortState (IBA 14.2.5.6 Table 146). */
enum {
	IMC_PORT_STATE_DOWN = 1,
	IMC_PORT_STATE_INIT = 2,
	IMC_PORT_STATE_ARMED = 3,
	IMC_PORT_STATE_ACTIVE = 4,
};

/* NodeType (IBA 14.2.5.3). */
enum {
	IMC_NODE_TYPE_CA = 1,
	IMC_NODE_TYPE_SWITCH = 2,
	IMC_NODE_TYPE_ROUTER = 3,
};

/* PortInfo, IBA 14.2.5.6 Table 145. Fields narrower than a byte carry
 * their width in the comment. */
struct imc_port_info {
	uint64_t m_key;
	uint64_t gid_prefix;
	uint16_t lid;
	uint16_t master_sm_lid;
	uint32_t cap_mask;
	uint16_t diag_code;
	uint16_t m_key_lease;
	uint8_t local_port;
	uint8_t width_enabled;
	uint8_t width_supported;
	uint8_t width_active;       /* 1 1x, 2 4x, 4 8x, 8 12x, 16 2x */
	uint8_t speed_supported;    /* 4 */
	uint8_t state;              /* 4, IMC_PORT_STATE_* */
	uint8_t phys_state;         /* 4 */
	uint8_t down_default;       /* 4 */
	uint8_t m_key_protect;      /* 2 */
	uint8_t resv34;             /* 3, reserved */
	uint8_t lmc;                /* 3 */
	uint8_t speed_active;       /* 4: 1 SDR, 2 DDR, 4 QDR */
	uint8_t speed_enabled;      /* 4 */
	uint8_t neighbor_mtu;       /* 4, MTU code */
	uint8_t master_sm_sl;       /* 4 */
	uint8_t vl_cap;             /* 4 */
	uint8_t init_type;          /* 4 */
	uint8_t vl_high_limit;
	uint8_t vl_arb_high_cap;
	uint8_t vl_arb_low_cap;
	uint8_t init_type_reply;    /* 4 */
	uint8_t mtu_cap;            /* 4, MTU code: 4 = 2048 */
	uint8_t vl_stall;           /* 3 */
	uint8_t hoq_life;           /* 5 */
	uint8_t op_vls;             /* 4 */
	uint8_t enforce;            /* 4: P_Key in/out, raw in/out */
	uint16_t m_key_violations;
	uint16_t p_key_violations;
	uint16_t q_key_violations;
	uint8_t guid_cap;
	uint8_t client_rereg;       /* 1 */
	uint8_t resv51;             /* 2, reserved (trap suppression) */
	uint8_t subnet_timeout;     /* 5 */
	uint8_t resv52;             /* 3, reserved */
	uint8_t resp_time;          /* 5 */
	uint8_t local_phy_errors;   /* 4 */
	uint8_t overrun_errors;     /* 4 */
	uint16_t max_credit_hint;
	uint8_t resv56;             /* reserved */
	uint32_t link_rtl;          /* 24 */
	uint16_t cap_mask2;
	uint8_t speed_ext_active;   /* 4: 1 FDR, 2 EDR, 4 HDR */
	uint8_t speed_ext_supported; /* 4 */
	uint8_t resv63;             /* 3, reserved */
	uint8_t speed_ext_enabled;  /* 5 */
};

int imc_port_info_pack(const struct imc_port_info *p, uint8_t *buf,
		       size_t len);
int imc_port_info_unpack(struct imc_port_info *p, const uint8_t *buf,
			 size_t len);

/* The PathRecord rate code (IBA 15.2.5.16: 2 = 2.5 Gb/s, 3 = 10, ...) of
 * the port's active width and speed (the extended speed when set), or 0
 * when the width or speed code is not one IBA defines. */
uint8_t imc_port_info_rate(const struct imc_port_info *p);

/* PortInfoRecord, IBA 15.2.5.3 Table 210. */
struct imc_port_info_rec {
	uint16_t lid;               /* EndportLID */
	uint8_t port_num;
	uint8_t options;            /* reserved before IBA 1.3 */
	struct imc_port_info info;
};

int imc_port_info_rec_pack(const struct imc_port_info_rec *r, uint8_t *buf,
			   size_t len);
int imc_port_info_rec_unpack(struct imc_port_info_rec *r, const uint8_t *buf,
			     size_t len);

/* NodeInfo, IBA 14.2.5.3 Table 140. */
struct imc_node_info {
	uint8_t base_version;
	uint8_t class_version;
	uint8_t node_type;          /* IMC_NODE_TYPE_* */
	uint8_t num_ports;
	uint64_t sys_image_guid;
	uint64_t node_guid;
	uint64_t port_guid;         /* the port the record was read through */
	uint16_t partition_cap;
	uint16_t device_id;
	uint32_t revision;
	uint8_t local_port;
	uint32_t vendor_id;         /* 24 */
};

int imc_node_info_pack(const struct imc_node_info *n, uint8_t *buf,
		       size_t len);
int imc_node_info_unpack(struct imc_node_info *n, const uint8_t *buf,
			 size_t len);

/* NodeRecord, IBA 15.2.5.2 Table 209. The description is UTF-8, not
 * NUL-terminated on the wire; desc holds it raw. */
struct imc_node_rec {
	uint16_t lid;
	uint16_t resv;
	struct imc_node_info info;
	uint8_t desc[IMC_NODE_DESC_SIZE];
};

int imc_node_rec_pack(const struct imc_node_rec *r, uint8_t *buf, size_t len);
int imc_node_rec_unpack(struct imc_node_rec *r, const uint8_t *buf,
			size_t len);

/* P_KeyTableRecord, IBA 15.2.5.11 Table 219: one block of 32 P_Keys. */
struct imc_pkey_table_rec {
	uint16_t lid;
	uint16_t block;
	uint8_t port_num;
	uint8_t resv[3];
	uint16_t pkeys[IMC_PKEY_BLOCK_SIZE];
};

int imc_pkey_table_rec_pack(const struct imc_pkey_table_rec *r, uint8_t *buf,
			    size_t len);
int imc_pkey_table_rec_unpack(struct imc_pkey_table_rec *r,
			      const uint8_t *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
