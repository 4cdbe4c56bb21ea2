/* ibsim's client protocol (see ibsim_int.h).
 *
 * Connection states: open() returns a client that ibsim has attached
 * (slot known, packet socket connected, IsSM set when asked) or nothing;
 * close() detaches it. There is no state in between to track.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ibmcast/gid.h"
#include "ibmcast/mad.h"
#include "ibmcast/sa_records.h"
#include "umad/ibsim_int.h"

enum {
	CTL_TIMEOUT_MS = 2000,       /* ibsim answers at once or is gone */
	ID_TRIES = 8,
	/* Client ids are pid + n * 2^22 (pids stay below 2^22), n >= 1:
	 * umad2sim in the same process would take the bare pid. */
	ID_SHIFT = 22,
	ID_MAX_N = 500,
	/* struct sim_request field offsets */
	OFF_DLID = 0,
	OFF_SLID = 4,
	OFF_DQP = 8,
	OFF_SQP = 12,
	OFF_STATUS = 16,
	OFF_LENGTH = 24,
	/* struct sim_client_info: id, qp, issm, nodeid[32] */
	INFO_SIZE = 12 + IMC_IBSIM_NODEID_LEN,
};

struct imc_ibsim {
	int ctl;
	int data;
	uint32_t slot;
	bool issm;
};

/* ---- wire ---- */

/* The five header words are the host's uint32_t holding values that
 * ibsim and umad2sim wrote with htons()/htonl(). */
static void put_host32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint32_t get_host32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

void imc_ibsim_pkt_write(uint8_t out[IMC_IBSIM_REQ_SIZE],
			 const struct imc_ibsim_pkt *p)
{
	size_t len = p->len > IMC_MAD_SIZE ? IMC_MAD_SIZE : p->len;
	uint64_t be_len = htobe64((uint64_t)len);

	memset(out, 0, IMC_IBSIM_MAD_OFFSET);
	put_host32(out + OFF_DLID, htons(p->dlid));
	put_host32(out + OFF_SLID, htons(p->slid));
	put_host32(out + OFF_DQP, htonl(p->dqp));
	put_host32(out + OFF_SQP, htonl(p->sqp));
	put_host32(out + OFF_STATUS, htonl(p->status));
	memcpy(out + OFF_LENGTH, &be_len, sizeof(be_len));
	memcpy(out + IMC_IBSIM_MAD_OFFSET, p->mad, len);
	memset(out + IMC_IBSIM_MAD_OFFSET + len, 0, IMC_MAD_SIZE - len);
}

void imc_ibsim_pkt_pack(uint8_t out[IMC_IBSIM_REQ_SIZE], uint16_t dlid,
			uint32_t dqp, const uint8_t *mad, size_t len)
{
	/* SLID 0: ibsim fills in the sending port's LID (sim_mad.c). */
	const struct imc_ibsim_pkt p = { dlid, dlid == 0xffff ? 0xffff : 0,
					 dqp, IMC_UMAD_QP1, 0, len, mad };

	imc_ibsim_pkt_write(out, &p);
}

int imc_ibsim_pkt_unpack(struct imc_ibsim_pkt *p, const uint8_t *buf,
			 size_t n)
{
	uint64_t be_len, len;

	if (n != IMC_IBSIM_REQ_SIZE)
		return -EBADMSG;
	p->dlid = ntohs((uint16_t)get_host32(buf + OFF_DLID));
	p->slid = ntohs((uint16_t)get_host32(buf + OFF_SLID));
	p->dqp = ntohl(get_host32(buf + OFF_DQP)) & 0xffffff;
	p->sqp = ntohl(get_host32(buf + OFF_SQP)) & 0xffffff;
	p->status = ntohl(get_host32(buf + OFF_STATUS));
	memcpy(&be_len, buf + OFF_LENGTH, sizeof(be_len));
	len = be64toh(be_len);
	p->len = len && len <= IMC_MAD_SIZE ? (size_t)len : IMC_MAD_SIZE;
	p->mad = buf + IMC_IBSIM_MAD_OFFSET;
	return 0;
}

