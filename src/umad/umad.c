/* libibumad transport (see ibmcast/umad.h), and the same interface over
 * ibsim's own socket (IMC_UMAD_IBSIM, ibsim.c).
 *
 * States of the transport: open() either returns a fully registered,
 * receiving transport or nothing; close() tears it all down. The helper
 * thread (umad2sim only) has one flag, stop, set once by close().
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>

#include "ibmcast/mad.h"
#include "ibmcast/rmpp.h"
#include "ibmcast/umad.h"
#include "umad/ibsim_int.h"
#include "umad/umad_int.h"

enum {
	RECV_BATCH = 64,         /* MADs read per fd callback */
	SIM_BATCH = 64,          /* ibsim datagrams per recvmmsg/sendmmsg,
				  * more than the 32 requests a client may
				  * keep in flight at ibsim */
	SIM_ROUNDS = 4,          /* full batches per callback, then the
				  * loop's timers get their turn */
	QUEUE_MAX = 4096,        /* MADs the helper thread may hold */
	HELPER_POLL_MS = 50,     /* how soon the helper sees stop */
	/* The kernel matches an answer to its agent only while the request
	 * is outstanding (timeout_ms > 0, ib_mad.c find_send_wr); the SA
	 * client times out itself much sooner. */
	REQUEST_LIFETIME_MS = 10000,
	UMAD_BUF = 512,          /* >= umad_size() + IMC_MAD_SIZE */
	/* umad2sim's read path (umad2sim.c, umad2sim_read()) copies a MAD
	 * into a buffer of sizeof(struct sim_request), 288 bytes, after the
	 * 64-byte umad header: 224 bytes of it; yet it reports the sender's
	 * length and hands over 256 bytes, the last 32 from the heap beyond
	 * that buffer. */
	UMAD2SIM_VALID = 224,
};

_Static_assert(IMC_UMAD_NAME_LEN == UMAD_CA_NAME_LEN, "CA name length");

/* Receive modes of a descriptor the loop can watch:
 *
 *   from \ event     MADs read            none read on a poll tick
 *   WATCHING         POLLING (coalesce)   -
 *   POLLING          POLLING (re-armed)   WATCHING
 *
 * WATCHING: the loop wakes when a MAD arrives. POLLING (cfg->coalesce >
 * 0): the descriptor is not watched and a timer reads whatever arrived
 * every coalesce ns, so that a busy port costs one wake-up per batch
 * instead of one per MAD; the first empty tick goes back to WATCHING. */
enum rx_state { RX_WATCHING, RX_POLLING };

struct rx {
	struct rx *next;
	int status;
	size_t len;
	struct imc_umad_addr from;
	uint8_t mad[IMC_MAD_SIZE];
};

struct imc_umad {
	struct imc_loop *loop;
	enum imc_umad_mode mode;
	struct imc_umad_port port;
	int portid;
	int agent;             /* SA class agent */
	int smi_agents[2];     /* server under umad2sim: classes 0x01, 0x81 */
	int issm_fd;           /* server: the issm device, or -1 */
	bool reports;
	uint16_t sa_lid;       /* 0: the SM's */
	struct imc_fd_watch watch;
	/* fd-driven receive (kernel umad, ibsim's socket) */
	enum rx_state rx;
	imc_time_t coalesce;
	struct imc_timer poll_timer;
	imc_umad_recv_cb recv_cb;
	void *recv_arg;
	struct imc_sa_client *client;
	struct imc_umad_stats st;
	/* ibsim's socket: MADs sent during a loop round wait in txb and
	 * leave together, with one sendmmsg(), from flush_timer (armed at
	 * now, so it runs after the round's other callbacks: the SA
	 * engine answers a whole batch of requests in one of them). */
	struct imc_ibsim *sim;
	struct imc_timer flush_timer;
	unsigned ntx;
	uint8_t (*rxb)[IMC_IBSIM_REQ_SIZE];
	uint8_t (*txb)[IMC_IBSIM_REQ_SIZE];
	size_t rxlen[SIM_BATCH];
	/* helper thread (umad2sim) */
	bool threaded;
	pthread_t thread;
	atomic_bool stop;
	int efd;
	pthread_mutex_t lock;
	struct rx *head, *tail;
	size_t queued;
	uint64_t q_dropped, q_errors;
};

