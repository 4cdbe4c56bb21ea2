/* The SA's multicast state: groups keyed by MGID, members keyed by
 * (group, PortGID), per-port membership lists, and the MLID pool.
 *
 * Every keyed lookup is a hash probe (O(1)); the MLID pool is a two-level
 * bitmap whose lowest free MLID is found with two count-trailing-zeros
 * (O(1) for the 16,383 multicast LIDs of IBA 4.1.3). A group owns its MLID
 * from creation to deletion and gives it back exactly once: the pool's
 * count of MLIDs in use always equals the number of MLIDs that have a
 * group (with cfg.mlid_share, several groups may share one).
 *
 * Output order is never hash order: callers that iterate sort by MGID or
 * PortGID (sae_groups_sorted, sae_members_sorted).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "sa/sa_int.h"

/* ------------------------------------------------------------------ */
/* MLID pool. */

static int mlids_init(struct sae_mlids *p, uint16_t first, uint16_t last)
{
	p->first = first;
	p->n = (uint32_t)last - first + 1;
	p->nwords = (p->n + 63) / 64;
	p->nsum = (p->nwords + 63) / 64;
	p->used = calloc(p->nwords, sizeof(*p->used));
	p->full = calloc(p->nsum, sizeof(*p->full));
	p->head = calloc(p->n, sizeof(*p->head));
	if (!p->used || !p->full || !p->head)
		return -ENOMEM;
	/* Bits past the pool count as used, so that they are never found. */
	if (p->n % 64)
		p->used[p->nwords - 1] = ~0ULL << (p->n % 64);
	if (p->nwords % 64)
		p->full[p->nsum - 1] = ~0ULL << (p->nwords % 64);
	p->in_use = 0;
	p->cursor = 0;
	return 0;
}

static void mlids_free(struct sae_mlids *p)
{
	free(p->used);
	free(p->full);
	free(p->head);
}

static bool mlid_used(const struct sae_mlids *p, uint32_t i)
{
	return p->used[i / 64] >> (i % 64) & 1;
}

static void mlid_take(struct sae_mlids *p, uint32_t i)
{
	uint64_t *w = &p->used[i / 64];

	*w |= 1ULL << (i % 64);
	if (*w == ~0ULL)
		p->full[i / 64 / 64] |= 1ULL << (i / 64 % 64);
	p->in_use++;
}

static void mlid_give(struct sae_mlids *p, uint32_t i)
{
	p->used[i / 64] &= ~(1ULL << (i % 64));
	p->full[i / 64 / 64] &= ~(1ULL << (i / 64 % 64));
	p->in_use--;
}

static int mlid_lowest_free(const struct sae_mlids *p, uint32_t *out)
{
	for (size_t s = 0; s < p->nsum; s++) {
		size_t w;

		if (p->full[s] == ~0ULL)
			continue;
		w = s * 64 + (size_t)__builtin_ctzll(~p->full[s]);
		*out = (uint32_t)(w * 64 +
				  (size_t)__builtin_ctzll(~p->used[w]));
		return 0;
	}
	return -ENOSPC;
}

/* A requested MLID is honoured when it is in the pool and free, as
 * OpenSM's get_new_mlid() does; otherwise the lowest free one, then (with
 * cfg.mlid_share) the next used one in turn. */
