/* Fabric topology: node table, net-file reader and writer, generators. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ibmcast/topo.h"

#define EX IMC_SOURCE_DIR "/examples/"
#define IBSIM_EX "/usr/share/doc/ibsim-utils/net-examples/"

static uint32_t idx(const struct imc_topo *t, const char *name)
{
	uint32_t i = IMC_TOPO_NONE;

	assert_int_equal(imc_topo_find(t, name, &i), 0);
	return i;
}

/* Asserts that a[pa] and b[pb] are cabled to each other. */
static void cabled(const struct imc_topo *t, const char *a, unsigned pa,
		   const char *b, unsigned pb, unsigned width)
{
	uint32_t x = idx(t, a), y = idx(t, b);

	assert_int_equal(t->node[x].port[pa].peer, y);
	assert_int_equal(t->node[x].port[pa].peer_port, pb);
	assert_int_equal(t->node[y].port[pb].peer, x);
	assert_int_equal(t->node[y].port[pb].peer_port, pa);
	assert_int_equal(t->node[x].port[pa].width, width);
	assert_int_equal(t->node[y].port[pb].width, width);
}

static void uncabled(const struct imc_topo *t, const char *a, unsigned pa)
{
	assert_int_equal(t->node[idx(t, a)].port[pa].peer, IMC_TOPO_NONE);
}

static void counts(const struct imc_topo *t, uint32_t hcas, uint32_t sws,
		   uint32_t cables)
{
	uint32_t h, s, c, i, n = 0;
	unsigned p;

	imc_topo_counts(t, &h, &s, &c);
	assert_int_equal(h, hcas);
	assert_int_equal(s, sws);
	assert_int_equal(c, cables);
	assert_int_equal(t->nnodes, hcas + sws);
	/* The O(1) cable count agrees with the port table. */
	for (i = 0; i < t->nnodes; i++)
		for (p = 1; p <= t->node[i].nports; p++)
			n += t->node[i].port[p].peer != IMC_TOPO_NONE;
	assert_int_equal(n, 2 * cables);
}

static void sm_is(const struct imc_topo *t, const char *name, unsigned port)
{
	assert_int_equal(t->sm_node, idx(t, name));
	assert_int_equal(t->sm_port, port);
}

static struct imc_topo *parse(const char *text)
{
	struct imc_topo *t = NULL;
	char err[512] = "";
	int rc = imc_topo_parse_string(text, "net", &t, err, sizeof(err));

	if (rc)
		print_message("parse error: %s\n", err);
	assert_int_equal(rc, 0);
	assert_string_equal(err, "");
	return t;
}

static struct imc_topo *load(const char *path)
{
	struct imc_topo *t = NULL;
	char err[512] = "";
	int rc = imc_topo_parse_file(path, &t, err, sizeof(err));

	if (rc)
		print_message("%s: %s\n", path, err);
	assert_int_equal(rc, 0);
	return t;
}

static struct imc_topo *gen(const char *spec)
{
	struct imc_topo *t = NULL;
	char err[256] = "";
	int rc = imc_topo_generate(spec, &t, err, sizeof(err));

	if (rc)
		print_message("%s: %s\n", spec, err);
	assert_int_equal(rc, 0);
	return t;
}

/* Net-file text of t; free() it. */
static char *text_of(const struct imc_topo *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(imc_topo_write(t, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* write -> parse gives the same topology, and writing that gives the
 * same bytes. */
static void round_trip(const struct imc_topo *t)
{
	char *s1 = text_of(t), *s2, why[256];
	struct imc_topo *u = parse(s1);

	if (imc_topo_compare(t, u, why, sizeof(why)))
		fail_msg("round trip differs: %s", why);
	s2 = text_of(u);
	assert_string_equal(s1, s2);
	free(s1);
	free(s2);
	imc_topo_destroy(u);
}

/* ---- node table ---- */

static void test_api(void **state)
{
	struct imc_topo *t;
	uint32_t s, h1, h2, i;
	char name[300];

	assert_int_equal(imc_topo_create(&t), 0);
	assert_int_equal(t->sm_node, IMC_TOPO_NONE);
	assert_int_equal(imc_topo_find(t, "x", &i), -ENOENT);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_SWITCH, 8, "sw", 0, &s),
			 0);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 2, "h1",
					   0x1000, &h1), 0);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 2, "h2", 0, &h2),
			 0);
	assert_int_equal(s, 0);
	assert_int_equal(h1, 1);
	assert_int_equal(h2, 2);
	/* Derived GUIDs: one 256-GUID block per node index + 1. */
	assert_true(t->node[s].guid == 0x0002c90300000100ull);
	assert_true(t->node[h2].guid == 0x0002c90300000300ull);
	/* Port GUIDs: HCA guid + port; switch port 0 = node GUID. */
	assert_true(t->node[h1].port[1].guid == 0x1001);
	assert_true(t->node[h1].port[2].guid == 0x1002);
	assert_true(t->node[h1].port[0].guid == 0);
	assert_true(t->node[s].port[0].guid == t->node[s].guid);
	assert_true(t->node[s].port[3].guid == 0);

	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 1, "h1", 0, NULL),
			 -EEXIST);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 0, "z", 0, NULL),
			 -EINVAL);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 255, "z", 0, NULL),
			 -EINVAL);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_SWITCH, 254, "z254", 0,
					   NULL), 0);
	assert_int_equal(imc_topo_add_node(t, 3, 1, "z", 0, NULL), -EINVAL);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 1, "", 0, NULL),
			 -EINVAL);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 1, "a\"b", 0,
					   NULL), -EINVAL);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 1, "a\tb", 0,
					   NULL), -EINVAL);
	memset(name, 'n', 256);
	name[256] = '\0';
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 1, name, 0, NULL),
			 -EINVAL);
	name[255] = '\0';
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 1, name, 0, &i),
			 0);
	assert_int_equal(idx(t, name), i);
	assert_int_equal(t->nnodes, 5);

	assert_int_equal(imc_topo_connect(t, s, 1, h1, 1, 0), 0);
	assert_int_equal(imc_topo_connect(t, h1, 1, s, 1, 12), 0); /* again */
	cabled(t, "sw", 1, "h1", 1, 12);
	assert_int_equal(imc_topo_connect(t, s, 1, h2, 1, 4), -EBUSY);
	assert_int_equal(imc_topo_connect(t, s, 2, h1, 1, 4), -EBUSY);
	assert_int_equal(imc_topo_connect(t, s, 0, h2, 1, 4), -EINVAL);
	assert_int_equal(imc_topo_connect(t, s, 9, h2, 1, 4), -EINVAL);
	assert_int_equal(imc_topo_connect(t, s, 2, h2, 3, 4), -EINVAL);
	assert_int_equal(imc_topo_connect(t, s, 2, 99, 1, 4), -EINVAL);
	assert_int_equal(imc_topo_connect(t, s, 2, s, 2, 4), -EINVAL);
	assert_int_equal(imc_topo_connect(t, s, 2, h2, 1, 2), -EINVAL);
	assert_int_equal(imc_topo_connect(t, s, 2, h2, 1, 8), 0);
	/* A loopback cable between two ports of one switch. */
	assert_int_equal(imc_topo_connect(t, s, 3, s, 4, 1), 0);
	cabled(t, "sw", 3, "sw", 4, 1);
	counts(t, 3, 2, 3);
	assert_int_equal(imc_topo_compare(t, t, NULL, 0), 0);
	imc_topo_destroy(t);
	imc_topo_destroy(NULL);
}

