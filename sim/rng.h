/*
 * rng.h - the simulation's one source of randomness: xoshiro256** seeded by
 * splitmix64. One seed gives one sequence, on every machine.
 */
#ifndef IDSIM_RNG_H
#define IDSIM_RNG_H

#include <stdbool.h>
#include <stdint.h>

void		rng_seed(uint64_t seed);
uint64_t	rng_next(void);
uint64_t	rng_below(uint64_t n);		/* uniform in [0, n); 0 when n is 0 */
bool		rng_permille(unsigned p);	/* true with probability p / 1000 */
uint64_t	rng_mix(uint64_t x);		/* splitmix64's finaliser: seeds of schedules */

/* The generator's state, kept and put back (idsim's replays of a schedule's events). */
struct rng_state {
	uint64_t	s[4];
};

void		rng_save(struct rng_state *st);
void		rng_load(const struct rng_state *st);

/*
 * Generators of their own (the disks', the query timeouts', the lease
 * edits', the regions'): seeded and drawn from without touching the
 * schedule's, so that turning one on moves no other draw. rng_seed_state
 * seeds st as rng_seed would the schedule's; rng_draw_from(st, n) is what
 * rng_below(n) would give with st loaded, st advanced as it would be.
 */
void		rng_seed_state(struct rng_state *st, uint64_t seed);
uint64_t	rng_draw_from(struct rng_state *st, uint64_t n);	/* [0, n); 0 if n is 0 */

#endif
