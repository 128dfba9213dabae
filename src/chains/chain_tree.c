/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chain_tree.c - the tree of reference chains (see chains.h).
 *
 * Two open-addressing hash tables keep lookups O(1): one interns names (text -> name
 * id), one finds a child by (parent id, name id). Names live in one growing byte pool,
 * NUL-terminated, addressed by offset so the pool may move when it grows.
 */
#include <stdlib.h>
#include <string.h>

#include "heapref/chains.h"

struct name_entry {
	uint64_t offset; /* into the pool */
	uint64_t len;
	uint64_t hash;
};

struct child_slot {
	uint32_t parent; /* HR_CHAINS_NONE: empty */
	uint32_t name;
	uint32_t node;
};

struct hr_chains {
	uint32_t max_depth;

	struct hr_chain_node *nodes;
	size_t nnodes;
	size_t nodes_cap;

	char *pool;
	size_t pool_len;
	size_t pool_cap;
	struct name_entry *names;
	size_t nnames;
	size_t names_cap;
	uint32_t *name_slots; /* hash table of name ids + 1; 0: empty */
	size_t name_slots_len;

	struct child_slot *child_slots;
	size_t child_slots_len;
	size_t child_slots_used;

	bool fold_recursion; /* see hr_chains_fold_recursion() */

	unsigned examples_per_node;         /* hr_chains_keep_examples() */
	struct hr_chain_example *examples;  /* [examples_nodes * per node], biggest first */
	uint8_t *nexamples;                 /* [examples_nodes] */
	size_t examples_nodes;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * UINT64_C(1099511628211);
	return h;
}

/*
 * Tables take the low bits of a hash. The product's low bits depend only on the low
 * bits of what was multiplied, so the high half is folded in: without it, every child
 * of one name (`next. (*main.Node)` under each of 100,000 parents) hashed alike.
 */
static uint64_t hash_pair(uint32_t a, uint32_t b)
{
	uint64_t h = ((uint64_t)a << 32 | b) * UINT64_C(0x9E3779B97F4A7C15);

	return h ^ h >> 29 ^ h >> 47;
}

struct hr_chains *hr_chains_new(uint32_t max_depth)
{
	struct hr_chains *t = calloc(1, sizeof(*t));
	struct hr_chain_node *top;

	if (!t)
		return NULL;
	t->max_depth = max_depth;
	t->name_slots_len = 1024;
	t->name_slots = calloc(t->name_slots_len, sizeof(*t->name_slots));
	t->child_slots_len = 1024;
	t->child_slots = malloc(t->child_slots_len * sizeof(*t->child_slots));
	top = hr_array_push((void **)&t->nodes, &t->nnodes, &t->nodes_cap, sizeof(*t->nodes));
	if (!t->name_slots || !t->child_slots || !top) {
		hr_chains_free(t);
		return NULL;
	}
	for (size_t i = 0; i < t->child_slots_len; i++)
		t->child_slots[i].parent = HR_CHAINS_NONE;
	top->parent = HR_CHAINS_NONE;
	return t;
}

void hr_chains_free(struct hr_chains *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->pool);
	free(t->names);
	free(t->name_slots);
	free(t->child_slots);
	free(t->examples);
	free(t->nexamples);
	free(t);
}

void hr_chains_keep_examples(struct hr_chains *t, unsigned per_node)
{
	t->examples_per_node = per_node < HR_CHAINS_EXAMPLES_MAX ? per_node : HR_CHAINS_EXAMPLES_MAX;
}

unsigned hr_chains_examples_kept(const struct hr_chains *t)
{
	return t->examples_per_node;
}

/* Room for the examples of every node the tree has now. */
static int grow_examples(struct hr_chains *t)
{
	size_t n = t->nodes_cap, per = t->examples_per_node;
	struct hr_chain_example *ex = realloc(t->examples, n * per * sizeof(*ex));
	uint8_t *counts;

	if (!ex)
		return HR_ENOMEM;
	t->examples = ex;
	counts = realloc(t->nexamples, n);
	if (!counts)
		return HR_ENOMEM;
	memset(counts + t->examples_nodes, 0, n - t->examples_nodes);
	t->nexamples = counts;
	t->examples_nodes = n;
	return HR_OK;
}

