/*
 * source.c - pick the ID source for each request and track the service mode.
 *
 * Tickets first. A request finding too few buffered ticket IDs waits up to
 * refill_wait_ms while a ticket server is up, then the Snowflake fallback serves
 * it from the leased window; with no server up it goes to the fallback at once.
 */
#include "source.h"

#include <inttypes.h>
#include <stdio.h>

#include "clk.h"
#include "layout.h"
#include "log.h"

static enum source_status source_fallback(struct source *s, unsigned n, uint64_t *first,
		    unsigned *wait_us, const char **why);
static bool	source_must_wait(struct source *s, bool may_fallback);
static enum source_mode source_mode_now(struct source *s);
static const char *source_clock_why(struct source *s, enum snowflake_status st, uint64_t now);

void
source_init(struct source *s, struct tier *tier, struct snowflake *gen, struct lease *lease,
    int64_t (*clock_us)(void), unsigned refill_wait_ms)
{
	*s = (struct source){ .tier = tier, .gen = gen, .lease = lease, .clock_us = clock_us,
	    .mono_us = clk_mono_us, .refill_wait_ms = refill_wait_ms, .mode = SOURCE_MODE_DOWN,
	    .why = SOURCE_WHY_NO_LEASE };
}

const char *
source_mode_name(enum source_mode m)
{
	static const char *const names[] = { [SOURCE_MODE_TICKET] = "ticket",
	    [SOURCE_MODE_FALLBACK] = "fallback", [SOURCE_MODE_DOWN] = "down" };

	return names[m];
}

/*
 * The mode and its reason: ticket while a server is up or ticket IDs remain
 * buffered (the service is healthy while it has IDs to hand out); fallback
 * while the lease window would serve a take now (the generator's own rules:
 * the window, the clock against its floor); else down, saying why.
 */
static enum source_mode
source_mode_now(struct source *s)
{
	uint64_t now;

	s->why_ms = 0;
	if (tier_any_up(s->tier)) {
		s->why = SOURCE_WHY_TICKET_UP;
		return SOURCE_MODE_TICKET;
	}
	if (pool_available(&s->tier->seq.pool) > 0) {
		s->why = SOURCE_WHY_BUFFERED;
		return SOURCE_MODE_TICKET;
	}
	if (!layout_ts_from_unix_ms(s->clock_us() / 1000, &now) || now < LAYOUT_TS_MIN) {
		s->why = SOURCE_WHY_CLOCK_EARLY;
		return SOURCE_MODE_DOWN;
	}
	if (s->lease->state != LEASE_HELD) {
		s->why = s->lease->state == LEASE_REFUSED ? SOURCE_WHY_LEASE_REFUSED :
		    SOURCE_WHY_NO_LEASE;
		return SOURCE_MODE_DOWN;
	}
	switch (snowflake_probe(s->gen, now, &s->why_ms)) {
	case SNOWFLAKE_OK:
	case SNOWFLAKE_WAIT:
	case SNOWFLAKE_RESERVE:
		s->why = SOURCE_WHY_LEASE;
		return SOURCE_MODE_FALLBACK;
	case SNOWFLAKE_CLOCK:
		s->why = SOURCE_WHY_CLOCK_STEPPED;
		return SOURCE_MODE_DOWN;
	case SNOWFLAKE_BEHIND:
		s->why = SOURCE_WHY_CLOCK_BEHIND;
		return SOURCE_MODE_DOWN;
	case SNOWFLAKE_UNAVAILABLE:
		break;
	}
	s->why = now > s->lease->window_end ? SOURCE_WHY_EXPIRED : SOURCE_WHY_NO_LEASE;
	return SOURCE_MODE_DOWN;
}

/* Recomputes the mode; a transition is one log line naming the reason. */
void
source_update_mode(struct source *s)
{
	enum source_mode m = source_mode_now(s);
	char why[192], servers[160];
	size_t n = 0;

	if (m == s->mode)
		return;
	source_mode_reason(s, why, sizeof(why));
	servers[0] = '\0';
	for (unsigned i = 0; i < server_count() && n < sizeof(servers); i++)
		n += (size_t)snprintf(servers + n, sizeof(servers) - n, "%s %s, ", server_name(i),
		    ticket_state_name(s->tier->srv[i].state));
	log_info("mode %s -> %s: %s (%slease %s, worker %u)", source_mode_name(s->mode),
	    source_mode_name(m), why, servers, source_lease_state(s), s->lease->worker);
	s->mode = m;
	s->stats.mode_changes++;
}

