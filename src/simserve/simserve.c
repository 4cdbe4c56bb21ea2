/* The ibsim-protocol server: sockets, the client table, packet queues
 * and flow control (see ibmcast/simserve.h).
 *
 * Client states (one per slot, changed by client_set_state()):
 *
 *   from \ to   FREE        ATTACHED
 *   FREE        -           CONNECT accepted
 *   ATTACHED    DISCONNECT, -
 *               the client's socket is gone, or the server stops
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "simserve/simserve_int.h"
#include "util/config.h"
#include "util/vec.h"

enum {
	BATCH = 32,                   /* datagrams per recvmmsg/sendmmsg */
	/* Reads of one client per loop round: a client that writes fast
	 * must not starve the others. */
	ROUND_BUDGET = 4,
	DEFAULT_QUEUE_LIMIT = 4096,
	DEFAULT_HIGH_WATER = 16384,
	OFF_TID = 8,                  /* MAD TransactionID (IBA 13.4.2) */
	OFF_METHOD = 3,
};

/* A client that has not taken a packet for this long while reads are
 * paused loses its queue, so that one stopped process cannot stall the
 * others. */
#define STALL_NS (200 * IMC_NSEC_PER_MSEC)

void imc_simserve_config_init(struct imc_simserve_config *c)
{
	memset(c, 0, sizeof(*c));
	c->default_node = IMC_TOPO_NONE;
}

/* ---- client state ---- */

static void client_set_state(struct ss_client *c, enum ss_client_state to)
{
	/* Every transition of the table in the header comment flips the
	 * state; anything else is a bug in this file. */
	if (c->state == to)
		abort();
	c->state = to;
}

struct ss_client *ss_client_get(struct imc_simserve *s, uint32_t slot)
{
	if (slot >= s->ncl || !s->cl[slot] ||
	    s->cl[slot]->state != SS_CLIENT_ATTACHED)
		return NULL;
	return s->cl[slot];
}

static void update_watch(struct ss_client *c)
{
	unsigned ev = 0;

	if (c->state != SS_CLIENT_ATTACHED)
		return;
	if (!c->s->paused)
		ev |= IMC_EV_READ;
	if (c->qlen)
		ev |= IMC_EV_WRITE;
	if (ev == c->watch_ev)
		return;
	if (!ev)
		imc_loop_unwatch_fd(c->s->loop, &c->w);
	else if (imc_loop_watch_fd(c->s->loop, &c->w, ev) < 0)
		ev = 0;
	c->watch_ev = ev;
}

static void update_all_watches(struct imc_simserve *s)
{
	for (uint32_t i = 0; i < s->ncl; i++)
		if (s->cl[i])
			update_watch(s->cl[i]);
}

/* Reads pause above the high-water mark and resume below half of it. */
static void check_pressure(struct imc_simserve *s)
{
	if (!s->paused && s->st.queued > s->high_water) {
		s->paused = true;
		s->st.pauses++;
		update_all_watches(s);
		imc_timer_arm_in(s->loop, &s->stall, STALL_NS);
	} else if (s->paused && s->st.queued <= s->high_water / 2) {
		s->paused = false;
		imc_timer_cancel(s->loop, &s->stall);
		update_all_watches(s);
	}
}

static void queue_drop_all(struct ss_client *c)
{
	c->s->st.pkts_dropped += c->qlen;
	c->s->st.queued -= c->qlen;
	c->qlen = 0;
	c->qhead = 0;
}

