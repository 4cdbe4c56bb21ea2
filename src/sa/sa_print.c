/* The SA's groups and members (ibmcast/sa.h) printed: as saquery prints
 * MCMemberRecords (-g: one dump per group, -m: one per member, field
 * names padded with dots to 24 columns) and as JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/json.h"
#include "ibmcast/mcmr.h"
#include "ibmcast/sa.h"

#define DOTS 24

static void field(FILE *f, const char *name)
{
	size_t n = strlen(name);

	fprintf(f, "\t\t%s", name);
	for (; n < DOTS; n++)
		fputc('.', f);
}

static void field_gid(FILE *f, const char *name, const struct imc_gid *g)
{
	char s[IMC_GID_STRLEN];

	imc_gid_format(g, s);
	field(f, name);
	fprintf(f, "%s\n", s);
}

static void field_hex(FILE *f, const char *name, uint64_t v, int width)
{
	field(f, name);
	fprintf(f, "0x%0*" PRIX64 "\n", width, v);
}

/* JoinState bits, IBA 15.2.5.17: FullMember 1, NonMember 2,
 * SendOnlyNonMember 4, SendOnlyFullMember 8. */
static void js_text(FILE *f, uint8_t js)
{
	static const char *const names[] = {
		"Full", "NonMember", "SendOnlyNonMember",
		"SendOnlyFullMember",
	};
	bool first = true;

	fprintf(f, "0x%X", js);
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(js >> i & 1))
			continue;
		fprintf(f, "%s%s", first ? " (" : "+", names[i]);
		first = false;
	}
	if (!first)
		fputc(')', f);
}

int imc_sa_group_print_text(FILE *f, const struct imc_sa_group_info *g)
{
	const struct imc_mcmr *r;

	if (!f || !g)
		return -EINVAL;
	r = &g->rec;
	fprintf(f, "MCMemberRecord group dump:\n");
	field_gid(f, "MGID", &r->mgid);
	field_hex(f, "Mlid", r->mlid, 0);
	field_hex(f, "Qkey", r->qkey, 8);
	field_hex(f, "Mtu", r->mtu, 0);
	field_hex(f, "Rate", r->rate, 0);
	field_hex(f, "pkey", r->pkey, 0);
	field_hex(f, "SL", r->sl, 0);
	field_hex(f, "TClass", r->tclass, 0);
	field_hex(f, "FlowLabel", r->flow_label, 0);
	field_hex(f, "Scope", r->scope, 0);
	field(f, "Members");
	fprintf(f, "%" PRIu32 " (%" PRIu32 " full)%s\n", g->members,
		g->full_members, g->persistent ? ", persistent" : "");
	return ferror(f) ? -EIO : 0;
}

int imc_sa_member_print_text(FILE *f, const struct imc_sa_group_info *g,
			     const struct imc_sa_member_info *m,
			     const char *node)
{
	if (!f || !g || !m)
		return -EINVAL;
	fprintf(f, "MCMemberRecord member dump:\n");
	field_gid(f, "MGID", &g->rec.mgid);
	field_hex(f, "Mlid", g->rec.mlid, 0);
	field_gid(f, "PortGid", &m->port_gid);
	field(f, "JoinState");
	js_text(f, m->join_state);
	fputc('\n', f);
	field_hex(f, "ProxyJoin", m->proxy, 0);
	field(f, "NodeDescription");
	fprintf(f, "%s\n", node ? node : "<unknown>");
	return ferror(f) ? -EIO : 0;
}

int imc_sa_group_print_json(struct imc_json *j,
			    const struct imc_sa_group_info *g,
			    const struct imc_sa_member_info *m,
			    const char *const *nodes, size_t nm)
{
	static const char *const rec[] = { "mgid", "mlid", "qkey", "mtu",
					   "rate", "pkey", "sl", "tclass",
					   "flow_label", "scope", NULL };

	if (!j || !g || (nm && !m))
		return -EINVAL;
	imc_json_object_begin_line(j);
	imc_mcmr_print_json_keys(j, &g->rec, rec);
	imc_json_kv_bool(j, "persistent", g->persistent);
	imc_json_kv_u64(j, "full_members", g->full_members);
	imc_json_key(j, "members");
	imc_json_array_begin_lines(j);
	for (size_t k = 0; k < nm; k++) {
		imc_json_object_begin_line(j);
		imc_json_kv_gid(j, "port_gid", &m[k].port_gid);
		imc_json_kv_u64(j, "lid", m[k].lid);
		imc_json_kv_u64(j, "join_state", m[k].join_state);
		imc_json_kv_bool(j, "proxy_join", m[k].proxy);
		if (nodes) {
			imc_json_key(j, "node");
			if (nodes[k])
				imc_json_string(j, nodes[k]);
			else
				imc_json_null(j);
		}
		imc_json_object_end(j);
	}
	imc_json_array_end(j);
	return imc_json_object_end(j);
}

/* The counters a snapshot of the SA shows, by name and place. */
static const struct {
	const char *name;
	size_t off, size;
} stats_fields[] = {
#define F(x) { #x, offsetof(struct imc_sa_stats, x), \
	       sizeof(((struct imc_sa_stats *)0)->x) }
	F(groups), F(members), F(mlids_in_use), F(mlids_total),
	F(received), F(drop_queue_full), F(groups_created),
	F(groups_deleted), F(mft_adds), F(mft_removes),
#undef F
};

int imc_sa_stats_print_json(struct imc_json *j, const struct imc_sa_stats *st)
{
	if (!j || !st)
		return -EINVAL;
	imc_json_object_begin_line(j);
	for (size_t i = 0; i < sizeof(stats_fields) / sizeof(stats_fields[0]);
	     i++) {
		const uint8_t *p = (const uint8_t *)st + stats_fields[i].off;
		uint64_t v64;
		uint32_t v32;

		if (stats_fields[i].size == sizeof(v64)) {
			memcpy(&v64, p, sizeof(v64));
		} else {
			memcpy(&v32, p, sizeof(v32));
			v64 = v32;
		}
		imc_json_kv_u64(j, stats_fields[i].name, v64);
	}
	return imc_json_object_end(j);
}
