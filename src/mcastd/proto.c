/* Encoding and checked decoding of the ibmcastd protocol (proto.h). */
#include <errno.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "mcastd/proto.h"
#include "util/bytes.h"

/* Body sizes of the fixed-size types (index: type). */
static const size_t body_size[MCD_TYPE_MAX + 1] = {
	[MCD_HELLO] = 24,
	[MCD_WELCOME] = 8,
	[MCD_REFUSE] = 8,        /* plus the text */
	[MCD_JOIN] = 132,
	[MCD_LEAVE] = 8,
	[MCD_EVENT] = 80,
	[MCD_REVOKE] = 16,
	[MCD_REVOKE_ACK] = 8,
	[MCD_SHOW] = 8,
	[MCD_SHOW_PORT] = 56,
	[MCD_SHOW_CLIENT] = 40,  /* plus the members */
	[MCD_SHOW_GROUP] = 48,
	[MCD_SHOW_END] = 8,
};

static const char *const type_names[MCD_TYPE_MAX + 1] = {
	[MCD_HELLO] = "HELLO", [MCD_WELCOME] = "WELCOME",
	[MCD_REFUSE] = "REFUSE", [MCD_JOIN] = "JOIN", [MCD_LEAVE] = "LEAVE",
	[MCD_EVENT] = "EVENT", [MCD_REVOKE] = "REVOKE",
	[MCD_REVOKE_ACK] = "REVOKE_ACK", [MCD_SHOW] = "SHOW",
	[MCD_SHOW_PORT] = "SHOW_PORT", [MCD_SHOW_CLIENT] = "SHOW_CLIENT",
	[MCD_SHOW_GROUP] = "SHOW_GROUP", [MCD_SHOW_END] = "SHOW_END",
};

const char *mcd_type_str(unsigned type)
{
	if (type == 0 || type > MCD_TYPE_MAX)
		return "?";
	return type_names[type];
}

int mcd_frame(const uint8_t *buf, size_t len, size_t max)
{
	uint32_t flen;
	uint16_t type;

	if (len < MCD_HDR)
		return 0;
	flen = imc_get32(buf);
	type = imc_get16(buf + 4);
	if (flen < MCD_HDR || flen > max)
		return -EMSGSIZE;
	if (type == 0 || type > MCD_TYPE_MAX || imc_get16(buf + 6))
		return -EPROTO;
	return len < flen ? 0 : (int)flen;
}

/* A NUL-terminated printable string in a field of n bytes, zero after
 * the NUL (so that one message has one encoding). */
static int get_str(const uint8_t *p, size_t n, char *out)
{
	size_t i = 0;

	while (i < n && p[i]) {
		if (p[i] < 0x20 || p[i] > 0x7e)
			return -EPROTO;
		i++;
	}
	if (i == n)
		return -EPROTO;
	memcpy(out, p, i);
	out[i] = '\0';
	for (; i < n; i++)
		if (p[i])
			return -EPROTO;
	return 0;
}

static void put_str(uint8_t *p, size_t n, const char *s)
{
	size_t l = strnlen(s, n - 1);

	memset(p, 0, n);
	memcpy(p, s, l);
}

static bool zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The record (IMC_MCMR_SIZE bytes) and a reserved zero tail up to
 * MCD_MCMR. */
static int get_mcmr(const uint8_t *p, struct imc_mcmr *r)
{
	if (imc_mcmr_unpack(r, p, MCD_MCMR) < 0 || imc_mcmr_reserved_set(r) ||
	    !zero(p + IMC_MCMR_SIZE, MCD_MCMR - IMC_MCMR_SIZE))
		return -EPROTO;
	return 0;
}

static int dec_join(struct mcd_msg *m, const uint8_t *b)
{
	struct imc_mcast_join_req *r = &m->u.join.req;

	m->u.join.handle = imc_get64(b);
	memcpy(m->u.join.port.gid.raw, b + 8, 16);
	if (get_str(b + 24, IMC_MCASTD_DEVLEN, m->u.join.port.device))
		return -EPROTO;
	m->u.join.port.port_num = b[56];
	r->join_state = b[57];
	if (!r->join_state || r->join_state > 0xf || imc_get16(b + 58))
		return -EPROTO;
	r->comp_mask = imc_get64(b + 60);
	r->qp = NULL;
	if (get_mcmr(b + 68, &r->rec))
		return -EPROTO;
	if (!imc_gid_is_zero(&r->rec.mgid) &&
	    !imc_gid_is_multicast(&r->rec.mgid))
		return -EPROTO;
	return 0;
}

