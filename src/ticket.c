/*
 * ticket.c - connect to a ticket server, check it, and fetch tickets from it.
 */
#include "ticket.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clk.h"
#include "layout.h"
#include "log.h"
#include "rules.h"
#include "server.h"
#include "state.h"

/* Steps of the connect-time sequence and of one ticket transaction. */
enum ticket_step {
	TICKET_STEP_CHECK,
	TICKET_STEP_RIGHTS_TICKETS,
	TICKET_STEP_RIGHTS_MARKS,
	TICKET_STEP_RIGHTS_LEASES,
	TICKET_STEP_WITNESS,
	TICKET_STEP_TX,
	TICKET_STEP_ROLLBACK,
	TICKET_STEP_OTHER,		/* another module's query (ticket_run) */
};

/*
 * Everything uniqueness depends on, read in one round trip (check.c judges it);
 * the marks are the server's own and its partner's copy (names: server.h).
 * The marks come from a snapshot taken before the counter is read
 * (information_schema is in no snapshot): a ticket committed in between
 * raises the counter, never a mark alone (docs/design.md 6.4).
 */
#define TICKET_CHECK_SQL \
    DB_SNAPSHOT_SQL \
    "SELECT @@version, @@GLOBAL.auto_increment_increment, " \
    "@@GLOBAL.auto_increment_offset, @@GLOBAL.innodb_flush_log_at_trx_commit, " \
    "(SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() " \
    "AND TABLE_NAME = 'tickets64'), layout_version, block_size, parity, server_uuid, " \
    "(SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() " \
    "AND TABLE_NAME = 'tickets64'), " \
    "(SELECT high_water FROM idgen_marks WHERE role = '%s'), " \
    "(SELECT high_water FROM idgen_marks WHERE role = '%s'), " \
    /* Capacity telemetry, at no extra round trip: numbers leased now. */ \
    "(SELECT COUNT(*) FROM idgen_leases WHERE window_end >= " \
    "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - 1767225600000), " \
    /* The B each mark was written under (0: before marks recorded it). */ \
    "(SELECT block_size FROM idgen_marks WHERE role = '%s'), " \
    "(SELECT block_size FROM idgen_marks WHERE role = '%s'), " \
    "tier_increment, server_offset, region, region_bits, " \
    /* What REPLACE uses (differs from GLOBAL after a change of M), and the generation. */ \
    "@@SESSION.auto_increment_increment, @@SESSION.auto_increment_offset, " \
    "tier_generation, tier_floor, " \
    "(SELECT generation FROM idgen_marks WHERE role = '%s'), " \
    "(SELECT sealed FROM idgen_marks WHERE role = '%s'), " \
    "(SELECT GROUP_CONCAT(role) FROM idgen_marks WHERE retired <> 0)"
/* Then, per other server of its region beyond the partner, its copy and B. */
#define TICKET_CHECK_COPY_SQL \
    ", (SELECT high_water FROM idgen_marks WHERE role = '%s'), " \
    "(SELECT block_size FROM idgen_marks WHERE role = '%s')"
#define TICKET_CHECK_TAIL_SQL	" FROM idgen_meta WHERE one = 1;COMMIT"
#define TICKET_CHECK_FIELDS	26	/* with one other server, the pair's partner */

const unsigned ticket_fetch_bounds_us[TICKET_FETCH_BUCKETS] = {
	250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000,
};

/*
 * One ticket, one round trip, one transaction (docs/design.md section 6), for
 * the default sequence and every namespace alike (13.7):
 *
 *	START TRANSACTION;
 *	SELECT ... FROM idgen_marks ... FOR UPDATE;	(1) serialises ticket takers
 *	REPLACE INTO tickets64 ...;			(2) the ticket, from the OK packet
 *	UPDATE idgen_marks SET high_water = t ... WHERE own role AND mark below t;  (3)
 *	UPDATE idgen_marks SET high_water = copy ... WHERE partner role AND below;  (4)
 *	COMMIT;
 *
 * Marks are compared in ID space: a mark (h, b) covers every ID below
 * (h + 1) * b, and ticket t of B starts at t * B, so a mark written under
 * another B still binds exactly (a row of unknown b, 0, is read with B).
 * The row lock of (1) is taken before (2) allocates, so tickets commit in the
 * order they are allocated, across every idserver; (3) then matches no row
 * exactly when the counter is not above the server's own mark: it moved back.
 * Sent as one multi-statement query, the locks are never held across a
 * client round trip, so a frozen idserver cannot hold up the others. A
 * namespace's (1) also reads its catalogue row under a shared lock, and its
 * (3) and (4) write only while that row is as this process judged it (13.6).
 */
#define TICKET_TX_LOCK_SQL \
    "SELECT high_water, generation, sealed FROM idgen_marks WHERE role = '%s' FOR UPDATE;"
#define TICKET_TX_NS_LOCK_SQL \
    "SET @idgen_ns_ok = 0;" \
    "SELECT n.state, n.block_size, n.fallback, m.generation, m.sealed, @idgen_ns_ok := " \
    "(n.state = 'ready' AND n.block_size = %" PRIu64 " AND n.fallback = '%s') FROM " \
    "idgen_namespaces n JOIN idgen_marks m ON m.role = '%s' WHERE n.name = '%s' " \
    "LOCK IN SHARE MODE;" \
    "SELECT high_water FROM idgen_ns_marks WHERE ns = '%s' AND role = '%s' FOR UPDATE;"
#define TICKET_TX_SQL \
    "REPLACE INTO %s (stub) VALUES ('a');" \
    "UPDATE %s SET high_water = LAST_INSERT_ID(), block_size = %" PRIu64 "%s " \
    "WHERE %s%s%srole = '%s'%s AND (high_water + 1) * IF(block_size = 0, %" PRIu64 \
    ", block_size) <= LAST_INSERT_ID() * %" PRIu64
#define TICKET_TX_NS_GUARD	" AND @idgen_ns_ok = 1"
#define TICKET_TX_STMTS		5	/* with no copy: START, (1), (2), (3), COMMIT */
#define TICKET_TX_NS_STMTS	2	/* ... and a namespace's SET and catalogue read */

/*
 * A copy of server j's mark, written only where the row covers less: at
 * connect, the witness brings every copy up to what this process knows before
 * the server serves (a server that was down while its partner took tickets
 * learns of them at once, not at its next ticket: docs/design.md section
 * 6.5); in a ticket, (4).
 */
#define TICKET_COPY_SQL \
    "%sUPDATE %s SET high_water = %" PRIu64 ", block_size = %" PRIu64 " " \
    "WHERE %s%s%srole = '%s' AND (high_water + 1) * IF(block_size = 0, %" PRIu64 \
    ", block_size) < %" PRIu64 "%s"
#define TICKET_SQL_MAX		4096	/* the longest query: a check with every copy */

static void	ticket_connected(struct db_conn *db, const struct db_result *r, void *arg);
static void	ticket_checked(struct db_conn *db, const struct db_result *r, void *arg);
static void	ticket_rights_cb(struct db_conn *db, const struct db_result *r, void *arg);
static void	ticket_witness_cb(struct db_conn *db, const struct db_result *r, void *arg);
static uint64_t	ticket_copy_end(const struct ticket_server *s, uint64_t high_water,
		    uint64_t block_size);
static void	ticket_tx_cb(struct db_conn *db, const struct db_result *r, void *arg);
static void	ticket_lost(struct db_conn *db, const struct db_result *r, void *arg);
static void	ticket_retry_cb(evutil_socket_t fd, short what, void *arg);
static void	ticket_recheck_cb(evutil_socket_t fd, short what, void *arg);
static void	ticket_schedule(struct event *ev, unsigned ms);
static void	ticket_failed(struct ticket_server *s, const char *what, const char *msg);
static void	ticket_reject(struct ticket_server *s, enum ticket_state st, const char *why,
		    bool local);
