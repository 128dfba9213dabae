/*
 * inputs.h - opening the heap a command reads: a dump, a core, or a running process
 * (see inputs.c).
 */
#ifndef HEAPREF_CLI_INPUTS_H
#define HEAPREF_CLI_INPUTS_H

#include "heapref/base.h"
#include "heapref/binary.h"
#include "heapref/dump.h"

/*
 * Opens input, a heap dump or a core file (the binary is needed for a core: HR_EUSAGE
 * without it), and binary when given (HR_EINPUT if it is no Go binary). input_name names the input in messages (NULL: its
 * path). The caller frees both, whatever is returned.
 */
int open_heap_input(const char *binary, const char *input, const char *input_name,
		    struct hr_binary **bin, struct hr_dump **dump, struct hr_error *err);

/* A running process to analyse: --pid, --save-core. */
struct process_input {
	int pid;                 /* in */
	const char *save_core;   /* in: keep the core there, or NULL */
	unsigned hold_seconds;   /* in: tests only (HEAPREF_TEST_HOLD_STOPPED) */
	char binary[64];         /* out: /proc/PID/exe */
	char path[4096];         /* out: the core to read */
	char name[4096];         /* out: what to call it */
	int memfd;               /* the core when not saved; process_input_release() closes it */
};

/* Takes a core of p->pid (reporting the pause on stderr) and fills in the outs. */
int take_process_core(struct process_input *p, struct hr_error *err);
void process_input_release(struct process_input *p);

#endif
