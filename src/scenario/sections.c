/* Built-in report sections: the fabric's packets (this file) and the
 * joins' latencies (joins.c). Each is a struct imc_scn_section, the same
 * interface other modules' sections use. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "scenario/scn.h"

/* Appends " NAME N" for each nonzero drop reason; "none" when none. */
static void reasons(char *buf, size_t len, const uint64_t *drops)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int d = 0; d < IMC_DROP__COUNT && n < len; d++)
		if (drops[d])
			n += (size_t)snprintf(buf + n, len - n, "%s%s %" PRIu64,
					      n ? ", " : "",
					      imc_drop_str((enum imc_drop)d),
					      drops[d]);
}

static int packets_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	struct imc_fabric_totals tot;
	uint64_t dropped = 0;
	char why[512];

	imc_fabric_totals(imc_scn_fabric(c), &tot);
	for (int d = 0; d < IMC_DROP__COUNT; d++)
		dropped += tot.drops[d];
	imc_scn_report_u64(rep, "sent", tot.sent);
	imc_scn_report_u64(rep, "delivered", tot.delivered);
	imc_scn_report_u64(rep, "dropped", dropped);
	imc_scn_report_object(rep, "drops");
	for (int d = 0; d < IMC_DROP__COUNT; d++) {
		char key[32];
		size_t i;

		/* "link-down" -> "link_down": keys are identifiers. */
		snprintf(key, sizeof(key), "%s", imc_drop_str((enum imc_drop)d));
		for (i = 0; key[i]; i++)
			if (key[i] == '-')
				key[i] = '_';
		imc_scn_report_u64(rep, key, tot.drops[d]);
	}
	imc_scn_report_end(rep);
	imc_scn_report_u64(rep, "mads_sent", tot.mad_sent);
	imc_scn_report_u64(rep, "mads_delivered", tot.mad_delivered);
	imc_scn_report_u64(rep, "mads_dropped", tot.mad_drops);
	reasons(why, sizeof(why), tot.drops);
	imc_scn_report_line(rep,
		"%" PRIu64 " datagrams sent, %" PRIu64 " delivered (multicast: once per receiver), %" PRIu64 " dropped%s%s",
		tot.sent, tot.delivered, dropped, dropped ? ": " : "", why);
	imc_scn_report_line(rep,
		"of those MADs: %" PRIu64 " sent, %" PRIu64 " delivered, %" PRIu64 " dropped",
		tot.mad_sent, tot.mad_delivered, tot.mad_drops);
	return 0;
}

static const struct imc_scn_section section_packets = {
	.name = "packets", .rank = 300, .report = packets_report,
};

const struct imc_scn_section *const scn_builtin_sections[] = {
	&scn_section_joins, &section_packets,
};
const unsigned scn_builtin_nsections = IMC_ARRAY_SIZE(scn_builtin_sections);
