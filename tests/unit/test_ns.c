/*
 * test_ns.c - the namespaces idserver serves (src/ns.c): the check's rows
 * parsed strictly, agreement judged across servers, marks in ID space.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "layout.h"
#include "ns.h"
#include "server.h"

static struct ns_row rows[64];

static unsigned
parse(const char *text)
{
	unsigned n = 0, bad = 0;
	bool cut = false;
	char why[128];

	assert_true(nss_parse(text, rows, 64, &n, &cut, &bad, why, sizeof(why)));
	assert_false(cut);
	assert_int_equal(bad, 0);
	return n;
}

static void
test_parse(void **state)
{
	unsigned n;
	bool cut;
	char why[128];

	(void)state;
	n = parse("orders 10 snowflake ready 5 even 4 10 0 InnoDB\n"
	    "orders 10 snowflake ready 5 odd 3 10 0 InnoDB\nusers 1 refuse creating 1 - 0 0 0 InnoDB");
	assert_int_equal(n, 3);
	assert_string_equal(rows[0].name, "orders");
	assert_int_equal(rows[0].b, 10);
	assert_int_equal(rows[0].counter, 5);
	assert_string_equal(rows[0].role, "even");
	assert_string_equal(rows[0].engine, "InnoDB");
	assert_int_equal(rows[0].hw, 4);
	assert_true(rows[0].ready);
	assert_int_equal(rows[2].policy, NS_REFUSE);
	assert_false(rows[2].ready);
	assert_string_equal(rows[2].role, "");
	/* Not understood: every row of that name left out, the others kept. */
	static const char *bad_rows[] = {
		"orders 10 snowflake ready 5 even 4",
		"orders 0 snowflake ready 5 even 4 10 0 InnoDB",
		"orders 10 dense ready 5 even 4 10 0 InnoDB",
		"orders 10 snowflake ready 18446744073709551616 even 4 10 0 InnoDB",
		"orders 10 snowflake ready 5 even 4 10 extra",
		"orders 10 snowflake ready 5 even 4 10 0",	/* no engine word */
	};
	char text[256];
	unsigned bad;

	for (unsigned k = 0; k < sizeof(bad_rows) / sizeof(bad_rows[0]); k++) {
		snprintf(text, sizeof(text), "orders 10 snowflake ready 5 odd 3 10 0 InnoDB\n%s\n"
		    "users 1 refuse ready 1 - 0 0 0 InnoDB", bad_rows[k]);
		assert_true(nss_parse(text, rows, 64, &n, &cut, &bad, why, sizeof(why)));
		assert_int_equal(bad, 1);
		assert_int_equal(n, 1);
		assert_string_equal(rows[0].name, "users");
	}
	assert_true(nss_parse("ord-ers 10 snowflake ready 5 even 4 10 0 InnoDB\n"
	    "users 1 refuse ready 1 - 0 0 0 InnoDB", rows, 64, &n, &cut, &bad, why, sizeof(why)));
	assert_int_equal(bad, 1);
	assert_int_equal(n, 1);
	/* Past max rows: the last name's rows all go, never part of its marks. */
	assert_true(nss_parse("a 1 refuse ready 1 even 0 0 0 InnoDB\n"
	    "b 1 refuse ready 1 even 0 0 0 InnoDB\nb 1 refuse ready 1 odd 0 0 0 InnoDB", rows, 2,
	    &n, &cut, &bad, why, sizeof(why)));
	assert_true(cut);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].name, "a");
}

