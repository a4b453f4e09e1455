/*
 * seq.c - a sequence's rate and prefetch target (docs/design.md 13.7),
 * below tier.c and tier_ns.c, which both sample their sequences here.
 */
#include "seq.h"

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
