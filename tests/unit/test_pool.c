/*
 * test_pool.c - carving buffered ticket blocks: no duplicate, no gap inside a BLOCK,
 * BLOCK never crosses a ticket block, IDS always ascending.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "layout.h"
#include "pool.h"
#include "core.h"

#define B	4096u

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
test_ids_across_blocks(void **state)
{
	struct pool p;
	uint64_t out[CORE_IDS_MAX];
	unsigned i;

	(void)state;
	pool_init(&p);
	assert_true(pool_add(&p, 5 * B, B));
	assert_true(pool_add(&p, 6 * B, B));
	/* Leave 10 in the first block, then IDS 20 spans into the second. */
	for (i = 0; i < B - 10; i++)
		assert_true(pool_take_ids(&p, 1, out));
	assert_int_equal(out[0], 5 * B + B - 11);
	assert_true(pool_take_ids(&p, 20, out));
	for (i = 0; i < 20; i++)
		assert_int_equal(out[i], 5 * B + B - 10 + i);
	assert_int_equal(pool_available(&p), B - 10);
	/* Asking for more than is buffered takes nothing. */
	pool_init(&p);
	assert_true(pool_add(&p, 9 * B, 5));
	assert_false(pool_take_ids(&p, 6, out));
	assert_int_equal(pool_available(&p), 5);
	assert_true(pool_take_ids(&p, 5, out));
	assert_int_equal(out[4], 9 * B + 4);
}

static void
test_ids_sorted_when_blocks_interleave(void **state)
{
	struct pool p;
	uint64_t out[8];
	unsigned i;

	(void)state;
	pool_init(&p);
	/* Odd ticket 9 arrives before even ticket 4: a reply spanning both is sorted. */
	assert_true(pool_add(&p, 9 * B + B - 3, 3));
	assert_true(pool_add(&p, 4 * B, B));
	assert_true(pool_take_ids(&p, 8, out));
	for (i = 1; i < 8; i++)
		assert_true(out[i - 1] < out[i]);
	assert_int_equal(out[0], 4 * B);
	assert_int_equal(out[7], 9 * B + B - 1);
}

static void
test_block_never_crosses(void **state)
{
	struct pool p;
	uint64_t first, out[1];

	(void)state;
	pool_init(&p);
	assert_true(pool_add(&p, 7 * B, B));
	assert_true(pool_add(&p, 8 * B, B));
	assert_true(pool_take_block(&p, B - 100, &first));
	assert_int_equal(first, 7 * B);
	/* 100 left in block 7: BLOCK 200 comes whole from block 8. */
	assert_true(pool_take_block(&p, 200, &first));
	assert_int_equal(first, 8 * B);
	assert_int_equal(layout_ticket_of(first, B), layout_ticket_of(first + 199, B));
	/* The 100 leftovers of block 7 still serve single IDs first. */
	assert_true(pool_take_ids(&p, 1, out));
	assert_int_equal(out[0], 7 * B + B - 100);
	/* No range holds 4096 now: refused, nothing taken. */
	assert_false(pool_take_block(&p, B, &first));
	assert_int_equal(pool_available(&p), 99 + B - 200);
}

static void
test_empty_and_full(void **state)
{
	struct pool p;
	uint64_t first, out[4];
	unsigned i;

	(void)state;
	pool_init(&p);
	assert_false(pool_take_ids(&p, 1, out));
	assert_false(pool_take_block(&p, 1, &first));
	assert_false(pool_add(&p, 100, 0));
	for (i = 0; i < POOL_RANGES_MAX; i++)
		assert_true(pool_add(&p, (uint64_t)(i + 1) * B, B));
	assert_false(pool_add(&p, 1000 * B, B));
	assert_int_equal(pool_clear(&p), (uint64_t)POOL_RANGES_MAX * B);
	assert_int_equal(pool_available(&p), 0);
}