static void test_compare(void **state)
{
	struct imc_topo *a = gen("switch:hosts=2"), *b = gen("switch:hosts=2");
	char why[200];

	assert_int_equal(imc_topo_compare(a, b, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	b->node[1].port[1].width = 1;
	assert_int_equal(imc_topo_compare(a, b, why, sizeof(why)), 1);
	assert_string_equal(why, "\"H-000002\"[1]: width 4 vs 1");
	b->node[1].port[1].width = 4;
	b->sm_port = 0;
	b->sm_node = IMC_TOPO_NONE;
	assert_int_equal(imc_topo_compare(a, b, why, sizeof(why)), 1);
	assert_string_equal(why, "SM port 0/1 vs 4294967295/0");
	imc_topo_destroy(a);
	imc_topo_destroy(b);
}

/* ---- examples ---- */

static void test_example_ibsim_2sw(void **state)
{
	struct imc_topo *t = load(EX "ibsim-2sw.net");

	counts(t, 4, 2, 6);
	sm_is(t, "Hca1", 1);
	cabled(t, "Switch1", 3, "Switch2", 3, 4);
	cabled(t, "Switch1", 5, "Switch2", 5, 4);
	cabled(t, "Hca4", 1, "Switch2", 2, 4);
	uncabled(t, "Switch1", 4);
	uncabled(t, "Hca1", 2);
	/* ibsim's GUID rules: HCAs reserve nports + 1 from 0x100000. */
	assert_true(t->node[idx(t, "Hca1")].guid == 0x100000);
	assert_true(t->node[idx(t, "Hca4")].guid == 0x100009);
	assert_true(t->node[idx(t, "Hca4")].port[1].guid == 0x10000a);
	assert_true(t->node[idx(t, "Switch2")].guid == 0x200001);
	assert_true(t->node[idx(t, "Switch2")].port[0].guid == 0x200001);
	assert_int_equal(idx(t, "Switch1"), 4);
	round_trip(t);
	imc_topo_destroy(t);
}

static void test_example_single(void **state)
{
	struct imc_topo *t = load(EX "single-switch.net");
	uint32_t s = idx(t, "Switch");

	counts(t, 4, 1, 4);
	sm_is(t, "Host1", 1);
	cabled(t, "Host3", 1, "Switch", 3, 4);
	uncabled(t, "Switch", 5);
	assert_int_equal(t->node[s].nports, 8);
	assert_true(t->node[s].guid == 0x0002c90200001000ull);
	assert_true(t->node[idx(t, "Host2")].guid == 0x0002c90300001002ull);
	assert_true(t->node[idx(t, "Host2")].port[1].guid ==
		    0x0002c90300001003ull);
	round_trip(t);
	imc_topo_destroy(t);
}

static void test_example_fat_tree(void **state)
{
	struct imc_topo *t = load(EX "fat-tree-small.net");
	struct imc_topo *g = gen("fat-tree:leaves=4,hosts=4,spines=2");
	char why[256];

	counts(t, 16, 6, 24);
	sm_is(t, "H-000001", 1);
	cabled(t, "H-000016", 1, "L-0004", 4, 4);
	cabled(t, "L-0003", 6, "S-0002", 3, 4);
	if (imc_topo_compare(t, g, why, sizeof(why)))
		fail_msg("example differs from the generator: %s", why);
	round_trip(t);
	imc_topo_destroy(t);
	imc_topo_destroy(g);
}

static bool have_ibsim(void)
{
	if (access(IBSIM_EX "net", R_OK)) {
		print_message("ibsim examples not installed in %s (Debian "
			      "package ibsim-utils)\n", IBSIM_EX);
		return false;
	}
	return true;
}

static void test_ibsim_examples(void **state)
{
	struct imc_topo *t;

	if (!have_ibsim()) {
		skip();
		return;
	}
	t = load(IBSIM_EX "net");
	counts(t, 2, 2, 4);
	/* First port line: Switch1 [1]; the SM sits on its port 0. */
	sm_is(t, "Switch1", 0);
	cabled(t, "Switch1", 3, "Switch2", 3, 4);
	cabled(t, "Switch1", 4, "Switch2", 4, 4);
	cabled(t, "Hca2", 2, "Switch1", 2, 4);
	uncabled(t, "Hca2", 1);
	/* As ibsim's "Dump" shows them. */
	assert_true(t->node[idx(t, "Switch2")].guid == 0x200001);
	assert_true(t->node[idx(t, "Hca2")].guid == 0x100003);
	assert_true(t->node[idx(t, "Hca2")].port[2].guid == 0x100005);
	round_trip(t);
	imc_topo_destroy(t);

	t = load(IBSIM_EX "net.1");
	counts(t, 2, 1, 2);
	cabled(t, "Switch1", 4, "Hca2", 1, 4);
	imc_topo_destroy(t);

	t = load(IBSIM_EX "net.2sw2path");
	counts(t, 2, 2, 4);
	cabled(t, "Switch1", 5, "Switch2", 5, 4);
	cabled(t, "Switch2", 1, "Hca2", 1, 4);
	imc_topo_destroy(t);

	t = load(IBSIM_EX "net.2sw2path4hca");
	counts(t, 4, 2, 6);
	sm_is(t, "Switch1", 0);
	cabled(t, "Switch1", 3, "Switch2", 3, 4);
	cabled(t, "Hca3", 1, "Switch1", 2, 4);
	round_trip(t);
	imc_topo_destroy(t);

	t = load(IBSIM_EX "net.2sw2path4hca2port");
	counts(t, 2, 2, 6);
	cabled(t, "Hca1", 2, "Switch1", 2, 4);
	cabled(t, "Hca2", 2, "Switch2", 2, 4);
	round_trip(t);
	imc_topo_destroy(t);
}

/* ---- ibnetdiscover output ---- */

static const char discover[] =
	"#\n"
	"# Topology file: generated on Mon Mar  3 10:12:44 2014\n"
	"#\n"
	"# Initiated from node 0002c903000e0b72 port 0002c903000e0b73\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0xbd36\n"
	"sysimgguid=0x2c902004b0918\n"
	"switchguid=0x2c902004b0918(2c902004b0918)\n"
	"Switch\t36 \"S-0002c902004b0918\"\t\t# \"SX6036 Mellanox\" "
	"enhanced port 0 lid 3 lmc 0\n"
	"[1]\t\"H-0002c903000e0b72\"[1](2c903000e0b73) \t\t# \"node01 HCA-1\""
	" lid 4 4xFDR\n"
	"[2]\t\"H-0002c903000e0b90\"[2](2c903000e0b92)  w=1\t# \"node02\" "
	"lid 7 1xFDR\n"
	"[17]\t\"S-0002c90200405c4a\"[9]\t\t# \"IS5030\" lid 1 4xQDR\n"
	"[18]\t\"S-0002c90200405c4a\"[10]\tw=12\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0xbd34\n"
	"sysimgguid=0x2c90200405c4d\n"
	"switchguid=0x2c90200405c4a(2c90200405c4b)\n"
	"Switch\t36 \"S-0002c90200405c4a\"  enhanced port 0  # \"IS5030\" "
	"enhanced port 0 lid 1 lmc 0\n"
	"[9]\t\"S-0002c902004b0918\"[17]\t\t# \"SX6036 Mellanox\" lid 3\n"
	"[10]\t\"S-0002c902004b0918\"[18]\t\t# w=12 from the other end\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0x1003\n"
	"sysimgguid=0x2c903000e0b75\n"
	"caguid=0x2c903000e0b72\n"
	"Ca\t2 \"H-0002c903000e0b72\"\t\t# \"node01 HCA-1\"\n"
	"[1](2c903000e0b73) \t\"S-0002c902004b0918\"[1]\t\t# lid 4 lmc 0 "
	"\"SX6036 Mellanox\" lid 3 4xFDR\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0x1003\n"
	"sysimgguid=0x2c903000e0b93\n"
	"caguid=0x2c903000e0b90\n"
	"Ca\t2 \"H-0002c903000e0b90\"\t\t# \"node02\"\n"
	"[2](2c903000e0b92) \t\"S-0002c902004b0918\"[2]\tw=1\t# lid 7 lmc 0\r\n";

static void test_ibnetdiscover(void **state)
{
	struct imc_topo *t = parse(discover);
	uint32_t s1 = idx(t, "S-0002c902004b0918");
	uint32_t s2 = idx(t, "S-0002c90200405c4a");
	uint32_t h1 = idx(t, "H-0002c903000e0b72");
	uint32_t h2 = idx(t, "H-0002c903000e0b90");

	counts(t, 2, 2, 4);
	assert_int_equal(s1, 0);
	assert_int_equal(h2, 3);
	assert_int_equal(t->node[s1].type, IMC_NODE_SWITCH);
	assert_int_equal(t->node[h1].type, IMC_NODE_HCA);
	assert_int_equal(t->node[s1].nports, 36);
	assert_true(t->node[s1].guid == 0x2c902004b0918ull);
	assert_true(t->node[s2].guid == 0x2c90200405c4aull);
	/* The port 0 GUID in switchguid=..(..) may differ. */
	assert_true(t->node[s2].port[0].guid == 0x2c90200405c4bull);
	assert_true(t->node[h1].guid == 0x2c903000e0b72ull);
	assert_true(t->node[h1].port[1].guid == 0x2c903000e0b73ull);
	assert_true(t->node[h2].port[2].guid == 0x2c903000e0b92ull);
	cabled(t, "S-0002c902004b0918", 1, "H-0002c903000e0b72", 1, 4);
	cabled(t, "S-0002c902004b0918", 2, "H-0002c903000e0b90", 2, 1);
	cabled(t, "S-0002c902004b0918", 17, "S-0002c90200405c4a", 9, 4);
	cabled(t, "S-0002c902004b0918", 18, "S-0002c90200405c4a", 10, 12);
	sm_is(t, "S-0002c902004b0918", 0);
	round_trip(t);
	imc_topo_destroy(t);
}

/* Port GUIDs given only by the peer's "(guid)" and one-sided cables. */
static void test_peer_guid_one_sided(void **state)
{
	struct imc_topo *t = parse(
		"Switch 4 \"s\"\n"
		"[1] \"h\"[2](abc)\n"
		"[3] \"h\"[1]  w=8 # listed from this end only\n"
		"\n"
		"Hca 2 \"h\"\n");
	uint32_t h = idx(t, "h");

	counts(t, 1, 1, 2);
	cabled(t, "s", 1, "h", 2, 4);
	cabled(t, "s", 3, "h", 1, 8);
	assert_true(t->node[h].port[2].guid == 0xabc);
	assert_true(t->node[h].port[1].guid == 0x100001);
	sm_is(t, "s", 0);
	round_trip(t);
	imc_topo_destroy(t);

	/* Peer port defaults to 1, as in ibsim. */
	t = parse("Hca 1 \"a\"\n[1] \"b\"\nHca 1 \"b\"\n");
	cabled(t, "a", 1, "b", 1, 4);
	sm_is(t, "a", 1);
	imc_topo_destroy(t);

	/* ibsim's relative GUID base. */
	t = parse("caguid=0x1000\ncaguid+0x20\nHca 1 \"a\"\nHca 3 \"b\"\n"
		  "switchguid=0x50\nSwitch 2 \"s\"\nSwitch 2 \"u\"\n");
	assert_true(t->node[0].guid == 0x1020);
	assert_true(t->node[1].guid == 0x1022);
	assert_true(t->node[1].port[3].guid == 0x1025);
	assert_true(t->node[2].guid == 0x50);
	assert_true(t->node[3].guid == 0x51);
	assert_int_equal(t->sm_node, IMC_TOPO_NONE);
	counts(t, 2, 2, 0);
	round_trip(t);
	imc_topo_destroy(t);
}

/* ---- errors ---- */

struct bad {
	const char *text;
	int rc;
	const char *err;
};

static const struct bad bad[] = {
	{ "", -EINVAL, "net:1: no node declared" },
	{ "# only\n\n# comments\n", -EINVAL, "net:3: no node declared" },
	{ "Switch 8 \"S1\"\n[1] \"H1\"[1]\nfoo bar\n", -EINVAL,
	  "net:3: expected '[port]' or a node header, got 'foo'" },
	{ "Switch 8 \"S1\"\n[9] \"H1\"[1]\n", -EINVAL,
	  "net:2: port 9 out of range 1..8 for \"S1\"" },
	{ "Switch 8 \"S1\"\n[0] \"H1\"[1]\n", -EINVAL,
	  "net:2: port 0 out of range 1..8 for \"S1\"" },
	{ "Switch 8 \"S1\"\n[1] \"H1\"[3]\n\nHca 2 \"H1\"\n", -EINVAL,
	  "net:2: port 3 out of range 1..2 for \"H1\"" },
	{ "Switch 8 \"S1\"\n[1] \"H1\"[1]\n[2] \"Hca9\"[1]\n\n"
	  "Hca 2 \"H1\"\n", -EINVAL, "net:3: \"Hca9\" is not declared" },
	{ "Switch 8 \"Switch1\"\n[3] \"Switch2\"[3]\n\n"
	  "Switch 8 \"Switch2\"\n[3] \"Hca1\"[1]\n\nHca 1 \"Hca1\"\n", -EINVAL,
	  "net:2: cable \"Switch1\"[3] -> \"Switch2\"[3] disagrees with "
	  "\"Switch2\"[3] -> \"Hca1\"[1] (net:5)" },
	{ "Switch 8 \"a\"\n[3] \"b\"[3]\n\nSwitch 8 \"b\"\n[3] \"a\"[4]\n",
	  -EINVAL, "net:2: cable \"a\"[3] -> \"b\"[3] disagrees with "
	  "\"b\"[3] -> \"a\"[4] (net:5)" },
	{ "Switch 8 \"a\"\n[1] \"h\"[1]\n\nSwitch 8 \"b\"\n[1] \"h\"[1]\n\n"
	  "Hca 1 \"h\"\n", -EINVAL, "net:5: cable \"b\"[1] -> \"h\"[1]: "
	  "\"h\"[1] is already cabled to \"a\"[1] (net:2)" },
	{ "Switch 8 \"a\"\n[1] \"b\"[1] w=4\n\nSwitch 8 \"b\"\n"
	  "[1] \"a\"[1] w=12\n", -EINVAL,
	  "net:2: width 4 of \"a\"[1] disagrees with width 12 (net:5)" },
	{ "Switch 8 \"a\"\n[1] \"a\"[1]\n", -EINVAL,
	  "net:2: \"a\"[1] is cabled to itself" },
	{ "Hca 2 \"H1\"\n\nSwitch 8 \"S\"\n\nHca 1 \"H1\"\n", -EINVAL,
	  "net:5: node \"H1\" is already declared (net:1)" },
	{ "Switch 8 \"S\"\n[1] \"H\"[1]\n[1] \"H\"[2]\n", -EINVAL,
	  "net:3: port 1 of \"S\" is already listed (net:2)" },
	{ "Switch 0 \"S\"\n", -EINVAL,
	  "net:1: port count 0 out of range 1..254 for \"S\"" },
	{ "Hca 255 \"H\"\n", -EINVAL,
	  "net:1: port count 255 out of range 1..254 for \"H\"" },
	{ "Switch \"S\"\n", -EINVAL,
	  "net:1: expected a port count after 'Switch', got '\"S\"'" },
	{ "Ca 2\n", -EINVAL,
	  "net:1: expected a quoted node name, got 'end of line'" },
	{ "Ca 2 H1\n", -EINVAL, "net:1: expected a quoted node name, got 'H1'" },
	{ "Switch 8 \"S\"\n[1] \"H\"[1] w=3\n", -EINVAL,
	  "net:2: bad width 'w=3': expected w=1, w=4, w=8 or w=12" },
	{ "Switch 8 \"S\"\n[1] \"H\"[1] w=4x\n", -EINVAL,
	  "net:2: bad width 'w=4x': expected w=1, w=4, w=8 or w=12" },
	{ "Switch 8 \"S\"\n[1] \"H\"[1] s=2\n", -EINVAL,
	  "net:2: expected 'w=', '#' or end of line, got 's=2'" },
	{ "Switch 8 \"S\"\n[1] \"H\"[1]x\n", -EINVAL,
	  "net:2: expected 'w=', '#' or end of line, got 'x'" },
	{ "Switch 8 \"S\n", -EINVAL, "net:1: unterminated '\"'" },
	{ "Switch 8 \"S\"\n[1] \"H[1]\n", -EINVAL, "net:2: unterminated '\"'" },
	{ "Switch 8 \"S\"\n[1 \"H\"[1]\n", -EINVAL,
	  "net:2: expected a port number and ']' after '['" },
	{ "Switch 8 \"S\"\n[1] H[1]\n", -EINVAL,
	  "net:2: expected '\"peer\"' after '[1]', got 'H[1]'" },
	{ "Switch 8 \"S\"\n[1] \"H\"[x]\n", -EINVAL,
	  "net:2: expected a port number and ']' after \"H\"[" },
	{ "Switch 8 \"S\"\n[1](xyz) \"H\"[1]\n", -EINVAL,
	  "net:2: expected a port GUID and ')' after '[1]('" },
	{ "Switch 8 \"S\" lid 3\n", -EINVAL,
	  "net:1: expected '#' or end of line after \"S\", got 'lid'" },
	{ "Switch 8 \"S\"\n\n[1] \"H\"[1]\n", -EINVAL,
	  "net:3: port line outside a node block (a blank line ends the "
	  "block)" },
	{ "[1] \"H\"[1]\n", -EINVAL,
	  "net:1: port line outside a node block (a blank line ends the "
	  "block)" },
	{ "Switch 8 \"S\"\ndo Quit\n", -EINVAL,
	  "net:2: ibsim console commands ('do ...') are not supported in a "
	  "topology" },
	{ "Rt 2 \"R\"\n", -EINVAL, "net:1: router nodes are not supported" },
	{ "caguid=zz\nHca 1 \"H\"\n", -EINVAL,
	  "net:1: expected a number after 'caguid=', got 'zz'" },
	{ "caguid 5\n", -EINVAL, "net:1: expected '=' after 'caguid'" },
	{ "caguid=0\nHca 1 \"H\"\n", -EINVAL,
	  "net:2: GUID 0 for \"H\" is not valid" },
	{ "Switch 8 \"S\"\n[1](5) \"H\"[1](6)\n\nHca 1 \"H\"\n"
	  "[1](7) \"S\"[1]\n", -EINVAL,
	  "net:5: GUID 0x0000000000000007 of \"H\"[1] disagrees with "
	  "0x0000000000000006 (net:2)" },
	{ "Hca 1 \"a\tb\"\n", -EINVAL,
	  "net:1: bad node name \"a\tb\" (1..255 bytes, no control "
	  "characters)" },
	{ "Hca 1 \"\"\n", -EINVAL,
	  "net:1: bad node name \"\" (1..255 bytes, no control characters)" },
	{ "Hca 1 \"a\"\nsmport \"b\"[1]\n", -EINVAL,
	  "net:2: \"b\" is not declared" },
	{ "Hca 1 \"a\"\nsmport \"a\"[0]\n", -EINVAL,
	  "net:2: port 0 out of range 1..1 for \"a\"" },
	{ "Hca 1 \"a\"\nsmport none\nsmport none\n", -EINVAL,
	  "net:3: second 'smport' line (first at net:2)" },
	{ "include\n", -EINVAL, "net:1: expected a file name after 'include'" },
	/* GUIDs given twice (IBA 4.1.1: one node, one port each). */
	{ "caguid=0x100\nHca 1 \"a\"\ncaguid=0x100\nHca 1 \"b\"\n", -EEXIST,
	  "net:4: node GUID 0x0000000000000100 of \"b\" is also the node "
	  "GUID of \"a\" (net:2)" },
	{ "switchguid=0x300\nSwitch 2 \"s\"\n\nswitchguid=0x300\n"
	  "Switch 2 \"t\"\n", -EEXIST,
	  "net:5: node GUID 0x0000000000000300 of \"t\" is also the node "
	  "GUID of \"s\" (net:2)" },
	/* HCA a reserves 0x100..0x102; b's node GUID 0x101 is free as a
	 * node GUID but its port 1 (0x102) is a's port 2. */
	{ "caguid=0x100\nHca 2 \"a\"\n\ncaguid=0x101\nHca 1 \"b\"\n",
	  -EEXIST,
	  "net:5: port GUID 0x0000000000000102 of \"b\"[1] is also the port "
	  "GUID of \"a\"[2] (net:2)" },
	/* A port GUID on a port line equal to another port's. */
	{ "Switch 4 \"s\"\n[1] \"a\"[1](0x100001)\n[2] \"b\"[1](0x100001)\n\n"
	  "Hca 1 \"a\"\n[1] \"s\"[1]\n\nHca 1 \"b\"\n[1] \"s\"[2]\n",
	  -EEXIST,
	  "net:3: port GUID 0x0000000000100001 of \"b\"[1] is also the port "
	  "GUID of \"a\"[1] (net:2)" },
};

static void test_errors(void **state)
{
	char big[5000];
	size_t i;

	for (i = 0; i < IMC_ARRAY_SIZE(bad); i++) {
		struct imc_topo *t = (struct imc_topo *)1;
		char err[512] = "";
		int rc = imc_topo_parse_string(bad[i].text, "net", &t, err,
					       sizeof(err));

		if (rc != bad[i].rc || strcmp(err, bad[i].err))
			fail_msg("case %zu: rc %d, \"%s\"; want %d, \"%s\"", i,
				 rc, err, bad[i].rc, bad[i].err);
		assert_null(t);
	}

	/* Over-long line. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "Hca 1 \"a\"\n# ", 12);
	{
		struct imc_topo *t;
		char err[128];

		assert_int_equal(imc_topo_parse_string(big, "f", &t, err,
						       sizeof(err)), -EINVAL);
		assert_string_equal(err, "f:2: line longer than 4096 bytes");
		/* 4096 bytes exactly is fine. */
		big[10 + 4096] = '\0';
		assert_int_equal(imc_topo_parse_string(big, "f", &t, err,
						       sizeof(err)), 0);
		imc_topo_destroy(t);
	}
	/* No error buffer, a tiny one. */
	{
		struct imc_topo *t;
		char err[8];

		assert_int_equal(imc_topo_parse_string("x", "net", &t, NULL, 0),
				 -EINVAL);
		assert_int_equal(imc_topo_parse_string("x", "net", &t, err,
						       sizeof(err)), -EINVAL);
		assert_string_equal(err, "net:1: ");
		assert_int_equal(imc_topo_parse_file("/nonexistent/net", &t,
						     err, sizeof(err)),
				 -ENOENT);
	}
	{
		struct imc_topo *t;
		char err[128];

		assert_int_equal(imc_topo_parse_file("/nonexistent/net", &t,
						     err, sizeof(err)),
				 -ENOENT);
		assert_string_equal(err, "/nonexistent/net: No such file or "
				    "directory");
		assert_int_equal(imc_topo_parse_file("/dev/null", &t, err,
						     sizeof(err)), -EINVAL);
		assert_string_equal(err, "/dev/null: not a regular file");
	}
}

/* ---- include ---- */

static char dir[256];

static void put(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void bad_file(const char *name, int rc, const char *want)
{
	struct imc_topo *t;
	char path[512], err[512], exp[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(exp, sizeof(exp), want, dir, dir, dir);
	assert_int_equal(imc_topo_parse_file(path, &t, err, sizeof(err)), rc);
	assert_string_equal(err, exp);
}

static void test_include(void **state)
{
	struct imc_topo *t;
	char path[512], buf[64];
	int i;

	snprintf(dir, sizeof(dir), "%s/fabric_topo_XXXXXX", IMC_BINARY_DIR);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_int_equal(mkdir(path, 0700), 0);

	/* Relative to the including file: sub/leaf.net includes
	 * ../hosts.net. */
	put("main.net", "Hca 1 \"h0\"\n[1] \"S\"[1]\n\n"
			"include \"sub/leaf.net\"  # the switch\n"
			"Hca 1 \"h9\"\n");
	put("sub/leaf.net", "Switch 8 \"S\"\n[1] \"h0\"[1]\n[2] \"h1\"[1]\n"
			    "include ../hosts.net\n");
	put("hosts.net", "Hca 1 \"h1\"\n[1] \"S\"[2]\n");
	snprintf(path, sizeof(path), "%s/main.net", dir);
	t = load(path);
	counts(t, 3, 1, 2);
	assert_int_equal(idx(t, "h1"), 2);
	assert_int_equal(idx(t, "h9"), 3);
	sm_is(t, "h0", 1);
	imc_topo_destroy(t);

	/* Errors name the included file and its line. */
	put("e1.net", "Hca 1 \"a\"\ninclude \"sub/e2.net\"\n");
	put("sub/e2.net", "\n\nSwitch 4 \"s\"\n[1] \"zz\"[1]\n");
	bad_file("e1.net", -EINVAL,
		 "%s/sub/e2.net:4: \"zz\" is not declared");
	put("e3.net", "Hca 1 \"a\"\n[1] \"b\"[1]\n\ninclude \"nope.net\"\n");
	bad_file("e3.net", -ENOENT,
		 "%s/e3.net:4: cannot read include file \"%s/nope.net\": "
		 "No such file or directory");
	/* A disagreement across files cites both. */
	put("e4.net", "Switch 2 \"a\"\n[1] \"b\"[1]\n\ninclude \"e5.net\"\n");
	put("e5.net", "Switch 2 \"b\"\n[1] \"a\"[2]\n");
	bad_file("e4.net", -EINVAL,
		 "%s/e4.net:2: cable \"a\"[1] -> \"b\"[1] disagrees with "
		 "\"b\"[1] -> \"a\"[2] (%s/e5.net:2)");

	/* One GUID in two files: both places named. */
	put("g1.net", "caguid=0x500\nHca 1 \"a\"\n\ninclude \"sub/g2.net\"\n");
	put("sub/g2.net", "\ncaguid=0x500\nHca 1 \"b\"\n");
	bad_file("g1.net", -EEXIST,
		 "%s/sub/g2.net:3: node GUID 0x0000000000000500 of \"b\" is "
		 "also the node GUID of \"a\" (%s/g1.net:2)");

	/* Loops. */
	put("loop1.net", "Hca 1 \"a\"\ninclude \"loop2.net\"\n");
	put("loop2.net", "\ninclude \"loop1.net\"\n");
	bad_file("loop1.net", -ELOOP,
		 "%s/loop2.net:2: include loop: \"%s/loop1.net\" is already "
		 "being read");
	put("self.net", "include \"self.net\"\n");
	bad_file("self.net", -ELOOP,
		 "%s/self.net:1: include loop: \"%s/self.net\" is already "
		 "being read");

	/* Depth: d0 .. d7 nest 8 deep and are fine, d0 .. d8 are not. */
	for (i = 0; i < 9; i++) {
		char name[32], text[64];

		snprintf(name, sizeof(name), "d%d.net", i);
		snprintf(text, sizeof(text), "Hca 1 \"n%d\"\ninclude d%d.net\n",
			 i, i + 1);
		put(name, text);
	}
	put("d8.net", "Hca 1 \"n8\"\n");
	bad_file("d0.net", -ELOOP,
		 "%s/d7.net:2: includes nested deeper than 8");
	put("d7.net", "Hca 1 \"n7\"\n");
	snprintf(path, sizeof(path), "%s/d0.net", dir);
	t = load(path);
	counts(t, 8, 0, 0);
	imc_topo_destroy(t);

	/* From a string: relative to the directory of its name. */
	snprintf(path, sizeof(path), "%s/virtual.net", dir);
	{
		char err[256];

		assert_int_equal(imc_topo_parse_string(
			"include hosts.net\nSwitch 2 \"S\"\n[2] \"h1\"[1]\n",
			path, &t, err, sizeof(err)), 0);
	}
	counts(t, 1, 1, 1);
	sm_is(t, "h1", 1);
	imc_topo_destroy(t);

	/* Clean up. */
	{
		static const char *const files[] = {
			"main.net", "sub/leaf.net", "hosts.net", "e1.net",
			"sub/e2.net", "e3.net", "e4.net", "e5.net",
			"g1.net", "sub/g2.net", "loop1.net", "loop2.net", "self.net",
		};
		size_t k;

		for (k = 0; k < IMC_ARRAY_SIZE(files); k++) {
			snprintf(path, sizeof(path), "%s/%s", dir, files[k]);
			assert_int_equal(unlink(path), 0);
		}
		for (i = 0; i < 9; i++) {
			snprintf(buf, sizeof(buf), "d%d.net", i);
			snprintf(path, sizeof(path), "%s/%s", dir, buf);
			assert_int_equal(unlink(path), 0);
		}
		snprintf(path, sizeof(path), "%s/sub", dir);
		assert_int_equal(rmdir(path), 0);
		assert_int_equal(rmdir(dir), 0);
	}
}

/* ---- writer ---- */

static void test_write(void **state)
{
	struct imc_topo *t;
	uint32_t a, b, c;
	char *s;

	/* Exact text for a small topology. */
	assert_int_equal(imc_topo_create(&t), 0);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 2, "h", 0x10, &a),
			 0);
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_SWITCH, 4, "s", 0x20,
					   &b), 0);
	assert_int_equal(imc_topo_connect(t, a, 2, b, 3, 12), 0);
	t->node[a].port[2].guid = 0x99;
	t->sm_node = a;
	t->sm_port = 2;
	s = text_of(t);
	assert_string_equal(s,
		"# 1 HCAs, 1 switches, 1 cables\n\n"
		"caguid=0x0000000000000010\n"
		"Hca\t2 \"h\"\n"
		"[2](99)\t\"s\"[3]\tw=12\n"
		"\n"
		"switchguid=0x0000000000000020(20)\n"
		"Switch\t4 \"s\"\n"
		"[3]\t\"h\"[2]\tw=12\n");
	free(s);
	round_trip(t);

	/* An SM port the first port line does not give needs "smport". */
	assert_int_equal(imc_topo_add_node(t, IMC_NODE_HCA, 1, "late", 0, &c),
			 0);
	assert_int_equal(imc_topo_connect(t, c, 1, b, 1, 4), 0);
	t->sm_node = c;
	t->sm_port = 1;
	s = text_of(t);
	assert_non_null(strstr(s, "\n\nsmport \"late\"[1]\n\n"));
	free(s);
	round_trip(t);
	t->sm_node = b;
	t->sm_port = 2;
	round_trip(t);
	t->sm_node = IMC_TOPO_NONE;
	t->sm_port = 0;
	s = text_of(t);
	assert_non_null(strstr(s, "\nsmport none\n"));
	free(s);
	round_trip(t);

	/* What a net file cannot hold. */
	t->sm_node = a;
	t->sm_port = 0;
	assert_int_equal(imc_topo_write(t, stdout), -EINVAL);
	t->sm_port = 1;
	t->node[a].port[1].guid = 5;    /* on an uncabled port */
	assert_int_equal(imc_topo_write(t, stdout), -EINVAL);
	imc_topo_destroy(t);
}