int sae_mlid_alloc(struct imc_sa *sa, uint16_t want, uint16_t *out)
{
	struct sae_mlids *p = &sa->mlids;
	uint32_t i;

	if (want >= p->first && (uint32_t)want - p->first < p->n &&
	    !mlid_used(p, (uint32_t)want - p->first)) {
		*out = want;
		return 0;
	}
	if (mlid_lowest_free(p, &i) == 0) {
		*out = (uint16_t)(p->first + i);
		return 0;
	}
	if (!sa->cfg.mlid_share || !p->n)
		return -ENOSPC;
	i = p->cursor;
	p->cursor = (p->cursor + 1) % p->n;
	*out = (uint16_t)(p->first + i);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Store. */

int sae_store_init(struct imc_sa *sa)
{
	if (imc_htab_init(&sa->groups, 64) || imc_htab_init(&sa->members, 64) ||
	    imc_htab_init(&sa->ports, 64) || imc_htab_init(&sa->mrefs, 16))
		return -ENOMEM;
	return mlids_init(&sa->mlids, sa->cfg.mlid_first, sa->cfg.mlid_last);
}

void sae_store_free(struct imc_sa *sa)
{
	struct imc_hnode *n, *all = NULL;
	size_t pos = 0;

	/* Taken out first (take never resizes), then freed: freeing a group
	 * removes it from a table that is no longer walked. */
	while (sa->groups.b && (n = imc_htab_take(&sa->groups, &pos))) {
		n->next = all;
		all = n;
	}
	while (all) {
		struct sae_group *g = imc_container_of(all, struct sae_group,
						       node);

		all = all->next;
		while (!imc_list_empty(&g->members))
			sae_member_del(sa, imc_container_of(
				g->members.next, struct sae_member,
				in_group));
		sae_group_free(sa, g);
	}
	pos = 0;
	while (sa->mrefs.b && (n = imc_htab_take(&sa->mrefs, &pos)))
		free(imc_container_of(n, struct sae_mref, node));
	imc_htab_fini(&sa->groups);
	imc_htab_fini(&sa->members);
	imc_htab_fini(&sa->ports);
	imc_htab_fini(&sa->mrefs);
	mlids_free(&sa->mlids);
}

static uint64_t group_hash(const struct imc_sa *sa, const struct imc_gid *mgid)
{
	return imc_gid_hash(mgid, sa->cfg.hash_seed);
}

struct sae_group *sae_group_find(const struct imc_sa *sa,
			       const struct imc_gid *mgid)
{
	uint64_t h = group_hash(sa, mgid);

	for (struct imc_hnode *n = imc_htab_bucket(&sa->groups, h); n;
	     n = n->next) {
		struct sae_group *g = imc_container_of(n, struct sae_group,
						       node);

		if (n->hash == h && imc_gid_equal(&g->rec.mgid, mgid))
			return g;
	}
	return NULL;
}

struct sae_group *sae_group_by_mlid(const struct imc_sa *sa, uint16_t mlid)
{
	const struct sae_mlids *p = &sa->mlids;

	if (mlid < p->first || (uint32_t)mlid - p->first >= p->n)
		return NULL;
	return p->head[mlid - p->first];
}

/* rec->mlid must come from sae_mlid_alloc(). */
struct sae_group *sae_group_new(struct imc_sa *sa, const struct imc_mcmr *rec,
			      bool persistent)
{
	struct sae_mlids *p = &sa->mlids;
	uint32_t i = (uint32_t)rec->mlid - p->first;
	struct sae_group *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->rec = *rec;
	memset(&g->rec.port_gid, 0, sizeof(g->rec.port_gid));
	g->rec.join_state = 0;
	g->rec.proxy_join = false;
	g->persistent = persistent;
	imc_list_init(&g->members);
	if (!p->head[i])
		mlid_take(p, i);
	g->mlid_next = p->head[i];
	p->head[i] = g;
	imc_htab_insert(&sa->groups, &g->node, group_hash(sa, &rec->mgid));
	return g;
}

/* The group must have no members left. */
void sae_group_free(struct imc_sa *sa, struct sae_group *g)
{
	struct sae_mlids *p = &sa->mlids;
	uint32_t i = (uint32_t)g->rec.mlid - p->first;
	struct sae_group **pp = &p->head[i];

	while (*pp && *pp != g)
		pp = &(*pp)->mlid_next;
	if (*pp)
		*pp = g->mlid_next;
	if (!p->head[i])
		mlid_give(p, i);
	imc_htab_remove(&sa->groups, &g->node);
	free(g);
}

static uint64_t member_hash_of(const struct imc_sa *sa, uint64_t group_hash,
			       const struct imc_gid *port_gid)
{
	return imc_gid_hash(port_gid, sae_mix(group_hash, sa->cfg.hash_seed));
}

static uint64_t member_hash(const struct imc_sa *sa, const struct sae_group *g,
			    const struct imc_gid *port_gid)
{
	return member_hash_of(sa, g->node.hash, port_gid);
}

/* Served one after the other, queued MCMemberRecord requests wait on
 * memory: the buckets (stage 0), then the group and member nodes
 * (stage 1) of a coming request are fetched while earlier ones are
 * served. A prefetch never faults, whatever the bytes hold. */
void sae_prefetch(const struct imc_sa *sa, const uint8_t *mad, int stage)
{
	const struct imc_gid *mgid, *port;
	uint64_t gh, mh;
	struct imc_hnode *const *gb, *const *mb;

	if (mad[16] != 0 || mad[17] != UMAD_SA_ATTR_MCMEMBER_REC)
		return;
	mgid = (const struct imc_gid *)(mad + IMC_SA_DATA_OFFSET);
	port = (const struct imc_gid *)(mad + IMC_SA_DATA_OFFSET + 16);
	gh = group_hash(sa, mgid);
	mh = member_hash_of(sa, gh, port);
	gb = &sa->groups.b[gh & sa->groups.mask];
	mb = &sa->members.b[mh & sa->members.mask];
	if (stage == 0) {
		__builtin_prefetch(gb);
		__builtin_prefetch(mb);
	} else {
		if (*gb)
			__builtin_prefetch(*gb);
		if (*mb)
			__builtin_prefetch(*mb);
	}
}

struct sae_member *sae_member_find(const struct imc_sa *sa,
				 const struct sae_group *g,
				 const struct imc_gid *port_gid)
{
	uint64_t h = member_hash(sa, g, port_gid);

	for (struct imc_hnode *n = imc_htab_bucket(&sa->members, h); n;
	     n = n->next) {
		struct sae_member *m = imc_container_of(n, struct sae_member,
						       node);

		if (n->hash == h && m->group == g &&
		    imc_gid_equal(&m->gid, port_gid))
			return m;
	}
	return NULL;
}

struct sae_pent *sae_port_find(const struct imc_sa *sa,
			     const struct imc_gid *gid)
{
	uint64_t h = imc_gid_hash(gid, sa->cfg.hash_seed);

	for (struct imc_hnode *n = imc_htab_bucket(&sa->ports, h); n;
	     n = n->next) {
		struct sae_pent *pe = imc_container_of(n, struct sae_pent,
						       node);

		if (n->hash == h && imc_gid_equal(&pe->gid, gid))
			return pe;
	}
	return NULL;
}

struct sae_member *sae_member_add(struct imc_sa *sa, struct sae_group *g,
				const struct imc_sa_port *port,
				uint8_t join_state, bool proxy)
{
	struct sae_pent *pe = sae_port_find(sa, &port->gid);
	struct sae_member *m;

	if (!pe) {
		pe = calloc(1, sizeof(*pe));
		if (!pe)
			return NULL;
		pe->gid = port->gid;
		imc_list_init(&pe->members);
		imc_htab_insert(&sa->ports, &pe->node,
			     imc_gid_hash(&port->gid, sa->cfg.hash_seed));
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		if (!pe->n) {
			imc_htab_remove(&sa->ports, &pe->node);
			free(pe);
		}
		return NULL;
	}
	m->group = g;
	m->port = pe;
	m->gid = port->gid;
	m->join_state = join_state;
	m->proxy = proxy;
	m->lid = port->lid;
	m->node_id = port->node;
	m->port_num = port->port_num;
	m->switch_port0 = port->switch_port0;
	imc_list_add_tail(&g->members, &m->in_group);
	imc_list_add_tail(&pe->members, &m->in_port);
	pe->n++;
	g->n_members++;
	if (sae_join_full(join_state))
		g->n_full++;
	sa->members_total++;
	imc_htab_insert(&sa->members, &m->node, member_hash(sa, g, &port->gid));
	return m;
}

void sae_member_set_state(struct imc_sa *sa, struct sae_member *m,
			 uint8_t join_state)
{
	bool was = sae_join_full(m->join_state), is = sae_join_full(join_state);

	if (was && !is)
		m->group->n_full--;
	else if (!was && is)
		m->group->n_full++;
	m->join_state = join_state;
}

void sae_member_del(struct imc_sa *sa, struct sae_member *m)
{
	struct sae_pent *pe = m->port;

	sae_member_set_state(sa, m, 0);
	imc_htab_remove(&sa->members, &m->node);
	imc_list_del(&m->in_group);
	imc_list_del(&m->in_port);
	m->group->n_members--;
	sa->members_total--;
	if (--pe->n == 0) {
		imc_htab_remove(&sa->ports, &pe->node);
		free(pe);
	}
	free(m);
}

/* With MLIDs shared, a port is on an MLID's tree while any of its groups
 * there has it as a member: count per (MLID, port). Returns whether the
 * tree changes. Without sharing a member is alone on its MLID. */
bool sae_tree_ref(struct imc_sa *sa, uint16_t mlid, const struct imc_gid *gid,
		 bool add)
{
	uint64_t h;
	struct sae_mref *r = NULL;

	if (!sa->cfg.mlid_share)
		return true;
	h = imc_gid_hash(gid, sae_mix(sa->cfg.hash_seed, mlid));
	for (struct imc_hnode *n = imc_htab_bucket(&sa->mrefs, h); n;
	     n = n->next) {
		struct sae_mref *e = imc_container_of(n, struct sae_mref, node);

		if (n->hash == h && e->mlid == mlid &&
		    imc_gid_equal(&e->gid, gid)) {
			r = e;
			break;
		}
	}
	if (add) {
		if (r)
			return ++r->count == 1;
		r = calloc(1, sizeof(*r));
		if (!r)
			return true;  /* counted as alone: still correct once */
		r->mlid = mlid;
		r->gid = *gid;
		r->count = 1;
		imc_htab_insert(&sa->mrefs, &r->node, h);
		return true;
	}
	if (!r)
		return true;
	if (--r->count)
		return false;
	imc_htab_remove(&sa->mrefs, &r->node);
	free(r);
	return true;
}

/* ------------------------------------------------------------------ */
/* Ordered views. */

static int cmp_group(const void *a, const void *b)
{
	const struct sae_group *x = *(const struct sae_group *const *)a;
	const struct sae_group *y = *(const struct sae_group *const *)b;

	return imc_gid_cmp(&x->rec.mgid, &y->rec.mgid);
}

static int cmp_member(const void *a, const void *b)
{
	const struct sae_member *x = *(const struct sae_member *const *)a;
	const struct sae_member *y = *(const struct sae_member *const *)b;

	return imc_gid_cmp(&x->gid, &y->gid);
}

/* Every group in MGID order; free *out. */
int sae_groups_sorted(const struct imc_sa *sa, struct sae_group ***out,
		     size_t *n)
{
	struct sae_group **v;
	struct imc_hnode *e;
	size_t k = 0, pos;

	v = malloc((sa->groups.n ? sa->groups.n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	imc_htab_foreach(e, pos, &sa->groups)
		v[k++] = imc_container_of(e, struct sae_group, node);
	qsort(v, k, sizeof(*v), cmp_group);
	*out = v;
	*n = k;
	return 0;
}

/* The group's members in PortGID order (g->n_members of them); free
 * *out. */
int sae_members_sorted(const struct sae_group *g, struct sae_member ***out)
{
	struct sae_member **v;
	size_t k = 0;

	v = malloc((g->n_members ? g->n_members : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (struct imc_list *l = g->members.next; l != &g->members;
	     l = l->next)
		v[k++] = imc_container_of(l, struct sae_member, in_group);
	qsort(v, k, sizeof(*v), cmp_member);
	*out = v;
	return 0;
}
