/* The ibsim socket backend of the transport (IMC_UMAD_IBSIM) against a
 * stand-in for ibsim: a thread that answers the control protocol as
 * ibsim 0.10 does, and a packet socket this test reads and writes. No
 * ibsim needed; what the real one does is the conformance suite's.
 *
 * Checked: the attach handshake (client id, node, IsSM) and the port it
 * yields; the wire of packets both ways; that only SA class MADs are
 * handed over, with their sender, and returned ones are counted; that
 * the sends of one loop round leave together; receive coalescing; that
 * close clears IsSM and detaches; the pure helpers; bad configurations.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/sa_records.h"
#include "ibmcast/umad.h"
#include "umad/ibsim_int.h"
#include "util/bytes.h"

enum {
	NODE_GUID = 0x100004,
	PORT_NUM = 1,
	OUR_LID = 4,
	SM_LID = 1,
	WAIT_MS = 2000,   /* a bound on a wait, never asserted */
};

/* ---- the stand-in ---- */

struct fake {
	char name[64];
	int ctl;                 /* "<name>:ctl" */
	int out;                 /* "<name>:out0", connected to the client */
	pthread_t thread;
	/* what the client asked, in order */
	uint32_t types[16];
	unsigned ntypes;
	uint32_t issm_connect;
	uint32_t issm_last;
	char node[IMC_IBSIM_NODEID_LEN + 1];
	uint32_t client_id;
	bool refuse_connect;
	bool joined;
};

static void put_host32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t get_host32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static int bind_to(int fd, const char *base, const char *what, long num)
{
	struct sockaddr_un a;
	int len = imc_ibsim_sockaddr(&a, base, what, num);

	return bind(fd, (struct sockaddr *)&a, (socklen_t)len);
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;

	for (;;) {
		uint8_t buf[IMC_IBSIM_CTL_SIZE];
		struct sockaddr_un from;
		socklen_t flen = sizeof(from);
		uint32_t type;
		ssize_t n = recvfrom(f->ctl, buf, sizeof(buf), 0,
				     (struct sockaddr *)&from, &flen);

		if (n != IMC_IBSIM_CTL_SIZE)
			return NULL;
		type = get_host32(buf + 8);
		if (f->ntypes < 16)
			f->types[f->ntypes++] = type;
		switch (type) {
		case IMC_IBSIM_CTL_CONNECT: {
			struct sockaddr_un in;
			int len;

			f->client_id = get_host32(buf + 16);
			f->issm_connect = get_host32(buf + 24);
			memcpy(f->node, buf + 28, IMC_IBSIM_NODEID_LEN);
			if (f->refuse_connect) {
				put_host32(buf + 8, IMC_IBSIM_CTL_ERROR);
				break;
			}
			/* As ibsim: connect slot 0's socket to the client's
			 * "in<id>" and answer with the slot. */
			len = imc_ibsim_sockaddr(&in, f->name, "in",
						 (long)f->client_id);
			assert_int_equal(connect(f->out, (struct sockaddr *)&in,
						 (socklen_t)len), 0);
			put_host32(buf + 16, 0);
			memset(buf + 28, 0, IMC_IBSIM_NODEID_LEN);
			memcpy(buf + 28, "Hca3", 4);
			break;
		}
		case IMC_IBSIM_CTL_GET_NODEINFO: {
			struct imc_node_info ni = {
				.base_version = 1, .class_version = 1,
				.node_type = IMC_NODE_TYPE_CA, .num_ports = 1,
				.node_guid = NODE_GUID, .port_guid = NODE_GUID,
				.partition_cap = 64, .local_port = PORT_NUM,
			};

			memset(buf + 16, 0, IMC_IBSIM_CTL_DATA);
			imc_node_info_pack(&ni, buf + 16, IMC_IBSIM_CTL_DATA);
			break;
		}
		case IMC_IBSIM_CTL_GET_PORTINFO: {
			struct imc_port_info pi;

			memset(&pi, 0, sizeof(pi));
			pi.gid_prefix = 0xfe80000000000000ull;
			pi.lid = OUR_LID;
			pi.master_sm_lid = SM_LID;
			pi.master_sm_sl = 2;
			pi.local_port = PORT_NUM;
			pi.state = IMC_PORT_STATE_ACTIVE;
			pi.lmc = 0;
			imc_port_info_pack(&pi, buf + 16, IMC_IBSIM_CTL_DATA);
			break;
		}
		case IMC_IBSIM_CTL_SET_ISSM:
			f->issm_last = get_host32(buf + 16);
			break;
		default:
			break;
		}
		if (sendto(f->ctl, buf, sizeof(buf), 0,
			   (struct sockaddr *)&from, flen) != (ssize_t)sizeof(buf))
			return NULL;
		if (type == IMC_IBSIM_CTL_DISCONNECT)
			return NULL;
	}
}

