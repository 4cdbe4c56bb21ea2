/* ibmcast sa: talk to a real SA through libibumad (on InfiniBand, or on
 * ibsim through umad2sim): list multicast groups and members, join, leave,
 * send raw SA requests and print the answers in a stable text or JSON
 * form, and answer SA requests as a test server (IsSM port). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/json.h"
#include "ibmcast/mad.h"
#include "ibmcast/mcmr.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_client.h"
#include "ibmcast/scenario.h"
#include "ibmcast/scenario_sa.h"
#include "ibmcast/umad.h"
#include "sa_tool.h"
#include "tools.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: ibmcast sa show  [OPTIONS] [MGID|all]\n"
		"       ibmcast sa show  --scenario FILE [--seed N] [--json]\n"
		"       ibmcast sa query [OPTIONS] MGID|all\n"
		"       ibmcast sa join  [OPTIONS] MGID [--state S] [--qkey Q] [--pkey P]\n"
		"                        [--create] [--port-gid GID]\n"
		"       ibmcast sa leave [OPTIONS] MGID [--state S] [--port-gid GID]\n"
		"       ibmcast sa send  [OPTIONS] --method M [--attr A] [--attr-mod N]\n"
		"                        [--comp-mask MASK|auto] [--record FIELD=VALUE,...]\n"
		"                        [--data HEX]\n"
		"       ibmcast sa serve-echo [--device D] [--port P] [--status S]\n"
		"                        [--count N] [--duration SECS]\n"
		"\n"
		"Talks to the SA of the port through libibumad (under umad2sim: ibsim).\n"
		"\n"
		"  show        the SA's groups and members (saquery -g / -m), all\n"
		"              groups by default; with --scenario, those of the\n"
		"              SA of a simulated run at its end (ibmcast run\n"
		"              --sa-show)\n"
		"  query       GetTable of MCMemberRecords (all, or those of MGID);\n"
		"              prints groups and their members, as saquery -g / -m\n"
		"  join        one Set of an MCMemberRecord for this port; MGID 0 (or\n"
		"              --create) creates a group: Q_Key, TClass, P_Key, SL and\n"
		"              FlowLabel are then given too; prints status and record\n"
		"  leave       one Delete of this port's JoinState bits\n"
		"  send        any SA request, printed answer: status, method, records\n"
		"  serve-echo  SA server mode: sets IsSM on the port (through its issm\n"
		"              device; ibsim then routes SA requests for this port's\n"
		"              LID here) and answers every SA request with the\n"
		"              request's record and status S (default 0)\n"
		"\n"
		"Options:\n"
		"  --device D, --port P  the port (default: the first active)\n"
		"  --json                JSON output\n"
		"  --dlid LID            send to the SA at LID (default: the SM's LID)\n"
		"  --smkey KEY           SM_Key of the requests (default 0, untrusted)\n"
		"  --timeout MS          first attempt's timeout (default 200)\n"
		"  --retries N           retries with backoff (default 3)\n"
		"  --state S             full, nonmember, sendonly, sendonly-full or a\n"
		"                        number (default full)\n"
		"  --method M            get, set, gettable, delete, getmulti,\n"
		"                        gettracetable or a number\n"
		"  --attr A              mcmr, cpi, path, inform or a number (default mcmr)\n"
		"  --record F=V,...      MCMemberRecord fields: mgid, port_gid (or\n"
		"                        'self'), qkey, mlid, mtu_sel, mtu, tclass, pkey,\n"
		"                        rate_sel, rate, life_sel, life, sl, flow_label,\n"
		"                        hop_limit, scope, join_state, proxy_join\n"
		"  --comp-mask M         ComponentMask; 'auto' (default): the fields given\n"
		"  --data HEX            the data area, raw (any attribute); --record\n"
		"                        then writes a whole MCMemberRecord over its\n"
		"                        first 56 bytes\n"
		"\n"
		"Exit: 0 an answer (query/join/leave: with status SUCCESS), 1 a failing\n"
		"status, no answer or no port, 2 bad usage.\n");
}

/* ---- options ---- */