static bool	ticket_query_error(struct ticket_server *s, const struct db_result *r,
		    const char *what);
static void	ticket_up_done(struct ticket_server *s);
static void	ticket_start_recheck(struct ticket_server *s);
static unsigned	ticket_recheck_delay(const struct ticket_server *s);
static bool	ticket_send(struct ticket_server *s, int step, db_cb cb, const char *sql);
static bool	ticket_send_tx(struct ticket_server *s);
static bool	ticket_send_check(struct ticket_server *s);
static void	ticket_tx_failed(struct ticket_server *s, const struct db_result *r);
static void	ticket_tx_rolled_back(struct ticket_server *s, const struct db_result *r);
static void	ticket_tx_judged(struct ticket_server *s, enum ticket_verdict v, uint64_t t,
		    const char *why);
static void	ticket_tx_bank(struct ticket_server *s, uint64_t t);
static enum ticket_verdict ticket_tx_read_rows(const struct ticket_seq *q,
		    const struct db_result *r, unsigned copies, char ***rowp, uint64_t *own,
		    char *why, size_t whylen);
static enum ticket_verdict ticket_tx_check_catalogue(const struct ticket_seq *q, char **row,
		    char *why, size_t whylen);
static enum ticket_verdict ticket_tx_check_generation(struct ticket_server *s,
		    const struct ticket_seq *q, char **row, char *why, size_t whylen);
static enum ticket_verdict ticket_tx_check_own_mark(const struct ticket_server *s,
		    const struct ticket_seq *q, uint64_t affected, uint64_t t, uint64_t own,
		    char *why, size_t whylen);
static enum ticket_verdict ticket_tx_check_known(const struct ticket_server *s,
		    const struct ticket_seq *q, uint64_t t, uint64_t mark, char *why,
		    size_t whylen);
static enum ticket_verdict ticket_tx_check_learned(const struct ticket_server *s,
		    const struct ticket_seq *q, uint64_t t, uint64_t learned, char *why,
		    size_t whylen);
static void	ticket_seq_answered(struct ticket_server *s, enum ticket_verdict v, uint64_t t);
static void	ticket_flight_end(struct ticket_server *s);
static unsigned	ticket_others(const struct ticket_server *s, unsigned *out);
static bool	ticket_append(char *buf, size_t len, int *n, const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));
static void	ticket_copies_take(struct ticket_server *s);
static void	ticket_witness(struct ticket_server *s);
static void	ticket_witness_landed(struct ticket_server *s);
static void	ticket_witness_blocked(struct ticket_server *s, const char *msg);
static bool	ticket_refusal_landed(struct ticket_server *s);
static int	ticket_read_marks(struct ticket_server *s, char **row);
static void	ticket_check_refused(struct ticket_server *s, char **row, bool refuse,
		    const char *why);
static bool	ticket_check_table(struct ticket_server *s, char **row);
static bool	ticket_check_settings(struct ticket_server *s, char **row, uint64_t *b);
static bool	ticket_check_generation(struct ticket_server *s, char **row);
static void	ticket_floor(struct ticket_server *s, const char *floor, uint64_t b);
static bool	ticket_retired(struct ticket_server *s, const char *roles, uint64_t b);
static void	ticket_retired_why(const struct ticket_server *s, char *why, size_t len);
static void	ticket_retired_read(struct db_conn *db, const struct db_result *r, void *arg);

/* Sets up a server handle; nothing connects until ticket_start(). */
bool
ticket_init(struct ticket_server *s, struct event_base *base, const struct db_params *params,
    unsigned index, const struct ticket_params *p, ticket_notify notify, void *arg)
{
	memset(s, 0, sizeof(*s));
	s->index = index;
	s->name = server_name(index);
	s->partner = server_partner(index);
	server_group(index, &s->group_first, &s->group_count);
	snprintf(s->dbname, sizeof(s->dbname), "%s", params->database);
	s->p = *p;
	s->backoff_ms = p->backoff_min_ms;
	s->notify = notify;
	s->notify_arg = arg;
	s->state = TICKET_DOWN;
	s->db = db_new(base, params, s->name);
	s->retry = evtimer_new(base, ticket_retry_cb, s);
	s->recheck = evtimer_new(base, ticket_recheck_cb, s);
	if (s->db == NULL || s->retry == NULL || s->recheck == NULL)
		return false;
	db_on_lost(s->db, ticket_lost, s);
	return true;
}

/* Closes the connection and frees what the handle owns. */
void
ticket_free(struct ticket_server *s)
{
	if (s->retry != NULL)
		event_free(s->retry);
	if (s->recheck != NULL)
		event_free(s->recheck);
	db_free(s->db);
	s->retry = NULL;
	s->recheck = NULL;
	s->db = NULL;
}

/* The state's name as STATS shows it. */
const char *
ticket_state_name(enum ticket_state st)
{
	switch (st) {
	case TICKET_DOWN:
		return "down";
	case TICKET_CONNECTING:
		return "connecting";
	case TICKET_READY:
	case TICKET_FETCHING:
	case TICKET_RECHECKING:
		return "up";
	case TICKET_REFUSED:
		return "refused";
	case TICKET_REGRESSED:
		return "regressed";
	}
	return "?";
}

bool
ticket_up(const struct ticket_server *s)
{
	return s->state == TICKET_READY || s->state == TICKET_FETCHING ||
	    s->state == TICKET_RECHECKING;
}

/* Probes now. */
void
ticket_start(struct ticket_server *s)
{
	evtimer_del(s->recheck);
	s->state = TICKET_CONNECTING;
	s->stats.connects++;
	s->checked_once = false;
	s->recheck_due = false;
	if (!db_connect(s->db, ticket_connected, s))
		ticket_failed(s, "connect", "could not start a connection");
}

/* The backoff timer fired. */
static void
ticket_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ticket_start(arg);
}

static void
ticket_schedule(struct event *ev, unsigned ms)
{
	struct timeval tv = clk_tv_ms(ms);

	evtimer_add(ev, &tv);
}

/* Starts one step of a sequence: a query built whole. */
static bool
ticket_send(struct ticket_server *s, int step, db_cb cb, const char *sql)
{
	s->step = step;
	return db_query(s->db, sql, cb, s);
}

/* Records a failure, logs the transition once, and backs off. */
static void
ticket_failed(struct ticket_server *s, const char *what, const char *msg)
{
	bool was_up = ticket_up(s);

	ticket_flight_end(s);
	s->other = false;
	s->stats.failures++;
	db_close(s->db);
	evtimer_del(s->recheck);
	snprintf(s->last_error, sizeof(s->last_error), "%s: %s", what, msg);
	/* At the top of the backoff too, when the reason is new (issue 30: silent retries). */
	if (was_up || s->backoff_ms == s->p.backoff_min_ms ||
	    strcmp(s->logged_failure, s->last_error) != 0)
		log_warn("%s ticket server down: %s (retry in %u ms)", s->name,
		    s->last_error, s->backoff_ms);
	snprintf(s->logged_failure, sizeof(s->logged_failure), "%s", s->last_error);
	s->state = TICKET_DOWN;
	ticket_schedule(s->retry, s->backoff_ms);
	s->backoff_ms = s->backoff_ms * 2 > s->p.backoff_max_ms ? s->p.backoff_max_ms :
	    s->backoff_ms * 2;
	s->notify(s, TICKET_EV_DOWN, 0, s->notify_arg);
}

