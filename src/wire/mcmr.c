/* MCMemberRecord field table, matching, printers and rate encodings
 * (ibmcast/mcmr.h). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/mcmr.h"

#define CM(x) ((uint64_t)UMAD_SA_MCM_COMP_MASK_##x)
#define OFF(f) offsetof(struct imc_mcmr, f)

/* P_Key: membership type in the top bit, the partition's base in the
 * other 15 (IBA 10.9.1.2). */
enum {
	PKEY_FULL = 0x8000,
	PKEY_BASE = 0x7fff,
	MTU_MIN = 1,        /* 256 bytes */
	MTU_MAX = 5,        /* 4096 bytes */
};

/* ------------------------------------------------------------------ */
/* Rates */

/* Bandwidth of each rate code in 100 Mb/s, IBA 15.2.5.16 Table 214:
 * 2 = 2.5 Gb/s, 3 = 10, 4 = 30, 5 = 5, 6 = 20, 7 = 40, 8 = 60, 9 = 80,
 * 10 = 120, 11 = 14 (FDR 1x), 12 = 56, 13 = 112, 14 = 168, 15 = 25 (EDR
 * 1x), 16 = 100, 17 = 200, 18 = 300, 19 = 28, 20 = 50, 21 = 400,
 * 22 = 600. */
static const uint16_t rate_bw[IMC_RATE_MAX + 1] = {
	[2] = 25, [3] = 100, [4] = 300, [5] = 50, [6] = 200, [7] = 400,
	[8] = 600, [9] = 800, [10] = 1200, [11] = 140, [12] = 560,
	[13] = 1120, [14] = 1680, [15] = 250, [16] = 1000, [17] = 2000,
	[18] = 3000, [19] = 280, [20] = 500, [21] = 4000, [22] = 6000,
};

bool imc_rate_valid(unsigned code)
{
	return code >= IMC_RATE_MIN && code <= IMC_RATE_MAX;
}

unsigned imc_rate_mbps(unsigned code)
{
	return imc_rate_valid(code) ? rate_bw[code] * 100u : 0;
}

