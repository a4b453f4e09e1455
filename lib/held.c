/*
 * held.c - carve the ranges a client holds into IDs, lists and blocks.
 */
#include "held.h"

#include <stdlib.h>
#include <string.h>

static int	held_cmp_u64(const void *, const void *);
static void	held_drop_head(struct held *);

bool
held_init(struct held *h, unsigned cap)
{
	memset(h, 0, sizeof(*h));
	if (cap == 0 || (h->r = calloc(cap, sizeof(*h->r))) == NULL)
		return false;
	h->cap = cap;
	return true;
}

void
held_free(struct held *h)
{
	free(h->r);
	memset(h, 0, sizeof(*h));
}

void
held_clear(struct held *h)
{
	h->head = h->n = 0;
	h->ids = 0;
}

uint64_t
held_add(struct held *h, uint64_t first, uint64_t count)
{
	struct held_range	*last;
	uint64_t		 dropped = 0;

	if (count == 0)
		return 0;
	if (h->n > 0) {
		/* Contiguous with the newest range: extend it. */
		last = &h->r[(h->head + h->n - 1) % h->cap];
		if (last->first + last->count == first) {
			last->count += count;
			h->ids += count;
			return 0;
		}
	}
	if (h->n == h->cap) {
		dropped = h->r[h->head].count;
		h->ids -= dropped;
		held_drop_head(h);
	}
	h->r[(h->head + h->n) % h->cap] = (struct held_range){ first, count };
	h->n++;
	h->ids += count;
	return dropped;
}

/* Forgets the oldest range, which is empty. */
static void
held_drop_head(struct held *h)
{
	h->head = (h->head + 1) % h->cap;
	h->n--;
}

uint64_t
held_take(struct held *h, uint64_t max, uint64_t *first)
{
	struct held_range	*r;
	uint64_t		 k;

	if (h->n == 0 || max == 0)
		return 0;
	r = &h->r[h->head];
	k = r->count < max ? r->count : max;
	*first = r->first;
	r->first += k;
	r->count -= k;
	h->ids -= k;
	if (r->count == 0)
		held_drop_head(h);
	return k;
}

/* qsort order of IDs. */
static int
held_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

bool
held_take_list(struct held *h, unsigned n, uint64_t *out)
{
	uint64_t	 first, k, i;
	unsigned	 got = 0;
	bool		 sorted = true;

	if (h->ids < n)
		return false;
	while (got < n) {
		k = held_take(h, n - got, &first);
		if (got > 0 && first <= out[got - 1])
			sorted = false;
		for (i = 0; i < k; i++)
			out[got++] = first + i;
	}
	if (!sorted)
		qsort(out, n, sizeof(*out), held_cmp_u64);
	return true;
}

bool
held_take_block(struct held *h, uint64_t n, uint64_t *first, uint64_t *dropped)
{
	struct held_range	*r;

	*dropped = 0;
	while (h->n > 0) {
		r = &h->r[h->head];
		if (r->count < n) {
			*dropped += r->count;
			h->ids -= r->count;
			held_drop_head(h);
			continue;
		}
		*first = r->first;
		r->first += n;
		r->count -= n;
		h->ids -= n;
		if (r->count == 0)
			held_drop_head(h);
		return true;
	}
	return false;
}
