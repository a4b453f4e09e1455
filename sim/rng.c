/*
 * rng.c - xoshiro256** (Blackman and Vigna), seeded by splitmix64 (rng.h).
 */
#include "rng.h"

static struct rng_state rng_main;

static uint64_t	rng_rotl(uint64_t x, int k);
static uint64_t	rng_step(struct rng_state *st);
static uint64_t	rng_below_of(struct rng_state *st, uint64_t n);

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

/* st seeded as rng_seed seeds the schedule's generator. */
void
rng_seed_state(struct rng_state *st, uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		seed += UINT64_C(0x9e3779b97f4a7c15);
		st->s[i] = rng_mix(seed);
	}
}

void
rng_seed(uint64_t seed)
{
	rng_seed_state(&rng_main, seed);
}

/* One step of st's generator. */
static uint64_t
rng_step(struct rng_state *st)
{
	uint64_t *s = st->s, r = rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return r;
}

uint64_t
rng_next(void)
{
	return rng_step(&rng_main);
}

/* Lemire's multiply-shift: no modulo bias worth the name at these ranges. */
static uint64_t
rng_below_of(struct rng_state *st, uint64_t n)
{
	if (n == 0)
		return 0;
	return (uint64_t)(((unsigned __int128)rng_step(st) * n) >> 64);
}

uint64_t
rng_below(uint64_t n)
{
	return rng_below_of(&rng_main, n);
}

/* A draw from a generator of its own: the values rng_below gives after rng_load(st). */
uint64_t
rng_draw_from(struct rng_state *st, uint64_t n)
{
	return rng_below_of(st, n);
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
	*st = rng_main;
}

/* Puts back a state rng_save kept: the draws that followed it follow again. */
void
rng_load(const struct rng_state *st)
{
	rng_main = *st;
}
