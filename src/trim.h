/*
 * trim.h - gives the memory of a past flood back to the system.
 *
 * glibc keeps freed heap pages: after 15,000 HTTP connections close, idserver
 * stayed at 41 MB from 7 MB idle. A timer (trim_interval_ms) looks at the free
 * bytes malloc holds and calls malloc_trim() when they grew by trim_free_bytes
 * since the last trim and are more than twice the bytes in use (the flood is
 * over: a trim during one stalls the loop for milliseconds): every listener's
 * floods are covered, the request paths pay nothing, and a steady state is
 * never trimmed twice (docs/design.md section 8).
 */
#ifndef IDGEN_TRIM_H
#define IDGEN_TRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

struct trim {
	struct event	*tick;
	unsigned	 interval_ms;
	size_t		 free_bytes;	/* growth of the free heap that triggers a trim */
	size_t		 kept;		/* free heap bytes right after the last trim */
	bool		 follow;	/* the last tick trimmed: less growth may trim again */
	size_t		 used_at_trim;	/* heap bytes in use at the last trim */
	uint64_t	 trims;		/* malloc_trim() calls */
	uint64_t	 trim_us_max;	/* the longest */
};

/*
 * Has libevent allocate its per-descriptor slot for every descriptor number
 * below upto, now, in one run. Left to a flood, each slot (about 50 bytes,
 * never freed) lands between that connection's buffers, and after the flood
 * one live slot on every page keeps the whole heap from being given back.
 * Returns the number of slots made.
 */
unsigned	trim_reserve_fds(struct event_base *base, unsigned upto);

/*
 * Growth of the free heap that trims again at the tick after a trim, when the
 * heap in use shrank by as much since.
 */
#define TRIM_FOLLOW_BYTES	(64 * 1024)

/*
 * The timer's rule, apart from malloc for the unit tests: trim_due() says
 * whether this tick trims, from the free and in-use heap bytes; trim_done()
 * records a trim (the free bytes right after it, how long it took).
 */
bool	trim_due(struct trim *t, size_t free_now, size_t used);
void	trim_done(struct trim *t, size_t free_after, uint64_t us);

/* Starts the timer (interval_ms 0: never trims). False when out of memory. */
bool	trim_init(struct trim *t, struct event_base *base, unsigned interval_ms,
	    size_t free_bytes) __attribute__((warn_unused_result));
void	trim_free(struct trim *t);

#endif