/* ---- helpers shared with the tests (umad_int.h) ---- */

void imc_umad_method_mask(enum imc_umad_mode mode, uint32_t mask[4])
{
	/* Client: Reports from the SA (IBA 13.4.6.4); answers come by TID.
	 * Server: the SA request methods (IBA 15.2.2 Table 200), so that
	 * requests addressed to this port reach us. */
	static const uint8_t client[] = { UMAD_METHOD_REPORT };
	static const uint8_t server[] = {
		UMAD_METHOD_GET, UMAD_METHOD_SET, UMAD_SA_METHOD_GET_TABLE,
		UMAD_SA_METHOD_GET_TRACE_TABLE, UMAD_SA_METHOD_GET_MULTI,
		UMAD_SA_METHOD_DELETE,
	};
	const uint8_t *m = mode == IMC_UMAD_SERVER ? server : client;
	size_t n = mode == IMC_UMAD_SERVER ? sizeof(server) : sizeof(client);

	memset(mask, 0, 4 * sizeof(mask[0]));
	for (size_t i = 0; i < n; i++)
		mask[m[i] / 32] |= 1u << (m[i] % 32);
}

unsigned imc_umad_send_timeout(const uint8_t *mad, size_t len)
{
	struct imc_rmpp_hdr r;

	if (len < IMC_MAD_HDR_SIZE + IMC_RMPP_HDR_SIZE)
		return 0;
	if (mad[3] & UMAD_METHOD_RESP_MASK)
		return 0;
	/* RMPP ACK, STOP and ABORT travel with the method of a request but
	 * nothing answers them. */
	if (mad[1] == UMAD_CLASS_SUBN_ADM &&
	    imc_rmpp_hdr_unpack(&r, mad + IMC_MAD_HDR_SIZE,
				IMC_RMPP_HDR_SIZE) > 0 &&
	    (r.flags & IMC_RMPP_FLAG_ACTIVE) && r.type != IMC_RMPP_TYPE_DATA)
		return 0;
	return REQUEST_LIFETIME_MS;
}

void imc_umad_addr_from_raw(struct imc_umad_addr *a, uint16_t lid_be,
			    uint32_t qpn_be, uint32_t qkey_be, uint8_t sl,
			    uint16_t pkey_index)
{
	a->lid = ntohs(lid_be);
	a->qpn = ntohl(qpn_be) & 0xffffff;
	a->qkey = ntohl(qkey_be);
	a->sl = sl;
	a->pkey_index = pkey_index;
}

/* ---- receive ---- */

static void deliver(struct imc_umad *u, const uint8_t *mad, size_t len,
		    int status, const struct imc_umad_addr *from)
{
	if (status) {
		/* One of our sends, given back: no answer in time (kernel)
		 * or no route (ibsim, status 110). The SA client's own
		 * timer deals with it. */
		u->st.returned++;
		return;
	}
	u->st.received++;
	if (u->threaded && len > UMAD2SIM_VALID) {
		if (u->client)
			(void)imc_sa_client_recv_cut(u->client, mad,
						     UMAD2SIM_VALID);
		else if (u->recv_cb)
			u->recv_cb(u->recv_arg, mad, UMAD2SIM_VALID, from);
		else
			u->st.dropped++;
		return;
	}
	if (u->client)
		(void)imc_sa_client_recv(u->client, mad, len);
	else if (u->recv_cb)
		u->recv_cb(u->recv_arg, mad, len, from);
	else
		u->st.dropped++;
}