static void fake_start(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "imctest%ld", (long)getpid());
	f->ctl = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	f->out = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(f->ctl >= 0 && f->out >= 0);
	assert_int_equal(bind_to(f->ctl, f->name, "ctl", -1), 0);
	assert_int_equal(bind_to(f->out, f->name, "out", 0), 0);
	assert_int_equal(pthread_create(&f->thread, NULL, fake_main, f), 0);
	setenv("IBSIM_SOCKNAME", f->name, 1);
	setenv("SIM_HOST", "Hca3", 1);
}

/* Waits for the stand-in to end (it ends after DISCONNECT). */
static void fake_join(struct fake *f)
{
	pthread_join(f->thread, NULL);
	f->joined = true;
}

static void fake_stop(struct fake *f)
{
	if (!f->joined) {
		/* Still waiting (nothing detached): wake it with a message
		 * of the wrong size, on which it returns. */
		struct sockaddr_un a;
		int len = imc_ibsim_sockaddr(&a, f->name, "ctl", -1);
		int s = socket(AF_UNIX, SOCK_DGRAM, 0);

		(void)sendto(s, "x", 1, 0, (struct sockaddr *)&a,
			     (socklen_t)len);
		close(s);
		fake_join(f);
	}
	close(f->ctl);
	close(f->out);
	unsetenv("IBSIM_SOCKNAME");
	unsetenv("SIM_HOST");
}

/* Sends a MAD to the client as ibsim relays it. */
static void fake_send(struct fake *f, uint16_t slid, uint32_t sqp,
		      uint32_t status, const uint8_t *mad)
{
	uint8_t b[IMC_IBSIM_REQ_SIZE];
	uint64_t be = htobe64(IMC_MAD_SIZE);

	memset(b, 0, sizeof(b));
	put_host32(b, htons(OUR_LID));
	put_host32(b + 4, htons(slid));
	put_host32(b + 8, htonl(1));
	put_host32(b + 12, htonl(sqp));
	put_host32(b + 16, htonl(status));
	memcpy(b + 24, &be, 8);
	memcpy(b + 32, mad, IMC_MAD_SIZE);
	assert_int_equal(send(f->out, b, sizeof(b), 0), sizeof(b));
}

