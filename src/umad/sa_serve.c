/* A second SA on a libibumad port (see ibmcast/sa_serve.h).
 *
 * Server state:  SCANNING --last scan lookup done--> READY
 *
 * Lookup stages (one SA query in flight per lookup):
 *   by port GUID:  NODE_BY_GUID -> PIR -> NODE -> PKEY -> done
 *   by LID:                        PIR -> NODE -> PKEY -> done
 *   PIR answered TOO_MANY_RECORDS (a switch LID): PIR with PortNum 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/mad.h"
#include "ibmcast/sa_client.h"
#include "ibmcast/sa_records.h"
#include "ibmcast/sa_serve.h"
#include "util/config.h"
#include "util/hash.h"
#include "util/list.h"
#include "util/mix.h"
#include "util/vec.h"
#include "util/bytes.h"

enum {
	LID_SPACE = 0xC000,         /* unicast LIDs (IBA 4.1.3) */
	WINDOW_MAX = 32,            /* ibsim deadlocks when flooded */
	GMETA_MAX = 4096,           /* absent GUIDs remembered at most */
	PKEY_DEFAULT = 0xFFFF,
};

enum serve_state { SCANNING, READY };
enum key_state { KEY_UNKNOWN, KEY_PENDING, KEY_PRESENT, KEY_ABSENT };
enum lk_stage { LK_NODE_BY_GUID, LK_PIR, LK_PIR_PORT0, LK_NODE, LK_PKEY };

struct dport {
	struct imc_gid gid;
	uint16_t lid;
	uint8_t mtu;
	uint8_t rate;
	uint8_t port_num;
	bool switch_port0;
	uint16_t pkeys[IMC_PKEY_BLOCK_SIZE];
	uint8_t n_pkeys;
};

/* A port GUID looked up or found absent: s->gmeta[0 .. gmeta_used),
 * each in s->gmetas by GUID. */
struct gmeta {
	struct imc_hnode hn;
	uint64_t guid;
	uint8_t state;              /* KEY_PENDING or KEY_ABSENT; 0: free */
	imc_time_t miss_at;
};

struct lookup {
	struct imc_list link;       /* s->lookups, for close() */
	struct imc_sa_serve *s;
	enum lk_stage stage;
	bool scan;
	bool by_guid;
	uint64_t guid;
	uint16_t lid;
	uint64_t prefix;
	struct dport p;
};

struct parked {
	struct parked *next;
	struct imc_umad_addr from;
	uint8_t mad[IMC_MAD_SIZE];
};

struct imc_sa_serve {
	struct imc_loop *loop;
	struct imc_sa_serve_config cfg;
	enum serve_state state;
	struct imc_umad *u;
	struct imc_sa_client *c;
	struct imc_sa *sa;
	imc_time_t started;
	/* directory */
	struct dport *ports;
	uint32_t nports;
	size_t cap;
	uint32_t *lid_port;         /* LID -> port index + 1 */
	uint8_t *lid_state;         /* enum key_state */
	imc_time_t *lid_miss;
	struct imc_htab gids;       /* gid_hn[i]: ports[i] by GID */
	struct imc_hnode *gid_hn;
	size_t gid_cap;
	struct gmeta *gmeta;        /* GMETA_MAX of them */
	uint32_t gmeta_used;
	struct imc_htab gmetas;
	uint64_t seed;
	/* scan */
	uint32_t next_lid;
	uint32_t highest;
	uint32_t scan_running;
	uint32_t running;           /* lookups alive */
	struct imc_list lookups;    /* struct lookup.link */
	/* requests waiting for lookups */
	struct parked *park_head, *park_tail;
	struct imc_sa_serve_stats st;
};

static void drain(struct imc_sa_serve *s);
static void scan_more(struct imc_sa_serve *s);

/* ---- hashing and the directory ---- */

static uint64_t gid_hash(const struct imc_sa_serve *s, const struct imc_gid *g)
{
	return imc_mix2(imc_get64(g->raw + 8), imc_get64(g->raw), s->seed);
}

