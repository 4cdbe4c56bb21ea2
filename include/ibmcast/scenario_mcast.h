/* The join tracker in scenarios (docs/scenarios.md, "The join tracker").
 *
 * mcast-join, mcast-leave and mcast-send lines join and leave groups
 * through a join tracker (mcast.h) on each host port they name, on the
 * embedded fabric (mcast_fabric.h), against the SA of the scenario's sa
 * line; the mcast-* subjects observe the members, the trackers and their
 * counters. The mcast-tracker setting configures every tracker.
 * imc_scn_lang_create() adds all of them to its language.
 *
 * What the trackers hold can be recorded during a run, at every
 * mcast-show line and when the run ends, and printed as `ibmcast mcast
 * show` prints a port's groups, or as JSON: this is `ibmcast run
 * --mcast-show`.
 */
#ifndef IBMCAST_SCENARIO_MCAST_H
#define IBMCAST_SCENARIO_MCAST_H

#include <stdbool.h>
#include <stdio.h>

#include "ibmcast/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Adds the tracker's verbs (mcast-tracker, mcast-join, mcast-leave,
 * mcast-send, mcast-show) and subjects (mcast-state, mcast-status,
 * mcast-callbacks, mcast-groups, mcast-members, mcast-held, mcast-joined,
 * mcast-handles, and the counters mcast-joins, mcast-leaves, mcast-local,
 * mcast-mads, mcast-retries, mcast-timeouts, mcast-rejoins, mcast-errors,
 * mcast-traps, mcast-lost) and report section (mcast: members, callbacks,
 * the trackers' counters) to l. imc_scn_lang_create() calls it; another
 * call on the same language gives -EEXIST. */
int imc_scn_lang_add_mcast(struct imc_scn_lang *l);

struct imc_scn_mcast_show;

/* Attaches a recorder to s: from then on every run of s records each
 * tracker's port and groups at each mcast-show line and when it ends,
 * replacing what the run before recorded. Runs of s must not overlap
 * while a recorder is attached. Returns 0, -EINVAL (NULL argument),
 * -ENOENT (s has no mcast-join line), -EBUSY (a recorder is attached
 * already) or -ENOMEM. The recorder keeps copies of what it prints: it
 * may outlive s. Free it with imc_scn_mcast_show_destroy(). */
int imc_scn_mcast_show_create(struct imc_scenario *s,
			      struct imc_scn_mcast_show **out);

/* Detaches (when s still lives) and frees the recorder. NULL is a
 * no-op. */
void imc_scn_mcast_show_destroy(struct imc_scn_mcast_show *sh);

/* Snapshots the last run recorded (the one at its end included). */
unsigned imc_scn_mcast_show_count(const struct imc_scn_mcast_show *sh);

/* Writes the snapshots of the last run in time order: as text, for each
 * a summary line, then every port with a tracker (in topology order) and
 * its groups in MGID order, one line each as `ibmcast mcast show` prints
 * them (MLID, JoinState held at the SA and wanted by the members, the
 * number of members, joined or pending, and the group's record); as JSON,
 * one array with an object per snapshot. Returns 0, or -EIO when f
 * reports an error. */
int imc_scn_mcast_show_print(const struct imc_scn_mcast_show *sh, FILE *f,
			     bool json);

#ifdef __cplusplus
}
#endif
#endif