/* ---- generators ---- */

/* Leaf/agg/spine wiring checks shared by the tests below. */
static unsigned links_between(const struct imc_topo *t, uint32_t x,
			      uint32_t y)
{
	unsigned p, n = 0;

	for (p = 1; p <= t->node[x].nports; p++)
		n += t->node[x].port[p].peer == y;
	return n;
}

static unsigned degree(const struct imc_topo *t, uint32_t x)
{
	unsigned p, n = 0;

	for (p = 1; p <= t->node[x].nports; p++)
		n += t->node[x].port[p].peer != IMC_TOPO_NONE;
	return n;
}

static void test_generate_switch(void **state)
{
	struct imc_topo *t = gen("switch:hosts=16");
	uint32_t s = idx(t, "L-0001");

	counts(t, 16, 1, 16);
	assert_int_equal(s, 16);
	assert_int_equal(t->node[s].nports, 36);
	cabled(t, "H-000001", 1, "L-0001", 1, 4);
	cabled(t, "H-000016", 1, "L-0001", 16, 4);
	uncabled(t, "L-0001", 17);
	sm_is(t, "H-000001", 1);
	assert_true(t->node[0].guid == 0x0002c90300000002ull);
	assert_true(t->node[0].port[1].guid == 0x0002c90300000003ull);
	assert_true(t->node[s].guid == 0x0002c90200000001ull);
	round_trip(t);
	imc_topo_destroy(t);

	t = gen("switch:hosts=8,ports=8,width=12");
	counts(t, 8, 1, 8);
	assert_int_equal(t->node[8].nports, 8);
	cabled(t, "H-000008", 1, "L-0001", 8, 12);
	round_trip(t);
	imc_topo_destroy(t);
}

