/* Topology generators.
 *
 *   switch:hosts=N[,ports=P][,width=W]
 *       one switch "L-0001", HCAs on ports 1..N.
 *   fat-tree:leaves=L,hosts=H,spines=S[,ports=P][,width=W]
 *       two levels: leaf l has its H hosts on ports 1..H and spine s on
 *       port H+s; spine s has leaf l on port l.
 *   fat-tree:pods=P,leaves=L,hosts=H,aggs=A,spines=S[,ports=P][,width=W]
 *       three levels, a folded Clos (k-ary fat tree) of P pods: in a pod
 *       every leaf is cabled to every aggregation switch (leaf port H+a,
 *       agg port l); the spines form A groups of S/A, and aggregation
 *       switch a of every pod is cabled to each spine of group a (agg
 *       port L+k, spine port = pod number), so S must be a multiple of A.
 *
 * All indices above count from 1. Every switch has the same radix:
 * ports=P when given (an error when the wiring needs more), else 36, the
 * port count of the common IB switch ASIC, raised to what the wiring
 * needs (at most 254). HCAs have one port; the first HCA runs the SM.
 *
 * Nodes are added HCAs first ("H-000001".., leaf order), then leaves
 * ("L-0001"..; in a 3-level tree pod by pod), aggregation switches
 * ("A-0001"..), spines ("S-0001"..). GUIDs are deterministic: HCA i has
 * 0x0002c90300000000 + 2i (port 1 is one more), switch i (counted over all
 * switches in the order above) 0x0002c90200000000 + i.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/topo.h"

#define HCA_GUID 0x0002c90300000000ull
#define SW_GUID 0x0002c90200000000ull
#define DEFAULT_RADIX 36

enum key { K_HOSTS, K_PORTS, K_WIDTH, K_LEAVES, K_SPINES, K_PODS, K_AGGS,
	   K_MAX };

static const char *const keyname[K_MAX] = {
	"hosts", "ports", "width", "leaves", "spines", "pods", "aggs",
};

static int gfail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int gfail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return rc;
	n = snprintf(err, errlen, "generate: ");
	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - n, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* a * b, saturated just past the node limit. */
static uint64_t mul(uint64_t a, uint64_t b)
{
	if (a && b > (IMC_TOPO_MAX_NODES + 1ull) / a)
		return IMC_TOPO_MAX_NODES + 1ull;
	return a * b;
}

/* Names "H-000001", "L-0001": a letter, then num with digits digits. */
static int add(struct imc_topo *t, enum imc_node_type type, unsigned nports,
	       char letter, int digits, unsigned long long num, uint64_t guid)
{
	char name[32];

	snprintf(name, sizeof(name), "%c-%0*llu", letter, digits, num);
	return imc_topo_add_node(t, type, nports, name, guid, NULL);
}

/* What a spec says, and the sizes it gives. */
struct gen {
	uint64_t v[K_MAX];
	bool have[K_MAX];
	bool tree, three;
	unsigned width;
	uint64_t hcas, leaves, aggs, spines, radix;
	char *err;
	size_t errlen;
};

/* The kind before the colon; *rest: what follows it. */
static int parse_kind(struct gen *g, const char *spec, const char **rest)
{
	const char *colon = strchr(spec, ':');

	if (!colon)
		return gfail(g->err, g->errlen, -EINVAL,
			     "expected 'switch:' or 'fat-tree:', got '%.40s'",
			     spec);
	if ((size_t)(colon - spec) == 6 && !strncmp(spec, "switch", 6))
		g->tree = false;
	else if ((size_t)(colon - spec) == 8 && !strncmp(spec, "fat-tree", 8))
		g->tree = true;
	else
		return gfail(g->err, g->errlen, -EINVAL,
			     "unknown kind '%.*s' (switch, fat-tree)",
			     (int)(colon - spec) > 40 ? 40 : (int)(colon - spec),
			     spec);
	*rest = colon + 1;
	return 0;
}

