/* An IP host on a fabric port (ipoib_fabric.h, imc_ipoib_fabric_host):
 * its own join tracker reaching the fabric's SA over QP1, the host model
 * (ip_host.h) answering echo requests, UDP and group counts, a tap, and
 * the ops' calling context. A virtual loop: every count is exact. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "ibmcast/ipoib_fabric.h"
#include "ipoib_world.h"

#define MS IMC_NSEC_PER_MSEC
#define TREE "fat-tree:leaves=2,hosts=3,spines=1"

struct seen {
	struct imc_ipoib_fabric_host *self;
	unsigned replies, udp, carrier_up, tapped;
	uint16_t last_seq, dport;
	size_t udp_len;
	uint8_t payload[8];
	bool chain;                  /* ping again from the reply op */
	struct imc_ip_addr peer;
};

static void on_reply(void *ctx, const struct imc_ip_view *v, uint16_t id,
		     uint16_t seq)
{
	struct seen *s = ctx;

	(void)v;
	assert_int_equal(id, 77);
	s->replies++;
	s->last_seq = seq;
	/* An op may send: the next request goes out from inside it. */
	if (s->chain && seq < 3)
		assert_int_equal(imc_ip_host_ping(
			imc_ipoib_fabric_host_ip(s->self), NULL, &s->peer, 77,
			(uint16_t)(seq + 1), 16), 0);
}

static void on_udp(void *ctx, const struct imc_ip_view *v, uint16_t sport,
		   uint16_t dport, const uint8_t *payload, size_t len)
{
	struct seen *s = ctx;

	(void)v;
	(void)sport;
	s->udp++;
	s->dport = dport;
	s->udp_len = len;
	memcpy(s->payload, payload, len < 8 ? len : 8);
}

static void on_carrier(void *ctx, bool up)
{
	struct seen *s = ctx;

	s->carrier_up += up;
}

static void on_tap(void *ctx, const struct imc_ipoib_packet *p)
{
	struct seen *s = ctx;

	(void)p;
	s->tapped++;
}

/* Host k of the world (an HCA that is not the SM's) with addr/plen. */
static void host_up(struct iw *w, unsigned k, struct seen *s,
		    const char *addr, struct imc_ipoib_fabric_host **out)
{
	struct imc_ip_host_ops ops = {
		.echo_reply = on_reply, .udp = on_udp, .carrier = on_carrier,
		.ctx = s,
	};
	struct imc_ip_addr a;
	unsigned plen;
	uint32_t node = iw_hca(w, k);

	if (node == w->sm_node)
		node = iw_hca(w, k + 3);
	assert_int_equal(imc_ipoib_fabric_host_create(w->f, node, 1, NULL,
						      NULL, NULL, &ops, out), 0);
	s->self = *out;
	assert_int_equal(imc_ip_addr_parse(addr, &a, &plen), 0);
	assert_int_equal(imc_ip_host_addr_add(imc_ipoib_fabric_host_ip(*out),
					      &a, plen), 0);
	assert_int_equal(imc_ip_host_addr_add(imc_ipoib_fabric_host_ip(*out),
					      &a, plen), -EEXIST);
	assert_int_equal(imc_ipoib_up(imc_ipoib_fabric_host_ipoib(*out)), 0);
}

