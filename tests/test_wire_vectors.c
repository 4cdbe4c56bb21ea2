/* The text form of captured MADs (tests/vectors/). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ibmcast/mad.h"


static void make_line(char *buf, size_t len, const char *head, size_t bytes)
{
	size_t n = (size_t)snprintf(buf, len, "%s", head);

	for (size_t i = 0; i < bytes && n + 2 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%02X", (unsigned)(i & 0xff));
}

static void test_parse_good(void **state)
{
	char line[600];
	struct imc_mad_line v;

	(void)state;
	make_line(line, sizeof(line), "rx 49151 ", IMC_MAD_SIZE);
	strcat(line, "\n");
	assert_int_equal(imc_mad_line_parse(line, &v), 1);
	assert_int_equal(v.dir, IMC_MAD_RX);
	assert_int_equal(v.lid, 49151);
	for (size_t i = 0; i < IMC_MAD_SIZE; i++)
		assert_int_equal(v.mad[i], i & 0xff);
	make_line(line, sizeof(line), "\ttx\t1\t", IMC_MAD_SIZE);
	assert_int_equal(imc_mad_line_parse(line, &v), 1);
	assert_int_equal(v.dir, IMC_MAD_TX);
	assert_int_equal(v.lid, 1);
}

static void test_parse_skip(void **state)
{
	struct imc_mad_line v;

	(void)state;
	assert_int_equal(imc_mad_line_parse("", &v), 0);
	assert_int_equal(imc_mad_line_parse("\n", &v), 0);
	assert_int_equal(imc_mad_line_parse("  # tx 1 00", &v), 0);
}

static void test_parse_bad(void **state)
{
	char line[700];
	struct imc_mad_line v;

	(void)state;
	make_line(line, sizeof(line), "xx 1 ", IMC_MAD_SIZE);
	assert_int_equal(imc_mad_line_parse(line, &v), -EINVAL);
	make_line(line, sizeof(line), "tx 65536 ", IMC_MAD_SIZE);
	assert_int_equal(imc_mad_line_parse(line, &v), -EINVAL);
	make_line(line, sizeof(line), "tx -1 ", IMC_MAD_SIZE);
	assert_int_equal(imc_mad_line_parse(line, &v), -EINVAL);
	make_line(line, sizeof(line), "tx1 ", IMC_MAD_SIZE);
	assert_int_equal(imc_mad_line_parse(line, &v), -EINVAL);
	make_line(line, sizeof(line), "tx 1 ", IMC_MAD_SIZE - 1);
	assert_int_equal(imc_mad_line_parse(line, &v), -EMSGSIZE);
	make_line(line, sizeof(line), "tx 1 ", IMC_MAD_SIZE + 1);
	assert_int_equal(imc_mad_line_parse(line, &v), -EMSGSIZE);
	make_line(line, sizeof(line), "tx 1 ", IMC_MAD_SIZE);
	strcat(line, "0"); /* odd digit count */
	assert_int_equal(imc_mad_line_parse(line, &v), -EINVAL);
	make_line(line, sizeof(line), "tx 1 ", IMC_MAD_SIZE);
	line[20] = 'g';
	assert_int_equal(imc_mad_line_parse(line, &v), -EINVAL);
	make_line(line, sizeof(line), "tx 1 ", IMC_MAD_SIZE);
	strcat(line, " trailing");
	assert_int_equal(imc_mad_line_parse(line, &v), -EINVAL);
}

static void test_shipped_file(void **state)
{
	FILE *f = fopen(IMC_SOURCE_DIR "/tests/vectors/opensm-mcmr.txt", "r");
	char line[1024];
	struct imc_mad_line v;
	int tx = 0, rx = 0;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int rc = imc_mad_line_parse(line, &v);

		assert_true(rc >= 0);
		if (rc == 1)
			*(v.dir == IMC_MAD_TX ? &tx : &rx) += 1;
	}
	fclose(f);
	assert_int_equal(tx, 4);
	assert_int_equal(rx, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_skip),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_shipped_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
