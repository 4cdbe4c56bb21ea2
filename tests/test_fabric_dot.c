/* imc_fabric_mft_dot(): the forwarding of an MLID drawn from the MFTs as
 * programmed, tree edges and one-sided edges told apart. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fabric_world.h"

/* fat-tree:leaves=2,hosts=3,spines=2: hosts are nodes 0..5, leaves 6 and
 * 7 (ports 1..3 to hosts, 4..5 to spines), spines 8 and 9. */
enum { LEAF1 = 6, LEAF2 = 7, SPINE1 = 8 };

static void set(struct world *w, uint32_t sw, const unsigned *ports,
		unsigned n)
{
	struct imc_portmask m;

	memset(&m, 0, sizeof(m));
	for (unsigned i = 0; i < n; i++)
		imc_portmask_set(&m, ports[i]);
	assert_int_equal(imc_fabric_mft_set(w->f, sw, 0xc001, &m), 0);
}

static char *draw(struct world *w, uint16_t mlid)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(imc_fabric_mft_dot(w->f, mlid, "ff12::1", f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_tree_and_broken_edge(void **state)
{
	static const unsigned l1[] = { 1, 4 }, l2[] = { 2, 4 };
	static const unsigned s1[] = { 1, 2 }, s1_half[] = { 1 };
	struct world w;
	char *d;

	(void)state;
	world_up(&w, "fat-tree:leaves=2,hosts=3,spines=2", NULL);
	set(&w, LEAF1, l1, 2);
	set(&w, LEAF2, l2, 2);
	set(&w, SPINE1, s1, 2);
	d = draw(&w, 0xc001);
	assert_non_null(strstr(d, "graph \"mlid_0xc001\" {"));
	assert_non_null(strstr(d, "label=\"ff12::1  MLID 0xc001\""));
	assert_non_null(strstr(d, "\"L-0001\" [shape=box label=\"L-0001\\nMFT 1,4\"]"));
	assert_non_null(strstr(d, "\"L-0001\" -- \"H-000001:1\""));
	assert_non_null(strstr(d, "\"L-0002\" -- \"H-000005:1\""));
	assert_non_null(strstr(d, "\"L-0001\" -- \"S-0001\" [taillabel=\"4\" headlabel=\"1\"]"));
	assert_null(strstr(d, "dashed"));
	assert_non_null(strstr(d, "switches 3, tree edges 2, one-sided 0, receiving ports 2"));
	free(d);

	/* The spine stops forwarding to leaf 2: leaf 2's copies toward it
	 * are dropped there, and the drawing says so. */
	set(&w, SPINE1, s1_half, 1);
	d = draw(&w, 0xc001);
	assert_non_null(strstr(d, "\"L-0002\" -- \"S-0001\" [taillabel=\"4\" headlabel=\"2\" style=dashed color=red]"));
	assert_non_null(strstr(d, "switches 3, tree edges 1, one-sided 1, receiving ports 2"));
	free(d);

	/* An MLID with no entry anywhere: an empty graph. */
	d = draw(&w, 0xc002);
	assert_non_null(strstr(d, "switches 0, tree edges 0, one-sided 0, receiving ports 0"));
	free(d);

	assert_int_equal(imc_fabric_mft_dot(w.f, 0x1234, NULL, stdout), -EINVAL);
	assert_int_equal(imc_fabric_mft_dot(NULL, 0xc001, NULL, stdout), -EINVAL);
	world_down(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_and_broken_edge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
