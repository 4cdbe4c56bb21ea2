/* ibmcast sa-serve: the SA engine as a second SA beside OpenSM (on
 * InfiniBand, or on ibsim through umad2sim), and the client that holds it
 * up against OpenSM: a conformance driver that sends the same requests to
 * both SAs and compares the answers. (`ibmcast storm` loads either.) */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_client.h"
#include "ibmcast/sa_records.h"
#include "ibmcast/sa_serve.h"
#include "ibmcast/umad.h"
#include "sa_tool.h"
#include "sigwatch.h"
#include "tools.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: ibmcast sa-serve [serve] [--device D] [--port P] [--smkey K]\n"
		"                        [--ttl MS] [--window N] [--duration SECS] [--list]\n"
		"                        [--transport auto|umad|ibsim]\n"
		"       ibmcast sa-serve compare --imc-lid LID [--osm-lid LID] [--tag T]\n"
		"                        [--device D] [--port P] CASEFILE\n"
		"\n"
		"serve    answers SA requests addressed to this port's LID with ibmcast's\n"
		"         SA engine (sets IsSM on the port), beside the SM that runs the\n"
		"         fabric. Its port directory comes from the SM's SA: PortInfoRecord,\n"
		"         NodeRecord and P_KeyTableRecord Gets per LID. Prints 'ready lid L\n"
		"         sm_lid S ports N' once the scan is done (--list: then one line per\n"
		"         port), and its counters when it stops (SIGINT, SIGTERM, or after\n"
		"         --duration). --smkey: SM_Key of the P_KeyTableRecord queries\n"
		"         (default 1; 0: assume P_Key 0xFFFF); --ttl: how long a port found\n"
		"         absent stays absent (default 1000 ms); --window: queries in\n"
		"         flight at the SM (default 32). --transport: umad goes through\n"
		"         libibumad (on ibsim: umad2sim), ibsim speaks ibsim's socket\n"
		"         directly, auto (the default) picks ibsim when umad2sim is\n"
		"         preloaded. compare takes it too (default umad).\n"
		"compare  runs the cases of CASEFILE against the SA at --osm-lid (default\n"
		"         the SM's LID) and the one at --imc-lid, from this one client, and\n"
		"         prints per case the statuses of both and whether they agree.\n"
		"         Exit 1 when a case differs without an expect-differs line, or has\n"
		"         one and agrees. --tag (0-255, default 0) shifts the case\n"
		"         numbers ($C) by TAG * 256, so that runs against the same\n"
		"         OpenSM use distinct groups.\n"
		"\n"
		"To load an SA (OpenSM or this one, with --dlid) with joins, leaves\n"
		"and creates: ibmcast storm.\n");
}

#define PROG "ibmcast sa-serve"

/* ------------------------------------------------------------------ */
/* Options. */

struct opts {
	const char *device;
	unsigned port;
	uint64_t smkey;
	unsigned ttl_ms;
	unsigned window;
	unsigned duration;
	bool list;
	uint16_t osm_lid;
	uint16_t imc_lid;
	unsigned tag;
	const char *transport;      /* NULL: the verb's default */
	unsigned coalesce_us;
	bool tag_set;
};

/* --transport: serve defaults to auto, the clients to umad (the path a
 * real client takes, as OpenSM's clients do). */
static enum imc_umad_backend backend_of(const struct opts *o, bool server)
{
	const char *t = o->transport ? o->transport : server ? "auto" : "umad";

	if (!strcmp(t, "ibsim"))
		return IMC_UMAD_IBSIM;
	if (!strcmp(t, "auto"))
		return imc_umad_backend_auto();
	return IMC_UMAD_LIBIBUMAD;
}

/* ------------------------------------------------------------------ */
/* serve */

static int print_port(void *arg, const struct imc_sa_port *p)
{
	char g[IMC_GID_STRLEN];

	imc_gid_format(&p->gid, g);
	printf("port lid %u gid %s guid 0x%016" PRIx64 " port_num %u mtu %u "
	       "rate %u%s pkeys", p->lid, g, imc_gid_guid(&p->gid),
	       p->port_num, p->mtu, p->rate, p->switch_port0 ? " switch" : "");
	for (size_t i = 0; i < p->n_pkeys; i++)
		printf(" 0x%04x", p->pkeys[i]);
	printf("\n");
	return 0;
}