/* Sends what the socket takes; returns false when the client is gone. */
static bool flush(struct ss_client *c)
{
	struct imc_simserve *s = c->s;
	struct mmsghdr mh[BATCH];
	struct iovec iov[BATCH];

	while (c->qlen) {
		unsigned n = 0;
		int r;

		for (size_t i = c->qhead; n < BATCH && n < c->qlen; n++) {
			iov[n].iov_base = c->q[i];
			iov[n].iov_len = IMC_IBSIM_REQ_SIZE;
			memset(&mh[n], 0, sizeof(mh[n]));
			mh[n].msg_hdr.msg_iov = &iov[n];
			mh[n].msg_hdr.msg_iovlen = 1;
			i = (i + 1) % c->qcap;
		}
		r = sendmmsg(c->fd, mh, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR ||
			    errno == ENOBUFS)
				break;
			/* ECONNREFUSED: the client's socket is gone, as when
			 * a process dies without DISCONNECT. */
			queue_drop_all(c);
			ss_client_detach(c);
			return false;
		}
		s->st.tx_batches++;
		s->st.pkts_out += (unsigned)r;
		s->st.queued -= (unsigned)r;
		c->qhead = (c->qhead + (unsigned)r) % c->qcap;
		c->qlen -= (unsigned)r;
		if ((unsigned)r < n)
			break;
	}
	if (!c->qlen)
		c->qhead = 0;
	update_watch(c);
	return true;
}

static int queue_grow(struct ss_client *c)
{
	size_t cap = c->qcap ? c->qcap * 2 : 16;

	if (cap > c->s->queue_limit)
		cap = c->s->queue_limit;
	if (cap <= c->qcap)
		return -ENOSPC;
	if (imc_ring_grow(&c->q, sizeof(*c->q), c->qhead, c->qlen, c->qcap,
			  cap))
		return -ENOMEM;
	c->qcap = cap;
	c->qhead = 0;
	return 0;
}

void ss_client_queue(struct ss_client *c, const uint8_t *pkt)
{
	struct imc_simserve *s = c->s;

	if (c->state != SS_CLIENT_ATTACHED)
		return;
	if (c->qlen == c->qcap && queue_grow(c) < 0) {
		/* Full: the oldest goes, as a full receive queue drops. */
		c->qhead = (c->qhead + 1) % c->qcap;
		c->qlen--;
		s->st.queued--;
		s->st.pkts_dropped++;
	}
	memcpy(c->q[(c->qhead + c->qlen) % c->qcap], pkt, IMC_IBSIM_REQ_SIZE);
	c->qlen++;
	s->st.queued++;
	if (s->st.queued > s->st.queued_max)
		s->st.queued_max = s->st.queued;
	if (c->qlen == 1)
		flush(c);
	else
		update_watch(c);
	check_pressure(s);
}

/* ---- packets from clients ---- */

/* ibsim's answer to what it cannot deliver: the packet back to its
 * sender with status 110 (ETIMEDOUT, sim_mad.c). */
static void bounce(struct ss_client *c, uint8_t *pkt)
{
	ss_put32(pkt + 16, htonl(IMC_IBSIM_STATUS_NO_ROUTE));
	c->s->st.pkts_unrouted++;
	ss_client_queue(c, pkt);
}

void ss_client_input(struct ss_client *c, uint8_t *pkt, size_t len)
{
	struct imc_simserve *s = c->s;
	uint8_t *mad = pkt + IMC_IBSIM_MAD_OFFSET;
	uint64_t tid;

	s->st.pkts_in++;
	/* Base version 1 (IBA 13.4.2); ibsim drops anything else. */
	if (len != IMC_IBSIM_REQ_SIZE || mad[0] != 1) {
		s->st.pkts_bad++;
		return;
	}
	if (!(mad[OFF_METHOD] & 0x80)) {
		/* A request: the slot goes into TID bits 48-63 so that the
		 * response finds its way back (ibsim does the same). */
		memcpy(&tid, mad + OFF_TID, 8);
		tid = be64toh(tid);
		tid = (tid & 0xffffffffffffull) | ((uint64_t)c->slot << 48);
		tid = htobe64(tid);
		memcpy(mad + OFF_TID, &tid, 8);
	}
	if (ss_agent_send(c, pkt) < 0)
		bounce(c, pkt);
}

/* One receive slot of a recvmmsg() batch: buf, and the sender's name when
 * from is given. */