struct gid_key {
	const struct imc_sa_serve *s;
	const struct imc_gid *g;
};

static bool gid_eq(const struct imc_hnode *n, const void *key)
{
	const struct gid_key *k = key;

	return imc_gid_equal(&k->s->ports[n - k->s->gid_hn].gid, k->g);
}

static int gid_find(const struct imc_sa_serve *s, const struct imc_gid *g)
{
	struct gid_key k = { s, g };
	struct imc_hnode *n = imc_htab_find(&s->gids, gid_hash(s, g), gid_eq,
					    &k);

	return n ? (int)(n - s->gid_hn) : -1;
}

static void gid_put(struct imc_sa_serve *s, uint32_t idx)
{
	imc_htab_insert(&s->gids, &s->gid_hn[idx],
			gid_hash(s, &s->ports[idx].gid));
}

/* Room for n index entries; when they grow (and so may move), every
 * port is inserted again: the chains point at the old ones. Amortized
 * O(1), as the array doubles. */
static int gid_reserve(struct imc_sa_serve *s, size_t n)
{
	size_t cap = s->gid_cap;

	if (IMC_VEC_RESERVE(&s->gid_hn, &s->gid_cap, n))
		return -ENOMEM;
	if (s->gid_cap != cap) {
		imc_htab_clear(&s->gids);
		for (uint32_t i = 0; i < s->nports; i++)
			gid_put(s, i);
	}
	return 0;
}

/* Adds or replaces the port of p->lid. */
static int dir_put(struct imc_sa_serve *s, const struct dport *p)
{
	uint32_t v = s->lid_port[p->lid];
	int other = gid_find(s, &p->gid);

	if (v) {
		bool moved = memcmp(s->ports[v - 1].gid.raw, p->gid.raw, 16);

		if (moved)
			imc_htab_remove(&s->gids, &s->gid_hn[v - 1]);
		s->ports[v - 1] = *p;
		if (moved)
			gid_put(s, v - 1);
		s->lid_state[p->lid] = KEY_PRESENT;
		return 0;
	}
	if (other >= 0) {
		/* The port moved to another LID: keep one entry. */
		s->lid_port[s->ports[other].lid] = 0;
		s->lid_state[s->ports[other].lid] = KEY_UNKNOWN;
		s->ports[other] = *p;
		s->lid_port[p->lid] = (uint32_t)other + 1;
		s->lid_state[p->lid] = KEY_PRESENT;
		return 0;
	}
	if (IMC_VEC_RESERVE(&s->ports, &s->cap, (size_t)s->nports + 1) ||
	    gid_reserve(s, (size_t)s->nports + 1))
		return -ENOMEM;
	s->ports[s->nports] = *p;
	gid_put(s, s->nports);
	s->nports++;
	s->lid_port[p->lid] = s->nports;
	s->lid_state[p->lid] = KEY_PRESENT;
	s->st.ports = s->nports;
	return 0;
}

static void fill(const struct dport *d, uint32_t idx, struct imc_sa_port *out)
{
	memset(out, 0, sizeof(*out));
	out->gid = d->gid;
	out->lid = d->lid;
	out->mtu = d->mtu;
	out->rate = d->rate;
	out->switch_port0 = d->switch_port0;
	out->node = idx;
	out->port_num = d->port_num;
	out->pkeys = d->pkeys;
	out->n_pkeys = d->n_pkeys;
}

static int dir_by_gid(void *ctx, const struct imc_gid *gid,
		      struct imc_sa_port *out)
{
	struct imc_sa_serve *s = ctx;
	int i = gid_find(s, gid);

	if (i < 0)
		return -ENOENT;
	fill(&s->ports[i], (uint32_t)i, out);
	return 0;
}

static int dir_by_lid(void *ctx, uint16_t lid, struct imc_sa_port *out)
{
	struct imc_sa_serve *s = ctx;
	uint32_t v = lid < LID_SPACE ? s->lid_port[lid] : 0;

	if (!v)
		return -ENOENT;
	fill(&s->ports[v - 1], v - 1, out);
	return 0;
}