static int do_serve(const struct opts *o)
{
	struct imc_sa_serve_config cfg;
	struct imc_sa_serve_stats st;
	struct imc_sa_stats ss;
	struct imc_sa_serve *s = NULL;
	struct imc_loop *loop = NULL;
	struct sigwatch sw;
	imc_time_t end;
	int r, rc = IMC_EXIT_FAIL;

	memset(&sw, 0, sizeof(sw));
	imc_sa_serve_config_init(&cfg);
	cfg.device = o->device;
	cfg.port = o->port;
	cfg.backend = backend_of(o, true);
	cfg.coalesce = (imc_time_t)o->coalesce_us * IMC_NSEC_PER_USEC;
	cfg.query_sm_key = o->smkey;
	cfg.miss_ttl = (imc_time_t)o->ttl_ms * IMC_NSEC_PER_MSEC;
	cfg.window = o->window;
	cfg.sa.hash_seed = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
	r = imc_loop_create_realtime(&loop);
	if (r < 0) {
		fprintf(stderr, "ibmcast sa-serve: loop: %s\n", strerror(-r));
		return IMC_EXIT_FAIL;
	}
	if (sigwatch_start(&sw, loop, NULL) < 0) {
		fprintf(stderr, "ibmcast sa-serve: signals: %s\n",
			strerror(errno));
		goto out;
	}
	r = imc_sa_serve_open(loop, &cfg, &s);
	if (r < 0) {
		fprintf(stderr, "ibmcast sa-serve: cannot serve on %s port %u: %s\n",
			o->device ? o->device : "(default)", o->port,
			strerror(-r));
		goto out;
	}
	end = imc_loop_now(loop) + (imc_time_t)o->duration * IMC_NSEC_PER_SEC;
	while (!imc_sa_serve_ready(s) && !sw.hits &&
	       (!o->duration || imc_loop_now(loop) < end))
		if (imc_loop_run_once(loop) < 0)
			goto out;
	imc_sa_serve_get_stats(s, &st);
	printf("ready lid %u sm_lid %u ports %u scan_ms %.1f\n",
	       imc_sa_serve_port(s)->lid, imc_sa_serve_port(s)->sm_lid,
	       st.ports, (double)st.scan_time / 1e6);
	if (o->list)
		imc_sa_serve_foreach_port(s, print_port, NULL);
	fflush(stdout);
	/* A signal taken during the scan has already stopped a round. */
	if (!sw.hits) {
		if (o->duration)
			imc_loop_run_until(loop, end);
		else
			imc_loop_run(loop);
	}
	imc_sa_serve_get_stats(s, &st);
	imc_sa_get_stats(imc_sa_serve_sa(s), &ss);
	printf("stopped requests %" PRIu64 " answers %" PRIu64 " parked %"
	       PRIu64 " lookups %" PRIu64 " absent %" PRIu64 " queries %"
	       PRIu64 " query_errors %" PRIu64 " groups %u created %" PRIu64
	       " mads_in %" PRIu64 " rx_batches %" PRIu64 "\n", st.requests,
	       st.answers, st.parked, st.lookups, st.lookups_absent,
	       st.queries, st.query_errors, ss.groups, ss.groups_created,
	       st.port.received, st.port.rx_batches);
	rc = IMC_EXIT_OK;
out:
	fflush(stdout);
	imc_sa_serve_close(s);
	sigwatch_stop(&sw);
	imc_loop_destroy(loop);
	return rc;
}

/* ------------------------------------------------------------------ */
/* A raw SA client: whole MADs out, answers matched on the low 32 bits
 * of the TID (ibsim rewrites the upper half), one request at a time. */

struct raw {
	struct imc_loop *loop;
	struct imc_umad *u;
	uint32_t tid;
	bool waiting, got;
	size_t len;
	uint8_t ans[IMC_MAD_SIZE];
	struct imc_timer timer;
	bool timed_out;
	uint32_t probe_tid;         /* the liveness probe's, 0 when none */
	bool probe_got;
};

/* The common MAD header of mad (at least IMC_MAD_HDR_SIZE bytes). */
static struct imc_mad_hdr mad_hdr(const uint8_t *mad)
{
	struct imc_mad_hdr h;

	imc_mad_hdr_unpack(&h, mad, IMC_MAD_HDR_SIZE);
	return h;
}

static void raw_recv(void *arg, const uint8_t *mad, size_t len,
		     const struct imc_umad_addr *from)
{
	struct raw *w = arg;

	(void)from;
	if (!w->waiting || len < IMC_MAD_HDR_SIZE ||
	    !(mad[3] & UMAD_METHOD_RESP_MASK))
		return;
	if (w->probe_tid && (uint32_t)mad_hdr(mad).tid == w->probe_tid) {
		w->probe_got = true;
		imc_loop_stop(w->loop);
		return;
	}
	if ((uint32_t)mad_hdr(mad).tid != w->tid)
		return;
	memset(w->ans, 0, sizeof(w->ans));
	memcpy(w->ans, mad, len);
	w->len = len;
	w->got = true;
	w->waiting = false;
	imc_loop_stop(w->loop);
}

static void raw_timeout(struct imc_timer *t)
{
	struct raw *w = imc_container_of(t, struct raw, timer);

	w->timed_out = true;
	imc_loop_stop(w->loop);
}

/* Serves the loop for at most ms, until the answer came (or, with
 * probe, the probe's answer). */
static void raw_wait(struct raw *w, unsigned ms, bool probe)
{
	w->waiting = true;
	w->timed_out = false;
	imc_timer_arm_in(w->loop, &w->timer, ms * IMC_NSEC_PER_MSEC);
	while (!w->got && !(probe && w->probe_got) && !w->timed_out)
		if (imc_loop_run(w->loop) < 0)
			break;
	imc_timer_cancel(w->loop, &w->timer);
}

/* m as a Get of attribute attr from the SA (IBA 15.2.1.1), the rest
 * zero. */
