/*
 * source.c - pick the ID source for each request and track the service mode.
 *
 * Tickets first. A request finding too few buffered ticket IDs waits up to
 * refill_wait_ms while a ticket server is up, then the Snowflake fallback serves
 * it from the leased window; with no server up it goes to the fallback at once.
 */
#include "source.h"

#include <time.h>

#include "layout.h"
#include "log.h"

static enum source_status source_fallback(struct source *s, unsigned n, uint64_t *first,
		    unsigned *wait_us, const char **why);
static bool	source_must_wait(struct source *s, bool may_fallback);

void
source_init(struct source *s, struct tier *tier, struct snowflake *gen, struct lease *lease,
    int64_t (*clock_us)(void), unsigned refill_wait_ms)
{
	s->tier = tier;
	s->gen = gen;
	s->lease = lease;
	s->clock_us = clock_us;
	s->refill_wait_ms = refill_wait_ms;
	s->mode = SOURCE_MODE_DOWN;
	s->stats.ids_ticket = 0;
	s->stats.ids_fallback = 0;
	s->stats.late_refills = 0;
	s->stats.mode_changes = 0;
}

int64_t
source_clock_real_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

const char *
source_mode_name(enum source_mode m)
{
	switch (m) {
	case SOURCE_MODE_TICKET:
		return "ticket";
	case SOURCE_MODE_FALLBACK:
		return "fallback";
	case SOURCE_MODE_DOWN:
		return "down";
	}
	return "?";
}

/*
 * Ticket while a server is up or ticket IDs remain buffered (the service is
 * healthy while it has IDs to hand out); fallback while a lease window covers
 * now; else down.
 */
void
source_update_mode(struct source *s)
{
	enum source_mode m = SOURCE_MODE_DOWN;
	uint64_t now;

	if (tier_any_up(s->tier) || pool_available(&s->tier->pool) > 0)
		m = SOURCE_MODE_TICKET;
	else if (layout_ts_from_unix_ms(s->clock_us() / 1000, &now) && lease_valid(s->lease, now))
		m = SOURCE_MODE_FALLBACK;
	if (m == s->mode)
		return;
	log_info("mode %s -> %s (odd %s, even %s, lease %s, worker %u)",
	    source_mode_name(s->mode), source_mode_name(m),
	    ticket_state_name(s->tier->srv[TIER_ODD].state),
	    ticket_state_name(s->tier->srv[TIER_EVEN].state),
	    lease_state_name(s->lease->state), s->lease->worker);
	s->mode = m;
	s->stats.mode_changes++;
}

/*
 * Whether a request short of ticket IDs should wait for a refill. Once one
 * request's wait has run out, the refill is late for everyone: the following
 * requests go straight to the fallback until a ticket is banked again, instead
 * of each waiting refill_wait_ms in turn behind it.
 */
static bool
source_must_wait(struct source *s, bool may_fallback)
{
	if (may_fallback) {
		s->stalled = true;
		s->stall_mark = s->tier->banked;
		return false;
	}
	if (s->stalled && s->stall_mark == s->tier->banked)
		return false;
	s->stalled = false;
	return tier_any_up(s->tier);
}

/* n consecutive Snowflake IDs of one millisecond, or why not. */
static enum source_status
source_fallback(struct source *s, unsigned n, uint64_t *first, unsigned *wait_us,
    const char **why)
{
	struct snowflake_range r;
	int64_t us = s->clock_us(), next_us;
	uint64_t now = 0;
	enum snowflake_status st;

	if (!layout_ts_from_unix_ms(us / 1000, &now))
		now = 0;	/* before the epoch: the generator refuses with CLOCK */
	st = snowflake_take(s->gen, now, n, true, &r);
	if (st == SNOWFLAKE_RESERVE) {
		/* Write-ahead: the reservation is on disk before the ID is minted. */
		if (!lease_reserve(s->lease, snowflake_next_ts(s->gen, now))) {
			*why = "cannot write the state file (state_file; see log): no Snowflake "
			    "ID is minted without its reservation on disk";
			return SOURCE_UNAVAILABLE;
		}
		st = snowflake_take(s->gen, now, n, true, &r);
	}
	source_update_mode(s);
	switch (st) {
	case SNOWFLAKE_OK:
		*first = r.first;
		s->stats.ids_fallback += n;
		if (tier_any_up(s->tier))
			s->stats.late_refills++;
		return SOURCE_OK;
	case SNOWFLAKE_WAIT:
		/* This millisecond's sequence is used up: wake exactly at the next one. */
		next_us = layout_ts_to_unix_ms(snowflake_last_ts(s->gen) + 1) * 1000;
		*wait_us = next_us - us < 10 ? 10 : next_us - us > 1000000 ? 1000000 :
		    (unsigned)(next_us - us);
		return SOURCE_NEXT_MS;
	case SNOWFLAKE_CLOCK:
		lease_clock_stepped(s->lease);
		*why = "clock stepped back past backstep_tolerance_ms; waiting for it to catch "
		    "up or for a fresh worker number";
		return SOURCE_CLOCK;
	case SNOWFLAKE_UNAVAILABLE:
	case SNOWFLAKE_RESERVE:
		break;
	}
	*why = s->lease->state == LEASE_REFUSED ?
	    "no ticket server reachable; Snowflake lease refused (clock skew, see log)" :
	    "no ticket server reachable and no valid Snowflake lease window";
	return SOURCE_UNAVAILABLE;
}

enum source_status
source_ids(struct source *s, unsigned n, uint64_t *out, bool may_fallback, unsigned *wait_us,
    const char **why)
{
	enum source_status st;
	uint64_t first;
	unsigned i;

	if (tier_take_ids(s->tier, n, out)) {
		s->stats.ids_ticket += n;
		return SOURCE_OK;
	}
	if (source_must_wait(s, may_fallback)) {
		*wait_us = s->refill_wait_ms * 1000;
		return SOURCE_WAIT;
	}
	/* One millisecond holds 4096 >= IDS_MAX: an IDS reply is one ascending run. */
	st = source_fallback(s, n, &first, wait_us, why);
	if (st == SOURCE_OK)
		for (i = 0; i < n; i++)
			out[i] = first + i;
	return st;
}

enum source_status
source_block(struct source *s, unsigned n, uint64_t *first, bool may_fallback,
    unsigned *wait_us, const char **why)
{
	if (tier_take_block(s->tier, n, first)) {
		s->stats.ids_ticket += n;
		return SOURCE_OK;
	}
	if (source_must_wait(s, may_fallback)) {
		*wait_us = s->refill_wait_ms * 1000;
		return SOURCE_WAIT;
	}
	return source_fallback(s, n, first, wait_us, why);
}
