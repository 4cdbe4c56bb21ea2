/* The send address vector of a joined group, from its MCMemberRecord.
 * An application that joined a group sends to it with exactly what the
 * SA answered: the MLID as DLID, and the record's SL, rate, TClass,
 * FlowLabel and HopLimit in a GRH addressed to the MGID (IBA 15.2.5.17:
 * the record carries the path parameters of the group). */
#include <errno.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/mcast.h"

enum {
	MLID_FIRST = 0xC000,          /* IBA 4.1.3 */
	MLID_LAST = 0xFFFE,
	QPN_MULTICAST = 0xFFFFFF,     /* IBA 10.5.2.5 */
	PKEY_BASE_MASK = 0x7FFF,      /* P_Key without its membership bit */
};

int imc_mcast_send_av(const struct imc_mcmr *rec, struct imc_mcast_av *av)
{
	if (!rec || !av)
		return -EINVAL;
	if (!imc_gid_is_multicast(&rec->mgid) || rec->mlid < MLID_FIRST ||
	    rec->mlid > MLID_LAST || !(rec->pkey & PKEY_BASE_MASK))
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	av->dlid = rec->mlid;
	av->sl = rec->sl & 0xf;
	av->rate = rec->rate & 0x3f;
	av->grh = true;
	av->dgid = rec->mgid;
	av->tclass = rec->tclass;
	av->flow_label = rec->flow_label & 0xfffff;
	av->hop_limit = rec->hop_limit;
	av->remote_qpn = QPN_MULTICAST;
	av->qkey = rec->qkey;
	av->pkey = rec->pkey;
	return 0;
}
