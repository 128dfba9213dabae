/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pprof.c - writes the chain tree as a gzipped pprof profile (see writers.h).
 *
 * The profile is streamed, not built whole in memory: a Profile message is the
 * concatenation of its fields, so each repeated field (a sample, a location, a function,
 * a string) is packed on its own by protobuf-c, framed with its tag and length, and fed
 * to zlib as it is made. Memory stays proportional to the deepest chain, not the tree.
 *
 * Layout: string_table = "", the fixed strings (sample types, label keys), then one
 * string per chain name (name id n is string STR_FIRST_NAME + n). Function n + 1 is
 * named by name id n. Location k is chain node k, with one line calling its function.
 * A node with an own value is a sample whose stack is the node and its ancestors, leaf
 * first, as pprof expects, with a label "root" naming its chain's root variable (the
 * string of that name) and, if the tree keeps example objects, a label "examples" with
 * their addresses (strings after the names). Mapping 1 names the binary (file name and
 * build ID, strings after all others), and every location is in it.
 *
 * A diff profile (hr_write_pprof_diff()) holds two trees, each a "part": the new one's
 * samples as they are, the old one's negated, as `go tool pprof -diff_base` does. The
 * second part's strings, functions and locations follow the first's (its ids shifted).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "heapref/writers.h"
#include "profile.pb-c.h"

enum { STR_EMPTY, STR_INUSE_OBJECTS, STR_COUNT, STR_INUSE_SPACE, STR_BYTES, STR_EXAMPLES,
       STR_ROOT, STR_GOROUTINE, STR_CREATED_BY, STR_STATUS, STR_WAIT_REASON, STR_WAIT_TIME,
       STR_SECONDS, STR_LEAKED, STR_FIRST_NAME };

/* One chain tree of the profile, with where its ids start. */
struct part {
	const struct hr_chains *tree;
	int64_t sign;          /* -1: a diff's base, negated */
	uint64_t str_base;     /* its name id n is string str_base + n */
	uint64_t fn_base;      /* its name id n is function fn_base + n + 1 */
	uint64_t loc_base;     /* its node k is location loc_base + k */
	uint64_t examples_base; /* its k-th extra string (label values) is string examples_base + k */
	char *examples;        /* those strings, each NUL-terminated, in order */
	size_t examples_len, examples_cap;
	uint64_t nexamples;
	const struct hr_pprof_options *opt; /* the goroutine shares, for the first part only */
};

enum profile_field {
	F_SAMPLE_TYPE = 1,
	F_SAMPLE = 2,
	F_MAPPING = 3,
	F_LOCATION = 4,
	F_FUNCTION = 5,
	F_STRING_TABLE = 6,
	F_DEFAULT_SAMPLE_TYPE = 14,
};

struct gz_sink {
	ProtobufCBuffer base; /* first: protobuf-c calls base.append */
	z_stream zs;
	FILE *out;
	int failed;
	int write_errno; /* errno of the write that failed, for the message */
	unsigned char chunk[1 << 16];
};

static void sink_flush(struct gz_sink *s, int flush)
{
	do {
		s->zs.next_out = s->chunk;
		s->zs.avail_out = sizeof(s->chunk);
		if (deflate(&s->zs, flush) == Z_STREAM_ERROR) {
			s->failed = 1;
			return;
		}
		size_t have = sizeof(s->chunk) - s->zs.avail_out;

		if (have && fwrite(s->chunk, 1, have, s->out) != have) {
			s->write_errno = errno;
			s->failed = 1;
		}
	} while (s->zs.avail_out == 0 && !s->failed);
}

static void sink_append(ProtobufCBuffer *buf, size_t len, const uint8_t *data)
{
	struct gz_sink *s = (struct gz_sink *)buf;

	while (len && !s->failed) {
		uInt part = len > (1u << 30) ? (1u << 30) : (uInt)len;

		s->zs.next_in = (Bytef *)data;
		s->zs.avail_in = part;
		sink_flush(s, Z_NO_FLUSH);
		data += part;
		len -= part;
	}
}

static void put_varint(struct gz_sink *s, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	sink_append(&s->base, n, b);
}

static void put_message(struct gz_sink *s, unsigned field, const ProtobufCMessage *msg)
{
	put_varint(s, (uint64_t)field << 3 | 2);
	put_varint(s, protobuf_c_message_get_packed_size(msg));
	protobuf_c_message_pack_to_buffer(msg, &s->base);
}

