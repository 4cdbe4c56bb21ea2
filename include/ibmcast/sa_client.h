/* SA client: the query engine that talks to a Subnet Administrator
 * (IBA 15.4): TIDs, timeouts, retries with backoff, a window of requests in
 * flight, RMPP reassembly of GetTableResp, cancel, and Reports.
 *
 * Sans-I/O: the client never touches a socket or a clock. It sends MADs
 * through a transport vtable (libibumad, the embedded fabric, a test fake),
 * is given the MADs the transport receives (imc_sa_client_recv()), and runs
 * its timers on an imc_loop.
 *
 * Query life cycle (each query completes exactly once):
 *   - imc_sa_query_start() queues the request; it is sent when fewer than
 *     `window` queries are in flight, in start order.
 *   - Each attempt waits timeout * 2^attempt (capped at max_timeout) plus
 *     up to 25% random jitter, then the same MAD (same TID) is sent again,
 *     at most `retries` times. A BUSY answer (MAD status bit 0, IBA 13.4.7)
 *     counts as a failed attempt: the request is sent again after the
 *     attempt's backoff; the last BUSY answer is delivered as is.
 *   - The callback runs from the loop, never inside an API call, with
 *     err 0 and the answer (whatever the SA status: it is passed as is),
 *     -ETIMEDOUT when every attempt went unanswered, -ECANCELED after
 *     imc_sa_client_flush(), or -ECONNABORTED when the SA aborted its RMPP
 *     transfer.
 *   - After imc_sa_query_cancel() or imc_sa_client_destroy() returns, the
 *     query gets no callback.
 *
 * Answers are matched on the low 32 bits of the TID only: the upper half
 * may be rewritten in transit (the Linux kernel puts its agent id there;
 * umad2sim and ibsim rewrite it too). The low halves of the queries alive
 * are unique.
 */
#ifndef IBMCAST_SA_CLIENT_H
#define IBMCAST_SA_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"
#include "ibmcast/mad.h"

