/*
 * snowflake.h - the Snowflake fallback generator (docs/design.md section 3).
 *
 * Pure logic: no I/O, no clock reads, no allocation. The caller owns the
 * struct, passes "now" in layout ms (see layout.h) and drives the lease.
 *
 * Guarantees, given that the lease tier hands out disjoint windows per worker:
 *  - every ID has ts in [window_start, window_end] of the window current at the
 *    call, ts >= LAYOUT_TS_MIN (so the ID is >= 2^53) and ts <= LAYOUT_TS_MAX;
 *  - while the worker number stays the same, IDs strictly increase across calls,
 *    even across clear/set of overlapping windows, so none is returned twice;
 *  - a change of worker number forgets the old worker's last timestamp: the new
 *    worker may mint at an earlier ts (that is the point of claiming a fresh
 *    number after a large clock step), so IDs are only k-ordered across workers.
 *    Uniqueness still holds because the worker field differs.
 *
 * Clock rules. The "floor" is the larger of window_start and the last ts minted
 * by this worker. A take uses ts = max(now, floor). A backward step is measured
 * against the lower of the floor and the latest clock reading this generator
 * has seen (seeded with window_start by a claim): when now is behind it by at
 * most backstep_tolerance_ms the step is absorbed (minting on the floor while
 * its sequence lasts); by more, the take returns SNOWFLAKE_CLOCK and mints
 * nothing. For a claimed window this is the floor itself, so now < window_start
 * with nothing minted yet is a backward step like any other. A window resumed
 * from the state file (snowflake_resume) starts above everything minted before
 * the restart, possibly ahead of this process's clock: minting there is safe
 * (the window is ours), and it is not a backward step, since this process never
 * read a later clock. But a take waits for the clock, once the floor's sequence
 * is used up, only while the floor is at most clock_wait_ms ahead of now: by
 * more, it returns SNOWFLAKE_BEHIND at once and mints nothing, so no request
 * waits an unbounded time for a clock set back across a restart.
 *
 * Write-ahead. With a state file, a take never mints a ts above "reserved": it
 * answers SNOWFLAKE_RESERVE instead, the caller persists a higher reservation
 * (snowflake_set_reserved) and takes again. So after a crash, everything minted
 * is at or below the reservation on disk (docs/design.md section 6).
 */
#ifndef IDGEN_SNOWFLAKE_H
#define IDGEN_SNOWFLAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"

/* Most IDs one take can return: a whole millisecond's sequence. */
#define SNOWFLAKE_TAKE_MAX	LAYOUT_SEQ_COUNT

struct snowflake_config {
	uint64_t backstep_tolerance_ms;	/* backward steps up to this are absorbed */
	uint64_t clock_wait_ms;		/* a resumed floor this far ahead of now is waited for */
};

/*
 * Counters for STATS. Clock steps are counted once per episode: an episode
 * starts at the first take that finds now behind the floor and ends at the
 * first take that finds it caught up. Refusals are counted once per call.
 */
struct snowflake_counters {
	uint64_t ids;			/* IDs minted */
	uint64_t absorbed_backsteps;	/* episodes within the tolerance */
	uint64_t large_backsteps;	/* episodes beyond the tolerance */
	uint64_t largest_backstep_ms;	/* largest now-behind-floor distance seen */
	uint64_t seq_exhausted;		/* takes answered SNOWFLAKE_WAIT */
	uint64_t clock_refusals;	/* takes answered SNOWFLAKE_CLOCK or _BEHIND */
	uint64_t window_refusals;	/* takes answered SNOWFLAKE_UNAVAILABLE */
};

/* Where the clock stands against the floor; private to snowflake.c. */
enum snowflake_step {
	SNOWFLAKE_STEP_NONE = 0,
	SNOWFLAKE_STEP_SMALL,
	SNOWFLAKE_STEP_LARGE,
};

