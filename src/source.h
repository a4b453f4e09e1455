/*
 * source.h - where IDs come from: the ticket tier, else the Snowflake fallback.
 *
 * Also owns the service mode (ticket / fallback / down), logged once per change.
 */
#ifndef IDGEN_SOURCE_H
#define IDGEN_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "lease.h"
#include "snowflake.h"
#include "tier.h"

enum source_status {
	SOURCE_OK,
	SOURCE_WAIT,		/* wait up to *wait_us for a refill */
	SOURCE_NEXT_MS,		/* this ms's sequence is used up: retry in *wait_us */
	SOURCE_UNAVAILABLE,	/* ERR UNAVAILABLE */
	SOURCE_CLOCK,		/* ERR CLOCK */
};

enum source_mode {
	SOURCE_MODE_TICKET,
	SOURCE_MODE_FALLBACK,
	SOURCE_MODE_DOWN,
};

struct source_counters {
	uint64_t	ids_ticket;
	uint64_t	ids_fallback;
	uint64_t	late_refills;	/* fallback answers while a ticket server was up */
	uint64_t	mode_changes;
};

struct source {
	struct tier		*tier;
	struct snowflake	*gen;
	struct lease		*lease;
	int64_t			(*clock_us)(void);	/* unix us; injectable */
	unsigned		 refill_wait_ms;
	enum source_mode	 mode;
	bool			 stalled;	/* a refill wait expired ... */
	uint64_t		 stall_mark;	/* ... and tier->banked has not moved since */
	struct source_counters	 stats;
};

void		source_init(struct source *s, struct tier *tier, struct snowflake *gen,
		    struct lease *lease, int64_t (*clock_us)(void), unsigned refill_wait_ms);

/*
 * n IDs ascending into out, or a dense block of n. may_fallback is set once the
 * request has waited refill_wait_ms for the tier. why explains a refusal.
 */
enum source_status source_ids(struct source *s, unsigned n, uint64_t *out, bool may_fallback,
		    unsigned *wait_us, const char **why);
enum source_status source_block(struct source *s, unsigned n, uint64_t *first,
		    bool may_fallback, unsigned *wait_us, const char **why);

/* Recomputes the mode after a health change; logs a transition. */
void		source_update_mode(struct source *s);

const char	*source_mode_name(enum source_mode m);

/* The real clock: unix us from CLOCK_REALTIME. */
int64_t		source_clock_real_us(void);

#endif
