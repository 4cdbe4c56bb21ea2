/* The join tracker's names, listing and counters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "mcast/mcast_int.h"

/* ------------------------------------------------------------------ */
/* Names. */

const char *imc_mcast_event_str(enum imc_mcast_event_type t)
{
	switch (t) {
	case IMC_MCAST_EV_JOINED:
		return "joined";
	case IMC_MCAST_EV_ERROR:
		return "error";
	case IMC_MCAST_EV_REJOINING:
		return "rejoining";
	case IMC_MCAST_EV_WAITING:
		return "waiting";
	}
	return "?";
}

const char *imc_mcast_state_str(enum imc_mcast_state s)
{
	switch (s) {
	case IMC_MCAST_PENDING:
		return "pending";
	case IMC_MCAST_JOINED:
		return "joined";
	case IMC_MCAST_REJOINING:
		return "rejoining";
	case IMC_MCAST_WAITING:
		return "waiting";
	case IMC_MCAST_FAILED:
		return "failed";
	}
	return "?";
}

const char *imc_mcast_port_event_str(enum imc_mcast_port_event ev)
{
	switch (ev) {
	case IMC_MCAST_PORT_ACTIVE:
		return "active";
	case IMC_MCAST_PORT_DOWN:
		return "down";
	case IMC_MCAST_PORT_LID_CHANGE:
		return "lid-change";
	case IMC_MCAST_PORT_SM_CHANGE:
		return "sm-change";
	case IMC_MCAST_PORT_REREGISTER:
		return "reregister";
	case IMC_MCAST_PORT_PKEY_CHANGE:
		return "pkey-change";
	}
	return "?";
}

/* ------------------------------------------------------------------ */
/* Listing and counters. */

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = *(const struct group *const *)a;
	const struct group *y = *(const struct group *const *)b;

	return imc_gid_cmp(&x->mgid, &y->mgid);
}

int imc_mcast_foreach_group(const struct imc_mcast *t,
			    void (*fn)(void *arg,
				       const struct imc_mcast_group_info *g),
			    void *arg)
{
	struct group **v;
	size_t n = 0;
	const struct imc_list *l;

	if (!t->groups.n)
		return 0;
	v = malloc(t->groups.n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (l = t->all.next; l != &t->all; l = l->next) {
		struct group *g = imc_container_of(l, struct group, all);

		if (!imc_gid_is_zero(&g->mgid))
			v[n++] = g;
	}
	qsort(v, n, sizeof(*v), cmp_group);
	for (size_t i = 0; i < n; i++) {
		struct imc_mcast_group_info gi;
		const struct group *g = v[i];

		memset(&gi, 0, sizeof(gi));
		if (g->rec_valid)
			gi.rec = g->rec;
		else
			gi.rec.mgid = g->mgid;
		gi.rec.join_state = sure(g);
		gi.join_state = sure(g);
		gi.wanted = want(g);
		gi.members = g->n_members;
		gi.waiting = g->state == G_ABSENT;
		gi.joined = sure(g) &&
			    (g->state == G_IDLE || g->state == G_SET ||
			     g->state == G_DELETE);
		fn(arg, &gi);
	}
	free(v);
	return 0;
}

void imc_mcast_get_stats(const struct imc_mcast *t, struct imc_mcast_stats *st)
{
	*st = t->st;
}
