/* Capture options (imc_pcap_open_config): the snap length cuts each
 * record and keeps the length on the wire; the timestamp offset moves
 * every time and refuses to wrap below 1970 or past 2106. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibmcast/pcap.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void test_snaplen_offset(void **state)
{
	char path[] = "/tmp/pcap_config_XXXXXX";
	struct imc_pcap_config c = { .linktype = IMC_PCAP_LINKTYPE_USER0,
				     .snaplen = 8,
				     .ts_offset_ns = 5000000000ll };
	struct imc_pcap *p;
	uint8_t frame[20], buf[256];
	FILE *f;
	size_t n;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (unsigned i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)i;
	assert_int_equal(imc_pcap_open_config(path, &c, &p), 0);
	assert_int_equal(imc_pcap_write(p, 1500000000u, frame, 20), 0);
	assert_int_equal(imc_pcap_write(p, 0, frame, 4), 0);
	assert_int_equal(imc_pcap_close(p), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_int_equal(n, 24 + 16 + 8 + 16 + 4);
	assert_int_equal(le32(buf + 16), 8);          /* snaplen */
	assert_int_equal(le32(buf + 24), 6);          /* 1.5 s + 5 s */
	assert_int_equal(le32(buf + 28), 500000000);
	assert_int_equal(le32(buf + 32), 8);          /* captured */
	assert_int_equal(le32(buf + 36), 20);         /* on the wire */
	assert_memory_equal(buf + 40, frame, 8);
	assert_int_equal(le32(buf + 48), 5);
	assert_int_equal(le32(buf + 56), 4);
	assert_int_equal(le32(buf + 60), 4);

	/* A negative offset: a time before it would be before 1970. */
	c.snaplen = 0;
	c.ts_offset_ns = -2000000000ll;
	assert_int_equal(imc_pcap_open_config(path, &c, &p), 0);
	assert_int_equal(imc_pcap_write(p, 1999999999u, frame, 4), -ERANGE);
	assert_int_equal(imc_pcap_close(p), 0);
	c.ts_offset_ns = INT64_MIN;
	assert_int_equal(imc_pcap_open_config(path, &c, &p), 0);
	assert_int_equal(imc_pcap_write(p, UINT64_MAX, frame, 4), -ERANGE);
	assert_int_equal(imc_pcap_close(p), 0);
	c.ts_offset_ns = INT64_MAX;
	assert_int_equal(imc_pcap_open_config(path, &c, &p), 0);
	assert_int_equal(imc_pcap_write(p, 2, frame, 4), -ERANGE);
	assert_int_equal(imc_pcap_close(p), 0);

	c.snaplen = IMC_PCAP_SNAPLEN + 1;
	assert_int_equal(imc_pcap_open_config(path, &c, &p), -EINVAL);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snaplen_offset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