static void sa_get(struct imc_sa_mad *m, uint16_t attr)
{
	memset(m, 0, sizeof(*m));
	m->mad.base_version = 1;
	m->mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
	m->mad.class_version = UMAD_SA_CLASS_VERSION;
	m->mad.method = UMAD_METHOD_GET;
	m->mad.attr_id = attr;
}

/* Sends a Get(ClassPortInfo), which every SA answers, to dlid: true
 * when its answer came within 20 s (or the request's came first). A
 * loaded machine may delay an SA past the 300 ms a request waits; the
 * probe tells such an SA from one that does not answer the request. */
static bool raw_probe(struct raw *w, const struct imc_umad_addr *to)
{
	struct imc_sa_mad m;
	uint8_t buf[IMC_MAD_SIZE];

	sa_get(&m, UMAD_ATTR_CLASS_PORT_INFO);
	/* The TID after the request's; raw_call() skips it afterwards. */
	m.mad.tid = w->tid + 1;
	imc_sa_mad_pack(&m, buf, sizeof(buf));
	w->probe_tid = w->tid + 1;
	w->probe_got = false;
	if (imc_umad_send(w->u, to, buf, sizeof(buf)) >= 0)
		raw_wait(w, 20000, true);
	w->probe_tid = 0;
	return w->probe_got;
}

/* Sends mad (len bytes) to dlid and waits for the answer: 1 with it in
 * w->ans, 0 when there is none, or a negative errno. None means two
 * attempts of 300 ms went unanswered, then a probe was answered, and
 * the request's answer did not follow within 300 ms more (an SA may
 * answer out of order). The TID of mad is replaced. */
static int raw_call(struct raw *w, uint16_t dlid, uint8_t *mad, size_t len)
{
	struct imc_umad_addr to = {
		.lid = dlid,
		.qpn = IMC_UMAD_QP1,
		.qkey = IMC_UMAD_GSI_QKEY,
		.sl = imc_umad_port(w->u)->sm_sl,
	};
	uint32_t tid = ++w->tid;
	struct imc_mad_hdr h = mad_hdr(mad);

	h.tid = tid;
	imc_mad_hdr_pack(&h, mad, IMC_MAD_HDR_SIZE);
	w->got = false;
	for (int attempt = 0; attempt < 2 && !w->got; attempt++) {
		int r = imc_umad_send(w->u, &to, mad, len);

		if (r < 0)
			return r;
		raw_wait(w, 300, false);
	}
	if (!w->got) {
		bool alive = raw_probe(w, &to);

		if (!w->got)
			raw_wait(w, 300, false);
		w->tid = tid + 1;
		if (!w->got && !alive)
			fprintf(stderr, "ibmcast sa-serve: LID %u answers "
				"nothing, not even ClassPortInfo\n", dlid);
	}
	w->waiting = false;
	return w->got ? 1 : 0;
}

static int raw_open(struct raw *w, const struct opts *o)
{
	struct imc_umad_config uc = {
		.device = o->device, .port = o->port, .mode = IMC_UMAD_CLIENT,
		.backend = backend_of(o, false),
	};
	int r;

	memset(w, 0, sizeof(*w));
	imc_timer_init(&w->timer, raw_timeout);
	r = imc_loop_create_realtime(&w->loop);
	if (r < 0)
		return r;
	r = imc_umad_open(w->loop, &uc, &w->u);
	if (r < 0) {
		fprintf(stderr, "ibmcast sa-serve: cannot open %s port %u: %s\n",
			o->device ? o->device : "(default)", o->port,
			strerror(-r));
		imc_port_hint("ibmcast sa-serve", r);
		return r;
	}
	imc_umad_set_recv(w->u, raw_recv, w);
	w->tid = (uint32_t)(time(NULL) << 12) ^ (uint32_t)getpid() << 20;
	return 0;
}

static void raw_close(struct raw *w)
{
	if (w->u)
		imc_umad_set_recv(w->u, NULL, NULL);
	imc_umad_close(w->u);
	if (w->loop)
		imc_loop_destroy(w->loop);
}

/* The port GID of the port at lid, from the NodeRecord the SA at dlid
 * gives (the subnet prefix is this port's). */
static int gid_of_lid(struct raw *w, uint16_t dlid, uint16_t lid,
		      struct imc_gid *out)
{
	struct imc_sa_mad m;
	struct imc_node_rec n;
	uint8_t buf[IMC_MAD_SIZE];

	sa_get(&m, IMC_SA_ATTR_NODE_REC);
	m.sa.comp_mask = IMC_NR_COMP_LID;
	memset(&n, 0, sizeof(n));
	n.lid = lid;
	imc_node_rec_pack(&n, m.data, sizeof(m.data));
	imc_sa_mad_pack(&m, buf, sizeof(buf));
	if (raw_call(w, dlid, buf, sizeof(buf)) != 1 || mad_hdr(w->ans).status ||
	    imc_node_rec_unpack(&n, w->ans + IMC_SA_DATA_OFFSET,
				w->len - IMC_SA_DATA_OFFSET) < 0)
		return -ENOENT;
	imc_gid_set(out, imc_gid_prefix(&imc_umad_port(w->u)->gid),
		    n.info.port_guid);
	return 0;
}

