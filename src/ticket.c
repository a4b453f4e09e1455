/*
 * ticket.c - connect to a ticket server, check it, and fetch tickets from it.
 */
#include "ticket.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "log.h"

static const char ticket_check_sql[] =
    "SELECT @@version, @@auto_increment_increment, @@auto_increment_offset, "
    "@@innodb_flush_log_at_trx_commit, "
    "(SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
    "AND TABLE_NAME = 'tickets64'), layout_version, block_size, parity "
    "FROM idgen_meta WHERE one = 1";
static const char ticket_replace_sql[] = "REPLACE INTO tickets64 (stub) VALUES ('a')";

static void	ticket_connected(struct db_conn *db, const struct db_result *r, void *arg);
static void	ticket_checked(struct db_conn *db, const struct db_result *r, void *arg);
static void	ticket_replaced(struct db_conn *db, const struct db_result *r, void *arg);
static void	ticket_lost(struct db_conn *db, const struct db_result *r, void *arg);
static void	ticket_retry_cb(evutil_socket_t fd, short what, void *arg);
static void	ticket_schedule(struct ticket_server *s, unsigned ms);
static void	ticket_failed(struct ticket_server *s, const char *what, const char *msg);
static uint64_t	ticket_now_us(void);

/* Monotonic microseconds, for fetch latency. */
static uint64_t
ticket_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Sets up a server handle; nothing connects until ticket_start(). */
bool
ticket_init(struct ticket_server *s, struct event_base *base, const struct db_params *params,
    unsigned parity, unsigned backoff_min_ms, unsigned backoff_max_ms, ticket_notify notify,
    void *arg)
{
	memset(s, 0, sizeof(*s));
	s->parity = parity;
	s->role = parity ? "odd" : "even";
	s->backoff_min_ms = backoff_min_ms;
	s->backoff_max_ms = backoff_max_ms;
	s->backoff_ms = backoff_min_ms;
	s->notify = notify;
	s->notify_arg = arg;
	s->state = TICKET_DOWN;
	s->db = db_new(base, params, s->role);
	s->retry = evtimer_new(base, ticket_retry_cb, s);
	if (s->db == NULL || s->retry == NULL)
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
	db_free(s->db);
	s->retry = NULL;
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
		return "up";
	case TICKET_FETCHING:
		return "up";
	case TICKET_REFUSED:
		return "refused";
	case TICKET_RETIRED:
		return "retired";
	}
	return "?";
}