static void test_ping_udp_groups(void **state)
{
	struct imc_ipoib_fabric_host *a, *b, *c;
	struct seen sa = { 0 }, sb = { 0 }, sc = { 0 };
	struct imc_ip_host_stats st;
	struct imc_ip_addr g, other;
	struct iw w;

	(void)state;
	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	host_up(&w, 0, &sa, "10.1.0.1/16", &a);
	host_up(&w, 1, &sb, "10.1.0.2/16", &b);
	host_up(&w, 2, &sc, "10.1.0.3/16", &c);
	assert_int_equal(imc_ip_addr_parse("239.5.5.5", &g, NULL), 0);
	assert_int_equal(imc_ipoib_mcast_listen(
		imc_ipoib_fabric_host_ipoib(b), &g), 0);
	iw_run_for(&w, 20 * MS);
	assert_int_equal(sa.carrier_up, 1);
	assert_int_equal(sb.carrier_up, 1);

	/* Three echoes, each sent from the reply to the one before. */
	assert_int_equal(imc_ip_addr_parse("10.1.0.2", &sa.peer, NULL), 0);
	sa.chain = true;
	assert_int_equal(imc_ip_host_ping(imc_ipoib_fabric_host_ip(a), NULL,
					  &sa.peer, 77, 1, 16), 0);
	iw_run_for(&w, 20 * MS);
	assert_int_equal(sa.replies, 3);
	assert_int_equal(sa.last_seq, 3);
	imc_ip_host_stats(imc_ipoib_fabric_host_ip(b), &st);
	assert_int_equal(st.ping_answered, 3);
	assert_int_equal(st.ping_replies, 0);

	/* No source of the family: refused before anything is sent. */
	assert_int_equal(imc_ip_addr_parse("fd00::9", &other, NULL), 0);
	assert_int_equal(imc_ip_host_ping(imc_ipoib_fabric_host_ip(a), NULL,
					  &other, 77, 1, 0), -EADDRNOTAVAIL);

	/* One datagram to the group: B (listening) hears it, C does not. */
	assert_int_equal(imc_ip_host_udp(imc_ipoib_fabric_host_ip(a), NULL, &g,
					 5000, 6000, "hello", 5), 0);
	iw_run_for(&w, 20 * MS);
	assert_int_equal(sb.udp, 1);
	assert_int_equal(sb.dport, 6000);
	assert_int_equal(sb.udp_len, 5);
	assert_memory_equal(sb.payload, "hello", 5);
	assert_int_equal(sc.udp, 0);
	imc_ip_host_stats(imc_ipoib_fabric_host_ip(b), &st);
	assert_int_equal(st.received_mcast, 1);
	assert_int_equal(imc_ip_host_group_received(
		imc_ipoib_fabric_host_ip(b), &g), 1);
	assert_int_equal(imc_ip_host_group_received(
		imc_ipoib_fabric_host_ip(c), &g), 0);

	imc_ipoib_fabric_host_destroy(a);
	imc_ipoib_fabric_host_destroy(b);
	imc_ipoib_fabric_host_destroy(c);
	assert_int_equal(iw_destroy(&w), 0);
}

/* With a tap, what arrives goes to it, not to the host model: nothing
 * is answered; without it, the host answers again. */
