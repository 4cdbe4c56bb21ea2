/* Fabric topology: node table, name index and cables.
 *
 * The name index is the one hash table (util/hash.h): node i's entry is
 * hn[i], an array beside the node table with its capacity, keyed by the
 * name string. Nodes are never removed; when the arrays move (they grow
 * by doubling) the entries are inserted again, O(1) amortized.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/topo.h"
#include "util/hash.h"
#include "util/mix.h"
#include "util/vec.h"

/* Node GUIDs derived for guid == 0: a Mellanox OUI (00:02:c9) prefix, one
 * 256-GUID block per node so HCA port GUIDs (node GUID + port) never
 * collide with another node's. */
#define DERIVED_GUID_BASE 0x0002c90300000000ull

struct imc_topo_index {
	struct imc_htab names;
	struct imc_hnode *hn;   /* hn[i]: node i in names; t->cap of them */
	uint32_t hcas;
	uint32_t switches;
	uint32_t cables;
};

static uint64_t hash(const char *s)
{
	/* FNV-1a, 32 bits, mixed so that every bit counts in a bucket. */
	uint32_t h = 2166136261u;

	while (*s) {
		h ^= (uint8_t)*s++;
		h *= 16777619u;
	}
	return imc_mix64(h);
}

struct name_key {
	const struct imc_topo *t;
	const char *name;
};

static bool name_eq(const struct imc_hnode *n, const void *key)
{
	const struct name_key *k = key;

	return !strcmp(k->t->node[n - k->t->index->hn].name, k->name);
}

/* Room for cap nodes in the node table and its index entries. */
static int grow_nodes(struct imc_topo *t, uint32_t cap)
{
	struct imc_topo_index *x = t->index;

	if (IMC_VEC_RESIZE(&x->hn, cap))
		return -ENOMEM;
	/* The entries may have moved: the chains point at the old ones. */
	imc_htab_clear(&x->names);
	for (uint32_t i = 0; i < t->nnodes; i++)
		imc_htab_insert(&x->names, &x->hn[i], hash(t->node[i].name));
	if (IMC_VEC_RESIZE(&t->node, cap))
		return -ENOMEM;
	t->cap = cap;
	return 0;
}

int imc_topo_create(struct imc_topo **out)
{
	struct imc_topo *t;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->index = calloc(1, sizeof(*t->index));
	if (!t->index || imc_htab_init(&t->index->names, 64)) {
		free(t->index);
		free(t);
		return -ENOMEM;
	}
	t->sm_node = IMC_TOPO_NONE;
	*out = t;
	return 0;
}

void imc_topo_destroy(struct imc_topo *t)
{
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->nnodes; i++) {
		free(t->node[i].name);
		free(t->node[i].port);
	}
	free(t->node);
	if (t->index) {
		imc_htab_fini(&t->index->names);
		free(t->index->hn);
	}
	free(t->index);
	free(t);
}

int imc_topo_find(const struct imc_topo *t, const char *name, uint32_t *idx)
{
	struct name_key k = { t, name };
	struct imc_hnode *n = imc_htab_find(&t->index->names, hash(name),
					    name_eq, &k);

	if (!n)
		return -ENOENT;
	if (idx)
		*idx = (uint32_t)(n - t->index->hn);
	return 0;
}

/* A name must survive a trip through a net file: one line, between
 * double quotes. */
