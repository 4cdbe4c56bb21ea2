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
 *  - requests by TID: the high word is IMC_SCN_MAGIC, the low word the
 *    request's number + 1, so an answer finds its request in O(1);
 *  - per (host, MGID) entries in a hash table: the status of the last
 *    answer to that host as sender, and as member its JoinState and the
 *    scenario QP attached to the group;
 *  - multicast flows of sa-mcast lines and of joins with send=.
 *
 * A request (answers are matched by the TransactionID, IBA 13.4.3):
 *
 *   state   event                        next
 *   sent    answer                       done: status, attach/detach
 *   sent    timeout, retries left        sent again with the same TID
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
#include "scenario/scn.h"
#include "scenario/scn_sa.h"
#include "wire/bytes.h"
#include "util/text.h"

#define CM(x) UMAD_SA_MCM_COMP_MASK_##x
/* o15-0.2.3: the components a create must give. */
#define CREATE_COMPS (CM(QKEY) | CM(TCLASS) | CM(PKEY) | CM(FLOW_LABEL) | \
		      CM(SL))
#define JS_FULL UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER
#define JS_NON UMAD_SA_MCM_JOIN_STATE_NON_MEMBER
/* Member states that receive: FullMember and NonMember (IBA 15.2.5.17);
 * send-only members never attach their QP. */
#define JS_RECEIVES (JS_FULL | JS_NON)

#define DEFAULT_TIMEOUT (100 * IMC_NSEC_PER_MSEC)
#define LABEL_MAX 32
#define RETRIES_MAX 1000
#define DOTS 24   /* saquery pads field names with dots to 24 columns */

/* sa-status values past the 16-bit MAD status. */
#define ST_NONE 0x10000u
#define ST_PENDING 0x10001u
#define ST_TIMEOUT 0x10002u

static const char run_key;   /* imc_scn_data key of struct sa_run */

/* ------------------------------------------------------------------ */
/* Parse data */

enum {
	SA_RATE = 1u << 0,
	SA_QUEUE = 1u << 1,
	SA_ORDER = 1u << 2,
	SA_DELAY = 1u << 3,
	SA_MLIDS = 1u << 4,
	SA_PARTITIONS = 1u << 5,
	SA_BCAST_QKEY = 1u << 6,
};

/* IPoIB partitions of the SA beyond the default one (partitions.conf
 * "ipoib" lines): each gets a broadcast group. */
#define PARTITIONS_MAX 16

struct sa_cfg {
	unsigned mask;
	uint32_t rate;
	uint32_t queue;
	enum imc_sa_mft_order order;
	imc_time_t mft_delay;
	uint32_t mlids;
	unsigned npart;
	uint16_t part[PARTITIONS_MAX];
	uint32_t bcast_qkey;
	struct imc_scn_sa_show *show;
};

enum req_kind { REQ_JOIN, REQ_LEAVE, REQ_GET };

struct req_arg;

/* An MGID word: a GID, 0, or @NAME (the MGID the answer to the sa-join
 * line with as=NAME carried). */
struct mgid_arg {
	const struct req_arg *label;
	struct imc_gid gid;
};

struct req_arg {
	enum req_kind kind;
	struct scn_port_arg host;       /* sends the request */
	struct scn_port_arg member;     /* its PortGID: host, or proxy= */
	bool proxy;
	struct mgid_arg mgid;
	bool state_set;
	uint8_t state;
	uint64_t mask;              /* components the options give */
	struct imc_mcmr rec;        /* their values */
	bool create;
	char *label;                /* as=NAME; &label keys its run slot */
	uint32_t send_count;
	uint32_t send_size;
	imc_time_t send_interval;
	uint32_t retries;
	bool timeout_set;
	imc_time_t timeout;
};

struct mcast_arg {
	struct scn_port_arg src;
	struct mgid_arg mgid;
	uint32_t count;
	uint32_t size;
	imc_time_t interval;
	uint8_t sl;
};

struct show_arg {
	unsigned line;
};

/* ------------------------------------------------------------------ */
/* Snapshots for --sa-show */

struct snap_member {
	struct imc_sa_member_info m;
	char *name;                 /* "H-000002:1"; NULL: no such port */
};

struct snap_group {
	struct imc_sa_group_info g;
	struct snap_member *m;
	size_t nm, cap;
};

struct snap {
	imc_time_t at;
	unsigned line;              /* the sa-show line; 0: end of run */
	struct imc_sa_stats st;
	struct snap_group *g;
	size_t ng, cap;
	char *dot;                  /* the tree asked for, as DOT; or NULL */
};

struct imc_scn_sa_show {
	struct sa_cfg *cfg;         /* NULL once the scenario is gone */
	bool want_tree;             /* record tree_mgid's MFTs as DOT */
	struct imc_gid tree_mgid;
	struct snap *s;
	unsigned n, cap;
};

/* ------------------------------------------------------------------ */
/* Run state */

struct sa_run;

struct sa_host {
	struct sa_run *r;
	uint32_t idx;               /* slot: pbase[node] + port */
	uint32_t node;
	unsigned port;
	struct imc_gsi *gsi;        /* QP1, shared by the port's MAD users */
	struct imc_qp *qp1;         /* the run's QP1; NULL on the SA's port */
	struct imc_gsi_agent agent; /* takes the answers to these requests */
	uint64_t requests, answers;
};

struct sa_ent {
	bool used;
	uint32_t host;
	struct imc_gid mgid;
	uint32_t status;            /* last answer to host as sender */
	uint8_t join_state;         /* as member, from the last answer */
	uint16_t mlid;              /* of the attachment */
	struct imc_qp *qp;          /* attached scenario QP, or NULL */
};

struct req {
	struct imc_timer timer;
	struct sa_run *r;
	const struct req_arg *a;
	uint32_t num;               /* TID low word - 1 */
	uint32_t sender, member;    /* host slots */
	struct imc_gid mgid;        /* as sent */
	unsigned tries;
	uint32_t flow;              /* scenario flow number of the line */
	uint8_t mad[IMC_MAD_SIZE];
};

struct sflow {
	struct imc_timer timer;
	struct sa_run *r;
	struct sflow *next;
	struct imc_qp *qp;
	struct imc_ah ah;
	uint32_t qkey;
	uint32_t node;
	unsigned port;
	uint32_t count, seq, size;
	imc_time_t interval;
	uint8_t *buf;
};

struct label_slot {
	struct imc_gid mgid;
};

struct sa_run {
	struct imc_scn_ctx *c;
	struct sa_cfg *cfg;
	struct imc_fabric *f;
	struct imc_loop *loop;
	const struct imc_topo *t;
	struct imc_sa_fabric *sf;
	/* The fabric's SM is external (an `opensm` line): the SA is the
	 * external SM's, reached at each sender port's PortInfo:MasterSMLID
	 * (IBA 14.2.5.6), and there is no engine here to start or read. */
	bool external;
	int start_err;
	struct imc_timer start;
	uint32_t sa_node;
	unsigned sa_port;

	uint32_t *pbase;            /* first host slot of each node */
	struct sa_host **host;      /* by slot, NULL until used */

	struct sa_ent *ent;         /* open addressing, power of two */
	size_t nent, entcap;

	struct req **req;           /* by number, NULL once done */
	size_t nreq, reqcap;

	struct sflow *flows;

	uint64_t requests, answers, timeouts;
	uint64_t errors;            /* sends refused, attaches failed */
	uint32_t queue_max;         /* most queued, of the SAs stopped */
};

/* ------------------------------------------------------------------ */
/* Small helpers */

static bool label_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++) {
		char ch = s[n];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
		      ch == '.'))
			return false;
	}
	return n > 0 && n <= LABEL_MAX;
}

/* The namespace of sa-join's as= names in the scenario's name index. */
static const char label_space;

/* The sa-join of an earlier line that names its MGID NAME, or NULL. */
static const struct req_arg *label_lookup(const struct imc_scenario *s,
					  const char *name)
{
	return scn_name_find(s, &label_space, name);
}

static int label_find(struct imc_scn_parser *p, const char *name,
		      const struct req_arg **out)
{
	*out = label_lookup(p->s, name);
	if (!*out)
		return imc_scn_parse_error(p,
			"@%s: no sa-join ... as=%s on an earlier line",
			name, name);
	return 0;
}

static int mgid_parse(struct imc_scn_parser *p, const char *word,
		      struct mgid_arg *m)
{
	memset(m, 0, sizeof(*m));
	if (word[0] == '@')
		return label_find(p, word + 1, &m->label);
	if (!strcmp(word, "0"))
		return 0;
	if (imc_gid_parse(word, &m->gid))
		return imc_scn_parse_error(p,
			"MGID: expected a GID (ff12:...), 0 or @NAME, got '%s'",
			word);
	return 0;
}

static void mgid_print(FILE *f, const struct mgid_arg *m)
{
	char buf[IMC_GID_STRLEN];

	if (m->label) {
		fprintf(f, " @%s", m->label->label);
	} else if (imc_gid_is_zero(&m->gid)) {
		fputs(" 0", f);
	} else {
		imc_gid_format(&m->gid, buf);
		fprintf(f, " %s", buf);
	}
}

static const struct {
	const char *name;
	uint8_t bit;
} js_names[] = {
	{ "full", UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER },
	{ "nonmember", UMAD_SA_MCM_JOIN_STATE_NON_MEMBER },
	{ "sendonly", UMAD_SA_MCM_JOIN_STATE_SEND_ONLY_NON_MEMBER },
	{ "sendonly-full", UMAD_SA_MCM_JOIN_STATE_SEND_ONLY_FULL_MEMBER },
};

/* NAME[+NAME...] or a number 0..15 (JoinState is 4 bits, IBA 15.2.5.17). */
int scn_sa_state_parse(struct imc_scn_parser *p, const char *v, uint8_t *out)
{
	uint64_t x;
	int rc;

	if (v[0] >= '0' && v[0] <= '9') {
		rc = imc_scn_parse_uint(p, "state", v, 15, &x);
		*out = (uint8_t)x;
		return rc;
	}
	*out = 0;
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
	return 0;
}