static void test_tap(void **state)
{
	struct imc_ipoib_fabric_host *a, *b;
	struct seen sa = { 0 }, sb = { 0 };
	struct imc_ipoib_host_ops tap = { on_tap, NULL, &sb };
	struct imc_ip_host_stats st;
	struct iw w;

	(void)state;
	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	host_up(&w, 0, &sa, "10.1.0.1/16", &a);
	host_up(&w, 1, &sb, "10.1.0.2/16", &b);
	iw_run_for(&w, 20 * MS);
	/* One partition, both up: they reach each other, not themselves. */
	assert_true(imc_ipoib_fabric_host_reaches(a, b));
	assert_true(imc_ipoib_fabric_host_reaches(b, a));
	assert_false(imc_ipoib_fabric_host_reaches(a, a));
	assert_false(imc_ipoib_fabric_host_reaches(a, NULL));
	assert_int_equal(imc_ip_addr_parse("10.1.0.2", &sa.peer, NULL), 0);
	assert_int_equal(imc_ipoib_fabric_host_tap(b, &(struct
		imc_ipoib_host_ops){ NULL, NULL, NULL }), -EINVAL);
	assert_int_equal(imc_ipoib_fabric_host_tap(b, &tap), 0);
	assert_int_equal(imc_ip_host_ping(imc_ipoib_fabric_host_ip(a), NULL,
					  &sa.peer, 77, 1, 0), 0);
	iw_run_for(&w, 20 * MS);
	assert_int_equal(sb.tapped, 1);
	assert_int_equal(imc_ipoib_fabric_host_tapped(b), 1);
	assert_int_equal(sa.replies, 0);
	imc_ip_host_stats(imc_ipoib_fabric_host_ip(b), &st);
	assert_int_equal(st.received, 0);

	assert_int_equal(imc_ipoib_fabric_host_tap(b, NULL), 0);
	assert_int_equal(imc_ip_host_ping(imc_ipoib_fabric_host_ip(a), NULL,
					  &sa.peer, 77, 2, 0), 0);
	iw_run_for(&w, 20 * MS);
	assert_int_equal(sb.tapped, 1);
	assert_int_equal(sa.replies, 1);

	/* Stopped: no host model, no interface, no reach; destroy still
	 * works. */
	imc_ipoib_fabric_host_stop(b);
	assert_false(imc_ipoib_fabric_host_reaches(a, b));
	assert_null(imc_ipoib_fabric_host_ip(b));
	assert_null(imc_ipoib_fabric_host_ipoib(b));
	imc_ipoib_fabric_host_stop(b);
	imc_ipoib_fabric_host_destroy(b);
	imc_ipoib_fabric_host_destroy(a);
	imc_ipoib_fabric_host_destroy(NULL);
	assert_int_equal(iw_destroy(&w), 0);
}

static void test_create_errors(void **state)
{
	struct imc_ipoib_fabric_host *x = NULL;
	struct imc_ipoib_config cfg;
	struct iw w;
	uint32_t node;

	(void)state;
	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	node = iw_hca(&w, 0) == w.sm_node ? iw_hca(&w, 1) : iw_hca(&w, 0);
	assert_int_equal(imc_ipoib_fabric_host_create(NULL, node, 1, NULL,
						      NULL, NULL, NULL, &x),
			 -EINVAL);
	imc_ipoib_config_init(&cfg);
	cfg.pkey = 0x8123;   /* not in the port's table */
	assert_int_equal(imc_ipoib_fabric_host_create(w.f, node, 1, NULL, NULL,
						      &cfg, NULL, &x),
			 -EINVAL);
	assert_null(x);
	/* The port's QP1 is free again after the failure. */
	assert_int_equal(imc_ipoib_fabric_host_create(w.f, node, 1, NULL, NULL,
						      NULL, NULL, &x), 0);
	imc_ipoib_fabric_host_destroy(x);
	assert_int_equal(iw_destroy(&w), 0);
}

/* One map of the fabric's port events onto the tracker's (used by the
 * tracker on a port and by the interface). */
static void test_port_event_map(void **state)
{
	enum imc_mcast_port_event e = IMC_MCAST_PORT_DOWN;

	(void)state;
	assert_int_equal(imc_mcast_fabric_port_event(IMC_PORT_EV_ACTIVE, &e), 0);
	assert_int_equal(e, IMC_MCAST_PORT_ACTIVE);
	assert_int_equal(imc_mcast_fabric_port_event(
		IMC_PORT_EV_CLIENT_REREGISTER, &e), 0);
	assert_int_equal(e, IMC_MCAST_PORT_REREGISTER);
	assert_int_equal(imc_mcast_fabric_port_event(IMC_PORT_EV_PKEY_CHANGE,
						     &e), 0);
	assert_int_equal(e, IMC_MCAST_PORT_PKEY_CHANGE);
	assert_int_equal(imc_mcast_fabric_port_event(
		(enum imc_port_event)99, &e), -ENOENT);
	assert_int_equal(e, IMC_MCAST_PORT_PKEY_CHANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ping_udp_groups),
		cmocka_unit_test(test_tap),
		cmocka_unit_test(test_create_errors),
		cmocka_unit_test(test_port_event_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
