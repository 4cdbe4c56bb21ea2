/* libibmcast-sim, the world the host stack is proven on: the embedded
 * fabric (topologies, the simulator's SM, switches, links, QPs), the SA
 * multicast engine and its multicast trees, the SA served on the fabric
 * and beside OpenSM, the ibsim protocol server, OpenSM run on it, and the
 * scenario language.
 * It includes <ibmcast/ibmcast.h>; link with
 * `pkg-config --cflags --libs ibmcast-sim` (which brings libibmcast).
 */
#ifndef IBMCAST_SIM_H
#define IBMCAST_SIM_H

#include "ibmcast/ibmcast.h"

#include "ibmcast/fabric.h"
#include "ibmcast/fabric_mad.h"
#include "ibmcast/gsi.h"
#include "ibmcast/ipoib_fabric.h"
#include "ibmcast/mcast_fabric.h"
#include "ibmcast/mtree.h"
#include "ibmcast/opensm.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_fabric.h"
#include "ibmcast/sa_serve.h"
#include "ibmcast/scenario.h"
#include "ibmcast/scenario_ipoib.h"
#include "ibmcast/scenario_mcast.h"
#include "ibmcast/scenario_sa.h"
#include "ibmcast/simserve.h"
#include "ibmcast/subnet.h"
#include "ibmcast/topo.h"

#endif
