/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core_internal.h - the core reader's private structures, shared by its files:
 *   core_file.c    the ELF core: segments, threads' registers, the auxiliary vector;
 *   core_layout.c  the offsets of the runtime's structures, from the binary's DWARF;
 *   core_heap.c    heap objects and their pointer bits, from the runtime's spans;
 *   core_roots.c   data and bss, goroutines and their frames, finalizers, itabs;
 *   core_bounds.c  what a corrupt core can make them do: lists and arrays held to the
 *                  memory the core holds, lists checked for loops;
 *   core_reader.c  hr_core_open(): the order of it all;
 *   core_writer.c  a core of a live process (hr_core_write_process());
 *   core_track.c   the pages a live process writes while its core is copied;
 *   core_borrow.c  a system call run in one of its threads (for core_track.c).
 */
#ifndef HEAPREF_CORE_INTERNAL_H
#define HEAPREF_CORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapref/core.h"

struct hr_pclntab;

/* heapref's own note in the cores it writes: the runtime's clock when it stopped the
 * process (CLOCK_MONOTONIC, the clock of goroutines' wait_since), 8 bytes. */
#define HR_CORE_NOTE_NAME "HEAPREF"
#define HR_CORE_NOTE_CLOCK 1   /* CLOCK_MONOTONIC when the process was stopped */
#define HR_CORE_NOTE_CPUS 2    /* the processors the process could run on */

/* A PT_LOAD segment of the core: memory [vaddr, vaddr + memsz), of which the first
 * filesz bytes are in the file at offset (the rest reads as zeros). */
struct core_seg {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t filesz;
	uint64_t offset;
};

/* A thread's registers at the time of the core (NT_PRSTATUS). */
struct core_thread {
	uint64_t tid;
	uint64_t pc;
	uint64_t sp;
	uint64_t lr; /* arm64's link register; 0 on amd64 */
};

struct core_image {
	const char *path;
	const uint8_t *map;
	size_t len;
	bool owns_map;               /* mapped by core_image_open() */
	struct core_seg *segs;       /* sorted by vaddr, not overlapping */
	size_t nsegs;
	struct core_thread *threads;
	size_t nthreads;
	uint64_t held;               /* bytes of memory in the file: the segments' file parts */
	uint16_t machine;            /* EM_X86_64 or EM_AARCH64 */
	uint64_t entry;              /* AT_ENTRY from the auxiliary vector, 0 if none */
	uint64_t now_ns;             /* heapref's clock note, 0 if none */
	uint64_t ncpu;               /* heapref's CPU note, 0 if none */
	const struct hr_image *exe;  /* read-only memory the core left out is read from here */
};

/* Maps and parses the core at path, called name in messages. Release with
 * core_image_release(). */
int core_image_open(struct core_image *img, const char *path, const char *name,
		    struct hr_error *err);
/* The same on bytes in memory (fuzzing): they must outlive the image and the model. */
int core_image_open_bytes(struct core_image *img, const uint8_t *bytes, size_t len,
			  const char *name, struct hr_error *err);
/* Frees the tables; unmaps the file unless keep_map (the model owns it then). */
void core_image_release(struct core_image *img, bool keep_map);
/* The bytes at addr if [addr, addr + len) is all in the file part of one segment, else NULL. */
const uint8_t *core_ptr(const struct core_image *img, uint64_t addr, uint64_t len);
/* Copies memory at addr: from the core, zeros past a segment's file part, else from the
 * binary's sections. 0, or -1 if some byte is in neither. */
int core_read(const struct core_image *img, uint64_t addr, void *buf, size_t len);
/* How many bytes of [addr, addr + len) the file holds (in segments' file parts). */
uint64_t core_held(const struct core_image *img, uint64_t addr, uint64_t len);
/* Copies memory at addr from the core, zeros for what it does not hold. */
void core_read_or_zeros(const struct core_image *img, uint64_t addr, uint8_t *buf, size_t len);

/* A field of a runtime structure: its offset and size; present false if DWARF lacks it. */
struct rt_field {
	uint64_t off;
	uint32_t size;
	bool present;
};

