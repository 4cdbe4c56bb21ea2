/* Linux TUN interfaces (see ibmcast/tun.h).
 *
 * Administrative state, changed only by move():
 *
 *   from   to     when
 *   DOWN   UP     imc_tun_set_up(true): the kernel accepted IFF_UP
 *   UP     DOWN   imc_tun_set_up(false)
 *
 * A TUN is created DOWN (the kernel's state for a new interface) and
 * freed in either state. Carrier is a separate property the kernel keeps
 * (TUNSETCARRIER): an interface can be UP without carrier.
 *
 * The interface is created inside its namespace: the thread enters it,
 * opens /dev/net/tun (the kernel creates the device in the namespace of
 * the opener, tun_chr_open) and the rtnetlink socket (bound to the
 * namespace it is opened in), then comes back. The device never appears
 * in the caller's namespace, so its name cannot clash there.
 *
 * IPv6 addresses: even without duplicate address detection the kernel
 * adds the local route of a new address only when its address
 * configuration work has run (addrconf's DAD work, from a workqueue, some
 * time after the request was acknowledged), and until then drops packets
 * to it as not for this host (Ip6InAddrErrors). On an interface that is
 * up with carrier, imc_tun_addr_add() and imc_tun_set_up() therefore wait
 * until the kernel routes each IPv6 address of the interface locally
 * (RTM_GETROUTE answers RTN_LOCAL), so that an address works once the call
 * returns. IPv4 local routes are added within the request itself.
 *
 * Reads: level-triggered readiness on the non-blocking fd; each callback
 * reads up to read_batch packets (one read() each: a TUN fd gives one
 * packet per read) into one buffer with IMC_TUN_HEADROOM bytes in front,
 * so the owner can prepend a header in place. The buffer holds 64 KiB,
 * the largest packet a TUN can hand over, so nothing is ever truncated.
 * A receive callback may destroy the TUN: the dispatcher keeps a flag on
 * its own stack that destroy clears, and stops touching the TUN.
 *
 * Multicast memberships (imc_tun_mcast_list): the kernel's own list of
 * the groups joined on the interface, as `ip maddr` shows it, dumped with
 * RTM_GETMULTICAST per family. A kernel whose IPv4 code takes no such
 * dump (older ones dump IPv6 only) answers -EOPNOTSUPP, as rtnetlink does
 * for a message type no handler takes: IPv4 then comes from
 * /proc/net/igmp of the TUN's namespace, opened when the TUN is made (a
 * /proc/net file is bound to the namespace of the thread that opens it).
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>

#include "tun/tun_int.h"

#define TUN_DEV "/dev/net/tun"
#define DEFAULT_NAME "imc%d"

enum {
	READ_BUF = 65536,     /* largest IP packet a TUN hands over */
	NL_BUF = 8192,        /* MNL_SOCKET_BUFFER_SIZE is at least this */
	SETTLE_MS = 2000,     /* longest wait for an IPv6 address to work */
	V6_MAX = 16,          /* IPv6 addresses remembered for settle() */
	IGMP_MAX = 1 << 20,   /* most of /proc/net/igmp read */
};

enum state {
	TUN_DOWN,
	TUN_UP,
};

struct imc_tun {
	struct imc_loop *loop;
	enum state state;
	int fd;
	int igmp_fd;                 /* /proc/net/igmp of its namespace */
	struct mnl_socket *nl;       /* rtnetlink, in the TUN's namespace */
	unsigned nl_seq;
	struct imc_fd_watch watch;
	imc_tun_recv_fn *recv;
	void *ctx;
	unsigned batch;
	unsigned ifindex;
	unsigned mtu;
	bool carrier;                /* as last set */
	unsigned nv6;
	uint8_t v6[V6_MAX][16];      /* IPv6 addresses added */
	bool *alive;                 /* the dispatcher's flag, while it runs */
	struct imc_tun_stats st;
	char name[IMC_TUN_IFNAME_MAX];
	uint8_t *buf;                /* IMC_TUN_HEADROOM + READ_BUF */
};

static void move(struct imc_tun *t, enum state to)
{
	/* Both transitions are legal; only a move to the same state is a
	 * bug (the caller checks). */
	if (t->state == to)
		abort();
	t->state = to;
}

/* ---- rtnetlink ---- */

/* Sends a request and waits for the kernel's acknowledgement, or with
 * dump for the end of the dump it asks for, handing each message of the
 * answer to cb (may be NULL). (The flag bits alone cannot tell: a dump's
 * NLM_F_MATCH is a NEW request's NLM_F_EXCL.) Returns 0 or the negative
 * errno the kernel answered. */