/* ---- port GUIDs pending or absent ---- */

static bool gmeta_eq(const struct imc_hnode *n, const void *guid)
{
	return imc_container_of(n, struct gmeta, hn)->guid ==
	       *(const uint64_t *)guid;
}

/* Adds g (its GUID set) to the table. */
static void gmeta_put(struct imc_sa_serve *s, struct gmeta *g)
{
	imc_htab_insert(&s->gmetas, &g->hn, imc_mix64(g->guid ^ s->seed));
}

/* Past GMETA_MAX keys the absent ones are forgotten (they are only a
 * cache), the pending ones kept. */
static void gmeta_trim(struct imc_sa_serve *s)
{
	struct gmeta keep[WINDOW_MAX * 4];
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->gmeta_used; i++)
		if (s->gmeta[i].state == KEY_PENDING &&
		    n < IMC_ARRAY_SIZE(keep))
			keep[n++] = s->gmeta[i];
	imc_htab_clear(&s->gmetas);
	memcpy(s->gmeta, keep, n * sizeof(*keep));
	s->gmeta_used = n;
	for (uint32_t i = 0; i < n; i++)
		gmeta_put(s, &s->gmeta[i]);
}

/* The entry of guid, or NULL; with add, a new free entry (state 0) when
 * there is none. */
static struct gmeta *gmeta_slot(struct imc_sa_serve *s, uint64_t guid,
				bool add)
{
	struct imc_hnode *n = imc_htab_find(&s->gmetas,
					    imc_mix64(guid ^ s->seed),
					    gmeta_eq, &guid);
	struct gmeta *g = n ? imc_container_of(n, struct gmeta, hn) : NULL;

	if ((g && g->state) || !add)
		return g && g->state ? g : NULL;
	if (!g) {
		if (s->gmeta_used >= GMETA_MAX)
			gmeta_trim(s);
		g = &s->gmeta[s->gmeta_used++];
		memset(g, 0, sizeof(*g));
		g->guid = guid;
		gmeta_put(s, g);
	}
	return g;
}

/* ---- lookups ---- */

static int query(struct lookup *lk);

static bool fresh(const struct imc_sa_serve *s, imc_time_t miss_at)
{
	return imc_loop_now(s->loop) - miss_at < s->cfg.miss_ttl;
}

/* Records what a lookup found and frees it. */
static void finish(struct lookup *lk, bool found)
{
	struct imc_sa_serve *s = lk->s;

	if (found && dir_put(s, &lk->p) < 0)
		found = false;
	if (lk->by_guid) {
		struct gmeta *g = gmeta_slot(s, lk->guid, false);

		/* Found: the GID table answers from now on; the entry stays
		 * as a stale "absent" until a trim forgets it. */
		if (g) {
			g->state = KEY_ABSENT;
			g->miss_at = imc_loop_now(s->loop);
			if (found)
				g->miss_at -= s->cfg.miss_ttl;
		}
	} else if (!found && lk->lid < LID_SPACE &&
		   s->lid_state[lk->lid] == KEY_PENDING) {
		s->lid_state[lk->lid] = KEY_ABSENT;
		s->lid_miss[lk->lid] = imc_loop_now(s->loop);
	}
	if (found && lk->p.lid > s->highest)
		s->highest = lk->p.lid;
	if (!found)
		s->st.lookups_absent++;
	s->running--;
	if (lk->scan)
		s->scan_running--;
	imc_list_del(&lk->link);
	free(lk);
}

/* After a lookup: more of the scan, the end of the scan, and the
 * requests that waited. */
static void advance(struct imc_sa_serve *s)
{
	if (s->state == SCANNING) {
		scan_more(s);
		if (!s->scan_running) {
			s->state = READY;
			s->st.scan_time = imc_loop_now(s->loop) - s->started;
		}
	}
	drain(s);
}

static void lookup_end(struct lookup *lk, bool found)
{
	struct imc_sa_serve *s = lk->s;

	finish(lk, found);
	advance(s);
}

