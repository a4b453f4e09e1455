/*
 * test_check.c - the connect-time server checks and the per-ticket checks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "check.h"
#include "layout.h"
#include "server.h"

static struct check_server_info
good(const char *parity, const char *offset)
{
	struct check_server_info in = {
		.version = "10.11.19-MariaDB-0+deb12u1", .increment = "2", .offset = offset,
		.flush_at_commit = "1", .layout_version = "1",
		.block_size = "65536", .parity = parity, .tier_increment = "2",
		.server_offset = offset, .region = "0", .region_bits = "0",
	};

	return in;
}

enum { ODD = SERVER_ODD, EVEN = SERVER_EVEN };

static void
expect_refused(const struct check_server_info *in, unsigned server, const char *needle)
{
	char why[256] = "";
	uint64_t b = 0;

	assert_false(check_server(in, server, &b, why, sizeof(why)));
	assert_non_null(strstr(why, needle));
}

static void
test_server_ok(void **state)
{
	struct check_server_info odd = good("odd", "1"), even = good("even", "2");
	char why[256];
	uint64_t b = 0;

	(void)state;
	assert_true(check_server(&odd, ODD, &b, why, sizeof(why)));
	assert_int_equal(b, 65536);
	assert_true(check_server(&even, EVEN, &b, why, sizeof(why)));
}

static void
test_server_refusals(void **state)
{
	struct check_server_info in;

	(void)state;
	in = good("odd", "1");
	in.increment = "1";
	expect_refused(&in, ODD, "auto_increment_increment");
	in = good("odd", "2");
	expect_refused(&in, ODD, "auto_increment_offset");
	in = good("even", "2");
	expect_refused(&in, ODD, "auto_increment_offset");	/* even server in the odd slot */
	in = good("even", "1");
	expect_refused(&in, ODD, "parity");
	in = good("odd", "1");
	in.flush_at_commit = "2";
	expect_refused(&in, ODD, "innodb_flush_log_at_trx_commit");
	in = good("odd", "1");
	in.layout_version = "2";
	expect_refused(&in, ODD, "layout_version");
	in = good("odd", "1");
	in.block_size = "100";
	expect_refused(&in, ODD, "block_size");
	in.block_size = NULL;
	expect_refused(&in, ODD, "block_size");
	in = good("odd", "1");
	in.tier_increment = "8";
	expect_refused(&in, ODD, "tier_increment is 8");
	in = good("odd", "1");
	in.server_offset = "2";
	expect_refused(&in, ODD, "server_offset is 2 but it is configured as the odd server");
	in.server_offset = NULL;
	expect_refused(&in, ODD, "server_offset is NULL");
	in = good("odd", "1");
	in.region_bits = "5";
	expect_refused(&in, ODD, "region is 0 with region_bits 5, but it is configured as a server of region 0 with region_bits 0");
	in = good("odd", "1");
	in.region = "3";
	expect_refused(&in, ODD, "but it is configured as a server of region 0 with region_bits 0");
	in = good("odd", "1");
	in.version = "10.1.48-MariaDB";
	expect_refused(&in, ODD, "persistent auto-increment");
	in.version = "5.7.40";
	expect_refused(&in, ODD, "persistent auto-increment");
}

/* The pair's identities: names, offsets, residues, partners (server.h). */
static void
test_server_identity(void **state)
{
	unsigned i = 99;

	(void)state;
	assert_string_equal(server_name(ODD), "odd");
	assert_string_equal(server_name(EVEN), "even");
	assert_string_equal(server_name(SERVER_PAIR), "?");
	assert_true(server_by_name("even", &i) && i == EVEN);
	assert_true(server_by_name("odd", &i) && i == ODD);
	assert_false(server_by_name("Odd", &i));
	assert_false(server_by_name("", &i));
	assert_int_equal(server_offset(ODD), 1);
	assert_int_equal(server_offset(EVEN), 2);
	assert_int_equal(server_partner(ODD), EVEN);
	assert_int_equal(server_partner(EVEN), ODD);
	/* Every value belongs to exactly one server of the pair: its residue. */
	for (uint64_t v = 0; v < 64; v++) {
		unsigned owners = 0;

		for (unsigned s = 0; s < SERVER_PAIR; s++)
			owners += server_owns_ticket(s, v) + server_owns_worker(s, (unsigned)v);
		assert_int_equal(owners, 2);
		assert_true(server_owns_ticket(v % 2 ? ODD : EVEN, v));
	}
}

