/*
 * db.h - one database connection driven by the event loop: the seam between
 * the ticket and lease logic and MariaDB.
 *
 * One operation in flight per connection. A callback always comes from the
 * event loop, never inside db_connect or db_query, even when the answer is
 * already there (callers change state after starting a query). Every operation
 * is bounded by its own timer; on timeout or error the connection is closed and the callback reports it,
 * except after the errors the server reports within a session that goes on
 * (db_err_keeps): a deadlock, a lock wait timeout, a missing table or column, a
 * missing right. Then a transaction a multi-statement query opened may still be
 * open, and the caller ends it (ROLLBACK) or closes the connection.
 * The functions below dispatch through a table of operations (struct db_ops):
 * MariaDB's non-blocking Connector/C by default (db.c), or a scripted fake in
 * the unit tests (tests/unit/fakedb.c), chosen by db_params.ops.
 */
#ifndef IDGEN_DB_H
#define IDGEN_DB_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "dbtls.h"

#define DB_ERR_TIMEOUT	2013	/* reported like "lost connection" */

struct db_ops;

/* What an error means to a caller; only db.c reads the server's numbers. */
enum db_errclass {
	DB_ERRC_NONE,		/* no error */
	DB_ERRC_DEADLOCK,	/* 1213: the transaction was rolled back; retry it */
	DB_ERRC_LOCK_TIMEOUT,	/* 1205: the statement was rolled back; retry */
	DB_ERRC_AUTH,		/* user, password or database refused */
	DB_ERRC_RIGHTS,		/* a command denied on a table or column */
	DB_ERRC_SCHEMA,		/* no such table or column */
	DB_ERRC_TLS,		/* TLS required: handshake, certificate or no TLS offered */
	DB_ERRC_DOWN,		/* anything else: connection, timeout, server */
};

struct db_params {
	const char	*host;		/* an IP address: names and sockets do not go non-blocking */
	unsigned	 port;
	const char	*user;
	const char	*password;
	const char	*database;
	unsigned	 connect_timeout_ms;
	unsigned	 query_timeout_ms;
	unsigned	 flags;		/* DB_FOUND_ROWS, DB_MULTI_STATEMENTS */
	struct dbtls	 tls;		/* all zero: cleartext */
	const struct db_ops *ops;	/* NULL: MariaDB */
};

#define DB_FOUND_ROWS		1u	/* affected rows count matched rows, changed or not */
#define DB_MULTI_STATEMENTS	2u	/* several statements in one query (one round trip) */

/*
 * Opens a read-only transaction whose InnoDB snapshot is taken now, before
 * the statements after it read anything (information_schema is in no
 * snapshot: a check reads marks from this one, then counters live;
 * docs/design.md 6.4). End it with COMMIT.
 */
#define DB_SNAPSHOT_SQL \
    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;" \
    "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY;"

#define DB_MAX_STMTS	16	/* statements of one multi-statement query we report on:
				 * a ticket with a copy to each of 7 others, 12 */

struct db_result {
	unsigned	 err;		/* 0 on success, else a MariaDB/client error number */
	const char	*msg;		/* error text, valid during the callback */
	uint64_t	 insert_id;	/* of the last statement */
	uint64_t	 affected;
	char		**row;		/* the first row of the first SELECT (NULL: none);
					 * fields NULL for SQL NULL, valid during the callback */
	unsigned	 nfields;
	/* Per statement, with DB_MULTI_STATEMENTS: how many ran and what each did. */
	unsigned	 nstmts;
	uint64_t	 stmt_insert_id[DB_MAX_STMTS];
	uint64_t	 stmt_affected[DB_MAX_STMTS];
	const char	*tls;		/* a connect's: "TLSv1.3 <cipher>", or NULL for
					 * cleartext; valid during the callback */
};

/* Every implementation's handle begins with this. */
struct db_conn {
	const struct db_ops	*ops;
};
typedef void	(*db_cb)(struct db_conn *, const struct db_result *, void *);

/* One implementation: the functions below, each dispatched to it. */
struct db_ops {
	struct db_conn	*(*create)(struct event_base *base, const struct db_params *params,
			    const char *name);
	void		 (*destroy)(struct db_conn *c);
	bool		 (*connect)(struct db_conn *c, db_cb cb, void *arg);
	bool		 (*query)(struct db_conn *c, const char *sql, db_cb cb, void *arg);
	void		 (*close)(struct db_conn *c);
	void		 (*on_lost)(struct db_conn *c, db_cb cb, void *arg);
	bool		 (*connected)(const struct db_conn *c);
};

/* MariaDB's, the default. */
extern const struct db_ops db_mariadb_ops;

/* What a MariaDB or client error number means (0: DB_ERRC_NONE). */
enum db_errclass db_classify(unsigned err);
/* True when the connection stays open after this error (see the top). */
bool		db_err_keeps(unsigned err);

/* A new, unconnected handle; name labels log lines ("odd", "even"). */
struct db_conn	*db_new(struct event_base *base, const struct db_params *params,
		    const char *name);
void		 db_free(struct db_conn *c);

/* Starts connecting; cb reports the outcome. False when an operation is in flight. */
bool		 db_connect(struct db_conn *c, db_cb cb, void *arg)
		    __attribute__((warn_unused_result));

/* Starts a query on a connected handle; cb gets insert id, affected rows or rows. */
bool		 db_query(struct db_conn *c, const char *sql, db_cb cb, void *arg)
		    __attribute__((warn_unused_result));

/* Closes the connection now, cancelling any operation (its callback is not called). */
void		 db_close(struct db_conn *c);

/* Sets the callback for a server closing an idle connection. */
void		 db_on_lost(struct db_conn *c, db_cb cb, void *arg);

bool		 db_connected(const struct db_conn *c);

/*
 * The first row of a result's rows: its fields (NULL for SQL NULL) and their
 * number; NULL when there is no row.
 */
char		**db_first_row(const struct db_result *r, unsigned *nfields);

/* Once per process, before any connection / at exit. */
bool		 db_library_init(void) __attribute__((warn_unused_result));
void		 db_library_end(void);

#endif