struct opts {
	const char *device;
	unsigned port;
	bool json;
	uint16_t dlid;
	uint64_t smkey;
	imc_time_t timeout;
	unsigned retries;
	uint8_t state;
	uint32_t qkey;
	bool qkey_set;
	uint16_t pkey;
	bool pkey_set;
	bool create;
	struct imc_gid port_gid;
	bool port_gid_set;
	int method;
	uint16_t attr;
	uint32_t attr_mod;
	struct { uint64_t mask; bool is_auto; } comp;
	const char *record;
	const char *data;
	const char *scenario;
	uint64_t seed;
	bool seed_set;
	uint16_t status;
	unsigned count;
	unsigned duration;
};

#define PROG "ibmcast sa"

static const char *method_name(unsigned m)
{
	const char *n = sa_tool_method_name(m);

	return n ? n : "Unknown";
}

/* ---- output ---- */

/* One MCMemberRecord, as "record f=v ..." or a JSON object: every field
 * in wire order (imc_mcmr_print_*). */
static void print_mcmr(const struct imc_mcmr *r, struct imc_json *j)
{
	if (j) {
		imc_mcmr_print_json(j, r, ~0ull);
		return;
	}
	printf("record");
	imc_mcmr_print_text(stdout, r, ~0ull);
	printf("\n");
}

static void print_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

/* ---- a session: loop, umad port, SA client ---- */

struct session {
	struct imc_loop *loop;
	struct imc_umad *u;
	struct imc_sa_client *c;
	bool done;
	int err;
	uint16_t status;
	uint8_t method;
	uint16_t attr_id;
	uint64_t comp_mask;
	bool truncated;
	unsigned attempts;
	size_t count, rec_size, len;
	uint8_t *data;
};

static void on_answer(void *arg, int err, const struct imc_sa_answer *a)
{
	struct session *s = arg;

	s->done = true;
	s->err = err;
	if (err)
		return;
	s->status = a->status;
	s->method = a->method;
	s->attr_id = a->attr_id;
	s->comp_mask = a->mad->sa.comp_mask;
	s->truncated = a->truncated;
	s->attempts = a->attempts;
	s->count = a->count;
	s->rec_size = a->rec_size;
	s->len = a->len;
	s->data = malloc(a->len ? a->len : 1);
	if (!s->data) {
		s->err = -ENOMEM;
		return;
	}
	memcpy(s->data, a->data, a->len);
}

static void session_close(struct session *s)
{
	if (s->u)
		imc_umad_attach(s->u, NULL);
	imc_sa_client_destroy(s->c);
	imc_umad_close(s->u);
	if (s->loop)
		imc_loop_destroy(s->loop);
	free(s->data);
}

static int session_open(struct session *s, const struct opts *o,
			enum imc_umad_mode mode)
{
	struct imc_umad_config uc = {
		.device = o->device, .port = o->port, .mode = mode,
		.issm = mode == IMC_UMAD_SERVER,
	};
	struct imc_sa_client_config cc;
	struct imc_sa_transport tr;
	int r;

	memset(s, 0, sizeof(*s));
	r = imc_loop_create_realtime(&s->loop);
	if (r < 0) {
		fprintf(stderr, "ibmcast sa: loop: %s\n", strerror(-r));
		return r;
	}
	r = imc_umad_open(s->loop, &uc, &s->u);
	if (r < 0) {
		fprintf(stderr, "ibmcast sa: cannot open %s port %u: %s\n",
			o->device ? o->device : "(default)", o->port,
			strerror(-r));
		imc_port_hint("ibmcast sa", r);
		return r;
	}
	if (mode == IMC_UMAD_SERVER)
		return 0;
	if (o->dlid)
		imc_umad_set_sa_lid(s->u, o->dlid);
	imc_sa_client_config_init(&cc);
	cc.timeout = o->timeout;
	if (cc.max_timeout < cc.timeout)
		cc.max_timeout = cc.timeout;
	cc.retries = o->retries;
	/* The first TID differs from run to run, as the jitter does. */
	cc.seed = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
	imc_umad_sa_transport(s->u, &tr);
	r = imc_sa_client_create(s->loop, &tr, &cc, &s->c);
	if (r < 0) {
		fprintf(stderr, "ibmcast sa: client: %s\n", strerror(-r));
		return r;
	}
	imc_umad_attach(s->u, s->c);
	return 0;
}

