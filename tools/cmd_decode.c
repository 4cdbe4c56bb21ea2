/* ibmcast decode: decode captured SA MADs (tests/vectors/ format), check
 * that each re-encodes byte for byte, and optionally write them as QP1 UD
 * packets to a pcap file and check what tshark reads back. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibmcast/gid.h"
#include "ibmcast/mad.h"
#include "ibmcast/packet.h"
#include "ibmcast/pcap.h"
#include "ibmcast/sa_attr.h"
#include "sa_tool.h"
#include "tools.h"

#define TSHARK_DLT_OPT \
	"uat:user_dlts:\"User 0 (DLT=147)\",\"infiniband\",\"0\",\"\",\"0\",\"\""

/* What we expect tshark to report for one MAD, as strings. */
struct expect {
	unsigned method;
	uint64_t comp_mask;
	bool has_mcmr;
	struct imc_mcmr rec;
};

static void help(FILE *f)
{
	fprintf(f,
		"usage: ibmcast decode [--pcap FILE] [--check] [--sm-lid LID] VECTORS\n"
		"\n"
		"Decodes the SA MADs of VECTORS (lines 'tx|rx LID HEX', as in\n"
		"tests/vectors/opensm-mcmr.txt), prints each MAD and its\n"
		"MCMemberRecords, and checks that each re-encodes byte for byte.\n"
		"\n"
		"  --pcap FILE    also write every MAD as a QP1 UD packet (LRH, BTH,\n"
		"                 DETH, MAD, ICRC, VCRC) to FILE, link type DLT_USER0\n"
		"  --check        with --pcap: run tshark on FILE and check that it\n"
		"                 decodes method, ComponentMask, MGID, PortGID and\n"
		"                 JoinState as ibmcast does and marks nothing malformed\n"
		"  --sm-lid LID   the SA's LID for the packets' addresses (default 1)\n"
		"\n"
		"Exit: 0 all checks held, 1 a check failed, 2 bad usage or input.\n");
}

static const char *method_str(unsigned m)
{
	const char *n = sa_tool_method_name(m);

	return n ? n : "?";
}

static void print_mcmr(const struct imc_mcmr *r, const char *indent)
{
	char mgid[IMC_GID_STRLEN], pgid[IMC_GID_STRLEN];

	imc_gid_format(&r->mgid, mgid);
	imc_gid_format(&r->port_gid, pgid);
	printf("%sMGID %s PortGID %s\n", indent, mgid, pgid);
	printf("%sMLID 0x%04x Q_Key 0x%08x P_Key 0x%04x MTU %u:%u Rate %u:%u "
	       "Life %u:%u SL %u FlowLabel 0x%05x TClass %u HopLimit %u "
	       "Scope %u JoinState 0x%x ProxyJoin %u\n",
	       indent, r->mlid, r->qkey, r->pkey, r->mtu_sel, r->mtu,
	       r->rate_sel, r->rate, r->life_sel, r->life, r->sl,
	       r->flow_label, r->tclass, r->hop_limit, r->scope,
	       r->join_state, r->proxy_join);
}