/* Callers may read the fields; only snowflake_* functions change them. */
struct snowflake {
	struct snowflake_config		cfg;
	bool				has_window;
	unsigned			worker;
	uint64_t			window_start;	/* layout ms, inclusive */
	uint64_t			window_end;	/* layout ms, inclusive */
	bool				minted;		/* last_ts valid for worker */
	uint64_t			last_ts;
	unsigned			next_seq;	/* 0..LAYOUT_SEQ_COUNT at last_ts */
	uint64_t			clock_max;	/* latest clock reading seen */
	uint64_t			reserved;	/* no ts above this without a reservation */
	enum snowflake_step		step;
	struct snowflake_counters	counters;
};

enum snowflake_status {
	SNOWFLAKE_OK = 0,
	SNOWFLAKE_WAIT,		/* this ms has no room; retry once now > last_ts */
	SNOWFLAKE_CLOCK,	/* clock behind by more than the tolerance, or < 2^31 */
	SNOWFLAKE_UNAVAILABLE,	/* no window, or the next ts would pass window_end */
	SNOWFLAKE_RESERVE,	/* the ts is above "reserved": persist more, take again */
	SNOWFLAKE_BEHIND,	/* a resumed floor more than clock_wait_ms ahead of now */
};

/* IDs first .. first + count - 1, consecutive and all of one millisecond. */
struct snowflake_range {
	uint64_t	first;
	unsigned	count;
};

/* Sets up a generator with no window and no worker history. */
void snowflake_init(struct snowflake *g, const struct snowflake_config *cfg);

/*
 * Starts a new claim: worker (0..LAYOUT_WORKER_MAX) may mint ts in
 * [start, end], clamped to [LAYOUT_TS_MIN, LAYOUT_TS_MAX]. The same worker
 * keeps its last ts and sequence (so an overlapping window cannot repeat an
 * ID); another worker starts with no history.
 */
void snowflake_set_window(struct snowflake *g, unsigned worker, uint64_t start,
    uint64_t end);

/*
 * Resumes a window after a restart: worker may mint ts in [floor, end], where
 * floor is above everything minted before (the persisted reservation + 1). No
 * clock reading is known yet, so a clock behind floor is not a backward step.
 */
void snowflake_resume(struct snowflake *g, unsigned worker, uint64_t floor, uint64_t end);

/* Sets the highest ts that may be minted without a new reservation. */
void snowflake_set_reserved(struct snowflake *g, uint64_t reserved);

/* The ts the next take at now would use (for the reservation it needs). */
uint64_t snowflake_next_ts(const struct snowflake *g, uint64_t now_ms);

/* Extends the current claim to end; never moves the end backward. */
void snowflake_extend(struct snowflake *g, uint64_t end);

/* Drops the window (lease lost); the worker's history is kept for a re-claim. */
void snowflake_clear_window(struct snowflake *g);

/*
 * Ends the claim for a clean release: clears the window and stores in *end the
 * window_end to write back, the last ts minted in the window or, if none,
 * window_start - 1 (never lower, so a later claim cannot reach back into time
 * an earlier holder used). False when there is no window to release.
 */
bool snowflake_release(struct snowflake *g, uint64_t *end)
    __attribute__((__warn_unused_result__));

/*
 * Takes up to want (1..SNOWFLAKE_TAKE_MAX) consecutive IDs of one millisecond
 * into *out. With all_or_nothing, either all want or SNOWFLAKE_WAIT (BLOCK n);
 * otherwise count may be below want and the caller takes again. On anything
 * but SNOWFLAKE_OK, *out is {0, 0} and nothing was minted.
 */
enum snowflake_status snowflake_take(struct snowflake *g, uint64_t now_ms,
    unsigned want, bool all_or_nothing, struct snowflake_range *out)
    __attribute__((__warn_unused_result__));

/*
 * What a take at now would answer, without taking: SNOWFLAKE_OK, _CLOCK or
 * _BEHIND (with *behind_ms, how far now is behind the time the take needs),
 * or _UNAVAILABLE (no window, or now past its end). The sequence and the
 * reservation are not considered. For the service mode and its reason.
 */
enum snowflake_status snowflake_probe(const struct snowflake *g, uint64_t now_ms,
    uint64_t *behind_ms) __attribute__((__warn_unused_result__));

/* The last ts minted by the current worker, 0 when none. */
uint64_t snowflake_last_ts(const struct snowflake *g);

#endif
