/* Capture: a run of the fabric recorded as pcap holds one frame per cable
 * crossing, each a valid packet (imc_ud_packet_parse checks the ICRC and
 * VCRC) with the headers that were sent, in time order; tshark decodes
 * the same LRH and BTH fields. A capture on one port holds only what
 * leaves that port. */
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

#include "ibmcast/fabric.h"
#include "ibmcast/packet.h"
#include "ibmcast/pcap.h"
#include "fabric_world.h"

#define TSHARK_DLT \
	"-o 'uat:user_dlts:\"User 0 (DLT=147)\",\"infiniband\",\"0\",\"\",\"0\",\"\"'"
#define MAXF 64

struct frame {
	uint64_t ts;
	uint8_t buf[4200];
	size_t len;
	struct imc_ud_packet p;
};

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* Reads every record; each must parse as a whole UD packet. */
static size_t read_pcap(const uint8_t *d, size_t size, struct frame *fr)
{
	size_t off = IMC_PCAP_FILE_HDR_SIZE, n = 0;

	assert_true(size >= off);
	assert_int_equal(le32(d), IMC_PCAP_MAGIC_NS);
	assert_int_equal(le32(d + 20), IMC_PCAP_LINKTYPE_USER0);
	while (off < size) {
		size_t len;

		assert_true(off + IMC_PCAP_REC_HDR_SIZE <= size);
		assert_true(n < MAXF);
		fr[n].ts = le32(d + off) * 1000000000ull + le32(d + off + 4);
		len = le32(d + off + 8);
		assert_int_equal(le32(d + off + 12), len);
		off += IMC_PCAP_REC_HDR_SIZE;
		assert_true(off + len <= size && len <= sizeof(fr[n].buf));
		memcpy(fr[n].buf, d + off, len);
		fr[n].len = len;
		assert_int_equal(imc_ud_packet_parse(&fr[n].p, fr[n].buf, len),
				 (int)len);
		off += len;
		n++;
	}
	return n;
}

