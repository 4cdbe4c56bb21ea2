/* The JSON writer: exact bytes of each layout, escaping of every control
 * character, quote and backslash, and the errors that stick (a value
 * where a key is due, a key in an array, unbalanced ends, NaN, too deep,
 * a second top-level value). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/json.h"

struct buf {
	FILE *f;
	char *s;
	size_t n;
	struct imc_json j;
};

static void open_buf(struct buf *b, unsigned indent, unsigned flags,
		     unsigned base)
{
	b->s = NULL;
	b->n = 0;
	b->f = open_memstream(&b->s, &b->n);
	assert_non_null(b->f);
	imc_json_init_at(&b->j, b->f, indent, flags, base);
}

/* Closes the stream and checks its text. */
static void expect(struct buf *b, const char *want)
{
	assert_int_equal(fclose(b->f), 0);
	assert_string_equal(b->s, want);
	free(b->s);
}

static void sample(struct imc_json *j)
{
	struct imc_gid g = { .raw = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff,
				      [15] = 1 } };

	assert_int_equal(imc_json_object_begin(j), 0);
	assert_int_equal(imc_json_kv_string(j, "name", "a"), 0);
	assert_int_equal(imc_json_kv_u64(j, "n", UINT64_MAX), 0);
	assert_int_equal(imc_json_kv_i64(j, "d", INT64_MIN), 0);
	assert_int_equal(imc_json_key(j, "list"), 0);
	assert_int_equal(imc_json_array_begin(j), 0);
	assert_int_equal(imc_json_bool(j, true), 0);
	assert_int_equal(imc_json_null(j), 0);
	assert_int_equal(imc_json_double(j, 1.25, 1), 0);
	assert_int_equal(imc_json_array_end(j), 0);
	assert_int_equal(imc_json_key(j, "empty"), 0);
	assert_int_equal(imc_json_object_begin(j), 0);
	assert_int_equal(imc_json_object_end(j), 0);
	assert_int_equal(imc_json_kv_gid(j, "mgid", &g), 0);
	assert_int_equal(imc_json_kv_hex(j, "pkey", 0xffff, 4), 0);
	assert_int_equal(imc_json_kv_bool(j, "f", false), 0);
	assert_int_equal(imc_json_object_end(j), 0);
	assert_int_equal(imc_json_finish(j), 0);
}

static void test_compact(void **state)
{
	struct buf b;

	(void)state;
	open_buf(&b, 0, 0, 0);
	sample(&b.j);
	expect(&b, "{\"name\":\"a\",\"n\":18446744073709551615,"
		   "\"d\":-9223372036854775808,\"list\":[true,null,1.2],"
		   "\"empty\":{},\"mgid\":\"ff12:401b:ffff::1\","
		   "\"pkey\":\"0xffff\",\"f\":false}");
}

static void test_spaced(void **state)
{
	struct buf b;

	(void)state;
	open_buf(&b, 0, IMC_JSON_SPACED, 0);
	assert_int_equal(imc_json_array_begin(&b.j), 0);
	assert_int_equal(imc_json_u64(&b.j, 1), 0);
	assert_int_equal(imc_json_double(&b.j, 30, IMC_JSON_G), 0);
	assert_int_equal(imc_json_double(&b.j, 0.25, IMC_JSON_G), 0);
	assert_int_equal(imc_json_object_begin(&b.j), 0);
	assert_int_equal(imc_json_kv_u64(&b.j, "a", 2), 0);
	assert_int_equal(imc_json_kv_u64(&b.j, "b", 3), 0);
	assert_int_equal(imc_json_object_end(&b.j), 0);
	assert_int_equal(imc_json_array_end(&b.j), 0);
	assert_int_equal(imc_json_finish(&b.j), 0);
	expect(&b, "[1, 30, 0.25, {\"a\": 2, \"b\": 3}]");
}

static void test_indented(void **state)
{
	struct buf b;

	(void)state;
	open_buf(&b, 2, 0, 0);
	sample(&b.j);
	expect(&b, "{\n"
		   "  \"name\": \"a\",\n"
		   "  \"n\": 18446744073709551615,\n"
		   "  \"d\": -9223372036854775808,\n"
		   "  \"list\": [\n"
		   "    true,\n"
		   "    null,\n"
		   "    1.2\n"
		   "  ],\n"
		   "  \"empty\": {},\n"
		   "  \"mgid\": \"ff12:401b:ffff::1\",\n"
		   "  \"pkey\": \"0xffff\",\n"
		   "  \"f\": false\n"
		   "}");
}

/* One-line containers inside an indented document, which itself starts
 * at column 2 (a value written after text of the caller). */
