/*
 * test_snowflake.c - unit tests for the Snowflake fallback generator.
 *
 * The clock is a plain variable (fake_now) the tests move by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "snowflake.h"

#define T0		(LAYOUT_TS_MIN + UINT64_C(1000000))	/* a sane "now" */
#define TOLERANCE	5
#define CLOCK_WAIT	1000
#define WORKER		517
#define MANY_MS		24
#define MANY_IDS	(MANY_MS * LAYOUT_SEQ_COUNT)

static uint64_t	fake_now;
static uint64_t	collected[MANY_IDS];

static void	gen_setup(struct snowflake *, unsigned, uint64_t, uint64_t);
static struct snowflake_range take_ok(struct snowflake *, unsigned, bool);
static int	cmp_u64(const void *, const void *);

/* Initialises g with the test tolerance and a window for worker. */
static void
gen_setup(struct snowflake *g, unsigned worker, uint64_t start, uint64_t end)
{
	struct snowflake_config cfg = { .backstep_tolerance_ms = TOLERANCE,
	    .clock_wait_ms = CLOCK_WAIT };

	snowflake_init(g, &cfg);
	snowflake_set_window(g, worker, start, end);
}

/* Takes at fake_now and insists on SNOWFLAKE_OK. */
static struct snowflake_range
take_ok(struct snowflake *g, unsigned want, bool all_or_nothing)
{
	struct snowflake_range r;

	assert_int_equal(snowflake_take(g, fake_now, want, all_or_nothing, &r),
	    SNOWFLAKE_OK);
	assert_true(r.count >= 1);
	return r;
}

/* qsort comparator for uint64_t. */
static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Without a window nothing is minted and the refusal is counted. */
static void
test_no_window_unavailable(void **state)
{
	struct snowflake_config cfg = { .backstep_tolerance_ms = TOLERANCE,
	    .clock_wait_ms = CLOCK_WAIT };
	struct snowflake g;
	struct snowflake_range r = { 99, 99 };

	(void)state;
	snowflake_init(&g, &cfg);
	assert_int_equal(snowflake_take(&g, T0, 1, false, &r),
	    SNOWFLAKE_UNAVAILABLE);
	assert_true(r.first == 0 && r.count == 0);
	assert_true(g.counters.window_refusals == 1);
	assert_true(g.counters.ids == 0);
	assert_true(snowflake_last_ts(&g) == 0);
}

/* Fields of a minted ID decode back to the worker, ts and sequence used. */
static void
test_fields_decode(void **state)
{
	struct snowflake g;
	struct snowflake_range r;
	struct layout_snowflake s;

	(void)state;
	gen_setup(&g, WORKER, T0, T0 + 100);
	fake_now = T0 + 7;
	r = take_ok(&g, 3, false);
	assert_int_equal(r.count, 3);
	s = layout_snowflake_split(r.first);
	assert_true(s.ts == T0 + 7);
	assert_int_equal(s.worker, WORKER);
	assert_int_equal(s.seq, 0);

	r = take_ok(&g, 2, false);
	s = layout_snowflake_split(r.first + r.count - 1);
	assert_true(s.ts == T0 + 7);
	assert_int_equal(s.worker, WORKER);
	assert_int_equal(s.seq, 4);
	assert_int_equal(layout_region(r.first), LAYOUT_SNOWFLAKE);
	assert_true(snowflake_last_ts(&g) == T0 + 7);
	assert_true(g.counters.ids == 5);
}

/*
 * Mints everything over many milliseconds in uneven chunks, through sequence
 * overflow and a small backward step: every ID strictly above the previous.
 */
