/*
 * live.c - the liveness checker of the simulation (docs/design.md section 14,
 * "Liveness"). It reads the idservers (their tier, lease and generator) and
 * the simulated servers and draws nothing, so every schedule keeps its trace:
 *
 * (T) a tier with a healthy server serves tickets again within a bound: while
 *     some server is healthy for an idserver without a break, the idserver
 *     banks a ticket of its default sequence (or holds its prefetch target)
 *     within bound_us of the last time it did, or of the break's end;
 * (F) the fallback serves while a lease window is valid: a take that may
 *     fall back is not refused while the idserver's lease is held and its
 *     clock reads inside the window, at or above the generator's floor.
 *
 * With --stall (live_stall) it injects a defect: retry, through the event
 * loop, an idserver never reconnects to a server it lost (the retry timer of
 * a server that was up in this incarnation is deleted), which (T) must
 * report; extend, through the generator, a lease's extensions never reach it
 * (its window's end put back to the claim's), which (F) must report.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "disk.h"
#include "layout.h"
#include "live.h"
#include "pool.h"
#include "simdb.h"
#include "source.h"
#include "vclock.h"

enum live_defect live_stall;

struct live_slot {
	unsigned	who;		/* the incarnation the interval belongs to */
	bool		healthy;	/* a healthy interval runs (T) */
	uint64_t	since_us;	/* ... since then (virtual us), or the last ticket */
	uint64_t	banked;		/* seq.banked then */
	bool		was_up[TSERVER_MAX];	/* --stall retry: up once in this incarnation */
	unsigned	worker;		/* --stall extend: the window's worker, start, and */
	uint64_t	start, end;	/* ... end as claimed */
};

static struct {
	uint64_t		seed, ev;
	const struct config	*cfg;
	const struct tserver	*srv;
	unsigned		nsrv;
	bool			tickets;	/* (T) applies in this schedule */
	bool			counted;	/* the totals count this run (not a muted one) */
	unsigned		max_delay_us;	/* the weather's largest answer delay */
	bool			far;		/* ... ten times that for one server */
	bool			timeouts;	/* queries may time out */
	uint64_t		disk_events;	/* the disks' failures and slow syncs, seen */
	uint64_t		bound_us;
	bool			regressed[TSERVER_MAX];
	struct live_view	v[LIVE_SLOTS];
	unsigned		nids;
	struct live_slot	d[LIVE_SLOTS];
	bool			failed;
	char			why[400];
	/* All schedules. */
	uint64_t		schedules, t_schedules, intervals, served, longest_us, longest_bound,
				close_us, close_bound, close_seed,	/* the wait nearest its
									 * bound, its seed */
				fb_valid, failures;
} L;

static void
live_lost(unsigned owner, unsigned srv)
{
	(void)srv;
	for (unsigned k = 0; k < L.nids; k++)
		if (L.v[k].who != NULL && *L.v[k].who == owner)
			L.d[k].healthy = false;	/* the interval starts again */
}

/*
 * The bound of (T), design 14: the longest retry wait (reprobe_max_ms, or
 * refused_retry_ms for a server refused while it was read-only), the
 * partner's silence (partner_wait_ms), and 16 answer delays (the connect's
 * queries, its check, rights and witness, a partner's check, the ticket
 * transaction, its copy), plus 200 ms for the loop's steps.
 */
void
live_weather(unsigned max_delay_us, bool far, bool timeouts)
{
	L.max_delay_us = max_delay_us;
	L.far = far;
	L.timeouts = timeouts;
}

/* The simulated disks' failures, slow syncs and power losses so far (disk.h). */
static uint64_t
live_disk_events(void)
{
	return disk_counts.eio + disk_counts.slow + disk_counts.last_acts +
	    disk_counts.power_losses;
}

