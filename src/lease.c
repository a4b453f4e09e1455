/*
 * lease.c - claim, extend and release the Snowflake worker-number lease: one
 * operation in flight at a time (l->op, set as one starts, reset by lease_end),
 * and one function, lease_change, through which every event changes the
 * lease's state, the generator's window and the state file's record
 * (docs/design.md section 3.8).
 */
#include "lease.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "check.h"
#include "clk.h"
#include "layout.h"
#include "log.h"
#include "rules.h"
#include "server.h"

/* What changes the lease; each has its state, counter and log line (lease_change). */
enum lease_event {
	LEASE_EV_CLAIMED,	/* a claim committed: held, the claimed window */
	LEASE_EV_RESUMED,	/* the state file's window, at start-up: held */
	LEASE_EV_EXTENDED,	/* the compare-and-set moved window_end on */
	LEASE_EV_ADOPTED,	/* ... and the row names us, no longer our previous incarnation */
	LEASE_EV_REFUSED,	/* a claim's clocks disagree: refused (a held window runs on) */
	LEASE_EV_EXTEND_REFUSED,	/* an extend's or adoption's: the window runs on */
	LEASE_EV_LOST,		/* our row names another holder: none */
	LEASE_EV_RELEASED,	/* released at shutdown, or given up (why says why): none */
};

static void	lease_tick_cb(evutil_socket_t fd, short what, void *arg);
static void	lease_end(struct lease *l);
static void	lease_change(struct lease *l, enum lease_event ev, const char *why);
static void	lease_record(struct lease *l);
static void	lease_log_change(struct lease *l, enum lease_event ev, const char *why);
static void	lease_failed(struct lease *l, const char *why);
static void	lease_connected_cb(struct db_conn *db, const struct db_result *r, void *arg);
static void	lease_send_clock(struct lease *l, int server);
static void	lease_clock_cb(struct db_conn *db, const struct db_result *r, void *arg);
static void	lease_cas(struct lease *l, enum lease_op op);
static void	lease_cas_send(struct lease *l);
static void	lease_cas_cb(struct db_conn *db, const struct db_result *r, void *arg);
static void	lease_cas_failed(struct lease *l, const char *msg);
static const char *lease_row_holder(const struct lease *l);
static void	lease_schedule(struct lease *l, unsigned ms);
static void	lease_claim(struct lease *l, int server);
static void	lease_claim_begun_cb(struct db_conn *db, const struct db_result *r, void *arg);
static void	lease_claim_picked_cb(struct db_conn *db, const struct db_result *r, void *arg);
static void	lease_claim_taken_cb(struct db_conn *db, const struct db_result *r, void *arg);
static void	lease_claim_committed_cb(struct db_conn *db, const struct db_result *r,
		    void *arg);
static void	lease_claim_failed(struct lease *l, const char *why, bool try_other);
static bool	lease_skew_ok(struct lease *l, int server, const char *db_now, int64_t t0,
		    char *why, size_t whylen);
static void	lease_do_release(struct lease *l);
static void	lease_release_send(struct lease *l);
static void	lease_release_cb(struct db_conn *db, const struct db_result *r, void *arg);
static bool	lease_save(struct lease *l, const char *what);
static uint64_t	lease_reserve_to(const struct lease *l, uint64_t ts);
static void	lease_landed(struct lease *l, int64_t t0_us);
static void	lease_reserved_cb(void *arg, bool ok, uint64_t reserved, uint64_t epoch);
static bool	lease_now(struct lease *l, uint64_t *now);
static bool	lease_send(struct lease *l, struct db_conn *db, db_cb cb, const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));

/* The home server (the pid's parity) and a holder name unique to this incarnation. */
void
lease_whoami(struct lease *l)
{
	char host[64] = "localhost";
	uint64_t nonce = 0;

	l->home = (unsigned)getpid() % SERVER_PAIR;
	gethostname(host, sizeof(host) - 1);
	if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
		nonce = (uint64_t)clk_real_ms() ^ ((uint64_t)getpid() << 32);
	/*
	 * Host, pid and a random nonce: unique per process incarnation; then who
	 * holds it, for tier status (docs/design.md 3.7).
	 */
	snprintf(l->holder, sizeof(l->holder), "%.60s:%d:%016" PRIx64 ":%s", host,
	    (int)getpid(), nonce, LEASE_KIND_IDSERVER);
}

/* Where lease_init takes the home and holder from (the simulation's own, lease.h). */
void (*lease_whoami_fn)(struct lease *l) = lease_whoami;

