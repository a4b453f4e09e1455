/*
 * test_ticket.c - one ticket server (ticket.c) against a scripted fake
 * database behind db.h's table of operations: the connect-time checks, a
 * ticket, a deadlock retried, a counter that moved back, a ticket of the
 * wrong parity, a connection lost mid-ticket. No MariaDB, no sockets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "fakedb.h"
#include "server.h"
#include "ticket.h"

/* What the tier was told. */
static enum ticket_event events[64];
static uint64_t event_ticket[64];
static unsigned nevents;
static unsigned nreads;

static bool
notify(struct ticket_server *s, enum ticket_event ev, uint64_t ticket, void *arg)
{
	(void)s;
	(void)arg;
	if (ev == TICKET_EV_READ) {
		nreads++;	/* a connect-time check's marks, before its UP (tier's business) */
		return true;
	}
	if (nevents < 64) {
		events[nevents] = ev;
		event_ticket[nevents++] = ticket;
	}
	return true;
}

struct rig {
	struct event_base	*base;
	struct ticket_server	 s;
};

/* Runs the loop until every scripted answer is delivered (bounded). */
static void
run(struct rig *r)
{
	int i;

	for (i = 0; i < 100; i++)
		event_base_loop(r->base, EVLOOP_NONBLOCK);
}

/* The check row of an odd server at B = 4096, next ticket 7, in generation 0 of M = 2. */
static const char *const check_row[26] = {
	"10.11.19-MariaDB", "2", "1", "1", "InnoDB", "1", "4096", "odd", "u-1", "7",
	"5", "4", "0", "4096", "4096", "2", "1", "0", "0",
	"2", "1",	/* the session's increment and offset */
	"0", "0",	/* tier_generation, tier_floor */
	"0", "0",	/* its own marks row: generation, sealed */
	NULL,		/* the roles it reports retired */
};

/* A check answered with check_row, with field k set to v (k < 0: none changed). */
static void
script_check_with(int k, const char *v, int k2, const char *v2)
{
	struct fake_reply c = { .match = "SELECT @@version", .nfields = 26 };

	memcpy(c.row, check_row, sizeof(check_row));
	if (k >= 0)
		c.row[k] = v;
	if (k2 >= 0)
		c.row[k2] = v2;
	fake_expect(&c);
}

/* The check of an odd server whose next ticket is `counter`, then its rights. */
static void
script_check(const char *counter)
{
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_check_with(9, counter, -1, NULL);
	fake_expect(&(struct fake_reply){ .match = "EXPLAIN REPLACE" });
	fake_expect(&(struct fake_reply){ .match = "EXPLAIN UPDATE idgen_marks" });
	fake_expect(&(struct fake_reply){ .match = "EXPLAIN UPDATE idgen_leases" });
}

/* A committed ticket transaction: ticket t, own mark raised (affected = own). */
static void
expect_tx(uint64_t t, uint64_t own_affected)
{
	fake_expect(&(struct fake_reply){ .match = "REPLACE INTO tickets64", .nstmts = 6,
	    .insert_id = { 0, 0, t }, .affected = { 0, 1, 1, own_affected, 1, 0 },
	    .row = { "5", "0", "0" }, .nfields = 3 });
}

static unsigned fetching;

/* The mark the tier publishes, as the default's ticket is answered. */
static uint64_t
known_now(const struct ticket_server *s)
{
	return s->mark;
}

/* The default's ticket, built as the tier builds it (tier_send_tx). */
static bool
fetch(struct ticket_server *s)
{
	struct ticket_flight f = { .fetching = &fetching, .known = known_now, .mark = s->mark };

	ticket_seq_set(&f.q, NULL, s->block_size, NULL);
	f.copies = ticket_copies_wanted(s, f.copy);
	return ticket_fetch_seq(s, &f);
}

