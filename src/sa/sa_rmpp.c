/* GetTableResp transfers: the RMPP sender of include/ibmcast/rmpp.h
 * driven by the loop (IBA 13.6.3.2). One transfer per (requester LID,
 * TID); its timer either times out an ACK or, armed at now, sends what
 * an ACK opened (ACKs come in through imc_sa_recv(), which sends
 * nothing itself).
 *
 *   sender state   event                              action
 *   ACTIVE         start, ACK moved the window        send next segments,
 *                                                     arm the ACK timeout
 *   ACTIVE         ACK timeout, retries left          resend from the
 *                                                     first unacknowledged
 *   ACTIVE         retries used up, or a bad ACK      send ABORT, free
 *   DONE           last segment acknowledged          free
 *   STOPPED/ABORTED  the requester's STOP/ABORT       free
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_int.h"
#include "util/bytes.h"

static uint64_t xfer_hash(const struct imc_sa *sa, uint16_t slid,
			  uint64_t tid)
{
	return sae_mix(sae_mix(sa->cfg.hash_seed, slid), tid);
}

static struct sae_xfer *xfer_find(const struct imc_sa *sa, uint16_t slid,
				 uint64_t tid)
{
	uint64_t h = xfer_hash(sa, slid, tid);

	for (struct imc_hnode *n = imc_htab_bucket(&sa->xfers, h); n;
	     n = n->next) {
		struct sae_xfer *x = imc_container_of(n, struct sae_xfer, node);

		if (n->hash == h && x->slid == slid && x->tmpl.mad.tid == tid)
			return x;
	}
	return NULL;
}

bool sae_xfer_busy(const struct imc_sa *sa, uint16_t slid, uint64_t tid)
{
	return xfer_find(sa, slid, tid) != NULL;
}

static void xfer_free(struct imc_sa *sa, struct sae_xfer *x)
{
	imc_timer_cancel(sa->loop, &x->timer);
	imc_htab_remove(&sa->xfers, &x->node);
	imc_list_del(&x->link);
	imc_rmpp_sender_destroy(x->snd);
	free(x->payload);
	free(x);
}

static void xfer_end(struct imc_sa *sa, struct sae_xfer *x, bool ok)
{
	if (ok)
		sa->st.transfers_done++;
	else
		sa->st.transfers_failed++;
	xfer_free(sa, x);
}

static void send_abort(struct imc_sa *sa, struct sae_xfer *x)
{
	uint8_t buf[IMC_MAD_SIZE];

	if (imc_rmpp_sender_abort_pack(x->snd, buf, sizeof(buf)) ==
	    IMC_MAD_SIZE)
		sae_send(sa, &x->dest, buf);
}

/* Sends the segments the window allows, then waits for an ACK. */
static void pump(struct imc_sa *sa, struct sae_xfer *x)
{
	uint8_t buf[IMC_MAD_SIZE];
	int seg;

	while ((seg = imc_rmpp_sender_next(x->snd)) > 0) {
		if (imc_rmpp_segment_pack(&x->tmpl, x->payload, x->len,
					  (uint32_t)seg, IMC_RMPP_NO_RESP_TIME,
					  buf, sizeof(buf)) != IMC_MAD_SIZE)
			break;
		sa->st.rmpp_segments++;
		sae_send(sa, &x->dest, buf);
	}
	switch (imc_rmpp_sender_state(x->snd)) {
	case IMC_RMPP_ACTIVE:
		x->kick = false;
		imc_timer_arm_in(sa->loop, &x->timer, sa->cfg.rmpp_timeout);
		break;
	case IMC_RMPP_DONE:
		xfer_end(sa, x, true);
		break;
	default:
		xfer_end(sa, x, false);
		break;
	}
}

static void xfer_cb(struct imc_timer *t)
{
	struct sae_xfer *x = imc_container_of(t, struct sae_xfer, timer);
	struct imc_sa *sa = x->sa;

	if (x->kick) {
		if (x->abort_due)
			send_abort(sa, x);
		pump(sa, x);
		return;
	}
	switch (imc_rmpp_sender_timeout(x->snd)) {
	case 0:
		pump(sa, x);
		break;
	case -ETIMEDOUT:
		send_abort(sa, x);
		xfer_end(sa, x, false);
		break;
	case -EALREADY:
		xfer_end(sa, x, true);
		break;
	default:
		xfer_end(sa, x, false);
		break;
	}
}

/* Takes payload (freed on every path). */
int sae_xfer_start(struct imc_sa *sa, const struct imc_sa_src *src,
		  const struct imc_sa_mad *tmpl, uint8_t *payload, size_t len)
{
	struct sae_xfer *x;
	int rc;

	if (sa->xfers.n >= sa->cfg.max_transfers) {
		free(payload);
		return -EBUSY;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		free(payload);
		return -ENOMEM;
	}
	rc = imc_rmpp_sender_create(tmpl, len, sa->cfg.rmpp_retries, &x->snd);
	if (rc < 0) {
		free(payload);
		free(x);
		return rc;
	}
	x->sa = sa;
	x->tmpl = *tmpl;
	x->payload = payload;
	x->len = len;
	x->slid = src->slid;
	sae_dest_reply(src, &x->dest);
	imc_timer_init(&x->timer, xfer_cb);
	imc_htab_insert(&sa->xfers, &x->node,
		     xfer_hash(sa, x->slid, tmpl->mad.tid));
	imc_list_add_tail(&sa->xfer_list, &x->link);
	pump(sa, x);
	return 0;
}

/* An RMPP ACK, STOP or ABORT from a requester. Returns 0 when it belongs
 * to a transfer (what follows runs from the loop), -ENOENT otherwise. */
int sae_xfer_control(struct imc_sa *sa, const struct imc_sa_src *src,
		    const uint8_t *mad)
{
	struct sae_xfer *x = xfer_find(sa, src->slid, imc_get64(mad + 8));
	int rc;

	if (!x)
		return -ENOENT;
	rc = imc_rmpp_sender_recv(x->snd, mad, IMC_MAD_SIZE);
	switch (rc) {
	case 0:
	case -EPROTO:
	case -ECONNABORTED:
		/* -EPROTO: the ACK broke RMPP and our ABORT goes out from
		 * the loop; -ECONNABORTED: the requester stopped it. */
		if (rc == -EPROTO)
			x->abort_due = true;
		x->kick = true;
		imc_timer_arm(sa->loop, &x->timer, imc_loop_now(sa->loop));
		return 0;
	case -EALREADY:
		return 0;
	default:
		return -ENOENT;
	}
}

void sae_xfer_free_all(struct imc_sa *sa)
{
	while (!imc_list_empty(&sa->xfer_list))
		xfer_free(sa, imc_container_of(sa->xfer_list.next,
					       struct sae_xfer, link));
}