static void
test_ascending_across_overflow(void **state)
{
	static const unsigned chunks[] = { 1, 7, 1000, 4096, 3, 333, 2048 };
	struct snowflake g;
	struct snowflake_range r;
	struct layout_snowflake s;
	enum snowflake_status st;
	size_t n = 0, i, c = 0;
	unsigned k, waits = 0;
	bool stepped = false;
	uint64_t end = T0 + MANY_MS - 1;

	(void)state;
	gen_setup(&g, WORKER, T0, end);
	fake_now = T0;
	for (;;) {
		/* Each call mints or moves the clock, so this many always do. */
		assert_true(c < 2 * MANY_IDS);
		st = snowflake_take(&g, fake_now, chunks[c++ % 7], false, &r);
		if (st == SNOWFLAKE_UNAVAILABLE)
			break;
		if (st == SNOWFLAKE_WAIT) {
			waits++;
			assert_true(r.count == 0);
			/* One small backward step in the middle, absorbed. */
			if (fake_now == T0 + 10 && !stepped) {
				fake_now -= 3;
				stepped = true;
			} else if (fake_now == T0 + 7 && stepped)
				fake_now = T0 + 11;
			else
				fake_now++;
			continue;
		}
		assert_int_equal(st, SNOWFLAKE_OK);
		assert_true(r.count >= 1 && r.count <= chunks[(c - 1) % 7]);
		for (k = 0; k < r.count; k++) {
			assert_true(n < MANY_IDS);
			collected[n++] = r.first + k;
		}
	}
	/* Every ms of the window was filled exactly once. */
	assert_true(n == MANY_IDS);
	assert_true(g.counters.ids == MANY_IDS);
	assert_true(snowflake_last_ts(&g) == end);
	assert_true(g.counters.seq_exhausted == waits);
	assert_true(waits >= MANY_MS - 1);
	assert_true(g.counters.absorbed_backsteps == 1);

	for (i = 1; i < n; i++)
		assert_true(collected[i] > collected[i - 1]);
	for (i = 0; i < n; i++) {
		s = layout_snowflake_split(collected[i]);
		assert_true(s.ts >= T0 && s.ts <= end);
		assert_int_equal(s.worker, WORKER);
	}
	qsort(collected, n, sizeof collected[0], cmp_u64);
	for (i = 1; i < n; i++)
		assert_true(collected[i] != collected[i - 1]);
}

/* A step back within the tolerance keeps minting on the last ts, then waits. */
static void
test_small_backstep_absorbed(void **state)
{
	struct snowflake g;
	struct snowflake_range r, prev;
	enum snowflake_status st;

	(void)state;
	gen_setup(&g, WORKER, T0, T0 + 1000);
	fake_now = T0 + 50;
	prev = take_ok(&g, 10, false);

	fake_now = T0 + 50 - TOLERANCE;
	r = take_ok(&g, 1, false);
	assert_true(r.first == prev.first + 10);
	assert_true(layout_snowflake_split(r.first).ts == T0 + 50);
	r = take_ok(&g, 4096, false);
	assert_int_equal(r.count, LAYOUT_SEQ_COUNT - 11);
	assert_true(g.counters.absorbed_backsteps == 1);	/* one episode */

	st = snowflake_take(&g, fake_now, 1, false, &r);
	assert_int_equal(st, SNOWFLAKE_WAIT);
	assert_true(r.count == 0);
	fake_now = T0 + 50;
	assert_int_equal(snowflake_take(&g, fake_now, 1, false, &r),
	    SNOWFLAKE_WAIT);
	assert_true(g.counters.seq_exhausted == 2);

	fake_now = T0 + 51;
	r = take_ok(&g, 1, false);
	assert_true(layout_snowflake_split(r.first).ts == T0 + 51);
	assert_int_equal(layout_snowflake_split(r.first).seq, 0);
	assert_true(g.counters.absorbed_backsteps == 1);
	assert_true(g.counters.largest_backstep_ms == TOLERANCE);
	assert_true(g.counters.large_backsteps == 0);
	assert_true(g.counters.clock_refusals == 0);

	/* A second step back is a second episode. */
	fake_now = T0 + 49;
	r = take_ok(&g, 1, false);
	assert_true(layout_snowflake_split(r.first).ts == T0 + 51);
	assert_true(g.counters.absorbed_backsteps == 2);
}

