/*
 * snowflake.c - mint Snowflake IDs inside a leased window of ID time.
 *
 * The caller supplies the clock and the lease; this file only decides which
 * (ts, seq) pairs are safe to hand out. See snowflake.h for the rules.
 */
#include "snowflake.h"

#include <assert.h>
#include <string.h>

#include "rules.h"

static uint64_t	snowflake_floor(const struct snowflake *);
static uint64_t	snowflake_step_base(const struct snowflake *, uint64_t);
static bool	snowflake_too_far_ahead(const struct snowflake *, uint64_t, uint64_t);
static bool	snowflake_clock_ok(struct snowflake *, uint64_t, uint64_t);
static void	snowflake_forget(struct snowflake *, unsigned);
static enum snowflake_status snowflake_refuse(struct snowflake *,
		    enum snowflake_status);

/* The lowest ts the next take may use: window_start or the last ts minted. */
static uint64_t
snowflake_floor(const struct snowflake *g)
{
	if (g->minted && g->last_ts > g->window_start)
		return g->last_ts;
	return g->window_start;
}

/* What backward steps are measured from: the floor, or an earlier clock reading. */
static uint64_t
snowflake_step_base(const struct snowflake *g, uint64_t base)
{
	/* Never from a resumed floor: this process never read a clock that late. */
	return base < g->clock_max ? base : g->clock_max;
}

/*
 * Whether the floor is further ahead of now than a take may wait for. A
 * claimed window's floor is never more than backstep_tolerance_ms ahead once
 * the step check passed; only a window resumed from the state file can be:
 * minting there is safe, but waiting an hour for the clock is not service.
 */
static bool
snowflake_too_far_ahead(const struct snowflake *g, uint64_t now, uint64_t base)
{
	uint64_t limit = g->cfg.clock_wait_ms > g->cfg.backstep_tolerance_ms ?
	    g->cfg.clock_wait_ms : g->cfg.backstep_tolerance_ms;

	return base > now && base - now > limit;
}

/* Classifies now against the floor, counting each backward-step episode once. */
static bool
snowflake_clock_ok(struct snowflake *g, uint64_t now, uint64_t base)
{
	uint64_t	behind;

	if (now >= base) {
		g->step = SNOWFLAKE_STEP_NONE;
		return true;
	}
	behind = base - now;
	if (behind > g->counters.largest_backstep_ms)
		g->counters.largest_backstep_ms = behind;

	if (behind <= g->cfg.backstep_tolerance_ms) {
		if (g->step == SNOWFLAKE_STEP_NONE) {
			g->counters.absorbed_backsteps++;
			g->step = SNOWFLAKE_STEP_SMALL;
		}
		return true;
	}
	if (g->step != SNOWFLAKE_STEP_LARGE) {
		g->counters.large_backsteps++;
		g->step = SNOWFLAKE_STEP_LARGE;
	}
	return false;
}

/* Counts a refusal under its status and returns that status. */
static enum snowflake_status
snowflake_refuse(struct snowflake *g, enum snowflake_status status)
{
	switch (status) {
	case SNOWFLAKE_WAIT:
		g->counters.seq_exhausted++;
		break;
	case SNOWFLAKE_CLOCK:
	case SNOWFLAKE_BEHIND:
		g->counters.clock_refusals++;
		break;
	case SNOWFLAKE_UNAVAILABLE:
		g->counters.window_refusals++;
		break;
	case SNOWFLAKE_OK:
	case SNOWFLAKE_RESERVE:
		break;
	}
	return status;
}

/* Sets up a generator with no window and no worker history. */
void
snowflake_init(struct snowflake *g, const struct snowflake_config *cfg)
{
	memset(g, 0, sizeof *g);
	g->cfg = *cfg;
	g->step = SNOWFLAKE_STEP_NONE;
	g->reserved = LAYOUT_TS_MAX;	/* no state file: no write-ahead limit */
}

/* Takes worker as the current number with no history. */
static void
snowflake_forget(struct snowflake *g, unsigned worker)
{
	g->worker = worker;
	g->minted = false;
	g->last_ts = 0;
	g->next_seq = 0;
	g->clock_max = 0;
	g->step = SNOWFLAKE_STEP_NONE;
}

/* Starts a new claim; only a change of worker forgets the last ts minted. */
void
snowflake_set_window(struct snowflake *g, unsigned worker, uint64_t start,
    uint64_t end)
{
	assert(worker <= LAYOUT_WORKER_MAX);

	if (worker != g->worker)
		snowflake_forget(g, worker);
	/* Nothing below 2^53, nothing the 41-bit field cannot hold. */
	g->window_start = start < LAYOUT_TS_MIN ? LAYOUT_TS_MIN : start;
	g->window_end = end > LAYOUT_TS_MAX ? LAYOUT_TS_MAX : end;
	g->has_window = true;
	/* The claim read the clock at start: steps back are measured from there. */
	if (g->window_start > g->clock_max)
		g->clock_max = g->window_start;
}

/* A window from the state file: mint above floor, no clock reading known yet. */
void
snowflake_resume(struct snowflake *g, unsigned worker, uint64_t floor, uint64_t end)
{
	snowflake_forget(g, worker);
	snowflake_set_window(g, worker, floor, end);	/* the same worker: nothing forgotten */
	g->clock_max = 0;	/* no clock was read at floor, unlike a claim's start */
}