/* The runtime's structures as this binary lays them out (core_layout.c). */
struct rt_layout {
	/* globals */
	uint64_t mheap, allgs, firstmoduledata, allfin, itab_table, allm, ncpu;
	uint64_t wait_reason_strings;  /* [N]string, 0 if absent */
	uint64_t wait_reason_count;
	uint64_t arena_l1, arena_l2;   /* mheap_.arenas dimensions */
	uint64_t arena_bytes;          /* bytes of heap one heapArena covers */
	uint64_t inline_mark_bits;     /* size of spanInlineMarkBits (Green Tea GC), 0 if none */
	/* runtime.mheap */
	struct rt_field h_allspans, h_arenas;
	/* runtime.mspan */
	struct rt_field s_start, s_npages, s_freeindex, s_nelems, s_free_scan, s_alloc_bits,
		s_spanclass, s_state, s_elemsize, s_specials, s_large_type;
	/* runtime.heapArena (Go 1.21 and before) */
	struct rt_field a_bitmap, a_no_more_ptrs;
	uint64_t bitmap_bits_per_word; /* 2 (Go 1.19) or 1 (1.20, 1.21); 0: bitmaps in spans */
	/* the runtime type (runtime._type or internal/abi.Type) */
	struct rt_field t_size, t_ptrbytes, t_tflag, t_gcdata;
	/* runtime.g */
	struct rt_field g_stack_lo, g_stack_hi, g_sched_sp, g_sched_pc, g_sched_lr, g_sched_ctxt,
		g_syscallsp, g_syscallpc, g_status, g_goid, g_gopc, g_startpc, g_waitsince,
		g_waitreason, g_m, g_defer, g_panic;
	/* runtime.m */
	struct rt_field m_id, m_procid, m_alllink, m_curg;
	/* runtime.moduledata */
	struct rt_field md_data, md_edata, md_bss, md_ebss, md_gcdatamask, md_gcbssmask;
	struct rt_field bv_n, bv_bytedata; /* runtime.bitvector */
	/* runtime.special, runtime.specialfinalizer */
	struct rt_field sp_next, sp_offset, sp_kind, spf_fn, spf_fint, spf_ot;
	/* runtime.finblock, runtime.finalizer */
	struct rt_field fb_alllink, fb_cnt, fb_fin, fin_fn, fin_arg, fin_fint, fin_ot;
	uint64_t fin_size;
	/* sizes of the structures lists and arrays hold, to bound them (0 if DWARF lacks one) */
	uint64_t g_size, m_size, mspan_size, special_size, finblock_size, memrecord_size;
	/* runtime.itabTableType, the itab */
	struct rt_field it_size, it_entries, itab_type;
	struct rt_field funcval_fn;
	/* the memory profile: runtime.mbuckets, runtime.bucket, runtime.memRecord, and
	 * runtime.specialprofile; absent fields leave the profile out */
	uint64_t mbuckets, bucket_size;
	struct rt_field bk_allnext, bk_size, bk_nstk, mr_allocs, mr_frees, spp_b;
};

/* Fills L from bin's DWARF; HR_EINPUT naming the Go version and what is missing. */
int rt_layout_load(struct rt_layout *L, const struct hr_image *exe, const char *core_path,
		   struct hr_error *err);

/* The state of one core being read. Reads fail softly: the first address that could
 * not be read is kept in bad_addr (with what it was for) and later reads return 0, so
 * a walk stops at its next check of failed(). */