/*
 * Regions of pairs (M = 4, 5 region bits): region 1's pair has offsets 3 and
 * 4 and the worker numbers 32..63; no ticket or worker number has two owners
 * across the regions.
 */
static void
test_server_regions(void **state)
{
	unsigned lo, hi, owners[1024] = { 0 }, towners[64] = { 0 };

	(void)state;
	assert_false(server_shape_set(4, 2, 5));	/* region 2's pair needs M >= 6 */
	assert_false(server_shape_set(8, 2, 1));	/* region 2 needs 2 bits */
	assert_false(server_shape_set(1, 0, 0));
	assert_false(server_shape_set(4, 0, 6));
	for (unsigned r = 0; r < 2; r++) {
		assert_true(server_shape_set(4, r, 5));
		assert_int_equal(server_offset(ODD), 2 * r + 1);
		assert_int_equal(server_offset(EVEN), 2 * r + 2);
		server_worker_range(&lo, &hi);
		assert_int_equal(lo, 32 * r);
		assert_int_equal(hi, 32 * r + 31);
		for (unsigned w = 0; w < 1024; w++)
			for (unsigned s = 0; s < SERVER_PAIR; s++)
				owners[w] += server_owns_worker(s, w);
		for (uint64_t t = 0; t < 64; t++)
			for (unsigned s = 0; s < SERVER_PAIR; s++)
				towners[t] += server_owns_ticket(s, t);
		assert_true(server_owns_ticket(ODD, 2 * r + 1 + 4 * 7));
		assert_false(server_owns_ticket(ODD, 2 * r + 3 + 4 * 7));
		assert_int_equal(server_region_of(32 * r + 5), r);
	}
	for (unsigned w = 0; w < 1024; w++)
		assert_int_equal(owners[w], w < 64 ? 1 : 0);
	for (unsigned t = 0; t < 64; t++)
		assert_int_equal(towners[t], 1);
	assert_true(server_shape_set(2, 0, 0));
}

/*
 * An idserver of region 1 that may take tickets from regions 2 and 0 (M = 6):
 * its own pair first, then theirs, in other_regions' order; every ticket has
 * exactly one owner among all six, worker numbers only ours, partners within
 * a pair, and the checks name the region and setting of each.
 */
static void
test_server_others(void **state)
{
	unsigned bad_own[] = { 1 }, bad_dup[] = { 2, 2 }, bad_fit[] = { 3 }, ok[] = { 2, 0 };
	unsigned i = 99, towners[60] = { 0 };
	struct check_server_info in;
	char why[512];
	uint64_t b;

	(void)state;
	assert_true(server_shape_set(6, 1, 5));
	assert_false(server_others_set(bad_own, 1));	/* our own region */
	assert_false(server_others_set(bad_dup, 2));
	assert_false(server_others_set(bad_fit, 1));	/* offsets 7, 8 > M */
	assert_int_equal(server_count(), SERVER_PAIR);
	assert_true(server_others_set(ok, 2));
	assert_int_equal(server_count(), 6);
	assert_string_equal(server_name(0), "odd");
	assert_string_equal(server_name(2), "odd_r2");
	assert_string_equal(server_name(5), "even_r0");
	assert_string_equal(server_name(6), "?");
	assert_string_equal(server_role(5), "even");
	assert_true(server_by_name("odd_r0", &i) && i == 4);
	assert_false(server_by_name("odd_r3", &i));
	assert_int_equal(server_region_at(1), 1);
	assert_int_equal(server_region_at(3), 2);
	assert_int_equal(server_offset(0), 3);
	assert_int_equal(server_offset(3), 6);
	assert_int_equal(server_offset(4), 1);
	assert_int_equal(server_partner(4), 5);
	assert_int_equal(server_partner(3), 2);
	for (uint64_t t = 0; t < 60; t++)
		for (unsigned s = 0; s < server_count(); s++)
			towners[t] += server_owns_ticket(s, t);
	for (unsigned t = 0; t < 60; t++)
		assert_int_equal(towners[t], 1);
	for (unsigned w = 0; w < 1024; w++)
		for (unsigned s = SERVER_PAIR; s < server_count(); s++)
			assert_false(server_owns_worker(s, w));
	/* Region 0's odd server is checked as region 0's, and named so. */
	in = good("odd", "1");
	in.tier_increment = "6";
	in.region_bits = "5";
	in.offset = "1";
	in.increment = "6";
	in.block_size = "1048576";	/* a tier of regions has one B (test_region_layout) */
	assert_true(check_server(&in, 4, &b, why, sizeof(why)));
	assert_false(check_server(&in, 0, &b, why, sizeof(why)));
	in.region = "2";
	assert_false(check_server(&in, 4, &b, why, sizeof(why)));
	assert_non_null(strstr(why, "configured as a server of region 0"));
	assert_non_null(strstr(why, "(check other_regions)"));
	assert_true(server_others_set(NULL, 0));
	assert_true(server_shape_set(2, 0, 0));
}

