/*
 * ticket.h - one Flickr-style ticket server: connect, check, fetch tickets.
 *
 * A ticket server is probed with backoff while down and checked at every
 * connect and every recheck_ms (settings, rights, counter, high-water marks).
 * Each ticket is one transaction: REPLACE INTO, then raising the server's own
 * high-water mark (which refuses a counter that moved back), then the copy of
 * the partner's mark, then COMMIT (docs/design.md sections 2 and 6).
 */
#ifndef IDGEN_TICKET_H
#define IDGEN_TICKET_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "db.h"
#include "server.h"

enum ticket_state {
	TICKET_DOWN,		/* waiting for the next probe */
	TICKET_CONNECTING,	/* connect or connect-time checks in flight */
	TICKET_READY,		/* checked, idle */
	TICKET_FETCHING,	/* a ticket transaction in flight */
	TICKET_RECHECKING,	/* the periodic check in flight on a live connection */
	TICKET_REFUSED,		/* misconfigured (settings, rights, schema); retried slowly */
	TICKET_REGRESSED,	/* counter not above a high-water mark; retried slowly */
};

enum ticket_event {
	TICKET_EV_UP,		/* passed the checks (at connect, or a recheck) */
	TICKET_EV_TICKET,	/* a ticket committed and passed its checks */
	TICKET_EV_DOWN,		/* connect or query failed */
	TICKET_EV_REFUSED,	/* a check failed (why in last_error) */
	TICKET_EV_READ,		/* a connect-time check's answer taken: seen holds its marks
				 * (the rights and the witness still to come) */
	TICKET_EV_SEQ,		/* a namespace's ticket answered: flight.verdict (13.7) */
	TICKET_EV_RETIRED,	/* a server about to be refused as retired: retired_read holds
				 * its answer to retired_sql (its namespace marks, 12.5) */
};

struct ticket_server;

/*
 * Told of every event. For TICKET_EV_UP it returns false to refuse the server
 * (it has called ticket_refuse/ticket_regress); for TICKET_EV_TICKET false means
 * the ticket was not used.
 */
typedef bool	(*ticket_notify)(struct ticket_server *, enum ticket_event, uint64_t ticket,
		    void *arg);

/* Upper bounds (us) of the ticket fetch-time histogram; one more bucket is +Inf. */
#define TICKET_FETCH_BUCKETS	11
extern const unsigned ticket_fetch_bounds_us[TICKET_FETCH_BUCKETS];

struct ticket_counters {
	uint64_t	tickets;
	uint64_t	deadlocks;	/* 1213, retried */
	uint64_t	lock_timeouts;	/* 1205, retried */
	uint64_t	failures;	/* connect or query errors, timeouts */
	uint64_t	refusals;
	uint64_t	connects;
	uint64_t	rechecks;
	uint64_t	witnessed;	/* connects that brought its copies of the others' marks up */
	uint64_t	witness_failures;	/* ... whose copies could not be written */
	uint64_t	unbanked;	/* tickets drawn on a sealed server, not used (12.4) */
	uint64_t	fetch_us_total;	/* time from START TRANSACTION to ticket banked */
	uint64_t	fetch_us_max;
	uint64_t	fetch_hist[TICKET_FETCH_BUCKETS + 1];	/* per bucket, not cumulative */
};

/* What the last check read from the server. */
struct ticket_seen {
	uint64_t	counter;	/* AUTO_INCREMENT of tickets64: the next ticket is >= it */
	uint64_t	own_mark;	/* its own idgen_marks row */
	uint64_t	own_mark_b;	/* ... the B it was written under (0: unknown) */
	uint64_t	copy[SERVER_MAX];	/* its copies of its region's other servers'
					 * marks, by their index */
	uint64_t	copy_b[SERVER_MAX];
	char		uuid[40];	/* idgen_meta.server_uuid */
	char		version[64];	/* @@version */
	char		tls[96];	/* the connection's TLS version and cipher, "" cleartext */
	uint64_t	workers_leased;	/* lease rows whose window has not ended */
	bool		recheck;	/* a recheck, not a new connection */
};