/* The server dropped our idle connection: it crashed or restarted. */
static void
ticket_lost(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;

	(void)db;
	if (s->state == TICKET_READY)
		ticket_failed(s, "idle", r->msg);
}

/*
 * Refuses the server and retries only every refused_retry_ms, in case an
 * operator fixes it; the same reason is logged once, not at every retry.
 */
static void
ticket_reject(struct ticket_server *s, enum ticket_state st, const char *why, bool local)
{
	ticket_flight_end(s);
	s->other = false;
	s->stats.refusals++;
	db_close(s->db);
	evtimer_del(s->recheck);
	if (strcmp(s->logged_refusal, why) != 0)
		log_error("%s ticket server REFUSED: %s (retried every %u ms: refused_retry_ms)",
		    s->name, why, s->p.refused_retry_ms);
	snprintf(s->logged_refusal, sizeof(s->logged_refusal), "%s", why);
	snprintf(s->last_error, sizeof(s->last_error), "%s", why);
	s->state = st;
	s->refused_local = local;
	s->backoff_ms = s->p.backoff_min_ms;
	ticket_schedule(s->retry, s->p.refused_retry_ms);
	s->notify(s, TICKET_EV_REFUSED, 0, s->notify_arg);
}

void
ticket_reconnect(struct ticket_server *s, const char *why)
{
	ticket_failed(s, "waiting", why);
}

void
ticket_refuse(struct ticket_server *s, const char *why)
{
	ticket_reject(s, TICKET_REFUSED, why, false);
}

void
ticket_refuse_local(struct ticket_server *s, const char *why)
{
	ticket_reject(s, TICKET_REFUSED, why, true);
}

void
ticket_regress(struct ticket_server *s, const char *why)
{
	ticket_reject(s, TICKET_REGRESSED, why, false);
}

/*
 * A query failed: misconfiguration (rights, schema, authentication) refuses
 * the server, anything else is an outage. Returns true when it was handled.
 */
static bool
ticket_query_error(struct ticket_server *s, const struct db_result *r, const char *what)
{
	char why[512];

	switch (db_classify(r->err)) {
	case DB_ERRC_NONE:
		return false;
	case DB_ERRC_AUTH:
		snprintf(why, sizeof(why), "authentication failed: %s (check db_user, "
		    "IDGEN_DB_PASSWORD or db_password_file, db_name)", r->msg);
		ticket_refuse_local(s, why);
		return true;
	case DB_ERRC_RIGHTS:
		snprintf(why, sizeof(why), "missing rights: %s (load schema/60-grant.sql.in)",
		    r->msg);
		ticket_refuse(s, why);
		return true;
	case DB_ERRC_SCHEMA:
		snprintf(why, sizeof(why), "schema check failed: %s (load schema/ for this "
		    "server)", r->msg);
		ticket_refuse(s, why);
		return true;
	case DB_ERRC_TLS:
		snprintf(why, sizeof(why), "%s (db_tls = required: check db_tls_ca_file, "
		    "db_tls_verify_host, db_tls_min_version and the server's ssl_cert)", r->msg);
		ticket_refuse_local(s, why);
		return true;
	default:
		/* Only with rule witness-landed off (the simulation): taken as landed. */
		if (r->err < 2000 && ticket_refusal_landed(s))
			return true;
		/* The server answered and refused (read-only, a full disk): not an outage. */
		if (r->err < 2000 && (strcmp(what, "check") == 0 || strcmp(what, "witness") == 0))
			ticket_witness_blocked(s, r->msg);
		ticket_failed(s, what, r->msg);
		return true;
	}
}

/*
 * A connect answered but refused before its witness landed: until it does,
 * this server holds no copy of what this process knows, and a restore of
 * another server from a copy taken while this one was away is not caught
 * (docs/design.md 6.5). An error once per episode; shown in STATS and /health.
 */
static void
ticket_witness_blocked(struct ticket_server *s, const char *msg)
{
	s->stats.witness_failures++;
	if (!s->witness_pending)
		log_error("%s ticket server: the copies of the other servers' marks cannot be "
		    "written on it (%s): until they land, a restore of another server from a "
		    "copy taken while %s was away is not caught; not used for tickets, "
		    "retrying (docs/design.md section 6.5)", s->name, msg, s->name);
	s->witness_pending = true;
}

/*
 * Rule witness-landed (docs/design.md 6.5): a server that refused its
 * connect's rights or witness (read-only, a full disk) holds no copy of what
 * this process knows, so it is not used and its copies are not counted as
 * landed (copy first). Production never turns the rule off; off (the
 * simulation), the refusal is taken as the witness landed and the server
 * comes up (its connection is closed: its next query finds it down).
 * Returns true when it did so.
 */
static bool
ticket_refusal_landed(struct ticket_server *s)
{
	if (RULE_ON(RULE_WITNESS_LANDED) || s->step < TICKET_STEP_RIGHTS_TICKETS ||
	    s->step > TICKET_STEP_WITNESS)
		return false;
	if (s->step < TICKET_STEP_WITNESS)
		ticket_copies_take(s);	/* what its witness would have carried */
	ticket_witness_landed(s);
	ticket_up_done(s);
	return true;
}

/* Handshake done: read what uniqueness depends on. */
static void
ticket_connected(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;

	(void)db;
	if (ticket_query_error(s, r, "connect"))
		return;
	snprintf(s->seen.tls, sizeof(s->seen.tls), "%s", r->tls != NULL ? r->tls : "");
	s->seen.recheck = false;
	if (!ticket_send_check(s))
		ticket_failed(s, "check", "could not start the check query");
}

/*
 * Sends the check query: the marks asked for are its own and its partner's
 * copy. Checks are numbered as sent, so the tier can tell one sent after a
 * given moment from one already in flight then (docs/design.md section 6.4).
 */
static bool
ticket_send_check(struct ticket_server *s)
{
	const char *own = server_role(s->index), *partner = server_role(s->partner);
	unsigned others[SERVER_MAX], n = ticket_others(s, others);
	char sql[TICKET_SQL_MAX];
	int len = 0;
	bool ok = ticket_append(sql, sizeof(sql), &len, TICKET_CHECK_SQL, own, partner, own,
	    partner, own, own);

	for (unsigned k = 1; k < n && ok; k++)
		ok = ticket_append(sql, sizeof(sql), &len, TICKET_CHECK_COPY_SQL,
		    server_role(others[k]), server_role(others[k]));
	if (!ok || !ticket_append(sql, sizeof(sql), &len, TICKET_CHECK_TAIL_SQL))
		return false;
	s->checks_sent++;
	return ticket_send(s, TICKET_STEP_CHECK, ticket_checked, sql);
}

/*
 * The other servers of its region this idserver knows: the partner first (the
 * check query's fixed columns), then the rest by index. Returns their number.
 */
static unsigned
ticket_others(const struct ticket_server *s, unsigned *out)
{
	unsigned n = 0;

	out[n++] = s->partner;
	for (unsigned j = s->group_first; j < s->group_first + s->group_count; j++)
		if (j != s->index && j != s->partner)
			out[n++] = j;
	return n;
}

/* Appends to a query being built; false when it does not fit. */
static bool
ticket_append(char *buf, size_t len, int *n, const char *fmt, ...)
{
	va_list ap;
	int m;

	if (*n < 0 || (size_t)*n >= len)
		return false;
	va_start(ap, fmt);
	m = vsnprintf(buf + *n, len - (size_t)*n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= len - (size_t)*n)
		return false;
	*n += m;
	return true;
}

