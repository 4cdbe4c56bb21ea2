/* Seeded pseudo-random numbers for simulation and jitter.
 *
 * The generator is xoshiro256** (Blackman and Vigna, "Scrambled linear
 * pseudorandom number generators", 2018), seeded by running splitmix64 from
 * the 64-bit seed as its authors recommend. The state lives in the caller's
 * struct imc_rng: there is no global generator, and the same seed always
 * gives the same sequence on every platform. Not for cryptography.
 */
#ifndef IBMCAST_RNG_H
#define IBMCAST_RNG_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct imc_rng {
	uint64_t s[4];
};

/* One step of splitmix64: advances *state and returns the next output. */
uint64_t imc_rng_splitmix64(uint64_t *state);

/* Sets r's state to the first four splitmix64 outputs from seed (never the
 * all-zero state, which xoshiro cannot leave). */
void imc_rng_seed(struct imc_rng *r, uint64_t seed);

/* Next 64 uniformly distributed bits. */
uint64_t imc_rng_next(struct imc_rng *r);

/* Uniform integer in [0, n), without modulo bias (Lemire, "Fast random
 * integer generation in an interval", 2019). Returns 0 when n is 0. */
uint64_t imc_rng_below(struct imc_rng *r, uint64_t n);

/* Uniform double in [0, 1) with 53 random bits. */
double imc_rng_double(struct imc_rng *r);

/* True with probability p: always false for p <= 0, always true for
 * p >= 1. Draws one value either way so that the stream position does not
 * depend on p. */
bool imc_rng_chance(struct imc_rng *r, double p);

/* Seeds child from one output of r, so each simulated object can own a
 * stream derived deterministically from its parent's seed. Splitting again
 * from r or from child gives further distinct streams. */
void imc_rng_split(struct imc_rng *r, struct imc_rng *child);

#ifdef __cplusplus
}
#endif
#endif