/*
 * A sequence's ticket table and marks rows: the default sequence (tickets64,
 * its marks in idgen_marks) or a namespace N (tickets_N, N's rows of
 * idgen_ns_marks, drawn under its catalogue row's shared lock). Every
 * sequence's ticket transaction, copy UPDATE and verdict is built from it
 * (docs/design.md 13.7).
 */
struct ticket_seq {
	const char	*ns;		/* NULL: the default sequence */
	const char	*policy;	/* a namespace's fallback, as its catalogue row has it */
	uint64_t	 b;		/* the B its tickets are drawn under */
	char		 table[80];	/* tickets64, tickets_N */
};

/*
 * A copy of server srv's mark, (high_water, block_size), written only where
 * its row covers less than end, the first ID above the copy (docs/design.md
 * 6.5, 13.6).
 */
struct ticket_copy {
	unsigned	 srv;
	uint64_t	 high_water;
	uint64_t	 block_size;
	uint64_t	 end;
};

/* Why a ticket transaction was not committed, its counters raised. */
enum ticket_txfail {
	TICKET_TXF_RETRY,	/* a deadlock or lock wait: rolled back, no ticket used */
	TICKET_TXF_REFUSED,	/* the server refused a statement (no table, no right) */
	TICKET_TXF_LOST,	/* anything else: it may have run (a gap) */
};

/* A ticket transaction's verdict; only TICKET_TX_OK's ticket is used. */
enum ticket_verdict {
	TICKET_TX_OK,
	TICKET_TX_SHORT,	/* it did not run to its end */
	TICKET_TX_NO_ROW,	/* the rows it locks are missing */
	TICKET_TX_CHANGED,	/* a namespace's catalogue row is not as judged (13.6) */
	TICKET_TX_SEALED,	/* a change of the increment: connect again (unbanked) */
	TICKET_TX_REFUSE,	/* the wrong residue, or past 2^53 */
	TICKET_TX_REGRESS,	/* the counter is not above a mark */
	TICKET_TX_LEARNED,	/* not above a mark learned while in flight: not used (6.3) */
	TICKET_TX_FAILED,	/* not committed: a statement refused (rolled back) */
	TICKET_TX_ROLLED,	/* ... rolled back (a deadlock, a lock wait, or FAILED) */
	TICKET_TX_LOST,		/* ... anything else: the connection is closed */
};

/*
 * A ticket in flight (13.7), of any sequence: the default's (seq 0) or a
 * namespace's, built by the tier from its sequence (tier_send_tx), sent by
 * ticket_fetch_seq and judged by one callback. The default's is used through
 * TICKET_EV_TICKET; the tier hears a namespace's verdict as TICKET_EV_SEQ.
 * The connect's witness keeps its copies here too (seq 0), as its EV_UP
 * lands them.
 */
struct ticket_flight {
	bool		 on;		/* in flight, counted in *fetching */
	uint32_t	 seq;		/* nsrv.id; 0: the default */
	struct ticket_seq q;
	uint64_t	 mark;		/* its mark known when sent, a ticket of q.b:
					 * what it is judged against (6.3) */
	uint64_t	 known_end;	/* ... a namespace's as an end in ID space */
	unsigned	 copies;	/* the copies of the others' marks it carries */
	struct ticket_copy copy[SERVER_MAX];	/* ... in their order: landed once
						 * committed */
	unsigned	*fetching;	/* its sequence's seq.fetching */
	uint64_t	(*known)(const struct ticket_server *s);	/* its mark known
						 * now, a ticket of q.b */
	enum ticket_verdict verdict;
	uint64_t	 ticket;
	char		 why[512];
};

struct ticket_params {
	unsigned	backoff_min_ms;
	unsigned	backoff_max_ms;
	unsigned	refused_retry_ms;
	unsigned	recheck_ms;
};