/* An odd server, connected and checked against the fake. */
static struct rig *
rig_up(void)
{
	static struct rig r;
	struct ticket_params tp = { 100, 1000, 30000, 5000 };
	struct db_params p;

	memset(&r, 0, sizeof(r));
	memset(&p, 0, sizeof(p));
	fake_reset();
	nevents = 0;
	r.base = event_base_new();
	p.host = "127.0.0.1";
	p.database = "idgen";
	p.ops = &fake_ops;
	assert_true(ticket_init(&r.s, r.base, &p, SERVER_ODD, &tp, notify, NULL));
	r.s.mark = 5;
	script_check("7");
	ticket_start(&r.s);
	run(&r);
	assert_int_equal(r.s.state, TICKET_READY);
	assert_true(nevents == 1 && events[0] == TICKET_EV_UP);
	assert_true(r.s.block_size == 4096 && r.s.seen.counter == 7);
	return &r;
}

static void
rig_down(struct rig *r)
{
	ticket_free(&r->s);
	event_base_free(r->base);
	assert_int_equal(next_reply, nscript);	/* every scripted answer was asked for */
	assert_int_equal(unscripted, 0);
}

/* Connect, check, one ticket: the tier is told of ticket 7. */
static void
test_ticket(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	expect_tx(7, 1);
	assert_true(fetch(&r->s));
	run(r);
	assert_true(nevents == 2 && events[1] == TICKET_EV_TICKET && event_ticket[1] == 7);
	assert_true(r->s.last_ticket == 7 && r->s.stats.tickets == 1);
	assert_int_equal(r->s.state, TICKET_READY);
	rig_down(r);
}

/* A deadlock rolls back and the transaction runs again; no ticket is lost or doubled. */
static void
test_deadlock_retried(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	fake_expect(&(struct fake_reply){ .match = "REPLACE INTO tickets64", .err = 1213 });
	fake_expect(&(struct fake_reply){ .match = "ROLLBACK" });
	expect_tx(9, 1);
	assert_true(fetch(&r->s));
	run(r);
	assert_true(r->s.stats.deadlocks == 1);
	assert_true(nevents == 2 && events[1] == TICKET_EV_TICKET && event_ticket[1] == 9);
	rig_down(r);
}

/* The own-mark update matched no row: the counter moved back; the server is refused. */
static void
test_own_mark_regressed(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	expect_tx(7, 0);
	assert_true(fetch(&r->s));
	run(r);
	assert_int_equal(r->s.state, TICKET_REGRESSED);
	assert_non_null(strstr(r->s.last_error, "counter regressed"));
	assert_true(nevents == 2 && events[1] == TICKET_EV_REFUSED);
	rig_down(r);
}

/* A ticket not above the mark the tier knows is never used. */
static void
test_ticket_below_mark(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	r->s.mark = 9;
	expect_tx(7, 1);
	assert_true(fetch(&r->s));
	run(r);
	assert_int_equal(r->s.state, TICKET_REGRESSED);
	assert_true(r->s.stats.tickets == 0 && r->s.last_ticket == 0);
	rig_down(r);
}

/*
 * A mark learned while the ticket was in flight (a copy read before its
 * answer) covers it: not used, the server not refused but checked again at
 * once (docs/design.md 6.3; idsim seed 21084). The old code judged it against
 * the mark as sent alone and used ticket 7.
 */
static void
test_ticket_below_learned_mark(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	expect_tx(7, 1);
	script_check_with(9, "9", -1, NULL);	/* the recheck: counter 9, above mark 7 */
	assert_true(fetch(&r->s));
	r->s.mark = 7;		/* the tier learned ticket 7 from a copy meanwhile */
	run(r);
	assert_true(r->s.stats.tickets == 0 && r->s.last_ticket == 0);
	for (unsigned k = 0; k < nevents; k++)
		assert_int_not_equal(events[k], TICKET_EV_TICKET);
	assert_int_equal(r->s.stats.rechecks, 1);
	assert_int_equal(r->s.state, TICKET_READY);
	rig_down(r);
}

/*
 * The answer of q's committed namespace transaction with one copy: the
 * catalogue row src (state, B, policy, generation, seal, ...), ticket 9 drawn
 * by its REPLACE, its own mark's UPDATE matching one row.
 */
static void
ns_tx_answer(const struct ticket_seq *q, struct db_result *res, char **row,
    const char *const src[6])
{
	memset(res, 0, sizeof(*res));
	memcpy(row, src, 6 * sizeof(row[0]));
	res->row = row;
	res->nfields = 6;
	res->nstmts = ticket_seq_stmts(q, 1);
	res->stmt_insert_id[ticket_seq_stmts(q, 0) - 3] = 9;	/* REPLACE's */
	res->stmt_affected[ticket_seq_stmts(q, 0) - 2] = 1;	/* the own mark's */
}