/* Decodes, prints and re-encodes one MAD; fills *e. Returns 0 or 1. */
static int decode_one(const struct imc_mad_line *v, unsigned idx, struct expect *e)
{
	struct imc_sa_mad m;
	uint8_t again[IMC_MAD_SIZE];
	int fail = 0;

	if (imc_sa_mad_unpack(&m, v->mad, sizeof(v->mad)) < 0) {
		printf("#%u: not a MAD\n", idx);
		return 1;
	}
	printf("#%u %s LID %u: %s %s attr 0x%04x TID 0x%016" PRIx64
	       " status 0x%04x %s comp_mask 0x%" PRIx64 " attr_offset %u%s\n",
	       idx, v->dir == IMC_MAD_TX ? "tx" : "rx", v->lid,
	       m.mad.mgmt_class == UMAD_CLASS_SUBN_ADM ? "SA" : "class?",
	       method_str(m.mad.method), m.mad.attr_id, m.mad.tid,
	       m.mad.status, imc_mad_status_str(m.mad.status), m.sa.comp_mask,
	       m.sa.attr_offset,
	       m.rmpp.flags & IMC_RMPP_FLAG_ACTIVE ? " RMPP" : "");
	if (imc_sa_mad_pack(&m, again, sizeof(again)) != IMC_MAD_SIZE ||
	    memcmp(again, v->mad, IMC_MAD_SIZE)) {
		printf("  re-encode: MISMATCH\n");
		fail = 1;
	}
	e->method = m.mad.method;
	e->comp_mask = m.sa.comp_mask;
	e->has_mcmr = false;
	if (m.mad.attr_id != UMAD_SA_ATTR_MCMEMBER_REC)
		return fail;
	for (unsigned i = 0;; i++) {
		const uint8_t *rec = m.data;
		size_t len = IMC_MCMR_SIZE;
		struct imc_mcmr r;
		uint8_t rb[IMC_MCMR_SIZE];

		/* A GetResp or a request carries one record at offset 0. */
		if (m.mad.method == UMAD_SA_METHOD_GET_TABLE_RESP) {
			if (imc_sa_mad_record(&m, i, &rec, &len) < 0)
				break;
		} else if (i > 0) {
			break;
		}
		if (len < IMC_MCMR_SIZE || imc_mcmr_unpack(&r, rec, len) < 0)
			break;
		if (m.mad.method == UMAD_SA_METHOD_GET_TABLE_RESP &&
		    imc_gid_is_zero(&r.mgid))
			break;
		print_mcmr(&r, "  ");
		if (imc_mcmr_pack(&r, rb, sizeof(rb)) != IMC_MCMR_SIZE ||
		    memcmp(rb, rec, IMC_MCMR_SIZE)) {
			printf("  record re-encode: MISMATCH\n");
			fail = 1;
		}
		if (i == 0) {
			e->has_mcmr = true;
			e->rec = r;
		}
	}
	return fail;
}

static int write_packet(struct imc_pcap *pc, const struct imc_mad_line *v,
			uint16_t dlid, unsigned idx)
{
	struct imc_ud_packet p;
	uint8_t frame[512];
	int n;

	memset(&p, 0, sizeof(p));
	p.lrh.dlid = dlid;
	p.lrh.slid = v->lid;
	p.bth.opcode = IMC_BTH_OP_UD_SEND_ONLY;
	p.bth.pkey = IMC_PKEY_DEFAULT;
	p.bth.dest_qp = IMC_QP1;
	p.bth.psn = idx;
	p.deth.qkey = IMC_QP1_QKEY;
	p.deth.src_qp = IMC_QP1;
	p.payload = v->mad;
	p.payload_len = IMC_MAD_SIZE;
	n = imc_ud_packet_build(&p, frame, sizeof(frame));
	if (n < 0)
		return n;
	/* The parser checks the chain of headers and both CRCs (IBA 7.8). */
	if (imc_ud_packet_parse(&p, frame, (size_t)n) != n)
		return -EBADMSG;
	return imc_pcap_write(pc, (uint64_t)idx * 1000, frame, (size_t)n);
}

static void lower(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
}

