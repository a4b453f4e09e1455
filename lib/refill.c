/*
 * refill.c - the refill thread a client owns: the rate, the target, and the
 * loop that fetches below it.
 */
#include "refill.h"

#include "client_impl.h"
#include "clk.h"
#include "gen.h"
#include "round.h"

#include <pthread.h>
#include <signal.h>

#define REFILL_IDLE_MS		50	/* refill thread re-reads the rate this often */
#define REFILL_RATE_MIN_MS	20	/* shortest interval a rate is measured over */

static void	refill_rate(struct idgen_client *, uint64_t);
static void	*refill_main(void *);

/* Started on the first call that needs IDs: a client opened before a fork costs nothing. */
bool
refill_start(struct idgen_client *c)
{
	sigset_t	 all, old;
	int		 rc;

	if (c->thread_on)
		return true;
	/* A generator's thread keeps its lease instead (gen.c). */
	if (c->gen != NULL && !c->hybrid && !gen_start(c->gen))
		return false;
	/* Signals stay with the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = c->gen != NULL && !c->hybrid ? pthread_create(&c->thread, NULL, gen_main, c->gen) :
	    pthread_create(&c->thread, NULL, refill_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return false;
	c->thread_on = true;
	c->stopping = false;
	return true;
}

/* Re-reads the consumption rate and sets the refill target (mutex held). */
static void
refill_rate(struct idgen_client *c, uint64_t now)
{
	double		 r, t;

	if (c->rate_t == 0)
		c->rate_t = now;
	if (now - c->rate_t < REFILL_RATE_MIN_MS)
		return;
	r = (double)c->taken * 1000.0 / (double)(now - c->rate_t);
	c->rate = c->rate > 0 ? (c->rate + r) / 2 : r;
	c->taken = 0;
	c->rate_t = now;
	t = c->rate * c->o.lead_ms / 1000.0;
	if (t < (double)c->o.min_held)
		t = (double)c->o.min_held;
	/* Room above the target for half again (see refill_main). */
	if (t > (double)c->o.max_held * 2 / 3)
		t = (double)c->o.max_held * 2 / 3;
	if (t < (double)c->o.min_held)
		t = (double)c->o.min_held;
	c->target = (uint64_t)t;
}

/* The refill thread: keeps the held IDs above the target. */
static void *
refill_main(void *arg)
{
	struct idgen_client	*c = arg;
	struct timespec		 ts;
	uint64_t		 now, need, high, wait_ms;
	unsigned		 nblocks, got, i;

	pthread_mutex_lock(&c->mu);
	while (!c->stopping) {
		now = clk_mono_ms();
		refill_rate(c, now);
		if (c->held.ids >= c->target && c->rounds >= c->want_round) {
			ts = clk_mono_deadline(REFILL_IDLE_MS);
			pthread_cond_timedwait(&c->wake, &c->mu, &ts);
			continue;
		}
		/* Up to half again the target: batches stay large at high rates. */
		high = c->target + c->target / 2;
		if (high > c->o.max_held)
			high = c->o.max_held;
		need = c->held.ids < high ? high - c->held.ids : 1;
		need = (need + c->o.fetch_ids - 1) / c->o.fetch_ids;
		nblocks = need > c->o.max_batch ? c->o.max_batch : (unsigned)need;
		pthread_mutex_unlock(&c->mu);
		got = round_fetch(c, nblocks);
		pthread_mutex_lock(&c->mu);
		/* A full ring drops its oldest range: lost IDs, never reused ones. */
		for (i = 0; i < got; i++)
			c->st.ids_dropped += held_add(&c->held, c->got[i].first,
			    c->got[i].count);
		c->rounds++;
		/* A list with a tier: its own lease only while no idserver answers. */
		if (c->hybrid && got > 0)
			gen_fallback_off(c->gen);
		else if (c->hybrid && c->all_down && !c->stopping)
			(void)gen_fallback_on(c->gen);
		pthread_cond_broadcast(&c->filled);
		if (c->all_down && !c->stopping) {
			now = clk_mono_ms();
			wait_ms = c->retry_at > now ? c->retry_at - now : 1;
			ts = clk_mono_deadline(wait_ms);
			pthread_cond_timedwait(&c->wake, &c->mu, &ts);
		}
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}