/* Sends req, waits for its completion. Returns 0 with an answer in s,
 * or a negative errno (reported). */
static int session_query(struct session *s, const struct imc_sa_mad *req)
{
	int r = imc_sa_query_start(s->c, req, on_answer, s, NULL);

	if (r < 0) {
		fprintf(stderr, "ibmcast sa: %s\n", strerror(-r));
		return r;
	}
	while (!s->done) {
		r = imc_loop_run_once(s->loop);
		if (r < 0) {
			fprintf(stderr, "ibmcast sa: loop: %s\n", strerror(-r));
			return r;
		}
	}
	if (s->err) {
		fprintf(stderr, "ibmcast sa: no answer from the SA at LID %u: %s\n",
			imc_umad_sa_lid(s->u), strerror(-s->err));
		return s->err;
	}
	return 0;
}

static void mcmr_mad(struct imc_sa_mad *m, uint8_t method, uint64_t smkey,
		     uint64_t mask, const struct imc_mcmr *r)
{
	memset(m, 0, sizeof(*m));
	m->mad.method = method;
	m->mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	m->sa.sm_key = smkey;
	m->sa.comp_mask = mask;
	if (r)
		imc_mcmr_pack(r, m->data, sizeof(m->data));
}

static void print_cpi(const struct imc_class_port_info *c, struct imc_json *j)
{
	if (!j) {
		printf("record base_version=%u class_version=%u cap_mask=0x%04x "
		       "cap_mask2=0x%07x resp_time=%u\n",
		       c->base_version, c->class_version, c->cap_mask,
		       c->cap_mask2, c->resp_time);
		return;
	}
	imc_json_object_begin(j);
	imc_json_kv_u64(j, "base_version", c->base_version);
	imc_json_kv_u64(j, "class_version", c->class_version);
	imc_json_kv_u64(j, "cap_mask", c->cap_mask);
	imc_json_kv_u64(j, "cap_mask2", c->cap_mask2);
	imc_json_kv_u64(j, "resp_time", c->resp_time);
	imc_json_object_end(j);
}