struct ticket_server {
	unsigned		 index;		/* its index in the tier (server.h) */
	const char		*name;		/* ... as users see it: "odd", "even" */
	unsigned		 partner;	/* the next server of its region (server.h) */
	unsigned		 group_first;	/* its region's servers: it keeps a copy of each */
	unsigned		 group_count;	/* ... other one's mark (docs/design.md 12.2) */
	struct db_conn		*db;
	char			 dbname[64];
	enum ticket_state	 state;
	int			 step;		/* where the connect or ticket sequence is */
	uint64_t		 block_size;	/* from its meta row */
	unsigned		 generation;	/* the tier generation its connection was
						 * checked under (docs/design.md 12.4) */
	uint64_t		 last_ticket;	/* the last one this process used */
	uint64_t		 mark;		/* set by the tier: tickets must be above it */
	uint64_t		 copy_want[SERVER_MAX];	/* set by the tier: the others'
							 * marks to copy, by index */
	uint64_t		 copy_want_b[SERVER_MAX];	/* ... and their B */
	struct ticket_seen	 seen;
	struct ticket_params	 p;
	unsigned		 backoff_ms;
	bool			 checked_once;	/* log the first check of a connection */
	bool			 recheck_due;	/* check again once the query in flight ends */
	uint64_t		 checks_sent;	/* check queries sent, ever (connect and recheck) */
	uint64_t		 check_accepted;	/* ... the number of the one seen holds */
	struct event		*retry;
	struct event		*recheck;
	ticket_notify		 notify;
	void			*notify_arg;
	struct ticket_counters	 stats;
	bool			 other;		/* FETCHING for another module (ticket_run) */
	uint64_t		 fetch_started_us;
	char			 last_error[512];
	char			 logged_refusal[512];	/* logged once until the server passes */
	char			 logged_failure[512];	/* a failure logged at the top of the
							 * backoff only when its reason changes */
	bool			 witness_pending;	/* the last witness could not land
							 * (docs/design.md 6.5) */
	bool			 refused_local;	/* the last refusal was of this idserver's own
						 * configuration: fatal at start (6.4) */
	struct ticket_flight	 flight;	/* the ticket in flight (or the last) */
	const char		*retired_sql;	/* read before a refusal as retired
						 * (the tier's namespace check; NULL:
						 * none) ... */
	const struct db_result	*retired_read;	/* ... its answer, during
						 * TICKET_EV_RETIRED */
};

bool		ticket_init(struct ticket_server *s, struct event_base *base,
		    const struct db_params *params, unsigned index, const struct ticket_params *p,
		    ticket_notify notify, void *arg) __attribute__((warn_unused_result));
void		ticket_free(struct ticket_server *s);

/* Connects now (the first probe). */
void		ticket_start(struct ticket_server *s);

/*
 * Starts the ticket transaction of flight f, of any sequence (13.7); only in
 * TICKET_READY. The one way a ticket is sent.
 */
bool		ticket_fetch_seq(struct ticket_server *s, const struct ticket_flight *f)
		    __attribute__((warn_unused_result));

/*
 * The copies of the others' marks the tier wants on s (copy_want), the
 * partner's first: what the default's ticket and the connect's witness carry.
 * Returns their number.
 */
unsigned	ticket_copies_wanted(const struct ticket_server *s, struct ticket_copy *out);

/*
 * Runs another module's query on the live connection (the namespaces,
 * tier.c): only in TICKET_READY; the server is FETCHING, with other set,
 * until ticket_run_end(). ticket_run_next() sends the run's next query;
 * ticket_run_lost() ends it as an outage (the connection is closed).
 */
bool		ticket_run(struct ticket_server *s, const char *sql, db_cb cb)
		    __attribute__((warn_unused_result));
bool		ticket_run_next(struct ticket_server *s, const char *sql, db_cb cb)
		    __attribute__((warn_unused_result));
void		ticket_run_end(struct ticket_server *s);
void		ticket_run_lost(struct ticket_server *s, const char *what, const char *msg);

/*
 * The outcome of a witness another module ran on the live connection (the
 * namespaces' copies, tier.c), accounted as the connect's own witness
 * (docs/design.md 6.5): refused by the server (read-only, a full disk), it
 * is counted, logged once per episode and shown in STATS and /health; landed,
 * the episode is over. True when it landed; the caller still ends or loses
 * the run.
 */
