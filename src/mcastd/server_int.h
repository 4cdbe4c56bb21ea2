/* Private state of the ibmcastd server core, shared by server.c,
 * show.c and audit.c. */
#ifndef IMC_MCASTD_SERVER_INT_H
#define IMC_MCASTD_SERVER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ibmcast/mcastd_server.h"
#include "mcastd/proto.h"
#include "util/list.h"

enum conn_state {
	CONN_HELLO,
	CONN_OPEN,
	CONN_DRAINING,
	CONN_GONE,
};

struct port;

struct member {
	struct conn *c;
	struct port *p;               /* NULL: refused before a port */
	struct imc_mcast_member *tm;  /* NULL: not in the tracker */
	uint64_t handle;
	uint32_t slot;
	struct imc_gid port_gid;
	struct imc_gid mgid;
	uint16_t mlid;
	uint8_t join_state;
	struct imc_mcmr req_rec;      /* as asked, for re-authorizing */
	uint64_t comp_mask;
	enum imc_mcast_state state;
	int status;
	bool answered;                /* first JOINED or ERROR sent */
	bool revoked;                 /* REVOKE sent, ack awaited */
	struct imc_list link;         /* c->mlist: join order */
};

struct conn {
	struct imc_mcastd_server *s;
	int fd;
	struct imc_fd_watch w;
	struct imc_mcastd_cred cr;
	char comm[IMC_MCASTD_COMMLEN];
	enum conn_state state;
	uint32_t id;
	struct mcd_buf in, out;
	bool broken;                  /* a write failed or out overflowed */
	bool flush_queued;
	struct conn *flush_next;
	struct member **slots;
	uint32_t nslots;
	struct imc_list mlist;        /* struct member.link */
	unsigned members, in_flight, revokes;
	struct imc_timer ack_timer;
	struct imc_list link;         /* s->conns: accept order */
};

struct audit_rec {
	struct imc_gid mgid;
	uint8_t join_state;
};

struct port {
	struct imc_mcastd_server *s;
	struct imc_mcastd_port_desc desc;
	struct imc_mcast *t;
	struct imc_sa_client *sa;
	struct port *next;
	/* restart audit (audit.c) */
	int audit_state;
	struct imc_sa_query *audit_q;
	struct imc_timer audit_timer;
	struct audit_rec *recs;
	size_t nrecs;
	struct audit_del *dels;       /* Deletes in flight */
	struct imc_mcast_member **keep; /* the old bits, held in grace */
	size_t nkeep;
};

struct imc_mcastd_server {
	struct imc_loop *loop;
	struct imc_mcastd_server_config cfg;
	struct port *ports;
	unsigned nports;
	struct imc_list conns;        /* struct conn.link */
	size_t nconns;
	size_t members;
	uint32_t next_id;
	void *uids;                   /* tsearch tree of struct uidcount */
	struct imc_timer flush_timer;
	struct conn *flush_head;
	/* shutdown */
	bool shutting;
	bool shut_done;
	imc_time_t shut_deadline;
	struct imc_timer shut_timer;
	void (*done)(void *arg, int status);
	void *done_arg;
	struct imc_mcastd_server_stats st;
};

static inline struct member *srv_member_of(struct imc_list *l)
{
	return imc_container_of(l, struct member, link);
}

static inline struct conn *srv_conn_of(struct imc_list *l)
{
	return imc_container_of(l, struct conn, link);
}

void srv_log(struct imc_mcastd_server *s, enum imc_mcastd_log_level lvl,
	     const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void srv_send(struct conn *c, const struct mcd_msg *m);
void srv_revoke(struct member *m, int status);
int srv_show(struct conn *c, uint32_t id);
void srv_check_shutdown(struct imc_mcastd_server *s);
void srv_on_shut_timer(struct imc_timer *t);
void srv_audit_start(struct port *p);
void srv_audit_stop(struct port *p);
void srv_audit_release(struct port *p);

#endif