/* Reads one MAD; returns 1, 0 when none is ready, or a negative errno. */
static int read_one(int portid, int timeout_ms, struct rx *out)
{
	uint8_t buf[UMAD_BUF] __attribute__((aligned(8)));
	ib_mad_addr_t *a;
	int len = IMC_MAD_SIZE;
	int r;

	memset(buf, 0, umad_size());
	r = umad_recv(portid, buf, &len, timeout_ms);
	if (r == -EWOULDBLOCK || r == -EAGAIN || r == -ETIMEDOUT)
		return 0;
	if (r < 0)
		return r;
	if (len < 0 || len > IMC_MAD_SIZE)
		return -EMSGSIZE;
	a = umad_get_mad_addr(buf);
	out->status = umad_status(buf);
	out->len = (size_t)len;
	imc_umad_addr_from_raw(&out->from, a->lid, a->qpn, a->qkey, a->sl,
			       a->pkey_index);
	memcpy(out->mad, umad_get_mad(buf), out->len);
	return 1;
}

/* Reads what the kernel has ready, RECV_BATCH MADs at most; returns how
 * many. */
static int fd_drain(struct imc_umad *u)
{
	struct rx m;
	int n = 0;

	for (int i = 0; i < RECV_BATCH; i++) {
		int r = read_one(u->portid, 0, &m);

		if (r == 0)
			break;
		if (r < 0) {
			u->st.recv_errors++;
			break;
		}
		n++;
		deliver(u, m.mad, m.len, m.status, &m.from);
	}
	return n;
}

/* Reads one MAD into a new node: 1, 0 (none within timeout_ms), or a
 * negative errno. */