static void hex_string(struct imc_json *j, const uint8_t *p, size_t n)
{
	char *s = malloc(2 * n + 1);

	if (!s) {
		imc_json_null(j);
		return;
	}
	for (size_t i = 0; i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", p[i]);
	s[2 * n] = 0;
	imc_json_string(j, s);
	free(s);
}

/* The records of the answer, decoded as MCMemberRecords or ClassPortInfo
 * when they are, else in hex. */
static void print_answer(const struct session *s, bool json)
{
	size_t step = s->rec_size ? s->rec_size : s->len;
	bool mcmr = s->attr_id == UMAD_SA_ATTR_MCMEMBER_REC;
	bool cpi = s->attr_id == UMAD_ATTR_CLASS_PORT_INFO;
	struct imc_json jw, *j = json ? &jw : NULL;

	if (j) {
		imc_json_init(j, stdout, 0, 0);
		imc_json_object_begin(j);
		imc_json_kv_u64(j, "status", s->status);
		imc_json_kv_string(j, "status_name",
				   imc_mad_status_str(s->status));
		imc_json_kv_u64(j, "method", s->method);
		imc_json_kv_string(j, "method_name", method_name(s->method));
		imc_json_kv_u64(j, "attr", s->attr_id);
		imc_json_kv_u64(j, "comp_mask", s->comp_mask);
		imc_json_kv_bool(j, "truncated", s->truncated);
		imc_json_key(j, "records");
		imc_json_array_begin(j);
	} else {
		printf("status 0x%04x %s\n", s->status,
		       imc_mad_status_str(s->status));
		printf("method 0x%02x %s\n", s->method, method_name(s->method));
		printf("attr 0x%04x\n", s->attr_id);
		printf("comp_mask 0x%016" PRIx64 "\n", s->comp_mask);
		printf("records %zu%s\n", s->count,
		       s->truncated ? " truncated" : "");
	}
	for (size_t i = 0; i < s->count; i++) {
		const uint8_t *p = s->data + i * step;
		size_t n = s->len - i * step;
		struct imc_class_port_info c;
		struct imc_mcmr r;

		if (!step || i * step >= s->len)
			break;
		if (n > step)
			n = step;
		if (mcmr && imc_mcmr_unpack(&r, p, n) == IMC_MCMR_SIZE) {
			print_mcmr(&r, j);
		} else if (cpi && imc_class_port_info_unpack(&c, p, n) ==
					  IMC_CLASS_PORT_INFO_SIZE) {
			print_cpi(&c, j);
		} else if (j) {
			hex_string(j, p, n);
		} else {
			printf("record ");
			print_hex(p, n);
			printf("\n");
		}
	}
	if (j) {
		imc_json_array_end(j);
		imc_json_object_end(j);
		(void)imc_tool_json_end(j, PROG);
	}
}

/* ---- subcommands ---- */

static int do_send(struct opts *o)
{
	struct session s;
	struct imc_sa_mad m;
	struct imc_mcmr r;
	uint64_t mask = 0;
	int rc = IMC_EXIT_FAIL;

	memset(&s, 0, sizeof(s));
	mcmr_mad(&m, (uint8_t)o->method, o->smkey, 0, NULL);
	if (o->data && sa_tool_hex(o->data, m.data, sizeof(m.data)) < 0) {
		fprintf(stderr, "ibmcast sa: bad --data (hex, at most %d bytes)\n",
			IMC_SA_DATA_SIZE);
		return IMC_EXIT_USAGE;
	}
	/* A bad record is bad usage, told before any port is opened
	 * (port_gid=self checked against a stand-in GID). */
	if (o->record) {
		const struct imc_gid self = { 0 };
		uint64_t m2 = 0;

		memset(&r, 0, sizeof(r));
		if (sa_tool_record(PROG, o->record, &self, &r, &m2) < 0)
			return IMC_EXIT_USAGE;
	}
	if (session_open(&s, o, IMC_UMAD_CLIENT) < 0)
		goto out;
	memset(&r, 0, sizeof(r));
	if (o->record && sa_tool_record(PROG, o->record,
					&imc_umad_port(s.u)->gid, &r, &mask) < 0) {
		rc = IMC_EXIT_USAGE;
		goto out;
	}
	if (o->record)
		imc_mcmr_pack(&r, m.data, sizeof(m.data));
	m.sa.comp_mask = o->comp.is_auto ? mask : o->comp.mask;
	m.mad.attr_id = o->attr;
	m.mad.attr_mod = o->attr_mod;
	if (session_query(&s, &m) == 0) {
		print_answer(&s, o->json);
		rc = IMC_EXIT_OK;
	}
out:
	session_close(&s);
	return rc;
}

static int do_join_leave(struct opts *o, const struct imc_gid *mgid,
			 bool join)
{
	struct session s;
	struct imc_sa_mad m;
	struct imc_mcmr r;
	uint64_t mask = UMAD_SA_MCM_COMP_MASK_MGID |
			UMAD_SA_MCM_COMP_MASK_PORT_GID |
			UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
	int rc = IMC_EXIT_FAIL;

	if (session_open(&s, o, IMC_UMAD_CLIENT) < 0)
		goto out;
	memset(&r, 0, sizeof(r));
	r.mgid = *mgid;
	r.port_gid = o->port_gid_set ? o->port_gid : imc_umad_port(s.u)->gid;
	r.join_state = o->state;
	r.qkey = o->qkey;
	r.pkey = o->pkey;
	if (join && (o->create || imc_gid_is_zero(mgid)))
		/* The components an SA needs to create (o15-0.2.3). */
		mask |= IMC_MCMR_CREATE_COMPS;
	if (o->qkey_set)
		mask |= UMAD_SA_MCM_COMP_MASK_QKEY;
	if (o->pkey_set)
		mask |= UMAD_SA_MCM_COMP_MASK_PKEY;
	mcmr_mad(&m, join ? UMAD_METHOD_SET : UMAD_SA_METHOD_DELETE, o->smkey,
		 mask, &r);
	if (session_query(&s, &m) == 0) {
		print_answer(&s, o->json);
		rc = s.status == UMAD_STATUS_SUCCESS ? IMC_EXIT_OK :
						       IMC_EXIT_FAIL;
		/* o15-0.2.3: no group by that MGID, and the join lacked the
		 * components that create one. */
		if (join && !o->create &&
		    imc_sa_status_code(s.status) == UMAD_SA_STATUS_INSUF_COMPS) {
			char g[IMC_GID_STRLEN];

			imc_gid_format(mgid, g);
			fprintf(stderr,
				"ibmcast sa: hint: INSUF_COMPS: no group %s is there to join; --create also sends the components a new group needs (Q_Key, P_Key, SL, FlowLabel, TClass; o15-0.2.3)\n",
				g);
		}
	}
out:
	session_close(&s);
	return rc;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct imc_mcmr *x = a, *y = b;
	int c = imc_gid_cmp(&x->mgid, &y->mgid);

	return c ? c : imc_gid_cmp(&x->port_gid, &y->port_gid);
}

static void group_json(struct imc_json *j, const struct imc_mcmr *r)
{
	imc_json_kv_gid(j, "mgid", &r->mgid);
	imc_json_kv_u64(j, "mlid", r->mlid);
	imc_json_kv_u64(j, "qkey", r->qkey);
	imc_json_kv_u64(j, "pkey", r->pkey);
	imc_json_kv_u64(j, "mtu", r->mtu);
	imc_json_kv_u64(j, "rate", r->rate);
	imc_json_kv_u64(j, "sl", r->sl);
	imc_json_kv_u64(j, "tclass", r->tclass);
	imc_json_kv_u64(j, "flow_label", r->flow_label);
	imc_json_kv_u64(j, "scope", r->scope);
}

static void print_groups_json(const struct session *s,
			      const struct imc_mcmr *recs, size_t n)
{
	struct imc_json j;

	imc_json_init(&j, stdout, 0, 0);
	imc_json_object_begin(&j);
	imc_json_kv_u64(&j, "status", s->status);
	imc_json_kv_string(&j, "status_name", imc_mad_status_str(s->status));
	imc_json_kv_bool(&j, "truncated", s->truncated);
	imc_json_key(&j, "groups");
	imc_json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		const struct imc_mcmr *r = &recs[i];

		if (i == 0 || !imc_gid_equal(&r->mgid, &recs[i - 1].mgid)) {
			imc_json_object_begin(&j);
			group_json(&j, r);
			imc_json_key(&j, "members");
			imc_json_array_begin(&j);
		}
		imc_json_object_begin(&j);
		imc_json_kv_gid(&j, "port_gid", &r->port_gid);
		imc_json_kv_u64(&j, "join_state", r->join_state);
		imc_json_kv_bool(&j, "proxy_join", r->proxy_join);
		imc_json_object_end(&j);
		if (i + 1 == n || !imc_gid_equal(&r->mgid, &recs[i + 1].mgid)) {
			imc_json_array_end(&j);
			imc_json_object_end(&j);
		}
	}
	imc_json_array_end(&j);
	imc_json_object_end(&j);
	(void)imc_tool_json_end(&j, PROG);
}

