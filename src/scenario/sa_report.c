/* The report's "sa" section (sa_verbs.c registers it): the groups and
 * members the SA holds when the run ends, the requests it served, and
 * the MADs lost on the way (its queue full, the fabric's drops of QP0
 * and QP1 datagrams).
 *
 * The text lists the groups with the most members first (then by MGID),
 * a few of them; --json lists every group in MGID order. IPoIB groups are
 * named by the IP group they map (RFC 4391 4).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/ipoib.h"
#include "ibmcast/ipoib_wire.h"
#include "ibmcast/sa.h"
#include "scenario/scn.h"
#include "scenario/sa_run.h"

#define TEXT_GROUPS 6

/* A group's members full, non-member and send-only: JoinState bits,
 * IBA 15.2.5.17: FullMember 1, NonMember 2, send-only 4 and 8. A member
 * counts once, under its strongest state. */
static void mix(const struct snap_group *g, uint64_t n[3])
{
	n[0] = n[1] = n[2] = 0;
	for (size_t k = 0; k < g->nm; k++)
		n[g->m[k].join_state & 0x1 ? 0 : g->m[k].join_state & 0x2 ? 1 :
		  2]++;
}

/* What an MGID stands for: "IPv4 239.1.1.1", "IPv4 broadcast", "IPv6
 * ff02::1", "IPv6 ff02::1:ff00:5 (solicited-node)", or "". */
static void label(const struct imc_gid *mgid, char *buf, size_t len)
{
	char ip[IMC_IP_ADDR_STRLEN];
	struct imc_ip_addr a = { 0 };
	uint16_t pkey = 0;

	buf[0] = '\0';
	imc_ipoib_mgid_pkey(mgid, &pkey);
	switch (imc_mgid_signature(mgid)) {
	case IMC_MGID_SIG_IPV4:
		if (imc_ipoib_mgid_is_bcast(mgid)) {
			snprintf(buf, len, "IPv4 broadcast");
			break;
		}
		/* The low 28 bits of the group (RFC 4391 4). */
		imc_ip_addr_v4(0xE0000000u |
			       (((uint32_t)mgid->raw[12] & 0xF) << 24 |
				(uint32_t)mgid->raw[13] << 16 |
				(uint32_t)mgid->raw[14] << 8 | mgid->raw[15]),
			       &a);
		break;
	case IMC_MGID_SIG_IPV6: {
		uint8_t g[16] = { 0xFF };

		/* The low 80 bits; the scope is the MGID's (Linux
		 * ipv6_ib_mc_map keeps no more). */
		g[1] = (uint8_t)imc_mgid_scope(mgid);
		memcpy(g + 6, mgid->raw + 6, 10);
		imc_ip_addr_v6(g, &a);
		break;
	}
	default:
		return;
	}
	if (!buf[0]) {
		imc_ip_addr_format(&a, ip);
		snprintf(buf, len, "IPv%u %s%s",
			 a.family == IMC_IPV4 ? 4 : 6, ip,
			 a.family == IMC_IPV6 && a.v6[11] == 1 &&
			 a.v6[12] == 0xFF && !a.v6[10] ?
			 " (solicited-node)" : "");
	}
	/* The default partition goes without saying (IBA 10.9.1.2). */
	if ((pkey & 0x7FFF) != 0x7FFF) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, ", P_Key 0x%04x", pkey);
	}
}

static int by_size(const void *a, const void *b)
{
	const struct snap_group *x = *(const struct snap_group *const *)a;
	const struct snap_group *y = *(const struct snap_group *const *)b;

	if (x->g.members != y->g.members)
		return x->g.members > y->g.members ? -1 : 1;
	return imc_gid_cmp(&x->g.rec.mgid, &y->g.rec.mgid);
}

static void group_json(struct imc_scn_report *rep, const struct snap_group *g)
{
	char gid[IMC_GID_STRLEN], what[96];
	uint64_t n[3];

	mix(g, n);
	imc_gid_format(&g->g.rec.mgid, gid);
	label(&g->g.rec.mgid, what, sizeof(what));
	imc_scn_report_object(rep, NULL);
	imc_scn_report_str(rep, "mgid", gid);
	imc_scn_report_u64(rep, "mlid", g->g.rec.mlid);
	imc_scn_report_u64(rep, "pkey", g->g.rec.pkey);
	imc_scn_report_u64(rep, "qkey", g->g.rec.qkey);
	imc_scn_report_u64(rep, "members", g->g.members);
	imc_scn_report_u64(rep, "full", n[0]);
	imc_scn_report_u64(rep, "nonmember", n[1]);
	imc_scn_report_u64(rep, "sendonly", n[2]);
	if (what[0])
		imc_scn_report_str(rep, "ip", what);
	imc_scn_report_end(rep);
}

