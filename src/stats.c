/*
 * stats.c - collect the service's counters and states, in one fixed order.
 */
#include "stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "lease.h"
#include "server.h"
#include "snowflake.h"
#include "source.h"
#include "statefile.h"
#include "tier.h"

struct stats_out {
	stats_fn	 fn;
	void		*arg;
};

static void	stats_u64(struct stats_out *o, const char *name, uint64_t v);
static void	stats_str(struct stats_out *o, const char *name, const char *v);
static void	stats_srv_u64(struct stats_out *o, const struct ticket_server *s,
		    const char *field, uint64_t v);
static void	stats_server(struct stats_out *o, const struct ticket_server *s);
static void	stats_lease(struct stats_out *o, const struct lease *l,
		    const struct snowflake *g);

static void
stats_u64(struct stats_out *o, const char *name, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	o->fn(name, buf, o->arg);
}

static void
stats_str(struct stats_out *o, const char *name, const char *v)
{
	o->fn(name, v, o->arg);
}

/* A per-server statistic, named "<role>_<field>". */
static void
stats_srv_u64(struct stats_out *o, const struct ticket_server *s, const char *field,
    uint64_t v)
{
	char name[64];

	snprintf(name, sizeof(name), "%s_%s", s->role, field);
	stats_u64(o, name, v);
}

/* One ticket server's health and counters, prefixed by its role. */
static void
stats_server(struct stats_out *o, const struct ticket_server *s)
{
	char name[64];

	snprintf(name, sizeof(name), "%s_state", s->role);
	stats_str(o, name, ticket_state_name(s->state));
	stats_srv_u64(o, s, "tickets", s->stats.tickets);
	stats_srv_u64(o, s, "last_ticket", s->last_ticket);
	stats_srv_u64(o, s, "mark", s->mark);
	stats_srv_u64(o, s, "next_ticket", s->seen.counter);
	stats_srv_u64(o, s, "rechecks", s->stats.rechecks);
	stats_srv_u64(o, s, "deadlocks", s->stats.deadlocks);
	stats_srv_u64(o, s, "lock_timeouts", s->stats.lock_timeouts);
	stats_srv_u64(o, s, "failures", s->stats.failures);
	stats_srv_u64(o, s, "refusals", s->stats.refusals);
	stats_srv_u64(o, s, "connects", s->stats.connects);
	stats_srv_u64(o, s, "fetch_us_avg", s->stats.tickets ?
	    s->stats.fetch_us_total / s->stats.tickets : 0);
	stats_srv_u64(o, s, "fetch_us_max", s->stats.fetch_us_max);
}

/* The fallback: lease window, worker, generator and clock counters. */
static void
stats_lease(struct stats_out *o, const struct lease *l, const struct snowflake *g)
{
	char iso[LAYOUT_ISO_LEN];

	stats_str(o, "lease_state", lease_state_name(l->state));
	stats_u64(o, "lease_worker", l->worker);
	stats_str(o, "lease_server", l->state == LEASE_HELD ?
	    (l->server == 0 ? "odd" : "even") : "none");
	stats_u64(o, "lease_window_start", l->window_start);
	stats_u64(o, "lease_window_end", l->window_end);
	layout_format_iso(layout_ts_to_unix_ms(l->window_end), iso, sizeof(iso));
	stats_str(o, "lease_window_end_time", l->state == LEASE_HELD ? iso : "none");
	stats_u64(o, "lease_claims", l->stats.claims);
	stats_u64(o, "lease_claim_failures", l->stats.claim_failures);
	stats_u64(o, "lease_extends", l->stats.extends);
	stats_u64(o, "lease_extend_failures", l->stats.extend_failures);
	stats_u64(o, "lease_skew_refusals", l->stats.skew_refusals);
	stats_u64(o, "lease_lost", l->stats.lost);
	stats_u64(o, "lease_resumed", l->stats.resumed);
	stats_u64(o, "lease_adopted", l->stats.adopted);
	stats_u64(o, "lease_reservations", l->stats.reservations);
	stats_u64(o, "fallback_reserved_ts", l->sf->rec.lease.held ? l->sf->rec.lease.reserved : 0);
	stats_u64(o, "lease_clock_skew_ms", (uint64_t)(l->skew_ms < 0 ? -l->skew_ms :
	    l->skew_ms));
	stats_u64(o, "fallback_last_ts", snowflake_last_ts(g));
	stats_u64(o, "clock_absorbed_backsteps", g->counters.absorbed_backsteps);
	stats_u64(o, "clock_large_backsteps", g->counters.large_backsteps);
	stats_u64(o, "clock_largest_backstep_ms", g->counters.largest_backstep_ms);
	stats_u64(o, "fallback_seq_exhausted", g->counters.seq_exhausted);
	stats_u64(o, "fallback_clock_refusals", g->counters.clock_refusals);
	stats_u64(o, "fallback_window_refusals", g->counters.window_refusals);
}

/* Every statistic, service-wide first, then per server, then the fallback. */
void
stats_emit(struct server *srv, stats_fn fn, void *arg)
{
	struct stats_out o = { fn, arg };
	struct source *src = srv->source;
	struct tier *t = src->tier;

	/* The window may have run out since the last event: recompute. */
	source_update_mode(src);
	stats_u64(&o, "pid", (uint64_t)getpid());
	stats_u64(&o, "uptime", (uint64_t)(time(NULL) - srv->started));
	stats_str(&o, "mode", source_mode_name(src->mode));
	stats_u64(&o, "block_size", t->block_size);
	stats_u64(&o, "curr_connections", srv->nclients);
	stats_u64(&o, "total_connections", srv->stats.conns_total);
	stats_u64(&o, "rejected_connections", srv->stats.conns_rejected);
	stats_u64(&o, "write_timeouts", srv->stats.write_timeouts);
	stats_u64(&o, "accept_errors", srv->stats.accept_errors);
	stats_u64(&o, "requests", srv->stats.requests);
	stats_u64(&o, "ids_ticket", src->stats.ids_ticket);
	stats_u64(&o, "ids_fallback", src->stats.ids_fallback);
	stats_u64(&o, "ids_buffered", pool_available(&t->pool));
	stats_u64(&o, "prefetch_target", t->target);
	stats_u64(&o, "ids_dropped", t->ids_dropped);
	stats_u64(&o, "refill_waits", srv->stats.waits);
	stats_u64(&o, "refill_late_fallbacks", src->stats.late_refills);
	stats_u64(&o, "mode_changes", src->stats.mode_changes);
	stats_u64(&o, "err_badreq", srv->stats.err_badreq);
	stats_u64(&o, "err_range", srv->stats.err_range);
	stats_u64(&o, "err_unavailable", srv->stats.err_unavailable);
	stats_u64(&o, "err_clock", srv->stats.err_clock);
	stats_str(&o, "state_file", statefile_on(t->sf) ? t->sf->path : "off");
	stats_u64(&o, "state_writes", t->sf->stats.writes);
	stats_u64(&o, "state_write_failures", t->sf->stats.failures);
	stats_u64(&o, "state_write_us_avg", t->sf->stats.writes ?
	    t->sf->stats.write_us_total / t->sf->stats.writes : 0);
	stats_u64(&o, "state_write_us_max", t->sf->stats.write_us_max);
	stats_server(&o, &t->srv[TIER_ODD]);
	stats_server(&o, &t->srv[TIER_EVEN]);
	stats_lease(&o, src->lease, src->gen);
}
