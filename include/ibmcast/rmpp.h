/* RMPP, the Reliable Multi-Packet Transaction Protocol (IBA 13.6), for SA
 * MADs: segmentation of a long SA payload (GetTableResp) into 256-byte
 * DATA segments, a sender window driven by ACKs, and a receiver that
 * validates segments, builds ACKs and reassembles the payload.
 *
 * Sans-I/O: nothing here sends, receives or reads a clock. The caller
 * moves the MADs and runs the timers; these objects say what to send.
 *
 * Layout of every SA segment (IBA 15.2.1.1): MAD header (24), RMPP header
 * (12), SA header (20, repeated in every segment), 200 bytes of data.
 * PayloadLength (IBA 13.6.2.3) counts the bytes after the RMPP header, so
 * it includes the 20-byte SA header of each segment, as Linux
 * (drivers/infiniband/core/mad.c, mad_rmpp.c) and OpenSM
 * (libvendor/osm_vendor_mlx_rmpp_ctx.c) put it on the wire:
 *   first segment: payload_len + 20 * segment count
 *   last segment:  20 + the data bytes in that segment
 *   others:        0
 * A transfer of one segment is both first and last: 20 + payload_len.
 */
#ifndef IBMCAST_RMPP_H
#define IBMCAST_RMPP_H

#include "ibmcast/common.h"
#include "ibmcast/mad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* RMPP status (IBA 13.6.2.2; the same values as Linux include/rdma/ib_mad.h
 * IB_MGMT_RMPP_STATUS_*). */
enum imc_rmpp_status {
	IMC_RMPP_STATUS_OK = 0,
	IMC_RMPP_STATUS_RESX = 1,          /* STOP: resources exhausted */
	IMC_RMPP_STATUS_T2L = 118,         /* total time too long */
	IMC_RMPP_STATUS_BAD_LEN = 119,     /* inconsistent Last and PayloadLength */
	IMC_RMPP_STATUS_BAD_SEG = 120,     /* inconsistent First and SegmentNumber */
	IMC_RMPP_STATUS_BADT = 121,        /* bad RMPPType */
	IMC_RMPP_STATUS_W2S = 122,         /* NewWindowLast too small */
	IMC_RMPP_STATUS_S2B = 123,         /* SegmentNumber too big */
	IMC_RMPP_STATUS_BAD_STATUS = 124,  /* illegal status */
	IMC_RMPP_STATUS_UNV = 125,         /* unsupported version */
	IMC_RMPP_STATUS_TMR = 126,         /* too many retries */
	IMC_RMPP_STATUS_UNSPEC = 127,      /* unspecified */
	IMC_RMPP_STATUS_ABORT_MIN = 118,
	IMC_RMPP_STATUS_ABORT_MAX = 127,
};

enum {
	IMC_RMPP_VERSION = 1,
	IMC_RMPP_SEG_DATA = IMC_SA_DATA_SIZE,          /* 200 data bytes */
	IMC_RMPP_SEG_PAYLOAD = IMC_SA_HDR_SIZE + IMC_SA_DATA_SIZE, /* 220 */
	IMC_RMPP_NO_RESP_TIME = 0x1f,  /* RRespTime "no value" (IBA 13.6.2.1) */
	IMC_RMPP_DEFAULT_WINDOW = 32,
	IMC_RMPP_MAX_WINDOW = 1024,
};

/* One state per transfer; both sides use the same names.
 *   IDLE     receiver only: no first segment accepted yet
 *   ACTIVE   transfer in progress
 *   DONE     sender: last segment acknowledged; receiver: last received
 *   STOPPED  the peer sent STOP
 *   ABORTED  the peer sent ABORT, or the sender must send one
 */
enum imc_rmpp_state {
	IMC_RMPP_IDLE,
	IMC_RMPP_ACTIVE,
	IMC_RMPP_DONE,
	IMC_RMPP_STOPPED,
	IMC_RMPP_ABORTED,
};

/* Number of DATA segments for an SA payload of payload_len bytes (at
 * least 1: an empty table still takes one segment), or -EMSGSIZE when the
 * first segment's PayloadLength would not fit its 32-bit field. */
int imc_rmpp_segment_count(size_t payload_len);

/* Write DATA segment seg_num (1-based) of the transfer of payload into
 * buf: the MAD and SA headers come from tmpl (its RMPP header and data are
 * ignored), the RMPP header is version 1, type DATA, ACTIVE, FIRST on 1,
 * LAST on the final one, with the PayloadLength rule above; the data past
 * the payload's end is zero. resp_time is RRespTime (0..31).
 * Returns IMC_MAD_SIZE; -ENOSPC if len < IMC_MAD_SIZE; -EINVAL for
 * seg_num 0 or past the last segment, resp_time > 31, or a NULL payload
 * with payload_len > 0; -EMSGSIZE as imc_rmpp_segment_count(). */
