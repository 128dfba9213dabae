/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leaks.h - which goroutines are leaked, by the Go runtime's own definition (the
 * goroutine leak profile, Go 1.26's experiment and Go 1.27's default), worked out
 * from a snapshot: the model (model.h) and the binary's DWARF for the runtime's g and
 * sudog (binary.h).
 *
 * A goroutine blocked on a channel operation, a select, or a sync.Mutex, RWMutex,
 * WaitGroup or Cond (the runtime's semaphores) is leaked when no goroutine that may
 * still run can reach what it waits on. As the runtime's leak-finding GC does: mark the
 * heap from the globals and the stacks of the goroutines that may run (running,
 * runnable, in a syscall, or waiting on anything else: a timer, the network, the GC),
 * not following the pointers from the blocked goroutines' wait-queue entries (sudogs)
 * to what they wait on; a blocked goroutine whose channel (any of a select's) or
 * semaphore was marked, or is outside the heap, may run: add its stack and mark on;
 * when nothing changes, the blocked goroutines left are leaked. A goroutine blocked on
 * a nil channel or in an empty select is leaked by definition, except the main
 * goroutine in `select {}` (the runtime leaves it out of its profile too).
 *
 * Where the snapshot cannot tell, the verdict says so: a runtime whose structures the
 * binary's DWARF does not describe (no binary, a stripped one), a goroutine whose wait
 * the snapshot does not show (Go 1.25 and older do not link a goroutine waiting on a
 * sync.Cond to its queue entry), and every goroutine that would be leaked when a core
 * caught a goroutine that may run between safe points, its stack read only in part.
 */
#ifndef HEAPREF_LEAKS_H
#define HEAPREF_LEAKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/base.h"
#include "heapref/binary.h"
#include "heapref/model.h"

enum hr_leak_verdict {
	HR_LEAK_NO,      /* may still run */
	HR_LEAK_YES,     /* blocked on what no goroutine that may run can reach */
	HR_LEAK_UNKNOWN, /* the snapshot cannot tell: hr_goroutine_leaks.why says why */
};

struct hr_goroutine_leaks {
	size_t count;            /* the model's goroutines, in hr_dump_goroutines() order */
	uint8_t *verdict;        /* enum hr_leak_verdict per goroutine */
	const char **why;        /* per goroutine: for HR_LEAK_UNKNOWN, why (static text) */
	uint64_t *stack_bytes;   /* per goroutine: its stack's size (g.stack.hi - lo); 0 unknown */
	size_t leaked, unknown;  /* how many goroutines are each */
	unsigned rounds;         /* marking rounds until nothing changed */
	/* for hr_goroutine_leaks_retained(), when some goroutines stayed blocked: a bit per
	 * object reached without their stacks, and whether each goroutine's stack is in it */
	uint64_t *marked;
	uint8_t *stack_marked;
};

/*
 * Finds which of model's goroutines are leaked (img: bin where the process loaded it).
 * for_retained: also keep what hr_goroutine_leaks_retained() needs (when goroutines
 * stayed blocked, that costs a marking of what the rest of the heap holds: the verdicts
 * alone may stop marking early). Returns NULL with err set (HR_ENOMEM) or the verdicts,
 * freed with hr_goroutine_leaks_free(). Without the runtime's types in bin every
 * blocked goroutine's verdict is HR_LEAK_UNKNOWN.
 */
struct hr_goroutine_leaks *hr_goroutine_leaks_find(const struct hr_dump *model,
						   const struct hr_image *img, bool for_retained,
						   struct hr_error *err);
void hr_goroutine_leaks_free(struct hr_goroutine_leaks *leaks);
/*
 * What each group of goroutines (group_of[i]: goroutine i's, < ngroups) alone keeps
 * alive, for the groups wanted[k]: the heap objects reachable from the roots and every
 * goroutine's stack but not without that group's stacks (what would be freed with its
 * goroutines), into bytes[k] and objects[k] (0 for the others). Only the stacks of the
 * goroutines that stayed blocked in leaks can hold anything alone: from leaks' marking,
 * without them, it marks what they reach, then per group what the others reach. leaks
 * must have been found for_retained (else every group says 0). Returns 0 or HR_ENOMEM
 * with err set.
 */
int hr_goroutine_leaks_retained(const struct hr_goroutine_leaks *leaks,
				const struct hr_dump *model, const uint32_t *group_of,
				size_t ngroups, const bool *wanted, uint64_t *bytes,
				uint64_t *objects, struct hr_error *err);
/* "yes", "no", "unknown". */
const char *hr_leak_verdict_name(enum hr_leak_verdict v);

#endif
