/*
 * ctldb.c - ctl.h's seam over MariaDB's blocking Connector/C: one connection
 * per server (the config's timeouts, the db_tls_* settings checked), a
 * statement and its stored result.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <mysql.h>

#include "ctl.h"

static bool	ctldb_reads(const char *sql);
static bool	ctldb_lock_held(struct ctl_server *s, const char *sql);
static bool	ctldb_again(MYSQL *m, unsigned tries);
static void	ctldb_pause(unsigned ms);

/*
 * How often one statement outside a transaction is sent when MariaDB made it a
 * deadlock's victim or its lock wait timed out: idservers' ticket transactions
 * lock the marks rows an idgenctl UPDATE raises (ns raise under load lost 6
 * runs in 6 to 1213 without it).
 */
#define CTLDB_TRIES		8
#define CTLDB_AGAIN_MS		20	/* the first wait before it is sent again, doubling */

/*
 * The connection holding the lock 'idgenctl' (idgenctl.c's ctl_lock), NULL
 * while none: every statement that writes first checks that it still does.
 */
static struct ctl_server *ctldb_lock_srv;

/* The lock 'idgenctl' is held on s's connection from now on (ctl.h). */
void
ctldb_lock_conn(struct ctl_server *s)
{
	ctldb_lock_srv = s;
}

/* A plain SELECT, SHOW or EXPLAIN: a statement that writes nothing. */
static bool
ctldb_reads(const char *sql)
{
	static const char *const verb[] = { "SELECT", "SHOW", "EXPLAIN" };

	while (isspace((unsigned char)*sql) || *sql == '(')
		sql++;
	for (size_t i = 0; i < sizeof(verb) / sizeof(verb[0]); i++) {
		size_t n = strlen(verb[i]);

		if (strncasecmp(sql, verb[i], n) == 0 &&
		    !isalnum((unsigned char)sql[n]) && sql[n] != '_')
			return true;
	}
	return false;
}

/*
 * Whether this process still holds the lock 'idgenctl', asked on the lock's
 * own connection before a statement that writes: a restart of the odd server
 * frees it with that connection, silently, and a second command may have taken
 * it since. Without it the statement is not sent (docs/design.md 12.4): false
 * with the reason in s->error.
 */
static bool
ctldb_lock_held(struct ctl_server *s, const char *sql)
{
	MYSQL *m = (MYSQL *)ctldb_lock_srv->db;
	MYSQL_RES *r;
	MYSQL_ROW row;
	bool held = false;
	int words = 0;
	size_t len = 0;

	if (m != NULL && mysql_query(m, "SELECT IS_USED_LOCK('idgenctl') = "
	    "CONNECTION_ID()") == 0 && (r = mysql_store_result(m)) != NULL) {
		row = mysql_fetch_row(r);
		held = row != NULL && row[0] != NULL && strcmp(row[0], "1") == 0;
		mysql_free_result(r);
	}
	if (held)
		return true;
	/* The statement's first three words name it. */
	while (sql[len] != '\0' && len < 64) {
		if (isspace((unsigned char)sql[len]) && len > 0 &&
		    !isspace((unsigned char)sql[len - 1]) && ++words == 3)
			break;
		len++;
	}
	snprintf(s->error, sizeof(s->error), "lost the lock 'idgenctl' on the odd server "
	    "(did it restart?): stopped before %.*s; run the command again", (int)len, sql);
	return false;
}

static bool
ctldb_connect(const struct ctl *c, struct ctl_server *s, const char *user,
    const char *password, const char *database)
{
	unsigned ct = (c->cfg.connect_timeout_ms + 999) / 1000;
	unsigned qt = (c->cfg.query_timeout_ms + 999) / 1000 + 5;
	MYSQL *m = mysql_init(NULL);

	s->db = (struct ctl_db *)m;
	if (m == NULL) {
		snprintf(s->error, sizeof(s->error), "out of memory");
		return false;
	}
	mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
	mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &qt);
	mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &qt);
	if (!dbtls_apply(m, &c->tls)) {
		snprintf(s->error, sizeof(s->error), "the MariaDB client library refused the "
		    "db_tls_* settings");
		return false;
	}
	if (mysql_real_connect(m, s->host, user, password, database, s->port, NULL, 0) == NULL) {
		s->errnum = mysql_errno(m);
		snprintf(s->error, sizeof(s->error), "cannot connect: %s%s%s", mysql_error(m),
		    mysql_errno(m) == DBTLS_ERR ? " (db_tls = required: check db_tls_ca_file, "
		    "db_tls_verify_host, db_tls_min_version and the server's ssl_cert)" : "",
		    dbtls_auth_hint(mysql_errno(m), &c->tls));
		return false;
	}
	if (!dbtls_check(m, &c->tls, s->error, sizeof(s->error)))
		return false;
	dbtls_describe(m, s->tls, sizeof(s->tls));
	return true;
}

/*
 * The statement that just failed on m is sent again (after a wait): a deadlock
 * (1213) or lock wait timeout (1205) of a statement run outside a transaction,
 * which MariaDB rolled back whole, so running it again runs it once. Inside a
 * transaction the whole transaction was rolled back: its caller sees the error.
 */
static bool
ctldb_again(MYSQL *m, unsigned tries)
{
	unsigned e = mysql_errno(m);

	if ((e != 1213 && e != 1205) || tries >= CTLDB_TRIES ||
	    (m->server_status & SERVER_STATUS_IN_TRANS) != 0)
		return false;
	ctldb_pause(CTLDB_AGAIN_MS << (tries - 1));
	return true;
}

static unsigned
ctldb_query(struct ctl_server *s, const char *sql, struct ctl_res **res)
{
	MYSQL *m = (MYSQL *)s->db;
	MYSQL_RES *r;

	*res = NULL;
	if (ctldb_lock_srv != NULL && !ctldb_reads(sql) && !ctldb_lock_held(s, sql))
		return 2000;	/* CR_UNKNOWN_ERROR: not sent */
	for (unsigned tries = 1; mysql_query(m, sql) != 0; tries++) {
		if (!ctldb_again(m, tries)) {
			snprintf(s->error, sizeof(s->error), "%s", mysql_error(m));
			return mysql_errno(m) != 0 ? mysql_errno(m) : 2000;	/* CR_UNKNOWN_ERROR */
		}
	}
	r = mysql_store_result(m);
	if (r == NULL && mysql_errno(m) != 0) {
		snprintf(s->error, sizeof(s->error), "%s", mysql_error(m));
		return mysql_errno(m);
	}
	*res = (struct ctl_res *)r;
	return 0;
}

static char **
ctldb_row(struct ctl_res *res)
{
	return mysql_fetch_row((MYSQL_RES *)res);
}

static unsigned
ctldb_fields(struct ctl_res *res)
{
	return mysql_num_fields((MYSQL_RES *)res);
}

static void
ctldb_res_free(struct ctl_res *res)
{
	mysql_free_result((MYSQL_RES *)res);
}

static void
ctldb_close(struct ctl_db *db)
{
	mysql_close((MYSQL *)db);
}

static void
ctldb_pause(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

const struct ctl_ops ctldb_mariadb = {
	.connect = ctldb_connect,
	.query = ctldb_query,
	.row = ctldb_row,
	.fields = ctldb_fields,
	.res_free = ctldb_res_free,
	.close = ctldb_close,
	.pause = ctldb_pause,
};
