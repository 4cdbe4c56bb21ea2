/* The ibmcastd client/daemon protocol: frames on a Unix stream socket.
 *
 * Every message is a frame: an 8-byte header (length of the whole frame
 * u32, type u16, reserved u16 = 0), then the body, all big-endian. Bodies
 * have a fixed size per type (SHOW_CLIENT: fixed part plus n members;
 * REFUSE: fixed part plus text), and a frame of any other length is
 * malformed. The first message of a client is HELLO with its protocol
 * version; the daemon answers WELCOME, or REFUSE (status, its own version,
 * a sentence) and closes.
 *
 *   client -> daemon   HELLO JOIN LEAVE REVOKE_ACK SHOW
 *   daemon -> client   WELCOME REFUSE EVENT REVOKE SHOW_PORT SHOW_CLIENT
 *                      SHOW_GROUP SHOW_END
 *
 * Handles are the client's: slot (low 32 bits, the lowest free one, so
 * that a client under its member limit always names slots under it) and
 * generation (high 32 bits, so that an EVENT for a slot's former member
 * is told apart from one for its new member).
 */
#ifndef IMC_MCASTD_PROTO_H
#define IMC_MCASTD_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "ibmcast/mcast.h"
#include "ibmcast/mcastd.h"

enum {
	MCD_HDR = 8,
	MCD_MCMR = 64,              /* MCMemberRecord, zero padded */
	MCD_TEXT_MAX = 200,         /* REFUSE sentence */
	MCD_SHOW_MEMBER = 48,       /* one member in SHOW_CLIENT */
	/* Largest frame a daemon sends: SHOW_CLIENT of 65536 members. */
	MCD_MAX_FROM_DAEMON = 64 + 65536 * MCD_SHOW_MEMBER,
	MCD_MAX_FROM_CLIENT_MIN = 256, /* the daemon's limit is at least this */
};

enum mcd_type {
	MCD_HELLO = 1,
	MCD_WELCOME,
	MCD_REFUSE,
	MCD_JOIN,
	MCD_LEAVE,
	MCD_EVENT,
	MCD_REVOKE,
	MCD_REVOKE_ACK,
	MCD_SHOW,
	MCD_SHOW_PORT,
	MCD_SHOW_CLIENT,
	MCD_SHOW_GROUP,
	MCD_SHOW_END,
	MCD_TYPE_MAX = MCD_SHOW_END,
};

const char *mcd_type_str(unsigned type);

struct mcd_msg {
	uint16_t type;
	union {
		struct {
			uint16_t version;
			uint32_t pid;
			char comm[IMC_MCASTD_COMMLEN];
		} hello;
		struct {
			uint16_t version;
			uint32_t client_id;
		} welcome;
		struct {
			int32_t status;
			uint16_t version;
			char text[MCD_TEXT_MAX + 1];
		} refuse;
		struct {
			uint64_t handle;
			struct imc_mcastd_port port;
			struct imc_mcast_join_req req;   /* qp NULL */
		} join;
		struct {
			uint64_t handle;     /* LEAVE, REVOKE_ACK */
		} leave;
		struct {
			uint64_t handle;
			uint8_t ev;          /* enum imc_mcast_event_type */
			uint8_t state;       /* enum imc_mcast_state */
			int32_t status;
			struct imc_mcmr rec; /* JOINED; zero otherwise */
		} event;
		struct {
			uint64_t handle;
			int32_t status;
		} revoke;
		struct {
			uint32_t id;
			int32_t status;      /* SHOW_END */
		} show;
		struct {
			uint32_t id;
			struct imc_mcastd_show_port port;
		} show_port;
		struct {
			uint32_t id;
			struct imc_mcastd_show_client cl; /* members NULL */
			const uint8_t *raw;  /* n_members packed members */
		} show_client;
		struct {
			uint32_t id;
			struct imc_mcastd_show_group g;
		} show_group;
	} u;
};

/* How much of buf (len bytes, from a stream) is the next frame: 0 when
 * more bytes are needed, the frame's length when it is all there, or
 * -EMSGSIZE (longer than max, or shorter than a header) / -EPROTO
 * (reserved bits set, unknown type). */
int mcd_frame(const uint8_t *buf, size_t len, size_t max);

/* Decodes one whole frame, checking every field (lengths, reserved bits
 * and bytes, ranges, NUL-terminated printable strings, MCMemberRecord).
 * Returns 0 or -EPROTO / -EMSGSIZE. */
int mcd_decode(struct mcd_msg *m, const uint8_t *buf, size_t len);

/* Member i of a decoded SHOW_CLIENT (checked by mcd_decode()). */
void mcd_show_member(const struct mcd_msg *m, size_t i,
		     struct imc_mcastd_show_member *out);

/* Bytes mcd_encode() writes for m (SHOW_CLIENT: with its members). */
size_t mcd_size(const struct mcd_msg *m);

/* Writes the frame of m into buf (mcd_size(m) bytes; the caller made
 * room); SHOW_CLIENT takes its members from m->u.show_client.cl.members.
 * Returns the length. */
size_t mcd_encode(const struct mcd_msg *m, uint8_t *buf);

/* A growable byte queue: frames waiting to be written, or bytes read and
 * not yet framed. */
struct mcd_buf {
	uint8_t *p;
	size_t off, len, cap;    /* data is p[off .. len) */
};

/* Room for n more bytes at p + len; NULL when it cannot grow. */
uint8_t *mcd_buf_reserve(struct mcd_buf *b, size_t n);
/* Appends the frame of m. Returns 0 or -ENOMEM. */
int mcd_buf_put(struct mcd_buf *b, const struct mcd_msg *m);
void mcd_buf_consume(struct mcd_buf *b, size_t n);
/* Writes what waits to the stream socket fd without blocking. Returns 0
 * once all is written, -EAGAIN when the socket is full (the rest waits),
 * or a negative errno (-EPIPE for a closed peer) when it broke. */
int mcd_buf_send(struct mcd_buf *b, int fd);
void mcd_buf_free(struct mcd_buf *b);

static inline size_t mcd_buf_used(const struct mcd_buf *b)
{
	return b->len - b->off;
}

#endif