void
live_schedule(uint64_t seed, const struct config *cfg, const struct tserver *srv, unsigned nsrv,
    bool tickets, bool counted)
{
	uint64_t retry = cfg->reprobe_max_ms > cfg->refused_retry_ms ? cfg->reprobe_max_ms :
	    cfg->refused_retry_ms;
	uint64_t delay = (uint64_t)L.max_delay_us * (L.far ? 10 : 1);

	memset(L.d, 0, sizeof(L.d));
	memset(L.v, 0, sizeof(L.v));
	memset(L.regressed, 0, sizeof(L.regressed));
	L.seed = seed;
	L.ev = 0;
	L.cfg = cfg;
	L.srv = srv;
	L.nsrv = nsrv;
	L.nids = 0;
	L.tickets = tickets;
	L.failed = false;
	L.why[0] = '\0';
	/* A query in flight that times out takes query_timeout_ms, then is lost. */
	L.bound_us = (retry + cfg->partner_wait_ms + 200 +
	    (L.timeouts ? cfg->query_timeout_ms : 0)) * 1000 + 16 * delay;
	L.disk_events = live_disk_events();
	L.counted = counted;
	L.schedules += counted;
	L.t_schedules += counted && tickets;
	simdb_lost_hook = live_lost;
}

void
live_idserver(unsigned slot, const struct live_view *v, unsigned nids)
{
	if (slot >= LIVE_SLOTS)
		return;
	L.v[slot] = *v;
	L.nids = nids;
}

void
live_event(uint64_t ev)
{
	L.ev = ev;
}

void
live_regressed(unsigned srv)
{
	if (srv < TSERVER_MAX)
		L.regressed[srv] = true;
}

/* --stall: a lost server's retry never fires (the injected defect). */
static void
live_stall_slot(struct live_slot *d, const struct live_view *v)
{
	for (unsigned k = 0; k < L.nsrv && k < SERVER_MAX; k++) {
		struct ticket_server *s = &v->t->srv[k];

		if (ticket_up(s))
			d->was_up[k] = true;
		else if (d->was_up[k] && s->state == TICKET_DOWN && s->retry != NULL &&
		    event_pending(s->retry, EV_TIMEOUT, NULL))
			event_del(s->retry);
	}
}

/* --stall extend: the generator's window keeps the end it was claimed (or resumed) with. */
static void
live_stall_extend(struct live_slot *d, struct snowflake *g)
{
	if (!g->has_window)
		return;
	if (g->worker != d->worker || g->window_start != d->start || d->end == 0) {
		d->worker = g->worker;
		d->start = g->window_start;
		d->end = g->window_end;
	}
	if (g->window_end > d->end)
		g->window_end = d->end;
}

void
live_step(void)
{
	uint64_t now = vclock_now_us();
	/* A disk's failure or slow sync delays the state file's writes: intervals begin again. */
	bool disk = live_disk_events() != L.disk_events;

	L.disk_events = live_disk_events();
	for (unsigned i = 0; i < L.nids; i++) {
		struct live_slot *d = &L.d[i];
		const struct live_view *v = &L.v[i];
		const struct seq *q;
		bool healthy = false;

		if (v->on == NULL)
			continue;
		if (*v->who != d->who) {
			memset(d, 0, sizeof(*d));
			d->who = *v->who;
		}
		if (live_stall == LIVE_RETRY && *v->on)
			live_stall_slot(d, v);
		if (live_stall == LIVE_EXTEND && *v->on)
			live_stall_extend(d, v->gen);
		if (!L.tickets || L.failed)
			continue;
		for (unsigned k = 0; k < L.nsrv && *v->on; k++)
			healthy |= L.srv[k].up && !L.srv[k].read_only && !L.regressed[k] &&
			    v->cut_until[k] <= now && simdb_stalled_until(k) <= now;
		if (!healthy || disk) {
			d->healthy = false;
			continue;
		}
		q = &v->t->seq;
		if (!d->healthy) {
			d->healthy = true;
			d->since_us = now;
			d->banked = q->banked;
			L.intervals += L.counted;
			continue;
		}
		if (q->banked != d->banked || pool_available(&q->pool) >= q->target) {
			if (q->banked != d->banked)
				L.served += L.counted;
			if (L.counted && now - d->since_us > L.longest_us) {
				L.longest_us = now - d->since_us;
				L.longest_bound = L.bound_us;
			}
			if (L.counted && (now - d->since_us) * L.close_bound >= L.close_us * L.bound_us) {
				L.close_us = now - d->since_us;
				L.close_bound = L.bound_us;
				L.close_seed = L.seed;
			}
			d->since_us = now;
			d->banked = q->banked;
			continue;
		}
		if (now - d->since_us <= L.bound_us)
			continue;
		L.failed = true;
		L.failures += L.counted;
		{
			size_t n = 0;

			n += (size_t)snprintf(L.why + n, sizeof(L.why) - n, "(T) i%u served no "
			    "ticket for %" PRIu64 " ms (bound %" PRIu64 " ms) at e%" PRIu64
			    " while a server was healthy for it; its servers:", d->who,
			    (now - d->since_us) / 1000, L.bound_us / 1000, L.ev);
			for (unsigned k = 0; k < L.nsrv && n < sizeof(L.why); k++)
				n += (size_t)snprintf(L.why + n, sizeof(L.why) - n, " %s %s%s",
				    server_role(k), ticket_state_name(v->t->srv[k].state),
				    L.srv[k].up ? "" : " (down)");
			if (n < sizeof(L.why))
				snprintf(L.why + n, sizeof(L.why) - n, "; buffered %" PRIu64
				    " of target %" PRIu64, pool_available(&q->pool), q->target);
		}
	}
}