unsigned
source_mode_due_ms(const struct source *s, unsigned cap)
{
	uint64_t now;

	if (s->lease->state != LEASE_HELD ||
	    !layout_ts_from_unix_ms(s->clock_us() / 1000, &now) || now > s->lease->window_end)
		return cap;
	/* The first ms past the window: fallback turns down then. */
	return s->lease->window_end + 1 - now < cap ? (unsigned)(s->lease->window_end + 1 - now) :
	    cap;
}

/* The lease state as views show it, read at this source's clock. */
const char *
source_lease_state(const struct source *s)
{
	uint64_t now = 0;

	(void)layout_ts_from_unix_ms(s->clock_us() / 1000, &now);
	return lease_state_at(s->lease, now);
}

/* Words the reason of the current mode, with the numbers an operator needs. */
void
source_mode_reason(const struct source *s, char *buf, size_t len)
{
	static const char *const fixed[] = {
		[SOURCE_WHY_TICKET_UP] = "a ticket server is up",
		[SOURCE_WHY_BUFFERED] = "no ticket server up; buffered ticket IDs remain",
		[SOURCE_WHY_NO_LEASE] = "no ticket server up and no Snowflake lease",
		[SOURCE_WHY_LEASE_REFUSED] = "no ticket server up; Snowflake lease refused: clock "
		    "skew against the database (max_clock_skew_ms, see log)",
		[SOURCE_WHY_CLOCK_EARLY] = "no ticket server up; clock before 2026-01-25",
	};
	const struct lease *l = s->lease;
	char end[LAYOUT_ISO_LEN];

	layout_format_iso(layout_ts_to_unix_ms(l->window_end), end, sizeof(end));
	switch (s->why) {
	case SOURCE_WHY_LEASE:
		snprintf(buf, len, "no ticket server up; Snowflake worker %u leased until %s",
		    l->worker, end);
		return;
	case SOURCE_WHY_EXPIRED:
		snprintf(buf, len, "no ticket server up; the Snowflake lease window ended at %s",
		    end);
		return;
	case SOURCE_WHY_CLOCK_STEPPED:
		snprintf(buf, len, "no ticket server up; clock stepped back %" PRIu64 " ms "
		    "(backstep_tolerance_ms=%" PRIu64 ")", s->why_ms,
		    s->gen->cfg.backstep_tolerance_ms);
		return;
	case SOURCE_WHY_CLOCK_BEHIND:
		snprintf(buf, len, "no ticket server up; clock behind the Snowflake lease's floor "
		    "by %" PRIu64 " ms (clock_wait_ms=%" PRIu64 ")", s->why_ms,
		    s->gen->cfg.clock_wait_ms);
		return;
	default:
		snprintf(buf, len, "%s", fixed[s->why]);
	}
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
		s->stall_mark = s->tier->seq.banked;
		return false;
	}
	if (s->stalled && s->stall_mark == s->tier->seq.banked)
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
		/* The next reservation goes on disk before minting reaches the limit. */
		lease_reserve_ahead(s->lease, snowflake_last_ts(s->gen));
		if (tier_any_up(s->tier))
			s->stats.late_refills++;
		return SOURCE_OK;
	case SNOWFLAKE_WAIT:
		/*
		 * A wall clock that stopped would make this wait endless: after
		 * clock_wait_ms of monotonic time on one millisecond, refuse.
		 */
		if (now != s->wait_ts) {
			s->wait_ts = now;
			s->wait_since = s->mono_us();
		} else if (s->mono_us() - s->wait_since >
		    (int64_t)s->gen->cfg.clock_wait_ms * 1000) {
			*why = source_clock_why(s, st, now);
			return SOURCE_CLOCK;
		}
		/* This millisecond's sequence is used up: wake exactly at the next one. */
		next_us = layout_ts_to_unix_ms(snowflake_last_ts(s->gen) + 1) * 1000;
		*wait_us = next_us - us < 10 ? 10 : next_us - us > 1000000 ? 1000000 :
		    (unsigned)(next_us - us);
		return SOURCE_NEXT_MS;
	case SNOWFLAKE_CLOCK:
	case SNOWFLAKE_BEHIND:
		/* A fresh number may mint at the clock's time: its window is its own. */
		lease_clock_stepped(s->lease);
		*why = source_clock_why(s, st, now);
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

