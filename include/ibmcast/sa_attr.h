/* SA attribute records in host byte order: MCMemberRecord (IBA 15.2.5.17),
 * PathRecord (IBA 15.2.5.16), ClassPortInfo (IBA 13.4.8.1), Notice
 * (IBA 13.4.8.2) and InformInfo (IBA 13.4.8.3).
 *
 * Conventions are those of mad.h: pack() writes exactly the record's wire
 * size and returns it, -ENOSPC when len is shorter (nothing written), or
 * -EINVAL when a field does not fit its bits on the wire (nothing
 * written); unpack() returns the size consumed, or -EMSGSIZE when len is
 * shorter, and never reads past len. Reserved bits are kept raw so that
 * unpack followed by pack gives back the same bytes, and so that the SA
 * can see requests that set them.
 */
#ifndef IBMCAST_SA_ATTR_H
#define IBMCAST_SA_ATTR_H

#include <infiniband/umad_sa.h>
#include <infiniband/umad_sa_mcm.h>
#include <infiniband/umad_types.h>

#include "ibmcast/common.h"
#include "ibmcast/mad.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	IMC_MCMR_SIZE = 56,        /* 52 defined + 4 pad to 8 bytes */
	IMC_PATH_REC_SIZE = 64,
	IMC_CLASS_PORT_INFO_SIZE = 72,
	IMC_INFORM_INFO_SIZE = 36,
	IMC_NOTICE_SIZE = 80,
	IMC_NOTICE_DATA_SIZE = 54,
};

/* Selector values (UMAD_SA_SELECTOR_*: GREATER_THAN, LESS_THAN, EXACTLY,
 * LARGEST_AVAIL / SMALLEST_AVAIL for the packet lifetime), IBA 15.2.5.16. */
const char *imc_sa_selector_str(unsigned sel);

/* Does a value satisfy a selector? @cmp is the sign of (offered - asked)
 * in the field's own order (rates are not ordered by their codes: the
 * caller compares bandwidths). Selector 3 accepts any value: the SA picks
 * the largest (smallest lifetime) it has. */
bool imc_sa_selector_match(unsigned sel, int cmp);

/* MCMemberRecord, IBA 15.2.5.17; wire layout is rdma-core's struct
 * umad_sa_mcmember_record. Component mask bits: UMAD_SA_MCM_COMP_MASK_*;
 * JoinState bits: UMAD_SA_MCM_JOIN_STATE_*. */
struct imc_mcmr {
	struct imc_gid mgid;
	struct imc_gid port_gid;
	uint32_t qkey;
	uint16_t mlid;
	uint8_t mtu_sel;        /* UMAD_SA_SELECTOR_*, 2 bits */
	uint8_t mtu;            /* 6 bits */
	uint8_t tclass;
	uint16_t pkey;
	uint8_t rate_sel;       /* 2 bits */
	uint8_t rate;           /* 6 bits */
	uint8_t life_sel;       /* 2 bits */
	uint8_t life;           /* 6 bits */
	uint8_t sl;             /* 4 bits */
	uint32_t flow_label;    /* 20 bits */
	uint8_t hop_limit;
	uint8_t scope;          /* 4 bits, UMAD_SA_MCM_ADDR_SCOPE_* */
	uint8_t join_state;     /* 4 bits */
	bool proxy_join;
	uint8_t resv49;         /* low 7 bits of byte 49, reserved */
	uint8_t resv[6];        /* bytes 50..55: reserved and pad */
};

int imc_mcmr_pack(const struct imc_mcmr *r, uint8_t *buf, size_t len);
int imc_mcmr_unpack(struct imc_mcmr *r, const uint8_t *buf, size_t len);

/* True when any reserved bit of the record is set. */
bool imc_mcmr_reserved_set(const struct imc_mcmr *r);

/* PathRecord component mask bits, IBA 15.2.5.16 (ServiceID takes 0 and 1:
 * it was ServiceID8MSB and ServiceID56LSB). */
