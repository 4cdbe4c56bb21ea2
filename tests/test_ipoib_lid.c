/* The IPoIB core follows LIDs without PathRecords (ipoib.h,
 * imc_ipoib_port_event): what a port whose LID changed sends, what a
 * receiver learns from any packet, and how a stale AV is probed, falls
 * back to multicast solicitation and gives up, within the queue bounds.
 * The fixture (ipoib_fixture.h) is the fake SA, recorded ops and peers
 * made of packets. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipoib_fixture.h"

static void v6(const char *s, uint8_t out[16])
{
	struct imc_ip_addr a;

	assert_int_equal(imc_ip_addr_parse(s, &a, NULL), 0);
	memcpy(out, a.v6, 16);
}

static void port_event(struct fx *f, enum imc_mcast_port_event ev)
{
	/* The owner tells the tracker and the interface alike. */
	imc_mcast_port_event(f->mc, ev);
	imc_ipoib_port_event(f->ifc, ev);
}

static struct imc_ipoib_endpoint_info ep_of(struct fx *f,
					    const struct peer *p)
{
	struct imc_ipoib_endpoint_info e;

	assert_int_equal(imc_ipoib_endpoint_get(f->ifc, &p->gid, &e), 0);
	return e;
}

/* p is our neighbour: its ARP request for us made the endpoint, our
 * reply went out. */
static void know(struct fx *f, const struct peer *p)
{
	unsigned n = f->nsent;

	rx_arp(f, p, IMC_ARP_OP_REQUEST, IP4(10, 0, 0, 1), true);
	assert_int_equal(f->nsent, n + 1);
	assert_fabricated(&f->sent[n], p);
}

static size_t ping_to(uint8_t *pkt, const struct peer *p, uint16_t seq)
{
	return ping4(pkt, IP4(10, 0, 0, 1), p->ip, 8, seq, 0);
}

/* A new LID: one gratuitous ARP per IPv4 address on the broadcast group
 * (RFC 5227 3: sender and target address ours, a request), one
 * unsolicited NA per IPv6 address to all-nodes (RFC 4861 7.2.6: Override,
 * not Solicited, our IPoIB link-layer address). */
static void test_lid_change_announces(void **state)
{
	struct fx *f = *state;
	struct imc_ipoib_arp a;
	struct ipo_nd nd;
	struct imc_gid all_mgid;
	uint8_t all[16], own[16];
	unsigned n;

	add_addr(f, "fd00::1/64");
	bring_up(f);
	answer_all(f);
	run_for(f, 10 * MS);
	n = f->nsent;
	port_event(f, IMC_MCAST_PORT_LID_CHANGE);
	assert_int_equal(f->nsent, n + 2);
	assert_int_equal(stats(f).announces, 2);
	assert_to_bcast(&f->sent[n]);
	parse_arp(&f->sent[n], &a);
	assert_int_equal(a.op, IMC_ARP_OP_REQUEST);
	assert_int_equal(a.spa, IP4(10, 0, 0, 1));
	assert_int_equal(a.tpa, IP4(10, 0, 0, 1));
	assert_int_equal(a.sha.qpn, OUR_QPN);
	assert_true(imc_gid_equal(&a.sha.gid, &f->cfg.port_gid));
	v6("ff02::1", all);
	v6("fd00::1", own);
	imc_ipoib_mgid_from_ipv6(all, 0xFFFF, 2, &all_mgid);
	assert_int_equal(f->sent[n + 1].qpn, 0xFFFFFF);
	assert_true(imc_gid_equal(&f->sent[n + 1].av.dgid, &all_mgid));
	assert_int_equal(imc_get16(f->sent[n + 1].data), IMC_ETHERTYPE_IPV6);
	assert_int_equal(ipo_nd_parse(f->sent[n + 1].data + 4,
				      f->sent[n + 1].len - 4, &nd), 0);
	assert_int_equal(nd.type, IPO_ICMP6_NA);
	assert_int_equal(nd.flags, IPO_NA_OVERRIDE);
	assert_memory_equal(nd.dst, all, 16);
	assert_memory_equal(nd.src, own, 16);
	assert_memory_equal(nd.target, own, 16);
	assert_true(nd.has_lladdr);
	assert_int_equal(nd.lladdr.qpn, OUR_QPN);
	assert_true(imc_gid_equal(&nd.lladdr.gid, &f->cfg.port_gid));
	/* Other events announce nothing. */
	port_event(f, IMC_MCAST_PORT_PKEY_CHANGE);
	run_for(f, 10 * MS);
	answer_all(f);
	run_for(f, 10 * MS);
	assert_int_equal(stats(f).announces, 2);
}

