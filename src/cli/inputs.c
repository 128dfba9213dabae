/*
 * inputs.c - where the heap comes from: a heap dump, a core file (told apart by their
 * first bytes), or a running process, of which a core is taken first (--pid).
 * Every command that reads a heap opens it here, so each takes all three.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heapref/core.h"
#include "inputs.h"

/*
 * Opens the Go binary at path. For a dump whose records name types (go1.3, go1.4), a
 * binary whose DWARF cannot be read is opened without it, with a warning: the records
 * name the objects instead.
 */
static int open_go_binary(const char *path, const struct hr_dump *dump, struct hr_binary **bin,
			  struct hr_error *err)
{
	*bin = hr_binary_open(path, err);
	if (!*bin && err->code == HR_EINPUT && dump && hr_dump_has_object_types(dump)) {
		fprintf(stderr, "heapref: warning: %s; the dump's type records name objects instead\n",
			err->msg);
		*bin = hr_binary_open_without_dwarf(path, err);
	}
	if (!*bin)
		return err->code;
	if (!hr_binary_is_go(*bin))
		return hr_error_set(err, HR_EINPUT, "%s: not a Go binary (no .gopclntab or "
				    ".go.buildinfo section)", path);
	return HR_OK;
}

int open_heap_input(const char *binary, const char *input, const char *input_name,
		    struct hr_binary **bin, struct hr_dump **dump, struct hr_error *err)
{
	const char *name = input_name ? input_name : input;

	*bin = NULL;
	*dump = NULL;
	if (hr_input_kind_of(input) != HR_INPUT_CORE) {
		if (!(*dump = hr_dump_open(input, err)))
			return err->code;
		return binary ? open_go_binary(binary, *dump, bin, err) : HR_OK;
	}
	if (!binary)
		return hr_error_set(err, HR_EUSAGE, "%s is a core file: give the binary too "
				    "(BINARY CORE)", name);
	if (open_go_binary(binary, NULL, bin, err))
		return err->code;
	*dump = hr_core_open_as(input, name, *bin, err);
	return *dump ? HR_OK : err->code;
}

/* Where the core goes: FILE.tmp, renamed when whole; or an anonymous memory file. */
static int core_target(const struct process_input *p, char *tmp, size_t len, struct hr_error *err)
{
	int fd;

	if (!p->save_core) {
		fd = memfd_create("heapref-core", MFD_CLOEXEC);
		if (fd < 0)
			hr_error_set(err, HR_EIO, "cannot make a memory file for the core: %s",
				     strerror(errno));
		return fd;
	}
	snprintf(tmp, len, "%s.tmp%d", p->save_core, (int)getpid());
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		hr_error_set(err, HR_EIO, "%s: cannot create: %s", p->save_core, strerror(errno));
	return fd;
}

int take_process_core(struct process_input *p, struct hr_error *err)
{
	char tmp[4096];
	struct hr_core_pause pause;
	int fd = core_target(p, tmp, sizeof(tmp), err);

	if (fd < 0)
		return err->code;
	snprintf(p->binary, sizeof(p->binary), "/proc/%d/exe", p->pid);
	snprintf(p->name, sizeof(p->name), "process %d", p->pid);
	if (hr_core_write_process(p->pid, fd, p->hold_seconds, &pause, err)) {
		close(fd);
		if (p->save_core)
			unlink(tmp);
		return err->code;
	}
	fprintf(stderr, "heapref: process %d stopped for %.3f s (%zu threads, %.1f MB copied)\n",
		p->pid, pause.stopped_seconds, pause.threads, (double)pause.bytes / 1e6);
	if (p->save_core) {
		close(fd);
		if (rename(tmp, p->save_core)) {
			hr_error_set(err, HR_EIO, "%s: cannot rename %s into place: %s", p->save_core,
				     tmp, strerror(errno));
			unlink(tmp);
			return err->code;
		}
		snprintf(p->path, sizeof(p->path), "%s", p->save_core);
		snprintf(p->name, sizeof(p->name), "%s", p->save_core);
		return HR_OK;
	}
	p->memfd = fd; /* open until the analysis is done: the path below names it */
	snprintf(p->path, sizeof(p->path), "/proc/self/fd/%d", fd);
	return HR_OK;
}

void process_input_release(struct process_input *p)
{
	if (p->memfd > 0)
		close(p->memfd);
	p->memfd = 0;
}