static void mmsg_slot(struct mmsghdr *mh, struct iovec *iov, void *buf,
		      size_t size, struct sockaddr_un *from)
{
	iov->iov_base = buf;
	iov->iov_len = size;
	memset(mh, 0, sizeof(*mh));
	mh->msg_hdr.msg_iov = iov;
	mh->msg_hdr.msg_iovlen = 1;
	if (from) {
		mh->msg_hdr.msg_name = from;
		mh->msg_hdr.msg_namelen = sizeof(*from);
	}
}

static void client_cb(struct imc_fd_watch *w, unsigned events)
{
	struct ss_client *c = imc_container_of(w, struct ss_client, w);
	struct imc_simserve *s = c->s;
	uint8_t bufs[BATCH][IMC_IBSIM_REQ_SIZE];
	struct mmsghdr mh[BATCH];
	struct iovec iov[BATCH];
	uint32_t slot = c->slot;

	if ((events & (IMC_EV_WRITE | IMC_EV_ERROR)) && !flush(c))
		return;
	for (int round = 0; round < ROUND_BUDGET && !s->paused; round++) {
		int r;

		for (unsigned i = 0; i < BATCH; i++)
			mmsg_slot(&mh[i], &iov[i], bufs[i], sizeof(bufs[i]),
				  NULL);
		r = recvmmsg(c->fd, mh, BATCH, MSG_DONTWAIT, NULL);
		if (r <= 0)
			break;
		s->st.rx_batches++;
		for (int i = 0; i < r; i++) {
			size_t len = mh[i].msg_hdr.msg_flags & MSG_TRUNC
					     ? 0 : mh[i].msg_len;

			/* Delivery may detach this very client (its own
			 * queue found dead): stop reading it then. */
			if (ss_client_get(s, slot) != c)
				return;
			ss_client_input(c, bufs[i], len);
		}
		if (r < BATCH)
			break;
	}
}

/* ---- attach and detach ---- */

static int slot_alloc(struct imc_simserve *s, uint32_t *slot)
{
	if (s->nfree) {
		*slot = s->free_slots[--s->nfree];
		return 0;
	}
	if (s->ncl >= IMC_SIMSERVE_MAX_CLIENTS)
		return -ENOSPC;
	if (s->ncl == s->clcap) {
		uint32_t cap = s->clcap ? s->clcap * 2 : 16;

		if (IMC_VEC_RESIZE(&s->cl, cap) ||
		    IMC_VEC_RESIZE(&s->free_slots, cap))
			return -ENOMEM;
		s->clcap = cap;
	}
	s->cl[s->ncl] = NULL;
	*slot = s->ncl++;
	return 0;
}

static int node_join(struct imc_simserve *s, struct ss_client *c)
{
	struct ss_node *n = s->nodes[c->node];
	int r;

	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->nodes[c->node] = n;
	}
	r = ss_agent_open(s, c);
	if (r < 0) {
		if (!n->clients) {
			free(n);
			s->nodes[c->node] = NULL;
		}
		return r;
	}
	if (c->issm && ss_set_issm(c, true) < 0) {
		ss_agent_close(c);
		return -EBUSY;
	}
	c->node_next = n->clients;
	n->clients = c;
	return 0;
}

static void node_leave(struct imc_simserve *s, struct ss_client *c)
{
	struct ss_node *n = s->nodes[c->node];
	struct ss_client **pp;

	if (!n)
		return;
	for (pp = &n->clients; *pp; pp = &(*pp)->node_next) {
		if (*pp == c) {
			*pp = c->node_next;
			break;
		}
	}
	ss_agent_close(c);
	if (!n->clients) {
		free(n);
		s->nodes[c->node] = NULL;
	}
}