/* The verdict's two marks: as sent (regressed), as known at the answer (unused). */
static void
test_verdict_learned(void **state)
{
	struct rig *r = rig_up();
	static const char *const ready[6] = { "ready", "8", "refuse", "0", "0", "1" };
	struct ticket_seq q;
	struct db_result res;
	char *row[6], why[512];
	uint64_t t = 0;

	(void)state;
	ticket_seq_set(&q, "orders", 8, "refuse");
	ns_tx_answer(&q, &res, row, ready);
	assert_int_equal(ticket_tx_verdict(&r->s, &q, &res, 1, 5, 7, &t, why, sizeof(why)),
	    TICKET_TX_OK);
	assert_int_equal(ticket_tx_verdict(&r->s, &q, &res, 1, 5, 9, &t, why, sizeof(why)),
	    TICKET_TX_LEARNED);
	assert_non_null(strstr(why, "learned while it was in flight"));
	assert_int_equal(ticket_tx_verdict(&r->s, &q, &res, 1, 9, 9, &t, why, sizeof(why)),
	    TICKET_TX_REGRESS);
	rig_down(r);
}

/* A namespace's catalogue row not as judged (dropped, another B or policy): not used. */
static void
test_verdict_changed(void **state)
{
	static const char *const rows[3][6] = {
		{ "dropping", "8", "refuse", "0", "0", "0" },
		{ "ready", "16", "refuse", "0", "0", "0" },
		{ "ready", "8", "snowflake", "0", "0", "0" },
	};
	struct rig *r = rig_up();
	struct ticket_seq q;
	struct db_result res;
	char *row[6], why[512];
	uint64_t t = 0;

	(void)state;
	ticket_seq_set(&q, "orders", 8, "refuse");
	for (unsigned k = 0; k < 3; k++) {
		ns_tx_answer(&q, &res, row, rows[k]);
		assert_int_equal(ticket_tx_verdict(&r->s, &q, &res, 1, 5, 0, &t, why, sizeof(why)),
		    TICKET_TX_CHANGED);
	}
	assert_int_equal(r->s.stats.unbanked, 0);
	rig_down(r);
}

/* An even ticket from the odd server: refused (auto_increment_offset changed). */
static void
test_wrong_parity(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	expect_tx(8, 1);
	assert_true(fetch(&r->s));
	run(r);
	assert_int_equal(r->s.state, TICKET_REFUSED);
	assert_non_null(strstr(r->s.last_error, "wrong parity"));
	rig_down(r);
}

/* The connection lost mid-ticket: down, no ticket used (a gap at worst). */
static void
test_lost_mid_ticket(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	fake_expect(&(struct fake_reply){ .match = "REPLACE INTO tickets64",
	    .err = DB_ERR_TIMEOUT });
	assert_true(fetch(&r->s));
	run(r);
	assert_int_equal(r->s.state, TICKET_DOWN);
	assert_true(nevents == 2 && events[1] == TICKET_EV_DOWN);
	assert_true(r->s.stats.tickets == 0 && r->s.stats.failures == 1);
	rig_down(r);
}

/*
 * A change of the tier's increment (docs/design.md 12.4), one way the argument
 * could fail per test. The ticket drawn on a sealed server is not used.
 */
static void
test_sealed_not_banked(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	fake_expect(&(struct fake_reply){ .match = "REPLACE INTO tickets64", .nstmts = 6,
	    .insert_id = { 0, 0, 9 }, .affected = { 0, 1, 1, 1, 1, 0 },
	    .row = { "5", "0", "1" }, .nfields = 3 });
	assert_true(fetch(&r->s));
	run(r);
	assert_int_equal(r->s.state, TICKET_DOWN);
	assert_true(r->s.stats.tickets == 0 && r->s.last_ticket == 0 && r->s.stats.unbanked == 1);
	assert_true(nevents == 2 && events[1] == TICKET_EV_DOWN);
	rig_down(r);
}

