/* xoshiro256** seeded through splitmix64; see include/ibmcast/rng.h. */
#include "ibmcast/rng.h"
#include "util/mix.h"

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t imc_rng_splitmix64(uint64_t *state)
{
	return imc_mix_step(state);
}

void imc_rng_seed(struct imc_rng *r, uint64_t seed)
{
	/* The splitmix64 mixer is a bijection and the four states it mixes
	 * are distinct, so at most one word is zero: xoshiro's forbidden
	 * all-zero state cannot occur. */
	for (int i = 0; i < 4; i++)
		r->s[i] = imc_rng_splitmix64(&seed);
}

uint64_t imc_rng_next(struct imc_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

uint64_t imc_rng_below(struct imc_rng *r, uint64_t n)
{
	unsigned __int128 m;
	uint64_t low;

	if (n == 0)
		return 0;
	m = (unsigned __int128)imc_rng_next(r) * n;
	low = (uint64_t)m;
	if (low < n) {
		/* Reject the 2^64 mod n products that would over-represent
		 * some results; at most one retry is expected. */
		uint64_t threshold = -n % n;

		while (low < threshold) {
			m = (unsigned __int128)imc_rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double imc_rng_double(struct imc_rng *r)
{
	return (double)(imc_rng_next(r) >> 11) * 0x1.0p-53;
}

bool imc_rng_chance(struct imc_rng *r, double p)
{
	double u = imc_rng_double(r);

	return u < p;
}

void imc_rng_split(struct imc_rng *r, struct imc_rng *child)
{
	imc_rng_seed(child, imc_rng_next(r));
}
