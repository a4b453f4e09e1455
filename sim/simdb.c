/*
 * simdb.c - connections to the simulated ticket servers (simdb.h).
 */
#include "simdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "rng.h"
#include "vclock.h"

struct simdb_conn {
	struct db_conn		 conn;		/* first: db.h's handle */
	struct event		*answer;	/* the query in flight falls due */
	struct event		*lost;		/* on_lost, on the next loop turn */
	db_cb			 cb;
	void			*arg;
	db_cb			 lost_cb;
	void			*lost_arg;
	char			*sql;		/* in flight, or NULL */
	unsigned		 srv;
	struct tserver		*tsv;		/* its servers (srv indexes them): a region's */
	unsigned		 owner;
	uint64_t		 id;		/* for the server's row locks (tserver.h) */
	bool			 connected;
	bool			 lease;		/* lease.c's, not the tier's */
	bool			 doomed;	/* lost by a crash before it was answered */
	bool			 doomed_ran;	/* ... after the server ran it */
	bool			 fresh;		/* connected; its connect-time check not answered */
	bool			 read_set;	/* that check answered: its read is pending */
	uint64_t		 read[TSERVER_MAX];	/* ... the copies due it read */
	bool			 due_set;	/* the witness point passed: copies due */
	uint64_t		 due[TSERVER_MAX];
	unsigned		 timeout_ms;	/* db_params' query_timeout_ms */
	int			 timeout;	/* the query in flight times out: SIMDB_TO_* */
	struct simdb_conn	*next;		/* every connection, in creation order */
};

/* What the server did with a statement its client gave up on (a query timeout). */
enum { SIMDB_TO_NONE, SIMDB_TO_NOT_RUN, SIMDB_TO_RAN, SIMDB_TO_LATE };

/* A timed-out statement the server applies after its client gave up (SIMDB_TO_LATE). */
struct simdb_late {
	struct event		*ev;
	struct tserver		*tsv;
	unsigned		 srv, owner, epoch;
	uint64_t		 id;
	char			*sql;
	struct simdb_late	*next;
};

/* Query timeouts (docs/design.md section 14): on or off, weather and draws of their own. */
static struct {
	bool			on;
	struct rng_state	rng;
	unsigned		pm;		/* a query's answer takes past the timeout */
	uint64_t		stall_until[TSERVER_MAX];	/* virtual us: every query stalls */
	unsigned		epoch[TSERVER_MAX];	/* crashes: a late statement dies with one */
	struct event_base	*base;
	struct simdb_late	*late;
} simdb_to;

struct simdb_timeout_counts simdb_timeout_counts;

static struct tserver		*simdb_srv;
static unsigned			 simdb_nsrv;
static struct simdb_weather	 simdb_w;
static struct simdb_hooks	 simdb_h;
static unsigned			 simdb_cur_owner;
static struct simdb_conn	*simdb_all;
static uint64_t			 simdb_next_id;
/* Outside a region's servers (simdb_region): the setup's servers and hooks. */
static struct tserver		*simdb_out_srv;
static unsigned			 simdb_out_nsrv;
static struct simdb_hooks	 simdb_out_h;
static bool			 simdb_in_region;

static void	simdb_answer_cb(evutil_socket_t fd, short what, void *arg);
static void	simdb_late_cb(evutil_socket_t fd, short what, void *arg);
static uint64_t	simdb_to_draw(uint64_t n);
static void	simdb_late(const struct simdb_conn *c, const char *sql);
static void	simdb_lost_cb(evutil_socket_t fd, short what, void *arg);
static bool	simdb_start(struct simdb_conn *c, const char *sql, db_cb cb, void *arg);
static void	simdb_lose(struct simdb_conn *c, bool ran);
static struct db_conn *simdb_create(struct event_base *base, const struct db_params *p,
		    const char *name);
static void	simdb_destroy(struct db_conn *conn);
static bool	simdb_connect(struct db_conn *conn, db_cb cb, void *arg);
static bool	simdb_query(struct db_conn *conn, const char *sql, db_cb cb, void *arg);
static void	simdb_close(struct db_conn *conn);
static void	simdb_on_lost(struct db_conn *conn, db_cb cb, void *arg);
static bool	simdb_connected(const struct db_conn *conn);

const struct db_ops simdb_ops = {
	simdb_create, simdb_destroy, simdb_connect, simdb_query, simdb_close, simdb_on_lost,
	simdb_connected,
};

