/* Option tables (src/scenario/opt.c): one parser and one printer driven
 * by {key, type, offset, range, flags}, checked word by word: values
 * land in their fields, range, unknown-key, repeated-key and
 * missing-key errors read as documented, and the print parses back to
 * the same values. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scn.h"

struct rec {
	uint8_t sl;
	uint16_t pkey;
	uint32_t count;
	uint64_t prefix;
	imc_time_t wait;
	double loss;
	uint64_t bps;
	unsigned mode;
	bool fast;
	bool on;
};

static const char *const modes[] = { "paced", "immediate", NULL };

static const struct scn_opt rec_opts[] = {
	SCN_O_UINT("sl", struct rec, sl, 0, 15),
	SCN_O_HEX("pkey", struct rec, pkey, 0),
	{ .key = "count", .type = SCN_OPT_UINT, .size = 4,
	  .offset = offsetof(struct rec, count), .min = 1,
	  .flags = SCN_OPT_REQUIRED },
	SCN_O_HEX("prefix", struct rec, prefix, 0),
	SCN_O_TIME("wait", struct rec, wait),
	SCN_O_PROB("loss", struct rec, loss),
	SCN_O_BPS("bw", struct rec, bps),
	SCN_O_ENUM("mode", struct rec, mode, modes),
	SCN_O_FLAG("fast", struct rec, fast),
	SCN_O_BOOL("on", struct rec, on),
};
static const struct scn_optset rec_set = SCN_OPTSET(rec_opts);

struct fx {
	struct imc_scenario s;
	struct imc_scn_parser p;
	char err[256];
};

static void fx_init(struct fx *x)
{
	memset(x, 0, sizeof(*x));
	x->s.name = "t.scn";
	x->p.s = &x->s;
	x->p.line = 3;
	x->p.verb = "v";
	x->p.err = x->err;
	x->p.errlen = sizeof(x->err);
}

/* Parses the words of line (split at blanks) into *r. */
static int parse_line(struct fx *x, const char *line, struct rec *r,
		      uint64_t *given)
{
	char buf[512];
	const char *argv[32];
	unsigned argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 32; t = strtok(NULL, " "))
		argv[argc++] = t;
	fx_init(x);
	return scn_opts_parse(&x->p, &rec_set, argc, argv, r, given);
}

static void expect_err(const char *line, const char *want)
{
	struct fx x;
	struct rec r = { 0 };

	assert_true(parse_line(&x, line, &r, NULL) < 0);
	assert_string_equal(x.err, want);
}

static void test_values(void **state)
{
	struct fx x;
	struct rec r = { 0 };
	uint64_t given = 0;

	(void)state;
	assert_int_equal(parse_line(&x,
		"count=7 sl=15 pkey=0x8001 wait=3ms loss=5% bw=auto mode=immediate fast",
		&r, &given), 0);
	assert_int_equal(r.count, 7);
	assert_int_equal(r.sl, 15);
	assert_int_equal(r.pkey, 0x8001);
	assert_int_equal(r.wait, 3000000);
	assert_true(r.loss > 0.0499 && r.loss < 0.0501);
	assert_int_equal(r.bps, 0);
	assert_int_equal(r.mode, 1);
	assert_true(r.fast);
	/* prefix= was not given: its bit is clear, the others are set. */
	assert_false(given & scn_opt_bit(&rec_set, "prefix"));
	assert_true(given & scn_opt_bit(&rec_set, "mode"));
	assert_int_equal(given, 0x1f7);
}

static void test_errors(void **state)
{
	(void)state;
	expect_err("count=1 sl=16",
		   "t.scn:3: v: sl: 16 is out of range (at most 15)");
	expect_err("count=0", "t.scn:3: v: count: expected at least 1");
	expect_err("count=1 colour=red",
		   "t.scn:3: v: expected sl=, pkey=, count=, prefix=, wait=, loss=, bw=, mode=, fast or on=, got 'colour=red'");
	expect_err("count=1 mode=later",
		   "t.scn:3: v: mode: expected paced or immediate, got 'later'");
	expect_err("count=1 sl=1 sl=2",
		   "t.scn:3: v: sl= given twice on this line: 'sl=1' and 'sl=2'");
	expect_err("count=1 fast fast",
		   "t.scn:3: v: fast given twice on this line: 'fast' and 'fast'");
	expect_err("sl=1", "t.scn:3: v: count= is required");
	expect_err("count=1 on=maybe",
		   "t.scn:3: v: on: expected yes or no, got 'maybe'");
	expect_err("count=1 pkey=0x10000",
		   "t.scn:3: v: pkey: 0x10000 is out of range (at most 65535)");
}

/* print(parse(x)) parses to the same values, and prints the same. */
static void test_round_trip(void **state)
{
	static const char *const lines[] = {
		"count=4294967295 prefix=0xfe80000000000000 wait=1500ns loss=0.25 bw=40Gbps",
		"count=1 sl=0 pkey=0x7fff mode=paced",
		"count=2 fast bw=1234bps loss=0 on=no",
		"count=3 on=yes",
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct rec a = { 0 }, b = { 0 };
		uint64_t ga, gb;
		char *p1 = NULL, *p2 = NULL;
		size_t l1 = 0, l2 = 0;
		FILE *f;
		struct fx x;

		assert_int_equal(parse_line(&x, lines[i], &a, &ga), 0);
		f = open_memstream(&p1, &l1);
		scn_opts_print(f, NULL, &rec_set, &a, ga);
		fclose(f);
		assert_int_equal(parse_line(&x, p1 + 1, &b, &gb), 0);
		assert_int_equal(ga, gb);
		assert_memory_equal(&a, &b, sizeof(a));
		f = open_memstream(&p2, &l2);
		scn_opts_print(f, NULL, &rec_set, &b, gb);
		fclose(f);
		assert_string_equal(p1, p2);
		free(p1);
		free(p2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