static void put_bytes(struct gz_sink *s, const void *str, size_t len)
{
	put_varint(s, (uint64_t)F_STRING_TABLE << 3 | 2);
	put_varint(s, len);
	sink_append(&s->base, len, (const uint8_t *)str);
}

static void put_string(struct gz_sink *s, const char *str)
{
	put_bytes(s, str, strlen(str));
}

static void put_sample_types(struct gz_sink *s)
{
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;

	vt.type = STR_INUSE_OBJECTS;
	vt.unit = STR_COUNT;
	put_message(s, F_SAMPLE_TYPE, &vt.base);
	vt.type = STR_INUSE_SPACE;
	vt.unit = STR_BYTES;
	put_message(s, F_SAMPLE_TYPE, &vt.base);
	put_varint(s, (uint64_t)F_DEFAULT_SAMPLE_TYPE << 3 | 0);
	put_varint(s, STR_INUSE_SPACE);
}

static void put_fixed_strings(struct gz_sink *s)
{
	static const char *const fixed[] = { "", "inuse_objects", "count", "inuse_space", "bytes",
					     "examples", "root", "goroutine", "created_by", "status",
					     "wait_reason", "wait_time", "seconds", "leaked" };

	for (size_t i = 0; i < STR_FIRST_NAME; i++)
		put_string(s, fixed[i]);
}

/* A part's names, then its examples label values. */
static void put_strings(struct gz_sink *s, const struct part *p)
{
	size_t i, n = hr_chains_name_count(p->tree);

	for (i = 0; i < n; i++)
		put_string(s, hr_chains_name(p->tree, (uint32_t)i));
	for (i = 0; i < p->examples_len; i += strlen(p->examples + i) + 1)
		put_string(s, p->examples + i);
}

static void put_functions(struct gz_sink *s, const struct part *p)
{
	Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT;
	size_t i, n = hr_chains_name_count(p->tree);

	for (i = 0; i < n; i++) {
		fn.id = p->fn_base + i + 1;
		/*
		 * No system_name: pprof "demangles" a function whose name equals its system
		 * name, and its C++ heuristic would cut "buf. ([]uint8)" down to "buf. ".
		 */
		fn.name = (int64_t)(p->str_base + i);
		put_message(s, F_FUNCTION, &fn.base);
	}
}

static void put_locations(struct gz_sink *s, const struct part *p)
{
	Perftools__Profiles__Location loc = PERFTOOLS__PROFILES__LOCATION__INIT;
	Perftools__Profiles__Line line = PERFTOOLS__PROFILES__LINE__INIT;
	Perftools__Profiles__Line *lines[1] = { &line };
	size_t id, n = hr_chains_count(p->tree);

	loc.n_line = 1;
	loc.line = lines;
	loc.mapping_id = 1;
	for (id = 1; id < n; id++) {
		loc.id = p->loc_base + id;
		line.function_id = p->fn_base + hr_chains_node(p->tree, (uint32_t)id)->name + 1;
		put_message(s, F_LOCATION, &loc.base);
	}
}

/*
 * The value of node's "examples" label, "0xc000180000 0xc000190000", kept in the part
 * to be written with its strings; its string id, or 0 when the node has no examples.
 */
/* A label value kept with the part's strings: its string id, or UINT64_MAX (no memory). */
static uint64_t extra_string(struct part *p, const char *str, size_t len)
{
	if (hr_array_reserve((void **)&p->examples, &p->examples_cap, p->examples_len + len + 1, 1))
		return UINT64_MAX;
	memcpy(p->examples + p->examples_len, str, len);
	p->examples_len += len;
	p->examples[p->examples_len++] = '\0';
	return p->examples_base + p->nexamples++;
}

static uint64_t examples_label(struct part *p, uint32_t node)
{
	size_t n;
	const struct hr_chain_example *ex = hr_chains_examples(p->tree, node, &n);
	char one[24];

	if (!n)
		return 0;
	for (size_t k = 0; k < n; k++) {
		int len = snprintf(one, sizeof(one), "%s0x%" PRIx64, k ? " " : "", ex[k].addr);

		if (hr_array_reserve((void **)&p->examples, &p->examples_cap,
				     p->examples_len + (size_t)len + 1, 1))
			return UINT64_MAX;
		memcpy(p->examples + p->examples_len, one, (size_t)len);
		p->examples_len += (size_t)len;
	}
	p->examples[p->examples_len++] = '\0';
	return p->examples_base + p->nexamples++;
}

