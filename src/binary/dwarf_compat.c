/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dwarf_compat.c - the libdwarf wrapper (see dwarf_compat.h): an object-access
 * interface over a libelf Elf of its own that decompresses sections itself and shows
 * libdwarf only the sections of a view, and the calls whose signatures differ between
 * libdwarf 20210528 and libdwarf 0.x/2.x.
 *
 * Memory: the Elf is opened with ELF_C_READ, not ELF_C_READ_MMAP. libelf then reads a
 * section with pread() into a buffer of its own when it is first needed, inflates it
 * (and frees the compressed copy) and keeps only the inflated bytes, which elf_end() in
 * dwc_close() frees. Nothing goes through a file mapping, so compressed pages are
 * never counted in the resident set, and closing a handle gives back everything it
 * inflated. (Through a mapping, libelf also copies every compressed section whose file
 * offset is not 8-aligned, which Go's are not, to read its Elf64_Chdr: the section
 * sizes are therefore read here with pread(), not with gelf_getchdr().)
 *
 * Selection: libdwarf 0.x and 2.x define DW_LIBDWARF_VERSION_MAJOR in libdwarf.h;
 * 20210528 does not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "dwarf_compat.h"
#include "heapref/binary.h" /* hr_binary_libdwarf_version() */

#ifdef DW_LIBDWARF_VERSION_MAJOR
#define DWC_NEW_API 1
#else
#define DWC_NEW_API 0
#endif

#ifndef SHF_COMPRESSED
#define SHF_COMPRESSED (1u << 11)
#endif
#ifndef ELFCOMPRESS_ZLIB
#define ELFCOMPRESS_ZLIB 1
#endif

#ifndef DW_DLE_SECTION_SIZE_ERROR
#define DW_DLE_SECTION_SIZE_ERROR DW_DLE_MDE
#endif

/* What a hidden section is called towards libdwarf: not ".debug_*", so it is ignored. */
#define HIDDEN_NAME ".heapref.hidden"

struct dwc_section {
	Elf_Scn *scn;
	char *name;         /* ".debug_info" also for ".zdebug_info"; HIDDEN_NAME if hidden */
	uint64_t size;      /* uncompressed size */
	uint64_t offset;    /* in the file */
	uint64_t raw_size;  /* in the file */
	uint64_t addr;
	uint32_t type;
	uint64_t flags;     /* SHF_COMPRESSED cleared */
	uint32_t link;
	uint32_t info;
	uint64_t entsize;
	uint8_t compression; /* 0 none, 1 SHF_COMPRESSED, 2 .zdebug */
	bool bad_header;     /* compressed, but not with zlib or unreadably: loading fails */
	bool loaded;
};

struct dwc_obj {
	Elf *elf;               /* ours: ELF_C_READ on fd */
	int fd;
	struct dwc_section *secs;
	size_t count;
	bool big_endian;
	unsigned ptr_size;
	uint64_t max_section;   /* refuse to inflate a section beyond this */
	void *iface;            /* the access interface libdwarf keeps a pointer to */
};

/* ---- reading the section table ---------------------------------------------------- */

static uint64_t load_uint(const unsigned char *p, unsigned len, bool big_endian)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < len; i++)
		v |= (uint64_t)p[big_endian ? i : len - 1 - i] << (8 * (len - 1 - i));
	return v;
}