/*
 * Issue 30, finding 4: with region bits, B = 2^20 and region_bits = 5 are the
 * tier's, not a region's (docs/design.md 12.3). Region 1's server with B = 2^19
 * (every setting of its own region agreeing) is refused at connect and recheck,
 * naming the rule; so is any region_bits other than 5, in a meta row or in the
 * config; a tier of one region keeps any B of the layout.
 */
static void
test_region_layout(void **state)
{
	struct check_server_info in;
	char why[512] = "";
	uint64_t b = 0;

	(void)state;
	assert_true(check_region_layout(0, 65536, true, why, sizeof(why)));
	assert_true(check_region_layout(0, 0, false, why, sizeof(why)));
	assert_true(check_region_layout(5, 1048576, true, why, sizeof(why)));
	assert_true(check_region_layout(5, 0, false, why, sizeof(why)));	/* any: the meta rows judge */
	assert_false(check_region_layout(5, 524288, true, why, sizeof(why)));
	assert_non_null(strstr(why, "idgen_meta has region_bits 5 and block_size 524288, but a "
	    "tier of regions has region_bits 5 and B = 1048576 in every region"));
	assert_non_null(strstr(why, "UPDATE idgen.idgen_meta SET region_bits = 5, block_size = 1048576"));
	assert_false(check_region_layout(5, 0, true, why, sizeof(why)));
	assert_false(check_region_layout(2, 0, false, why, sizeof(why)));
	assert_non_null(strstr(why, "the config sets region_bits 2 and block_size 0"));
	assert_non_null(strstr(why, "repair: set region_bits = 5"));
	assert_false(check_region_layout(5, 65536, false, why, sizeof(why)));
	assert_false(check_region_layout(1, 1048576, true, why, sizeof(why)));

	/* Region 1 of M = 4: its odd server at offset 3, every shape column agreeing. */
	assert_true(server_shape_set(4, 1, 5));
	in = good("odd", "3");
	in.increment = in.tier_increment = "4";
	in.region = "1";
	in.region_bits = "5";
	in.block_size = "1048576";
	assert_true(check_server(&in, ODD, &b, why, sizeof(why)));
	assert_int_equal(b, 1048576);
	in.block_size = "524288";
	expect_refused(&in, ODD, "idgen_meta has region_bits 5 and block_size 524288, but a "
	    "tier of regions has region_bits 5 and B = 1048576");
	in.block_size = "2097152";
	expect_refused(&in, ODD, "a tier of regions has region_bits 5");
	/* Region bits other than 5, agreeing with a shape the config no longer takes. */
	assert_true(server_shape_set(4, 1, 3));
	in.region_bits = "3";
	in.block_size = "1048576";
	expect_refused(&in, ODD, "idgen_meta has region_bits 3 and block_size 1048576");
	/* A tier of one region: B is free within the layout's bounds. */
	assert_true(server_shape_set(2, 0, 0));
	in = good("odd", "1");
	in.block_size = "524288";
	assert_true(check_server(&in, ODD, &b, why, sizeof(why)));
}

