/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inputs.c - where the heap comes from: a heap dump, a core file (told apart by their
 * first bytes), or a running process, of which a core is taken first (--pid).
 * Every command that reads a heap opens it here, so each takes all three.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "heapref/core.h"
#include "inputs.h"

/*
 * Checks the Go binary at path, *bin as hr_binary_open_as() with DWARF made it (or
 * NULL, *err saying why). For a dump whose records name types (go1.3, go1.4), a binary
 * whose DWARF cannot be read is opened without it, with a warning: the records name the
 * objects instead.
 */
static int check_go_binary(const char *path, const char *name, const struct hr_dump *dump,
			   struct hr_binary **bin, struct hr_error *err)
{
	if (!*bin && err->code == HR_EINPUT && dump && hr_dump_has_object_types(dump)) {
		fprintf(stderr, "heapref: warning: %s; the dump's type records name objects instead\n",
			err->msg);
		*err = (struct hr_error){ 0 };
		*bin = hr_binary_open_as(path, name, false, err);
	}
	if (!*bin)
		return err->code;
	if (!hr_binary_is_go(*bin))
		return hr_error_set(err, HR_EINPUT, "%s: not a Go binary (no .gopclntab or "
				    ".go.buildinfo section)", name);
	return HR_OK;
}

/* Opens the Go binary at path (check_go_binary()). */
static int open_go_binary(const char *path, const char *name, const struct hr_dump *dump,
			  struct hr_binary **bin, struct hr_error *err)
{
	*bin = hr_binary_open_as(path, name, true, err);
	return check_go_binary(path, name, dump, bin, err);
}

/* A binary opened on a thread of its own while the dump is read. */
struct binary_opening {
	const char *path, *name;
	struct hr_binary *bin;
	struct hr_error err;
	pthread_t thread;
	bool started;
};

static void *open_binary_thread(void *arg)
{
	struct binary_opening *b = arg;

	b->bin = hr_binary_open_as(b->path, b->name, true, &b->err);
	return NULL;
}

/*
 * Reads the dump at in->input and opens its binary at the same time when the input
 * starts as a dump does (is_dump): loading a binary's DWARF is work of one thread
 * (0.025 s for the benchmark's, much more for a large service's) that the dump's
 * reading leaves room for. The first error is the dump's, as when they were opened one
 * after the other; one of a file that is no dump at all, or cannot be read, comes
 * before the binary is loaded.
 */
static int open_dump_and_binary(const struct heap_input *in, const char *binary_name,
				bool is_dump, struct hr_binary **bin, struct hr_dump **dump,
				struct hr_error *err)
{
	struct binary_opening b = { .path = in->binary, .name = binary_name };

	if (in->binary && is_dump)
		b.started = pthread_create(&b.thread, NULL, open_binary_thread, &b) == 0;
	*dump = hr_dump_open(in->input, err);
	if (b.started)
		pthread_join(b.thread, NULL);
	else if (in->binary && *dump)
		open_binary_thread(&b);
	if (!*dump) {
		hr_binary_free(b.bin);
		return err->code;
	}
	if (!in->binary)
		return HR_OK;
	*bin = b.bin;
	*err = b.err;
	if (check_go_binary(in->binary, binary_name, *dump, bin, err))
		return err->code;
	return hr_dump_name_inlined(*dump, *bin, err);
}

/*
 * Reads the core at input with bin. One of another binary fails (HR_EMISMATCH) unless
 * force, which reads it anyway after a warning.
 */
static struct hr_dump *open_core(struct hr_binary *bin, const struct heap_input *in,
				 const char *name, struct hr_error *err)
{
	struct hr_core_options o = { .name = name, .live = in->live };
	struct hr_dump *dump = hr_core_open_as(in->input, bin, &o, err);
	char why[HR_ERROR_MAX];

	if (dump || err->code != HR_EMISMATCH)
		return dump;
	snprintf(why, sizeof(why), "%s", err->msg);
	*err = (struct hr_error){ 0 };
	if (!in->force) {
		hr_error_set(err, HR_EMISMATCH, "%s (--force analyses anyway)", why);
		return NULL;
	}
	fprintf(stderr, "heapref: warning: %s; analysing anyway (--force), chains may be wrong\n",
		why);
	o.force = true;
	return hr_core_open_as(in->input, bin, &o, err);
}

int open_heap_input(const struct heap_input *in, struct hr_binary **bin, struct hr_dump **dump,
		    struct hr_error *err)
{
	const char *name = in->input_name ? in->input_name : in->input;
	const char *binary_name = in->binary_name ? in->binary_name : in->binary;
	enum hr_input_kind kind = hr_input_kind_of(in->input);

	*bin = NULL;
	*dump = NULL;
	if (kind != HR_INPUT_CORE)
		return open_dump_and_binary(in, binary_name, kind == HR_INPUT_DUMP, bin, dump, err);
	if (!in->binary)
		return hr_error_set(err, HR_EUSAGE, "%s is a core file: give the binary too "
				    "(BINARY CORE)", name);
	if (open_go_binary(in->binary, binary_name, NULL, bin, err))
		return err->code;
	*dump = open_core(*bin, in, name, err);
	return *dump ? HR_OK : err->code;
}