static int nl_run(struct imc_tun *t, struct nlmsghdr *nlh, bool dump,
		  mnl_cb_t cb, void *data)
{
	char buf[NL_BUF];
	unsigned portid = mnl_socket_get_portid(t->nl);
	ssize_t n;
	int rc;

	nlh->nlmsg_flags |= NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK);
	nlh->nlmsg_seq = ++t->nl_seq;
	if (mnl_socket_sendto(t->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = mnl_socket_recvfrom(t->nl, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		rc = mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, portid, cb,
				data);
		if (rc == MNL_CB_ERROR)
			return errno ? -errno : -EIO;
		if (rc == MNL_CB_STOP)
			return 0;
		/* MNL_CB_OK: more to come; read on. */
	}
}

static int nl_talk(struct imc_tun *t, struct nlmsghdr *nlh)
{
	return nl_run(t, nlh, false, NULL, NULL);
}

static int route_type(const struct nlmsghdr *nlh, void *data)
{
	const struct rtmsg *rt = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type == RTM_NEWROUTE)
		*(unsigned char *)data = rt->rtm_type;
	return MNL_CB_OK;
}

/* Waits (up to SETTLE_MS) until the kernel routes addr locally; see the
 * top of the file. Returns 0, or -ETIMEDOUT. */
static int settle_one(struct imc_tun *t, const uint8_t addr[16])
{
	struct timespec ms = { 0, 1000000 };

	for (unsigned i = 0; i < SETTLE_MS; i++) {
		char buf[NL_BUF];
		struct nlmsghdr *nlh;
		struct rtmsg *rt;
		unsigned char type = RTN_UNSPEC;
		int rc;

		memset(buf, 0, sizeof(buf));
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = RTM_GETROUTE;
		rt = mnl_nlmsg_put_extra_header(nlh, sizeof(*rt));
		rt->rtm_family = AF_INET6;
		rt->rtm_dst_len = 128;
		mnl_attr_put(nlh, RTA_DST, 16, addr);
		rc = nl_run(t, nlh, false, route_type, &type);
		/* -ENETUNREACH: no route at all yet. */
		if (rc && rc != -ENETUNREACH)
			return rc;
		if (type == RTN_LOCAL)
			return 0;
		nanosleep(&ms, NULL);
	}
	return -ETIMEDOUT;
}

static int settle(struct imc_tun *t)
{
	if (t->state != TUN_UP || !t->carrier)
		return 0;
	for (unsigned i = 0; i < t->nv6; i++) {
		int rc = settle_one(t, t->v6[i]);

		if (rc)
			return rc;
	}
	return 0;
}

static struct nlmsghdr *link_msg(char *buf, unsigned ifindex)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_NEWLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = (int)ifindex;
	return nlh;
}

int imc_tun_set_mtu(struct imc_tun *t, unsigned mtu)
{
	char buf[NL_BUF];
	struct nlmsghdr *nlh;
	int rc;

	if (!mtu || mtu > 65535)
		return -EINVAL;
	memset(buf, 0, sizeof(buf));
	nlh = link_msg(buf, t->ifindex);
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	rc = nl_talk(t, nlh);
	if (!rc)
		t->mtu = mtu;
	return rc;
}

int imc_tun_set_up(struct imc_tun *t, bool up)
{
	enum state to = up ? TUN_UP : TUN_DOWN;
	char buf[NL_BUF];
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	int rc;

	if (t->state == to)
		return 0;
	memset(buf, 0, sizeof(buf));
	nlh = link_msg(buf, t->ifindex);
	ifi = mnl_nlmsg_get_payload(nlh);
	ifi->ifi_change = IFF_UP;
	ifi->ifi_flags = up ? IFF_UP : 0;
	rc = nl_talk(t, nlh);
	if (rc)
		return rc;
	move(t, to);
	return settle(t);
}

bool imc_tun_is_up(const struct imc_tun *t)
{
	return t->state == TUN_UP;
}

int imc_tun_addr_add(struct imc_tun *t, int family, const void *addr,
		     unsigned prefix_len)
{
	char buf[NL_BUF];
	struct nlmsghdr *nlh;
	struct ifaddrmsg *ifa;
	size_t alen;
	int rc;

	if (family == AF_INET)
		alen = 4;
	else if (family == AF_INET6)
		alen = 16;
	else
		return -EINVAL;
	if (prefix_len > alen * 8)
		return -EINVAL;
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWADDR;
	nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (uint8_t)family;
	ifa->ifa_prefixlen = (uint8_t)prefix_len;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = t->ifindex;
	if (family == AF_INET6) {
		/* RFC 4862 5.4 probes the link; a TUN has none, and the
		 * IPoIB side answers for its own addresses. */
		ifa->ifa_flags = IFA_F_NODAD;
		mnl_attr_put_u32(nlh, IFA_FLAGS, IFA_F_NODAD);
	}
	/* Local and "address" equal: an address on a subnet, not the
	 * local end of a point-to-point link (the kernel then adds the
	 * prefix route through the interface). */
	mnl_attr_put(nlh, IFA_LOCAL, alen, addr);
	mnl_attr_put(nlh, IFA_ADDRESS, alen, addr);
	rc = nl_talk(t, nlh);
	if (rc || family != AF_INET6)
		return rc;
	if (t->nv6 < V6_MAX)
		memcpy(t->v6[t->nv6++], addr, 16);
	if (t->state != TUN_UP || !t->carrier)
		return 0;
	return settle_one(t, addr);
}

