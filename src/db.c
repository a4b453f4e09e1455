/*
 * db.c - drive MariaDB Connector/C's non-blocking start/cont calls from libevent.
 *
 * The pattern of MariaDB's tests/async_queries.c: one non-persistent event,
 * re-armed from the wait mask each call returns, plus our own deadline timer.
 */
#include "db.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>
#include <openssl/err.h>

#include "clk.h"

enum db_op {
	DB_IDLE,
	DB_CONNECT,
	DB_QUERY,
	DB_STORE,
	DB_NEXT,	/* the next result of a multi-statement query */
};

/* MariaDB's handle; conn first, so a struct db_conn * is one of these. */
struct db_maria {
	struct db_conn		 conn;
	struct event_base	*base;
	struct db_params	 params;
	char			 name[16];
	MYSQL			*mysql;
	bool			 connected;
	enum db_op		 op;
	struct event		*io;		/* socket readiness or driver timeout */
	struct event		*deadline;	/* our bound on the whole operation */
	db_cb			 cb;
	void			*cb_arg;
	db_cb			 lost_cb;	/* the server closed an idle connection */
	void			*lost_arg;
	int			 iret;		/* result of real_query */
	MYSQL			*cret;		/* result of real_connect */
	MYSQL_RES		*rret;		/* result of store_result */
	MYSQL_RES		*first_res;	/* the first result set, kept for the caller */
	struct db_result	 acc;		/* per-statement results so far */
	char			 tls[96];	/* the session's TLS version and cipher, or "" */
};

static struct db_conn *db_maria_new(struct event_base *base, const struct db_params *params,
		    const char *name);
static void	db_maria_free(struct db_conn *conn);
static void	db_maria_close(struct db_conn *conn);
static bool	db_maria_connect(struct db_conn *conn, db_cb cb, void *arg);
static bool	db_maria_query(struct db_conn *conn, const char *sql, db_cb cb, void *arg);
static void	db_maria_on_lost(struct db_conn *conn, db_cb cb, void *arg);
static bool	db_maria_connected(const struct db_conn *conn);
static void	db_io_cb(evutil_socket_t fd, short what, void *arg);
static void	db_deadline_cb(evutil_socket_t fd, short what, void *arg);
static void	db_wait(struct db_maria *c, int status);
static void	db_step(struct db_maria *c, int status);
static void	db_finish(struct db_maria *c, unsigned err, const char *msg);
static void	db_statement_done(struct db_maria *c);
static void	db_arm_deadline(struct db_maria *c, unsigned ms);
static void	db_idle_cb(evutil_socket_t fd, short what, void *arg);
static void	db_arm(struct db_maria *c, short what, event_callback_fn cb,
		    const struct timeval *tv);
static void	db_tls_nonblock(struct db_maria *c);
static void	db_started(struct db_maria *c, int status);
static void	db_resume_cb(evutil_socket_t fd, short what, void *arg);

/* Drops the connection and any operation in flight, without a callback. */
static void
db_maria_close(struct db_conn *conn)
{
	struct db_maria *c = (struct db_maria *)conn;

	if (c->io != NULL)
		event_del(c->io);
	if (c->deadline != NULL)
		event_del(c->deadline);
	mysql_free_result(c->rret);	/* nothing for NULL */
	mysql_free_result(c->first_res);
	c->rret = c->first_res = NULL;
	if (c->mysql != NULL) {
		/* Returns at once even mid-operation (MARIADB-NOTES). */
		mysql_close(c->mysql);
		c->mysql = NULL;
	}
	c->connected = false;
	c->op = DB_IDLE;
	c->cb = NULL;
}

/* Closes and frees a handle. */
static void
db_maria_free(struct db_conn *conn)
{
	struct db_maria *c = (struct db_maria *)conn;

	if (c == NULL)
		return;
	db_maria_close(&c->conn);
	if (c->io != NULL)
		event_free(c->io);
	if (c->deadline != NULL)
		event_free(c->deadline);
	free(c);
}