/* --- a running process ----------------------------------------------------------------- */

static bool process_exists(int pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return stat(path, &st) == 0;
}

/* Opens /proc/PID/exe, the file the process runs, and keeps it open: the process may end. */
static int open_exe(struct process_input *p, struct hr_error *err)
{
	int code;

	snprintf(p->exe_name, sizeof(p->exe_name), "/proc/%d/exe", p->pid);
	p->exe_fd = open(p->exe_name, O_RDONLY | O_CLOEXEC);
	if (p->exe_fd >= 0) {
		snprintf(p->exe_path, sizeof(p->exe_path), "/proc/self/fd/%d", p->exe_fd);
		return HR_OK;
	}
	code = errno;
	if (!process_exists(p->pid))
		return hr_error_set(err, HR_EINPUT, "no process %d", p->pid);
	if (code == ENOENT)
		return hr_error_set(err, HR_EINPUT, "process %d has no executable (a kernel thread, "
				    "or a process ending): not stopped", p->pid);
	return hr_error_set(err, HR_EIO, "process %d: cannot open %s: %s (run as the process's "
			    "user with ptrace allowed, or with CAP_SYS_PTRACE: docs/cores.md): not "
			    "stopped", p->pid, p->exe_name, strerror(code));
}

/*
 * Whether BINARY is what the process runs: the same file, or the same Go build ID (a
 * copy). Either without a build ID cannot tell; the core reader compares again.
 */
static int check_binary(const struct process_input *p, const struct hr_binary *exe,
			const char *runs, struct hr_error *err)
{
	struct stat a, b;
	struct hr_binary *given;
	const char *want, *have;
	int rc = HR_OK;

	if (!p->binary || (fstat(p->exe_fd, &a) == 0 && stat(p->binary, &b) == 0 &&
			   a.st_dev == b.st_dev && a.st_ino == b.st_ino))
		return HR_OK;
	if (!(given = hr_binary_open_without_dwarf(p->binary, err)))
		return err->code;
	want = hr_binary_build_id(given);
	have = hr_binary_build_id(exe);
	if (want[0] && have[0] && strcmp(want, have)) {
		if (p->force)
			fprintf(stderr, "heapref: warning: process %d runs %s (Go build ID %s), not %s "
				"(%s); analysing anyway (--force), chains may be wrong\n", p->pid, runs,
				have, p->binary, want);
		else
			rc = hr_error_set(err, HR_EMISMATCH, "process %d runs %s (Go build ID %s), "
					  "not %s (%s): not stopped (--force analyses anyway)", p->pid,
					  runs, have, p->binary, want);
	}
	hr_binary_free(given);
	return rc;
}

/* Whether the process's executable is a Go program, and BINARY's if one was given. */
static int check_go_program(const struct process_input *p, struct hr_error *err)
{
	char runs[4096];
	ssize_t n = readlink(p->exe_name, runs, sizeof(runs) - 1);
	struct hr_error why = { 0 };
	struct hr_binary *exe;
	int rc;

	runs[n > 0 ? n : 0] = 0;
	if (n <= 0)
		snprintf(runs, sizeof(runs), "%s", p->exe_name);
	exe = hr_binary_open_as(p->exe_path, runs, false, &why); /* no DWARF: quick */
	if (!exe)
		return hr_error_set(err, why.code == HR_ENOMEM ? HR_ENOMEM : HR_EINPUT,
				    "process %d: %s: not stopped", p->pid, why.msg);
	rc = hr_binary_is_go(exe) ? check_binary(p, exe, runs, err)
				  : hr_error_set(err, HR_EINPUT, "process %d runs %s, not a Go program "
						 "(no .gopclntab or .go.buildinfo section): not "
						 "stopped", p->pid, runs);
	hr_binary_free(exe);
	return rc;
}

/* Whether heapref may read the process's memory: the kernel asks what ptrace would. */
static int check_traceable(const struct process_input *p, struct hr_error *err)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", p->pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		close(fd);
		return HR_OK;
	}
	if (errno == ENOENT)
		return hr_error_set(err, HR_EINPUT, "no process %d", p->pid);
	return hr_error_set(err, HR_EIO, "process %d: cannot read its memory: %s (see "
			    "/proc/sys/kernel/yama/ptrace_scope; run as the process's user with "
			    "ptrace allowed, or with CAP_SYS_PTRACE; docs/cores.md): not stopped",
			    p->pid, strerror(errno));
}

int check_process(struct process_input *p, struct hr_error *err)
{
	if (p->pid == (int)getpid())
		return hr_error_set(err, HR_EUSAGE, "process %d is heapref itself", p->pid);
	if (open_exe(p, err) || check_go_program(p, err) || check_traceable(p, err))
		return err->code;
	return HR_OK;
}