void scn_sa_state_print(FILE *f, uint8_t st)
{
	bool first = true;

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
 * largest available (MTU, rate) or smallest (PacketLifeTime). */
static const char *const sel_words[] = { "gt", "lt", "eq", "max" };

static int selcode_parse(struct imc_scn_parser *p, const char *what,
			 const char *v, uint8_t *sel, uint8_t *code)
{
	const char *colon = strchr(v, ':');
	uint64_t x;
	int rc;

	*sel = UMAD_SA_SELECTOR_EXACTLY;
	if (colon) {
		size_t n = (size_t)(colon - v);
		bool found = false;

		for (unsigned i = 0; i < IMC_ARRAY_SIZE(sel_words); i++) {
			if (strlen(sel_words[i]) == n &&
			    !strncmp(v, sel_words[i], n)) {
				*sel = (uint8_t)i;
				found = true;
			}
		}
		if (!found && n == 3 && !strncmp(v, "min", 3)) {
			*sel = UMAD_SA_SELECTOR_SMALLEST_AVAIL;
			found = true;
		}
		if (!found)
			return imc_scn_parse_error(p,
				"%s: expected gt, lt, eq, max or min before ':', got '%s'",
				what, v);
		v = colon + 1;
	}
	rc = imc_scn_parse_uint(p, what, v, 63, &x);
	*code = (uint8_t)x;
	return rc;
}

static void selcode_print(FILE *f, const char *what, uint8_t sel,
			  uint8_t code, bool life)
{
	const char *w = sel_words[sel & 3];

	if (life && sel == UMAD_SA_SELECTOR_SMALLEST_AVAIL)
		w = "min";
	fprintf(f, " %s=%s:%u", what, w, code);
}

/* ------------------------------------------------------------------ */
/* sa setting */

/* "0x8001,0x8002": P_Keys whose IPoIB broadcast group the SA creates,
 * besides the default partition's. */
static int partitions_parse(struct imc_scn_parser *p, const char *v,
			    struct sa_cfg *a)
{
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

/* partitions= fills part[] and npart: its field is the whole sa_cfg. */
static int part_opt_parse(struct imc_scn_parser *p, const struct scn_opt *o,
			  const char *v, void *field)
{
	(void)o;
	return partitions_parse(p, v, field);
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

static int sa_parse(struct imc_scn_parser *p, unsigned argc,
		    const char *const *argv, void **data)
{
	unsigned line = scn_setting_line(p->s, "sa");
	struct sa_cfg *a;
	uint64_t given = 0;
	int rc;

	if (line)
		return imc_scn_parse_error(p, "the SA is set already on line %u",
					   line);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	rc = scn_opts_parse(p, &sa_set, argc, argv, a, &given);
	a->mask = (unsigned)given;
	if (rc)
		return rc;
	if ((a->mask & SA_DELAY) && a->order != IMC_SA_MFT_ANSWER_FIRST)
		return imc_scn_parse_error(p,
			"mft-delay= is the delay of order=answer-first");
	return 0;
}

static void sa_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct sa_cfg *a = data;

	(void)t;
	scn_opts_print(f, &sa_set, a, a->mask);
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

/* ------------------------------------------------------------------ */
/* Hosts and entries */

static struct sa_host *host_get(struct sa_run *r, uint32_t node,
				unsigned port)
{
	uint32_t idx = r->pbase[node] + port;
	struct sa_host *h = r->host[idx];

	if (h)
		return h;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->r = r;
	h->idx = idx;
	h->node = node;
	h->port = port;
	r->host[idx] = h;
	return h;
}

static struct sa_host *host_find(struct sa_run *r, uint32_t node,
				 unsigned port)
{
	return r->host[r->pbase[node] + port];
}

/* A P_Key of the port's table in the partition of pkey (IBA 10.9.1.2:
 * the low 15 bits), full membership first; pkey itself when none. */
static uint16_t local_pkey(struct sa_run *r, uint32_t node, unsigned port,
			   uint16_t pkey)
{
	struct imc_port_attr pa;
	uint16_t best = pkey;
	bool found = false;

	if (imc_fabric_port_attr(r->f, node, port, &pa))
		return pkey;
	for (unsigned i = 0; i < pa.npkeys; i++) {
		if ((pa.pkeys[i] & 0x7fff) != (pkey & 0x7fff))
			continue;
		if (!found || (pa.pkeys[i] & 0x8000))
			best = pa.pkeys[i];
		found = true;
	}
	return best;
}

static size_t ent_slot(const struct sa_run *r, uint32_t host,
		       const struct imc_gid *mgid)
{
	size_t mask = r->entcap - 1;
	size_t i = (size_t)imc_gid_hash(mgid, host) & mask;

	while (r->ent[i].used && (r->ent[i].host != host ||
				  !imc_gid_equal(&r->ent[i].mgid, mgid)))
		i = (i + 1) & mask;
	return i;
}

static struct sa_ent *ent_find(struct sa_run *r, uint32_t host,
			       const struct imc_gid *mgid)
{
	size_t i;

	if (!r->entcap)
		return NULL;
	i = ent_slot(r, host, mgid);
	return r->ent[i].used ? &r->ent[i] : NULL;
}

/* The entry of (host, mgid), created when absent. The table grows at half
 * full, so a pointer is good until the next ent_get(). */
static struct sa_ent *ent_get(struct sa_run *r, uint32_t host,
			      const struct imc_gid *mgid)
{
	struct sa_ent *e = ent_find(r, host, mgid);
	size_t i;

	if (e)
		return e;
	if ((r->nent + 1) * 2 > r->entcap) {
		size_t n = r->entcap ? r->entcap * 2 : 64;
		struct sa_ent *old = r->ent;
		size_t oldn = r->entcap;

		r->ent = calloc(n, sizeof(*r->ent));
		if (!r->ent) {
			r->ent = old;
			return NULL;
		}
		r->entcap = n;
		for (size_t k = 0; k < oldn; k++)
			if (old[k].used)
				r->ent[ent_slot(r, old[k].host,
						&old[k].mgid)] = old[k];
		free(old);
	}
	i = ent_slot(r, host, mgid);
	memset(&r->ent[i], 0, sizeof(r->ent[i]));
	r->ent[i].used = true;
	r->ent[i].host = host;
	r->ent[i].mgid = *mgid;
	r->ent[i].status = ST_NONE;
	r->nent++;
	return &r->ent[i];
}

static void set_status(struct sa_run *r, uint32_t host,
		       const struct imc_gid *mgid, uint32_t status)
{
	struct sa_ent *e = ent_get(r, host, mgid);

	if (e)
		e->status = status;
}

static bool mgid_resolve(struct sa_run *r, const struct mgid_arg *m,
			 struct imc_gid *out)
{
	const struct label_slot *ls;

	if (!m->label) {
		*out = m->gid;
		return true;
	}
	ls = imc_scn_data(r->c, &m->label->label);
	if (!ls)
		return false;
	*out = ls->mgid;
	return true;
}

/* ------------------------------------------------------------------ */
/* Snapshots */

struct collect {
	struct snap *s;
	struct snap_group *cur;
};

static int group_cb(void *arg, const struct imc_sa_group_info *g)
{
	struct collect *co = arg;
	struct snap *s = co->s;

	if (s->ng == s->cap) {
		size_t n = s->cap ? s->cap * 2 : 16;
		struct snap_group *ng = realloc(s->g, n * sizeof(*ng));

		if (!ng)
			return -ENOMEM;
		s->g = ng;
		s->cap = n;
	}
	memset(&s->g[s->ng], 0, sizeof(s->g[s->ng]));
	s->g[s->ng++].g = *g;
	return 0;
}

static int member_cb(void *arg, const struct imc_sa_member_info *m)
{
	struct collect *co = arg;
	struct snap_group *g = co->cur;

	if (g->nm == g->cap) {
		size_t n = g->cap ? g->cap * 2 : 8;
		struct snap_member *nm = realloc(g->m, n * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		g->m = nm;
		g->cap = n;
	}
	g->m[g->nm].m = *m;
	g->m[g->nm++].name = NULL;
	return 0;
}

static void snap_fini(struct snap *s)
{
	for (size_t i = 0; i < s->ng; i++) {
		for (size_t k = 0; k < s->g[i].nm; k++)
			free(s->g[i].m[k].name);
		free(s->g[i].m);
	}
	free(s->g);
	free(s->dot);
	memset(s, 0, sizeof(*s));
}

static void show_clear(struct imc_scn_sa_show *sh)
{
	for (unsigned i = 0; i < sh->n; i++)
		snap_fini(&sh->s[i]);
	sh->n = 0;
}

/* The asked-for group's forwarding as the switches hold it now. */
static int snap_tree(struct sa_run *r, const struct imc_scn_sa_show *sh,
		     struct snap *s)
{
	char title[IMC_GID_STRLEN];
	size_t len = 0;
	FILE *f;
	int rc;

	for (size_t i = 0; i < s->ng; i++) {
		const struct imc_mcmr *g = &s->g[i].g.rec;

		if (!imc_gid_equal(&g->mgid, &sh->tree_mgid))
			continue;
		imc_gid_format(&g->mgid, title);
		f = open_memstream(&s->dot, &len);
		if (!f)
			return -ENOMEM;
		rc = imc_fabric_mft_dot(r->f, g->mlid, title, f);
		if (fclose(f) && !rc)
			rc = -ENOMEM;
		return rc;
	}
	return 0;
}

static int snapshot(struct sa_run *r, unsigned line)
{
	struct imc_scn_sa_show *sh = r->cfg->show;
	const struct imc_sa *sa = imc_sa_fabric_sa(r->sf);
	struct collect co;
	struct snap s;
	int rc;

	if (!sh)
		return 0;
	memset(&s, 0, sizeof(s));
	s.at = imc_scn_now(r->c);
	s.line = line;
	imc_sa_get_stats(sa, &s.st);
	co.s = &s;
	co.cur = NULL;
	rc = imc_sa_foreach_group(sa, group_cb, &co);
	for (size_t i = 0; !rc && i < s.ng; i++) {
		co.cur = &s.g[i];
		rc = imc_sa_foreach_member(sa, &s.g[i].g.rec.mgid, member_cb,
					   &co);
		for (size_t k = 0; !rc && k < s.g[i].nm; k++) {
			struct snap_member *m = &s.g[i].m[k];
			char name[IMC_TOPO_MAX_NAME + 8];
			uint32_t node;
			unsigned port;

			if (imc_fabric_port_by_gid(r->f, &m->m.port_gid, &node,
						   &port))
				continue;
			snprintf(name, sizeof(name), "%s:%u",
				 r->t->node[node].name, port);
			m->name = strdup(name);
			if (!m->name)
				rc = -ENOMEM;
		}
	}
	if (!rc && sh->want_tree)
		rc = snap_tree(r, sh, &s);
	if (!rc && sh->n == sh->cap) {
		unsigned n = sh->cap ? sh->cap * 2 : 4;
		struct snap *ns = realloc(sh->s, n * sizeof(*ns));

		if (!ns)
			rc = -ENOMEM;
		else {
			sh->s = ns;
			sh->cap = n;
		}
	}
	if (rc) {
		snap_fini(&s);
		return rc;
	}
	sh->s[sh->n++] = s;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The run: start, clients, answers */

static bool answer(struct sa_run *r, struct sa_host *h, const uint8_t *buf,
		   size_t len);

/* The GSI's agent of these requests: takes the answers whose TID is
 * ours, passes on the rest (a tracker's client takes those). */
static int host_agent_recv(struct imc_gsi_agent *a,
			   const struct imc_ud_recv *rv)
{
	struct sa_host *h = imc_container_of(a, struct sa_host, agent);

	return answer(h->r, h, rv->data, rv->len) ? 0 : -ENOMSG;
}

static void qp1_recv(struct imc_qp *qp, const struct imc_ud_recv *rv,
		     void *ctx)
{
	struct sa_host *h = ctx;

	(void)qp;
	imc_gsi_input(h->gsi, rv);
}

static bool pkey_in(const struct imc_port_attr *pa, uint16_t pkey)
{
	for (unsigned i = 0; i < pa->npkeys; i++)
		if (pa->pkeys[i] == pkey)
			return true;
	return false;
}

/* A QP1 of the run's for the GSI of h. The GSI sends with a P_Key of the
 * port's table (IBA 13.5.3): the default partition's, full membership
 * first, else the table's first. */
static int own_qp1(struct sa_run *r, struct sa_host *h)
{
	struct imc_port_attr pa;
	uint16_t pkey = IMC_PKEY_DEFAULT;
	int rc;

	if (!imc_fabric_port_attr(r->f, h->node, h->port, &pa) && pa.npkeys) {
		pkey = local_pkey(r, h->node, h->port, IMC_PKEY_DEFAULT);
		if ((pkey & 0x7fff) != 0x7fff || !pkey_in(&pa, pkey))
			pkey = pa.pkeys[0];
	}
	rc = imc_qp_create(r->f, h->node, h->port, IMC_QP1, IMC_QP1_QKEY,
			   pkey, qp1_recv, h, &h->qp1);
	if (!rc)
		imc_gsi_set_qp(h->gsi, h->qp1);
	return rc;
}

static void drop_qp1(struct sa_host *h)
{
	imc_gsi_set_qp(h->gsi, NULL);
	imc_qp_destroy(h->qp1);
	h->qp1 = NULL;
}

/* h's GSI, with no QP yet; its agent takes our answers. */
static int gsi_get(struct sa_host *h)
{
	int rc;

	if (h->gsi)
		return 0;
	rc = imc_gsi_create_shared(NULL, &h->gsi);
	if (rc)
		return rc;
	h->agent.recv = host_agent_recv;
	imc_gsi_add(h->gsi, &h->agent);
	return 0;
}

static int sa_start(struct sa_run *r)
{
	struct imc_sa_fabric_config fc;
	const struct sa_cfg *a = r->cfg;
	struct sa_host *h;
	uint32_t node;
	unsigned port;
	struct imc_sa_bcast bc[PARTITIONS_MAX + 1];

	imc_sa_fabric_config_init(&fc);
	if (a->npart || (a->mask & SA_BCAST_QKEY)) {
		/* The default group as configured, then one per partition
		 * with its parameters; the Q_Key of every one as
		 * partitions.conf's qkey= gives it. */
		bc[0] = fc.sa.bcast[0];
		if (a->mask & SA_BCAST_QKEY)
			bc[0].qkey = a->bcast_qkey;
		for (unsigned i = 0; i < a->npart; i++) {
			bc[i + 1] = bc[0];
			bc[i + 1].pkey = a->part[i];
			bc[i + 1].mlid = 0;
		}
		fc.sa.bcast = bc;
		fc.sa.n_bcast = a->npart + 1u;
	}
	if (a->mask & SA_RATE)
		fc.sa.service_rate = a->rate;
	if (a->mask & SA_QUEUE)
		fc.sa.queue_max = a->queue;
	if (a->mask & SA_ORDER)
		fc.sa.mft_order = a->order;
	if (a->mask & SA_DELAY)
		fc.sa.mft_delay = a->mft_delay;
	if (a->mask & SA_MLIDS)
		fc.sa.mlid_last = (uint16_t)(fc.sa.mlid_first + a->mlids - 1);
	if (r->external) {
		/* Every port's GSI gets a QP1 of the run's. */
		r->sa_node = UINT32_MAX;
		return 0;
	}
	r->start_err = imc_fabric_sm_port(r->f, &node, &port);
	h = r->start_err ? NULL : host_get(r, node, port);
	if (!r->start_err && (!h || gsi_get(h)))
		r->start_err = -ENOMEM;
	if (r->start_err)
		return r->start_err;
	/* The SA takes the port's QP1 and hands the GSI the rest. */
	if (h->qp1)
		drop_qp1(h);
	fc.other_mad = imc_gsi_input;
	fc.other_ctx = h->gsi;
	r->start_err = imc_sa_fabric_create(r->f, &fc, &r->sf);
	if (r->start_err)
		return r->start_err;
	imc_gsi_set_qp(h->gsi, imc_sa_fabric_qp(r->sf));
	r->sa_node = node;
	r->sa_port = port;
	return 0;
}

/* Stops the SA; its port's GSI gets a QP1 of the run's unless the SA
 * comes back there (keep). */
static int sa_stop(struct sa_run *r, bool keep)
{
	struct sa_host *h = host_find(r, r->sa_node, r->sa_port);

	struct imc_sa_stats st;

	imc_sa_get_stats(imc_sa_fabric_sa(r->sf), &st);
	if (st.queue_max_seen > r->queue_max)
		r->queue_max = st.queue_max_seen;
	imc_gsi_set_qp(h->gsi, NULL);
	imc_sa_fabric_destroy(r->sf);
	r->sf = NULL;
	return keep ? 0 : own_qp1(r, h);
}

static void start_fire(struct imc_timer *t)
{
	sa_start(imc_container_of(t, struct sa_run, start));
}

/* The run's SA state with the SA running, or a failure naming why. */
static int run_get(struct imc_scn_ctx *c, struct sa_run **out)
{
	struct sa_run *r = imc_scn_data(c, &run_key);

	/* Callers test rc; set *out anyway, as the compiler cannot see that
	 * imc_scn_fail() never returns 0. */
	*out = NULL;
	if (!r)
		return imc_scn_fail(c, -ENOENT,
				    "no SA runs: the scenario has no 'sa' line");
	if (!r->sf && !r->start_err && !r->external) {
		imc_timer_cancel(r->loop, &r->start);
		sa_start(r);
	}
	if (!r->sf && !r->external)
		return imc_scn_fail(c, r->start_err,
				    "the SA cannot start on the SM's port: %s",
				    strerror(-r->start_err));
	*out = r;
	return 0;
}

/* run_get() for what reads or drives the built-in engine itself. */
static int engine_get(struct imc_scn_ctx *c, struct sa_run **out)
{
	int rc = run_get(c, out);

	if (!rc && (*out)->external) {
		*out = NULL;
		return imc_scn_fail(c, -EOPNOTSUPP,
			"the SA is the external SM's (opensm line): its "
			"groups are not read here; use sa-get or saquery");
	}
	return rc;
}

const struct imc_sa *scn_sa_engine(struct imc_scn_ctx *c)
{
	struct sa_run *r = imc_scn_data(c, &run_key);

	return r && r->sf ? imc_sa_fabric_sa(r->sf) : NULL;
}

/* h's GSI with a QP1: the run's, or the SA's on its port. */
static int qp1_get(struct sa_run *r, struct sa_host *h)
{
	int rc;

	if (h->gsi && (h->qp1 || (h->node == r->sa_node &&
				  h->port == r->sa_port)))
		return 0;
	rc = gsi_get(h);
	if (rc)
		return rc;
	if (h->node == r->sa_node && h->port == r->sa_port)
		return 0;
	return own_qp1(r, h);
}

void scn_sa_links_changed(struct imc_scn_ctx *c)
{
	struct sa_run *r = imc_scn_data(c, &run_key);

	if (r && r->sf)
		imc_sa_fabric_links_changed(r->sf);
}

int scn_sa_gsi_find(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		    struct imc_gsi **out)
{
	if (!imc_scn_data(c, &run_key))
		return -ENOENT;
	return scn_sa_gsi(c, node, port, out);
}

int scn_sa_gsi(struct imc_scn_ctx *c, uint32_t node, unsigned port,
	       struct imc_gsi **out)
{
	struct sa_run *r;
	struct sa_host *h;
	int rc = run_get(c, &r);

	if (rc)
		return rc;
	h = host_get(r, node, port);
	if (!h)
		return -ENOMEM;
	rc = qp1_get(r, h);
	if (rc)
		return imc_scn_fail(c, rc, "%s has no QP1 for SA MADs: %s",
				    r->t->node[node].name, strerror(-rc));
	*out = h->gsi;
	return 0;
}

static void req_free(struct req *q)
{
	imc_timer_cancel(q->r->loop, &q->timer);
	q->r->req[q->num] = NULL;
	free(q);
}

static void req_send(struct req *q)
{
	struct sa_run *r = q->r;
	struct sa_host *h = r->host[q->sender];
	struct imc_port_attr pa;
	struct imc_ah ah;
	int rc;

	memset(&ah, 0, sizeof(ah));
	/* To the SA's port as it is now: a LID change is followed. An
	 * external SM's SA is at the SM LID the sender's PortInfo names
	 * (IBA 15.4.1: the SA is found through the SM LID). */
	if (r->external) {
		if (!imc_fabric_port_attr(r->f, h->node, h->port, &pa) &&
		    pa.state == IMC_PORT_ACTIVE)
			ah.dlid = pa.sm_lid;
	} else if (!imc_fabric_port_attr(r->f, r->sa_node, r->sa_port, &pa)) {
		ah.dlid = pa.lid;
	}
	rc = ah.dlid ? imc_gsi_send(h->gsi, ah.dlid, q->mad, IMC_MAD_SIZE) :
		       -ENETDOWN;
	if (rc) {
		r->errors++;
	} else {
		r->requests++;
		h->requests++;
	}
	q->tries++;
	imc_timer_arm_in(r->loop, &q->timer, q->a->timeout);
}

static void req_timeout(struct imc_timer *t)
{
	struct req *q = imc_container_of(t, struct req, timer);
	struct sa_run *r = q->r;

	if (q->tries <= q->a->retries) {
		req_send(q);
		return;
	}
	r->timeouts++;
	set_status(r, q->sender, &q->mgid, ST_TIMEOUT);
	req_free(q);
}

static int req_build(struct sa_run *r, struct req *q, uint8_t state)
{
	const struct req_arg *a = q->a;
	struct imc_sa_mad m;
	struct imc_mcmr rec = a->rec;
	struct imc_port_attr pa;
	uint64_t mask = a->mask | CM(MGID);

	memset(&m, 0, sizeof(m));
	m.mad.base_version = IMC_MAD_BASE_VERSION;
	m.mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
	m.mad.class_version = UMAD_SA_CLASS_VERSION;
	m.mad.method = a->kind == REQ_JOIN ? UMAD_METHOD_SET :
		       a->kind == REQ_LEAVE ? UMAD_SA_METHOD_DELETE :
					      UMAD_METHOD_GET;
	m.mad.tid = (uint64_t)IMC_SCN_MAGIC << 32 | (q->num + 1);
	m.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	rec.mgid = q->mgid;
	if (a->kind != REQ_GET) {
		/* o15-0.2.3, o15-0.1.14: MGID, PortGID, JoinState. */
		if (imc_fabric_port_attr(r->f, a->member.node, a->member.port,
					 &pa))
			return -EINVAL;
		rec.port_gid = pa.gid;
		rec.join_state = state;
		mask |= CM(PORT_GID) | CM(JOIN_STATE);
	}
	if (a->create) {
		if (!(a->mask & CM(QKEY)))
			rec.qkey = IMC_SCN_QKEY;
		if (!(a->mask & CM(PKEY)))
			rec.pkey = IMC_PKEY_DEFAULT;
		mask |= CREATE_COMPS;
	}
	m.sa.comp_mask = mask;
	if (imc_mcmr_pack(&rec, m.data, sizeof(m.data)) < 0 ||
	    imc_sa_mad_pack(&m, q->mad, sizeof(q->mad)) < 0)
		return -EINVAL;
	return 0;
}

static int req_start(struct imc_scn_ctx *c, const struct req_arg *a)
{
	const struct imc_topo *t = imc_scn_topo(c);
	struct sa_run *r;
	struct sa_host *h, *mh;
	struct sa_ent *e;
	struct req *q;
	struct imc_gid mgid;
	uint8_t state;
	int rc = run_get(c, &r);

	if (rc)
		return rc;
	if (!mgid_resolve(r, &a->mgid, &mgid))
		return imc_scn_fail(c, -ENOENT,
			"@%s has no MGID yet: its sa-join has not succeeded",
			a->mgid.label->label);
	h = host_get(r, a->host.node, a->host.port);
	mh = host_get(r, a->member.node, a->member.port);
	if (!h || !mh)
		return -ENOMEM;
	rc = qp1_get(r, h);
	if (rc)
		return imc_scn_fail(c, rc, "%s has no QP1 for SA requests: %s",
				    t->node[h->node].name, strerror(-rc));
	state = a->state_set ? a->state : JS_FULL;
	if (a->kind == REQ_LEAVE && !a->state_set) {
		/* Leave with every bit the member holds. */
		e = ent_find(r, mh->idx, &mgid);
		if (e && e->join_state)
			state = e->join_state;
	}
	if (r->nreq == r->reqcap) {
		size_t n = r->reqcap ? r->reqcap * 2 : 64;
		struct req **nr = realloc(r->req, n * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		r->req = nr;
		r->reqcap = n;
	}
	if (r->nreq >= UINT32_MAX - 1)
		return imc_scn_fail(c, -EOVERFLOW, "out of TIDs");
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->r = r;
	q->a = a;
	q->num = (uint32_t)r->nreq;
	q->sender = h->idx;
	q->member = mh->idx;
	q->mgid = mgid;
	q->flow = scn_flow_id(c);
	imc_timer_init(&q->timer, req_timeout);
	rc = req_build(r, q, state);
	if (rc) {
		free(q);
		return imc_scn_fail(c, rc, "cannot build the request");
	}
	r->req[r->nreq++] = q;
	set_status(r, h->idx, &mgid, ST_PENDING);
	req_send(q);
	return 0;
}

/* ---- multicast flows ---- */

static void flow_fire(struct imc_timer *t)
{
	struct sflow *fl = imc_container_of(t, struct sflow, timer);
	int rc;

	if (fl->size >= IMC_SCN_HDR_SIZE)
		imc_put32(fl->buf + 8, fl->seq);
	/* IBA 10.5.2.5: multicast goes to QP 0xFFFFFF with a GRH. */
	rc = imc_qp_send(fl->qp, &fl->ah, IMC_MCAST_QPN, fl->qkey, fl->buf,
			 fl->size);
	imc_scn_count_send(fl->r->c, fl->node, fl->port, rc);
	if (++fl->seq < fl->count)
		imc_timer_arm_in(fl->r->loop, &fl->timer, fl->interval);
}

static int flow_start(struct sa_run *r, uint32_t node, unsigned port,
		      const struct imc_mcmr *g, uint32_t count, uint32_t size,
		      imc_time_t interval, uint8_t sl, uint32_t flow)
{
	struct sflow *fl;
	int rc;

	fl = calloc(1, sizeof(*fl));
	if (!fl)
		return -ENOMEM;
	fl->buf = calloc(1, size ? size : 1);
	if (!fl->buf) {
		free(fl);
		return -ENOMEM;
	}
	rc = imc_scn_qp(r->c, node, port,
			local_pkey(r, node, port, g->pkey), g->qkey, &fl->qp);
	if (rc) {
		free(fl->buf);
		free(fl);
		return rc;
	}
	fl->r = r;
	fl->node = node;
	fl->port = port;
	fl->qkey = g->qkey;
	fl->count = count;
	fl->size = size;
	fl->interval = interval;
	fl->ah.dlid = g->mlid;
	fl->ah.sl = sl;
	fl->ah.has_grh = true;
	fl->ah.dgid = g->mgid;
	fl->ah.hop_limit = 0xff;
	for (uint32_t i = 0; i < size; i++)
		fl->buf[i] = (uint8_t)i;
	if (size >= IMC_SCN_HDR_SIZE) {
		imc_put32(fl->buf, IMC_SCN_MAGIC);
		imc_put32(fl->buf + 4, flow);
	}
	imc_timer_init(&fl->timer, flow_fire);
	fl->next = r->flows;
	r->flows = fl;
	return imc_timer_arm_in(r->loop, &fl->timer, 0);
}

/* ---- answers ---- */

static void member_joined(struct sa_run *r, uint32_t member,
			  const struct imc_mcmr *rec)
{
	const struct sa_host *mh = r->host[member];
	struct sa_ent *e = ent_get(r, member, &rec->mgid);
	struct imc_qp *qp;
	int rc;

	if (!e)
		return;
	e->join_state = rec->join_state;
	if (e->qp && (e->mlid != rec->mlid ||
		      !(rec->join_state & JS_RECEIVES))) {
		imc_qp_detach(e->qp, &rec->mgid, e->mlid);
		e->qp = NULL;
	}
	if (e->qp || !(rec->join_state & JS_RECEIVES))
		return;
	/* The member's QP for the group's P_Key and Q_Key gets its
	 * datagrams (IBA 10.5.2.5: attach to MGID and MLID). */
	rc = imc_scn_qp(r->c, mh->node, mh->port,
			local_pkey(r, mh->node, mh->port, rec->pkey),
			rec->qkey, &qp);
	if (!rc) {
		rc = imc_qp_attach(qp, &rec->mgid, rec->mlid);
		if (rc == -EEXIST)
			rc = 0;
	}
	if (rc) {
		r->errors++;
		return;
	}
	e->qp = qp;
	e->mlid = rec->mlid;
}

static void member_left(struct sa_run *r, uint32_t member,
			const struct imc_gid *mgid, uint8_t remaining)
{
	struct sa_ent *e = ent_find(r, member, mgid);

	if (!e)
		return;
	e->join_state = remaining;
	if (e->qp && !(remaining & JS_RECEIVES)) {
		imc_qp_detach(e->qp, mgid, e->mlid);
		e->qp = NULL;
	}
}

static void done(struct sa_run *r, struct req *q, uint16_t status,
		 const struct imc_mcmr *rec)
{
	const struct req_arg *a = q->a;

	set_status(r, q->sender, &q->mgid, status);
	if (status != 0)
		return;
	if (a->kind == REQ_JOIN) {
		if (!imc_gid_equal(&rec->mgid, &q->mgid))
			set_status(r, q->sender, &rec->mgid, status);
		if (a->label) {
			struct label_slot *ls = imc_scn_data(r->c, &a->label);

			if (!ls) {
				ls = calloc(1, sizeof(*ls));
				if (ls && imc_scn_data_set(r->c, &a->label, ls,
							   free)) {
					free(ls);
					ls = NULL;
				}
			}
			if (ls)
				ls->mgid = rec->mgid;
		}
		member_joined(r, q->member, rec);
		if (a->send_count &&
		    flow_start(r, a->member.node, a->member.port, rec,
			       a->send_count, a->send_size, a->send_interval,
			       rec->sl, q->flow))
			r->errors++;
	} else if (a->kind == REQ_LEAVE) {
		member_left(r, q->member, &q->mgid, rec->join_state);
	}
}

/* True when the MAD is an answer to one of our requests (taken). */
static bool answer(struct sa_run *r, struct sa_host *h, const uint8_t *buf,
		   size_t len)
{
	struct imc_sa_mad m;
	struct imc_mcmr rec;
	struct req *q;
	uint8_t full[IMC_MAD_SIZE];
	uint32_t low;

	/* A MAD is 256 bytes (IBA 13.4.2); OpenSM through umad2sim sends
	 * only the bytes it filled, the rest being zero. */
	if (len < IMC_MAD_SIZE) {
		memset(full, 0, sizeof(full));
		memcpy(full, buf, len);
		buf = full;
		len = sizeof(full);
	}
	/* Responses only (IBA 13.4.5: the R bit); TIDs are ours. */
	if (imc_sa_mad_unpack(&m, buf, len) < 0 ||
	    m.mad.mgmt_class != UMAD_CLASS_SUBN_ADM ||
	    !(m.mad.method & UMAD_METHOD_RESP_MASK) ||
	    m.mad.tid >> 32 != IMC_SCN_MAGIC)
		return false;
	low = (uint32_t)m.mad.tid;
	if (low == 0 || low > r->nreq)
		return true;
	r->answers++;
	h->answers++;
	/* Done already: the answer to a retry of an answered request. */
	q = r->req[low - 1];
	if (!q || q->sender != h->idx)
		return true;
	if (imc_mcmr_unpack(&rec, m.data, sizeof(m.data)) < 0)
		memset(&rec, 0, sizeof(rec));
	done(r, q, m.mad.status, &rec);
	req_free(q);
	return true;
}

static void run_free(void *data)
{
	struct sa_run *r = data;
	size_t nslots;

	if (r->sf)
		snapshot(r, 0);
	imc_timer_cancel(r->loop, &r->start);
	for (size_t i = 0; i < r->nreq; i++)
		if (r->req[i])
			req_free(r->req[i]);
	free(r->req);
	while (r->flows) {
		struct sflow *fl = r->flows;

		r->flows = fl->next;
		imc_timer_cancel(r->loop, &fl->timer);
		free(fl->buf);
		free(fl);
	}
	nslots = r->pbase[r->t->nnodes];
	for (size_t i = 0; i < nslots; i++) {
		struct sa_host *h = r->host[i];

		if (!h)
			continue;
		if (h->qp1)
			imc_qp_destroy(h->qp1);
		imc_gsi_destroy(h->gsi);
		free(h);
	}
	imc_sa_fabric_destroy(r->sf);
	free(r->host);
	free(r->pbase);
	free(r->ent);
	free(r);
}

static int sa_run(struct imc_scn_ctx *c, void *data)
{
	struct sa_cfg *a = data;
	const struct imc_topo *t = imc_scn_topo(c);
	struct sa_run *r = calloc(1, sizeof(*r));
	uint32_t n = 0;
	int rc;

	if (!r)
		return -ENOMEM;
	if (imc_scn_config(c)->external_sm && a->mask) {
		free(r);
		return imc_scn_fail(c, -EINVAL, "the options configure the "
				    "built-in SA; with an opensm line the SA "
				    "is OpenSM's: 'sa' alone");
	}
	r->c = c;
	r->cfg = a;
	r->f = imc_scn_fabric(c);
	r->loop = imc_scn_loop(c);
	r->t = t;
	r->external = imc_scn_config(c)->external_sm;
	r->sa_node = r->external ? UINT32_MAX : 0;
	imc_timer_init(&r->start, start_fire);
	r->pbase = calloc((size_t)t->nnodes + 1, sizeof(*r->pbase));
	if (!r->pbase) {
		free(r);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->nnodes; i++) {
		r->pbase[i] = n;
		n += t->node[i].nports + 1u;
	}
	r->pbase[t->nnodes] = n;
	r->host = calloc(n ? n : 1, sizeof(*r->host));
	if (!r->host) {
		free(r->pbase);
		free(r);
		return -ENOMEM;
	}
	rc = imc_scn_data_set(c, &run_key, r, run_free);
	if (rc) {
		free(r->host);
		free(r->pbase);
		free(r);
		return rc;
	}
	if (a->show)
		show_clear(a->show);
	/* Settings run before the SM's first sweep; the SA needs its port's
	 * LID, so it starts from the loop at time 0, before any action. */
	return imc_timer_arm_in(r->loop, &r->start, 0);
}

static const struct imc_scn_verb verb_sa = {
	.name = "sa", .kind = IMC_SCN_SETTING, .parse = sa_parse,
	.print = sa_print, .run = sa_run, .free = sa_free,
};

/* ------------------------------------------------------------------ */
/* sa-join, sa-leave, sa-get */

static void req_arg_free(void *data)
{
	struct req_arg *a = data;

	if (!a)
		return;
	free(a->label);
	free(a);
}

/* sa-join's record options, in the order they print: KEY=N sets a field
 * of the MCMemberRecord (the table of ibmcast/mcmr.h gives its bits) and
 * its ComponentMask bit; mtu=, rate= and life= take a selector and a code
 * (selcode_parse) into two fields. */
static const char *const comp_keys[] = {
	"qkey", "pkey", "tclass", "sl", "flow", "hop", "scope",
	"mtu", "rate", "life", "mlid",
};

/* A component of an MCMemberRecord template, from comp_keys, into rec,
 * with its ComponentMask bits into *mask. Returns 1 when word is none of
 * them. */
int scn_sa_comp_opt(struct imc_scn_parser *p, const char *word,
		    struct imc_mcmr *rec, uint64_t *mask)
{
	uint8_t *base = (uint8_t *)rec;
	const struct imc_mcmr_field *f;
	const char *v;
	uint64_t x = 0;
	int rc;

	for (size_t i = 0; i < IMC_ARRAY_SIZE(comp_keys); i++) {
		if (!imc_scn_kv(word, comp_keys[i], &v))
			continue;
		f = imc_mcmr_field_find(comp_keys[i], true);
		if (f->sel_comp) {
			rc = selcode_parse(p, f->key, v, base + f->sel_offset,
					   base + f->offset);
		} else {
			rc = imc_scn_parse_uint(p, f->key, v, f->max, &x);
			if (!rc)
				(void)imc_mcmr_field_set(rec, f, x);
		}
		*mask |= f->comp | f->sel_comp;
		return rc;
	}
	return 1;
}

void scn_sa_comp_print(FILE *f, const struct imc_mcmr *r, uint64_t mask)
{
	for (size_t i = 0; i < IMC_ARRAY_SIZE(comp_keys); i++) {
		const struct imc_mcmr_field *d =
			imc_mcmr_field_find(comp_keys[i], true);
		uint64_t v = imc_mcmr_field_get(r, d);
		const uint8_t *sel = (const uint8_t *)r + d->sel_offset;

		if (!(mask & d->comp))
			continue;
		if (d->sel_comp)
			selcode_print(f, d->key, *sel, (uint8_t)v,
				      d->comp == CM(LIFE_TIME));
		else if (d->hex)
			fprintf(f, " %s=0x%0*" PRIx64, d->key, (int)d->hex, v);
		else
			fprintf(f, " %s=%" PRIu64, d->key, v);
	}
}

/* The options only sa-join takes. Returns 1 when word is none of them. */
static const struct scn_opt join_opts[] = {
	SCN_O_FLAG("create", struct req_arg, create),
	SCN_O_UINT("send", struct req_arg, send_count, 0, 0),
	SCN_O_UINT("size", struct req_arg, send_size, 0, SCN_FLOW_SIZE_MAX),
	SCN_O_TIME("interval", struct req_arg, send_interval),
};
static const struct scn_optset join_set = SCN_OPTSET(join_opts);

/* Every request's retries= and timeout=. */
static const struct scn_opt req_opts[] = {
	SCN_O_UINT("retries", struct req_arg, retries, 0, RETRIES_MAX),
	SCN_O_TIME_H("timeout", struct req_arg, timeout, 1, "longer than 0"),
};
static const struct scn_optset req_set = SCN_OPTSET(req_opts);

static int join_opt(struct imc_scn_parser *p, struct req_arg *a,
		    const char *word, uint64_t *given)
{
	const char *v;
	int rc = scn_sa_comp_opt(p, word, &a->rec, &a->mask);

	if (rc != 1)
		return rc;
	rc = 0;
	if (imc_scn_kv(word, "as", &v)) {
		if (!label_ok(v))
			return imc_scn_parse_error(p,
				"as: expected a name of letters, digits, '_', '-' or '.' (at most %d), got '%s'",
				LABEL_MAX, v);
		free(a->label);
		a->label = strdup(v);
		if (!a->label)
			return -ENOMEM;
	} else {
		bool m;

		rc = scn_opt_word(p, &join_set, word, a, given, &m);
		return rc || m ? rc : 1;
	}
	return rc;
}

/* A join that gives MLID and Q_Key of a literal MGID also defines the
 * group for the built-in mcast lines (the SA takes a requested MLID,
 * IBA 15.2.5.17; a join names the group's). */
static int join_define_group(struct imc_scn_parser *p, const struct req_arg *a)
{
	struct scn_group g;

	if (a->mgid.label || imc_gid_is_zero(&a->mgid.gid) ||
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

static int req_parse(struct imc_scn_parser *p, unsigned argc,
		     const char *const *argv, void **data, enum req_kind kind)
{
	static const char *const usage[] = {
		[REQ_JOIN] = "expected 'sa-join HOST MGID|0|@NAME [state=...] [qkey= pkey= tclass= sl= flow= hop= scope= mtu= rate= life= mlid=] [create] [as=NAME] [proxy=HOST] [send=N size= interval=] [retries= timeout=]'",
		[REQ_LEAVE] = "expected 'sa-leave HOST MGID|@NAME [state=...] [proxy=HOST] [retries= timeout=]'",
		[REQ_GET] = "expected 'sa-get HOST MGID|@NAME [retries= timeout=]'",
	};
	struct req_arg *a;
	uint64_t rgiven = 0, jgiven = 0;
	int rc;

	if (argc < 2)
		return imc_scn_parse_error(p, "%s", usage[kind]);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	a->kind = kind;
	a->timeout = DEFAULT_TIMEOUT;
	a->send_size = 64;
	a->send_interval = IMC_NSEC_PER_USEC;
	rc = imc_scn_parse_host(p, argv[0], &a->host.node, &a->host.port);
	if (rc)
		return rc;
	a->member = a->host;
	rc = mgid_parse(p, argv[1], &a->mgid);
	if (rc)
		return rc;
	for (unsigned i = 2; i < argc; i++) {
		const char *v;
		bool m = false;

		if (kind != REQ_GET && imc_scn_kv(argv[i], "state", &v)) {
			rc = scn_sa_state_parse(p, v, &a->state);
			a->state_set = true;
		} else if (kind != REQ_GET && imc_scn_kv(argv[i], "proxy", &v)) {
			rc = imc_scn_parse_host(p, v, &a->member.node,
						&a->member.port);
			a->proxy = true;
		} else if ((rc = scn_opt_word(p, &req_set, argv[i], a, &rgiven,
					      &m)) || m) {
			a->timeout_set = rgiven & 2;
		} else if (kind == REQ_JOIN &&
			   (rc = join_opt(p, a, argv[i], &jgiven)) != 1) {
			/* taken */
		} else {
			rc = imc_scn_parse_error(p, "unknown option '%s'; %s",
						 argv[i], usage[kind]);
		}
		if (rc)
			return rc;
	}
	if (a->label) {
		rc = scn_name_add(p->s, &label_space, a->label, a);
		if (rc == -EEXIST)
			return imc_scn_parse_error(p,
				"as=%s: an earlier line has that name",
				a->label);
		if (rc)
			return rc;
	}
	if (kind == REQ_JOIN)
		return join_define_group(p, a);
	return 0;
}

static int join_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data)
{
	return req_parse(p, argc, argv, data, REQ_JOIN);
}

static int leave_parse(struct imc_scn_parser *p, unsigned argc,
		       const char *const *argv, void **data)
{
	return req_parse(p, argc, argv, data, REQ_LEAVE);
}

static int get_parse(struct imc_scn_parser *p, unsigned argc,
		     const char *const *argv, void **data)
{
	return req_parse(p, argc, argv, data, REQ_GET);
}

static void req_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct req_arg *a = data;
	const struct imc_mcmr *r = &a->rec;

	scn_print_port_arg(f, t, &a->host);
	mgid_print(f, &a->mgid);
	if (a->state_set) {
		fputs(" state=", f);
		scn_sa_state_print(f, a->state);
	}
	if (a->proxy) {
		fputs(" proxy=", f);
		imc_scn_print_port(f, t, a->member.node, a->member.port);
	}
	scn_sa_comp_print(f, r, a->mask);
	scn_opts_print(f, &join_set, a, 1);
	if (a->label)
		fprintf(f, " as=%s", a->label);
	scn_opts_print(f, &join_set, a, a->send_count ? 0xe : 0);
	scn_opts_print(f, &req_set, a, (a->retries ? 1 : 0) |
				       (a->timeout_set ? 2 : 0));
}

static int req_run(struct imc_scn_ctx *c, void *data)
{
	return req_start(c, data);
}

static const struct imc_scn_verb verb_join = {
	.name = "sa-join", .kind = IMC_SCN_ACTION, .parse = join_parse,
	.print = req_print, .run = req_run, .free = req_arg_free,
};

static const struct imc_scn_verb verb_leave = {
	.name = "sa-leave", .kind = IMC_SCN_ACTION, .parse = leave_parse,
	.print = req_print, .run = req_run, .free = req_arg_free,
};

static const struct imc_scn_verb verb_get = {
	.name = "sa-get", .kind = IMC_SCN_ACTION, .parse = get_parse,
	.print = req_print, .run = req_run, .free = req_arg_free,
};

/* ------------------------------------------------------------------ */
/* sa-mcast FROM MGID [count=N] [size=BYTES] [interval=TIME] [sl=N] */

static int mcast_parse(struct imc_scn_parser *p, unsigned argc,
		       const char *const *argv, void **data)
{
	struct mcast_arg *a;
	int rc;

	if (argc < 2)
		return imc_scn_parse_error(p,
			"expected 'sa-mcast FROM MGID|@NAME [count=N] [size=BYTES] [interval=TIME] [sl=N]'");
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	a->count = 1;
	a->size = 64;
	a->interval = IMC_NSEC_PER_USEC;
	rc = imc_scn_parse_host(p, argv[0], &a->src.node, &a->src.port);
	if (!rc)
		rc = mgid_parse(p, argv[1], &a->mgid);
	if (!rc)
		rc = scn_mcast_flow_opts(p, argc - 2, argv + 2, &a->count,
					 &a->size, &a->interval, &a->sl);
	return rc;
}

static void mcast_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct mcast_arg *a = data;

	scn_print_port_arg(f, t, &a->src);
	mgid_print(f, &a->mgid);
	scn_mcast_flow_print(f, a->count, a->size, a->interval, a->sl);
}

static int send_to_group(struct imc_scn_ctx *c, struct sa_run *r,
			 uint32_t node, unsigned port,
			 const struct imc_gid *mgid, uint32_t count,
			 uint32_t size, imc_time_t interval, uint8_t sl)
{
	struct imc_sa_group_info gi;
	char buf[IMC_GID_STRLEN];
	int rc;

	/* The sender learns MLID, Q_Key and P_Key from the SA's record. */
	if (imc_sa_group_get(imc_sa_fabric_sa(r->sf), mgid, &gi)) {
		imc_gid_format(mgid, buf);
		return imc_scn_fail(c, -ENOENT, "the SA has no group %s", buf);
	}
	rc = flow_start(r, node, port, &gi.rec, count, size, interval, sl,
			scn_flow_id(c));
	if (rc == -EINVAL)
		return imc_scn_fail(c, rc, "%s has no P_Key 0x%04x in its table",
				    imc_scn_topo(c)->node[node].name,
				    gi.rec.pkey);
	return rc;
}

int scn_sa_send(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		const struct imc_gid *mgid, uint32_t count, uint32_t size,
		imc_time_t interval, uint8_t sl)
{
	struct sa_run *r;
	int rc = engine_get(c, &r);

	return rc ? rc : send_to_group(c, r, node, port, mgid, count, size,
				       interval, sl);
}

static int mcast_run(struct imc_scn_ctx *c, void *data)
{
	const struct mcast_arg *a = data;
	struct sa_run *r;
	struct imc_gid mgid;
	int rc = run_get(c, &r);

	if (rc)
		return rc;
	if (!mgid_resolve(r, &a->mgid, &mgid))
		return imc_scn_fail(c, -ENOENT,
			"@%s has no MGID yet: its sa-join has not succeeded",
			a->mgid.label->label);
	return send_to_group(c, r, a->src.node, a->src.port, &mgid, a->count,
			     a->size, a->interval, a->sl);
}

static const struct imc_scn_verb verb_mcast = {
	.name = "sa-mcast", .kind = IMC_SCN_ACTION, .parse = mcast_parse,
	.print = mcast_print, .run = mcast_run, .free = free,
};

/* ------------------------------------------------------------------ */
/* sa-show */

static int show_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data)
{
	struct show_arg *a;

	(void)argv;
	if (argc)
		return imc_scn_parse_error(p, "expected 'sa-show' alone");
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->line = p->line;
	*data = a;
	return 0;
}

static void show_print(FILE *f, const struct imc_topo *t, const void *data)
{
	(void)f;
	(void)t;
	(void)data;
}

static int show_run(struct imc_scn_ctx *c, void *data)
{
	const struct show_arg *a = data;
	struct sa_run *r;
	int rc = engine_get(c, &r);

	if (rc)
		return rc;
	return snapshot(r, a->line);
}

static const struct imc_scn_verb verb_show = {
	.name = "sa-show", .kind = IMC_SCN_ACTION, .parse = show_parse,
	.print = show_print, .run = show_run, .free = free,
};

/* ------------------------------------------------------------------ */
/* sa-restart: the SA (an SM's) stops and starts again, empty, on the
 * SM's port as it is now, as when an SM restarts or another takes over
 * (after sm move). Clients hear of it only through port events: a new
 * SM reregisters every port (IBA 14.4.11), which is `reregister all`. */

static int restart_parse(struct imc_scn_parser *p, unsigned argc,
			 const char *const *argv, void **data)
{
	(void)argv;
	(void)data;
	if (argc)
		return imc_scn_parse_error(p, "expected 'sa-restart' alone");
	return 0;
}

static int restart_run(struct imc_scn_ctx *c, void *data)
{
	struct sa_run *r;
	uint32_t node;
	unsigned port;
	int rc = engine_get(c, &r);

	(void)data;
	if (rc)
		return rc;
	imc_fabric_sm_port(r->f, &node, &port);
	rc = sa_stop(r, node == r->sa_node && port == r->sa_port);
	if (!rc)
		rc = sa_start(r);
	if (rc)
		return imc_scn_fail(c, rc, "the SA cannot start again: %s",
				    strerror(-rc));
	return 0;
}

static const struct imc_scn_verb verb_restart = {
	.name = "sa-restart", .kind = IMC_SCN_ACTION, .parse = restart_parse,
	.print = show_print, .run = restart_run,
};

/* ------------------------------------------------------------------ */
/* Subjects */

struct sa_counter;

struct subj_arg {
	bool has_host;
	struct scn_port_arg host;
	struct mgid_arg mgid;
	const struct sa_counter *k;
};

static int subj_new(void **data, struct subj_arg **out)
{
	*out = calloc(1, sizeof(**out));
	*data = *out;
	return *out ? 0 : -ENOMEM;
}

static int none_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data)
{
	struct subj_arg *a;

	(void)argv;
	if (argc)
		return imc_scn_parse_error(p, "expected no argument");
	return subj_new(data, &a);
}

static int host_opt_parse(struct imc_scn_parser *p, unsigned argc,
			  const char *const *argv, void **data)
{
	struct subj_arg *a;
	int rc;

	if (argc > 1)
		return imc_scn_parse_error(p, "expected at most one host");
	rc = subj_new(data, &a);
	if (rc || !argc)
		return rc;
	a->has_host = true;
	return imc_scn_parse_host(p, argv[0], &a->host.node, &a->host.port);
}

static int mgid_subj_parse(struct imc_scn_parser *p, unsigned argc,
			   const char *const *argv, void **data)
{
	struct subj_arg *a;
	int rc;

	if (argc != 1)
		return imc_scn_parse_error(p, "expected an MGID or @NAME");
	rc = subj_new(data, &a);
	return rc ? rc : mgid_parse(p, argv[0], &a->mgid);
}

static int status_subj_parse(struct imc_scn_parser *p, unsigned argc,
			     const char *const *argv, void **data)
{
	struct subj_arg *a;
	int rc;

	if (argc != 2)
		return imc_scn_parse_error(p, "expected HOST and an MGID, 0 or @NAME");
	rc = subj_new(data, &a);
	if (rc)
		return rc;
	a->has_host = true;
	rc = imc_scn_parse_host(p, argv[0], &a->host.node, &a->host.port);
	return rc ? rc : mgid_parse(p, argv[1], &a->mgid);
}

static void status_print(FILE *f, const struct imc_topo *t,
			 const void *data)
{
	const struct subj_arg *a = data;

	scn_print_port_arg(f, t, &a->host);
	mgid_print(f, &a->mgid);
}

static void host_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct subj_arg *a = data;

	if (a->has_host)
		scn_print_port_arg(f, t, &a->host);
}

static void mgid_subj_print(FILE *f, const struct imc_topo *t,
			    const void *data)
{
	const struct subj_arg *a = data;

	(void)t;
	mgid_print(f, &a->mgid);
}

static void none_print(FILE *f, const struct imc_topo *t, const void *data)
{
	(void)f;
	(void)t;
	(void)data;
}

static const struct {
	const char *name;
	uint32_t value;
} status_names[] = {
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

int scn_sa_status_parse(const char *word, uint64_t *status)
{
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(status_names); i++) {
		if (status_names[i].value <= 0xFFFF &&
		    !strcmp(word, status_names[i].name)) {
			*status = status_names[i].value;
			return 0;
		}
	}
	return -EINVAL;
}

const char *scn_sa_status_name(uint64_t status)
{
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(status_names); i++)
		if (status_names[i].value <= 0xFFFF &&
		    status_names[i].value == status)
			return status_names[i].name;
	return NULL;
}

static int status_value_parse(const char *word, uint64_t *v)
{
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(status_names); i++) {
		if (!strcmp(word, status_names[i].name)) {
			*v = status_names[i].value;
			return 0;
		}
	}
	return -EINVAL;
}