/* Allocates a handle; nothing connects until db_connect(). */
static struct db_conn *
db_maria_new(struct event_base *base, const struct db_params *params, const char *name)
{
	struct db_maria *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->conn.ops = &db_mariadb_ops;
	c->base = base;
	c->params = *params;
	strncpy(c->name, name, sizeof(c->name) - 1);
	c->deadline = evtimer_new(base, db_deadline_cb, c);
	c->io = event_new(base, -1, 0, db_io_cb, c);
	if (c->deadline == NULL || c->io == NULL) {
		db_maria_free(&c->conn);
		return NULL;
	}
	return &c->conn;
}

/* The next loop turn after a start call the driver completed: carry on. */
static void
db_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct db_maria *c = arg;

	(void)fd;
	(void)what;
	if (c->op != DB_IDLE)
		db_step(c, 0);
}

/*
 * After a start call: waits, or, when the driver already has the answer (a
 * server on loopback often answers within the call, over TLS even more
 * often), moves on at the next loop turn. The callback never runs inside
 * db_connect or db_query: callers start a query from inside a callback of
 * their own and change state after it (ticket.c's checks, tier.c's
 * partner-first waits); an answer within the call ran them out of order,
 * and a new connection's "checked" line was lost (issue 36).
 */
static void
db_started(struct db_maria *c, int status)
{
	if (status != 0) {
		db_step(c, status);
		return;
	}
	ERR_clear_error();	/* as db_step: not left for the listeners' sessions */
	event_del(c->io);
	event_assign(c->io, c->base, -1, 0, db_resume_cb, c);
	event_active(c->io, EV_TIMEOUT, 1);
}

/* Bounds the current operation. */
static void
db_arm_deadline(struct db_maria *c, unsigned ms)
{
	struct timeval tv = clk_tv_ms(ms);

	event_add(c->deadline, &tv);
}

/* Starts the non-blocking handshake. */
static bool
db_maria_connect(struct db_conn *conn, db_cb cb, void *arg)
{
	struct db_maria *c = (struct db_maria *)conn;
	unsigned secs;
	int status;

	if (c->op != DB_IDLE)
		return false;
	db_maria_close(&c->conn);
	c->mysql = mysql_init(NULL);
	if (c->mysql == NULL)
		return false;
	mysql_options(c->mysql, MYSQL_OPT_NONBLOCK, 0);
	/* The driver's own timeouts are whole seconds: a backstop behind our timer. */
	secs = (c->params.connect_timeout_ms + 999) / 1000;
	mysql_options(c->mysql, MYSQL_OPT_CONNECT_TIMEOUT, &secs);
	secs = (c->params.query_timeout_ms + 999) / 1000;
	mysql_options(c->mysql, MYSQL_OPT_READ_TIMEOUT, &secs);
	mysql_options(c->mysql, MYSQL_OPT_WRITE_TIMEOUT, &secs);
	if (!dbtls_apply(c->mysql, &c->params.tls)) {
		mysql_close(c->mysql);
		c->mysql = NULL;
		return false;
	}
	c->cb = cb;
	c->cb_arg = arg;
	c->op = DB_CONNECT;
	db_arm_deadline(c, c->params.connect_timeout_ms);
	status = mysql_real_connect_start(&c->cret, c->mysql, c->params.host,
	    c->params.user, c->params.password, c->params.database,
	    c->params.port, NULL,
	    ((c->params.flags & DB_FOUND_ROWS) ? CLIENT_FOUND_ROWS : 0) |
	    ((c->params.flags & DB_MULTI_STATEMENTS) ? CLIENT_MULTI_STATEMENTS : 0));
	db_started(c, status);
	return true;
}

/* Starts a query. */
static bool
db_maria_query(struct db_conn *conn, const char *sql, db_cb cb, void *arg)
{
	struct db_maria *c = (struct db_maria *)conn;
	int status;

	if (c->op != DB_IDLE || !c->connected)
		return false;
	event_del(c->io);
	c->cb = cb;
	c->cb_arg = arg;
	c->op = DB_QUERY;
	memset(&c->acc, 0, sizeof(c->acc));
	db_arm_deadline(c, c->params.query_timeout_ms);
	status = mysql_real_query_start(&c->iret, c->mysql, sql, (unsigned long)strlen(sql));
	db_started(c, status);
	return true;
}

