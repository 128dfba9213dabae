/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core_writer.c - a core of a live process, written by heapref itself: what
 * `heapref analyze --pid` reads, and what --save-core keeps.
 *
 * The process is stopped with ptrace: every thread seized and interrupted, so that no
 * signal is sent to it and, should heapref die while it holds the threads, the kernel
 * detaches them and the process runs on. What goes into the core: the registers of each
 * thread, the auxiliary vector (the entry point, for PIE binaries), heapref's note of
 * the runtime's clock, the memory of every readable mapping that is writable or
 * anonymous, and the executable's read-only data (see wanted()); text is left out, the
 * core reader takes it from the binary. Of each mapping only the pages the process ever
 * touched are copied (/proc/PID/pagemap says which); the rest stays a hole in a sparse
 * file, so a Go process's reserved but unused arenas cost no disk and no time.
 *
 * The pause is kept short. Before the stop the core is laid out and its pages for the
 * touched memory allocated and mapped (prepare()). Then, by default, the process's
 * anonymous memory (its heap, stacks, the runtime's own) is copied while it runs, its
 * writes tracked by the kernel (core_track.c: a userfaultfd in asynchronous write-protect
 * mode, and PAGEMAP_SCAN), in rounds, each copying again what the process wrote during
 * the one before, until what is left is small or stops shrinking (precopy()). Stopped, it
 * is copied only what it wrote since the last round and the mappings not tracked (files'
 * data, new mappings): the core is the memory at the moment of the stop, as exactly as
 * a stop for the whole copy would give it. Where the tracking cannot be (an older kernel,
 * a seccomp filter, no thread to borrow, another architecture, --pause-mode=stop), the
 * whole copy is made while stopped, and pause->fallback says why. Each copy goes straight
 * into the mapped core (process_vm_readv); after every thread is let go, the tracking is
 * ended, the headers and notes are written and pages of zeros punched out.
 *
 * Nothing is stopped before the core is known to fit where it goes (the touched pages
 * counted against the room the caller gives), and a process that ends while it is
 * copied (killed: ptrace cannot hold off SIGKILL) gives an error, never a core of the
 * pages it had left.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core_internal.h"

/* The core's block: headers are padded to it, pages of zeros in it become holes. The
 * kernel's page (w->page, 16 KiB or 64 KiB on some arm64 kernels) is a multiple. */
#define PAGE 4096
#define COPY_CHUNK (1u << 20)
#define PRSTATUS_REGS_AT 112
#define PRSTATUS_PID_AT 32
#define REGS_MAX 512         /* bytes: user_regs_struct is 216 (amd64), 272 (arm64) */
#define MAX_THREADS 100000
#define PAGEMAP_PRESENT (UINT64_C(1) << 63)
#define PAGEMAP_SWAPPED (UINT64_C(1) << 62)

struct mapping {
	uint64_t start, end;
	bool all_pages; /* copied whether touched or not (a file's first page) */
	bool anonymous; /* private memory of its own, writable: tracked if it can be */
	bool tracked;   /* its writes are tracked: copied while the process runs */
	uint64_t file_off; /* where its memory goes in the core */
};

/* Part of the core no mapping uses any more (it went away while the process ran). */
struct dead_range {
	uint64_t off, len;
};

struct thread_regs {
	pid_t tid;
	size_t len;
	uint8_t regs[REGS_MAX];
};

struct writer {
	pid_t pid;
	int out;
	int mem;                  /* /proc/PID/mem */
	int pagemap;              /* /proc/PID/pagemap, -1 if not readable */
	uint64_t page;            /* the kernel's page size: one pagemap entry each */
	struct thread_regs *threads;
	size_t nthreads, threads_cap;
	struct mapping *maps;
	size_t nmaps, maps_cap;
	uint8_t auxv[4096];
	size_t auxv_len;
	uint64_t stopped_at_ns;   /* CLOCK_MONOTONIC once stopped: the runtime's nanotime() */
	uint64_t ncpu;            /* the processors it may run on: the runtime's ncpu */
	uint8_t *buf;             /* COPY_CHUNK bytes */
	uint8_t *out_map;         /* the core file, mapped while it is written; or NULL */
	uint64_t out_len;         /* where the memory ends in the core: the headers go there */
	uint64_t map_len;         /* the file's length and its mapping's: out_len and room */
	uint64_t *pm;             /* pagemap entries of one chunk */
	struct dead_range *dead;
	size_t ndead, dead_cap;
	struct write_tracker tracker;
	bool tracking;
	/*
	 * What is copied while the process is stopped, with tracking: into memory first,
	 * into the core after it runs again (a write into the mapped core can wait for the
	 * disk, while the kernel writes dirty pages back).
	 */
	struct staging {
		bool on;
		bool stopped;     /* the process is stopped: no growing */
		uint8_t *buf;     /* cap bytes; populated before the stop */
		size_t cap, used;
		struct staged_run {
			uint64_t off, len;
			bool zero;    /* a run of zeros: no bytes in buf */
		} *runs;
		size_t nruns, runs_cap;
	} stage;
	const struct hr_core_write_options *o;
	struct hr_core_pause *pause;
	struct hr_error *err;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int sys_fail(struct writer *w, const char *what)
{
	int code = errno == ENOMEM ? HR_ENOMEM : HR_EIO;

	return hr_error_set(w->err, code, "process %d: %s: %s", (int)w->pid, what, strerror(errno));
}

/* --- stopping and resuming ------------------------------------------------------------- */

/* Whether a process's or thread's stat file says it still runs: not gone, not a zombie. */
static bool stat_alive(const char *path)
{
	char buf[512];
	const char *paren;

	if (!proc_read_text(path, buf, sizeof(buf)))
		return false;
	paren = strrchr(buf, ')'); /* "PID (COMM) STATE ...": COMM may hold anything */
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X' && paren[2] != 'x';
}

/*
 * Whether the process still runs (or is stopped). SIGKILL ends a process its tracer
 * holds stopped; its memory then reads as nothing, or zeros.
 */
static bool process_alive(const struct writer *w)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)w->pid);
	return stat_alive(path);
}