/* Sets up both lease connections and a holder name unique to this incarnation. */
bool
lease_init(struct lease *l, struct event_base *base, const struct config *cfg,
    struct snowflake *gen, struct statefile *sf, const struct db_ops *ops,
    int64_t (*clock_ms)(void),
    void (*on_change)(void *), enum lease_trust (*trust)(void *, int), void *arg)
{
	struct db_params p;

	memset(l, 0, sizeof(*l));
	l->base = base;
	l->cfg = cfg;
	l->gen = gen;
	l->sf = sf;
	l->clock_ms = clock_ms;
	l->on_change = on_change;
	l->trust = trust;
	l->arg = arg;
	lease_whoami_fn(l);
	/* Only safe characters reach the SQL text. */
	for (char *h = l->holder; *h; h++)
		if (!((*h >= 'a' && *h <= 'z') || (*h >= 'A' && *h <= 'Z') ||
		    (*h >= '0' && *h <= '9') || *h == ':' || *h == '.' || *h == '-'))
			*h = '_';
	/*
	 * An extend that changes nothing still matches: DB_FOUND_ROWS. The release
	 * names its holder to the schema's trigger in the same query:
	 * DB_MULTI_STATEMENTS.
	 */
	for (unsigned i = 0; i < SERVER_PAIR; i++) {
		char name[32];

		snprintf(name, sizeof(name), "lease-%s", server_name(i));
		config_db_params(&p, cfg, i, DB_FOUND_ROWS | DB_MULTI_STATEMENTS, ops);
		l->db[i] = db_new(base, &p, name);
		if (l->db[i] == NULL)
			return false;
	}
	l->tick = evtimer_new(base, lease_tick_cb, l);
	return l->tick != NULL;
}

/* Names the holder's kind (the name's last field), before the first claim. */
void
lease_set_kind(struct lease *l, const char *kind)
{
	char *k = strrchr(l->holder, ':');

	if (k != NULL && l->state == LEASE_NONE && l->op == LEASE_OP_IDLE)
		snprintf(k + 1, sizeof(l->holder) - (size_t)(k + 1 - l->holder), "%s", kind);
}

void
lease_free(struct lease *l)
{
	if (l->tick != NULL)
		event_free(l->tick);
	for (unsigned i = 0; i < SERVER_PAIR; i++)
		db_free(l->db[i]);
	l->tick = NULL;
	memset(l->db, 0, sizeof(l->db));
}

/* "expired" once now has passed a held window's end: held no longer serves. */
const char *
lease_state_at(const struct lease *l, uint64_t now)
{
	static const char *const names[] = { [LEASE_NONE] = "none", [LEASE_HELD] = "held",
	    [LEASE_REFUSED] = "refused" };

	if (l->state == LEASE_HELD && now > l->window_end)
		return "expired";
	return names[l->state];
}

/* Our layout ms; false when the clock is before the layout's epoch. */
static bool
lease_now(struct lease *l, uint64_t *now)
{
	return layout_ts_from_unix_ms(l->clock_ms(), now);
}

/* The holder our row names: ours, or our previous incarnation's until adopted. */
static const char *
lease_row_holder(const struct lease *l)
{
	return l->adopt_from[0] != '\0' ? l->adopt_from : l->holder;
}

/* Writes the state file; a failure is logged once per episode. */
static bool
lease_save(struct lease *l, const char *what)
{
	if (statefile_save(l->sf))
		return true;
	if (strcmp(l->last_error, l->sf->last_error) != 0)
		log_error("lease: state file: %s (writing %s; state_file)", l->sf->last_error,
		    what);
	snprintf(l->last_error, sizeof(l->last_error), "%s", l->sf->last_error);
	return false;
}

/* Formats and starts one query on a lease connection. */
static bool
lease_send(struct lease *l, struct db_conn *db, db_cb cb, const char *fmt, ...)
{
	char sql[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return db_query(db, sql, cb, l);
}

static void
lease_schedule(struct lease *l, unsigned ms)
{
	struct timeval tv = clk_tv_ms(ms);

	evtimer_add(l->tick, &tv);
}

/* Claims at once; from then on the tick keeps the window ahead. */
void
lease_start(struct lease *l)
{
	lease_schedule(l, 0);
}

/* Extend a held window, or claim one; claims start on the server our pid picks, to spread load. */
static void
lease_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lease *l = arg;

	(void)fd;
	(void)what;
	if (l->want.release)
		return;
	if (l->op != LEASE_OP_IDLE) {
		lease_schedule(l, l->cfg->lease_extend_ms);
		return;
	}
	/* The owner of our number was refused or retired: move to the partner. */
	if (l->state == LEASE_HELD && l->trust(l->arg, l->server) == LEASE_DISTRUSTED)
		l->want.fresh = true;
	if (l->state == LEASE_HELD && !l->want.fresh)
		lease_cas(l, l->adopt_from[0] != '\0' ? LEASE_OP_ADOPT : LEASE_OP_EXTEND);
	else
		lease_claim(l, l->state == LEASE_HELD ? (int)((unsigned)l->server ^ 1u) :
		    (int)l->home);
}

/*
 * The operation in flight is over, or none started: a release's end tells
 * on_done; else a requested release goes next, or the tick is set for the
 * next operation.
 */