/* Reads one packet the client sent; 0 when none came within WAIT_MS. */
static int fake_recv(struct fake *f, uint8_t b[IMC_IBSIM_REQ_SIZE],
		     int wait_ms)
{
	struct timeval tv = { wait_ms / 1000, wait_ms % 1000 * 1000 };
	ssize_t n;

	setsockopt(f->out, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(f->out, b, IMC_IBSIM_REQ_SIZE, 0);
	return n == IMC_IBSIM_REQ_SIZE;
}

/* ---- the client side ---- */

struct got {
	unsigned n;
	uint8_t method[32];
	uint16_t lid[32];
	uint32_t qpn[32];
	size_t len[32];
};

static void on_recv(void *arg, const uint8_t *mad, size_t len,
		    const struct imc_umad_addr *from)
{
	struct got *g = arg;

	if (g->n < 32) {
		g->method[g->n] = mad[3];
		g->lid[g->n] = from->lid;
		g->qpn[g->n] = from->qpn;
		g->len[g->n] = len;
	}
	g->n++;
}

static void sa_mad(uint8_t *mad, uint8_t method, uint32_t tid)
{
	memset(mad, 0, IMC_MAD_SIZE);
	mad[0] = 1;
	mad[1] = UMAD_CLASS_SUBN_ADM;
	mad[2] = 2;
	mad[3] = method;
	imc_put32(mad + 12, tid);
	imc_put16(mad + 16, UMAD_SA_ATTR_MCMEMBER_REC);
	mad[255] = 0xa5;    /* past umad2sim's 224 bytes: must arrive */
}

static void on_guard(struct imc_timer *t)
{
}

/* Runs loop rounds until want MADs arrived; a guard timer bounds the
 * wait (and is gone again when this returns). */
static void run_until(struct imc_loop *loop, const struct got *g,
		      unsigned want)
{
	struct imc_timer guard;

	imc_timer_init(&guard, on_guard);
	assert_int_equal(imc_timer_arm_in(loop, &guard,
					  WAIT_MS * IMC_NSEC_PER_MSEC), 0);
	while (g->n < want && imc_timer_armed(&guard))
		imc_loop_run_once(loop);
	imc_timer_cancel(loop, &guard);
}

static void test_attach_receive_send(void **state)
{
	struct imc_umad_config cfg = { .mode = IMC_UMAD_SERVER,
				       .issm = true,
				       .backend = IMC_UMAD_IBSIM };
	uint8_t mad[IMC_MAD_SIZE], b[IMC_IBSIM_REQ_SIZE];
	const struct imc_umad_port *p;
	struct imc_umad_stats st;
	struct imc_ibsim_pkt pk;
	struct imc_umad_addr to;
	struct imc_loop *loop;
	struct imc_umad *u = NULL;
	struct got g;
	struct fake f;

	fake_start(&f);
	assert_int_equal(imc_loop_create_realtime(&loop), 0);
	assert_int_equal(imc_umad_open(loop, &cfg, &u), 0);

	/* Attached as a client id of its own (not the bare pid umad2sim
	 * would take), on the node asked, with IsSM, and the port is the
	 * one ibsim described: GUID = node GUID + port number. */
	assert_int_equal(f.types[0], IMC_IBSIM_CTL_CONNECT);
	assert_int_not_equal(f.client_id, (uint32_t)getpid());
	assert_int_equal(f.client_id % (1u << 22), (uint32_t)getpid());
	assert_string_equal(f.node, "Hca3");
	assert_int_equal(f.issm_connect, 1);
	assert_int_equal(f.issm_last, 1);
	p = imc_umad_port(u);
	assert_string_equal(p->device, "Hca3");
	assert_int_equal(p->lid, OUR_LID);
	assert_int_equal(p->sm_lid, SM_LID);
	assert_int_equal(p->sm_sl, 2);
	assert_int_equal(p->port, PORT_NUM);
	assert_int_equal(p->state, IMC_UMAD_PORT_ACTIVE);
	assert_int_equal(imc_get64(p->gid.raw), 0xfe80000000000000ull);
	assert_int_equal(imc_get64(p->gid.raw + 8), NODE_GUID + PORT_NUM);

	/* Two SA requests, an SMP (an SMInfo probe: not ours) and a
	 * returned MAD of ours (status 110: no route). */
	memset(&g, 0, sizeof(g));
	imc_umad_set_recv(u, on_recv, &g);
	sa_mad(mad, UMAD_METHOD_SET, 1);
	fake_send(&f, 3, 1, 0, mad);
	mad[1] = UMAD_CLASS_SUBN_LID_ROUTED;
	fake_send(&f, 1, 0, 0, mad);
	sa_mad(mad, UMAD_SA_METHOD_GET_TABLE, 2);
	fake_send(&f, 5, 0x123456, 0, mad);
	sa_mad(mad, UMAD_METHOD_GET, 3);
	fake_send(&f, 1, 1, IMC_IBSIM_STATUS_NO_ROUTE, mad);
	run_until(loop, &g, 2);
	imc_loop_run_until(loop, imc_loop_now(loop) + 5 * IMC_NSEC_PER_MSEC);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.method[0], UMAD_METHOD_SET);
	assert_int_equal(g.lid[0], 3);
	assert_int_equal(g.qpn[0], 1);
	assert_int_equal(g.len[0], IMC_MAD_SIZE);
	assert_int_equal(g.method[1], UMAD_SA_METHOD_GET_TABLE);
	assert_int_equal(g.lid[1], 5);
	assert_int_equal(g.qpn[1], 0x123456);
	imc_umad_get_stats(u, &st);
	assert_int_equal(st.received, 2);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.returned, 1);
	assert_false(st.helper_thread);

	/* Three answers in one round: queued, not yet on the wire; they
	 * leave together when the loop runs, in order, whole. */
	memset(&to, 0, sizeof(to));
	to.lid = 3;
	to.qpn = 1;
	for (uint32_t i = 0; i < 3; i++) {
		sa_mad(mad, UMAD_METHOD_GET_RESP, 10 + i);
		assert_int_equal(imc_umad_send(u, &to, mad, sizeof(mad)), 0);
	}
	assert_int_equal(fake_recv(&f, b, 1), 0);
	imc_umad_get_stats(u, &st);
	assert_int_equal(st.sent, 0);
	imc_loop_run_once(loop);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(fake_recv(&f, b, WAIT_MS), 1);
		assert_int_equal(imc_ibsim_pkt_unpack(&pk, b, sizeof(b)), 0);
		assert_int_equal(pk.dlid, 3);
		assert_int_equal(pk.dqp, 1);
		assert_int_equal(pk.sqp, 1);
		assert_int_equal(pk.len, IMC_MAD_SIZE);
		assert_int_equal(imc_get32(pk.mad + 12), 10 + i);
		assert_int_equal(pk.mad[255], 0xa5);
	}
	imc_umad_get_stats(u, &st);
	assert_int_equal(st.sent, 3);
	assert_int_equal(st.send_errors, 0);
	assert_int_equal(imc_umad_send(u, &to, mad, 0), -EINVAL);
	assert_int_equal(imc_umad_send(u, &to, mad, IMC_MAD_SIZE + 1),
			 -EINVAL);

	/* A MAD still queued at close leaves; then IsSM is cleared and
	 * the client detached, and no callback runs. */
	sa_mad(mad, UMAD_METHOD_GET_RESP, 99);
	assert_int_equal(imc_umad_send(u, &to, mad, sizeof(mad)), 0);
	fake_send(&f, 3, 1, 0, mad);
	imc_umad_close(u);
	assert_int_equal(fake_recv(&f, b, WAIT_MS), 1);
	assert_int_equal(imc_ibsim_pkt_unpack(&pk, b, sizeof(b)), 0);
	assert_int_equal(imc_get32(pk.mad + 12), 99);
	fake_join(&f);
	assert_int_equal(f.types[f.ntypes - 2], IMC_IBSIM_CTL_SET_ISSM);
	assert_int_equal(f.issm_last, 0);
	assert_int_equal(f.types[f.ntypes - 1], IMC_IBSIM_CTL_DISCONNECT);
	assert_int_equal(g.n, 2);
	assert_int_equal(imc_loop_destroy(loop), 0);
	fake_stop(&f);
}

