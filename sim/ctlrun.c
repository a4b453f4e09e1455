/*
 * ctlrun.c - ctl.h's seam (struct ctl_ops) over the simulated ticket
 * servers: idgenctl's real procedures (ctl/raise.c, ctl/add.c with
 * retire-server, ctl/ns.c,
 * with ctl/conn.c and ctl/read.c, compiled a second time into the simulation) send their SQL text
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
	void		(*pause)(unsigned ms);	/* the idservers run that long */
	unsigned	 open_tx;	/* connections with a transaction open */
	const char	*after, *next_after;	/* killed after the nth statement of this prefix */
	unsigned	 after_nth, next_nth;
	char		 unmodelled[160];	/* a statement tserver_ctl does not know, "" none */
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
	/* The address names the server: 3307 + its index (ctlrun_raise, ctlrun_add). */
	s->index = s->port >= 3307 ? s->port - 3307 : R.n;
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
	if (r->rows.err == 1064 && R.unmodelled[0] == '\0')
		snprintf(R.unmodelled, sizeof(R.unmodelled), "%s", r->rows.why);
	if (r->rows.err != 0) {
		snprintf(s->error, sizeof(s->error), "%s", r->rows.why);
		s->errnum = r->rows.err;
		free(r);
		return s->errnum;
	}
	R.open_tx += (t->ctl_tx == db->conn) - had_tx;
	if (R.after != NULL && strncmp(sql, R.after, strlen(R.after)) == 0 &&
	    --R.after_nth == 0 && (R.kill_at == 0 || R.kill_at > R.sent + 1)) {
		R.kill_at = R.sent + 1;
		R.after = NULL;
	}
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

/* The command waits: the idservers run meanwhile (ctlrun_retire's pause), else nothing. */
static void
ctlrun_pause(unsigned ms)
{
	if (R.pause != NULL)
		R.pause(ms);
}

static const struct ctl_ops ctlrun_ops = {
	.connect = ctlrun_connect,
	.query = ctlrun_query,
	.row = ctlrun_row,
	.fields = ctlrun_fields,
	.res_free = ctlrun_res_free,
	.close = ctlrun_close,
	.pause = ctlrun_pause,
};

/*
 * The command's output is the operator's, not the simulation's: fds 1 and 2
 * to /dev/null (IDSIM_CTL_LOUD set in the environment: shown, to debug a run).
 */
static void
ctlrun_quiet(bool on)
{
	/* /dev/null, and the driver's own stdout and stderr: opened once, kept (speed). */
	static int null_fd = -1, out = -1, err = -1;

	fflush(stdout);
	fflush(stderr);
	if (getenv("IDSIM_CTL_LOUD") != NULL)
		return;
	if (on) {
		if (null_fd < 0 && (null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
			abort();
		if (out < 0 && (out = fcntl(1, F_DUPFD_CLOEXEC, 0)) < 0)
			abort();
		if (err < 0 && (err = fcntl(2, F_DUPFD_CLOEXEC, 0)) < 0)
			abort();
		if (dup2(null_fd, 1) < 0 || dup2(null_fd, 2) < 0)
			abort();
		return;
	}
	if (dup2(out, 1) < 0 || dup2(err, 2) < 0)
		abort();
}

/* idgenctl's config: the tier's servers at 127.0.0.1:3307 + their index. */
static void
ctlrun_config(struct ctl *c, unsigned kill_at, void (*between)(void))
{
	memset(c, 0, sizeof(*c));
	c->cfg.db_name = (char *)"idgen";
	c->cfg.db_user = (char *)"idgen";
	c->cfg.db_password = (char *)"";
	c->cfg.more_servers = (char *)"";
	for (unsigned i = 0; i < server_count() && i < R.n; i++) {
		c->srv[i].index = i;
		c->srv[i].host = "127.0.0.1";
		c->srv[i].port = 3307 + i;
	}
	R.sent = 0;
	R.kill_at = kill_at;
	R.after = R.next_after;
	R.after_nth = R.next_nth;
	R.next_after = NULL;
	R.between = between;
	R.pause = NULL;
	R.open_tx = 0;
	R.unmodelled[0] = '\0';
	ctl_ops = &ctlrun_ops;
	ctlrun_quiet(true);
}

/* The run's end: its connections closed (an open transaction rolls back). */
static int
ctlrun_end(struct ctl *c, int rc, unsigned *sent)
{
	for (unsigned i = 0; i < SERVER_MAX; i++) {
		ctl_close(&c->srv[i]);
		free(c->srv[i].lease);
		c->srv[i].lease = NULL;
	}
	ctlrun_quiet(false);
	ctl_ops = &ctldb_mariadb;
	*sent = R.sent;
	return R.unmodelled[0] != '\0' ? 3 : rc;
}

int
ctlrun_ns(int argc, char **argv, unsigned kill_at, void (*between)(void), unsigned *sent)
{
	static struct ctl c;

	ctlrun_config(&c, kill_at, between);
	for (unsigned i = 0; i < server_count() && i < R.n; i++)
		ctl_read(&c, &c.srv[i]);
	return ctlrun_end(&c, ctl_ns(&c, argc, argv), sent);
}

bool
ctlrun_was_killed(void)
{
	return R.kill_at != 0 && R.sent >= R.kill_at;
}

void
ctlrun_kill_after(const char *prefix, unsigned nth)
{
	R.next_after = nth > 0 ? prefix : NULL;
	R.next_nth = nth;
}

/* The statement that made the last run exit 3, "" none. */
const char *
ctlrun_unmodelled(void)
{
	return R.unmodelled;
}

int
ctlrun_raise(unsigned to, unsigned kill_at, void (*between)(void), unsigned *sent)
{
	static struct ctl c;
	char arg[16];

	snprintf(arg, sizeof(arg), "%u", to);
	ctlrun_config(&c, kill_at, between);
	return ctlrun_end(&c, ctl_raise_increment(&c, arg), sent);
}

int
ctlrun_add(unsigned offset, unsigned index, unsigned kill_at, void (*between)(void),
    unsigned *sent)
{
	static struct ctl c;
	unsigned g = server_generation(), m = server_increment();
	char off[16], addr[32];
	bool view = m < 4;
	int rc;

	snprintf(off, sizeof(off), "%u", offset);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", 3307 + index);
	/*
	 * idgenctl's config says tier_increment = 4, as the raise printed. The
	 * view of the tier is one for the whole process here (section 14): set
	 * for the command alone when no idserver moved it yet, and then no
	 * idserver runs during the command (it would see the view moved).
	 */
	if (view && !server_view_adopt(g + 1, 4))
		return 3;
	ctlrun_config(&c, kill_at, view ? NULL : between);
	for (unsigned i = 0; i < server_count() && i < R.n; i++)
		ctl_read(&c, &c.srv[i]);
	rc = ctl_add_server(&c, off, addr);
	rc = ctlrun_end(&c, rc, sent);
	if (view)
		server_view_revert(g, m);
	return rc;
}

int
ctlrun_retire(unsigned offset, unsigned recheck_ms, unsigned kill_at, void (*between)(void),
    void (*pause)(unsigned ms), unsigned *sent)
{
	static struct ctl c;
	char off[16];

	snprintf(off, sizeof(off), "%u", offset);
	ctlrun_config(&c, kill_at, between);
	c.cfg.recheck_ms = recheck_ms;	/* the idservers' (idgenctl reads their config) */
	R.pause = pause;
	for (unsigned i = 0; i < server_count() && i < R.n; i++)
		ctl_read(&c, &c.srv[i]);
	return ctlrun_end(&c, ctl_retire_server(&c, off), sent);
}
