/*
 * metrics.c - the typed table of every counter and state, and its walker.
 */
#include "metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "core.h"
#include "layout.h"
#include "lease.h"
#include "listener.h"
#include "snowflake.h"
#include "source.h"
#include "statefile.h"
#include "tier.h"

#define C	METRIC_COUNTER
#define G	METRIC_GAUGE
#define I	METRIC_INFO
#define SVC	METRIC_SERVICE
#define SRV	METRIC_PER_SERVER

/* The order is the STATS order; per-server rows form one run. */
const struct metric_def metrics_table[] = {
	{ "pid", G, SVC, "server", "process id" },
	{ "uptime", G, SVC, "server", "seconds since start" },
	{ "mode", I, SVC, "server", "ticket, fallback or down" },
	{ "block_size", G, SVC, "server", "B, IDs per ticket (0 until a server is checked)" },
	{ "curr_connections", G, SVC, "clients", "client connections open" },
	{ "total_connections", C, SVC, "clients", "client connections accepted" },
	{ "rejected_connections", C, SVC, "clients", "connections refused (max_clients, draining)" },
	{ "write_timeouts", C, SVC, "clients", "clients dropped for not reading (write_timeout_ms)" },
	{ "accept_errors", C, SVC, "clients", "failed accepts (e.g. out of descriptors)" },
	{ "requests", C, SVC, "stats", "requests answered" },
	{ "ids_ticket", C, SVC, "stats", "IDs handed out from ticket blocks" },
	{ "ids_fallback", C, SVC, "stats", "Snowflake IDs handed out" },
	{ "ids_buffered", G, SVC, "stats", "ticket IDs prefetched, not yet issued" },
	{ "prefetch_target", G, SVC, "stats", "IDs the prefetch keeps buffered or in flight" },
	{ "ids_dropped", C, SVC, "stats", "buffered IDs abandoned (a gap, never expected)" },
	{ "refill_waits", C, SVC, "stats", "requests that found no buffered ID and waited" },
	{ "refill_late_fallbacks", C, SVC, "stats",
	    "requests the fallback answered because a refill was late" },
	{ "mode_changes", C, SVC, "stats", "transitions between modes" },
	{ "err_badreq", C, SVC, "stats", "requests refused: malformed" },
	{ "err_range", C, SVC, "stats", "requests refused: a number out of bounds" },
	{ "err_unavailable", C, SVC, "stats", "requests refused: no ID could be served" },
	{ "err_clock", C, SVC, "stats", "requests refused: the clock stepped back" },
	{ "state_file", I, SVC, "state", "the local state file, or off" },
	{ "state_writes", C, SVC, "state", "durable writes of the state file" },
	{ "state_write_failures", C, SVC, "state", "state file writes that failed" },
	{ "state_write_us_avg", G, SVC, "state", "mean time of one state file write, us" },
	{ "state_write_us_max", G, SVC, "state", "longest state file write, us" },
	{ "state", I, SRV, "tickets", "up, down, connecting, refused or regressed" },
	{ "tickets", C, SRV, "tickets", "tickets used" },
	{ "last_ticket", G, SRV, "tickets", "the last ticket this process used" },
	{ "mark", G, SRV, "tickets", "the high-water mark its tickets must exceed" },
	{ "next_ticket", G, SRV, "tickets", "its counter at the last check" },
	{ "rechecks", C, SRV, "tickets", "checks of a live connection" },
	{ "deadlocks", C, SRV, "tickets", "deadlocks (1213), retried" },
	{ "lock_timeouts", C, SRV, "tickets", "lock wait timeouts (1205), retried" },
	{ "failures", C, SRV, "tickets", "connect or query failures" },
	{ "refusals", C, SRV, "tickets", "refusals (settings, rights, regressed counter)" },
	{ "connects", C, SRV, "tickets", "connection attempts" },
	{ "fetch_us_avg", G, SRV, "tickets", "mean time to take a ticket, us" },
	{ "fetch_us_max", G, SRV, "tickets", "longest time to take a ticket, us" },
	{ "lease_state", I, SVC, "fallback", "none, held or refused" },
	{ "lease_worker", G, SVC, "fallback", "the leased worker number" },
	{ "lease_server", I, SVC, "fallback", "the server owning the lease row" },
	{ "lease_window_start", G, SVC, "fallback", "start of the lease window, layout ms" },
	{ "lease_window_end", G, SVC, "fallback", "end of the lease window, layout ms" },
	{ "lease_window_end_time", I, SVC, "fallback", "end of the lease window, ISO-8601" },
	{ "lease_claims", C, SVC, "fallback", "lease claims" },
	{ "lease_claim_failures", C, SVC, "fallback", "failed lease claims" },
	{ "lease_extends", C, SVC, "fallback", "lease extensions" },
	{ "lease_extend_failures", C, SVC, "fallback", "failed lease extensions" },
	{ "lease_skew_refusals", C, SVC, "fallback", "claims refused for clock skew" },
	{ "lease_lost", C, SVC, "fallback", "leases found held by another" },
	{ "lease_resumed", C, SVC, "fallback", "leases resumed from the state file" },
	{ "lease_adopted", C, SVC, "fallback", "resumed leases re-adopted in the database" },
	{ "lease_reservations", C, SVC, "fallback", "write-ahead reservations of Snowflake time" },
	{ "fallback_reserved_ts", G, SVC, "fallback", "highest ms that may be minted, layout ms" },
	{ "lease_clock_skew_ms", G, SVC, "fallback", "clock skew against the database at the claim" },
	{ "fallback_last_ts", G, SVC, "fallback", "last ms minted, layout ms" },
	{ "clock_absorbed_backsteps", C, SVC, "fallback", "small backward clock steps absorbed" },
	{ "clock_large_backsteps", C, SVC, "fallback", "large backward clock steps" },
	{ "clock_largest_backstep_ms", G, SVC, "fallback", "largest backward step seen, ms" },
	{ "fallback_seq_exhausted", C, SVC, "fallback", "waits for the next millisecond" },
	{ "fallback_clock_refusals", C, SVC, "fallback", "takes refused for the clock" },
	{ "fallback_window_refusals", C, SVC, "fallback", "takes refused outside the window" },
};
const size_t metrics_count = sizeof(metrics_table) / sizeof(metrics_table[0]);

