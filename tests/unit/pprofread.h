/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pprofread.h - reading back a profile the pprof writer wrote, for the unit tests: the
 * gzip stream inflated, strings, locations' function names and labels looked up.
 * Failures are cmocka failures of the calling test.
 */
#ifndef HEAPREF_TEST_PPROFREAD_H
#define HEAPREF_TEST_PPROFREAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.pb-c.h"

/* The inflated bytes of the gzip stream in f (read from its start); caller frees. */
uint8_t *pr_gunzip(FILE *f, size_t *len);
/* String i of the profile's string table. */
const char *pr_str(const Perftools__Profiles__Profile *p, int64_t i);
/* The name of the function of location id. */
const char *pr_location_name(const Perftools__Profiles__Profile *p, uint64_t id);
/* The value of sample s's string label key, NULL if it has none. */
const char *pr_label(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s,
		     const char *key);

#endif