static bool name_ok(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;

	if (!*p)
		return false;
	for (; *p; p++)
		if (*p == '"' || *p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

int imc_topo_add_node(struct imc_topo *t, enum imc_node_type type,
		      unsigned nports, const char *name, uint64_t guid,
		      uint32_t *idx)
{
	struct imc_topo_index *x = t->index;
	struct imc_topo_node *n;
	uint32_t i;
	unsigned p;

	if (type != IMC_NODE_HCA && type != IMC_NODE_SWITCH)
		return -EINVAL;
	if (nports < 1 || nports > IMC_TOPO_MAX_PORTS)
		return -EINVAL;
	if (!name || !name_ok(name) || strlen(name) > IMC_TOPO_MAX_NAME)
		return -EINVAL;
	if (t->nnodes >= IMC_TOPO_MAX_NODES)
		return -ENOSPC;
	if (!imc_topo_find(t, name, NULL))
		return -EEXIST;
	if (t->nnodes == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 16;

		if (grow_nodes(t, cap < IMC_TOPO_MAX_NODES ? cap
							   : IMC_TOPO_MAX_NODES))
			return -ENOMEM;
	}
	i = t->nnodes;
	n = &t->node[i];
	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	n->port = malloc((nports + 1) * sizeof(*n->port));
	if (!n->name || !n->port) {
		free(n->name);
		free(n->port);
		return -ENOMEM;
	}
	n->type = type;
	n->nports = (uint16_t)nports;
	n->guid = guid ? guid : DERIVED_GUID_BASE + ((uint64_t)(i + 1) << 8);
	for (p = 0; p <= nports; p++) {
		struct imc_topo_port *tp = &n->port[p];

		tp->peer = IMC_TOPO_NONE;
		tp->peer_port = 0;
		tp->width = 4;
		/* IBA 14.2.5.x: switch port 0 carries the switch's port
		 * GUID; each HCA port has its own. */
		if (type == IMC_NODE_SWITCH)
			tp->guid = p == 0 ? n->guid : 0;
		else
			tp->guid = p == 0 ? 0 : n->guid + p;
	}
	t->nnodes++;
	imc_htab_insert(&x->names, &x->hn[i], hash(name));
	if (type == IMC_NODE_HCA)
		x->hcas++;
	else
		x->switches++;
	if (idx)
		*idx = i;
	return 0;
}

static bool width_ok(unsigned w)
{
	return w == 1 || w == 4 || w == 8 || w == 12;
}

int imc_topo_connect(struct imc_topo *t, uint32_t a, unsigned pa, uint32_t b,
		     unsigned pb, unsigned width)
{
	struct imc_topo_port *x, *y;

	if (width == 0)
		width = 4;
	if (!width_ok(width))
		return -EINVAL;
	if (a >= t->nnodes || b >= t->nnodes)
		return -EINVAL;
	if (pa < 1 || pa > t->node[a].nports || pb < 1 ||
	    pb > t->node[b].nports)
		return -EINVAL;
	if (a == b && pa == pb)
		return -EINVAL;
	x = &t->node[a].port[pa];
	y = &t->node[b].port[pb];
	if (x->peer == b && x->peer_port == pb) {
		/* Already this cable: the second end of a net file pair. */
		x->width = y->width = (uint8_t)width;
		return 0;
	}
	if (x->peer != IMC_TOPO_NONE || y->peer != IMC_TOPO_NONE)
		return -EBUSY;
	x->peer = b;
	x->peer_port = (uint8_t)pb;
	y->peer = a;
	y->peer_port = (uint8_t)pa;
	x->width = y->width = (uint8_t)width;
	t->index->cables++;
	return 0;
}

void imc_topo_counts(const struct imc_topo *t, uint32_t *hcas,
		     uint32_t *switches, uint32_t *cables)
{
	if (hcas)
		*hcas = t->index->hcas;
	if (switches)
		*switches = t->index->switches;
	if (cables)
		*cables = t->index->cables;
}

int imc_topo_compare(const struct imc_topo *a, const struct imc_topo *b,
		     char *why, size_t whylen)
{
	uint32_t i;
	unsigned p;

#define DIFF(...) do { \
		if (why && whylen) \
			snprintf(why, whylen, __VA_ARGS__); \
		return 1; \
	} while (0)

	if (a->nnodes != b->nnodes)
		DIFF("%u nodes vs %u", a->nnodes, b->nnodes);
	if (a->sm_node != b->sm_node || a->sm_port != b->sm_port)
		DIFF("SM port %u/%u vs %u/%u", a->sm_node, a->sm_port,
		     b->sm_node, b->sm_port);
	for (i = 0; i < a->nnodes; i++) {
		const struct imc_topo_node *x = &a->node[i], *y = &b->node[i];

		if (strcmp(x->name, y->name))
			DIFF("node %u: name \"%s\" vs \"%s\"", i, x->name,
			     y->name);
		if (x->type != y->type || x->nports != y->nports)
			DIFF("node \"%s\": type/ports %d/%u vs %d/%u", x->name,
			     x->type, x->nports, y->type, y->nports);
		if (x->guid != y->guid)
			DIFF("node \"%s\": guid 0x%016llx vs 0x%016llx",
			     x->name, (unsigned long long)x->guid,
			     (unsigned long long)y->guid);
		for (p = 0; p <= x->nports; p++) {
			const struct imc_topo_port *s = &x->port[p];
			const struct imc_topo_port *d = &y->port[p];

			if (s->guid != d->guid)
				DIFF("\"%s\"[%u]: port guid 0x%016llx vs "
				     "0x%016llx", x->name, p,
				     (unsigned long long)s->guid,
				     (unsigned long long)d->guid);
			if (s->peer != d->peer || s->peer_port != d->peer_port)
				DIFF("\"%s\"[%u]: peer %u[%u] vs %u[%u]",
				     x->name, p, s->peer, s->peer_port,
				     d->peer, d->peer_port);
			if (s->peer != IMC_TOPO_NONE && s->width != d->width)
				DIFF("\"%s\"[%u]: width %u vs %u", x->name, p,
				     s->width, d->width);
		}
	}
#undef DIFF
	if (why && whylen)
		why[0] = '\0';
	return 0;
}