/* A peer that moved is found by the first packet from it: an IP packet,
 * its gratuitous ARP (no answer to that), or its unsolicited NA, even
 * where no neighbour maps to it. */
static void test_learns_lid_from_any_packet(void **state)
{
	struct fx *f = *state;
	struct peer p2 = peer(2), p3 = peer(3);
	uint8_t pkt[128];
	size_t len;
	struct ipo_nd na;
	unsigned n;

	add_addr(f, "fd00::1/64");
	bring_up(f);
	answer_all(f);
	run_for(f, 10 * MS);
	know(f, &p2);
	/* An IP packet from p2's new LID. */
	p2.lid = 40;
	len = ping4(pkt, p2.ip, IP4(10, 0, 0, 1), 0, 1, 0);
	rx_from(f, &p2, NULL, IMC_ETHERTYPE_IPV4, pkt, len);
	assert_int_equal(ep_of(f, &p2).av.dlid, 40);
	/* Its gratuitous ARP from another: learnt, not answered. */
	p2.lid = 41;
	n = f->nsent;
	rx_arp(f, &p2, IMC_ARP_OP_REQUEST, p2.ip, true);
	assert_int_equal(f->nsent, n);
	assert_int_equal(ep_of(f, &p2).av.dlid, 41);
	len = ping_to(pkt, &p2, 1);
	assert_int_equal(xmit(f, pkt, len), 0);
	assert_int_equal(f->nsent, n + 1);
	assert_fabricated(&f->sent[n], &p2);
	/* p3 known by an endpoint alone (a multicast packet from an
	 * address off our prefix): its unsolicited NA moves it. */
	len = udp6(pkt, "fd01::3", "fd00::1", 4);
	rx_from(f, &p3, NULL, IMC_ETHERTYPE_IPV6, pkt, len);
	assert_int_equal(ep_of(f, &p3).av.dlid, p3.lid);
	memset(&na, 0, sizeof(na));
	na.type = IPO_ICMP6_NA;
	na.flags = IPO_NA_OVERRIDE;
	v6("fd01::3", na.src);
	v6("ff02::1", na.dst);
	v6("fd01::3", na.target);
	na.has_lladdr = true;
	na.lladdr.qpn = p3.qpn;
	na.lladdr.gid = p3.gid;
	p3.lid = 77;
	len = (size_t)ipo_nd_build(&na, pkt, sizeof(pkt));
	rx_from(f, &p3, NULL, IMC_ETHERTYPE_IPV6, pkt, len);
	assert_int_equal(ep_of(f, &p3).av.dlid, 77);
	/* An NA whose link-layer address is not its sender's teaches
	 * nothing. */
	na.lladdr.gid = p2.gid;
	len = (size_t)ipo_nd_build(&na, pkt, sizeof(pkt));
	p3.lid = 78;
	rx_from(f, &p3, NULL, IMC_ETHERTYPE_IPV6, pkt, len);
	assert_int_equal(ep_of(f, &p2).av.dlid, 41);
	assert_int_equal(stats(f).made_stale, 0);
}

/* After a reregister every unicast AV is stale: the next send waits
 * behind a unicast ARP request at the old AV; the answer sends it. A
 * packet from the peer confirms it as well. */