void
simdb_setup(struct tserver *srv, unsigned n, const struct simdb_weather *w,
    const struct simdb_hooks *h)
{
	simdb_srv = srv;
	simdb_nsrv = n;
	simdb_w = *w;
	simdb_h = *h;
	simdb_all = NULL;
	simdb_in_region = false;
}

/*
 * A region's servers (docs/design.md section 14): connections created from
 * now on reach srv[0 .. n-1], and no hook but the unmodelled query's runs
 * (the driver's records are of its own region). NULL: back to the setup's.
 */
void
simdb_region(struct tserver *srv, unsigned n)
{
	if (srv == NULL) {
		if (simdb_in_region) {
			simdb_srv = simdb_out_srv;
			simdb_nsrv = simdb_out_nsrv;
			simdb_h = simdb_out_h;
		}
		simdb_in_region = false;
		return;
	}
	if (!simdb_in_region) {
		simdb_out_srv = simdb_srv;
		simdb_out_nsrv = simdb_nsrv;
		simdb_out_h = simdb_h;
	}
	simdb_in_region = true;
	simdb_srv = srv;
	simdb_nsrv = n;
	memset(&simdb_h, 0, sizeof(simdb_h));
	simdb_h.unmodelled = simdb_out_h.unmodelled;
}

void
simdb_servers(unsigned n)
{
	simdb_nsrv = n;
}

void
simdb_owner(unsigned owner)
{
	simdb_cur_owner = owner;
}

static struct db_conn *
simdb_create(struct event_base *base, const struct db_params *p, const char *name)
{
	struct simdb_conn *c = calloc(1, sizeof(*c)), **tail;
	unsigned srv;

	/* The lease's connections are named lease-odd, lease-even. */
	bool lease = strncmp(name, "lease-", 6) == 0;

	if (lease)
		name += 6;
	if (c == NULL || !server_by_name(name, &srv) || srv >= simdb_nsrv) {
		free(c);
		return NULL;
	}
	c->conn.ops = p->ops;
	c->timeout_ms = p->query_timeout_ms;
	c->srv = srv;
	c->tsv = simdb_srv;
	c->owner = simdb_cur_owner;
	c->lease = lease;
	c->id = ++simdb_next_id;
	if (!simdb_in_region)
		simdb_to.base = base;
	c->answer = evtimer_new(base, simdb_answer_cb, c);
	c->lost = event_new(base, -1, 0, simdb_lost_cb, c);
	for (tail = &simdb_all; *tail != NULL; tail = &(*tail)->next)
		;
	*tail = c;
	return &c->conn;
}

