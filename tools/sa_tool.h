/* What `ibmcast sa` and `ibmcast sa-serve` share: a table-driven option
 * parser, the names of SA methods, attributes and join states, and the
 * MCMemberRecord field syntax (F=V,...) of their command lines and case
 * files. */
#ifndef IMC_TOOLS_SA_TOOL_H
#define IMC_TOOLS_SA_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/sa_attr.h"

/* A number, decimal or 0x hex, at most max (no sign). 0 or -EINVAL. */
int sa_tool_num(const char *s, uint64_t max, uint64_t *out);

/* A GID; "0" is the zero GID (an MGID the SA assigns). */
int sa_tool_gid(const char *s, struct imc_gid *g);

/* A method by name (get, set, gettable, delete, getmulti,
 * gettracetable, report) or number up to max; -EINVAL. */
int sa_tool_method(const char *s, unsigned max);

/* The name of a method (requests and answers), or NULL. */
const char *sa_tool_method_name(unsigned m);

/* An attribute by name (mcmr, cpi, path, inform) or number. */
int sa_tool_attr(const char *s, uint16_t *out);

/* A JoinState by name (full, nonmember, sendonly, sendonly-full) or a
 * number up to 0xf. */
int sa_tool_state(const char *s, uint8_t *out);

/* As sa_tool_state(), without 0 (a join or leave of no bit). */
int sa_tool_join_state(const char *s, uint8_t *out);

/* A decimal number (fractions allowed) in [0, max]. 0 or -EINVAL. */
int sa_tool_real(const char *s, double max, double *out);

/* An even number of hex digits, at most max bytes, into buf. */
int sa_tool_hex(const char *s, uint8_t *buf, size_t max);

/* MCMemberRecord fields "f=v,f=v" (mgid, port_gid, qkey, mlid, mtu_sel,
 * mtu, tclass, pkey, rate_sel, rate, life_sel, life, sl, flow_label,
 * hop_limit, scope, join_state, proxy_join; each number within its
 * field's width) into r; *mask gets the ComponentMask bits of the fields
 * named. port_gid=self is *self when self is not NULL. An error is
 * printed after prog. */
int sa_tool_record(const char *prog, const char *spec,
		   const struct imc_gid *self, struct imc_mcmr *r,
		   uint64_t *mask);

/* ---- options ---- */

enum sa_opt_kind {
	SA_OPT_FLAG,      /* bool = true */
	SA_OPT_STR,       /* const char * = the argument */
	SA_OPT_NUM,       /* a number in [min, max] times scale, stored in
			   * a field of size bytes */
	SA_OPT_GID,       /* struct imc_gid */
	SA_OPT_FN,        /* fn(argument, field): 0, -EINVAL, or
			   * IMC_EXIT_USAGE once it told why (imc_opt_bad) */
};

struct sa_opt {
	const char *name;
	enum sa_opt_kind kind;
	size_t off;                 /* the field in the options struct */
	size_t size;                /* SA_OPT_NUM: 1, 2, 4 or 8 */
	uint64_t min, max, scale;   /* SA_OPT_NUM; scale 0 means 1 */
	int (*fn)(const char *arg, void *field);
	long set_off;               /* a bool set when given, or -1 */
};

#define SA_OPT_FIELD(type, f) offsetof(type, f), sizeof(((type *)0)->f)
#define SA_OPT_F(name, type, f) \
	{ name, SA_OPT_FLAG, offsetof(type, f), 0, 0, 0, 0, NULL, -1 }
#define SA_OPT_S(name, type, f) \
	{ name, SA_OPT_STR, offsetof(type, f), 0, 0, 0, 0, NULL, -1 }
#define SA_OPT_N(name, type, f, lo, hi) \
	{ name, SA_OPT_NUM, SA_OPT_FIELD(type, f), lo, hi, 1, NULL, -1 }

/* The SA client options of the commands that send SA requests: --dlid
 * (0: the SM's LID), --smkey, --timeout (ms, stored in ns), --retries,
 * into the fields dlid (uint16_t), smkey (uint64_t), timeout
 * (imc_time_t) and retries (unsigned) of type. */
#define SA_OPT_CLIENT(type) \
	SA_OPT_N("dlid", type, dlid, 0, 0xbfff), \
	SA_OPT_N("smkey", type, smkey, 0, UINT64_MAX), \
	{ "timeout", SA_OPT_NUM, SA_OPT_FIELD(type, timeout), 1, 3600000, \
	  IMC_NSEC_PER_MSEC, NULL, -1 }, \
	SA_OPT_N("retries", type, retries, 0, 100)

/* Parses the options of argv from optind (the operands stay in argv
 * from the returned optind) into opts. Returns 0, or prints
 * "PROG: --NAME V: at most MAX" (imc_opt_num()) or "PROG: --NAME V: not
 * a valid value (try 'PROG --help')" / "PROG: unknown option '--X' (try
 * 'PROG --help')" and returns IMC_EXIT_USAGE. */
int sa_tool_getopt(const char *prog, int argc, char **argv,
		   const struct sa_opt *table, size_t n, void *opts);

/* Prints "PROG: WHAT (try 'PROG --help')" and returns IMC_EXIT_USAGE. */
int sa_tool_usage(const char *prog, const char *what);

#endif
