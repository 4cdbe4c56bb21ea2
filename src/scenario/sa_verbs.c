/* The SA multicast engine in scenarios (ibmcast/scenario_sa.h).
 *
 *   sa [rate=N] [queue=N] [order=program-first|answer-first]
 *      [mft-delay=TIME] [mlids=N] [partitions=P,...]
 *      [bcast-qkey=Q]                                 setting
 *   sa-join HOST MGID|0|@NAME [state=] [qkey= pkey= tclass= sl= flow=
 *      hop= scope= mtu=SEL:CODE rate=SEL:CODE life=SEL:CODE mlid=]
 *      [create] [as=NAME] [proxy=HOST] [send=N size= interval=]
 *      [retries=N timeout=TIME]                       Set(MCMemberRecord)
 *   sa-leave HOST MGID [state=] [proxy=HOST] [retries= timeout=]  Delete
 *   sa-get HOST MGID [retries= timeout=]              Get
 *   sa-mcast FROM MGID [count= size= interval= sl=]   traffic to a group
 *   sa-show                                           snapshot for --sa-show
 *   sa-restart                                        the SA starts again
 *
 * Subjects: sa-status HOST MGID, sa-groups, sa-members MGID, sa-mlid MGID,
 * sa-requests [HOST], sa-answers [HOST], sa-dropped, sa-queue-max,
 * sa-timeouts,
 * sa-errors.
 *
 * One run's SA state (struct sa_run, found by run_key):
 *  - the imc_sa_fabric, started by a timer at time 0, once the SM's first
 *    sweep has given the ports their LIDs (the setting runs before it);
 *  - client hosts, each with the port's QP1 as a GSI (gsi.h) that every
 *    MAD user of the port shares (these requests, the join trackers of
 *    mcast_verbs.c): a QP1 of the run's, or on the SA's port the SA's
 *    own, which hands the GSI what is not for the SA (other_mad);
 *  - requests through the library's SA client (sa_client.h), one client
 *    per host and timeout=/retries= pair; the TID's high word is
 *    IMC_SCN_MAGIC, which gives the answers to the host's clients;
 *  - per (host, MGID) entries in a hash table: the status of the last
 *    answer to that host as sender, and as member its JoinState and the
 *    scenario QP attached to the group;
 *  - multicast flows of sa-mcast lines and of joins with send=.
 *
 * A request (answers are matched by the TransactionID, IBA 13.4.3):
 *
 *   state   event                        next
 *   sent    answer                       done: status, attach/detach
 *   sent    timeout (timeout= and up to  sent again with the same TID
 *           a quarter of jitter), retries left
 *   sent    timeout, no retry left       done: status "timeout"
 *   done    another answer (of a retry)  counted as an answer only
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/gsi.h"
#include "ibmcast/json.h"
#include "ibmcast/mad.h"
#include "ibmcast/mcmr.h"
#include "ibmcast/packet.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_fabric.h"
#include "ibmcast/scenario_sa.h"
#include "scenario/desc.h"
#include "scenario/scn.h"
#include "util/bytes.h"
#include "util/text.h"
#include "scenario/sa_run.h"

/* The namespace of sa-join's as= names in the scenario's name index: an
 * MGID word is a GID, 0, or @NAME (the MGID the answer to the sa-join
 * line with as=NAME carried). */
static const char label_space;

static const struct {
	const char *name;
	uint8_t bit;
} js_names[] = {
	{ "full", UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER },
	{ "nonmember", UMAD_SA_MCM_JOIN_STATE_NON_MEMBER },
	{ "sendonly", UMAD_SA_MCM_JOIN_STATE_SEND_ONLY_NON_MEMBER },
	{ "sendonly-full", UMAD_SA_MCM_JOIN_STATE_SEND_ONLY_FULL_MEMBER },
};

/* NAME[+NAME...] or a number 0..15 (JoinState is 4 bits, IBA 15.2.5.17);
 * with min 1, at least one bit (an empty value names none). */
int scn_join_state_parse(struct imc_scn_parser *p, const struct scn_opt *o,
			 const char *v, void *field)
{
	uint8_t *out = field;
	uint64_t x;
	int rc;

	if (v[0] >= '0' && v[0] <= '9') {
		rc = imc_scn_parse_uint(p, "state", v, 15, &x);
		*out = (uint8_t)x;
		if (rc)
			return rc;
		v = "";
	} else {
		*out = 0;
	}
	while (*v) {
		size_t n = strcspn(v, "+");
		bool found = false;

		for (unsigned i = 0; i < IMC_ARRAY_SIZE(js_names); i++) {
			if (strlen(js_names[i].name) == n &&
			    !strncmp(v, js_names[i].name, n)) {
				*out |= js_names[i].bit;
				found = true;
			}
		}
		if (!found || (v[n] == '+' && !v[n + 1]))
			return imc_scn_parse_error(p,
				"state: expected full, nonmember, sendonly, sendonly-full (joined by +) or 0..15, got '%s'",
				v);
		v += n;
		if (*v == '+')
			v++;
	}
	if (*out < o->min)
		return imc_scn_parse_error(p,
			"state: at least one JoinState bit");
	return 0;
}

