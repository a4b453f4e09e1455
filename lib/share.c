/*
 * share.c - libidgen's calls that hand IDs out: idgen_next, idgen_ids and
 * idgen_block take from the calling thread's share (thread-local, no lock:
 * the idgen_next fast path), then from the client's held ranges under its
 * mutex, waiting for the refill thread when those run out.
 */
#include "client_impl.h"
#include "clk.h"
#include "epoch.h"
#include "errmsg.h"
#include "gen.h"
#include "refill.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#define SHARE_SLOTS		8	/* clients a thread keeps a share of */

/* A thread's share of one client: [next, end), valid in process epoch. */
struct share {
	uint64_t	 serial;
	uint64_t	 epoch;
	uint64_t	 next;
	uint64_t	 end;
};

static _Thread_local struct share	 share_tl[SHARE_SLOTS];

static void	share_took(struct idgen_client *, uint64_t);
static int	share_wait(struct idgen_client *, uint64_t *);
static int	share_wait_both(struct idgen_client *, uint64_t *);
static struct share *share_of(struct idgen_client *);
static int	share_next_slow(struct idgen_client *, uint64_t *);
static bool	share_take(struct idgen_client *, unsigned, uint64_t *);
static unsigned	share_take_some(struct idgen_client *, unsigned, uint64_t *, int *);
static bool	share_take_gen(struct idgen_client *, unsigned, uint64_t *, bool, int *);
static int	share_cmp(const void *, const void *);
static int	share_take_held(struct idgen_client *, unsigned, uint64_t *, bool);

/* Counts IDs leaving the held ranges; wakes the refill thread (mutex held). */
static void
share_took(struct idgen_client *c, uint64_t n)
{
	c->taken += n;
	if (c->held.ids < c->target)
		pthread_cond_signal(&c->wake);
}

/*
 * Waits (mutex held) for a refill after a take failed: IDGEN_OK to try
 * again, or why not. *deadline is set on the first call.
 */
static int
share_wait(struct idgen_client *c, uint64_t *deadline)
{
	struct timespec	 ts;
	uint64_t	 now = clk_mono_ms(), seen;

	if (c->hybrid)
		return share_wait_both(c, deadline);
	if (c->gen != NULL) {
		/* Started here: gen.c lies below refill.c, which runs its thread. */
		if (!refill_start(c))
			return errmsg_set(IDGEN_ENOMEM, "cannot start the lease thread");
		return gen_wait(c->gen, deadline);
	}
	if (*deadline == 0)
		*deadline = now + c->o.timeout_ms;
	if (!refill_start(c))
		return errmsg_set(IDGEN_ENOMEM, "cannot start the refill thread");
	if (c->all_down && now < c->retry_at && c->nons)
		return errmsg_set(IDGEN_ENONS, "namespace %s is unknown to the idservers: %s",
		    c->ns, c->lasterr);
	if (c->all_down && now < c->retry_at)
		return errmsg_set(IDGEN_EUNAVAILABLE, "no IDs held and no idserver "
		    "could give any: %s", c->lasterr);
	if (now >= *deadline) {
		if (c->trying_since != 0)
			return errmsg_set(IDGEN_ETIMEOUT, "no IDs arrived within %u ms "
			    "(timeout_ms): %s has not answered for %llu ms%s%s",
			    c->o.timeout_ms, c->eps[c->trying].w.name,
			    (unsigned long long)(now - c->trying_since),
			    c->lasterr[0] ? "; before: " : "", c->lasterr);
		return errmsg_set(IDGEN_ETIMEOUT, "no IDs arrived within %u ms "
		    "(timeout_ms)%s%s", c->o.timeout_ms, c->lasterr[0] ? "; last "
		    "failure: " : "", c->lasterr);
	}
	/* A round that ends after this point: IDs, or news of a failure. */
	seen = c->rounds;
	if (c->want_round < seen + 1)
		c->want_round = seen + 1;
	pthread_cond_signal(&c->wake);
	while (c->rounds == seen && c->thread_on && (now = clk_mono_ms()) < *deadline) {
		ts = clk_mono_deadline(*deadline - now);
		pthread_cond_timedwait(&c->filled, &c->mu, &ts);
	}
	return IDGEN_OK;
}

