/* Verb descriptors (src/scenario/desc.c): one parser, printer and free
 * driven by a table of positional arguments and an option set, checked
 * kind by kind: values land in their fields, the word-count, keyword,
 * range, missing-argument, too-many and option errors read as
 * documented, an optional argument is taken or left, and the print
 * parses back to data that prints the same. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/desc.h"

/* Two leaves of two hosts: H-000001..H-000004, L-0001, L-0002, S-0001. */
static struct imc_topo *topo;

struct rec {
	uint8_t dir;             /* WORD down|up */
	uint8_t del;             /* optional WORD: 0 absent, 1 "del" */
	struct scn_port_arg at;  /* PORT, cabled */
	struct scn_port_arg host;    /* HOST or "all" */
	uint16_t lid;            /* UINT, hex, 1..0xbfff */
	unsigned tag;            /* optional CUSTOM "tag:N": N + 1, 0 absent */
	unsigned n;
	uint16_t keys[3];        /* REST UINT, at most 3 */
	uint32_t count;          /* option */
	bool fast;               /* option flag */
	uint64_t given;
	const void *arg;
};

static int tag_parse(struct imc_scn_parser *p, const struct scn_arg *a,
		     const char *w, void *base)
{
	unsigned *tag = scn_arg_at(base, a);

	if (strncmp(w, "tag:", 4))
		return imc_scn_parse_error(p, "expected tag:N, got '%s'", w);
	*tag = (unsigned)atoi(w + 4) + 1;
	return 0;
}

static void tag_print(FILE *f, const struct imc_topo *t,
		      const struct scn_arg *a, const void *base)
{
	const unsigned *tag = scn_arg_cat(base, a);

	(void)t;
	if (*tag)
		fprintf(f, " tag:%u", *tag - 1);
}

static const char *const dirs[] = { "down", "up", NULL };
static const char *const del_word[] = { "del", NULL };

static const struct scn_arg rec_args[] = {
	SCN_A_WORD(struct rec, dir, dirs, 0),
	SCN_A_WORD(struct rec, del, del_word, SCN_ARG_OPTIONAL),
	SCN_A_PORT(struct rec, at, SCN_ARG_CABLED),
	{ .kind = SCN_ARG_HOST_ALL, .offset = offsetof(struct rec, host) },
	{ .kind = SCN_ARG_UINT, .size = 2, .flags = SCN_ARG_HEX,
	  .offset = offsetof(struct rec, lid), .what = "LID", .min = 1,
	  .max = 0xBFFF, .help = "expected a unicast LID" },
	SCN_A_CUSTOM(struct rec, tag, "a tag", tag_parse, tag_print,
		     SCN_ARG_OPTIONAL),
	{ .kind = SCN_ARG_UINT, .size = 2, .flags = SCN_ARG_HEX | SCN_ARG_REST,
	  .offset = offsetof(struct rec, keys), .what = "key", .max = 3,
	  .help = "keys", .count_off = offsetof(struct rec, n) },
};

static const struct scn_opt rec_opts[] = {
	SCN_O_UINT("count", struct rec, count, 1, 0),
	SCN_O_FLAG("fast", struct rec, fast),
};
static const struct scn_optset rec_set = SCN_OPTSET(rec_opts);

static const struct scn_desc rec_desc = {
	.usage = "expected 'v down|up [del] PORT HOST|all LID [tag:N] KEY...'",
	.min = 4, SCN_ARGS(rec_args), .opts = &rec_set,
	.print_always = 1, .keep = SCN_KEEP_GIVEN | SCN_KEEP_ARG,
	.given_off = offsetof(struct rec, given),
	.arg_off = offsetof(struct rec, arg), .size = sizeof(struct rec),
	.defaults = &(const struct rec){ .count = 9 },
};

/* No argument at all: the word past the end is quoted. */
static const struct scn_desc none_desc = {
	.usage = "takes no argument", .keep = SCN_KEEP_GOT,
};

/* An MGID, 0 or @NAME argument and a host option. */
struct mrec {
	struct scn_mgid m;
	struct scn_port_arg via;
	uint64_t given;
};

static const char names_space;

static const struct scn_arg m_args[] = {
	SCN_A_MGID(struct mrec, m, &names_space, "v-join",
		   SCN_MGID_ZERO | SCN_MGID_MCAST),
};
static const struct scn_opt m_opts[] = {
	SCN_O_HOST("via", struct mrec, via),
};
static const struct scn_optset m_set = SCN_OPTSET(m_opts);
static const struct scn_desc m_desc = {
	.usage = "expected 'v MGID [via=HOST]'", .min = 1, SCN_ARGS(m_args),
	.opts = &m_set, .keep = SCN_KEEP_GIVEN,
	.given_off = offsetof(struct mrec, given), .size = sizeof(struct mrec),
};

