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
#include "ticket.h"

/* One scripted answer: the query must contain match. */
struct fake_reply {
	const char	*match;
	unsigned	 err;
	unsigned	 nstmts;
	uint64_t	 insert_id[DB_MAX_STMTS];
	uint64_t	 affected[DB_MAX_STMTS];
	const char	*row[16];
	unsigned	 nfields;
};

#define FAKE_MAX	32

static struct fake_reply script[FAKE_MAX];
static unsigned nscript, next_reply;

struct fake_conn {
	struct db_conn		 conn;
	struct event		*deliver;
	db_cb			 cb;
	void			*arg;
	bool			 connected;
	const struct fake_reply	*reply;
};

static void
fake_expect(const struct fake_reply *r)
{
	assert_true(nscript < FAKE_MAX);
	script[nscript++] = *r;
}

/* Calls back on the next loop turn, as the real driver never calls back inside the call. */
static void
fake_deliver_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fake_conn *f = arg;
	const struct fake_reply *fr = f->reply;
	struct db_result r;
	char *row[16];
	db_cb cb = f->cb;
	unsigned i;

	(void)fd;
	(void)what;
	memset(&r, 0, sizeof(r));
	r.err = fr->err;
	r.msg = fr->err ? "scripted error" : NULL;
	r.nstmts = fr->nstmts;
	for (i = 0; i < DB_MAX_STMTS; i++) {
		r.stmt_insert_id[i] = fr->insert_id[i];
		r.stmt_affected[i] = fr->affected[i];
	}
	for (i = 0; i < fr->nfields; i++)
		row[i] = (char *)fr->row[i];
	r.row = fr->nfields > 0 ? row : NULL;
	r.nfields = fr->nfields;
	if (fr->err != 0 && fr->err != 1213 && fr->err != 1205)
		f->connected = false;
	f->cb = NULL;
	cb(&f->conn, &r, f->arg);
}

static bool
fake_start(struct fake_conn *f, const char *sql, db_cb cb, void *arg)
{
	const struct fake_reply *fr;

	if (next_reply >= nscript)
		fail_msg("unscripted query: %s", sql);
	fr = &script[next_reply++];
	if (strstr(sql, fr->match) == NULL)
		fail_msg("query '%.120s' does not contain '%s'", sql, fr->match);
	f->cb = cb;
	f->arg = arg;
	f->reply = fr;
	event_active(f->deliver, EV_TIMEOUT, 0);
	return true;
}

static struct db_conn *
fake_create(struct event_base *base, const struct db_params *p, const char *name)
{
	struct fake_conn *f = calloc(1, sizeof(*f));

	(void)p;
	(void)name;
	assert_non_null(f);
	f->conn.ops = p->ops;
	f->deliver = event_new(base, -1, 0, fake_deliver_cb, f);
	return &f->conn;
}

static void
fake_destroy(struct db_conn *c)
{
	struct fake_conn *f = (struct fake_conn *)c;

	event_free(f->deliver);
	free(f);
}

static bool
fake_connect(struct db_conn *c, db_cb cb, void *arg)
{
	struct fake_conn *f = (struct fake_conn *)c;

	f->connected = true;
	return fake_start(f, "CONNECT", cb, arg);
}

static bool
fake_query(struct db_conn *c, const char *sql, db_cb cb, void *arg)
{
	return fake_start((struct fake_conn *)c, sql, cb, arg);
}

static void
fake_close(struct db_conn *c)
{
	struct fake_conn *f = (struct fake_conn *)c;

	event_del(f->deliver);
	f->cb = NULL;
	f->connected = false;
}

static void
fake_on_lost(struct db_conn *c, db_cb cb, void *arg)
{
	(void)c;
	(void)cb;
	(void)arg;
}

static bool
fake_connected(const struct db_conn *c)
{
	return ((const struct fake_conn *)c)->connected;
}

static const struct db_ops fake_ops = {
	fake_create, fake_destroy, fake_connect, fake_query, fake_close, fake_on_lost,
	fake_connected,
};

/* What the tier was told. */
static enum ticket_event events[64];
static uint64_t event_ticket[64];
static unsigned nevents;

static bool
notify(struct ticket_server *s, enum ticket_event ev, uint64_t ticket, void *arg)
{
	(void)s;
	(void)arg;
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

/* The check row of an odd server at B = 4096 whose next ticket is `counter`. */
static void
script_check(const char *counter)
{
	struct fake_reply c = { .match = "SELECT @@version", .nfields = 15, .row = {
	    "10.11.19-MariaDB", "2", "1", "1", "InnoDB", "1", "4096", "odd", "u-1", counter,
	    "5", "4", "0", "4096", "4096" } };

	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	fake_expect(&c);
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
	    .row = { "5" }, .nfields = 1 });
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
	nscript = next_reply = nevents = 0;
	r.base = event_base_new();
	p.host = "127.0.0.1";
	p.database = "idgen";
	p.ops = &fake_ops;
	assert_true(ticket_init(&r.s, r.base, &p, 1, &tp, notify, NULL));
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
}

/* Connect, check, one ticket: the tier is told of ticket 7. */
static void
test_ticket(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	expect_tx(7, 1);
	assert_true(ticket_fetch(&r->s));
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
	assert_true(ticket_fetch(&r->s));
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
	assert_true(ticket_fetch(&r->s));
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
	assert_true(ticket_fetch(&r->s));
	run(r);
	assert_int_equal(r->s.state, TICKET_REGRESSED);
	assert_true(r->s.stats.tickets == 0 && r->s.last_ticket == 0);
	rig_down(r);
}

/* An even ticket from the odd server: refused (auto_increment_offset changed). */
static void
test_wrong_parity(void **state)
{
	struct rig *r = rig_up();

	(void)state;
	expect_tx(8, 1);
	assert_true(ticket_fetch(&r->s));
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
	assert_true(ticket_fetch(&r->s));
	run(r);
	assert_int_equal(r->s.state, TICKET_DOWN);
	assert_true(nevents == 2 && events[1] == TICKET_EV_DOWN);
	assert_true(r->s.stats.tickets == 0 && r->s.stats.failures == 1);
	rig_down(r);
}

/* A missing right at connect refuses the server and names the GRANT. */
static void
test_missing_right(void **state)
{
	static struct rig r;
	struct ticket_params tp = { 100, 1000, 30000, 5000 };
	struct fake_reply c = { .match = "SELECT @@version", .nfields = 15, .row = {
	    "10.11.19-MariaDB", "2", "1", "1", "InnoDB", "1", "4096", "odd", "u-1", "7",
	    "5", "4", "0", "4096", "4096" } };
	struct db_params p;

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&p, 0, sizeof(p));
	nscript = next_reply = nevents = 0;
	r.base = event_base_new();
	p.database = "idgen";
	p.ops = &fake_ops;
	assert_true(ticket_init(&r.s, r.base, &p, 1, &tp, notify, NULL));
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	fake_expect(&c);
	fake_expect(&(struct fake_reply){ .match = "EXPLAIN REPLACE", .err = 1142 });
	ticket_start(&r.s);
	run(&r);
	assert_int_equal(r.s.state, TICKET_REFUSED);
	assert_non_null(strstr(r.s.last_error, "GRANT SELECT, INSERT, DELETE ON idgen.tickets64"));
	rig_down(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ticket),
		cmocka_unit_test(test_deadlock_retried),
		cmocka_unit_test(test_own_mark_regressed),
		cmocka_unit_test(test_ticket_below_mark),
		cmocka_unit_test(test_wrong_parity),
		cmocka_unit_test(test_lost_mid_ticket),
		cmocka_unit_test(test_missing_right),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