/* Points the handle's one event at its socket with the given interest. */
static void
db_arm(struct db_maria *c, short what, event_callback_fn cb, const struct timeval *tv)
{
	event_del(c->io);
	event_assign(c->io, c->base, mysql_get_socket(c->mysql), what, cb, c);
	event_add(c->io, tv);
}

/* Waits for what the driver asked for: readable, writable, or its own timeout. */
static void
db_wait(struct db_maria *c, int status)
{
	short what = 0;
	struct timeval tv, *tvp = NULL;

	if (status & MYSQL_WAIT_READ)
		what |= EV_READ;
	if (status & MYSQL_WAIT_WRITE)
		what |= EV_WRITE;
	if (status & MYSQL_WAIT_TIMEOUT) {
		tv = clk_tv_ms(mysql_get_timeout_value_ms(c->mysql));
		tvp = &tv;
	}
	db_arm(c, what, db_io_cb, tvp);
}

/*
 * Connector/C 3.3 makes the socket blocking once TCP connects. Its own reads
 * and writes still do not block (MSG_DONTWAIT), but OpenSSL's do: over TLS
 * every query then waited for the server's answer inside the call, stalling
 * the loop for a round trip (up to the driver's whole-second timeout on a hung
 * server). With the socket non-blocking again, OpenSSL asks to wait and the
 * driver hands the wait back to us as a wait mask. The TLS handshake itself
 * still holds the loop for its round trip (dbtls.c), bounded by
 * connect_timeout_ms (docs/design.md section 2.9).
 */
static void
db_tls_nonblock(struct db_maria *c)
{
	int fd, fl;

	if (!c->params.tls.required || c->mysql == NULL ||
	    (fd = (int)mysql_get_socket(c->mysql)) < 0)
		return;
	fl = fcntl(fd, F_GETFL);
	if (fl != -1 && !(fl & O_NONBLOCK))
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Readiness or driver timeout: continue the operation. */
static void
db_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct db_maria *c = arg;
	int status = 0;

	(void)fd;
	db_tls_nonblock(c);
	if (what & EV_READ)
		status |= MYSQL_WAIT_READ;
	if (what & EV_WRITE)
		status |= MYSQL_WAIT_WRITE;
	if (what & EV_TIMEOUT)
		status |= MYSQL_WAIT_TIMEOUT;
	switch (c->op) {
	case DB_CONNECT:
		status = mysql_real_connect_cont(&c->cret, c->mysql, status);
		break;
	case DB_QUERY:
		status = mysql_real_query_cont(&c->iret, c->mysql, status);
		break;
	case DB_STORE:
		status = mysql_store_result_cont(&c->rret, c->mysql, status);
		break;
	case DB_NEXT:
		status = mysql_next_result_cont(&c->iret, c->mysql, status);
		break;
	case DB_IDLE:
		return;
	}
	db_step(c, status);
}

/* Our deadline passed: the server is down or hung; close and report. */
static void
db_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct db_maria *c = arg;

	(void)fd;
	(void)what;
	db_finish(c, DB_ERR_TIMEOUT, c->op == DB_CONNECT ?
	    "connect timed out (connect_timeout_ms)" : "query timed out (query_timeout_ms)");
}