static void
simdb_destroy(struct db_conn *conn)
{
	struct simdb_conn *c = (struct simdb_conn *)conn, **p;

	tserver_conn_gone(&c->tsv[c->srv], c->id);
	for (p = &simdb_all; *p != NULL; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	event_free(c->answer);
	event_free(c->lost);
	free(c->sql);
	free(c);
}

/* Arms the answer of one query, after the weather's delay. */
static bool
simdb_start(struct simdb_conn *c, const char *sql, db_cb cb, void *arg)
{
	struct timeval tv;
	uint64_t us = rng_below(simdb_w.max_delay_us + 1) * (simdb_w.far == c->srv + 1 ? 10 : 1);

	c->sql = strdup(sql);
	if (c->sql == NULL)
		return false;
	if (simdb_h.ns_sent != NULL && strncmp(sql, "START TRANSACTION;SET @idgen_ns_ok", 34) == 0)
		simdb_h.ns_sent(c->owner, c->srv);
	c->cb = cb;
	c->arg = arg;
	c->doomed = false;
	/*
	 * A query timeout: the answer takes past the connection's bound, so the
	 * client's deadline fires first (db.c: DB_ERR_TIMEOUT, 2013, the
	 * connection closed); the server ran it before, runs it later, or not.
	 */
	c->timeout = SIMDB_TO_NONE;
	if (simdb_to.on && !simdb_in_region && strcmp(sql, "CONNECT") != 0 &&
	    (vclock_now_us() < simdb_to.stall_until[c->srv] ||
	    (simdb_to.pm > 0 && simdb_to_draw(1000) < simdb_to.pm))) {
		c->timeout = SIMDB_TO_NOT_RUN + (int)simdb_to_draw(3);
		us = 1000 * (uint64_t)c->timeout_ms;
	}
	tv.tv_sec = (time_t)(us / 1000000);
	tv.tv_usec = (suseconds_t)(us % 1000000);
	evtimer_add(c->answer, &tv);
	return true;
}

static bool
simdb_connect(struct db_conn *conn, db_cb cb, void *arg)
{
	struct simdb_conn *c = (struct simdb_conn *)conn;

	if (c->sql != NULL)
		return false;
	c->connected = true;
	c->fresh = true;
	c->read_set = false;
	c->due_set = false;
	return simdb_start(c, "CONNECT", cb, arg);
}

static bool
simdb_query(struct db_conn *conn, const char *sql, db_cb cb, void *arg)
{
	struct simdb_conn *c = (struct simdb_conn *)conn;

	/* As db.c: one operation at a time, none on a closed connection. */
	if (!c->connected || c->sql != NULL)
		return false;
	return simdb_start(c, sql, cb, arg);
}

static void
simdb_close(struct db_conn *conn)
{
	struct simdb_conn *c = (struct simdb_conn *)conn;

	evtimer_del(c->answer);
	event_del(c->lost);
	free(c->sql);
	c->sql = NULL;
	c->cb = NULL;
	c->connected = false;
	c->due_set = false;
	tserver_conn_gone(&c->tsv[c->srv], c->id);
}

static void
simdb_on_lost(struct db_conn *conn, db_cb cb, void *arg)
{
	struct simdb_conn *c = (struct simdb_conn *)conn;

	c->lost_cb = cb;
	c->lost_arg = arg;
}

static bool
simdb_connected(const struct db_conn *conn)
{
	return ((const struct simdb_conn *)conn)->connected;
}

/*
 * The connection is lost: a query in flight fails with 2013 when it falls
 * due (ran: the server ran it first), an idle one is reported through on_lost.
 */
static void
simdb_lose(struct simdb_conn *c, bool ran)
{
	if (!c->connected)
		return;
	if (simdb_lost_hook != NULL)
		simdb_lost_hook(c->owner, c->srv);
	if (c->sql != NULL) {
		c->doomed = true;
		c->doomed_ran = ran;
		return;
	}
	c->connected = false;
	c->due_set = false;
	tserver_conn_gone(&c->tsv[c->srv], c->id);
	event_active(c->lost, EV_TIMEOUT, 0);
}

void (*simdb_lost_hook)(unsigned owner, unsigned srv);

void
simdb_crash(unsigned srv)
{
	if (srv < TSERVER_MAX)
		simdb_to.epoch[srv]++;
	for (struct simdb_conn *c = simdb_all; c != NULL; c = c->next)
		if (c->tsv == simdb_srv && c->srv == srv)
			simdb_lose(c, rng_permille(500));
}

void
simdb_drop_owner(unsigned owner, unsigned srv)
{
	for (struct simdb_conn *c = simdb_all; c != NULL; c = c->next)
		if (c->owner == owner && c->srv == srv)
			simdb_lose(c, false);
}

bool
simdb_drop_one(void)
{
	unsigned n = simdb_open(), k;
	struct simdb_conn *c;

	if (n == 0)
		return false;
	k = (unsigned)rng_below(n);
	for (c = simdb_all; c != NULL; c = c->next)
		if (c->connected && k-- == 0)
			break;
	if (c != NULL)
		simdb_lose(c, false);
	return c != NULL;
}

unsigned
simdb_open(void)
{
	unsigned n = 0;

	for (struct simdb_conn *c = simdb_all; c != NULL; c = c->next)
		n += c->connected;
	return n;
}

/* An idle connection was closed by the server. */
static void
simdb_lost_cb(evutil_socket_t fd, short what, void *arg)
{
	struct simdb_conn *c = arg;
	struct db_result r;

	(void)fd;
	(void)what;
	memset(&r, 0, sizeof(r));
	r.err = 2013;
	r.msg = "Lost connection to server (simulated)";
	if (c->lost_cb != NULL)
		c->lost_cb(&c->conn, &r, c->lost_arg);
}

/* A query falls due: the server answers it, or a fault takes it. */
static void
simdb_answer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct simdb_conn *c = arg;
	struct tserver *s = &c->tsv[c->srv];
	struct tserver_answer a;
	struct db_result r;
	char *row[TSERVER_TEXT], *sql = c->sql;
	db_cb cb = c->cb;
	bool ran = true, lost = false;

	(void)fd;
	(void)what;
	c->sql = NULL;
	c->cb = NULL;
	memset(&a, 0, sizeof(a));
	if (c->doomed) {
		ran = c->doomed_ran;
		lost = true;
	} else if (simdb_h.cut != NULL && simdb_h.cut(c->owner, c->srv)) {
		ran = false;	/* never reached the server */
		lost = true;
	} else if (c->timeout != SIMDB_TO_NONE) {
		ran = c->timeout == SIMDB_TO_RAN;
		lost = true;
		simdb_timeout_counts.timeouts++;
		simdb_timeout_counts.ran += ran;
		if (c->timeout == SIMDB_TO_LATE)
			simdb_late(c, sql);
		simdb_timeout_counts.not_run += c->timeout == SIMDB_TO_NOT_RUN;
	} else if (rng_permille(simdb_w.drop_pm)) {
		ran = false;
		lost = true;
	}
	if (ran) {
		tserver_answer(s, c->id, sql, &a);
		if (a.err == 1064 && simdb_h.unmodelled != NULL)
			simdb_h.unmodelled(a.why);
		if (a.drew && simdb_h.drew != NULL)
			simdb_h.drew(c->owner, c->srv, a.ticket, a.own_before);
		/*
		 * A new connection's CONNECT is no witness point: a witness lost
		 * with the connection before ran nowhere (c->due_set, the
		 * default's, is dropped with the connection too).
		 */
		if (a.err == 0 && !c->lease && strcmp(sql, "CONNECT") != 0 &&
		    simdb_h.ns_ran != NULL)
			simdb_h.ns_ran(c->owner, c->srv);
		if (a.ns_drew && simdb_h.ns_drew != NULL)
			simdb_h.ns_drew(c->owner, c->srv, &a);
		if ((a.drew || a.ns_drew) && rng_permille(simdb_w.lost_reply_pm))
			lost = true;
		/* The witness point passed on this connection: its copies were due now. */
		if (a.err == 0 && c->due_set) {
			for (unsigned k = 0; k < simdb_nsrv; k++)
				tserver_due(s, k, c->due[k]);
			c->due_set = false;
		}
		if (a.err == 0 && strncmp(sql, "EXPLAIN UPDATE idgen_leases", 27) == 0 &&
		    simdb_h.copy_want != NULL) {
			for (unsigned k = 0; k < simdb_nsrv; k++)
				c->due[k] = k == c->srv ? 0 : simdb_h.copy_want(c->owner, c->srv, k);
			c->due_set = true;
		}
	}
	/* A check's answer arrives: the idserver knows what it read (ticket.c, 6.4). */
	if (ran && !lost && a.err == 0 && a.nfields > 20 && simdb_h.checked != NULL)
		simdb_h.checked(c->owner, c->srv, s->st.due);
	memset(&r, 0, sizeof(r));
	if (lost) {
		r.err = 2013;
		r.msg = c->timeout != SIMDB_TO_NONE && !c->doomed ?
		    "query timed out (query_timeout_ms) (simulated)" :
		    "Lost connection to server during query (simulated)";
	} else {
		r.err = a.err;
		r.msg = a.err != 0 ? a.why : NULL;
		r.nstmts = a.nstmts;
		for (unsigned i = 0; i < DB_MAX_STMTS; i++) {
			r.stmt_insert_id[i] = a.insert_id[i];
			r.stmt_affected[i] = a.affected[i];
		}
		r.insert_id = a.insert_id[a.nstmts > 0 ? a.nstmts - 1 : 0];
		r.affected = a.affected[a.nstmts > 0 ? a.nstmts - 1 : 0];
		for (unsigned i = 0; i < a.nfields; i++)
			row[i] = a.null[i] ? NULL : a.text[i];
		if (a.big)
			row[0] = a.bigtext;
		r.row = a.nfields > 0 ? row : NULL;
		r.nfields = a.nfields;
	}
	if (r.err != 0 && !db_err_keeps(r.err)) {
		if (simdb_lost_hook != NULL)
			simdb_lost_hook(c->owner, c->srv);
		c->connected = false;
		c->due_set = false;
		tserver_conn_gone(s, c->id);
	}
	{
		bool connect = strcmp(sql, "CONNECT") == 0 && !c->lease;
		bool nscheck = strncmp(sql, "SET SESSION group_concat_max_len", 32) == 0;
		unsigned owner = c->owner, srv = c->srv;

		free(sql);
		if (r.err == 0 && nscheck && simdb_h.ns_answered != NULL)
			simdb_h.ns_answered(owner, srv);
		if (cb != NULL)
			cb(&c->conn, &r, c->arg);
		/* After the callback: what the idserver made of it (c may be gone). */
		if (r.err == 0 && (connect || nscheck) && simdb_h.ns_seen != NULL)
			simdb_h.ns_seen(owner, srv, connect);
	}
}

