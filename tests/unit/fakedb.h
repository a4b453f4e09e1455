/*
 * fakedb.h - a scripted database behind db.h's table of operations, for unit
 * tests of the modules that talk to ticket servers (included by one test
 * file each: every function is static). Each query takes the next scripted
 * answer, which names a piece of SQL the query must contain; past the script
 * the server answers as unreachable (counted in unscripted). Answers come on
 * the next loop turn, as the real driver never calls back inside the call.
 */
#ifndef IDGEN_FAKEDB_H
#define IDGEN_FAKEDB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "db.h"

/*
 * One scripted answer: the query must contain match. before, when set, runs
 * just before the answer is delivered (a test acts while the query is in flight).
 * hold, on a live connection, keeps the answer back until fake_release(): the
 * server has answered, the answer is still on its way.
 */
struct fake_reply {
	const char	*match;
	void		(*before)(void);
	bool		 hold;
	unsigned	 err;
	unsigned	 nstmts;
	uint64_t	 insert_id[DB_MAX_STMTS];
	uint64_t	 affected[DB_MAX_STMTS];
	const char	*row[48];
	unsigned	 nfields;
};

#define FAKE_MAX	32

static struct fake_reply script[FAKE_MAX];
static unsigned nscript, next_reply, unscripted;

/* Forgets the script. */
static void
fake_reset(void)
{
	nscript = next_reply = unscripted = 0;
}

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
	char *row[48];
	db_cb cb = f->cb;
	unsigned i;

	(void)fd;
	(void)what;
	memset(&r, 0, sizeof(r));
	r.err = fr->err;
	r.msg = fr->err == 2003 ? "no script: server unreachable" :
	    fr->err ? "scripted error" : NULL;
	r.nstmts = fr->nstmts;
	for (i = 0; i < DB_MAX_STMTS; i++) {
		r.stmt_insert_id[i] = fr->insert_id[i];
		r.stmt_affected[i] = fr->affected[i];
	}
	/* As the driver reports them: of the last statement. */
	r.insert_id = fr->insert_id[fr->nstmts > 0 ? fr->nstmts - 1 : 0];
	r.affected = fr->affected[fr->nstmts > 0 ? fr->nstmts - 1 : 0];
	for (i = 0; i < fr->nfields; i++)
		row[i] = (char *)fr->row[i];
	r.row = fr->nfields > 0 ? row : NULL;
	r.nfields = fr->nfields;
	if (fr->err != 0 && !db_err_keeps(fr->err))
		f->connected = false;
	f->cb = NULL;
	if (fr->before != NULL)
		fr->before();
	cb(&f->conn, &r, f->arg);
}

static bool
fake_start(struct fake_conn *f, const char *sql, db_cb cb, void *arg)
{
	static const struct fake_reply down = { .match = "", .err = 2003 };
	const struct fake_reply *fr;

	if (next_reply >= nscript) {
		/* Past the script the server is unreachable; tests count these. */
		unscripted++;
		f->cb = cb;
		f->arg = arg;
		f->reply = &down;
		event_active(f->deliver, EV_TIMEOUT, 0);
		return true;
	}
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

/*
 * Live servers (test_tier.c). The script above is one queue shared by every
 * connection, but a pair of servers interleaves its queries in an order a
 * test should not have to spell out. A connection made with fake_live_ops
 * asks fake_live_answer instead, passing the name it was created with
 * ("odd", "even") and the SQL ("CONNECT" for a connect); the answer still
 * comes on the next loop turn, unless fake_inline is set: then it comes inside
 * the call, as MariaDB's driver gave an answer already there before db.c
 * deferred it (issue 36), so that a test can show the callers do not depend
 * on the order. Each connection takes turns over FAKE_TURNS answer buffers,
 * so a query started from inside a callback (callbacks nest when inline)
 * does not overwrite the answer that callback is still reading.
 */
#define FAKE_TURNS	8

static bool fake_inline;
struct fake_answer {
	struct fake_reply	reply;
	char			text[48][32];	/* room for the row's fields */
};

typedef void	(*fake_answer_fn)(const char *name, const char *sql, struct fake_answer *a);

static fake_answer_fn fake_live_answer;

struct fake_live_conn {
	struct fake_conn	f;	/* first: the shared functions take it */
	const char		*name;
	struct fake_answer	a[FAKE_TURNS];
	unsigned		turn;
};

static struct db_conn *
fake_live_create(struct event_base *base, const struct db_params *p, const char *name)
{
	struct fake_live_conn *l = calloc(1, sizeof(*l));

	assert_non_null(l);
	l->f.conn.ops = p->ops;
	l->f.deliver = event_new(base, -1, 0, fake_deliver_cb, &l->f);
	l->name = name;
	return &l->f.conn;
}

static bool
fake_live_start(struct fake_live_conn *l, const char *sql, db_cb cb, void *arg)
{
	struct fake_answer *a = &l->a[l->turn++ % FAKE_TURNS];

	memset(a, 0, sizeof(*a));
	assert_non_null(fake_live_answer);
	fake_live_answer(l->name, sql, a);
	l->f.cb = cb;
	l->f.arg = arg;
	l->f.reply = &a->reply;
	if (!a->reply.hold && fake_inline)
		fake_deliver_cb(-1, EV_TIMEOUT, &l->f);
	else if (!a->reply.hold)
		event_active(l->f.deliver, EV_TIMEOUT, 0);
	return true;
}

/* Delivers a held answer (fake_reply.hold) on the next loop turn; unused by some tests. */
static void __attribute__((unused))
fake_release(struct db_conn *c)
{
	struct fake_conn *f = (struct fake_conn *)c;

	assert_non_null(f->cb);
	assert_true(f->reply->hold);
	event_active(f->deliver, EV_TIMEOUT, 0);
}

static bool
fake_live_connect(struct db_conn *c, db_cb cb, void *arg)
{
	struct fake_live_conn *l = (struct fake_live_conn *)c;

	l->f.connected = true;
	return fake_live_start(l, "CONNECT", cb, arg);
}

static bool
fake_live_query(struct db_conn *c, const char *sql, db_cb cb, void *arg)
{
	struct fake_live_conn *l = (struct fake_live_conn *)c;

	/* As db.c: no query on a connection an error closed (db_err_keeps). */
	if (!l->f.connected || l->f.cb != NULL)
		return false;
	return fake_live_start(l, sql, cb, arg);
}

static const struct db_ops fake_live_ops = {
	fake_live_create, fake_destroy, fake_live_connect, fake_live_query, fake_close,
	fake_on_lost, fake_connected,
};

#endif
