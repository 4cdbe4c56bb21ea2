/* MCMemberRecord (IBA 15.2.5.17) beyond its wire format (sa_attr.h): the
 * field table every parser and printer of the record walks, the one
 * component match of the join tracker and the SA engine, the printers
 * (text and JSON), the rate encodings, and the components a create needs.
 */
#ifndef IBMCAST_MCMR_H
#define IBMCAST_MCMR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ibmcast/json.h"
#include "ibmcast/sa_attr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Rates: the 6-bit Rate of PathRecord and MCMemberRecord (IBA
 * 15.2.5.16 Table 214), codes 2 (2.5 Gb/s) to 22 (600 Gb/s). The codes
 * are not in bandwidth order (5 = 5 Gb/s comes after 4 = 30 Gb/s), so
 * selectors and port capabilities compare bandwidths. */
enum {
	IMC_RATE_MIN = 2,
	IMC_RATE_MAX = 22,
};

bool imc_rate_valid(unsigned code);
/* The bandwidth of a rate code in Mb/s, 0 when the code is not defined. */
unsigned imc_rate_mbps(unsigned code);
/* Sign of bandwidth(a) - bandwidth(b); undefined codes are slowest. */
int imc_rate_cmp(unsigned a, unsigned b);
/* The next faster (dir > 0) or slower (dir < 0) defined code, 0 if none. */
unsigned imc_rate_step(unsigned code, int dir);

/* ---- The field table, in wire order (IBA 15.2.5.17 Table 224). */
enum imc_mcmr_kind {
	IMC_MCMR_F_GID,
	IMC_MCMR_F_U8,
	IMC_MCMR_F_U16,
	IMC_MCMR_F_U32,
	IMC_MCMR_F_BOOL,
};

/* How a field takes part in matching a group (imc_mcmr_match). */
enum imc_mcmr_cmp {
	IMC_MCMR_CMP_NONE,     /* a member's, or a selector (see its value) */
	IMC_MCMR_CMP_EQ,       /* equal */
	IMC_MCMR_CMP_PKEY,     /* low 15 bits equal, not both limited */
	IMC_MCMR_CMP_ORDER,    /* selector over the code's own order */
	IMC_MCMR_CMP_RATE,     /* selector over bandwidths */
};

struct imc_mcmr_field {
	const char *name;      /* record field name, as `ibmcast sa` spells it */
	const char *key;       /* scenario option key, NULL when none */
	uint64_t comp;         /* ComponentMask bit */
	size_t offset;         /* in struct imc_mcmr */
	enum imc_mcmr_kind kind;
	uint64_t max;          /* largest value its bits hold */
	unsigned hex;          /* text form: hex digits, 0 for decimal */
	enum imc_mcmr_cmp cmp;
	uint64_t sel_comp;     /* MTU, Rate, PacketLifeTime: their selector */
	size_t sel_offset;
};

/* The i-th field in wire order, NULL past the last. */
const struct imc_mcmr_field *imc_mcmr_field_at(size_t i);

/* The field of that name (or, with by_key, scenario key); NULL if none. */
const struct imc_mcmr_field *imc_mcmr_field_find(const char *name,
						 bool by_key);
/* A number field's value (GIDs: 0). */
uint64_t imc_mcmr_field_get(const struct imc_mcmr *r,
			    const struct imc_mcmr_field *f);
/* Sets a number field: -ERANGE above f->max, -EINVAL for a GID field. */
int imc_mcmr_field_set(struct imc_mcmr *r, const struct imc_mcmr_field *f,
		       uint64_t v);

/* Copies from src to dst the fields whose ComponentMask bit is in mask,
 * as they are (no range check). */
void imc_mcmr_copy(struct imc_mcmr *dst, const struct imc_mcmr *src,
		   uint64_t mask);

