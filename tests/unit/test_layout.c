/*
 * test_layout.c - round trips and region boundaries of the 64-bit layout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "layout.h"

#define B	UINT64_C(65536)

static void
test_regions(void **state)
{
	(void)state;
	assert_int_equal(layout_region(0), LAYOUT_INVALID);
	assert_int_equal(layout_region(1), LAYOUT_TICKET);
	assert_int_equal(layout_region(LAYOUT_TICKET_LIMIT - 1), LAYOUT_TICKET);
	assert_int_equal(layout_region(LAYOUT_TICKET_LIMIT), LAYOUT_SNOWFLAKE);
	assert_int_equal(layout_region(INT64_MAX), LAYOUT_SNOWFLAKE);
	assert_int_equal(layout_region((uint64_t)INT64_MAX + 1), LAYOUT_INVALID);
	assert_int_equal(layout_region(UINT64_MAX), LAYOUT_INVALID);
}

static void
test_ticket_edges(void **state)
{
	uint64_t last = LAYOUT_TICKET_LIMIT / B - 1;	/* its block ends exactly at 2^53 */

	(void)state;
	assert_false(layout_ticket_ok(0, B));		/* block 0 would contain ID 0 */
	assert_true(layout_ticket_ok(1, B));
	assert_true(layout_ticket_ok(last, B));
	assert_int_equal(layout_ticket_first(last, B) + B, LAYOUT_TICKET_LIMIT);
	assert_false(layout_ticket_ok(last + 1, B));	/* would reach 2^53 */
	assert_false(layout_ticket_ok(UINT64_MAX, B));	/* no overflow wrap */
	assert_false(layout_ticket_ok(5, LAYOUT_BLOCK_MIN - 1));
	assert_false(layout_ticket_ok(5, LAYOUT_BLOCK_MAX + 1));
	assert_true(layout_ticket_ok(5, LAYOUT_BLOCK_MIN));
	/* Block 3 of B is [3B, 4B): every ID maps back to ticket 3. */
	assert_int_equal(layout_ticket_of(layout_ticket_first(3, B), B), 3);
	assert_int_equal(layout_ticket_of(layout_ticket_first(3, B) + B - 1, B), 3);
	assert_int_equal(layout_ticket_of(layout_ticket_first(3, B) + B, B), 4);
}

/*
 * The end of a ticket's block saturates. A namespace copy's end is a mark's
 * end rounded up to a whole block, (ns_end_ticket(end, b) + 1) * b as
 * tier_ns.c wrote it three times: for a mark whose end is UINT64_MAX (a row at
 * or above 2^64 / B_N) that wrapped to a small end, and the copy UPDATE
 * "... < end" then matched no row: a copy turned into none (issue 33).
 */
static void
test_ticket_end(void **state)
{
	static const uint64_t bs[] = { 1, 3, 10, 4096, 1000003, UINT64_C(1) << 32,
	    UINT64_MAX / 2, UINT64_MAX };

	(void)state;
	assert_int_equal(layout_ticket_end(0, 4096), 4096);
	assert_int_equal(layout_ticket_end(9, 10), 100);
	assert_int_equal(layout_ticket_end(5, 0), 0);
	assert_true(layout_ticket_end(UINT64_MAX, 1) == UINT64_MAX);
	assert_true(layout_ticket_end(UINT64_MAX / 10, 10) == UINT64_MAX);
	assert_true(layout_ticket_end(UINT64_MAX / 10 - 1, 10) == UINT64_MAX / 10 * 10);
	for (size_t k = 0; k < sizeof(bs) / sizeof(bs[0]); k++) {
		uint64_t b = bs[k], end = UINT64_MAX, t = (end - 1) / b;

		/* Rounded up to a whole block, the top end stays the top. */
		assert_true(layout_ticket_end(t, b) == end);
	}
}

static void
test_snowflake_roundtrip(void **state)
{
	uint64_t ts[] = { LAYOUT_TS_MIN, LAYOUT_TS_MIN + 1, UINT64_C(123456789012),
	    LAYOUT_TS_MAX };
	unsigned workers[] = { 0, 1, 512, LAYOUT_WORKER_MAX };
	unsigned seqs[] = { 0, 1, 2048, LAYOUT_SEQ_MAX };
	size_t i, j, k;

	(void)state;
	for (i = 0; i < 4; i++)
		for (j = 0; j < 4; j++)
			for (k = 0; k < 4; k++) {
				uint64_t id;
				struct layout_snowflake s;

				assert_true(layout_snowflake_ok(ts[i], workers[j], seqs[k]));
				id = layout_snowflake_compose(ts[i], workers[j], seqs[k]);
				assert_int_equal(layout_region(id), LAYOUT_SNOWFLAKE);
				s = layout_snowflake_split(id);
				assert_int_equal(s.ts, ts[i]);
				assert_int_equal(s.worker, workers[j]);
				assert_int_equal(s.seq, seqs[k]);
			}
}

static void
test_snowflake_floor(void **state)
{
	(void)state;
	/* ts >= 2^31 is exactly id >= 2^53. */
	assert_int_equal(layout_snowflake_compose(LAYOUT_TS_MIN, 0, 0), LAYOUT_TICKET_LIMIT);
	assert_true(layout_snowflake_compose(LAYOUT_TS_MIN - 1, LAYOUT_WORKER_MAX,
	    LAYOUT_SEQ_MAX) < LAYOUT_TICKET_LIMIT);
	assert_false(layout_snowflake_ok(LAYOUT_TS_MIN - 1, 0, 0));
	assert_false(layout_snowflake_ok(LAYOUT_TS_MAX + 1, 0, 0));
	assert_false(layout_snowflake_ok(LAYOUT_TS_MIN, LAYOUT_WORKER_MAX + 1, 0));
	assert_false(layout_snowflake_ok(LAYOUT_TS_MIN, 0, LAYOUT_SEQ_MAX + 1));
	/* The largest ID stays a positive BIGINT. */
	assert_true(layout_snowflake_compose(LAYOUT_TS_MAX, LAYOUT_WORKER_MAX,
	    LAYOUT_SEQ_MAX) <= (uint64_t)INT64_MAX);
}

static void
test_time(void **state)
{
	uint64_t ts;
	char buf[LAYOUT_ISO_LEN];

	(void)state;
	assert_false(layout_ts_from_unix_ms(LAYOUT_EPOCH_UNIX_MS - 1, &ts));
	assert_true(layout_ts_from_unix_ms(LAYOUT_EPOCH_UNIX_MS, &ts));
	assert_int_equal(ts, 0);
	/* 2026-01-25T20:31:23.648Z is the first Snowflake-region ms (docs/design.md section 1). */
	layout_format_iso(layout_ts_to_unix_ms(LAYOUT_TS_MIN), buf, sizeof(buf));
	assert_string_equal(buf, "2026-01-25T20:31:23.648Z");
	layout_format_iso(layout_ts_to_unix_ms(LAYOUT_TS_MAX), buf, sizeof(buf));
	assert_string_equal(buf, "2095-09-07T15:47:35.551Z");
	assert_false(layout_ts_from_unix_ms(layout_ts_to_unix_ms(LAYOUT_TS_MAX) + 1, &ts));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regions),
		cmocka_unit_test(test_ticket_edges),
		cmocka_unit_test(test_ticket_end),
		cmocka_unit_test(test_snowflake_roundtrip),
		cmocka_unit_test(test_snowflake_floor),
		cmocka_unit_test(test_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