static void slurp(const char *path, uint8_t **d, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	*d = malloc((size_t)n + 1);
	assert_non_null(*d);
	assert_int_equal(fread(*d, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
}

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

static void nop(struct imc_qp *qp, const struct imc_ud_recv *r, void *ctx)
{
	(void)qp;
	(void)r;
	(void)ctx;
}

struct cap_world {
	struct world base;
	struct imc_qp *qp[4];
	uint16_t lid[4];
	struct imc_gid gid[4];
	struct imc_gid mgid;
};

/* fat-tree:leaves=2,hosts=2,spines=1: HCAs 0..3, leaves 4 and 5, spine
 * 6. A multicast group over HCAs 0, 1 and 3. */
static void cap_up(struct cap_world *w)
{
	uint32_t nodes[3] = { 0, 1, 3 };
	unsigned ports[3] = { 1, 1, 1 };

	world_topo(&w->base, "fat-tree:leaves=2,hosts=2,spines=1");
	/* A wall-clock-like start: the capture's timestamps. */
	world_create(&w->base, NULL, 1700000000ull * IMC_NSEC_PER_SEC);
	world_bring_up(&w->base);
	memset(&w->mgid, 0, sizeof(w->mgid));
	w->mgid.raw[0] = 0xff;
	w->mgid.raw[1] = 0x12;
	w->mgid.raw[15] = 9;
	for (uint32_t i = 0; i < 4; i++) {
		struct imc_port_attr a;

		assert_int_equal(imc_fabric_port_attr(w->base.f, i, 1, &a), 0);
		w->lid[i] = a.lid;
		w->gid[i] = a.gid;
		assert_int_equal(imc_qp_create(w->base.f, i, 1, 0x40 + i, 0x777,
					       0xffff, nop, NULL, &w->qp[i]),
				 0);
		assert_int_equal(imc_qp_attach(w->qp[i], &w->mgid, 0xc005), 0);
	}
	assert_int_equal(imc_fabric_mft_program_tree(w->base.f, 0xc005, nodes,
						     ports, 3), 3);
}

static void cap_down(struct cap_world *w)
{
	for (int i = 0; i < 4; i++)
		imc_qp_destroy(w->qp[i]);
	world_down(&w->base);
}

/* HCA 0 -> 3 without GRH (4 cables), 2 -> 1 with GRH (4 cables), 1 -> 0
 * (2 cables) and multicast from 0 to 1 and 3 (1 + 1 + 3 cables). */
static void traffic(struct cap_world *w)
{
	static const char text[] = "captured datagram";
	struct imc_ah ah;

	memset(&ah, 0, sizeof(ah));
	ah.dlid = w->lid[3];
	ah.sl = 2;
	assert_int_equal(imc_qp_send(w->qp[0], &ah, 0x43, 0x777, text, 17), 0);
	assert_int_equal(imc_loop_run(w->base.loop), 0);
	ah.dlid = w->lid[1];
	ah.has_grh = true;
	ah.dgid = w->gid[1];
	ah.hop_limit = 3;
	ah.tclass = 0x40;
	ah.flow_label = 0x54321;
	assert_int_equal(imc_qp_send(w->qp[2], &ah, 0x41, 0x777, text, 5), 0);
	assert_int_equal(imc_loop_run(w->base.loop), 0);
	memset(&ah, 0, sizeof(ah));
	ah.dlid = w->lid[0];
	assert_int_equal(imc_qp_send(w->qp[1], &ah, 0x40, 0x777, text, 0), 0);
	assert_int_equal(imc_loop_run(w->base.loop), 0);
	ah.dlid = 0xc005;
	ah.has_grh = true;
	ah.dgid = w->mgid;
	assert_int_equal(imc_qp_send(w->qp[0], &ah, IMC_MCAST_QPN, 0x777, text,
				     16), 0);
	assert_int_equal(imc_loop_run(w->base.loop), 0);
}

static void test_capture_all(void **state)
{
	const char *path = IMC_BINARY_DIR "/test_fabric_capture.pcap";
	struct frame *fr = calloc(MAXF, sizeof(*fr));
	struct imc_fabric_totals tot;
	struct cap_world w;
	struct imc_pcap *pc;
	uint8_t *d;
	size_t size, n;
	unsigned from[4] = { 0 };

	(void)state;
	assert_non_null(fr);
	cap_up(&w);
	assert_int_equal(imc_pcap_open(path, &pc), 0);
	assert_int_equal(imc_fabric_capture(w.base.f, pc, IMC_TOPO_NONE, 0), 0);
	assert_int_equal(imc_fabric_capture(w.base.f, pc, IMC_TOPO_NONE, 0), -EBUSY);
	traffic(&w);
	assert_int_equal(imc_fabric_capture(w.base.f, NULL, 0, 0), 0);
	assert_int_equal(imc_pcap_close(pc), 0);
	/* Stopped: more traffic leaves the file alone. */
	traffic(&w);

	slurp(path, &d, &size);
	n = read_pcap(d, size, fr);
	imc_fabric_totals(w.base.f, &tot);
	assert_int_equal(n, 4 + 4 + 2 + 5);
	assert_int_equal(tot.hops, 2 * n);
	for (size_t i = 0; i < n; i++) {
		const struct imc_ud_packet *p = &fr[i].p;

		if (i)
			assert_true(fr[i].ts >= fr[i - 1].ts);
		assert_true(fr[i].ts >= 1700000000ull * IMC_NSEC_PER_SEC);
		assert_int_equal(p->bth.opcode, IMC_BTH_OP_UD_SEND_ONLY);
		assert_int_equal(p->bth.pkey, 0xffff);
		assert_int_equal(p->deth.qkey, 0x777);
		assert_true(p->deth.src_qp >= 0x40 && p->deth.src_qp <= 0x43);
		from[p->deth.src_qp - 0x40]++;
		switch (p->deth.src_qp) {
		case 0x40:
			assert_int_equal(p->lrh.slid, w.lid[0]);
			if (p->lrh.dlid == 0xc005) {
				assert_true(p->has_grh);
				assert_memory_equal(&p->grh.dgid, &w.mgid, 16);
				assert_int_equal(p->bth.dest_qp, IMC_MCAST_QPN);
				assert_int_equal(p->payload_len, 16);
			} else {
				assert_int_equal(p->lrh.dlid, w.lid[3]);
				assert_false(p->has_grh);
				assert_int_equal(p->lrh.sl, 2);
				assert_int_equal(p->bth.dest_qp, 0x43);
				assert_int_equal(p->payload_len, 17);
				assert_memory_equal(p->payload,
						    "captured datagram", 17);
			}
			break;
		case 0x41:
			assert_int_equal(p->lrh.dlid, w.lid[0]);
			assert_int_equal(p->payload_len, 0);
			break;
		case 0x42:
			assert_true(p->has_grh);
			assert_int_equal(p->lrh.dlid, w.lid[1]);
			assert_memory_equal(&p->grh.sgid, &w.gid[2], 16);
			assert_memory_equal(&p->grh.dgid, &w.gid[1], 16);
			assert_int_equal(p->grh.hop_limit, 3);
			assert_int_equal(p->grh.tclass, 0x40);
			assert_int_equal(p->grh.flow_label, 0x54321);
			assert_int_equal(p->payload_len, 5);
			break;
		default:
			fail();
		}
	}
	assert_int_equal(from[0], 4 + 5);
	assert_int_equal(from[1], 2);
	assert_int_equal(from[2], 4);
	assert_int_equal(from[3], 0);

	if (!have_tshark()) {
		printf("tshark is not installed: skipping the decode\n");
	} else {
		char cmd[1024], line[512];
		size_t k = 0;
		FILE *f;

		/* tshark's Mellanox EoIB heuristic claims an empty payload
		 * and calls it malformed; it is not ours to judge. */
		snprintf(cmd, sizeof(cmd),
			 "tshark --disable-heuristic mellanox_eoib " TSHARK_DLT
			 " -r '%s' -T fields -E occurrence=f"
			 " -e frame.number -e _ws.malformed"
			 " -e infiniband.lrh.dlid -e infiniband.lrh.slid"
			 " -e infiniband.bth.destqp -e infiniband.deth.srcqp"
			 " 2>/dev/null", path);
		f = popen(cmd, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			unsigned num, dlid, slid, dqp, sqp;
			char *c = line;

			assert_true(k < n);
			num = (unsigned)strtoul(c, &c, 0);
			assert_int_equal(*c, '\t');
			c++;
			/* Not malformed: the field is empty. */
			assert_int_equal(*c, '\t');
			assert_int_equal(sscanf(c, "\t%i\t%i\t%i\t%i", &dlid,
						&slid, &dqp, &sqp), 4);
			assert_int_equal(num, k + 1);
			assert_int_equal(dlid, fr[k].p.lrh.dlid);
			assert_int_equal(slid, fr[k].p.lrh.slid);
			assert_int_equal(dqp, fr[k].p.bth.dest_qp);
			assert_int_equal(sqp, fr[k].p.deth.src_qp);
			k++;
		}
		assert_int_equal(pclose(f), 0);
		assert_int_equal(k, n);
	}
	unlink(path);
	free(d);
	free(fr);
	cap_down(&w);
}

/* Only what leaves leaf 5 by port 3 (to the spine): the datagram from
 * HCA 2 on its way up; multicast goes up from leaf 4 only. */
static void test_capture_one_port(void **state)
{
	struct frame *fr = calloc(MAXF, sizeof(*fr));
	struct cap_world w;
	struct imc_pcap *pc;
	char *mem = NULL;
	size_t size = 0, n;
	FILE *f;

	(void)state;
	assert_non_null(fr);
	cap_up(&w);
	f = open_memstream(&mem, &size);
	assert_non_null(f);
	assert_int_equal(imc_pcap_open_stream(f, IMC_PCAP_LINKTYPE_USER0, &pc),
			 0);
	assert_int_equal(imc_fabric_capture(w.base.f, pc, 5, 0), -EINVAL);
	assert_int_equal(imc_fabric_capture(w.base.f, pc, 99, 1), -EINVAL);
	assert_int_equal(imc_fabric_capture(w.base.f, pc, 5, 3), 0);
	traffic(&w);
	assert_int_equal(imc_fabric_capture(w.base.f, NULL, 0, 0), 0);
	assert_int_equal(imc_pcap_close(pc), 0);
	fclose(f);
	n = read_pcap((const uint8_t *)mem, size, fr);
	assert_int_equal(n, 1);
	assert_int_equal(fr[0].p.deth.src_qp, 0x42);
	assert_int_equal(fr[0].p.lrh.dlid, w.lid[1]);
	free(mem);
	free(fr);
	cap_down(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture_all),
		cmocka_unit_test(test_capture_one_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