/* A draw from the timeouts' own generator; the schedule's is left as it was. */
static uint64_t
simdb_to_draw(uint64_t n)
{
	return rng_draw_from(&simdb_to.rng, n);
}

void
simdb_timeouts(uint64_t seed, bool on, bool weather)
{
	simdb_timeouts_end();
	memset(simdb_to.stall_until, 0, sizeof(simdb_to.stall_until));
	simdb_to.on = on;
	simdb_to.pm = 0;
	if (!on)
		return;
	/* "query-to" */
	rng_seed_state(&simdb_to.rng, rng_mix(seed) ^ UINT64_C(0x71756572792d746f));
	simdb_to.pm = simdb_to_draw(3) == 0 ? 0 : (unsigned)(1 + simdb_to_draw(20));
	if (!weather)
		simdb_to.pm = 0;
	simdb_timeout_counts.schedules++;
}

void
simdb_stall(unsigned srv, uint64_t until_us)
{
	if (srv < TSERVER_MAX)
		simdb_to.stall_until[srv] = until_us;
}

uint64_t
simdb_stalled_until(unsigned srv)
{
	return simdb_to.on && srv < TSERVER_MAX ? simdb_to.stall_until[srv] : 0;
}

/*
 * The server runs a statement whose client gave up, 0 to 2 timeouts later:
 * a lock wait, a slow disk (docs/design.md section 14). Under its
 * connection's id, as one transaction, unless the server crashed since.
 */
