/*
 * seq.h - a sequence: the default one and each namespace alike (docs/design.md
 * 13.7). Its demand (the IDs it handed out, their rate, the target it keeps
 * buffered or in flight), the rule that asks for its next ticket, the
 * write-ahead of a ticket's mark, copy first's verdict and queue, and the bank
 * step into its buffer. Below tier.c; calls neither.
 */
#ifndef IDGEN_SEQ_H
#define IDGEN_SEQ_H

#include <stdbool.h>
#include <stdint.h>

#include "pool.h"
#include "server.h"

struct statefile;

#define SEQ_WAIT_MAX	64	/* tickets of every sequence together waiting for
				 * a copy (one more: a gap) */

/* The prefetch settings every sequence's target follows, in blocks of its B. */
struct seq_prefetch {
	unsigned	 blocks;	/* the floor of the target */
	unsigned	 max_blocks;	/* its ceiling */
	unsigned	 lead_ms;
};

struct seq {
	struct pool	 pool;		/* its buffer: the banked blocks not handed out */
	bool		 demand;	/* a request waits for a block that is not here */
	bool		 idles;		/* a namespace's: idle, it keeps nothing buffered,
					 * and any miss asks (with its count, want) */
	uint64_t	 last_take_ms;	/* monotonic: its last take (the idle clock) */
	uint64_t	 ids_ticket;	/* IDs handed out from its tickets */
	uint64_t	 ids_fallback;	/* ... from the Snowflake fallback */
	uint64_t	 banked;	/* tickets banked into its buffer, ever */
	uint64_t	 copied[SERVER_MAX];	/* copy first: how far a copy of server
					 * i's mark is known on another server, in
					 * its unit (the default: a ticket of B; a
					 * namespace: an end in ID space) */
	uint64_t	 target;	/* IDs to keep buffered or in flight */
	uint64_t	 taken;		/* IDs handed out, ever */
	uint64_t	 taken_mark;	/* ... at the last rate sample */
	double		 rate;		/* IDs/s, decaying peak */
	uint64_t	 want;		/* IDs a waiting request wants (0: any block) */
	unsigned	 last_used;	/* server of the last fetch, for taking turns */
	unsigned	 fetching;	/* its tickets in flight (ticket.c's flights) */
	unsigned	 writing;	/* tickets answered and not yet banked: their
					 * state file write, then copy first (13.7) */
};

/* A rate sample over the last rate_ms, then the target for tickets of B b. */
void	seq_sample(struct seq *q, const struct seq_prefetch *p, unsigned rate_ms,
	    double fetch_ms, uint64_t b);

/* The target at the current rate for tickets of B b, a fetch taking fetch_ms. */
void	seq_retarget(struct seq *q, const struct seq_prefetch *p, double fetch_ms, uint64_t b);

/*
 * The rule asking for every sequence's next ticket of B b (docs/design.md
 * 13.7), in_flight asked for and not banked (q->want: a waiting request's);
 * idle (nothing taken for a while): only a waiting request asks.
 */
bool	seq_need(const struct seq *q, unsigned in_flight, uint64_t b, bool idle);

/*
 * Takes n IDs (ascending), or with block a dense block of n, from the
 * sequence's buffer, counted as taken.
 */
bool	seq_take(struct seq *q, bool block, unsigned n, uint64_t *out)
	    __attribute__((warn_unused_result));

/* Where a ticket's write-ahead stands. */
enum seq_written {
	SEQ_WRITTEN,		/* durable now: on to copy first */
	SEQ_WRITING,		/* queued: done hears its end on the loop */
	SEQ_UNWRITTEN,		/* failed now: the ticket is not used */
};

/*
 * Write-ahead (docs/design.md 6.9, 13.5): the state file write, holding a
 * ticket's mark (already raised in sf's record), that must be durable before
 * its block is banked. done hears (arg, ok, a, ticket) on the loop when the
 * answer is SEQ_WRITING. rule_on false (the simulation's ns-write-ahead;
 * the default's write has no switch) answers SEQ_WRITTEN without a write.
 * (Not statefile.h's enum: state.h includes this header through ns.h.)
 */
enum seq_written seq_write_ahead(struct statefile *sf, bool rule_on,
	    void (*done)(void *arg, bool ok, uint64_t a, uint64_t ticket), void *arg, uint64_t a,
	    uint64_t ticket) __attribute__((warn_unused_result));

/* Copy first's verdict on a durable ticket (docs/design.md 6.5, 13.6). */
enum seq_copy {
	SEQ_COPY_WAIT,		/* wait for a copy on another server */
	SEQ_COPY_BANK,		/* a copy covers it (or the rule is off) */
	SEQ_COPY_ALONE,		/* no copy, no other server of its region up */
};

/*
 * A ticket needing copy up to need (in its sequence's unit) when copied is
 * known on another server; other_up: another server of its region is up.
 */
enum seq_copy	seq_copy_first(uint64_t copied, uint64_t need, bool other_up, bool rule_on);

/* The tickets waiting for copy first, in the order they became durable. */
struct seq_wait {
	uint32_t	 seq;		/* its sequence (nsrv.id; 0: the default) */
	unsigned	 srv;
	uint64_t	 ticket;
	uint64_t	 since_us;	/* mono: when it began to wait */
	uint64_t	 dropped;	/* nsrv.dropped then (a namespace's) */
	uint32_t	 conn;		/* the connection it was drawn on (tier.c's
					 * conn_gen of srv then; docs/design.md 6.5) */
};

struct seq_waits {
	struct seq_wait	 v[SEQ_WAIT_MAX];
	unsigned	 n;
};

/* A copy of server i's mark up to v (its unit) is on another server now. */
void	seq_landed(struct seq *q, unsigned i, uint64_t v);

/* Takes the k-th waiting ticket off the queue. */
struct seq_wait	seq_wait_take(struct seq_waits *ws, unsigned k);

/*
 * The bank step: a ticket's IDs [first, first + n) into the sequence's
 * buffer. False, logged with name ("" for the default), when the buffer is
 * full: the block is a gap, never handed out.
 */
bool	seq_bank(struct pool *pool, uint64_t first, uint64_t n, const char *name,
	    uint64_t ticket);

#endif