/* A step back beyond the tolerance mints nothing until the clock catches up. */
static void
test_large_backstep_then_catch_up(void **state)
{
	struct snowflake g;
	struct snowflake_range r, prev;

	(void)state;
	gen_setup(&g, WORKER, T0, T0 + 1000);
	fake_now = T0 + 100;
	prev = take_ok(&g, 5, false);

	fake_now = T0 + 100 - TOLERANCE - 1;
	r.first = 1;
	r.count = 1;
	assert_int_equal(snowflake_take(&g, fake_now, 1, false, &r),
	    SNOWFLAKE_CLOCK);
	assert_true(r.first == 0 && r.count == 0);
	fake_now = T0 + 20;
	assert_int_equal(snowflake_take(&g, fake_now, 4096, true, &r),
	    SNOWFLAKE_CLOCK);
	assert_true(g.counters.ids == 5);
	assert_true(snowflake_last_ts(&g) == T0 + 100);
	assert_true(g.counters.large_backsteps == 1);	/* one episode */
	assert_true(g.counters.clock_refusals == 2);
	assert_true(g.counters.largest_backstep_ms == 80);

	/* Back within the tolerance: minting resumes on the last ts. */
	fake_now = T0 + 98;
	r = take_ok(&g, 1, false);
	assert_true(r.first == prev.first + 5);
	/* Caught up. */
	fake_now = T0 + 101;
	r = take_ok(&g, 1, false);
	assert_true(layout_snowflake_split(r.first).ts == T0 + 101);
	assert_true(g.counters.large_backsteps == 1);
	assert_true(g.counters.absorbed_backsteps == 0);
	assert_true(g.counters.ids == 7);
}

/* Nothing past window_end; a full last ms says UNAVAILABLE, not WAIT. */
static void
test_window_end_unavailable(void **state)
{
	struct snowflake g;
	struct snowflake_range r;

	(void)state;
	gen_setup(&g, WORKER, T0, T0 + 2);
	fake_now = T0 + 2;
	r = take_ok(&g, 4000, false);
	r = take_ok(&g, 4096, false);
	assert_int_equal(r.count, 96);
	assert_int_equal(snowflake_take(&g, fake_now, 1, false, &r),
	    SNOWFLAKE_UNAVAILABLE);
	assert_true(snowflake_last_ts(&g) == T0 + 2);

	fake_now = T0 + 3;
	assert_int_equal(snowflake_take(&g, fake_now, 1, false, &r),
	    SNOWFLAKE_UNAVAILABLE);
	assert_true(r.count == 0);
	assert_true(snowflake_last_ts(&g) == T0 + 2);
	assert_true(g.counters.window_refusals == 2);
	assert_true(g.counters.seq_exhausted == 0);
	assert_true(g.counters.ids == 4096);

	/* An extension reopens it. */
	snowflake_extend(&g, T0 + 3);
	r = take_ok(&g, 1, false);
	assert_true(layout_snowflake_split(r.first).ts == T0 + 3);

	/* BLOCK that does not fit the window's last ms is UNAVAILABLE too. */
	r = take_ok(&g, 1, false);
	assert_int_equal(snowflake_take(&g, fake_now, 4095, true, &r),
	    SNOWFLAKE_UNAVAILABLE);
}

/* A clock below 2^31 layout ms never yields an ID below 2^53. */
static void
test_floor_2_53(void **state)
{
	struct snowflake g;
	struct snowflake_range r;

	(void)state;
	gen_setup(&g, 0, 0, LAYOUT_TS_MIN + 10);
	assert_true(g.window_start == LAYOUT_TS_MIN);

	assert_int_equal(snowflake_take(&g, LAYOUT_TS_MIN - 1, 1, false, &r),
	    SNOWFLAKE_CLOCK);
	assert_true(r.count == 0);
	assert_int_equal(snowflake_take(&g, 0, 1, false, &r), SNOWFLAKE_CLOCK);
	assert_true(g.counters.clock_refusals == 2);
	assert_true(g.counters.ids == 0);
	assert_true(snowflake_last_ts(&g) == 0);

	fake_now = LAYOUT_TS_MIN;
	r = take_ok(&g, 1, false);
	assert_true(r.first == LAYOUT_TICKET_LIMIT);
	assert_int_equal(layout_region(r.first), LAYOUT_SNOWFLAKE);
}