static void test_generate_two_level(void **state)
{
	struct imc_topo *t = gen("fat-tree:leaves=64,hosts=30,spines=16");
	uint32_t l0 = 1920, s0 = 1920 + 64, i, j;

	counts(t, 1920, 80, 1920 + 64 * 16);
	assert_int_equal(idx(t, "L-0001"), l0);
	assert_int_equal(idx(t, "S-0001"), s0);
	assert_int_equal(idx(t, "S-0016"), s0 + 15);
	/* 64 leaves per spine: the default radix 36 grows to 64. */
	assert_int_equal(t->node[l0].nports, 64);
	for (i = 0; i < 64; i++) {
		assert_int_equal(degree(t, l0 + i), 30 + 16);
		for (j = 0; j < 16; j++)
			assert_int_equal(links_between(t, l0 + i, s0 + j), 1);
	}
	for (j = 0; j < 16; j++)
		assert_int_equal(degree(t, s0 + j), 64);
	for (i = 0; i < 1920; i++) {
		assert_int_equal(t->node[i].port[1].peer, l0 + i / 30);
		assert_int_equal(t->node[i].port[1].peer_port, i % 30 + 1);
	}
	cabled(t, "L-0064", 46, "S-0016", 64, 4);
	sm_is(t, "H-000001", 1);
	round_trip(t);
	imc_topo_destroy(t);

	t = gen("fat-tree:leaves=4,hosts=4,spines=2,ports=6");
	counts(t, 16, 6, 24);
	assert_int_equal(t->node[16].nports, 6);
	imc_topo_destroy(t);
}