/*
 * A region of four (M = 8): the pair, then offsets 4 and 3 given out of order
 * (kept by offset); names, marks rows and meta parity; every ticket has one
 * owner among the four and the four free offsets none; worker numbers stay
 * with the pair; the region's group is the four, other regions' pairs after.
 */
static void
test_server_extras(void **state)
{
	unsigned low[] = { 2 }, high[] = { 9 }, dup[] = { 3, 3 }, ok[] = { 4, 3 }, other[] = { 1 };
	unsigned first = 99, count = 99, towners[64] = { 0 };

	(void)state;
	assert_true(server_shape_set(8, 0, 0));
	assert_int_equal(server_extra_min(), 3);
	assert_false(server_extras_set(low, 1));
	assert_false(server_extras_set(high, 1));
	assert_false(server_extras_set(dup, 2));
	assert_true(server_extras_set(ok, 2));
	assert_int_equal(server_own_count(), 4);
	assert_string_equal(server_name(2), "o3");
	assert_string_equal(server_name(3), "o4");
	assert_string_equal(server_role(3), "o4");
	assert_string_equal(server_parity(2), "odd");
	assert_string_equal(server_parity(3), "even");
	assert_int_equal(server_offset(3), 4);
	for (uint64_t t = 0; t < 64; t++)
		for (unsigned s = 0; s < server_count(); s++)
			towners[t] += server_owns_ticket(s, t);
	for (unsigned t = 0; t < 64; t++)
		assert_int_equal(towners[t], t % 8 >= 1 && t % 8 <= 4 ? 1 : 0);
	for (unsigned w = 0; w < 1024; w++)
		assert_false(server_owns_worker(2, w) || server_owns_worker(3, w));
	server_group(3, &first, &count);
	assert_true(first == 0 && count == 4);
	assert_int_equal(server_partner(1), 2);
	assert_int_equal(server_partner(3), 0);
	/* Not with regions: a ticket's region is read from its offset. */
	assert_true(server_shape_set(8, 0, 1));
	assert_int_equal(server_extra_min(), 5);
	high[0] = 6;
	assert_false(server_extras_set(high, 1));
	assert_true(server_extras_set(NULL, 0));
	assert_true(server_others_set(other, 1));
	assert_int_equal(server_count(), 4);
	assert_string_equal(server_name(2), "odd_r1");
	assert_string_equal(server_role(2), "odd");
	assert_int_equal(server_offset(3), 4);
	server_group(3, &first, &count);
	assert_true(first == 2 && count == 2);
	assert_int_equal(server_partner(3), 2);
	assert_true(server_shape_set(2, 0, 0));
	assert_int_equal(server_count(), 2);
}

static void
test_versions(void **state)
{
	(void)state;
	assert_true(check_version("10.2.4-MariaDB"));
	assert_false(check_version("10.2.3-MariaDB"));
	assert_true(check_version("10.11.19-MariaDB-0+deb12u1"));
	assert_true(check_version("11.4.2-MariaDB"));
	assert_false(check_version("10.1.99-MariaDB"));
	assert_true(check_version("8.0.36"));
	assert_false(check_version("5.7.44-log"));
	assert_false(check_version(NULL));
	assert_false(check_version("garbage"));
}