static void print_groups(const struct session *s, const struct imc_mcmr *recs,
			 size_t n, bool json)
{
	char m[IMC_GID_STRLEN], p[IMC_GID_STRLEN];

	if (json) {
		print_groups_json(s, recs, n);
		return;
	}
	printf("status 0x%04x %s%s\n", s->status,
	       imc_mad_status_str(s->status), s->truncated ? " truncated" : "");
	for (size_t i = 0; i < n; i++) {
		const struct imc_mcmr *r = &recs[i];

		imc_gid_format(&r->mgid, m);
		imc_gid_format(&r->port_gid, p);
		if (i == 0 || !imc_gid_equal(&r->mgid, &recs[i - 1].mgid))
			printf("group %s mlid 0x%04x qkey 0x%08x pkey 0x%04x "
			       "mtu %u rate %u sl %u tclass %u flow_label 0x%05x "
			       "scope %u\n", m, r->mlid, r->qkey, r->pkey, r->mtu,
			       r->rate, r->sl, r->tclass, r->flow_label,
			       r->scope);
		printf("  member %s join_state 0x%x proxy_join %u\n", p,
		       r->join_state, r->proxy_join);
	}
}

/* IBA 15.2.5.17 (p923): to a request with SM_Key 0 the SA answers with
 * PortGID, JoinState and ProxyJoin zero, as OpenSM does; say so rather
 * than let the zeros pass for members. */
