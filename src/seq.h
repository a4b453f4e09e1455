/*
 * seq.h - a sequence's demand: the IDs it handed out, their rate and the
 * target it keeps buffered or in flight, for the default sequence and each
 * namespace alike (docs/design.md 13.7: the first piece of the one sequence
 * type, which is to hold its buffer, write-ahead and bank as well). Pure.
 */
#ifndef IDGEN_SEQ_H
#define IDGEN_SEQ_H

#include <stdint.h>

/* The prefetch settings every sequence's target follows, in blocks of its B. */
struct seq_prefetch {
	unsigned	 blocks;	/* the floor of the target */
	unsigned	 max_blocks;	/* its ceiling */
	unsigned	 lead_ms;
};

struct seq {
	uint64_t	 target;	/* IDs to keep buffered or in flight */
	uint64_t	 taken;		/* IDs handed out, ever */
	uint64_t	 taken_mark;	/* ... at the last rate sample */
	double		 rate;		/* IDs/s, decaying peak */
};

/* A rate sample over the last rate_ms, then the target for tickets of B b. */
void	seq_sample(struct seq *q, const struct seq_prefetch *p, unsigned rate_ms,
	    double fetch_ms, uint64_t b);

/* The target at the current rate for tickets of B b, a fetch taking fetch_ms. */
void	seq_retarget(struct seq *q, const struct seq_prefetch *p, double fetch_ms, uint64_t b);

#endif