/* BLOCK 4096 at a fresh ms is one whole ms; a second one there must wait. */
static void
test_block_all_or_nothing(void **state)
{
	struct snowflake g;
	struct snowflake_range r;
	struct layout_snowflake a, b;

	(void)state;
	gen_setup(&g, WORKER, T0, T0 + 100);
	fake_now = T0 + 1;
	r = take_ok(&g, 4096, true);
	assert_int_equal(r.count, 4096);
	a = layout_snowflake_split(r.first);
	b = layout_snowflake_split(r.first + r.count - 1);
	assert_true(a.ts == T0 + 1 && b.ts == T0 + 1);
	assert_int_equal(a.seq, 0);
	assert_int_equal(b.seq, LAYOUT_SEQ_MAX);
	assert_int_equal(b.worker, WORKER);

	assert_int_equal(snowflake_take(&g, fake_now, 4096, true, &r),
	    SNOWFLAKE_WAIT);
	assert_true(r.count == 0);
	assert_true(g.counters.seq_exhausted == 1);

	/* A partly used ms: all-or-nothing waits, a partial take does not. */
	fake_now = T0 + 2;
	r = take_ok(&g, 1, true);
	assert_int_equal(snowflake_take(&g, fake_now, 4096, true, &r),
	    SNOWFLAKE_WAIT);
	r = take_ok(&g, 4095, true);
	assert_int_equal(layout_snowflake_split(r.first).seq, 1);
	fake_now = T0 + 3;
	r = take_ok(&g, 1, true);
	r = take_ok(&g, 4096, false);
	assert_int_equal(r.count, 4095);
	assert_true(g.counters.ids == 3 * 4096);
}

/* Re-claiming the same worker with an overlapping window repeats nothing. */
static void
test_same_worker_overlap_no_repeat(void **state)
{
	struct snowflake g;
	struct snowflake_range r, prev;
	struct layout_snowflake s;

	(void)state;
	gen_setup(&g, WORKER, T0, T0 + 10);
	fake_now = T0 + 10;
	prev = take_ok(&g, 5, false);

	/* Lease lost, then the same number claimed again from an earlier start. */
	snowflake_clear_window(&g);
	assert_int_equal(snowflake_take(&g, fake_now, 1, false, &r),
	    SNOWFLAKE_UNAVAILABLE);
	snowflake_set_window(&g, WORKER, T0, T0 + 100);
	fake_now = T0 + 8;
	r = take_ok(&g, 1, false);
	assert_true(r.first == prev.first + 5);
	s = layout_snowflake_split(r.first);
	assert_true(s.ts == T0 + 10);
	assert_int_equal(s.seq, 5);

	/* Same again without clearing first. */
	snowflake_set_window(&g, WORKER, T0 + 5, T0 + 200);
	fake_now = T0 + 10;
	prev = r;
	r = take_ok(&g, 1, false);
	assert_true(r.first == prev.first + 1);

	/* A same-worker window entirely after the last ts starts at its start. */
	snowflake_set_window(&g, WORKER, T0 + 300, T0 + 400);
	fake_now = T0 + 300 - 2;
	prev = r;
	r = take_ok(&g, 1, false);
	s = layout_snowflake_split(r.first);
	assert_true(s.ts == T0 + 300);
	assert_int_equal(s.seq, 0);
	assert_true(r.first > prev.first);
}