/*
 * share_wait for a list of idservers and a tier (docs/design.md 11.8): no
 * error while either path may still give IDs. It fails at once only when no
 * idserver answered and a claim round ended with no lease, else at the
 * deadline; it waits for a refill round or a lease change, whichever comes.
 */
static int
share_wait_both(struct idgen_client *c, uint64_t *deadline)
{
	struct timespec	 ts;
	uint64_t	 now = clk_mono_ms(), seen, seen_gen;
	const char	*why;

	if (*deadline == 0)
		*deadline = now + c->o.timeout_ms;
	if (!refill_start(c))
		return errmsg_set(IDGEN_ENOMEM, "cannot start the refill thread");
	if (c->all_down && now < c->retry_at && gen_failed(c->gen, &why))
		return errmsg_set(IDGEN_EUNAVAILABLE, "no IDs held, no idserver could give "
		    "any (%s) and no Snowflake lease: %s", c->lasterr, why);
	if (now >= *deadline) {
		(void)gen_failed(c->gen, &why);
		return errmsg_set(IDGEN_ETIMEOUT, "no IDs within %u ms (timeout_ms): "
		    "idservers: %s; lease: %s", c->o.timeout_ms, c->lasterr[0] ? c->lasterr :
		    "none failed", gen_fallback_live(c->gen) ? "claiming" : why);
	}
	seen = c->rounds;
	seen_gen = gen_events(c->gen);
	/* A round now, unless every idserver waits out its retry delay (the lease's turn). */
	if (!c->all_down || now >= c->retry_at) {
		if (c->want_round < seen + 1)
			c->want_round = seen + 1;
		pthread_cond_signal(&c->wake);
	}
	while (c->rounds == seen && gen_events(c->gen) == seen_gen && c->thread_on &&
	    (now = clk_mono_ms()) < *deadline) {
		ts = clk_mono_deadline(*deadline - now);
		pthread_cond_timedwait(&c->filled, &c->mu, &ts);
	}
	return IDGEN_OK;
}

/* This thread's share of c, moved to the first slot. */
static struct share *
share_of(struct idgen_client *c)
{
	struct share		 t;
	unsigned		 i;

	for (i = 0; i < SHARE_SLOTS - 1; i++)
		if (share_tl[i].serial == c->serial)
			break;
	/* Not found: the last slot's share is given up (those IDs are lost). */
	t = share_tl[i];
	if (t.serial != c->serial)
		t = (struct share){ c->serial, 0, 0, 0 };
	memmove(&share_tl[1], &share_tl[0], i * sizeof(share_tl[0]));
	share_tl[0] = t;
	return &share_tl[0];
}

/* idgen_next when the thread's share is empty, stale or elsewhere. */
static int
share_next_slow(struct idgen_client *c, uint64_t *id)
{
	struct share		*t = share_of(c);
	uint64_t		 first, k, deadline = 0;
	int			 rc;

	if (t->next < t->end && t->epoch == epoch_current()) {
		*id = t->next++;
		return IDGEN_OK;
	}
	pthread_mutex_lock(&c->mu);
	for (;;) {
		epoch_check(c);
		if ((k = share_take_some(c, c->o.chunk, &first, &rc)) > 0)
			break;
		if (rc != IDGEN_OK || (rc = share_wait(c, &deadline)) != IDGEN_OK) {
			pthread_mutex_unlock(&c->mu);
			return rc;
		}
	}
	share_took(c, k);
	t->epoch = c->epoch;
	pthread_mutex_unlock(&c->mu);
	*id = first;
	t->next = first + 1;
	t->end = first + k;
	return IDGEN_OK;
}

/*
 * Up to want dense IDs for a share (mutex held): from the held ranges, or
 * minted by the generator; 0 with *rc an error, or IDGEN_OK to wait.
 */
static unsigned
share_take_some(struct idgen_client *c, unsigned want, uint64_t *first, int *rc)
{
	uint64_t	 k;

	*rc = IDGEN_OK;
	if (c->gen != NULL && !c->hybrid)
		return gen_take(c->gen, want, false, first, rc);
	if ((k = held_take(&c->held, want, first)) > 0 || !c->hybrid)
		return (unsigned)k;
	/* None held: the lease's window, if an episode holds one. */
	return gen_take(c->gen, want, false, first, rc);
}

