/* The ibsim-protocol server (ibmcast/simserve.h) against ibmcast's own
 * ibsim client (src/umad/ibsim.c), the client side written from ibsim's
 * protocol independently of the server. The server runs its real-time
 * loop in a thread; the clients block on their control socket as
 * umad2sim does.
 *
 * Checked: attach by default, by name and by GUID, and to an unknown
 * node; the port a client is told matches the fabric's; more clients at
 * once than ibsim's fixed ten; slots come back after DISCONNECT; one SM
 * per node, and a killed SM's node takes a new one; control messages with a bad magic, an unknown type, a slot
 * that is not the sender's; a MAD the fabric cannot take comes back with
 * status 110; 3,000 SMPs in flight from a client that reads only after
 * sending them all are all answered (ibsim wedges there), and with a
 * small queue the overflow is dropped and counted, never blocking.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ibmcast/fabric.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/simserve.h"
#include "ibmcast/topo.h"
#include "ibmcast/umad.h"
#include "umad/ibsim_int.h"

#define NET_FILE IMC_SOURCE_DIR "/examples/ibsim-2sw.net"

struct world {
	struct imc_topo *topo;
	struct imc_loop *loop;
	struct imc_fabric *fab;
	struct imc_simserve *srv;
	pthread_t th;
	char sock[64];
};

static void *serve(void *arg)
{
	struct world *w = arg;

	imc_loop_run(w->loop);
	return NULL;
}

static int setup(void **state)
{
	struct imc_fabric_config fc;
	struct imc_simserve_config sc;
	struct world *w = calloc(1, sizeof(*w));
	char err[256];

	assert_non_null(w);
	snprintf(w->sock, sizeof(w->sock), "imcss%ld", (long)getpid());
	assert_int_equal(imc_topo_parse_file(NET_FILE, &w->topo, err,
					     sizeof(err)), 0);
	assert_int_equal(imc_loop_create_realtime(&w->loop), 0);
	imc_fabric_config_default(&fc);
	assert_int_equal(imc_fabric_create(w->topo, w->loop, &fc, &w->fab), 0);
	assert_int_equal(imc_fabric_bring_up(w->fab), 0);
	imc_simserve_config_init(&sc);
	sc.sockname = w->sock;
	if (getenv("IMC_TEST_QUEUE_LIMIT"))
		sc.queue_limit = strtoul(getenv("IMC_TEST_QUEUE_LIMIT"), NULL, 0);
	assert_int_equal(imc_simserve_create(w->fab, w->loop, &sc, &w->srv),
			 0);
	assert_int_equal(pthread_create(&w->th, NULL, serve, w), 0);
	*state = w;
	return 0;
}

/* Stops the server thread; afterwards the test may read the stats. */
static void stop(struct world *w)
{
	if (!w->th)
		return;
	imc_loop_wake(w->loop);
	pthread_join(w->th, NULL);
	w->th = 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	stop(w);
	imc_simserve_destroy(w->srv);
	imc_fabric_destroy(w->fab);
	assert_int_equal(imc_loop_destroy(w->loop), 0);
	imc_topo_destroy(w->topo);
	free(w);
	return 0;
}

static int open_at(struct world *w, const char *node, bool issm,
		   struct imc_umad_port *port, struct imc_ibsim **out)
{
	struct imc_ibsim_config c = { w->sock, node, issm };

	return imc_ibsim_open(&c, port, out);
}

static void port_matches(struct world *w, const char *name,
			 const struct imc_umad_port *p)
{
	struct imc_port_attr pa;
	uint32_t node;

	assert_int_equal(imc_topo_find(w->topo, name, &node), 0);
	assert_int_equal(imc_fabric_port_attr(w->fab, node, 1, &pa), 0);
	assert_string_equal(p->device, name);
	assert_int_equal(p->port, 1);
	assert_int_equal(p->lid, pa.lid);
	assert_int_not_equal(p->lid, 0);
	assert_int_equal(p->sm_lid, pa.sm_lid);
	assert_int_equal(p->state, IMC_PORT_ACTIVE);
	/* The port GUID: node GUID + 1 for a CA (ibsim's numbering). */
	assert_memory_equal(p->gid.raw + 8, pa.gid.raw + 8, 8);
}