void imc_ibsim_ctl_pack(uint8_t out[IMC_IBSIM_CTL_SIZE], uint32_t client,
			uint32_t type, const void *data, size_t len)
{
	if (len > IMC_IBSIM_CTL_DATA)
		len = IMC_IBSIM_CTL_DATA;
	memset(out, 0, IMC_IBSIM_CTL_SIZE);
	put_host32(out, IMC_IBSIM_MAGIC);
	put_host32(out + IMC_IBSIM_CTL_OFF_CLIENT, client);
	put_host32(out + IMC_IBSIM_CTL_OFF_TYPE, type);
	put_host32(out + IMC_IBSIM_CTL_OFF_LEN, (uint32_t)len);
	if (len)
		memcpy(out + IMC_IBSIM_CTL_OFF_DATA, data, len);
}

int imc_ibsim_ctl_unpack(const uint8_t *buf, size_t n, const uint8_t **data)
{
	if (n != IMC_IBSIM_CTL_SIZE || get_host32(buf) != IMC_IBSIM_MAGIC)
		return -EBADMSG;
	if (get_host32(buf + IMC_IBSIM_CTL_OFF_TYPE) == IMC_IBSIM_CTL_ERROR)
		return -EREMOTEIO;
	*data = buf + IMC_IBSIM_CTL_OFF_DATA;
	return 0;
}

int imc_ibsim_sockaddr(struct sockaddr_un *a, const char *base,
		       const char *what, long num)
{
	size_t room = sizeof(a->sun_path) - 2;
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	/* sun_path[0] = 0: the abstract namespace. */
	if (num >= 0)
		n = snprintf(a->sun_path + 1, room + 1, "%s:%s%ld", base, what,
			     num);
	else
		n = snprintf(a->sun_path + 1, room + 1, "%s:%s", base, what);
	if (n < 0 || (size_t)n > room)
		return -ENAMETOOLONG;
	/* The leading NUL, the name and ibsim's trailing NUL. */
	return (int)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n + 1);
}

int imc_ibsim_name_op(int fd, bool bind_it, const char *base,
		      const char *what, long num)
{
	struct sockaddr_un a;
	int alen = imc_ibsim_sockaddr(&a, base, what, num);
	int r;

	if (alen < 0)
		return alen;
	r = bind_it ? bind(fd, (struct sockaddr *)&a, (socklen_t)alen)
		    : connect(fd, (struct sockaddr *)&a, (socklen_t)alen);
	return r < 0 ? -errno : 0;
}

/* ---- the connection ---- */

