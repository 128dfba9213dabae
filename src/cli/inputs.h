/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inputs.h - opening the heap a command reads: a dump, a core, or a running process
 * (see inputs.c).
 */
#ifndef HEAPREF_CLI_INPUTS_H
#define HEAPREF_CLI_INPUTS_H

#include "heapref/base.h"
#include "heapref/binary.h"
#include "heapref/core.h"
#include "heapref/dump.h"
#include "outputs.h"

/* The heap a command reads, as the command line gives it. */
struct heap_input {
	const char *binary;      /* BINARY, or NULL */
	const char *binary_name; /* what to call it in messages (NULL: its path) */
	const char *input;       /* the dump or core */
	const char *input_name;  /* what to call it in messages (NULL: its path) */
	bool force;              /* read a core of another binary anyway, after a warning */
	bool live;               /* the input is the core just taken of a process (--pid) */
};

/*
 * Opens in->input, a heap dump or a core file (the binary is needed for a core:
 * HR_EUSAGE without it), and in->binary when given (HR_EINPUT if it is no Go binary).
 * A core of another binary is HR_EMISMATCH unless in->force. The caller frees both,
 * whatever is returned.
 */
int open_heap_input(const struct heap_input *in, struct hr_binary **bin, struct hr_dump **dump,
		    struct hr_error *err);

/* A running process to analyse: --pid, --save-core. */
struct process_input {
	int pid;                 /* in */
	struct output *save_core; /* in: where to keep the core (prepared), or NULL */
	const char *binary;      /* in: the BINARY given, or NULL */
	bool force;              /* in: --force: a BINARY other than the process's is fine */
	enum hr_pause_mode pause_mode; /* in: --pause-mode */
	bool stats;              /* in: --stats: the copy's phases too */
	unsigned hold_seconds;   /* in: tests only (HEAPREF_TEST_HOLD_STOPPED) */
	unsigned hold_tracking;  /* in: tests only (HEAPREF_TEST_HOLD_TRACKING) */
	unsigned hold_borrowed;  /* in: tests only (HEAPREF_TEST_HOLD_BORROWED) */
	int exe_fd;              /* the process's executable, held open: it may end */
	char exe_path[64];       /* out: /proc/self/fd/N, to read it by */
	char exe_name[64];       /* out: /proc/PID/exe, what to call it */
	char path[4096];         /* out: the core to read */
	char name[4096];         /* out: what to call it */
	int memfd;               /* the core when not saved; process_input_release() closes it */
};

/*
 * Everything checked before the process is stopped: that it is another process than
 * heapref, that it exists and runs a Go program (the one BINARY is, unless p->force),
 * and that heapref may read its memory. Holds its executable open (p->exe_fd). 0, or the
 * failure (HR_EUSAGE, HR_EINPUT, HR_EIO, HR_EMISMATCH) with err set.
 */
int check_process(struct process_input *p, struct hr_error *err);

/*
 * Takes a core of p->pid (reporting the pause on stderr) into p->save_core or memory,
 * refused before the stop when it would not fit there, and fills in the outs.
 */
int take_process_core(struct process_input *p, struct hr_error *err);
void process_input_release(struct process_input *p);

#endif
