/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dumpcheck.h - the dump unit tests' two verdicts on a hand-made dump (dumpbuf.h): it
 * opens, or it is refused with one line at a given byte. cmocka failures otherwise.
 */
#ifndef HEAPREF_TEST_DUMPCHECK_H
#define HEAPREF_TEST_DUMPCHECK_H

#include <stdint.h>

#include "dumpbuf.h"
#include "heapref/dump.h"

/* The dump b holds, named "t.dump"; fails the test if it is refused. */
struct hr_dump *open_ok(struct dumpbuf *b);
/* The dump must be refused (HR_EINPUT) with one line "t.dump: byte OFFSET: ...FRAGMENT...". */
void expect_fault(struct dumpbuf *b, uint64_t offset, const char *fragment);

#endif