int imc_rmpp_segment_pack(const struct imc_sa_mad *tmpl, const uint8_t *payload,
			  size_t payload_len, uint32_t seg_num,
			  uint8_t resp_time, uint8_t *buf, size_t len);

/* ------------------------------------------------------------------ */
/* Sender (IBA 13.6.3.2). */

struct imc_rmpp_sender;

/* A sender for the transfer that imc_rmpp_segment_pack(tmpl, payload,
 * payload_len, ...) describes. It keeps a copy of tmpl's MAD and SA
 * headers (to match ACKs by TID and class, and to build its ABORT) but not
 * the payload. The window starts at one segment until the receiver's
 * first ACK (IBA 13.6.3.2). After max_retries timeouts without progress
 * the transfer aborts with TMR. Free with imc_rmpp_sender_destroy().
 * Returns 0, -EINVAL, -EMSGSIZE or -ENOMEM. */
int imc_rmpp_sender_create(const struct imc_sa_mad *tmpl, size_t payload_len,
			   unsigned max_retries, struct imc_rmpp_sender **out);
void imc_rmpp_sender_destroy(struct imc_rmpp_sender *s);

/* The next segment number to send now, which the caller packs with
 * imc_rmpp_segment_pack() and sends; call again until it returns 0
 * (window full, or waiting for the final ACK, or DONE).
 * -ECONNABORTED once the transfer is stopped or aborted. */
int imc_rmpp_sender_next(struct imc_rmpp_sender *s);

/* Feed a MAD received for this transfer (ACK, STOP or ABORT).
 *  0             accepted: the window or acknowledged point moved, or the
 *                transfer is now DONE (see imc_rmpp_sender_state())
 *  -EALREADY     duplicate or older ACK, or anything after DONE: ignored
 *  -EPROTO       the MAD breaks RMPP; the sender is now ABORTED and the
 *                caller sends imc_rmpp_sender_abort_pack()
 *  -ECONNABORTED the receiver sent STOP or ABORT (state STOPPED/ABORTED),
 *                or the transfer had already ended that way
 *  -ESRCH        another transaction (TID or class differs): ignored
 *  -ENOMSG       not an RMPP ACK/STOP/ABORT (ACTIVE clear, or DATA)
 *  -EMSGSIZE     len is not IMC_MAD_SIZE */
int imc_rmpp_sender_recv(struct imc_rmpp_sender *s, const uint8_t *mad,
			 size_t len);

/* The caller's ACK timer expired: rewind to the first unacknowledged
 * segment so that imc_rmpp_sender_next() sends it again. Returns 0;
 * -ETIMEDOUT when the retries are used up (now ABORTED with TMR: send
 * imc_rmpp_sender_abort_pack()); -EALREADY when DONE; -ECONNABORTED
 * when stopped or aborted. */
int imc_rmpp_sender_timeout(struct imc_rmpp_sender *s);

enum imc_rmpp_state imc_rmpp_sender_state(const struct imc_rmpp_sender *s);
/* RMPP status that ended the transfer (0 while ACTIVE or DONE). */
uint8_t imc_rmpp_sender_status(const struct imc_rmpp_sender *s);
/* Highest segment acknowledged so far, and segments in the transfer. */
uint32_t imc_rmpp_sender_acked(const struct imc_rmpp_sender *s);
uint32_t imc_rmpp_sender_count(const struct imc_rmpp_sender *s);

/* The ABORT this sender sends after -EPROTO or -ETIMEDOUT: tmpl's headers,
 * RMPP type ABORT, ACTIVE, the sender's status. Returns IMC_MAD_SIZE,
 * -ENOSPC, or -EINVAL when the sender is not ABORTED. */
int imc_rmpp_sender_abort_pack(const struct imc_rmpp_sender *s, uint8_t *buf,
			       size_t len);

/* ------------------------------------------------------------------ */
/* Receiver (IBA 13.6.3.3). */

struct imc_rmpp_receiver;

/* Result bits of imc_rmpp_receiver_recv() (>= 0). */
enum {
	IMC_RMPP_RX_ACCEPTED = 0x1,  /* segment stored in order */
	IMC_RMPP_RX_ACK = 0x2,       /* send imc_rmpp_receiver_ack_pack() now */
	IMC_RMPP_RX_DONE = 0x4,      /* LAST stored: payload ready */
	IMC_RMPP_RX_DUPLICATE = 0x8, /* already had it: re-ACK */
	IMC_RMPP_RX_GAP = 0x10,      /* ahead of the next expected: dropped */
};

/* A receiver for one SA RMPP transfer of at most max_payload data bytes,
 * granting the sender window segments per ACK (1..IMC_RMPP_MAX_WINDOW).
 * The first valid DATA segment fixes the transaction (TID, class, class
 * version, method, attribute). Free with imc_rmpp_receiver_destroy(),
 * which also frees a payload not taken. Returns 0, -EINVAL or -ENOMEM. */
int imc_rmpp_receiver_create(size_t max_payload, uint32_t window,
			     struct imc_rmpp_receiver **out);