/* ------------------------------------------------------------------ */
/* compare: the case file.
 *
 *   case NAME
 *   expect-differs: ID reason (IBA clause)
 *   METHOD [attr=A] [smkey=K] [mask=M] [rec=F=V,...] [data=HEX] [bv=N]
 *          [cv=N] [attroff=N] [attrmod=N] [len=N] [save=VAR]
 *   end
 *
 * Values may name $SELF (this port's GID), $SM (the SM's port), $IMC
 * (ibmcast's SA port), $BADPREFIX (this port's GUID under fe81::/64),
 * $C (the case number, hex) and variables saved by earlier requests of
 * the case (save=VAR: the MGID of the answer's first record). */

enum { MAX_REQS = 16, MAX_VARS = 8, LINE_MAX_LEN = 1024 };

struct var {
	char name[16];
	char value[2][IMC_GID_STRLEN]; /* per side */
};

struct ccase {
	char name[64];
	char differs[256];
	unsigned line;
	unsigned nreq;
	char *req[MAX_REQS];
};

struct side_result {
	char status[MAX_REQS][8];
	char *text[MAX_REQS];       /* normalized answer */
};

struct ctx {
	struct raw w;
	uint16_t lid[2];            /* 0 OpenSM, 1 ibmcast */
	char self[IMC_GID_STRLEN], sm[IMC_GID_STRLEN], imc[IMC_GID_STRLEN];
	char badprefix[IMC_GID_STRLEN];
	struct var vars[MAX_VARS];
	unsigned nvars;
	unsigned case_no;
	unsigned case_base;         /* --tag << 8: keeps runs apart */
};

/* Expands $NAME references of s for side into out. */
static int expand(const struct ctx *c, int side, const char *s, char *out,
		  size_t len)
{
	size_t o = 0;

	while (*s) {
		char name[32];
		const char *v = NULL;
		char num[16];
		size_t n = 0;

		if (*s != '$') {
			if (o + 1 >= len)
				return -ENOSPC;
			out[o++] = *s++;
			continue;
		}
		s++;
		while ((isalnum((unsigned char)*s) || *s == '_') &&
		       n + 1 < sizeof(name))
			name[n++] = *s++;
		name[n] = '\0';
		if (!strcmp(name, "SELF"))
			v = c->self;
		else if (!strcmp(name, "SM"))
			v = c->sm;
		else if (!strcmp(name, "IMC"))
			v = c->imc;
		else if (!strcmp(name, "BADPREFIX"))
			v = c->badprefix;
		else if (!strcmp(name, "C")) {
			snprintf(num, sizeof(num), "%x",
				 c->case_base + c->case_no);
			v = num;
		} else {
			for (unsigned i = 0; i < c->nvars; i++)
				if (!strcmp(c->vars[i].name, name))
					v = c->vars[i].value[side];
		}
		if (!v) {
			fprintf(stderr, "ibmcast sa-serve: unknown variable $%s\n",
				name);
			return -EINVAL;
		}
		if (o + strlen(v) >= len)
			return -ENOSPC;
		memcpy(out + o, v, strlen(v));
		o += strlen(v);
	}
	out[o] = '\0';
	return 0;
}

/* A request line as its key=value words fill it in. */
struct req {
	struct imc_sa_mad m;
	struct imc_mcmr r;
	uint64_t mask;
	bool mask_set, have_rec;
	int bv, cv, attroff;
	struct { size_t off, n; uint8_t b[16]; } raws[4];
	size_t nraw;
	size_t *len;
};

/* bv=, cv=, attroff=, attrmod= and len=. */
static int req_num(struct req *q, const char *key, const char *val)
{
	uint64_t v = 0;
	int rc = sa_tool_num(val, UINT32_MAX, &v);

	if (!strcmp(key, "bv"))
		q->bv = (int)(v & 0xff);
	else if (!strcmp(key, "cv"))
		q->cv = (int)(v & 0xff);
	else if (!strcmp(key, "attroff"))
		q->attroff = (int)(v & 0xffff);
	else if (!strcmp(key, "attrmod"))
		q->m.mad.attr_mod = (uint32_t)v;
	else if (v < IMC_MAD_HDR_SIZE || v > IMC_MAD_SIZE)
		rc = -EINVAL;
	else
		*q->len = v;
	return rc;
}

/* raw=OFF:HEX patches the data area after rec=. */
static int req_raw(struct req *q, char *val)
{
	char *colon = strchr(val, ':');
	uint64_t v;
	int rc;

	if (!colon || q->nraw == IMC_ARRAY_SIZE(q->raws))
		return -EINVAL;
	*colon = '\0';
	rc = sa_tool_num(val, IMC_SA_DATA_SIZE - 1, &v);
	q->raws[q->nraw].off = (size_t)v;
	q->raws[q->nraw].n = strlen(colon + 1) / 2;
	if (!rc && q->raws[q->nraw].off + q->raws[q->nraw].n >
		   IMC_SA_DATA_SIZE)
		rc = -EINVAL;
	if (!rc)
		rc = sa_tool_hex(colon + 1, q->raws[q->nraw].b,
				 sizeof(q->raws[q->nraw].b));
	q->nraw++;
	return rc;
}

