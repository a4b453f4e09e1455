/*
 * source.h - where IDs come from: the ticket tier, else the Snowflake fallback.
 *
 * Also owns the service mode (ticket / fallback / down) and the reason for it,
 * logged once per change.
 */
#ifndef IDGEN_SOURCE_H
#define IDGEN_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
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

/* Why the mode is what it is; source_mode_reason() words it. */
enum source_why {
	SOURCE_WHY_TICKET_UP,		/* a ticket server is up */
	SOURCE_WHY_BUFFERED,		/* none up, buffered ticket IDs remain */
	SOURCE_WHY_LEASE,		/* none up, the lease window serves */
	SOURCE_WHY_NO_LEASE,		/* none up, no window held */
	SOURCE_WHY_LEASE_REFUSED,	/* none up, the claim refused for clock skew */
	SOURCE_WHY_EXPIRED,		/* none up, the window has ended */
	SOURCE_WHY_CLOCK_STEPPED,	/* none up, the clock stepped back past the tolerance */
	SOURCE_WHY_CLOCK_BEHIND,	/* none up, a resumed floor too far ahead of the clock */
	SOURCE_WHY_CLOCK_EARLY,		/* none up, the clock reads before 2026-01-25 */
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
	int64_t			(*mono_us)(void);	/* monotonic us; injectable */
	unsigned		 refill_wait_ms;
	enum source_mode	 mode;
	enum source_why		 why;		/* of the mode */
	uint64_t		 why_ms;	/* how far behind, for the clock reasons */
	uint64_t		 wait_ts;	/* layout ms of the last next-ms wait ... */
	int64_t			 wait_since;	/* ... and the monotonic us it was first seen */
	char			 why_buf[256];	/* the message of the last clock refusal */
	bool			 stalled;	/* a refill wait expired ... */
	uint64_t		 stall_mark;	/* ... and tier->seq.banked has not moved since */
	struct source_counters	 stats;
};

void		source_init(struct source *s, struct tier *tier, struct snowflake *gen,
		    struct lease *lease, int64_t (*clock_us)(void), unsigned refill_wait_ms);

/* A namespace the tier serves (docs/design.md section 13); ns.h. */
struct nsrv;

/* The namespace of that name when it is served (ready), else NULL. */
struct nsrv	*source_ns_find(struct source *s, const char *name, size_t len);

/*
 * n IDs ascending into out (block: a dense block of n, its first in *out) of
 * namespace ns (NULL: the default sequence). may_fallback is set once the
 * request has waited refill_wait_ms for the tier; a namespace falls back only
 * when its policy is snowflake. why explains a refusal.
 */
enum source_status source_take(struct source *s, struct nsrv *ns, bool block, unsigned n,
		    uint64_t *out, bool may_fallback, unsigned *wait_us, const char **why);

/*
 * Recomputes the mode after a health change, or when source_mode_due_ms()
 * said; logs a transition. Views never call it: reading changes nothing.
 */
void		source_update_mode(struct source *s);

/*
 * Milliseconds until the mode may change with no event but time passing (the
 * lease window's end), at most cap: the caller's timer recomputes it then.
 */
unsigned	source_mode_due_ms(const struct source *s, unsigned cap);

const char	*source_mode_name(enum source_mode m);

/* The lease's state word at the source's clock ("expired" past its window). */
const char	*source_lease_state(const struct source *s);

/* The reason for the current mode, one line of text into buf. */
void		source_mode_reason(const struct source *s, char *buf, size_t len);

/*
 * Whether the lease may use ticket server index server (its pair): while the
 * ticket tier vouches for it (checked and connected), never while refused or
 * regressed, away while down or connecting. One rule for idserver, the
 * simulation and nothing else to copy.
 */
enum lease_trust	source_trust(const struct tier *t, int server);

#endif
