/* Shared checks for the pack/unpack tests of wire structures. Include after
 * <cmocka.h>. */
#ifndef IMC_TESTS_WIRE_CHECK_H
#define IMC_TESTS_WIRE_CHECK_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define CANARY 0xA5

/* Every length below @size: pack says -ENOSPC and writes nothing, unpack
 * says -EMSGSIZE; at @size pack writes exactly @size bytes. */
#define CHECK_LENGTHS(type, packfn, unpackfn, obj, size)                     \
	do {                                                                 \
		uint8_t b_[(size) + 8];                                      \
		type o_;                                                     \
		for (size_t l_ = 0; l_ < (size); l_++) {                     \
			memset(b_, CANARY, sizeof(b_));                      \
			assert_int_equal(packfn((obj), b_, l_), -ENOSPC);    \
			for (size_t k_ = 0; k_ < sizeof(b_); k_++)           \
				assert_int_equal(b_[k_], CANARY);            \
			assert_int_equal(unpackfn(&o_, b_, l_), -EMSGSIZE);  \
		}                                                            \
		memset(b_, CANARY, sizeof(b_));                              \
		assert_int_equal(packfn((obj), b_, (size)), (size));         \
		for (size_t k_ = (size); k_ < sizeof(b_); k_++)              \
			assert_int_equal(b_[k_], CANARY);                    \
	} while (0)

#endif
