/*
 * conn.c - what idgenctl's commands share: one blocking connection per server,
 * a query, a statement.
 * The commands (add.c, raise.c, ns.c) and the checks of idgenctl.c call these;
 * nothing here calls back into them. The connection itself is behind ctl.h's
 * seam (struct ctl_ops): MariaDB's in ctldb.c, the simulation's in sim/ctlrun.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/*
 * The commands' test seam, called right after each of their steps (ctl.h):
 * IDGENCTL_KILL_AT=STEP ends the command there with SIGKILL; with
 * IDGENCTL_PAUSE_AT=STEP and IDGENCTL_PAUSE_FILE=PATH it creates PATH.paused
 * and waits until it is removed, 30 s at most, then goes on (the first time it
 * reaches STEP only: a step inside a loop over servers).
 */
void
ctl_step(const char *step)
{
	const char *kill = getenv("IDGENCTL_KILL_AT"), *at = getenv("IDGENCTL_PAUSE_AT"),
	    *path = getenv("IDGENCTL_PAUSE_FILE");
	static bool paused;
	char flag[1024];
	FILE *f;

	if (kill != NULL && strcmp(kill, step) == 0)
		raise(SIGKILL);
	if (at == NULL || path == NULL || strcmp(at, step) != 0 || paused)
		return;
	paused = true;
	snprintf(flag, sizeof(flag), "%s.paused", path);
	if ((f = fopen(flag, "w")) == NULL)
		return;
	fclose(f);
	for (int i = 0; i < 300 && access(flag, F_OK) == 0; i++)
		usleep(100000);
}

/* The operations in use (ctl.h's seam). */
const struct ctl_ops *ctl_ops = &ctldb_mariadb;

char **
ctl_row(struct ctl_res *res)
{
	return ctl_ops->row(res);
}

unsigned
ctl_fields(struct ctl_res *res)
{
	return ctl_ops->fields(res);
}

void
ctl_res_free(struct ctl_res *res)
{
	if (res != NULL)
		ctl_ops->res_free(res);
}

/* Closes s's connection, if any. */
void
ctl_close(struct ctl_server *s)
{
	if (s->db != NULL)
		ctl_ops->close(s->db);
	s->db = NULL;
}

/* Runs a query; its result (or NULL with the error in s->error, its number in s->errnum). */
struct ctl_res *
ctl_query(struct ctl_server *s, const char *sql)
{
	struct ctl_res *res = NULL;

	if ((s->errnum = ctl_ops->query(s, sql, &res)) != 0)
		return NULL;
	if (res == NULL)
		snprintf(s->error, sizeof(s->error), "no result");
	return res;
}

/* Runs one statement (printf-formatted); false with the error on stderr. */
bool
ctl_exec(struct ctl_server *s, const char *fmt, ...)
{
	char sql[2048];
	struct ctl_res *res = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	if ((s->errnum = ctl_ops->query(s, sql, &res)) != 0) {
		fprintf(stderr, "idgenctl: %s:%u: %s\n", s->host, s->port, s->error);
		return false;
	}
	ctl_res_free(res);
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
	return ctl_ops->connect(c, s, user, password, database);
}