void scn_join_state_print(FILE *f, const struct scn_opt *o, const void *field)
{
	uint8_t st = *(const uint8_t *)field;
	bool first = true;

	(void)o;
	if (!st) {
		fputc('0', f);
		return;
	}
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(js_names); i++) {
		if (!(st & js_names[i].bit))
			continue;
		fprintf(f, "%s%s", first ? "" : "+", js_names[i].name);
		first = false;
	}
}

/* Selectors of IBA 15.2.5.16: 0 greater than, 1 less than, 2 exactly, 3
 * largest available (MTU, rate) or smallest (PacketLifeTime): "max" or
 * "min". */
static const char *const sel_words[] = { "gt", "lt", "eq", "max", "min" };

static int selcode_parse(struct imc_scn_parser *p, const char *what,
			 const char *v, uint8_t *sel, uint8_t *code)
{
	const char *colon = strchr(v, ':');
	uint64_t x;
	int rc;

	*sel = UMAD_SA_SELECTOR_EXACTLY;
	if (colon) {
		size_t n = (size_t)(colon - v);
		unsigned i = 0;

		while (i < IMC_ARRAY_SIZE(sel_words) &&
		       (strlen(sel_words[i]) != n || strncmp(v, sel_words[i], n)))
			i++;
		if (i == IMC_ARRAY_SIZE(sel_words))
			return imc_scn_parse_error(p,
				"%s: expected gt, lt, eq, max or min before ':', got '%s'",
				what, v);
		*sel = (uint8_t)(i < 4 ? i : UMAD_SA_SELECTOR_SMALLEST_AVAIL);
		v = colon + 1;
	}
	rc = imc_scn_parse_uint(p, what, v, 63, &x);
	*code = (uint8_t)x;
	return rc;
}

static void selcode_print(FILE *f, uint8_t sel, uint8_t code, bool life)
{
	bool min = life && sel == UMAD_SA_SELECTOR_SMALLEST_AVAIL;

	fprintf(f, "%s:%u", sel_words[min ? 4 : sel & 3], code);
}

/* ------------------------------------------------------------------ */
/* sa setting */

/* partitions=0x8001,0x8002: P_Keys whose IPoIB broadcast group the SA
 * creates, besides the default partition's, into part[] and npart (the
 * field is the whole sa_cfg). */
static int part_opt_parse(struct imc_scn_parser *p, const struct scn_opt *o,
			  const char *v, void *field)
{
	struct sa_cfg *a = field;
	char buf[16];

	while (*v) {
		size_t n = strcspn(v, ",");
		uint64_t x;
		int rc;

		if (n == 0 || n >= sizeof(buf))
			return imc_scn_parse_error(p,
				"partitions: expected P_Keys separated by ','");
		memcpy(buf, v, n);
		buf[n] = '\0';
		rc = imc_scn_parse_uint(p, "partitions", buf, 0xFFFF, &x);
		if (rc)
			return rc;
		if (!(x & 0x7FFF) || (x & 0x7FFF) == 0x7FFF)
			return imc_scn_parse_error(p,
				"partitions: 0x%04" PRIx64 " is not a partition of its own",
				x);
		if (a->npart == PARTITIONS_MAX)
			return imc_scn_parse_error(p,
				"partitions: at most %d", PARTITIONS_MAX);
		a->part[a->npart++] = (uint16_t)(x | 0x8000);
		v += n;
		if (*v == ',' && !*++v)
			return imc_scn_parse_error(p,
				"partitions: expected P_Keys separated by ','");
	}
	return a->npart ? 0 : imc_scn_parse_error(p,
		"partitions: expected P_Keys separated by ','");
}

/* rate=: "1000" or "1000/s" requests per second. */
static int rate_opt_parse(struct imc_scn_parser *p, const struct scn_opt *o,
			  const char *v, void *field)
{
	char num[32];
	size_t n = strcspn(v, "/");
	uint64_t x;
	int rc;

	if (n >= sizeof(num) || (v[n] && strcmp(v + n, "/s")))
		return imc_scn_parse_error(p,
			"rate: expected requests per second (1000 or 1000/s), got '%s'",
			v);
	memcpy(num, v, n);
	num[n] = '\0';
	rc = imc_scn_parse_uint(p, o->key, num, UINT32_MAX, &x);
	if (!rc)
		*(uint32_t *)field = (uint32_t)x;
	return rc;
}