/* Either waits again or moves the operation on when the driver call completed. */
static void
db_step(struct db_maria *c, int status)
{
	char why[160];

	/*
	 * OpenSSL's error queue is this thread's, shared with the listeners' TLS
	 * sessions: what Connector/C left there (its message is in mysql_error)
	 * must not end a client's session (docs/design.md section 10, gap 9).
	 */
	ERR_clear_error();
	if (status != 0) {
		db_wait(c, status);
		return;
	}
	switch (c->op) {
	case DB_CONNECT:
		if (c->cret == NULL) {
			char msg[384];
			unsigned err = mysql_errno(c->mysql);

			snprintf(msg, sizeof(msg), "%s%s", mysql_error(c->mysql),
			    dbtls_auth_hint(err, &c->params.tls));
			db_finish(c, err, msg);
			return;
		}
		if (!dbtls_check(c->mysql, &c->params.tls, why, sizeof(why))) {
			db_finish(c, DBTLS_ERR, why);
			return;
		}
		c->connected = true;
		db_tls_nonblock(c);
		dbtls_describe(c->mysql, c->tls, sizeof(c->tls));
		c->acc.tls = c->tls[0] != '\0' ? c->tls : NULL;
		db_finish(c, 0, NULL);
		return;
	case DB_QUERY:
	case DB_NEXT:
		if (c->iret != 0) {
			db_finish(c, mysql_errno(c->mysql), mysql_error(c->mysql));
			return;
		}
		if (mysql_field_count(c->mysql) == 0) {
			db_statement_done(c);
			return;
		}
		c->op = DB_STORE;
		status = mysql_store_result_start(&c->rret, c->mysql);
		db_step(c, status);
		return;
	case DB_STORE:
		if (c->rret == NULL) {
			db_finish(c, mysql_errno(c->mysql), mysql_error(c->mysql));
			return;
		}
		db_statement_done(c);
		return;
	case DB_IDLE:
		return;
	}
}

/* One statement's result is in: note it, then read the next one or finish. */
static void
db_statement_done(struct db_maria *c)
{
	unsigned i = c->acc.nstmts;
	int status;

	if (i < DB_MAX_STMTS) {
		c->acc.stmt_insert_id[i] = mysql_insert_id(c->mysql);
		c->acc.stmt_affected[i] = c->rret != NULL ? 0 : mysql_affected_rows(c->mysql);
	}
	c->acc.nstmts++;
	if (c->rret != NULL) {
		if (c->first_res == NULL)
			c->first_res = c->rret;
		else
			mysql_free_result(c->rret);
		c->rret = NULL;
	}
	if (!mysql_more_results(c->mysql)) {
		db_finish(c, 0, NULL);
		return;
	}
	c->op = DB_NEXT;
	status = mysql_next_result_start(&c->iret, c->mysql);
	db_step(c, status);
}

/*
 * An idle connection's socket turned readable: a server sends nothing
 * unprompted, so it closed the connection. Noticing now, not at the next
 * query, keeps health in STATS true and starts the re-probe early.
 */
static void
db_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct db_maria *c = arg;
	struct db_result r;

	(void)fd;
	(void)what;
	if (c->op != DB_IDLE)
		return;
	db_maria_close(&c->conn);
	memset(&r, 0, sizeof(r));
	r.err = DB_ERR_TIMEOUT;
	r.msg = "server closed the idle connection";
	if (c->lost_cb != NULL)
		c->lost_cb(&c->conn, &r, c->lost_arg);
}

/* Ends the operation and calls back; on error the connection is closed first. */
static void
db_finish(struct db_maria *c, unsigned err, const char *msg)
{
	struct db_result r;
	MYSQL_RES *res;
	char msgbuf[384];
	db_cb cb = c->cb;
	void *arg = c->cb_arg;

	r = c->acc;
	memset(&c->acc, 0, sizeof(c->acc));
	event_del(c->io);
	event_del(c->deadline);
	r.err = err;
	if (err == 0 && c->mysql != NULL) {
		r.insert_id = mysql_insert_id(c->mysql);
		r.affected = r.nstmts > 0 && r.nstmts <= DB_MAX_STMTS ?
		    r.stmt_affected[r.nstmts - 1] : mysql_affected_rows(c->mysql);
	}
	mysql_free_result(c->rret);
	c->rret = NULL;
	res = c->first_res;
	c->first_res = NULL;
	if (res != NULL && (r.row = mysql_fetch_row(res)) != NULL)
		r.nfields = mysql_num_fields(res);
	c->op = DB_IDLE;
	c->cb = NULL;
	if (err != 0) {
		/* Copy the text: closing the handle frees it. */
		snprintf(msgbuf, sizeof(msgbuf), "%s", msg != NULL ? msg : "unknown error");
		r.msg = msgbuf;
		if (!db_err_keeps(err)) {
			if (c->mysql != NULL)
				mysql_close(c->mysql);
			c->mysql = NULL;
			c->connected = false;
		}
	}
	if (c->connected)
		db_arm(c, EV_READ, db_idle_cb, NULL);	/* watched while idle */
	if (cb != NULL)
		cb(&c->conn, &r, arg);
	mysql_free_result(res);
}