static void groups_text(struct imc_scn_report *rep, const struct snap *gs)
{
	const struct snap_group **order;
	uint64_t rest = 0;
	size_t shown;

	if (!gs->ng)
		return;
	order = malloc(gs->ng * sizeof(*order));
	if (!order) {
		imc_scn_report_line(rep, "(no memory to order the groups)");
		return;
	}
	for (size_t i = 0; i < gs->ng; i++)
		order[i] = &gs->g[i];
	qsort(order, gs->ng, sizeof(*order), by_size);
	shown = gs->ng < TEXT_GROUPS ? gs->ng : TEXT_GROUPS;
	/* One more group line rather than a line saying so. */
	if (gs->ng == TEXT_GROUPS + 1)
		shown = gs->ng;
	for (size_t i = 0; i < shown; i++) {
		const struct snap_group *g = order[i];
		char gid[IMC_GID_STRLEN], what[96], m[64];
		uint64_t n[3];

		mix(g, n);
		imc_gid_format(&g->g.rec.mgid, gid);
		label(&g->g.rec.mgid, what, sizeof(what));
		snprintf(m, sizeof(m), "%" PRIu64 "/%" PRIu64 "/%" PRIu64,
			 n[0], n[1], n[2]);
		if (what[0])
			imc_scn_report_line(rep,
					    "%4" PRIu32 " %-11s 0x%04x %-26s %s",
					    g->g.members, m, g->g.rec.mlid,
					    gid, what);
		else
			imc_scn_report_line(rep, "%4" PRIu32 " %-11s 0x%04x %s",
					    g->g.members, m, g->g.rec.mlid,
					    gid);
	}
	for (size_t i = shown; i < gs->ng; i++)
		rest += order[i]->g.members;
	if (shown < gs->ng)
		imc_scn_report_line(rep,
			"%4" PRIu64 " in %zu more groups (--json lists every group)",
			rest, gs->ng - shown);
	free(order);
}

/* The requests served, by kind, in the order the report writes them. */
static const struct {
	const char *key;
	unsigned kind;
} req_keys[] = {
	{ "get", IMC_SA_REQ_GET }, { "set", IMC_SA_REQ_SET },
	{ "get_table", IMC_SA_REQ_GET_TABLE },
	{ "delete", IMC_SA_REQ_DELETE }, { "other", IMC_SA_REQ_OTHER },
};

static int sa_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	const struct imc_sa *sa = scn_svc_sa_engine(c);
	struct imc_fabric_totals tot;
	struct imc_sa_stats st;
	struct snap gs = { 0 };
	uint64_t full = 0, non = 0, so = 0, served = 0, ok, refused = 0, n[3];
	int rc;

	if (!sa)
		return 0;
	imc_sa_get_stats(sa, &st);
	imc_fabric_totals(imc_scn_fabric(c), &tot);
	rc = scn_sa_groups_collect(sa, &gs);
	if (rc) {
		scn_sa_snap_fini(&gs);
		return rc;
	}
	for (size_t i = 0; i < gs.ng; i++) {
		mix(&gs.g[i], n);
		full += n[0];
		non += n[1];
		so += n[2];
	}
	for (unsigned k = 0; k < IMC_SA_REQ_KINDS; k++)
		served += st.requests[k];
	ok = st.by_sa_status[0];
	for (unsigned k = 1; k < IMC_ARRAY_SIZE(st.by_sa_status); k++)
		refused += st.by_sa_status[k];
	for (unsigned k = 0; k < IMC_ARRAY_SIZE(st.by_mad_status); k++)
		refused += st.by_mad_status[k];

	imc_scn_report_u64(rep, "groups", gs.ng);
	imc_scn_report_u64(rep, "members", full + non + so);
	imc_scn_report_u64(rep, "full", full);
	imc_scn_report_u64(rep, "nonmember", non);
	imc_scn_report_u64(rep, "sendonly", so);
	imc_scn_report_list(rep, "list");
	for (size_t i = 0; i < gs.ng; i++)
		group_json(rep, &gs.g[i]);
	imc_scn_report_end(rep);
	imc_scn_report_object(rep, "requests");
	imc_scn_report_u64(rep, "served", served);
	for (unsigned k = 0; k < IMC_ARRAY_SIZE(req_keys); k++)
		imc_scn_report_u64(rep, req_keys[k].key,
				   st.requests[req_keys[k].kind]);
	imc_scn_report_u64(rep, "success", ok);
	imc_scn_report_u64(rep, "refused", refused);
	imc_scn_report_end(rep);
	imc_scn_report_object(rep, "mads_lost");
	imc_scn_report_u64(rep, "queue_full", st.drop_queue_full);
	imc_scn_report_u64(rep, "fabric", tot.mad_drops);
	imc_scn_report_end(rep);

	imc_scn_report_line(rep,
		"%zu groups, %" PRIu64 " members at the end: %" PRIu64 " full, %" PRIu64 " non-member, %" PRIu64 " send-only",
		gs.ng, full + non + so, full, non, so);
	if (gs.ng)
		imc_scn_report_line(rep, "%4s %-11s %-6s %s", "mbrs",
				    "full/non/so", "mlid", "mgid");
	groups_text(rep, &gs);
	imc_scn_report_line(rep,
		"%" PRIu64 " requests served (%" PRIu64 " Set, %" PRIu64 " Delete, %" PRIu64 " Get/GetTable): %" PRIu64 " success, %" PRIu64 " refused",
		served, st.requests[IMC_SA_REQ_SET],
		st.requests[IMC_SA_REQ_DELETE],
		st.requests[IMC_SA_REQ_GET] + st.requests[IMC_SA_REQ_GET_TABLE],
		ok, refused);
	imc_scn_report_line(rep,
		"MADs lost: %" PRIu64 " with the SA's queue full, %" PRIu64 " on the fabric",
		st.drop_queue_full, tot.mad_drops);
	scn_sa_snap_fini(&gs);
	return 0;
}

const struct imc_scn_section scn_section_sa = {
	.name = "sa", .rank = 100, .report = sa_report,
};
