/*
 * ranges.c - a sorted array of disjoint ID ranges (ranges.h).
 */
#include "ranges.h"

#include <stdlib.h>
#include <string.h>

void
ranges_reset(struct ranges *s)
{
	s->n = 0;
}

void
ranges_free(struct ranges *s)
{
	free(s->r);
	memset(s, 0, sizeof(*s));
}

const struct range *
ranges_add(struct ranges *s, uint64_t lo, uint64_t hi, unsigned who, uint64_t ev)
{
	size_t a = 0, b = s->n;

	/* The first range ending above lo. */
	while (a < b) {
		size_t m = (a + b) / 2;

		if (s->r[m].hi <= lo)
			a = m + 1;
		else
			b = m;
	}
	if (a < s->n && s->r[a].lo < hi)
		return &s->r[a];
	if (a > 0 && s->r[a - 1].hi == lo && s->r[a - 1].who == who) {
		s->r[a - 1].hi = hi;
		return NULL;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		struct range *r = realloc(s->r, cap * sizeof(*r));

		if (r == NULL)
			abort();
		s->r = r;
		s->cap = cap;
	}
	memmove(&s->r[a + 1], &s->r[a], (s->n - a) * sizeof(*s->r));
	s->r[a] = (struct range){ lo, hi, who, ev };
	s->n++;
	return NULL;
}
