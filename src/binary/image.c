/* SPDX-License-Identifier: Apache-2.0 */
/*
 * image.c - the binary where a process loaded it (binary.h, struct hr_image): the
 * binary's lookups at run-time addresses, an ELF address plus the load bias. The binary
 * is never changed: each image is a pair of a binary and a bias.
 */
#include "binary_internal.h"

int hr_image_read(const struct hr_image *im, uint64_t addr, void *buf, size_t len,
		  struct hr_error *err)
{
	return hr_binary_read(im->bin, hr_image_elf(im, addr), buf, len, err);
}

const char *hr_image_section_at(const struct hr_image *im, uint64_t addr)
{
	return hr_binary_section_at(im->bin, hr_image_elf(im, addr));
}

const struct hr_symbol *hr_image_symbol_at(const struct hr_image *im, uint64_t addr)
{
	return hr_binary_symbol_at(im->bin, hr_image_elf(im, addr));
}

const struct hr_global *hr_image_global_at(const struct hr_image *im, uint64_t addr)
{
	return hr_binary_global_at(im->bin, hr_image_elf(im, addr));
}

int64_t hr_image_func_at(const struct hr_image *im, uint64_t pc)
{
	return hr_binary_func_at(im->bin, hr_image_elf(im, pc));
}

uint32_t hr_image_type_by_runtime_addr(const struct hr_image *im, uint64_t addr)
{
	return hr_binary_type_by_runtime_addr(im->bin, hr_image_elf(im, addr));
}

uint64_t hr_image_runtime_type_addr(const struct hr_image *im, uint32_t id)
{
	uint64_t elf = hr_binary_runtime_type_addr(im->bin, id);

	return elf ? hr_image_runtime(im, elf) : 0;
}

int hr_image_func_vars(const struct hr_image *im, size_t index, uint64_t pc,
		       struct hr_frame_vars *out, struct hr_error *err)
{
	int rc = hr_binary_func_vars(im->bin, index, hr_image_elf(im, pc), out, err);

	for (size_t i = 0; !rc && i < out->piece_count; i++)
		if (out->pieces[i].kind == HR_LOC_ADDR)
			out->pieces[i].offset = (int64_t)hr_image_runtime(im,
									  (uint64_t)out->pieces[i].offset);
	return rc;
}

int hr_image_describe_var(const struct hr_image *im, size_t index, size_t var_index,
			  char *buf, size_t len, struct hr_error *err)
{
	return binary_describe_var(im->bin, im->bias, index, var_index, buf, len, err);
}