struct fx {
	struct imc_scenario s;
	struct imc_scn_parser p;
	char err[256];
};

static const char the_arg = 'k';

/* Parses the words of line (split at blanks) with d. */
static int parse_line(struct fx *x, const struct scn_desc *d,
		      const char *line, void **data)
{
	char buf[512];
	const char *argv[32];
	unsigned argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 32; t = strtok(NULL, " "))
		argv[argc++] = t;
	memset(x, 0, sizeof(*x));
	x->s.name = "t.scn";
	x->s.topo = topo;
	x->p.s = &x->s;
	x->p.line = 3;
	x->p.verb = "v";
	x->p.err = x->err;
	x->p.errlen = sizeof(x->err);
	*data = (void *)&the_arg;
	return scn_desc_parse(&x->p, d, argc, argv, data);
}

static char *print(const struct scn_desc *d, const void *data)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	scn_desc_print(f, topo, d, data);
	fclose(f);
	return out;
}

static void expect_err(const struct scn_desc *d, const char *line,
		       const char *want)
{
	struct fx x;
	void *data = NULL;

	assert_true(parse_line(&x, d, line, &data) < 0);
	assert_string_equal(x.err, want);
	if (data != &the_arg)
		scn_desc_free(d, data);
}

static int setup(void **state)
{
	char err[256];

	(void)state;
	return imc_topo_generate("fat-tree:leaves=2,hosts=2,spines=1", &topo,
				 err, sizeof(err));
}

static int teardown(void **state)
{
	(void)state;
	imc_topo_destroy(topo);
	return 0;
}

static void test_values(void **state)
{
	struct fx x;
	void *data;
	struct rec *r;
	char *out;

	(void)state;
	assert_int_equal(parse_line(&x, &rec_desc,
		"up del H-000002 all 0x20 tag:5 0x8001 fast 7", &data), 0);
	r = data;
	assert_int_equal(r->dir, 1);
	assert_int_equal(r->del, 1);
	assert_string_equal(topo->node[r->at.node].name, "H-000002");
	assert_int_equal(r->at.port, 1);
	assert_int_equal(r->host.node, IMC_TOPO_NONE);
	assert_int_equal(r->lid, 0x20);
	assert_int_equal(r->tag, 6);
	assert_int_equal(r->n, 2);
	assert_int_equal(r->keys[0], 0x8001);
	assert_int_equal(r->keys[1], 7);
	assert_true(r->fast);
	assert_int_equal(r->count, 9);        /* the default */
	assert_int_equal(r->given, 2);        /* fast= alone */
	assert_ptr_equal(r->arg, &the_arg);   /* the subject's arg, kept */
	/* count= prints although not given (print_always); options after
	 * the REST argument. */
	out = print(&rec_desc, r);
	assert_string_equal(out,
		" up del H-000002:1 all 0x0020 tag:5 0x8001 0x0007 count=9 fast");
	free(out);
	scn_desc_free(&rec_desc, data);

	/* Optional arguments left out keep their defaults and print
	 * nothing. */
	assert_int_equal(parse_line(&x, &rec_desc, "down H-000001 H-000003 1",
				    &data), 0);
	r = data;
	assert_int_equal(r->del, 0);
	assert_int_equal(r->tag, 0);
	assert_int_equal(r->n, 0);
	assert_string_equal(topo->node[r->host.node].name, "H-000003");
	out = print(&rec_desc, r);
	assert_string_equal(out, " down H-000001:1 H-000003:1 0x0001 count=9");
	free(out);
	scn_desc_free(&rec_desc, data);
}

