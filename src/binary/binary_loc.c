/* SPDX-License-Identifier: Apache-2.0 */
/*
 * binary_loc.c - DWARF location expressions: decoding raw expression bytes into
 * operations and evaluating operations symbolically into location pieces.
 *
 * Go describes where a variable lives with a handful of operations:
 * DW_OP_call_frame_cfa (with DW_OP_consts/DW_OP_plus or DW_OP_plus_uconst), DW_OP_fbreg
 * (Go's frame base is the CFA), DW_OP_addr for globals, DW_OP_regN for registers and
 * DW_OP_piece to glue parts together. The CFA is not known here: memory locations come
 * out relative to it, and the caller adds the CFA of the frame it looks at.
 * Everything else gives one HR_LOC_UNSUPPORTED piece rather than a wrong answer.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <dwarf.h>

#include "binary_internal.h"

const char *hr_loc_kind_name(unsigned kind)
{
	static const char *const names[] = { "none", "cfa", "addr", "register", "value",
					     "unsupported" };

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

/* ---- decoding ------------------------------------------------------------------------- */

struct reader {
	const uint8_t *p;
	const uint8_t *end;
	bool ok;
};

static uint64_t read_uleb(struct reader *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; r->p < r->end; shift += 7) {
		uint8_t b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->ok = false;
	return 0;
}

static uint64_t read_sleb(struct reader *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	do {
		if (r->p >= r->end) {
			r->ok = false;
			return 0;
		}
		b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

static uint64_t read_fixed(struct reader *r, unsigned n, bool big_endian, bool is_signed)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->ok = false;
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned idx = big_endian ? i : n - 1 - i;

		v = (v << 8) | r->p[idx];
	}
	r->p += n;
	if (is_signed && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~(uint64_t)0 << (8 * n);
	return v;
}

/* Reads the operands of op; false for operations heapref does not know. */
static bool read_operands(struct reader *r, uint8_t op, unsigned addr_size, bool be,
			  struct hr_loc_op *out)
{
	if ((op >= DW_OP_lit0 && op <= DW_OP_lit31) || (op >= DW_OP_reg0 && op <= DW_OP_reg31))
		return true;
	if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
		out->n1 = read_sleb(r);
		return true;
	}
	switch (op) {
	case DW_OP_addr: out->n1 = read_fixed(r, addr_size, be, false); return true;
	case DW_OP_const1u: out->n1 = read_fixed(r, 1, be, false); return true;
	case DW_OP_const1s: out->n1 = read_fixed(r, 1, be, true); return true;
	case DW_OP_const2u: out->n1 = read_fixed(r, 2, be, false); return true;
	case DW_OP_const2s: out->n1 = read_fixed(r, 2, be, true); return true;
	case DW_OP_const4u: out->n1 = read_fixed(r, 4, be, false); return true;
	case DW_OP_const4s: out->n1 = read_fixed(r, 4, be, true); return true;
	case DW_OP_const8u:
	case DW_OP_const8s: out->n1 = read_fixed(r, 8, be, false); return true;
	case DW_OP_constu:
	case DW_OP_plus_uconst:
	case DW_OP_regx:
	case DW_OP_piece:
	case DW_OP_addrx:
	case DW_OP_constx: out->n1 = read_uleb(r); return true;
	case DW_OP_consts:
	case DW_OP_fbreg: out->n1 = read_sleb(r); return true;
	case DW_OP_bregx: out->n1 = read_uleb(r); out->n2 = read_sleb(r); return true;
	case DW_OP_bit_piece: out->n1 = read_uleb(r); out->n2 = read_uleb(r); return true;
	case DW_OP_call_frame_cfa: case DW_OP_plus: case DW_OP_minus: case DW_OP_stack_value:
	case DW_OP_deref: case DW_OP_dup: case DW_OP_drop: case DW_OP_nop:
		return true;
	default:
		return false;
	}
}

int hr_loc_decode(const uint8_t *bytes, size_t len, unsigned addr_size, bool big_endian,
		  struct hr_loc_op *ops, size_t max, size_t *count, struct hr_error *err)
{
	struct reader r = { bytes, bytes + len, true };
	size_t n = 0;

	*count = 0;
	while (r.p < r.end) {
		size_t at = (size_t)(r.p - bytes);
		struct hr_loc_op op = { .op = *r.p++ };

		if (n == max)
			return hr_error_set(err, HR_EINPUT, "location expression has more than %zu operations",
					    max);
		if (!read_operands(&r, op.op, addr_size, big_endian, &op))
			return hr_error_set(err, HR_EINPUT, "byte %zu of a location expression: unknown operation 0x%02x",
					    at, op.op);
		if (!r.ok)
			return hr_error_set(err, HR_EINPUT, "byte %zu of a location expression: operation 0x%02x is truncated",
					    at, op.op);
		ops[n++] = op;
	}
	*count = n;
	return HR_OK;
}

/* ---- evaluation ------------------------------------------------------------------------ */

/* A value on the evaluation stack: a constant, or CFA + v. */
struct value {
	bool cfa;
	int64_t v;
};

#define STACK_MAX 16

struct machine {
	struct value stack[STACK_MAX];
	size_t sp;
	bool failed;
	/* what the current piece is, when it is not the stack top */
	bool is_reg;
	uint16_t reg;
	bool is_value;
	bool is_deref_reg;  /* DW_OP_bregN: memory at a register + offset */
};

static void push(struct machine *m, bool cfa, int64_t v)
{
	if (m->sp == STACK_MAX) {
		m->failed = true;
		return;
	}
	m->stack[m->sp].cfa = cfa;
	m->stack[m->sp].v = v;
	m->sp++;
}

static struct value pop(struct machine *m)
{
	struct value none = { false, 0 };