static void test_generate_three_level(void **state)
{
	const unsigned P = 4, L = 3, H = 5, A = 2, S = 6, up = S / A;
	struct imc_topo *t = gen(
		"fat-tree:pods=4,leaves=3,hosts=5,aggs=2,spines=6,width=8");
	uint32_t l0 = P * L * H, a0 = l0 + P * L, s0 = a0 + P * A, i, j, k;

	counts(t, P * L * H, P * L + P * A + S,
	       P * L * H + P * L * A + P * A * up);
	assert_int_equal(idx(t, "L-0012"), a0 - 1);
	assert_int_equal(idx(t, "A-0001"), a0);
	assert_int_equal(idx(t, "S-0006"), s0 + S - 1);
	for (i = 0; i < P * L; i++) {
		uint32_t pod = i / L;

		assert_int_equal(degree(t, l0 + i), H + A);
		/* Every agg of its own pod once, none of other pods. */
		for (j = 0; j < P * A; j++)
			assert_int_equal(links_between(t, l0 + i, a0 + j),
					 j / A == pod ? 1 : 0);
		for (j = 0; j < S; j++)
			assert_int_equal(links_between(t, l0 + i, s0 + j), 0);
	}
	for (i = 0; i < P * A; i++) {
		uint32_t group = i % A;

		assert_int_equal(degree(t, a0 + i), L + up);
		/* Agg a of each pod reaches exactly spine group a. */
		for (k = 0; k < S; k++)
			assert_int_equal(links_between(t, a0 + i, s0 + k),
					 k / up == group ? 1 : 0);
	}
	for (k = 0; k < S; k++)
		assert_int_equal(degree(t, s0 + k), P);
	/* Pod 2 (from 0), agg 1: "A-0006"; spine group 1 = S-0004..6. */
	cabled(t, "A-0006", L + 1, "S-0004", 3, 8);
	cabled(t, "L-0007", H + 2, "A-0006", 1, 8);
	cabled(t, "H-000035", 1, "L-0007", 5, 8);
	round_trip(t);
	imc_topo_destroy(t);

	t = gen("fat-tree:pods=8,leaves=8,hosts=16,aggs=8,spines=16");
	counts(t, 1024, 64 + 64 + 16, 1024 + 8 * 8 * 8 + 64 * 2);
	assert_int_equal(t->node[1024].nports, 36);
	imc_topo_destroy(t);
}