static int cmpu(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

int imc_rate_cmp(unsigned a, unsigned b)
{
	return cmpu(imc_rate_mbps(a), imc_rate_mbps(b));
}

unsigned imc_rate_step(unsigned code, int dir)
{
	unsigned best = 0;

	for (unsigned c = IMC_RATE_MIN; c <= IMC_RATE_MAX; c++) {
		int to_code = imc_rate_cmp(c, code);

		if (dir > 0 && to_code > 0 &&
		    (!best || imc_rate_cmp(c, best) < 0))
			best = c;
		if (dir < 0 && to_code < 0 &&
		    (!best || imc_rate_cmp(c, best) > 0))
			best = c;
	}
	return best;
}

/* ------------------------------------------------------------------ */
/* Field table */

/* A field named as its member of struct imc_mcmr, c its ComponentMask
 * bit (IBA 15.2.5.17 Table 215). */
#define F(m, key, c, kind, max, hex, cmp)                                 \
	{ #m, key, CM(c), OFF(m), IMC_MCMR_F_##kind, max, hex,            \
	  IMC_MCMR_CMP_##cmp, 0, 0 }
/* A 6-bit code its selector qualifies: MTU, Rate, PacketLifeTime. */
#define FSEL(m, c, cmp)                                                   \
	{ #m, #m, CM(c), OFF(m), IMC_MCMR_F_U8, 0x3f, 0, IMC_MCMR_CMP_##cmp, \
	  CM(c##_SEL), OFF(m##_sel) }

static const struct imc_mcmr_field imc_mcmr_fields[] = {
	F(mgid, NULL, MGID, GID, 0, 0, EQ),
	F(port_gid, NULL, PORT_GID, GID, 0, 0, NONE),
	F(qkey, "qkey", QKEY, U32, 0xffffffff, 8, EQ),
	F(mlid, "mlid", MLID, U16, 0xffff, 4, EQ),
	F(mtu_sel, NULL, MTU_SEL, U8, 3, 0, NONE),
	FSEL(mtu, MTU, ORDER),
	F(tclass, "tclass", TCLASS, U8, 0xff, 0, EQ),
	F(pkey, "pkey", PKEY, U16, 0xffff, 4, PKEY),
	F(rate_sel, NULL, RATE_SEL, U8, 3, 0, NONE),
	FSEL(rate, RATE, RATE),
	F(life_sel, NULL, LIFE_TIME_SEL, U8, 3, 0, NONE),
	FSEL(life, LIFE_TIME, ORDER),
	F(sl, "sl", SL, U8, 0xf, 0, EQ),
	F(flow_label, "flow", FLOW_LABEL, U32, 0xfffff, 5, EQ),
	F(hop_limit, "hop", HOP_LIMIT, U8, 0xff, 0, EQ),
	F(scope, "scope", SCOPE, U8, 0xf, 0, EQ),
	F(join_state, NULL, JOIN_STATE, U8, 0xf, 1, NONE),
	F(proxy_join, NULL, PROXY_JOIN, BOOL, 1, 0, NONE),
};

#undef F
#undef FSEL

#define imc_mcmr_n_fields IMC_ARRAY_SIZE(imc_mcmr_fields)

const struct imc_mcmr_field *imc_mcmr_field_at(size_t i)
{
	return i < imc_mcmr_n_fields ? &imc_mcmr_fields[i] : NULL;
}

const struct imc_mcmr_field *imc_mcmr_field_find(const char *name,
						 bool by_key)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < imc_mcmr_n_fields; i++) {
		const char *n = by_key ? imc_mcmr_fields[i].key
				       : imc_mcmr_fields[i].name;

		if (n && !strcmp(n, name))
			return &imc_mcmr_fields[i];
	}
	return NULL;
}

static uint64_t get_at(const struct imc_mcmr *r, enum imc_mcmr_kind kind,
		       size_t off)
{
	const uint8_t *p = (const uint8_t *)r + off;
	uint16_t u16;
	uint32_t u32;
	bool b;

	switch (kind) {
	case IMC_MCMR_F_U8:
		return *p;
	case IMC_MCMR_F_U16:
		memcpy(&u16, p, sizeof(u16));
		return u16;
	case IMC_MCMR_F_U32:
		memcpy(&u32, p, sizeof(u32));
		return u32;
	case IMC_MCMR_F_BOOL:
		memcpy(&b, p, sizeof(b));
		return b;
	case IMC_MCMR_F_GID:
		break;
	}
	return 0;
}

uint64_t imc_mcmr_field_get(const struct imc_mcmr *r,
			    const struct imc_mcmr_field *f)
{
	return get_at(r, f->kind, f->offset);
}

int imc_mcmr_field_set(struct imc_mcmr *r, const struct imc_mcmr_field *f,
		       uint64_t v)
{
	uint8_t *p = (uint8_t *)r + f->offset;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;
	bool b = v != 0;

	if (f->kind == IMC_MCMR_F_GID)
		return -EINVAL;
	if (v > f->max)
		return -ERANGE;
	switch (f->kind) {
	case IMC_MCMR_F_U8:
		*p = (uint8_t)v;
		break;
	case IMC_MCMR_F_U16:
		memcpy(p, &u16, sizeof(u16));
		break;
	case IMC_MCMR_F_U32:
		memcpy(p, &u32, sizeof(u32));
		break;
	case IMC_MCMR_F_BOOL:
		memcpy(p, &b, sizeof(b));
		break;
	case IMC_MCMR_F_GID:
		break;
	}
	return 0;
}

void imc_mcmr_copy(struct imc_mcmr *dst, const struct imc_mcmr *src,
		   uint64_t mask)
{
	static const size_t size[] = {
		[IMC_MCMR_F_GID] = sizeof(struct imc_gid),
		[IMC_MCMR_F_U8] = 1,
		[IMC_MCMR_F_U16] = 2,
		[IMC_MCMR_F_U32] = 4,
		[IMC_MCMR_F_BOOL] = sizeof(bool),
	};

	for (size_t i = 0; i < imc_mcmr_n_fields; i++) {
		const struct imc_mcmr_field *d = &imc_mcmr_fields[i];

		if (mask & d->comp)
			memcpy((uint8_t *)dst + d->offset,
			       (const uint8_t *)src + d->offset,
			       size[d->kind]);
	}
}

/* ------------------------------------------------------------------ */
/* Matching */

static bool field_match(const struct imc_mcmr_field *f,
			const struct imc_mcmr *g, const struct imc_mcmr *r,
			uint64_t mask)
{
	uint64_t gv = imc_mcmr_field_get(g, f), rv = imc_mcmr_field_get(r, f);
	int order;

	if (f->sel_comp && (mask & f->sel_comp)) {
		order = f->cmp == IMC_MCMR_CMP_RATE
				? imc_rate_cmp((unsigned)gv, (unsigned)rv)
				: cmpu(gv, rv);
		return imc_sa_selector_match(
			(unsigned)get_at(r, IMC_MCMR_F_U8, f->sel_offset),
			order);
	}
	if (!(mask & f->comp) || f->cmp == IMC_MCMR_CMP_NONE)
		return true;
	if (f->kind == IMC_MCMR_F_GID)
		return imc_gid_equal((const struct imc_gid *)(const void *)
					     ((const uint8_t *)g + f->offset),
				     (const struct imc_gid *)(const void *)
					     ((const uint8_t *)r + f->offset));
	if (f->cmp == IMC_MCMR_CMP_PKEY)
		return ((gv | rv) & PKEY_FULL) &&
		       !((gv ^ rv) & PKEY_BASE);
	return gv == rv;
}

bool imc_mcmr_match(const struct imc_mcmr *g, const struct imc_mcmr *r,
		    uint64_t mask)
{
	for (size_t i = 0; i < imc_mcmr_n_fields; i++)
		if (!field_match(&imc_mcmr_fields[i], g, r, mask))
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* Printing */

static const struct imc_gid *gid_at(const struct imc_mcmr *r,
				    const struct imc_mcmr_field *f)
{
	return (const struct imc_gid *)(const void *)((const uint8_t *)r +
						      f->offset);
}

int imc_mcmr_print_text(FILE *f, const struct imc_mcmr *r, uint64_t mask)
{
	char s[IMC_GID_STRLEN];

	for (size_t i = 0; i < imc_mcmr_n_fields; i++) {
		const struct imc_mcmr_field *d = &imc_mcmr_fields[i];
		uint64_t v = imc_mcmr_field_get(r, d);

		if (!(mask & d->comp))
			continue;
		if (d->kind == IMC_MCMR_F_GID) {
			imc_gid_format(gid_at(r, d), s);
			fprintf(f, " %s=%s", d->name, s);
		} else if (d->hex) {
			fprintf(f, " %s=0x%0*" PRIx64, d->name, (int)d->hex, v);
		} else {
			fprintf(f, " %s=%" PRIu64, d->name, v);
		}
	}
	return ferror(f) ? -EIO : 0;
}

static int json_field(struct imc_json *j, const struct imc_mcmr *r,
		      const struct imc_mcmr_field *d)
{
	if (d->kind == IMC_MCMR_F_GID)
		return imc_json_kv_gid(j, d->name, gid_at(r, d));
	if (d->kind == IMC_MCMR_F_BOOL)
		return imc_json_kv_bool(j, d->name, imc_mcmr_field_get(r, d));
	return imc_json_kv_u64(j, d->name, imc_mcmr_field_get(r, d));
}

int imc_mcmr_print_json(struct imc_json *j, const struct imc_mcmr *r,
			uint64_t mask)
{
	imc_json_object_begin(j);
	for (size_t i = 0; i < imc_mcmr_n_fields; i++)
		if (mask & imc_mcmr_fields[i].comp)
			json_field(j, r, &imc_mcmr_fields[i]);
	return imc_json_object_end(j);
}

int imc_mcmr_print_json_keys(struct imc_json *j, const struct imc_mcmr *r,
			     const char *const *names)
{
	int rc = 0;

	for (; *names; names++) {
		const struct imc_mcmr_field *d =
			imc_mcmr_field_find(*names, false);

		if (!d)
			return -EINVAL;
		rc = json_field(j, r, d);
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* Create */

int imc_mcmr_fill_create(struct imc_mcmr *r, uint64_t *mask,
			 const struct imc_mcmr_create *c)
{
	uint16_t pkey = c->pkey ? c->pkey : 0xffff;
	uint8_t js = c->join_state ? c->join_state
				   : UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER;

	if (c->sl > 0xf || c->flow_label > 0xfffff || js > 0xf ||
	    !(js & (UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER |
		    UMAD_SA_MCM_JOIN_STATE_SEND_ONLY_FULL_MEMBER)) ||
	    !(pkey & PKEY_BASE) ||
	    (c->mtu && (c->mtu < MTU_MIN || c->mtu > MTU_MAX)) ||
	    (c->rate && !imc_rate_valid(c->rate)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->mgid = c->mgid;
	r->port_gid = c->port_gid;
	r->qkey = c->qkey;
	r->pkey = pkey;
	r->sl = c->sl;
	r->tclass = c->tclass;
	r->flow_label = c->flow_label;
	r->join_state = js;
	*mask = IMC_MCMR_CREATE_COMPS;
	if (c->mtu) {
		/* MTU codes 1..5 = 256..4096 bytes, IBA 15.2.5.16. */
		r->mtu_sel = UMAD_SA_SELECTOR_EXACTLY;
		r->mtu = c->mtu;
		*mask |= CM(MTU_SEL) | CM(MTU);
	}
	if (c->rate) {
		r->rate_sel = UMAD_SA_SELECTOR_EXACTLY;
		r->rate = c->rate;
		*mask |= CM(RATE_SEL) | CM(RATE);
	}
	if (c->hop_limit) {
		r->hop_limit = c->hop_limit;
		*mask |= CM(HOP_LIMIT);
	}
	return 0;
}
