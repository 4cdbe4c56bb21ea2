/* Join trackers on the served fabric (ibmcast fabric serve --joins). */
#ifndef IMC_TOOLS_FABRIC_JOINS_H
#define IMC_TOOLS_FABRIC_JOINS_H

#include <stdbool.h>

#include "ibmcast/fabric.h"

struct fabric_joins_opts {
	unsigned ports, groups;
	bool immediate;          /* re-join policy IMMEDIATE, else PACED */
};

/* "PORTS,GROUPS[,paced|immediate]". 0 or -EINVAL. */
int fabric_joins_parse(const char *s, struct fabric_joins_opts *o);

struct fabric_joins;

/* A tracker on each of the first PORTS HCAs other than the SM's, each
 * joining GROUPS groups ff15:1234:5707::1.. as a FullMember. Returns 0,
 * -ENOSPC (too few HCAs), -ENOMEM or another negative errno. */
int fabric_joins_start(struct imc_fabric *f, const struct fabric_joins_opts *o,
		       struct fabric_joins **out);
void fabric_joins_stop(struct fabric_joins *j);

#endif