/* One key=number of the list; *ps moves past it and its comma. */
static int parse_key(struct gen *g, const char **ps)
{
	const char *s = *ps;
	size_t klen = strcspn(s, "=,");
	unsigned k;
	uint64_t x = 0;
	int nd = 0;

	for (k = 0; k < K_MAX; k++)
		if (strlen(keyname[k]) == klen && !strncmp(s, keyname[k], klen))
			break;
	if (k == K_MAX || (!g->tree && k != K_HOSTS && k != K_PORTS &&
			   k != K_WIDTH))
		return gfail(g->err, g->errlen, -EINVAL,
			     "unknown key '%.*s' for %s", klen > 40 ?
			     40 : (int)klen, s, g->tree ? "fat-tree" :
			     "switch");
	if (g->have[k])
		return gfail(g->err, g->errlen, -EINVAL,
			     "key '%s' given twice", keyname[k]);
	s += klen;
	if (*s != '=')
		return gfail(g->err, g->errlen, -EINVAL,
			     "expected '=' after '%s'", keyname[k]);
	s++;
	while (*s >= '0' && *s <= '9') {
		x = x * 10 + (uint64_t)(*s++ - '0');
		if (++nd > 10)
			break;
	}
	if (!nd || (*s && *s != ',') || nd > 10)
		return gfail(g->err, g->errlen, -EINVAL,
			     "expected a number for '%s'", keyname[k]);
	if (!x)
		return gfail(g->err, g->errlen, -EINVAL,
			     "'%s' must be at least 1", keyname[k]);
	if (x > IMC_TOPO_MAX_NODES)
		return gfail(g->err, g->errlen, -E2BIG,
			     "more than %u nodes", IMC_TOPO_MAX_NODES);
	g->v[k] = x;
	g->have[k] = true;
	if (*s == ',')
		s++;
	*ps = s;
	return 0;
}

/* The keys each kind needs, and the width. */
static int check_keys(struct gen *g)
{
	g->three = g->have[K_PODS] || g->have[K_AGGS];
	if (!g->have[K_HOSTS])
		return gfail(g->err, g->errlen, -EINVAL, "missing key 'hosts'");
	if (g->tree && !g->have[K_LEAVES])
		return gfail(g->err, g->errlen, -EINVAL,
			     "missing key 'leaves'");
	if (g->tree && !g->have[K_SPINES])
		return gfail(g->err, g->errlen, -EINVAL,
			     "missing key 'spines'");
	if (g->three && !g->have[K_PODS])
		return gfail(g->err, g->errlen, -EINVAL, "missing key 'pods'");
	if (g->three && !g->have[K_AGGS])
		return gfail(g->err, g->errlen, -EINVAL, "missing key 'aggs'");
	g->width = g->have[K_WIDTH] ? (unsigned)g->v[K_WIDTH] : 4;
	if (g->width != 1 && g->width != 4 && g->width != 8 && g->width != 12)
		return gfail(g->err, g->errlen, -EINVAL,
			     "width %u is not 1, 4, 8 or 12", g->width);
	return 0;
}

/* Sizes, and the radix every switch needs. */
static int size_up(struct gen *g)
{
	const uint64_t *v = g->v;
	uint64_t need, up;

	if (!g->tree) {
		g->leaves = 1;
		g->spines = 0;
		g->hcas = v[K_HOSTS];
		need = g->hcas;
	} else if (!g->three) {
		g->leaves = v[K_LEAVES];
		g->spines = v[K_SPINES];
		g->hcas = mul(g->leaves, v[K_HOSTS]);
		need = v[K_HOSTS] + g->spines;
		if (g->leaves > need)
			need = g->leaves;
	} else {
		if (v[K_SPINES] % v[K_AGGS])
			return gfail(g->err, g->errlen, -EINVAL,
				     "spines (%llu) must be a multiple of aggs "
				     "(%llu): spine group a serves agg a of "
				     "every pod",
				     (unsigned long long)v[K_SPINES],
				     (unsigned long long)v[K_AGGS]);
		g->leaves = mul(v[K_PODS], v[K_LEAVES]);
		g->aggs = mul(v[K_PODS], v[K_AGGS]);
		g->spines = v[K_SPINES];
		g->hcas = mul(g->leaves, v[K_HOSTS]);
		up = g->spines / v[K_AGGS];
		need = v[K_HOSTS] + v[K_AGGS];
		if (v[K_LEAVES] + up > need)
			need = v[K_LEAVES] + up;
		if (v[K_PODS] > need)
			need = v[K_PODS];
	}
	if (g->hcas + g->leaves + g->aggs + g->spines > IMC_TOPO_MAX_NODES)
		return gfail(g->err, g->errlen, -E2BIG, "more than %u nodes",
			     IMC_TOPO_MAX_NODES);
	if (g->have[K_PORTS]) {
		g->radix = v[K_PORTS];
		if (g->radix > IMC_TOPO_MAX_PORTS)
			return gfail(g->err, g->errlen, -EINVAL,
				     "ports=%llu is more than %u",
				     (unsigned long long)g->radix,
				     IMC_TOPO_MAX_PORTS);
	} else {
		g->radix = need > DEFAULT_RADIX ? need : DEFAULT_RADIX;
		if (g->radix > IMC_TOPO_MAX_PORTS)
			g->radix = IMC_TOPO_MAX_PORTS;
	}
	if (need > g->radix)
		return gfail(g->err, g->errlen, -EINVAL,
			     "the wiring needs %llu ports per switch, radix "
			     "is %llu", (unsigned long long)need,
			     (unsigned long long)g->radix);
	return 0;
}