static void rate_opt_print(FILE *f, const struct scn_opt *o,
			   const void *field)
{
	(void)o;
	fprintf(f, "%" PRIu32 "/s", *(const uint32_t *)field);
}

static void part_opt_print(FILE *f, const struct scn_opt *o,
			   const void *field)
{
	const struct sa_cfg *a = field;

	(void)o;
	for (unsigned i = 0; i < a->npart; i++)
		fprintf(f, "%s0x%04x", i ? "," : "", a->part[i]);
}

static const char *const order_names[] = { "program-first", "answer-first",
					   NULL };

/* By SA_* bit; order names by enum imc_sa_mft_order. */
static const struct scn_opt sa_opts[] = {
	{ .key = "rate", .type = SCN_OPT_CUSTOM,
	  .offset = offsetof(struct sa_cfg, rate),
	  .parse = rate_opt_parse, .print = rate_opt_print },
	SCN_O_UINT_H("queue", struct sa_cfg, queue, 1, 0, "at least 1"),
	SCN_O_ENUM("order", struct sa_cfg, order, order_names),
	SCN_O_TIME("mft-delay", struct sa_cfg, mft_delay),
	SCN_O_UINT_H("mlids", struct sa_cfg, mlids, 1,
		     IMC_SA_MLID_LAST - IMC_SA_MLID_FIRST + 1, "at least 1"),
	{ .key = "partitions", .type = SCN_OPT_CUSTOM, .offset = 0,
	  .parse = part_opt_parse, .print = part_opt_print },
	SCN_O_HEX("bcast-qkey", struct sa_cfg, bcast_qkey, 0),
};
static const struct scn_optset sa_set = SCN_OPTSET(sa_opts);

/* mft-delay= is a delay between the answer and the programming: it
 * exists only when the SA answers first. */
static int sa_done(struct imc_scn_parser *p, void *data)
{
	const struct sa_cfg *a = data;

	if ((a->mask & SA_DELAY) && a->order != IMC_SA_MFT_ANSWER_FIRST)
		return imc_scn_parse_error(p,
			"mft-delay= is the delay of order=answer-first");
	return 0;
}

static const struct scn_desc sa_desc = {
	.once = "the SA is set already", .opts = &sa_set,
	.keep = SCN_KEEP_GIVEN, .given_off = offsetof(struct sa_cfg, mask),
	.given_size = sizeof(unsigned), .size = sizeof(struct sa_cfg),
	.done = sa_done,
};

static int sa_parse(struct imc_scn_parser *p, unsigned argc,
		    const char *const *argv, void **data)
{
	return scn_desc_parse(p, &sa_desc, argc, argv, data);
}

static void sa_print(FILE *f, const struct imc_topo *t, const void *data)
{
	scn_desc_print(f, t, &sa_desc, data);
}

static void sa_free(void *data)
{
	struct sa_cfg *a = data;

	if (!a)
		return;
	if (a->show)
		a->show->cfg = NULL;
	free(a);
}

const struct imc_scn_verb scn_sa_verb = {
	.name = "sa", .kind = IMC_SCN_SETTING, .parse = sa_parse,
	.print = sa_print, .run = scn_sa_run, .free = sa_free,
};

/* ------------------------------------------------------------------ */
/* sa-join, sa-leave, sa-get */

/* A component option (SCN_O_MCMR): KEY=N sets a field of the
 * MCMemberRecord (the table of ibmcast/mcmr.h gives its bits); mtu=,
 * rate= and life= take a selector and a code (selcode_parse) into two
 * fields. */
int scn_mcmr_comp_parse(struct imc_scn_parser *p, const struct scn_opt *o,
			const char *v, void *field)
{
	const struct imc_mcmr_field *f = imc_mcmr_field_find(o->key, true);
	uint8_t *rec = field;
	uint64_t x = 0;
	int rc;

	if (f->sel_comp)
		return selcode_parse(p, f->key, v, rec + f->sel_offset,
				     rec + f->offset);
	rc = imc_scn_parse_uint(p, f->key, v, f->max, &x);
	if (!rc)
		(void)imc_mcmr_field_set(field, f, x);
	return rc;
}

void scn_mcmr_comp_print(FILE *f, const struct scn_opt *o, const void *field)
{
	const struct imc_mcmr_field *d = imc_mcmr_field_find(o->key, true);
	uint64_t v = imc_mcmr_field_get(field, d);
	const uint8_t *sel = (const uint8_t *)field + d->sel_offset;

	if (d->sel_comp)
		selcode_print(f, *sel, (uint8_t)v, d->comp == CM(LIFE_TIME));
	else if (d->hex)
		fprintf(f, "0x%0*" PRIx64, (int)d->hex, v);
	else
		fprintf(f, "%" PRIu64, v);
}