/* Reads exactly len bytes at off; 0 or -1. */
static int read_at(int fd, uint64_t off, void *buf, size_t len)
{
	unsigned char *p = buf;

	if ((uint64_t)(off_t)off != off || (off_t)off < 0)
		return -1; /* beyond what off_t holds here */
	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The uncompressed size of a compressed section from its header (Elf32/64_Chdr, or
 * "ZLIB" and a big-endian 64-bit size for .zdebug_*), read with pread(); 0 if the
 * header is unreadable or names another algorithm than zlib.
 */
static uint64_t compressed_size(const struct dwc_obj *o, const struct dwc_section *s)
{
	unsigned char h[24];
	size_t len = s->compression == 2 ? 12 : o->ptr_size == 8 ? 24 : 12;

	if (s->raw_size < len || read_at(o->fd, s->offset, h, len) < 0)
		return 0;
	if (s->compression == 2)
		return memcmp(h, "ZLIB", 4) ? 0 : load_uint(h + 4, 8, true);
	if (load_uint(h, 4, o->big_endian) != ELFCOMPRESS_ZLIB)
		return 0;
	return o->ptr_size == 8 ? load_uint(h + 8, 8, o->big_endian)
				: load_uint(h + 4, 4, o->big_endian);
}

/* Sections a view does not show: range lists, and for types location lists too. */
static bool hidden_in(enum dwc_view view, const char *name)
{
	if (!strcmp(name, ".debug_ranges") || !strcmp(name, ".debug_rnglists"))
		return true;
	return view == DWC_VIEW_TYPES &&
	       (!strcmp(name, ".debug_loc") || !strcmp(name, ".debug_loclists"));
}

static int read_section(struct dwc_obj *o, size_t shstrndx, size_t i, enum dwc_view view,
			struct dwc_section *s)
{
	GElf_Shdr shdr;
	const char *name;

	s->scn = elf_getscn(o->elf, i);
	if (!s->scn || !gelf_getshdr(s->scn, &shdr))
		return -1;
	name = elf_strptr(o->elf, shstrndx, shdr.sh_name);
	if (!name)
		name = "";
	s->size = shdr.sh_size;
	s->offset = shdr.sh_offset;
	s->raw_size = shdr.sh_type == SHT_NOBITS ? 0 : shdr.sh_size;
	s->addr = shdr.sh_addr;
	s->type = shdr.sh_type;
	s->flags = shdr.sh_flags & ~(uint64_t)SHF_COMPRESSED;
	s->link = shdr.sh_link;
	s->info = shdr.sh_info;
	s->entsize = shdr.sh_entsize;
	if (shdr.sh_flags & SHF_COMPRESSED)
		s->compression = 1;
	else if (!strncmp(name, ".zdebug_", 8))
		s->compression = 2;
	if (s->compression == 2) {
		/* libdwarf must see ".debug_x": the data it gets is already inflated */
		size_t len = strlen(name);

		s->name = malloc(len);
		if (s->name) {
			s->name[0] = '.';
			memcpy(s->name + 1, name + 2, len - 1);
		}
	} else {
		s->name = strdup(name);
	}
	if (!s->name)
		return -2;
	if (hidden_in(view, s->name)) {
		free(s->name);
		s->name = strdup(HIDDEN_NAME);
		if (!s->name)
			return -2;
		return 0; /* never loaded: its header is not even read */
	}
	if (s->compression) {
		uint64_t size = compressed_size(o, s);

		/*
		 * A header we cannot use leaves the file size, so that libdwarf sees the
		 * section and the load fails (rather than the section seeming empty).
		 */
		if (size)
			s->size = size;
		else
			s->bad_header = true;
	}
	return 0;
}

/* ---- object-access callbacks (shared bodies) ----------------------------------------- */

static int section_info(struct dwc_obj *o, uint64_t index, const char **name, uint64_t *type,
			uint64_t *flags, uint64_t *addr, uint64_t *size, uint64_t *link,
			uint64_t *info, uint64_t *entsize, int *error)
{
	struct dwc_section *s;

	if (index >= o->count)
		return DW_DLV_NO_ENTRY;
	s = &o->secs[index];
	*name = s->name;
	*type = s->type;
	*flags = s->flags;
	*addr = s->addr;
	*size = s->size;
	*link = s->link;
	*info = s->info;
	*entsize = s->entsize;
	(void)error;
	return DW_DLV_OK;
}

static int inflate_section(struct dwc_obj *o, struct dwc_section *s)
{
	int rc;

	if (s->bad_header || s->size == 0 || s->size > o->max_section)
		return -1;
	rc = s->compression == 1 ? elf_compress(s->scn, 0, 0) : elf_compress_gnu(s->scn, 0, 0);
	return rc < 0 ? -1 : 0;
}

static int load_section(void *obj, uint64_t index, Dwarf_Small **data, int *error)
{
	struct dwc_obj *o = obj;
	struct dwc_section *s;
	Elf_Data *d;

	if (index >= o->count)
		return DW_DLV_NO_ENTRY;
	s = &o->secs[index];
	if (s->type == SHT_NOBITS)
		return DW_DLV_NO_ENTRY;
	if (s->size > o->max_section) {
		/* also uncompressed ones: the tables keep DIE offsets in 32 bits */
		*error = DW_DLE_SECTION_SIZE_ERROR;
		return DW_DLV_ERROR;
	}
	if (s->compression && !s->loaded && inflate_section(o, s) < 0) {
		*error = DW_DLE_ZLIB_UNCOMPRESS_ERROR;
		return DW_DLV_ERROR;
	}
	s->loaded = true;
	d = elf_getdata(s->scn, NULL);
	if (!d || !d->d_buf || d->d_size < s->size) {
		*error = DW_DLE_MDE;
		return DW_DLV_ERROR;
	}
	*data = d->d_buf;
	return DW_DLV_OK;
}

static Dwarf_Small byte_order(void *obj)
{
	return ((struct dwc_obj *)obj)->big_endian ? DW_END_big : DW_END_little;
}

static Dwarf_Small length_size(void *obj)
{
	(void)obj;
	return 4;
}

static Dwarf_Small pointer_size(void *obj)
{
	return (Dwarf_Small)((struct dwc_obj *)obj)->ptr_size;
}

static Dwarf_Unsigned section_count(void *obj)
{
	return ((struct dwc_obj *)obj)->count;
}

#if DWC_NEW_API

static int new_section_info(void *obj, Dwarf_Unsigned index, Dwarf_Obj_Access_Section_a *out,
			    int *error)
{
	uint64_t t, f, a, sz, l, i, e;
	int rc = section_info(obj, index, &out->as_name, &t, &f, &a, &sz, &l, &i, &e, error);

	if (rc != DW_DLV_OK)
		return rc;
	out->as_type = t;
	out->as_flags = f;
	out->as_addr = a;
	out->as_offset = 0;
	out->as_size = sz;
	out->as_link = l;
	out->as_info = i;
	out->as_addralign = 0;
	out->as_entrysize = e;
	return DW_DLV_OK;
}

static int new_load_section(void *obj, Dwarf_Unsigned index, Dwarf_Small **data, int *error)
{
	return load_section(obj, index, data, error);
}

static Dwarf_Unsigned file_size(void *obj)
{
	struct stat st;

	/* not elf_rawfile(): on an ELF_C_READ Elf it reads the whole file into memory */
	return fstat(((struct dwc_obj *)obj)->fd, &st) == 0 ? (Dwarf_Unsigned)st.st_size : 0;
}

static const Dwarf_Obj_Access_Methods_a methods = {
	.om_get_section_info = new_section_info,
	.om_get_byte_order = byte_order,
	.om_get_length_size = length_size,
	.om_get_pointer_size = pointer_size,
	.om_get_filesize = file_size,
	.om_get_section_count = section_count,
	.om_load_section = new_load_section,
	.om_relocate_a_section = NULL,
};

static int object_init(struct dwc_obj *o, Dwarf_Debug *dbg, Dwarf_Error *derr)
{
	Dwarf_Obj_Access_Interface_a *iface = calloc(1, sizeof(*iface));
	int rc;

	if (!iface)
		return DW_DLV_ERROR;
	iface->ai_object = o;
	iface->ai_methods = &methods;
	o->iface = iface;
	rc = dwarf_object_init_b(iface, NULL, NULL, DW_GROUPNUMBER_ANY, dbg, derr);
	return rc;
}

static void object_finish(Dwarf_Debug dbg)
{
	dwarf_object_finish(dbg);
}

#else /* libdwarf 20210528 */

static int old_section_info(void *obj, Dwarf_Half index, Dwarf_Obj_Access_Section *out,
			    int *error)
{
	uint64_t t, f, a, sz, l, i, e;
	int rc = section_info(obj, index, &out->name, &t, &f, &a, &sz, &l, &i, &e, error);

	if (rc != DW_DLV_OK)
		return rc;
	out->type = t;
	out->addr = a;
	out->size = sz;
	out->link = l;
	out->info = i;
	out->entrysize = e;
	return DW_DLV_OK;
}

static int old_load_section(void *obj, Dwarf_Half index, Dwarf_Small **data, int *error)
{
	return load_section(obj, index, data, error);
}

static Dwarf_Endianness old_byte_order(void *obj)
{
	return byte_order(obj) == DW_END_big ? DW_OBJECT_MSB : DW_OBJECT_LSB;
}

static const Dwarf_Obj_Access_Methods methods = {
	.get_section_info = old_section_info,
	.get_byte_order = old_byte_order,
	.get_length_size = length_size,
	.get_pointer_size = pointer_size,
	.get_section_count = section_count,
	.load_section = old_load_section,
	.relocate_a_section = NULL,
};

static int object_init(struct dwc_obj *o, Dwarf_Debug *dbg, Dwarf_Error *derr)
{
	Dwarf_Obj_Access_Interface *iface = calloc(1, sizeof(*iface));
	int rc;

	if (!iface)
		return DW_DLV_ERROR;
	iface->object = o;
	iface->methods = &methods;
	o->iface = iface;
	rc = dwarf_object_init_b(iface, NULL, NULL, DW_GROUPNUMBER_ANY, dbg, derr);
	return rc;
}

static void object_finish(Dwarf_Debug dbg)
{
	Dwarf_Error derr = NULL;

	/* dwarf_object_finish() frees libdwarf's state, not the interface we allocated */
	if (dwarf_object_finish(dbg, &derr) != DW_DLV_OK && derr)
		dwarf_dealloc(dbg, derr, DW_DLA_ERROR);
}

#endif

/* ---- public ------------------------------------------------------------------------------ */

static void obj_free(struct dwc_obj *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->count; i++)
		free(o->secs[i].name);
	free(o->secs);
	free(o->iface);
	if (o->elf)
		elf_end(o->elf);
	free(o);
}