/* ... nor one whose row was opened in a later generation (an old session's). */
static void
test_moved_not_banked(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	fake_expect(&(struct fake_reply){ .match = "REPLACE INTO tickets64", .nstmts = 6,
	    .insert_id = { 0, 0, 9 }, .affected = { 0, 1, 1, 1, 1, 0 },
	    .row = { "5", "1", "0" }, .nfields = 3 });
	assert_true(fetch(&r->s));
	run(r);
	assert_int_equal(r->s.state, TICKET_DOWN);
	assert_true(r->s.stats.tickets == 0 && r->s.stats.unbanked == 1);
	rig_down(r);
}

/*
 * A namespace's ticket is judged by the same verdict (docs/design.md 13.8):
 * its catalogue row's generation and seal, read under the shared lock on the
 * server's own idgen_marks row, keep a connection checked before a change of
 * the increment from using a ticket drawn with its old session increment.
 */
static void
test_ns_sealed_not_used(void **state)
{
	static const char *const rows[3][6] = {
		{ "ready", "8", "refuse", "0", "1", "1" },	/* sealed */
		{ "ready", "8", "refuse", "1", "0", "1" },	/* opened in generation 1 */
		{ "ready", "8", "refuse", "0", "0", "1" },	/* open in ours */
	};
	struct rig *r = rig_up();
	struct ticket_seq q;
	struct db_result res;
	char *row[6], why[512];
	uint64_t t = 0;

	(void)state;
	ticket_seq_set(&q, "orders", 8, "refuse");
	for (unsigned k = 0; k < 3; k++) {
		ns_tx_answer(&q, &res, row, rows[k]);
		assert_int_equal(ticket_tx_verdict(&r->s, &q, &res, 1, 5, 0, &t, why, sizeof(why)),
		    k < 2 ? TICKET_TX_SEALED : TICKET_TX_OK);
	}
	assert_true(t == 9 && r->s.stats.unbanked == 2);
	rig_down(r);
}

/* A check that finds the server sealed: down (retried), never up. */
static void
test_sealed_at_check(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	script_check_with(24, "1", -1, NULL);
	ticket_recheck_soon(&r->s);
	run(r);
	assert_int_equal(r->s.state, TICKET_DOWN);
	assert_non_null(strstr(r->s.last_error, "sealed"));
	rig_down(r);
}

/* The session's increment is not the server's any more: connect again, never judge it. */
static void
test_session_increment_old(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	script_check_with(1, "8", 15, "8");
	ticket_recheck_soon(&r->s);
	run(r);
	assert_int_equal(r->s.state, TICKET_DOWN);
	assert_non_null(strstr(r->s.last_error, "connecting again"));
	assert_int_equal(server_increment(), 2);
	rig_down(r);
}

/*
 * A later generation with M = 8 moves the view: tickets are then checked
 * modulo 8 (3 is odd but not the odd server's), the floor binds as a mark,
 * and a server still in generation 0 is refused.
 */
static void
test_generation_adopted(void **state)
{
	static const char *const g1[26] = {
		"10.11.19-MariaDB", "8", "1", "1", "InnoDB", "1", "4096", "odd", "u-1", "41",
		"5", "4", "0", "4096", "4096", "8", "1", "0", "0", "8", "1", "1", "167936", "1", "0",
		NULL,	/* the floor is an ID: (40 + 1) * 4096 */
	};
	struct rig *r = rig_up();
	struct fake_reply c = { .match = "SELECT @@version", .nfields = 26 };

	(void)state;
	memcpy(c.row, g1, sizeof(g1));
	fake_expect(&c);
	ticket_recheck_soon(&r->s);
	run(r);
	assert_int_equal(r->s.state, TICKET_READY);
	assert_true(server_generation() == 1 && server_increment() == 8);
	assert_true(r->s.generation == 1 && r->s.seen.own_mark == 40);
	fake_expect(&(struct fake_reply){ .match = "REPLACE INTO tickets64", .nstmts = 6,
	    .insert_id = { 0, 0, 43 }, .affected = { 0, 1, 1, 1, 1, 0 },
	    .row = { "40", "1", "0" }, .nfields = 3 });
	assert_true(fetch(&r->s));
	run(r);
	assert_int_equal(r->s.state, TICKET_REFUSED);
	assert_non_null(strstr(r->s.last_error, "wrong parity"));
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_check_with(-1, NULL, -1, NULL);
	ticket_start(&r->s);
	run(r);
	assert_int_equal(r->s.state, TICKET_REFUSED);
	assert_non_null(strstr(r->s.last_error, "tier_generation is 0"));
	assert_true(server_shape_set(2, 0, 0));
	rig_down(r);
}

