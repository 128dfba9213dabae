/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core_borrow.c - a system call run inside a live Go process, in one of its threads
 * borrowed while it waits: how heapref gets the process's userfaultfd (core_track.c).
 *
 * Only a thread the runtime parked in a wait whose result it ignores is borrowed: an idle
 * M in futexsleep() (futex(FUTEX_WAIT_PRIVATE)), whose caller re-checks its condition
 * because spurious wakeups are allowed, or sysmon in usleep() (nanosleep). The thread is
 * seized and interrupted alone, the other threads run on. Its registers are pointed back
 * at the system call instruction it waits behind, with the borrowed call's number and
 * arguments, and it is run from one system-call stop to the next (PTRACE_SYSCALL): the
 * call's entry, then its exit. Then its own registers are put back, its wait restarted,
 * and it is let go.
 *
 * Were heapref killed in the middle, the kernel lets the thread go as it is: it returns
 * from the borrowed call into the runtime's futex() or nanosleep() wrapper, at the same
 * instruction its own wait would have returned to, with the borrowed call's result as
 * the wait's, which the runtime ignores: a spurious wakeup. No signal is left for it (no
 * single-step: see to_syscall_stop()). The borrowed call itself ran at most once (a
 * userfaultfd the process then holds unused, or the close of it).
 *
 * x86-64 only for now: elsewhere borrow_thread() says so, and the caller stops the process
 * for the whole copy instead.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core_internal.h"

bool proc_read_text(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

#if defined(__x86_64__)
#include <sys/user.h>

#define SYS_FUTEX 202
#define SYS_NANOSLEEP 35
#define FUTEX_WAIT_PRIVATE 128
#define BORROW_TRIES 8
#define STEP_TRIES 8
/* The kernel's own restart codes, as a system call interrupted by a stop returns them. */
#define ERESTARTSYS_ 512
#define ERESTARTNOINTR_ 513
#define ERESTARTNOHAND_ 514
#define ERESTART_RESTARTBLOCK_ 516

/* The executable's text in the process: where the runtime's wrappers are. */
struct text_range {
	uint64_t lo, hi;
};

static void exe_text(pid_t pid, struct text_range *t)
{
	char path[64], exe[4096], line[4096 + 128];
	ssize_t n;
	FILE *f;

	t->lo = t->hi = 0;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) <= 0)
		return;
	exe[n] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		char perms[8], name[4096] = "";

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %4095[^\n]", &lo, &hi, perms, name) < 3 ||
		    perms[2] != 'x' || strcmp(name + strspn(name, " "), exe))
			continue;
		if (!t->lo || lo < t->lo)
			t->lo = lo;
		if (hi > t->hi)
			t->hi = hi;
	}
	fclose(f);
}

/*
 * Whether /proc/PID/task/TID/syscall says the thread waits in a call whose result the
 * runtime ignores, from an instruction in the executable's text.
 */
static bool waits_in_runtime(pid_t pid, pid_t tid, const struct text_range *text)
{
	char path[96], buf[512];
	unsigned long long a[6], sp, pc;
	long nr;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	if (!proc_read_text(path, buf, sizeof(buf)))
		return false;
	if (sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2],
		   &a[3], &a[4], &a[5], &sp, &pc) != 9)
		return false;
	if (pc < text->lo || pc >= text->hi)
		return false;
	return (nr == SYS_FUTEX && a[1] == FUTEX_WAIT_PRIVATE) || nr == SYS_NANOSLEEP;
}

static bool get_regs(pid_t tid, struct user_regs_struct *r)
{
	struct iovec iov = { r, sizeof(*r) };

	return ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)NT_PRSTATUS, &iov) == 0;
}

static bool set_regs(pid_t tid, const struct user_regs_struct *r)
{
	struct iovec iov = { (void *)r, sizeof(*r) };

	return ptrace(PTRACE_SETREGSET, tid, (void *)(uintptr_t)NT_PRSTATUS, &iov) == 0;
}

/* Whether the two bytes before pc are a syscall instruction (0f 05). */
static bool after_syscall_insn(pid_t pid, uint64_t pc)
{
	char path[64];
	uint8_t b[2];
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	ok = pread(fd, b, 2, (off_t)(pc - 2)) == 2 && b[0] == 0x0f && b[1] == 0x05;
	close(fd);
	return ok;
}

/*
 * Seizes and interrupts thread tid; true when it is stopped (by the interrupt) still in
 * one of the waits, its registers saved in b. Else it is let go (a signal that stopped
 * it first is given back to it).
 */
