/* The pcap writer: its exact bytes and errors, and a capture that tshark
 * reads back. The capture holds the first MCMemberRecord Set and GetResp
 * exchanged with a real OpenSM (tests/vectors/opensm-mcmr.txt) as QP1 UD
 * packets, with and without a GRH, plus two multicast data packets; the
 * values tshark's InfiniBand dissector decodes must equal the ones in the
 * MADs and headers.
 *
 * tshark 4.0 does not check ICRC or VCRC (and shows neither after a MAD);
 * for the data packets it shows the four and two bytes before the end as
 * big-endian numbers, so the test checks that they are our CRCs least
 * significant byte first. That order is the one of real adapters: see the
 * ConnectX-4 Lx capture in test_wire_crc.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibmcast/mad.h"
#include "ibmcast/packet.h"
#include "ibmcast/pcap.h"

#define VECTORS IMC_SOURCE_DIR "/tests/vectors/opensm-mcmr.txt"
#define TSHARK_DLT \
	"-o 'uat:user_dlts:\"User 0 (DLT=147)\",\"infiniband\",\"0\",\"\",\"0\",\"\"'"

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint32_t bswap32(uint32_t v)
{
	return v >> 24 | (v >> 8 & 0xff00) | (v << 8 & 0xff0000) | v << 24;
}

/* ---- the file format, no tshark needed ---- */