/* A server in a later generation that fails its other checks moves no view. */
static void
test_view_not_moved_by_bad_server(void **state)
{
	struct rig *r = rig_up();
	struct fake_reply c = { .match = "SELECT @@version", .nfields = 26 };

	(void)state;
	memcpy(c.row, check_row, sizeof(check_row));
	c.row[21] = c.row[23] = "1";	/* generation 1, open ... */
	c.row[15] = "8";		/* ... with M = 8, but the wrong parity */
	c.row[7] = "even";
	fake_expect(&c);
	ticket_recheck_soon(&r->s);
	run(r);
	assert_int_equal(r->s.state, TICKET_REFUSED);
	assert_true(server_generation() == 0 && server_increment() == 2);
	rig_down(r);
}

/* A server another one (or itself) reports retired is refused, by its role. */
static void
test_retired(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	script_check_with(25, "o3,odd", -1, NULL);
	ticket_recheck_soon(&r->s);
	run(r);
	assert_int_equal(r->s.state, TICKET_REFUSED);
	assert_non_null(strstr(r->s.last_error, "retired by idgenctl tier retire-server"));
	assert_true(server_retired(SERVER_ODD) && !server_retired(SERVER_EVEN));
	assert_true(server_shape_set(2, 0, 0));
	assert_false(server_retired(SERVER_ODD));
	rig_down(r);
}

/*
 * A server a check reports retired is refused only once that check's marks
 * are read (TICKET_EV_READ): its copies of the others' marks bind until tier
 * retire-server has carried them (docs/design.md 12.5, idsim seed 5533).
 */
static void
test_retired_read(void **state)
{
	struct ticket_params tp = { 100, 1000, 30000, 5000 };
	struct db_params p;
	static struct rig r;

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&p, 0, sizeof(p));
	fake_reset();
	nevents = 0;
	nreads = 0;
	assert_true(server_shape_set(2, 0, 0));
	r.base = event_base_new();
	p.host = "127.0.0.1";
	p.database = "idgen";
	p.ops = &fake_ops;
	assert_true(ticket_init(&r.s, r.base, &p, SERVER_ODD, &tp, notify, NULL));
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_check_with(25, "odd", -1, NULL);
	ticket_start(&r.s);
	run(&r);
	assert_int_equal(r.s.state, TICKET_REFUSED);
	assert_non_null(strstr(r.s.last_error, "retired by idgenctl tier retire-server"));
	assert_int_equal(nreads, 1);
	assert_true(server_shape_set(2, 0, 0));
	rig_down(&r);
}

/* A missing right at connect refuses the server and names the GRANT. */
static void
test_missing_right(void **state)
{
	static struct rig r;
	struct ticket_params tp = { 100, 1000, 30000, 5000 };
	struct db_params p;

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&p, 0, sizeof(p));
	fake_reset();
	nevents = 0;
	r.base = event_base_new();
	p.database = "idgen";
	p.ops = &fake_ops;
	assert_true(ticket_init(&r.s, r.base, &p, SERVER_ODD, &tp, notify, NULL));
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_check_with(-1, NULL, -1, NULL);
	fake_expect(&(struct fake_reply){ .match = "EXPLAIN REPLACE", .err = 1142 });
	ticket_start(&r.s);
	run(&r);
	assert_int_equal(r.s.state, TICKET_REFUSED);
	assert_non_null(strstr(r.s.last_error, "GRANT SELECT, INSERT, DELETE ON idgen.tickets64"));
	rig_down(&r);
}

/*
 * A TLS failure at connect (certificate, host, no TLS offered) refuses the
 * server, as a wrong password does, and names the settings; a lost
 * connection is only an outage (test_lost_mid_ticket).
 */