static void status_value_format(uint64_t v, char *buf, size_t len)
{
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(status_names); i++) {
		if (status_names[i].value == v) {
			snprintf(buf, len, "%s", status_names[i].name);
			return;
		}
	}
	snprintf(buf, len, "0x%04" PRIx64, v);
}

static void mlid_value_format(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "0x%04" PRIx64, v);
}

static int status_observe(struct imc_scn_ctx *c, const void *data,
			  uint64_t *v)
{
	const struct subj_arg *a = data;
	const struct sa_host *h;
	const struct sa_ent *e = NULL;
	struct sa_run *r;
	struct imc_gid mgid;
	int rc = run_get(c, &r);

	if (rc)
		return rc;
	*v = ST_NONE;
	h = host_find(r, a->host.node, a->host.port);
	if (h && mgid_resolve(r, &a->mgid, &mgid))
		e = ent_find(r, h->idx, &mgid);
	if (e)
		*v = e->status;
	return 0;
}

static int group_info(struct imc_scn_ctx *c, const struct subj_arg *a,
		      struct imc_sa_group_info *gi, bool *found)
{
	struct sa_run *r;
	struct imc_gid mgid;
	int rc = engine_get(c, &r);

	if (rc)
		return rc;
	*found = mgid_resolve(r, &a->mgid, &mgid) &&
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

static int sa_counter_parse(struct imc_scn_parser *p, unsigned argc,
			    const char *const *argv, void **data)
{
	const struct sa_counter *k = *data;
	int rc;

	*data = NULL;
	rc = k->host_off >= 0 ? host_opt_parse(p, argc, argv, data)
			      : none_parse(p, argc, argv, data);
	if (*data)
		((struct subj_arg *)*data)->k = k;
	return rc;
}

static int sa_counter_observe(struct imc_scn_ctx *c, const void *data,
			      uint64_t *v)
{
	const struct subj_arg *a = data;
	const struct sa_counter *k = a->k;
	const struct sa_host *h;
	struct imc_sa_stats st;
	struct sa_run *r;
	int rc = run_get(c, &r);

	*v = 0;
	if (rc)
		return rc;
	if (a->has_host) {
		h = host_find(r, a->host.node, a->host.port);
		if (h)
			*v = scn_field_at(h, (size_t)k->host_off,
					  sizeof(uint64_t));
	} else if (k->src == SA_STATS) {
		if (r->external)
			return engine_get(c, &r);
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
	int rc = run_get(c, &r);

	(void)data;
	*v = 0;
	if (!rc && r->external)
		rc = engine_get(c, &r);
	if (rc)
		return rc;
	imc_sa_get_stats(imc_sa_fabric_sa(r->sf), &st);
	*v = st.queue_max_seen > r->queue_max ? st.queue_max_seen :
						r->queue_max;
	return 0;
}

static const struct imc_scn_subject subj_status = {
	.name = "sa-status", .parse = status_subj_parse, .print = status_print,
	.observe = status_observe, .value_parse = status_value_parse,
	.value_format = status_value_format, .free = free,
};


static const struct imc_scn_subject subj_members = {
	.name = "sa-members", .parse = mgid_subj_parse,
	.print = mgid_subj_print, .observe = members_observe, .free = free,
};

static const struct imc_scn_subject subj_mlid = {
	.name = "sa-mlid", .parse = mgid_subj_parse, .print = mgid_subj_print,
	.observe = mlid_observe, .value_format = mlid_value_format,
	.free = free,
};






#define SA_COUNTER(src, type, f, host) \
	.parse = sa_counter_parse, .observe = sa_counter_observe, \
	.free = free, \
	.arg = &(const struct sa_counter){ src, SCN_FIELD(type, f), host }
#define NO_HOST .print = none_print
#define BY_HOST .print = host_print

static const struct imc_scn_subject sa_counters[] = {
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

static const struct imc_scn_subject subj_queue_max = {
	.name = "sa-queue-max", .parse = none_parse, .print = none_print,
	.observe = queue_max_observe, .free = free,
};

/* ------------------------------------------------------------------ */
/* The recorder */

int imc_scn_sa_show_create(struct imc_scenario *s,
			   struct imc_scn_sa_show **out)
{
	struct imc_scn_sa_show *sh;
	struct sa_cfg *cfg = NULL;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!s)
		return -EINVAL;
	for (unsigned i = 0; i < s->nsettings && !cfg; i++)
		if (s->settings[i].verb == &verb_sa)
			cfg = s->settings[i].data;
	if (!cfg)
		return -ENOENT;
	if (cfg->show)
		return -EBUSY;
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	sh->cfg = cfg;
	cfg->show = sh;
	*out = sh;
	return 0;
}

int imc_scn_sa_show_tree(struct imc_scn_sa_show *sh,
			 const struct imc_gid *mgid)
{
	if (!sh || !mgid)
		return -EINVAL;
	sh->want_tree = true;
	sh->tree_mgid = *mgid;
	return 0;
}

int imc_scn_sa_show_dot(const struct imc_scn_sa_show *sh, FILE *f)
{
	if (!sh || !f)
		return -EINVAL;
	if (!sh->n || !sh->s[sh->n - 1].dot)
		return -ENOENT;
	fputs(sh->s[sh->n - 1].dot, f);
	return ferror(f) ? -EIO : 0;
}

void imc_scn_sa_show_destroy(struct imc_scn_sa_show *sh)
{
	if (!sh)
		return;
	if (sh->cfg)
		sh->cfg->show = NULL;
	show_clear(sh);
	free(sh->s);
	free(sh);
}

unsigned imc_scn_sa_show_count(const struct imc_scn_sa_show *sh)
{
	return sh ? sh->n : 0;
}

static void field(FILE *f, const char *name)
{
	size_t n = strlen(name);

	fprintf(f, "\t\t%s", name);
	for (; n < DOTS; n++)
		fputc('.', f);
}

static void js_text(FILE *f, uint8_t js)
{
	static const char *const names[] = {
		"Full", "NonMember", "SendOnlyNonMember",
		"SendOnlyFullMember",
	};
	bool first = true;

	fprintf(f, "0x%X", js);
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(names); i++) {
		if (!(js >> i & 1))
			continue;
		fprintf(f, "%s%s", first ? " (" : "+", names[i]);
		first = false;
	}
	if (!first)
		fputc(')', f);
}

static void snap_header(FILE *f, const struct snap *s)
{
	char t[32];

	imc_scn_format_time(s->at, t, sizeof(t));
	if (s->line)
		fprintf(f, "SA at %s (sa-show, line %u):", t, s->line);
	else
		fprintf(f, "SA at the end of the run (%s):", t);
	fprintf(f, " %" PRIu32 " groups, %" PRIu64 " members, %" PRIu32
		" of %" PRIu32 " MLIDs in use, %" PRIu64
		" MADs received, %" PRIu64 " dropped (queue full)\n",
		s->st.groups, s->st.members, s->st.mlids_in_use,
		s->st.mlids_total, s->st.received, s->st.drop_queue_full);
}

static void print_text(FILE *f, const struct snap *s)
{
	char gid[IMC_GID_STRLEN];

	snap_header(f, s);
	/* As saquery -g: one dump per group. */
	for (size_t i = 0; i < s->ng; i++) {
		const struct imc_sa_group_info *g = &s->g[i].g;
		const struct imc_mcmr *r = &g->rec;

		imc_gid_format(&r->mgid, gid);
		fprintf(f, "MCMemberRecord group dump:\n");
		field(f, "MGID");
		fprintf(f, "%s\n", gid);
		field(f, "Mlid");
		fprintf(f, "0x%X\n", r->mlid);
		field(f, "Qkey");
		fprintf(f, "0x%08" PRIX32 "\n", r->qkey);
		field(f, "Mtu");
		fprintf(f, "0x%X\n", r->mtu);
		field(f, "Rate");
		fprintf(f, "0x%X\n", r->rate);
		field(f, "pkey");
		fprintf(f, "0x%X\n", r->pkey);
		field(f, "SL");
		fprintf(f, "0x%X\n", r->sl);
		field(f, "TClass");
		fprintf(f, "0x%X\n", r->tclass);
		field(f, "FlowLabel");
		fprintf(f, "0x%" PRIX32 "\n", r->flow_label);
		field(f, "Scope");
		fprintf(f, "0x%X\n", r->scope);
		field(f, "Members");
		fprintf(f, "%" PRIu32 " (%" PRIu32 " full)%s\n", g->members,
			g->full_members, g->persistent ? ", persistent" : "");
	}
	/* As saquery -m: one dump per member, groups in MGID order. */
	for (size_t i = 0; i < s->ng; i++) {
		const struct snap_group *sg = &s->g[i];

		imc_gid_format(&sg->g.rec.mgid, gid);
		for (size_t k = 0; k < sg->nm; k++) {
			const struct snap_member *m = &sg->m[k];
			char pg[IMC_GID_STRLEN];

			imc_gid_format(&m->m.port_gid, pg);
			fprintf(f, "MCMemberRecord member dump:\n");
			field(f, "MGID");
			fprintf(f, "%s\n", gid);
			field(f, "Mlid");
			fprintf(f, "0x%X\n", sg->g.rec.mlid);
			field(f, "PortGid");
			fprintf(f, "%s\n", pg);
			field(f, "JoinState");
			js_text(f, m->m.join_state);
			fputc('\n', f);
			field(f, "ProxyJoin");
			fprintf(f, "0x%X\n", m->m.proxy);
			field(f, "NodeDescription");
			fprintf(f, "%s\n", m->name ? m->name : "<unknown>");
		}
	}
}

static void stats_json(struct imc_json *j, const struct imc_sa_stats *st)
{
	imc_json_key(j, "stats");
	imc_json_object_begin_line(j);
	imc_json_kv_u64(j, "groups", st->groups);
	imc_json_kv_u64(j, "members", st->members);
	imc_json_kv_u64(j, "mlids_in_use", st->mlids_in_use);
	imc_json_kv_u64(j, "mlids_total", st->mlids_total);
	imc_json_kv_u64(j, "received", st->received);
	imc_json_kv_u64(j, "drop_queue_full", st->drop_queue_full);
	imc_json_kv_u64(j, "groups_created", st->groups_created);
	imc_json_kv_u64(j, "groups_deleted", st->groups_deleted);
	imc_json_kv_u64(j, "mft_adds", st->mft_adds);
	imc_json_kv_u64(j, "mft_removes", st->mft_removes);
	imc_json_object_end(j);
}

static void group_json(struct imc_json *j, const struct snap_group *sg)
{
	const struct imc_mcmr *r = &sg->g.rec;

	imc_json_object_begin_line(j);
	imc_json_kv_gid(j, "mgid", &r->mgid);
	imc_json_kv_u64(j, "mlid", r->mlid);
	imc_json_kv_u64(j, "qkey", r->qkey);
	imc_json_kv_u64(j, "mtu", r->mtu);
	imc_json_kv_u64(j, "rate", r->rate);
	imc_json_kv_u64(j, "pkey", r->pkey);
	imc_json_kv_u64(j, "sl", r->sl);
	imc_json_kv_u64(j, "tclass", r->tclass);
	imc_json_kv_u64(j, "flow_label", r->flow_label);
	imc_json_kv_u64(j, "scope", r->scope);
	imc_json_kv_bool(j, "persistent", sg->g.persistent);
	imc_json_kv_u64(j, "full_members", sg->g.full_members);
	imc_json_key(j, "members");
	imc_json_array_begin_lines(j);
	for (size_t k = 0; k < sg->nm; k++) {
		const struct snap_member *m = &sg->m[k];

		imc_json_object_begin_line(j);
		imc_json_kv_gid(j, "port_gid", &m->m.port_gid);
		imc_json_kv_u64(j, "lid", m->m.lid);
		imc_json_kv_u64(j, "join_state", m->m.join_state);
		imc_json_kv_bool(j, "proxy_join", m->m.proxy);
		imc_json_key(j, "node");
		if (m->name)
			imc_json_string(j, m->name);
		else
			imc_json_null(j);
		imc_json_object_end(j);
	}
	imc_json_array_end(j);
	imc_json_object_end(j);
}

/* One snapshot: its time and statistics on the first line, a group a
 * line, a member a line. */
static void snap_json(struct imc_json *j, const struct snap *s)
{
	char t[32];

	imc_scn_format_time(s->at, t, sizeof(t));
	imc_json_object_begin_line(j);
	imc_json_kv_u64(j, "at_ns", s->at);
	imc_json_kv_string(j, "at", t);
	if (s->line)
		imc_json_kv_u64(j, "line", s->line);
	else
		imc_json_kv_bool(j, "end", true);
	stats_json(j, &s->st);
	imc_json_key(j, "groups");
	imc_json_array_begin_lines(j);
	for (size_t i = 0; i < s->ng; i++)
		group_json(j, &s->g[i]);
	imc_json_array_end(j);
	imc_json_object_end(j);
}

int imc_scn_sa_show_print(const struct imc_scn_sa_show *sh, FILE *f,
			  bool json)
{
	struct imc_json j;

	if (!sh || !f)
		return -EINVAL;
	if (!json) {
		for (unsigned i = 0; i < sh->n; i++)
			print_text(f, &sh->s[i]);
		return ferror(f) ? -EIO : 0;
	}
	/* Laid out as the value of a key of a top-level object. */
	imc_json_init_at(&j, f, 2, 0, 2);
	imc_json_array_begin(&j);
	for (unsigned i = 0; i < sh->n; i++)
		snap_json(&j, &sh->s[i]);
	imc_json_array_end(&j);
	return imc_json_finish(&j);
}

int imc_scn_sa_show_print_last(const struct imc_scn_sa_show *sh, FILE *f,
			       bool json)
{
	struct imc_json j;
	int rc;

	if (!sh || !f)
		return -EINVAL;
	if (!sh->n)
		return -ENOENT;
	if (!json) {
		print_text(f, &sh->s[sh->n - 1]);
		return ferror(f) ? -EIO : 0;
	}
	imc_json_init(&j, f, 2, 0);
	snap_json(&j, &sh->s[sh->n - 1]);
	rc = imc_json_finish(&j);
	fputc('\n', f);
	return rc ? rc : (ferror(f) ? -EIO : 0);
}

/* ------------------------------------------------------------------ */

static const struct imc_scn_plugin plugin_sa = {
	.name = "sa", .order = 100, .links_changed = scn_sa_links_changed,
};

int imc_scn_lang_add_sa(struct imc_scn_lang *l)
{
	static const struct imc_scn_verb *const verbs[] = {
		&verb_sa, &verb_join, &verb_leave, &verb_get, &verb_mcast,
		&verb_show, &verb_restart,
	};
	static const struct imc_scn_subject *const subjects[] = {
		&subj_status, &sa_counters[0], &subj_members, &subj_mlid,
		&sa_counters[1], &sa_counters[2], &sa_counters[3],
		&sa_counters[4], &sa_counters[5],
		&subj_queue_max,
	};
	int rc = 0;

	for (unsigned i = 0; i < IMC_ARRAY_SIZE(verbs) && !rc; i++)
		rc = imc_scn_lang_add_verb(l, verbs[i]);
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(subjects) && !rc; i++)
		rc = imc_scn_lang_add_subject(l, subjects[i]);
	if (!rc)
		rc = imc_scn_lang_add_section(l, &scn_section_sa);
	if (!rc)
		rc = imc_scn_lang_add_plugin(l, &plugin_sa);
	return rc;
}
