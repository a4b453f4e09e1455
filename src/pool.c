/*
 * pool.c - carve buffered ticket blocks into replies.
 */
#include "pool.h"

static struct pool_range *pool_at(struct pool *p, unsigned i);
static void	pool_drop_head(struct pool *p);
static void	pool_drop_at(struct pool *p, unsigned i);

/* Empties the pool. */
void
pool_init(struct pool *p)
{
	p->head = 0;
	p->count = 0;
	p->available = 0;
}

/* The i-th range counted from the head. */
static struct pool_range *
pool_at(struct pool *p, unsigned i)
{
	return &p->r[(p->head + i) % POOL_RANGES_MAX];
}

/* Removes exhausted ranges at the head: where ID and IDS consume. */
static void
pool_drop_head(struct pool *p)
{
	while (p->count > 0 && pool_at(p, 0)->next == pool_at(p, 0)->end) {
		p->head = (p->head + 1) % POOL_RANGES_MAX;
		p->count--;
	}
}

/* Removes the exhausted range at index i (a BLOCK may empty one mid-queue). */
static void
pool_drop_at(struct pool *p, unsigned i)
{
	for (; i + 1 < p->count; i++)
		*pool_at(p, i) = *pool_at(p, i + 1);
	p->count--;
}

/* Appends a range at the tail. */
bool
pool_add(struct pool *p, uint64_t first, uint64_t n)
{
	struct pool_range *r;

	if (n == 0 || p->count == POOL_RANGES_MAX)
		return false;
	r = pool_at(p, p->count);
	r->next = first;
	r->end = first + n;
	p->count++;
	p->available += n;
	return true;
}

/* IDs buffered in all ranges. */
uint64_t
pool_available(const struct pool *p)
{
	return p->available;
}

/*
 * Takes n IDs from the front, spanning ranges if needed, and returns them
 * ascending. Ranges are disjoint blocks, so ordering the pieces taken by their
 * start orders the IDs: no sort of the IDs themselves, no allocation.
 */
bool
pool_take_ids(struct pool *p, unsigned n, uint64_t *out)
{
	struct pool_range piece[POOL_RANGES_MAX];
	unsigned got = 0, i, k, npieces = 0;

	if (n == 0 || p->available < n)
		return false;
	for (i = 0; got < n; i++) {
		struct pool_range *r = pool_at(p, i);
		uint64_t take = r->end - r->next;

		if (take > n - got)
			take = n - got;
		if (take == 0)
			continue;
		/* Odd and even blocks interleave: keep the pieces ordered by start. */
		for (k = npieces; k > 0 && piece[k - 1].next > r->next; k--)
			piece[k] = piece[k - 1];
		piece[k].next = r->next;
		piece[k].end = r->next + take;
		npieces++;
		r->next += take;
		got += (unsigned)take;
	}
	p->available -= n;
	pool_drop_head(p);
	for (got = 0, k = 0; k < npieces; k++)
		for (uint64_t id = piece[k].next; id < piece[k].end; id++)
			out[got++] = id;
	return true;
}

/* Takes n dense IDs from the first range that still holds n of them. */
bool
pool_take_block(struct pool *p, uint64_t n, uint64_t *first)
{
	unsigned i;

	if (n == 0)
		return false;
	for (i = 0; i < p->count; i++) {
		struct pool_range *r = pool_at(p, i);

		if (r->end - r->next >= n) {
			*first = r->next;
			r->next += n;
			p->available -= n;
			if (r->next == r->end)
				pool_drop_at(p, i);
			return true;
		}
	}
	return false;
}

/* Sheds the smallest ranges, fragments first, down to POOL_RANGES_ROOM. */
uint64_t
pool_make_room(struct pool *p)
{
	uint64_t dropped = 0;

	while (p->count > POOL_RANGES_ROOM) {
		unsigned i, min = 0;

		for (i = 1; i < p->count; i++)
			if (pool_at(p, i)->end - pool_at(p, i)->next <
			    pool_at(p, min)->end - pool_at(p, min)->next)
				min = i;
		dropped += pool_at(p, min)->end - pool_at(p, min)->next;
		p->available -= pool_at(p, min)->end - pool_at(p, min)->next;
		pool_drop_at(p, min);
	}
	return dropped;
}

/* Forgets every buffered range. */
uint64_t
pool_clear(struct pool *p)
{
	uint64_t dropped = p->available;

	pool_init(p);
	return dropped;
}

/* Forgets every buffered ID below x: a range across it keeps its part from x on. */
uint64_t
pool_drop_below(struct pool *p, uint64_t x)
{
	uint64_t dropped = 0;

	for (unsigned i = p->count; i-- > 0;) {
		struct pool_range *r = pool_at(p, i);
		uint64_t cut;

		if (r->next >= x)
			continue;
		cut = (r->end < x ? r->end : x) - r->next;
		dropped += cut;
		p->available -= cut;
		r->next += cut;
		if (r->next == r->end)
			pool_drop_at(p, i);
	}
	return dropped;
}