static void test_line_and_base(void **state)
{
	struct buf b;

	(void)state;
	open_buf(&b, 2, 0, 2);
	assert_int_equal(imc_json_object_begin(&b.j), 0);
	assert_int_equal(imc_json_key(&b.j, "row"), 0);
	assert_int_equal(imc_json_object_begin_line(&b.j), 0);
	assert_int_equal(imc_json_kv_u64(&b.j, "x", 1), 0);
	assert_int_equal(imc_json_key(&b.j, "y"), 0);
	assert_int_equal(imc_json_array_begin(&b.j), 0);
	assert_int_equal(imc_json_u64(&b.j, 2), 0);
	assert_int_equal(imc_json_u64(&b.j, 3), 0);
	assert_int_equal(imc_json_array_end(&b.j), 0);
	assert_int_equal(imc_json_key(&b.j, "z"), 0);
	assert_int_equal(imc_json_array_begin_lines(&b.j), 0);
	assert_int_equal(imc_json_u64(&b.j, 4), 0);
	assert_int_equal(imc_json_u64(&b.j, 5), 0);
	assert_int_equal(imc_json_array_end(&b.j), 0);
	assert_int_equal(imc_json_object_end(&b.j), 0);
	assert_int_equal(imc_json_key(&b.j, "own"), 0);
	assert_int_equal(imc_json_value_follows(&b.j), 0);
	fputs("[7]", b.f);
	assert_int_equal(imc_json_key(&b.j, "tail"), 0);
	assert_int_equal(imc_json_array_begin_line(&b.j), 0);
	assert_int_equal(imc_json_array_end(&b.j), 0);
	assert_int_equal(imc_json_object_end(&b.j), 0);
	assert_int_equal(imc_json_finish(&b.j), 0);
	expect(&b, "{\n"
		   "    \"row\": {\"x\": 1, \"y\": [2, 3], \"z\": [\n"
		   "      4,\n"
		   "      5\n"
		   "    ]},\n"
		   "    \"own\": [7],\n"
		   "    \"tail\": []\n"
		   "  }");
}

static void test_escape(void **state)
{
	char in[40], want[256], *w = want;
	struct buf b;
	size_t k = 0;

	(void)state;
	for (unsigned c = 1; c < 0x20; c++)
		in[k++] = (char)c;
	in[k++] = '"';
	in[k++] = '\\';
	in[k++] = 0x7f;
	in[k++] = '/';
	in[k++] = (char)0xc3;   /* UTF-8 passes through as it is */
	in[k++] = (char)0xa9;
	in[k] = 0;
	*w++ = '"';
	for (unsigned c = 1; c < 0x20; c++)
		w += sprintf(w, "\\u%04x", c);
	w += sprintf(w, "\\\"\\\\\\u007f/\xc3\xa9\"");
	open_buf(&b, 0, 0, 0);
	assert_int_equal(imc_json_string(&b.j, in), 0);
	assert_int_equal(imc_json_finish(&b.j), 0);
	expect(&b, want);
}

static void test_errors(void **state)
{
	struct buf b;

	(void)state;
	/* A value where a key is due; the error sticks. */
	open_buf(&b, 0, 0, 0);
	assert_int_equal(imc_json_object_begin(&b.j), 0);
	assert_int_equal(imc_json_u64(&b.j, 1), -EINVAL);
	assert_int_equal(imc_json_kv_u64(&b.j, "a", 1), -EINVAL);
	assert_int_equal(imc_json_finish(&b.j), -EINVAL);
	expect(&b, "{");

	/* A key in an array, an end of the wrong kind. */
	open_buf(&b, 0, 0, 0);
	assert_int_equal(imc_json_array_begin(&b.j), 0);
	assert_int_equal(imc_json_key(&b.j, "a"), -EINVAL);
	expect(&b, "[");
	open_buf(&b, 0, 0, 0);
	assert_int_equal(imc_json_array_begin(&b.j), 0);
	assert_int_equal(imc_json_object_end(&b.j), -EINVAL);
	expect(&b, "[");

	/* A key without its value, containers left open, nothing at all. */
	open_buf(&b, 0, 0, 0);
	assert_int_equal(imc_json_object_begin(&b.j), 0);
	assert_int_equal(imc_json_key(&b.j, "a"), 0);
	assert_int_equal(imc_json_object_end(&b.j), -EINVAL);
	expect(&b, "{\"a\":");
	open_buf(&b, 0, 0, 0);
	assert_int_equal(imc_json_array_begin(&b.j), 0);
	assert_int_equal(imc_json_finish(&b.j), -EINVAL);
	expect(&b, "[");
	open_buf(&b, 0, 0, 0);
	assert_int_equal(imc_json_finish(&b.j), -EINVAL);
	expect(&b, "");

	/* Two top-level values; NaN and infinity; NULL strings. */
	open_buf(&b, 0, 0, 0);
	assert_int_equal(imc_json_u64(&b.j, 1), 0);
	assert_int_equal(imc_json_u64(&b.j, 2), -EINVAL);
	expect(&b, "1");
	open_buf(&b, 0, 0, 0);
	assert_int_equal(imc_json_double(&b.j, NAN, 1), -EDOM);
	assert_int_equal(imc_json_null(&b.j), -EDOM);
	expect(&b, "");
	open_buf(&b, 0, 0, 0);
	assert_int_equal(imc_json_double(&b.j, INFINITY, 1), -EDOM);
	expect(&b, "");
	open_buf(&b, 0, 0, 0);
	assert_int_equal(imc_json_string(&b.j, NULL), -EINVAL);
	expect(&b, "");
}

static void test_depth(void **state)
{
	struct buf b;

	(void)state;
	open_buf(&b, 0, 0, 0);
	for (unsigned i = 0; i < IMC_JSON_DEPTH_MAX; i++)
		assert_int_equal(imc_json_array_begin(&b.j), 0);
	assert_int_equal(imc_json_array_begin(&b.j), -E2BIG);
	assert_int_equal(imc_json_array_end(&b.j), -E2BIG);
	assert_int_equal(fclose(b.f), 0);
	assert_int_equal(b.n, IMC_JSON_DEPTH_MAX);
	free(b.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_spaced),
		cmocka_unit_test(test_indented),
		cmocka_unit_test(test_line_and_base),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_depth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
