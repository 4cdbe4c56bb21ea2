/* The scenario language: verbs and expectation subjects by name.
 *
 * Two arrays of pointers kept sorted by name; lookups are binary
 * searches, additions insertion-sort one entry in. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/topo.h"
#include "ibmcast/scenario_ipoib.h"
#include "ibmcast/scenario_mcast.h"
#include "ibmcast/scenario_sa.h"
#include "scenario/scn.h"
#include "scenario/scn_served.h"
#include "util/vec.h"

#define NAME_MAX_LEN 32

struct imc_scn_lang {
	const void **verb;     /* const struct imc_scn_verb * */
	size_t nverbs, verb_cap;
	const void **subj;     /* const struct imc_scn_subject * */
	size_t nsubjs, subj_cap;
	/* Report sections by rank, then name: a handful, kept in order by
	 * insertion. */
	const struct imc_scn_section **sec;
	size_t nsecs, sec_cap;
	/* Plugins by order (a handful), kept in order by insertion. */
	const struct imc_scn_plugin **plug;
	size_t nplugs, plug_cap;
	const struct scn_svc_ops *svc[SCN_SVC_N];   /* by kind, NULL: none */
};

static const char *const reserved[] = {
	"at", "expect", "topology", "seed", "stop", "fabric", "links",
};

bool scn_reserved(const char *name)
{
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(reserved); i++)
		if (!strcmp(name, reserved[i]))
			return true;
	return false;
}

static bool name_ok(const char *name)
{
	size_t n;

	if (!name || !(name[0] >= 'a' && name[0] <= 'z'))
		return false;
	for (n = 1; name[n]; n++) {
		char c = name[n];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-'))
			return false;
	}
	return n <= NAME_MAX_LEN;
}

/* Verbs and subjects both start with their name. */
static int name_cmp(const void *key, const void *entry)
{
	return strcmp(key, **(const char *const *const *)entry);
}

/* Index of name in a sorted array of verbs or subjects, or -(where it
 * would go) - 1. */
static long search(const void *const *arr, size_t n, const char *name)
{
	return imc_vec_bsearch(arr, n, sizeof(*arr), name, name_cmp);
}

static int insert(const void ***arr, size_t *n, size_t *cap,
		  const void *item, const char *name)
{
	long at = search(*arr, *n, name);

	if (at >= 0)
		return -EEXIST;
	if (IMC_VEC_RESERVE(arr, cap, *n + 1))
		return -ENOMEM;
	at = -at - 1;
	memmove(*arr + at + 1, *arr + at, (*n - (size_t)at) * sizeof(**arr));
	(*arr)[at] = item;
	(*n)++;
	return 0;
}

int imc_scn_lang_add_verb(struct imc_scn_lang *l, const struct imc_scn_verb *v)
{
	if (!l || !v || !name_ok(v->name) || scn_reserved(v->name) ||
	    !v->parse || !v->print ||
	    (v->kind != IMC_SCN_SETTING && v->kind != IMC_SCN_ACTION) ||
	    (v->kind == IMC_SCN_ACTION && !v->run))
		return -EINVAL;
	return insert(&l->verb, &l->nverbs, &l->verb_cap, v,
		      v->name);
}

int imc_scn_lang_add_subject(struct imc_scn_lang *l,
			     const struct imc_scn_subject *s)
{
	if (!l || !s || !name_ok(s->name) || scn_op_parse(s->name) >= 0 ||
	    !s->parse || !s->print || !s->observe)
		return -EINVAL;
	return insert(&l->subj, &l->nsubjs, &l->subj_cap, s,
		      s->name);
}

int imc_scn_lang_add_section(struct imc_scn_lang *l,
			     const struct imc_scn_section *s)
{
	size_t at;

	if (!l || !s || !name_ok(s->name) || !s->report)
		return -EINVAL;
	for (size_t i = 0; i < l->nsecs; i++)
		if (!strcmp(l->sec[i]->name, s->name))
			return -EEXIST;
	if (IMC_VEC_RESERVE(&l->sec, &l->sec_cap, l->nsecs + 1))
		return -ENOMEM;
	for (at = l->nsecs; at > 0; at--) {
		const struct imc_scn_section *p = l->sec[at - 1];

		if (p->rank < s->rank ||
		    (p->rank == s->rank && strcmp(p->name, s->name) < 0))
			break;
		l->sec[at] = p;
	}
	l->sec[at] = s;
	l->nsecs++;
	return 0;
}