static void untrusted_note(const struct opts *o, const struct imc_mcmr *recs,
			   size_t n)
{
	size_t zeroed = 0;

	for (size_t i = 0; i < n; i++)
		zeroed += imc_gid_is_zero(&recs[i].port_gid) &&
			  !recs[i].join_state;
	if (o->smkey || !zeroed)
		return;
	fprintf(stderr,
		"ibmcast sa: note: SM_Key 0 is untrusted: the SA zeroed PortGID, JoinState and ProxyJoin of %zu of %zu records (IBA 15.2.5.17); give --smkey KEY (the SM's, OpenSM's default is 1) to see the members\n",
		zeroed, n);
}

static int do_query(struct opts *o, const struct imc_gid *mgid)
{
	struct session s;
	struct imc_sa_mad m;
	struct imc_mcmr r, *recs = NULL;
	size_t n = 0;
	int rc = IMC_EXIT_FAIL;

	if (session_open(&s, o, IMC_UMAD_CLIENT) < 0)
		goto out;
	memset(&r, 0, sizeof(r));
	if (mgid)
		r.mgid = *mgid;
	mcmr_mad(&m, UMAD_SA_METHOD_GET_TABLE, o->smkey,
		 mgid ? UMAD_SA_MCM_COMP_MASK_MGID : 0, &r);
	if (session_query(&s, &m) < 0)
		goto out;
	if (s.rec_size >= IMC_MCMR_SIZE && s.count) {
		recs = calloc(s.count, sizeof(*recs));
		if (!recs)
			goto out;
		for (size_t i = 0; i < s.count; i++)
			if (imc_mcmr_unpack(&recs[n], s.data + i * s.rec_size,
					    IMC_MCMR_SIZE) == IMC_MCMR_SIZE)
				n++;
	}
	/* Deterministic output: by MGID, then port GID. */
	if (n)
		qsort(recs, n, sizeof(*recs), rec_cmp);
	print_groups(&s, recs, n, o->json);
	untrusted_note(o, recs, n);
	rc = s.status == UMAD_STATUS_SUCCESS ? IMC_EXIT_OK : IMC_EXIT_FAIL;
out:
	free(recs);
	session_close(&s);
	return rc;
}

/* ---- serve-echo ---- */

struct echo {
	struct imc_umad *u;
	struct imc_loop *loop;
	uint16_t status;
	unsigned count, seen;
};

static uint8_t resp_method(uint8_t m)
{
	switch (m) {
	case UMAD_SA_METHOD_GET_TABLE:
	case UMAD_SA_METHOD_GET_TRACE_TABLE:
		return UMAD_SA_METHOD_GET_TABLE_RESP;
	case UMAD_SA_METHOD_DELETE:
		return UMAD_SA_METHOD_DELETE_RESP;
	case UMAD_SA_METHOD_GET_MULTI:
		return UMAD_SA_METHOD_GET_MULTI_RESP;
	default:
		return UMAD_METHOD_GET_RESP;
	}
}

