/*
 * test_source.c - which path serves a request, and the service mode, driven
 * with a fake clock, a hand-filled pool and hand-set server states (no I/O).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "layout.h"
#include "lease.h"
#include "snowflake.h"
#include "source.h"
#include "tier.h"

#define B	UINT64_C(4096)
#define WAIT_MS	50

static int64_t fake_us;		/* the injected clock, unix us */
static int64_t fake_mono;	/* the injected monotonic clock, us */

static int64_t
fake_clock_us(void)
{
	return fake_us;
}

static int64_t
fake_mono_us(void)
{
	return fake_mono;
}

struct rig {
	struct tier		tier;
	struct snowflake	gen;
	struct lease		lease;
	struct source		src;
};

/* The default sequence's IDs / dense block (source_take with ns NULL). */
static enum source_status
take_ids(struct source *s, unsigned n, uint64_t *out, bool may_fallback, unsigned *wait_us,
    const char **why)
{
	return source_take(s, NULL, false, n, out, may_fallback, wait_us, why);
}

static enum source_status
take_block(struct source *s, unsigned n, uint64_t *first, bool may_fallback,
    unsigned *wait_us, const char **why)
{
	return source_take(s, NULL, true, n, first, may_fallback, wait_us, why);
}

/* A tier with no DB handles (block_size 0 keeps prefetch from fetching), a held lease. */
static void
rig_init(struct rig *r, enum ticket_state odd, enum ticket_state even)
{
	struct snowflake_config sc = { 50, 1000 };
	uint64_t now;

	memset(r, 0, sizeof(*r));
	fake_us = layout_ts_to_unix_ms(UINT64_C(28000000000)) * 1000;	/* in 2026 */
	pool_init(&r->tier.seq.pool);
	r->tier.srv[SERVER_ODD].state = odd;
	r->tier.srv[SERVER_EVEN].state = even;
	r->tier.srv[SERVER_ODD].name = "odd";
	r->tier.srv[SERVER_EVEN].name = "even";
	snowflake_init(&r->gen, &sc);
	now = (uint64_t)(fake_us / 1000) - (uint64_t)LAYOUT_EPOCH_UNIX_MS;
	r->lease.state = LEASE_HELD;
	r->lease.worker = 7;
	r->lease.window_start = now;
	r->lease.window_end = now + 1000;
	r->lease.want.fresh = true;		/* keeps lease_clock_stepped() off the event loop */
	snowflake_set_window(&r->gen, 7, now, now + 1000);
	source_init(&r->src, &r->tier, &r->gen, &r->lease, fake_clock_us, WAIT_MS);
	fake_mono = 1000000;
	r->src.mono_us = fake_mono_us;
}

/* The mode's reason as text. */
static const char *
reason(struct rig *r)
{
	static char buf[192];

	source_mode_reason(&r->src, buf, sizeof(buf));
	return buf;
}

static void
test_tickets_first(void **state)
{
	struct rig r;
	uint64_t out[10], first;
	unsigned wait = 0;
	const char *why = NULL;

	(void)state;
	rig_init(&r, TICKET_READY, TICKET_READY);
	assert_true(pool_add(&r.tier.seq.pool, 3 * B, B));
	assert_int_equal(take_ids(&r.src, 10, out, false, &wait, &why), SOURCE_OK);
	assert_true(out[0] == 3 * B && out[9] == 3 * B + 9);
	assert_int_equal(take_block(&r.src, 100, &first, false, &wait, &why), SOURCE_OK);
	assert_true(first == 3 * B + 10);
	assert_int_equal(r.src.stats.ids_ticket, 110);
	assert_int_equal(r.src.stats.ids_fallback, 0);
}

