/* splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): the one copy of its step and finalizer, for
 * seeding generators and for hashing keys that come from the wire. */
#ifndef IMC_UTIL_MIX_H
#define IMC_UTIL_MIX_H

#include <stdint.h>

/* The step's increment: 2^64 divided by the golden ratio, odd, so that
 * the state walks all 2^64 values before it repeats. */
#define IMC_MIX_GOLDEN 0x9e3779b97f4a7c15ull

/* The finalizer: a bijection of the 64 bits in which every input bit
 * flips each output bit with probability close to 1/2. */
static inline uint64_t imc_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* One splitmix64 step: advances *state and returns its next output. */
static inline uint64_t imc_mix_step(uint64_t *state)
{
	*state += IMC_MIX_GOLDEN;
	return imc_mix64(*state);
}

/* A hash of two words under a seed: a table keyed by wire input mixes a
 * secret seed in, so that keys chosen by a peer cannot pile up in one
 * bucket unless the peer knows the seed. */
static inline uint64_t imc_mix2(uint64_t a, uint64_t b, uint64_t seed)
{
	return imc_mix64(imc_mix64(a ^ seed) ^ b);
}

#endif