/* What an answer does to a lookup: on to the stage set, or finished. */
enum step { STEP_NEXT, STEP_FOUND, STEP_ABSENT };

static void pkey_default(struct lookup *lk)
{
	lk->s->st.pkey_defaults++;
	lk->p.pkeys[0] = PKEY_DEFAULT;
	lk->p.n_pkeys = 1;
}

static enum step node_by_guid_done(struct lookup *lk,
				   const struct imc_sa_answer *a)
{
	struct imc_node_rec n;

	if (a->status || imc_node_rec_unpack(&n, a->data, a->len) < 0 ||
	    !n.lid || n.lid >= LID_SPACE)
		return STEP_ABSENT;
	lk->lid = n.lid;
	lk->stage = LK_PIR;
	return STEP_NEXT;
}

static enum step pir_done(struct lookup *lk, const struct imc_sa_answer *a,
			  unsigned code)
{
	struct imc_port_info_rec r;

	if (lk->stage == LK_PIR && code == UMAD_SA_STATUS_TOO_MANY_RECORDS) {
		/* A switch: its LID is port 0's (IBA 4.1.3). */
		lk->stage = LK_PIR_PORT0;
		return STEP_NEXT;
	}
	if (a->status || imc_port_info_rec_unpack(&r, a->data, a->len) < 0 ||
	    r.lid != lk->lid)
		return STEP_ABSENT;
	lk->prefix = r.info.gid_prefix;
	lk->p.lid = r.lid;
	lk->p.port_num = r.port_num;
	lk->p.switch_port0 = r.port_num == 0;
	lk->p.mtu = r.info.mtu_cap;
	lk->p.rate = imc_port_info_rate(&r.info);
	lk->stage = LK_NODE;
	return STEP_NEXT;
}

static enum step node_done(struct lookup *lk, const struct imc_sa_answer *a)
{
	struct imc_node_rec n;

	if (a->status || imc_node_rec_unpack(&n, a->data, a->len) < 0)
		return STEP_ABSENT;
	imc_gid_set(&lk->p.gid, lk->prefix, n.info.port_guid);
	if (n.info.node_type == IMC_NODE_TYPE_SWITCH)
		lk->p.switch_port0 = true;
	if (!lk->s->cfg.query_sm_key) {
		pkey_default(lk);
		return STEP_FOUND;
	}
	lk->stage = LK_PKEY;
	return STEP_NEXT;
}

static enum step pkey_done(struct lookup *lk, const struct imc_sa_answer *a)
{
	struct imc_pkey_table_rec r;

	lk->p.n_pkeys = 0;
	if (!a->status && imc_pkey_table_rec_unpack(&r, a->data, a->len) > 0) {
		for (size_t i = 0; i < IMC_PKEY_BLOCK_SIZE; i++)
			/* 0x0000/0x8000: an invalid entry (10.9.1.2) */
			if (r.pkeys[i] & 0x7fff)
				lk->p.pkeys[lk->p.n_pkeys++] = r.pkeys[i];
	}
	if (!lk->p.n_pkeys)
		pkey_default(lk);
	return STEP_FOUND;
}

static void on_answer(void *arg, int err, const struct imc_sa_answer *a)
{
	struct lookup *lk = arg;
	struct imc_sa_serve *s = lk->s;
	enum step step = STEP_ABSENT;
	unsigned code;

	if (err) {
		s->st.query_errors++;
		lookup_end(lk, false);
		return;
	}
	code = imc_sa_status_code(a->status);
	if (a->status && code != UMAD_SA_STATUS_NO_RECORDS &&
	    !(lk->stage == LK_PIR && code == UMAD_SA_STATUS_TOO_MANY_RECORDS) &&
	    lk->stage != LK_PKEY)
		s->st.query_errors++;
	switch (lk->stage) {
	case LK_NODE_BY_GUID:
		step = node_by_guid_done(lk, a);
		break;
	case LK_PIR:
	case LK_PIR_PORT0:
		step = pir_done(lk, a, code);
		break;
	case LK_NODE:
		step = node_done(lk, a);
		break;
	case LK_PKEY:
		step = pkey_done(lk, a);
		break;
	}
	if (step != STEP_NEXT)
		lookup_end(lk, step == STEP_FOUND);
	else if (query(lk) < 0)
		advance(s);
}