/* Every recheck_ms on a live connection: settings, counter and marks again. */
static void
ticket_recheck_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ticket_recheck_soon(arg);
}

void
ticket_recheck_soon(struct ticket_server *s)
{
	if (s->state == TICKET_READY)
		ticket_start_recheck(s);
	else if (s->state == TICKET_CONNECTING || s->state == TICKET_FETCHING ||
	    s->state == TICKET_RECHECKING)
		s->recheck_due = true;	/* a check in flight may have read too early */
}

/*
 * Milliseconds to this server's next recheck slot, in (0, recheck_ms]: slots
 * every recheck_ms on the monotonic clock, server i of n at i/n of the period.
 * Servers that connected together would otherwise check together, and while
 * each spends two round trips on its checks (the server's, then the
 * namespace check) none of them fetches: 200 ms away, the pool ran dry every
 * recheck_ms (docs/design.md 2.6). Fixed slots do not drift with how long
 * each check took.
 */
static unsigned
ticket_recheck_delay(const struct ticket_server *s)
{
	uint64_t per = s->p.recheck_ms, off = per * s->index / server_count();
	uint64_t phase = (clk_mono_ms() + per - off) % per;

	return (unsigned)(per - phase);
}

/* Sends a check on the live connection; the periodic timer restarts once it passes. */
static void
ticket_start_recheck(struct ticket_server *s)
{
	evtimer_del(s->recheck);
	s->recheck_due = false;
	s->state = TICKET_RECHECKING;
	s->seen.recheck = true;
	s->stats.rechecks++;
	if (!ticket_send_check(s))
		ticket_failed(s, "recheck", "could not start the check query");
}

/* Checks the server's settings, meta row, counter and marks. */
static void
ticket_checked(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;
	char **row;
	unsigned nf = 0;
	uint64_t b;

	(void)db;
	if (ticket_query_error(s, r, s->seen.recheck ? "recheck" : "check"))
		return;
	row = db_first_row(r, &nf);
	if (row == NULL || nf != TICKET_CHECK_FIELDS + 2 * (s->group_count - 2)) {
		ticket_refuse(s, "idgen_meta has no row (load schema/ for this server)");
		return;
	}
	if (!ticket_check_settings(s, row, &b))
		return;
	snprintf(s->seen.uuid, sizeof(s->seen.uuid), "%s", row[8] != NULL ? row[8] : "");
	if (!check_uint(row[12], &s->seen.workers_leased))
		s->seen.workers_leased = 0;
	/* tickets64: the one check of every sequence's ticket table (13.7). */
	if (!ticket_check_table(s, row) || !ticket_retired(s, row[25], b))
		return;
	ticket_floor(s, row[22], b);
	/* One query in flight per connection: this answers the last check sent. */
	s->check_accepted = s->checks_sent;
	s->block_size = b;
	/*
	 * What it read is known now, whatever the steps after it bring: a mark
	 * only rises and only refuses (docs/design.md 6.4). A recheck's UP follows.
	 */
	if (!s->seen.recheck && RULE_ON(RULE_CHECK_READ))
		s->notify(s, TICKET_EV_READ, 0, s->notify_arg);
	if (s->seen.recheck) {
		ticket_up_done(s);
		return;
	}
	/* row[0]: @@version, as check_server read it. */
	snprintf(s->seen.version, sizeof(s->seen.version), "%s", row[0]);
	if (!ticket_send(s, TICKET_STEP_RIGHTS_TICKETS, ticket_rights_cb, check_rights[0].sql))
		ticket_failed(s, "check", "could not start the rights check");
}

/*
 * A check whose settings or generation refuse the server (refuse), or fail
 * its connection: what it read still binds, so its own mark and copies are
 * merged first (TICKET_EV_READ) when its B and every marks row parse. A mark
 * only rises and only refuses (docs/design.md 6.4): a partner refused while a
 * change of the increment was under way held the only copy of a restored
 * server's mark, and a fresh idserver drew that server's tickets again below
 * it (idsim seed 420572, 6.4).
 */
static void
ticket_check_refused(struct ticket_server *s, char **row, bool refuse, const char *why)
{
	uint64_t b;

	if (RULE_ON(RULE_CHECK_READ) && check_uint(row[6], &b) && b != 0 &&
	    ticket_read_marks(s, row) < 0) {
		s->block_size = b;
		s->notify(s, TICKET_EV_READ, 0, s->notify_arg);
	}
	if (refuse)
		ticket_refuse(s, why);
	else
		ticket_failed(s, "check", why);
}

/*
 * The check's generation, then its settings against this server's place in the
 * tier (check.c), its B in *b: false when the server was not accepted.
 */
static bool
ticket_check_settings(struct ticket_server *s, char **row, uint64_t *b)
{
	unsigned view_gen = server_generation(), view_m = server_increment();
	char why[512];

	if (!ticket_check_generation(s, row))
		return false;
	/* The increment and offset are the session's: what its REPLACE uses. */
	struct check_server_info in = { .version = row[0], .increment = row[19],
	    .offset = row[20], .flush_at_commit = row[3], .layout_version = row[5],
	    .block_size = row[6], .parity = row[7], .tier_increment = row[15],
	    .server_offset = row[16], .region = row[17], .region_bits = row[18] };

	if (!check_server(&in, s->index, b, why, sizeof(why))) {
		/* A server that fails its checks moves no view (docs/design.md 12.4). */
		server_view_revert(view_gen, view_m);
		ticket_check_refused(s, row, true, why);
		return false;
	}
	if (server_generation() != view_gen)
		log_warn("tier generation %u: the increment moved from %u to %u (seen on the %s "
		    "ticket server); set tier_increment = %u in the config", server_generation(),
		    view_m, server_increment(), s->name, server_increment());
	if (s->seen.recheck && *b != s->block_size) {
		snprintf(why, sizeof(why), "idgen_meta.block_size changed from %" PRIu64
		    " to %" PRIu64 " on a live server", s->block_size, *b);
		ticket_check_refused(s, row, true, why);
		return false;
	}
	return true;
}

/*
 * A change of the tier's increment (docs/design.md section 12.4): a connection
 * opened before the server's increment changed is opened again, a sealed
 * server waits like a down one, a later generation moves this process's view,
 * an earlier one is refused. False when the server was not accepted.
 */
static bool
ticket_check_generation(struct ticket_server *s, char **row)
{
	uint64_t g, own_g, sealed, m;
	unsigned before = server_increment();
	char why[512];

	if (row[1] == NULL || row[19] == NULL || strcmp(row[1], row[19]) != 0 ||
	    row[2] == NULL || row[20] == NULL || strcmp(row[2], row[20]) != 0) {
		ticket_check_refused(s, row, false, "auto_increment_increment or _offset changed "
		    "on the server since this connection opened (a change of the tier's "
		    "increment): connecting again");
		return false;
	}
	if (!check_uint(row[21], &g) || !check_uint(row[23], &own_g) ||
	    !check_uint(row[24], &sealed) || g > UINT_MAX) {
		ticket_check_refused(s, row, true, "idgen_meta or idgen_marks lacks the generation "
		    "columns (load schema/10-tables.sql)");
		return false;
	}
	if (sealed != 0 || own_g != g) {
		snprintf(why, sizeof(why), "sealed for a change of the tier's increment (from "
		    "generation %" PRIu64 "): waiting for idgenctl tier raise-increment to finish", g);
		ticket_check_refused(s, row, false, why);
		return false;
	}
	if (g < server_generation()) {
		snprintf(why, sizeof(why), "idgen_meta.tier_generation is %" PRIu64 " but the tier "
		    "is in generation %u (restored from before a change of the increment?); repair: "
		    "run idgenctl tier raise-increment %u again, with this server in the config",
		    g, server_generation(), before);
		ticket_check_refused(s, row, true, why);
		return false;
	}
	if (g > server_generation() && (!check_uint(row[15], &m) || m > UINT_MAX ||
	    !server_view_adopt((unsigned)g, (unsigned)m))) {
		snprintf(why, sizeof(why), "idgen_meta is in generation %" PRIu64 " with "
		    "tier_increment %s: not a change this idserver can follow (from %u)", g,
		    row[15] != NULL ? row[15] : "NULL", before);
		ticket_check_refused(s, row, true, why);
		return false;
	}
	s->generation = (unsigned)g;
	return true;
}

