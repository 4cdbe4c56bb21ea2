/* Services between scenario plugins (src/scenario/scn.h): a provider
 * registers a kind with the language, a consumer asks the runner for it
 * and never names the provider; without a provider the consumer gets the
 * error the library's provider gives when it is not in use; teardown
 * hooks run from the highest order down, before run data is freed, last
 * set first; the library's plugins provide every kind, and mcast-send
 * and sa-mcast are one verb whose @NAME each plugin resolves. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/scenario.h"
#include "scenario/scn.h"
#include "scenario_fixture.h"

#define TOPO "topology fat-tree:leaves=2,hosts=2,spines=2\n"

static char log_buf[256];

#define note(...) scn_fx_note(log_buf, sizeof(log_buf), __VA_ARGS__)

/* ---- a provider of port GSIs and trackers, order 100 ---- */

static const char prov_key;
static struct imc_gsi *const fake_gsi = (struct imc_gsi *)&prov_key;

static void prov_free(void *data)
{
	(void)data;
	note("free-prov ");
}

static int prov_gsi(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		    bool optional, struct imc_gsi **out)
{
	(void)c;
	note("gsi(%u:%u%s) ", (unsigned)node, port, optional ? ",opt" : "");
	*out = fake_gsi;
	return 0;
}

static int prov_prepare(struct imc_scn_ctx *c)
{
	note("prepare ");
	return imc_scn_data(c, &prov_key) ? 0 :
	       imc_scn_data_set(c, &prov_key, &log_buf, prov_free);
}

static int prov_tracker(struct imc_scn_ctx *c, uint32_t node, unsigned port,
			struct imc_mcast **out)
{
	(void)c;
	(void)node;
	(void)port;
	*out = NULL;
	return -EIO;
}

static const struct scn_svc_ops prov_ops = {
	.gsi = prov_gsi, .prepare = prov_prepare, .tracker = prov_tracker,
};

static void prov_down(struct imc_scn_ctx *c)
{
	(void)c;
	note("down-prov ");
}

static const struct imc_scn_plugin prov_plugin = {
	.name = "prov", .order = 100, .teardown = prov_down,
};

/* ---- a consumer, order 200: use-gsi HOST [optional] ---- */

struct use_arg {
	uint32_t node;
	unsigned port;
	bool optional;
};

static const char use_key;

static int use_parse(struct imc_scn_parser *p, unsigned argc,
		     const char *const *argv, void **data)
{
	struct use_arg *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	*data = a;
	if (argc < 1 || argc > 2)
		return imc_scn_parse_error(p, "expected 'use-gsi HOST [optional]'");
	a->optional = argc == 2 && !strcmp(argv[1], "optional");
	return imc_scn_parse_host(p, argv[0], &a->node, &a->port);
}

static void use_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct use_arg *a = data;

	fputc(' ', f);
	imc_scn_print_port(f, t, a->node, a->port);
	if (a->optional)
		fputs(" optional", f);
}

static void use_free(void *data)
{
	(void)data;
	note("free-use ");
}

static int use_run(struct imc_scn_ctx *c, void *data)
{
	const struct use_arg *a = data;
	struct imc_gsi *g = NULL;
	int rc;

	/* The provider's state first: the consumer's is freed before it. */
	rc = scn_svc_tracker_prepare(c);
	if (!rc && !imc_scn_data(c, &use_key))
		rc = imc_scn_data_set(c, &use_key, &log_buf, use_free);
	if (!rc)
		rc = scn_svc_gsi(c, a->node, a->port, a->optional, &g);
	note("use=%d%s ", rc, g == fake_gsi ? ",fake" : "");
	return rc == -ENOENT && a->optional ? 0 : rc;
}

static const struct imc_scn_verb use_verb = {
	.name = "use-gsi", .kind = IMC_SCN_ACTION, .parse = use_parse,
	.print = use_print, .run = use_run, .free = free,
};

static void use_down(struct imc_scn_ctx *c)
{
	(void)c;
	note("down-use ");
}

static const struct imc_scn_plugin use_plugin = {
	.name = "use", .order = 200, .teardown = use_down,
};

static struct imc_scn_lang *lang_with(bool provider)
{
	struct imc_scn_lang *l;

	assert_int_equal(scn_lang_create_core(&l), 0);
	assert_int_equal(imc_scn_lang_add_verb(l, &use_verb), 0);
	assert_int_equal(imc_scn_lang_add_plugin(l, &use_plugin), 0);
	if (provider) {
		assert_int_equal(imc_scn_lang_add_plugin(l, &prov_plugin), 0);
		assert_int_equal(scn_lang_add_service(l, SCN_SVC_PORT_GSI,
						      &prov_ops), 0);
		assert_int_equal(scn_lang_add_service(l, SCN_SVC_PORT_TRACKER,
						      &prov_ops), 0);
	}
	return l;
}

static int run(struct imc_scn_lang *l, const char *text, char *err,
	       size_t errlen)
{
	struct imc_scenario_parse_opts o = { .lang = l };
	struct imc_scenario *s = scn_fx_parse(text, &o);
	struct imc_scenario_result r;
	int rc;

	log_buf[0] = '\0';
	rc = imc_scenario_run(s, NULL, &r, err, errlen);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
	return rc;
}