/*
 * After a thread refused to be seized with EPERM, another of its process's being seized
 * (so heapref may trace them: the same credentials): whether it is ending, gone or a
 * zombie, or its process is, within 0.1 s. An exiting thread refuses so: the process
 * killed while heapref stops it, or a thread that returns.
 */
static bool thread_ending(const struct writer *w, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)w->pid, (int)tid);
	for (int i = 0; i < 10; i++) {
		if (!stat_alive(path) || !process_alive(w))
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	return false;
}

static bool seized(const struct writer *w, pid_t tid)
{
	for (size_t i = 0; i < w->nthreads; i++)
		if (w->threads[i].tid == tid)
			return true;
	return false;
}

static int cannot_attach(struct writer *w)
{
	return hr_error_set(w->err, HR_EIO, "process %d: cannot attach: %s (see "
			    "/proc/sys/kernel/yama/ptrace_scope; run as the process's user with "
			    "ptrace allowed, or with CAP_SYS_PTRACE; docs/cores.md)", (int)w->pid,
			    strerror(errno));
}

/* Seizes and interrupts one thread, and waits until it is stopped. */
static int seize_thread(struct writer *w, pid_t tid)
{
	struct thread_regs *t;
	int status;

	if (w->nthreads >= MAX_THREADS)
		return hr_error_set(w->err, HR_EINPUT, "process %d: more than %d threads",
				    (int)w->pid, MAX_THREADS);
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL)) {
		int e = errno;

		/* an ending thread is left, as one gone (the copy says so if its process is) */
		if (e == ESRCH || (e == EPERM && w->nthreads && thread_ending(w, tid)))
			return HR_OK;
		if (e == EPERM && !w->nthreads && !process_alive(w)) /* not ptrace_scope's doing */
			return hr_error_set(w->err, HR_EINPUT, "process %d ended before heapref "
					    "could stop it: no core", (int)w->pid);
		errno = e;
		return e == EPERM ? cannot_attach(w) : sys_fail(w, "ptrace seize");
	}
	t = hr_array_push((void **)&w->threads, &w->nthreads, &w->threads_cap, sizeof(*t));
	if (!t) {
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return hr_error_set(w->err, HR_ENOMEM, "out of memory");
	}
	t->tid = tid;
	t->len = 0;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL))
		return errno == ESRCH ? HR_OK : sys_fail(w, "ptrace interrupt");
	/* a signal arriving first stops it as well (signal-delivery-stop); stopped either way */
	if (waitpid(tid, &status, __WALL) < 0 && errno != ECHILD)
		return sys_fail(w, "waitpid");
	return HR_OK;
}

/* One pass over /proc/PID/task; *more when it seized a thread not seen before. */
static int seize_listed(struct writer *w, bool *more)
{
	char path[64];
	struct dirent *e;
	DIR *dir;
	int rc = HR_OK;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)w->pid);
	if (!(dir = opendir(path)))
		return errno == ENOENT ? hr_error_set(w->err, HR_EINPUT, "no process %d", (int)w->pid)
				       : sys_fail(w, "cannot list its threads");
	*more = false;
	while (!rc && (e = readdir(dir))) {
		pid_t tid = (pid_t)atol(e->d_name);
		size_t before = w->nthreads;

		if (tid <= 0 || seized(w, tid))
			continue;
		rc = seize_thread(w, tid);
		*more |= w->nthreads > before; /* not for a thread gone or ending: no new pass */
	}
	closedir(dir);
	return rc;
}

/* Stops every thread: again until a pass finds none new (threads a running one started). */
static int stop_all(struct writer *w)
{
	bool more = true;
	int rc = HR_OK;

	while (more && !rc)
		rc = seize_listed(w, &more);
	if (!rc && !w->nthreads)
		rc = hr_error_set(w->err, HR_EINPUT, "no process %d", (int)w->pid);
	return rc;
}

static void resume_all(struct writer *w)
{
	for (size_t i = 0; i < w->nthreads; i++)
		ptrace(PTRACE_DETACH, w->threads[i].tid, NULL, NULL);
}

/* --- what is read while it is stopped ----------------------------------------------------- */

static int read_registers(struct writer *w)
{
	for (size_t i = 0; i < w->nthreads; i++) {
		struct thread_regs *t = &w->threads[i];
		struct iovec iov = { t->regs, sizeof(t->regs) };

		if (ptrace(PTRACE_GETREGSET, t->tid, (void *)(uintptr_t)NT_PRSTATUS, &iov) == 0)
			t->len = iov.iov_len;
	}
	return HR_OK;
}

/* The processors the process may run on, as the runtime counts them (getproccount()). */
static void read_cpus(struct writer *w)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (sched_getaffinity(w->pid, sizeof(set), &set) == 0)
		w->ncpu = (uint64_t)CPU_COUNT(&set);
}

static void read_auxv(struct writer *w)
{
	char path[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)w->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, w->auxv, sizeof(w->auxv)) : -1;
	w->auxv_len = n > 0 ? (size_t)n / 16 * 16 : 0;
	if (fd >= 0)
		close(fd);
}

/*
 * How much of a line of /proc/PID/maps the core must hold: all of memory the process
 * may have written (writable or anonymous); all of the executable's read-only data, page
 * by page whether touched or not (a PIE binary's types and itabs hold pointers the
 * loader relocated, which the file has unrelocated); of another file, or of text, the
 * first page if it is mapped from the start, as the kernel writes it (the ELF headers
 * and notes, where the Go build ID is that tells the reader whose core it is), nothing
 * else (the reader takes text from the binary). *all_pages: copy untouched pages too.
 */