#undef C
#undef G
#undef I
#undef SVC
#undef SRV

static void	metrics_server(const struct ticket_server *s, const char *name,
		    struct metric_value *v);
static void	metrics_lease(const struct metrics_src *m, const char *name,
		    struct metric_value *v);
static void	metrics_text(struct metric_value *v, const char *text);

static void
metrics_text(struct metric_value *v, const char *text)
{
	v->is_text = true;
	v->text = text;
}

/* A per-server row of one ticket server. */
static void
metrics_server(const struct ticket_server *s, const char *name, struct metric_value *v)
{
	const struct ticket_counters *c = &s->stats;

	if (strcmp(name, "state") == 0)
		metrics_text(v, ticket_state_name(s->state));
	else if (strcmp(name, "tickets") == 0)
		v->num = c->tickets;
	else if (strcmp(name, "last_ticket") == 0)
		v->num = s->last_ticket;
	else if (strcmp(name, "mark") == 0)
		v->num = s->mark;
	else if (strcmp(name, "next_ticket") == 0)
		v->num = s->seen.counter;
	else if (strcmp(name, "rechecks") == 0)
		v->num = c->rechecks;
	else if (strcmp(name, "deadlocks") == 0)
		v->num = c->deadlocks;
	else if (strcmp(name, "lock_timeouts") == 0)
		v->num = c->lock_timeouts;
	else if (strcmp(name, "failures") == 0)
		v->num = c->failures;
	else if (strcmp(name, "refusals") == 0)
		v->num = c->refusals;
	else if (strcmp(name, "connects") == 0)
		v->num = c->connects;
	else if (strcmp(name, "fetch_us_avg") == 0)
		v->num = c->tickets ? c->fetch_us_total / c->tickets : 0;
	else if (strcmp(name, "fetch_us_max") == 0)
		v->num = c->fetch_us_max;
}