static int helper_read(struct imc_umad *u, int timeout_ms, struct rx **out)
{
	struct rx *m = malloc(sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	r = read_one(u->portid, timeout_ms, m);
	if (r <= 0) {
		free(m);
		return r;
	}
	m->next = NULL;
	*out = m;
	return 1;
}

/* The helper waits for a MAD, then takes every other one umad2sim
 * already holds (timeout 0), and queues them all at once. The loop is
 * woken only when the queue goes from empty to not empty: while it has
 * not taken the queue, it is already due to. */
static void *helper(void *arg)
{
	struct imc_umad *u = arg;
	const struct timespec pause = { 0, 1000000 };

	while (!atomic_load(&u->stop)) {
		struct rx *head = NULL, **tail = &head, *m;
		size_t n = 0, dropped = 0;
		uint64_t one = 1;
		bool wake;
		int r;

		r = helper_read(u, HELPER_POLL_MS, &m);
		while (r > 0) {
			*tail = m;
			tail = &m->next;
			n++;
			if (n == RECV_BATCH)
				break;
			r = helper_read(u, 0, &m);
		}
		if (r < 0) {
			pthread_mutex_lock(&u->lock);
			u->q_errors++;
			pthread_mutex_unlock(&u->lock);
		}
		if (n) {
			struct rx *last = NULL, *cut = head;
			size_t keep;

			pthread_mutex_lock(&u->lock);
			wake = !u->head;
			/* Past QUEUE_MAX the newest are dropped. */
			keep = QUEUE_MAX - u->queued;
			if (keep > n)
				keep = n;
			if (keep) {
				last = head;
				for (size_t i = 1; i < keep; i++)
					last = last->next;
				cut = last->next;
				last->next = NULL;
				if (u->tail)
					u->tail->next = head;
				else
					u->head = head;
				u->tail = last;
				u->queued += keep;
			}
			while ((m = cut)) {
				cut = m->next;
				free(m);
				dropped++;
			}
			u->q_dropped += dropped;
			wake = wake && last;
			pthread_mutex_unlock(&u->lock);
			if (wake && write(u->efd, &one, sizeof(one)) < 0) {
				/* The counter is full: the loop is already
				 * woken. */
			}
		}
		if (r < 0)
			nanosleep(&pause, NULL);
	}
	return NULL;
}

static void on_event(struct imc_fd_watch *w, unsigned int events)
{
	struct imc_umad *u = imc_container_of(w, struct imc_umad, watch);
	struct rx *list, *m;
	uint64_t v;

	if (read(u->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: woken for MADs already taken. */
	}
	pthread_mutex_lock(&u->lock);
	list = u->head;
	u->head = u->tail = NULL;
	u->queued = 0;
	pthread_mutex_unlock(&u->lock);
	if (list)
		u->st.rx_batches++;
	while ((m = list)) {
		list = m->next;
		deliver(u, m->mad, m->len, m->status, &m->from);
		free(m);
	}
}

/* ---- ibsim's socket ---- */

static void sim_flush(struct imc_umad *u)
{
	int r;

	imc_timer_cancel(u->loop, &u->flush_timer);
	if (!u->ntx)
		return;
	r = imc_ibsim_send(u->sim, (const uint8_t (*)[IMC_IBSIM_REQ_SIZE])u->txb,
			   u->ntx);
	if (r < 0)
		r = 0;
	u->st.sent += (unsigned)r;
	u->st.send_errors += u->ntx - (unsigned)r;
	u->ntx = 0;
}

static void on_flush(struct imc_timer *t)
{
	sim_flush(imc_container_of(t, struct imc_umad, flush_timer));
}

/* Queues one MAD for the next flush. */
static int sim_queue(struct imc_umad *u, const struct imc_umad_addr *to,
		     const uint8_t *mad, size_t len)
{
	if (u->ntx == SIM_BATCH)
		sim_flush(u);
	if (!u->ntx && imc_timer_arm(u->loop, &u->flush_timer,
				     imc_loop_now(u->loop)) < 0) {
		uint8_t one[1][IMC_IBSIM_REQ_SIZE];
		int r;

		/* No timer: the MAD leaves now. */
		imc_ibsim_pkt_pack(one[0], to->lid, to->qpn, mad, len);
		r = imc_ibsim_send(u->sim,
				   (const uint8_t (*)[IMC_IBSIM_REQ_SIZE])one, 1);
		if (r < 1) {
			u->st.send_errors++;
			return r < 0 ? r : -EIO;
		}
		u->st.sent++;
		return 0;
	}
	imc_ibsim_pkt_pack(u->txb[u->ntx++], to->lid, to->qpn, mad, len);
	return 0;
}

/* What umad2sim would hand an agent of the SA class: every SA class
 * MAD, whatever its method (an SA answers a method it does not support,
 * IBA 13.4.7). ibsim gives an IsSM client every MAD for QP0/QP1 of its
 * node, SMInfo probes included: those are not ours. */
static bool sim_wanted(const uint8_t *mad, size_t len)
{
	return len >= IMC_MAD_HDR_SIZE && mad[1] == UMAD_CLASS_SUBN_ADM;
}

/* Reads every datagram waiting (SIM_ROUNDS batches at most); returns
 * how many. */
static int sim_drain(struct imc_umad *u)
{
	int total = 0;

	for (int round = 0; round < SIM_ROUNDS; round++) {
		int n = imc_ibsim_recv(u->sim, u->rxb, u->rxlen, SIM_BATCH);

		if (n < 0)
			u->st.recv_errors++;
		for (int i = 0; i < n; i++) {
			struct imc_ibsim_pkt p;
			struct imc_umad_addr from;

			if (imc_ibsim_pkt_unpack(&p, u->rxb[i],
						 u->rxlen[i]) < 0) {
				u->st.recv_errors++;
				continue;
			}
			if (!p.status && !sim_wanted(p.mad, p.len)) {
				u->st.dropped++;
				continue;
			}
			memset(&from, 0, sizeof(from));
			from.lid = p.slid;
			from.qpn = p.sqp;
			deliver(u, p.mad, p.len, (int)p.status, &from);
		}
		if (n <= 0)
			break;
		total += n;
		if (n < SIM_BATCH)
			break;
	}
	return total;
}

/* ---- receive modes of a watched descriptor ---- */

static int drain(struct imc_umad *u)
{
	int n = u->sim ? sim_drain(u) : fd_drain(u);

	if (n > 0)
		u->st.rx_batches++;
	return n;
}

/* The one place rx changes (see the table at the top). */
static void set_rx(struct imc_umad *u, enum rx_state to)
{
	if (to == RX_WATCHING && u->rx == RX_POLLING &&
	    imc_loop_watch_fd(u->loop, &u->watch, IMC_EV_READ) == 0) {
		u->rx = RX_WATCHING;
		return;
	}
	if (to == RX_POLLING && u->rx == RX_WATCHING) {
		imc_loop_unwatch_fd(u->loop, &u->watch);
		u->rx = RX_POLLING;
	}
	/* Polling (or the watch could not be restored): the next tick;
	 * without a timer, back to the watch. */
	if (u->rx == RX_POLLING &&
	    imc_timer_arm_in(u->loop, &u->poll_timer, u->coalesce) < 0 &&
	    imc_loop_watch_fd(u->loop, &u->watch, IMC_EV_READ) == 0)
		u->rx = RX_WATCHING;
}

static void on_readable(struct imc_fd_watch *w, unsigned int events)
{
	struct imc_umad *u = imc_container_of(w, struct imc_umad, watch);

	if (drain(u) > 0 && u->coalesce)
		set_rx(u, RX_POLLING);
}

static void on_poll(struct imc_timer *t)
{
	struct imc_umad *u = imc_container_of(t, struct imc_umad, poll_timer);

	set_rx(u, drain(u) > 0 ? RX_POLLING : RX_WATCHING);
}

static int watch_rx(struct imc_umad *u, int fd)
{
	u->rx = RX_WATCHING;
	imc_timer_init(&u->poll_timer, on_poll);
	imc_fd_watch_init(&u->watch, fd, on_readable);
	return imc_loop_watch_fd(u->loop, &u->watch, IMC_EV_READ);
}

static void unwatch_rx(struct imc_umad *u)
{
	imc_timer_cancel(u->loop, &u->poll_timer);
	imc_loop_unwatch_fd(u->loop, &u->watch);
}

static int open_sim(struct imc_umad *u, bool issm)
{
	struct imc_ibsim_config sc;
	int r;

	memset(&sc, 0, sizeof(sc));
	sc.issm = issm;
	r = imc_ibsim_open(&sc, &u->port, &u->sim);
	if (r < 0)
		return r;
	u->rxb = calloc(SIM_BATCH, sizeof(*u->rxb));
	u->txb = calloc(SIM_BATCH, sizeof(*u->txb));
	if (!u->rxb || !u->txb) {
		r = -ENOMEM;
		goto fail;
	}
	imc_timer_init(&u->flush_timer, on_flush);
	r = watch_rx(u, imc_ibsim_fd(u->sim));
	if (r < 0)
		goto fail;
	u->reports = u->mode == IMC_UMAD_CLIENT;
	return 0;
fail:
	imc_ibsim_close(u->sim);
	u->sim = NULL;
	free(u->rxb);
	free(u->txb);
	return r;
}

/* umad2sim replaces open/read/write/poll/ioctl and hands out fds from
 * 1024 that the kernel knows nothing about: epoll cannot watch them. */
static bool fd_needs_helper(int fd)
{
	struct stat sb;

	if (dlsym(RTLD_DEFAULT, "sim_client_init"))
		return true;
	return fstat(fd, &sb) < 0 || !S_ISCHR(sb.st_mode);
}

enum imc_umad_backend imc_umad_backend_auto(void)
{
	return dlsym(RTLD_DEFAULT, "sim_client_init") ? IMC_UMAD_IBSIM
						       : IMC_UMAD_LIBIBUMAD;
}

/* ---- open / close ---- */

static int reg(int portid, int mgmt_class, int version, const uint32_t m[4])
{
	long mask[16 / sizeof(long)];

	memset(mask, 0, sizeof(mask));
	if (m)
		memcpy(mask, m, sizeof(mask));
	/* rmpp_version 0: RMPP segments reach us as they are; the SA
	 * client ACKs and reassembles them. */
	return umad_register(portid, mgmt_class, version, 0, m ? mask : NULL);
}

static int start_helper(struct imc_umad *u)
{
	int r;

	u->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (u->efd < 0)
		return -errno;
	r = pthread_mutex_init(&u->lock, NULL);
	if (r) {
		close(u->efd);
		return -r;
	}
	atomic_init(&u->stop, false);
	r = pthread_create(&u->thread, NULL, helper, u);
	if (r) {
		pthread_mutex_destroy(&u->lock);
		close(u->efd);
		return -r;
	}
	u->threaded = true;
	imc_fd_watch_init(&u->watch, u->efd, on_event);
	r = imc_loop_watch_fd(u->loop, &u->watch, IMC_EV_READ);
	if (r < 0) {
		atomic_store(&u->stop, true);
		pthread_join(u->thread, NULL);
		pthread_mutex_destroy(&u->lock);
		close(u->efd);
		u->threaded = false;
	}
	return r;
}

static void stop_helper(struct imc_umad *u)
{
	struct rx *m;

	atomic_store(&u->stop, true);
	pthread_join(u->thread, NULL);
	while ((m = u->head)) {
		u->head = m->next;
		free(m);
	}
	pthread_mutex_destroy(&u->lock);
	close(u->efd);
}

/* The issm device sets IsSM while it is open (the kernel's ib_umad;
 * umad2sim sends SIM_CTL_SET_ISSM). */
static int open_issm(struct imc_umad *u)
{
	char path[256];

	if (umad_get_issm_path(u->port.device, (int)u->port.port, path,
			       sizeof(path)) < 0)
		return -ENODEV;
	u->issm_fd = open(path, O_RDWR | O_CLOEXEC);
	return u->issm_fd < 0 ? -EIO : 0;
}

static void fill_port(struct imc_umad_port *p, const umad_port_t *up)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->device, up->ca_name, sizeof(p->device) - 1);
	p->port = (unsigned)up->portnum;
	p->lid = (uint16_t)up->base_lid;
	p->lmc = (uint8_t)up->lmc;
	p->sm_lid = (uint16_t)up->sm_lid;
	p->sm_sl = (uint8_t)up->sm_sl;
	p->state = up->state;
	/* Both halves are kept in network order by libibumad. */
	memcpy(p->gid.raw, &up->gid_prefix, 8);
	memcpy(p->gid.raw + 8, &up->port_guid, 8);
}

