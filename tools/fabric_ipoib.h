/* IPoIB hosts on the served fabric (ibmcast fabric serve --ipoib). */
#ifndef IMC_TOOLS_FABRIC_IPOIB_H
#define IMC_TOOLS_FABRIC_IPOIB_H

#include "ibmcast/fabric.h"

struct fabric_ipoib;

/* IPoIB on the first n HCAs other than the SM's (n >= 2); pings and a
 * multicast datagram once all are up (fabric_ipoib.c). Returns 0,
 * -EINVAL, -ENOSPC (too few HCAs), -ENOMEM or another negative errno. */
int fabric_ipoib_start(struct imc_fabric *f, unsigned n,
		       struct fabric_ipoib **out);
void fabric_ipoib_stop(struct fabric_ipoib *x);

#endif