int hr_chains_offer_example(struct hr_chains *t, uint32_t node, uint64_t addr, uint64_t size)
{
	unsigned per = t->examples_per_node, k;
	struct hr_chain_example *ex;

	if (!per || node >= t->nnodes)
		return HR_OK;
	if (node >= t->examples_nodes && grow_examples(t))
		return HR_ENOMEM;
	ex = t->examples + (size_t)node * per;
	k = t->nexamples[node];
	if (k == per && ex[per - 1].size >= size)
		return HR_OK; /* not bigger than the smallest kept */
	if (k < per)
		t->nexamples[node]++;
	else
		k = per - 1;
	for (; k > 0 && ex[k - 1].size < size; k--)
		ex[k] = ex[k - 1];
	ex[k] = (struct hr_chain_example){ addr, size };
	return HR_OK;
}

const struct hr_chain_example *hr_chains_examples(const struct hr_chains *t, uint32_t node,
						  size_t *n)
{
	*n = node < t->examples_nodes ? t->nexamples[node] : 0;
	return *n ? t->examples + (size_t)node * t->examples_per_node : NULL;
}

static int grow_name_slots(struct hr_chains *t)
{
	size_t len = t->name_slots_len * 2, i;
	uint32_t *slots = calloc(len, sizeof(*slots));

	if (!slots)
		return HR_ENOMEM;
	for (i = 0; i < t->nnames; i++) {
		size_t j = (size_t)t->names[i].hash & (len - 1);

		while (slots[j])
			j = (j + 1) & (len - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(t->name_slots);
	t->name_slots = slots;
	t->name_slots_len = len;
	return HR_OK;
}

/* The slot of name in the name hash: its id + 1, or a free slot (0) where it would go. */
static size_t name_slot(const struct hr_chains *t, const char *name, size_t len, uint64_t h)
{
	size_t j = (size_t)h & (t->name_slots_len - 1);

	for (; t->name_slots[j]; j = (j + 1) & (t->name_slots_len - 1)) {
		const struct name_entry *cand = &t->names[t->name_slots[j] - 1];

		if (cand->hash == h && cand->len == len && !memcmp(t->pool + cand->offset, name, len))
			break;
	}
	return j;
}

/* The name id of name, interned if new; HR_CHAINS_NONE when out of memory. */
static uint32_t intern(struct hr_chains *t, const char *name, size_t len)
{
	uint64_t h = hash_bytes(name, len);
	size_t j = name_slot(t, name, len, h);
	struct name_entry *e;

	if (t->name_slots[j])
		return t->name_slots[j] - 1;
	if (t->nnames >= UINT32_MAX - 1 ||
	    hr_array_reserve((void **)&t->pool, &t->pool_cap, t->pool_len + len + 1, 1))
		return HR_CHAINS_NONE;
	e = hr_array_push((void **)&t->names, &t->nnames, &t->names_cap, sizeof(*t->names));
	if (!e)
		return HR_CHAINS_NONE;
	e->offset = t->pool_len;
	e->len = len;
	e->hash = h;
	memcpy(t->pool + t->pool_len, name, len);
	t->pool[t->pool_len + len] = '\0';
	t->pool_len += len + 1;
	t->name_slots[j] = (uint32_t)t->nnames;
	if (t->nnames * 2 > t->name_slots_len && grow_name_slots(t))
		return HR_CHAINS_NONE;
	return (uint32_t)t->nnames - 1;
}

static struct child_slot *find_child_slot(const struct hr_chains *t, uint32_t parent,
					  uint32_t name)
{
	size_t j = (size_t)hash_pair(parent, name) & (t->child_slots_len - 1);

	while (t->child_slots[j].parent != HR_CHAINS_NONE &&
	       (t->child_slots[j].parent != parent || t->child_slots[j].name != name))
		j = (j + 1) & (t->child_slots_len - 1);
	return &t->child_slots[j];
}

static int grow_child_slots(struct hr_chains *t)
{
	struct child_slot *old = t->child_slots;
	size_t old_len = t->child_slots_len, i;

	t->child_slots = malloc(old_len * 2 * sizeof(*t->child_slots));
	if (!t->child_slots) {
		t->child_slots = old;
		return HR_ENOMEM;
	}
	t->child_slots_len = old_len * 2;
	for (i = 0; i < t->child_slots_len; i++)
		t->child_slots[i].parent = HR_CHAINS_NONE;
	for (i = 0; i < old_len; i++)
		if (old[i].parent != HR_CHAINS_NONE)
			*find_child_slot(t, old[i].parent, old[i].name) = old[i];
	free(old);
	return HR_OK;
}

/* Where the type T of a name `x. (T)` starts, and its length; false if it has none. */
static bool type_of_name(const char *name, size_t len, size_t *start, size_t *type_len)
{
	for (size_t i = 0; i + 4 <= len; i++) {
		if (name[i] == '.' && name[i + 1] == ' ' && name[i + 2] == '(') {
			*start = i + 3;
			*type_len = len - 1 - *start;
			return name[len - 1] == ')' && *type_len > 0;
		}
	}
	return false;
}

/*
 * The node on the chain ending at node (itself included) whose name has the type that
 * name has; HR_CHAINS_NONE if none has, or name has no type. Folding keeps a type at
 * most once on a chain, so there is at most one such node.
 */
static uint32_t ancestor_of_type(const struct hr_chains *t, uint32_t node, const char *name,
				 size_t len)
{
	size_t start, type_len;

	if (!type_of_name(name, len, &start, &type_len))
		return HR_CHAINS_NONE;
	for (; node != HR_CHAINS_TOP; node = t->nodes[node].parent) {
		const struct name_entry *e = &t->names[t->nodes[node].name];
		const char *other = t->pool + e->offset;
		size_t other_start, other_len;

		if (type_of_name(other, e->len, &other_start, &other_len) && other_len == type_len &&
		    !memcmp(other + other_start, name + start, type_len))
			return node;
	}
	return HR_CHAINS_NONE;
}

/* Files child as parent's child of that name, in the slot found for it. */
static uint32_t remember_child(struct hr_chains *t, struct child_slot *slot, uint32_t parent,
			       uint32_t name_id, uint32_t child)
{
	*slot = (struct child_slot){ parent, name_id, child };
	if (++t->child_slots_used * 2 > t->child_slots_len && grow_child_slots(t))
		return HR_CHAINS_NONE;
	return child;
}

uint32_t hr_chains_child(struct hr_chains *t, uint32_t parent, const char *name, size_t len)
{
	uint32_t depth = t->nodes[parent].depth + 1, name_id, child;
	struct child_slot *slot;
	struct hr_chain_node *node;

	if (t->max_depth && depth > t->max_depth)
		return parent;
	name_id = intern(t, name, len);
	if (name_id == HR_CHAINS_NONE)
		return HR_CHAINS_NONE;
	slot = find_child_slot(t, parent, name_id);
	if (slot->parent != HR_CHAINS_NONE)
		return slot->node;
	if (t->fold_recursion && (child = ancestor_of_type(t, parent, name, len)) != HR_CHAINS_NONE)
		return remember_child(t, slot, parent, name_id, child);
	if (t->nnodes >= UINT32_MAX - 1)
		return HR_CHAINS_NONE;
	node = hr_array_push((void **)&t->nodes, &t->nnodes, &t->nodes_cap, sizeof(*t->nodes));
	if (!node)
		return HR_CHAINS_NONE;
	node->parent = parent;
	node->name = name_id;
	node->depth = depth;
	return remember_child(t, slot, parent, name_id, (uint32_t)t->nnodes - 1);
}

uint32_t hr_chains_find(const struct hr_chains *t, uint32_t parent, const char *name, size_t len)
{
	size_t j;
	uint32_t child;
	const struct child_slot *slot;

	if (t->max_depth && t->nodes[parent].depth + 1 > t->max_depth)
		return parent;
	j = name_slot(t, name, len, hash_bytes(name, len));
	if (!t->name_slots[j]) /* hr_chains_child() would intern it, even to fold it */
		return HR_CHAINS_NONE;
	slot = find_child_slot(t, parent, t->name_slots[j] - 1);
	if (slot->parent != HR_CHAINS_NONE)
		return slot->node;
	if (t->fold_recursion && (child = ancestor_of_type(t, parent, name, len)) != HR_CHAINS_NONE)
		return child;
	return HR_CHAINS_NONE;
}

void hr_chains_fold_recursion(struct hr_chains *t)
{
	t->fold_recursion = true;
}

void hr_chains_charge(struct hr_chains *t, uint32_t node, uint64_t objects, uint64_t bytes)
{
	t->nodes[node].objects += objects;
	t->nodes[node].bytes += bytes;
}

size_t hr_chains_count(const struct hr_chains *t)
{
	return t->nnodes;
}

const struct hr_chain_node *hr_chains_node(const struct hr_chains *t, uint32_t id)
{
	return id < t->nnodes ? &t->nodes[id] : NULL;
}

const char *hr_chains_name(const struct hr_chains *t, uint32_t name_id)
{
	return name_id < t->nnames ? t->pool + t->names[name_id].offset : NULL;
}

size_t hr_chains_name_count(const struct hr_chains *t)
{
	return t->nnames;
}

void hr_chains_totals(const struct hr_chains *t, uint64_t *objects, uint64_t *bytes)
{
	size_t i;

	*objects = *bytes = 0;
	for (i = 0; i < t->nnodes; i++) {
		*objects += t->nodes[i].objects;
		*bytes += t->nodes[i].bytes;
	}
}

/* The length of the `[7]` or `[10+]` that starts an element's name `[7]. (T)`, or 0. */
static size_t element_index_len(const char *name)
{
	size_t i = 1;

	if (name[0] != '[' || !(name[1] >= '0' && name[1] <= '9'))
		return 0;
	while (name[i] >= '0' && name[i] <= '9')
		i++;
	if (name[i] == '+')
		i++;
	return name[i] == ']' && !strncmp(name + i + 1, ". (", 3) ? i + 1 : 0;
}

/* Offers node from's examples to node to of copy. */
static int copy_examples(const struct hr_chains *t, uint32_t from, struct hr_chains *copy,
			 uint32_t to)
{
	size_t n;
	const struct hr_chain_example *ex = hr_chains_examples(t, from, &n);

	for (size_t k = 0; k < n; k++)
		if (hr_chains_offer_example(copy, to, ex[k].addr, ex[k].size))
			return HR_ENOMEM;
	return HR_OK;
}

struct hr_chains *hr_chains_fold_elements(const struct hr_chains *t)
{
	struct hr_chains *copy = hr_chains_new(0);
	uint32_t *to = malloc(t->nnodes * sizeof(*to));
	char *buf = NULL;
	size_t buf_cap = 0;
	bool ok = copy && to;

	if (ok) {
		to[0] = HR_CHAINS_TOP;
		hr_chains_keep_examples(copy, t->examples_per_node);
	}
	for (size_t i = 1; ok && i < t->nnodes; i++) {
		const struct hr_chain_node *n = &t->nodes[i];
		const char *name = t->pool + t->names[n->name].offset;
		size_t len = t->names[n->name].len, skip = element_index_len(name);

		if (skip) { /* "[*]" and what follows the index */
			ok = !hr_array_reserve((void **)&buf, &buf_cap, len - skip + 3, 1);
			if (ok) {
				memcpy(buf, "[*]", 3);
				memcpy(buf + 3, name + skip, len - skip);
				to[i] = hr_chains_child(copy, to[n->parent], buf, len - skip + 3);
			}
		} else {
			to[i] = hr_chains_child(copy, to[n->parent], name, len);
		}
		ok = ok && to[i] != HR_CHAINS_NONE;
		if (ok)
			hr_chains_charge(copy, to[i], n->objects, n->bytes);
		ok = ok && !copy_examples(t, (uint32_t)i, copy, to[i]);
	}
	free(buf);
	free(to);
	if (!ok) {
		hr_chains_free(copy);
		return NULL;
	}
	return copy;
}

char *hr_chains_text(const struct hr_chains *t, uint32_t node)
{
	size_t len = 0, at;
	char *s;

	if (node == HR_CHAINS_NONE || node == HR_CHAINS_TOP || node >= hr_chains_count(t))
		return strdup("?");
	for (uint32_t v = node; v != HR_CHAINS_TOP; v = hr_chains_node(t, v)->parent)
		len += strlen(hr_chains_name(t, hr_chains_node(t, v)->name)) + 4;
	if (!(s = malloc(len + 1)))
		return NULL;
	at = len;
	for (uint32_t v = node; v != HR_CHAINS_TOP; v = hr_chains_node(t, v)->parent) {
		const char *name = hr_chains_name(t, hr_chains_node(t, v)->name);
		size_t n = strlen(name);

		if (at != len) {
			at -= 4;
			memcpy(s + at, " -> ", 4);
		}
		at -= n;
		memcpy(s + at, name, n);
	}
	memmove(s, s + at, len - at);
	s[len - at] = '\0';
	return s;
}
