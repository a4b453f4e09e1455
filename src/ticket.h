/*
 * ticket.h - one Flickr-style ticket server: connect, check, fetch tickets.
 *
 * A ticket server is probed with backoff while down, checked at every connect
 * (check.c), and hands out one ticket per REPLACE INTO, read from the OK packet.
 */
#ifndef IDGEN_TICKET_H
#define IDGEN_TICKET_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "db.h"

enum ticket_state {
	TICKET_DOWN,		/* waiting for the next probe */
	TICKET_CONNECTING,	/* connect or connect-time checks in flight */
	TICKET_READY,		/* checked, idle */
	TICKET_FETCHING,	/* a REPLACE INTO in flight */
	TICKET_REFUSED,		/* failed a check; re-probed slowly */
	TICKET_RETIRED,		/* counter regressed: never used again by this process */
};

enum ticket_event {
	TICKET_EV_UP,		/* passed the connect-time checks */
	TICKET_EV_TICKET,	/* a ticket passed its checks */
	TICKET_EV_DOWN,		/* connect or query failed */
	TICKET_EV_REFUSED,	/* a check failed (why in last_error) */
};

struct ticket_server;

/* Told of every event; for TICKET_EV_UP it returns false to refuse the server. */
typedef bool	(*ticket_notify)(struct ticket_server *, enum ticket_event, uint64_t ticket,
		    void *arg);

struct ticket_counters {
	uint64_t	tickets;
	uint64_t	deadlocks;	/* 1213, retried */
	uint64_t	lock_timeouts;	/* 1205, retried */
	uint64_t	failures;	/* connect or query errors, timeouts */
	uint64_t	refusals;
	uint64_t	connects;
	uint64_t	fetch_us_total;	/* time from REPLACE sent to ticket banked */
	uint64_t	fetch_us_max;
};

struct ticket_server {
	const char		*role;		/* "odd" or "even" */
	unsigned		 parity;	/* 1 odd, 0 even */
	struct db_conn		*db;
	enum ticket_state	 state;
	uint64_t		 block_size;	/* from its meta row */
	uint64_t		 last_ticket;
	unsigned		 backoff_ms;
	unsigned		 backoff_min_ms;
	unsigned		 backoff_max_ms;
	struct event		*retry;
	ticket_notify		 notify;
	void			*notify_arg;
	struct ticket_counters	 stats;
	uint64_t		 fetch_started_us;
	char			 last_error[256];
};

bool		ticket_init(struct ticket_server *s, struct event_base *base,
		    const struct db_params *params, unsigned parity, unsigned backoff_min_ms,
		    unsigned backoff_max_ms, ticket_notify notify, void *arg)
		    __attribute__((warn_unused_result));
void		ticket_free(struct ticket_server *s);

/* Connects now (the first probe). */
void		ticket_start(struct ticket_server *s);

/* Asks for one ticket; only in TICKET_READY. */
bool		ticket_fetch(struct ticket_server *s) __attribute__((warn_unused_result));

/* Refuses the server: its checks or its partner's disagree. */
void		ticket_refuse(struct ticket_server *s, const char *why);

const char	*ticket_state_name(enum ticket_state st);

#endif
