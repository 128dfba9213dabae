/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scan_internal.h - the scanner's private structures, shared by scanner.c (roots, the
 * two passes, accounting), walk.c (the typed walk of one piece of memory and chain
 * names), pass1_threads.c (pass 1's heap walk on several threads), go_layouts.c (how Go
 * lays out maps, channels, interfaces and closures), sync_layouts.c (sync.Map,
 * hash-tries, sync.Pool), mark.c and record_walk.c (pass 2).
 *
 * A scan is three things, kept apart by who writes them (struct hr_scan holds one of
 * each):
 *  - the context (struct scan_ctx): the inputs, the options and the tables derived from
 *    them. Made by hr_scan_new() and the hr_scan_keep_*() calls; once the passes start,
 *    every thread reads it and none writes it.
 *  - the results (struct scan_results): the tree, the visited bits, the summary, the
 *    queue, what pass 1 leaves to pass 2, ... Owned by the thread that runs the passes
 *    (and applies pass 1's logs in order: pass1_threads.c). While pass 1's workers run
 *    they read a few of its fields, named in the struct, and write none.
 *  - a walker per thread (struct walker): the typed walk's stack, scratch and node
 *    cache, the object being read, its status and its own counters. The walk functions
 *    take the walker and reach the context and the results through it (of the
 *    context's lookup tables, struct scan_tables, read for every value, it holds a
 *    copy). The walker of the thread that owns the results charges them as it walks; a
 *    worker's walker has a log instead (pass1_threads.c), to which its walk writes what
 *    it would change.
 */
#ifndef HEAPREF_SCAN_INTERNAL_H
#define HEAPREF_SCAN_INTERNAL_H

#include <pthread.h>

#include "heapref/scan.h"

#define NO_FRAME UINT32_MAX
#define COUNT_FILL UINT32_MAX /* as many elements as the object holds */

/*
 * A piece of memory the typed walk reads: a heap object, the data or bss segment, or a
 * goroutine's stack. bits starts as a copy of the GC's pointer bitmap; the walk clears
 * each pointer word it reads ("ticks it off"), so what stays set afterwards is what the
 * fallback pass must follow.
 */
struct region {
	uint64_t addr;
	uint64_t len;
	const uint8_t *data;
	uint64_t *bits;
	uint64_t nwords;    /* words wholly in it: nwords * ps <= len (follow_word_to() reads so) */
	unsigned ps;        /* bytes per word (a segment's length need not be a multiple) */
};

/* How a value is walked. */
enum walk_mode {
	M_VALUE,        /* by its type, fields and elements named */
	M_INTERNAL,     /* by its type, but charged to the node above: runtime storage */
	M_MAP,          /* a map header: hash<K,V> (buckets) or map<K,V> (swiss) */
	M_MAP_STORAGE,  /* a bucket (keys/values/overflow) or a swiss group (ctrl/slots) */
	M_MAP_KEYS,     /* array of keys in a bucket */
	M_MAP_VALS,     /* array of values in a bucket */
	M_MAP_SLOTS,    /* array of slots in a swiss group */
	M_MAP_SLOT,     /* one swiss slot: key, elem */
	M_MAP_TABLE,    /* a swiss table: groups */
	M_MAP_DIR,      /* a swiss directory entry: *table */
	M_CHAN,         /* an hchan<T> */
	M_CLOSURE,      /* a func value: code pointer, then captured variables */
	M_SYNC,         /* a sync.Map's storage (sync_layouts.c), charged to the node above */
	M_TRIE,         /* a hash-trie's storage: its map, indirect and entry nodes */
	M_POOL,         /* a sync.Pool's storage: per-P locals, dequeues */
	M_DONE,         /* a frame whose children are already on the stack */
	M_STRING_DATA,  /* a string's bytes: no view (type 0), recorded as such for --by-type */
};

/* How a frame of the walk is named in the chain tree. */
enum name_kind {
	N_SAME,         /* the node of the frame above (or of the work item) */
	N_ROOT,         /* a root: walk->root_name */
	N_FIELD,        /* "field. (T)": a = member index */
	N_VAR,          /* "var. (T)": str = a captured variable's name */
	N_INDEX,        /* "[i]. (T)", "[10+]. (T)": a = index */
	N_MAPKEY,       /* "$mapkey. (T)" */
	N_MAPVAL,       /* "$mapval. (T)" */
	N_POOLED,       /* "$pooled. (T)": a value in a sync.Pool */
	N_CLOSURE,      /* "$closure. (F)": a func value's closure, a = F's function index */
};

/* A heap object waiting for pass 1: the typed view it was first reached by. */
struct work {
	uint32_t obj;
	uint32_t node;      /* the chain node it is charged to */
	uint32_t type;      /* 0: none (walk nothing; its pointers go to pass 2) */
	uint32_t aux;       /* map or channel type for M_MAP*, M_CHAN */
	uint32_t offset;    /* of the view in the object */
	uint32_t count;     /* 0: one value; else elements (COUNT_FILL: all that fit) */
	uint8_t mode;       /* enum walk_mode of the value or of each element */
	uint8_t elem_name;  /* enum name_kind of each element when count != 0 */
	uint8_t streamed;   /* a worker walks it ahead of this thread (pass1_threads.c) */
	uint8_t piece;      /* PIECE_*: a part of a long run (scan_split_work()), or 0 */
	uint32_t goroutine; /* index + 1 of the goroutine whose stack reached it first, or 0 */
};

/*
 * A long run of elements (a []*T of millions) is queued as pieces of a few KiB, walked
 * one after the other as the run would be, which workers can share. A piece but the
 * first starts at its first element (the words before it are an earlier piece's); one
 * but the last ends with its last element. Its elements are named as the run's.
 */
#define PIECE_CONT 1 /* not the first piece */
#define PIECE_MORE 2 /* not the last piece */

/* What an item of the queue holds besides its object: interned (work_queue.c). */
struct view {
	uint32_t node;
	uint32_t type;
	uint32_t aux;
	uint32_t count;     /* 0 or COUNT_FILL; other counts are kept in the item */
	uint8_t mode;
	uint8_t elem_name;
	uint32_t goroutine;
};

#define QUEUE_LOOKAHEAD 16
#define QUEUE_VIEW_CACHE 256

/* Pass 1's queue: items of 2 to 4 words in chunks, views interned (work_queue.c). */
struct work_queue {
	struct queue_chunk *head, *tail, *spare;
	uint32_t head_pos;          /* next word to read in head */
	size_t items;               /* in the chunks, not counting the lookahead */
	struct view *views;
	size_t nviews, views_cap;
	uint32_t *view_slots;       /* hash of views: id + 1, 0 for a free slot */
	size_t nview_slots;
	uint32_t last_view;         /* the view of the item pushed last */
	uint32_t view_cache[QUEUE_VIEW_CACHE]; /* id + 1 of a view recently pushed, by its
						* node and goroutine (0: none) */
	uint32_t run, run_end;      /* where in tail the item pushed last starts (+ 1) and
				     * ends, if it may grow into a run (run 0: none) */
	struct work ahead[QUEUE_LOOKAHEAD]; /* taken off the chunks, being prefetched */
	unsigned ahead_first, nahead;
};

/* Appends w. 0 or HR_ENOMEM. */
int queue_push(struct work_queue *q, const struct work *w);
/* Takes the oldest item into *out; false when the queue is empty. */
bool queue_pop(struct work_queue *q, const struct hr_dump *d, struct work *out);
/* queue_pop() prefetching nothing: for an item another thread walks. */
bool queue_take(struct work_queue *q, struct work *out);
static inline size_t queue_length(const struct work_queue *q)
{
	return q->items + q->nahead;
}
void queue_release(struct work_queue *q);

/* A frame of the explicit stack the typed walk uses instead of recursion. */
struct vframe {
	uint64_t addr;
	uint64_t count;     /* 0: a single value; else elements of type */
	uint64_t next;      /* cursor: next member or element */
	const char *str;    /* N_VAR name */
	uint32_t type;
	uint32_t aux;
	uint32_t parent;
	uint32_t node;      /* HR_CHAINS_NONE until made */
	uint32_t a;         /* name argument, see enum name_kind */
	uint32_t name_type; /* the type the name shows */
	uint8_t name;       /* enum name_kind */
	uint8_t mode;       /* enum walk_mode */
	uint8_t elem_name;  /* for count != 0 */
	uint8_t started;
	uint8_t has_ptrs;   /* a pointer word is known to lie inside: start_frame() need not look */
};

/* Unticked pointer words of a heap object reached in pass 1, for pass 2. */
struct leftover {
	uint32_t obj;
	uint32_t node;
	uint64_t bits;      /* offset of its bit words in scan_results.leftover_bits */
	uint32_t goroutine; /* of the object: its words' drains reach for it */
	/* a piece's (LEFTOVER_PART | its first word; its bits follow a word counting them),
	 * or 0: the whole object's */
	uint32_t part;
};

#define LEFTOVER_PART (UINT32_C(1) << 31)

/* A root pointer word pass 1 did not follow, for pass 2: charged to node. */
struct root_word {
	uint64_t value;
	uint32_t node;
	uint32_t goroutine;  /* index + 1 of the goroutine whose frame holds it, or 0 */
};

/* layout_iface_dynamic()'s last answer, a walker's. */
struct iface_memo {
	uint64_t word;         /* 0: none */
	uint32_t iface_type, dyn;
};

struct node_cache_entry {
	uint64_t a;
	uint32_t parent;
	uint32_t b;
	uint32_t child;
	uint32_t kind;
	uint32_t log_seq;   /* a pending child is valid in the log it was made for only */
};

/* A chain node a worker's walk needs that the tree may not have yet: see pass1_threads.c. */
#define PENDING_NODE 0x80000000u

#define NODE_CACHE_SIZE 4096

/* What a member's name means to the walk (map and atomic internals), by member index. */
enum member_role {
	ROLE_OTHER,
	ROLE_KEYS,      /* bucket<K,V>.keys */
	ROLE_VALUES,    /* bucket<K,V>.values or .elems */
	ROLE_SLOTS,     /* group.slots */
	ROLE_OVERFLOW,  /* bucket<K,V>.overflow */
	ROLE_KEY,       /* slot.key */
	ROLE_ELEM,      /* slot.elem */
	ROLE_V,         /* sync/atomic.Pointer[T].v */
};

/* The sync package's containers and their parts, by DWARF type (sync_layouts.c). */
enum sync_layout {
	SL_NONE,
	SL_SYNC_MAP,    /* sync.Map */
	SL_MAP_ENTRY,   /* sync.entry (Go <= 1.23 sync.Map): p points to a boxed value */
	SL_ENTRY_REF,   /* *sync.entry: the values of a Go <= 1.23 sync.Map's maps */
	SL_TRIE_MAP,    /* a struct whose root leads to a hash-trie's indirect node */
	SL_TRIE_NODE,   /* a hash-trie's node[K,V]: an entry or an indirect by isEntry */
	SL_POOL,        /* sync.Pool */
	SL_EFACE,       /* sync.eface{typ, val}: an interface{} in a pool's dequeue */
};

/*
 * A hash-trie's types, recognised by name and shape (sync_layouts.c): node[K,V] is
 * viewed as indirect[K,V] or, by the offsets of entry[K,V], as an entry.
 */
struct trie_types {
	uint32_t node;      /* P.node[A]{isEntry bool} */
	uint32_t indirect;  /* P.indirect[A]: node at offset 0, parent, children */
	uint32_t key_type;  /* K */
	uint32_t value_type;/* V; 0 if entries have no value (unique.canonMap) */
	uint64_t is_entry;  /* offsets: node.isEntry, and entry's overflow.v, key, value */
	uint64_t overflow;
	uint64_t key;
	uint64_t value;
};

struct sync_types {
	struct trie_types *tries;
	size_t ntries;
	uint32_t pool_local;    /* sync.poolLocal */
	uint32_t any;           /* interface {} */
};

/* A type id as the walk reads it, looked up once per id by hr_scan_new(). */
struct scan_type {
	const struct hr_type *t; /* the entry of the resolved type */
	uint32_t resolved;       /* layout_resolve() of the id */
	bool inert;              /* no pointer-like kind inside: walking a value of it does
				  * nothing, whatever its bits (scalars, arrays and structs of them) */
	uint8_t layout;          /* enum sync_layout */
	bool flat;               /* a struct whose members walk_leaf() walks, or inert ones:
				  * walked without a cursor frame (start_frame()) */
	bool flat_ifaces;        /* flat, or so save for interface members: walked the same
				  * way up to one walk_leaf() leaves to a frame of its own */
};

/*
 * An object the compiler allocated in the data or bss segment (no DWARF variable of its
 * own) that a typed pointer leads to, waiting to be walked by that pointer's view.
 */
struct static_view {
	uint64_t addr;
	uint32_t type, aux, count, node;
	uint8_t mode, elem_name;
	uint8_t seg;        /* 0 data, 1 bss */
};

/*
 * Pass 1's static objects (see follow_static() in walk.c, walk_statics() in scanner.c),
 * in the regions of scan_results.segs.
 */
struct statics {
	uint64_t *started[2];      /* per data/bss word: a static object's walk starts here */
	struct static_view *views; /* first in first out: views[done..n) are still to walk */
	size_t n, done, cap;
};

struct itab_entry {
	uint64_t addr;
	uint64_t type_addr;
};

/* Shares of chain nodes by goroutine, keyed (node, goroutine) (shares.c). */
struct share_map {
	struct hr_goroutine_share *slots; /* goroutine 0: an empty slot */
	size_t cap, n;
};
int share_map_add(struct share_map *m, uint32_t node, uint32_t goroutine, uint64_t objects,
		  uint64_t bytes);
int share_map_merge(struct share_map *dst, const struct share_map *src);
void share_map_release(struct share_map *m);

/*
 * What the typed walk looks something up in for every value it reads: the inputs and
 * the tables hr_scan_new() derives from them, all read-only from then on. The context
 * holds them, and every walker a copy of these handles (not of what they point to):
 * see struct walker.
 */
struct scan_tables {
	const struct hr_dump *dump;
	const struct hr_binary *bin; /* = img.bin: types, globals, functions */
	struct hr_image img;       /* where the process loaded it: run-time addresses */
	struct scan_type *types;   /* by type id; types[ntypes]: ids out of range */
	uint32_t ntypes;
	unsigned ps;               /* pointer size */
	uint8_t *member_roles;     /* enum member_role by member index */
	uint32_t nmembers;
};

/*
 * What every thread of a scan reads and none writes once the passes start: the inputs
 * and the tables derived from them, the options, and the keep_* choices made before
 * pass 1. A walker sees it const.
 */
struct scan_ctx {
	struct scan_tables tables; /* set by hr_scan_new(), never changed after */
	unsigned go_minor;         /* the dump's go1.N (0 unknown): layouts that changed */
	size_t nobj;
	struct itab_entry *itabs;  /* sorted by address */
	size_t nitabs;
	struct sync_types sync;
	struct hr_scan_options opts;
	bool record_types;         /* the dump's records type objects: pass 2 by record_follow() */
	uint32_t g_type, sudog_type; /* runtime.g and runtime.sudog, 0 if DWARF has none */
	bool keep_root_edges;      /* hr_scan_keep_root_edges() */
	bool keep_goroutines;      /* hr_scan_keep_goroutines(): shares counted */
	unsigned cpus;             /* usable processors, asked once: pass 2 drains millions of times */
	hr_scan_roots_fn roots_walked; /* hr_scan_on_roots_walked(), or NULL */
	void *roots_walked_ctx;
};

/* How each heap object was reached (hr_scan_keep_paths()); NULL arrays: not kept. */
struct scan_paths {
	uint32_t *node;   /* the chain node it is charged to */
	uint32_t *holder; /* the object whose word reached it, or HR_SCAN_BY_ROOT */
};

/* Records object obj's entry (only the object's claimer writes it). */
static inline void scan_paths_set(const struct scan_paths *p, uint32_t obj, uint32_t node,
				  uint32_t holder)
{
	if (p->node)
		p->node[obj] = node;
	if (p->holder)
		p->holder[obj] = holder;
}

/*
 * What a scan makes, owned by the thread that runs the passes and applies pass 1's logs.
 * The first part is what pass 1's workers read while they run (set before they start);
 * they write none of it. The rest, from sum on, is this thread's alone: it starts on a
 * cache line of its own, as this thread writes there all the time.
 */
struct scan_results {
	struct hr_chains *tree;      /* workers: under tree_lock's read side */
	pthread_rwlock_t *tree_lock; /* with workers: they read the tree, this thread adds nodes */
	uint64_t *visited;           /* one bit per heap object; workers: atomic loads */
	struct region *segs;         /* pass 1's data and bss regions (static objects lie
				      * there: workers read where they are); NULL outside pass 1 */

	_Alignas(64) struct hr_scan_summary sum;
	struct scan_paths paths;     /* per heap object, when asked for (hr_scan_keep_paths) */
	uint32_t *obj_type;          /* hr_scan_keep_types(): per object, OBJ_TYPE_* or a type id */
	struct share_map shares;     /* with keep_goroutines: what each goroutine reached first */
	struct hr_root_edge *root_edges;
	size_t nroot_edges, root_edges_cap;

	struct work_queue queue;     /* pass 1, first in first out */
	struct statics statics;      /* pass 1: static objects to walk before the next heap object */
	/* pass 1: the last piece walked or applied has more pieces after it: the static
	 * objects found wait until the whole run is walked, as they would for one walk */
	bool pieces_open;

	struct leftover *leftovers;
	size_t nleftovers, leftovers_cap;
	uint64_t *leftover_bits;
	size_t leftover_bits_len, leftover_bits_cap;

	struct root_word *root_words;
	size_t nroot_words, root_words_cap;

	uint32_t *stack2;            /* pass 2: objects whose pointers are still to follow */
	size_t nstack2, stack2_cap;
	void *record_queue;          /* record_walk.c's queue */
	size_t nrecord_queue, record_queue_cap;

	uint64_t progress_next;
	struct p1_pool *pool;        /* with workers: chunks are taken as objects are queued */
	uint32_t queued_since_feed;
};

/* What a walker counts for the summary: added to the results' when its walks are over. */
struct walk_counts {
	uint64_t header_typed;       /* sum.header_typed */
	uint64_t worker_objects;     /* sum.worker_objects: a worker's chunks' objects */
};

/*
 * One thread's typed walk: its stack, the memory it reads, scratch, a cache of chain
 * nodes, where it fails. It reads the context and, on the thread that owns them,
 * charges the results; a worker's walker (pass1_threads.c) writes to its log instead
 * whatever its walk would change there, and reads only the results' first part.
 * Made by walker_init(), freed by walker_release(); no other thread reads or writes it.
 */
struct walker {
	/*
	 * ctx->tables, copied by walker_init(): the walk reads them for every value, and
	 * through ctx each read is one dependent load more (pass 1 of list-10m, medians of
	 * 21 runs: 0.729 s through ctx, 0.702 s with the copy, 0.683 s before the scan was
	 * split). Nothing else of the context is copied.
	 */
	struct scan_tables tables;
	const struct scan_ctx *ctx;
	struct scan_results *res;
	/* the bits its claims are checked against: res->visited (on the results' thread
	 * also marked in, scan_mark()), or a stream worker's own (stream_walk()) */
	uint64_t *visited;
	/*
	 * A worker's: what its walk would change in the results (claims, chain nodes, static
	 * objects, leftovers) goes here, applied in order by the results' thread; NULL for
	 * that thread's walker.
	 */
	struct p1_log *log;
	uint32_t log_seq;          /* a worker's count of logs: node_cache_entry.log_seq */
	int status;                /* first failure (HR_ENOMEM) inside the walk */
	uint32_t holder;           /* the object whose words are being read, or HR_SCAN_BY_ROOT */
	/* index + 1 of the goroutine whose stack reached first what is walked now (its frames,
	 * or an object of the queue it reached), or 0 */
	uint32_t cur_goroutine;

	struct vframe *frames;     /* the walk's stack */
	size_t nframes, frames_cap;
	uint32_t *path;            /* scratch for frame_node(), frames_cap long */
	struct region *region;     /* the region being walked */
	/* added to the index of the elements of the walk's first frame: a piece's after
	 * the first are named as elements 10 and on of the run ("[10+]") */
	uint64_t index_base;
	const char *root_name;     /* for N_ROOT */
	size_t root_name_len;

	uint64_t *obj_bits;        /* scratch: bits of the object being walked */
	size_t obj_bits_cap;       /* in words */
	uint64_t *task_bits;       /* scratch: pass 2's copy of one object's bits */
	size_t task_bits_cap;
	struct piece_scratch {     /* walk_pieces(): a variable in pieces, put together */
		uint8_t *mem;
		size_t mem_cap;
		uint64_t *bits;
		size_t bits_cap;
		uint64_t *frame_word; /* per word of the value: its word in the frame, or UINT64_MAX */
		size_t frame_word_cap;
	} pieces;
	struct hr_frame_vars fv;   /* scratch for frame variables */
	struct hr_frame_vars closure_fv; /* scratch for a closure's captured variables */
	struct walk_counts counts;
	struct iface_memo iface_memo;
	int8_t nil_nowhere;        /* address 0 in neither heap nor data: 1, 0, or -1 not
				    * known yet (walk.c, nil_leads_nowhere()) */

	char name_buf[1024];
	struct node_cache_entry node_cache[NODE_CACHE_SIZE];
};

/*
 * The public handle: the context, the results and the walker of the thread that owns
 * the results (the one calling hr_scan_pass1() and hr_scan_pass2()). Each on cache
 * lines of its own: pass 1's workers read the context while that thread writes the
 * rest. Allocated aligned (scanner.c).
 */
struct hr_scan {
	struct scan_ctx ctx;
	_Alignas(64) struct scan_results res;
	_Alignas(64) struct walker wk;
};

/* --- walk.c: the walker ---------------------------------------------------------------- */
/*
 * A walker for one thread, with a copy of ctx's tables, reading ctx and charging res
 * (see struct walker); its claims are checked against res->visited. Nothing to fail:
 * its buffers grow as it walks.
 */
void walker_init(struct walker *wk, const struct scan_ctx *ctx, struct scan_results *res);
/* Frees what the walker allocated; its counts must have been added by then. */
void walker_release(struct walker *wk);
/* Adds the walker's counts to res's summary and clears them (the results' thread). */
void walker_add_counts(struct walker *wk, struct scan_results *res);

/*
 * For rc, the result of a call whose failures the walk goes on without (a function with
 * no variables, DWARF it does not read): HR_ENOMEM, which would change names silently,
 * becomes the walker's status. Returns rc.
 */
static inline int walker_fail_on_nomem(struct walker *wk, int rc)
{
	if (rc == HR_ENOMEM)
		wk->status = HR_ENOMEM;
	return rc;
}

/* Records a root edge (hr_scan_keep_root_edges()) from the root of node to object obj. */
void scan_root_edge(struct walker *wk, uint32_t node, uint32_t obj);

/* What hr_scan_keep_types() records of an object besides a type id. */
#define OBJ_TYPE_UNKNOWN 0u           /* reached by bitmap only (pass 2), or no view */
#define OBJ_TYPE_ARRAY 0x80000000u    /* flag: an array of the type (a slice's backing array) */
#define OBJ_TYPE_CLOSURE 0x40000000u  /* flag: a closure, of the function index in the rest */
#define OBJ_TYPE_STRING_DATA 0x3fffffffu /* a string's bytes (no type id is this high) */

/*
 * A static object (see follow_static() in walk.c) is walked by view v if its memory
 * holds a pointer word and no view took it yet: then v is kept (its node still to set)
 * and returned; else NULL. len: its length in bytes. The results' thread only.
 */
struct static_view *static_accept(struct walker *wk, const struct static_view *v, uint64_t len);

/* --- walk.c ------------------------------------------------------------------------- */
/*
 * Walks the value at addr of type (count elements when count != 0) inside region r,
 * named as `name` below node (N_SAME: charged to node itself; N_ROOT: a new root named
 * wk->root_name). Pointers found are followed: new objects are charged and queued (or,
 * by a worker, logged). Returns the walker's status.
 */
int walk_value(struct walker *wk, struct region *r, uint64_t addr, uint32_t type,
	       uint64_t count, uint8_t mode, uint8_t elem_name, uint32_t aux,
	       uint8_t name, uint32_t node);
/* The chain node of frame i, made (with its ancestors) if it does not exist yet. */
uint32_t frame_node(struct walker *wk, uint32_t i);
/* The child of parent named "$sub_objects$" (or parent itself when out of depth). */
uint32_t sub_objects_node(struct walker *wk, uint32_t parent);
/* The child of parent named name (len bytes), made if new; HR_CHAINS_NONE out of memory. */
uint32_t scan_tree_child(struct walker *wk, uint32_t parent, const char *name, size_t len);
/* The root node named name. */
uint32_t root_node(struct walker *wk, const char *name, size_t len);
/*
 * Charges the heap object holding value (if any, and not yet reached) to the node of
 * frame `frame` and queues it with the given view. Returns true when value is settled:
 * outside the heap, already reached, or now queued; false when it was left for pass 2
 * (an untyped view). type 0 with typed == true: charge it, walk nothing inside.
 */
bool follow_value(struct walker *wk, uint64_t value, uint32_t type, uint32_t count,
		  uint8_t mode, uint8_t elem_name, uint32_t aux, bool typed, uint32_t frame);
/* follow_value() from a root that is no variable (finalizers): named wk->root_name. */
bool follow_root_value(struct walker *wk, uint64_t value, uint32_t type, uint8_t mode);
bool region_has_ptrs(const struct region *r, uint64_t addr, uint64_t len);
uint64_t region_word(const struct scan_tables *tb, const struct region *r, uint64_t addr);
/*
 * Follows the pointer word at addr of the region being walked if its bitmap still has
 * it, charging what it reaches to frame `frame` and queueing it with the given view.
 */
void follow_word(struct walker *wk, uint64_t addr, uint32_t type, uint64_t count,
		 uint8_t mode, uint8_t elem_name, uint32_t aux, bool typed, uint32_t frame);
/* Pushes a frame for a value inside frame parent, named (name, a, name_type). */
struct vframe *push_child(struct walker *wk, uint32_t parent, uint64_t addr, uint32_t type,
			  uint8_t mode, uint8_t name, uint64_t a, uint32_t name_type,
			  uint32_t aux);
/* push_child() for a value known to hold a pointer word, or its walk at once. */
void push_known(struct walker *wk, uint32_t parent, uint64_t addr, uint32_t type,
		uint8_t mode, uint8_t name, uint64_t a, uint32_t name_type, uint32_t aux);
/* Walks frame i as an interface value: type word or itab first, then the data word. */
void walk_iface(struct walker *wk, uint32_t i);

/* --- scanner.c ---------------------------------------------------------------------- */
/* Whether any of bits [from, to) is set: hr_bit_next() without a call, within a word. */
static inline bool bits_any(const uint64_t *bits, uint64_t from, uint64_t to)
{
	uint64_t n = to - from, v;

	if (from >= to)
		return false;
	if (n > 64 - (from & 63))
		return hr_bit_next(bits, from, to) < to;
	v = bits[from >> 6] >> (from & 63);
	return (n < 64 ? v & ((UINT64_C(1) << n) - 1) : v) != 0;
}

/* Bytes to words: the pointer size is 4 or 8 (the dump reader takes no other). */
static inline uint64_t scan_words(const struct scan_tables *tb, uint64_t bytes)
{
	return bytes >> __builtin_ctz(tb->ps);
}

/* layout_resolve(id), and the entry of that type, from the table hr_scan_new() made. */
static inline uint32_t scan_resolve(const struct scan_tables *tb, uint32_t id)
{
	return id < tb->ntypes ? tb->types[id].resolved : id;
}

static inline const struct hr_type *scan_resolved_type(const struct scan_tables *tb,
							uint32_t id)
{
	return tb->types[id < tb->ntypes ? id : tb->ntypes].t;
}

static inline bool scan_type_inert(const struct scan_tables *tb, uint32_t id)
{
	return tb->types[id < tb->ntypes ? id : tb->ntypes].inert;
}

static inline uint8_t scan_type_layout(const struct scan_tables *tb, uint32_t id)
{
	return tb->types[id < tb->ntypes ? id : tb->ntypes].layout;
}

static inline bool scan_type_flat(const struct scan_tables *tb, uint32_t id)
{
	return tb->types[id < tb->ntypes ? id : tb->ntypes].flat;
}

static inline bool scan_type_flat_ifaces(const struct scan_tables *tb, uint32_t id)
{
	return tb->types[id < tb->ntypes ? id : tb->ntypes].flat_ifaces;
}

static inline unsigned scan_member_role(const struct scan_tables *tb, uint32_t index)
{
	return index < tb->nmembers ? tb->member_roles[index] : ROLE_OTHER;
}

/* Whether obj is visited, as far as the walker's bits say (see struct walker). */
bool scan_visited(const struct walker *wk, uint32_t obj);
/*
 * The results' thread: marks obj reached and charges it to node (from the walker's
 * goroutine); false if it already was.
 */
bool scan_claim(struct walker *wk, uint32_t obj, uint64_t size, uint32_t node, bool typed);
/* scan_claim()'s halves: marks obj reached by node (false if it already was)... */
bool scan_mark(struct walker *wk, uint32_t obj, uint32_t node);
/* ...and charges node with objects reached first from goroutine (index + 1, or 0). */
void scan_charge(struct walker *wk, uint32_t node, uint32_t goroutine, uint64_t objects,
		 uint64_t bytes, bool typed);
int scan_enqueue(struct walker *wk, const struct work *w);
/*
 * Gives w to push (with ctx), or, a long run of elements in a big object, its pieces in
 * order (PIECE_*). The first error push returns, or 0.
 */
int scan_split_work(const struct scan_tables *tb, const struct work *w,
		    int (*push)(void *ctx, const struct work *w), void *ctx);
/* The bytes w walks: its object's, or a piece's elements'. */
uint64_t scan_work_bytes(const struct scan_tables *tb, const struct work *w);
/*
 * Queues claimed object w->obj to be walked by view w, noting its type if kept (walk.c);
 * or, pointer_free (the object surely holds no pointer word: its walk would do nothing),
 * only notes its type.
 */
void scan_queue_view(struct walker *wk, const struct work *w, bool pointer_free);
/* A region over heap object obj, its pointer bits copied into *bits (grown as needed). */
int scan_object_region(const struct scan_tables *tb, uint32_t obj, uint64_t **bits,
		       size_t *cap, struct region *r);
/* Reports progress now and then: objects charged so far, plus `uncounted` not yet in sum. */
void scan_progress(struct walker *wk, const char *phase, uint64_t uncounted);

/* Walks one queued heap object or piece (pass 1) and keeps its unticked words for pass 2. */
int scan_walk_object(struct walker *wk, const struct work *w);
/*
 * Keeps the unticked pointer words of object obj: bits (its region's, nwords long), or
 * NULL: all its words. part: 0 for a region of the whole object, else a piece's region,
 * LEFTOVER_PART | its first word (struct leftover).
 */
int scan_add_leftover(struct walker *wk, uint32_t obj, uint32_t node, const uint64_t *bits,
		      uint64_t nwords, uint32_t part);
/* Walks the static objects found so far (pass 1). */
int scan_walk_statics(struct walker *wk);

/* --- pass1_threads.c ------------------------------------------------------------------ */
/* Pass 1's heap objects: the queue, on ctx->opts.threads threads. 0 or HR_ENOMEM. */
int pass1_walk_heap(struct walker *wk);
/* For a worker: the chain node hr_chains_child() will give, or a pending one of its log. */
uint32_t pass1_log_child(struct walker *wk, uint32_t parent, const char *name, size_t len);
/* For a worker: obj claimed by view w (node, type, ...), size bytes: to apply in order. */
void pass1_log_claim(struct walker *wk, const struct work *w, uint64_t size, bool pointer_free);
/* For a worker: a static object typed pointers lead to (see follow_static()). */
void pass1_log_static(struct walker *wk, const struct static_view *v, uint64_t len);
/* For a worker: an object's unticked words (scan_add_leftover()). */
int pass1_log_leftover(struct walker *wk, uint32_t obj, uint32_t node, const uint64_t *bits,
		       uint64_t nwords, uint32_t part);
/* With workers: takes queued objects into chunks for them (during a long walk). */
void pass1_feed(struct walker *wk);
/* --- mark.c ------------------------------------------------------------------------- */
/*
 * Marks everything the objects on the results' stack2 (already charged) lead to, by the
 * bitmaps alone, charging what is new to node; empties the stack. 0 or HR_ENOMEM.
 */
int mark_drain(struct walker *wk, uint32_t node);

/* --- record_walk.c ----------------------------------------------------------------- */
/*
 * On a dump whose records type objects: charges the object value leads to (if new) and
 * all it leads to, breadth first, each to a node named after its type below the node of
 * what reached it, starting from node. 0 or HR_ENOMEM.
 */
int record_follow(struct walker *wk, uint64_t value, uint32_t node);

/* --- go_layouts.c ------------------------------------------------------------------- */
/* Follows typedefs to the type a value really has (stops at maps, channels, interfaces). */
uint32_t layout_resolve(const struct hr_binary *bin, uint32_t id);
/* Whether an interface holding a value of this type stores it in its data word, by the
 * rule of Go 1.go_minor (the dump's release). */
bool layout_direct_iface(const struct hr_binary *bin, uint32_t id, unsigned ps,
			 unsigned go_minor);
/*
 * The dynamic type of the interface value at addr in r (type word or itab), 0 unknown;
 * the walker's status HR_ENOMEM if reading the itab ran out of memory.
 */
uint32_t layout_iface_dynamic(struct walker *wk, const struct region *r, uint64_t addr,
			      uint32_t iface_type);
/* The type a malloc header (Go >= 1.22) names for the object holding value, 0 if none. */
uint32_t layout_header_type(const struct scan_ctx *ctx, uint64_t value);
/* The member of struct id called name, NULL if none. */
const struct hr_member *layout_member(const struct hr_binary *bin, uint32_t id,
				      const char *name);
/* The pointee of a pointer type (after typedefs), 0 if not a pointer. */
uint32_t layout_pointee(const struct hr_binary *bin, uint32_t id);
/* For sync/atomic.Pointer[T]: the type *T, else 0. */
uint32_t layout_atomic_pointer(const struct hr_binary *bin, uint32_t struct_id);
/* The N of a "go1.N" version string, 0 if it has none. */
unsigned layout_go_minor(const struct hr_bytes *version);
/* The dump's itab records, sorted, into ctx->itabs. 0 or HR_ENOMEM. */
int layout_load_itabs(struct scan_ctx *ctx);

/* --- sync_layouts.c ----------------------------------------------------------------- */
/* Recognises the sync package's types: scan_type.layout, ctx->sync. 0 or HR_ENOMEM. */
int sync_load_layouts(struct scan_ctx *ctx);
/* The trie whose node or indirect type id is, NULL if none. */
const struct trie_types *sync_trie(const struct scan_ctx *ctx, uint32_t id);
/* Type argument k of a generic type's name ("T[A,B]": A, B), its length in *n; NULL if none. */
const char *sync_type_arg(const char *name, unsigned k, size_t *n);
enum type_args {
	ARGS_AS_IS,             /* P.<kind>[A,B] */
	ARGS_SHAPES,            /* P.<kind>[go.shape.A,go.shape.B] */
	ARGS_SHAPES_PTR_UINT8,  /* the same, a pointer argument as go.shape.*uint8 */
};

/* "P.node[A,B]" -> "P.<kind>[...]" in buf; its length, 0 if not a node's name or too long. */
size_t sync_sibling_name(const char *name, const char *kind, enum type_args as, char *buf,
			 size_t len);

enum sync_start {
	SYNC_GO_ON,     /* walk the frame on as start_frame() does (it may be retyped) */
	SYNC_POP,       /* done with the frame */
	SYNC_KEEP,      /* the frame's children are on the stack */
};

/* start_frame()'s part for a frame of a type with a sync layout. */
enum sync_start sync_start_frame(struct walker *wk, uint32_t i);
/* The member `index` of struct frame i in mode M_SYNC, M_TRIE or M_POOL. */
void sync_next_member(struct walker *wk, uint32_t i, uint32_t index);

#endif