struct core_reader {
	struct core_image img;
	const struct hr_binary *bin;
	struct hr_image exe;       /* the binary where the process loaded it (set_bias()) */
	struct rt_layout L;
	struct hr_dump *model;
	struct hr_error *err;
	uint32_t ps;
	bool failed;
	bool map_given;            /* the model owns img.map */
	bool force;                /* read a core whose build ID or entry is not the binary's */
	bool live;                 /* a core heapref took of a live process (--pid) */
	uint64_t bad_addr;
	const char *bad_what;
	unsigned go_minor;         /* N of the binary's go1.N, 0 if unknown */
	uint64_t heap_lo, heap_hi; /* of the in-use spans, for the params */
	uint64_t unbuilt_masks;    /* objects whose type's on-demand GC mask was never built */
	uint64_t missing_objects, missing_bytes; /* allocated, in memory the core lacks */
	uint64_t unwritten_objects, unwritten_bytes; /* allocated, read as never written */
	uint64_t unwind_stops;     /* running goroutines whose stack did not unwind to its end */
	struct hr_pclntab *pcln;         /* the binary's function table, for unwinding */
	uint64_t *bits;            /* scratch pointer bits */
	size_t bits_cap;           /* in words */
	uint64_t frame_bytes;      /* of the goroutines' frames so far: at most img.held */
};