#ifdef __cplusplus
extern "C" {
#endif

struct imc_sa_client;
struct imc_sa_query;

/* How the client reaches the SA. send() gets one MAD of IMC_MAD_SIZE
 * bytes (a request, an RMPP ACK or a ReportResp) and returns 0 or a
 * negative errno; a failed send counts as a lost MAD. send() must not call
 * back into the client. */
struct imc_sa_transport {
	int (*send)(void *ctx, const uint8_t *mad, size_t len);
	void *ctx;
};

struct imc_sa_client_config {
	imc_time_t timeout;      /* first attempt (ns) */
	imc_time_t max_timeout;  /* cap of the backoff (ns) */
	unsigned retries;        /* sends after the first */
	unsigned window;         /* queries in flight at most */
	uint64_t seed;           /* jitter and the first TID */
	size_t max_payload;      /* largest GetTableResp reassembled (bytes) */
};

enum {
	/* ibsim deadlocks when flooded; 32 in flight is safe there. */
	IMC_SA_DEFAULT_WINDOW = 32,
	IMC_SA_DEFAULT_RETRIES = 3,
	IMC_SA_DEFAULT_MAX_PAYLOAD = 1 << 20,
};

#define IMC_SA_DEFAULT_TIMEOUT (200 * IMC_NSEC_PER_MSEC)
#define IMC_SA_DEFAULT_MAX_TIMEOUT (4 * IMC_NSEC_PER_SEC)

/* Fills cfg with the defaults above and seed 0. */
void imc_sa_client_config_init(struct imc_sa_client_config *cfg);

/* A client on loop sending through tr (copied). cfg NULL means defaults.
 * Returns 0, -EINVAL (timeout 0, max_timeout < timeout, window 0 or above
 * 4096, max_payload 0) or -ENOMEM. Free with imc_sa_client_destroy(). */
int imc_sa_client_create(struct imc_loop *loop,
			 const struct imc_sa_transport *tr,
			 const struct imc_sa_client_config *cfg,
			 struct imc_sa_client **out);

/* Frees the client and every query not yet completed, without callbacks.
 * May be called from a query callback. The loop must outlive the client. */
void imc_sa_client_destroy(struct imc_sa_client *c);

/* Completes every query alive with -ECANCELED (callbacks from the loop),
 * e.g. when the port goes down or the SM changes. */
void imc_sa_client_flush(struct imc_sa_client *c);

/* The answer given to a query callback; valid during the callback only.
 * data is the record area: for GetTableResp (and GetMultiResp) all
 * records back to back, count of them, rec_size apart; for any other
 * answer the 200-byte data area of the MAD and count 1. */
struct imc_sa_answer {
	uint16_t status;            /* MAD status as received */
	uint8_t method;             /* response method as received */
	uint16_t attr_id;
	uint64_t tid;               /* as received */
	const struct imc_sa_mad *mad; /* the (first) answer MAD, decoded */
	const uint8_t *data;
	size_t len;                 /* bytes at data */
	size_t rec_size;            /* AttributeOffset * 8; 0 when unset */
	size_t count;               /* records at data */
	/* The SA announced RMPP but its answer came as one MAD, full (256
	 * bytes) or cut in transit (ibsim does not carry RMPP): records may
	 * be missing. */
	bool truncated;
	unsigned attempts;          /* sends of the request, 1 + retries used */
};

/* err is 0 (ans set) or a negative errno (ans NULL). The query handle
 * is freed when the callback returns; the callback may destroy the
 * client. */
typedef void (*imc_sa_query_cb)(void *arg, int err,
				const struct imc_sa_answer *ans);

/* Starts a query for req. The client sets the common header (base
 * version 1, class SA, class version 2), the TID and a zero RMPP header;
 * method, attribute, AttributeModifier, SM_Key, ComponentMask and data are
 * the caller's. *out (when out is not NULL) is the handle for
 * imc_sa_query_cancel(), valid until the callback returns. Returns 0,
 * -EINVAL (NULL req or cb, or a response method), or -ENOMEM. */
int imc_sa_query_start(struct imc_sa_client *c, const struct imc_sa_mad *req,
		       imc_sa_query_cb cb, void *arg, struct imc_sa_query **out);

/* Cancels q: no callback runs for it after this returns, and late
 * answers are ignored. Returns 0, or -EALREADY when called from q's own
 * callback (q is then freed when the callback returns). */
int imc_sa_query_cancel(struct imc_sa_query *q);

/* The TID q was (or will be) sent with; 0 before the first send. */
uint64_t imc_sa_query_tid(const struct imc_sa_query *q);

/* Feed a MAD the transport received: its first len bytes, len from
 * IMC_SA_DATA_OFFSET to IMC_MAD_SIZE (umad2sim gives the length the
 * sender wrote, which may be shorter); the rest counts as zero. Returns
 *   0        matched a query (answer, RMPP segment) or a Report handled
 *   -ESRCH   no query alive with that TID (late or duplicate answer)
 *   -ENOMSG  not for the client (other class, a request other than
 *            Report, an RMPP ACK)
 *   -EPROTONOSUPPORT  base version not 1 or class version not 2
 *   -EMSGSIZE  len out of range
 *   -EPROTO  an RMPP segment the transfer rejected (an ABORT was sent)
 * Call it from the loop (e.g. a transport's fd callback): callbacks and
 * the Report handler may run inside it, and may destroy the client. */
int imc_sa_client_recv(struct imc_sa_client *c, const uint8_t *mad,
		       size_t len);

/* As imc_sa_client_recv(), for a MAD of which only the first len bytes
 * arrived though the sender sent more (umad2sim keeps 224 bytes of each
 * MAD): a GetTableResp cut so is marked truncated. */
int imc_sa_client_recv_cut(struct imc_sa_client *c, const uint8_t *mad,
			   size_t len);

/* Reports (IBA 13.4.6.4, e.g. traps 66/67 of multicast groups): the
 * client answers each with a ReportResp (the same MAD, method 0x86) and
 * then calls fn with the Report, from imc_sa_client_recv(). A Report
 * received again (same TID and bytes, within 8 s: the SA resends it
 * while its ReportResp is on the way) is answered again but not handed
 * to fn twice. Without a handler Reports are still answered. fn NULL
 * removes the handler. */
typedef void (*imc_sa_report_cb)(void *arg, const struct imc_sa_mad *report);
void imc_sa_client_set_report_handler(struct imc_sa_client *c,
				      imc_sa_report_cb fn, void *arg);

struct imc_sa_client_stats {
	uint64_t started;
	uint64_t sent;          /* requests sent, first attempts */
	uint64_t resent;        /* retries sent */
	uint64_t answered;      /* completions with an answer */
	uint64_t timed_out;
	uint64_t canceled;      /* imc_sa_query_cancel() and flush */
	uint64_t stale;         /* answers with no query alive (-ESRCH) */
	uint64_t busy;          /* BUSY answers */
	uint64_t rmpp_segments; /* RMPP DATA segments accepted */
	uint64_t reports;          /* Reports handed over (or no handler) */
	uint64_t reports_repeated; /* resent copies, answered only */
	uint64_t send_errors;   /* transport send() failures */
	size_t alive;           /* queries not yet freed */
	size_t queued;          /* waiting for a window slot */
	size_t in_flight;       /* sent, not answered */
	size_t max_in_flight;
};

void imc_sa_client_get_stats(const struct imc_sa_client *c,
			     struct imc_sa_client_stats *st);

/* The configuration the client runs with (defaults filled in). */
void imc_sa_client_get_config(const struct imc_sa_client *c,
			      struct imc_sa_client_config *cfg);

#ifdef __cplusplus
}
#endif
#endif