/* Short of ticket IDs with a server up: wait; once the wait ran out, fallback. */
static void
test_wait_then_fallback_then_no_wait_chain(void **state)
{
	struct rig r;
	uint64_t out[5];
	unsigned wait = 0;
	const char *why = NULL;

	(void)state;
	rig_init(&r, TICKET_FETCHING, TICKET_READY);
	assert_int_equal(take_ids(&r.src, 5, out, false, &wait, &why), SOURCE_WAIT);
	assert_int_equal(wait, WAIT_MS * 1000);
	assert_int_equal(take_ids(&r.src, 5, out, true, &wait, &why), SOURCE_OK);
	assert_true(out[0] >= LAYOUT_TICKET_LIMIT);
	assert_int_equal(layout_snowflake_split(out[0]).worker, 7);
	assert_int_equal(r.src.stats.late_refills, 1);
	/* The refill is late for everyone: the next request does not wait again. */
	assert_int_equal(take_ids(&r.src, 5, out, false, &wait, &why), SOURCE_OK);
	assert_true(out[0] >= LAYOUT_TICKET_LIMIT);
	/* A ticket is banked: tickets again, and an empty pool means waiting again. */
	assert_true(pool_add(&r.tier.seq.pool, 5 * B, 5));
	r.tier.seq.banked++;
	assert_int_equal(take_ids(&r.src, 5, out, false, &wait, &why), SOURCE_OK);
	assert_true(out[0] == 5 * B);
	assert_int_equal(take_ids(&r.src, 5, out, false, &wait, &why), SOURCE_WAIT);
	assert_int_equal(r.src.stats.ids_fallback, 10);
}

/* No server up: the fallback answers at once; IDs ascend, one ms holds 4096. */
static void
test_no_server_fallback_at_once(void **state)
{
	struct rig r;
	uint64_t out[1000], first;
	unsigned wait = 0, i;
	const char *why = NULL;

	(void)state;
	rig_init(&r, TICKET_DOWN, TICKET_REFUSED);
	assert_int_equal(take_ids(&r.src, 1000, out, false, &wait, &why), SOURCE_OK);
	for (i = 1; i < 1000; i++)
		assert_true(out[i] == out[i - 1] + 1);
	assert_int_equal(take_block(&r.src, 3100, &first, false, &wait, &why),
	    SOURCE_NEXT_MS);	/* 3096 left in this ms: a BLOCK 3100 waits for the next */
	assert_true(wait > 0 && wait <= 1000);
	fake_us += 1000;
	assert_int_equal(take_block(&r.src, 3100, &first, false, &wait, &why), SOURCE_OK);
	assert_true(first > out[999]);
	assert_int_equal(layout_snowflake_split(first).seq, 0);
	source_update_mode(&r.src);
	assert_int_equal(r.src.mode, SOURCE_MODE_FALLBACK);
}

/* Past the window: refused, never minted; the mode says down. */
static void
test_window_over_unavailable(void **state)
{
	struct rig r;
	uint64_t out[1];
	unsigned wait = 0;
	const char *why = NULL;

	(void)state;
	rig_init(&r, TICKET_DOWN, TICKET_DOWN);
	fake_us += 1001 * 1000;
	assert_int_equal(take_ids(&r.src, 1, out, false, &wait, &why), SOURCE_UNAVAILABLE);
	assert_non_null(strstr(why, "no valid Snowflake lease window"));
	assert_int_equal(r.src.stats.ids_fallback, 0);
	source_update_mode(&r.src);
	assert_int_equal(r.src.mode, SOURCE_MODE_DOWN);
	/* Held, but over: the views say expired, and the reason says when it ended. */
	assert_string_equal(source_lease_state(&r.src), "expired");
	assert_non_null(strstr(reason(&r), "the Snowflake lease window ended at 2026-"));
	r.tier.srv[SERVER_EVEN].state = TICKET_READY;
	source_update_mode(&r.src);
	assert_int_equal(r.src.mode, SOURCE_MODE_TICKET);
	assert_string_equal(reason(&r), "a ticket server is up");
}

/* A clock far behind the last ms minted: ERR CLOCK, nothing minted. */
static void
test_large_step_clock(void **state)
{
	struct rig r;
	uint64_t out[1];
	unsigned wait = 0;
	const char *why = NULL;

	(void)state;
	rig_init(&r, TICKET_DOWN, TICKET_DOWN);
	fake_us += 500 * 1000;
	assert_int_equal(take_ids(&r.src, 1, out, false, &wait, &why), SOURCE_OK);
	fake_us -= 400 * 1000;
	assert_int_equal(take_ids(&r.src, 1, out, false, &wait, &why), SOURCE_CLOCK);
	assert_non_null(strstr(why, "clock stepped back 400 ms, past backstep_tolerance_ms=50"));
	assert_int_equal(r.src.stats.ids_fallback, 1);
	/* The mode says down, and why: IDs cannot be served. */
	source_update_mode(&r.src);
	assert_int_equal(r.src.mode, SOURCE_MODE_DOWN);
	assert_non_null(strstr(reason(&r), "clock stepped back 400 ms"));
}

