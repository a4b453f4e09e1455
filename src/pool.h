/*
 * pool.h - buffered ticket blocks, carved into ID, IDS and BLOCK replies.
 *
 * A FIFO of ranges [next, end). Tickets arrive as whole blocks; replies take from
 * the front. BLOCK n takes n dense IDs from the first range that holds n, so a
 * BLOCK reply never crosses a ticket block. Pure logic, no I/O.
 */
#ifndef IDGEN_POOL_H
#define IDGEN_POOL_H

#include <stdbool.h>
#include <stdint.h>

#define POOL_RANGES_MAX	64	/* buffered ranges; the prefetch bound keeps far fewer */

struct pool_range {
	uint64_t	next;
	uint64_t	end;	/* exclusive */
};

struct pool {
	struct pool_range	r[POOL_RANGES_MAX];
	unsigned		head;	/* index of the first range */
	unsigned		count;	/* ranges in use */
	uint64_t		available;
};

void		pool_init(struct pool *p);

/* Adds the range [first, first+n); false (and nothing added) when the pool is full. */
bool		pool_add(struct pool *p, uint64_t first, uint64_t n)
		    __attribute__((warn_unused_result));

/* IDs buffered. */
uint64_t	pool_available(const struct pool *p);

/* Takes n IDs (ascending) into out; false and nothing taken when fewer are buffered. */
bool		pool_take_ids(struct pool *p, unsigned n, uint64_t *out)
		    __attribute__((warn_unused_result));

/* Takes n dense IDs from one range; false and nothing taken when no range holds n. */
bool		pool_take_block(struct pool *p, uint64_t n, uint64_t *first)
		    __attribute__((warn_unused_result));

/*
 * Makes room for more ranges when the queue is nearly full: BLOCK requests
 * skip ranges too small for them, so such fragments can pile up. Drops the
 * smallest ranges (never issued: a gap) until at most POOL_RANGES_ROOM are
 * left; returns how many IDs were dropped.
 */
#define POOL_RANGES_ROOM	(POOL_RANGES_MAX - 8)
uint64_t	pool_make_room(struct pool *p);

/* Drops every buffered ID below x (never to be issued); returns how many. */
uint64_t	pool_drop_below(struct pool *p, uint64_t x);

/* Drops every buffered ID (never to be issued); returns how many were dropped. */
uint64_t	pool_clear(struct pool *p);

#endif
