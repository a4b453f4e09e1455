/*
 * conn.c - what idgenctl's commands share: one blocking connection per server
 * (the config's timeouts, the db_tls_* settings checked), a query, a statement.
 * The commands (add.c, raise.c, ns.c) and the checks of idgenctl.c call these;
 * nothing here calls back into them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

/* A decimal column; NULL or junk is false. */
bool
ctl_u64(const char *v, uint64_t *out)
{
	char *end;

	if (v == NULL || *v < '0' || *v > '9')
		return false;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno == 0 && *end == '\0';
}

/* Runs a query; its result (or NULL with the error in s->error). */
MYSQL_RES *
ctl_query(struct ctl_server *s, const char *sql)
{
	MYSQL_RES *res;

	if (mysql_query(s->db, sql) != 0) {
		snprintf(s->error, sizeof(s->error), "%s", mysql_error(s->db));
		return NULL;
	}
	res = mysql_store_result(s->db);
	if (res == NULL)
		snprintf(s->error, sizeof(s->error), "%s", mysql_errno(s->db) ?
		    mysql_error(s->db) : "no result");
	return res;
}

/* Runs one statement (printf-formatted); false with the error on stderr. */
bool
ctl_exec(struct ctl_server *s, const char *fmt, ...)
{
	char sql[2048];
	MYSQL_RES *res;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	if (mysql_query(s->db, sql) != 0) {
		fprintf(stderr, "idgenctl: %s:%u: %s\n", s->host, s->port, mysql_error(s->db));
		return false;
	}
	res = mysql_store_result(s->db);
	if (res != NULL)
		mysql_free_result(res);
	return true;
}

/* Connects s as user with the tier's database as the default one. */
bool
ctl_connect_as(const struct ctl *c, struct ctl_server *s, const char *user,
    const char *password)
{
	return ctl_connect_db(c, s, user, password, c->cfg.db_name);
}

/* Connects s as user with database as the default one (a shard's, for adoption). */
bool
ctl_connect_db(const struct ctl *c, struct ctl_server *s, const char *user,
    const char *password, const char *database)
{
	unsigned ct = (c->cfg.connect_timeout_ms + 999) / 1000;
	unsigned qt = (c->cfg.query_timeout_ms + 999) / 1000 + 5;

	s->db = mysql_init(NULL);
	if (s->db == NULL) {
		snprintf(s->error, sizeof(s->error), "out of memory");
		return false;
	}
	mysql_options(s->db, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
	mysql_options(s->db, MYSQL_OPT_READ_TIMEOUT, &qt);
	mysql_options(s->db, MYSQL_OPT_WRITE_TIMEOUT, &qt);
	if (!dbtls_apply(s->db, &c->tls)) {
		snprintf(s->error, sizeof(s->error), "the MariaDB client library refused the "
		    "db_tls_* settings");
		return false;
	}
	if (mysql_real_connect(s->db, s->host, user, password, database, s->port, NULL,
	    0) == NULL) {
		snprintf(s->error, sizeof(s->error), "cannot connect: %s%s%s", mysql_error(s->db),
		    mysql_errno(s->db) == DBTLS_ERR ? " (db_tls = required: check db_tls_ca_file, "
		    "db_tls_verify_host, db_tls_min_version and the server's ssl_cert)" : "",
		    dbtls_auth_hint(mysql_errno(s->db), &c->tls));
		return false;
	}
	if (!dbtls_check(s->db, &c->tls, s->error, sizeof(s->error)))
		return false;
	dbtls_describe(s->db, s->tls, sizeof(s->tls));
	return true;
}