static bool hold_waiting(pid_t pid, pid_t tid, const struct text_range *text,
			 struct borrowed_thread *b)
{
	struct user_regs_struct *r = &b->saved;
	int status;

	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(uintptr_t)PTRACE_O_TRACESYSGOOD))
		return false;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) || waitpid(tid, &status, __WALL) != tid) {
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return false;
	}
	if (!WIFSTOPPED(status) || (status >> 16) != PTRACE_EVENT_STOP) {
		/* a signal-delivery-stop: the signal is given back with the detach */
		ptrace(PTRACE_DETACH, tid, NULL,
		       (void *)(uintptr_t)(WIFSTOPPED(status) ? WSTOPSIG(status) : 0));
		return false;
	}
	b->tid = tid;
	b->signal = 0;
	b->borrowed = false;
	if (get_regs(tid, r) && r->rip >= text->lo + 2 && r->rip <= text->hi &&
	    ((r->orig_rax == SYS_FUTEX && r->rsi == FUTEX_WAIT_PRIVATE) ||
	     r->orig_rax == SYS_NANOSLEEP) &&
	    after_syscall_insn(pid, r->rip))
		return true;
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	return false;
}

int borrow_thread(pid_t pid, struct borrowed_thread *b, char *why, size_t whylen)
{
	struct text_range text;
	char path[64];
	struct dirent *e;
	DIR *dir;
	int tries = 0;
	bool held = false;

	memset(b, 0, sizeof(*b));
	exe_text(pid, &text);
	if (!text.hi) {
		snprintf(why, whylen, "its executable's text is not in /proc/%d/maps", (int)pid);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dir = opendir(path))) {
		snprintf(why, whylen, "cannot list its threads: %s", strerror(errno));
		return -1;
	}
	while (!held && tries < BORROW_TRIES && (e = readdir(dir))) {
		pid_t tid = (pid_t)atol(e->d_name);

		if (tid <= 0 || !waits_in_runtime(pid, tid, &text))
			continue;
		tries++;
		held = hold_waiting(pid, tid, &text, b);
	}
	closedir(dir);
	if (!held) {
		snprintf(why, whylen, "no thread of it waits in the runtime's futex or usleep");
		return -1;
	}
	return 0;
}

/*
 * Lets the thread run to its next system-call stop. A signal that stops it on the way is
 * kept, to be given back when it is let go. Its stops are system-call stops, never a
 * single-step's SIGTRAP: were heapref killed while the thread is stopped there, the
 * kernel would deliver that SIGTRAP to it, and the runtime would crash on it; a
 * system-call stop (PTRACE_O_TRACESYSGOOD) delivers nothing.
 */
static bool to_syscall_stop(struct borrowed_thread *b)
{
	for (int i = 0; i < STEP_TRIES; i++) {
		int status, sig = b->signal;

		b->signal = 0;
		if (ptrace(PTRACE_SYSCALL, b->tid, NULL, NULL) ||
		    waitpid(b->tid, &status, __WALL) != b->tid || !WIFSTOPPED(status)) {
			b->signal = sig;
			return false;
		}
		if (WSTOPSIG(status) == (SIGTRAP | 0x80))
			return true;
		/* a signal-delivery-stop (no event): the signal is the thread's, kept */
		b->signal = (status >> 16) == 0 ? WSTOPSIG(status) : sig;
	}
	return false;
}

long borrowed_syscall(struct borrowed_thread *b, long nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct user_regs_struct r = b->saved;

	r.rip = b->saved.rip - 2; /* the syscall instruction the thread waits behind */
	r.rax = (unsigned long long)nr;
	r.orig_rax = (unsigned long long)-1; /* no restart of its own wait meanwhile */
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	if (!set_regs(b->tid, &r))
		return -errno;
	b->borrowed = true;
	if (!to_syscall_stop(b) || !to_syscall_stop(b)) /* its entry, then its exit */
		return -ESRCH;
	if (!get_regs(b->tid, &r))
		return -errno;
	return (long)r.rax;
}

void return_thread(struct borrowed_thread *b)
{
	struct user_regs_struct r = b->saved;
	long rc = (long)r.rax;

	if (!b->tid)
		return;
	if (b->borrowed) {
		/*
		 * Stopped at a system call's exit, where the kernel restarts nothing: its wait
		 * restarted by hand (the instruction again, with the call's number), or, for a
		 * timed wait, ended as interrupted (the runtime's wrappers ignore either).
		 */
		if (rc == -ERESTARTSYS_ || rc == -ERESTARTNOINTR_ || rc == -ERESTARTNOHAND_) {
			r.rip -= 2;
			r.rax = r.orig_rax;
		} else if (rc == -ERESTART_RESTARTBLOCK_) {
			r.rax = (unsigned long long)-EINTR;
		}
	}
	set_regs(b->tid, &r);
	ptrace(PTRACE_DETACH, b->tid, NULL, (void *)(uintptr_t)b->signal);
	b->tid = 0;
}

#else /* not x86-64 */

int borrow_thread(pid_t pid, struct borrowed_thread *b, char *why, size_t whylen)
{
	(void)pid;
	memset(b, 0, sizeof(*b));
	snprintf(why, whylen, "heapref borrows a thread on x86-64 only");
	return -1;
}

long borrowed_syscall(struct borrowed_thread *b, long nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	(void)b, (void)nr, (void)a0, (void)a1, (void)a2;
	return -ENOSYS;
}

void return_thread(struct borrowed_thread *b)
{
	(void)b;
}

#endif