	if (m->sp == 0) {
		m->failed = true;
		return none;
	}
	return m->stack[--m->sp];
}

/* a + b or a - b; a CFA-relative value may only move by a constant */
static void arith(struct machine *m, bool minus)
{
	struct value b = pop(m);
	struct value a = pop(m);

	if (b.cfa && (minus || a.cfa)) {
		m->failed = true;
		return;
	}
	push(m, a.cfa || b.cfa, minus ? (int64_t)((uint64_t)a.v - (uint64_t)b.v)
				       : (int64_t)((uint64_t)a.v + (uint64_t)b.v));
}

/* Turns the machine's state into one piece of size bytes and resets it. */
static struct hr_loc_piece make_piece(struct machine *m, uint64_t size)
{
	struct hr_loc_piece p = { .size = size };

	if (m->failed || m->is_deref_reg) {
		p.kind = HR_LOC_UNSUPPORTED;
		p.reg = m->reg;
	} else if (m->is_reg) {
		p.kind = HR_LOC_REG;
		p.reg = m->reg;
	} else if (m->sp == 0) {
		p.kind = HR_LOC_NONE;
	} else {
		struct value top = m->stack[m->sp - 1];

		if (m->is_value)
			p.kind = top.cfa ? HR_LOC_UNSUPPORTED : HR_LOC_VALUE;
		else
			p.kind = top.cfa ? HR_LOC_CFA : HR_LOC_ADDR;
		p.offset = top.v;
	}
	memset(m, 0, sizeof(*m));
	return p;
}

/* Executes one non-piece operation. */
static void step(struct machine *m, const struct hr_loc_op *op)
{
	uint8_t o = op->op;

	if (o >= DW_OP_lit0 && o <= DW_OP_lit31) {
		push(m, false, o - DW_OP_lit0);
	} else if (o >= DW_OP_reg0 && o <= DW_OP_reg31) {
		m->is_reg = true;
		m->reg = (uint16_t)(o - DW_OP_reg0);
	} else if (o >= DW_OP_breg0 && o <= DW_OP_breg31) {
		m->is_deref_reg = true;
		m->reg = (uint16_t)(o - DW_OP_breg0);
		push(m, false, (int64_t)op->n1);
	} else {
		switch (o) {
		case DW_OP_call_frame_cfa: push(m, true, 0); break;
		case DW_OP_fbreg: push(m, true, (int64_t)op->n1); break;
		case DW_OP_addr: case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u:
		case DW_OP_const8s: case DW_OP_constu: case DW_OP_consts:
			push(m, false, (int64_t)op->n1);
			break;
		case DW_OP_plus_uconst: push(m, false, (int64_t)op->n1); arith(m, false); break;
		case DW_OP_plus: arith(m, false); break;
		case DW_OP_minus: arith(m, true); break;
		case DW_OP_regx: m->is_reg = true; m->reg = (uint16_t)op->n1; break;
		case DW_OP_stack_value: m->is_value = true; break;
		case DW_OP_dup: {
			struct value v = pop(m);

			push(m, v.cfa, v.v);
			push(m, v.cfa, v.v);
			break;
		}
		case DW_OP_drop: pop(m); break;
		case DW_OP_nop: break;
		default: m->failed = true; break; /* deref, addrx left unresolved, ... */
		}
	}
}

size_t hr_loc_eval(const struct hr_loc_op *ops, size_t count, struct hr_loc_piece *pieces,
		   size_t max)
{
	struct machine m;
	size_t n = 0;
	bool any_piece = false;

	if (max == 0)
		return 0;
	memset(&m, 0, sizeof(m));
	for (size_t i = 0; i < count; i++) {
		if (ops[i].op == DW_OP_piece || ops[i].op == DW_OP_bit_piece) {
			uint64_t size = ops[i].op == DW_OP_piece ? ops[i].n1 : ops[i].n1 / 8;

			if (n == max) {
				pieces[0].kind = HR_LOC_UNSUPPORTED;
				pieces[0].size = 0;
				return 1;
			}
			pieces[n++] = make_piece(&m, size);
			any_piece = true;
			continue;
		}
		step(&m, &ops[i]);
	}
	if (!any_piece || m.sp || m.is_reg || m.failed) {
		if (n == max) {
			pieces[0].kind = HR_LOC_UNSUPPORTED;
			return 1;
		}
		pieces[n++] = make_piece(&m, 0);
	}
	return n;
}

/* ---- formatting ------------------------------------------------------------------------ */

static void format_piece(const struct hr_loc_piece *p, char *buf, size_t len)
{
	switch (p->kind) {
	case HR_LOC_CFA:
		snprintf(buf, len, "cfa%+" PRId64, p->offset);
		break;
	case HR_LOC_ADDR:
		snprintf(buf, len, "addr 0x%" PRIx64, (uint64_t)p->offset);
		break;
	case HR_LOC_REG:
		snprintf(buf, len, "reg%u", p->reg);
		break;
	case HR_LOC_VALUE:
		snprintf(buf, len, "value %" PRId64, p->offset);
		break;
	default:
		snprintf(buf, len, "%s", hr_loc_kind_name(p->kind));
		break;
	}
}

void hr_loc_format(const struct hr_loc_piece *pieces, size_t count, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < count && used + 1 < len; i++) {
		char one[64];
		int w;

		format_piece(&pieces[i], one, sizeof(one));
		if (count > 1 || pieces[i].size)
			w = snprintf(buf + used, len - used, "%s%s[%" PRIu64 "]", i ? " " : "", one,
				     pieces[i].size);
		else
			w = snprintf(buf + used, len - used, "%s", one);
		if (w < 0)
			break;
		used += (size_t)w < len - used ? (size_t)w : len - used - 1;
	}
}