static uint64_t wanted(const char *perms, unsigned long long offset, unsigned long inode,
		       const char *name, const char *exe, uint64_t size, bool *all_pages)
{
	*all_pages = false;
	if (perms[0] != 'r')
		return 0; /* reserved address space (PROT_NONE) */
	if (!strncmp(name, "[vvar", 5) || !strcmp(name, "[vsyscall]"))
		return 0;
	if (perms[1] == 'w' || inode == 0)
		return size;
	*all_pages = true;
	if (perms[2] != 'x' && exe[0] && !strcmp(name, exe))
		return size;
	return offset == 0 && size >= PAGE ? PAGE : 0;
}

static int read_maps(struct writer *w)
{
	char path[64], line[4096], exe[4096] = "";
	FILE *f;
	int rc = HR_OK;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)w->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)w->pid);
	if (!(f = fopen(path, "re")))
		return sys_fail(w, "cannot read its memory map");
	while (!rc && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, offset;
		unsigned long inode;
		char perms[8], name[4096] = "";
		struct mapping *m;
		uint64_t keep;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %lu %4095[^\n]", &start, &end, perms, &offset,
			   &inode, name) < 5 || end <= start)
			continue;
		bool all_pages;

		keep = wanted(perms, offset, inode, name + strspn(name, " "), exe, end - start,
			      &all_pages);
		if (!keep)
			continue;
		m = hr_array_push((void **)&w->maps, &w->nmaps, &w->maps_cap, sizeof(*m));
		if (!m)
			rc = hr_error_set(w->err, HR_ENOMEM, "out of memory");
		else
			*m = (struct mapping){ start, start + keep, all_pages,
					       perms[1] == 'w' && perms[3] == 'p' && inode == 0, false, 0 };
	}
	fclose(f);
	return rc;
}

/* --- the file ------------------------------------------------------------------------------ */

/* The core cannot be written (errno code): the output's failure, naming it. */
static int cannot_write(struct writer *w, int code)
{
	if (!w->o->out_name)
		return hr_error_set(w->err, code == ENOMEM || code == ENOSPC ? HR_ENOMEM : HR_EOUTPUT,
				    "process %d: cannot hold its core in memory: %s", (int)w->pid,
				    strerror(code));
	return hr_error_set(w->err, HR_EOUTPUT, "%s: cannot write the core: %s", w->o->out_name,
			    strerror(code));
}