static void
simdb_late(const struct simdb_conn *c, const char *sql)
{
	struct simdb_late *l = calloc(1, sizeof(*l));
	uint64_t us = 1000 * simdb_to_draw(2 * (uint64_t)c->timeout_ms + 1);
	struct timeval tv = { (time_t)(us / 1000000), (suseconds_t)(us % 1000000) };

	if (l == NULL || simdb_to.base == NULL || (l->sql = strdup(sql)) == NULL) {
		free(l);
		return;
	}
	l->tsv = c->tsv;
	l->srv = c->srv;
	l->owner = c->owner;
	l->id = c->id;
	l->epoch = simdb_to.epoch[c->srv];
	l->ev = evtimer_new(simdb_to.base, simdb_late_cb, l);
	if (l->ev == NULL) {
		free(l->sql);
		free(l);
		return;
	}
	l->next = simdb_to.late;
	simdb_to.late = l;
	evtimer_add(l->ev, &tv);
}

static void
simdb_late_cb(evutil_socket_t fd, short what, void *arg)
{
	struct simdb_late *l = arg;
	struct tserver *s = &l->tsv[l->srv];
	struct tserver_answer a;

	(void)fd;
	(void)what;
	if (l->epoch != simdb_to.epoch[l->srv] || !s->up)
		return;		/* the server crashed since: rolled back */
	memset(&a, 0, sizeof(a));
	tserver_answer(s, l->id, l->sql, &a);
	if (a.err == 1064 && simdb_h.unmodelled != NULL)
		simdb_h.unmodelled(a.why);
	if (a.drew && simdb_h.drew != NULL)
		simdb_h.drew(l->owner, l->srv, a.ticket, a.own_before);
	if (a.ns_drew && simdb_h.ns_drew != NULL)
		simdb_h.ns_drew(l->owner, l->srv, &a);
	tserver_conn_gone(s, l->id);
	simdb_timeout_counts.late++;
	simdb_timeout_counts.late_err += a.err != 0;
}

void
simdb_timeouts_end(void)
{
	while (simdb_to.late != NULL) {
		struct simdb_late *l = simdb_to.late;

		simdb_to.late = l->next;
		event_free(l->ev);
		free(l->sql);
		free(l);
	}
	simdb_to.base = NULL;
}