/* Sends the query of lk's stage. On failure lk is finished (absent) and
 * freed, and a negative errno returned. */
static int query(struct lookup *lk)
{
	struct imc_sa_serve *s = lk->s;
	struct imc_sa_mad m;
	int rc;

	memset(&m, 0, sizeof(m));
	m.mad.method = UMAD_METHOD_GET;
	switch (lk->stage) {
	case LK_NODE_BY_GUID:
	case LK_NODE: {
		struct imc_node_rec n;

		memset(&n, 0, sizeof(n));
		m.mad.attr_id = IMC_SA_ATTR_NODE_REC;
		if (lk->stage == LK_NODE) {
			n.lid = lk->lid;
			m.sa.comp_mask = IMC_NR_COMP_LID;
		} else {
			n.info.port_guid = lk->guid;
			m.sa.comp_mask = IMC_NR_COMP_PORT_GUID;
		}
		imc_node_rec_pack(&n, m.data, sizeof(m.data));
		break;
	}
	case LK_PIR:
	case LK_PIR_PORT0: {
		struct imc_port_info_rec r;

		memset(&r, 0, sizeof(r));
		r.lid = lk->lid;
		m.mad.attr_id = IMC_SA_ATTR_PORT_INFO_REC;
		m.sa.comp_mask = IMC_PIR_COMP_LID;
		if (lk->stage == LK_PIR_PORT0)
			m.sa.comp_mask |= IMC_PIR_COMP_PORT_NUM;
		imc_port_info_rec_pack(&r, m.data, sizeof(m.data));
		break;
	}
	case LK_PKEY: {
		struct imc_pkey_table_rec r;

		memset(&r, 0, sizeof(r));
		r.lid = lk->lid;
		r.port_num = lk->p.port_num;
		m.mad.attr_id = IMC_SA_ATTR_PKEY_TABLE_REC;
		m.sa.sm_key = s->cfg.query_sm_key;
		m.sa.comp_mask = IMC_PKR_COMP_LID | IMC_PKR_COMP_BLOCK |
				 IMC_PKR_COMP_PORT_NUM;
		imc_pkey_table_rec_pack(&r, m.data, sizeof(m.data));
		break;
	}
	}
	s->st.queries++;
	rc = imc_sa_query_start(s->c, &m, on_answer, lk, NULL);
	if (rc < 0) {
		s->st.query_errors++;
		finish(lk, false);
	}
	return rc;
}

static int lookup_start(struct imc_sa_serve *s, bool by_guid, uint64_t guid,
			uint16_t lid, bool scan)
{
	struct lookup *lk = calloc(1, sizeof(*lk));

	if (!lk) {
		struct gmeta *g = by_guid ? gmeta_slot(s, guid, false) : NULL;

		if (g)
			g->state = KEY_ABSENT;
		else if (!by_guid)
			s->lid_state[lid] = KEY_ABSENT;
		return -ENOMEM;
	}
	lk->s = s;
	lk->scan = scan;
	lk->by_guid = by_guid;
	lk->guid = guid;
	lk->lid = lid;
	lk->stage = by_guid ? LK_NODE_BY_GUID : LK_PIR;
	imc_list_add_head(&s->lookups, &lk->link);
	s->running++;
	s->st.lookups++;
	if (scan)
		s->scan_running++;
	return query(lk);
}

/* Starts scan lookups while fewer than the window run. */
static void scan_more(struct imc_sa_serve *s)
{
	while (s->scan_running < s->cfg.window && s->next_lid < LID_SPACE &&
	       s->next_lid <= s->highest + s->cfg.scan_gap) {
		uint16_t lid = (uint16_t)s->next_lid++;

		if (s->lid_state[lid] != KEY_UNKNOWN)
			continue;
		s->lid_state[lid] = KEY_PENDING;
		if (lookup_start(s, false, 0, lid, true) < 0)
			return;
	}
}