static int client_open_socket(struct imc_simserve *s, struct ss_client *c)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int r;

	if (fd < 0)
		return -errno;
	r = imc_ibsim_name_op(fd, true, s->base, "out", (long)c->slot);
	/* The client bound "in<id>" before it sent CONNECT. */
	if (!r)
		r = imc_ibsim_name_op(fd, false, s->base, "in", (long)c->id);
	if (r < 0) {
		close(fd);
		return r;
	}
	c->fd = fd;
	imc_fd_watch_init(&c->w, fd, client_cb);
	return 0;
}

int ss_client_attach(struct imc_simserve *s, uint32_t id, uint32_t node,
		     uint32_t qp, bool issm, const struct sockaddr_un *from,
		     socklen_t fromlen, struct ss_client **out)
{
	const struct imc_topo_node *tn = &s->topo->node[node];
	struct ss_client *c;
	uint32_t slot;
	int r;

	r = slot_alloc(s, &slot);
	if (r < 0)
		return r;
	c = s->cl[slot];
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c) {
			s->free_slots[s->nfree++] = slot;
			return -ENOMEM;
		}
		c->s = s;
		c->slot = slot;
		c->state = SS_CLIENT_FREE;
		s->cl[slot] = c;
	}
	c->id = id;
	c->qp = qp;
	c->issm = issm;
	c->node = node;
	/* ibsim attaches to port 0 of a switch, the first port of a CA. */
	c->port = tn->type == IMC_NODE_SWITCH ? 0 : 1;
	memcpy(&c->ctl_addr, from, fromlen);
	c->ctl_len = fromlen;
	c->watch_ev = 0;
	r = client_open_socket(s, c);
	if (r == 0) {
		r = node_join(s, c);
		if (r < 0)
			close(c->fd);
	}
	if (r < 0) {
		s->free_slots[s->nfree++] = slot;
		return r;
	}
	client_set_state(c, SS_CLIENT_ATTACHED);
	s->st.connects++;
	if (++s->st.clients > s->st.clients_max)
		s->st.clients_max = s->st.clients;
	update_watch(c);
	if (s->log) {
		fprintf(s->log, "attach slot %u id %u node %s port %u issm %d\n",
			slot, id, tn->name, c->port, issm);
		fflush(s->log);
	}
	*out = c;
	return 0;
}

void ss_client_detach(struct ss_client *c)
{
	struct imc_simserve *s = c->s;

	if (c->state != SS_CLIENT_ATTACHED)
		return;
	/* ibsim takes IsSM back from a client that goes (disconnect_client):
	 * the SM on that port is gone. */
	if (c->issm)
		ss_set_issm(c, false);
	imc_loop_unwatch_fd(s->loop, &c->w);
	c->watch_ev = 0;
	close(c->fd);
	c->fd = -1;
	queue_drop_all(c);
	node_leave(s, c);
	client_set_state(c, SS_CLIENT_FREE);
	s->free_slots[s->nfree++] = c->slot;
	s->st.disconnects++;
	s->st.clients--;
	if (s->log) {
		fprintf(s->log, "detach slot %u\n", c->slot);
		fflush(s->log);
	}
	check_pressure(s);
}

/* A process that dies closes its "in<id>" socket; connecting to the
 * name again then fails. Connecting a datagram socket again to the same
 * peer changes nothing for a live one. */
static bool client_alive(struct ss_client *c)
{
	return imc_ibsim_name_op(c->fd, false, c->s->base, "in",
				 (long)c->id) == 0;
}

bool ss_node_sm_busy(struct imc_simserve *s, uint32_t node,
		     const struct ss_client *self)
{
	struct ss_client *c, *next;

	if (!s->nodes[node])
		return false;
	for (c = s->nodes[node]->clients; c; c = next) {
		next = c->node_next;
		if (c == self || !c->issm)
			continue;
		if (client_alive(c))
			return true;
		/* Detaching may free the node's entry with its last client. */
		ss_client_detach(c);
		return false;
	}
	return false;
}

/* ---- nodes by id ---- */