uint64_t scn_mcmr_comp_mask(const struct scn_optset *set, uint64_t given)
{
	uint64_t mask = 0;

	for (unsigned k = 0; k < set->n; k++) {
		const struct imc_mcmr_field *f;

		if (!(given & (1ull << k)) ||
		    set->opt[k].parse != scn_mcmr_comp_parse)
			continue;
		f = imc_mcmr_field_find(set->opt[k].key, true);
		mask |= f->comp | f->sel_comp;
	}
	return mask;
}

int scn_as_opt_parse(struct imc_scn_parser *p, const struct scn_opt *o,
		     const char *v, void *field)
{
	char **name = field;

	(void)o;
	if (!scn_label_ok(v))
		return imc_scn_parse_error(p,
			"as: expected a name of letters, digits, '_', '-' or '.' (at most %d), got '%s'",
			SCN_LABEL_MAX, v);
	free(*name);
	*name = strdup(v);
	return *name ? 0 : -ENOMEM;
}

void scn_as_opt_print(FILE *f, const struct scn_opt *o, const void *field)
{
	(void)o;
	fputs(*(char *const *)field, f);
}

#define REQ_O_RETRY \
	SCN_O_UINT("retries", struct req_arg, retries, 0, RETRIES_MAX), \
	SCN_O_TIME_H("timeout", struct req_arg, timeout, 1, "longer than 0")

/* By enum req_kind; each in the order its options print. */
static const struct scn_opt join_opts[] = {
	SCN_O_JOIN_STATE(struct req_arg, state, 0),
	SCN_O_HOST("proxy", struct req_arg, member),
	SCN_O_MCMR_COMPS(struct req_arg, rec),
	SCN_O_FLAG("create", struct req_arg, create),
	{ .key = "as", .type = SCN_OPT_CUSTOM,
	  .offset = offsetof(struct req_arg, label),
	  .parse = scn_as_opt_parse, .print = scn_as_opt_print },
	SCN_O_UINT("send", struct req_arg, send_count, 0, 0),
	SCN_O_UINT("size", struct req_arg, send_size, 0, SCN_FLOW_SIZE_MAX),
	SCN_O_TIME("interval", struct req_arg, send_interval),
	REQ_O_RETRY,
};
static const struct scn_opt leave_opts[] = {
	SCN_O_JOIN_STATE(struct req_arg, state, 0),
	SCN_O_HOST("proxy", struct req_arg, member), REQ_O_RETRY,
};
static const struct scn_opt get_opts[] = {
	REQ_O_RETRY,
};
static const struct scn_optset req_sets[] = {
	[REQ_JOIN] = SCN_OPTSET(join_opts),
	[REQ_LEAVE] = SCN_OPTSET(leave_opts),
	[REQ_GET] = SCN_OPTSET(get_opts),
};

/* A join that gives MLID and Q_Key of a literal MGID also defines the
 * group for the built-in mcast lines (the SA takes a requested MLID,
 * IBA 15.2.5.17; a join names the group's). */
static int join_define_group(struct imc_scn_parser *p, const struct req_arg *a)
{
	struct scn_group g;

	if (a->mgid.line || imc_gid_is_zero(&a->mgid.gid) ||
	    !(a->mask & CM(MLID)) || !(a->mask & CM(QKEY)) ||
	    !imc_lid_is_mcast(a->rec.mlid) ||
	    !imc_gid_is_multicast(&a->mgid.gid) ||
	    scn_group_find(p->s, a->rec.mlid))
		return 0;
	memset(&g, 0, sizeof(g));
	g.mlid = a->rec.mlid;
	g.mgid = a->mgid.gid;
	g.pkey = (a->mask & CM(PKEY)) ? a->rec.pkey : IMC_PKEY_DEFAULT;
	g.qkey = a->rec.qkey;
	g.line = p->line;
	return scn_group_add(p->s, &g);
}

/* After every word: what the options given say, and as= into the name
 * index. A flow's size= and interval= print with send=N (N > 0) only,
 * and retries= when above 0, so that print(parse(x)) is x's form. */