enum {
	IMC_PR_COMP_SERVICE_ID = (1ULL << 0) | (1ULL << 1),
	IMC_PR_COMP_DGID = 1ULL << 2,
	IMC_PR_COMP_SGID = 1ULL << 3,
	IMC_PR_COMP_DLID = 1ULL << 4,
	IMC_PR_COMP_SLID = 1ULL << 5,
	IMC_PR_COMP_RAW_TRAFFIC = 1ULL << 6,
	IMC_PR_COMP_FLOW_LABEL = 1ULL << 8,
	IMC_PR_COMP_HOP_LIMIT = 1ULL << 9,
	IMC_PR_COMP_TCLASS = 1ULL << 10,
	IMC_PR_COMP_REVERSIBLE = 1ULL << 11,
	IMC_PR_COMP_NUMB_PATH = 1ULL << 12,
	IMC_PR_COMP_PKEY = 1ULL << 13,
	IMC_PR_COMP_QOS_CLASS = 1ULL << 14,
	IMC_PR_COMP_SL = 1ULL << 15,
	IMC_PR_COMP_MTU_SEL = 1ULL << 16,
	IMC_PR_COMP_MTU = 1ULL << 17,
	IMC_PR_COMP_RATE_SEL = 1ULL << 18,
	IMC_PR_COMP_RATE = 1ULL << 19,
	IMC_PR_COMP_LIFE_SEL = 1ULL << 20,
	IMC_PR_COMP_LIFE = 1ULL << 21,
	IMC_PR_COMP_PREFERENCE = 1ULL << 22,
};

/* PathRecord, IBA 15.2.5.16. */
struct imc_path_rec {
	uint64_t service_id;
	struct imc_gid dgid;
	struct imc_gid sgid;
	uint16_t dlid;
	uint16_t slid;
	bool raw_traffic;
	uint8_t resv_flow;      /* 3 reserved bits after RawTraffic */
	uint32_t flow_label;    /* 20 bits */
	uint8_t hop_limit;
	uint8_t tclass;
	bool reversible;
	uint8_t numb_path;      /* 7 bits */
	uint16_t pkey;
	uint16_t qos_class;     /* 12 bits */
	uint8_t sl;             /* 4 bits */
	uint8_t mtu_sel;        /* 2 bits */
	uint8_t mtu;            /* 6 bits */
	uint8_t rate_sel;
	uint8_t rate;
	uint8_t life_sel;
	uint8_t life;
	uint8_t preference;
	uint8_t resv[6];        /* bytes 58..63 */
};

int imc_path_rec_pack(const struct imc_path_rec *r, uint8_t *buf, size_t len);
int imc_path_rec_unpack(struct imc_path_rec *r, const uint8_t *buf,
			size_t len);

/* ClassPortInfo, IBA 13.4.8.1; wire layout is rdma-core's struct
 * umad_class_port_info. CapabilityMask bits of the SA:
 * UMAD_SA_CAP_MASK_*, CapabilityMask2 bits: UMAD_SA_CAP_MASK2_*. */
struct imc_class_port_info {
	uint8_t base_version;
	uint8_t class_version;
	uint16_t cap_mask;
	uint32_t cap_mask2;             /* 27 bits */
	uint8_t resp_time;              /* 5 bits */
	struct imc_gid redirect_gid;
	uint8_t redirect_tclass;
	uint8_t redirect_sl;            /* 4 bits */
	uint32_t redirect_flow_label;   /* 20 bits */
	uint16_t redirect_lid;
	uint16_t redirect_pkey;
	uint8_t redirect_resv;          /* reserved byte before RedirectQP */
	uint32_t redirect_qp;           /* 24 bits */
	uint32_t redirect_qkey;
	struct imc_gid trap_gid;
	uint8_t trap_tclass;
	uint8_t trap_sl;                /* 4 bits */
	uint32_t trap_flow_label;       /* 20 bits */
	uint16_t trap_lid;
	uint16_t trap_pkey;
	uint8_t trap_hop_limit;
	uint32_t trap_qp;               /* 24 bits */
	uint32_t trap_qkey;
};

int imc_class_port_info_pack(const struct imc_class_port_info *c,
			     uint8_t *buf, size_t len);
int imc_class_port_info_unpack(struct imc_class_port_info *c,
			       const uint8_t *buf, size_t len);