static void test_stale_after_reregister(void **state)
{
	struct fx *f = *state;
	struct peer p2 = peer(2), p3 = peer(3);
	uint8_t pkt[64];
	struct imc_ipoib_arp a;
	size_t len;
	unsigned n;

	bring_up(f);
	know(f, &p2);
	know(f, &p3);
	port_event(f, IMC_MCAST_PORT_REREGISTER);
	assert_true(ep_of(f, &p2).stale);
	assert_int_equal(stats(f).made_stale, 2);
	run_for(f, 10 * MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	n = f->nsent;
	for (uint16_t s = 1; s <= 3; s++) {
		len = ping_to(pkt, &p2, s);
		assert_int_equal(xmit(f, pkt, len), 0);
	}
	/* One probe, the pings queued. */
	assert_int_equal(f->nsent, n + 1);
	assert_fabricated(&f->sent[n], &p2);
	parse_arp(&f->sent[n], &a);
	assert_int_equal(a.op, IMC_ARP_OP_REQUEST);
	assert_int_equal(a.tpa, p2.ip);
	assert_int_equal(a.spa, IP4(10, 0, 0, 1));
	assert_int_equal(stats(f).probes, 1);
	assert_int_equal(stats(f).queued, 3);
	/* The reply, from the same LID: the pings go, in order. */
	rx_arp(f, &p2, IMC_ARP_OP_REPLY, IP4(10, 0, 0, 1), false);
	assert_int_equal(f->nsent, n + 4);
	for (unsigned k = 1; k <= 3; k++) {
		assert_fabricated(&f->sent[n + k], &p2);
		assert_int_equal(imc_get16(f->sent[n + k].data + 4 + 26), k);
	}
	assert_false(ep_of(f, &p2).stale);
	assert_int_equal(stats(f).revalidated, 1);
	/* p3 speaks first: no probe needed. */
	len = ping4(pkt, p3.ip, IP4(10, 0, 0, 1), 0, 9, 0);
	rx_from(f, &p3, NULL, IMC_ETHERTYPE_IPV4, pkt, len);
	assert_false(ep_of(f, &p3).stale);
	len = ping_to(pkt, &p3, 4);
	assert_int_equal(xmit(f, pkt, len), 0);
	assert_int_equal(f->nsent, n + 5);
	assert_fabricated(&f->sent[n + 4], &p3);
	assert_int_equal(stats(f).probes, 1);
	assert_int_equal(stats(f).revalidated, 2);
	assert_int_equal(stats(f).queued, 0);
}

static void tweak_fast(struct imc_ipoib_config *c)
{
	c->resolve_timeout = 100 * MS;
	c->resolve_retries = 2;
	c->queue_endpoint = 2;
}

static int setup_fast(void **state)
{
	return setup_cfg(state, tweak_fast);
}

/* An SM change and a peer that moved meanwhile: the unicast probe at
 * the old AV goes unanswered; after resolve_timeout the probe asks the
 * link (a broadcast ARP request), and the peer's answer from its new LID
 * sends what waited, within the endpoint's bound. Unanswered to the end,
 * the packets are dropped and the AV stays stale for the next send. */
static void test_stale_probe_falls_back_and_gives_up(void **state)
{
	struct fx *f = *state;
	struct peer p2 = peer(2), p3 = peer(3);
	uint8_t pkt[64];
	struct imc_ipoib_arp a;
	struct imc_ipoib_stats st;
	size_t len;
	unsigned n;

	bring_up(f);
	know(f, &p2);
	know(f, &p3);
	port_event(f, IMC_MCAST_PORT_SM_CHANGE);
	run_for(f, 10 * MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	n = f->nsent;
	for (uint16_t s = 1; s <= 3; s++) {
		len = ping_to(pkt, &p2, s);
		assert_int_equal(xmit(f, pkt, len), s <= 2 ? 0 : -ENOBUFS);
	}
	assert_int_equal(stats(f).drops[IMC_IPOIB_DROP_QUEUE_ENDPOINT], 1);
	assert_int_equal(stats(f).queued_max_endpoint, 2);
	assert_int_equal(f->nsent, n + 1);
	run_for(f, 100 * MS);
	/* The fallback: to the broadcast group. */
	assert_int_equal(f->nsent, n + 2);
	assert_to_bcast(&f->sent[n + 1]);
	parse_arp(&f->sent[n + 1], &a);
	assert_int_equal(a.tpa, p2.ip);
	assert_int_equal(stats(f).resolve_retries, 1);
	p2.lid = 55;
	rx_arp(f, &p2, IMC_ARP_OP_REPLY, IP4(10, 0, 0, 1), false);
	assert_int_equal(f->nsent, n + 4);
	assert_fabricated(&f->sent[n + 2], &p2);
	assert_int_equal(f->sent[n + 3].av.dlid, 55);
	/* p3 never answers: a probe and two retries, then the drop. */
	n = f->nsent;
	len = ping_to(pkt, &p3, 7);
	assert_int_equal(xmit(f, pkt, len), 0);
	run_for(f, 350 * MS);
	st = stats(f);
	assert_int_equal(f->nsent, n + 3);
	assert_int_equal(st.resolve_failures, 1);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_UNRESOLVED], 1);
	assert_int_equal(st.queued, 0);
	assert_true(ep_of(f, &p3).stale);
	/* The next send probes again. */
	assert_int_equal(xmit(f, pkt, len), 0);
	assert_int_equal(stats(f).probes, 3);
	assert_int_equal(f->nsent, n + 4);
	assert_fabricated(&f->sent[n + 3], &p3);
}