static void test_attach(void **state)
{
	struct world *w = *state;
	struct imc_umad_port p;
	struct imc_ibsim *a, *b, *c, *d;
	struct imc_simserve_stats st;

	/* No node: the first node of the file, Hca1. */
	assert_int_equal(open_at(w, NULL, false, &p, &a), 0);
	port_matches(w, "Hca1", &p);
	assert_int_equal(open_at(w, "Hca3", false, &p, &b), 0);
	port_matches(w, "Hca3", &p);
	/* Hca4's node GUID and port 1's GUID (ibsim numbers them from
	 * 0x100000, nports + 1 each: Hca4 is 0x100009). */
	assert_int_equal(open_at(w, "0x100009", false, &p, &c), 0);
	port_matches(w, "Hca4", &p);
	assert_int_equal(open_at(w, "0x10000a", false, &p, &d), 0);
	port_matches(w, "Hca4", &p);
	assert_int_equal(open_at(w, "NoSuchNode", false, &p, &a), -ENODEV);
	assert_int_equal(open_at(w, "0x1234567", false, &p, &a), -ENODEV);
	imc_ibsim_close(a);
	imc_ibsim_close(b);
	imc_ibsim_close(c);
	imc_ibsim_close(d);
	stop(w);
	imc_simserve_get_stats(w->srv, &st);
	assert_int_equal(st.connects, 4);
	assert_int_equal(st.disconnects, 4);
	assert_int_equal(st.clients, 0);
	assert_int_equal(st.clients_max, 4);
	assert_int_equal(st.ctl_errors, 2);
}

/* ibsim has ten slots (IBSIM_MAX_CLIENTS); the server has no such limit
 * and hands freed slots out again. */
static void test_many_clients(void **state)
{
	enum { N = 64 };
	struct world *w = *state;
	struct imc_ibsim *c[N];
	struct imc_umad_port p;
	struct imc_simserve_stats st;
	const char *names[] = { "Hca1", "Hca2", "Hca3", "Hca4" };

	for (int i = 0; i < N; i++) {
		assert_int_equal(open_at(w, names[i % 4], false, &p, &c[i]), 0);
		assert_string_equal(p.device, names[i % 4]);
	}
	for (int i = 0; i < N; i += 2)
		imc_ibsim_close(c[i]);
	for (int i = 0; i < N; i += 2)
		assert_int_equal(open_at(w, names[i % 4], false, &p, &c[i]), 0);
	for (int i = 0; i < N; i++)
		imc_ibsim_close(c[i]);
	stop(w);
	imc_simserve_get_stats(w->srv, &st);
	assert_int_equal(st.connects, N + N / 2);
	assert_int_equal(st.clients_max, N);
	assert_int_equal(st.clients, 0);
}

static void test_one_sm_per_node(void **state)
{
	struct world *w = *state;
	struct imc_umad_port p;
	struct imc_ibsim *a, *b, *c;

	assert_int_equal(open_at(w, "Hca2", true, &p, &a), 0);
	assert_int_equal(open_at(w, "Hca2", true, &p, &b), -ENODEV);
	/* Another node may have its own. */
	assert_int_equal(open_at(w, "Hca3", true, &p, &c), 0);
	imc_ibsim_close(a);
	/* The SM went away: the node takes a new one. */
	assert_int_equal(open_at(w, "Hca2", true, &p, &b), 0);
	imc_ibsim_close(b);
	imc_ibsim_close(c);
}

/* An SM killed without DISCONNECT (its sockets closed) no longer holds
 * the node: the next SM there is accepted, as OpenSM started again after
 * SIGKILL must be. */
static void test_sm_killed(void **state)
{
	struct world *w = *state;
	struct imc_umad_port p;
	struct imc_ibsim *a, *b, *c;
	struct imc_simserve_stats st;

	int null = open("/dev/null", O_RDONLY);

	assert_true(null >= 0);
	assert_int_equal(open_at(w, "Hca3", true, &p, &a), 0);
	/* The process is gone: its packet socket closes (the number stays
	 * taken, so that a's close below cannot close another's). */
	assert_int_equal(dup2(null, imc_ibsim_fd(a)), imc_ibsim_fd(a));
	close(null);
	assert_int_equal(open_at(w, "Hca3", true, &p, &b), 0);
	/* b is alive: a third is refused. */
	assert_int_equal(open_at(w, "Hca3", true, &p, &c), -ENODEV);
	/* a's late DISCONNECT names a slot that is not its own any more,
	 * or none: b stays. */
	imc_ibsim_close(a);
	assert_int_equal(open_at(w, "Hca3", true, &p, &c), -ENODEV);
	imc_ibsim_close(b);
	stop(w);
	imc_simserve_get_stats(w->srv, &st);
	assert_int_equal(st.clients, 0);
	assert_int_equal(st.connects, 2);
}

