/* ibmcastd's access policy: which users and groups may join which
 * multicast groups of the host's ports, with which JoinStates and P_Keys.
 *
 * The file is a list of rules, one a line; '#' starts a comment:
 *
 *   allow|deny WHO [mgid LIST] [state LIST] [pkey LIST]
 *
 *   WHO    user:NAME|UID, group:NAME|GID, or * (anyone)
 *   mgid   comma-separated MGIDs (ff12:401b::1), ranges (ff15::1-ff15::ff),
 *          prefixes (ff12:401b::/32), 0 (a create whose MGID the SA
 *          chooses) or any
 *   state  comma-separated JoinStates: full, nonmember, sendonly,
 *          sendonly-full, a number 1..15 of IBA JoinState bits, or any
 *          (IBA 15.2.5.17: the four bits of MCMemberRecord:JoinState)
 *   pkey   comma-separated P_Keys or ranges (0x8001-0x80ff), or any
 *
 * A join matches a rule when the peer is WHO, its MGID is in the mgid
 * list, every JoinState bit it asks for is among the rule's, and its P_Key
 * (when the join names one) is in the pkey list; a rule with a pkey list
 * other than any matches only joins that name a P_Key (a join without one
 * takes the existing group's, which the daemon cannot know in advance).
 * Omitted lists are any. The first matching rule decides; a join no rule
 * matches is refused. The default policy (no file) is
 *
 *   allow user:0
 *   allow group:<the configured group>
 *
 * Names are resolved once, when the file is read (a reload resolves them
 * again). Errors name FILE:LINE and what is wrong.
 */
#ifndef IBMCAST_MCASTD_POLICY_H
#define IBMCAST_MCASTD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/common.h"

/* Bounds: a bigger file or line is an error, not a slow daemon. */
#define IMC_POLICY_MAX_BYTES (1u << 20)
#define IMC_POLICY_MAX_LINE 1024
#define IMC_POLICY_MAX_RULES 4096
#define IMC_POLICY_MAX_ITEMS 64         /* per list of one rule */

struct imc_mcastd_policy;

/* How names become ids. A lookup returns 0 and the id, or -ENOENT. NULL
 * functions: names are refused (numbers only). */
struct imc_mcastd_policy_resolver {
	int (*user)(void *ctx, const char *name, uint32_t *uid);
	int (*group)(void *ctx, const char *name, uint32_t *gid);
	void *ctx;
};

/* The resolver of the system's user and group databases (getpwnam_r,
 * getgrnam_r); static, never freed. */
const struct imc_mcastd_policy_resolver *imc_mcastd_policy_nss(void);

/* Parses text (len bytes, need not end in NUL), naming errors as
 * "FILE:LINE: what" in err. Returns 0 and *out, -EINVAL (err says why),
 * -EFBIG or -ENOMEM. */
int imc_mcastd_policy_parse(const char *text, size_t len, const char *file,
			    const struct imc_mcastd_policy_resolver *r,
			    struct imc_mcastd_policy **out,
			    char *err, size_t errlen);

/* Reads and parses the file at path. -ENOENT and other open/read errors
 * come back with err saying which. */
int imc_mcastd_policy_load(const char *path,
			   const struct imc_mcastd_policy_resolver *r,
			   struct imc_mcastd_policy **out,
			   char *err, size_t errlen);

/* The default: root (uid 0) and members of gid may do everything, nobody
 * else anything. has_gid false: root only. */
int imc_mcastd_policy_default(bool has_gid, uint32_t gid,
			      struct imc_mcastd_policy **out);

/* Frees p. NULL is a no-op. */
void imc_mcastd_policy_destroy(struct imc_mcastd_policy *p);

/* Who asks: SO_PEERCRED's uid and gid, and the supplementary groups. */
struct imc_mcastd_policy_peer {
	uint32_t uid, gid;
	const uint32_t *groups;
	size_t n_groups;
};

/* What is asked. */
struct imc_mcastd_policy_query {
	struct imc_gid mgid;        /* zero: a create, the SA picks it */
	uint8_t join_state;
	bool has_pkey;
	uint16_t pkey;
};

/* Returns 0 (allowed) or -EACCES (refused), and in *line the line of the
 * rule that decided (0: no rule matched, or the default policy). */
int imc_mcastd_policy_check(const struct imc_mcastd_policy *p,
			    const struct imc_mcastd_policy_peer *peer,
			    const struct imc_mcastd_policy_query *q,
			    unsigned *line);

/* The number of rules of p. */
size_t imc_mcastd_policy_rules(const struct imc_mcastd_policy *p);

/* The policy in the file's syntax, numbers for names, one rule a line
 * (parsing it gives the same policy: the fuzz target checks that). */
int imc_mcastd_policy_print(const struct imc_mcastd_policy *p, char **out,
			    size_t *len);

#endif