static void on_request(void *arg, const uint8_t *mad, size_t len,
		       const struct imc_umad_addr *from)
{
	struct echo *e = arg;
	uint8_t out[IMC_MAD_SIZE] = { 0 };

	if (len < IMC_MAD_HDR_SIZE || mad[1] != UMAD_CLASS_SUBN_ADM ||
	    (mad[3] & UMAD_METHOD_RESP_MASK))
		return;
	memcpy(out, mad, len);
	out[3] = resp_method(mad[3]);
	out[4] = (uint8_t)(e->status >> 8);
	out[5] = (uint8_t)e->status;
	printf("request method 0x%02x attr 0x%02x%02x from lid %u qp %u\n",
	       mad[3], mad[16], mad[17], from->lid, from->qpn);
	if (imc_umad_reply(e->u, from, out, sizeof(out)) < 0)
		printf("reply failed\n");
	fflush(stdout);
	if (e->count && ++e->seen >= e->count)
		imc_loop_stop(e->loop);
}

static int do_serve(struct opts *o)
{
	struct session s;
	struct echo e;
	const struct imc_umad_port *p;
	imc_time_t end;
	int rc = IMC_EXIT_FAIL;

	if (session_open(&s, o, IMC_UMAD_SERVER) < 0)
		goto out;
	memset(&e, 0, sizeof(e));
	e.u = s.u;
	e.loop = s.loop;
	e.status = o->status;
	e.count = o->count;
	imc_umad_set_recv(s.u, on_request, &e);
	p = imc_umad_port(s.u);
	printf("ready lid %u sm_lid %u\n", p->lid, p->sm_lid);
	fflush(stdout);
	end = imc_loop_now(s.loop) + (imc_time_t)o->duration * IMC_NSEC_PER_SEC;
	imc_loop_run_until(s.loop, end);
	printf("served %u\n", e.seen);
	rc = !e.count || e.seen >= e.count ? IMC_EXIT_OK : IMC_EXIT_FAIL;
out:
	session_close(&s);
	return rc;
}

/* ---- entry ---- */

static int opt_state(const char *arg, void *f)
{
	return sa_tool_state(arg, f);
}

static int opt_method(const char *arg, void *f)
{
	int m = sa_tool_method(arg, 0x7f);

	if (m < 0)
		return m;
	*(int *)f = m;
	return 0;
}

static int opt_attr(const char *arg, void *f)
{
	return sa_tool_attr(arg, f);
}

static int opt_comp_mask(const char *arg, void *f)
{
	struct opts *o = imc_container_of(f, struct opts, comp);

	o->comp.is_auto = !strcmp(arg, "auto");
	return o->comp.is_auto ? 0 : sa_tool_num(arg, UINT64_MAX, &o->comp.mask);
}

#define O(name, f, lo, hi) SA_OPT_N(name, struct opts, f, lo, hi)
static const struct sa_opt options[] = {
	SA_OPT_S("device", struct opts, device),
	O("port", port, 0, 255),
	SA_OPT_F("json", struct opts, json),
	SA_OPT_CLIENT(struct opts),
	{ "state", SA_OPT_FN, offsetof(struct opts, state), 0, 0, 0, 0,
	  opt_state, -1 },
	{ "qkey", SA_OPT_NUM, SA_OPT_FIELD(struct opts, qkey), 0, UINT32_MAX,
	  1, NULL, offsetof(struct opts, qkey_set) },
	{ "pkey", SA_OPT_NUM, SA_OPT_FIELD(struct opts, pkey), 0, 0xffff, 1,
	  NULL, offsetof(struct opts, pkey_set) },
	SA_OPT_F("create", struct opts, create),
	{ "port-gid", SA_OPT_GID, offsetof(struct opts, port_gid), 0, 0, 0, 0,
	  NULL, offsetof(struct opts, port_gid_set) },
	{ "method", SA_OPT_FN, offsetof(struct opts, method), 0, 0, 0, 0,
	  opt_method, -1 },
	{ "attr", SA_OPT_FN, offsetof(struct opts, attr), 0, 0, 0, 0,
	  opt_attr, -1 },
	O("attr-mod", attr_mod, 0, UINT32_MAX),
	{ "comp-mask", SA_OPT_FN, offsetof(struct opts, comp), 0, 0, 0, 0,
	  opt_comp_mask, -1 },
	SA_OPT_S("record", struct opts, record),
	SA_OPT_S("data", struct opts, data),
	SA_OPT_S("scenario", struct opts, scenario),
	{ "seed", SA_OPT_NUM, SA_OPT_FIELD(struct opts, seed), 0, UINT64_MAX,
	  1, NULL, offsetof(struct opts, seed_set) },
	O("status", status, 0, 0xffff),
	O("count", count, 0, 1000000),
	O("duration", duration, 0, 86400),
};
#undef O