static void test_errors(void **state)
{
	const char *const u = "t.scn:3: v: expected 'v down|up [del] PORT HOST|all LID [tag:N] KEY...'";

	(void)state;
	expect_err(&rec_desc, "up H-000001 all", u);
	expect_err(&rec_desc, "sideways H-000001 all 1", u);
	expect_err(&rec_desc, "up del H-000001 all", "t.scn:3: v: expected LID");
	expect_err(&rec_desc, "up H-000001 all 0",
		   "t.scn:3: v: LID: expected a unicast LID, got '0'");
	expect_err(&rec_desc, "up H-000001 all 0xc000",
		   "t.scn:3: v: LID: 0xc000 is out of range (at most 49151)");
	expect_err(&rec_desc, "up H-000001 L-0001 1",
		   "t.scn:3: v: 'L-0001' is a switch; expected a host (HCA)");
	expect_err(&rec_desc, "up H-000001 all 1 tag:0 1 2 3 4",
		   "t.scn:3: v: at most 3 keys");
	/* An optional CUSTOM argument takes the next word not an option. */
	expect_err(&rec_desc, "up H-000001 all 1 5",
		   "t.scn:3: v: expected tag:N, got '5'");
	expect_err(&rec_desc, "up H-000001 all 1 tag:1 0x10000",
		   "t.scn:3: v: key: 0x10000 is out of range (at most 65535)");
	expect_err(&rec_desc, "up H-000001 all 1 count=0",
		   "t.scn:3: v: count: expected at least 1");
	expect_err(&rec_desc, "up H-000001 all 1 fast fast",
		   "t.scn:3: v: fast given twice on this line");
	expect_err(&none_desc, "x y",
		   "t.scn:3: v: takes no argument, got 'x'");
}

/* print(parse(x)) parses to data that prints the same. */
static void test_round_trip(void **state)
{
	static const char *const lines[] = {
		"up del H-000002 all 0x20 tag:5 0x8001 fast 7",
		"down H-000001 H-000004 0xbfff tag:1 1 2 3",
		"down H-000003:1 all 1 count=4",
		"up H-000001 H-000002 0x30 tag:0",
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct fx x;
		void *a, *b;
		char *p1, *p2;

		if (parse_line(&x, &rec_desc, lines[i], &a))
			fail_msg("%s: %s", lines[i], x.err);
		p1 = print(&rec_desc, a);
		assert_int_equal(parse_line(&x, &rec_desc, p1 + 1, &b), 0);
		p2 = print(&rec_desc, b);
		assert_string_equal(p1, p2);
		/* given differs: a printed default reads back as given */
		assert_memory_equal(a, b, offsetof(struct rec, given));
		free(p1);
		free(p2);
		scn_desc_free(&rec_desc, a);
		scn_desc_free(&rec_desc, b);
	}
}

/* A verb without arguments parses nothing into data of its own. */
static void test_none(void **state)
{
	struct fx x;
	void *data;
	char *out;

	(void)state;
	assert_int_equal(parse_line(&x, &none_desc, "", &data), 0);
	assert_ptr_not_equal(data, &the_arg);
	out = print(&none_desc, data);
	assert_string_equal(out, "");
	free(out);
	scn_desc_free(&none_desc, data);
}

/* The MGID kind reads a GID, 0 and an earlier line's @NAME and prints
 * each back; a HOST option prints its port by name. */
static void test_mgid_host(void **state)
{
	const char *argv[] = { "@g" };
	struct fx x;
	void *data;
	struct mrec *r;
	char *out;

	(void)state;
	assert_int_equal(parse_line(&x, &m_desc, "ff12::1 via=H-000002",
				    &data), 0);
	r = data;
	assert_null(r->m.line);
	assert_true(imc_gid_is_multicast(&r->m.gid));
	assert_string_equal(topo->node[r->via.node].name, "H-000002");
	out = print(&m_desc, r);
	assert_string_equal(out, " ff12::1 via=H-000002:1");
	free(out);
	scn_desc_free(&m_desc, data);

	assert_int_equal(parse_line(&x, &m_desc, "0", &data), 0);
	out = print(&m_desc, data);
	assert_string_equal(out, " 0");
	free(out);
	scn_desc_free(&m_desc, data);

	assert_int_equal(scn_name_add(&x.s, &names_space, "g", &the_arg), 0);
	data = NULL;
	assert_int_equal(scn_desc_parse(&x.p, &m_desc, 1, argv, &data), 0);
	r = data;
	assert_ptr_equal(r->m.line, &the_arg);
	out = print(&m_desc, r);
	assert_string_equal(out, " @g");
	free(out);
	scn_desc_free(&m_desc, data);
	tdestroy(x.s.names, free);

	expect_err(&m_desc, "@h",
		   "t.scn:3: v: @h: no v-join ... as=h on an earlier line");
	expect_err(&m_desc, "fe80::1",
		   "t.scn:3: v: MGID: expected a multicast GID (ff12:...), 0 or @NAME, got 'fe80::1'");
	expect_err(&m_desc, "ff12::1 via=L-0001",
		   "t.scn:3: v: 'L-0001' is a switch; expected a host (HCA)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_mgid_host),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