/*
 * The servers this one reports retired (docs/design.md section 12.5) are
 * remembered; a retired server is refused, once what its check read is
 * known (b: its B): its copies of the others' marks still bind until tier
 * retire-server has carried them to the other servers, at its end; its
 * namespace marks too, read first by retired_sql when the tier has it set
 * (TICKET_EV_RETIRED, then the refusal). False when s was refused, or is
 * being.
 */
static bool
ticket_retired(struct ticket_server *s, const char *roles, uint64_t b)
{
	char list[256], *save = NULL, why[256];
	unsigned j;

	snprintf(list, sizeof(list), "%s", roles != NULL ? roles : "");
	for (char *r = strtok_r(list, ",", &save); r != NULL; r = strtok_r(NULL, ",", &save))
		for (j = s->group_first; j < s->group_first + s->group_count; j++)
			if (strcmp(server_role(j), r) == 0)
				server_retire(j);
	if (!server_retired(s->index))
		return true;
	s->block_size = b;
	if (RULE_ON(RULE_CHECK_READ))
		s->notify(s, TICKET_EV_READ, 0, s->notify_arg);
	/*
	 * Its copies of the others' namespace marks bind as well (13.6): no
	 * namespace check reads a refused server, so they are read first.
	 */
	if (s->retired_sql != NULL && RULE_ON(RULE_CHECK_READ) &&
	    ticket_send(s, TICKET_STEP_CHECK, ticket_retired_read, s->retired_sql))
		return false;
	ticket_retired_why(s, why, sizeof(why));
	ticket_refuse(s, why);
	return false;
}

static void
ticket_retired_why(const struct ticket_server *s, char *why, size_t len)
{
	snprintf(why, len, "retired by idgenctl tier retire-server (its offset %u is never "
	    "used again): remove it from more_servers", server_offset(s->index));
}

/* A retired server's namespace marks read (or not: it holds none to read); refused. */
static void
ticket_retired_read(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;
	char why[256];

	(void)db;
	if (r->err == 0) {
		s->retired_read = r;
		(void)s->notify(s, TICKET_EV_RETIRED, 0, s->notify_arg);
		s->retired_read = NULL;
	}
	ticket_retired_why(s, why, sizeof(why));
	ticket_refuse(s, why);
}

/*
 * The meta row's floor (the first ID of its generation, whatever B) binds
 * like its own mark: no ticket whose block starts below it.
 */
static void
ticket_floor(struct ticket_server *s, const char *floor, uint64_t b)
{
	struct state_mark own = { s->seen.own_mark, s->seen.own_mark_b, "" };
	uint64_t f;

	if (!check_uint(floor, &f) || f == 0 || b == 0)
		return;
	f = (f + b - 1) / b - 1;	/* the last ticket whose block starts below it */
	if (f > state_mark_ticket(&own, b)) {
		s->seen.own_mark = f;
		s->seen.own_mark_b = b;
	}
}

/*
 * Its own mark and its copy of every other server's of its region (the
 * partner's in the fixed columns, the rest after them); the first server
 * whose row or B is missing, or -1.
 */
static int
ticket_read_marks(struct ticket_server *s, char **row)
{
	unsigned others[SERVER_MAX], n = ticket_others(s, others);

	if (!check_uint(row[10], &s->seen.own_mark) || !check_uint(row[13], &s->seen.own_mark_b))
		return (int)s->index;
	for (unsigned k = 0; k < n; k++) {
		unsigned j = others[k], h = k == 0 ? 11 : TICKET_CHECK_FIELDS + 2 * (k - 1),
		    b = k == 0 ? 14 : h + 1;

		if (!check_uint(row[h], &s->seen.copy[j]) ||
		    !check_uint(row[b], &s->seen.copy_b[j]))
			return (int)j;
	}
	return -1;
}

/*
 * tickets64 as the check read it: its engine, its counter, every marks row;
 * refused (false) unless check_table passes it.
 */
static bool
ticket_check_table(struct ticket_server *s, char **row)
{
	struct check_table tab = { s->dbname, "tickets64", row[4],
	    check_uint(row[9], &s->seen.counter), "idgen_marks", s->index,
	    ticket_read_marks(s, row), "" };
	bool added = tab.missing >= (int)SERVER_PAIR && ((unsigned)tab.missing != s->index ||
	    server_is_own(s->index));
	char why[512];

	tab.repair = added ? "load schema/10-tables.sql, or run idgenctl tier add-server" :
	    "load schema/10-tables.sql";
	if (check_table(&tab, why, sizeof(why)))
		return true;
	ticket_refuse(s, why);
	return false;
}

/* One EXPLAIN per statement we will run: a missing right names its GRANT. */
static void
ticket_rights_cb(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;
	int i = s->step - TICKET_STEP_RIGHTS_TICKETS;
	char why[512];

	(void)db;
	if (db_classify(r->err) == DB_ERRC_RIGHTS) {
		snprintf(why, sizeof(why), "missing rights: %s; run GRANT %s ON %s.%s TO the "
		    "service user (schema/60-grant.sql.in)", r->msg, check_rights[i].privileges,
		    s->dbname, check_rights[i].table);
		ticket_refuse(s, why);
		return;
	}
	if (ticket_query_error(s, r, "check"))
		return;
	if (++i < (int)check_rights_count) {
		if (!ticket_send(s, TICKET_STEP_RIGHTS_TICKETS + i, ticket_rights_cb,
		    check_rights[i].sql))
			ticket_failed(s, "check", "could not start the rights check");
		return;
	}
	ticket_witness(s);
}

/*
 * Brings every copy it holds that is behind this process's marks up to them,
 * in one round trip; the server may serve once that is done.
 */
static void
ticket_witness(struct ticket_server *s)
{
	struct ticket_copy c[SERVER_MAX];
	uint64_t held[SERVER_MAX];
	char sql[TICKET_SQL_MAX];
	struct ticket_seq q;
	int len = 0;

	ticket_seq_set(&q, NULL, s->block_size, NULL);
	ticket_copies_take(s);
	for (unsigned k = 0; k < s->flight.copies; k++) {
		unsigned j = s->flight.copy[k].srv;

		c[j] = s->flight.copy[k];
		held[j] = ticket_copy_end(s, s->seen.copy[j], s->seen.copy_b[j]);
	}
	if (!ticket_witness_carry(s, &q, c, held, sql, sizeof(sql), &len)) {
		ticket_failed(s, "check", "the copies of the marks do not fit a query");
		return;
	}
	if (len == 0 || !RULE_ON(RULE_WITNESS)) {
		ticket_witness_landed(s);
		ticket_up_done(s);
		return;
	}
	if (!ticket_send(s, TICKET_STEP_WITNESS, ticket_witness_cb, sql))
		ticket_failed(s, "check", "could not start the copies of the others' marks");
}