/*
 * The labels of the goroutine whose stack reached a share of a node: its id, creator,
 * status, wait reason and, where the heap's clock is known (a core heapref took), how
 * long it has waited, in seconds (a number label), into l (string ids made as needed).
 * Returns how many, or 0 when out of memory.
 */
static size_t goroutine_labels(struct part *p, uint32_t g, Perftools__Profiles__Label *l)
{
	const struct hr_pprof_options *o = p->opt;
	size_t ng;
	const struct hr_goroutine *gr = hr_dump_goroutines(o->dump, &ng) + (g - 1);
	char id[24];
	const char *creator = o->creator ? o->creator(o->creator_ctx, gr->gopc) : "?";
	const char *status = hr_goroutine_status_name(gr->status);
	uint64_t s0 = extra_string(p, id, (size_t)snprintf(id, sizeof(id), "%" PRIu64, gr->goid));
	uint64_t s1 = extra_string(p, creator, strlen(creator));
	uint64_t s2 = extra_string(p, status, strlen(status));
	uint64_t s3 = gr->wait_reason.len ? extra_string(p, (const char *)gr->wait_reason.ptr,
							 gr->wait_reason.len)
					  : 0;
	uint64_t waited;
	size_t n;

	if (s0 == UINT64_MAX || s1 == UINT64_MAX || s2 == UINT64_MAX || s3 == UINT64_MAX)
		return 0;
	l[0] = (Perftools__Profiles__Label)PERFTOOLS__PROFILES__LABEL__INIT;
	l[0].key = STR_GOROUTINE, l[0].str = (int64_t)s0;
	l[1] = l[0], l[1].key = STR_CREATED_BY, l[1].str = (int64_t)s1;
	l[2] = l[0], l[2].key = STR_STATUS, l[2].str = (int64_t)s2;
	l[3] = l[0], l[3].key = STR_WAIT_REASON, l[3].str = (int64_t)s3;
	n = s3 ? 4 : 3;
	if (o->leaked) { /* leaks.h's verdict: yes, no or unknown */
		const char *v = hr_leak_verdict_name(o->leaked[g - 1]);
		uint64_t s4 = extra_string(p, v, strlen(v));

		if (s4 == UINT64_MAX)
			return 0;
		l[n] = l[0], l[n].key = STR_LEAKED, l[n].str = (int64_t)s4;
		n++;
	}
	if ((waited = hr_goroutine_waited_ns(hr_dump_params(o->dump), gr))) {
		l[n] = (Perftools__Profiles__Label)PERFTOOLS__PROFILES__LABEL__INIT;
		l[n].key = STR_WAIT_TIME, l[n].num = (int64_t)(waited / 1000000000u);
		l[n].num_unit = STR_SECONDS;
		n++;
	}
	return n;
}

/*
 * The samples of node id split by goroutine (the shares of hr_pprof_options, sorted by
 * node; *next the first not yet written): one sample per goroutine whose stack reached
 * part of it, labelled with that goroutine; what is left is returned in *left.
 */
static int put_goroutine_shares(struct gz_sink *s, struct part *p, uint32_t id, size_t *next,
				Perftools__Profiles__Sample *sample, Perftools__Profiles__Label **labels,
				uint64_t left[2])
{
	const struct hr_pprof_options *o = p->opt;
	Perftools__Profiles__Label g[6];

	for (; o && *next < o->nshares && o->shares[*next].node <= id; (*next)++) {
		const struct hr_goroutine_share *sh = &o->shares[*next];
		size_t n;

		if (sh->node != id || sh->objects > left[0] || sh->bytes > left[1])
			continue; /* (a share larger than the node's own value cannot be) */
		if (!(n = goroutine_labels(p, sh->goroutine, g)))
			return HR_ENOMEM;
		for (size_t k = 0; k < n; k++)
			labels[1 + k] = &g[k];
		sample->n_label = 1 + n;
		sample->value[0] = (int64_t)sh->objects;
		sample->value[1] = (int64_t)sh->bytes;
		put_message(s, F_SAMPLE, &sample->base);
		left[0] -= sh->objects;
		left[1] -= sh->bytes;
	}
	return HR_OK;
}