static void
lease_end(struct lease *l)
{
	enum lease_op was = l->op;

	l->op = LEASE_OP_IDLE;
	if (was == LEASE_OP_RELEASE) {
		l->on_done(l->done_arg);
		return;
	}
	if (l->want.release) {
		lease_do_release(l);
		return;
	}
	if (l->want.now) {
		l->want.now = false;
		lease_schedule(l, 0);
		return;
	}
	if (l->want.fresh || l->state != LEASE_HELD)
		lease_schedule(l, l->cfg->reprobe_max_ms < l->cfg->lease_extend_ms ?
		    l->cfg->reprobe_max_ms : l->cfg->lease_extend_ms);
	else
		lease_schedule(l, l->cfg->lease_extend_ms);
}

/* The state file's copy of a new window: nothing minted in it yet (the first take reserves). */
static void
lease_record(struct lease *l)
{
	struct state_lease *sl = &l->sf->rec.lease;

	sl->held = true;
	sl->worker = l->worker;
	sl->server = l->server;
	snprintf(sl->holder, sizeof(sl->holder), "%s", l->holder);
	sl->window_start = l->window_start;
	sl->window_end = l->window_end;
	sl->reserved = l->window_start - 1;
}

/* An event's log line; refusals once per episode. */
static void
lease_log_change(struct lease *l, enum lease_event ev, const char *why)
{
	switch (ev) {
	case LEASE_EV_CLAIMED:
		log_info("lease: worker %u from the %s server, window %" PRIu64 "..%" PRIu64
		    " (%u ms), clock skew %+lld ms", l->worker, server_name(l->server),
		    l->window_start, l->window_end, l->cfg->lease_window_ms,
		    (long long)-l->skew_ms);
		break;
	case LEASE_EV_RESUMED:
		log_info("lease resumed from the state file: worker %u (%s server), window "
		    "%" PRIu64 "..%" PRIu64 ", minting above %" PRIu64 "; re-adopted when the %s "
		    "server answers", l->worker, server_name(l->server), l->window_start,
		    l->window_end, l->sf->rec.lease.reserved, server_name(l->server));
		break;
	case LEASE_EV_EXTENDED:
		break;
	case LEASE_EV_ADOPTED:
		log_info("lease re-adopted: worker %u on the %s server, window now ends at %"
		    PRIu64, l->worker, server_name(l->server), l->window_end);
		break;
	case LEASE_EV_REFUSED:
		if (!l->logged.skew)
			log_error("lease REFUSED: %s", why);
		l->logged.skew = true;
		break;
	case LEASE_EV_EXTEND_REFUSED:
		if (!l->logged.extend_skew)
			log_error("lease: %s REFUSED: %s: window_end is not moved; worker %u "
			    "runs on to its end at %" PRIu64, l->op == LEASE_OP_ADOPT ?
			    "re-adoption" : "extend", why, l->worker, l->window_end);
		l->logged.extend_skew = true;
		break;
	case LEASE_EV_LOST:
		log_error("lease: worker %u on the %s server %s; claiming a new number", l->worker,
		    server_name(l->server), why);
		break;
	case LEASE_EV_RELEASED:
		if (why == NULL)
			log_info("lease released: worker %u, window_end %" PRIu64 " (the last ms "
			    "minted)", l->worker, l->c_end);
		else
			log_warn("lease: worker %u not released (%s); it is free again after %"
			    PRIu64, l->worker, why, l->window_end);
		break;
	}
}

/*
 * The one place the lease changes (docs/design.md section 3.8): its state,
 * the generator's window and the state file's record, the counter, the log
 * line, last_error, and on_change. A window reaches the generator only once
 * its claim committed (or it was resumed); the file never runs ahead of the
 * database (written after the update committed); a release wrote the file
 * itself, before its update (lease_release_send). Not told: a resumption
 * (before the loop runs) and a release (its end tells on_done).
 */
