/*
 * test_decode.c - the one decode of common/: regions, ticket and server, the
 * Snowflake fields and the worker's 5/5 split, an unknown block size.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "decode.h"

#define B	UINT64_C(1048576)

/* ticket = id / B; odd tickets come from the odd server. */
static void
test_ticket(void **state)
{
	struct decode d;

	(void)state;
	assert_int_equal(decode_id(2097152, B, &d), LAYOUT_TICKET);
	assert_true(d.id == 2097152 && d.ticket == 2 && !d.odd);
	assert_string_equal(d.server, "even");
	assert_string_equal(d.b58, "1111111BkQo");
	assert_int_equal(decode_id(3 * B + B - 1, B, &d), LAYOUT_TICKET);
	assert_true(d.ticket == 3 && d.odd);
	assert_string_equal(d.server, "odd");
	assert_true(d.worker == 0 && d.seq == 0 && d.unix_ms == 0 && d.iso[0] == '\0');
	assert_int_equal(decode_id(LAYOUT_TICKET_LIMIT - 1, 4096, &d), LAYOUT_TICKET);
	assert_true(d.ticket == (LAYOUT_TICKET_LIMIT - 1) / 4096);
}

/* Without B the ticket is unknown: the fields stay empty, the rest is set. */
static void
test_ticket_no_block_size(void **state)
{
	struct decode d;

	(void)state;
	assert_int_equal(decode_id(2097152, 0, &d), LAYOUT_TICKET);
	assert_true(d.ticket == 0 && !d.odd && d.server == NULL);
	assert_string_equal(d.b58, "1111111BkQo");
}

/* ts << 22 | worker << 12 | seq, and worker = datacenter << 5 | worker_id. */
static void
test_snowflake(void **state)
{
	struct decode d;
	uint64_t id = layout_snowflake_compose(UINT64_C(28000000000), 37, 5);

	(void)state;
	assert_int_equal(decode_id(id, B, &d), LAYOUT_SNOWFLAKE);
	assert_true(d.worker == 37 && d.seq == 5);
	assert_true(d.datacenter_id == 1 && d.worker_id == 5);
	assert_true(d.unix_ms == layout_ts_to_unix_ms(UINT64_C(28000000000)));
	assert_true(d.server == NULL && d.ticket == 0);
	assert_int_equal(decode_id(layout_snowflake_compose(LAYOUT_TS_MIN, 1023, 4095), 0, &d),
	    LAYOUT_SNOWFLAKE);
	assert_string_equal(d.iso, "2026-01-25T20:31:23.648Z");
	assert_true(d.datacenter_id == 31 && d.worker_id == 31 && d.seq == 4095);
	memset(&d, 0, sizeof(d));
	decode_snowflake(id, &d);
	assert_true(d.worker == 37 && d.datacenter_id == 1 && d.worker_id == 5 && d.seq == 5);
	assert_true(d.region == LAYOUT_INVALID && d.b58[0] == '\0');	/* only its fields */
}

/*
 * The tier's shape: one region changes nothing (the 5/5 split stays); with
 * regions a ticket names its server's region (M = 4: offsets 3 and 4 are
 * region 1) and a Snowflake ID its worker's, as datacenter_id too.
 */
static void
test_regions(void **state)
{
	struct decode d;
	uint64_t sf = layout_snowflake_compose(UINT64_C(28000000000), 37, 5);

	(void)state;
	assert_int_equal(decode_id(sf, B, &d), LAYOUT_SNOWFLAKE);
	decode_regions(&d, 2, 0);
	assert_true(!d.regions && d.datacenter_id == 1 && d.worker_id == 5);
	decode_regions(&d, 4, 5);
	assert_true(d.regions && d.area == 1 && d.datacenter_id == 1 && d.worker_id == 5);
	assert_int_equal(decode_id(sf, B, &d), LAYOUT_SNOWFLAKE);
	decode_regions(&d, 4, 3);	/* 3 bits: worker 37 = region 0, worker 37 of 128 */
	assert_true(d.regions && d.area == 0 && d.datacenter_id == 0 && d.worker_id == 37);
	for (uint64_t t = 1; t <= 8; t++) {
		assert_int_equal(decode_id(t * B + 7, B, &d), LAYOUT_TICKET);
		decode_regions(&d, 4, 5);
		assert_true(d.regions && d.ticket == t);
		assert_int_equal(d.area, (t % 4 == 1 || t % 4 == 2) ? 0 : 1);
		assert_string_equal(d.server, t % 2 ? "odd" : "even");
	}
	assert_int_equal(decode_id(5 * B, 0, &d), LAYOUT_TICKET);	/* B unknown */
	decode_regions(&d, 4, 5);
	assert_false(d.regions);
}

/* 0 and the sign bit: no fields, but the id and its base58 form. */
static void
test_invalid(void **state)
{
	struct decode d;

	(void)state;
	assert_int_equal(decode_id(0, B, &d), LAYOUT_INVALID);
	assert_string_equal(d.b58, "11111111111");
	assert_int_equal(decode_id((uint64_t)INT64_MAX + 1, B, &d), LAYOUT_INVALID);
	assert_true(d.id == (uint64_t)INT64_MAX + 1 && d.ticket == 0 && d.iso[0] == '\0');
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ticket),
		cmocka_unit_test(test_ticket_no_block_size),
		cmocka_unit_test(test_snowflake),
		cmocka_unit_test(test_regions),
		cmocka_unit_test(test_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
