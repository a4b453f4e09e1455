/*
 * source.c - pick the ID source for each request and track the service mode.
 */
#include "source.h"

#include "log.h"

static enum source_status source_miss(struct source *s, bool may_fallback,
		    unsigned *wait_ms, const char **why);

void
source_init(struct source *s, struct tier *tier, unsigned refill_wait_ms)
{
	s->tier = tier;
	s->refill_wait_ms = refill_wait_ms;
	s->mode = SOURCE_MODE_DOWN;
	s->stats.ids_ticket = 0;
	s->stats.ids_fallback = 0;
	s->stats.mode_changes = 0;
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

/* Ticket mode while a server is up; otherwise down (the fallback is not armed). */
void
source_update_mode(struct source *s)
{
	enum source_mode m = tier_any_up(s->tier) ? SOURCE_MODE_TICKET : SOURCE_MODE_DOWN;

	if (m == s->mode)
		return;
	log_info("mode %s -> %s", source_mode_name(s->mode), source_mode_name(m));
	s->mode = m;
	s->stats.mode_changes++;
}

/* No buffered ticket IDs: wait briefly while a server is up, else refuse. */
static enum source_status
source_miss(struct source *s, bool may_fallback, unsigned *wait_ms, const char **why)
{
	if (!may_fallback && tier_any_up(s->tier)) {
		*wait_ms = s->refill_wait_ms;
		return SOURCE_WAIT;
	}
	*why = "no ticket server reachable and no fallback lease";
	return SOURCE_UNAVAILABLE;
}

enum source_status
source_ids(struct source *s, unsigned n, uint64_t *out, bool may_fallback, unsigned *wait_ms,
    const char **why)
{
	if (tier_take_ids(s->tier, n, out)) {
		s->stats.ids_ticket += n;
		return SOURCE_OK;
	}
	return source_miss(s, may_fallback, wait_ms, why);
}

enum source_status
source_block(struct source *s, unsigned n, uint64_t *first, bool may_fallback,
    unsigned *wait_ms, const char **why)
{
	if (tier_take_block(s->tier, n, first)) {
		s->stats.ids_ticket += n;
		return SOURCE_OK;
	}
	return source_miss(s, may_fallback, wait_ms, why);
}