static int dec_show_member(const uint8_t *p,
			   struct imc_mcastd_show_member *o)
{
	o->handle = imc_get64(p);
	memcpy(o->port_gid.raw, p + 8, 16);
	memcpy(o->mgid.raw, p + 24, 16);
	o->join_state = p[40];
	if (o->join_state > 0xf || p[41] > IMC_MCAST_FAILED ||
	    imc_get16(p + 42))
		return -EPROTO;
	o->state = (enum imc_mcast_state)p[41];
	o->status = (int32_t)imc_get32(p + 44);
	return 0;
}

void mcd_show_member(const struct mcd_msg *m, size_t i,
		     struct imc_mcastd_show_member *out)
{
	(void)dec_show_member(m->u.show_client.raw + i * MCD_SHOW_MEMBER,
			      out);
}

static int dec_show_client(struct mcd_msg *m, const uint8_t *b, size_t n)
{
	struct imc_mcastd_show_client *c = &m->u.show_client.cl;
	struct imc_mcastd_show_member sm;
	uint32_t count;

	m->u.show_client.id = imc_get32(b);
	c->pid = imc_get32(b + 4);
	c->uid = imc_get32(b + 8);
	c->gid = imc_get32(b + 12);
	if (b[16] > 1 || !zero(b + 17, 3))
		return -EPROTO;
	c->self = b[16];
	if (get_str(b + 20, IMC_MCASTD_COMMLEN, c->comm))
		return -EPROTO;
	count = imc_get32(b + 36);
	if ((n - 40) / MCD_SHOW_MEMBER != count ||
	    (n - 40) % MCD_SHOW_MEMBER)
		return -EPROTO;
	c->n_members = count;
	c->members = NULL;
	m->u.show_client.raw = b + 40;
	for (uint32_t i = 0; i < count; i++)
		if (dec_show_member(b + 40 + (size_t)i * MCD_SHOW_MEMBER, &sm))
			return -EPROTO;
	return 0;
}

static int dec_refuse(struct mcd_msg *m, const uint8_t *b, size_t n)
{
	size_t tl = n - 8;

	m->u.refuse.status = (int32_t)imc_get32(b);
	m->u.refuse.version = imc_get16(b + 4);
	if (imc_get16(b + 6) || tl > MCD_TEXT_MAX)
		return -EPROTO;
	for (size_t i = 0; i < tl; i++)
		if (b[8 + i] < 0x20 || b[8 + i] > 0x7e)
			return -EPROTO;
	memcpy(m->u.refuse.text, b + 8, tl);
	m->u.refuse.text[tl] = '\0';
	return 0;
}