static const struct bad bad_spec[] = {
	{ "torus:x=1", -EINVAL, "generate: unknown kind 'torus' (switch, "
				"fat-tree)" },
	{ "switch", -EINVAL,
	  "generate: expected 'switch:' or 'fat-tree:', got 'switch'" },
	{ "switch:hosts=4,leaves=2", -EINVAL,
	  "generate: unknown key 'leaves' for switch" },
	{ "fat-tree:leaves=2,hosts=2,spines=2,color=3", -EINVAL,
	  "generate: unknown key 'color' for fat-tree" },
	{ "fat-tree:leaves=2,hosts=2", -EINVAL,
	  "generate: missing key 'spines'" },
	{ "fat-tree:hosts=2,spines=2", -EINVAL,
	  "generate: missing key 'leaves'" },
	{ "switch:ports=8", -EINVAL, "generate: missing key 'hosts'" },
	{ "fat-tree:pods=2,leaves=2,hosts=2,spines=2", -EINVAL,
	  "generate: missing key 'aggs'" },
	{ "switch:hosts=0", -EINVAL, "generate: 'hosts' must be at least 1" },
	{ "switch:hosts=x", -EINVAL, "generate: expected a number for 'hosts'" },
	{ "switch:hosts=4x", -EINVAL,
	  "generate: expected a number for 'hosts'" },
	{ "switch:hosts", -EINVAL, "generate: expected '=' after 'hosts'" },
	{ "switch:hosts=4,hosts=5", -EINVAL,
	  "generate: key 'hosts' given twice" },
	{ "switch:hosts=4,width=2", -EINVAL,
	  "generate: width 2 is not 1, 4, 8 or 12" },
	{ "switch:hosts=99999999999999999999", -EINVAL,
	  "generate: expected a number for 'hosts'" },
	{ "switch:hosts=50000001", -E2BIG, "generate: more than 50000000 nodes" },
	{ "fat-tree:leaves=10000,hosts=10000,spines=1", -E2BIG,
	  "generate: more than 50000000 nodes" },
	{ "fat-tree:pods=50000000,leaves=50000000,hosts=50000000,aggs=1,"
	  "spines=1", -E2BIG, "generate: more than 50000000 nodes" },
	{ "switch:hosts=9,ports=8", -EINVAL,
	  "generate: the wiring needs 9 ports per switch, radix is 8" },
	{ "switch:hosts=255", -EINVAL,
	  "generate: the wiring needs 255 ports per switch, radix is 254" },
	{ "switch:hosts=4,ports=255", -EINVAL,
	  "generate: ports=255 is more than 254" },
	{ "fat-tree:leaves=4,hosts=34,spines=3,ports=36", -EINVAL,
	  "generate: the wiring needs 37 ports per switch, radix is 36" },
	{ "fat-tree:leaves=40,hosts=2,spines=2,ports=36", -EINVAL,
	  "generate: the wiring needs 40 ports per switch, radix is 36" },
	{ "fat-tree:pods=2,leaves=2,hosts=2,aggs=2,spines=3", -EINVAL,
	  "generate: spines (3) must be a multiple of aggs (2): spine group "
	  "a serves agg a of every pod" },
	{ "fat-tree:pods=40,leaves=2,hosts=2,aggs=2,spines=2,ports=36",
	  -EINVAL,
	  "generate: the wiring needs 40 ports per switch, radix is 36" },
	{ "fat-tree:pods=2,leaves=30,hosts=2,aggs=2,spines=14,ports=36",
	  -EINVAL,
	  "generate: the wiring needs 37 ports per switch, radix is 36" },
};