int imc_scn_lang_add_plugin(struct imc_scn_lang *l,
			    const struct imc_scn_plugin *p)
{
	size_t at;

	if (!l || !p || !name_ok(p->name))
		return -EINVAL;
	for (size_t i = 0; i < l->nplugs; i++)
		if (!strcmp(l->plug[i]->name, p->name))
			return -EEXIST;
	if (IMC_VEC_RESERVE(&l->plug, &l->plug_cap, l->nplugs + 1))
		return -ENOMEM;
	/* Stable: equal orders keep the order they were added in. */
	for (at = l->nplugs; at > 0 && l->plug[at - 1]->order > p->order; at--)
		l->plug[at] = l->plug[at - 1];
	l->plug[at] = p;
	l->nplugs++;
	return 0;
}

int scn_plugins_start(struct imc_scn_ctx *c)
{
	const struct imc_scn_lang *l = scn_scenario(c)->lang;
	int rc = 0;

	for (size_t i = 0; i < l->nplugs && !rc; i++)
		if (l->plug[i]->start)
			rc = l->plug[i]->start(c);
	return rc;
}

void scn_plugins_teardown(struct imc_scn_ctx *c)
{
	const struct imc_scn_lang *l = scn_scenario(c)->lang;

	for (size_t i = l->nplugs; i-- > 0;)
		if (l->plug[i]->teardown)
			l->plug[i]->teardown(c);
}

void imc_scn_links_changed(struct imc_scn_ctx *c)
{
	const struct imc_scn_lang *l = scn_scenario(c)->lang;

	for (size_t i = 0; i < l->nplugs; i++)
		if (l->plug[i]->links_changed)
			l->plug[i]->links_changed(c);
}

int scn_lang_add_service(struct imc_scn_lang *l, enum scn_svc kind,
			 const struct scn_svc_ops *o)
{
	bool ok;

	if (!l || !o || (unsigned)kind >= SCN_SVC_N)
		return -EINVAL;
	switch (kind) {
	case SCN_SVC_PORT_GSI: ok = o->gsi; break;
	case SCN_SVC_PORT_TRACKER: ok = o->prepare && o->tracker; break;
	case SCN_SVC_SA_ENGINE: ok = o->engine && o->send; break;
	default: ok = o->space && o->what && o->resolve; break;
	}
	if (!ok)
		return -EINVAL;
	if (l->svc[kind])
		return -EEXIST;
	l->svc[kind] = o;
	return 0;
}

const struct scn_svc_ops *scn_service(const struct imc_scn_lang *l,
				      enum scn_svc kind)
{
	return (unsigned)kind < SCN_SVC_N ? l->svc[kind] : NULL;
}

#define svc(c, k) (scn_scenario(c)->lang->svc[k])

/* Without a provider, the errors the SA's and the trackers' plugins give
 * when they are not in use. */
static int no_sa(struct imc_scn_ctx *c)
{
	return imc_scn_fail(c, -ENOENT,
			    "no SA runs: the scenario has no 'sa' line");
}

int scn_svc_gsi(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		bool optional, struct imc_gsi **out)
{
	const struct scn_svc_ops *o = svc(c, SCN_SVC_PORT_GSI);

	if (o)
		return o->gsi(c, node, port, optional, out);
	return optional ? -ENOENT : no_sa(c);
}

int scn_svc_tracker_prepare(struct imc_scn_ctx *c)
{
	const struct scn_svc_ops *o = svc(c, SCN_SVC_PORT_TRACKER);

	return o ? o->prepare(c) : 0;
}

