/* The state the IPoIB verbs share between their language half
 * (ipoib_verbs.c: settings, verbs, subjects) and their run half
 * (ipoib_run.c: host models, ports, interfaces, flows, ping-all rounds).
 * Private to the library. */
#ifndef IMC_SCENARIO_IPOIB_RUN_H
#define IMC_SCENARIO_IPOIB_RUN_H

#include "ibmcast/ip_host.h"
#include "ibmcast/ipoib.h"
#include "ibmcast/ipoib_fabric.h"
#include "ibmcast/scenario_ipoib.h"
#include "scenario/runner.h"
#include "scenario/scn.h"

#define ADDRS_MAX 16

/* imc_scn_data keys: of struct ipr, of the ipoib setting. */
extern const char scn_ipoib_run_key;
extern const char scn_ipoib_cfg_key;

/* ------------------------------------------------------------------ */
/* Parse data */

/* The bits of the queue options in struct ipoib_cfg mask (their indexes
 * in the options; the others are read from c as given or defaulted). */
enum {
	C_QUEUE = 1u << 0,
	C_QUEUE_GROUP = 1u << 1,
	C_QUEUE_TOTAL = 1u << 2,
};

struct ipoib_cfg {
	unsigned mask;
	struct imc_ipoib_config c;   /* the fields mask names */
};

struct if_arg {
	uint32_t node;
	unsigned port;
	uint16_t pkey;
};

/* HOSTS: one, or a set whose k-th host (from 0) gets each address plus
 * k. */
struct up_arg {
	struct imc_scn_hosts hosts;
	uint16_t pkey;
	unsigned naddrs;
	struct imc_ip_addr addr[ADDRS_MAX];
	unsigned plen[ADDRS_MAX];
};

struct addr_arg {
	struct if_arg at;
	bool del;
	struct imc_ip_addr addr;
	unsigned plen;
};

struct listen_arg {
	struct if_arg at;
	struct imc_ip_addr group;
};

struct flow_arg {
	struct if_arg at;
	bool ping;
	struct imc_ip_addr dst;
	uint32_t count;
	uint32_t size;
	imc_time_t interval;
};

/* ------------------------------------------------------------------ */
/* Run state */

struct ipr;

struct iface {
	struct iface *next;          /* of its port */
	struct pstate *ps;
	uint16_t pkey;
	/* the interface, its host model, a caller's tap (ipoib_fabric.h) */
	struct imc_ipoib_fabric_host *fh;
	uint64_t cross;              /* from an interface of another
				      * partition */
};

struct pstate {
	struct ipr *r;
	uint32_t node;
	unsigned port;
	struct imc_mcast *mc;        /* the port's (scn_svc_tracker()) */
	struct iface *ifs;
};

/* From an interface's address to an address: a ping-all line's echo
 * request to another interface it can reach, or what a ping or
 * ipoib-send line sends. */
struct pair {
	struct iface *src;
	struct imc_ip_addr from, to;
	bool answered;
};

/* A ping, ipoib-send or ping-all line that ran: count packets, one every
 * interval, the k-th (from 0) of pair k % n: a ping or ipoib-send line's
 * one pair count times, a ping-all line's pairs once each. Requests carry
 * the line's flow number as ICMP identifier and k + 1 as sequence number,
 * which find a ping-all pair again. */
struct round {
	struct round *next;
	uint16_t id;
	bool udp;                    /* UDP datagrams, not echo requests */
	uint32_t size, count;
	imc_time_t interval;
	struct pair *p;
	size_t n, sent;
	struct imc_timer t;
};

struct ipr {
	struct imc_scn_ctx *c;
	struct imc_fabric *f;
	struct imc_loop *loop;
	const struct imc_topo *t;
	struct scn_ports ports;      /* struct pstate, made on first use */
	struct round *flows;         /* of ping and ipoib-send lines */
	struct round *rounds;        /* of ping-all lines, newest first */
};

/* ping-all */

#define PAIRS_MAX 0xFFFFu   /* sequence numbers 1..65535 */

struct pa_arg {
	imc_time_t interval;
	uint32_t size;
};

/* The host model (NULL once stopped) and the interface of i. */
static inline struct imc_ip_host *host_of(const struct iface *i)
{
	return imc_ipoib_fabric_host_ip(i->fh);
}

static inline struct imc_ipoib *ifc_of(const struct iface *i)
{
	return imc_ipoib_fabric_host_ipoib(i->fh);
}

/* The run's state, made on first use. */
int scn_ipoib_run_get(struct imc_scn_ctx *c, struct ipr **out);
/* The interface after i (NULL: the first): ports in slot order, a
 * port's newest first; NULL after the last. */
struct iface *scn_ipoib_iface_next(const struct ipr *r,
				   const struct iface *i);
/* The interface of a (node, port, P_Key), or NULL when not up. */
struct iface *scn_ipoib_iface_find(const struct ipr *r,
				   const struct if_arg *a);
/* The interface of a, made with its host model on the port's tracker
 * (and the run's state) when missing. */
int scn_ipoib_iface_get(struct imc_scn_ctx *c, const struct if_arg *a,
			struct iface **out);
/* As scn_ipoib_iface_find(), but fails the run when there is none. */
int scn_ipoib_iface_need(struct imc_scn_ctx *c, const struct if_arg *a,
			 struct iface **out);
/* The counts of the host model, with what went to a tap. */
void scn_ipoib_iface_stats(const struct iface *i,
			   struct imc_ip_host_stats *st);

/* The runs of ping/ipoib-send lines and of ping-all lines. */
int scn_ipoib_flow_run(struct imc_scn_ctx *c, void *data);
int scn_ipoib_pa_run(struct imc_scn_ctx *c, void *data);

#endif
