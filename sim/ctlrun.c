/*
 * ctlrun.c - ctl.h's seam (struct ctl_ops) over the simulated ticket
 * servers: idgenctl's real procedures (ctl/raise.c, with ctl/conn.c and
 * ctl/ns.c, compiled a second time into the simulation) send their SQL text
 * to tserver_ctl, which answers at once in virtual time. A run may be killed
 * at a statement: from it on every statement fails as a lost connection, and
 * each connection's open transaction rolls back (docs/design.md section 14).
 */
#include "ctlrun.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "server.h"

/* One connection of the command's to a server. */
struct ctl_db {
	unsigned	srv;
	uint64_t	conn;
};

/* A stored result. */
struct ctl_res {
	struct tserver_rows	rows;
	unsigned		next;
	char			*row[TSERVER_CTL_FIELDS];
};

static struct {
	struct tserver	*srv;
	unsigned	 n;
	uint64_t	 conns;		/* connection ids: far above simdb's */
	unsigned	 sent, kill_at;
	void		(*between)(void);
	unsigned	 open_tx;	/* connections with a transaction open */
} R;

static bool	ctlrun_killed(struct ctl_server *s);

void
ctlrun_setup(struct tserver *srv, unsigned n)
{
	R.srv = srv;
	R.n = n;
	if (R.conns == 0)
		R.conns = UINT64_C(1) << 60;
}

/* Statement R.sent: false (lost, in s->error) from the kill on. */
static bool
ctlrun_killed(struct ctl_server *s)
{
	R.sent++;
	if (R.kill_at == 0 || R.sent < R.kill_at)
		return false;
	s->errnum = 2013;
	snprintf(s->error, sizeof(s->error), "Lost connection to server during query "
	    "(the command was killed)");
	return true;
}

static bool
ctlrun_connect(const struct ctl *c, struct ctl_server *s, const char *user,
    const char *password, const char *database)
{
	struct ctl_db *db;

	(void)c;
	(void)user;
	(void)password;
	(void)database;
	s->db = NULL;
	if (ctlrun_killed(s))
		return false;
	if (s->index >= R.n || !R.srv[s->index].up) {
		s->errnum = 2003;
		snprintf(s->error, sizeof(s->error), "cannot connect: Can't connect to server "
		    "on '%s' (111)", s->host);
		return false;
	}
	if ((db = calloc(1, sizeof(*db))) == NULL)
		abort();
	db->srv = s->index;
	db->conn = ++R.conns;
	s->db = db;
	return true;
}

static unsigned
ctlrun_query(struct ctl_server *s, const char *sql, struct ctl_res **res)
{
	struct ctl_db *db = s->db;
	struct tserver *t = &R.srv[db->srv];
	struct ctl_res *r;
	bool had_tx = t->ctl_tx == db->conn;

	*res = NULL;
	if (ctlrun_killed(s)) {
		tserver_conn_gone(t, db->conn);
		return s->errnum;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		abort();
	tserver_ctl(t, db->conn, sql, &r->rows);
	if (r->rows.err != 0) {
		snprintf(s->error, sizeof(s->error), "%s", r->rows.why);
		s->errnum = r->rows.err;
		free(r);
		return s->errnum;
	}
	R.open_tx += (t->ctl_tx == db->conn) - had_tx;
	if (R.open_tx == 0 && R.between != NULL)
		R.between();
	if (!r->rows.result) {
		free(r);
		return 0;
	}
	*res = r;
	return 0;
}

static char **
ctlrun_row(struct ctl_res *r)
{
	if (r->next >= r->rows.nrows)
		return NULL;
	for (unsigned f = 0; f < r->rows.nfields; f++)
		r->row[f] = r->rows.null[r->next][f] ? NULL : r->rows.cell[r->next][f];
	r->next++;
	return r->row;
}

static unsigned
ctlrun_fields(struct ctl_res *r)
{
	return r->rows.nfields;
}

static void
ctlrun_res_free(struct ctl_res *r)
{
	free(r);
}

/* The connection ends: a transaction still open rolls back. */
static void
ctlrun_close(struct ctl_db *db)
{
	struct tserver *t = &R.srv[db->srv];

	if (t->ctl_tx == db->conn && R.open_tx > 0)
		R.open_tx--;
	tserver_conn_gone(t, db->conn);
	free(db);
}

static const struct ctl_ops ctlrun_ops = {
	.connect = ctlrun_connect,
	.query = ctlrun_query,
	.row = ctlrun_row,
	.fields = ctlrun_fields,
	.res_free = ctlrun_res_free,
	.close = ctlrun_close,
};

int
ctlrun_raise(unsigned to, unsigned kill_at, void (*between)(void), unsigned *sent)
{
	static struct ctl c;
	static int null_fd = -1;
	char arg[16];
	int out, err, rc;

	memset(&c, 0, sizeof(c));
	c.cfg.db_name = (char *)"idgen";
	for (unsigned i = 0; i < server_count() && i < R.n; i++) {
		c.srv[i].index = i;
		c.srv[i].host = "127.0.0.1";
		c.srv[i].port = 3307 + i;
	}
	snprintf(arg, sizeof(arg), "%u", to);
	R.sent = 0;
	R.kill_at = kill_at;
	R.between = between;
	R.open_tx = 0;
	ctl_ops = &ctlrun_ops;
	/* What the command prints is the operator's, not the simulation's. */
	if (null_fd < 0 && (null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
		abort();
	fflush(stdout);
	fflush(stderr);
	out = dup(1);
	err = dup(2);
	if (out < 0 || err < 0 || dup2(null_fd, 1) < 0 || dup2(null_fd, 2) < 0)
		abort();
	rc = ctl_raise_increment(&c, arg);
	fflush(stdout);
	fflush(stderr);
	if (dup2(out, 1) < 0 || dup2(err, 2) < 0)
		abort();
	close(out);
	close(err);
	ctl_ops = &ctldb_mariadb;
	*sent = R.sent;
	return rc;
}