static int write_at(struct writer *w, const void *p, size_t len, uint64_t off)
{
	const uint8_t *b = p;

	while (len) {
		ssize_t n = pwrite(w->out, b, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return cannot_write(w, n < 0 ? errno : ENOSPC);
		b += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return HR_OK;
}

/* A note named name (at most 7 characters) into out; its bytes. */
static size_t note(uint8_t *out, const char *name, uint32_t type, const void *desc, size_t len)
{
	uint32_t head[3] = { (uint32_t)strlen(name) + 1, (uint32_t)len, type };

	memcpy(out, head, 12);
	memset(out + 12, 0, 8);
	memcpy(out + 12, name, strlen(name)); /* NUL-terminated, padded to 8 */
	memcpy(out + 20, desc, len);
	memset(out + 20 + len, 0, (4 - len % 4) % 4);
	return 20 + (len + 3) / 4 * 4;
}

/* The notes: NT_PRSTATUS per thread (pid and registers), then NT_AUXV. */
static uint8_t *build_notes(struct writer *w, size_t *len)
{
	size_t cap = w->nthreads * (20 + PRSTATUS_REGS_AT + REGS_MAX + 16) + 20 + w->auxv_len + 2 * 28;
	uint8_t *notes = calloc(1, cap), *p = notes;

	if (!notes)
		return NULL;
	for (size_t i = 0; i < w->nthreads; i++) {
		const struct thread_regs *t = &w->threads[i];
		uint8_t desc[PRSTATUS_REGS_AT + REGS_MAX + 8] = { 0 };
		uint32_t tid = (uint32_t)t->tid;

		if (!t->len)
			continue;
		memcpy(desc + PRSTATUS_PID_AT, &tid, 4);
		memcpy(desc + PRSTATUS_REGS_AT, t->regs, t->len);
		p += note(p, "CORE", NT_PRSTATUS, desc, PRSTATUS_REGS_AT + t->len + 8);
	}
	if (w->auxv_len)
		p += note(p, "CORE", NT_AUXV, w->auxv, w->auxv_len);
	if (w->stopped_at_ns)
		p += note(p, HR_CORE_NOTE_NAME, HR_CORE_NOTE_CLOCK, &w->stopped_at_ns, 8);
	if (w->ncpu)
		p += note(p, HR_CORE_NOTE_NAME, HR_CORE_NOTE_CPUS, &w->ncpu, 8);
	*len = (size_t)(p - notes);
	return notes;
}

static bool zero_page(const uint8_t *p)
{
	uint64_t acc = 0, v;

	for (size_t i = 0; i < PAGE; i += 8) {
		memcpy(&v, p + i, 8);
		acc |= v;
	}
	return !acc;
}

/* Writes the len bytes of w->buf to off but for pages of zeros, left as holes. */
static int write_pages(struct writer *w, size_t len, uint64_t off)
{
	size_t from = 0, at;
	int rc;

	for (at = 0; at < len; at += PAGE) {
		if (len - at < PAGE || !zero_page(w->buf + at))
			continue;
		if (at > from && (rc = write_at(w, w->buf + from, at - from, off + from)))
			return rc;
		from = at + PAGE;
	}
	return from < len ? write_at(w, w->buf + from, len - from, off + from) : HR_OK;
}

/*
 * Copies len bytes of the process at from to the core at off: straight from its pages
 * into the mapped core (process_vm_readv, one copy), else through /proc/PID/mem. Pages
 * that cannot be read (unmapped meanwhile) stay zeros.
 */
static void read_process(struct writer *w, uint64_t from, size_t len, uint8_t *to)
{
	struct iovec local = { to, len }, remote = { (void *)(uintptr_t)from, len };
	ssize_t n = process_vm_readv(w->pid, &local, 1, &remote, 1, 0);

	if (n < (ssize_t)len) /* the rest, through /proc/PID/mem */
		n = (n > 0 ? n : 0) + pread(w->mem, to + (n > 0 ? n : 0), len - (size_t)(n > 0 ? n : 0),
					    (off_t)(from + (uint64_t)(n > 0 ? n : 0)));
	w->pause->bytes += n > 0 ? (uint64_t)n : 0;
}

/* With tracking, after the first copy: copies and zeros go to the staging buffer first. */
static int stage_run(struct writer *w, uint64_t off, uint64_t len, bool zero);
static bool stage_room(struct writer *w, uint64_t len);
static int stage_write(struct writer *w);
static int zero_run(struct writer *w, uint64_t off, uint64_t len);

static int copy_run(struct writer *w, uint64_t from, size_t len, uint64_t off)
{
	ssize_t n = -1;

	if (w->stage.on && !stage_room(w, len) && w->stage.nruns) {
		int rc = stage_write(w); /* full: what it holds goes first */

		if (rc)
			return rc;
	}
	if (w->stage.on && stage_room(w, len)) {
		read_process(w, from, len, w->stage.buf + w->stage.used);
		return stage_run(w, off, len, false);
	}
	if (w->out_map) {
		read_process(w, from, len, w->out_map + off);
		return HR_OK;
	}
	for (size_t done = 0; done < len; done += COPY_CHUNK) {
		size_t part = len - done < COPY_CHUNK ? len - done : COPY_CHUNK;
		int rc;

		n = pread(w->mem, w->buf, part, (off_t)(from + done));
		if (n <= 0)
			continue;
		if ((rc = write_pages(w, (size_t)n, off + done)))
			return rc;
		w->pause->bytes += (uint64_t)n;
	}
	return HR_OK;
}

typedef int (*run_fn)(struct writer *w, uint64_t from, size_t len, uint64_t off);

/* Calls fn on each run of pages of mapping m the process has touched (all of them where
 * /proc/PID/pagemap cannot tell), with where the run goes in the core. */
static int for_each_touched_run(struct writer *w, const struct mapping *m, run_fn fn)
{
	for (uint64_t a = m->start; a < m->end; a += COPY_CHUNK) {
		size_t len = m->end - a < COPY_CHUNK ? (size_t)(m->end - a) : COPY_CHUNK;
		size_t npages = len / w->page, run = 0;
		bool have_map = !m->all_pages && w->pagemap >= 0 &&
				pread(w->pagemap, w->pm, npages * 8, (off_t)(a / w->page * 8)) ==
					(ssize_t)(npages * 8);

		for (size_t i = 0; i <= npages; i++) {
			bool touched = i < npages && (!have_map || (w->pm[i] & (PAGEMAP_PRESENT |
									       PAGEMAP_SWAPPED)));
			uint64_t from;
			int rc;

			if (touched) {
				run++;
				continue;
			}
			if (!run)
				continue;
			from = a + (i - run) * w->page; /* pages [i - run, i) */
			if ((rc = fn(w, from, run * w->page, m->file_off + (from - m->start))))
				return rc;
			run = 0;
		}
	}
	return HR_OK;
}

/* Allocates and maps the pages of a run in the core, ahead of the copy. */
static int prefault_run(struct writer *w, uint64_t from, size_t len, uint64_t off)
{
	(void)from;
	if (fallocate(w->out, 0, (off_t)off, (off_t)len) == 0)
		madvise(w->out_map + off, len, MADV_POPULATE_WRITE);
	return HR_OK;
}

/* After the process runs again: pages of zeros in the mapped core become holes, and so
 * do the places of mappings that went away while it ran (relayout()). */
static void punch_zero_pages(struct writer *w)
{
	for (size_t i = 0; i < w->ndead; i++)
		fallocate(w->out, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)w->dead[i].off,
			  (off_t)w->dead[i].len);
	for (size_t i = 0; w->out_map && i < w->nmaps; i++) {
		uint64_t off = w->maps[i].file_off, end = off + (w->maps[i].end - w->maps[i].start);
		uint64_t hole = UINT64_MAX;

		for (uint64_t p = off; p <= end; p += PAGE) {
			bool zero = p < end && zero_page(w->out_map + p);

			if (zero && hole == UINT64_MAX)
				hole = p;
			if (!zero && hole != UINT64_MAX) {
				fallocate(w->out, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)hole,
					  (off_t)(p - hole)); /* a hint: where it fails, zeros stay */
				hole = UINT64_MAX;
			}
		}
	}
}

/* Where each mapping's memory goes in the core: after the headers (the notes go last,
 * as how many threads there are is known only once they are stopped). */
static void lay_out(struct writer *w)
{
	uint64_t off = PAGE; /* the ELF header; the program headers go last, as the notes */

	for (size_t i = 0; i < w->nmaps; i++) {
		w->maps[i].file_off = off;
		off += w->maps[i].end - w->maps[i].start;
	}
	w->out_len = off;
}

/* Maps the core's w->map_len bytes (where that fails, it is written through a buffer). */
static void map_file(struct writer *w)
{
	void *map = mmap(NULL, (size_t)w->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, w->out, 0);

	w->out_map = map == MAP_FAILED ? NULL : map;
}

/*
 * Room at the end of the core for mappings the process makes while it is copied (a heap
 * growing by an arena): placed there while it is stopped, they need no larger mapping
 * (mremap() of a few GB takes milliseconds). A hole: no disk, no memory until used.
 */
static uint64_t room_after(uint64_t len)
{
	return ((UINT64_C(256) << 20) + len / 8) / PAGE * PAGE;
}

/* Sizes the core (and room after it, cut off once its headers are written) and maps
 * it; 0, or the errno of what failed. */
static int map_core(struct writer *w)
{
	if (w->out_map)
		munmap(w->out_map, (size_t)w->map_len);
	w->out_map = NULL;
	lay_out(w);
	w->map_len = w->out_len + room_after(w->out_len);
	if (ftruncate(w->out, (off_t)w->map_len))
		return errno;
	map_file(w);
	return 0;
}