static void test_coalesce(void **state)
{
	struct imc_umad_config cfg = { .mode = IMC_UMAD_CLIENT,
				       .backend = IMC_UMAD_IBSIM,
				       .coalesce = 50 * IMC_NSEC_PER_MSEC };
	struct imc_loop_stats ls;
	struct imc_umad_stats st;
	uint8_t mad[IMC_MAD_SIZE];
	struct imc_loop *loop;
	struct imc_umad *u = NULL;
	struct got g;
	struct fake f;

	fake_start(&f);
	assert_int_equal(imc_loop_create_realtime(&loop), 0);
	assert_int_equal(imc_umad_open(loop, &cfg, &u), 0);
	/* A client without IsSM: ibsim was asked for none. */
	assert_int_equal(f.issm_connect, 0);
	memset(&g, 0, sizeof(g));
	imc_umad_set_recv(u, on_recv, &g);

	/* Five answers already waiting: one read takes them all. (The
	 * 50 ms period keeps a poll tick out of the round that reads.) */
	for (uint32_t i = 0; i < 5; i++) {
		sa_mad(mad, UMAD_METHOD_GET_RESP, i);
		fake_send(&f, 1, 1, 0, mad);
	}
	run_until(loop, &g, 5);
	assert_int_equal(g.n, 5);
	imc_umad_get_stats(u, &st);
	assert_int_equal(st.rx_batches, 1);
	/* Now polling: the descriptor is off the loop's watch list, a
	 * timer reads it. A MAD that comes meanwhile is read by it. */
	imc_loop_get_stats(loop, &ls);
	assert_int_equal(ls.fds_watched, 0);
	assert_int_equal(ls.timers_armed, 1);
	fake_send(&f, 1, 1, 0, mad);
	run_until(loop, &g, 6);
	assert_int_equal(g.n, 6);
	/* The first empty poll goes back to watching. */
	while (ls.fds_watched == 0) {
		imc_loop_run_once(loop);
		imc_loop_get_stats(loop, &ls);
	}
	assert_int_equal(ls.timers_armed, 0);
	fake_send(&f, 1, 1, 0, mad);
	run_until(loop, &g, 7);
	assert_int_equal(g.n, 7);
	imc_umad_get_stats(u, &st);
	assert_int_equal(st.received, 7);
	assert_int_equal(st.rx_batches, 3);

	imc_umad_close(u);
	fake_join(&f);
	assert_int_equal(f.types[f.ntypes - 1], IMC_IBSIM_CTL_DISCONNECT);
	assert_int_equal(imc_loop_destroy(loop), 0);
	fake_stop(&f);
}