/* The lease and generator rows. */
static void
metrics_lease(const struct metrics_src *m, const char *name, struct metric_value *v)
{
	const struct lease *l = m->source->lease;
	const struct snowflake *g = m->source->gen;
	const struct lease_counters *c = &l->stats;

	if (strcmp(name, "lease_state") == 0)
		metrics_text(v, lease_state_name(l->state));
	else if (strcmp(name, "lease_worker") == 0)
		v->num = l->worker;
	else if (strcmp(name, "lease_server") == 0)
		metrics_text(v, l->state == LEASE_HELD ? (l->server == 0 ? "odd" : "even") : "none");
	else if (strcmp(name, "lease_window_start") == 0)
		v->num = l->window_start;
	else if (strcmp(name, "lease_window_end") == 0)
		v->num = l->window_end;
	else if (strcmp(name, "lease_window_end_time") == 0) {
		layout_format_iso(layout_ts_to_unix_ms(l->window_end), v->buf, sizeof(v->buf));
		metrics_text(v, l->state == LEASE_HELD ? v->buf : "none");
	} else if (strcmp(name, "lease_claims") == 0)
		v->num = c->claims;
	else if (strcmp(name, "lease_claim_failures") == 0)
		v->num = c->claim_failures;
	else if (strcmp(name, "lease_extends") == 0)
		v->num = c->extends;
	else if (strcmp(name, "lease_extend_failures") == 0)
		v->num = c->extend_failures;
	else if (strcmp(name, "lease_skew_refusals") == 0)
		v->num = c->skew_refusals;
	else if (strcmp(name, "lease_lost") == 0)
		v->num = c->lost;
	else if (strcmp(name, "lease_resumed") == 0)
		v->num = c->resumed;
	else if (strcmp(name, "lease_adopted") == 0)
		v->num = c->adopted;
	else if (strcmp(name, "lease_reservations") == 0)
		v->num = c->reservations;
	else if (strcmp(name, "fallback_reserved_ts") == 0)
		v->num = m->sf->rec.lease.held ? m->sf->rec.lease.reserved : 0;
	else if (strcmp(name, "lease_clock_skew_ms") == 0)
		v->num = (uint64_t)(l->skew_ms < 0 ? -l->skew_ms : l->skew_ms);
	else if (strcmp(name, "fallback_last_ts") == 0)
		v->num = snowflake_last_ts(g);
	else if (strcmp(name, "clock_absorbed_backsteps") == 0)
		v->num = g->counters.absorbed_backsteps;
	else if (strcmp(name, "clock_large_backsteps") == 0)
		v->num = g->counters.large_backsteps;
	else if (strcmp(name, "clock_largest_backstep_ms") == 0)
		v->num = g->counters.largest_backstep_ms;
	else if (strcmp(name, "fallback_seq_exhausted") == 0)
		v->num = g->counters.seq_exhausted;
	else if (strcmp(name, "fallback_clock_refusals") == 0)
		v->num = g->counters.clock_refusals;
	else if (strcmp(name, "fallback_window_refusals") == 0)
		v->num = g->counters.window_refusals;
}