/* Adds a run's bytes to the count of w->pause->bytes (before the stop: the estimate). */
static int count_run(struct writer *w, uint64_t from, size_t len, uint64_t off)
{
	(void)from;
	(void)off;
	w->pause->bytes += len;
	return HR_OK;
}

static double gigabytes(uint64_t bytes)
{
	return (double)bytes / 1e9;
}

/* The memory to copy, counted before anything stops: refused when the core cannot fit. */
static int check_room(struct writer *w)
{
	uint64_t need;

	w->pause->bytes = 0;
	for (size_t i = 0; i < w->nmaps; i++)
		for_each_touched_run(w, &w->maps[i], count_run);
	need = w->pause->bytes;
	w->pause->bytes = 0;
	if (!w->o->room || need <= w->o->room)
		return HR_OK;
	if (!w->o->out_name)
		return hr_error_set(w->err, HR_ENOMEM, "process %d: its core would take %.2f GB of "
				    "memory (the pages it has touched), %.2f GB are available: not "
				    "stopped (--save-core FILE puts the core on disk)", (int)w->pid,
				    gigabytes(need), gigabytes(w->o->room));
	return hr_error_set(w->err, HR_EOUTPUT, "%s: the core of process %d would take %.2f GB "
			    "(the pages it has touched), its file system has %.2f GB free: not "
			    "stopped", w->o->out_name, (int)w->pid, gigabytes(need),
			    gigabytes(w->o->room));
}

/*
 * Before anything: the core laid out for the process's mappings as they are, sized and
 * mapped, refused if it would not fit. (Then its pages allocated and mapped: prefault();
 * hints only, where they fail the copy does that work.)
 */
static int prepare(struct writer *w)
{
	int rc = read_maps(w), code;

	if (rc)
		return rc;
	if ((rc = check_room(w)))
		return rc;
	if ((code = map_core(w)))
		return cannot_write(w, code);
	return HR_OK;
}

/* The core's pages for the touched memory allocated (fallocate: extents, not a block a
 * page fault) and mapped, before any copy: a copy while stopped is then a copy and
 * nothing else, and one while the process runs is as fast. */
static void prefault(struct writer *w)
{
	for (size_t i = 0; i < w->nmaps && w->out_map; i++)
		for_each_touched_run(w, &w->maps[i], prefault_run);
}

/*
 * The core's mapping grown to its new length. mremap() moves the page tables, where an
 * unmap would tear down those of every page copied so far (tens of milliseconds at a
 * few GB: this runs while the process is stopped).
 */
static void grow_map(struct writer *w, uint64_t len)
{
	void *map = w->out_map ? mremap(w->out_map, (size_t)w->map_len, (size_t)len, MREMAP_MAYMOVE)
			       : MAP_FAILED;

	if (map == MAP_FAILED) {
		if (w->out_map)
			munmap(w->out_map, (size_t)w->map_len);
		w->map_len = len;
		map_file(w);
		return;
	}
	w->out_map = map;
	w->map_len = len;
}

/* Remembers a part of the core no mapping uses any more: punched out after the stop. */
static int forget_range(struct writer *w, uint64_t off, uint64_t len)
{
	struct dead_range *d = hr_array_push((void **)&w->dead, &w->ndead, &w->dead_cap,
					     sizeof(*d));

	if (!d)
		return hr_error_set(w->err, HR_ENOMEM, "out of memory");
	*d = (struct dead_range){ off, len };
	return HR_OK;
}

/* Appends a piece [start, end) of mapping m to the layout, at file_off. */
static int add_piece(struct writer *w, const struct mapping *m, uint64_t start, uint64_t end,
		     uint64_t file_off, bool tracked)
{
	struct mapping *p = hr_array_push((void **)&w->maps, &w->nmaps, &w->maps_cap, sizeof(*p));

	if (!p)
		return hr_error_set(w->err, HR_ENOMEM, "out of memory");
	*p = *m;
	p->start = start;
	p->end = end;
	p->file_off = file_off;
	p->tracked = tracked;
	return HR_OK;
}

/*
 * The pieces of mapping m: where an old mapping covered it, its place in the core and
 * tracking; the rest (new memory: a heap grown by an arena) at the core's end (*end),
 * untracked. Old and m are sorted by address; *at is where to look in old.
 */
static int add_pieces(struct writer *w, const struct mapping *m, const struct mapping *old,
		      size_t n, size_t *at, uint64_t *end)
{
	uint64_t from = m->start;
	int rc = HR_OK;

	while (*at < n && old[*at].end <= from)
		(*at)++;
	for (size_t k = *at; k < n && old[k].start < m->end && !rc; k++) {
		uint64_t a = old[k].start > from ? old[k].start : from;
		uint64_t b = old[k].end < m->end ? old[k].end : m->end;

		if (from < a) {
			rc = add_piece(w, m, from, a, *end, false);
			*end += a - from;
		}
		if (!rc)
			rc = add_piece(w, m, a, b, old[k].file_off + (a - old[k].start),
				       old[k].tracked);
		from = b;
	}
	if (!rc && from < m->end) {
		rc = add_piece(w, m, from, m->end, *end, false);
		*end += m->end - from;
	}
	return rc;
}

/* Forgets the parts of old mapping o that no mapping of now[] (sorted) covers. */
static int forget_uncovered(struct writer *w, const struct mapping *o, const struct mapping *now,
			    size_t n, size_t *at)
{
	uint64_t from = o->start;
	int rc = HR_OK;

	while (*at < n && now[*at].end <= from)
		(*at)++;
	for (size_t k = *at; k < n && now[k].start < o->end && !rc; k++) {
		if (from < now[k].start)
			rc = forget_range(w, o->file_off + (from - o->start), now[k].start - from);
		from = now[k].end < o->end ? now[k].end : o->end;
	}
	if (!rc && from < o->end)
		rc = forget_range(w, o->file_off + (from - o->start), o->end - from);
	return rc;
}

