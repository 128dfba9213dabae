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
	free(t);
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

/* The name id of name, interned if new; HR_CHAINS_NONE when out of memory. */
static uint32_t intern(struct hr_chains *t, const char *name, size_t len)
{
	uint64_t h = hash_bytes(name, len);
	size_t j = (size_t)h & (t->name_slots_len - 1);
	struct name_entry *e;

	for (; t->name_slots[j]; j = (j + 1) & (t->name_slots_len - 1)) {
		const struct name_entry *cand = &t->names[t->name_slots[j] - 1];

		if (cand->hash == h && cand->len == len && !memcmp(t->pool + cand->offset, name, len))
			return t->name_slots[j] - 1;
	}
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

uint32_t hr_chains_child(struct hr_chains *t, uint32_t parent, const char *name, size_t len)
{
	uint32_t depth = t->nodes[parent].depth + 1, name_id;
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
	if (t->nnodes >= UINT32_MAX - 1)
		return HR_CHAINS_NONE;
	node = hr_array_push((void **)&t->nodes, &t->nnodes, &t->nodes_cap, sizeof(*t->nodes));
	if (!node)
		return HR_CHAINS_NONE;
	node->parent = parent;
	node->name = name_id;
	node->depth = depth;
	*slot = (struct child_slot){ parent, name_id, (uint32_t)t->nnodes - 1 };
	if (t->nnodes * 2 > t->child_slots_len && grow_child_slots(t))
		return HR_CHAINS_NONE;
	return (uint32_t)t->nnodes - 1;
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
