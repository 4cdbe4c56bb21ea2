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

struct rgroup {
	struct imc_sa_group_info g;
	uint32_t full, non, sendonly;   /* members by their strongest bit */
};

struct rgroups {
	struct rgroup *v;
	size_t n;
};

/* JoinState bits, IBA 15.2.5.17: FullMember 1, NonMember 2, send-only 4
 * and 8. A member counts once, under its strongest state. */
static void count(struct rgroup *g, uint8_t join_state)
{
	if (join_state & 0x1)
		g->full++;
	else if (join_state & 0x2)
		g->non++;
	else
		g->sendonly++;
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
	const struct rgroup *x = *(const struct rgroup *const *)a;
	const struct rgroup *y = *(const struct rgroup *const *)b;

	if (x->g.members != y->g.members)
		return x->g.members > y->g.members ? -1 : 1;
	return imc_gid_cmp(&x->g.rec.mgid, &y->g.rec.mgid);
}

static void group_json(struct imc_scn_report *rep, const struct rgroup *g)
{
	char gid[IMC_GID_STRLEN], what[96];

	imc_gid_format(&g->g.rec.mgid, gid);
	label(&g->g.rec.mgid, what, sizeof(what));
	imc_scn_report_object(rep, NULL);
	imc_scn_report_str(rep, "mgid", gid);
	imc_scn_report_u64(rep, "mlid", g->g.rec.mlid);
	imc_scn_report_u64(rep, "pkey", g->g.rec.pkey);
	imc_scn_report_u64(rep, "qkey", g->g.rec.qkey);
	imc_scn_report_u64(rep, "members", g->g.members);
	imc_scn_report_u64(rep, "full", g->full);
	imc_scn_report_u64(rep, "nonmember", g->non);
	imc_scn_report_u64(rep, "sendonly", g->sendonly);
	if (what[0])
		imc_scn_report_str(rep, "ip", what);
	imc_scn_report_end(rep);
}

static void groups_text(struct imc_scn_report *rep, struct rgroups *gs)
{
	const struct rgroup **order;
	uint64_t rest = 0;
	size_t shown;

	if (!gs->n)
		return;
	order = malloc(gs->n * sizeof(*order));
	if (!order) {
		imc_scn_report_line(rep, "(no memory to order the groups)");
		return;
	}
	for (size_t i = 0; i < gs->n; i++)
		order[i] = &gs->v[i];
	qsort(order, gs->n, sizeof(*order), by_size);
	shown = gs->n < TEXT_GROUPS ? gs->n : TEXT_GROUPS;
	/* One more group line rather than a line saying so. */
	if (gs->n == TEXT_GROUPS + 1)
		shown = gs->n;
	for (size_t i = 0; i < shown; i++) {
		const struct rgroup *g = order[i];
		char gid[IMC_GID_STRLEN], what[96], mix[64];

		imc_gid_format(&g->g.rec.mgid, gid);
		label(&g->g.rec.mgid, what, sizeof(what));
		snprintf(mix, sizeof(mix), "%" PRIu32 "/%" PRIu32 "/%" PRIu32,
			 g->full, g->non, g->sendonly);
		if (what[0])
			imc_scn_report_line(rep,
					    "%4" PRIu32 " %-11s 0x%04x %-26s %s",
					    g->g.members, mix, g->g.rec.mlid,
					    gid, what);
		else
			imc_scn_report_line(rep, "%4" PRIu32 " %-11s 0x%04x %s",
					    g->g.members, mix, g->g.rec.mlid,
					    gid);
	}
	for (size_t i = shown; i < gs->n; i++)
		rest += order[i]->g.members;
	if (shown < gs->n)
		imc_scn_report_line(rep,
			"%4" PRIu64 " in %zu more groups (--json lists every group)",
			rest, gs->n - shown);
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
	struct rgroups gs = { 0 };
	struct snap snap = { 0 };
	uint64_t full = 0, non = 0, so = 0, served = 0, ok, refused = 0;
	int rc;

	if (!sa)
		return 0;
	imc_sa_get_stats(sa, &st);
	imc_fabric_totals(imc_scn_fabric(c), &tot);
	rc = scn_sa_groups_collect(sa, &snap);
	gs.v = rc ? NULL : calloc(snap.ng ? snap.ng : 1, sizeof(*gs.v));
	if (!rc && !gs.v)
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < snap.ng; i++) {
		struct rgroup *g = &gs.v[gs.n++];

		g->g = snap.g[i].g;
		for (size_t k = 0; k < snap.g[i].nm; k++)
			count(g, snap.g[i].m[k].join_state);
		full += g->full;
		non += g->non;
		so += g->sendonly;
	}
	scn_sa_snap_fini(&snap);
	if (rc) {
		free(gs.v);
		return rc;
	}
	for (unsigned k = 0; k < IMC_SA_REQ_KINDS; k++)
		served += st.requests[k];
	ok = st.by_sa_status[0];
	for (unsigned k = 1; k < IMC_ARRAY_SIZE(st.by_sa_status); k++)
		refused += st.by_sa_status[k];
	for (unsigned k = 0; k < IMC_ARRAY_SIZE(st.by_mad_status); k++)
		refused += st.by_mad_status[k];

	imc_scn_report_u64(rep, "groups", gs.n);
	imc_scn_report_u64(rep, "members", full + non + so);
	imc_scn_report_u64(rep, "full", full);
	imc_scn_report_u64(rep, "nonmember", non);
	imc_scn_report_u64(rep, "sendonly", so);
	imc_scn_report_list(rep, "list");
	for (size_t i = 0; i < gs.n; i++)
		group_json(rep, &gs.v[i]);
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
		gs.n, full + non + so, full, non, so);
	if (gs.n)
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
	free(gs.v);
	return 0;
}

const struct imc_scn_section scn_section_sa = {
	.name = "sa", .rank = 100, .report = sa_report,
};