/* IPv6: the probe of a stale AV is a Neighbor Solicitation to the
 * peer's address itself (RFC 4861 7.3.3), on the old AV, with our
 * link-layer address; its NA confirms the AV. */
static void test_stale_probe_ipv6(void **state)
{
	struct fx *f = *state;
	struct peer p7 = peer(7);
	uint8_t pkt[128], target[16];
	struct ipo_nd nd;
	size_t len;
	unsigned n;

	add_addr(f, "fd00::1/64");
	bring_up(f);
	answer_all(f);
	run_for(f, 10 * MS);
	/* p7 speaks from fd00::7: gleaned as a neighbour. */
	len = udp6(pkt, "fd00::7", "fd00::1", 4);
	rx_from(f, &p7, NULL, IMC_ETHERTYPE_IPV6, pkt, len);
	port_event(f, IMC_MCAST_PORT_REREGISTER);
	run_for(f, 10 * MS);
	answer_all(f);
	run_for(f, 10 * MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	n = f->nsent;
	len = udp6(pkt, "fd00::1", "fd00::7", 4);
	assert_int_equal(xmit(f, pkt, len), 0);
	assert_int_equal(f->nsent, n + 1);
	assert_fabricated(&f->sent[n], &p7);
	assert_int_equal(ipo_nd_parse(f->sent[n].data + 4, f->sent[n].len - 4,
				      &nd), 0);
	v6("fd00::7", target);
	assert_int_equal(nd.type, IPO_ICMP6_NS);
	assert_memory_equal(nd.dst, target, 16);
	assert_memory_equal(nd.target, target, 16);
	assert_true(nd.has_lladdr);
	assert_int_equal(nd.lladdr.qpn, OUR_QPN);
	memset(&nd, 0, sizeof(nd));
	nd.type = IPO_ICMP6_NA;
	nd.flags = IPO_NA_SOLICITED | IPO_NA_OVERRIDE;
	v6("fd00::7", nd.src);
	v6("fd00::1", nd.dst);
	v6("fd00::7", nd.target);
	nd.has_lladdr = true;
	nd.lladdr.qpn = p7.qpn;
	nd.lladdr.gid = p7.gid;
	len = (size_t)ipo_nd_build(&nd, pkt, sizeof(pkt));
	rx_from(f, &p7, NULL, IMC_ETHERTYPE_IPV6, pkt, len);
	assert_int_equal(f->nsent, n + 2);
	assert_fabricated(&f->sent[n + 1], &p7);
	assert_int_equal(imc_get16(f->sent[n + 1].data), IMC_ETHERTYPE_IPV6);
	assert_int_equal(f->sent[n + 1].data[4 + 6], 17);
	assert_int_equal(stats(f).revalidated, 1);
}

/* Down forgets stale endpoints with their probes (no timer left:
 * teardown checks the loop). A LID change heard while down is announced
 * at the next up, once. */
static void test_down_while_probing(void **state)
{
	struct fx *f = *state;
	struct peer p2 = peer(2);
	uint8_t pkt[64];
	size_t len;

	bring_up(f);
	know(f, &p2);
	port_event(f, IMC_MCAST_PORT_REREGISTER);
	run_for(f, 10 * MS);
	len = ping_to(pkt, &p2, 1);
	assert_int_equal(xmit(f, pkt, len), 0);
	assert_int_equal(stats(f).probes, 1);
	imc_ipoib_down(f->ifc);
	assert_int_equal(stats(f).endpoints, 0);
	assert_int_equal(stats(f).drops[IMC_IPOIB_DROP_FLUSHED], 1);
	port_event(f, IMC_MCAST_PORT_REREGISTER);
	port_event(f, IMC_MCAST_PORT_LID_CHANGE);
	port_event(f, IMC_MCAST_PORT_LID_CHANGE);
	assert_int_equal(stats(f).announces, 0);
	run_for(f, 5 * SEC);
	assert_int_equal(stats(f).announces, 0);
	up(f);
	answer_all(f);
	run_for(f, 10 * MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	assert_int_equal(stats(f).announces, 1);
	assert_to_bcast(&f->sent[f->nsent - 1]);
	imc_ipoib_down(f->ifc);
	up(f);
	answer_all(f);
	run_for(f, 10 * MS);
	assert_int_equal(stats(f).announces, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lid_change_announces,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_learns_lid_from_any_packet,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_after_reregister,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_stale_probe_falls_back_and_gives_up, setup_fast,
			teardown),
		cmocka_unit_test_setup_teardown(test_stale_probe_ipv6, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_down_while_probing, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