/*
 * A window resumed with its floor an hour ahead of the clock (a restart with
 * the clock set back): ERR CLOCK at once, saying how far, never a wait for the
 * next millisecond; within clock_wait_ms of the floor it is served.
 */
static void
test_resumed_floor_far_ahead(void **state)
{
	struct rig r;
	uint64_t out[1000], first, now;
	unsigned wait = 0;
	const char *why = NULL;

	(void)state;
	rig_init(&r, TICKET_DOWN, TICKET_DOWN);
	now = (uint64_t)(fake_us / 1000) - (uint64_t)LAYOUT_EPOCH_UNIX_MS;
	snowflake_resume(&r.gen, 7, now + 3600000, now + 3660000);
	r.lease.window_start = now + 3500000;
	r.lease.window_end = now + 3660000;
	assert_int_equal(take_block(&r.src, 4096, &first, false, &wait, &why), SOURCE_CLOCK);
	assert_non_null(strstr(why, "clock behind the Snowflake lease's floor by 3600000 ms"));
	assert_int_equal(take_ids(&r.src, 1, out, false, &wait, &why), SOURCE_CLOCK);
	assert_int_equal(r.src.stats.ids_fallback, 0);
	source_update_mode(&r.src);
	assert_int_equal(r.src.mode, SOURCE_MODE_DOWN);
	assert_string_equal(reason(&r), "no ticket server up; clock behind the Snowflake "
	    "lease's floor by 3600000 ms (clock_wait_ms=1000)");
	assert_string_equal(source_lease_state(&r.src), "held");
	/* The clock within clock_wait_ms of the floor: served at the floor, then a
	 * bounded wait for the next millisecond. */
	fake_us += (3600000 - 900) * INT64_C(1000);
	assert_int_equal(take_block(&r.src, 4096, &first, false, &wait, &why), SOURCE_OK);
	assert_true(layout_snowflake_split(first).ts == now + 3600000);
	assert_int_equal(take_ids(&r.src, 1000, out, false, &wait, &why), SOURCE_NEXT_MS);
	assert_true(wait <= 1000000);
	source_update_mode(&r.src);
	assert_int_equal(r.src.mode, SOURCE_MODE_FALLBACK);
}

/* A wall clock that stopped: waits for the next ms end after clock_wait_ms. */
static void
test_stopped_clock_bounded(void **state)
{
	struct rig r;
	uint64_t first;
	unsigned wait = 0, i;
	const char *why = NULL;

	(void)state;
	rig_init(&r, TICKET_DOWN, TICKET_DOWN);
	assert_int_equal(take_block(&r.src, 4096, &first, false, &wait, &why), SOURCE_OK);
	for (i = 0; i < 10; i++) {
		assert_int_equal(take_block(&r.src, 1, &first, false, &wait, &why),
		    SOURCE_NEXT_MS);
		fake_mono += 100000;		/* 100 ms pass; the wall clock does not move */
	}
	fake_mono += 1000;			/* just past clock_wait_ms (1000 ms) */
	assert_int_equal(take_block(&r.src, 1, &first, false, &wait, &why), SOURCE_CLOCK);
	assert_non_null(strstr(why, "clock stopped"));
	/* It moves again: served. */
	fake_us += 1000;
	assert_int_equal(take_block(&r.src, 1, &first, false, &wait, &why), SOURCE_OK);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tickets_first),
		cmocka_unit_test(test_wait_then_fallback_then_no_wait_chain),
		cmocka_unit_test(test_no_server_fallback_at_once),
		cmocka_unit_test(test_window_over_unavailable),
		cmocka_unit_test(test_large_step_clock),
		cmocka_unit_test(test_resumed_floor_far_ahead),
		cmocka_unit_test(test_stopped_clock_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