/* One key=value word of a request line. */
static int req_word(struct req *q, const char *key, char *val, char *save,
		    size_t save_len)
{
	if (!strcmp(key, "attr"))
		return sa_tool_attr(val, &q->m.mad.attr_id);
	if (!strcmp(key, "smkey"))
		return sa_tool_num(val, UINT64_MAX, &q->m.sa.sm_key);
	if (!strcmp(key, "mask")) {
		q->mask_set = true;
		return sa_tool_num(val, UINT64_MAX, &q->mask);
	}
	if (!strcmp(key, "rec")) {
		uint64_t mm = 0;
		int rc;

		q->have_rec = true;
		rc = sa_tool_record(PROG, val, NULL, &q->r, &mm);
		if (!q->mask_set)
			q->mask |= mm;
		return rc;
	}
	if (!strcmp(key, "data"))
		return sa_tool_hex(val, q->m.data, sizeof(q->m.data));
	if (!strcmp(key, "bv") || !strcmp(key, "cv") ||
	    !strcmp(key, "attroff") || !strcmp(key, "attrmod") ||
	    !strcmp(key, "len"))
		return req_num(q, key, val);
	if (!strcmp(key, "raw"))
		return req_raw(q, val);
	if (!strcmp(key, "save")) {
		snprintf(save, save_len, "%s", val);
		return 0;
	}
	return -EINVAL;
}

/* Builds the MAD of one request line (already expanded). */
static int build(const char *line, uint8_t *mad, size_t *len, char *save,
		 size_t save_len)
{
	char *copy = strdup(line), *tok, *sp = NULL;
	struct req q;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	memset(&q, 0, sizeof(q));
	q.bv = 1;
	q.cv = UMAD_SA_CLASS_VERSION;
	q.attroff = -1;
	q.len = len;
	q.m.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	*len = IMC_MAD_SIZE;
	save[0] = '\0';
	tok = strtok_r(copy, " \t", &sp);
	rc = tok ? sa_tool_method(tok, 0xff) : -EINVAL;
	if (rc >= 0) {
		q.m.mad.method = (uint8_t)rc;
		rc = 0;
	}
	while (!rc && (tok = strtok_r(NULL, " \t", &sp))) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			rc = -EINVAL;
			break;
		}
		*eq++ = '\0';
		rc = req_word(&q, tok, eq, save, save_len);
	}
	free(copy);
	if (rc)
		return rc;
	if (q.have_rec)
		imc_mcmr_pack(&q.r, q.m.data, sizeof(q.m.data));
	for (size_t i = 0; i < q.nraw; i++)
		memcpy(q.m.data + q.raws[i].off, q.raws[i].b, q.raws[i].n);
	q.m.mad.base_version = 1;
	q.m.mad.mgmt_class = UMAD_CLASS_SUBN_ADM;
	q.m.mad.class_version = UMAD_SA_CLASS_VERSION;
	q.m.sa.comp_mask = q.mask;
	if (q.attroff >= 0)
		q.m.sa.attr_offset = (uint16_t)q.attroff;
	if (imc_sa_mad_pack(&q.m, mad, IMC_MAD_SIZE) < 0)
		return -EINVAL;
	mad[0] = (uint8_t)q.bv;
	mad[2] = (uint8_t)q.cv;
	return 0;
}

/* An answer in a form both SAs can be compared on: status, method,
 * attribute, then the records (MCMemberRecords field by field, MLID
 * left out, MGIDs of saved variables by name; others in hex), sorted. */