/* Runs tshark on path and compares its fields with exp[]. */
static int tshark_check(const char *path, const struct expect *exp, unsigned n)
{
	char cmd[1024], line[1024];
	unsigned row = 0;
	int fail = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "tshark -o '%s' -r '%s' -T fields -E separator=/t -E occurrence=f "
		 "-e infiniband.mad.method -e infiniband.sa.componentmask "
		 "-e infiniband.mcmemberrecord.mgid -e infiniband.mcmemberrecord.portgid "
		 "-e infiniband.mcmemberrecord.joinstate -e _ws.malformed "
		 "-e _ws.expert.severity 2>/dev/null",
		 TSHARK_DLT_OPT, path);
	f = popen(cmd, "r");
	if (!f) {
		fprintf(stderr, "ibmcast decode: cannot run tshark\n");
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *fld[7] = { 0 };
		char *s = line;
		const struct expect *e = &exp[row];
		char want[IMC_GID_STRLEN];
		int k;

		line[strcspn(line, "\n")] = '\0';
		for (k = 0; k < 7 && s; k++) {
			fld[k] = s;
			s = strchr(s, '\t');
			if (s)
				*s++ = '\0';
		}
		if (row >= n) {
			printf("tshark: more packets than written\n");
			fail = 1;
			break;
		}
		if (!fld[0] || strtoul(fld[0], NULL, 0) != e->method) {
			printf("tshark #%u: method %s, expected 0x%02x\n", row,
			       fld[0] ? fld[0] : "(none)", e->method);
			fail = 1;
		}
		if (!fld[1] || strtoull(fld[1], NULL, 0) != e->comp_mask) {
			printf("tshark #%u: ComponentMask %s, expected 0x%" PRIx64 "\n",
			       row, fld[1] ? fld[1] : "(none)", e->comp_mask);
			fail = 1;
		}
		if (e->has_mcmr) {
			struct imc_gid g;

			imc_gid_format(&e->rec.mgid, want);
			if (!fld[2] || imc_gid_parse(fld[2], &g) ||
			    !imc_gid_equal(&g, &e->rec.mgid)) {
				printf("tshark #%u: MGID %s, expected %s\n", row,
				       fld[2] ? fld[2] : "(none)", want);
				fail = 1;
			}
			imc_gid_format(&e->rec.port_gid, want);
			if (!fld[3] || imc_gid_parse(fld[3], &g) ||
			    !imc_gid_equal(&g, &e->rec.port_gid)) {
				printf("tshark #%u: PortGID %s, expected %s\n", row,
				       fld[3] ? fld[3] : "(none)", want);
				fail = 1;
			}
			if (!fld[4] || strtoul(fld[4], NULL, 0) != e->rec.join_state) {
				printf("tshark #%u: JoinState %s, expected 0x%x\n", row,
				       fld[4] ? fld[4] : "(none)", e->rec.join_state);
				fail = 1;
			}
		}
		if (fld[5] && *fld[5]) {
			printf("tshark #%u: malformed packet\n", row);
			fail = 1;
		}
		if (fld[6]) {
			lower(fld[6]);
			/* Expert info at warning or error level. */
			if (strstr(fld[6], "error") || strstr(fld[6], "warn") ||
			    strtoul(fld[6], NULL, 0) >= 0x600000) {
				printf("tshark #%u: expert info severity %s\n", row, fld[6]);
				fail = 1;
			}
		}
		row++;
	}
	if (pclose(f) != 0 && !row) {
		fprintf(stderr, "ibmcast decode: tshark failed or is not installed\n");
		return 1;
	}
	if (row != n) {
		printf("tshark read %u packets, %u written\n", row, n);
		fail = 1;
	}
	if (!fail)
		printf("tshark: %u packets; method, ComponentMask, MGID, PortGID and "
		       "JoinState as decoded; nothing malformed\n", row);
	return fail;
}

struct decode_opts {
	const char *pcap_path;
	bool check;
	unsigned long sm_lid;
};

/* The options and the one file argument; -1 when they are good, else
 * the exit code. */
