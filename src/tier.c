/*
 * tier.c - prefetch ticket blocks from the odd/even pair into the pool.
 */
#include "tier.h"

#include <stdio.h>
#include <string.h>

#include "layout.h"
#include "log.h"

static bool	tier_notify(struct ticket_server *s, enum ticket_event ev, uint64_t ticket,
		    void *arg);
static unsigned	tier_in_flight(const struct tier *t);
static void	tier_rate_cb(evutil_socket_t fd, short what, void *arg);
static void	tier_retarget(struct tier *t);

#define TIER_RATE_MS	100	/* how often the request rate is sampled */

/* Sets up both servers from the config; nothing connects until tier_start(). */
bool
tier_init(struct tier *t, struct event_base *base, const struct config *cfg,
    void (*on_change)(void *), void *arg)
{
	struct db_params p;

	memset(t, 0, sizeof(*t));
	memset(&p, 0, sizeof(p));
	pool_init(&t->pool);
	t->expect_block = cfg->block_size;
	t->prefetch_blocks = cfg->prefetch_blocks;
	t->prefetch_max_blocks = cfg->prefetch_max_blocks;
	t->prefetch_lead_ms = cfg->prefetch_lead_ms;
	t->rate_tick = event_new(base, -1, EV_PERSIST, tier_rate_cb, t);
	if (t->rate_tick == NULL)
		return false;
	t->on_change = on_change;
	t->arg = arg;
	t->last_used = TIER_EVEN;
	p.user = cfg->db_user;
	p.password = cfg->db_password;
	p.database = cfg->db_name;
	p.connect_timeout_ms = cfg->connect_timeout_ms;
	p.query_timeout_ms = cfg->query_timeout_ms;
	p.host = cfg->odd_host;
	p.port = cfg->odd_port;
	if (!ticket_init(&t->srv[TIER_ODD], base, &p, 1, cfg->reprobe_min_ms,
	    cfg->reprobe_max_ms, tier_notify, t))
		return false;
	p.host = cfg->even_host;
	p.port = cfg->even_port;
	return ticket_init(&t->srv[TIER_EVEN], base, &p, 0, cfg->reprobe_min_ms,
	    cfg->reprobe_max_ms, tier_notify, t);
}

void
tier_free(struct tier *t)
{
	if (t->rate_tick != NULL)
		event_free(t->rate_tick);
	ticket_free(&t->srv[TIER_ODD]);
	ticket_free(&t->srv[TIER_EVEN]);
}

void
tier_start(struct tier *t)
{
	struct timeval tv = { 0, TIER_RATE_MS * 1000 };

	event_add(t->rate_tick, &tv);
	ticket_start(&t->srv[TIER_ODD]);
	ticket_start(&t->srv[TIER_EVEN]);
}

/*
 * The prefetch target: prefetch_blocks blocks at least, or prefetch_lead_ms of
 * IDs at the recent rate, at most prefetch_max_blocks blocks. The rate is a
 * decaying peak, so a burst raises the target at once and it relaxes slowly.
 */
static void
tier_retarget(struct tier *t)
{
	double want = t->rate * t->prefetch_lead_ms / 1000.0;
	uint64_t lo = t->prefetch_blocks * t->block_size;
	uint64_t hi = t->prefetch_max_blocks * t->block_size;

	t->target = want < (double)lo ? lo : want > (double)hi ? hi : (uint64_t)want;
}

/* Samples the rate of IDs handed out from the pool. */
static void
tier_rate_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tier *t = arg;
	double now = (double)(t->taken - t->taken_mark) * (1000.0 / TIER_RATE_MS);

	(void)fd;
	(void)what;
	t->taken_mark = t->taken;
	t->rate = now > t->rate * 0.9 ? now : t->rate * 0.9;
	tier_retarget(t);
	tier_prefetch(t);
}

/* Tickets requested and not yet answered. */
static unsigned
tier_in_flight(const struct tier *t)
{
	return (t->srv[TIER_ODD].state == TICKET_FETCHING) +
	    (t->srv[TIER_EVEN].state == TICKET_FETCHING);
}