/*
 * The mappings again: just before the stop (track_new_mappings()), and once it is
 * stopped. Memory still mapped where it was keeps its place in the core (and what was
 * copied there while it ran) and its tracking, also where its mapping grew or shrank;
 * memory new since goes at the end of the core, untracked; the place of memory gone is
 * forgotten.
 */
static int relayout(struct writer *w)
{
	struct mapping *old = w->maps, *now;
	size_t n = w->nmaps, nnow, at = 0, at_now = 0;
	uint64_t end = w->out_len;
	int rc;

	w->maps = NULL;
	w->nmaps = w->maps_cap = 0;
	rc = read_maps(w);
	now = w->maps;
	nnow = w->nmaps;
	w->maps = NULL;
	w->nmaps = w->maps_cap = 0;
	for (size_t i = 0; i < nnow && !rc; i++)
		rc = add_pieces(w, &now[i], old, n, &at, &end);
	for (size_t i = 0; i < n && !rc; i++)
		rc = forget_uncovered(w, &old[i], now, nnow, &at_now);
	free(old);
	free(now);
	if (rc)
		return rc;
	w->out_len = end;
	if (end <= w->map_len)
		return HR_OK;
	if (ftruncate(w->out, (off_t)(end + room_after(end))))
		return cannot_write(w, errno);
	grow_map(w, end + room_after(end));
	return HR_OK;
}

/* The ELF header at the start of the core; the program headers and notes after the
 * memory, where the file then ends (e_phoff may be anywhere: the mappings found at the
 * stop can outnumber those of the layout). */
static int write_headers(struct writer *w)
{
	size_t notes_len, nph = 1 + w->nmaps;
	uint8_t *notes = build_notes(w, &notes_len);
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr *ph = calloc(nph, sizeof(*ph));
	int rc;

	if (!notes || !ph) {
		free(notes);
		free(ph);
		return hr_error_set(w->err, HR_ENOMEM, "out of memory");
	}
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
#if defined(__aarch64__)
	eh.e_machine = EM_AARCH64;
#else
	eh.e_machine = EM_X86_64;
#endif
	eh.e_version = EV_CURRENT;
	eh.e_phoff = w->out_len;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(*ph);
	eh.e_phnum = (Elf64_Half)nph;
	ph[0] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = w->out_len + nph * sizeof(*ph),
			      .p_filesz = notes_len, .p_align = 4 };
	for (size_t i = 0; i < w->nmaps; i++) {
		uint64_t size = w->maps[i].end - w->maps[i].start;

		ph[1 + i] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W,
					  .p_offset = w->maps[i].file_off, .p_vaddr = w->maps[i].start,
					  .p_filesz = size, .p_memsz = size, .p_align = PAGE };
	}
	rc = write_at(w, &eh, sizeof(eh), 0);
	if (!rc)
		rc = write_at(w, ph, nph * sizeof(*ph), eh.e_phoff);
	if (!rc)
		rc = write_at(w, notes, notes_len, ph[0].p_offset);
	if (!rc && ftruncate(w->out, (off_t)(ph[0].p_offset + notes_len)))
		rc = cannot_write(w, errno);
	free(notes);
	free(ph);
	return rc;
}

static int open_proc(struct writer *w)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)w->pid);
	if ((w->mem = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT				 ? hr_error_set(w->err, HR_EINPUT, "no process %d",
										(int)w->pid)
		       : errno == EACCES || errno == EPERM ? cannot_attach(w)
							 : sys_fail(w, "cannot open its memory");
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)w->pid);
	w->pagemap = open(path, O_RDONLY | O_CLOEXEC);
	w->buf = malloc(COPY_CHUNK);
	w->pm = malloc(COPY_CHUNK / PAGE * sizeof(uint64_t));
	return w->buf && w->pm ? HR_OK : hr_error_set(w->err, HR_ENOMEM, "out of memory");
}

static int ended_meanwhile(struct writer *w)
{
	return hr_error_set(w->err, HR_EINPUT, "process %d ended while heapref copied its memory "
			    "(%.1f MB copied): no core", (int)w->pid, (double)w->pause->bytes / 1e6);
}

/* --- copying while it runs ------------------------------------------------------------------ */

/* Records a run staged at the end of the staging buffer (or a run of zeros). */
static int stage_run(struct writer *w, uint64_t off, uint64_t len, bool zero)
{
	struct staged_run *r = hr_array_push((void **)&w->stage.runs, &w->stage.nruns,
					     &w->stage.runs_cap, sizeof(*r));

	if (!r)
		return hr_error_set(w->err, HR_ENOMEM, "out of memory");
	*r = (struct staged_run){ off, len, zero };
	if (!zero)
		w->stage.used += len;
	return HR_OK;
}

#define STAGE_MIN (16u << 20)
#define STAGE_MAX (UINT64_C(1) << 30)

/*
 * Whether len more bytes fit in the staging buffer; while the process runs it grows (up
 * to STAGE_MAX), while it is stopped only its populated room is used (no page faults).
 */
