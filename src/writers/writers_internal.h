/*
 * writers_internal.h - what the writers share and no other stage needs.
 */
#ifndef HEAPREF_WRITERS_INTERNAL_H
#define HEAPREF_WRITERS_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "heapref/chains.h"

/* Writes the chain of node, root first, its names joined by " -> ". */
void write_chain(FILE *out, const struct hr_chains *tree, uint32_t node);

/* The chain tree root above node (node itself for a root). */
uint32_t chain_root(const struct hr_chains *tree, uint32_t node);

#endif
