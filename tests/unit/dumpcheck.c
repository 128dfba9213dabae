/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dumpcheck.c - see dumpcheck.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dumpcheck.h"

struct hr_dump *open_ok(struct dumpbuf *b)
{
	struct hr_error err = { 0 };
	struct hr_dump *d = hr_dump_open_bytes(b->bytes, b->len, "t.dump", &err);

	if (!d)
		fail_msg("unexpected error: %s", err.msg);
	return d;
}

void expect_fault(struct dumpbuf *b, uint64_t offset, const char *fragment)
{
	struct hr_error err = { 0 };
	struct hr_dump *d = hr_dump_open_bytes(b->bytes, b->len, "t.dump", &err);
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "t.dump: byte %llu: ", (unsigned long long)offset);
	if (d) {
		hr_dump_free(d);
		fail_msg("dump accepted, expected a fault at byte %llu: %s",
			 (unsigned long long)offset, fragment);
	}
	assert_int_equal(err.code, HR_EINPUT);
	if (strncmp(err.msg, prefix, strlen(prefix)) != 0 || !strstr(err.msg, fragment))
		fail_msg("got \"%s\", want prefix \"%s\" and \"%s\"", err.msg, prefix, fragment);
	assert_null(strchr(err.msg, '\n'));
}