static int ctl_call(struct imc_ibsim *s, uint32_t type, void *data,
		    size_t len)
{
	uint8_t buf[IMC_IBSIM_CTL_SIZE];
	const uint8_t *reply;
	ssize_t n;
	int r;

	imc_ibsim_ctl_pack(buf, s->slot, type, data, len);
	if (send(s->ctl, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		return -errno ? -errno : -EIO;
	n = recv(s->ctl, buf, sizeof(buf), 0);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	r = imc_ibsim_ctl_unpack(buf, (size_t)n, &reply);
	if (r < 0)
		return r;
	if (len)
		memcpy(data, reply, len);
	return 0;
}


/* Binds both sockets under a client id nobody in this process uses. */
static int bind_id(struct imc_ibsim *s, const char *base, long *id)
{
	static atomic_uint next = 1;
	long pid = (long)getpid();

	for (int i = 0; i < ID_TRIES; i++) {
		unsigned n = atomic_fetch_add(&next, 1) % ID_MAX_N + 1;
		int r;

		*id = pid + ((long)n << ID_SHIFT);
		r = imc_ibsim_name_op(s->ctl, true, base, "ctl", *id);
		if (r == -EADDRINUSE)
			continue;
		if (r < 0)
			return r;
		/* ibsim connects to "in<id>" while it handles CONNECT. */
		return imc_ibsim_name_op(s->data, true, base, "in", *id);
	}
	return -EADDRINUSE;
}

static void fill_port(struct imc_umad_port *p, const char *node,
		      const struct imc_node_info *ni,
		      const struct imc_port_info *pi)
{
	uint64_t guid = ni->node_guid;

	memset(p, 0, sizeof(*p));
	/* The node's name, cut to the CA name's size. */
	memcpy(p->device, node, strnlen(node, sizeof(p->device) - 1));
	p->port = pi->local_port;
	p->lid = pi->lid;
	p->lmc = pi->lmc;
	p->sm_lid = pi->master_sm_lid;
	p->sm_sl = pi->master_sm_sl;
	p->state = pi->state;
	/* A CA port's GUID is its node's plus the port number in ibsim, as
	 * umad2sim also reports it; a switch has one, port 0's. */
	if (ni->node_type != IMC_NODE_TYPE_SWITCH)
		guid += pi->local_port;
	imc_gid_set(&p->gid, pi->gid_prefix, guid);
}

/* Both sockets bound under a fresh id, the control one connected to
 * ibsim's. Returns 0, -ENODEV (no ibsim of that name) or -errno. */
static int sockets_open(struct imc_ibsim *s, const char *base, long *id)
{
	const struct timeval tmo = { CTL_TIMEOUT_MS / 1000,
				     CTL_TIMEOUT_MS % 1000 * 1000 };
	int r;

	s->ctl = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	s->data = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	r = -errno;
	if (s->ctl < 0 || s->data < 0)
		return r;
	r = bind_id(s, base, id);
	if (r < 0)
		return r;
	if (setsockopt(s->ctl, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)) <
	    0)
		return -errno;
	r = imc_ibsim_name_op(s->ctl, false, base, "ctl", -1);
	return r < 0 ? -ENODEV : 0;
}

/* The attached port as the caller sees it, and IsSM set on it when
 * asked. Returns 0 or -errno (-EIO for a reply that does not parse). */
static int port_query(struct imc_ibsim *s, bool issm, const char *attached,
		      struct imc_umad_port *port)
{
	uint8_t buf[IMC_IBSIM_CTL_DATA];
	struct imc_node_info ni;
	struct imc_port_info pi;
	uint32_t v;
	int r;

	memset(buf, 0, sizeof(buf));
	r = ctl_call(s, IMC_IBSIM_CTL_GET_NODEINFO, buf, sizeof(buf));
	if (r < 0 || imc_node_info_unpack(&ni, buf, sizeof(buf)) < 0)
		return r < 0 ? r : -EIO;
	memset(buf, 0, sizeof(buf));             /* port 0: the client's */
	r = ctl_call(s, IMC_IBSIM_CTL_GET_PORTINFO, buf, sizeof(buf));
	if (r < 0 || imc_port_info_unpack(&pi, buf, sizeof(buf)) < 0)
		return r < 0 ? r : -EIO;
	if (issm) {
		/* PortInfo:CapabilityMask.IsSM (IBA 14.2.5.6), as the issm
		 * device sets it. */
		v = 1;
		r = ctl_call(s, IMC_IBSIM_CTL_SET_ISSM, &v, sizeof(v));
		if (r < 0)
			return r;
		s->issm = true;
	}
	fill_port(port, attached, &ni, &pi);
	return 0;
}

int imc_ibsim_open(const struct imc_ibsim_config *cfg,
		   struct imc_umad_port *port, struct imc_ibsim **out)
{
	uint8_t info[INFO_SIZE];
	const char *base, *node, *remote;
	char attached[IMC_IBSIM_NODEID_LEN + 1];
	struct imc_ibsim *s;
	long id = 0;
	int r;

	if (!cfg || !port || !out)
		return -EINVAL;
	remote = getenv("IBSIM_SERVER_NAME");
	if (remote && *remote)
		return -ENODEV;     /* ibsim over TCP: not spoken here */
	base = cfg->sockname ? cfg->sockname : getenv("IBSIM_SOCKNAME");
	if (!base || !*base)
		base = "sim";
	node = cfg->node ? cfg->node : getenv("SIM_HOST");
	if (node && strlen(node) >= IMC_IBSIM_NODEID_LEN)
		return -ENAMETOOLONG;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->slot = 0;
	r = sockets_open(s, base, &id);
	if (r < 0)
		goto fail;

	memset(info, 0, sizeof(info));
	put_host32(info, (uint32_t)id);
	put_host32(info + 4, 0);                 /* qp: QP0/QP1 only */
	put_host32(info + 8, cfg->issm);
	if (node)
		memcpy(info + 12, node, strlen(node));
	r = ctl_call(s, IMC_IBSIM_CTL_CONNECT, info, sizeof(info));
	if (r < 0) {
		/* Unknown node, all slots taken, or an SM already there. */
		r = r == -EREMOTEIO ? -ENODEV : r;
		goto fail;
	}
	s->slot = get_host32(info);
	memcpy(attached, info + 12, IMC_IBSIM_NODEID_LEN);
	attached[IMC_IBSIM_NODEID_LEN] = 0;
	r = imc_ibsim_name_op(s->data, false, base, "out", (long)s->slot);
	if (r < 0)
		goto detach;

	r = port_query(s, cfg->issm, attached, port);
	if (r < 0)
		goto detach;
	*out = s;
	return 0;
detach:
	r = r < 0 ? r : -EIO;
	(void)ctl_call(s, IMC_IBSIM_CTL_DISCONNECT, NULL, 0);
fail:
	if (s->ctl >= 0)
		close(s->ctl);
	if (s->data >= 0)
		close(s->data);
	free(s);
	return r;
}

void imc_ibsim_close(struct imc_ibsim *s)
{
	uint32_t v = 0;

	if (!s)
		return;
	/* DISCONNECT frees the slot but leaves IsSM set on the port. */
	if (s->issm)
		(void)ctl_call(s, IMC_IBSIM_CTL_SET_ISSM, &v, sizeof(v));
	(void)ctl_call(s, IMC_IBSIM_CTL_DISCONNECT, NULL, 0);
	close(s->ctl);
	close(s->data);
	free(s);
}

int imc_ibsim_fd(const struct imc_ibsim *s)
{
	return s->data;
}

int imc_ibsim_recv(struct imc_ibsim *s, uint8_t (*bufs)[IMC_IBSIM_REQ_SIZE],
		   size_t *lens, unsigned n)
{
	struct mmsghdr mh[64];
	struct iovec iov[64];
	int r;

	if (n > 64)
		n = 64;
	for (unsigned i = 0; i < n; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = IMC_IBSIM_REQ_SIZE;
		memset(&mh[i], 0, sizeof(mh[i]));
		mh[i].msg_hdr.msg_iov = &iov[i];
		mh[i].msg_hdr.msg_iovlen = 1;
	}
	r = recvmmsg(s->data, mh, n, MSG_DONTWAIT, NULL);
	if (r < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	for (int i = 0; i < r; i++)
		/* A longer datagram was cut: it is not one of ibsim's. */
		lens[i] = mh[i].msg_hdr.msg_flags & MSG_TRUNC
				  ? 0 : mh[i].msg_len;
	return r;
}

int imc_ibsim_send(struct imc_ibsim *s,
		   const uint8_t (*bufs)[IMC_IBSIM_REQ_SIZE], unsigned n)
{
	struct mmsghdr mh[64];
	struct iovec iov[64];
	unsigned done = 0;

	while (done < n) {
		unsigned k = n - done > 64 ? 64 : n - done;
		int r;

		for (unsigned i = 0; i < k; i++) {
			iov[i].iov_base = (void *)bufs[done + i];
			iov[i].iov_len = IMC_IBSIM_REQ_SIZE;
			memset(&mh[i], 0, sizeof(mh[i]));
			mh[i].msg_hdr.msg_iov = &iov[i];
			mh[i].msg_hdr.msg_iovlen = 1;
		}
		r = sendmmsg(s->data, mh, k, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return done ? (int)done : -errno;
		}
		done += (unsigned)r;
	}
	return (int)done;
}
