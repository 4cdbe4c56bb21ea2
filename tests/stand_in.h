/* A stand-in program for a test: a shell script written to a directory,
 * e.g. in the place of opensm. Include after <cmocka.h>. */
#ifndef IMC_TESTS_STAND_IN_H
#define IMC_TESTS_STAND_IN_H

#include <stdio.h>
#include <sys/stat.h>

/* Writes dir/name as "#!/bin/sh" and body, executable by its owner, and
 * returns its path (a static buffer: the next call reuses it). */
static inline const char *stand_in(const char *dir, const char *name,
				   const char *body)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0700), 0);
	return path;
}

#endif
