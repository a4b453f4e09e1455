/*
 * fake_ctl.h - the part of a fake of idgenctl's database seam (ctl.h's
 * struct ctl_ops) that test_add.c, test_nsctl.c and test_retire.c share:
 * a connection is the index of the server it reaches, every statement is
 * recorded (fake_stmt, fake_nstmt), and conn.c's default table
 * (ctldb_mariadb, ctldb.c's in idgenctl) is the fake. Included by one test
 * file each (every function is static). The test defines FAKE_STMTS (the
 * log's length) before the include, and FAKE_SQL (a recorded statement's
 * room, 512 if not) and FAKE_INDEX_BY_PORT (the connection's server is its
 * port - 3307, for a struct ctl_server made without its index) if it needs
 * them; it defines its own struct ctl_res, fake_query, fake_row and
 * fake_fields, which answer as its test needs.
 */
#ifndef IDGEN_FAKE_CTL_H
#define IDGEN_FAKE_CTL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "ctl.h"
#include "server.h"

#ifndef FAKE_SQL
#define FAKE_SQL	512
#endif

/* One connection: the server it reaches. */
struct ctl_db {
	unsigned	srv;
};

static bool	 fake_connect(const struct ctl *, struct ctl_server *, const char *,
		    const char *, const char *);
static void	 fake_log(unsigned, const char *);
static unsigned	 fake_query(struct ctl_server *, const char *, struct ctl_res **);
static char	**fake_row(struct ctl_res *);
static unsigned	 fake_fields(struct ctl_res *);
static void	 fake_res_free(struct ctl_res *);
static void	 fake_close(struct ctl_db *);
static void	 fake_pause(unsigned);

static struct ctl_db fake_db[SERVER_MAX];
static struct {
	unsigned	 srv;
	char		 sql[FAKE_SQL];
} fake_stmt[FAKE_STMTS];
static unsigned fake_nstmt;

static bool
fake_connect(const struct ctl *c, struct ctl_server *s, const char *user, const char *password,
    const char *database)
{
	(void)c, (void)user, (void)password, (void)database;
#ifdef FAKE_INDEX_BY_PORT
	s->index = s->port - 3307;
#endif
	fake_db[s->index].srv = s->index;
	s->db = &fake_db[s->index];
	return true;
}

/* A statement to server srv, recorded (fake_query's first step). */
static void
fake_log(unsigned srv, const char *sql)
{
	assert_true(fake_nstmt < FAKE_STMTS);
	fake_stmt[fake_nstmt].srv = srv;
	snprintf(fake_stmt[fake_nstmt++].sql, sizeof(fake_stmt[0].sql), "%s", sql);
}

static void
fake_res_free(struct ctl_res *res)
{
	free(res);
}

static void
fake_close(struct ctl_db *db)
{
	(void)db;
}

static void
fake_pause(unsigned ms)
{
	(void)ms;
}

/* conn.c's default seam, MariaDB's in idgenctl (ctldb.c): the fake here. */
const struct ctl_ops ctldb_mariadb = { fake_connect, fake_query, fake_row, fake_fields,
	fake_res_free, fake_close, fake_pause };

#endif /* IDGEN_FAKE_CTL_H */