static void test_open_errors(void **state)
{
	struct imc_umad_config cfg = { .mode = IMC_UMAD_SERVER,
				       .issm = true,
				       .backend = IMC_UMAD_IBSIM };
	struct imc_loop *loop;
	struct imc_umad *u = NULL;
	struct fake f;

	assert_int_equal(imc_loop_create_realtime(&loop), 0);
	/* No simulator under that name. */
	setenv("IBSIM_SOCKNAME", "imctest-nobody-here", 1);
	assert_int_equal(imc_umad_open(loop, &cfg, &u), -ENODEV);
	/* Remote (TCP) ibsim is not spoken. */
	setenv("IBSIM_SERVER_NAME", "localhost", 1);
	assert_int_equal(imc_umad_open(loop, &cfg, &u), -ENODEV);
	unsetenv("IBSIM_SERVER_NAME");
	/* A node name longer than ibsim's field. */
	setenv("SIM_HOST", "a-node-name-longer-than-thirty-two-bytes", 1);
	assert_int_equal(imc_umad_open(loop, &cfg, &u), -ENAMETOOLONG);
	/* An unknown backend. */
	cfg.backend = (enum imc_umad_backend)9;
	assert_int_equal(imc_umad_open(loop, &cfg, &u), -EINVAL);
	cfg.backend = IMC_UMAD_IBSIM;
	unsetenv("SIM_HOST");
	unsetenv("IBSIM_SOCKNAME");

	/* ibsim refuses the client (unknown node, no slot, an SM there). */
	fake_start(&f);
	f.refuse_connect = true;
	assert_int_equal(imc_umad_open(loop, &cfg, &u), -ENODEV);
	assert_null(u);
	fake_stop(&f);
	assert_int_equal(imc_loop_destroy(loop), 0);
}

