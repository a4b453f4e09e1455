/*
 * pool.c - carve buffered ticket blocks into replies.
 */
#include "pool.h"

#include <stdlib.h>

static struct pool_range *pool_at(struct pool *p, unsigned i);
static void	pool_drop_empty(struct pool *p);
static int	pool_cmp_u64(const void *a, const void *b);

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

/* Removes exhausted ranges at the head, and compacts exhausted ones elsewhere. */
static void
pool_drop_empty(struct pool *p)
{
	unsigned i, kept = 0;

	while (p->count > 0 && pool_at(p, 0)->next == pool_at(p, 0)->end) {
		p->head = (p->head + 1) % POOL_RANGES_MAX;
		p->count--;
	}
	for (i = 0; i < p->count; i++) {
		struct pool_range *r = pool_at(p, i);

		if (r->next != r->end)
			*pool_at(p, kept++) = *r;
	}
	p->count = kept;
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

/* Orders uint64_t values for qsort. */
static int
pool_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Takes n IDs from the front, spanning ranges if needed, and returns them ascending. */
bool
pool_take_ids(struct pool *p, unsigned n, uint64_t *out)
{
	unsigned got = 0, i = 0;
	bool sorted = true;

	if (n == 0 || p->available < n)
		return false;
	while (got < n) {
		struct pool_range *r = pool_at(p, i);

		if (r->next == r->end) {
			i++;
			continue;
		}
		if (got > 0 && r->next < out[got - 1])
			sorted = false;
		while (got < n && r->next < r->end)
			out[got++] = r->next++;
		i++;
	}
	p->available -= n;
	pool_drop_empty(p);
	/* Ranges from the odd and even servers interleave; a reply is always ascending. */
	if (!sorted)
		qsort(out, n, sizeof(*out), pool_cmp_u64);
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
			pool_drop_empty(p);
			return true;
		}
	}
	return false;
}

/* Forgets every buffered range. */
uint64_t
pool_clear(struct pool *p)
{
	uint64_t dropped = p->available;

	pool_init(p);
	return dropped;
}