static void
test_tls_refused(void **state)
{
	static struct rig r;
	struct ticket_params tp = { 100, 1000, 30000, 5000 };
	struct db_params p;

	(void)state;
	assert_int_equal(db_classify(DBTLS_ERR), DB_ERRC_TLS);
	memset(&r, 0, sizeof(r));
	memset(&p, 0, sizeof(p));
	fake_reset();
	nevents = 0;
	r.base = event_base_new();
	p.database = "idgen";
	p.ops = &fake_ops;
	assert_true(ticket_init(&r.s, r.base, &p, SERVER_ODD, &tp, notify, NULL));
	fake_expect(&(struct fake_reply){ .match = "CONNECT", .err = DBTLS_ERR });
	ticket_start(&r.s);
	run(&r);
	assert_int_equal(r.s.state, TICKET_REFUSED);
	assert_true(nevents == 1 && events[0] == TICKET_EV_REFUSED);
	assert_non_null(strstr(r.s.last_error, "db_tls = required: check db_tls_ca_file"));
	assert_int_equal(r.s.stats.tickets, 0);
	rig_down(&r);
}

/*
 * One transaction for every sequence (docs/design.md 13.7): the default's and
 * a namespace's, built from their tables' names, are the statements 6.3 and
 * 13.6 write (the namespace's copy guarded in a ticket, not in a witness).
 */
static void
test_seq_sql(void **state)
{
	struct ticket_copy even = { SERVER_EVEN, 5, 4096, 24576 }, odd = { SERVER_ODD, 9, 8, 80 };
	struct ticket_seq q;
	char sql[2048];
	int n = 0;

	(void)state;
	ticket_seq_set(&q, NULL, 4096, NULL);
	assert_true(ticket_seq_build(&q, SERVER_ODD, &even, 1, sql, sizeof(sql)));
	assert_string_equal(sql, "START TRANSACTION;SELECT high_water, generation, sealed FROM "
	    "idgen_marks WHERE role = 'odd' FOR UPDATE;REPLACE INTO tickets64 (stub) VALUES "
	    "('a');UPDATE idgen_marks SET high_water = LAST_INSERT_ID(), block_size = 4096 WHERE "
	    "role = 'odd' AND (high_water + 1) * IF(block_size = 0, 4096, block_size) <= "
	    "LAST_INSERT_ID() * 4096;UPDATE idgen_marks SET high_water = 5, block_size = 4096 "
	    "WHERE role = 'even' AND (high_water + 1) * IF(block_size = 0, 4096, block_size) < "
	    "24576;COMMIT");
	assert_int_equal(ticket_seq_stmts(&q, 1), 6);
	ticket_seq_set(&q, "orders", 8, "refuse");
	assert_string_equal(q.table, "tickets_orders");
	assert_true(ticket_seq_build(&q, SERVER_EVEN, &odd, 1, sql, sizeof(sql)));
	assert_string_equal(sql, "START TRANSACTION;SET @idgen_ns_ok = 0;SELECT n.state, "
	    "n.block_size, n.fallback, m.generation, m.sealed, @idgen_ns_ok := (n.state = 'ready' "
	    "AND n.block_size = 8 AND n.fallback = 'refuse') FROM idgen_namespaces n JOIN "
	    "idgen_marks m ON m.role = 'even' WHERE n.name = 'orders' LOCK IN SHARE MODE;SELECT "
	    "high_water FROM idgen_ns_marks WHERE ns = 'orders' AND role = 'even' FOR UPDATE;"
	    "REPLACE INTO tickets_orders (stub) VALUES ('a');UPDATE idgen_ns_marks SET high_water "
	    "= LAST_INSERT_ID(), block_size = 8, used_at = NOW(3) WHERE ns = 'orders' AND role = "
	    "'even' AND @idgen_ns_ok = 1 AND (high_water + 1) * IF(block_size = 0, 8, block_size) "
	    "<= LAST_INSERT_ID() * 8;UPDATE idgen_ns_marks SET high_water = 9, block_size = 8 "
	    "WHERE ns = 'orders' AND role = 'odd' AND (high_water + 1) * IF(block_size = 0, 8, "
	    "block_size) < 80 AND @idgen_ns_ok = 1;COMMIT");
	assert_int_equal(ticket_seq_stmts(&q, 1), 8);
	/* Not fitting its buffer is a refusal, never a cut statement. */
	assert_false(ticket_seq_build(&q, SERVER_EVEN, &odd, 1, sql, 200));
	/* A copy rounded up to a block saturates (layout_ticket_end). */
	even = ticket_copy_block(SERVER_EVEN, UINT64_MAX, 10);
	assert_true(even.high_water == (UINT64_MAX - 1) / 10 && even.block_size == 10 &&
	    even.end == UINT64_MAX);
	even = ticket_copy_block(SERVER_EVEN, 1000, 10);
	assert_true(even.high_water == 99 && even.end == 1000);
	assert_true(ticket_seq_copy(&q, false, &odd, sql, sizeof(sql), &n));
	assert_null(strstr(sql, "@idgen_ns_ok"));
	assert_int_equal(strncmp(sql, "UPDATE idgen_ns_marks", 21), 0);
}