/* A raw control socket: one request, the answer or nothing. */
static int raw_ctl(struct world *w, int fd, uint32_t slot, uint32_t type,
		   uint32_t magic, uint8_t reply[IMC_IBSIM_CTL_SIZE])
{
	struct sockaddr_un a;
	int alen = imc_ibsim_sockaddr(&a, w->sock, "ctl", -1);
	uint8_t buf[IMC_IBSIM_CTL_SIZE];
	ssize_t n;

	imc_ibsim_ctl_pack(buf, slot, type, NULL, 0);
	memcpy(buf, &magic, 4);
	assert_int_equal(sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&a,
				(socklen_t)alen), sizeof(buf));
	n = recv(fd, reply, IMC_IBSIM_CTL_SIZE, 0);
	return n < 0 ? -errno : (int)n;
}

static void test_bad_ctl(void **state)
{
	struct world *w = *state;
	const struct timeval tmo = { 0, 300 * 1000 };
	uint8_t reply[IMC_IBSIM_CTL_SIZE];
	const uint8_t *data;
	struct imc_umad_port p;
	struct imc_ibsim *a;
	struct sockaddr_un me;
	int alen, fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	uint32_t type;

	assert_true(fd >= 0);
	alen = imc_ibsim_sockaddr(&me, w->sock, "ctlraw", (long)getpid());
	assert_int_equal(bind(fd, (struct sockaddr *)&me, (socklen_t)alen), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo,
				    sizeof(tmo)), 0);
	assert_int_equal(open_at(w, "Hca2", false, &p, &a), 0);
	/* Not ibsim's magic: no answer at all. */
	assert_int_equal(raw_ctl(w, fd, 0, IMC_IBSIM_CTL_GET_NODEINFO,
				 0x12345678, reply), -EAGAIN);
	/* Slot 0 is the client above, not this socket's. */
	assert_int_equal(raw_ctl(w, fd, 0, IMC_IBSIM_CTL_DISCONNECT,
				 IMC_IBSIM_MAGIC, reply), IMC_IBSIM_CTL_SIZE);
	assert_int_equal(imc_ibsim_ctl_unpack(reply, sizeof(reply), &data),
			 -EREMOTEIO);
	/* A slot nobody holds. */
	assert_int_equal(raw_ctl(w, fd, 77, IMC_IBSIM_CTL_GET_NODEINFO,
				 IMC_IBSIM_MAGIC, reply), IMC_IBSIM_CTL_SIZE);
	memcpy(&type, reply + 8, 4);
	assert_int_equal(type, IMC_IBSIM_CTL_ERROR);
	/* An unknown type, even from the client's own socket, is an error;
	 * the client still works afterwards. */
	assert_int_equal(raw_ctl(w, fd, 0, 99, IMC_IBSIM_MAGIC, reply),
			 IMC_IBSIM_CTL_SIZE);
	memcpy(&type, reply + 8, 4);
	assert_int_equal(type, IMC_IBSIM_CTL_ERROR);
	imc_ibsim_close(a);
	close(fd);
}

/* A MAD the fabric cannot send (an SMP with a bad hop count) comes back
 * to its sender with status 110, as ibsim answers what it cannot route. */
static void test_bounce(void **state)
{
	struct world *w = *state;
	uint8_t mad[IMC_MAD_SIZE], pkt[IMC_IBSIM_REQ_SIZE];
	uint8_t in[1][IMC_IBSIM_REQ_SIZE];
	const uint8_t (*out)[IMC_IBSIM_REQ_SIZE] =
		(const uint8_t (*)[IMC_IBSIM_REQ_SIZE])&pkt;
	struct imc_ibsim_pkt got;
	struct imc_umad_port p;
	struct imc_ibsim *a;
	size_t len = 0;
	int n = 0;

	assert_int_equal(open_at(w, "Hca2", false, &p, &a), 0);
	memset(mad, 0, sizeof(mad));
	mad[0] = 1;                 /* base version */
	mad[1] = 0x81;              /* directed-route SMP */
	mad[2] = 1;
	mad[3] = 0x01;              /* Get */
	mad[7] = 64;                /* hop count 64 > 63: malformed */
	memset(mad + 32, 0xff, 4);  /* DrSLID, DrDLID permissive */
	mad[12] = 0xab;             /* TID */
	mad[17] = 0x11;             /* NodeInfo */
	imc_ibsim_pkt_pack(pkt, 0xffff, 0, mad, sizeof(mad));
	assert_int_equal(imc_ibsim_send(a, out, 1), 1);
	for (int i = 0; i < 200 && n == 0; i++) {
		n = imc_ibsim_recv(a, in, &len, 1);
		if (n == 0)
			usleep(10000);
	}
	assert_int_equal(n, 1);
	assert_int_equal(imc_ibsim_pkt_unpack(&got, in[0], len), 0);
	assert_int_equal(got.status, IMC_IBSIM_STATUS_NO_ROUTE);
	assert_int_equal(got.mad[12], 0xab);
	imc_ibsim_close(a);
}