static struct dwc_obj *obj_new(int fd, uint64_t max_section, enum dwc_view view,
			       bool *has_info)
{
	struct dwc_obj *o = calloc(1, sizeof(*o));
	size_t shstrndx, n;
	GElf_Ehdr eh;

	if (!o)
		return NULL;
	o->fd = fd;
	o->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!o->elf || elf_kind(o->elf) != ELF_K_ELF || elf_getshdrnum(o->elf, &n) < 0 ||
	    elf_getshdrstrndx(o->elf, &shstrndx) < 0 || !gelf_getehdr(o->elf, &eh) || n > 65535)
		goto fail;
	o->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	o->ptr_size = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	o->max_section = max_section;
	o->secs = calloc(n ? n : 1, sizeof(*o->secs));
	if (!o->secs)
		goto fail;
	for (size_t i = 0; i < n; i++, o->count++) {
		if (read_section(o, shstrndx, i, view, &o->secs[i]) < 0) {
			o->count++;
			goto fail;
		}
		if (!strcmp(o->secs[i].name, ".debug_info") && o->secs[i].size)
			*has_info = true;
	}
	return o;
fail:
	obj_free(o);
	return NULL;
}

void dwc_errmsg(Dwarf_Debug dbg, Dwarf_Error derr, char *buf, size_t len)
{
	snprintf(buf, len, "%s", derr ? dwarf_errmsg(derr) : "unknown libdwarf error");
	if (derr)
		dwarf_dealloc(dbg, derr, DW_DLA_ERROR);
}

