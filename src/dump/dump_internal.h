/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dump_internal.h - the dump reader's private declarations: what tests of its two
 * reading threads need (test_dump_split.c). The model it fills is model_internal.h's.
 */
#ifndef HEAPREF_DUMP_INTERNAL_H
#define HEAPREF_DUMP_INTERNAL_H

#include "model_internal.h"

/*
 * hr_dump_open_bytes(), reading the second half of the records with another thread
 * when the part after the params record is split_min bytes or more (normally 64 MiB;
 * tests lower it), and that thread taking on part of the first half when it is done
 * first (a steal) if steal_min bytes or more are left (normally 8 MiB; here split_min
 * if less). The result is the same whatever split_min.
 */
struct hr_dump *dump_open_bytes_split(const void *bytes, size_t len, const char *name,
				      size_t split_min, struct hr_error *err);
/*
 * dump_open_bytes_split() with split_min 0, the second half's start looked for from
 * byte split_at of the file rather than from the middle of the estimated cost (tests
 * put it where they need it). The result is the same wherever it is. steal_min is 0
 * too: whether a steal happens is then a matter of timing, and changes nothing either.
 */
struct hr_dump *dump_open_bytes_split_at(const void *bytes, size_t len, const char *name,
					 size_t split_at, struct hr_error *err);
/* How a test has a dump's reading split between two threads. */
struct dump_split_plan {
	size_t split_min;   /* as dump_open_bytes_split() */
	size_t split_at;    /* as dump_open_bytes_split_at(); 0: where the reader would */
	size_t steal_min;   /* bytes left to the first thread for a steal */
	size_t steal_at;    /* where the steal's start is looked for; 0: where the reader would */
	bool steal_wait;    /* the first thread waits for the steal to be decided, so that
			     * it happens (if a start is found), whatever the timing */
};
/* A dump read as plan says. The result is the same whatever the plan. */
struct hr_dump *dump_open_bytes_planned(const void *bytes, size_t len, const char *name,
					const struct dump_split_plan *plan, struct hr_error *err);
/* What became of reading the second half with another thread (and of a steal). */
enum dump_split {
	DUMP_SPLIT_NONE,    /* not tried: a small file, one processor, no plausible start
			     * (a steal: also the second thread not done first, or less than
			     * steal_min left to the first) */
	DUMP_SPLIT_DROPPED, /* its start was no record boundary: read by one thread after all */
	DUMP_SPLIT_KEPT,
};
enum dump_split dump_split_outcome(const struct hr_dump *dump);
enum dump_split dump_steal_outcome(const struct hr_dump *dump);
/* Where the second half was guessed to start, as an offset in the file; 0 if nowhere. */
size_t dump_split_start(const struct hr_dump *dump);

#endif
