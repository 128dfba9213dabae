/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core_track.c - the pages a live process writes while heapref copies its memory, so
 * that the copy can be made while it runs and the process stopped only for what it
 * wrote meanwhile (core_writer.c).
 *
 * The kernel tracks them for us: a userfaultfd of the process's memory in asynchronous
 * write-protect mode (Linux 6.7+). Its pages are write-protected once; the first write
 * to a protected page is let through at once, by the kernel, and the page loses its
 * protection; the PAGEMAP_SCAN ioctl of /proc/PID/pagemap lists the pages that lost it
 * and protects them again, in one call. Pages the process discards meanwhile
 * (MADV_DONTNEED), and pages of a watched mapping never protected, are listed too, as
 * written and not present.
 *
 * Only the pages the process has touched are protected at first (tracker_protect()):
 * protecting a page it never touched leaves a marker that /proc/PID/pagemap shows as
 * swapped, which a copy of the touched pages would then read (and fault in) for
 * nothing. A page touched after the pagemap was read is not protected, so it is
 * listed as written, and copied, at the next look.
 *
 * A userfaultfd belongs to the memory of the process that makes it, so the process makes
 * it: one system call run in a borrowed thread (core_borrow.c), its descriptor copied
 * into heapref (pidfd_getfd) and closed in the process at once. From then on heapref's
 * copy is the only one: closing it, or heapref ending however it ends, removes the
 * tracking and every protection from the process's memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core_internal.h"

/* What Debian 12's kernel headers (Linux 6.1) do not have yet: the ABI of Linux 6.7. */
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

struct hr_pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

struct hr_page_region {
	uint64_t start, end, categories;
};

#define HR_PAGEMAP_SCAN _IOWR('f', 16, struct hr_pm_scan_arg)
#define HR_PM_SCAN_WP_MATCHING (1u << 0)
#define HR_PM_SCAN_CHECK_WPASYNC (1u << 1)
#define HR_PAGE_IS_WRITTEN (1u << 1)
#define HR_PAGE_IS_PRESENT (1u << 3)
#define HR_PAGE_IS_SWAPPED (1u << 4)

#define REGIONS 4096

/* Says why the tracking cannot be: what failed, and the system's word for it if any. */
static int refuse(char *why, size_t whylen, const char *what, const char *detail)
{
	snprintf(why, whylen, "%s%s%s", what, detail[0] ? ": " : "", detail);
	return -1;
}

/* Whether the process runs under a seccomp filter: one might kill it for the call. */
static bool filtered(pid_t pid)
{
	char path[64], line[256];
	bool yes = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return true;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8))
			yes = atoi(line + 8) != 0;
	fclose(f);
	return yes;
}

/* Whether the kernel has PAGEMAP_SCAN: asked on an empty range. */
static bool has_pagemap_scan(int pagemap)
{
	struct hr_pm_scan_arg a = { .size = sizeof(a), .start = 0, .end = 0 };

	return ioctl(pagemap, HR_PAGEMAP_SCAN, &a) >= 0;
}

/* The process's userfaultfd, made in it and copied into heapref; -1 with why set.
 * hold: seconds to keep the thread borrowed (tests kill heapref there: docs/cores.md). */
static int userfaultfd_of(pid_t pid, unsigned hold, char *why, size_t whylen)
{
	struct borrowed_thread b;
	int pidfd, ours = -1;
	long theirs;

	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0)
		return refuse(why, whylen, "pidfd_open", strerror(errno));
	if (borrow_thread(pid, &b, why, whylen)) {
		close(pidfd);
		return -1;
	}
	theirs = borrowed_syscall(&b, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY,
				  0, 0);
	if (theirs >= 0) {
		ours = (int)syscall(SYS_pidfd_getfd, pidfd, (int)theirs, 0);
		if (ours < 0)
			refuse(why, whylen, "pidfd_getfd", strerror(errno));
		borrowed_syscall(&b, SYS_close, (uint64_t)theirs, 0, 0);
	} else {
		refuse(why, whylen, "userfaultfd() in it failed", strerror((int)-theirs));
	}
	if (hold)
		sleep(hold);
	return_thread(&b);
	close(pidfd);
	return ours;
}