static int guid_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Node GUIDs and CA port GUIDs, sorted, for CONNECT by GUID: O(log n). */
static int guid_index(struct imc_simserve *s)
{
	const struct imc_topo *t = s->topo;
	uint64_t (*pairs)[2];
	uint32_t n = 0, cap = t->nnodes;

	for (uint32_t i = 0; i < t->nnodes; i++)
		if (t->node[i].type == IMC_NODE_HCA)
			cap += t->node[i].nports;
	pairs = calloc(cap ? cap : 1, sizeof(*pairs));
	s->guid_keys = calloc(cap ? cap : 1, sizeof(uint64_t));
	s->guid_nodes = calloc(cap ? cap : 1, sizeof(uint32_t));
	if (!pairs || !s->guid_keys || !s->guid_nodes) {
		free(pairs);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *tn = &t->node[i];

		pairs[n][0] = tn->guid;
		pairs[n++][1] = i;
		for (unsigned p = 1; tn->type == IMC_NODE_HCA &&
				     p <= tn->nports; p++) {
			pairs[n][0] = tn->port[p].guid;
			pairs[n++][1] = i;
		}
	}
	qsort(pairs, n, sizeof(*pairs), guid_cmp);
	for (uint32_t i = 0; i < n; i++) {
		s->guid_keys[i] = pairs[i][0];
		s->guid_nodes[i] = (uint32_t)pairs[i][1];
	}
	s->nguids = n;
	free(pairs);
	return 0;
}

/* ibsim finds a node by its name (the net file's quoted id); here also
 * by a node or CA port GUID written as 0x... */
int ss_node_lookup(const struct imc_simserve *s, const char *nodeid,
		   uint32_t *node)
{
	uint64_t g;
	char *end;
	uint32_t lo = 0, hi = s->nguids;

	if (imc_topo_find(s->topo, nodeid, node) == 0)
		return 0;
	if (strncmp(nodeid, "0x", 2) && strncmp(nodeid, "0X", 2))
		return -ENOENT;
	errno = 0;
	g = strtoull(nodeid, &end, 16);
	if (errno || *end || end == nodeid + 2)
		return -ENOENT;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->guid_keys[mid] < g)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= s->nguids || s->guid_keys[lo] != g)
		return -ENOENT;
	*node = s->guid_nodes[lo];
	return 0;
}

/* ---- the control socket ---- */