int scn_svc_tracker(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		    struct imc_mcast **out)
{
	const struct scn_svc_ops *o = svc(c, SCN_SVC_PORT_TRACKER);

	if (o)
		return o->tracker(c, node, port, out);
	return imc_scn_fail(c, -ENOENT, "no join tracker on %s:%u: %s",
			    imc_scn_topo(c)->node[node].name, port,
			    strerror(ENOENT));
}

const struct imc_sa *scn_svc_sa_engine(struct imc_scn_ctx *c)
{
	const struct scn_svc_ops *o = svc(c, SCN_SVC_SA_ENGINE);

	return o ? o->engine(c) : NULL;
}

int scn_svc_group_send(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		       const struct imc_gid *mgid, uint32_t count,
		       uint32_t size, imc_time_t interval, uint8_t sl)
{
	const struct scn_svc_ops *o = svc(c, SCN_SVC_SA_ENGINE);

	return o ? o->send(c, node, port, mgid, count, size, interval, sl) :
		   no_sa(c);
}

unsigned scn_lang_nsections(const struct imc_scn_lang *l)
{
	return (unsigned)l->nsecs;
}

const struct imc_scn_section *scn_lang_section(const struct imc_scn_lang *l,
					       unsigned i)
{
	return i < l->nsecs ? l->sec[i] : NULL;
}

const struct imc_scn_verb *imc_scn_lang_verb(const struct imc_scn_lang *l,
					     const char *name)
{
	long i = search(l->verb, l->nverbs, name);

	return i >= 0 ? (const struct imc_scn_verb *)l->verb[i] : NULL;
}

const struct imc_scn_subject *
imc_scn_lang_subject(const struct imc_scn_lang *l, const char *name)
{
	long i = search(l->subj, l->nsubjs, name);

	return i >= 0 ? (const struct imc_scn_subject *)l->subj[i] : NULL;
}

void imc_scn_lang_destroy(struct imc_scn_lang *l)
{
	if (!l)
		return;
	free(l->verb);
	free(l->subj);
	free(l->sec);
	free(l->plug);
	free(l);
}

int scn_lang_add_parts(struct imc_scn_lang *l, const struct scn_parts *p)
{
	int rc = 0;

	for (size_t i = 0; i < p->nverbs && !rc; i++)
		rc = imc_scn_lang_add_verb(l, p->verbs[i]);
	for (size_t i = 0; i < p->nsubjects && !rc; i++)
		rc = imc_scn_lang_add_subject(l, &p->subjects[i]);
	for (size_t i = 0; i < p->nsections && !rc; i++)
		rc = imc_scn_lang_add_section(l, p->sections[i]);
	for (size_t i = 0; i < p->nservices && !rc; i++)
		rc = scn_lang_add_service(l, p->services[i].kind,
					  p->services[i].ops);
	if (!rc && p->plugin)
		rc = imc_scn_lang_add_plugin(l, p->plugin);
	return rc;
}

int scn_lang_create_core(struct imc_scn_lang **out)
{
	const struct scn_parts core = {
		.verbs = scn_builtin_verbs, .nverbs = scn_builtin_nverbs,
		.subjects = scn_builtin_subjects,
		.nsubjects = scn_builtin_nsubjects,
		.sections = scn_builtin_sections,
		.nsections = scn_builtin_nsections,
	};
	struct imc_scn_lang *l = calloc(1, sizeof(*l));
	int rc = l ? scn_lang_add_parts(l, &core) : -ENOMEM;

	if (rc)
		imc_scn_lang_destroy(l);
	else
		*out = l;
	return rc;
}

int imc_scn_lang_create(struct imc_scn_lang **out)
{
	struct imc_scn_lang *l;
	int rc = scn_lang_create_core(&l);

	if (rc)
		return rc;
	rc = imc_scn_lang_add_sa(l);
	if (!rc)
		rc = imc_scn_lang_add_mcast(l);
	if (!rc)
		rc = imc_scn_lang_add_ipoib(l);
	if (!rc)
		rc = scn_lang_add_served(l);
	if (rc)
		imc_scn_lang_destroy(l);
	else
		*out = l;
	return rc;
}