static void test_register(void **state)
{
	static const struct scn_svc_ops half = { .prepare = prov_prepare };
	struct imc_scn_lang *l;

	(void)state;
	assert_int_equal(scn_lang_create_core(&l), 0);
	assert_null(scn_service(l, SCN_SVC_PORT_GSI));
	/* A kind's functions must all be there. */
	assert_int_equal(scn_lang_add_service(l, SCN_SVC_PORT_TRACKER, &half),
			 -EINVAL);
	assert_int_equal(scn_lang_add_service(l, SCN_SVC_SA_ENGINE, &prov_ops),
			 -EINVAL);
	assert_int_equal(scn_lang_add_service(l, SCN_SVC_NAME_SA, &prov_ops),
			 -EINVAL);
	assert_int_equal(scn_lang_add_service(l, SCN_SVC_N, &prov_ops),
			 -EINVAL);
	assert_int_equal(scn_lang_add_service(l, SCN_SVC_PORT_GSI, NULL),
			 -EINVAL);
	assert_int_equal(scn_lang_add_service(l, SCN_SVC_PORT_GSI, &prov_ops),
			 0);
	/* One provider a kind. */
	assert_int_equal(scn_lang_add_service(l, SCN_SVC_PORT_GSI, &prov_ops),
			 -EEXIST);
	assert_ptr_equal(scn_service(l, SCN_SVC_PORT_GSI), &prov_ops);
	assert_null(scn_service(l, SCN_SVC_PORT_TRACKER));
	assert_null(scn_service(l, SCN_SVC_N));
	imc_scn_lang_destroy(l);

	/* The library's plugins provide every kind. */
	assert_int_equal(imc_scn_lang_create(&l), 0);
	for (int k = 0; k < SCN_SVC_N; k++)
		assert_non_null(scn_service(l, (enum scn_svc)k));
	assert_int_equal(scn_lang_add_service(l, SCN_SVC_PORT_GSI, &prov_ops),
			 -EEXIST);
	imc_scn_lang_destroy(l);
}

static void test_provider(void **state)
{
	struct imc_scn_lang *l = lang_with(true);
	char err[256];

	(void)state;
	assert_int_equal(run(l, TOPO "stop 1ms\nat 10us use-gsi H-000002\n"
			     "at 20us use-gsi H-000003:1 optional\n",
			     err, sizeof(err)), 0);
	/* In this topology H-000002 is node 1. Teardown hooks
	 * from the highest order down, then run data, last
	 * set first: the consumer's before the provider's. */
	assert_string_equal(log_buf,
		"prepare gsi(1:1) use=0,fake prepare gsi(2:1,opt) use=0,fake "
		"down-use down-prov free-use free-prov ");
	imc_scn_lang_destroy(l);
}

static void test_no_provider(void **state)
{
	struct imc_scn_lang *l = lang_with(false);
	char err[256];

	(void)state;
	/* Asked for, the GSI fails the run with the SA plugin's words. */
	assert_int_equal(run(l, TOPO "stop 1ms\nat 10us use-gsi H-000002\n",
			     err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "t.scn:3: use-gsi: no SA runs: the scenario "
			    "has no 'sa' line");
	assert_string_equal(log_buf, "use=-2 down-use free-use ");
	/* Optional, it is -ENOENT and the run goes on. */
	assert_int_equal(run(l, TOPO "stop 1ms\nat 10us use-gsi H-000002 "
			     "optional\n", err, sizeof(err)), 0);
	assert_string_equal(log_buf, "use=-2 down-use free-use ");
	imc_scn_lang_destroy(l);
}

/* Both names of the one verb: same options, same printing; @NAME is read
 * by the plugin whose verb it is. */
static void test_one_send_verb(void **state)
{
	static const char text[] = TOPO
		"stop 10ms\nsa\n"
		"mcast-join H-000002 ff15::1 create as=m\n"
		"sa-join H-000003 ff15::2 create as=s\n"
		"at 1ms mcast-send H-000001 @m count=3 size=100 interval=2us sl=1\n"
		"at 1ms sa-mcast H-000001 @s count=3 size=100 interval=2us sl=1\n"
		"at 1ms sa-mcast H-000001 0\n";
	struct imc_scenario *s = scn_fx_parse(text, NULL);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	assert_non_null(f);
	imc_scenario_print(s, f);
	fclose(f);
	assert_non_null(strstr(out, "mcast-send H-000001:1 @m count=3 size=100 "
			       "interval=2us sl=1\n"));
	assert_non_null(strstr(out, "sa-mcast H-000001:1 @s count=3 size=100 "
			       "interval=2us sl=1\n"));
	assert_non_null(strstr(out, "sa-mcast H-000001:1 0 count=1 size=64 "
			       "interval=1us sl=0\n"));
	free(out);
	imc_scenario_destroy(s);
	/* Each verb reads only its own plugin's names. */
	scn_fx_expect_error(TOPO "sa-join H-000003 ff15::2 create as=s\n"
			    "mcast-send H-000001 @s\n", NULL,
			    "t.scn:3: mcast-send: @s: no mcast-join ... as=s "
			    "on an earlier line");
	scn_fx_expect_error(TOPO "mcast-join H-000002 ff15::1 create as=m\n"
			    "sa-mcast H-000001 @m\n", NULL,
			    "t.scn:3: sa-mcast: @m: no sa-join ... as=m on an "
			    "earlier line");
	scn_fx_expect_error(TOPO "sa-mcast H-000001\n", NULL,
			    "t.scn:2: sa-mcast: expected 'sa-mcast FROM "
			    "MGID|@NAME [count=N] [size=BYTES] [interval=TIME] "
			    "[sl=N]'");
	scn_fx_expect_error(TOPO "mcast-send H-000001 0\n", NULL,
			    "t.scn:2: mcast-send: MGID: expected a multicast "
			    "GID (ff12:...) or @NAME, got '0'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_provider),
		cmocka_unit_test(test_no_provider),
		cmocka_unit_test(test_one_send_verb),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
