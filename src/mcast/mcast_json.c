/* A tracker's group in JSON, as `ibmcast mcast show` and the scenarios'
 * mcast-show print it (ibmcast/mcast.h). */
#include "ibmcast/json.h"
#include "ibmcast/mcast.h"

int imc_mcast_group_info_json(struct imc_json *j,
			      const struct imc_mcast_group_info *g)
{
	const struct imc_mcmr *r = &g->rec;

	imc_json_object_begin_line(j);
	imc_json_kv_gid(j, "mgid", &r->mgid);
	imc_json_kv_u64(j, "mlid", r->mlid);
	imc_json_kv_u64(j, "join_state", g->join_state);
	imc_json_kv_u64(j, "wanted", g->wanted);
	imc_json_kv_u64(j, "members", g->members);
	imc_json_kv_bool(j, "is_joined", g->joined);
	imc_json_kv_u64(j, "qkey", r->qkey);
	imc_json_kv_u64(j, "pkey", r->pkey);
	imc_json_kv_u64(j, "mtu", r->mtu);
	imc_json_kv_u64(j, "rate", r->rate);
	imc_json_kv_u64(j, "sl", r->sl);
	imc_json_kv_u64(j, "tclass", r->tclass);
	imc_json_kv_u64(j, "flow_label", r->flow_label);
	imc_json_kv_u64(j, "hop_limit", r->hop_limit);
	imc_json_kv_u64(j, "scope", r->scope);
	return imc_json_object_end(j);
}