static void
lease_change(struct lease *l, enum lease_event ev, const char *why)
{
	struct state_lease *sl = &l->sf->rec.lease;

	/* A reservation posted for another window says nothing of this one. */
	if (ev == LEASE_EV_CLAIMED || ev == LEASE_EV_RESUMED || ev == LEASE_EV_LOST ||
	    ev == LEASE_EV_RELEASED) {
		l->ahead.epoch++;
		l->ahead.pending = false;
		l->ahead.failed = false;
	}
	switch (ev) {
	case LEASE_EV_CLAIMED:
		l->state = LEASE_HELD;
		l->stats.claims++;
		snowflake_set_window(l->gen, l->worker, l->window_start, l->window_end);
		lease_record(l);
		snowflake_set_reserved(l->gen, statefile_on(l->sf) ? sl->reserved : LAYOUT_TS_MAX);
		(void)lease_save(l, "the new lease");
		break;
	case LEASE_EV_RESUMED:
		l->state = LEASE_HELD;
		l->stats.resumed++;
		/* Strictly above everything minted before the restart. */
		snowflake_resume(l->gen, l->worker, sl->reserved + 1, l->window_end);
		snowflake_set_reserved(l->gen, sl->reserved);
		break;
	case LEASE_EV_EXTENDED:
	case LEASE_EV_ADOPTED:
		if (ev == LEASE_EV_ADOPTED)
			l->stats.adopted++;
		else
			l->stats.extends++;
		snowflake_extend(l->gen, l->window_end);
		sl->window_end = l->window_end;
		if (ev == LEASE_EV_ADOPTED)
			snprintf(sl->holder, sizeof(sl->holder), "%s", l->holder);
		(void)lease_save(l, ev == LEASE_EV_ADOPTED ? "the adopted lease" :
		    "the extended window");
		break;
	case LEASE_EV_REFUSED:
		if (l->state != LEASE_HELD)
			l->state = LEASE_REFUSED;
		l->stats.skew_refusals++;
		break;
	case LEASE_EV_EXTEND_REFUSED:
		l->stats.extend_skew_refusals++;
		break;
	case LEASE_EV_LOST:
		l->state = LEASE_NONE;
		l->stats.lost++;
		snowflake_clear_window(l->gen);
		sl->held = false;
		(void)lease_save(l, "the lost lease");
		break;
	case LEASE_EV_RELEASED:
		l->state = LEASE_NONE;
		if (why == NULL)
			l->stats.releases++;
		snowflake_clear_window(l->gen);
		break;
	}
	lease_log_change(l, ev, why);
	if (ev == LEASE_EV_REFUSED || ev == LEASE_EV_EXTEND_REFUSED)
		snprintf(l->last_error, sizeof(l->last_error), "%s", why);
	else if (ev != LEASE_EV_LOST && ev != LEASE_EV_RELEASED)
		l->last_error[0] = '\0';
	if (ev != LEASE_EV_RESUMED && ev != LEASE_EV_RELEASED)
		l->on_change(l->arg);
}

/* The operation in flight failed on its server (why): each its own way. */
static void
lease_failed(struct lease *l, const char *why)
{
	switch (l->op) {
	case LEASE_OP_CLAIM:
		lease_claim_failed(l, why, true);
		break;
	case LEASE_OP_EXTEND:
	case LEASE_OP_ADOPT:
		lease_cas_failed(l, why);
		break;
	case LEASE_OP_RELEASE:
		lease_change(l, LEASE_EV_RELEASED, why);
		lease_end(l);
		break;
	case LEASE_OP_IDLE:
		break;
	}
}

/* Connected for the operation in flight: its first statement, or its failure. */
static void
lease_connected_cb(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct lease *l = arg;

	(void)db;
	if (r->err != 0) {
		lease_failed(l, r->msg);
		return;
	}
	switch (l->op) {
	case LEASE_OP_CLAIM:
		l->c_tries--;
		lease_claim(l, l->c_server);
		break;
	case LEASE_OP_EXTEND:
	case LEASE_OP_ADOPT:
		lease_cas(l, l->op);
		break;
	case LEASE_OP_RELEASE:
		lease_release_send(l);
		break;
	case LEASE_OP_IDLE:
		break;
	}
}

/* Starts a claim on one server (by index); the other is tried on failure. */
static void
lease_claim(struct lease *l, int server)
{
	struct db_conn *db = l->db[server];

	l->op = LEASE_OP_CLAIM;
	l->c_server = server;
	l->c_tries++;
	if (l->trust(l->arg, server) != LEASE_TRUSTED) {
		lease_claim_failed(l, "not up as a checked ticket server", true);
		return;
	}
	if (db_connected(db)) {
		lease_send_clock(l, server);
		return;
	}
	if (!db_connect(db, lease_connected_cb, l))
		lease_claim_failed(l, "could not start a connection", true);
}

/* A claim failed on c_server: try the other server once, else wait for the next tick. */
static void
lease_claim_failed(struct lease *l, const char *why, bool try_other)
{
	int server = l->c_server;

	db_close(l->db[server]);		/* rolls back anything half done */
	l->stats.claim_failures++;
	if (strcmp(l->last_error, why) != 0)
		log_warn("lease: claim on the %s server failed: %s", server_name(server), why);
	snprintf(l->last_error, sizeof(l->last_error), "%s", why);
	if (try_other && l->c_tries < 2 && !l->want.release) {
		lease_claim(l, (int)((unsigned)server ^ 1u));
		return;
	}
	l->c_tries = 0;
	lease_end(l);
}

/*
 * The skew rule of a claim, shared by every extend and re-adoption: server
 * (by index) read db_now (ms) somewhere within our round trip from t0,
 * so the skew is db_now minus its midpoint, refused beyond max_clock_skew_ms
 * plus half the round trip. False with the words in why.
 */