/* ---- requests ---- */

/* Is the key resolved (present, or absent recently)? Starts a lookup
 * when it is not and none runs. */
static bool lid_known(struct imc_sa_serve *s, uint16_t lid)
{
	if (!lid || lid >= LID_SPACE)
		return true;
	switch (s->lid_state[lid]) {
	case KEY_PRESENT:
		return true;
	case KEY_PENDING:
		return false;
	case KEY_ABSENT:
		if (fresh(s, s->lid_miss[lid]))
			return true;
		break;
	}
	s->lid_state[lid] = KEY_PENDING;
	/* A lookup that could not start is finished: absent. */
	return lookup_start(s, false, 0, lid, false) < 0;
}

static bool gid_known(struct imc_sa_serve *s, const struct imc_gid *g)
{
	uint64_t guid = imc_get64(g->raw + 8);
	struct gmeta *m;

	/* Outside the subnet the engine answers INVALID_GID by itself. */
	if (imc_get64(g->raw) != s->cfg.sa.subnet_prefix || !guid ||
	    gid_find(s, g) >= 0)
		return true;
	m = gmeta_slot(s, guid, false);
	if (m && m->state == KEY_PENDING)
		return false;
	if (m && m->state == KEY_ABSENT && fresh(s, m->miss_at))
		return true;
	m = gmeta_slot(s, guid, true);
	if (!m)
		return true;
	m->state = KEY_PENDING;
	return lookup_start(s, true, guid, 0, false) < 0;
}

/* Does the directory know what the engine will ask about this request
 * (a whole 256-byte MAD): the requester's LID and, for an
 * MCMemberRecord, its PortGID? */
static bool resolved(struct imc_sa_serve *s, const uint8_t *mad,
		     const struct imc_umad_addr *from)
{
	bool ok = lid_known(s, from->lid);
	uint64_t mask = imc_get64(mad + IMC_MAD_HDR_SIZE +
				  IMC_RMPP_HDR_SIZE + 12);

	if (imc_get16(mad + 16) == UMAD_SA_ATTR_MCMEMBER_REC &&
	    (mask & UMAD_SA_MCM_COMP_MASK_PORT_GID)) {
		struct imc_gid g;

		memcpy(g.raw, mad + IMC_SA_DATA_OFFSET + 16, 16);
		ok = gid_known(s, &g) && ok;
	}
	return ok;
}

static void feed(struct imc_sa_serve *s, const uint8_t *mad,
		 const struct imc_umad_addr *from)
{
	struct imc_sa_src src;

	memset(&src, 0, sizeof(src));
	src.slid = from->lid;
	src.sqpn = from->qpn;
	/* The MAD layer gives a P_Key index only; ours is the default
	 * partition's entry. */
	src.pkey = PKEY_DEFAULT;
	src.sl = from->sl;
	(void)imc_sa_recv(s->sa, &src, mad, IMC_MAD_SIZE);
}