/* ---- Matching. Does group record g satisfy request r in every group
 * component of mask (IBA 15.2.5.17 o15-0.2.4 item 5)? Components compare
 * equal, except: MTU, Rate and PacketLifeTime with their selector in the
 * mask satisfy the selector's relation (IBA 15.2.5.16: 0 greater than,
 * 1 less than, 2 exactly, 3 largest available / smallest lifetime; rates
 * by bandwidth) whether or not the value's own bit is set, and P_Keys
 * match on their low 15 bits when not both limited (IBA 10.9.1.2).
 * PortGID, JoinState and ProxyJoin belong to a member and are left to
 * the caller, as is any rule of its own: leave a component out of mask
 * to skip it. */
bool imc_mcmr_match(const struct imc_mcmr *g, const struct imc_mcmr *r,
		    uint64_t mask);

/* ---- Printing. Text: " name=value" for each field whose ComponentMask
 * bit is in mask, in wire order (hex fields as 0x and their digits).
 * JSON: one object with those fields (GIDs as strings, ProxyJoin as a
 * boolean, numbers as numbers). Return 0 or the stream's error. */
int imc_mcmr_print_text(FILE *f, const struct imc_mcmr *r, uint64_t mask);
int imc_mcmr_print_json(struct imc_json *j, const struct imc_mcmr *r,
			uint64_t mask);
/* Writes the fields names lists (field names, NULL-terminated) as keys
 * of the JSON object open in j, in that order and typed as
 * imc_mcmr_print_json types them: the record part of a listing that
 * adds keys of its own. -EINVAL for a name that is no field, else 0 or
 * the writer's error. */
int imc_mcmr_print_json_keys(struct imc_json *j, const struct imc_mcmr *r,
			     const char *const *names);

/* ---- Creating a group. The SA creates a group only when a Set names
 * MGID, PortGID, JoinState, Q_Key, P_Key, SL, FlowLabel and TClass
 * (o15-0.2.3; OpenSM's REQUIRED_MC_CREATE_COMP_MASK) and a full member
 * asks. */
#define IMC_MCMR_CREATE_COMPS                                             \
	((uint64_t)(UMAD_SA_MCM_COMP_MASK_MGID |                          \
		    UMAD_SA_MCM_COMP_MASK_PORT_GID |                      \
		    UMAD_SA_MCM_COMP_MASK_JOIN_STATE |                    \
		    UMAD_SA_MCM_COMP_MASK_QKEY | UMAD_SA_MCM_COMP_MASK_PKEY | \
		    UMAD_SA_MCM_COMP_MASK_SL |                            \
		    UMAD_SA_MCM_COMP_MASK_FLOW_LABEL |                    \
		    UMAD_SA_MCM_COMP_MASK_TCLASS))

struct imc_mcmr_create {
	struct imc_gid mgid;     /* all zero: the SA assigns one */
	struct imc_gid port_gid;
	uint32_t qkey;
	uint16_t pkey;           /* 0: the default partition, 0xffff */
	uint8_t sl;              /* 4 bits */
	uint8_t tclass;
	uint32_t flow_label;     /* 20 bits */
	uint8_t mtu;             /* MTU code, 0: the largest the SA has */
	uint8_t rate;            /* rate code, 0: the largest the SA has */
	uint8_t join_state;      /* 0: FullMember */
	uint8_t hop_limit;       /* 0: not given */
};

/* Fills *r and *mask with a create's components from c: the required
 * ones, MTU and Rate (selector "exactly") when given, HopLimit when not
 * 0. -EINVAL when a value does not fit its field, the MTU or rate code
 * is not defined, the P_Key's base is 0 or JoinState has neither
 * FullMember nor SendOnlyFullMember (only a full member creates,
 * o15-0.1.9; IBA 1.3 counts a SendOnlyFullMember as one). */
int imc_mcmr_fill_create(struct imc_mcmr *r, uint64_t *mask,
			 const struct imc_mcmr_create *c);

#ifdef __cplusplus
}
#endif
#endif