void imc_rmpp_receiver_destroy(struct imc_rmpp_receiver *r);

/* Feed one received MAD. Returns IMC_RMPP_RX_* bits, or a negative errno
 * for a MAD that is rejected. A rejected MAD changes nothing: the transfer
 * goes on and completes when the right segments arrive; only a STOP or
 * ABORT from the sender ends it. When rmpp_status is not NULL it receives
 * the RMPP status with which an ABORT (or, for RESX, a STOP) answering the
 * rejected MAD would be sent with imc_rmpp_nak_pack(), or 0 if none:
 *  -EMSGSIZE        len is not IMC_MAD_SIZE                           0
 *  -ENOMSG          ACTIVE clear, not an SA MAD, or an ACK            0
 *  -EPROTONOSUPPORT RMPPVersion is not 1                            UNV
 *  -EBADMSG         unknown RMPPType                               BADT
 *                   DATA with a status, STOP/ABORT with a bad one BAD_STATUS
 *  -EPROTO          segment 0, or FIRST not exactly on segment 1  BAD_SEG
 *                   LAST with a PayloadLength outside 20..220     BAD_LEN
 *                   a segment past the LAST one                      S2B
 *  -ESRCH           another transaction, or no transfer started yet   0
 *  -EFBIG           the data (announced by the first segment, or
 *                   stored so far) would exceed max_payload         RESX
 *  -ENOMEM          no memory for the segment                         0
 *  -EALREADY        STOP/ABORT after DONE: ignored                    0
 *  -ECONNABORTED    the sender sent STOP/ABORT (now STOPPED/ABORTED),
 *                   or the transfer had already ended that way        0
 * IBA 13.6.3.3: a duplicate is re-ACKed; a segment past the next
 * expected one (a gap) is dropped and the last in-order segment
 * re-ACKed; the window is granted on the first segment and each time it
 * fills; the LAST segment is ACKed. */
int imc_rmpp_receiver_recv(struct imc_rmpp_receiver *r, const uint8_t *mad,
			   size_t len, uint8_t *rmpp_status);

/* The ACK to send: the first segment's MAD and SA headers with the
 * response bit of the method flipped (as Linux format_ack() does), RMPP
 * type ACK, ACTIVE, RRespTime 31 (none given), SegmentNumber = last
 * in-order segment, NewWindowLast = the window granted. Returns
 * IMC_MAD_SIZE, -ENOSPC, or -EINVAL while IDLE. */
int imc_rmpp_receiver_ack_pack(const struct imc_rmpp_receiver *r, uint8_t *buf,
			       size_t len);

/* The STOP (status RESX) or ABORT (status 118..127, e.g. T2L when the
 * caller's transfer timer expires) with which the receiver ends this
 * transfer; headers as in the ACK, SegmentNumber and NewWindowLast 0.
 * The caller then destroys the receiver. Returns IMC_MAD_SIZE, -ENOSPC, or
 * -EINVAL while IDLE or for a status neither STOP nor ABORT may carry. */
int imc_rmpp_receiver_abort_pack(const struct imc_rmpp_receiver *r,
				 uint8_t status, uint8_t *buf, size_t len);

enum imc_rmpp_state imc_rmpp_receiver_state(const struct imc_rmpp_receiver *r);
/* Status of the sender's STOP/ABORT that ended the transfer, else 0. */
uint8_t imc_rmpp_receiver_status(const struct imc_rmpp_receiver *r);
/* Last segment received in order (0 while IDLE). */
uint32_t imc_rmpp_receiver_last(const struct imc_rmpp_receiver *r);

/* The first segment as received (MAD, RMPP and SA headers, data), e.g.
 * for the AttributeOffset of the records; NULL while IDLE. Owned by r. */
const struct imc_sa_mad *
imc_rmpp_receiver_first(const struct imc_rmpp_receiver *r);

/* Once DONE, hand the reassembled payload (all data areas in order,
 * trimmed to the length the LAST segment gives) to the caller, who frees
 * it with imc_rmpp_payload_free(). *payload is never NULL on success, even
 * for 0 bytes. Returns 0; -EAGAIN before DONE; -EALREADY if taken. */
int imc_rmpp_receiver_take(struct imc_rmpp_receiver *r, uint8_t **payload,
			   size_t *payload_len);
void imc_rmpp_payload_free(uint8_t *payload);

/* An ABORT (or a STOP, for status RESX) answering the MAD mad: its
 * headers with the response bit of the method flipped, ACTIVE, the given
 * status, SegmentNumber and NewWindowLast 0 (as Linux nack_recv()).
 * Returns IMC_MAD_SIZE, -EMSGSIZE if mad_len is not IMC_MAD_SIZE, -ENOSPC,
 * or -EINVAL for status 0 or one neither STOP nor ABORT may carry. */
int imc_rmpp_nak_pack(const uint8_t *mad, size_t mad_len, uint8_t status,
		      uint8_t *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
