/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core.h - the core reader: stage 1 of the pipeline for a core file, the second front
 * end beside the dump reader (dump.h).
 *
 * Reads an ELF core file of a Go process (from gcore, from the kernel, or written by
 * heapref itself from a live process) together with the binary that ran, and builds the
 * same model the dump reader builds (struct hr_dump): heap objects with their pointer
 * bits from the runtime's own span and bitmap structures, data and bss with their
 * pointer bitmaps from runtime.firstmoduledata, goroutines with their frames unwound
 * through the binary's function table, each frame with the pointer slots its stack map
 * says are live, and finalizers. Later stages cannot tell the two sources apart.
 *
 * The offsets of the runtime structures come from the binary's DWARF; a runtime whose
 * structures lack a field the reader needs is refused with a message naming its Go
 * version. The core is mapped, not copied: objects' contents point into the mapping.
 *
 * Bad input (not a core, a core of another program, a truncated core) fails with one
 * error line naming the file, and the byte offset where there is one.
 */
#ifndef HEAPREF_CORE_H
#define HEAPREF_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/base.h"
#include "heapref/binary.h"
#include "heapref/dump.h"

/* What a heap input file is, from its first bytes. */
enum hr_input_kind {
	HR_INPUT_UNKNOWN,   /* cannot be read, or neither of the below */
	HR_INPUT_DUMP,      /* starts "go1.N heap dump\n" */
	HR_INPUT_CORE,      /* an ELF file of type ET_CORE */
	HR_INPUT_ELF,       /* another ELF file (a binary given where a heap was expected) */
};
enum hr_input_kind hr_input_kind_of(const char *path);

/*
 * Reads the core at path with bin, the binary the process ran. The model says where
 * the process loaded it (hr_dump_params()->load_bias, from the core's entry point). Returns the model, owned by the caller (hr_dump_free()), or NULL
 * with err set: HR_EIO (cannot open or map), HR_EMISMATCH (a core of another binary),
 * HR_EINPUT (not a core, not a core of a Go process, a runtime the reader does not know,
 * or corrupt), HR_ENOMEM.
 */
struct hr_dump *hr_core_open(const char *path, const struct hr_binary *bin, struct hr_error *err);
/* How hr_core_open_as() reads a core. */
struct hr_core_options {
	const char *name; /* what to call the core in messages and in the model (NULL: path) */
	bool force;       /* read a core whose Go build ID or entry point is not the binary's
			   * (as garbage, likely: --force); else that fails with HR_EMISMATCH */
	bool live;        /* the core heapref just took of a live process: its model's
			   * provenance says process (hr_dump_provenance()) */
};
struct hr_dump *hr_core_open_as(const char *path, const struct hr_binary *bin,
				const struct hr_core_options *o, struct hr_error *err);

/* The same on a core in memory (fuzzing, tests): bytes must outlive the model. */
struct hr_dump *hr_core_open_bytes(const void *bytes, size_t len, const char *name,
				   const struct hr_binary *bin, struct hr_error *err);

/* What taking a live process's core cost it. */
struct hr_core_pause {
	double stopped_seconds; /* from the first thread stopped to the last one resumed */
	uint64_t bytes;         /* memory copied, in all */
	uint64_t bytes_stopped; /* of which while the process was stopped */
	unsigned rounds;        /* copies of what it wrote while it ran (0: stopped for all) */
	bool tracked;           /* copied while it ran, its writes tracked */
	double tracking_seconds; /* making the tracking, before the first copy */
	double running_seconds; /* copying while it ran, the rounds included */
	double after_seconds;   /* after it was resumed: the staged copy, headers, holes */
	double seize_seconds;   /* of the stop: stopping every thread */
	double written_seconds; /* of the stop: finding and copying what it wrote meanwhile */
	double untracked_seconds; /* of the stop: the mappings not tracked (data, new ones) */
	double resume_seconds;  /* of the stop: letting them go */
	uint64_t stopped_at_ns; /* CLOCK_MONOTONIC when the last thread was stopped */
	char fallback[256];     /* why it was not (HR_PAUSE_AUTO), "" if it was or not asked */
	size_t threads;
};

/* How long a live process is stopped. */
enum hr_pause_mode {
	HR_PAUSE_AUTO,  /* copy while it runs, then stop it for what it wrote meanwhile;
			 * stopped for the whole copy where that cannot be (pause.fallback) */
	HR_PAUSE_STOP,  /* stopped for the whole copy (--pause-mode=stop) */
};

/* How to take a core of a live process. */
struct hr_core_write_options {
	const char *out_name;   /* names the core in messages ("x.core"); NULL: in memory */
	uint64_t room;          /* bytes the core may take (free disk, or memory); 0: any */
	enum hr_pause_mode pause_mode;
	unsigned hold_seconds;  /* tests only: keep it stopped that much longer after the copy */
	unsigned hold_tracking; /* tests only: wait that long while its writes are tracked */
	unsigned hold_borrowed; /* tests only: hold a borrowed thread that long */
};

/*
 * Writes a core of process pid to out_fd (a regular file or memfd, written sparse: pages
 * the process never touched are holes): the memory as it was at one moment, when every
 * thread was stopped (ptrace: seized and interrupted, no signal sent). By default its
 * memory is copied while it runs, its writes tracked, and it is stopped only to copy
 * what it wrote meanwhile (core_track.c); o->pause_mode HR_PAUSE_STOP, or a process or
 * kernel where that cannot be, stops it for the whole copy. It is resumed also on
 * failure; were heapref to die meanwhile, the kernel resumes it and ends the tracking. Before anything is stopped, the memory to copy
 * (the pages the process has touched) is counted and the core refused when it needs
 * more than o->room: HR_EOUTPUT naming the file, or HR_ENOMEM in memory. Fails with
 * HR_EIO naming what ptrace or /proc refused (permissions: docs/cores.md), HR_EINPUT
 * when there is no such process or it ended before its copy was whole (the core is then
 * not to be used), HR_EOUTPUT when the core cannot be written.
 */
int hr_core_write_process(int pid, int out_fd, const struct hr_core_write_options *o,
			  struct hr_core_pause *pause, struct hr_error *err);

#endif