static void drain(struct imc_sa_serve *s)
{
	struct parked **pp = &s->park_head, *p;

	if (s->state != READY)
		return;
	s->park_tail = NULL;
	while ((p = *pp)) {
		if (!resolved(s, p->mad, &p->from)) {
			s->park_tail = p;
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		s->st.parked_now--;
		feed(s, p->mad, &p->from);
		free(p);
	}
}

static void on_request(struct imc_sa_serve *s, const uint8_t *mad, size_t len,
		       const struct imc_umad_addr *from)
{
	uint8_t whole[IMC_MAD_SIZE];
	struct parked *p;

	s->st.requests++;
	/* Every MAD is 256 bytes (IBA 13.4.2); umad2sim hands over only
	 * the first 224 valid: the rest reads as zero. */
	if (len < IMC_MAD_SIZE) {
		memcpy(whole, mad, len);
		memset(whole + len, 0, IMC_MAD_SIZE - len);
		mad = whole;
	}
	/* A full waiting list takes no more lookups either: the engine
	 * serves the request with what the directory has. */
	if (s->st.parked_now >= s->cfg.park_max ||
	    (s->state == READY && resolved(s, mad, from))) {
		if (s->st.parked_now >= s->cfg.park_max)
			s->st.park_overflow++;
		feed(s, mad, from);
		return;
	}
	p = malloc(sizeof(*p));
	if (!p)
		return;
	p->next = NULL;
	memcpy(p->mad, mad, IMC_MAD_SIZE);
	p->from = *from;
	s->st.parked++;
	s->st.parked_now++;
	if (s->park_tail)
		s->park_tail->next = p;
	else
		s->park_head = p;
	s->park_tail = p;
}

static void on_mad(void *arg, const uint8_t *mad, size_t len,
		   const struct imc_umad_addr *from)
{
	struct imc_sa_serve *s = arg;

	if (len < IMC_MAD_HDR_SIZE || mad[1] != UMAD_CLASS_SUBN_ADM)
		return;
	/* Answers to our queries go to the SA client; a ReportResp ends
	 * one of the engine's Reports; everything else is a request. */
	if ((mad[3] & UMAD_METHOD_RESP_MASK) &&
	    mad[3] != UMAD_METHOD_REPORT_RESP) {
		(void)imc_sa_client_recv(s->c, mad, len);
		return;
	}
	on_request(s, mad, len, from);
}

static void sa_send(void *ctx, const struct imc_sa_dest *to,
		    const uint8_t *mad, size_t len)
{
	struct imc_sa_serve *s = ctx;
	struct imc_umad_addr a = {
		.lid = to->dlid,
		.qpn = to->dqpn,
		.qkey = to->qkey,
		.sl = to->sl,
	};

	if (imc_umad_send(s->u, &a, mad, len) < 0)
		s->st.send_errors++;
	else
		s->st.answers++;
}

/* ---- life cycle ---- */

void imc_sa_serve_config_init(struct imc_sa_serve_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	imc_sa_config_init(&cfg->sa);
	cfg->query_sm_key = 1;
	cfg->window = WINDOW_MAX;
	cfg->query_timeout = IMC_SA_DEFAULT_TIMEOUT;
	cfg->query_retries = IMC_SA_DEFAULT_RETRIES;
	cfg->miss_ttl = IMC_NSEC_PER_SEC;
	cfg->scan_gap = 64;
	cfg->park_max = 4096;
}

int imc_sa_serve_open(struct imc_loop *loop,
		      const struct imc_sa_serve_config *cfg,
		      struct imc_sa_serve **out)
{
	struct imc_umad_config uc;
	struct imc_sa_client_config cc;
	struct imc_sa_transport tr;
	struct imc_sa_ops ops;
	struct imc_sa_serve *s;
	const struct imc_umad_port *port;
	struct imc_sa_serve_config def;
	int rc;

	cfg = IMC_CONFIG_OR_DEFAULT(cfg, def, imc_sa_serve_config_init);
	if (!loop || !out || !cfg->window ||
	    cfg->window > WINDOW_MAX || !cfg->park_max)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->loop = loop;
	s->cfg = *cfg;
	imc_list_init(&s->lookups);
	s->seed = cfg->sa.hash_seed ^ 0x5a5e7ull;
	s->lid_port = calloc(LID_SPACE, sizeof(*s->lid_port));
	s->lid_state = calloc(LID_SPACE, sizeof(*s->lid_state));
	s->lid_miss = calloc(LID_SPACE, sizeof(*s->lid_miss));
	s->gmeta = calloc(GMETA_MAX, sizeof(*s->gmeta));
	rc = -ENOMEM;
	if (!s->lid_port || !s->lid_state || !s->lid_miss || !s->gmeta ||
	    imc_htab_init(&s->gids, 64) < 0 ||
	    imc_htab_init(&s->gmetas, GMETA_MAX) < 0)
		goto fail;

	memset(&uc, 0, sizeof(uc));
	uc.device = cfg->device;
	uc.port = cfg->port;
	uc.mode = IMC_UMAD_SERVER;
	uc.issm = true;
	uc.backend = cfg->backend;
	uc.coalesce = cfg->coalesce;
	rc = imc_umad_open(loop, &uc, &s->u);
	if (rc < 0)
		goto fail;
	port = imc_umad_port(s->u);
	rc = -ENODEV;
	if (!port->sm_lid || !port->lid)
		goto fail;

	imc_sa_client_config_init(&cc);
	cc.timeout = cfg->query_timeout;
	if (cc.max_timeout < cc.timeout)
		cc.max_timeout = cc.timeout;
	cc.retries = cfg->query_retries;
	cc.window = cfg->window;
	cc.seed = cfg->sa.hash_seed ^ port->lid;
	imc_umad_sa_transport(s->u, &tr);
	rc = imc_sa_client_create(loop, &tr, &cc, &s->c);
	if (rc < 0)
		goto fail;

	s->cfg.sa.subnet_prefix = imc_get64(port->gid.raw);
	s->cfg.sa.sa_lid = port->lid;
	s->cfg.sa.sa_gid = port->gid;
	memset(&ops, 0, sizeof(ops));
	ops.port_by_gid = dir_by_gid;
	ops.port_by_lid = dir_by_lid;
	ops.send = sa_send;
	rc = imc_sa_create(loop, &s->cfg.sa, &ops, s, &s->sa);
	if (rc < 0)
		goto fail;

	imc_umad_set_recv(s->u, on_mad, s);
	s->state = SCANNING;
	s->started = imc_loop_now(loop);
	s->next_lid = 1;
	scan_more(s);
	if (!s->scan_running) {
		s->state = READY;
		s->st.scan_time = 0;
	}
	*out = s;
	return 0;
fail:
	imc_sa_serve_close(s);
	return rc;
}

void imc_sa_serve_close(struct imc_sa_serve *s)
{
	struct parked *p;
	struct lookup *lk;

	if (!s)
		return;
	if (s->u)
		imc_umad_set_recv(s->u, NULL, NULL);
	/* The client frees its queries without callbacks: the lookups
	 * they carry go with them below. */
	imc_sa_client_destroy(s->c);
	imc_sa_destroy(s->sa);
	imc_umad_close(s->u);
	while (!imc_list_empty(&s->lookups)) {
		lk = imc_container_of(s->lookups.next, struct lookup, link);
		imc_list_del(&lk->link);
		free(lk);
	}
	while ((p = s->park_head)) {
		s->park_head = p->next;
		free(p);
	}
	free(s->ports);
	free(s->lid_port);
	free(s->lid_state);
	free(s->lid_miss);
	imc_htab_fini(&s->gids);
	free(s->gid_hn);
	imc_htab_fini(&s->gmetas);
	free(s->gmeta);
	free(s);
}

bool imc_sa_serve_ready(const struct imc_sa_serve *s)
{
	return s->state == READY;
}

const struct imc_umad_port *imc_sa_serve_port(const struct imc_sa_serve *s)
{
	return imc_umad_port(s->u);
}

const struct imc_sa *imc_sa_serve_sa(const struct imc_sa_serve *s)
{
	return s->sa;
}

int imc_sa_serve_foreach_port(const struct imc_sa_serve *s,
			      int (*cb)(void *arg, const struct imc_sa_port *p),
			      void *arg)
{
	for (uint32_t lid = 1; lid < LID_SPACE; lid++) {
		struct imc_sa_port p;
		uint32_t v = s->lid_port[lid];
		int rc;

		if (!v)
			continue;
		fill(&s->ports[v - 1], v - 1, &p);
		rc = cb(arg, &p);
		if (rc)
			return rc;
	}
	return 0;
}

void imc_sa_serve_get_stats(const struct imc_sa_serve *s,
			    struct imc_sa_serve_stats *st)
{
	*st = s->st;
	st->ports = s->nports;
	imc_umad_get_stats(s->u, &st->port);
}