/* One row's value, read where it lives. */
void
metrics_value(const struct metrics_src *m, size_t row, int server, struct metric_value *v)
{
	const struct metric_def *d = &metrics_table[row];
	const struct core_counters *cc = &m->core->stats;
	const struct source *src = m->source;
	const struct tier *t = src->tier;
	const char *n = d->name;

	memset(v, 0, sizeof(*v));
	if (d->scope == METRIC_PER_SERVER) {
		metrics_server(&t->srv[server == 0 ? TIER_ODD : TIER_EVEN], n, v);
		return;
	}
	if (strcmp(n, "pid") == 0)
		v->num = (uint64_t)getpid();
	else if (strcmp(n, "uptime") == 0)
		v->num = (uint64_t)(time(NULL) - m->started);
	else if (strcmp(n, "mode") == 0)
		metrics_text(v, source_mode_name(src->mode));
	else if (strcmp(n, "block_size") == 0)
		v->num = t->block_size;
	else if (strcmp(n, "curr_connections") == 0)
		v->num = m->conns->open;
	else if (strcmp(n, "total_connections") == 0)
		v->num = m->conns->total;
	else if (strcmp(n, "rejected_connections") == 0)
		v->num = m->listener->rejected;
	else if (strcmp(n, "write_timeouts") == 0)
		v->num = m->conns->write_timeouts;
	else if (strcmp(n, "accept_errors") == 0)
		v->num = m->listener->accept_errors;
	else if (strcmp(n, "requests") == 0)
		v->num = cc->requests;
	else if (strcmp(n, "ids_ticket") == 0)
		v->num = src->stats.ids_ticket;
	else if (strcmp(n, "ids_fallback") == 0)
		v->num = src->stats.ids_fallback;
	else if (strcmp(n, "ids_buffered") == 0)
		v->num = pool_available(&t->pool);
	else if (strcmp(n, "prefetch_target") == 0)
		v->num = t->target;
	else if (strcmp(n, "ids_dropped") == 0)
		v->num = t->ids_dropped;
	else if (strcmp(n, "refill_waits") == 0)
		v->num = cc->waits;
	else if (strcmp(n, "refill_late_fallbacks") == 0)
		v->num = src->stats.late_refills;
	else if (strcmp(n, "mode_changes") == 0)
		v->num = src->stats.mode_changes;
	else if (strcmp(n, "err_badreq") == 0)
		v->num = cc->errors[CORE_ERR_BADREQ];
	else if (strcmp(n, "err_range") == 0)
		v->num = cc->errors[CORE_ERR_RANGE];
	else if (strcmp(n, "err_unavailable") == 0)
		v->num = cc->errors[CORE_ERR_UNAVAILABLE];
	else if (strcmp(n, "err_clock") == 0)
		v->num = cc->errors[CORE_ERR_CLOCK];
	else if (strcmp(n, "state_file") == 0)
		metrics_text(v, statefile_on(m->sf) ? m->sf->path : "off");
	else if (strcmp(n, "state_writes") == 0)
		v->num = m->sf->stats.writes;
	else if (strcmp(n, "state_write_failures") == 0)
		v->num = m->sf->stats.failures;
	else if (strcmp(n, "state_write_us_avg") == 0)
		v->num = m->sf->stats.writes ? m->sf->stats.write_us_total / m->sf->stats.writes : 0;
	else if (strcmp(n, "state_write_us_max") == 0)
		v->num = m->sf->stats.write_us_max;
	else
		metrics_lease(m, n, v);
}

/* Every value in table order; a run of per-server rows for odd, then even. */
void
metrics_walk(const struct metrics_src *m, metrics_fn fn, void *arg)
{
	static const char *const role[2] = { "odd", "even" };
	struct metric_value v;
	char name[96];
	size_t i, j, end;
	int s;

	/* The window may have run out since the last event: recompute. */
	source_update_mode(m->source);
	for (i = 0; i < metrics_count; i = end) {
		if (metrics_table[i].scope == METRIC_SERVICE) {
			metrics_value(m, i, 0, &v);
			fn(&metrics_table[i], metrics_table[i].name, 0, &v, arg);
			end = i + 1;
			continue;
		}
		for (end = i; end < metrics_count && metrics_table[end].scope == METRIC_PER_SERVER;
		    end++)
			;
		for (s = 0; s < 2; s++)
			for (j = i; j < end; j++) {
				metrics_value(m, j, s, &v);
				snprintf(name, sizeof(name), "%s_%s", role[s], metrics_table[j].name);
				fn(&metrics_table[j], name, s, &v, arg);
			}
	}
}