bool		ticket_witness_outcome(struct ticket_server *s, const struct db_result *r);

/*
 * What a witness carries, for every sequence (docs/design.md 6.5, 13.7): of
 * each other server j of s's group, partner first, the copy c[j] of its mark
 * when it ends above what s's row of it held when last read (held[j], an end
 * in ID space), each ticket_seq_copy()'s UPDATE outside a transaction,
 * appended to buf at *n. False when they do not fit.
 */
bool		ticket_witness_carry(const struct ticket_server *s, const struct ticket_seq *q,
		    const struct ticket_copy *c, const uint64_t *held, char *buf, size_t len,
		    int *n) __attribute__((warn_unused_result));

/* Closes a live connection as an outage (why logged) and connects again after the backoff. */
void		ticket_reconnect(struct ticket_server *s, const char *why);

/* The default sequence (ns NULL) or namespace ns, its tickets of B b. */
void		ticket_seq_set(struct ticket_seq *q, const char *ns, uint64_t b,
		    const char *policy);

/*
 * A copy of server srv's mark covering every ID below end, as a mark of b:
 * its end rounded up to a whole block (saturating).
 */
struct ticket_copy ticket_copy_block(unsigned srv, uint64_t end, uint64_t b);

/*
 * Appends one copy UPDATE of q's marks rows (after a ';' unless buf is
 * empty); in_tx: inside a namespace ticket, only while its catalogue row is as
 * judged. False when it does not fit len.
 */
bool		ticket_seq_copy(const struct ticket_seq *q, bool in_tx, const struct ticket_copy *c,
		    char *buf, size_t len, int *n) __attribute__((warn_unused_result));

/*
 * Builds q's whole ticket transaction on server own into buf (len bytes): the
 * lock, the REPLACE, the own mark's conditional UPDATE, the n copies in
 * their order, COMMIT; the one builder of every sequence's (docs/design.md
 * 6.3, 13.7). False when it does not fit.
 */
bool		ticket_seq_build(const struct ticket_seq *q, unsigned own,
		    const struct ticket_copy *copies, unsigned n, char *buf, size_t len)
		    __attribute__((warn_unused_result));

/* The statements q's ticket transaction with that many copies runs. */
unsigned	ticket_seq_stmts(const struct ticket_seq *q, unsigned copies);

/* Classifies a failed ticket transaction, counting deadlocks and lock waits. */
enum ticket_txfail ticket_tx_failure(struct ticket_server *s, const struct db_result *r);

/*
 * Judges q's committed transaction on s (copies: as sent): it ran to its end,
 * in s's generation, unsealed, its own mark raised, and its ticket has s's
 * residue, is above mark (the known one when it was sent), above learned (the
 * one known now, as its answer is taken; TICKET_TX_LEARNED: not used, nothing
 * refused) and below 2^53. The ticket in *ticket; why names anything else.
 */
enum ticket_verdict ticket_tx_verdict(struct ticket_server *s, const struct ticket_seq *q,
		    const struct db_result *r, unsigned copies, uint64_t mark, uint64_t learned,
		    uint64_t *ticket, char *why, size_t whylen);

/* Refuses a misconfigured server (its checks or its partner's disagree). */
void		ticket_refuse(struct ticket_server *s, const char *why);

/*
 * Refuses a server for this idserver's own configuration (authentication,
 * TLS, B): the same, and fatal at start whatever the others say (6.4).
 */
void		ticket_refuse_local(struct ticket_server *s, const char *why);

/* Refuses a server whose counter is not above a high-water mark. */
void		ticket_regress(struct ticket_server *s, const char *why);

/*
 * Rechecks now, or right after the query in flight (a connect, a ticket, a
 * check): a check sent later than this call, which the tier can tell by
 * checks_sent and check_accepted (docs/design.md section 6.4).
 */
void		ticket_recheck_soon(struct ticket_server *s);

/* True while the server is checked and connected (idle, fetching, rechecking). */
bool		ticket_up(const struct ticket_server *s);

const char	*ticket_state_name(enum ticket_state st);

#endif