static void
test_agreement(void **state)
{
	struct nss s;
	bool up[NS_SERVERS] = { true, true };
	struct nsrv *ns;
	unsigned n;

	(void)state;
	nss_init(&s, 10);
	/* Only the odd server read: served on its word while the even's check is pending. */
	n = parse("orders 10 snowflake ready 1 odd 0 0 0 InnoDB\n"
	    "orders 10 snowflake ready 1 even 0 0 0 InnoDB");
	nss_apply(&s, 0, rows, n, up);
	ns = nss_find(&s, "orders", 6);
	assert_non_null(ns);
	assert_true(ns->served);
	/* The even server says creating: not served. */
	n = parse("orders 10 snowflake creating 1 odd 0 0 0 InnoDB");
	nss_apply(&s, 1, rows, n, up);
	assert_false(ns->served);
	/* Ready with another B: not served. */
	n = parse("orders 20 snowflake ready 1 odd 0 0 0 InnoDB");
	nss_apply(&s, 1, rows, n, up);
	assert_false(ns->served);
	/* Alike: served; the even server down does not unserve it. */
	n = parse("orders 10 snowflake ready 1 odd 0 0 0 InnoDB");
	nss_apply(&s, 1, rows, n, up);
	assert_true(ns->served);
	up[0] = up[1] = false;
	nss_judge(&s, up);
	assert_true(ns->served);
	/* Created again with another B on every server: not while they disagree ... */
	up[0] = up[1] = true;
	assert_true(pool_add(&ns->seq.pool, 100, 10));
	n = parse("orders 30 snowflake ready 1 odd 0 0 0 InnoDB");
	nss_apply(&s, 0, rows, n, up);
	assert_false(ns->served);
	/* ... nor while a ticket of the old one is in flight ... */
	ns->seq.fetching = 1;
	nss_apply(&s, 1, rows, n, up);
	assert_false(ns->served);
	/* ... then served anew, its old buffered IDs let go. */
	ns->seq.fetching = 0;
	nss_apply(&s, 1, rows, n, up);
	assert_true(ns->served);
	assert_int_equal(ns->b, 30);
	assert_int_equal(pool_available(&ns->seq.pool), 0);
	assert_int_equal(s.released, 10);
	/* Gone from every server: let go. */
	nss_apply(&s, 0, rows, 0, up);
	nss_apply(&s, 1, rows, 0, up);
	assert_null(nss_find(&s, "orders", 6));
	nss_free(&s);
}

/*
 * CI (2026-12-02, test_ns step 5): dropped, then created again with the
 * same B and policy before the last server's check missed it. The name was
 * never gone from the set, and its old buffered blocks were served below the
 * new incarnation's first ID. A server's check that no longer lists a name
 * lets its buffered IDs go at once; one that read no table lets nothing go.
 */
static void
test_dropped_on_one_server_lets_go(void **state)
{
	struct nss s;
	bool up[NS_SERVERS] = { true, true };
	struct nsrv *ns;
	unsigned n;

	(void)state;
	nss_init(&s, 10);
	n = parse("orders 10 snowflake ready 1 odd 0 0 0 InnoDB");
	nss_apply(&s, 0, rows, n, up);
	nss_apply(&s, 1, rows, n, up);
	ns = nss_find(&s, "orders", 6);
	assert_non_null(ns);
	assert_true(pool_add(&ns->seq.pool, 100, 10));
	/* The even server's namespace tables unreadable: nothing let go. */
	assert_int_equal(nss_apply(&s, 1, NULL, 0, up), 0);
	assert_int_equal(pool_available(&ns->seq.pool), 10);
	nss_apply(&s, 1, rows, n, up);
	/* Dropped: the odd server's check misses it; the even's still lists it. */
	assert_int_equal(nss_apply(&s, 0, rows, 0, up), 10);
	assert_int_equal(pool_available(&ns->seq.pool), 0);
	/* Created again alike before the even server's next check: nothing old served. */
	nss_apply(&s, 0, rows, n, up);
	nss_apply(&s, 1, rows, n, up);
	assert_true(ns == nss_find(&s, "orders", 6) && ns->served);
	assert_int_equal(pool_available(&ns->seq.pool), 0);
	nss_free(&s);
}

/*
 * A clean clone's test_ns (2026-12-04): ns drop's first step takes every row
 * out of ready (creating); the idserver's checks saw that, then not the brief
 * dropped state before the create made the rows ready again under the same B
 * and policy, and the old buffered blocks were served below the new first
 * ID. A server that counts and lists the name not ready lets its buffered IDs
 * go at once; served again, the pool is empty.
 */
static void
test_unready_lets_go(void **state)
{
	struct nss s;
	bool up[NS_SERVERS] = { true, true };
	struct nsrv *ns;
	unsigned n;

	(void)state;
	nss_init(&s, 10);
	n = parse("orders 10 snowflake ready 1 odd 0 0 0 InnoDB");
	nss_apply(&s, 0, rows, n, up);
	nss_apply(&s, 1, rows, n, up);
	ns = nss_find(&s, "orders", 6);
	assert_true(ns != NULL && ns->served);
	assert_true(pool_add(&ns->seq.pool, 100, 10));
	/* The drop's first step, seen by the odd server's check. */
	n = parse("orders 10 snowflake creating 1 odd 0 0 0 InnoDB");
	nss_apply(&s, 0, rows, n, up);
	assert_false(ns->served);
	assert_int_equal(pool_available(&ns->seq.pool), 0);
	/* Created again alike: served, nothing old in its pool. */
	n = parse("orders 10 snowflake ready 1 odd 0 0 0 InnoDB");
	nss_apply(&s, 0, rows, n, up);
	nss_apply(&s, 1, rows, n, up);
	assert_true(ns == nss_find(&s, "orders", 6) && ns->served);
	assert_int_equal(pool_available(&ns->seq.pool), 0);
	nss_free(&s);
}

