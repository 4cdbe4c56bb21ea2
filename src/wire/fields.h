/* Record layouts as tables: each field of a C struct is placed at the
 * bit offset and width that the IBA table of its record gives (bit 0 is
 * the most significant bit of byte 0, fields big-endian), so one table
 * drives the range check, the pack and the unpack of a record. */
#ifndef IMC_WIRE_FIELDS_H
#define IMC_WIRE_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct imc_field {
	uint16_t mem;   /* offsetof() the member */
	uint8_t size;   /* sizeof() the member: 1, 2, 4 or 8 for a number */
	uint8_t bits;   /* width on the wire; 0: the member's bytes as is */
	uint16_t bit;   /* offset on the wire, in bits */
};

/* A number (bool included) of `bits` bits at bit offset `bit`. */
#define IMC_FIELD(type, member, bit, bits)                              \
	{ offsetof(type, member), sizeof(((type *)0)->member), (bits),  \
	  (bit) }
/* The member's bytes (a GID, a reserved run) at bit offset `bit`, which
 * is a multiple of 8. */
#define IMC_FIELD_RAW(type, member, bit) IMC_FIELD(type, member, bit, 0)

/* Whether every number of obj fits its width on the wire: a value that
 * does not would spill into its neighbours. */
bool imc_fields_fit(const struct imc_field *f, size_t n, const void *obj);
/* Writes the fields of obj into buf; bits no field covers are kept. */
void imc_fields_put(const struct imc_field *f, size_t n, const void *obj,
		    uint8_t *buf);
/* Reads the fields of obj from buf; members no field names are kept. */
void imc_fields_get(const struct imc_field *f, size_t n, void *obj,
		    const uint8_t *buf);

/* A table and its length, for the functions below. */
#define IMC_FIELDS(table) (table), (sizeof(table) / sizeof((table)[0]))

/* A whole record of `size` bytes: returns size, -ENOSPC (len short) or
 * -EINVAL (a value too wide; nothing is written). */
int imc_fields_pack(const struct imc_field *f, size_t n, const void *obj,
		    uint8_t *buf, size_t len, size_t size);
/* Returns size, or -EMSGSIZE when len is short. */
int imc_fields_unpack(const struct imc_field *f, size_t n, void *obj,
		      const uint8_t *buf, size_t len, size_t size);

/* Defines imc_<rec>_pack() and imc_<rec>_unpack() of struct imc_<rec>,
 * as its public header declares them, over the table <rec>_fields of a
 * record of `size` bytes. */
#define IMC_FIELDS_CODEC(rec, size)                                       \
	int imc_##rec##_pack(const struct imc_##rec *obj, uint8_t *buf,   \
			     size_t len)                                  \
	{                                                                 \
		return imc_fields_pack(IMC_FIELDS(rec##_fields), obj, buf,\
				       len, size);                        \
	}                                                                 \
	int imc_##rec##_unpack(struct imc_##rec *obj, const uint8_t *buf, \
			       size_t len)                                \
	{                                                                 \
		return imc_fields_unpack(IMC_FIELDS(rec##_fields), obj,   \
					 buf, len, size);                 \
	}

#endif