/* HCAs, leaves, aggregation switches, spines, in that order. */
static int add_nodes(const struct gen *g, struct imc_topo *t)
{
	unsigned radix = (unsigned)g->radix;
	uint64_t i, sw = 0;
	int rc = 0;

	for (i = 0; i < g->hcas && !rc; i++)
		rc = add(t, IMC_NODE_HCA, 1, 'H', 6, i + 1,
			 HCA_GUID + 2 * (i + 1));
	for (i = 0; i < g->leaves && !rc; i++)
		rc = add(t, IMC_NODE_SWITCH, radix, 'L', 4, i + 1,
			 SW_GUID + ++sw);
	for (i = 0; i < g->aggs && !rc; i++)
		rc = add(t, IMC_NODE_SWITCH, radix, 'A', 4, i + 1,
			 SW_GUID + ++sw);
	for (i = 0; i < g->spines && !rc; i++)
		rc = add(t, IMC_NODE_SWITCH, radix, 'S', 4, i + 1,
			 SW_GUID + ++sw);
	return rc;
}

/* The cables of a 3-level tree above the leaves. Node indices: HCAs
 * 0.., leaves from l0, aggs from a0, then spines from s0. */
static int cable_three(const struct gen *g, struct imc_topo *t, uint64_t l0,
		       uint64_t a0, uint64_t s0)
{
	uint64_t hosts = g->v[K_HOSTS], pl = g->v[K_LEAVES], pa = g->v[K_AGGS];
	uint64_t up = g->spines / pa, i, j, k, p;
	int rc = 0;

	for (i = 0; i < g->leaves; i++) {
		p = i / pl;
		for (j = 0; j < pa && !rc; j++)
			rc = imc_topo_connect(t, (uint32_t)(l0 + i),
					      (unsigned)(hosts + 1 + j),
					      (uint32_t)(a0 + p * pa + j),
					      (unsigned)(i % pl + 1), g->width);
	}
	for (i = 0; i < g->aggs; i++) {
		p = i / pa;
		j = i % pa;
		for (k = 0; k < up && !rc; k++)
			rc = imc_topo_connect(t, (uint32_t)(a0 + i),
					      (unsigned)(pl + 1 + k),
					      (uint32_t)(s0 + j * up + k),
					      (unsigned)(p + 1), g->width);
	}
	return rc;
}

static int cable(const struct gen *g, struct imc_topo *t)
{
	uint64_t l0 = g->hcas, a0 = g->hcas + g->leaves, s0 = a0 + g->aggs;
	uint64_t hosts = g->v[K_HOSTS], i, j;
	int rc = 0;

	for (i = 0; i < g->hcas && !rc; i++)
		rc = imc_topo_connect(t, (uint32_t)i, 1,
				      (uint32_t)(l0 + i / hosts),
				      (unsigned)(i % hosts + 1), g->width);
	if (g->tree && !g->three) {
		for (i = 0; i < g->leaves; i++)
			for (j = 0; j < g->spines && !rc; j++)
				rc = imc_topo_connect(t, (uint32_t)(l0 + i),
						      (unsigned)(hosts + 1 + j),
						      (uint32_t)(s0 + j),
						      (unsigned)(i + 1),
						      g->width);
	} else if (g->three && !rc) {
		rc = cable_three(g, t, l0, a0, s0);
	}
	return rc;
}

int imc_topo_generate(const char *spec, struct imc_topo **out, char *err,
		      size_t errlen)
{
	struct gen g = { .err = err, .errlen = errlen };
	struct imc_topo *t = NULL;
	const char *s = spec;
	int rc;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	rc = parse_kind(&g, spec, &s);
	while (!rc && *s)
		rc = parse_key(&g, &s);
	if (!rc)
		rc = check_keys(&g);
	if (!rc)
		rc = size_up(&g);
	if (rc)
		return rc;
	rc = imc_topo_create(&t);
	if (rc)
		return gfail(err, errlen, rc, "%s", strerror(-rc));
	rc = add_nodes(&g, t);
	if (!rc)
		rc = cable(&g, t);
	if (rc) {
		imc_topo_destroy(t);
		return gfail(err, errlen, rc, "%s", strerror(-rc));
	}
	if (g.hcas) {
		t->sm_node = 0;
		t->sm_port = 1;
	}
	*out = t;
	return 0;
}