/* The n-byte little-endian unsigned integer at p. */
static inline uint64_t le_uint(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n && i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint64_t cr_uint(struct core_reader *r, uint64_t addr, uint32_t size, const char *what);
uint64_t cr_word(struct core_reader *r, uint64_t addr, const char *what);
/* A field of the structure at base (0 when the field is absent). */
uint64_t cr_field(struct core_reader *r, uint64_t base, const struct rt_field *f, const char *what);
/* len bytes of memory at addr: in the mapping when the core holds them in one piece,
 * else copied into the model; .ptr NULL (and failed set) when not readable. */
struct hr_bytes cr_bytes(struct core_reader *r, uint64_t addr, uint64_t len, const char *what);
/* The HR_EINPUT report of the first failed read. */
int cr_fail_report(struct core_reader *r);
/* Scratch bits for nwords words, cleared. NULL when out of memory. */
uint64_t *cr_scratch_bits(struct core_reader *r, uint64_t nwords);

/* --- core_bounds.c --------------------------------------------------------------------- */

/* 0 if n entries of size bytes fit in the memory the core holds; else HR_EINPUT, one line
 * naming what claims them ("runtime.allgs"). */
int core_check_count(struct core_reader *r, const char *what, uint64_t n, uint64_t size);

/* A walk along linked lists of the core: the nodes of every list walked with it are
 * charged to one bound (the memory the core holds), each list is checked for a loop. */
struct list_walk {
	const char *budget;   /* what the bound is of, in messages: "runtime.mbuckets" */
	const char *node;     /* what a node is, in messages: "bucket" */
	uint64_t node_size;   /* bytes of a node at least */
	uint64_t nodes;       /* of every list walked */
	uint64_t bytes;       /* charged for them */
	char list[96];        /* the list walked now, in messages */
	uint64_t in_list;     /* its nodes so far */
	uint64_t mark, lap, lap_len; /* Brent's loop check */
};

/* Starts a walk of the list budget ("runtime.allm") of nodes of node_size bytes or more. */
void list_walk_begin(struct list_walk *w, const char *budget, const char *node,
		     uint64_t node_size);
/* Goes on to another list, named by fmt, under the same bound (the next span's specials). */
void list_walk_restart(struct list_walk *w, const char *fmt, ...) HR_PRINTF(2, 3);
/* Charges bytes more to the bound (a node larger than node_size); HR_EINPUT past it. */
int list_walk_charge(struct core_reader *r, struct list_walk *w, uint64_t bytes);

typedef int (*list_node_fn)(struct core_reader *r, struct list_walk *w, uint64_t node,
			    void *ctx);
/*
 * Calls visit on every node of the list from first, following the field next of each
 * (next_what names it if it cannot be read), until a NULL link. Fails with HR_EINPUT
 * and one line when the list loops ("runtime.mbuckets loops back to bucket 0x... after
 * N entries") or goes past the bound, when a link cannot be read, or with what visit
 * returned.
 */
int core_walk_list(struct core_reader *r, struct list_walk *w, uint64_t first,
		   const struct rt_field *next, const char *next_what, list_node_fn visit,
		   void *ctx);

/* core_heap.c: every allocated object of every in-use span, with its pointer bits. */
int core_read_heap(struct core_reader *r);
/* core_roots.c */
int core_read_segments(struct core_reader *r);
int core_read_goroutines(struct core_reader *r);
int core_read_finalizers(struct core_reader *r);
int core_read_itabs(struct core_reader *r);
/* The finalizers and memory-profile samples among the specials of the span at span
 * (objects from base); every span's specials are walked with the one walk w, begun by
 * core_specials_begin(). */
void core_specials_begin(struct core_reader *r, struct list_walk *w);
int core_span_specials(struct core_reader *r, struct list_walk *w, uint64_t span,
		       uint64_t base);
/* The memory-profile buckets of runtime.mbuckets. */
int core_read_memprof(struct core_reader *r);

/* --- a live process (core_writer.c) ------------------------------------------------------ */

#include <sys/types.h>
#if defined(__x86_64__)
#include <sys/user.h>
#endif

/* Reads a small text file of /proc into buf (NUL-terminated); false if it cannot. */
bool proc_read_text(const char *path, char *buf, size_t len);

/* A thread of a live process held to run system calls in (core_borrow.c). */
struct borrowed_thread {
	pid_t tid;                      /* 0: none held */
	int signal;                     /* a signal that came meanwhile, given back after */
	bool borrowed;                  /* its registers were changed: a call ran in it */
#if defined(__x86_64__)
	struct user_regs_struct saved;  /* its own registers, put back after */
#endif
};

/* Seizes a thread of pid waiting where a spurious wakeup is harmless; 0, or -1 with
 * why set (no such thread, or not on this architecture). */
int borrow_thread(pid_t pid, struct borrowed_thread *b, char *why, size_t whylen);
/* Runs system call nr in the borrowed thread: its result, or -errno. */
long borrowed_syscall(struct borrowed_thread *b, long nr, uint64_t a0, uint64_t a1, uint64_t a2);
/* Puts its registers back and lets it go. */
void return_thread(struct borrowed_thread *b);

/*
 * The pages a live process writes, from some moment on (core_track.c): a userfaultfd of
 * its memory in asynchronous write-protect mode, and /proc/PID/pagemap's PAGEMAP_SCAN.
 */
struct write_tracker {
	pid_t pid;
	int uffd;                 /* heapref's copy of the process's userfaultfd, -1 none */
	int pagemap;              /* /proc/PID/pagemap */
	void *regions;            /* PAGEMAP_SCAN's answers */
	size_t nregions;
};

/* Gets the process a userfaultfd; 0, or -1 with why set (the caller stops the process
 * for the whole copy instead). hold: tests only, seconds its thread stays borrowed. */
int tracker_start(struct write_tracker *t, pid_t pid, unsigned hold, char *why, size_t whylen);
/*
 * Registers [start, end) (a whole mapping) for tracking: 0, or -1 when it cannot be.
 * Its pages are tracked once protected: tracker_protect() on the pages the process has
 * touched, for the rest is reported as written (and not present) until it is.
 */
int tracker_watch(struct write_tracker *t, uint64_t start, uint64_t end);
int tracker_protect(struct write_tracker *t, uint64_t start, uint64_t end);
void tracker_unwatch(struct write_tracker *t, uint64_t start, uint64_t end);
/* Called for each run of pages written since the last look; present false when the
 * page no longer has memory (discarded: it reads as zeros). */
typedef int tracker_run_fn(void *ctx, uint64_t from, uint64_t len, bool present);
/*
 * Calls fn on the runs of [start, end) written since it was watched or last looked at,
 * and with again, tracks them from now on (protected again: the last look, while the
 * process is stopped, need not). 0, fn's error (negative), or 1 when the kernel refused
 * (a range not tracked, or no longer: mapped anew).
 */
int tracker_written(struct write_tracker *t, uint64_t start, uint64_t end, bool again,
		    tracker_run_fn *fn, void *ctx);
/* Stops tracking: the process's memory is as it was, nothing of heapref's stays in it. */
void tracker_stop(struct write_tracker *t);

#endif