/* A new worker number forgets the old last ts; only uniqueness carries over. */
static void
test_worker_change_resets(void **state)
{
	struct snowflake g;
	struct snowflake_range r, prev;
	struct layout_snowflake s;

	(void)state;
	gen_setup(&g, WORKER, T0, T0 + 1000);
	fake_now = T0 + 500;
	prev = take_ok(&g, 1, false);

	/* Large step back: the caller claims a fresh number at its new now. */
	fake_now = T0 + 100;
	assert_int_equal(snowflake_take(&g, fake_now, 1, false, &r),
	    SNOWFLAKE_CLOCK);
	snowflake_set_window(&g, WORKER + 1, T0 + 100, T0 + 600);
	assert_true(snowflake_last_ts(&g) == 0);
	r = take_ok(&g, 1, false);
	s = layout_snowflake_split(r.first);
	assert_true(s.ts == T0 + 100);
	assert_int_equal(s.worker, WORKER + 1);
	assert_int_equal(s.seq, 0);
	assert_true(r.first < prev.first);	/* k-ordered only */
	assert_true(r.first != prev.first);
}

/* When the clock is behind window_start, the tolerance decides. */
static void
test_now_before_window_start(void **state)
{
	struct snowflake g;
	struct snowflake_range r;

	(void)state;
	gen_setup(&g, WORKER, T0 + 100, T0 + 200);
	fake_now = T0 + 100 - TOLERANCE - 1;
	assert_int_equal(snowflake_take(&g, fake_now, 1, false, &r),
	    SNOWFLAKE_CLOCK);
	assert_true(g.counters.large_backsteps == 1);
	assert_true(g.counters.ids == 0);

	fake_now = T0 + 100 - TOLERANCE;
	r = take_ok(&g, 1, false);
	assert_true(layout_snowflake_split(r.first).ts == T0 + 100);
	assert_true(g.counters.absorbed_backsteps == 0);	/* same episode */
}

/* extend only ever moves the end forward, and only of an existing window. */
static void
test_extend_never_backward(void **state)
{
	struct snowflake_config cfg = { .backstep_tolerance_ms = TOLERANCE,
	    .clock_wait_ms = CLOCK_WAIT };
	struct snowflake g;
	struct snowflake_range r;

	(void)state;
	snowflake_init(&g, &cfg);
	snowflake_extend(&g, T0 + 50);
	assert_false(g.has_window);
	assert_int_equal(snowflake_take(&g, T0, 1, false, &r),
	    SNOWFLAKE_UNAVAILABLE);

	snowflake_set_window(&g, WORKER, T0, T0 + 100);
	fake_now = T0;
	snowflake_extend(&g, T0 + 50);
	assert_true(g.window_end == T0 + 100);
	assert_true(g.window_start == T0);
	snowflake_extend(&g, T0 + 150);
	assert_true(g.window_end == T0 + 150);
	snowflake_extend(&g, T0 + 149);
	assert_true(g.window_end == T0 + 150);
	snowflake_extend(&g, UINT64_MAX);
	assert_true(g.window_end == LAYOUT_TS_MAX);

	r = take_ok(&g, 1, false);
	(void)r;
	assert_int_equal(snowflake_take(&g, LAYOUT_TS_MAX + 1, 1, false, &r),
	    SNOWFLAKE_UNAVAILABLE);
}

/* A release writes back the last ts minted, or start - 1 when none. */
static void
test_release_end(void **state)
{
	struct snowflake g;
	struct snowflake_range r;
	uint64_t end = 0;

	(void)state;
	gen_setup(&g, WORKER, T0, T0 + 100);
	assert_true(snowflake_release(&g, &end));
	assert_true(end == T0 - 1);
	assert_false(g.has_window);
	assert_false(snowflake_release(&g, &end));

	snowflake_set_window(&g, WORKER, T0, T0 + 100);
	fake_now = T0 + 42;
	r = take_ok(&g, 1, false);
	(void)r;
	assert_true(snowflake_release(&g, &end));
	assert_true(end == T0 + 42);
	assert_int_equal(snowflake_take(&g, fake_now, 1, false, &r),
	    SNOWFLAKE_UNAVAILABLE);

	/* A later window of the same worker with nothing minted in it. */
	snowflake_set_window(&g, WORKER, T0 + 500, T0 + 600);
	assert_true(snowflake_release(&g, &end));
	assert_true(end == T0 + 499);
}