int imc_umad_port_read(const char *device, unsigned port,
		       struct imc_umad_port *p)
{
	umad_port_t up;

	memset(&up, 0, sizeof(up));
	if (umad_get_port(device, (int)port, &up) < 0)
		return -ENODEV;
	fill_port(p, &up);
	umad_release_port(&up);
	return 0;
}

static struct imc_umad *umad_new(struct imc_loop *loop,
				  const struct imc_umad_config *cfg)
{
	struct imc_umad *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->loop = loop;
	u->mode = cfg->mode;
	u->coalesce = cfg->coalesce;
	u->efd = -1;
	u->smi_agents[0] = u->smi_agents[1] = -1;
	u->issm_fd = -1;
	return u;
}

/* The SA class agent of the mode; a client whose Report is taken gets
 * answers only. Returns 0 or -EIO. */
static int reg_sa(struct imc_umad *u)
{
	uint32_t mask[4];

	imc_umad_method_mask(u->mode, mask);
	u->agent = reg(u->portid, UMAD_CLASS_SUBN_ADM, UMAD_SA_CLASS_VERSION,
		       mask);
	if (u->agent >= 0)
		u->reports = u->mode == IMC_UMAD_CLIENT;
	else if (u->mode == IMC_UMAD_CLIENT)
		u->agent = reg(u->portid, UMAD_CLASS_SUBN_ADM,
			       UMAD_SA_CLASS_VERSION, NULL);
	return u->agent < 0 ? -EIO : 0;
}

