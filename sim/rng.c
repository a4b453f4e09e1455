/*
 * rng.c - xoshiro256** (Blackman and Vigna), seeded by splitmix64 (rng.h).
 */
#include "rng.h"

static uint64_t rng_s[4];

static uint64_t	rng_rotl(uint64_t x, int k);

static uint64_t
rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t
rng_mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

void
rng_seed(uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		seed += UINT64_C(0x9e3779b97f4a7c15);
		rng_s[i] = rng_mix(seed);
	}
}

uint64_t
rng_next(void)
{
	uint64_t r = rng_rotl(rng_s[1] * 5, 7) * 9, t = rng_s[1] << 17;

	rng_s[2] ^= rng_s[0];
	rng_s[3] ^= rng_s[1];
	rng_s[1] ^= rng_s[2];
	rng_s[0] ^= rng_s[3];
	rng_s[2] ^= t;
	rng_s[3] = rng_rotl(rng_s[3], 45);
	return r;
}

/* Lemire's multiply-shift: no modulo bias worth the name at these ranges. */
uint64_t
rng_below(uint64_t n)
{
	if (n == 0)
		return 0;
	return (uint64_t)(((unsigned __int128)rng_next() * n) >> 64);
}

bool
rng_permille(unsigned p)
{
	return rng_below(1000) < p;
}

/* The state now, to be put back by rng_load. */
void
rng_save(struct rng_state *st)
{
	for (int i = 0; i < 4; i++)
		st->s[i] = rng_s[i];
}

/* Puts back a state rng_save kept: the draws that followed it follow again. */
void
rng_load(const struct rng_state *st)
{
	for (int i = 0; i < 4; i++)
		rng_s[i] = st->s[i];
}