/*
 * idsim seed 11718 (issue 32, idgenctl ns drop run for real): a drop killed
 * after the odd server's row, the even's still ready. The odd server's check
 * no longer lists the name (dropped rows are not read, nor its copies of the
 * even's marks), yet a verdict that stopped at the odd server's "no" kept
 * the name served from the even server alone: a fresh idserver, its even
 * server's namespace tables restored, drew an ID issued before. A server
 * that counts and does not list a name ready unserves it, whatever its index.
 */
static void
test_not_ready_on_the_first_server_unserves(void **state)
{
	struct nss s;
	bool up[NS_SERVERS] = { true, true };
	struct nsrv *ns;
	unsigned n;

	(void)state;
	nss_init(&s, 10);
	/* A fresh process: the even server read first, served on its word. */
	n = parse("orders 10 snowflake ready 1 odd 0 0 0 InnoDB\n"
	    "orders 10 snowflake ready 1 even 0 0 0 InnoDB");
	nss_apply(&s, 1, rows, n, up);
	ns = nss_find(&s, "orders", 6);
	assert_non_null(ns);
	assert_true(ns->served);
	/* The odd server's first check lists no namespace (dropped there): not served. */
	nss_apply(&s, 0, rows, 0, up);
	assert_false(ns->served);
	/* Listed creating by the odd server: still not. */
	n = parse("orders 10 snowflake creating 1 odd 0 0 0 InnoDB");
	nss_apply(&s, 0, rows, n, up);
	assert_false(ns->served);
	/* The odd server down: served on the even's word again. */
	up[0] = false;
	nss_judge(&s, up);
	assert_true(ns->served);
	nss_free(&s);
}

static void
test_order_and_bound(void **state)
{
	struct nss s;
	bool up[NS_SERVERS] = { true, true };
	unsigned n;

	(void)state;
	nss_init(&s, 3);
	n = parse("a 1 refuse ready 1 - 0 0 0 InnoDB\nab 1 refuse ready 1 - 0 0 0 InnoDB\n"
	    "b 1 refuse ready 1 - 0 0 0 InnoDB\nc 1 refuse ready 1 - 0 0 0 InnoDB");
	nss_apply(&s, 0, rows, n, up);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.ignored, 1);
	assert_non_null(nss_find(&s, "a", 1));
	assert_non_null(nss_find(&s, "ab", 2));
	assert_non_null(nss_find(&s, "b", 1));
	assert_null(nss_find(&s, "c", 1));
	assert_null(nss_find(&s, "abc", 3));
	assert_ptr_equal(nss_by_id(&s, nss_find(&s, "b", 1)->id), nss_find(&s, "b", 1));
	nss_free(&s);
}

static void
test_known_end(void **state)
{
	struct nss s;
	bool up[NS_SERVERS] = { true, true };
	struct nsrv *ns;
	unsigned n;

	(void)state;
	nss_init(&s, 10);
	/* The odd server's own mark 7 (B 10); the even's copy of it 9, written under B 100. */
	n = parse("orders 10 snowflake ready 9 odd 7 10 0 InnoDB");
	nss_apply(&s, 0, rows, n, up);
	n = parse("orders 10 snowflake ready 9 odd 9 100 0 InnoDB");
	nss_apply(&s, 1, rows, n, up);
	ns = nss_find(&s, "orders", 6);
	/* The copy covers IDs below 1000: the known end is 1000, ticket 99 of B 10. */
	assert_int_equal(ns_known_end(ns, 0, 0, 0), 1000);
	assert_int_equal(layout_end_ticket(1000, 10), 99);
	/* The state file's mark binds when it covers more. */
	assert_int_equal(ns_known_end(ns, 0, 200, 10), 2010);
	assert_int_equal(ns_known_end(ns, 0, UINT64_MAX - 1, 10), UINT64_MAX);
	assert_int_equal(layout_end_ticket(0, 10), 0);
	nss_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_agreement),
		cmocka_unit_test(test_dropped_on_one_server_lets_go),
		cmocka_unit_test(test_unready_lets_go),
		cmocka_unit_test(test_not_ready_on_the_first_server_unserves),
		cmocka_unit_test(test_order_and_bound),
		cmocka_unit_test(test_known_end),
	};

	assert_true(server_shape_set(2, 0, 0));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