static int dec_fixed(struct mcd_msg *m, const uint8_t *b)
{
	switch (m->type) {
	case MCD_HELLO:
		m->u.hello.version = imc_get16(b);
		m->u.hello.pid = imc_get32(b + 4);
		if (imc_get16(b + 2))
			return -EPROTO;
		return get_str(b + 8, IMC_MCASTD_COMMLEN, m->u.hello.comm);
	case MCD_WELCOME:
		m->u.welcome.version = imc_get16(b);
		m->u.welcome.client_id = imc_get32(b + 4);
		return imc_get16(b + 2) ? -EPROTO : 0;
	case MCD_JOIN:
		return dec_join(m, b);
	case MCD_LEAVE:
	case MCD_REVOKE_ACK:
		m->u.leave.handle = imc_get64(b);
		return 0;
	case MCD_EVENT:
		m->u.event.handle = imc_get64(b);
		m->u.event.ev = b[8];
		m->u.event.state = b[9];
		m->u.event.status = (int32_t)imc_get32(b + 12);
		if (b[8] > IMC_MCAST_EV_WAITING || b[9] > IMC_MCAST_FAILED ||
		    imc_get16(b + 10))
			return -EPROTO;
		return get_mcmr(b + 16, &m->u.event.rec);
	case MCD_REVOKE:
		m->u.revoke.handle = imc_get64(b);
		m->u.revoke.status = (int32_t)imc_get32(b + 8);
		return imc_get32(b + 12) ? -EPROTO : 0;
	case MCD_SHOW:
	case MCD_SHOW_END:
		m->u.show.id = imc_get32(b);
		m->u.show.status = (int32_t)imc_get32(b + 4);
		return m->type == MCD_SHOW && m->u.show.status ? -EPROTO : 0;
	case MCD_SHOW_PORT:
		m->u.show_port.id = imc_get32(b);
		m->u.show_port.port.port_num = b[4];
		if (!zero(b + 5, 3))
			return -EPROTO;
		memcpy(m->u.show_port.port.gid.raw, b + 8, 16);
		return get_str(b + 24, IMC_MCASTD_DEVLEN,
			       m->u.show_port.port.device);
	case MCD_SHOW_GROUP: {
		struct imc_mcastd_show_group *g = &m->u.show_group.g;

		m->u.show_group.id = imc_get32(b);
		memcpy(g->port_gid.raw, b + 4, 16);
		memcpy(g->mgid.raw, b + 20, 16);
		g->mlid = imc_get16(b + 36);
		g->join_state = b[38];
		g->wanted = b[39];
		g->members = imc_get32(b + 40);
		if (g->join_state > 0xf || g->wanted > 0xf || b[44] > 1 ||
		    !zero(b + 45, 3))
			return -EPROTO;
		g->joined = b[44];
		return 0;
	}
	}
	return -EPROTO;
}

int mcd_decode(struct mcd_msg *m, const uint8_t *buf, size_t len)
{
	size_t n;
	int r;

	r = mcd_frame(buf, len, len);
	if (r <= 0 || (size_t)r != len)
		return r < 0 ? r : -EPROTO;
	memset(m, 0, sizeof(*m));
	m->type = imc_get16(buf + 4);
	n = len - MCD_HDR;
	if (m->type == MCD_REFUSE) {
		if (n < body_size[MCD_REFUSE])
			return -EPROTO;
		return dec_refuse(m, buf + MCD_HDR, n);
	}
	if (m->type == MCD_SHOW_CLIENT) {
		if (n < body_size[MCD_SHOW_CLIENT])
			return -EPROTO;
		return dec_show_client(m, buf + MCD_HDR, n);
	}
	if (n != body_size[m->type])
		return -EPROTO;
	return dec_fixed(m, buf + MCD_HDR);
}

size_t mcd_size(const struct mcd_msg *m)
{
	size_t n = MCD_HDR + body_size[m->type];

	if (m->type == MCD_REFUSE)
		n += strnlen(m->u.refuse.text, MCD_TEXT_MAX);
	else if (m->type == MCD_SHOW_CLIENT)
		n += m->u.show_client.cl.n_members * MCD_SHOW_MEMBER;
	return n;
}

static void enc_show_member(uint8_t *p, const struct imc_mcastd_show_member *o)
{
	imc_put64(p, o->handle);
	memcpy(p + 8, o->port_gid.raw, 16);
	memcpy(p + 24, o->mgid.raw, 16);
	p[40] = o->join_state;
	p[41] = (uint8_t)o->state;
	imc_put16(p + 42, 0);
	imc_put32(p + 44, (uint32_t)o->status);
}