/* Receiving, on the loop or through the helper thread, and IsSM.
 * Returns 0 or -errno with the agents and the port still open. */
static int start_rx(struct imc_umad *u, bool issm)
{
	int r;

	if (fd_needs_helper(umad_get_fd(u->portid))) {
		if (issm) {
			/* umad2sim's receiver thread dereferences the agent
			 * of every class an IsSM client is sent (OpenSM
			 * probes SMInfo there): hold the SMI classes. */
			u->smi_agents[0] = reg(u->portid, UMAD_CLASS_SUBN_LID_ROUTED,
					       1, NULL);
			u->smi_agents[1] = reg(u->portid,
					       UMAD_CLASS_SUBN_DIRECTED_ROUTE,
					       1, NULL);
		}
		r = start_helper(u);
		u->st.helper_thread = true;
	} else {
		r = watch_rx(u, umad_get_fd(u->portid));
	}
	if (r == 0 && issm)
		r = open_issm(u);
	if (r < 0) {
		unwatch_rx(u);
		if (u->threaded)
			stop_helper(u);
		for (int i = 0; i < 2; i++)
			if (u->smi_agents[i] >= 0)
				umad_unregister(u->portid, u->smi_agents[i]);
		umad_unregister(u->portid, u->agent);
	}
	return r;
}

