/*
 * ranges.h - every ID range handed out in a schedule, sorted and disjoint:
 * a range that overlaps one already there is an ID issued twice.
 */
#ifndef IDSIM_RANGES_H
#define IDSIM_RANGES_H

#include <stddef.h>
#include <stdint.h>

struct range {
	uint64_t	lo, hi;		/* [lo, hi) */
	unsigned	who;		/* the idserver incarnation that handed it out */
	uint64_t	ev;		/* the event that took it */
};

struct ranges {
	struct range	*r;
	size_t		 n, cap;
};

void	ranges_reset(struct ranges *s);
void	ranges_free(struct ranges *s);
/*
 * Adds [lo, hi); NULL when it overlaps nothing, else the range it overlaps
 * (nothing is added then). Adjacent ranges of one taker are merged.
 */
const struct range *ranges_add(struct ranges *s, uint64_t lo, uint64_t hi, unsigned who,
	    uint64_t ev);

#endif