/*
 * What a witness carries, one function for every sequence (docs/design.md
 * 6.5, 13.7 step 3): each other server's copy that ends above what its row
 * held, partner first, never the server's own; a namespace's unguarded.
 */
static void
test_witness_carry(void **state)
{
	struct ticket_server s = { .index = 1, .partner = 2, .group_first = 0, .group_count = 3 };
	struct ticket_copy c[3];
	uint64_t held[3] = { 0, 0, 0 };
	struct ticket_seq q;
	char sql[2048];
	int n = 0;

	(void)state;
	assert_true(server_shape_set(3, 0, 0));
	assert_true(server_extras_set((const unsigned[]){ 3 }, 1));
	ticket_seq_set(&q, "orders", 8, NULL);
	for (unsigned j = 0; j < 3; j++)
		c[j] = ticket_copy_block(j, 80 * (j + 1), 8);
	assert_true(ticket_witness_carry(&s, &q, c, held, sql, sizeof(sql), &n));
	assert_string_equal(sql, "UPDATE idgen_ns_marks SET high_water = 29, block_size = 8 "
	    "WHERE ns = 'orders' AND role = 'o3' AND (high_water + 1) * IF(block_size = 0, 8, "
	    "block_size) < 240;UPDATE idgen_ns_marks SET high_water = 9, block_size = 8 WHERE "
	    "ns = 'orders' AND role = 'odd' AND (high_water + 1) * IF(block_size = 0, 8, "
	    "block_size) < 80");
	/* A row that holds the copy already: nothing carried of it. */
	held[2] = 240;
	n = 0;
	sql[0] = '\0';
	assert_true(ticket_witness_carry(&s, &q, c, held, sql, sizeof(sql), &n));
	assert_null(strstr(sql, "'o3'"));
	assert_non_null(strstr(sql, "role = 'odd'"));
	held[0] = 80;
	n = 0;
	sql[0] = '\0';
	assert_true(ticket_witness_carry(&s, &q, c, held, sql, sizeof(sql), &n));
	assert_int_equal(n, 0);
	/* Not fitting its buffer is a refusal, never a cut statement. */
	held[0] = held[2] = 0;
	n = 0;
	assert_false(ticket_witness_carry(&s, &q, c, held, sql, 100, &n));
	assert_true(server_shape_set(2, 0, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ticket),
		cmocka_unit_test(test_deadlock_retried),
		cmocka_unit_test(test_own_mark_regressed),
		cmocka_unit_test(test_ticket_below_mark),
		cmocka_unit_test(test_ticket_below_learned_mark),
		cmocka_unit_test(test_verdict_learned),
		cmocka_unit_test(test_verdict_changed),
		cmocka_unit_test(test_wrong_parity),
		cmocka_unit_test(test_lost_mid_ticket),
		cmocka_unit_test(test_missing_right),
		cmocka_unit_test(test_tls_refused),
		cmocka_unit_test(test_sealed_not_banked),
		cmocka_unit_test(test_moved_not_banked),
		cmocka_unit_test(test_ns_sealed_not_used),
		cmocka_unit_test(test_sealed_at_check),
		cmocka_unit_test(test_session_increment_old),
		cmocka_unit_test(test_generation_adopted),
		cmocka_unit_test(test_view_not_moved_by_bad_server),
		cmocka_unit_test(test_retired),
		cmocka_unit_test(test_retired_read),
		cmocka_unit_test(test_seq_sql),
		cmocka_unit_test(test_witness_carry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
