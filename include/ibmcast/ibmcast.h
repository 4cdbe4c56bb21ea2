/* libibmcast, what a host runs: the wire formats, the event loop, the SA
 * client, the join tracker, IPoIB, the libibumad transport, TUN and the
 * client and server of the host join service. One include for all of it;
 * link with `pkg-config --cflags --libs ibmcast`.
 *
 * docs/library.md is the guide, examples/c/ the programs it quotes. The
 * simulator (embedded fabric, SA engine, scenarios) is libibmcast-sim,
 * <ibmcast/sim.h>.
 */
#ifndef IBMCAST_IBMCAST_H
#define IBMCAST_IBMCAST_H

#include "ibmcast/common.h"
#include "ibmcast/gid.h"
#include "ibmcast/ibsim.h"
#include "ibmcast/ip.h"
#include "ibmcast/ip_host.h"
#include "ibmcast/ipoib.h"
#include "ibmcast/ipoib_wire.h"
#include "ibmcast/json.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcast_ctl.h"
#include "ibmcast/mcast_umad.h"
#include "ibmcast/mcastd.h"
#include "ibmcast/mcastd_policy.h"
#include "ibmcast/mcastd_server.h"
#include "ibmcast/mcmr.h"
#include "ibmcast/packet.h"
#include "ibmcast/pcap.h"
#include "ibmcast/port_lock.h"
#include "ibmcast/rmpp.h"
#include "ibmcast/rng.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_client.h"
#include "ibmcast/sa_records.h"
#include "ibmcast/storm.h"
#include "ibmcast/tun.h"
#include "ibmcast/tun_bridge.h"
#include "ibmcast/umad.h"

#endif