/* Bytes free for an unprivileged file on fd's file system (root may use the reserve). */
static uint64_t free_space(int fd)
{
	struct statvfs vfs;

	if (fstatvfs(fd, &vfs) != 0)
		return 0; /* cannot tell: no limit */
	return (uint64_t)(geteuid() == 0 ? vfs.f_bfree : vfs.f_bavail) * vfs.f_frsize;
}

/*
 * MemAvailable of /proc/meminfo in bytes; 0 when it cannot tell.
 * HEAPREF_TEST_MEMORY_AVAILABLE=BYTES stands for it (tests only: docs/cores.md).
 */
static uint64_t available_memory(void)
{
	const char *test = getenv("HEAPREF_TEST_MEMORY_AVAILABLE");
	char line[256];
	unsigned long long kb = 0;
	FILE *f;

	if (test)
		return strtoull(test, NULL, 10);
	f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kb * 1024;
}

/* What the core cost the process, on stderr: how long it was stopped, and why that long. */
static void report_pause(int pid, const struct hr_core_pause *pause)
{
	if (pause->fallback[0])
		fprintf(stderr, "heapref: process %d: not copied while it ran (%s): stopped for the "
			"whole copy\n", pid, pause->fallback);
	if (!pause->tracked) {
		fprintf(stderr, "heapref: process %d stopped for %.3f s (%zu threads, %.1f MB "
			"copied)\n", pid, pause->stopped_seconds, pause->threads,
			(double)pause->bytes / 1e6);
		return;
	}
	fprintf(stderr, "heapref: process %d stopped for %.3f s (%zu threads, %.1f MB copied "
		"stopped; %.1f MB copied while it ran, in %u rounds)\n", pid,
		pause->stopped_seconds, pause->threads, (double)pause->bytes_stopped / 1e6,
		(double)(pause->bytes - pause->bytes_stopped) / 1e6, pause->rounds + 1);
}

/*
 * A saved core bigger than the memory the running process leaves: its analysis, next,
 * reads it from the disk over and over (a 19 GB core beside an 18.5 GB process on 24 GB
 * read 780 GB in 8 minutes, docs/performance.md). Said before it starts.
 */
static void warn_if_core_outgrows_memory(const struct process_input *p, uint64_t bytes)
{
	uint64_t avail = available_memory();

	if (!avail || bytes <= avail)
		return;
	fprintf(stderr, "heapref: warning: the core (%.1f GB) is bigger than the memory "
		"available beside process %d (%.1f GB): its analysis now will read it from the "
		"disk again and again; it is saved in %s, to analyse once the process has ended\n",
		(double)bytes / 1e9, p->pid, (double)avail / 1e9, p->save_core->path);
}

int take_process_core(struct process_input *p, struct hr_error *err)
{
	struct hr_core_write_options o = { .pause_mode = p->pause_mode,
					   .hold_seconds = p->hold_seconds,
					   .hold_tracking = p->hold_tracking,
					   .hold_borrowed = p->hold_borrowed };
	struct hr_core_pause pause;
	int fd;

	snprintf(p->name, sizeof(p->name), "process %d", p->pid);
	if (p->save_core) {
		if (output_create(p->save_core, err))
			return err->code;
		fd = p->save_core->fd;
		o.out_name = p->save_core->path;
		o.room = free_space(fd);
	} else {
		if ((fd = p->memfd = memfd_create("heapref-core", MFD_CLOEXEC)) < 0)
			return hr_error_set(err, HR_ENOMEM, "cannot make a memory file for the "
					    "core: %s", strerror(errno));
		o.room = available_memory();
	}
	if (hr_core_write_process(p->pid, fd, &o, &pause, err))
		return err->code; /* the caller's output_release() removes the file */
	report_pause(p->pid, &pause);
	if (p->stats) /* the stop's clock: a benchmark matches it with the process's own */
		fprintf(stderr, "heapref: process %d: tracking %.3f s, copy while it ran "
			"%.3f s, stopped %.3f s at CLOCK_MONOTONIC %.6f (stopping its threads "
			"%.4f s, its writes %.4f s, untracked mappings %.4f s, letting them go "
			"%.4f s), after %.3f s\n", p->pid, pause.tracking_seconds,
			pause.running_seconds, pause.stopped_seconds,
			(double)pause.stopped_at_ns / 1e9, pause.seize_seconds,
			pause.written_seconds, pause.untracked_seconds, pause.resume_seconds,
			pause.after_seconds);
	if (!p->save_core) { /* open until the analysis is done: the path below names it */
		snprintf(p->path, sizeof(p->path), "/proc/self/fd/%d", fd);
		return HR_OK;
	}
	if (output_commit(p->save_core, err))
		return err->code;
	snprintf(p->path, sizeof(p->path), "%s", p->save_core->target);
	snprintf(p->name, sizeof(p->name), "%s", p->save_core->path);
	warn_if_core_outgrows_memory(p, pause.bytes);
	return HR_OK;
}

void process_input_release(struct process_input *p)
{
	if (p->memfd >= 0)
		close(p->memfd);
	if (p->exe_fd >= 0)
		close(p->exe_fd);
	p->memfd = p->exe_fd = -1;
}