int dwc_open(int fd, const char *path, uint64_t max_section, enum dwc_view view,
	     Dwarf_Debug *dbg, struct dwc_obj **obj, struct hr_error *err)
{
	Dwarf_Error derr = NULL;
	bool has_info = false;
	struct dwc_obj *o = obj_new(fd, max_section, view, &has_info);
	char msg[256];
	int rc;

	*dbg = NULL;
	*obj = NULL;
	if (!o)
		return hr_error_set(err, HR_EINPUT, "%s: cannot read the ELF section headers: %s",
				    path, elf_errmsg(-1));
	if (!has_info) {
		obj_free(o);
		return 1;
	}
	/*
	 * libdwarf's allocation tracking keeps a record of every DIE and attribute until
	 * dwarf_finish(); we free each one as soon as we are done with it, so it only
	 * costs memory. (A library-wide setting: it affects only DWARF opened after it.)
	 */
	dwarf_set_de_alloc_flag(0);
	rc = object_init(o, dbg, &derr);
	if (rc == DW_DLV_NO_ENTRY) {
		obj_free(o);
		return 1;
	}
	if (rc != DW_DLV_OK) {
		dwc_errmsg(NULL, derr, msg, sizeof(msg));
		obj_free(o);
		*dbg = NULL;
		return hr_error_set(err, HR_EINPUT, "%s: libdwarf cannot read the DWARF: %s", path,
				    msg);
	}
	*obj = o;
	return 0;
}