/* The port through libibumad (or umad2sim in its place). */
static int open_native(struct imc_umad *u, const struct imc_umad_config *cfg,
		       bool issm)
{
	int r;

	if (getenv("SIM_SET_ISSM") && dlsym(RTLD_DEFAULT, "sim_client_init")) {
		/* umad2sim would set IsSM the moment it attaches, before
		 * any agent of ours exists (see umad.h): attach without it
		 * and set it through issm once the agents are in place.
		 * This works when this is the process's first libibumad
		 * call, which is when umad2sim reads its environment. */
		unsetenv("SIM_SET_ISSM");
		issm = true;
	}
	if (umad_init() < 0 ||
	    imc_umad_port_read(cfg->device, cfg->port, &u->port) < 0)
		return -ENODEV;
	u->portid = umad_open_port(u->port.device, (int)u->port.port);
	if (u->portid < 0)
		return -EIO;
	r = reg_sa(u);
	if (r == 0)
		r = start_rx(u, issm);
	if (r < 0)
		umad_close_port(u->portid);
	return r;
}

int imc_umad_open(struct imc_loop *loop, const struct imc_umad_config *cfg,
		  struct imc_umad **out)
{
	static const struct imc_umad_config def; /* zero: the defaults */
	struct imc_umad *u;
	bool issm;
	int r;

	if (!cfg)
		cfg = &def;
	if (!loop || !out || imc_loop_is_virtual(loop) ||
	    (cfg->mode != IMC_UMAD_CLIENT && cfg->mode != IMC_UMAD_SERVER) ||
	    (cfg->backend != IMC_UMAD_LIBIBUMAD &&
	     cfg->backend != IMC_UMAD_IBSIM))
		return -EINVAL;
	issm = cfg->issm;
	/* umad2sim's variable, honoured alike on the ibsim path, where
	 * libibumad (and so umad2sim) is never called. */
	if (cfg->backend == IMC_UMAD_IBSIM && getenv("SIM_SET_ISSM"))
		issm = true;
	u = umad_new(loop, cfg);
	if (!u)
		return -ENOMEM;
	r = cfg->backend == IMC_UMAD_IBSIM ? open_sim(u, issm)
					   : open_native(u, cfg, issm);
	if (r < 0) {
		free(u);
		return r;
	}
	*out = u;
	return 0;
}