int imc_tun_set_carrier(struct imc_tun *t, bool on)
{
	int v = on ? 1 : 0;

	if (ioctl(t->fd, TUNSETCARRIER, &v) < 0)
		return errno == EINVAL || errno == ENOTTY ? -EOPNOTSUPP
							  : -errno;
	t->carrier = on;
	return 0;
}

/* ---- data ---- */

int imc_tun_write(struct imc_tun *t, const void *pkt, size_t len)
{
	ssize_t n;

	do
		n = write(t->fd, pkt, len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		t->st.write_errors++;
		return -errno;
	}
	t->st.write_packets++;
	t->st.write_bytes += len;
	return 0;
}

static void on_ready(struct imc_fd_watch *w, unsigned int events)
{
	struct imc_tun *t = imc_container_of(w, struct imc_tun, watch);
	uint8_t *pkt = t->buf + IMC_TUN_HEADROOM;
	bool alive = true;

	(void)events;
	t->st.wakeups++;
	t->alive = &alive;
	for (unsigned i = 0; i < t->batch; i++) {
		ssize_t n = read(t->fd, pkt, READ_BUF);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			t->st.read_errors++;
			/* EBADFD: the interface was deleted under us; it
			 * will stay readable, so stop watching. */
			if (errno == EBADFD)
				imc_loop_unwatch_fd(t->loop, &t->watch);
			break;
		}
		if (n == 0)
			break;
		t->st.read_packets++;
		t->st.read_bytes += (uint64_t)n;
		t->recv(t, pkt, (size_t)n, t->ctx);
		if (!alive)
			return;
	}
	t->alive = NULL;
}

/* ---- multicast memberships ---- */

struct mc_walk {
	unsigned ifindex;
	int family;
	imc_tun_mcast_fn *fn;
	void *ctx;
};

static int mc_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **out = data;

	if (mnl_attr_get_type(a) == IFA_MULTICAST)
		*out = a;
	return MNL_CB_OK;
}

static int mc_one(const struct nlmsghdr *nlh, void *data)
{
	const struct mc_walk *w = data;
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a = NULL;
	size_t alen = w->family == AF_INET ? 4 : 16;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifa)) ||
	    ifa->ifa_family != w->family || ifa->ifa_index != w->ifindex)
		return MNL_CB_OK;
	if (mnl_attr_parse(nlh, sizeof(*ifa), mc_attr, &a) < 0 || !a ||
	    mnl_attr_get_payload_len(a) != alen)
		return MNL_CB_OK;
	w->fn(w->ctx, w->family, mnl_attr_get_payload(a));
	return MNL_CB_OK;
}

