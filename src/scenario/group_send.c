/* MGID words, and sending to a multicast group: one verb under two
 * names.
 *
 *   mcast-send FROM MGID|@NAME [count=N] [size=BYTES] [interval=T] [sl=N]
 *   sa-mcast   FROM MGID|@NAME [count=N] [size=BYTES] [interval=T] [sl=N]
 *
 * count datagrams from the port FROM to the group, interval apart, with
 * the MLID, Q_Key and P_Key the SA has for the group when the line runs
 * (the SA engine service): the built-in engine's table, or an external
 * SM's SA's answer to FROM's GetTable of MCMemberRecord by MGID, the
 * datagrams then leaving when it comes. The names differ only in what
 * @NAME names:
 * an mcast-join's as= (the mcast plugin's name service) or an sa-join's
 * (the sa plugin's); each plugin adds the verb of its names. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/desc.h"
#include "scenario/scn.h"

bool scn_label_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++) {
		char ch = s[n];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
		      ch == '.'))
			return false;
	}
	return n > 0 && n <= SCN_LABEL_MAX;
}

const void *scn_label_find(struct imc_scn_parser *p, const void *space,
			   const char *what, const char *name)
{
	const void *line = scn_name_find(p->s, space, name);

	if (!line)
		imc_scn_parse_error(p, "@%s: no %s ... as=%s on an earlier line",
				    name, what, name);
	return line;
}

int scn_mgid_parse(struct imc_scn_parser *p, const char *word,
		   const void *space, const char *what, unsigned flags,
		   struct scn_mgid *m)
{
	memset(m, 0, sizeof(*m));
	if (word[0] == '@') {
		m->line = scn_label_find(p, space, what, word + 1);
		/* as= names are at most SCN_LABEL_MAX long: a found one fits */
		snprintf(m->label, sizeof(m->label), "%s", word + 1);
		return m->line ? 0 : -EINVAL;
	}
	if ((flags & SCN_MGID_ZERO) && !strcmp(word, "0"))
		return 0;
	if (imc_gid_parse(word, &m->gid) ||
	    ((flags & SCN_MGID_MCAST) && !imc_gid_is_multicast(&m->gid)))
		return imc_scn_parse_error(p,
			"MGID: expected a %sGID (ff12:...)%s or @NAME, got '%s'",
			flags & SCN_MGID_MCAST ? "multicast " : "",
			flags & SCN_MGID_ZERO ? ", 0" : "", word);
	return 0;
}

void scn_mgid_print(FILE *f, const struct scn_mgid *m)
{
	char buf[IMC_GID_STRLEN];

	if (m->line) {
		fprintf(f, " @%s", m->label);
	} else if (imc_gid_is_zero(&m->gid)) {
		fputs(" 0", f);
	} else {
		imc_gid_format(&m->gid, buf);
		fprintf(f, " %s", buf);
	}
}

struct group_send {
	struct scn_port_arg src;
	const struct scn_svc_ops *names;
	struct scn_mgid mgid;
	uint32_t count;
	uint32_t size;
	imc_time_t interval;
	uint8_t sl;
};

static const struct scn_opt send_opts[] = {
	SCN_O_FLOW_SL(struct group_send),
};
static const struct scn_optset send_set = SCN_OPTSET(send_opts);

/* The names of the two verbs differ in the names service of @NAME. */
#define SEND_DESC(verb, svc) \
	.usage = "expected '" verb " FROM MGID|@NAME [count=N] " \
		 "[size=BYTES] [interval=TIME] [sl=N]'", \
	.min = 2, \
	SCN_ARGS(((const struct scn_arg[]){ \
		SCN_A_HOST(struct group_send, src), \
		SCN_A_SVC_MGID(struct group_send, mgid, svc, names) })), \
	.opts = &send_set, .print_always = ~0ull, \
	.size = sizeof(struct group_send), \
	.defaults = &(const struct group_send){ SCN_FLOW_DEFAULTS }

static const struct scn_desc mcast_send_desc = {
	SEND_DESC("mcast-send", SCN_SVC_NAME_MCAST),
};
static const struct scn_desc sa_mcast_desc = {
	SEND_DESC("sa-mcast", SCN_SVC_NAME_SA),
};

static int send_run(struct imc_scn_ctx *c, void *data)
{
	const struct group_send *a = data;
	struct imc_gid mgid;
	int rc = a->names->resolve(c, &a->mgid, &mgid);

	return rc ? rc : scn_svc_group_send(c, a->src.node, a->src.port,
					    &mgid, a->count, a->size,
					    a->interval, a->sl);
}

SCN_DESC_FUNCS(mcast_send, mcast_send_desc)
SCN_DESC_FUNCS(sa_mcast, sa_mcast_desc)

const struct imc_scn_verb scn_verb_mcast_send = {
	.name = "mcast-send", .kind = IMC_SCN_ACTION,
	.parse = mcast_send_parse, .print = mcast_send_print, .run = send_run,
	.free = mcast_send_free,
};

const struct imc_scn_verb scn_verb_sa_mcast = {
	.name = "sa-mcast", .kind = IMC_SCN_ACTION, .parse = sa_mcast_parse,
	.print = sa_mcast_print, .run = send_run, .free = sa_mcast_free,
};