void dwc_close(Dwarf_Debug dbg, struct dwc_obj *obj)
{
	if (dbg)
		object_finish(dbg);
	obj_free(obj);
}

uint64_t dwc_section_size(const struct dwc_obj *obj, const char *name)
{
	for (size_t i = 0; obj && i < obj->count; i++)
		if (!strcmp(obj->secs[i].name, name))
			return obj->secs[i].size;
	return 0;
}

/* Steps over a ULEB128 at *p (into *v when v is not NULL); false if it runs past end. */
static bool skip_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (v)
				*v = x;
			return true;
		}
	}
	return false;
}

static bool skip_bytes(const uint8_t **p, const uint8_t *end, uint64_t n)
{
	if (n > (uint64_t)(end - *p))
		return false;
	*p += n;
	return true;
}

/* A counted location expression: its ULEB128 length, then that many bytes. */
static bool skip_expr(const uint8_t **p, const uint8_t *end)
{
	uint64_t len = 0;

	return skip_uleb(p, end, &len) && skip_bytes(p, end, len);
}

/* Steps over the operands of a DWARF 5 location list entry of kind k. */
static bool skip_lle(const uint8_t **p, const uint8_t *end, uint8_t k, unsigned addr_size)
{
	switch (k) {
	case DW_LLE_base_addressx:
		return skip_uleb(p, end, NULL);
	case DW_LLE_startx_endx:
	case DW_LLE_startx_length:
	case DW_LLE_offset_pair:
		return skip_uleb(p, end, NULL) && skip_uleb(p, end, NULL) && skip_expr(p, end);
	case DW_LLE_default_location:
		return skip_expr(p, end);
	case DW_LLE_base_address:
		return skip_bytes(p, end, addr_size);
	case DW_LLE_start_end:
		return skip_bytes(p, end, 2 * (uint64_t)addr_size) && skip_expr(p, end);
	case DW_LLE_start_length:
		return skip_bytes(p, end, addr_size) && skip_uleb(p, end, NULL) && skip_expr(p, end);
	default:
		return false;
	}
}