static void
test_tickets(void **state)
{
	uint64_t b = 65536, last_ok = LAYOUT_TICKET_LIMIT / b - 1;

	(void)state;
	assert_int_equal(check_ticket(7, 5, ODD, b), CHECK_TICKET_OK);
	assert_int_equal(check_ticket(8, 6, EVEN, b), CHECK_TICKET_OK);
	assert_int_equal(check_ticket(8, 5, ODD, b), CHECK_TICKET_PARITY);
	assert_int_equal(check_ticket(7, 6, EVEN, b), CHECK_TICKET_PARITY);
	assert_int_equal(check_ticket(5, 5, ODD, b), CHECK_TICKET_REGRESSED);
	assert_int_equal(check_ticket(3, 5, ODD, b), CHECK_TICKET_REGRESSED);
	/* last_ok is odd (2^37 - 1): its block ends exactly at 2^53. */
	assert_int_equal(check_ticket(last_ok, 1, ODD, b), CHECK_TICKET_OK);
	assert_int_equal(check_ticket(last_ok + 1, 2, EVEN, b), CHECK_TICKET_LIMIT);
	/*
	 * A namespace's B_N may be below the default's least B: the one check of
	 * both paths bounds 2^53 in the ticket's own B (docs/design.md 13.7).
	 */
	b = 8;
	last_ok = LAYOUT_TICKET_LIMIT / b - 1;	/* 2^50 - 1: odd */
	assert_int_equal(check_ticket(7, 5, ODD, b), CHECK_TICKET_OK);
	assert_int_equal(check_ticket(last_ok, 1, ODD, b), CHECK_TICKET_OK);
	assert_int_equal(check_ticket(last_ok + 1, 2, EVEN, b), CHECK_TICKET_LIMIT);
	assert_int_equal(check_ticket(7, 5, ODD, 0), CHECK_TICKET_LIMIT);
}

/* One strict decimal parser for what a ticket server sends. */
static void
test_uint(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_true(check_uint("0", &v) && v == 0);
	assert_true(check_uint("18446744073709551615", &v) && v == UINT64_MAX);
	assert_false(check_uint("18446744073709551616", &v));	/* overflow */
	assert_false(check_uint(NULL, &v));
	assert_false(check_uint("", &v));
	assert_false(check_uint("-1", &v));
	assert_false(check_uint(" 1", &v));
	assert_false(check_uint("12a", &v));
}

/*
 * One check of every ticket table (docs/design.md 13.7): tickets64 and a
 * namespace's tickets_N are refused alike when missing, on another engine, or
 * with a marks row of their server missing (own, or a copy).
 */
static void
test_table(void **state)
{
	struct check_table t = { "idgen", "tickets64", "InnoDB", true, "idgen_marks", ODD, -1,
	    "load schema/10-tables.sql" };
	char why[512];

	(void)state;
	assert_true(check_table(&t, why, sizeof(why)));
	t.engine = "MyISAM";
	assert_false(check_table(&t, why, sizeof(why)));
	assert_non_null(strstr(why, "ticket table idgen.tickets64 uses engine MyISAM, must be "
	    "InnoDB"));
	assert_non_null(strstr(why, "repair: ALTER TABLE idgen.tickets64 ENGINE=InnoDB"));
	t.engine = NULL;
	assert_false(check_table(&t, why, sizeof(why)));
	assert_non_null(strstr(why, "ticket table idgen.tickets64 is missing"));
	t.engine = "InnoDB";
	t.counter = false;
	assert_false(check_table(&t, why, sizeof(why)));
	assert_non_null(strstr(why, "has no AUTO_INCREMENT counter (load schema/10-tables.sql)"));
	t.counter = true;
	t.missing = ODD;
	assert_false(check_table(&t, why, sizeof(why)));
	assert_non_null(strstr(why, "idgen_marks lacks its own row 'odd'"));
	t = (struct check_table){ "idgen", "tickets_orders", "MyISAM", true, "idgen_ns_marks",
	    EVEN, -1, "idgenctl ns create orders" };
	assert_false(check_table(&t, why, sizeof(why)));
	assert_non_null(strstr(why, "ticket table idgen.tickets_orders uses engine MyISAM, must "
	    "be InnoDB"));
	t.engine = "InnoDB";
	t.missing = ODD;
	assert_false(check_table(&t, why, sizeof(why)));
	assert_non_null(strstr(why, "idgen_ns_marks lacks the row 'odd' for tickets_orders (the "
	    "copy of the odd server's mark)"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_ok),
		cmocka_unit_test(test_uint),
		cmocka_unit_test(test_server_refusals),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_server_identity),
		cmocka_unit_test(test_server_regions),
		cmocka_unit_test(test_server_others),
		cmocka_unit_test(test_region_layout),
		cmocka_unit_test(test_server_extras),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_tickets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