static int parse_opts(int argc, char **argv, struct decode_opts *o)
{
	static const struct option opts[] = {
		{ "pcap", required_argument, NULL, 'p' },
		{ "check", no_argument, NULL, 'c' },
		{ "sm-lid", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t lid;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			o->pcap_path = optarg;
			break;
		case 'c':
			o->check = true;
			break;
		case 'l':
			if (imc_opt_num("ibmcast decode", "sm-lid", optarg, 1,
					IMC_MLID_MIN - 1, &lid))
				return IMC_EXIT_USAGE;
			o->sm_lid = (unsigned long)lid;
			break;
		default:
			help(stderr);
			return IMC_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		help(stderr);
		return IMC_EXIT_USAGE;
	}
	if (o->check && !o->pcap_path) {
		fprintf(stderr, "ibmcast decode: --check needs --pcap FILE\n");
		return IMC_EXIT_USAGE;
	}
	return -1;
}

/* Decodes every vector line of f (named name), writing each to pc when
 * there is one; exp gets what tshark must find, *np how many. Returns 0
 * or the exit code. */
static int decode_file(FILE *f, const char *name, struct imc_pcap *pc,
		       const struct decode_opts *o, struct expect *exp,
		       unsigned cap, unsigned *np)
{
	uint16_t last_tx_lid = 0;
	unsigned n = 0, lineno = 0;
	char line[2048];
	int fail = 0;

	while (fgets(line, sizeof(line), f)) {
		struct imc_mad_line v;
		int rc;

		lineno++;
		rc = imc_mad_line_parse(line, &v);
		if (rc == 0)
			continue;
		if (rc < 0) {
			fprintf(stderr, "ibmcast decode: %s:%u: %s\n", name,
				lineno, rc == -EMSGSIZE ?
				"expected 256 bytes (512 hex digits)" :
				"expected 'tx|rx LID HEX'");
			fail = IMC_EXIT_USAGE;
			break;
		}
		if (n == cap) {
			fprintf(stderr, "ibmcast decode: more than %u MADs\n",
				cap);
			fail = IMC_EXIT_USAGE;
			break;
		}
		if (decode_one(&v, n, &exp[n]))
			fail = IMC_EXIT_FAIL;
		if (pc) {
			uint16_t dlid = v.dir == IMC_MAD_TX ?
				(uint16_t)o->sm_lid : last_tx_lid;

			if (write_packet(pc, &v, dlid, n) < 0) {
				fprintf(stderr, "ibmcast decode: cannot write %s\n",
					o->pcap_path);
				fail = IMC_EXIT_FAIL;
			}
		}
		if (v.dir == IMC_MAD_TX)
			last_tx_lid = v.lid;
		n++;
	}
	*np = n;
	return fail;
}

static int run(int argc, char **argv)
{
	struct decode_opts o = { .sm_lid = 1 };
	struct imc_pcap *pc = NULL;
	struct expect exp[64];
	unsigned n = 0;
	int fail;
	FILE *f;

	fail = parse_opts(argc, argv, &o);
	if (fail >= 0)
		return fail;
	f = fopen(argv[optind], "r");
	if (!f) {
		fprintf(stderr, "ibmcast decode: %s: %s\n", argv[optind],
			strerror(errno));
		return IMC_EXIT_USAGE;
	}
	if (o.pcap_path) {
		int rc = imc_pcap_open(o.pcap_path, &pc);

		if (rc < 0) {
			fprintf(stderr, "ibmcast decode: %s: %s\n", o.pcap_path,
				strerror(-rc));
			fclose(f);
			return IMC_EXIT_USAGE;
		}
	}
	fail = decode_file(f, argv[optind], pc, &o, exp,
			   (unsigned)IMC_ARRAY_SIZE(exp), &n);
	fclose(f);
	if (pc && imc_pcap_close(pc) < 0) {
		fprintf(stderr, "ibmcast decode: cannot write %s\n",
			o.pcap_path);
		fail = IMC_EXIT_FAIL;
	}
	if (fail == IMC_EXIT_USAGE)
		return fail;
	printf("%u MADs decoded%s; re-encoding %s\n", n,
	       o.pcap_path ? ", written as UD packets with ICRC and VCRC checked" : "",
	       fail ? "FAILED" : "byte for byte");
	if (o.check && tshark_check(o.pcap_path, exp, n))
		fail = IMC_EXIT_FAIL;
	return fail;
}

const struct imc_cmd imc_cmd_decode = {
	.name = "decode",
	.summary = "decode captured SA MADs, re-encode them, write and check a pcap",
	.run = run,
	.help = help,
};