static int req_done(struct imc_scn_parser *p, void *data)
{
	struct req_arg *a = data;
	const struct scn_optset *set = &req_sets[a->kind];
	uint64_t flow = scn_opt_bit(set, "send") | scn_opt_bit(set, "size") |
			scn_opt_bit(set, "interval");
	int rc;

	a->given &= (uint32_t)~flow;
	if (a->send_count)
		a->given |= (uint32_t)flow;
	if (!a->retries)
		a->given &= (uint32_t)~scn_opt_bit(set, "retries");
	a->state_set = a->given & scn_opt_bit(set, "state");
	a->proxy = a->given & scn_opt_bit(set, "proxy");
	a->timeout_set = a->given & scn_opt_bit(set, "timeout");
	a->mask = scn_mcmr_comp_mask(set, a->given);
	if (!a->proxy)
		a->member = a->host;
	if (a->label) {
		rc = scn_name_add(p->s, &label_space, a->label, a);
		if (rc == -EEXIST)
			return imc_scn_parse_error(p,
				"as=%s: an earlier line has that name",
				a->label);
		if (rc)
			return rc;
	}
	return a->kind == REQ_JOIN ? join_define_group(p, a) : 0;
}

static void req_label_free(const struct scn_arg *arg, void *base)
{
	(void)arg;
	free(((struct req_arg *)base)->label);
}

static const char join_usage[] =
	"expected 'sa-join HOST MGID|0|@NAME [state=...] [qkey= pkey= tclass= sl= flow= hop= scope= mtu= rate= life= mlid=] [create] [as=NAME] [proxy=HOST] [send=N size= interval=] [retries= timeout=]'";
static const char leave_usage[] =
	"expected 'sa-leave HOST MGID|@NAME [state=...] [proxy=HOST] [retries= timeout=]'";
static const char get_usage[] =
	"expected 'sa-get HOST MGID|@NAME [retries= timeout=]'";

#define REQ_ARGS(u) { \
	SCN_A_HOST(struct req_arg, host), \
	SCN_A_MGID(struct req_arg, mgid, &label_space, "sa-join", \
		   SCN_MGID_ZERO), \
	SCN_A_UNKNOWN(u, req_label_free), \
}
static const struct scn_arg join_args[] = REQ_ARGS(join_usage);
static const struct scn_arg leave_args[] = REQ_ARGS(leave_usage);
static const struct scn_arg get_args[] = REQ_ARGS(get_usage);

#define REQ_DEFAULTS(k) { .kind = (k), .timeout = DEFAULT_TIMEOUT, \
	.send_size = 64, .send_interval = IMC_NSEC_PER_USEC }
static const struct req_arg req_defaults[] = {
	[REQ_JOIN] = REQ_DEFAULTS(REQ_JOIN),
	[REQ_LEAVE] = REQ_DEFAULTS(REQ_LEAVE),
	[REQ_GET] = REQ_DEFAULTS(REQ_GET),
};

#define REQ_DESC(k, tab, u) { \
	.usage = (u), .min = 2, SCN_ARGS(tab), \
	.opts = &req_sets[k], .keep = SCN_KEEP_GIVEN, \
	.given_off = offsetof(struct req_arg, given), \
	.given_size = sizeof(uint32_t), .size = sizeof(struct req_arg), \
	.defaults = &req_defaults[k], .done = req_done, \
}
static const struct scn_desc req_descs[] = {
	[REQ_JOIN] = REQ_DESC(REQ_JOIN, join_args, join_usage),
	[REQ_LEAVE] = REQ_DESC(REQ_LEAVE, leave_args, leave_usage),
	[REQ_GET] = REQ_DESC(REQ_GET, get_args, get_usage),
};

static int req_run(struct imc_scn_ctx *c, void *data)
{
	return scn_sa_req_start(c, data);
}

SCN_DESC_VERB(join, "sa-join", IMC_SCN_ACTION, req_descs[REQ_JOIN], req_run);
SCN_DESC_VERB(leave, "sa-leave", IMC_SCN_ACTION, req_descs[REQ_LEAVE],
	      req_run);
SCN_DESC_VERB(get, "sa-get", IMC_SCN_ACTION, req_descs[REQ_GET], req_run);

/* ------------------------------------------------------------------ */
/* Services (scn.h): @NAME of sa-mcast, GSIs, the engine, sends */

static int name_resolve(struct imc_scn_ctx *c, const struct scn_mgid *m,
			struct imc_gid *out)
{
	struct sa_run *r;
	int rc = scn_sa_run_get(c, &r);

	if (rc)
		return rc;
	if (!scn_sa_mgid_resolve(r, m, out))
		return imc_scn_fail(c, -ENOENT,
			"@%s has no MGID yet: its sa-join has not succeeded",
			m->label);
	return 0;
}