static int put_samples(struct gz_sink *s, struct part *p)
{
	Perftools__Profiles__Sample sample = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Label root = PERFTOOLS__PROFILES__LABEL__INIT;
	Perftools__Profiles__Label examples = PERFTOOLS__PROFILES__LABEL__INIT;
	Perftools__Profiles__Label *labels[7] = { &root, &examples };
	size_t id, n = hr_chains_count(p->tree), cap = 0, next = 0;
	uint64_t *stack = NULL;
	int64_t values[2];

	sample.value = values;
	sample.n_value = 2;
	root.key = STR_ROOT;
	examples.key = STR_EXAMPLES;
	sample.label = labels;
	for (id = 1; id < n && !s->failed; id++) {
		const struct hr_chain_node *node = hr_chains_node(p->tree, (uint32_t)id);
		uint32_t at = (uint32_t)id;
		size_t depth = 0;
		uint64_t str;

		if (!node->objects && !node->bytes)
			continue;
		if (hr_array_reserve((void **)&stack, &cap, node->depth, sizeof(*stack)) ||
		    (str = examples_label(p, (uint32_t)id)) == UINT64_MAX) {
			free(stack);
			return HR_ENOMEM;
		}
		for (; at != HR_CHAINS_TOP; at = hr_chains_node(p->tree, at)->parent)
			stack[depth++] = p->loc_base + at; /* leaf first */
		root.str = (int64_t)(p->str_base +
				     hr_chains_node(p->tree, (uint32_t)stack[depth - 1] -
							       (uint32_t)p->loc_base)->name);
		sample.location_id = stack;
		sample.n_location_id = depth;
		uint64_t left[2] = { node->objects, node->bytes };

		if (put_goroutine_shares(s, p, (uint32_t)id, &next, &sample, labels, left)) {
			free(stack);
			return HR_ENOMEM;
		}
		if (!left[0] && !left[1])
			continue;
		labels[1] = &examples;
		values[0] = p->sign * (int64_t)left[0];
		values[1] = p->sign * (int64_t)left[1];
		examples.str = (int64_t)str;
		sample.n_label = str ? 2 : 1;
		put_message(s, F_SAMPLE, &sample.base);
	}
	free(stack);
	return HR_OK;
}

/* A sink writing a gzip stream to out; NULL (err set) when out of memory. */
static struct gz_sink *sink_open(FILE *out, struct hr_error *err)
{
	struct gz_sink *s = calloc(1, sizeof(*s));

	if (!s) {
		hr_error_set(err, HR_ENOMEM, "out of memory writing the profile");
		return NULL;
	}
	s->base.append = sink_append;
	s->out = out;
	/* windowBits 15 + 16: a gzip stream, as pprof files are */
	if (deflateInit2(&s->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(s);
		hr_error_set(err, HR_ENOMEM, "cannot start gzip compression");
		return NULL;
	}
	return s;
}

/* Ends the gzip stream and frees the sink; rc, or HR_EIO if a write failed (err set). */
static int sink_close(struct gz_sink *s, FILE *out, int rc, struct hr_error *err)
{
	int write_errno = 0;

	s->zs.next_in = NULL;
	s->zs.avail_in = 0;
	sink_flush(s, Z_FINISH);
	deflateEnd(&s->zs);
	if (!rc && (s->failed || fflush(out) != 0 || ferror(out))) {
		rc = HR_EIO;
		write_errno = s->write_errno ? s->write_errno : errno;
	}
	free(s);
	if (rc == HR_ENOMEM)
		return hr_error_set(err, rc, "out of memory writing the profile");
	if (rc)
		return hr_error_set(err, rc, "cannot write the profile: %s",
				    write_errno ? strerror(write_errno) : "I/O error");
	return HR_OK;
}

/*
 * Writes the parts as one profile: samples first (which decides the examples strings),
 * then locations, functions and the string table, each part's after the one before.
 */
/* Mapping 1, the binary: its file name and build ID are the strings str and str + 1. */
static void put_mapping(struct gz_sink *s, const struct hr_pprof_options *opt, uint64_t str)
{
	Perftools__Profiles__Mapping m = PERFTOOLS__PROFILES__MAPPING__INIT;

	m.id = 1;
	m.filename = opt && opt->binary ? (int64_t)str : 0;
	m.build_id = opt && opt->build_id && opt->build_id[0] ? (int64_t)str + 1 : 0;
	/* names come with the locations: there is nothing for pprof to symbolize */
	m.has_functions = 1;
	put_message(s, F_MAPPING, &m.base);
}

static int write_parts(FILE *out, struct part *parts, size_t nparts,
		       const struct hr_pprof_options *opt, struct hr_error *err)
{
	struct gz_sink *s = sink_open(out, err);
	int rc = HR_OK;
	uint64_t str = STR_FIRST_NAME, fn = 0, loc = 0;

	if (!s)
		return err->code;
	put_sample_types(s);
	for (size_t i = 0; i < nparts && !rc; i++) { /* each part's ids after the last's */
		struct part *p = &parts[i];

		p->str_base = str;
		p->fn_base = fn;
		p->loc_base = loc;
		p->examples_base = str + hr_chains_name_count(p->tree);
		rc = put_samples(s, p);
		str = p->examples_base + p->nexamples;
		fn += hr_chains_name_count(p->tree);
		loc += hr_chains_count(p->tree);
	}
	put_mapping(s, opt, str);
	for (size_t i = 0; i < nparts && !rc; i++)
		put_locations(s, &parts[i]);
	for (size_t i = 0; i < nparts && !rc; i++)
		put_functions(s, &parts[i]);
	put_fixed_strings(s);
	for (size_t i = 0; i < nparts && !rc; i++)
		put_strings(s, &parts[i]);
	put_string(s, opt && opt->binary ? opt->binary : "");
	put_string(s, opt && opt->build_id ? opt->build_id : "");
	for (size_t i = 0; i < nparts; i++)
		free(parts[i].examples);
	return sink_close(s, out, rc, err);
}

int hr_write_pprof(FILE *out, const struct hr_chains *tree, const struct hr_pprof_options *opt,
		   struct hr_error *err)
{
	struct part p = { .tree = tree, .sign = 1,
			  .opt = opt && opt->shares && opt->dump ? opt : NULL };