bool dwc_loclist_whole(struct dwc_obj *obj, uint64_t offset)
{
	Dwarf_Small *data = NULL;
	const uint8_t *p, *end;
	int error = 0;
	size_t i;

	for (i = 0; obj && i < obj->count; i++)
		if (!strcmp(obj->secs[i].name, ".debug_loclists"))
			break;
	if (!obj || i == obj->count || load_section(obj, i, &data, &error) != DW_DLV_OK ||
	    offset >= obj->secs[i].size)
		return false;
	end = data + obj->secs[i].size;
	for (p = data + offset; p < end;) {
		uint8_t k = *p++;

		if (k == DW_LLE_end_of_list)
			return true;
		if (!skip_lle(&p, end, k, obj->ptr_size))
			return false;
	}
	return false; /* no end-of-list entry before the end of the section */
}

int dwc_next_cu(Dwarf_Debug dbg, Dwarf_Die *cu_die, Dwarf_Half *version,
		Dwarf_Half *offset_size, Dwarf_Error *derr)
{
	Dwarf_Unsigned hdr_len = 0, type_off = 0, next = 0;
	Dwarf_Half addr_size = 0, ext_size = 0, cu_type = 0;
	Dwarf_Off abbrev = 0;
	Dwarf_Sig8 sig;
	int rc;

#if DWC_NEW_API
	rc = dwarf_next_cu_header_e(dbg, 1, cu_die, &hdr_len, version, &abbrev, &addr_size,
				    offset_size, &ext_size, &sig, &type_off, &next, &cu_type, derr);
	return rc;
#else
	rc = dwarf_next_cu_header_d(dbg, 1, &hdr_len, version, &abbrev, &addr_size, offset_size,
				    &ext_size, &sig, &type_off, &next, &cu_type, derr);
	if (rc != DW_DLV_OK)
		return rc;
	return dwarf_siblingof_b(dbg, NULL, 1, cu_die, derr);
#endif
}

int dwc_sibling(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Die *out, Dwarf_Error *derr)
{
#if DWC_NEW_API
	(void)dbg;
	return dwarf_siblingof_c(die, out, derr);
#else
	return dwarf_siblingof_b(dbg, die, 1, out, derr);
#endif
}

int dwc_loc_entry(Dwarf_Loc_Head_c head, Dwarf_Unsigned index, struct dwc_loc_entry *out,
		  Dwarf_Error *derr)
{
	Dwarf_Small lle = 0, source = 0;
	Dwarf_Unsigned raw_lo = 0, raw_hi = 0, expr_off = 0, desc_off = 0;
	Dwarf_Bool no_addr = 0;
	int rc;

	memset(out, 0, sizeof(*out));
#if DWC_NEW_API
	Dwarf_Unsigned bytes = 0;

	rc = dwarf_get_locdesc_entry_e(head, index, &lle, &raw_lo, &raw_hi, &no_addr, &out->low_pc,
				       &out->high_pc, &out->op_count, &bytes, &out->desc, &source,
				       &expr_off, &desc_off, derr);
#else
	rc = dwarf_get_locdesc_entry_d(head, index, &lle, &raw_lo, &raw_hi, &no_addr, &out->low_pc,
				       &out->high_pc, &out->op_count, &out->desc, &source,
				       &expr_off, &desc_off, derr);
#endif
	if (rc != DW_DLV_OK)
		return rc;
	out->all_pcs = source == 0;
	if (source != 0) {
		bool base = lle == DW_LLE_end_of_list || lle == DW_LLE_base_addressx ||
			    (source == 2 && lle == DW_LLE_base_address);
		out->skip = base || no_addr || out->op_count == 0 || out->low_pc >= out->high_pc;
	}
	return DW_DLV_OK;
}

void dwc_loc_free(Dwarf_Debug dbg, Dwarf_Loc_Head_c head)
{
	(void)dbg;
	if (!head)
		return;
#if DWC_NEW_API
	dwarf_dealloc_loc_head_c(head);
#else
	dwarf_loc_head_c_dealloc(head);
#endif
}

const char *hr_binary_libdwarf_version(void)
{
	return dwarf_package_version();
}
