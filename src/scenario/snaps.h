/* A recorder's series of snapshots (sa-show, mcast-show): snapshots of
 * one kind kept in the order taken, each freed by the kind's fini, and
 * printed as text one after another or as a JSON array. Private to the
 * library. */
#ifndef IMC_SCENARIO_SNAPS_H
#define IMC_SCENARIO_SNAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ibmcast/common.h"
#include "ibmcast/json.h"

struct scn_snaps_kind {
	size_t size;
	void (*fini)(void *snap);
	void (*text)(FILE *f, const void *snap);
	void (*to_json)(struct imc_json *j, const void *snap);
};

struct scn_snaps {
	const struct scn_snaps_kind *k;
	unsigned char *v;
	size_t n;
	size_t cap;                 /* bytes */
};

/* Appends a copy of snap: 0, or -ENOMEM and snap stays the caller's. */
int scn_snaps_add(struct scn_snaps *s, const void *snap);
/* The last snapshot, or NULL before the first. */
const void *scn_snaps_last(const struct scn_snaps *s);
/* Frees every snapshot (clear keeps the storage for the next run). */
void scn_snaps_clear(struct scn_snaps *s);
void scn_snaps_fini(struct scn_snaps *s);
/* A snapshot's first words: "WHAT at TIME (VERB, line N):" or "WHAT at
 * the end of the run (TIME):" (line 0). */
void scn_snap_text_head(FILE *f, const char *what, const char *verb,
			imc_time_t at, unsigned line);
/* A snapshot's JSON object opened, with at_ns, at, and line or end. */
void scn_snap_json_head(struct imc_json *j, imc_time_t at, unsigned line);
/* Every snapshot as text, or as a JSON array; 0 or -EIO. */
int scn_snaps_write(const struct scn_snaps *s, FILE *f, bool json);

#endif