static bool
lease_skew_ok(struct lease *l, int server, const char *db_now, int64_t t0, char *why,
    size_t whylen)
{
	int64_t t1 = l->clock_ms(), skew, slack;

	skew = strtoll(db_now, NULL, 10) - (t0 + t1) / 2;
	slack = (t1 - t0) / 2 + 1;
	l->skew_ms = skew;
	if (llabs(skew) <= (long long)l->cfg->max_clock_skew_ms + slack)
		return true;
	return check_fail(why, whylen, "local clock is %+lld ms off the %s server's "
	    "(max_clock_skew_ms=%u)", (long long)-skew, server_name(server),
	    l->cfg->max_clock_skew_ms);
}

/*
 * Every claim, extend and re-adoption starts by comparing clocks with its
 * server (lease_skew_ok): a fast clock must not push window_end into the
 * future in the database, where it would reserve the number past the time
 * anyone minted.
 */
static void
lease_send_clock(struct lease *l, int server)
{
	l->c_t0 = l->clock_ms();
	if (!lease_send(l, l->db[server], lease_clock_cb,
	    "SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)"))
		lease_failed(l, "could not start the clock query");
}

/*
 * The clocks compared. They agree: the operation goes on. They do not: a
 * claim is refused (no lease at all), an extend or re-adoption is not sent
 * and the window runs on to its end.
 */
static void
lease_clock_cb(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct lease *l = arg;
	bool claim = l->op == LEASE_OP_CLAIM;
	char why[256];
	char **row;
	unsigned nf;

	if (r->err != 0) {
		lease_failed(l, r->msg);
		return;
	}
	row = db_first_row(r, &nf);
	if (row == NULL || row[0] == NULL) {
		lease_failed(l, "the clock query returned nothing");
		return;
	}
	if (!lease_skew_ok(l, claim ? l->c_server : l->server, row[0], l->c_t0, why,
	    sizeof(why))) {
		if (claim)
			snprintf(why + strlen(why), sizeof(why) - strlen(why), ": no Snowflake "
			    "lease until the clocks agree");
		l->c_tries = 0;
		lease_change(l, claim ? LEASE_EV_REFUSED : LEASE_EV_EXTEND_REFUSED, why);
		lease_end(l);
		return;
	}
	if (!claim)
		lease_cas_send(l);
	/* Claim step 2 (after the clocks): a transaction. */
	else if (!lease_send(l, db, lease_claim_begun_cb, "START TRANSACTION"))
		lease_claim_failed(l, "could not start the transaction", true);
}

/* Claim step 3: in a transaction; lock a row whose window ended before our now. */
static void
lease_claim_begun_cb(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct lease *l = arg;
	unsigned lo, hi;

	if (r->err != 0) {
		lease_claim_failed(l, r->msg, true);
		return;
	}
	if (!lease_now(l, &l->c_now) || l->c_now < LAYOUT_TS_MIN) {
		lease_claim_failed(l, "local clock is before 2026-01-25: no Snowflake "
		    "IDs can be minted", false);
		return;
	}
	/* Only a row whose window ended before our now (disjoint ID time), in our region. */
	server_worker_range(&lo, &hi);
	if (!lease_send(l, db, lease_claim_picked_cb, "SELECT worker FROM idgen_leases "
	    "WHERE window_end < %" PRIu64 " AND worker BETWEEN %u AND %u "
	    "ORDER BY window_end, worker LIMIT 1 FOR UPDATE SKIP LOCKED",
	    RULE_ON(RULE_CLAIM_NOW) ? l->c_now : LAYOUT_TS_MAX, lo, hi))
		lease_claim_failed(l, "could not start the claim query", true);
}

/* Claim step 4: a free number of the server's own residue; take it for our window. */
static void
lease_claim_picked_cb(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct lease *l = arg;
	const char *role = server_name(l->c_server);
	char **row;
	unsigned nf;
	char why[256];

	if (r->err != 0) {
		lease_claim_failed(l, r->msg, true);
		return;
	}
	row = db_first_row(r, &nf);
	if (row == NULL || row[0] == NULL) {
		snprintf(why, sizeof(why), "no free worker number on the %s server "
		    "(every window still open)", role);
		lease_claim_failed(l, why, true);
		return;
	}
	l->c_worker = (unsigned)strtoul(row[0], NULL, 10);
	if (l->c_worker > LAYOUT_WORKER_MAX || !server_owns_worker((unsigned)l->c_server, l->c_worker)) {
		snprintf(why, sizeof(why), "the %s server's idgen_leases holds worker %u, "
		    "which it does not own (load schema/50-%s-workers.sql only)", role,
		    l->c_worker, role);
		log_error("lease REFUSED: %s", why);
		lease_claim_failed(l, why, true);
		return;
	}
	l->c_end = l->c_now + l->cfg->lease_window_ms;
	if (!lease_send(l, db, lease_claim_taken_cb, "UPDATE idgen_leases SET holder = '%s', "
	    "window_start = %" PRIu64 ", window_end = %" PRIu64 ", claims = claims + 1, "
	    "updated_at = NOW(3) WHERE worker = %u AND window_end < %" PRIu64, l->holder,
	    l->c_now, l->c_end, l->c_worker, RULE_ON(RULE_CLAIM_NOW) ? l->c_now : LAYOUT_TS_MAX))
		lease_claim_failed(l, "could not start the claim update", true);
}