/* Sets who is told when the server drops an idle connection (crash, restart). */
static void
db_maria_on_lost(struct db_conn *conn, db_cb cb, void *arg)
{
	struct db_maria *c = (struct db_maria *)conn;

	c->lost_cb = cb;
	c->lost_arg = arg;
}

static bool
db_maria_connected(const struct db_conn *conn)
{
	const struct db_maria *c = (const struct db_maria *)conn;

	return c->connected;
}

char **
db_first_row(const struct db_result *r, unsigned *nfields)
{
	*nfields = r->row != NULL ? r->nfields : 0;
	return r->row;
}

const struct db_ops db_mariadb_ops = {
	db_maria_new, db_maria_free, db_maria_connect, db_maria_query, db_maria_close,
	db_maria_on_lost, db_maria_connected,
};

/* A handle of params->ops (MariaDB when NULL); nothing connects until db_connect(). */
struct db_conn *
db_new(struct event_base *base, const struct db_params *params, const char *name)
{
	return (params->ops != NULL ? params->ops : &db_mariadb_ops)->create(base, params, name);
}

void
db_free(struct db_conn *c)
{
	if (c != NULL)
		c->ops->destroy(c);
}

bool
db_connect(struct db_conn *c, db_cb cb, void *arg)
{
	return c->ops->connect(c, cb, arg);
}

bool
db_query(struct db_conn *c, const char *sql, db_cb cb, void *arg)
{
	return c->ops->query(c, sql, cb, arg);
}

void
db_close(struct db_conn *c)
{
	c->ops->close(c);
}

void
db_on_lost(struct db_conn *c, db_cb cb, void *arg)
{
	c->ops->on_lost(c, cb, arg);
}

bool
db_connected(const struct db_conn *c)
{
	return c->ops->connected(c);
}

/* The meaning of MariaDB's error numbers, in one place. */
enum db_errclass
db_classify(unsigned err)
{
	switch (err) {
	case 0:
		return DB_ERRC_NONE;
	case 1213:	/* deadlock: the transaction was rolled back */
		return DB_ERRC_DEADLOCK;
	case 1205:	/* lock wait timeout: the statement was rolled back */
		return DB_ERRC_LOCK_TIMEOUT;
	case 1045:	/* access denied (user or password) */
	case 1698:	/* access denied without a password */
	case 1044:	/* no rights on the database */
	case 1049:	/* unknown database */
	case 5010:	/* a login method outside db_tls_verify_host = 0's list */
		return DB_ERRC_AUTH;
	case 1142:	/* command denied on a table */
	case 1143:	/* ... on a column */
		return DB_ERRC_RIGHTS;
	case 1146:	/* no such table */
	case 1054:	/* no such column */
		return DB_ERRC_SCHEMA;
	case DBTLS_ERR:	/* TLS handshake, certificate, or a server without TLS */
		return DB_ERRC_TLS;
	default:
		return DB_ERRC_DOWN;
	}
}

/*
 * The server answered with an error and the session goes on: the connection is
 * usable (the caller ends a transaction left open). A namespace check on a
 * server without the namespace tables must not take the connection, and with
 * it the server, down at every recheck.
 */
bool
db_err_keeps(unsigned err)
{
	switch (db_classify(err)) {
	case DB_ERRC_DEADLOCK:
	case DB_ERRC_LOCK_TIMEOUT:
	case DB_ERRC_SCHEMA:
	case DB_ERRC_RIGHTS:
		return true;
	default:
		return false;
	}
}

bool
db_library_init(void)
{
	return mysql_library_init(0, NULL, NULL) == 0;
}

void
db_library_end(void)
{
	mysql_library_end();
}