/*
 * The copies the witness about to be sent carries, kept in s->flight as a
 * default ticket's are (seq 0): its EV_UP lands them (6.5).
 */
static void
ticket_copies_take(struct ticket_server *s)
{
	s->flight.seq = 0;
	ticket_seq_set(&s->flight.q, NULL, s->block_size, NULL);
	s->flight.copies = ticket_copies_wanted(s, s->flight.copy);
}

unsigned
ticket_copies_wanted(const struct ticket_server *s, struct ticket_copy *out)
{
	unsigned others[SERVER_MAX], n = ticket_others(s, others);

	for (unsigned k = 0; k < n; k++) {
		unsigned j = others[k];
		uint64_t b = s->copy_want_b[j] != 0 ? s->copy_want_b[j] : s->block_size;

		out[k] = (struct ticket_copy){ j, s->copy_want[j], b,
		    ticket_copy_end(s, s->copy_want[j], b) };
	}
	return n;
}

void
ticket_seq_set(struct ticket_seq *q, const char *ns, uint64_t b, const char *policy)
{
	q->ns = ns;
	q->policy = policy;
	q->b = b;
	snprintf(q->table, sizeof(q->table), "%s%s", ns != NULL ? "tickets_" : "tickets64",
	    ns != NULL ? ns : "");
}

struct ticket_copy
ticket_copy_block(unsigned srv, uint64_t end, uint64_t b)
{
	uint64_t hw = layout_end_ticket(end, b);

	return (struct ticket_copy){ srv, hw, b, layout_ticket_end(hw, b) };
}

bool
ticket_seq_copy(const struct ticket_seq *q, bool in_tx, const struct ticket_copy *c, char *buf,
    size_t len, int *n)
{
	bool ns = q->ns != NULL;

	return ticket_append(buf, len, n, TICKET_COPY_SQL, *n > 0 ? ";" : "",
	    ns ? "idgen_ns_marks" : "idgen_marks", c->high_water, c->block_size,
	    ns ? "ns = '" : "", ns ? q->ns : "", ns ? "' AND " : "", server_role(c->srv), q->b,
	    c->end, ns && in_tx ? TICKET_TX_NS_GUARD : "");
}

bool
ticket_witness_carry(const struct ticket_server *s, const struct ticket_seq *q,
    const struct ticket_copy *c, const uint64_t *held, char *buf, size_t len, int *n)
{
	unsigned others[SERVER_MAX], m = ticket_others(s, others);

	for (unsigned k = 0; k < m; k++)
		if (c[others[k]].end > held[others[k]] &&
		    !ticket_seq_copy(q, false, &c[others[k]], buf, len, n))
			return false;
	return true;
}

bool
ticket_seq_build(const struct ticket_seq *q, unsigned own, const struct ticket_copy *copies,
    unsigned n, char *buf, size_t len)
{
	const char *r = server_role(own);
	bool ns = q->ns != NULL, ok;
	int at = 0;

	ok = ticket_append(buf, len, &at, "START TRANSACTION;") &&
	    (ns ? ticket_append(buf, len, &at, TICKET_TX_NS_LOCK_SQL, q->b, q->policy, r, q->ns,
	    q->ns, r) : ticket_append(buf, len, &at, TICKET_TX_LOCK_SQL, r)) &&
	    ticket_append(buf, len, &at, TICKET_TX_SQL, q->table, ns ? "idgen_ns_marks" :
	    "idgen_marks", q->b, ns ? ", used_at = NOW(3)" : "", ns ? "ns = '" : "",
	    ns ? q->ns : "", ns ? "' AND " : "", r, ns ? TICKET_TX_NS_GUARD : "", q->b, q->b);
	for (unsigned k = 0; k < n && ok; k++)
		ok = ticket_seq_copy(q, true, &copies[k], buf, len, &at);
	return ok && ticket_append(buf, len, &at, ";COMMIT");
}

unsigned
ticket_seq_stmts(const struct ticket_seq *q, unsigned copies)
{
	return TICKET_TX_STMTS + (q->ns != NULL ? TICKET_TX_NS_STMTS : 0) + copies;
}

/* The first ID above a mark (a block_size of 0 is the server's B); saturates. */
static uint64_t
ticket_copy_end(const struct ticket_server *s, uint64_t high_water, uint64_t block_size)
{
	struct state_mark m = { high_water, block_size, "" };

	return state_mark_end(&m, s->block_size);
}

/* The partner's mark is witnessed here: the server may serve. */
static void
ticket_witness_cb(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;

	(void)db;
	if (ticket_query_error(s, r, "witness"))
		return;
	s->stats.witnessed++;
	ticket_witness_landed(s);
	ticket_up_done(s);
}

bool
ticket_witness_outcome(struct ticket_server *s, const struct db_result *r)
{
	if (r->err == 0)
		ticket_witness_landed(s);
	else if (r->err < 2000)
		ticket_witness_blocked(s, r->msg);
	return r->err == 0;
}

/* A witness landed, or none was needed: the episode of failures, if any, is over. */
static void
ticket_witness_landed(struct ticket_server *s)
{
	if (s->witness_pending)
		log_info("%s ticket server: the copies of the other servers' marks are written "
		    "on it (after %" PRIu64 " failed witnesses)", s->name, s->stats.witness_failures);
	s->witness_pending = false;
}

/*
 * Checks passed: the tier judges the counter against the marks and B. What
 * the check read is logged as it was read: the tier may start the server's
 * next query (a ticket, a recheck) before it returns.
 */
static void
ticket_up_done(struct ticket_server *s)
{
	char line[640];
	bool first = !s->seen.recheck;

	if (first)
		snprintf(line, sizeof(line), "%s ticket server checked%s (version %s, B=%" PRIu64
		    ", next ticket >= %" PRIu64 ", its mark %" PRIu64 ", its copy of the %s mark %"
		    PRIu64 ", %s%s)", s->name, s->logged_refusal[0] ? " and used again" : "",
		    s->seen.version, s->block_size, s->seen.counter, s->seen.own_mark,
		    server_name(s->partner), s->seen.copy[s->partner],
		    s->seen.tls[0] ? "TLS " : "cleartext", s->seen.tls);
	s->state = TICKET_READY;
	if (!s->notify(s, TICKET_EV_UP, 0, s->notify_arg))
		return;		/* the tier refused it */
	if (first)
		log_info("%s", line);
	if (!ticket_up(s))
		return;		/* lost from inside the tier's notice: it logged why */
	s->logged_refusal[0] = '\0';
	s->backoff_ms = s->p.backoff_min_ms;
	s->last_error[0] = '\0';
	ticket_schedule(s->recheck, ticket_recheck_delay(s));
	/* Asked for while this check was in flight; a fetch the tier started takes it after. */
	if (s->recheck_due && s->state == TICKET_READY)
		ticket_start_recheck(s);
}

bool
ticket_run(struct ticket_server *s, const char *sql, db_cb cb)
{
	if (s->state != TICKET_READY)
		return false;
	s->state = TICKET_FETCHING;
	s->other = true;
	if (!ticket_run_next(s, sql, cb)) {
		s->state = TICKET_READY;
		s->other = false;
		return false;
	}
	return true;
}

bool
ticket_run_next(struct ticket_server *s, const char *sql, db_cb cb)
{
	return ticket_send(s, TICKET_STEP_OTHER, cb, sql);
}

void
ticket_run_end(struct ticket_server *s)
{
	s->other = false;
	if (s->state != TICKET_FETCHING)
		return;
	s->state = TICKET_READY;
	if (s->recheck_due)
		ticket_start_recheck(s);
}