/* Claim step 5: the row was still free (exactly one matched); commit. */
static void
lease_claim_taken_cb(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct lease *l = arg;

	if (r->err != 0) {
		lease_claim_failed(l, r->msg, true);
		return;
	}
	if (r->affected != 1) {
		lease_claim_failed(l, "the claim update matched no row", true);
		return;
	}
	if (!lease_send(l, db, lease_claim_committed_cb, "COMMIT"))
		lease_claim_failed(l, "could not start the commit", true);
}

/* Claim step 6: committed, the window is ours. */
static void
lease_claim_committed_cb(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct lease *l = arg;

	(void)db;
	if (r->err != 0) {
		lease_claim_failed(l, r->msg, true);
		return;
	}
	l->c_tries = 0;
	l->want.fresh = false;
	l->logged.skew = false;
	l->adopt_from[0] = '\0';
	l->worker = l->c_worker;
	l->server = l->c_server;
	l->window_start = l->c_now;
	l->window_end = l->c_end;
	lease_change(l, LEASE_EV_CLAIMED, NULL);
	lease_end(l);
}

/*
 * Extends the window, or re-adopts a resumed one (op): one compare-and-set on
 * the holder (ours, or our previous incarnation's when adopting) that also
 * names us as holder and pushes window_end to now + lease_window_ms, after
 * the clocks were compared. The owner must be trusted: away, the window runs
 * on, and with half of it gone a number is taken elsewhere.
 */
static void
lease_cas(struct lease *l, enum lease_op op)
{
	struct db_conn *db = l->db[l->server];
	uint64_t now;

	if (!lease_now(l, &now)) {
		lease_end(l);
		return;
	}
	if (l->trust(l->arg, l->server) != LEASE_TRUSTED) {
		l->stats.extend_failures++;
		if (now + l->cfg->lease_window_ms / 2 > l->window_end)
			l->want.fresh = true;
		lease_end(l);
		return;
	}
	l->op = op;
	l->c_end = now + l->cfg->lease_window_ms;
	if (db_connected(db))
		lease_send_clock(l, l->server);
	else if (!db_connect(db, lease_connected_cb, l))
		lease_end(l);
}

/* The compare-and-set itself, once the clocks agree; not when a release waits. */
static void
lease_cas_send(struct lease *l)
{
	if (l->logged.extend_skew)
		log_info("lease: the clocks agree again (%+lld ms off the %s server's)",
		    (long long)-l->skew_ms, server_name(l->server));
	l->logged.extend_skew = false;
	if (l->want.release) {
		/* Shutting down: the release goes next, not one more extend. */
		lease_end(l);
		return;
	}
	if (!lease_send(l, l->db[l->server], lease_cas_cb, "UPDATE idgen_leases SET holder = "
	    "'%s', window_end = GREATEST(window_end, %" PRIu64 "), updated_at = NOW(3) WHERE "
	    "worker = %u AND holder = '%s'", l->holder, l->c_end, l->worker,
	    lease_row_holder(l)))
		lease_end(l);
}

/* The outcome: the window pushed on (adopted under our name), lost, or the server away. */
static void
lease_cas_cb(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct lease *l = arg;
	bool adopt = l->op == LEASE_OP_ADOPT;

	(void)db;
	if (r->err != 0) {
		lease_cas_failed(l, r->msg);
		return;
	}
	if (r->affected == 0) {
		l->adopt_from[0] = '\0';
		lease_change(l, LEASE_EV_LOST, adopt ? "no longer names our previous "
		    "incarnation" : "has another holder now");
		lease_end(l);
		return;
	}
	/* Never ahead of the database: raised after the update committed. */
	if (l->c_end > l->window_end)
		l->window_end = l->c_end;
	if (adopt)
		l->adopt_from[0] = '\0';
	lease_change(l, adopt ? LEASE_EV_ADOPTED : LEASE_EV_EXTENDED, NULL);
	lease_end(l);
}

/*
 * The owner server failed the update: the window runs on. An extend whose
 * window is half gone takes a number from the other server next.
 */
static void
lease_cas_failed(struct lease *l, const char *msg)
{
	bool adopt = l->op == LEASE_OP_ADOPT;
	uint64_t now = 0;

	db_close(l->db[l->server]);
	if (strcmp(l->last_error, msg) != 0)
		log_warn("lease: %s worker %u on the %s server failed: %s (window ends at %"
		    PRIu64 ")", adopt ? "re-adopting" : "extending", l->worker,
		    server_name(l->server), msg, l->window_end);
	snprintf(l->last_error, sizeof(l->last_error), "%s", msg);
	if (!adopt) {
		l->stats.extend_failures++;
		if (lease_now(l, &now) && now + l->cfg->lease_window_ms / 2 > l->window_end)
			l->want.fresh = true;
	}
	lease_end(l);
}

