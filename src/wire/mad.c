/* Common MAD header (IBA 13.4.3), RMPP header (IBA 13.6.2.1), SA header
 * (IBA 15.2.1.1) and whole SA MADs. Offsets are checked against rdma-core's
 * struct umad_hdr, umad_rmpp_hdr and umad_sa_packet so that the two can
 * never disagree.
 */
#include <errno.h>
#include <string.h>

#include "ibmcast/mad.h"
#include "util/bytes.h"
#include "wire/fields.h"

_Static_assert(sizeof(struct umad_hdr) == IMC_MAD_HDR_SIZE, "MAD header");
_Static_assert(offsetof(struct umad_hdr, status) == 4, "MAD status");
_Static_assert(offsetof(struct umad_hdr, class_specific) == 6, "class spec");
_Static_assert(offsetof(struct umad_hdr, tid) == 8, "MAD TID");
_Static_assert(offsetof(struct umad_hdr, attr_id) == 16, "MAD attr id");
_Static_assert(offsetof(struct umad_hdr, resv) == 18, "MAD reserved");
_Static_assert(offsetof(struct umad_hdr, attr_mod) == 20, "MAD attr mod");
_Static_assert(sizeof(struct umad_rmpp_hdr) == IMC_RMPP_HDR_SIZE, "RMPP");
_Static_assert(offsetof(struct umad_rmpp_hdr, rmpp_rtime_flags) == 2, "RRT");
_Static_assert(offsetof(struct umad_rmpp_hdr, seg_num) == 4, "SegNum");
_Static_assert(offsetof(struct umad_rmpp_hdr, paylen_newwin) == 8, "PayLen");
_Static_assert(sizeof(struct umad_sa_packet) == IMC_MAD_SIZE, "SA MAD");
_Static_assert(offsetof(struct umad_sa_packet, rmpp_hdr) == IMC_MAD_HDR_SIZE,
	       "RMPP header offset");
_Static_assert(offsetof(struct umad_sa_packet, sm_key) ==
	       IMC_MAD_HDR_SIZE + IMC_RMPP_HDR_SIZE, "SA header offset");
_Static_assert(offsetof(struct umad_sa_packet, attr_offset) == 44, "AttrOff");
_Static_assert(offsetof(struct umad_sa_packet, reserved) == 46, "SA rsvd");
_Static_assert(offsetof(struct umad_sa_packet, comp_mask) == 48, "CompMask");
_Static_assert(offsetof(struct umad_sa_packet, data) == IMC_SA_DATA_OFFSET,
	       "SA data offset");
_Static_assert(IMC_SA_DATA_OFFSET + IMC_SA_DATA_SIZE == IMC_MAD_SIZE,
	       "SA data size");

/* The common MAD header, IBA 13.4.3 Table 97. */
#define F(m, bit, bits) IMC_FIELD(struct imc_mad_hdr, m, bit, bits)
static const struct imc_field mad_hdr_fields[] = {
	F(base_version, 0, 8), F(mgmt_class, 8, 8), F(class_version, 16, 8),
	F(method, 24, 8),
	F(status, 32, 16), F(class_specific, 48, 16),
	F(tid, 64, 64),
	F(attr_id, 128, 16), F(resv, 144, 16),
	F(attr_mod, 160, 32),
};
#undef F

/* The RMPP header, IBA 13.6.2.1 Table 172. */
#define F(m, bit, bits) IMC_FIELD(struct imc_rmpp_hdr, m, bit, bits)
static const struct imc_field rmpp_hdr_fields[] = {
	F(version, 0, 8), F(type, 8, 8), F(resp_time, 16, 5), F(flags, 21, 3),
	F(status, 24, 8),
	F(seg_num, 32, 32),
	F(paylen_newwin, 64, 32),
};
#undef F

/* The SA header, IBA 15.2.1.1 Table 193. */
#define F(m, bit, bits) IMC_FIELD(struct imc_sa_hdr, m, bit, bits)
static const struct imc_field sa_hdr_fields[] = {
	F(sm_key, 0, 64),
	F(attr_offset, 64, 16), F(reserved, 80, 16),
	F(comp_mask, 96, 64),
};
#undef F