void
ticket_run_lost(struct ticket_server *s, const char *what, const char *msg)
{
	ticket_failed(s, what, msg);	/* the run ends with the connection */
}

/*
 * The ticket transaction in flight sent again, as built from its flight: its
 * sequence's table and B, its own mark's row and the copies it carries.
 */
static bool
ticket_send_tx(struct ticket_server *s)
{
	char sql[TICKET_SQL_MAX];

	if (!ticket_seq_build(&s->flight.q, s->index, s->flight.copy, s->flight.copies, sql,
	    sizeof(sql)))
		return false;
	return ticket_send(s, TICKET_STEP_TX, ticket_tx_cb, sql);
}

/*
 * One query at a time on the connection: a ticket of any sequence, then its
 * answer. A namespace's is another module's query (other set): the default's
 * fetch time and in-flight count are its own.
 */
bool
ticket_fetch_seq(struct ticket_server *s, const struct ticket_flight *f)
{
	if (s->state != TICKET_READY)
		return false;
	/* Set first: the answer may come inside the call. */
	s->flight = *f;
	s->flight.on = true;
	(*f->fetching)++;
	s->state = TICKET_FETCHING;
	s->other = f->seq != 0;
	s->fetch_started_us = (uint64_t)clk_mono_us();
	if (ticket_send_tx(s))
		return true;
	s->state = TICKET_READY;
	s->other = false;
	ticket_flight_end(s);
	return false;
}

/* A ticket no longer in flight (answered, or its connection ended). */
static void
ticket_flight_end(struct ticket_server *s)
{
	if (!s->flight.on)
		return;
	s->flight.on = false;
	(*s->flight.fetching)--;
}

/*
 * Every sequence's ticket answered (13.7): only a committed ticket that passed
 * every check is used. A refusal refuses the server, or a namespace there.
 */
static void
ticket_tx_cb(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;
	struct ticket_flight *f = &s->flight;
	uint64_t t = 0;
	enum ticket_verdict v;
	char why[512];

	(void)db;
	why[0] = '\0';	/* the verdict writes it only when it says why: a namespace's OK copies it */
	/* A namespace's ends at its answer; the default's is asked again after a rollback. */
	if (f->seq != 0)
		ticket_flight_end(s);
	if (s->step == TICKET_STEP_ROLLBACK) {
		ticket_tx_rolled_back(s, r);
		return;
	}
	if (r->err != 0) {
		ticket_tx_failed(s, r);
		return;
	}
	ticket_flight_end(s);
	v = ticket_tx_verdict(s, &f->q, r, f->copies, f->mark, f->known(s), &t, why, sizeof(why));
	ticket_tx_judged(s, v, t, why);
}

/*
 * Not committed: a deadlock or lock wait rolls back, and so does a statement
 * a namespace's server refused (no table, no right: refused there); anything
 * else may have run (a gap): the default's by ticket_query_error, closed.
 */
static void
ticket_tx_failed(struct ticket_server *s, const struct db_result *r)
{
	const char *what = s->flight.seq != 0 ? "namespace ticket" : "ticket";
	enum ticket_txfail c = ticket_tx_failure(s, r);

	if (c == TICKET_TXF_REFUSED && s->flight.seq != 0) {
		snprintf(s->flight.why, sizeof(s->flight.why), "its ticket transaction failed: %s "
		    "(idgenctl ns create makes %s and its rights)", r->msg, s->flight.q.table);
		ticket_seq_answered(s, TICKET_TX_FAILED, 0);
	} else if (c != TICKET_TXF_RETRY) {
		if (s->flight.seq != 0)
			ticket_failed(s, what, r->msg);
		else
			(void)ticket_query_error(s, r, what);
		return;
	}
	if (!ticket_send(s, TICKET_STEP_ROLLBACK, ticket_tx_cb, "ROLLBACK"))
		ticket_failed(s, what, "could not roll back");
}

/* Rolled back: a namespace's run ends; the default's ticket is asked for again. */
static void
ticket_tx_rolled_back(struct ticket_server *s, const struct db_result *r)
{
	if (s->flight.seq != 0) {
		if (r->err != 0)
			ticket_failed(s, "namespace ticket", r->msg);
		else
			ticket_seq_answered(s, TICKET_TX_ROLLED, 0);
	} else if (r->err != 0) {
		ticket_tx_failed(s, r);
	} else if (!ticket_send_tx(s)) {
		ticket_failed(s, "ticket", "could not restart after a deadlock");
	}
}

/*
 * A committed ticket judged: used only when TICKET_TX_OK; short or sealed,
 * the connection closes; LEARNED refuses nothing, the counter checked at once.
 */
static void
ticket_tx_judged(struct ticket_server *s, enum ticket_verdict v, uint64_t t, const char *why)
{
	bool ns = s->flight.seq != 0;

	if (v == TICKET_TX_LEARNED)
		log_warn("%s ticket server: %s", s->name, why);
	if (v == TICKET_TX_SHORT || v == TICKET_TX_SEALED || (ns && v == TICKET_TX_NO_ROW)) {
		ticket_failed(s, ns ? "namespace ticket" : "ticket", why);
	} else if (ns) {
		snprintf(s->flight.why, sizeof(s->flight.why), "%s", why);
		ticket_seq_answered(s, v, t);
	} else if (v == TICKET_TX_REGRESS) {
		ticket_regress(s, why);
	} else if (v == TICKET_TX_LEARNED) {
		s->state = TICKET_READY;
		ticket_start_recheck(s);
	} else if (v != TICKET_TX_OK) {
		ticket_refuse(s, why);
	} else {
		ticket_run_end(s);
		ticket_tx_bank(s, t);
	}
}

/* The tier hears a namespace's verdict, its server free (FAILED: before ROLLBACK). */
static void
ticket_seq_answered(struct ticket_server *s, enum ticket_verdict v, uint64_t t)
{
	s->flight.verdict = v;
	s->flight.ticket = t;
	if (v != TICKET_TX_FAILED)
		ticket_run_end(s);
	s->notify(s, TICKET_EV_SEQ, t, s->notify_arg);
}

enum ticket_txfail
ticket_tx_failure(struct ticket_server *s, const struct db_result *r)
{
	enum db_errclass c = db_classify(r->err);

	if (c == DB_ERRC_DEADLOCK)
		s->stats.deadlocks++;
	else if (c == DB_ERRC_LOCK_TIMEOUT)
		s->stats.lock_timeouts++;
	else if (c == DB_ERRC_SCHEMA || c == DB_ERRC_RIGHTS || (r->err > 0 && r->err < 2000))
		return TICKET_TXF_REFUSED;
	else
		return TICKET_TXF_LOST;
	return TICKET_TXF_RETRY;
}

enum ticket_verdict
ticket_tx_verdict(struct ticket_server *s, const struct ticket_seq *q,
    const struct db_result *r, unsigned copies, uint64_t mark, uint64_t learned,
    uint64_t *ticket, char *why, size_t whylen)
{
	unsigned replace = ticket_seq_stmts(q, 0) - 3;
	char **row;
	uint64_t t, own = 0;
	enum ticket_verdict v;

	if ((v = ticket_tx_read_rows(q, r, copies, &row, &own, why, whylen)) != TICKET_TX_OK ||
	    (v = ticket_tx_check_catalogue(q, row, why, whylen)) != TICKET_TX_OK ||
	    (v = ticket_tx_check_generation(s, q, row, why, whylen)) != TICKET_TX_OK)
		return v;
	*ticket = t = r->stmt_insert_id[replace];
	if ((v = ticket_tx_check_own_mark(s, q, r->stmt_affected[replace + 1], t, own, why,
	    whylen)) != TICKET_TX_OK ||
	    (v = ticket_tx_check_known(s, q, t, mark, why, whylen)) != TICKET_TX_OK)
		return v;
	return ticket_tx_check_learned(s, q, t, learned, why, whylen);
}