static int group_send(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		      const struct imc_gid *mgid, uint32_t count, uint32_t size,
		      imc_time_t interval, uint8_t sl)
{
	struct imc_sa_group_info gi;
	char buf[IMC_GID_STRLEN];
	struct sa_run *r;
	int rc = scn_sa_run_get(c, &r);

	if (!rc && r->external)
		/* OpenSM's SA: asked as a host asks it (sa_run.c). */
		return scn_sa_ext_send(r, node, port, mgid, count, size,
				       interval, sl, scn_flow_id(c));
	rc = rc ? rc : scn_sa_engine_get(c, &r);
	if (rc)
		return rc;
	/* The sender learns MLID, Q_Key and P_Key from the SA's record. */
	if (imc_sa_group_get(imc_sa_fabric_sa(r->sf), mgid, &gi)) {
		imc_gid_format(mgid, buf);
		return imc_scn_fail(c, -ENOENT, "the SA has no group %s", buf);
	}
	rc = scn_sa_flow_start(r, node, port, &gi.rec, count, size, interval, sl,
			scn_flow_id(c));
	if (rc == -EINVAL)
		return imc_scn_fail(c, rc, "%s has no P_Key 0x%04x in its table",
				    imc_scn_topo(c)->node[node].name,
				    gi.rec.pkey);
	return rc;
}

/* One set of functions for the kinds the sa plugin provides. */
static const struct scn_svc_ops sa_services = {
	.gsi = scn_sa_gsi, .engine = scn_sa_engine, .send = group_send,
	.space = &label_space, .what = "sa-join", .mgid_flags = SCN_MGID_ZERO,
	.resolve = name_resolve,
};

/* ------------------------------------------------------------------ */
/* sa-show */

static int show_done(struct imc_scn_parser *p, void *data)
{
	((struct show_arg *)data)->line = p->line;
	return 0;
}

static const struct scn_desc show_desc = {
	.usage = "expected 'sa-show' alone", .size = sizeof(struct show_arg),
	.done = show_done,
};
static const struct scn_desc restart_desc = {
	.usage = "expected 'sa-restart' alone",
};

static int show_run(struct imc_scn_ctx *c, void *data)
{
	const struct show_arg *a = data;
	struct sa_run *r;
	int rc = scn_sa_engine_get(c, &r);

	if (rc)
		return rc;
	return scn_sa_snapshot(r, a->line);
}

SCN_DESC_VERB(show, "sa-show", IMC_SCN_ACTION, show_desc, show_run);

/* ------------------------------------------------------------------ */
/* sa-restart: the SA (an SM's) stops and starts again, empty, on the
 * SM's port as it is now, as when an SM restarts or another takes over
 * (after sm move). Clients hear of it only through port events: a new
 * SM reregisters every port (IBA 14.4.11), which is `reregister all`. */

static int restart_run(struct imc_scn_ctx *c, void *data)
{
	struct sa_run *r;
	uint32_t node;
	unsigned port;
	int rc = scn_sa_engine_get(c, &r);

	(void)data;
	if (rc)
		return rc;
	imc_fabric_sm_port(r->f, &node, &port);
	rc = scn_sa_stop(r, node == r->sa_node && port == r->sa_port);
	if (!rc)
		rc = scn_sa_start(r);
	if (rc)
		return imc_scn_fail(c, rc, "the SA cannot start again: %s",
				    strerror(-rc));
	return 0;
}

SCN_DESC_VERB(restart, "sa-restart", IMC_SCN_ACTION, restart_desc,
	      restart_run);

/* ------------------------------------------------------------------ */
/* Subjects */

struct sa_counter;

struct subj_arg {
	struct scn_port_arg host;     /* node IMC_TOPO_NONE: none given */
	struct scn_mgid mgid;
	const struct sa_counter *k;
};

static const struct subj_arg no_host = { .host.node = IMC_TOPO_NONE };

static const struct scn_arg host_args[] = {
	{ .kind = SCN_ARG_HOST, .flags = SCN_ARG_OPTIONAL,
	  .offset = offsetof(struct subj_arg, host) },
};
static const struct scn_arg mgid_args[] = {
	SCN_A_MGID(struct subj_arg, mgid, &label_space, "sa-join",
		   SCN_MGID_ZERO),
};
static const struct scn_arg host_mgid_args[] = {
	SCN_A_HOST(struct subj_arg, host),
	SCN_A_MGID(struct subj_arg, mgid, &label_space, "sa-join",
		   SCN_MGID_ZERO),
};

#define SUBJ_DESC(tab, u, lo, hi) \
	.usage = (u), .min = (lo), .max = (hi), SCN_ARGS(tab), \
	.keep = SCN_KEEP_ARG, .arg_off = offsetof(struct subj_arg, k), \
	.size = sizeof(struct subj_arg), .defaults = &no_host

