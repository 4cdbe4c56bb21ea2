/* The lock per port (src/mcastd/port_lock.c): a second owner of a port is
 * refused and told who holds it, in this process or another; the lock
 * goes with its holder's death; a released lock is taken again. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ibmcast/port_lock.h"

static void test_second_owner(void **state)
{
	char dir[] = "/tmp/imc-lock-XXXXXX", holder[64], want[64];
	struct imc_port_lock *a = NULL, *b = NULL, *c = NULL;
	struct stat st;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(imc_port_lock_take(dir, 0x0002c9030000000aULL, 1,
					    "first", &a, holder,
					    sizeof(holder)), 0);
	assert_string_equal(holder, "");
	assert_non_null(strstr(imc_port_lock_path(a),
			       "/port-0002c9030000000a-1.lock"));
	snprintf(want, sizeof(want), "%ld first", (long)getpid());
	assert_int_equal(imc_port_lock_take(dir, 0x0002c9030000000aULL, 1,
					    "second", &b, holder,
					    sizeof(holder)), -EBUSY);
	assert_null(b);
	assert_string_equal(holder, want);
	/* another port of the same CA is another lock */
	assert_int_equal(imc_port_lock_take(dir, 0x0002c9030000000aULL, 2,
					    "second", &b, holder,
					    sizeof(holder)), 0);
	imc_port_lock_release(a);
	assert_int_equal(stat(imc_port_lock_path(b), &st), 0);
	assert_int_equal(imc_port_lock_take(dir, 0x0002c9030000000aULL, 1,
					    "third", &c, holder,
					    sizeof(holder)), 0);
	imc_port_lock_release(b);
	imc_port_lock_release(c);
	assert_int_equal(rmdir(dir), 0);
}

static void test_holder_killed(void **state)
{
	char dir[] = "/tmp/imc-lock-XXXXXX", holder[64];
	struct imc_port_lock *l = NULL;
	int p[2], st;
	pid_t pid;
	char ok;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct imc_port_lock *cl = NULL;

		if (imc_port_lock_take(dir, 7, 1, "child", &cl, NULL, 0))
			_exit(1);
		if (write(p[1], "k", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(p[0], &ok, 1), 1);
	assert_int_equal(imc_port_lock_take(dir, 7, 1, "parent", &l, holder,
					    sizeof(holder)), -EBUSY);
	assert_non_null(strstr(holder, " child"));
	assert_int_equal(atol(holder), (long)pid);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	/* the kernel dropped the dead holder's lock */
	assert_int_equal(imc_port_lock_take(dir, 7, 1, "parent", &l, holder,
					    sizeof(holder)), 0);
	imc_port_lock_release(l);
	close(p[0]);
	close(p[1]);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_second_owner),
		cmocka_unit_test(test_holder_killed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