/* Dropping below x: whole ranges below it go, a range across it keeps the rest. */
static void
test_drop_below(void **state)
{
	struct pool p;
	uint64_t out[2];

	(void)state;
	pool_init(&p);
	assert_true(pool_add(&p, 10, 10));	/* 10..19 */
	assert_true(pool_add(&p, 40, 10));	/* 40..49 */
	assert_true(pool_add(&p, 20, 10));	/* 20..29 */
	assert_int_equal(pool_drop_below(&p, 25), 15);
	assert_int_equal(pool_available(&p), 15);
	assert_true(pool_take_ids(&p, 2, out));
	assert_int_equal(out[0], 40);
	assert_int_equal(out[1], 41);
	assert_int_equal(pool_drop_below(&p, 25), 0);
	assert_int_equal(pool_drop_below(&p, 100), 13);
	assert_int_equal(pool_available(&p), 0);
	assert_false(pool_take_ids(&p, 1, out));
}

/* A seeded mix of ID / IDS / BLOCK over many blocks: every ID exactly once. */
static void
test_mixed_no_duplicates(void **state)
{
	enum { NBLOCKS = 48 };
	struct pool p;
	uint64_t *all = malloc(sizeof(uint64_t) * NBLOCKS * B), out[CORE_IDS_MAX], first;
	size_t got = 0, i;
	unsigned added = 0, seed = 12345;

	(void)state;
	assert_non_null(all);
	pool_init(&p);
	while (added < NBLOCKS || pool_available(&p) > 0) {
		unsigned kind, n;

		if (added < NBLOCKS && pool_available(&p) < 2 * B) {
			/* Alternate odd and even tickets that drift apart, like a real pair. */
			uint64_t t = added % 2 ? 1001 + added : 2 + added;

			assert_true(pool_add(&p, t * B, B));
			added++;
		}
		seed = seed * 1103515245u + 12345u;
		kind = (seed >> 16) % 3;
		n = 1 + (seed >> 4) % (kind == 2 ? CORE_BLOCK_MAX : CORE_IDS_MAX);
		if (kind == 0)
			n = 1;
		if (kind == 2) {
			if (!pool_take_block(&p, n, &first)) {
				if (added == NBLOCKS)
					n = 1, kind = 1;
				else
					continue;
			} else {
				assert_int_equal(layout_ticket_of(first, B),
				    layout_ticket_of(first + n - 1, B));
				for (i = 0; i < n; i++)
					all[got++] = first + i;
				continue;
			}
		}
		if (n > pool_available(&p))
			n = (unsigned)pool_available(&p);
		if (n == 0)
			continue;
		assert_true(pool_take_ids(&p, n, out));
		for (i = 0; i < n; i++) {
			if (i > 0)
				assert_true(out[i - 1] < out[i]);
			all[got++] = out[i];
		}
	}
	assert_int_equal(got, (size_t)NBLOCKS * B);
	qsort(all, got, sizeof(*all), cmp_u64);
	for (i = 1; i < got; i++)
		assert_true(all[i - 1] < all[i]);
	free(all);
}

/*
 * BLOCK 1000 only, from blocks of 4096: each block leaves a 96-ID fragment
 * that no BLOCK can use. With the tier's policy (make room before adding when
 * nearly full) the queue never fills up and every BLOCK is served.
 */
static void
test_fragments_never_block_refills(void **state)
{
	struct pool p;
	uint64_t first, prev_end = 0, dropped = 0, served = 0;
	unsigned t = 1, round;

	(void)state;
	pool_init(&p);
	for (round = 0; round < 400; round++) {
		while (!pool_take_block(&p, 1000, &first)) {
			if (p.count >= POOL_RANGES_ROOM)
				dropped += pool_make_room(&p);
			assert_true(p.count < POOL_RANGES_MAX);
			assert_true(pool_add(&p, (uint64_t)t++ * B, B));
		}
		/* Blocks come in ascending order here: BLOCK replies never overlap. */
		assert_true(first >= prev_end);
		prev_end = first + 1000;
		served += 1000;
	}
	assert_true(dropped > 0);		/* fragments were shed ... */
	assert_true(dropped % 96 == 0);		/* ... and only fragments */
	assert_int_equal(served + dropped + pool_available(&p), (uint64_t)(t - 1) * B);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_across_blocks),
		cmocka_unit_test(test_ids_sorted_when_blocks_interleave),
		cmocka_unit_test(test_block_never_crosses),
		cmocka_unit_test(test_empty_and_full),
		cmocka_unit_test(test_drop_below),
		cmocka_unit_test(test_mixed_no_duplicates),
		cmocka_unit_test(test_fragments_never_block_refills),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