static void test_generate_errors(void **state)
{
	size_t i;

	for (i = 0; i < IMC_ARRAY_SIZE(bad_spec); i++) {
		struct imc_topo *t = (struct imc_topo *)1;
		char err[256] = "";
		int rc = imc_topo_generate(bad_spec[i].text, &t, err,
					   sizeof(err));

		if (rc != bad_spec[i].rc || strcmp(err, bad_spec[i].err))
			fail_msg("case %zu: rc %d, \"%s\"; want %d, \"%s\"", i,
				 rc, err, bad_spec[i].rc, bad_spec[i].err);
		assert_null(t);
	}
	/* Without ports= the radix grows to fit (up to 254). */
	{
		struct imc_topo *t = gen("fat-tree:leaves=4,hosts=34,spines=3");

		assert_int_equal(t->node[t->nnodes - 1].nports, 37);
		imc_topo_destroy(t);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_large(void **state)
{
	double t0 = now(), t1, t2, t3;
	struct imc_topo *t = gen("fat-tree:leaves=250,hosts=200,spines=50");
	struct imc_topo *u;
	char name[32], *s;
	uint32_t i, n;

	t1 = now();
	counts(t, 50000, 300, 50000 + 250 * 50);
	assert_int_equal(t->node[50000].nports, 250);
	for (i = 0; i < t->nnodes; i++) {
		assert_int_equal(idx(t, t->node[i].name), i);
		/* A fresh copy of the key, not the stored pointer. */
		snprintf(name, sizeof(name), "%s", t->node[i].name);
		assert_int_equal(imc_topo_find(t, name, &n), 0);
		assert_int_equal(n, i);
	}
	assert_int_equal(imc_topo_find(t, "H-050001", &n), -ENOENT);
	assert_int_equal(imc_topo_find(t, "H-00000", &n), -ENOENT);
	t2 = now();
	s = text_of(t);
	u = parse(s);
	t3 = now();
	assert_int_equal(imc_topo_compare(t, u, NULL, 0), 0);
	print_message("50,000 HCAs: generate %.0f ms, %u finds %.0f ms, "
		      "write + parse %.0f ms (%zu bytes)\n", (t1 - t0) * 1e3,
		      2 * t->nnodes, (t2 - t1) * 1e3, (t3 - t2) * 1e3,
		      strlen(s));
	/* Well under a second even with sanitizers. */
	assert_true(t1 - t0 < 1.0);
	free(s);
	imc_topo_destroy(t);
	imc_topo_destroy(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_example_ibsim_2sw),
		cmocka_unit_test(test_example_single),
		cmocka_unit_test(test_example_fat_tree),
		cmocka_unit_test(test_ibsim_examples),
		cmocka_unit_test(test_ibnetdiscover),
		cmocka_unit_test(test_peer_guid_one_sided),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_include),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_generate_switch),
		cmocka_unit_test(test_generate_two_level),
		cmocka_unit_test(test_generate_three_level),
		cmocka_unit_test(test_generate_errors),
		cmocka_unit_test(test_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
