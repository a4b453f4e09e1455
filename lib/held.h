/*
 * held.h - the IDs a client holds: dense ranges in arrival order, carved into
 * single IDs, ascending lists and dense blocks. Pure code, no locking (the
 * client's mutex guards it), no I/O (docs/design.md section 11).
 */
#ifndef IDGEN_HELD_H
#define IDGEN_HELD_H

#include <stdbool.h>
#include <stdint.h>

struct held_range {
	uint64_t	 first;
	uint64_t	 count;		/* > 0 */
};

/* A ring of ranges; cap is fixed at held_init(). */
struct held {
	struct held_range *r;
	unsigned	 cap;
	unsigned	 head;		/* oldest range */
	unsigned	 n;		/* ranges in use */
	uint64_t	 ids;		/* sum of their counts */
};

bool	held_init(struct held *h, unsigned cap) __attribute__((warn_unused_result));
void	held_free(struct held *h);

/* Drops every range (after a fork: those IDs belong to the parent). */
void	held_clear(struct held *h);

/*
 * Appends [first, first + count). A full ring drops its oldest range to make
 * room: those IDs are lost, never reused. Returns the IDs dropped.
 */
uint64_t held_add(struct held *h, uint64_t first, uint64_t count);

/* Takes up to max IDs, dense, from the oldest range; 0 when empty. */
uint64_t held_take(struct held *h, uint64_t max, uint64_t *first);

/*
 * Takes n IDs into out, ascending (ranges may arrive out of order: the
 * pieces are sorted). False, taking nothing, when fewer than n are held.
 */
bool	held_take_list(struct held *h, unsigned n, uint64_t *out)
	    __attribute__((warn_unused_result));

/*
 * Takes a dense block of n from the oldest range, first dropping the oldest
 * ranges smaller than n (the pieces blocks leave behind; lost, never reused,
 * so they neither pile up nor count as held). False, dropping them all, when
 * no range has n. *dropped counts the IDs dropped.
 */
bool	held_take_block(struct held *h, uint64_t n, uint64_t *first, uint64_t *dropped)
	    __attribute__((warn_unused_result));

#endif