static void ctl_cb(struct imc_fd_watch *w, unsigned events)
{
	struct imc_simserve *s = imc_container_of(w, struct imc_simserve,
						  ctl_w);
	uint8_t bufs[BATCH][IMC_IBSIM_CTL_SIZE];
	struct sockaddr_un from[BATCH];
	struct mmsghdr mh[BATCH];
	struct iovec iov[BATCH];
	unsigned nout = 0;
	int r;

	for (unsigned i = 0; i < BATCH; i++)
		mmsg_slot(&mh[i], &iov[i], bufs[i], sizeof(bufs[i]), &from[i]);
	r = recvmmsg(s->ctl, mh, BATCH, MSG_DONTWAIT, NULL);
	if (r <= 0)
		return;
	for (int i = 0; i < r; i++) {
		bool ok = mh[i].msg_len == IMC_IBSIM_CTL_SIZE &&
			  !(mh[i].msg_hdr.msg_flags & MSG_TRUNC) &&
			  mh[i].msg_hdr.msg_namelen > sizeof(sa_family_t);

		/* Unnamed senders cannot be answered; short ones are not
		 * ibsim's protocol. */
		if (!ok || !ss_ctl_handle(s, bufs[i], &from[i],
					  mh[i].msg_hdr.msg_namelen))
			continue;
		if (nout != (unsigned)i) {
			memcpy(bufs[nout], bufs[i], IMC_IBSIM_CTL_SIZE);
			from[nout] = from[i];
			mh[nout].msg_hdr.msg_namelen =
				mh[i].msg_hdr.msg_namelen;
		}
		mh[nout].msg_hdr.msg_flags = 0;
		nout++;
	}
	/* The client waits for its answer in read(), so its queue has room;
	 * an answer that cannot go is lost and the client's read times out. */
	if (nout)
		(void)sendmmsg(s->ctl, mh, nout, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void stall_cb(struct imc_timer *t)
{
	struct imc_simserve *s = imc_container_of(t, struct imc_simserve,
						  stall);

	/* Reads have been paused for STALL_NS: whoever still holds a
	 * queue is not reading it. */
	for (uint32_t i = 0; i < s->ncl; i++) {
		struct ss_client *c = s->cl[i];

		if (c && c->state == SS_CLIENT_ATTACHED && c->qlen &&
		    flush(c) && c->qlen) {
			queue_drop_all(c);
			update_watch(c);
		}
	}
	check_pressure(s);
	if (s->paused)
		imc_timer_arm_in(s->loop, &s->stall, STALL_NS);
}

int imc_simserve_create(struct imc_fabric *f, struct imc_loop *loop,
			const struct imc_simserve_config *cfg,
			struct imc_simserve **out)
{
	struct imc_simserve_config dc;
	const char *base;
	struct imc_simserve *s;
	int r;

	if (!f || !loop || !out)
		return -EINVAL;
	if (imc_loop_is_virtual(loop))
		return -EOPNOTSUPP;
	cfg = IMC_CONFIG_OR_DEFAULT(cfg, dc, imc_simserve_config_init);
	base = cfg->sockname ? cfg->sockname : getenv("IBSIM_SOCKNAME");
	if (!base || !*base)
		base = "sim";
	if (strlen(base) >= sizeof(s->base))
		return -ENAMETOOLONG;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->f = f;
	s->loop = loop;
	s->topo = imc_fabric_topo(f);
	s->ctl = -1;
	strcpy(s->base, base);
	s->queue_limit = cfg->queue_limit ? cfg->queue_limit
					  : DEFAULT_QUEUE_LIMIT;
	s->high_water = cfg->high_water ? cfg->high_water : DEFAULT_HIGH_WATER;
	s->default_node = cfg->default_node;
	s->log = cfg->log;
	if (s->default_node >= s->topo->nnodes)
		s->default_node = s->topo->sm_node < s->topo->nnodes
					  ? s->topo->sm_node : 0;
	imc_timer_init(&s->stall, stall_cb);
	r = -EINVAL;
	if (!s->topo->nnodes)
		goto fail;
	r = -ENOMEM;
	s->nodes = calloc(s->topo->nnodes, sizeof(*s->nodes));
	if (!s->nodes || guid_index(s) < 0)
		goto fail;
	s->ctl = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	r = -errno;
	if (s->ctl < 0)
		goto fail;
	r = imc_ibsim_name_op(s->ctl, true, s->base, "ctl", -1);
	if (r < 0)
		goto fail;
	imc_fd_watch_init(&s->ctl_w, s->ctl, ctl_cb);
	r = imc_loop_watch_fd(loop, &s->ctl_w, IMC_EV_READ);
	if (r < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	imc_simserve_destroy(s);
	return r;
}

void imc_simserve_destroy(struct imc_simserve *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->ncl; i++) {
		if (s->cl[i]) {
			ss_client_detach(s->cl[i]);
			free(s->cl[i]->q);
			free(s->cl[i]);
		}
	}
	imc_timer_cancel(s->loop, &s->stall);
	if (s->ctl >= 0) {
		imc_loop_unwatch_fd(s->loop, &s->ctl_w);
		close(s->ctl);
	}
	free(s->cl);
	free(s->free_slots);
	free(s->nodes);
	free(s->guid_keys);
	free(s->guid_nodes);
	free(s);
}

const char *imc_simserve_sockname(const struct imc_simserve *s)
{
	return s->base;
}

void imc_simserve_get_stats(const struct imc_simserve *s,
			    struct imc_simserve_stats *st)
{
	*st = s->st;
}
