/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cprog.c - a small C program whose DWARF (gcc's, DWARF 4 or 5) seeds the fuzz_binary
 * corpus: structs, arrays, pointers, typedefs, unions, globals in .data and .bss, and
 * functions whose locals live in registers and location lists when optimised.
 * Built with -nostdlib: it is never run.
 */
typedef unsigned long word;

struct node {
	struct node *next;
	word val;
	const char *name;
	unsigned char data[24];
};

union either {
	struct node *n;
	word w;
};

struct holder {
	struct node *list;
	struct node nodes[4];
	union either e;
	void (*fn)(struct node *);
	int bits : 3;
};

struct node first = { 0, 1, "first", { 1, 2, 3 } };
struct node *head = &first;
struct holder holders[2];
static word counter;

__attribute__((noinline)) static word walk(struct node *n, word limit)
{
	word sum = 0;

	for (word i = 0; n && i < limit; i++, n = n->next) {
		struct node *cur = n;

		sum += cur->val * i;
		counter++;
	}
	return sum;
}

static void touch(struct node *n)
{
	n->val++;
}

void _start(void)
{
	struct node local = { head, 7, "local", { 0 } };
	struct holder *h = &holders[counter & 1];

	h->list = &local;
	h->fn = touch;
	h->e.n = head;
	h->fn(&local);
	counter += walk(h->list, 16);
	for (;;)
		;
}