static void enc_body(const struct mcd_msg *m, uint8_t *b)
{
	switch (m->type) {
	case MCD_HELLO:
		imc_put16(b, m->u.hello.version);
		imc_put32(b + 4, m->u.hello.pid);
		put_str(b + 8, IMC_MCASTD_COMMLEN, m->u.hello.comm);
		break;
	case MCD_WELCOME:
		imc_put16(b, m->u.welcome.version);
		imc_put32(b + 4, m->u.welcome.client_id);
		break;
	case MCD_REFUSE:
		imc_put32(b, (uint32_t)m->u.refuse.status);
		imc_put16(b + 4, m->u.refuse.version);
		memcpy(b + 8, m->u.refuse.text,
		       strnlen(m->u.refuse.text, MCD_TEXT_MAX));
		break;
	case MCD_JOIN:
		imc_put64(b, m->u.join.handle);
		memcpy(b + 8, m->u.join.port.gid.raw, 16);
		put_str(b + 24, IMC_MCASTD_DEVLEN, m->u.join.port.device);
		b[56] = m->u.join.port.port_num;
		b[57] = m->u.join.req.join_state;
		imc_put64(b + 60, m->u.join.req.comp_mask);
		imc_mcmr_pack(&m->u.join.req.rec, b + 68, MCD_MCMR);
		break;
	case MCD_LEAVE:
	case MCD_REVOKE_ACK:
		imc_put64(b, m->u.leave.handle);
		break;
	case MCD_EVENT:
		imc_put64(b, m->u.event.handle);
		b[8] = m->u.event.ev;
		b[9] = m->u.event.state;
		imc_put32(b + 12, (uint32_t)m->u.event.status);
		imc_mcmr_pack(&m->u.event.rec, b + 16, MCD_MCMR);
		break;
	case MCD_REVOKE:
		imc_put64(b, m->u.revoke.handle);
		imc_put32(b + 8, (uint32_t)m->u.revoke.status);
		break;
	case MCD_SHOW:
	case MCD_SHOW_END:
		imc_put32(b, m->u.show.id);
		imc_put32(b + 4, (uint32_t)m->u.show.status);
		break;
	case MCD_SHOW_PORT:
		imc_put32(b, m->u.show_port.id);
		b[4] = m->u.show_port.port.port_num;
		memcpy(b + 8, m->u.show_port.port.gid.raw, 16);
		put_str(b + 24, IMC_MCASTD_DEVLEN, m->u.show_port.port.device);
		break;
	case MCD_SHOW_CLIENT: {
		const struct imc_mcastd_show_client *c = &m->u.show_client.cl;

		imc_put32(b, m->u.show_client.id);
		imc_put32(b + 4, c->pid);
		imc_put32(b + 8, c->uid);
		imc_put32(b + 12, c->gid);
		b[16] = c->self;
		put_str(b + 20, IMC_MCASTD_COMMLEN, c->comm);
		imc_put32(b + 36, (uint32_t)c->n_members);
		for (size_t i = 0; i < c->n_members; i++)
			enc_show_member(b + 40 + i * MCD_SHOW_MEMBER,
					&c->members[i]);
		break;
	}
	case MCD_SHOW_GROUP: {
		const struct imc_mcastd_show_group *g = &m->u.show_group.g;

		imc_put32(b, m->u.show_group.id);
		memcpy(b + 4, g->port_gid.raw, 16);
		memcpy(b + 20, g->mgid.raw, 16);
		imc_put16(b + 36, g->mlid);
		b[38] = g->join_state;
		b[39] = g->wanted;
		imc_put32(b + 40, g->members);
		b[44] = g->joined;
		break;
	}
	}
}

size_t mcd_encode(const struct mcd_msg *m, uint8_t *buf)
{
	size_t n = mcd_size(m);

	memset(buf, 0, n);
	imc_put32(buf, (uint32_t)n);
	imc_put16(buf + 4, m->type);
	enc_body(m, buf + MCD_HDR);
	return n;
}

uint8_t *mcd_buf_reserve(struct mcd_buf *b, size_t n)
{
	if (b->off && b->off == b->len)
		b->off = b->len = 0;
	if (b->cap - b->len < n && b->off) {
		memmove(b->p, b->p + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
	}
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *p;

		while (cap - b->len < n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return NULL;
		b->p = p;
		b->cap = cap;
	}
	return b->p + b->len;
}

int mcd_buf_put(struct mcd_buf *b, const struct mcd_msg *m)
{
	uint8_t *p = mcd_buf_reserve(b, mcd_size(m));

	if (!p)
		return -ENOMEM;
	b->len += mcd_encode(m, p);
	return 0;
}

void mcd_buf_consume(struct mcd_buf *b, size_t n)
{
	b->off += n;
	if (b->off == b->len)
		b->off = b->len = 0;
}

int mcd_buf_send(struct mcd_buf *b, int fd)
{
	while (mcd_buf_used(b)) {
		ssize_t n = send(fd, b->p + b->off, mcd_buf_used(b),
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return -EAGAIN;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		mcd_buf_consume(b, (size_t)n);
	}
	return 0;
}

void mcd_buf_free(struct mcd_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
