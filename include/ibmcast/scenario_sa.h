/* The SA multicast engine in scenarios (docs/scenarios.md, "The SA").
 *
 * The `sa` setting serves the SA engine (sa.h) on the fabric's SM port
 * through sa_fabric.h; `sa-join`, `sa-leave` and `sa-get` send
 * MCMemberRecord MADs from hosts' QP1s to it and match the answers by TID;
 * a successful join attaches the host's scenario QP to the group. The
 * sa-* subjects observe the answers and the SA. imc_scn_lang_create()
 * adds all of them to its language.
 *
 * What the SA holds can be recorded during a run, at every `sa-show` line
 * and when the run ends, and printed in the style of `saquery -g` and
 * `saquery -m` or as JSON: this is `ibmcast run --sa-show`.
 */
#ifndef IBMCAST_SCENARIO_SA_H
#define IBMCAST_SCENARIO_SA_H

#include <stdbool.h>
#include <stdio.h>

#include "ibmcast/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Adds the SA verbs (sa, sa-join, sa-leave, sa-get, sa-mcast, sa-show,
 * sa-restart), subjects (sa-status, sa-groups, sa-members, sa-mlid,
 * sa-requests, sa-answers, sa-dropped, sa-timeouts, sa-errors) and report
 * section (sa: groups, members, requests served, MADs lost) to l.
 * imc_scn_lang_create() calls it; another call on the same language
 * gives -EEXIST. */
int imc_scn_lang_add_sa(struct imc_scn_lang *l);

struct imc_scn_sa_show;

/* Attaches a recorder to the sa line of s: from then on every run of s
 * records the SA's groups and members at each sa-show line and when it
 * ends, replacing what the run before recorded. Runs of s must not
 * overlap while a recorder is attached. Returns 0, -EINVAL (NULL
 * argument), -ENOENT (s has no sa line), -EBUSY (a recorder is attached
 * already) or -ENOMEM. The recorder keeps copies of everything it
 * prints: it may outlive s. Free it with imc_scn_sa_show_destroy(). */
int imc_scn_sa_show_create(struct imc_scenario *s,
			   struct imc_scn_sa_show **out);

/* Detaches (when s still lives) and frees the recorder. NULL is a
 * no-op. */
void imc_scn_sa_show_destroy(struct imc_scn_sa_show *sh);

/* Snapshots the last run recorded (the one at its end included). */
unsigned imc_scn_sa_show_count(const struct imc_scn_sa_show *sh);

/* Writes the snapshots of the last run in time order: as text, for each
 * a summary line, every group as saquery -g dumps it (MGID, MLID, Q_Key,
 * MTU, rate, P_Key, SL and more) and every member as saquery -m does
 * (PortGID, JoinState, ProxyJoin, the host's name); as JSON, one array
 * with an object per snapshot. Returns 0, or -EIO when f reports an
 * error. */
int imc_scn_sa_show_print(const struct imc_scn_sa_show *sh, FILE *f,
			  bool json);

/* Writes the last snapshot only (the end of the run), as text or as one
 * JSON object. Returns 0, -ENOENT (none recorded), -EINVAL or -EIO. */
int imc_scn_sa_show_print_last(const struct imc_scn_sa_show *sh, FILE *f,
			       bool json);

/* Makes every snapshot also record the forwarding of the group mgid (if
 * it exists then) as the switches' MFTs hold it, as Graphviz DOT
 * (imc_fabric_mft_dot()). Returns 0 or -EINVAL. */
int imc_scn_sa_show_tree(struct imc_scn_sa_show *sh,
			 const struct imc_gid *mgid);

/* Writes the DOT of the last snapshot. Returns 0, -ENOENT (no snapshot,
 * or the group did not exist at the last one), -EINVAL or -EIO. */
int imc_scn_sa_show_dot(const struct imc_scn_sa_show *sh, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