/* [HOST]: a counter of the host or in total */
static const struct scn_desc host_desc = {
	SUBJ_DESC(host_args, "expected at most one host", 0, 1),
};
static const struct scn_desc status_desc = {
	SUBJ_DESC(host_mgid_args, "expected HOST and an MGID, 0 or @NAME", 2, 2),
};
static const struct scn_desc mgid_desc = {
	SUBJ_DESC(mgid_args, "expected an MGID or @NAME", 1, 1),
};
static const struct scn_desc none_desc = {
	.usage = "expected no argument", .keep = SCN_KEEP_ARG,
	.arg_off = offsetof(struct subj_arg, k), .size = sizeof(struct subj_arg),
	.defaults = &no_host,
};
SCN_DESC_FUNCS(host, host_desc)
SCN_DESC_FUNCS(status, status_desc)
SCN_DESC_FUNCS(mgid_subj, mgid_desc)
SCN_DESC_FUNCS(none, none_desc)

static const struct scn_named status_names[] = {
	{ "success", 0 },
	{ "busy", UMAD_STATUS_BUSY },
	{ "redirect", UMAD_STATUS_REDIRECT },
	{ "bad-version", UMAD_STATUS_BAD_VERSION },
	{ "method-unsupported", UMAD_STATUS_METHOD_NOT_SUPPORTED },
	{ "method-attr-unsupported", UMAD_STATUS_ATTR_NOT_SUPPORTED },
	{ "invalid-attr-value", UMAD_STATUS_INVALID_ATTR_VALUE },
	{ "no-resources", UMAD_SA_STATUS_NO_RESOURCES << 8 },
	{ "req-invalid", UMAD_SA_STATUS_REQ_INVALID << 8 },
	{ "no-records", UMAD_SA_STATUS_NO_RECORDS << 8 },
	{ "too-many-records", UMAD_SA_STATUS_TOO_MANY_RECORDS << 8 },
	{ "invalid-gid", UMAD_SA_STATUS_INVALID_GID << 8 },
	{ "insuf-comps", UMAD_SA_STATUS_INSUF_COMPS << 8 },
	{ "req-denied", UMAD_SA_STATUS_REQ_DENIED << 8 },
	{ "pri-suggested", UMAD_SA_STATUS_PRI_SUGGESTED << 8 },
	{ "none", ST_NONE },
	{ "pending", ST_PENDING },
	{ "timeout", ST_TIMEOUT },
};

/* The MAD statuses: status_names but its last three, the run's own. */
#define MAD_STATUSES (IMC_ARRAY_SIZE(status_names) - 3)

int scn_mad_status_parse(const char *word, uint64_t *status)
{
	return scn_named_parse(status_names, MAD_STATUSES, word, status);
}

const char *scn_mad_status_name(uint64_t status)
{
	return scn_named_str(status_names, MAD_STATUSES, status);
}

SCN_NAMED_FUNCS(status, status_names, true)

static int status_observe(struct imc_scn_ctx *c, const void *data,
			  uint64_t *v)
{
	const struct subj_arg *a = data;
	const struct sa_host *h;
	const struct sa_ent *e = NULL;
	struct sa_run *r;
	struct imc_gid mgid;
	int rc = scn_sa_run_get(c, &r);

	if (rc)
		return rc;
	*v = ST_NONE;
	h = scn_sa_host_find(r, a->host.node, a->host.port);
	if (h && scn_sa_mgid_resolve(r, &a->mgid, &mgid))
		e = scn_sa_ent_find(r, h->idx, &mgid);
	if (e)
		*v = e->status;
	return 0;
}

static int group_info(struct imc_scn_ctx *c, const struct subj_arg *a,
		      struct imc_sa_group_info *gi, bool *found)
{
	struct sa_run *r;
	struct imc_gid mgid;
	int rc = scn_sa_engine_get(c, &r);

	if (rc)
		return rc;
	*found = scn_sa_mgid_resolve(r, &a->mgid, &mgid) &&
		 !imc_sa_group_get(imc_sa_fabric_sa(r->sf), &mgid, gi);
	return 0;
}

static int members_observe(struct imc_scn_ctx *c, const void *data,
			   uint64_t *v)
{
	struct imc_sa_group_info gi;
	bool found;
	int rc = group_info(c, data, &gi, &found);

	*v = !rc && found ? gi.members : 0;
	return rc;
}

static int mlid_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	struct imc_sa_group_info gi;
	bool found;
	int rc = group_info(c, data, &gi, &found);

	*v = !rc && found ? gi.rec.mlid : 0;
	return rc;
}

/* Counter subjects: a field of the SA's statistics or of the run's
 * counters, optionally per host (the subject's .arg; see subjects.c). */
enum sa_src { SA_STATS, SA_RUN };