static void test_pcap_bytes(void **state)
{
	static const uint8_t want[] = {
		/* file header: magic a1b23c4d (ns), 2.4, zone 0, sigfigs 0,
		 * snaplen 65535, DLT_USER0 147; little-endian */
		0x4d, 0x3c, 0xb2, 0xa1, 0x02, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0xff, 0xff, 0x00, 0x00, 0x93, 0x00, 0x00, 0x00,
		/* 1.5 s: sec 1, nsec 500000000, 3 bytes captured of 3 */
		0x01, 0x00, 0x00, 0x00, 0x00, 0x65, 0xcd, 0x1d,
		0x03, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
		0xaa, 0xbb, 0xcc,
		/* the last representable instant, an empty record */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xc9, 0x9a, 0x3b,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	static const uint8_t frame[3] = { 0xaa, 0xbb, 0xcc };
	static uint8_t big[IMC_PCAP_SNAPLEN + 1];
	const uint64_t last = 4294967295ull * 1000000000ull + 999999999ull;
	char path[] = IMC_BINARY_DIR "/test_pcap_bytes.pcap";
	struct imc_pcap *p;
	char *mem = NULL;
	size_t size = 0;
	uint8_t back[sizeof(want) + 1];
	FILE *f;

	(void)state;
	f = open_memstream(&mem, &size);
	assert_non_null(f);
	assert_int_equal(imc_pcap_open_stream(f, IMC_PCAP_LINKTYPE_USER0, &p),
			 0);
	assert_int_equal(imc_pcap_write(p, 1500000000ull, frame, 3), 0);
	/* Refused records leave no trace. */
	assert_int_equal(imc_pcap_write(p, 0, big, sizeof(big)), -EMSGSIZE);
	assert_int_equal(imc_pcap_write(p, last + 1, frame, 3), -ERANGE);
	assert_int_equal(imc_pcap_write(p, 0, NULL, 3), -EINVAL);
	assert_int_equal(imc_pcap_write(p, last, NULL, 0), 0);
	assert_int_equal(imc_pcap_close(p), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(size, sizeof(want));
	assert_memory_equal(mem, want, sizeof(want));
	free(mem);

	/* The same through a file of our own. */
	assert_int_equal(imc_pcap_open(path, &p), 0);
	assert_int_equal(imc_pcap_write(p, 1500000000ull, frame, 3), 0);
	assert_int_equal(imc_pcap_write(p, last, NULL, 0), 0);
	assert_int_equal(imc_pcap_close(p), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(back, 1, sizeof(back), f), sizeof(want));
	fclose(f);
	assert_memory_equal(back, want, sizeof(want));
	unlink(path);
	assert_int_equal(imc_pcap_close(NULL), 0);
}

static void test_pcap_errors(void **state)
{
	struct imc_pcap *p = (struct imc_pcap *)&p;
	FILE *f;

	(void)state;
	assert_int_equal(imc_pcap_open(IMC_BINARY_DIR "/no/such/dir/x.pcap",
				       &p), -ENOENT);
	assert_null(p);
	/* A stream that cannot be written: the header write fails. */
	f = fopen("/dev/null", "r");
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(imc_pcap_open_stream(f, 147, &p), -EBADF);
	assert_null(p);
	fclose(f);
	/* A full device: buffered, so the error shows at close; unbuffered,
	 * at once, and it sticks. */
	f = fopen("/dev/full", "w");
	if (!f)
		return;
	assert_int_equal(imc_pcap_open_stream(f, 147, &p), 0);
	assert_int_equal(imc_pcap_write(p, 0, (const uint8_t *)"x", 1), 0);
	assert_int_equal(imc_pcap_close(p), -ENOSPC);
	fclose(f);
	f = fopen("/dev/full", "w");
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(imc_pcap_open_stream(f, 147, &p), -ENOSPC);
	fclose(f);
}

/* ---- tshark ---- */

static bool have_tshark(void)
{
	char line[128] = "";
	FILE *f = popen("tshark -v 2>/dev/null", "r");

	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	pclose(f);
	return strncmp(line, "TShark", 6) == 0;
}

#define SKIP_WITHOUT_TSHARK()                                                \
	do {                                                                 \
		if (!have_tshark()) {                                        \
			printf("tshark is not installed: skipping\n");       \
			skip();                                              \
		}                                                            \
	} while (0)

/* The first "tx" and the first "rx" MAD: a request and its answer. */
static void read_pair(uint8_t *tx, uint8_t *rx, unsigned int *tx_slid,
		      unsigned int *rx_slid)
{
	FILE *f = fopen(VECTORS, "r");
	char line[1024];
	bool got_tx = false, got_rx = false;
	struct imc_mad_line v;

	assert_non_null(f);
	while ((!got_tx || !got_rx) && fgets(line, sizeof(line), f)) {
		int rc = imc_mad_line_parse(line, &v);

		assert_true(rc >= 0);
		if (rc == 0)
			continue;
		if (!got_tx && v.dir == IMC_MAD_TX) {
			memcpy(tx, v.mad, IMC_MAD_SIZE);
			*tx_slid = v.lid;
			got_tx = true;
		} else if (!got_rx && v.dir == IMC_MAD_RX) {
			memcpy(rx, v.mad, IMC_MAD_SIZE);
			*rx_slid = v.lid;
			got_rx = true;
		}
	}
	fclose(f);
	assert_true(got_tx && got_rx);
}

static void port_gid(struct imc_gid *g, uint16_t lid)
{
	/* fe80::2:c903:0:<lid>: a link-local GID for the port's LID */
	memset(g, 0, sizeof(*g));
	g->raw[0] = 0xfe;
	g->raw[1] = 0x80;
	g->raw[9] = 0x02;
	g->raw[10] = 0xc9;
	g->raw[11] = 0x03;
	g->raw[14] = (uint8_t)(lid >> 8);
	g->raw[15] = (uint8_t)lid;
}

struct sent {
	struct imc_ud_packet p;
	uint32_t icrc;
	uint16_t vcrc;
	const uint8_t *mad;
};

/* A QP1 MAD from slid to dlid (IBA 13.5: GSI to GSI, Q_Key 0x80010000). */
static void mad_packet(struct imc_ud_packet *p, const uint8_t *mad,
		       uint16_t slid, uint16_t dlid, bool grh, uint32_t psn)
{
	memset(p, 0, sizeof(*p));
	p->lrh.sl = 0;
	p->lrh.dlid = dlid;
	p->lrh.slid = slid;
	p->has_grh = grh;
	p->grh.hop_limit = 255;
	port_gid(&p->grh.sgid, slid);
	port_gid(&p->grh.dgid, dlid);
	p->bth.opcode = IMC_BTH_OP_UD_SEND_ONLY;
	p->bth.pkey = IMC_PKEY_DEFAULT;
	p->bth.dest_qp = IMC_QP1;
	p->bth.psn = psn;
	p->deth.qkey = IMC_QP1_QKEY;
	p->deth.src_qp = IMC_QP1;
	p->payload = mad;
	p->payload_len = 256;
}

static const char *field(char **cursor)
{
	char *f = *cursor, *tab;

	if (!f)
		return "";
	tab = strpbrk(f, "\t\n");
	if (tab) {
		*cursor = *tab == '\t' ? tab + 1 : NULL;
		*tab = 0;
	} else {
		*cursor = NULL;
	}
	return f;
}

static unsigned long long num(const char *s)
{
	char *end;
	unsigned long long v;

	assert_true(*s != 0);
	v = strtoull(s, &end, 0);
	assert_true(*end == 0);
	return v;
}

static void gid_str(const uint8_t *raw, char *out)
{
	assert_non_null(inet_ntop(AF_INET6, raw, out, INET6_ADDRSTRLEN));
}

static void test_tshark_mcmr(void **state)
{
	static const char fields[] =
		" -e frame.number -e _ws.malformed -e _ws.expert"
		" -e infiniband.lrh.vl -e infiniband.lrh.lnh"
		" -e infiniband.lrh.dlid -e infiniband.lrh.pktlen"
		" -e infiniband.lrh.slid -e infiniband.grh.paylen"
		" -e infiniband.grh.nxthdr -e infiniband.bth.opcode"
		" -e infiniband.bth.padcnt -e infiniband.bth.destqp"
		" -e infiniband.bth.psn -e infiniband.deth.q_key"
		" -e infiniband.deth.srcqp -e infiniband.mad.method"
		" -e infiniband.sa.componentmask"
		" -e infiniband.mcmemberrecord.mgid"
		" -e infiniband.mcmemberrecord.portgid"
		" -e infiniband.mcmemberrecord.joinstate"
		" -e infiniband.invariant.crc -e infiniband.variant.crc";
	static const uint8_t data[] = "to the group";
	const char *path = IMC_BINARY_DIR "/test_pcap_tshark.pcap";
	uint8_t tx[256], rx[256], buf[512];
	unsigned int tx_slid = 0, rx_slid = 0;
	struct sent s[6];
	struct imc_pcap *pc;
	char cmd[2048], line[2048];
	size_t nlines = 0;
	FILE *f;

	(void)state;
	SKIP_WITHOUT_TSHARK();
	read_pair(tx, rx, &tx_slid, &rx_slid);
	/* The SA answers the requester: rx goes back to tx's LID. */
	for (int g = 0; g < 2; g++) {
		mad_packet(&s[2 * g].p, tx, (uint16_t)tx_slid,
			   (uint16_t)rx_slid, g, 0x100 + (uint32_t)g);
		s[2 * g].mad = tx;
		mad_packet(&s[2 * g + 1].p, rx, (uint16_t)rx_slid,
			   (uint16_t)tx_slid, g, 0x200 + (uint32_t)g);
		s[2 * g + 1].mad = rx;
	}
	/* Sends to a multicast group, whose payload is not a MAD, so that
	 * the dissector shows the CRCs; 13 bytes need 3 bytes of pad. */
	for (int g = 0; g < 2; g++) {
		struct imc_ud_packet *p = &s[4 + g].p;

		memset(p, 0, sizeof(*p));
		p->lrh.vl = 1;
		p->lrh.sl = 3;
		p->lrh.dlid = 0xc00e;
		p->lrh.slid = (uint16_t)tx_slid;
		p->has_grh = g;
		p->grh.tclass = 0x20;
		p->grh.flow_label = 0xabcde;
		p->grh.hop_limit = 1;
		port_gid(&p->grh.sgid, (uint16_t)tx_slid);
		memcpy(p->grh.dgid.raw, rx + 56, 16);  /* the MGID the SA gave */
		p->bth.opcode = IMC_BTH_OP_UD_SEND_ONLY;
		p->bth.pkey = IMC_PKEY_DEFAULT;
		p->bth.dest_qp = IMC_MCAST_QPN;
		p->bth.psn = 0x300 + (uint32_t)g;
		p->deth.qkey = 0x0b1b;
		p->deth.src_qp = 0x48;
		p->payload = data;
		p->payload_len = 13;
		s[4 + g].mad = NULL;
	}

	assert_int_equal(imc_pcap_open(path, &pc), 0);
	for (int i = 0; i < 6; i++) {
		int n = imc_ud_packet_build(&s[i].p, buf, sizeof(buf));

		assert_true(n > 0);
		assert_int_equal(imc_icrc_compute(buf, (size_t)n - 6,
						  &s[i].icrc), 0);
		s[i].vcrc = imc_vcrc_compute(buf, (size_t)n - 2);
		assert_int_equal(imc_pcap_write(pc, 1000000000ull * 1700000000u +
						 1000u * (uint64_t)i, buf,
						 (size_t)n), 0);
	}
	assert_int_equal(imc_pcap_close(pc), 0);

	snprintf(cmd, sizeof(cmd),
		 "tshark " TSHARK_DLT " -r '%s' -T fields -E occurrence=f%s"
		 " 2>/dev/null", path, fields);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *c = line;
		struct sent *e;
		char want[INET6_ADDRSTRLEN];
		unsigned long long frame = num(field(&c));

		assert_true(frame >= 1 && frame <= 6);
		e = &s[frame - 1];
		nlines++;
		assert_string_equal(field(&c), "");     /* not malformed */
		assert_string_equal(field(&c), "");     /* no expert info */
		assert_int_equal(num(field(&c)), e->p.lrh.vl);
		assert_int_equal(num(field(&c)), e->p.has_grh ? 3 : 2);
		assert_int_equal(num(field(&c)), e->p.lrh.dlid);
		assert_int_equal(num(field(&c)), e->p.lrh.pkt_len);
		assert_int_equal(num(field(&c)), e->p.lrh.slid);
		if (e->p.has_grh) {
			assert_int_equal(num(field(&c)), e->p.grh.pay_len);
			assert_int_equal(num(field(&c)), 0x1b);
		} else {
			assert_string_equal(field(&c), "");
			assert_string_equal(field(&c), "");
		}
		assert_int_equal(num(field(&c)), IMC_BTH_OP_UD_SEND_ONLY);
		assert_int_equal(num(field(&c)), e->p.bth.pad_cnt);
		assert_int_equal(num(field(&c)), e->p.bth.dest_qp);
		assert_int_equal(num(field(&c)), e->p.bth.psn);
		assert_int_equal(num(field(&c)), e->p.deth.qkey);
		assert_int_equal(num(field(&c)), e->p.deth.src_qp);
		if (e->mad) {
			/* Method, SA ComponentMask, MCMemberRecord MGID,
			 * PortGID and JoinState, as in the MAD bytes. */
			assert_int_equal(num(field(&c)), e->mad[3]);
			assert_true(num(field(&c)) == get64(e->mad + 48));
			gid_str(e->mad + 56, want);
			assert_string_equal(field(&c), want);
			gid_str(e->mad + 72, want);
			assert_string_equal(field(&c), want);
			assert_int_equal(num(field(&c)), e->mad[104] & 0xf);
			/* The dissector stops at the MAD: no CRC fields. */
		} else {
			for (int k = 0; k < 5; k++)
				assert_string_equal(field(&c), "");
			/* The CRCs, least significant byte first. */
			assert_int_equal(num(field(&c)), bswap32(e->icrc));
			assert_int_equal(num(field(&c)),
					 (uint16_t)(e->vcrc >> 8 |
						    e->vcrc << 8));
		}
	}
	assert_int_equal(pclose(f), 0);
	assert_int_equal(nlines, 6);
	/* What the real OpenSM pair says, so a broken reader cannot pass:
	 * Set and GetResp, mask MGID|PortGID|Q_Key|TClass|P_Key|SL|
	 * FlowLabel|JoinState, full member. */
	assert_int_equal(tx[3], 0x02);
	assert_int_equal(rx[3], 0x81);
	assert_true(get64(tx + 48) == 0x130c7);
	assert_int_equal(rx[56], 0xff);
	assert_int_equal(rx[104] & 0xf, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pcap_bytes),
		cmocka_unit_test(test_pcap_errors),
		cmocka_unit_test(test_tshark_mcmr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