bool
tier_any_up(const struct tier *t)
{
	int i;

	for (i = 0; i < 2; i++)
		if (t->srv[i].state == TICKET_READY || t->srv[i].state == TICKET_FETCHING)
			return true;
	return false;
}

bool
tier_settled(const struct tier *t)
{
	int i;

	for (i = 0; i < 2; i++)
		if (t->srv[i].state == TICKET_CONNECTING)
			return false;
	return true;
}

/*
 * Keeps the target (tier_retarget) buffered or in flight, one request per
 * server, alternating so both carry load. A waiting BLOCK that no buffered
 * range can hold (demand) gets a fetch even when the count looks sufficient.
 */
void
tier_prefetch(struct tier *t)
{
	int tries;

	if (t->block_size == 0)
		return;
	for (tries = 0; tries < 2; tries++) {
		uint64_t have = pool_available(&t->pool) + tier_in_flight(t) * t->block_size;
		unsigned next = t->last_used ^ 1;
		struct ticket_server *s;

		if (have >= t->target && !(t->demand && tier_in_flight(t) == 0))
			return;
		/* Fragments that BLOCKs skipped must not stop the refills. */
		if (t->pool.count >= POOL_RANGES_ROOM)
			t->ids_dropped += pool_make_room(&t->pool);
		s = &t->srv[next];
		if (s->state != TICKET_READY) {
			next ^= 1;
			s = &t->srv[next];
		}
		if (s->state != TICKET_READY || !ticket_fetch(s))
			return;
		t->last_used = next;
	}
}

/* Takes n IDs from the pool and keeps prefetching. */
bool
tier_take_ids(struct tier *t, unsigned n, uint64_t *out)
{
	bool ok = pool_take_ids(&t->pool, n, out);

	if (ok)
		t->taken += n;
	tier_prefetch(t);
	return ok;
}

/* Takes a dense block; a miss raises demand so a whole fresh block is fetched. */
bool
tier_take_block(struct tier *t, unsigned n, uint64_t *first)
{
	bool ok = pool_take_block(&t->pool, n, first);

	if (ok)
		t->taken += n;
	else
		t->demand = true;
	tier_prefetch(t);
	return ok;
}

/* Server events: agree on B, bank tickets, wake waiting clients. */
static bool
tier_notify(struct ticket_server *s, enum ticket_event ev, uint64_t ticket, void *arg)
{
	struct tier *t = arg;
	struct ticket_server *partner = &t->srv[s->parity ? TIER_EVEN : TIER_ODD];
	char why[256];

	switch (ev) {
	case TICKET_EV_UP:
		if (t->expect_block != 0 && s->block_size != t->expect_block) {
			snprintf(why, sizeof(why), "idgen_meta.block_size is %llu but block_size "
			    "is set to %llu", (unsigned long long)s->block_size,
			    (unsigned long long)t->expect_block);
			ticket_refuse(s, why);
			return false;
		}
		if (t->block_size != 0 && s->block_size != t->block_size) {
			snprintf(why, sizeof(why), "idgen_meta.block_size is %llu but the %s "
			    "server's is %llu: both servers must use the same B",
			    (unsigned long long)s->block_size, partner->role,
			    (unsigned long long)t->block_size);
			ticket_refuse(s, why);
			return false;
		}
		t->block_size = s->block_size;
		tier_retarget(t);
		break;
	case TICKET_EV_TICKET:
		if (!pool_add(&t->pool, layout_ticket_first(ticket, t->block_size),
		    t->block_size)) {
			/* Cannot happen with the prefetch bound; losing a block is only a gap. */
			t->ids_dropped += t->block_size;
			log_error("pool full: dropped the block of ticket %llu",
			    (unsigned long long)ticket);
		}
		t->demand = false;
		t->banked++;
		break;
	case TICKET_EV_DOWN:
	case TICKET_EV_REFUSED:
		break;
	}
	tier_prefetch(t);
	t->on_change(t->arg);
	return true;
}
