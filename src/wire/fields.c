/* Table-driven record packing; see wire/fields.h. A field is read or
 * written through a big-endian window of the bytes it touches, at most
 * eight: unaligned fields in IBA records are narrower than 57 bits. */
#include <errno.h>
#include <string.h>

#include "wire/fields.h"

static uint64_t mask_of(unsigned bits)
{
	return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
}

static uint64_t mem_get(const struct imc_field *f, const void *obj)
{
	const uint8_t *p = (const uint8_t *)obj + f->mem;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->size) {
	case 1:
		return *p;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

static void mem_set(const struct imc_field *f, void *obj, uint64_t v)
{
	uint8_t *p = (uint8_t *)obj + f->mem;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (f->size) {
	case 1:
		*p = (uint8_t)v;
		break;
	case 2:
		memcpy(p, &v16, 2);
		break;
	case 4:
		memcpy(p, &v32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

/* The bytes [first, first + *nb) that hold the field, and how far its
 * lowest bit sits above the window's. */
static unsigned window(const struct imc_field *f, unsigned *first,
		       unsigned *nb)
{
	unsigned end = (unsigned)f->bit + f->bits;

	*first = f->bit / 8;
	*nb = (end + 7) / 8 - *first;
	return (*first + *nb) * 8 - end;
}

static uint64_t win_read(const uint8_t *b, unsigned nb)
{
	uint64_t w = 0;

	for (unsigned i = 0; i < nb; i++)
		w = w << 8 | b[i];
	return w;
}

static void win_write(uint8_t *b, unsigned nb, uint64_t w)
{
	for (unsigned i = nb; i-- > 0; w >>= 8)
		b[i] = (uint8_t)w;
}

bool imc_fields_fit(const struct imc_field *f, size_t n, const void *obj)
{
	for (size_t i = 0; i < n; i++)
		if (f[i].bits && f[i].bits < 8u * f[i].size &&
		    mem_get(&f[i], obj) > mask_of(f[i].bits))
			return false;
	return true;
}

void imc_fields_put(const struct imc_field *f, size_t n, const void *obj,
		    uint8_t *buf)
{
	for (size_t i = 0; i < n; i++) {
		unsigned first, nb, shift;
		uint64_t m, w;

		if (!f[i].bits) {
			memcpy(buf + f[i].bit / 8,
			       (const uint8_t *)obj + f[i].mem, f[i].size);
			continue;
		}
		shift = window(&f[i], &first, &nb);
		m = mask_of(f[i].bits);
		w = nb == 8 && !shift ? 0 : win_read(buf + first, nb);
		w = (w & ~(m << shift)) | (mem_get(&f[i], obj) & m) << shift;
		win_write(buf + first, nb, w);
	}
}

void imc_fields_get(const struct imc_field *f, size_t n, void *obj,
		    const uint8_t *buf)
{
	for (size_t i = 0; i < n; i++) {
		unsigned first, nb, shift;

		if (!f[i].bits) {
			memcpy((uint8_t *)obj + f[i].mem, buf + f[i].bit / 8,
			       f[i].size);
			continue;
		}
		shift = window(&f[i], &first, &nb);
		mem_set(&f[i], obj, win_read(buf + first, nb) >> shift &
					    mask_of(f[i].bits));
	}
}

int imc_fields_pack(const struct imc_field *f, size_t n, const void *obj,
		    uint8_t *buf, size_t len, size_t size)
{
	if (len < size)
		return -ENOSPC;
	if (!imc_fields_fit(f, n, obj))
		return -EINVAL;
	imc_fields_put(f, n, obj, buf);
	return (int)size;
}

int imc_fields_unpack(const struct imc_field *f, size_t n, void *obj,
		      const uint8_t *buf, size_t len, size_t size)
{
	if (len < size)
		return -EMSGSIZE;
	imc_fields_get(f, n, obj, buf);
	return (int)size;
}