static bool stage_room(struct writer *w, uint64_t len)
{
	struct staging *st = &w->stage;
	uint64_t want = st->used + len, cap;
	void *buf;

	if (st->cap - st->used >= len)
		return true;
	if (st->stopped || want > STAGE_MAX)
		return false;
	cap = st->cap * 2 > want ? st->cap * 2 : want;
	cap = (cap < STAGE_MAX ? cap : STAGE_MAX + PAGE - 1) / PAGE * PAGE;
	buf = st->buf ? mremap(st->buf, st->cap, (size_t)cap, MREMAP_MAYMOVE)
		      : mmap(NULL, (size_t)cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	if (buf == MAP_FAILED)
		return false;
	st->buf = buf;
	st->cap = (size_t)cap;
	return true;
}

/*
 * The copies of the rounds, and of the stop, are staged in memory: a copy into the
 * mapped core can wait for the disk (the kernel throttles a writer of page cache while
 * it writes dirty pages back), and a round that waits lets the process write more.
 */
static int stage_begin(struct writer *w)
{
	if (hr_array_reserve((void **)&w->stage.runs, &w->stage.runs_cap, 4096,
			     sizeof(*w->stage.runs)))
		return hr_error_set(w->err, HR_ENOMEM, "out of memory");
	w->stage.on = true;
	return HR_OK;
}

/*
 * Before the stop: room for twice what the last round found written and for the
 * mappings not tracked, populated now (the caller then says the process is stopped:
 * no growing). What does not fit while stopped goes into the core directly.
 */
static void stage_reserve(struct writer *w, uint64_t last_round)
{
	struct staging *st = &w->stage;
	uint64_t untracked = w->pause->bytes, want;

	for (size_t i = 0; i < w->nmaps; i++)
		if (!w->maps[i].tracked)
			for_each_touched_run(w, &w->maps[i], count_run);
	untracked = w->pause->bytes - untracked;
	w->pause->bytes -= untracked;
	want = 2 * last_round + untracked + STAGE_MIN;
	if (stage_room(w, want))
		madvise(st->buf + st->used, (size_t)want, MADV_POPULATE_WRITE); /* a hint */
}

/*
 * The staged runs into the core, in the order they were staged (a page copied again
 * later wins), and the buffer emptied: after the stop, or when it is full (a run copied
 * into the core directly must not be overwritten by an older one staged before it).
 */
static int stage_write(struct writer *w)
{
	const uint8_t *at = w->stage.buf;
	bool on = w->stage.on;
	int rc = HR_OK;

	w->stage.on = false; /* zero_run() below punches at once */
	for (size_t i = 0; i < w->stage.nruns && !rc; i++) {
		const struct staged_run *r = &w->stage.runs[i];

		if (r->zero) {
			rc = zero_run(w, r->off, r->len);
			continue;
		}
		if (w->out_map)
			memcpy(w->out_map + r->off, at, (size_t)r->len);
		else
			rc = write_at(w, at, (size_t)r->len, r->off);
		at += r->len;
	}
	w->stage.on = on;
	w->stage.used = w->stage.nruns = 0;
	return rc;
}

/* After the stop: the staged runs into the core, and no more staging. */
static int stage_flush(struct writer *w)
{
	int rc = stage_write(w);

	w->stage.on = false;
	return rc;
}

static void stage_release(struct writer *w)
{
	if (w->stage.buf)
		munmap(w->stage.buf, w->stage.cap);
	free(w->stage.runs);
	w->stage = (struct staging){ 0 };
}

#define ROUNDS_MAX 8
#define ROUNDS_ENOUGH (1u << 20) /* bytes written during a round: few enough to stop for */

/* A run of the core zeroed: a hole punched, or zeros written where that cannot be. */
static int zero_run(struct writer *w, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[PAGE];

	if (w->stage.on)
		return stage_run(w, off, len, true);
	if (!fallocate(w->out, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len))
		return HR_OK;
	for (uint64_t done = 0; done < len; done += PAGE) {
		int rc = write_at(w, zeros, len - done < PAGE ? (size_t)(len - done) : PAGE, off + done);

		if (rc)
			return rc;
	}
	return HR_OK;
}

struct written_run {
	struct writer *w;
	const struct mapping *m;
};

/* A run of pages the process wrote: copied again, or zeros where it discarded them. */
static int copy_written(void *ctx, uint64_t from, uint64_t len, bool present)
{
	struct written_run *c = ctx;
	uint64_t off = c->m->file_off + (from - c->m->start);

	if (from < c->m->start || len > c->m->end - from)
		return HR_OK; /* not the kernel's way; nothing of ours */
	return present ? copy_run(c->w, from, (size_t)len, off) : zero_run(c->w, off, len);
}

/*
 * Copies what the tracked mappings were written since the last look. A mapping the
 * kernel no longer tracks (mapped anew) becomes untracked: copied whole while stopped.
 * While stopped (the last look), the pages are not protected again: that would change
 * page tables and flush TLBs for nothing inside the stop.
 */
static int copy_written_all(struct writer *w, bool again)
{
	for (size_t i = 0; i < w->nmaps; i++) {
		struct written_run c = { w, &w->maps[i] };
		int rc;

		if (!w->maps[i].tracked)
			continue;
		rc = tracker_written(&w->tracker, w->maps[i].start, w->maps[i].end, again,
				     copy_written, &c);
		if (rc < 0)
			return rc;
		if (rc > 0)
			w->maps[i].tracked = false;
	}
	return HR_OK;
}

/* Write-protects a run of touched pages of a watched mapping. */
static int protect_run(struct writer *w, uint64_t from, size_t len, uint64_t off)
{
	(void)off;
	return tracker_protect(&w->tracker, from, from + len) ? 1 : HR_OK;
}

/* Starts tracking the anonymous mappings' writes; false (pause->fallback set) if it cannot. */
static bool start_tracking(struct writer *w)
{
	struct hr_core_pause *p = w->pause;
	bool any = false;

	if (w->o->pause_mode == HR_PAUSE_STOP)
		return false;
	if (tracker_start(&w->tracker, w->pid, w->o->hold_borrowed, p->fallback,
			  sizeof(p->fallback)))
		return false;
	for (size_t i = 0; i < w->nmaps; i++) {
		struct mapping *m = &w->maps[i];

		if (!m->anonymous || tracker_watch(&w->tracker, m->start, m->end))
			continue;
		m->tracked = !for_each_touched_run(w, m, protect_run);
		if (!m->tracked)
			tracker_unwatch(&w->tracker, m->start, m->end);
		any |= m->tracked;
	}
	if (!any) {
		tracker_stop(&w->tracker);
		snprintf(p->fallback, sizeof(p->fallback), "the kernel tracks none of its mappings");
	}
	return any;
}

/*
 * Before the stop, while it runs: the mappings again (relayout()), and those new or
 * changed since the first layout (a heap grown by an arena) tracked and copied now, not
 * whole while it is stopped: a 16 MB mapping made meanwhile doubled a stop at 4 GiB.
 */
static int track_new_mappings(struct writer *w)
{
	int rc = relayout(w);

	for (size_t i = 0; i < w->nmaps && !rc; i++) {
		struct mapping *m = &w->maps[i];

		if (m->tracked || !m->anonymous || tracker_watch(&w->tracker, m->start, m->end))
			continue;
		/* protected before it is copied: a write after its copy is found at the stop */
		if (for_each_touched_run(w, m, protect_run)) {
			tracker_unwatch(&w->tracker, m->start, m->end);
			continue;
		}
		m->tracked = true;
		rc = for_each_touched_run(w, m, copy_run);
	}
	return rc;
}

/*
 * While it runs: the tracked mappings copied, then again what the process wrote to them
 * meanwhile, round after round, until a round finds little written, or no less than the
 * one before (a process writing as fast as heapref copies).
 */
static int precopy(struct writer *w, uint64_t *last_round)
{
	uint64_t last = UINT64_MAX;
	int rc = HR_OK;

	for (size_t i = 0; i < w->nmaps && !rc; i++)
		if (w->maps[i].tracked)
			rc = for_each_touched_run(w, &w->maps[i], copy_run);
	if (w->o->hold_tracking) /* tests kill heapref here: docs/cores.md */
		sleep(w->o->hold_tracking);
	if (!rc)
		rc = stage_begin(w);
	while (!rc && w->pause->rounds < ROUNDS_MAX) {
		uint64_t written, before = w->pause->bytes;

		rc = copy_written_all(w, true);
		w->pause->rounds++;
		written = *last_round = w->pause->bytes - before;
		if (written <= ROUNDS_ENOUGH || written > last / 2)
			break;
		last = written;
	}
	return rc;
}

/*
 * The last steps while it runs: memory mapped meanwhile tracked and copied, the stop's
 * room made (a few ms of page faults), then one more round for what the process wrote
 * meanwhile, so that the stop finds only what it writes during that round.
 */
static int ready_to_stop(struct writer *w, uint64_t last_round)
{
	int rc = track_new_mappings(w);

	if (rc)
		return rc;
	stage_reserve(w, last_round);
	if ((rc = copy_written_all(w, true)))
		return rc;
	w->pause->rounds++;
	w->stage.stopped = true;
	return HR_OK;
}

/* --- the pause ------------------------------------------------------------------------------- */

/* Stopped: what the core still needs, the registers and memory as they are now. */
static int copy_stopped(struct writer *w)
{
	struct timespec ts;
	double t0, t1;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	w->stopped_at_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if ((rc = relayout(w)))
		return rc;
	read_registers(w);
	read_auxv(w);
	read_cpus(w);
	t0 = now();
	if (w->tracking && (rc = copy_written_all(w, false)))
		return rc;
	t1 = now();
	for (size_t i = 0; i < w->nmaps && !rc; i++)
		if (!w->maps[i].tracked)
			rc = for_each_touched_run(w, &w->maps[i], copy_run);
	w->pause->written_seconds = t1 - t0;
	w->pause->untracked_seconds = now() - t1;
	return rc;
}

/* The pause: stop, copy, resume; resumes on every path. The rest before or after it. */
static int take_core(struct writer *w)
{
	uint64_t before, last_round = 0;
	double t0, t1;
	int rc = open_proc(w);

	if (!rc)
		rc = prepare(w);
	if (rc)
		return rc;
	prefault(w);
	t0 = now();
	w->tracking = start_tracking(w);
	w->pause->tracking_seconds = now() - t0;
	if (w->tracking && (rc = precopy(w, &last_round)))
		return rc;
	if (w->tracking && (rc = ready_to_stop(w, last_round)))
		return rc;
	w->pause->running_seconds = now() - t0 - w->pause->tracking_seconds;
	before = w->pause->bytes;
	t0 = now();
	rc = stop_all(w);
	w->pause->seize_seconds = now() - t0;
	if (!rc)
		rc = copy_stopped(w);
	if (w->o->hold_seconds) /* tests kill heapref, or the process, here */
		sleep(w->o->hold_seconds);
	if (!rc && !process_alive(w))
		rc = ended_meanwhile(w);
	t1 = now();
	resume_all(w);
	w->pause->resume_seconds = now() - t1;
	w->pause->stopped_seconds = now() - t0;
	w->pause->stopped_at_ns = w->stopped_at_ns;
	w->pause->bytes_stopped = w->pause->bytes - before;
	t0 = now();
	w->pause->tracked = w->tracking;
	if (w->tracking)
		tracker_stop(&w->tracker);
	if (!rc)
		rc = stage_flush(w);
	if (!rc)
		rc = write_headers(w);
	if (!rc)
		punch_zero_pages(w);
	w->pause->after_seconds = now() - t0;
	return rc;
}

int hr_core_write_process(int pid, int out_fd, const struct hr_core_write_options *o,
			  struct hr_core_pause *pause, struct hr_error *err)
{
	long page = sysconf(_SC_PAGESIZE);
	struct writer w = { .pid = (pid_t)pid, .out = out_fd, .mem = -1, .pagemap = -1, .o = o,
			    .page = page >= PAGE && page <= COPY_CHUNK ? (uint64_t)page : PAGE,
			    .pause = pause, .err = err, .tracker = { .uffd = -1, .pagemap = -1 } };
	int rc;

	memset(pause, 0, sizeof(*pause));
	if (pid <= 0)
		return hr_error_set(err, HR_EUSAGE, "not a process id: %d", pid);
	rc = take_core(&w);
	pause->threads = w.nthreads;
	tracker_stop(&w.tracker);
	stage_release(&w);
	free(w.dead);
	if (w.mem >= 0)
		close(w.mem);
	if (w.pagemap >= 0)
		close(w.pagemap);
	free(w.threads);
	free(w.maps);
	free(w.buf);
	free(w.pm);
	if (w.out_map)
		munmap(w.out_map, (size_t)w.map_len);
	return rc;
}