IMC_FIELDS_CODEC(mad_hdr, IMC_MAD_HDR_SIZE)
IMC_FIELDS_CODEC(rmpp_hdr, IMC_RMPP_HDR_SIZE)
IMC_FIELDS_CODEC(sa_hdr, IMC_SA_HDR_SIZE)

int imc_sa_mad_pack(const struct imc_sa_mad *m, uint8_t *buf, size_t len)
{
	int rc;

	if (len < IMC_MAD_SIZE)
		return -ENOSPC;
	/* The RMPP header is the only part that can refuse its values;
	 * pack it first so that nothing is written on failure. */
	rc = imc_rmpp_hdr_pack(&m->rmpp, buf + IMC_MAD_HDR_SIZE,
			       IMC_RMPP_HDR_SIZE);
	if (rc < 0)
		return rc;
	imc_mad_hdr_pack(&m->mad, buf, IMC_MAD_HDR_SIZE);
	imc_sa_hdr_pack(&m->sa, buf + IMC_MAD_HDR_SIZE + IMC_RMPP_HDR_SIZE,
			IMC_SA_HDR_SIZE);
	memcpy(buf + IMC_SA_DATA_OFFSET, m->data, IMC_SA_DATA_SIZE);
	return IMC_MAD_SIZE;
}

int imc_sa_mad_unpack(struct imc_sa_mad *m, const uint8_t *buf, size_t len)
{
	/* MADs on QP1 are exactly 256 bytes (IBA 13.4.2). */
	if (len != IMC_MAD_SIZE)
		return -EMSGSIZE;
	imc_mad_hdr_unpack(&m->mad, buf, IMC_MAD_HDR_SIZE);
	imc_rmpp_hdr_unpack(&m->rmpp, buf + IMC_MAD_HDR_SIZE,
			    IMC_RMPP_HDR_SIZE);
	imc_sa_hdr_unpack(&m->sa, buf + IMC_MAD_HDR_SIZE + IMC_RMPP_HDR_SIZE,
			  IMC_SA_HDR_SIZE);
	memcpy(m->data, buf + IMC_SA_DATA_OFFSET, IMC_SA_DATA_SIZE);
	return IMC_MAD_SIZE;
}

const char *imc_mad_status_str(uint16_t status)
{
	static const char *const sa[] = {
		[UMAD_SA_STATUS_SUCCESS] = "SUCCESS",
		[UMAD_SA_STATUS_NO_RESOURCES] = "NO_RESOURCES",
		[UMAD_SA_STATUS_REQ_INVALID] = "REQ_INVALID",
		[UMAD_SA_STATUS_NO_RECORDS] = "NO_RECORDS",
		[UMAD_SA_STATUS_TOO_MANY_RECORDS] = "TOO_MANY_RECORDS",
		[UMAD_SA_STATUS_INVALID_GID] = "INVALID_GID",
		[UMAD_SA_STATUS_INSUF_COMPS] = "INSUF_COMPS",
		[UMAD_SA_STATUS_REQ_DENIED] = "REQ_DENIED",
		[UMAD_SA_STATUS_PRI_SUGGESTED] = "PRI_SUGGESTED",
	};
	/* IBA 13.4.7 Table 112, bits 2..4 */
	static const char *const field[8] = {
		[1] = "BAD_VERSION",
		[2] = "METHOD_UNSUPPORTED",
		[3] = "METHOD_ATTR_UNSUPPORTED",
		[7] = "INVALID_ATTR_VALUE",
	};
	unsigned code = imc_sa_status_code(status);
	unsigned inval = imc_mad_status_field(status);

	if (status == UMAD_STATUS_SUCCESS)
		return "SUCCESS";
	/* The most specific reason wins: the SA's own code, then the
	 * generic invalid-field code, then busy / redirect. */
	if (code) {
		if (code < IMC_ARRAY_SIZE(sa))
			return sa[code];
		return "SA_UNKNOWN";
	}
	if (inval)
		return field[inval] ? field[inval] : "INVALID_FIELD_RESERVED";
	if (status & UMAD_STATUS_BUSY)
		return "BUSY";
	if (status & UMAD_STATUS_REDIRECT)
		return "REDIRECT";
	return "UNKNOWN";
}
