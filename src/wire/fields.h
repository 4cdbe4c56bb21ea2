/* Record layouts as tables: each field of a C struct is placed at the
 * bit offset and width that the IBA table of its record gives (bit 0 is
 * the most significant bit of byte 0, fields big-endian), so one table
 * drives the range check, the pack and the unpack of a record.
 *
 * The functions are inline and their loops unrolled: over a static const
 * table the compiler folds every field's offsets, widths and shifts into
 * the code, which then does what a hand-written pack would, without the
 * table being read at run time. */
#ifndef IMC_WIRE_FIELDS_H
#define IMC_WIRE_FIELDS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/bytes.h"

struct imc_field {
	uint16_t mem;   /* offsetof() the member */
	uint16_t byte;  /* the first byte on the wire it touches */
	uint8_t size;   /* sizeof() the member: 1, 2, 4 or 8 for a number */
	uint8_t bits;   /* width on the wire; 0: the member's bytes as is */
	uint8_t nb;     /* how many bytes it touches, at most 8 */
	uint8_t shift;  /* its lowest bit above the last byte's lowest */
};

/* A number (bool included) of `bits` bits at bit offset `bit`; where it
 * falls in bytes is worked out here, at compile time. */
#define IMC_FIELD(type, member, bit, bits)                               \
	{ offsetof(type, member), (bit) / 8,                             \
	  sizeof(((type *)0)->member), (bits),                           \
	  ((bit) % 8 + (bits) + 7) / 8,                                  \
	  ((bit) % 8 + (bits) + 7) / 8 * 8 - (bit) % 8 - (bits) }
/* The member's bytes (a GID, a reserved run) from bit offset `bit`, a
 * multiple of 8. */
#define IMC_FIELD_RAW(type, member, bit) IMC_FIELD(type, member, bit, 0)

/* A table and its length, for the functions below. */
#define IMC_FIELDS(table) (table), (sizeof(table) / sizeof((table)[0]))

/* Tables are at most this long: the loops below unroll that far. */
#define IMC_FIELDS_UNROLL _Pragma("GCC unroll 64")

#define IMC_FIELDS_INLINE static inline __attribute__((always_inline))

IMC_FIELDS_INLINE uint64_t imc_field_mask(unsigned bits)
{
	return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
}

IMC_FIELDS_INLINE uint64_t imc_field_load(const struct imc_field *f,
					  const void *obj)
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

IMC_FIELDS_INLINE void imc_field_store(const struct imc_field *f, void *obj,
				       uint64_t v)
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

/* The nb bytes at b as one big-endian number, and back. */
IMC_FIELDS_INLINE uint64_t imc_field_win_get(const uint8_t *b, unsigned nb)
{
	uint64_t w = 0;

	switch (nb) {
	case 1:
		return b[0];
	case 2:
		return imc_get16(b);
	case 4:
		return imc_get32(b);
	case 8:
		return imc_get64(b);
	}
	for (unsigned i = 0; i < nb; i++)
		w = w << 8 | b[i];
	return w;
}

IMC_FIELDS_INLINE void imc_field_win_put(uint8_t *b, unsigned nb, uint64_t w)
{
	switch (nb) {
	case 1:
		b[0] = (uint8_t)w;
		return;
	case 2:
		imc_put16(b, (uint16_t)w);
		return;
	case 4:
		imc_put32(b, (uint32_t)w);
		return;
	case 8:
		imc_put64(b, w);
		return;
	}
	for (unsigned i = nb; i-- > 0; w >>= 8)
		b[i] = (uint8_t)w;
}

/* Whether every number of obj fits its width on the wire: a value that
 * does not would spill into its neighbours. */
IMC_FIELDS_INLINE bool imc_fields_fit(const struct imc_field *f, size_t n,
				      const void *obj)
{
	bool ok = true;

	IMC_FIELDS_UNROLL
	for (size_t i = 0; i < n; i++)
		if (f[i].bits && f[i].bits < 8u * f[i].size &&
		    imc_field_load(&f[i], obj) > imc_field_mask(f[i].bits))
			ok = false;
	return ok;
}

/* Writes the fields of obj into buf; bits no field covers are kept. */
IMC_FIELDS_INLINE void imc_fields_put(const struct imc_field *f, size_t n,
				      const void *obj, uint8_t *buf)
{
	IMC_FIELDS_UNROLL
	for (size_t i = 0; i < n; i++) {
		uint8_t *b = buf + f[i].byte;
		uint64_t m, v;

		if (!f[i].bits) {
			memcpy(b, (const uint8_t *)obj + f[i].mem, f[i].size);
			continue;
		}
		v = imc_field_load(&f[i], obj);
		if (f[i].bits == 8u * f[i].nb) {
			imc_field_win_put(b, f[i].nb, v);
			continue;
		}
		m = imc_field_mask(f[i].bits) << f[i].shift;
		imc_field_win_put(b, f[i].nb,
				  (imc_field_win_get(b, f[i].nb) & ~m) |
				  (v << f[i].shift & m));
	}
}

/* Reads the fields of obj from buf; members no field names are kept. */
IMC_FIELDS_INLINE void imc_fields_get(const struct imc_field *f, size_t n,
				      void *obj, const uint8_t *buf)
{
	IMC_FIELDS_UNROLL
	for (size_t i = 0; i < n; i++) {
		const uint8_t *b = buf + f[i].byte;

		if (!f[i].bits) {
			memcpy((uint8_t *)obj + f[i].mem, b, f[i].size);
			continue;
		}
		imc_field_store(&f[i], obj,
				imc_field_win_get(b, f[i].nb) >> f[i].shift &
				imc_field_mask(f[i].bits));
	}
}

/* A whole record of `size` bytes: returns size, -ENOSPC (len short) or
 * -EINVAL (a value too wide; nothing is written). */
IMC_FIELDS_INLINE int imc_fields_pack(const struct imc_field *f, size_t n,
				      const void *obj, uint8_t *buf,
				      size_t len, size_t size)
{
	if (len < size)
		return -ENOSPC;
	if (!imc_fields_fit(f, n, obj))
		return -EINVAL;
	imc_fields_put(f, n, obj, buf);
	return (int)size;
}

/* Returns size, or -EMSGSIZE when len is short. */
IMC_FIELDS_INLINE int imc_fields_unpack(const struct imc_field *f, size_t n,
					void *obj, const uint8_t *buf,
					size_t len, size_t size)
{
	if (len < size)
		return -EMSGSIZE;
	imc_fields_get(f, n, obj, buf);
	return (int)size;
}

/* Defines imc_<rec>_pack() and imc_<rec>_unpack() of struct imc_<rec>,
 * as its public header declares them, over the table <rec>_fields of a
 * record of `size` bytes; the pack goes through `pack`, imc_fields_pack()
 * or a function of its signature that checks more first. */
#define IMC_FIELDS_CODEC_WITH(rec, size, pack)                            \
	int imc_##rec##_pack(const struct imc_##rec *obj, uint8_t *buf,   \
			     size_t len)                                  \
	{                                                                 \
		return pack(IMC_FIELDS(rec##_fields), obj, buf, len, size);\
	}                                                                 \
	int imc_##rec##_unpack(struct imc_##rec *obj, const uint8_t *buf, \
			       size_t len)                                \
	{                                                                 \
		return imc_fields_unpack(IMC_FIELDS(rec##_fields), obj,   \
					 buf, len, size);                 \
	}
#define IMC_FIELDS_CODEC(rec, size)                                       \
	IMC_FIELDS_CODEC_WITH(rec, size, imc_fields_pack)

#endif