struct sa_counter {
	enum sa_src src;
	size_t off, size;   /* in struct imc_sa_stats or struct sa_run */
	long host_off;      /* in struct sa_host for "SUBJECT HOST", or -1:
			     * the subject takes no argument */
};

static int sa_counter_observe(struct imc_scn_ctx *c, const void *data,
			      uint64_t *v)
{
	const struct subj_arg *a = data;
	const struct sa_counter *k = a->k;
	const struct sa_host *h;
	struct imc_sa_stats st;
	struct sa_run *r;
	int rc = scn_sa_run_get(c, &r);

	*v = 0;
	if (rc)
		return rc;
	if (a->host.node != IMC_TOPO_NONE) {
		h = scn_sa_host_find(r, a->host.node, a->host.port);
		if (h)
			*v = scn_field_at(h, (size_t)k->host_off,
					  sizeof(uint64_t));
	} else if (k->src == SA_STATS) {
		if (r->external)
			return scn_sa_engine_get(c, &r);
		imc_sa_get_stats(imc_sa_fabric_sa(r->sf), &st);
		*v = scn_field_at(&st, k->off, k->size);
	} else {
		*v = scn_field_at(r, k->off, k->size);
	}
	return 0;
}

/* The most requests the SA's queue held, over every SA of the run (a
 * restart starts a new one). */
static int queue_max_observe(struct imc_scn_ctx *c, const void *data,
			     uint64_t *v)
{
	struct imc_sa_stats st;
	struct sa_run *r;
	int rc = scn_sa_run_get(c, &r);

	(void)data;
	*v = 0;
	if (!rc && r->external)
		rc = scn_sa_engine_get(c, &r);
	if (rc)
		return rc;
	imc_sa_get_stats(imc_sa_fabric_sa(r->sf), &st);
	*v = st.queue_max_seen > r->queue_max ? st.queue_max_seen :
						r->queue_max;
	return 0;
}

#define SA_COUNTER(src, type, f, host) \
	.observe = sa_counter_observe, \
	.arg = &(const struct sa_counter){ src, SCN_FIELD(type, f), host }
#define NO_HOST .parse = none_parse, .print = none_print, .free = none_free
#define BY_HOST .parse = host_parse, .print = host_print, .free = host_free

static const struct imc_scn_subject subjects[] = {
	SCN_NAMED_SUBJECT("sa-status", status, status_observe, status),
	SCN_DESC_SUBJECT("sa-members", mgid_subj, members_observe),
	{ .name = "sa-mlid", .parse = mgid_subj_parse, .print = mgid_subj_print,
	  .observe = mlid_observe, .value_format = scn_lid_format,
	  .free = mgid_subj_free },
	SCN_DESC_SUBJECT("sa-queue-max", none, queue_max_observe),
	{ .name = "sa-groups", NO_HOST,
	  SA_COUNTER(SA_STATS, struct imc_sa_stats, groups, -1) },
	{ .name = "sa-requests", BY_HOST,
	  SA_COUNTER(SA_RUN, struct sa_run, requests,
		     (long)offsetof(struct sa_host, requests)) },
	{ .name = "sa-answers", BY_HOST,
	  SA_COUNTER(SA_RUN, struct sa_run, answers,
		     (long)offsetof(struct sa_host, answers)) },
	{ .name = "sa-dropped", NO_HOST,
	  SA_COUNTER(SA_STATS, struct imc_sa_stats, drop_queue_full, -1) },
	{ .name = "sa-timeouts", NO_HOST,
	  SA_COUNTER(SA_RUN, struct sa_run, timeouts, -1) },
	{ .name = "sa-errors", NO_HOST,
	  SA_COUNTER(SA_RUN, struct sa_run, errors, -1) },
};

static const struct scn_parts sa_parts = {
	SCN_LIST(verbs, const struct imc_scn_verb *, &scn_sa_verb, &join_verb,
		 &leave_verb, &get_verb, &scn_verb_sa_mcast, &show_verb,
		 &restart_verb),
	SCN_PARTS(subjects, subjects),
	SCN_LIST(sections, const struct imc_scn_section *, &scn_section_sa),
	SCN_LIST(services, struct scn_svc_entry,
		 { SCN_SVC_PORT_GSI, &sa_services },
		 { SCN_SVC_SA_ENGINE, &sa_services },
		 { SCN_SVC_NAME_SA, &sa_services }),
	.plugin = &(const struct imc_scn_plugin){ .name = "sa", .order = 100,
		.links_changed = scn_sa_links_changed },
};

int imc_scn_lang_add_sa(struct imc_scn_lang *l)
{
	return scn_lang_add_parts(l, &sa_parts);
}