	return write_parts(out, &p, 1, opt, err);
}

int hr_write_pprof_diff(FILE *out, const struct hr_chains *old_tree,
			const struct hr_chains *new_tree, const struct hr_pprof_options *opt,
			struct hr_error *err)
{
	struct part parts[2] = { { .tree = new_tree, .sign = 1 }, { .tree = old_tree, .sign = -1 } };

	return write_parts(out, parts, 2, opt, err);
}

/* --- the heap profile of the dump's memory-profile records ------------------------------ */

/*
 * Layout of the allocation profile: string_table = "", then per sample type its type
 * and unit, "bytes" (the label key), the binary's name and build ID, then two strings
 * per frame (function, file: frame k's are ALLOC_STR_FRAMES + 2k and + 2k + 1). Frame k
 * of hr_dump_memprof_frames() is function and location k + 1.
 */
enum { ALLOC_STR_LABEL = 9, ALLOC_STR_BINARY, ALLOC_STR_BUILD_ID, ALLOC_STR_FRAMES };

static void put_alloc_header(struct gz_sink *s)
{
	static const char *const fixed[] = { "", "alloc_objects", "count", "alloc_space",
					     "bytes", "inuse_objects", "count", "inuse_space",
					     "bytes", "bytes" };
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;

	for (int64_t k = 0; k < 4; k++) {
		vt.type = 1 + 2 * k;
		vt.unit = 2 + 2 * k;
		put_message(s, F_SAMPLE_TYPE, &vt.base);
	}
	put_varint(s, (uint64_t)F_DEFAULT_SAMPLE_TYPE << 3 | 0);
	put_varint(s, 7); /* inuse_space */
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		put_string(s, fixed[i]);
}

/*
 * One sample per bucket: allocated and in use (allocations less frees, as of the last
 * completed GC, as the runtime's own heap profile counts them), its size as the numeric
 * label "bytes". Leading runtime frames are left out, as runtime/pprof does (all of
 * them kept when no other is below), and runtime.goexit at the bottom. A frame the
 * compiler inlined into the next one is a line of the next one's location, as
 * runtime/pprof writes them (pprof shows it "(inline)"): the stack lists the location
 * of the first frame of each run of inlined frames, whose lines are that run.
 */
static int put_alloc_samples(struct gz_sink *s, const struct hr_dump *d)
{
	Perftools__Profiles__Sample sample = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Label size = PERFTOOLS__PROFILES__LABEL__INIT;
	Perftools__Profiles__Label *labels[1] = { &size };
	size_t nb, cap = 0;
	const struct hr_memprof_bucket *b = hr_dump_memprof_buckets(d, &nb);
	size_t nf;
	const struct hr_memprof_frame *f = hr_dump_memprof_frames(d, &nf);
	uint64_t *stack = NULL;
	int64_t values[4];

	sample.value = values;
	sample.n_value = 4;
	sample.label = labels;
	sample.n_label = 1;
	size.key = ALLOC_STR_LABEL;
	size.num_unit = ALLOC_STR_LABEL;
	for (size_t i = 0; i < nb && !s->failed; i++) {
		uint32_t first, n;
		uint64_t inuse = b[i].allocs > b[i].frees ? b[i].allocs - b[i].frees : 0;

		hr_dump_memprof_shown(d, &b[i], &first, &n);
		if (hr_array_reserve((void **)&stack, &cap, (size_t)n + 1, sizeof(*stack))) {
			free(stack);
			return HR_ENOMEM;
		}
		sample.n_location_id = 0;
		for (uint32_t k = first; k < first + n; k++)
			if (k == first || !f[k - 1].inlined)
				stack[sample.n_location_id++] = (uint64_t)k + 1;
		sample.location_id = stack;
		values[0] = (int64_t)b[i].allocs;
		values[1] = (int64_t)(b[i].allocs * b[i].size);
		values[2] = (int64_t)inuse;
		values[3] = (int64_t)(inuse * b[i].size);
		size.num = (int64_t)b[i].size;
		put_message(s, F_SAMPLE, &sample.base);
	}
	free(stack);
	return HR_OK;
}

/*
 * Per frame record, in their order (frames are stored bucket by bucket): a location,
 * its function and their two strings. The location's lines are the frame's, then those
 * of the frames it was inlined into, up to the first not inlined further, within its
 * bucket's stack.
 */
static int put_alloc_frames(struct gz_sink *s, const struct hr_dump *d)
{
	Perftools__Profiles__Location loc = PERFTOOLS__PROFILES__LOCATION__INIT;
	Perftools__Profiles__Line *line = NULL, **lines = NULL;
	Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT;
	size_t nf, nb, line_cap = 0, lines_cap = 0;
	const struct hr_memprof_frame *f = hr_dump_memprof_frames(d, &nf);
	const struct hr_memprof_bucket *b = hr_dump_memprof_buckets(d, &nb);
	int rc = HR_OK;

	loc.mapping_id = 1;
	for (size_t i = 0; i < nb && !s->failed && !rc; i++) {
		uint32_t end = b[i].first_frame + b[i].frame_count;

		if (hr_array_reserve((void **)&line, &line_cap, b[i].frame_count, sizeof(*line)) ||
		    hr_array_reserve((void **)&lines, &lines_cap, b[i].frame_count, sizeof(*lines)))
			rc = HR_ENOMEM;
		for (uint32_t k = b[i].first_frame; k < end && !s->failed && !rc; k++) {
			loc.id = k + 1;
			loc.n_line = 0;
			for (uint32_t j = k; j < end && (j == k || f[j - 1].inlined); j++) {
				line[loc.n_line] = (Perftools__Profiles__Line)PERFTOOLS__PROFILES__LINE__INIT;
				line[loc.n_line].function_id = j + 1;
				line[loc.n_line].line = (int64_t)f[j].line;
				lines[loc.n_line] = &line[loc.n_line];
				loc.n_line++;
			}
			loc.line = lines;
			put_message(s, F_LOCATION, &loc.base);
			fn.id = k + 1;
			fn.name = (int64_t)(ALLOC_STR_FRAMES + 2 * k);
			fn.filename = fn.name + 1;
			put_message(s, F_FUNCTION, &fn.base);
		}
	}
	free(line);
	free(lines);
	for (size_t k = 0; k < nf && !s->failed && !rc; k++) {
		put_bytes(s, f[k].func.ptr, f[k].func.len);
		put_bytes(s, f[k].file.ptr, f[k].file.len);
	}
	return rc;
}

int hr_write_alloc_profile(FILE *out, const struct hr_dump *dump,
			   const struct hr_pprof_options *opt, struct hr_error *err)
{
	struct gz_sink *s = sink_open(out, err);
	int rc;

	if (!s)
		return err->code;
	put_alloc_header(s);
	put_string(s, opt && opt->binary ? opt->binary : "");
	put_string(s, opt && opt->build_id ? opt->build_id : "");
	put_mapping(s, opt, ALLOC_STR_BINARY);
	rc = put_alloc_samples(s, dump);
	if (!rc)
		rc = put_alloc_frames(s, dump);
	return sink_close(s, out, rc, err);
}