static char *normalize(const struct ctx *c, int side, const uint8_t *a,
		       size_t len)
{
	size_t valid = len < IMC_MAD_SIZE ? len : IMC_MAD_SIZE;
	struct imc_sa_hdr sa = { 0 };
	unsigned off8 = valid >= IMC_SA_DATA_OFFSET &&
		imc_sa_hdr_unpack(&sa, a + IMC_SA_DATA_OFFSET - IMC_SA_HDR_SIZE,
				  IMC_SA_HDR_SIZE) >= 0 ? sa.attr_offset : 0;
	uint16_t attr = mad_hdr(a).attr_id;
	size_t step = off8 ? off8 * 8u : IMC_SA_DATA_SIZE;
	char recs[4][400];
	unsigned n = 0;
	char *out;
	size_t olen;

	if (a[3] != UMAD_SA_METHOD_GET_TABLE_RESP)
		step = IMC_SA_DATA_SIZE;
	for (size_t o = IMC_SA_DATA_OFFSET; o + (attr ==
	     UMAD_SA_ATTR_MCMEMBER_REC ? IMC_MCMR_SIZE : 1) <= valid &&
	     n < 4 && (a[3] != UMAD_SA_METHOD_GET_TABLE_RESP || off8);
	     o += step) {
		const uint8_t *p = a + o;
		size_t plen = valid - o < step ? valid - o : step;
		bool zero = true;

		for (size_t k = 0; k < plen; k++)
			zero &= !p[k];
		if (a[3] == UMAD_SA_METHOD_GET_TABLE_RESP && zero)
			break;
		if (attr == UMAD_SA_ATTR_MCMEMBER_REC) {
			struct imc_mcmr r;
			char mg[IMC_GID_STRLEN], pg[IMC_GID_STRLEN];

			imc_mcmr_unpack(&r, p, IMC_MCMR_SIZE);
			imc_gid_format(&r.mgid, mg);
			imc_gid_format(&r.port_gid, pg);
			for (unsigned i = 0; i < c->nvars; i++)
				if (!strcmp(mg, c->vars[i].value[side]))
					snprintf(mg, sizeof(mg), "$%s",
						 c->vars[i].name);
			snprintf(recs[n], sizeof(recs[n]),
				 "mgid=%s port_gid=%s qkey=0x%x mtu=%u:%u "
				 "tclass=%u pkey=0x%04x rate=%u:%u life=%u:%u "
				 "sl=%u flow=0x%x hop=%u scope=%u join=0x%x "
				 "proxy=%u resv49=0x%x", mg, pg, r.qkey,
				 r.mtu_sel, r.mtu,
				 r.tclass, r.pkey, r.rate_sel, r.rate,
				 r.life_sel, r.life, r.sl, r.flow_label,
				 r.hop_limit, r.scope, r.join_state,
				 r.proxy_join, r.resv49);
		} else if (attr == UMAD_ATTR_CLASS_PORT_INFO &&
			   plen >= IMC_CLASS_PORT_INFO_SIZE) {
			struct imc_class_port_info ci;

			imc_class_port_info_unpack(&ci, p, plen);
			snprintf(recs[n], sizeof(recs[n]),
				 "cpi base=%u class=%u cap=0x%04x cap2=0x%x "
				 "resp_time=%u redirect_qp=%u qkey=0x%x",
				 ci.base_version, ci.class_version, ci.cap_mask,
				 ci.cap_mask2, ci.resp_time, ci.redirect_qp,
				 ci.redirect_qkey);
		} else {
			size_t k, h = plen < 64 ? plen : 64;
			int w = 0;

			for (k = 0; k < h; k++)
				w += snprintf(recs[n] + w, sizeof(recs[n]) - w,
					      "%02x", p[k]);
		}
		n++;
		if (a[3] != UMAD_SA_METHOD_GET_TABLE_RESP)
			break;
	}
	/* GetTable order is the SA's own (docs/conformance.md 5). */
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && strcmp(recs[j - 1], recs[j]) > 0;
		     j--) {
			char t[400];

			memcpy(t, recs[j], sizeof(t));
			memcpy(recs[j], recs[j - 1], sizeof(t));
			memcpy(recs[j - 1], t, sizeof(t));
		}
	olen = 64 + n * 402;
	out = malloc(olen);
	if (!out)
		return NULL;
	snprintf(out, olen, "status=0x%04x method=0x%02x attr=0x%04x records=%u",
		 mad_hdr(a).status, a[3], attr, n);
	for (unsigned i = 0; i < n; i++) {
		strcat(out, "\n    ");
		strcat(out, recs[i]);
	}
	return out;
}

static int add_var(struct ctx *c, const char *name, int side,
		   const uint8_t *a, size_t len)
{
	struct imc_gid g;
	unsigned i;

	for (i = 0; i < c->nvars; i++)
		if (!strcmp(c->vars[i].name, name))
			break;
	if (i == c->nvars) {
		if (c->nvars == MAX_VARS)
			return -ENOSPC;
		c->nvars++;
		memset(&c->vars[i], 0, sizeof(c->vars[i]));
		snprintf(c->vars[i].name, sizeof(c->vars[i].name), "%s", name);
	}
	if (len < IMC_SA_DATA_OFFSET + 16)
		return -EMSGSIZE;
	memcpy(g.raw, a + IMC_SA_DATA_OFFSET, 16);
	imc_gid_format(&g, c->vars[i].value[side]);
	return 0;
}

static int run_side(struct ctx *c, const struct ccase *k, int side,
		    struct side_result *res)
{
	for (unsigned i = 0; i < k->nreq; i++) {
		char line[LINE_MAX_LEN], save[16];
		uint8_t mad[IMC_MAD_SIZE];
		size_t len;
		int r;

		if (expand(c, side, k->req[i], line, sizeof(line)) < 0 ||
		    build(line, mad, &len, save, sizeof(save)) < 0) {
			fprintf(stderr, "%s: bad request '%s'\n", k->name,
				k->req[i]);
			return -EINVAL;
		}
		r = raw_call(&c->w, c->lid[side], mad, len);
		if (r < 0)
			return r;
		if (r == 0) {
			snprintf(res->status[i], sizeof(res->status[i]), "none");
			res->text[i] = strdup("no answer");
			if (save[0])
				add_var(c, save, side, mad, 0);
			continue;
		}
		snprintf(res->status[i], sizeof(res->status[i]), "%04x",
			 mad_hdr(c->w.ans).status);
		if (save[0] && add_var(c, save, side, c->w.ans, c->w.len) < 0)
			return -EINVAL;
		res->text[i] = normalize(c, side, c->w.ans, c->w.len);
		if (!res->text[i])
			return -ENOMEM;
	}
	return 0;
}