/* A large backward clock step: a fresh number mints at the earlier time safely. */
void
lease_clock_stepped(struct lease *l)
{
	if (l->want.fresh || l->want.release)
		return;
	l->want.fresh = true;
	if (l->op == LEASE_OP_IDLE)
		lease_schedule(l, 0);
	else
		l->want.now = true;	/* right after the operation in flight */
}

/* Asks for the release; it runs once any operation in flight is done. */
void
lease_release(struct lease *l, void (*done)(void *), void *arg)
{
	l->want.release = true;
	l->on_done = done;
	l->done_arg = arg;
	evtimer_del(l->tick);
	if (l->op == LEASE_OP_IDLE)
		lease_do_release(l);
}

/* The release: nothing to do without a window; else connected, then sent. */
static void
lease_do_release(struct lease *l)
{
	struct db_conn *db = l->db[l->server];

	l->op = LEASE_OP_RELEASE;
	if (l->state != LEASE_HELD) {
		lease_end(l);
		return;
	}
	if (db_connected(db))
		lease_release_send(l);
	else if (!db_connect(db, lease_connected_cb, l))
		lease_failed(l, "could not start a connection");
}

/*
 * Writes back window_end = the last ts minted, so the number is free after it.
 * The window moves back, which the schema's trigger refuses unless
 * @idgen_release names the row's holder (docs/design.md 6.5): set for this one
 * UPDATE, reset in the same query.
 */
static void
lease_release_send(struct lease *l)
{
	struct db_conn *db = l->db[l->server];

	/* From here on nothing is minted: the generator's window is gone. */
	if (!snowflake_release(l->gen, &l->c_end))
		l->c_end = l->window_end;
	/* Out of the state file first: a restart must not resume a released window. */
	l->sf->rec.lease.held = false;
	if (!lease_save(l, "the release")) {
		l->sf->rec.lease.held = true;
		lease_failed(l, "the state file cannot record it");
		return;
	}
	if (!lease_send(l, db, lease_release_cb, "SET @idgen_release = '%s';"
	    "UPDATE idgen_leases SET window_end = %" PRIu64 ", updated_at = NOW(3) WHERE "
	    "worker = %u AND holder = '%s';SET @idgen_release = NULL", lease_row_holder(l),
	    l->c_end, l->worker, lease_row_holder(l)))
		lease_failed(l, "could not send");
}

/* The release's outcome; on_done is called either way (shutdown goes on). */
static void
lease_release_cb(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct lease *l = arg;

	(void)db;
	if (r->err != 0)
		lease_failed(l, r->msg);
	else if (r->nstmts != 3 || r->stmt_affected[1] != 1)
		lease_failed(l, "another holder");
	else {
		lease_change(l, LEASE_EV_RELEASED, NULL);
		lease_end(l);
	}
}

/*
 * Resumes the state file's lease: its owner provably dead (the same machine's
 * previous incarnation), the very file at its latest write, the same servers,
 * the window not over (docs/design.md section 6.8).
 */
bool
lease_resume(struct lease *l, const char *servers, char *why, size_t whylen)
{
	const struct state_rec *rec = &l->sf->rec;
	const struct state_lease *sl = &rec->lease;
	char dead[256];
	uint64_t now;

	if (!statefile_on(l->sf) || l->sf->origin != STATEFILE_LOADED)
		return check_fail(why, whylen, "%s", !statefile_on(l->sf) ? "no state_file" :
		    l->sf->why);
	if (!sl->held)
		return check_fail(why, whylen, "the state file holds no lease");
	if (RULE_ON(RULE_OWNER) && !statefile_owner_dead(l->sf, dead, sizeof(dead)))
		return check_fail(why, whylen, "its writer may still be alive: %s", dead);
	if (RULE_ON(RULE_STAMP) && !l->sf->stamped)
		return check_fail(why, whylen, "it may not be the file's latest write: %s",
		    l->sf->stamp_why);
	if (strcmp(rec->servers, servers) != 0)
		return check_fail(why, whylen, "foreign state file (written for servers '%s'; "
		    "this is '%s')", rec->servers, servers);
	if (!server_owns_worker(sl->server, sl->worker))
		return check_fail(why, whylen, "worker %u is not a number of region %u "
		    "(region_bits %u): the region setting changed", sl->worker, server_region(),
		    server_region_bits());
	if (!lease_now(l, &now) || now > sl->window_end || sl->reserved >= sl->window_end)
		return check_fail(why, whylen, "its lease window (worker %u, ending at %" PRIu64
		    ") is over", sl->worker, sl->window_end);
	l->worker = sl->worker;
	l->server = sl->server;
	l->window_start = sl->window_start;
	l->window_end = sl->window_end;
	snprintf(l->adopt_from, sizeof(l->adopt_from), "%s", sl->holder);
	lease_change(l, LEASE_EV_RESUMED, NULL);
	return true;
}