/*
 * n IDs minted by the generator (mutex held): a dense block of one
 * millisecond, or a list, ascending (a new worker number may mint lower
 * IDs than the last one's: sorted). False with *rc IDGEN_OK to wait.
 */
static bool
share_take_gen(struct idgen_client *c, unsigned n, uint64_t *out, bool block, int *rc)
{
	uint64_t	 first;
	unsigned	 got = 0, k, i;

	if (block)
		return gen_take(c->gen, n, true, out, rc) == n;
	while (got < n) {
		if ((k = gen_take(c->gen, n - got, false, &first, rc)) == 0)
			return false;	/* those minted are dropped: gaps, never reuse */
		for (i = 0; i < k; i++)
			out[got + i] = first + i;
		got += k;
	}
	for (i = 1; i < n; i++)
		if (out[i] <= out[i - 1]) {
			qsort(out, n, sizeof(*out), share_cmp);
			break;
		}
	return true;
}

static int
share_cmp(const void *a, const void *b)
{
	uint64_t	 x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One ID: from this thread's share with no lock while it lasts and is this process's. */
IDGEN_EXPORT int
idgen_next(idgen_client *c, uint64_t *id)
{
	struct share	*t = &share_tl[0];

	if (LIKELY(t->serial == c->serial && t->next < t->end &&
	    t->epoch == atomic_load_explicit(epoch_page, memory_order_relaxed))) {
		*id = t->next++;
		return IDGEN_OK;
	}
	return share_next_slow(c, id);
}

/* Takes n dense IDs from this thread's share of c, if it holds that many now. */
static bool
share_take(struct idgen_client *c, unsigned n, uint64_t *first)
{
	struct share	*t = share_of(c);

	if (t->end - t->next < n || t->epoch != epoch_current())
		return false;
	*first = t->next;
	t->next += n;
	return true;
}

/*
 * Takes n IDs from the held ranges, waiting for refills: a dense block at
 * *out (block), or an ascending list in out[0..n).
 */
static int
share_take_held(struct idgen_client *c, unsigned n, uint64_t *out, bool block)
{
	uint64_t	 deadline = 0, dropped = 0;
	bool		 ok;
	int		 rc;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		epoch_check(c);
		rc = IDGEN_OK;
		if (c->gen != NULL && !c->hybrid)
			ok = share_take_gen(c, n, out, block, &rc);
		else if (block) {
			ok = held_take_block(&c->held, n, out, &dropped);
			c->st.ids_dropped += dropped;
		} else
			ok = held_take_list(&c->held, n, out);
		/* A list's tier: minted when the held IDs do not cover the call. */
		if (!ok && c->hybrid)
			ok = share_take_gen(c, n, out, block, &rc);
		if (ok)
			break;
		/* For a block, IDs may be held in pieces smaller than n. */
		if (rc != IDGEN_OK || (rc = share_wait(c, &deadline)) != IDGEN_OK) {
			pthread_mutex_unlock(&c->mu);
			return rc;
		}
	}
	share_took(c, n);
	pthread_mutex_unlock(&c->mu);
	return IDGEN_OK;
}

/* n IDs, ascending: from the share when it holds n, else from the held ranges. */
IDGEN_EXPORT int
idgen_ids(idgen_client *c, unsigned n, uint64_t *out)
{
	uint64_t	 first;
	unsigned	 i;

	if (n < 1 || n > IDGEN_IDS_MAX || out == NULL)
		return errmsg_set(IDGEN_EINVAL, "ids: n is 1..%d", IDGEN_IDS_MAX);
	if (share_take(c, n, &first)) {
		for (i = 0; i < n; i++)
			out[i] = first + i;
		return IDGEN_OK;
	}
	return share_take_held(c, n, out, false);
}

/* n dense IDs: from the share when it holds n, else a prefix of the oldest held range. */
IDGEN_EXPORT int
idgen_block(idgen_client *c, unsigned n, uint64_t *first)
{
	if (n < 1 || n > c->o.fetch_ids || first == NULL)
		return errmsg_set(IDGEN_EINVAL, "block: n is 1..%u (fetch_ids)",
		    c->o.fetch_ids);
	if (share_take(c, n, first))
		return IDGEN_OK;
	return share_take_held(c, n, first, true);
}