void
live_take(unsigned slot, int st, bool may_fallback)
{
	const struct live_view *v;
	const struct lease *l;
	const struct snowflake *g;
	uint64_t now = 0, floor;

	if (slot >= LIVE_SLOTS || !may_fallback || L.failed)
		return;
	v = &L.v[slot];
	l = v->lease;
	g = v->gen;
	/* A write of the state file failed since the last sample: nothing is minted. */
	if (v->on == NULL || !*v->on || l->state != LEASE_HELD || l->ahead.failed ||
	    live_disk_events() != L.disk_events)
		return;
	if (!layout_ts_from_unix_ms(v->clock_ms(), &now))
		return;
	floor = l->window_start;
	if (g->has_window && g->window_start > floor)
		floor = g->window_start;	/* a resumed window's floor (snowflake_resume) */
	if (g->minted && g->last_ts > floor)
		floor = g->last_ts;
	if (g->clock_max > floor)
		floor = g->clock_max;
	/* Valid: the clock at or above the floor, 2 ms inside the window's end. */
	if (now < floor || now + 2 > l->window_end)
		return;
	if (st == SOURCE_OK) {
		L.fb_valid += L.counted;
		return;
	}
	if (st != SOURCE_UNAVAILABLE && st != SOURCE_CLOCK)
		return;
	L.fb_valid += L.counted;
	L.failed = true;
	L.failures += L.counted;
	snprintf(L.why, sizeof(L.why), "(F) i%u's fallback refused a take (status %d) at e%" PRIu64
	    " while its lease window of worker %u was valid at its clock for %" PRIu64
	    " ms (%" PRIu64 " ms left, floor %" PRIu64 " ms behind the clock)", *v->who, st, L.ev,
	    l->worker, now - l->window_start, l->window_end - now, now - floor);
}

const char *
live_failed(void)
{
	return L.failed ? L.why : NULL;
}

uint64_t
live_failures(void)
{
	return L.failures;
}

void
live_report(void)
{
	printf("liveness: %" PRIu64 " failures; (T) checked in %" PRIu64 " of %" PRIu64
	    " schedules, %" PRIu64 " healthy intervals, %" PRIu64 " tickets banked in them, "
	    "longest wait %" PRIu64 " ms (bound %" PRIu64 " ms then), nearest its bound %" PRIu64
	    " ms of %" PRIu64 " ms (seed %" PRIu64 "); (F) %" PRIu64 " takes with a valid window%s\n",
	    L.failures, L.t_schedules, L.schedules, L.intervals, L.served, L.longest_us / 1000,
	    L.longest_bound / 1000, L.close_us / 1000, L.close_bound / 1000, L.close_seed,
	    L.fb_valid,
	    live_stall == LIVE_RETRY ? "; --stall retry: lost servers never retried" :
	    live_stall == LIVE_EXTEND ? "; --stall extend: extensions never reach the generator" :
	    "");
}