void imc_umad_close(struct imc_umad *u)
{
	if (!u)
		return;
	if (u->sim) {
		unwatch_rx(u);
		/* What is queued still leaves: an answer already counted
		 * as given. */
		sim_flush(u);
		imc_ibsim_close(u->sim);
		free(u->rxb);
		free(u->txb);
		free(u);
		return;
	}
	if (u->issm_fd >= 0)
		close(u->issm_fd);
	unwatch_rx(u);
	if (u->threaded) {
		stop_helper(u);
		/* umad2sim's receiver thread dereferences NULL for a MAD of
		 * a class nobody holds, and a late answer (to a retried
		 * request) may still come: the agents and the fake port stay
		 * until the process exits, their MADs unread. */
		free(u);
		return;
	}
	umad_unregister(u->portid, u->agent);
	umad_close_port(u->portid);
	free(u);
}

/* ---- send ---- */

int imc_umad_send(struct imc_umad *u, const struct imc_umad_addr *to,
		  const uint8_t *mad, size_t len)
{
	uint8_t buf[UMAD_BUF] __attribute__((aligned(8)));
	int r;

	if (!u || !to || !mad || !len || len > IMC_MAD_SIZE)
		return -EINVAL;
	if (u->sim)
		return sim_queue(u, to, mad, len);
	if (umad_size() + IMC_MAD_SIZE > sizeof(buf))
		return -EINVAL;
	memset(buf, 0, umad_size() + len);
	memcpy(umad_get_mad(buf), mad, len);
	umad_set_addr(buf, to->lid, (int)to->qpn, to->sl, (int)to->qkey);
	umad_set_pkey(buf, to->pkey_index);
	r = umad_send(u->portid, u->agent, buf, (int)len,
		      (int)imc_umad_send_timeout(mad, len), 0);
	if (r < 0) {
		u->st.send_errors++;
		return r;
	}
	u->st.sent++;
	return 0;
}

int imc_umad_reply(struct imc_umad *u, const struct imc_umad_addr *from,
		   const uint8_t *mad, size_t len)
{
	struct imc_umad_addr to;

	if (!from)
		return -EINVAL;
	to = *from;
	to.qkey = IMC_UMAD_GSI_QKEY;
	return imc_umad_send(u, &to, mad, len);
}

/* ---- accessors and the SA client glue ---- */

const struct imc_umad_port *imc_umad_port(const struct imc_umad *u)
{
	return &u->port;
}

bool imc_umad_reports(const struct imc_umad *u)
{
	return u->reports;
}

void imc_umad_set_recv(struct imc_umad *u, imc_umad_recv_cb fn, void *arg)
{
	u->client = NULL;
	u->recv_cb = fn;
	u->recv_arg = arg;
}

void imc_umad_attach(struct imc_umad *u, struct imc_sa_client *c)
{
	u->recv_cb = NULL;
	u->recv_arg = NULL;
	u->client = c;
}

void imc_umad_set_sa_lid(struct imc_umad *u, uint16_t lid)
{
	u->sa_lid = lid;
}

uint16_t imc_umad_sa_lid(const struct imc_umad *u)
{
	return u->sa_lid ? u->sa_lid : u->port.sm_lid;
}

static int sa_send(void *ctx, const uint8_t *mad, size_t len)
{
	struct imc_umad *u = ctx;
	/* IBA 15.4.1: the SA is at QP1 of the SM's port, GSI Q_Key. */
	struct imc_umad_addr to = {
		.lid = imc_umad_sa_lid(u),
		.qpn = IMC_UMAD_QP1,
		.qkey = IMC_UMAD_GSI_QKEY,
		.sl = u->port.sm_sl,
	};

	if (!to.lid)
		return -EHOSTUNREACH;
	return imc_umad_send(u, &to, mad, len);
}

void imc_umad_sa_transport(struct imc_umad *u, struct imc_sa_transport *tr)
{
	tr->send = sa_send;
	tr->ctx = u;
}

void imc_umad_get_stats(const struct imc_umad *u, struct imc_umad_stats *st)
{
	*st = u->st;
	if (u->threaded) {
		pthread_mutex_t *l = (pthread_mutex_t *)&u->lock;

		pthread_mutex_lock(l);
		st->dropped += u->q_dropped;
		st->recv_errors += u->q_errors;
		pthread_mutex_unlock(l);
	}
}