static int mc_dump(struct imc_tun *t, struct mc_walk *w)
{
	char buf[NL_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;

	nlh->nlmsg_type = RTM_GETMULTICAST;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (uint8_t)w->family;
	ifa->ifa_index = t->ifindex;
	return nl_run(t, nlh, true, mc_one, w);
}

int tunl_mcast_list_igmp(struct imc_tun *t, imc_tun_mcast_fn *fn, void *ctx)
{
	char *text;
	size_t len = 0;
	ssize_t n;
	int rc;

	if (t->igmp_fd < 0)
		return -ENOENT;
	text = malloc(IGMP_MAX);
	if (!text)
		return -ENOMEM;
	if (lseek(t->igmp_fd, 0, SEEK_SET) < 0) {
		free(text);
		return -errno;
	}
	while (len < IGMP_MAX &&
	       (n = read(t->igmp_fd, text + len, IGMP_MAX - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(text);
			return -errno;
		}
		len += (size_t)n;
	}
	rc = tunl_igmp_parse(text, len, t->ifindex, fn, ctx);
	free(text);
	return rc < 0 ? rc : 0;
}

int imc_tun_mcast_list(struct imc_tun *t, imc_tun_mcast_fn *fn, void *ctx)
{
	struct mc_walk w = { t->ifindex, AF_INET, fn, ctx };
	int rc;

	if (!fn)
		return -EINVAL;
	rc = mc_dump(t, &w);
	if (rc == -EOPNOTSUPP)
		rc = tunl_mcast_list_igmp(t, fn, ctx);
	if (rc)
		return rc;
	w.family = AF_INET6;
	rc = mc_dump(t, &w);
	/* A kernel without IPv6 has no IPv6 groups to list. */
	return rc == -EOPNOTSUPP || rc == -EAFNOSUPPORT ? 0 : rc;
}

/* ---- life ---- */

/* In the target namespace: the device and the netlink socket. */
static int open_in_ns(struct imc_tun *t, const struct imc_tun_config *cfg)
{
	struct ifreq ifr;
	int s, rc;

	t->fd = open(TUN_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s",
		 cfg->name ? cfg->name : DEFAULT_NAME);
	if (ioctl(t->fd, TUNSETIFF, &ifr) < 0)
		return errno == EBUSY ? -EEXIST : -errno;
	memcpy(t->name, ifr.ifr_name, IFNAMSIZ);
	t->name[IMC_TUN_IFNAME_MAX - 1] = '\0';
	t->ifindex = if_nametoindex(t->name);
	if (!t->ifindex)
		return -errno;
	t->nl = mnl_socket_open(NETLINK_ROUTE);
	if (!t->nl)
		return -errno;
	if (mnl_socket_bind(t->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	/* Only needed where the kernel dumps no IPv4 memberships; a /proc
	 * without it leaves that fallback out. */
	t->igmp_fd = open("/proc/thread-self/net/igmp", O_RDONLY | O_CLOEXEC);
	/* Any socket of the namespace answers for its interfaces. */
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	rc = ioctl(s, SIOCGIFMTU, &ifr) < 0 ? -errno : 0;
	close(s);
	if (!rc)
		t->mtu = (unsigned)ifr.ifr_mtu;
	return rc;
}

int imc_tun_create(struct imc_loop *loop, const struct imc_tun_config *cfg,
		   imc_tun_recv_fn *recv, void *ctx, struct imc_tun **out)
{
	static const struct imc_tun_config none;
	struct imc_tun *t;
	int saved, rc, rc2;

	*out = NULL;
	if (!cfg)
		cfg = &none;
	if (!recv || (cfg->name && strlen(cfg->name) >= IFNAMSIZ))
		return -EINVAL;
	if (imc_loop_is_virtual(loop))
		return -EOPNOTSUPP;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->loop = loop;
	t->state = TUN_DOWN;
	t->carrier = true;      /* a TUN with its fd attached has carrier */
	t->fd = -1;
	t->igmp_fd = -1;
	t->recv = recv;
	t->ctx = ctx;
	t->batch = cfg->read_batch ? cfg->read_batch : IMC_TUN_READ_BATCH;
	t->buf = malloc(IMC_TUN_HEADROOM + READ_BUF);
	if (!t->buf) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = tunl_netns_enter(cfg->netns, &saved);
	if (rc)
		goto fail;
	rc = open_in_ns(t, cfg);
	rc2 = tunl_netns_leave(saved);
	if (!rc)
		rc = rc2;
	if (rc)
		goto fail;
	if (cfg->mtu) {
		rc = imc_tun_set_mtu(t, cfg->mtu);
		if (rc)
			goto fail;
	}
	imc_fd_watch_init(&t->watch, t->fd, on_ready);
	rc = imc_loop_watch_fd(loop, &t->watch, IMC_EV_READ);
	if (rc)
		goto fail;
	*out = t;
	return 0;
fail:
	if (t->nl)
		mnl_socket_close(t->nl);
	if (t->fd >= 0)
		close(t->fd);
	if (t->igmp_fd >= 0)
		close(t->igmp_fd);
	free(t->buf);
	free(t);
	return rc;
}

void imc_tun_destroy(struct imc_tun *t)
{
	if (!t)
		return;
	if (t->alive)
		*t->alive = false;
	imc_loop_unwatch_fd(t->loop, &t->watch);
	mnl_socket_close(t->nl);
	close(t->fd);
	if (t->igmp_fd >= 0)
		close(t->igmp_fd);
	free(t->buf);
	free(t);
}

const char *imc_tun_name(const struct imc_tun *t)
{
	return t->name;
}

unsigned imc_tun_ifindex(const struct imc_tun *t)
{
	return t->ifindex;
}

unsigned imc_tun_mtu(const struct imc_tun *t)
{
	return t->mtu;
}

void imc_tun_get_stats(const struct imc_tun *t, struct imc_tun_stats *st)
{
	*st = t->st;
}
