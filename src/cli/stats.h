/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stats.h - what `--stats` reports: wall and CPU time of a phase, and the peak of
 * anonymous resident memory (the heap heapref allocates, not the mapped dump), sampled
 * from /proc/self/status by a background thread every millisecond.
 */
#ifndef HEAPREF_CLI_STATS_H
#define HEAPREF_CLI_STATS_H

#include <stdbool.h>
#include <stdio.h>

struct stats;

/* Starts timing and sampling; NULL (and nothing measured) if that cannot start. */
struct stats *stats_start(void);
/* Prints "stats: PHASE: wall, CPU, peak anonymous RSS" for the time since the last mark. */
void stats_mark(struct stats *s, const char *phase, FILE *out);
struct hr_dump;
/*
 * With s (--stats): how dump's records were read, by one thread or two (see
 * hr_dump_reading()): "heapref: reading: ...". Nothing for a core or a process.
 */
void stats_reading(const struct stats *s, const struct hr_dump *dump, FILE *out);
/* Stops sampling; NULL is fine. */
void stats_stop(struct stats *s);

#endif
