/* ibmcastd's access: the socket's group and the policy behind the server
 * core's authorize hook. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/umad_sa_mcm.h>

#include "ibmcast/gid.h"
#include "ibmcastd.h"

int daemon_resolve_group(struct daemon *d)
{
	const char *name = d->o.group ? d->o.group : "ibmcast";
	uint32_t gid;
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(name, &end, 10);
	if (!errno && !*end && *name && v < UINT32_MAX) {
		gid = (uint32_t)v;
	} else if (imc_mcastd_policy_nss()->group(NULL, name, &gid) < 0) {
		if (d->o.group) {
			dlog(IMC_MCASTD_LOG_ERR, "unknown group '%s' (--group)",
			     name);
			return -ENOENT;
		}
		dlog(IMC_MCASTD_LOG_WARN, "no group 'ibmcast': only root may "
		     "connect and join (create the group, or --group)");
		d->has_gid = false;
		return 0;
	}
	d->gid = (gid_t)gid;
	d->has_gid = true;
	return 0;
}

int daemon_load_policy(struct daemon *d, bool reload)
{
	struct imc_mcastd_policy *p = NULL;
	char err[512];
	int r;

	if (d->o.policy)
		r = imc_mcastd_policy_load(d->o.policy, imc_mcastd_policy_nss(),
					   &p, err, sizeof(err));
	else
		r = imc_mcastd_policy_default(d->has_gid, (uint32_t)d->gid, &p);
	if (r < 0) {
		if (!d->o.policy)
			snprintf(err, sizeof(err), "%s", strerror(-r));
		if (reload)
			dlog(IMC_MCASTD_LOG_ERR, "policy not reloaded, the old "
			     "one stays (%zu rules): %s",
			     imc_mcastd_policy_rules(d->policy), err);
		else
			dlog(IMC_MCASTD_LOG_ERR, "policy: %s", err);
		return r;
	}
	imc_mcastd_policy_destroy(d->policy);
	d->policy = p;
	if (d->o.policy)
		dlog(IMC_MCASTD_LOG_INFO, "policy %s%s: %zu rules", d->o.policy,
		     reload ? " reloaded" : "", imc_mcastd_policy_rules(p));
	else
		dlog(IMC_MCASTD_LOG_INFO, "default policy: root%s%s may join "
		     "anything, nobody else anything",
		     d->has_gid ? " and group " : "",
		     d->has_gid ? (d->o.group ? d->o.group : "ibmcast") : "");
	return 0;
}

int daemon_authorize(void *ctx, const struct imc_mcastd_cred *cr,
		     const struct imc_mcastd_port_desc *port,
		     const struct imc_mcast_join_req *req)
{
	struct daemon *d = ctx;
	/* The groups the kernel gave at connect (SO_PEERGROUPS): what the
	 * process was, not what the user database says now. */
	struct imc_mcastd_policy_peer peer = { cr->uid, cr->gid, cr->groups,
					       cr->n_groups };
	struct imc_mcastd_policy_query q = {
		.mgid = req->rec.mgid,
		.join_state = req->join_state,
		.has_pkey = (req->comp_mask & UMAD_SA_MCM_COMP_MASK_PKEY) != 0,
		.pkey = req->rec.pkey,
	};
	char m[IMC_GID_STRLEN], pk[8];
	unsigned line;
	int r;

	r = imc_mcastd_policy_check(d->policy, &peer, &q, &line);
	if (r == 0)
		return 0;
	imc_gid_format(&q.mgid, m);
	if (q.has_pkey)
		snprintf(pk, sizeof(pk), "0x%04x", q.pkey);
	else
		snprintf(pk, sizeof(pk), "none");
	if (line)
		dlog(IMC_MCASTD_LOG_WARN, "refused: pid=%u uid=%u port=%s:%u "
		     "mgid=%s join_state=0x%x pkey=%s: denied by %s:%u",
		     cr->pid, cr->uid, port->device, port->port_num, m,
		     q.join_state, pk, d->o.policy, line);
	else
		dlog(IMC_MCASTD_LOG_WARN, "refused: pid=%u uid=%u port=%s:%u "
		     "mgid=%s join_state=0x%x pkey=%s: no rule of %s allows it",
		     cr->pid, cr->uid, port->device, port->port_num, m,
		     q.join_state, pk,
		     d->o.policy ? d->o.policy : "the default policy");
	return r;
}
