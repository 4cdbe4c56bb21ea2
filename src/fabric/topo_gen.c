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

int imc_topo_generate(const char *spec, struct imc_topo **out, char *err,
		      size_t errlen)
{
	uint64_t v[K_MAX] = { 0 };
	bool have[K_MAX] = { false };
	bool tree, three;
	const char *s, *colon;
	uint64_t hcas, leaves, aggs = 0, spines, nodes, need = 0, radix, i, j;
	uint64_t up, sw;
	struct imc_topo *t = NULL;
	unsigned width;
	int rc;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	colon = strchr(spec, ':');
	if (!colon)
		return gfail(err, errlen, -EINVAL,
			     "expected 'switch:' or 'fat-tree:', got '%.40s'",
			     spec);
	if ((size_t)(colon - spec) == 6 && !strncmp(spec, "switch", 6))
		tree = false;
	else if ((size_t)(colon - spec) == 8 && !strncmp(spec, "fat-tree", 8))
		tree = true;
	else
		return gfail(err, errlen, -EINVAL,
			     "unknown kind '%.*s' (switch, fat-tree)",
			     (int)(colon - spec) > 40 ? 40 : (int)(colon - spec),
			     spec);
	for (s = colon + 1; *s;) {
		size_t klen = strcspn(s, "=,");
		unsigned k;
		uint64_t x = 0;
		int nd = 0;

		for (k = 0; k < K_MAX; k++)
			if (strlen(keyname[k]) == klen &&
			    !strncmp(s, keyname[k], klen))
				break;
		if (k == K_MAX || (!tree && k != K_HOSTS && k != K_PORTS &&
				   k != K_WIDTH))
			return gfail(err, errlen, -EINVAL,
				     "unknown key '%.*s' for %s", klen > 40 ?
				     40 : (int)klen, s, tree ? "fat-tree" :
				     "switch");
		if (have[k])
			return gfail(err, errlen, -EINVAL,
				     "key '%s' given twice", keyname[k]);
		s += klen;
		if (*s != '=')
			return gfail(err, errlen, -EINVAL,
				     "expected '=' after '%s'", keyname[k]);
		s++;
		while (*s >= '0' && *s <= '9') {
			x = x * 10 + (uint64_t)(*s++ - '0');
			if (++nd > 10)
				break;
		}
		if (!nd || (*s && *s != ',') || nd > 10)
			return gfail(err, errlen, -EINVAL,
				     "expected a number for '%s'", keyname[k]);
		if (!x)
			return gfail(err, errlen, -EINVAL,
				     "'%s' must be at least 1", keyname[k]);
		if (x > IMC_TOPO_MAX_NODES)
			return gfail(err, errlen, -E2BIG,
				     "more than %u nodes", IMC_TOPO_MAX_NODES);
		v[k] = x;
		have[k] = true;
		if (*s == ',')
			s++;
	}
	three = have[K_PODS] || have[K_AGGS];
	if (!have[K_HOSTS])
		return gfail(err, errlen, -EINVAL, "missing key 'hosts'");
	if (tree && !have[K_LEAVES])
		return gfail(err, errlen, -EINVAL, "missing key 'leaves'");
	if (tree && !have[K_SPINES])
		return gfail(err, errlen, -EINVAL, "missing key 'spines'");
	if (three && !have[K_PODS])
		return gfail(err, errlen, -EINVAL, "missing key 'pods'");
	if (three && !have[K_AGGS])
		return gfail(err, errlen, -EINVAL, "missing key 'aggs'");
	width = have[K_WIDTH] ? (unsigned)v[K_WIDTH] : 4;
	if (width != 1 && width != 4 && width != 8 && width != 12)
		return gfail(err, errlen, -EINVAL,
			     "width %u is not 1, 4, 8 or 12", width);

	/* Sizes and the radix every switch needs. */
	if (!tree) {
		leaves = 1;
		spines = 0;
		hcas = v[K_HOSTS];
		need = hcas;
	} else if (!three) {
		leaves = v[K_LEAVES];
		spines = v[K_SPINES];
		hcas = mul(leaves, v[K_HOSTS]);
		need = v[K_HOSTS] + spines;
		if (leaves > need)
			need = leaves;
	} else {
		if (v[K_SPINES] % v[K_AGGS])
			return gfail(err, errlen, -EINVAL,
				     "spines (%llu) must be a multiple of aggs "
				     "(%llu): spine group a serves agg a of "
				     "every pod",
				     (unsigned long long)v[K_SPINES],
				     (unsigned long long)v[K_AGGS]);
		leaves = mul(v[K_PODS], v[K_LEAVES]);
		aggs = mul(v[K_PODS], v[K_AGGS]);
		spines = v[K_SPINES];
		hcas = mul(leaves, v[K_HOSTS]);
		up = spines / v[K_AGGS];
		need = v[K_HOSTS] + v[K_AGGS];
		if (v[K_LEAVES] + up > need)
			need = v[K_LEAVES] + up;
		if (v[K_PODS] > need)
			need = v[K_PODS];
	}
	nodes = hcas + leaves + aggs + spines;
	if (nodes > IMC_TOPO_MAX_NODES)
		return gfail(err, errlen, -E2BIG, "more than %u nodes",
			     IMC_TOPO_MAX_NODES);
	if (have[K_PORTS]) {
		radix = v[K_PORTS];
		if (radix > IMC_TOPO_MAX_PORTS)
			return gfail(err, errlen, -EINVAL,
				     "ports=%llu is more than %u",
				     (unsigned long long)radix,
				     IMC_TOPO_MAX_PORTS);
	} else {
		radix = need > DEFAULT_RADIX ? need : DEFAULT_RADIX;
		if (radix > IMC_TOPO_MAX_PORTS)
			radix = IMC_TOPO_MAX_PORTS;
	}
	if (need > radix)
		return gfail(err, errlen, -EINVAL,
			     "the wiring needs %llu ports per switch, radix "
			     "is %llu", (unsigned long long)need,
			     (unsigned long long)radix);

	rc = imc_topo_create(&t);
	if (rc)
		return gfail(err, errlen, rc, "%s", strerror(-rc));
	sw = 0;
	for (i = 0; i < hcas && !rc; i++)
		rc = add(t, IMC_NODE_HCA, 1, 'H', 6, i + 1,
			 HCA_GUID + 2 * (i + 1));
	for (i = 0; i < leaves && !rc; i++)
		rc = add(t, IMC_NODE_SWITCH, (unsigned)radix, 'L', 4, i + 1,
			 SW_GUID + ++sw);
	for (i = 0; i < aggs && !rc; i++)
		rc = add(t, IMC_NODE_SWITCH, (unsigned)radix, 'A', 4, i + 1,
			 SW_GUID + ++sw);
	for (i = 0; i < spines && !rc; i++)
		rc = add(t, IMC_NODE_SWITCH, (unsigned)radix, 'S', 4, i + 1,
			 SW_GUID + ++sw);
	if (rc)
		goto fail;

	/* Node indices: HCAs 0.., leaves from hcas, aggs, then spines. */
	{
		uint64_t l0 = hcas, a0 = hcas + leaves, s0 = a0 + aggs;
		uint64_t hosts = v[K_HOSTS];

		for (i = 0; i < hcas && !rc; i++)
			rc = imc_topo_connect(t, (uint32_t)i, 1,
					      (uint32_t)(l0 + i / hosts),
					      (unsigned)(i % hosts + 1), width);
		if (tree && !three) {
			for (i = 0; i < leaves; i++)
				for (j = 0; j < spines && !rc; j++)
					rc = imc_topo_connect(t,
						(uint32_t)(l0 + i),
						(unsigned)(hosts + 1 + j),
						(uint32_t)(s0 + j),
						(unsigned)(i + 1), width);
		} else if (three) {
			uint64_t pl = v[K_LEAVES], pa = v[K_AGGS], k, p;

			up = spines / pa;
			for (i = 0; i < leaves; i++) {
				p = i / pl;
				for (j = 0; j < pa && !rc; j++)
					rc = imc_topo_connect(t,
						(uint32_t)(l0 + i),
						(unsigned)(hosts + 1 + j),
						(uint32_t)(a0 + p * pa + j),
						(unsigned)(i % pl + 1), width);
			}
			for (i = 0; i < aggs; i++) {
				p = i / pa;
				j = i % pa;
				for (k = 0; k < up && !rc; k++)
					rc = imc_topo_connect(t,
						(uint32_t)(a0 + i),
						(unsigned)(pl + 1 + k),
						(uint32_t)(s0 + j * up + k),
						(unsigned)(p + 1), width);
			}
		}
	}
	if (rc)
		goto fail;
	if (hcas) {
		t->sm_node = 0;
		t->sm_port = 1;
	}
	*out = t;
	return 0;
fail:
	imc_topo_destroy(t);
	return gfail(err, errlen, rc, "%s", strerror(-rc));
}