/* Probes now. */
void
ticket_start(struct ticket_server *s)
{
	if (s->state == TICKET_RETIRED)
		return;
	s->state = TICKET_CONNECTING;
	s->stats.connects++;
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

/* Schedules the next probe. */
static void
ticket_schedule(struct ticket_server *s, unsigned ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(s->retry, &tv);
}

/* Records a failure, logs the transition once, and backs off. */
static void
ticket_failed(struct ticket_server *s, const char *what, const char *msg)
{
	bool was_up = s->state == TICKET_READY || s->state == TICKET_FETCHING;

	s->stats.failures++;
	db_close(s->db);
	snprintf(s->last_error, sizeof(s->last_error), "%s: %s", what, msg);
	if (was_up || s->backoff_ms == s->backoff_min_ms)
		log_warn("%s ticket server down: %s (retry in %u ms)", s->role,
		    s->last_error, s->backoff_ms);
	s->state = TICKET_DOWN;
	ticket_schedule(s, s->backoff_ms);
	s->backoff_ms = s->backoff_ms * 2 > s->backoff_max_ms ? s->backoff_max_ms :
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

/* Refuses the server; re-probed at the slowest rate, in case an operator fixes it. */
void
ticket_refuse(struct ticket_server *s, const char *why)
{
	s->stats.refusals++;
	db_close(s->db);
	if (strcmp(s->last_error, why) != 0)
		log_error("%s ticket server REFUSED: %s", s->role, why);
	snprintf(s->last_error, sizeof(s->last_error), "%s", why);
	if (s->state != TICKET_RETIRED) {
		s->state = TICKET_REFUSED;
		ticket_schedule(s, s->backoff_max_ms);
	}
	s->notify(s, TICKET_EV_REFUSED, 0, s->notify_arg);
}

/* Handshake done: read what uniqueness depends on. */
static void
ticket_connected(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;

	if (r->err != 0) {
		ticket_failed(s, "connect", r->msg);
		return;
	}
	if (!db_query(db, ticket_check_sql, ticket_checked, s))
		ticket_failed(s, "check", "could not start the check query");
}

/* Checks the server's settings and meta row, then asks the tier (pair agreement). */
static void
ticket_checked(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;
	struct check_server_info in;
	MYSQL_ROW row;
	char why[256];
	uint64_t b;

	(void)db;
	if (r->err != 0) {
		/* A missing table is a misconfiguration, not an outage. */
		if (r->err == 1146 || r->err == 1142 || r->err == 1054) {
			snprintf(why, sizeof(why), "schema check failed: %s (load schema/)", r->msg);
			ticket_refuse(s, why);
		} else
			ticket_failed(s, "check", r->msg);
		return;
	}
	row = r->res != NULL ? mysql_fetch_row(r->res) : NULL;
	if (row == NULL || mysql_num_fields(r->res) != 8) {
		ticket_refuse(s, "idgen_meta has no row (load schema/ for this server)");
		return;
	}
	in.version = row[0];
	in.increment = row[1];
	in.offset = row[2];
	in.flush_at_commit = row[3];
	in.engine = row[4];
	in.layout_version = row[5];
	in.block_size = row[6];
	in.parity = row[7];
	if (!check_server(&in, s->parity, &b, why, sizeof(why))) {
		ticket_refuse(s, why);
		return;
	}
	log_info("%s ticket server checked (version %s, B=%llu, last ticket %llu)", s->role,
	    in.version, (unsigned long long)b, (unsigned long long)s->last_ticket);
	s->block_size = b;
	s->state = TICKET_READY;
	if (!s->notify(s, TICKET_EV_UP, 0, s->notify_arg))
		return;		/* the tier refused it */
	s->backoff_ms = s->backoff_min_ms;
	s->last_error[0] = '\0';
}

/* Starts one REPLACE INTO. */
bool
ticket_fetch(struct ticket_server *s)
{
	if (s->state != TICKET_READY)
		return false;
	/* Before the call: a fast server can answer within it, callback included. */
	s->state = TICKET_FETCHING;
	s->fetch_started_us = ticket_now_us();
	if (!db_query(s->db, ticket_replace_sql, ticket_replaced, s)) {
		s->state = TICKET_READY;
		return false;
	}
	return true;
}

/* A ticket arrived (or an error): check it before anyone sees it. */
static void
ticket_replaced(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;
	char why[256];
	uint64_t t = r->insert_id;

	if (r->err == 1213 || r->err == 1205) {
		/* Rolled back, no ticket consumed: retry on the same connection. */
		if (r->err == 1213)
			s->stats.deadlocks++;
		else
			s->stats.lock_timeouts++;
		if (!db_query(db, ticket_replace_sql, ticket_replaced, s))
			ticket_failed(s, "ticket", "could not restart after a deadlock");
		return;
	}
	if (r->err != 0) {
		/* It may still have run on the server: a gap, never a duplicate. */
		ticket_failed(s, "ticket", r->msg);
		return;
	}
	s->state = TICKET_READY;
	switch (check_ticket(t, s->last_ticket, s->parity, s->block_size)) {
	case CHECK_TICKET_OK:
		break;
	case CHECK_TICKET_PARITY:
		snprintf(why, sizeof(why), "ticket %llu has the wrong parity for the %s server "
		    "(auto_increment_offset changed?)", (unsigned long long)t, s->role);
		ticket_refuse(s, why);
		return;
	case CHECK_TICKET_REGRESSED:
		snprintf(why, sizeof(why), "ticket %llu is not above the last one, %llu: the "
		    "counter REGRESSED (restored or replaced database?); this server is not used "
		    "again until idserver restarts and an operator has checked it",
		    (unsigned long long)t, (unsigned long long)s->last_ticket);
		s->state = TICKET_RETIRED;
		ticket_refuse(s, why);
		return;
	case CHECK_TICKET_LIMIT:
		snprintf(why, sizeof(why), "ticket %llu with B=%llu would reach 2^53: the ticket "
		    "region is exhausted", (unsigned long long)t,
		    (unsigned long long)s->block_size);
		s->state = TICKET_RETIRED;
		ticket_refuse(s, why);
		return;
	}
	s->last_ticket = t;
	s->stats.tickets++;
	{
		uint64_t us = ticket_now_us() - s->fetch_started_us;

		s->stats.fetch_us_total += us;
		if (us > s->stats.fetch_us_max)
			s->stats.fetch_us_max = us;
	}
	s->notify(s, TICKET_EV_TICKET, t, s->notify_arg);
}
