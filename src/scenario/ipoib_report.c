/* The report's "ipoib" section (ipoib_verbs.c registers it): the run's
 * IPoIB interfaces summed: how many have carrier at the end, IP packets
 * sent and delivered (multicast among them), pings answered, address
 * resolution, group joins, and drops by reason (enum imc_ipoib_drop). */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ibmcast/ipoib.h"
#include "scenario/ipoib_run.h"
#include "scenario/scn.h"

struct sum {
	uint64_t ifs, carrier;
	uint64_t received, received_mcast, replies, answered;
	struct imc_ipoib_stats st;   /* counters summed; gauges unused */
};

/* The summed counters in the order the report writes them: a field of
 * struct sum, and for the interfaces' statistics its place there. */
static const struct field {
	const char *key;
	size_t off;
	long st_off;                 /* in struct imc_ipoib_stats, or -1 */
} fields[] = {
#define SUM(k, f) { k, offsetof(struct sum, f), -1 }
#define ST(f) { #f, offsetof(struct sum, st.f), \
		(long)offsetof(struct imc_ipoib_stats, f) }
	SUM("interfaces", ifs), SUM("carrier", carrier), ST(tx_packets),
	ST(rx_packets), ST(tx_mcast), ST(rx_mcast),
	SUM("delivered", received), SUM("delivered_mcast", received_mcast),
	SUM("pings_answered", answered), SUM("ping_replies", replies),
	ST(arp_tx), ST(nd_tx), ST(resolved), ST(resolve_failures), ST(joins),
	ST(join_errors), ST(sendonly_joins), ST(carrier_changes),
#undef SUM
#undef ST
};

static uint64_t *u64_at(void *base, size_t off)
{
	return (uint64_t *)(void *)((uint8_t *)base + off);
}

static void add(struct sum *s, const struct iface *i)
{
	struct imc_ipoib_stats st;
	struct imc_ip_host_stats hs;

	imc_ipoib_get_stats(ifc_of(i), &st);
	scn_ipoib_iface_stats(i, &hs);
	s->ifs++;
	s->carrier += imc_ipoib_carrier(ifc_of(i));
	s->received += hs.received;
	s->received_mcast += hs.received_mcast;
	s->replies += hs.ping_replies;
	s->answered += hs.ping_answered;
	for (size_t k = 0; k < IMC_ARRAY_SIZE(fields); k++)
		if (fields[k].st_off >= 0)
			*u64_at(s, fields[k].off) +=
				*u64_at(&st, (size_t)fields[k].st_off);
	for (unsigned d = 0; d < IMC_IPOIB_DROP__COUNT; d++)
		s->st.drops[d] += st.drops[d];
}

static void key_of(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s", name);
	for (size_t i = 0; buf[i]; i++)
		if (buf[i] == '-')
			buf[i] = '_';
}

static int ipoib_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	const struct ipr *r = imc_scn_data(c, &scn_ipoib_run_key);
	struct sum s;
	uint64_t dropped = 0;
	char why[512], key[32];
	size_t n = 0;

	memset(&s, 0, sizeof(s));
	for (const struct iface *i = r ? scn_ipoib_iface_next(r, NULL) : NULL;
	     i; i = scn_ipoib_iface_next(r, i))
		add(&s, i);
	if (!s.ifs)
		return 0;
	why[0] = '\0';
	for (unsigned d = 0; d < IMC_IPOIB_DROP__COUNT; d++) {
		dropped += s.st.drops[d];
		if (s.st.drops[d] && n < sizeof(why))
			n += (size_t)snprintf(why + n, sizeof(why) - n,
					      "%s%s %" PRIu64, n ? ", " : "",
					      imc_ipoib_drop_str(d),
					      s.st.drops[d]);
	}
	for (size_t k = 0; k < IMC_ARRAY_SIZE(fields); k++)
		imc_scn_report_u64(rep, fields[k].key, *u64_at(&s, fields[k].off));
	imc_scn_report_u64(rep, "dropped", dropped);
	imc_scn_report_object(rep, "drops");
	for (unsigned d = 0; d < IMC_IPOIB_DROP__COUNT; d++) {
		key_of(imc_ipoib_drop_str(d), key, sizeof(key));
		imc_scn_report_u64(rep, key, s.st.drops[d]);
	}
	imc_scn_report_end(rep);

	imc_scn_report_line(rep,
		"%" PRIu64 " interfaces, %" PRIu64 " with carrier at the end (%" PRIu64 " carrier changes); %" PRIu64 " group joins, %" PRIu64 " failed",
		s.ifs, s.carrier, s.st.carrier_changes, s.st.joins,
		s.st.join_errors);
	imc_scn_report_line(rep,
		"IP packets: %" PRIu64 " sent (%" PRIu64 " multicast), %" PRIu64 " delivered (%" PRIu64 " multicast); %" PRIu64 " pings answered, %" PRIu64 " replies",
		s.st.tx_packets, s.st.tx_mcast, s.received, s.received_mcast,
		s.answered, s.replies);
	imc_scn_report_line(rep,
		"ARP %" PRIu64 " and ND %" PRIu64 " sent, %" PRIu64 " neighbours resolved, %" PRIu64 " not; %" PRIu64 " dropped%s%s",
		s.st.arp_tx, s.st.nd_tx, s.st.resolved,
		s.st.resolve_failures, dropped, dropped ? ": " : "", why);
	return 0;
}

const struct imc_scn_section scn_section_ipoib = {
	.name = "ipoib", .rank = 400, .report = ipoib_report,
};