/* The message of a clock refusal, with how far the clock is off. */
static const char *
source_clock_why(struct source *s, enum snowflake_status st, uint64_t now)
{
	const struct snowflake_config *c = &s->gen->cfg;
	uint64_t behind = 0;

	if (st == SNOWFLAKE_WAIT)
		snprintf(s->why_buf, sizeof(s->why_buf), "clock stopped: it has not moved for "
		    "clock_wait_ms=%" PRIu64 " ms while the Snowflake sequence of its millisecond "
		    "is used up", c->clock_wait_ms);
	else if (snowflake_probe(s->gen, now, &behind) == SNOWFLAKE_BEHIND)
		snprintf(s->why_buf, sizeof(s->why_buf), "clock behind the Snowflake lease's "
		    "floor by %" PRIu64 " ms (a window resumed from the state file; more than "
		    "clock_wait_ms=%" PRIu64 "): no ID until the clock catches up or a fresh "
		    "worker number is leased", behind, c->clock_wait_ms);
	else if (now < LAYOUT_TS_MIN)
		snprintf(s->why_buf, sizeof(s->why_buf), "clock before 2026-01-25: no Snowflake "
		    "ID can be minted");
	else
		snprintf(s->why_buf, sizeof(s->why_buf), "clock stepped back %" PRIu64 " ms, "
		    "past backstep_tolerance_ms=%" PRIu64 "; waiting for it to catch up or for "
		    "a fresh worker number", behind, c->backstep_tolerance_ms);
	return s->why_buf;
}

struct nsrv *
source_ns_find(struct source *s, const char *name, size_t len)
{
	struct nsrv *ns = nss_find(&s->tier->nss, name, len);

	return ns != NULL && ns->served ? ns : NULL;
}

/*
 * Every sequence's IDs (ns NULL: the default): its buffered tickets; else a
 * wait while a ticket may come (the default: source_must_wait; a namespace:
 * one of its servers may bring one); else the fallback: Snowflake IDs from
 * the one leased window (unique across namespaces too), or, for a namespace
 * whose policy is refuse, UNAVAILABLE (13.6).
 */
enum source_status
source_take(struct source *s, struct nsrv *ns, bool block, unsigned n, uint64_t *out,
    bool may_fallback, unsigned *wait_us, const char **why)
{
	struct seq *q = TIER_SEQ(s->tier, ns);
	enum source_status st;
	uint64_t first;

	if (tier_take(s->tier, q, block, n, out)) {
		q->ids_ticket += n;
		s->stats.ids_ticket += n;
		return SOURCE_OK;
	}
	if (ns == NULL ? source_must_wait(s, may_fallback) :
	    !may_fallback && tier_ns_can_fetch(s->tier, ns)) {
		*wait_us = s->refill_wait_ms * 1000;
		return SOURCE_WAIT;
	}
	if (ns != NULL && ns->policy == NS_REFUSE) {
		*why = "this namespace is dense only (fallback refuse) and no ticket server "
		    "brought its IDs in time";
		return SOURCE_UNAVAILABLE;
	}
	/* One millisecond holds 4096 >= IDS_MAX: an IDS reply is one ascending run. */
	st = source_fallback(s, n, &first, wait_us, why);
	if (st != SOURCE_OK)
		return st;
	q->ids_fallback += n;
	if (block)
		*out = first;
	else
		for (unsigned i = 0; i < n; i++)
			out[i] = first + i;
	return SOURCE_OK;
}

enum lease_trust
source_trust(const struct tier *t, int server)
{
	if (server < 0 || server >= SERVER_PAIR)
		return LEASE_DISTRUSTED;
	switch (t->srv[server].state) {
	case TICKET_READY:
	case TICKET_FETCHING:
	case TICKET_RECHECKING:
		return LEASE_TRUSTED;
	case TICKET_REFUSED:
	case TICKET_REGRESSED:
		return LEASE_DISTRUSTED;
	case TICKET_DOWN:
	case TICKET_CONNECTING:
		break;
	}
	return LEASE_AWAY;
}