uint64_t
lease_reserve_lead(const struct lease *l)
{
	uint64_t fixed, lead;

	/* A lease never set up (no config: a fuzzing rig's) has no lead. */
	if (l->cfg == NULL)
		return 0;
	fixed = 2 * (uint64_t)l->cfg->fallback_reserve_ms;

	/* Twice: a write posted as the previous one lands must land within L + R of it. */
	lead = (2 * l->ahead.land_max_us + 999) / 1000;
	if (lead > l->cfg->fallback_reserve_lead_max_ms)
		lead = l->cfg->fallback_reserve_lead_max_ms;
	return lead > fixed ? lead : fixed;
}

/* Times a reservation's write, from its post (mono us t0) to now: the lead covers it. */
static void
lease_landed(struct lease *l, int64_t t0_us)
{
	int64_t us = clk_mono_us() - t0_us;
	unsigned n;

	l->ahead.land_us[l->ahead.nland++ % LEASE_LANDINGS] = us > 0 ? (uint64_t)us : 0;
	n = l->ahead.nland < LEASE_LANDINGS ? l->ahead.nland : LEASE_LANDINGS;
	l->ahead.land_max_us = 0;
	for (unsigned k = 0; k < n; k++)
		if (l->ahead.land_us[k] > l->ahead.land_max_us)
			l->ahead.land_max_us = l->ahead.land_us[k];
}

/* The reservation a save covering ts writes: ts + the lead + fallback_reserve_ms, within the window. */
static uint64_t
lease_reserve_to(const struct lease *l, uint64_t ts)
{
	uint64_t want = ts + lease_reserve_lead(l) + l->cfg->fallback_reserve_ms;

	return want > l->gen->window_end ? l->gen->window_end : want;
}

/*
 * Write-ahead, waiting: the limit was reached, so Snowflake time covering ts
 * goes on disk before minting. The record may already hold more (a
 * reservation ahead in flight or failed): it is never lowered, and the limit
 * rises to what this write made durable.
 */
bool
lease_reserve(struct lease *l, uint64_t ts)
{
	struct state_lease *sl = &l->sf->rec.lease;
	uint64_t want = lease_reserve_to(l, ts);
	int64_t t0 = clk_mono_us();
	bool ok;

	if (!statefile_on(l->sf)) {
		snowflake_set_reserved(l->gen, LAYOUT_TS_MAX);
		return true;
	}
	if (want < ts)
		return false;
	if (want > sl->reserved)
		sl->reserved = want;
	l->stats.reserve_waits++;
	ok = lease_save(l, "a Snowflake reservation");
	lease_landed(l, t0);
	if (!ok)
		return false;
	l->stats.reservations++;
	l->ahead.failed = false;
	snowflake_set_reserved(l->gen, sl->reserved);
	return true;
}

void
lease_reserve_ahead(struct lease *l, uint64_t ts)
{
	const struct snowflake *g = l->gen;
	struct state_lease *sl;
	uint64_t want, epoch = l->ahead.epoch;
	enum statefile_result r;

	/* No state file (no limit), or far from the limit, the usual case: nothing to do. */
	if (l->sf == NULL || !statefile_on(l->sf) || ts > g->reserved || l->ahead.pending ||
	    l->ahead.failed || !g->has_window || g->reserved - ts >= lease_reserve_lead(l))
		return;
	sl = &l->sf->rec.lease;
	want = lease_reserve_to(l, ts);
	if (want <= g->reserved)
		return;		/* the window's end is reserved already */
	if (want > sl->reserved)
		sl->reserved = want;
	l->ahead.pending = true;
	l->ahead.posted_us = clk_mono_us();
	/* Ended at once (no writer thread, or its queue full): called back here. */
	r = statefile_save_then(l->sf, lease_reserved_cb, l, sl->reserved, epoch);
	if (r != STATEFILE_QUEUED)
		lease_reserved_cb(l, r == STATEFILE_DURABLE, sl->reserved, epoch);
}

/*
 * A reservation ahead ended: durable, the generator may mint up to it; failed,
 * the limit stays, and the next reservation waits (docs/design.md 6.7).
 */
static void
lease_reserved_cb(void *arg, bool ok, uint64_t reserved, uint64_t epoch)
{
	struct lease *l = arg;

	if (epoch != l->ahead.epoch)
		return;
	l->ahead.pending = false;
	lease_landed(l, l->ahead.posted_us);
	if (!ok) {
		l->ahead.failed = true;
		l->stats.reserve_ahead_failures++;
		if (strcmp(l->last_error, l->sf->last_error) != 0)
			log_error("lease: state file: %s (writing a Snowflake reservation ahead; "
			    "state_file): minting goes on to %" PRIu64 ", then waits for the disk",
			    l->sf->last_error, l->gen->reserved);
		snprintf(l->last_error, sizeof(l->last_error), "%s", l->sf->last_error);
		return;
	}
	l->stats.reservations++;
	if (reserved > l->gen->reserved)
		snowflake_set_reserved(l->gen, reserved);
}