/* A resumed window mints above the old reservation at once, even with the clock behind. */
static void
test_resume_above_reservation(void **state)
{
	struct snowflake_config cfg = { .backstep_tolerance_ms = TOLERANCE,
	    .clock_wait_ms = CLOCK_WAIT };
	struct snowflake g;
	struct snowflake_range r;
	uint64_t reserved = T0 + 400;

	(void)state;
	snowflake_init(&g, &cfg);
	snowflake_resume(&g, WORKER, reserved + 1, T0 + 60000);
	snowflake_set_reserved(&g, reserved);
	fake_now = T0;		/* 401 ms behind the floor: not a backward step */
	/* Write-ahead: nothing above the reservation until the caller persists more. */
	assert_int_equal(snowflake_take(&g, fake_now, 10, false, &r), SNOWFLAKE_RESERVE);
	assert_true(r.count == 0);
	assert_true(snowflake_next_ts(&g, fake_now) == reserved + 1);
	snowflake_set_reserved(&g, reserved + 100);
	r = take_ok(&g, 10, false);
	assert_true(layout_snowflake_split(r.first).ts == reserved + 1);
	assert_true(layout_snowflake_split(r.first).worker == WORKER);
	assert_true(g.counters.large_backsteps == 0 && g.counters.clock_refusals == 0);
	/* A later step back is measured from this process's clock readings. */
	fake_now = T0 - TOLERANCE - 1;
	assert_int_equal(snowflake_take(&g, fake_now, 1, false, &r), SNOWFLAKE_CLOCK);
	/* The floor's millisecond used up while the clock is behind: wait for it. */
	fake_now = T0;
	for (;;) {
		enum snowflake_status st = snowflake_take(&g, fake_now, 4096, false, &r);

		if (st == SNOWFLAKE_WAIT)
			break;
		assert_int_equal(st, SNOWFLAKE_OK);
		assert_true(layout_snowflake_split(r.first).ts == reserved + 1);
	}
	fake_now = reserved + 2;
	r = take_ok(&g, 1, false);
	assert_true(layout_snowflake_split(r.first).ts == reserved + 2);
}

/*
 * A resumed floor more than clock_wait_ms ahead of the clock: refused at once,
 * nothing minted, no reservation asked for; within it, minted at the floor and
 * then a wait of at most clock_wait_ms. A claimed window never sees BEHIND.
 */