/* Directed-route NodeInfo Gets with hop count 0: the client's own SMA
 * answers each (IBA 14.2.2). */
static void flood(struct world *w, struct imc_ibsim *a, unsigned n,
		  unsigned *got)
{
	uint8_t (*pk)[IMC_IBSIM_REQ_SIZE] = calloc(n, sizeof(*pk));
	uint8_t in[64][IMC_IBSIM_REQ_SIZE];
	size_t lens[64];
	uint8_t *seen = calloc(n, 1);
	uint8_t mad[IMC_MAD_SIZE];
	int idle = 0;

	assert_non_null(pk);
	assert_non_null(seen);
	for (unsigned i = 0; i < n; i++) {
		memset(mad, 0, sizeof(mad));
		mad[0] = 1;
		mad[1] = 0x81;
		mad[2] = 1;
		mad[3] = 0x01;
		mad[12] = (uint8_t)(i >> 24);   /* TID: low 32 bits = i */
		mad[13] = (uint8_t)(i >> 16);
		mad[14] = (uint8_t)(i >> 8);
		mad[15] = (uint8_t)i;
		mad[17] = 0x11;
		mad[32] = 0xff;                 /* DrSLID, DrDLID permissive */
		mad[33] = 0xff;
		mad[34] = 0xff;
		mad[35] = 0xff;
		imc_ibsim_pkt_pack(pk[i], 0xffff, 0, mad, sizeof(mad));
	}
	/* All of them at once: the client does not read while it sends, as
	 * OpenSM's sweep does not; ibsim would block on it and wedge. */
	assert_int_equal(imc_ibsim_send(a, (const uint8_t (*)[IMC_IBSIM_REQ_SIZE])pk,
					n), (int)n);
	*got = 0;
	while (idle < 200) {
		int r = imc_ibsim_recv(a, in, lens, 64);

		assert_true(r >= 0);
		if (r == 0) {
			idle++;
			usleep(5000);
			continue;
		}
		idle = 0;
		for (int k = 0; k < r; k++) {
			struct imc_ibsim_pkt p;
			uint32_t tid;

			assert_int_equal(imc_ibsim_pkt_unpack(&p, in[k], lens[k]),
					 0);
			assert_int_equal(p.status, 0);
			assert_true(p.mad[3] & 0x80);      /* a response */
			tid = (uint32_t)p.mad[12] << 24 | p.mad[13] << 16 |
			      p.mad[14] << 8 | p.mad[15];
			assert_true(tid < n);
			assert_false(seen[tid]);
			seen[tid] = 1;
			(*got)++;
		}
	}
	(void)w;
	free(seen);
	free(pk);
}

/* 3,000 SMPs in flight from one client that reads only after it has
 * sent them all: every one is answered, none lost, nothing blocks. */
static void test_flood(void **state)
{
	struct world *w = *state;
	struct imc_simserve_stats st;
	struct imc_umad_port p;
	struct imc_ibsim *a;
	unsigned got;

	assert_int_equal(open_at(w, "Hca2", false, &p, &a), 0);
	flood(w, a, 3000, &got);
	assert_int_equal(got, 3000);
	imc_ibsim_close(a);
	stop(w);
	imc_simserve_get_stats(w->srv, &st);
	assert_int_equal(st.pkts_in, 3000);
	assert_int_equal(st.pkts_out, 3000);
	assert_int_equal(st.pkts_dropped, 0);
	/* The answers waited in the server, not in a blocked write. */
	assert_true(st.queued_max > 100);
	assert_true(st.tx_batches < st.pkts_out);
}

/* With a queue of 256 per client the oldest answers go, as from a full
 * receive queue, and are counted; the rest arrive. */
static int setup_small(void **state)
{
	setenv("IMC_TEST_QUEUE_LIMIT", "256", 1);
	return setup(state);
}

static void test_flood_overflow(void **state)
{
	struct world *w = *state;
	struct imc_simserve_stats st;
	struct imc_umad_port p;
	struct imc_ibsim *a;
	unsigned got;

	unsetenv("IMC_TEST_QUEUE_LIMIT");
	assert_int_equal(open_at(w, "Hca2", false, &p, &a), 0);
	flood(w, a, 3000, &got);
	imc_ibsim_close(a);
	stop(w);
	imc_simserve_get_stats(w->srv, &st);
	assert_int_equal(st.pkts_in, 3000);
	assert_true(st.pkts_dropped > 0);
	assert_int_equal(got + st.pkts_dropped, 3000);
	assert_int_equal(st.pkts_out, got);
	assert_true(st.queued_max <= 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_attach, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_clients, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_one_sm_per_node, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sm_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_ctl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounce, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_overflow,
						setup_small, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