/* It ran to its end, and its first row is there: (1)'s (the own mark's) or the catalogue's. */
static enum ticket_verdict
ticket_tx_read_rows(const struct ticket_seq *q, const struct db_result *r, unsigned copies,
    char ***rowp, uint64_t *own, char *why, size_t whylen)
{
	bool ns = q->ns != NULL;
	unsigned nf = 0;
	char **row;

	if (r->nstmts != ticket_seq_stmts(q, copies)) {
		snprintf(why, whylen, "the ticket transaction did not run to its end");
		return TICKET_TX_SHORT;
	}
	row = db_first_row(r, &nf);
	if (row == NULL || nf != (ns ? 6u : 3u) || (!ns && !check_uint(row[0], own))) {
		snprintf(why, whylen, "%s lacks its row for this server's role (load "
		    "schema/10-tables.sql)", ns ? "idgen_namespaces or idgen_marks" :
		    "idgen_marks");
		return TICKET_TX_NO_ROW;
	}
	*rowp = row;
	return TICKET_TX_OK;
}

/* Dropped or created again since our check: the ticket is not used (a gap, 13.6). */
static enum ticket_verdict
ticket_tx_check_catalogue(const struct ticket_seq *q, char **row, char *why, size_t whylen)
{
	bool ns = q->ns != NULL;
	char b[24];

	snprintf(b, sizeof(b), "%" PRIu64, q->b);
	if (ns && (row[0] == NULL || strcmp(row[0], "ready") != 0 || row[1] == NULL ||
	    strcmp(row[1], b) != 0 || row[2] == NULL || strcmp(row[2], q->policy) != 0)) {
		snprintf(why, whylen, "dropped or created again since the last check: the ticket "
		    "is not used");
		return TICKET_TX_CHANGED;
	}
	return TICKET_TX_OK;
}

/* Read under the row's lock: sealed, or opened in another generation (12.4). */
static enum ticket_verdict
ticket_tx_check_generation(struct ticket_server *s, const struct ticket_seq *q, char **row,
    char *why, size_t whylen)
{
	/* The first row: (1)'s, the own mark's or the catalogue's, then generation, seal. */
	unsigned gen = q->ns != NULL ? 3 : 1;
	uint64_t g, sealed;

	if (!check_uint(row[gen], &g) || !check_uint(row[gen + 1], &sealed) || ((sealed != 0 ||
	    g != s->generation || s->generation != server_generation()) && RULE_ON(RULE_SEAL))) {
		s->stats.unbanked++;
		snprintf(why, whylen, "a change of the tier's increment sealed the server or "
		    "moved it to another generation: the ticket is not used; connecting again");
		return TICKET_TX_SEALED;
	}
	return TICKET_TX_OK;
}

/* (3) raised the own mark (affected: its rows), or the counter regressed below it. */
static enum ticket_verdict
ticket_tx_check_own_mark(const struct ticket_server *s, const struct ticket_seq *q,
    uint64_t affected, uint64_t t, uint64_t own, char *why, size_t whylen)
{
	bool ns = q->ns != NULL;

	/* One check for every sequence; the simulation switches each kind's apart. */
	if (affected != 1 && RULE_ON(ns ? RULE_NS_OWN_MARK : RULE_OWN_MARK)) {
		/* A namespace's own mark is locked in a statement of its own: not in the row. */
		if (ns)
			snprintf(why, whylen, "counter regressed: ticket %" PRIu64 " of %s is not "
			    "above the server's own mark in idgen_ns_marks; repair: idgenctl ns "
			    "raise %s --above <its largest ID> (or ALTER TABLE %s AUTO_INCREMENT "
			    "above the mark)", t, q->table, q->ns, q->table);
		else
			check_regressed_msg(why, whylen, s->name, s->dbname, q->table, t, own,
			    "in the server's own idgen_marks");
		return TICKET_TX_REGRESS;
	}
	return TICKET_TX_OK;
}

/*
 * Against the mark known when the ticket was asked for: every mark known
 * then belongs to a ticket committed before this one drew, so below it the
 * counter regressed and the server is refused (docs/design.md 6.3).
 */
static enum ticket_verdict
ticket_tx_check_known(const struct ticket_server *s, const struct ticket_seq *q, uint64_t t,
    uint64_t mark, char *why, size_t whylen)
{
	bool ns = q->ns != NULL;

	switch (check_ticket(t, RULE_ON(ns ? RULE_NS_KNOWN : RULE_TICKET_KNOWN) ? mark : 0,
	    s->index, q->b)) {
	case CHECK_TICKET_OK:
		break;
	case CHECK_TICKET_PARITY:
		snprintf(why, whylen, "ticket %" PRIu64 " has the wrong parity for the %s "
		    "server (auto_increment_offset changed?)", t, s->name);
		return TICKET_TX_REFUSE;
	case CHECK_TICKET_REGRESSED:
		check_regressed_msg(why, whylen, s->name, s->dbname, q->table, t, mark,
		    "known to this idserver (its state file, or a copy on another server of "
		    "its region)");
		return TICKET_TX_REGRESS;
	case CHECK_TICKET_LIMIT:
		snprintf(why, whylen, "ticket %" PRIu64 " with B=%" PRIu64 " would reach 2^53: %s "
		    "is exhausted", t, q->b, ns ? "the namespace" : "the ticket region");
		return TICKET_TX_REFUSE;
	}
	return TICKET_TX_OK;
}

/*
 * Against the mark known now, as the answer is taken: a copy read while
 * the ticket was in flight that covers it is this ticket read back through
 * another idserver's copy, or a regression learned just in time; which, its
 * value cannot tell. Not used (a gap), nothing refused: the next ticket is
 * sent with this mark known (docs/design.md 6.3, seed 21084 of idsim).
 */
static enum ticket_verdict
ticket_tx_check_learned(const struct ticket_server *s, const struct ticket_seq *q,
    uint64_t t, uint64_t learned, char *why, size_t whylen)
{
	if (t <= learned && RULE_ON(RULE_KNOWN_AT_ANSWER)) {
		snprintf(why, whylen, "ticket %" PRIu64 " of %s.%s is not above mark %" PRIu64
		    " learned while it was in flight (a copy on another server, read before its "
		    "answer): not used, a gap (the counter moved back, or another idserver copied "
		    "this very ticket there first)", t, s->dbname, q->table, learned);
		return TICKET_TX_LEARNED;
	}
	return TICKET_TX_OK;
}

/* Hands a checked ticket to the tier, which records it before banking its block. */
static void
ticket_tx_bank(struct ticket_server *s, uint64_t t)
{
	/*
	 * Timed before the notice: the tier may start the next fetch from it,
	 * which restarts fetch_started_us.
	 */
	uint64_t us = (uint64_t)clk_mono_us() - s->fetch_started_us;
	unsigned k;

	if (!s->notify(s, TICKET_EV_TICKET, t, s->notify_arg))
		return;		/* not used (the state file could not record it) */
	s->last_ticket = t;
	s->stats.tickets++;
	s->stats.fetch_us_total += us;
	if (us > s->stats.fetch_us_max)
		s->stats.fetch_us_max = us;
	for (k = 0; k < TICKET_FETCH_BUCKETS && us > ticket_fetch_bounds_us[k]; k++)
		;
	s->stats.fetch_hist[k]++;
}