/* InformInfo, IBA 13.4.8.3: a subscription to traps / notices. */
struct imc_inform_info {
	struct imc_gid gid;
	uint16_t lid_range_begin;
	uint16_t lid_range_end;
	uint16_t resv20;                        /* bytes 20..21 */
	uint8_t is_generic;
	uint8_t subscribe;
	uint16_t type;
	uint16_t trap_number_or_device_id;
	uint32_t qpn;                           /* 24 bits */
	uint8_t resv_qpn;                       /* 3 reserved bits */
	uint8_t resp_time_value;                /* 5 bits */
	uint8_t resv32;                         /* byte 32 */
	uint32_t producer_type_or_vendor_id;    /* 24 bits */
};

int imc_inform_info_pack(const struct imc_inform_info *i, uint8_t *buf,
			 size_t len);
int imc_inform_info_unpack(struct imc_inform_info *i, const uint8_t *buf,
			   size_t len);

/* Notice, IBA 13.4.8.2. */
enum imc_notice_type {
	IMC_NOTICE_TYPE_FATAL = 0,
	IMC_NOTICE_TYPE_URGENT = 1,
	IMC_NOTICE_TYPE_SECURITY = 2,
	IMC_NOTICE_TYPE_SM = 3,
	IMC_NOTICE_TYPE_INFO = 4,
	IMC_NOTICE_TYPE_EMPTY = 0x7f,
};

enum {
	/* IBA 13.4.8.2 ProducerType of generic notices */
	IMC_NOTICE_PRODUCER_CA = 1,
	IMC_NOTICE_PRODUCER_SWITCH = 2,
	IMC_NOTICE_PRODUCER_ROUTER = 3,
	IMC_NOTICE_PRODUCER_CLASS_MANAGER = 4,
	/* IBA 14.2.5.1, o14-12.1.11: SA traps */
	IMC_TRAP_MCAST_GROUP_CREATED = 66,
	IMC_TRAP_MCAST_GROUP_DELETED = 67,
	/* GIDAddr of traps 64..67: DataDetails offset (after 48 reserved
	 * bits), i.e. byte 16 of the Notice; OpenSM ib_mad_notice_attr
	 * data_details.ntc_64_67. */
	IMC_NOTICE_GID_OFFSET = 6,
};

struct imc_notice {
	bool is_generic;
	uint8_t type;                           /* 7 bits, imc_notice_type */
	uint32_t producer_type_or_vendor_id;    /* 24 bits */
	uint16_t trap_number_or_device_id;
	uint16_t issuer_lid;
	bool notice_toggle;
	uint16_t notice_count;                  /* 15 bits */
	uint8_t data_details[IMC_NOTICE_DATA_SIZE];
	struct imc_gid issuer_gid;
};

int imc_notice_pack(const struct imc_notice *n, uint8_t *buf, size_t len);
int imc_notice_unpack(struct imc_notice *n, const uint8_t *buf, size_t len);

/* Fill @n as the SA's trap 66 (group created) or 67 (group deleted) for
 * @mgid: generic, producer class manager, issued by the SA's port
 * (@issuer_lid, @issuer_gid); type Subnet Management as OpenSM sends it
 * (osm_multicast.c, mgrp_send_notice). Toggle and count are left 0.
 * Returns 0, or -EINVAL when @trap is neither 66 nor 67. */
int imc_notice_mcast_init(struct imc_notice *n, uint16_t trap,
			  const struct imc_gid *mgid, uint16_t issuer_lid,
			  const struct imc_gid *issuer_gid);

/* The MGID of a generic trap 66 or 67; -EINVAL for any other notice. */
int imc_notice_mcast_mgid(const struct imc_notice *n, struct imc_gid *mgid);

/* The @i-th record (from 0) of a single-MAD SA answer (GetResp,
 * GetTableResp): records are AttributeOffset 8-byte words apart
 * (IBA 15.2.1.1) from the start of the data area. Sets *rec to the record
 * inside m->data and *len to its spacing in bytes. Returns 0, or -EINVAL
 * when AttributeOffset is 0 or the record does not end inside the data
 * area. The number of records is not in the MAD; the caller knows it
 * (RMPP PayloadLength, or one for GetResp). */
int imc_sa_mad_record(const struct imc_sa_mad *m, unsigned i,
		      const uint8_t **rec, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