static void test_wire_helpers(void **state)
{
	uint8_t b[IMC_IBSIM_REQ_SIZE], c[IMC_IBSIM_CTL_SIZE];
	uint8_t mad[IMC_MAD_SIZE];
	struct imc_ibsim_pkt p;
	struct sockaddr_un a;
	const uint8_t *d;
	uint64_t be;
	char longname[200];

	/* A packet: host-order words of network-order values, a 64-bit
	 * big-endian length, the MAD zero-padded to 256 bytes. */
	memset(mad, 0x5a, sizeof(mad));
	memset(b, 0xff, sizeof(b));
	imc_ibsim_pkt_pack(b, 0x0102, 1, mad, 100);
	assert_int_equal(get_host32(b), htons(0x0102));
	assert_int_equal(get_host32(b + 4), 0);       /* ibsim fills it */
	assert_int_equal(get_host32(b + 8), htonl(1));
	assert_int_equal(get_host32(b + 12), htonl(1));
	assert_int_equal(get_host32(b + 16), 0);
	memcpy(&be, b + 24, 8);
	assert_int_equal(be64toh(be), 100);
	assert_memory_equal(b + 32, mad, 100);
	assert_int_equal(b[32 + 100], 0);
	assert_int_equal(b[287], 0);
	/* The permissive DLID goes with a permissive SLID. */
	imc_ibsim_pkt_pack(b, 0xffff, 0, mad, 256);
	assert_int_equal(get_host32(b + 4), htons(0xffff));

	/* Unpack: exactly 288 bytes; length 0 reads as 256. */
	assert_int_equal(imc_ibsim_pkt_unpack(&p, b, sizeof(b)), 0);
	assert_int_equal(p.dlid, 0xffff);
	assert_int_equal(p.len, 256);
	assert_ptr_equal(p.mad, b + 32);
	be = 0;
	memcpy(b + 24, &be, 8);
	put_host32(b + 16, htonl(110));
	put_host32(b + 12, htonl(0xff000007));
	assert_int_equal(imc_ibsim_pkt_unpack(&p, b, sizeof(b)), 0);
	assert_int_equal(p.len, 256);
	assert_int_equal(p.status, 110);
	assert_int_equal(p.sqp, 7);
	assert_int_equal(imc_ibsim_pkt_unpack(&p, b, sizeof(b) - 1), -EBADMSG);

	/* The server's side writes every field; unpack reads them back. */
	{
		const struct imc_ibsim_pkt w = { 0x0203, 0x0405, 0x10, 0x11,
						 110, 300, mad };

		imc_ibsim_pkt_write(b, &w);
		assert_int_equal(get_host32(b + 4), htons(0x0405));
		memcpy(&be, b + 24, 8);
		assert_int_equal(be64toh(be), 256);
		assert_int_equal(imc_ibsim_pkt_unpack(&p, b, sizeof(b)), 0);
		assert_int_equal(p.dlid, 0x0203);
		assert_int_equal(p.slid, 0x0405);
		assert_int_equal(p.dqp, 0x10);
		assert_int_equal(p.sqp, 0x11);
		assert_int_equal(p.status, 110);
		assert_int_equal(p.len, 256);
		assert_memory_equal(p.mad, mad, 256);
	}

	/* Control messages. */
	imc_ibsim_ctl_pack(c, 3, IMC_IBSIM_CTL_SET_ISSM, "\1\0\0\0", 4);
	assert_int_equal(get_host32(c), IMC_IBSIM_MAGIC);
	assert_int_equal(get_host32(c + 4), 3);
	assert_int_equal(get_host32(c + 8), IMC_IBSIM_CTL_SET_ISSM);
	assert_int_equal(get_host32(c + 12), 4);
	assert_int_equal(c[16], 1);
	assert_int_equal(imc_ibsim_ctl_unpack(c, sizeof(c), &d), 0);
	assert_ptr_equal(d, c + 16);
	assert_int_equal(imc_ibsim_ctl_unpack(c, sizeof(c) - 1, &d), -EBADMSG);
	put_host32(c + 8, IMC_IBSIM_CTL_ERROR);
	assert_int_equal(imc_ibsim_ctl_unpack(c, sizeof(c), &d), -EREMOTEIO);
	put_host32(c, 0x12345678);
	assert_int_equal(imc_ibsim_ctl_unpack(c, sizeof(c), &d), -EBADMSG);

	/* Socket names: abstract, with ibsim's trailing NUL counted. */
	assert_int_equal(imc_ibsim_sockaddr(&a, "sim", "in", 42),
			 (int)offsetof(struct sockaddr_un, sun_path) + 1 + 8 + 1);
	assert_int_equal(a.sun_path[0], 0);
	assert_memory_equal(a.sun_path + 1, "sim:in42", 9);
	assert_int_equal(imc_ibsim_sockaddr(&a, "sim", "ctl", -1),
			 (int)offsetof(struct sockaddr_un, sun_path) + 1 + 7 + 1);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(imc_ibsim_sockaddr(&a, longname, "ctl", -1),
			 -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire_helpers),
		cmocka_unit_test(test_attach_receive_send),
		cmocka_unit_test(test_coalesce),
		cmocka_unit_test(test_open_errors),
	};

	unsetenv("IBSIM_SERVER_NAME");
	unsetenv("SIM_SET_ISSM");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
