/* A tracker's groups and counters in JSON and text, as `ibmcast mcast
 * show` and the scenarios' mcast-show print them (ibmcast/mcast.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "ibmcast/gid.h"
#include "ibmcast/json.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcmr.h"

int imc_mcast_group_info_json(struct imc_json *j,
			      const struct imc_mcast_group_info *g)
{
	static const char *const head[] = { "mgid", "mlid", NULL };
	static const char *const tail[] = { "qkey", "pkey", "mtu", "rate",
					    "sl", "tclass", "flow_label",
					    "hop_limit", "scope", NULL };

	imc_json_object_begin_line(j);
	imc_mcmr_print_json_keys(j, &g->rec, head);
	imc_json_kv_u64(j, "join_state", g->join_state);
	imc_json_kv_u64(j, "wanted", g->wanted);
	imc_json_kv_u64(j, "members", g->members);
	imc_json_kv_bool(j, "is_joined", g->joined);
	imc_mcmr_print_json_keys(j, &g->rec, tail);
	return imc_json_object_end(j);
}

int imc_mcast_group_info_print_text(FILE *f,
				    const struct imc_mcast_group_info *g)
{
	char gid[IMC_GID_STRLEN];
	const struct imc_mcmr *r;

	if (!f || !g)
		return -EINVAL;
	r = &g->rec;
	imc_gid_format(&r->mgid, gid);
	fprintf(f, "group %s mlid=0x%04x join_state=0x%x wanted=0x%x "
		"members=%u %s qkey=0x%08" PRIx32 " pkey=0x%04x mtu=%u "
		"rate=%u sl=%u tclass=%u flow_label=0x%05" PRIx32
		" hop_limit=%u scope=%u\n", gid, r->mlid, g->join_state,
		g->wanted, g->members, g->joined ? "joined" : "pending", r->qkey,
		r->pkey, r->mtu, r->rate, r->sl, r->tclass, r->flow_label,
		r->hop_limit, r->scope);
	return ferror(f) ? -EIO : 0;
}

int imc_mcast_stats_print_json(struct imc_json *j,
			       const struct imc_mcast_stats *st)
{
	if (!j || !st)
		return -EINVAL;
	imc_json_object_begin_line(j);
	imc_json_kv_u64(j, "joins", st->joins);
	imc_json_kv_u64(j, "leaves", st->leaves);
	imc_json_kv_u64(j, "joins_local", st->joins_local);
	imc_json_kv_u64(j, "mads_sent", st->mads_sent);
	imc_json_kv_u64(j, "retries", st->retries);
	imc_json_kv_u64(j, "timeouts", st->timeouts);
	imc_json_kv_u64(j, "rejoins", st->rejoins);
	imc_json_kv_u64(j, "errors", st->errors);
	imc_json_kv_u64(j, "members", st->members);
	return imc_json_object_end(j);
}
