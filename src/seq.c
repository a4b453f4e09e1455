/*
 * seq.c - a sequence (docs/design.md 13.7): its rate and prefetch target,
 * the rule asking for its next ticket, the write-ahead of a ticket's mark,
 * copy first's verdict and queue, the bank step. Below tier.c,
 * which takes every sequence, the default and each namespace, through it.
 */
#include "seq.h"

#include <inttypes.h>
#include <string.h>

#include "log.h"
#include "statefile.h"

/*
 * The prefetch target: prefetch_blocks blocks at least, or enough IDs for
 * prefetch_lead_ms plus two fetch times at the recent rate, at most
 * prefetch_max_blocks blocks. The rate is a decaying peak, so a burst raises
 * the target at once and it relaxes slowly.
 *
 * Why two fetch times: the target counts IDs in flight, at most one block per
 * server, and a block in flight arrives up to one fetch time F from now. Right
 * after both servers were asked, the pool holds target - 2B and must last F:
 * target >= 2B + rate * F. Near the pair's capacity (rate ~ 2B / F) that is
 * rate * 2F; further below it, prefetch_lead_ms and the floor cover it. With a
 * local pair F is 1-2 ms, so the target is nearly rate * prefetch_lead_ms as
 * before; with the pair 200 ms away (F ~ 430 ms) a lead of prefetch_lead_ms
 * alone let requests wait on refills at 3.5 million IDs/s, three quarters of
 * what two fetches in flight carry (2B / F ~ 4.9 million IDs/s).
 */
void
seq_retarget(struct seq *q, const struct seq_prefetch *p, double fetch_ms, uint64_t b)
{
	double want = q->rate * (p->lead_ms + 2 * fetch_ms) / 1000.0;
	uint64_t lo = p->blocks * b, hi = p->max_blocks * b;

	q->target = want < (double)lo ? lo : want > (double)hi ? hi : (uint64_t)want;
}

/* The rate is a decaying peak of the IDs taken per rate_ms; the target follows it. */
void
seq_sample(struct seq *q, const struct seq_prefetch *p, unsigned rate_ms, double fetch_ms,
    uint64_t b)
{
	double now = (double)(q->taken - q->taken_mark) * (1000.0 / rate_ms);

	q->taken_mark = q->taken;
	q->rate = now > q->rate * 0.9 ? now : q->rate * 0.9;
	seq_retarget(q, p, fetch_ms, b);
}

/*
 * The one rule for every sequence: a waiting request with nothing on its way
 * asks at once; an idle sequence asks for nothing more; else below the target
 * counting what is in flight, or below what a waiting request wants.
 */
bool
seq_need(const struct seq *q, unsigned in_flight, uint64_t b, bool idle)
{
	uint64_t have = pool_available(&q->pool) + in_flight * b;

	if (q->demand && in_flight == 0)
		return true;
	if (idle)
		return false;
	return have < q->target || (q->demand && have < q->want);
}

/* Every sequence's IDs leave its buffer here: the rate is sampled from taken. */
bool
seq_take(struct seq *q, bool block, unsigned n, uint64_t *out)
{
	bool ok = block ? pool_take_block(&q->pool, n, out) : pool_take_ids(&q->pool, n, out);

	if (ok)
		q->taken += n;
	return ok;
}

/* The write whose durability banks the ticket; nothing is banked before it. */
enum seq_written
seq_write_ahead(struct statefile *sf, bool rule_on,
    void (*done)(void *arg, bool ok, uint64_t a, uint64_t ticket), void *arg, uint64_t a,
    uint64_t ticket)
{
	if (!rule_on)
		return SEQ_WRITTEN;
	switch (statefile_save_then(sf, done, arg, a, ticket)) {
	case STATEFILE_QUEUED:
		return SEQ_WRITING;
	case STATEFILE_DURABLE:
		return SEQ_WRITTEN;
	case STATEFILE_FAILED:
		break;
	}
	return SEQ_UNWRITTEN;
}

/* Banked only with a copy at or above need elsewhere, or no other server up. */
enum seq_copy
seq_copy_first(uint64_t copied, uint64_t need, bool other_up, bool rule_on)
{
	if (copied >= need)
		return SEQ_COPY_BANK;
	if (!other_up)
		return SEQ_COPY_ALONE;
	return rule_on ? SEQ_COPY_WAIT : SEQ_COPY_BANK;
}

/* Raised only: a copy never lowers what is known to be there. */
void
seq_landed(struct seq *q, unsigned i, uint64_t v)
{
	if (i < SERVER_MAX && v > q->copied[i])
		q->copied[i] = v;
}

/* In the queue's order: the tickets behind it move up. */
struct seq_wait
seq_wait_take(struct seq_waits *ws, unsigned k)
{
	struct seq_wait w = ws->v[k];

	memmove(&ws->v[k], &ws->v[k + 1], (ws->n - k - 1) * sizeof(ws->v[0]));
	ws->n--;
	return w;
}

/* A full buffer loses the block: a gap, never an ID handed out twice. */
bool
seq_bank(struct pool *pool, uint64_t first, uint64_t n, const char *name, uint64_t ticket)
{
	if (pool_add(pool, first, n))
		return true;
	if (name[0] == '\0')
		log_error("pool full: dropped the block of ticket %llu",
		    (unsigned long long)ticket);
	else
		log_error("namespace %s: pool full: dropped the block of ticket %" PRIu64,
		    name, ticket);
	return false;
}