static void statuses(const struct ccase *k, const struct side_result *r,
		     char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < k->nreq && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%s", i ? "," : "",
				      r->status[i]);
}

/* Runs one case on both sides; returns 0 when the result is what the
 * case says (agree, or differ with expect-differs), 1 otherwise. */
static int run_case(struct ctx *c, const struct ccase *k, bool verbose)
{
	struct side_result res[2];
	char st[2][128];
	bool same = true;
	int bad = 0;
	const char *verdict;

	memset(res, 0, sizeof(res));
	c->nvars = 0;
	for (int side = 0; side < 2; side++)
		if (run_side(c, k, side, &res[side]) < 0) {
			printf("%-28s | error running the case\n", k->name);
			bad = 1;
			goto out;
		}
	for (unsigned i = 0; i < k->nreq; i++)
		if (strcmp(res[0].text[i], res[1].text[i]))
			same = false;
	statuses(k, &res[0], st[0], sizeof(st[0]));
	statuses(k, &res[1], st[1], sizeof(st[1]));
	if (same && !k->differs[0]) {
		verdict = "agree";
	} else if (!same && k->differs[0]) {
		verdict = "differs(documented)";
	} else if (same) {
		verdict = "AGREES, but expect-differs";
		bad = 1;
	} else {
		verdict = "DIFFERS (undocumented)";
		bad = 1;
	}
	printf("%-28s | %-22s | %-22s | %s", k->name, st[0], st[1], verdict);
	if (!same && k->differs[0])
		printf(" %.*s", (int)strcspn(k->differs, " "), k->differs);
	printf("\n");
	if (!same || bad || verbose)
		for (unsigned i = 0; i < k->nreq; i++) {
			bool eq = !strcmp(res[0].text[i], res[1].text[i]);

			if (eq && !verbose)
				continue;
			printf("      request %u: %s\n", i + 1, k->req[i]);
			printf("      OpenSM  %s\n", res[0].text[i]);
			if (!eq)
				printf("      ibmcast %s\n", res[1].text[i]);
		}
out:
	for (int side = 0; side < 2; side++)
		for (unsigned i = 0; i < MAX_REQS; i++)
			free(res[side].text[i]);
	return bad;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* The tally of a comparison file. */
struct tally {
	unsigned cases, failed, agree, documented;
};

/* Opens the port and finds the GIDs the cases name ($SELF, $SM, $IMC,
 * $BADPREFIX); prints the heading. */
static int compare_setup(struct ctx *c, const struct opts *o)
{
	struct imc_gid g;

	if (raw_open(&c->w, o) < 0)
		return -1;
	c->lid[0] = o->osm_lid ? o->osm_lid : imc_umad_port(c->w.u)->sm_lid;
	c->lid[1] = o->imc_lid;
	g = imc_umad_port(c->w.u)->gid;
	imc_gid_format(&g, c->self);
	g.raw[1] = 0x81;
	imc_gid_format(&g, c->badprefix);
	if (gid_of_lid(&c->w, c->lid[0], imc_umad_port(c->w.u)->sm_lid,
		       &g) < 0) {
		fprintf(stderr, "ibmcast sa-serve: no NodeRecord of the SM\n");
		return -1;
	}
	imc_gid_format(&g, c->sm);
	if (gid_of_lid(&c->w, c->lid[0], c->lid[1], &g) < 0) {
		fprintf(stderr, "ibmcast sa-serve: no NodeRecord of LID %u\n",
			c->lid[1]);
		return -1;
	}
	imc_gid_format(&g, c->imc);
	printf("client %s; OpenSM at LID %u (%s); ibmcast at LID %u (%s)\n",
	       c->self, c->lid[0], c->sm, c->lid[1], c->imc);
	printf("%-28s | %-22s | %-22s | %s\n", "case", "OpenSM", "ibmcast",
	       "result");
	return 0;
}

/* "end" of case k: runs it and counts the result. */
static int end_case(struct ctx *c, struct ccase *k, const char *file,
		    struct tally *t)
{
	t->cases++;
	c->case_no = t->cases;
	if (!k->nreq) {
		fprintf(stderr, "%s:%u: case without requests\n", file,
			k->line);
		return IMC_EXIT_USAGE;
	}
	if (run_case(c, k, false))
		t->failed++;
	else if (k->differs[0])
		t->documented++;
	else
		t->agree++;
	for (unsigned i = 0; i < k->nreq; i++)
		free(k->req[i]);
	k->nreq = 0;
	fflush(stdout);
	return 0;
}

/* Reads and runs every case of f. 0, or the exit code once told. */
static int read_cases(struct ctx *c, struct ccase *k, FILE *f,
		      const char *file, struct tally *t)
{
	char buf[LINE_MAX_LEN];
	unsigned lineno = 0;
	bool in_case = false;
	int rc;

	while (fgets(buf, sizeof(buf), f)) {
		char *s = trim(buf);

		lineno++;
		if (!*s || *s == '#')
			continue;
		if (!in_case) {
			if (strncmp(s, "case ", 5)) {
				fprintf(stderr, "%s:%u: expected 'case NAME'\n",
					file, lineno);
				return IMC_EXIT_USAGE;
			}
			memset(k, 0, sizeof(*k));
			snprintf(k->name, sizeof(k->name), "%s", trim(s + 5));
			k->line = lineno;
			in_case = true;
			continue;
		}
		if (!strcmp(s, "end")) {
			in_case = false;
			rc = end_case(c, k, file, t);
			if (rc)
				return rc;
			continue;
		}
		if (!strncmp(s, "expect-differs:", 15)) {
			snprintf(k->differs, sizeof(k->differs), "%s",
				 trim(s + 15));
			continue;
		}
		if (k->nreq == MAX_REQS) {
			fprintf(stderr, "%s:%u: too many requests\n", file,
				lineno);
			return IMC_EXIT_USAGE;
		}
		k->req[k->nreq] = strdup(s);
		if (!k->req[k->nreq++])
			return IMC_EXIT_FAIL;
	}
	if (in_case) {
		fprintf(stderr, "%s:%u: case without 'end'\n", file, k->line);
		return IMC_EXIT_USAGE;
	}
	return 0;
}

static int do_compare(const struct opts *o, const char *file)
{
	struct ctx c;
	struct ccase k;
	struct tally t = { 0 };
	FILE *f = fopen(file, "r");
	int rc = IMC_EXIT_FAIL;

	memset(&c, 0, sizeof(c));
	c.case_base = o->tag << 8;
	memset(&k, 0, sizeof(k));
	if (!f) {
		fprintf(stderr, "ibmcast sa-serve: %s: %s\n", file,
			strerror(errno));
		return IMC_EXIT_USAGE;
	}
	if (compare_setup(&c, o) == 0) {
		rc = read_cases(&c, &k, f, file, &t);
		if (!rc) {
			printf("cases %u agree %u differ_documented %u failed %u\n",
			       t.cases, t.agree, t.documented, t.failed);
			rc = t.failed ? IMC_EXIT_FAIL : IMC_EXIT_OK;
		}
	}
	for (unsigned i = 0; i < k.nreq; i++)
		free(k.req[i]);
	fclose(f);
	raw_close(&c.w);
	return rc;
}

/* ------------------------------------------------------------------ */

static int opt_transport(const char *arg, void *f)
{
	*(const char **)f = arg;
	return strcmp(arg, "auto") && strcmp(arg, "umad") &&
	       strcmp(arg, "ibsim") ? -EINVAL : 0;
}

#define O(name, f, lo, hi) SA_OPT_N(name, struct opts, f, lo, hi)
static const struct sa_opt options[] = {
	SA_OPT_S("device", struct opts, device),
	O("port", port, 0, 255),
	O("smkey", smkey, 0, UINT64_MAX),
	O("ttl", ttl_ms, 0, 3600000),
	O("window", window, 1, 32),
	O("duration", duration, 0, 86400),
	SA_OPT_F("list", struct opts, list),
	O("osm-lid", osm_lid, 1, 0xbfff),
	O("imc-lid", imc_lid, 1, 0xbfff),
	{ "tag", SA_OPT_NUM, SA_OPT_FIELD(struct opts, tag), 0, 0xffff, 1,
	  NULL, offsetof(struct opts, tag_set) },
	{ "transport", SA_OPT_FN, offsetof(struct opts, transport), 0, 0, 0,
	  0, opt_transport, -1 },
	O("coalesce", coalesce_us, 0, 1000000),
};
#undef O

static int run(int argc, char **argv)
{
	struct opts o;
	const char *verb = "serve";
	int rc;

	memset(&o, 0, sizeof(o));
	o.smkey = 1;
	o.ttl_ms = 1000;
	o.window = 32;
	o.tag = 1;
	optind = 1;
	if (argc > 1 && argv[1][0] != '-') {
		verb = argv[1];
		optind = 2;
	}
	rc = sa_tool_getopt(PROG, argc, argv, options,
			    IMC_ARRAY_SIZE(options), &o);
	if (rc)
		return rc;
	if (!strcmp(verb, "serve")) {
		if (optind != argc)
			return sa_tool_usage(PROG, "serve takes no operands");
		return do_serve(&o);
	}
	if (!strcmp(verb, "compare")) {
		if (optind + 1 != argc)
			return sa_tool_usage(PROG, "compare takes one case file");
		if (!o.imc_lid)
			return sa_tool_usage(PROG, "compare needs --imc-lid");
		if (!o.tag_set)
			o.tag = 0;
		if (o.tag > 0xff)
			return sa_tool_usage(PROG, "compare takes --tag 0-255");
		return do_compare(&o, argv[optind]);
	}
	return sa_tool_usage(PROG, "unknown verb");
}

const struct imc_cmd imc_cmd_sa_serve = {
	.name = "sa-serve",
	.summary = "ibmcast's SA beside OpenSM: serve, compare",
	.run = run,
	.help = help,
};