static void
test_resume_far_ahead_behind(void **state)
{
	struct snowflake_config cfg = { .backstep_tolerance_ms = TOLERANCE,
	    .clock_wait_ms = CLOCK_WAIT };
	struct snowflake g;
	struct snowflake_range r;
	uint64_t floor = T0 + 3600000, behind = 0;

	(void)state;
	snowflake_init(&g, &cfg);
	snowflake_resume(&g, WORKER, floor, floor + 60000);
	snowflake_set_reserved(&g, floor - 1);
	fake_now = T0;
	assert_int_equal(snowflake_probe(&g, fake_now, &behind), SNOWFLAKE_BEHIND);
	assert_true(behind == 3600000);
	assert_int_equal(snowflake_take(&g, fake_now, 4096, true, &r), SNOWFLAKE_BEHIND);
	assert_true(r.count == 0 && g.counters.ids == 0 && g.counters.clock_refusals == 1);
	assert_true(g.counters.large_backsteps == 0);
	/* Exactly clock_wait_ms behind: served at the floor. */
	fake_now = floor - CLOCK_WAIT;
	assert_int_equal(snowflake_probe(&g, fake_now, &behind), SNOWFLAKE_OK);
	assert_int_equal(snowflake_take(&g, fake_now, 4096, true, &r), SNOWFLAKE_RESERVE);
	snowflake_set_reserved(&g, floor + 100);
	r = take_ok(&g, 4096, true);
	assert_true(layout_snowflake_split(r.first).ts == floor);
	/* The floor's ms used up: a wait, bounded by clock_wait_ms + 1 ms. */
	assert_int_equal(snowflake_take(&g, fake_now, 1, true, &r), SNOWFLAKE_WAIT);
	fake_now = floor + 1;
	r = take_ok(&g, 1, true);
	assert_true(layout_snowflake_split(r.first).ts == floor + 1);

	/* A claimed window: far behind is a backward step (CLOCK), never BEHIND. */
	gen_setup(&g, WORKER, T0, T0 + 60000);
	fake_now = T0 + 10;
	(void)take_ok(&g, 1, true);
	fake_now = T0 - 500000;
	assert_int_equal(snowflake_probe(&g, fake_now, &behind), SNOWFLAKE_CLOCK);
	assert_true(behind == 500010);
	assert_int_equal(snowflake_take(&g, fake_now, 1, true, &r), SNOWFLAKE_CLOCK);
	/* Probing counts nothing and changes nothing. */
	assert_true(g.counters.large_backsteps == 1 && g.counters.clock_refusals == 1);
	fake_now = T0 + 60001;
	assert_int_equal(snowflake_probe(&g, fake_now, &behind), SNOWFLAKE_UNAVAILABLE);
	snowflake_clear_window(&g);
	assert_int_equal(snowflake_probe(&g, T0, &behind), SNOWFLAKE_UNAVAILABLE);
}

/* Past the reservation a take asks for more, and mints nothing until it has it. */
static void
test_reservation_write_ahead(void **state)
{
	struct snowflake g;
	struct snowflake_range r;
	uint64_t last = 0;
	unsigned i, reserves = 0;

	(void)state;
	gen_setup(&g, WORKER, T0, T0 + 1000);
	snowflake_set_reserved(&g, T0 - 1);
	for (i = 0; i < 50; i++) {
		fake_now = T0 + i * 7;
		if (snowflake_take(&g, fake_now, 3, false, &r) == SNOWFLAKE_RESERVE) {
			reserves++;
			assert_true(r.count == 0 && snowflake_next_ts(&g, fake_now) > g.reserved);
			snowflake_set_reserved(&g, snowflake_next_ts(&g, fake_now) + 20);
			r = take_ok(&g, 3, false);
		}
		/* Every ts minted is covered by the reservation in force. */
		assert_true(layout_snowflake_split(r.first).ts <= g.reserved);
		assert_true(r.first > last);
		last = r.first + r.count - 1;
	}
	/* 343 ms of minting in stretches of 21 ms: one reservation per stretch. */
	assert_true(reserves >= 15 && reserves <= 18);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_window_unavailable),
		cmocka_unit_test(test_fields_decode),
		cmocka_unit_test(test_ascending_across_overflow),
		cmocka_unit_test(test_small_backstep_absorbed),
		cmocka_unit_test(test_large_backstep_then_catch_up),
		cmocka_unit_test(test_window_end_unavailable),
		cmocka_unit_test(test_floor_2_53),
		cmocka_unit_test(test_block_all_or_nothing),
		cmocka_unit_test(test_same_worker_overlap_no_repeat),
		cmocka_unit_test(test_worker_change_resets),
		cmocka_unit_test(test_now_before_window_start),
		cmocka_unit_test(test_extend_never_backward),
		cmocka_unit_test(test_release_end),
		cmocka_unit_test(test_resume_above_reservation),
		cmocka_unit_test(test_reservation_write_ahead),
		cmocka_unit_test(test_resume_far_ahead_behind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