/* The SA of a simulated run, at its end: `ibmcast run --sa-show`'s last
 * snapshot. */
static int do_show_scenario(const struct opts *o)
{
	struct imc_scenario_run_opts ro = { 0 };
	struct imc_scenario_result r;
	struct imc_scenario *s = NULL;
	struct imc_scn_sa_show *sh = NULL;
	char err[1024];
	int rc;

	rc = imc_scenario_parse_file(o->scenario, NULL, &s, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err);
		return IMC_EXIT_USAGE;
	}
	rc = imc_scn_sa_show_create(s, &sh);
	if (rc) {
		fprintf(stderr, PROG ": %s: %s\n", o->scenario,
			rc == -ENOENT ? "the scenario has no sa line" :
			strerror(-rc));
		imc_scenario_destroy(s);
		return IMC_EXIT_USAGE;
	}
	ro.seed = o->seed;
	ro.seed_set = o->seed_set;
	rc = imc_scenario_run(s, &ro, &r, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err);
	} else {
		rc = imc_scn_sa_show_print_last(sh, stdout, o->json);
		imc_scenario_result_free(&r);
	}
	imc_scn_sa_show_destroy(sh);
	imc_scenario_destroy(s);
	return rc ? IMC_EXIT_FAIL : IMC_EXIT_OK;
}

static int run(int argc, char **argv)
{
	struct opts o;
	struct imc_gid mgid;
	const char *sub;
	int rc;

	memset(&o, 0, sizeof(o));
	o.timeout = IMC_SA_DEFAULT_TIMEOUT;
	o.retries = IMC_SA_DEFAULT_RETRIES;
	o.state = UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER;
	o.pkey = 0xffff;
	o.method = -1;
	o.attr = UMAD_SA_ATTR_MCMEMBER_REC;
	o.comp.is_auto = true;
	o.duration = 30;
	if (argc < 2)
		return sa_tool_usage(PROG, "missing subcommand");
	sub = argv[1];
	optind = 2;
	rc = sa_tool_getopt(PROG, argc, argv, options,
			    IMC_ARRAY_SIZE(options), &o);
	if (rc)
		return rc;

	if (!strcmp(sub, "send")) {
		if (optind != argc)
			return sa_tool_usage(PROG, "send takes no operands");
		if (o.method < 0)
			return sa_tool_usage(PROG, "send needs --method");
		return do_send(&o);
	}
	if (!strcmp(sub, "serve-echo")) {
		if (optind != argc)
			return sa_tool_usage(PROG, "serve-echo takes no operands");
		return do_serve(&o);
	}
	if (!strcmp(sub, "show")) {
		if (o.scenario) {
			if (optind != argc)
				return sa_tool_usage(PROG, "show --scenario takes no MGID");
			return do_show_scenario(&o);
		}
		if (optind == argc)
			return do_query(&o, NULL);
		sub = "query";
	} else if (o.scenario) {
		return sa_tool_usage(PROG, "--scenario is for show");
	}
	if (strcmp(sub, "query") && strcmp(sub, "join") && strcmp(sub, "leave"))
		return sa_tool_usage(PROG, "unknown subcommand");
	if (optind + 1 != argc)
		return sa_tool_usage(PROG, "expected one MGID");
	if (!strcmp(sub, "query") && !strcmp(argv[optind], "all"))
		return do_query(&o, NULL);
	if (sa_tool_gid(argv[optind], &mgid) < 0)
		return sa_tool_usage(PROG, "bad MGID");
	if (!strcmp(sub, "query"))
		return do_query(&o, &mgid);
	return do_join_leave(&o, &mgid, !strcmp(sub, "join"));
}

const struct imc_cmd imc_cmd_sa = {
	.name = "sa",
	.summary = "query, join, leave and raw requests at a real SA (libibumad)",
	.run = run,
	.help = help,
};