/* The write-ahead limit: no ts above reserved until the caller persists more. */
void
snowflake_set_reserved(struct snowflake *g, uint64_t reserved)
{
	g->reserved = reserved > LAYOUT_TS_MAX ? LAYOUT_TS_MAX : reserved;
}

/* The ts a take at now would use, before the window and reservation checks. */
uint64_t
snowflake_next_ts(const struct snowflake *g, uint64_t now_ms)
{
	uint64_t base = snowflake_floor(g);

	return now_ms > base ? now_ms : base;
}

/* Moves the end of the current window forward; a lower end is ignored. */
void
snowflake_extend(struct snowflake *g, uint64_t end)
{
	if (!g->has_window)
		return;
	if (end > LAYOUT_TS_MAX)
		end = LAYOUT_TS_MAX;
	if (end > g->window_end)
		g->window_end = end;
}

/* Forgets the window but keeps the worker's history for a re-claim. */
void
snowflake_clear_window(struct snowflake *g)
{
	g->has_window = false;
	g->window_start = 0;
	g->window_end = 0;
}

/* Clears the window and reports the window_end a clean release writes back. */
bool
snowflake_release(struct snowflake *g, uint64_t *end)
{
	uint64_t	e;

	if (!g->has_window)
		return false;
	/* window_start >= LAYOUT_TS_MIN, so this cannot wrap. */
	e = g->window_start - 1;
	if (g->minted && g->last_ts > e)
		e = g->last_ts;
	*end = e;
	snowflake_clear_window(g);
	return true;
}

/* Hands out up to want IDs of one millisecond, or says why it cannot. */
enum snowflake_status
snowflake_take(struct snowflake *g, uint64_t now_ms, unsigned want,
    bool all_or_nothing, struct snowflake_range *out)
{
	uint64_t	base, ts;
	unsigned	seq, room, count;

	assert(want >= 1 && want <= SNOWFLAKE_TAKE_MAX);
	out->first = 0;
	out->count = 0;

	if (!g->has_window)
		return snowflake_refuse(g, SNOWFLAKE_UNAVAILABLE);
	/* A clock before 2026-01-25 is broken; never mint below 2^53. */
	if (now_ms < LAYOUT_TS_MIN)
		return snowflake_refuse(g, SNOWFLAKE_CLOCK);

	base = snowflake_floor(g);
	/* Steps back count from the latest clock seen, never from a resumed floor. */
	if (!snowflake_clock_ok(g, now_ms, snowflake_step_base(g, base)))
		return snowflake_refuse(g, SNOWFLAKE_CLOCK);
	if (snowflake_too_far_ahead(g, now_ms, base))
		return snowflake_refuse(g, SNOWFLAKE_BEHIND);
	if (now_ms > g->clock_max)
		g->clock_max = now_ms;
	ts = now_ms > base ? now_ms : base;
	if (ts > g->window_end)
		return snowflake_refuse(g, SNOWFLAKE_UNAVAILABLE);
	if (ts > g->reserved && RULE_ON(RULE_WRITE_AHEAD))
		return SNOWFLAKE_RESERVE;

	if (g->minted && ts == g->last_ts)
		seq = g->next_seq;
	else
		seq = 0;
	room = LAYOUT_SEQ_COUNT - seq;
	if (room == 0 || (all_or_nothing && room < want)) {
		/* The next millisecond would be past the window: waiting is futile. */
		if (ts == g->window_end)
			return snowflake_refuse(g, SNOWFLAKE_UNAVAILABLE);
		return snowflake_refuse(g, SNOWFLAKE_WAIT);
	}
	count = want < room ? want : room;

	out->first = layout_snowflake_compose(ts, g->worker, seq);
	out->count = count;
	g->minted = true;
	g->last_ts = ts;
	g->next_seq = seq + count;
	g->counters.ids += count;
	return SNOWFLAKE_OK;
}

/* A take's answer at now, read only: the window and the clock rules, no sequence. */
enum snowflake_status
snowflake_probe(const struct snowflake *g, uint64_t now_ms, uint64_t *behind_ms)
{
	uint64_t base, step;

	*behind_ms = 0;
	if (!g->has_window)
		return SNOWFLAKE_UNAVAILABLE;
	if (now_ms < LAYOUT_TS_MIN)
		return SNOWFLAKE_CLOCK;
	base = snowflake_floor(g);
	step = snowflake_step_base(g, base);
	if (now_ms < step && step - now_ms > g->cfg.backstep_tolerance_ms) {
		*behind_ms = step - now_ms;
		return SNOWFLAKE_CLOCK;
	}
	if (snowflake_too_far_ahead(g, now_ms, base)) {
		*behind_ms = base - now_ms;
		return SNOWFLAKE_BEHIND;
	}
	if ((now_ms > base ? now_ms : base) > g->window_end)
		return SNOWFLAKE_UNAVAILABLE;
	return SNOWFLAKE_OK;
}

/* The last ts minted by the current worker, 0 when none. */
uint64_t
snowflake_last_ts(const struct snowflake *g)
{
	return g->minted ? g->last_ts : 0;
}