int tracker_start(struct write_tracker *t, pid_t pid, unsigned hold, char *why, size_t whylen)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED };
	char path[64];

	*t = (struct write_tracker){ .pid = pid, .uffd = -1, .pagemap = -1 };
	if (filtered(pid))
		return refuse(why, whylen, "it runs under a seccomp filter, which might kill it "
			      "for the system call heapref would make in it", "");
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	if ((t->pagemap = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return refuse(why, whylen, "cannot open its pagemap", strerror(errno));
	if (!has_pagemap_scan(t->pagemap)) {
		tracker_stop(t);
		return refuse(why, whylen, "the kernel has no PAGEMAP_SCAN (Linux 6.7 or later)", "");
	}
	if (!(t->regions = malloc(REGIONS * sizeof(struct hr_page_region)))) {
		tracker_stop(t);
		return refuse(why, whylen, "out of memory", "");
	}
	if ((t->uffd = userfaultfd_of(pid, hold, why, whylen)) < 0) {
		tracker_stop(t);
		return -1;
	}
	if (ioctl(t->uffd, UFFDIO_API, &api)) {
		tracker_stop(t);
		return refuse(why, whylen, "the kernel's userfaultfd has no asynchronous write "
			      "protection (Linux 6.7 or later)", "");
	}
	return 0;
}

int tracker_watch(struct write_tracker *t, uint64_t start, uint64_t end)
{
	struct uffdio_register reg = { .range = { start, end - start },
				       .mode = UFFDIO_REGISTER_MODE_WP };

	return ioctl(t->uffd, UFFDIO_REGISTER, &reg) ? -1 : 0;
}

int tracker_protect(struct write_tracker *t, uint64_t start, uint64_t end)
{
	struct uffdio_writeprotect wp = { .range = { start, end - start },
					  .mode = UFFDIO_WRITEPROTECT_MODE_WP };

	return ioctl(t->uffd, UFFDIO_WRITEPROTECT, &wp) ? -1 : 0;
}

void tracker_unwatch(struct write_tracker *t, uint64_t start, uint64_t end)
{
	struct uffdio_range range = { start, end - start };

	ioctl(t->uffd, UFFDIO_UNREGISTER, &range);
}

int tracker_written(struct write_tracker *t, uint64_t start, uint64_t end, bool again,
		    tracker_run_fn *fn, void *ctx)
{
	struct hr_page_region *v = t->regions;

	while (start < end) {
		struct hr_pm_scan_arg a = {
			.size = sizeof(a),
			.flags = (again ? HR_PM_SCAN_WP_MATCHING : 0) | HR_PM_SCAN_CHECK_WPASYNC,
			.start = start, .end = end, .vec = (uint64_t)(uintptr_t)v, .vec_len = REGIONS,
			.category_mask = HR_PAGE_IS_WRITTEN,
			.return_mask = HR_PAGE_IS_WRITTEN | HR_PAGE_IS_PRESENT | HR_PAGE_IS_SWAPPED
		};
		long n = ioctl(t->pagemap, HR_PAGEMAP_SCAN, &a);
		int rc;

		if (n < 0 || a.walk_end <= start)
			return 1;
		for (long i = 0; i < n; i++) {
			bool present = v[i].categories & (HR_PAGE_IS_PRESENT | HR_PAGE_IS_SWAPPED);

			if ((rc = fn(ctx, v[i].start, v[i].end - v[i].start, present)))
				return rc;
		}
		start = a.walk_end;
	}
	return 0;
}

void tracker_stop(struct write_tracker *t)
{
	if (t->uffd >= 0)
		close(t->uffd);
	if (t->pagemap >= 0)
		close(t->pagemap);
	free(t->regions);
	*t = (struct write_tracker){ .pid = t->pid, .uffd = -1, .pagemap = -1 };
}
