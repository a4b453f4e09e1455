/*
 * conn.h - client connections: buffered reads, pipelined requests, replies in
 * order, bounded buffers; the protocol is picked by the first byte ('*' is a
 * Redis client, anything else the text protocol) and each protocol adapter
 * (proto_text.c, proto_resp.c) turns requests into core calls.
 *
 * The set of connections is owned here: the listener hands over accepted
 * sockets and asks how many are open, nothing more.
 */
#ifndef IDGEN_CONN_H
#define IDGEN_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "config.h"
#include "core.h"
#include "peers.h"

#define CONN_IN_SIZE		4096	/* holds at least one maximal request line */
#define CONN_OUT_SIZE		2048	/* first output buffer; bursts grow it */
#define CONN_SPARES		64	/* freed buffers of each kind kept for reuse */

struct conn;

/* What an adapter did with the input. */
enum proto_step {
	PROTO_NEED_MORE,	/* no complete request buffered */
	PROTO_HANDLED,		/* one request consumed and answered */
	PROTO_WAIT,		/* the request waits (the core parked the waiter) */
	PROTO_CLOSE,		/* close once the replies are flushed */
};

/*
 * A protocol adapter: takes one request from the input (eof: the peer is
 * done); release, when set, frees what it keeps in c->proto_state.
 */
struct proto_ops {
	const char	*name;
	int		 reqlat;	/* its enum reqlat_proto: its latency histogram */
	enum proto_step	(*one)(struct conn *c, bool eof);
	void		(*release)(struct conn *c);
};

struct conn_counters {
	uint64_t	open;
	uint64_t	total;
	uint64_t	write_timeouts;	/* peers dropped for not reading (write_timeout_ms) */
	uint64_t	idle_timeouts;	/* no request for idle_timeout_ms */
	uint64_t	partial_timeouts; /* a request left incomplete for partial_timeout_ms */
	uint64_t	rejected_per_ip; /* over max_clients_per_ip */
	uint64_t	evicted;	/* slots given to a new connection at max_clients */
};

TAILQ_HEAD(conn_list, conn);

/* A connection refused at accept, waiting for its first bytes to pick its protocol. */
struct conn_refusal {
	TAILQ_ENTRY(conn_refusal) entry;
	struct conn_set		*set;
	evutil_socket_t		 fd;
	const char		*why;
	struct event		*ev;
};
TAILQ_HEAD(conn_refusal_list, conn_refusal);

struct conn_set {
	struct event_base	*base;
	const struct config	*cfg;
	struct core		*core;
	struct conn_list	 all;
	struct conn_counters	 stats;
	const struct metrics_src *metrics;	/* for the STATS and INFO views */
	struct peers		 peers;		/* open connections per address */
	char			*spare_in[CONN_SPARES];	/* CONN_IN_SIZE buffers */
	char			*spare_out[CONN_SPARES];	/* CONN_OUT_SIZE buffers */
	unsigned		 nspare_in, nspare_out;
	struct timeval		 turn;		/* the loop turn turn_bytes counts in */
	size_t			 turn_bytes;	/* reply bytes formatted in this turn */
	struct conn_list	 deferred;	/* over the turn's budget: served in order */
	struct event		*resume;	/* serves them on the next turn */
	struct conn_refusal_list refusals;	/* at most max_pending_refusals */
	unsigned		 nrefusals;
	struct tls_listener	*tls;		/* listen_tls: every connection's session */
	const struct proto_ops	*resp;		/* a first byte '*' (the caller's choice: */
	const struct proto_ops	*text;		/* ... conn.c calls no adapter by name) */
	/*
	 * Every connection, least recently served first (docs/design.md section
	 * 5, "Connection slots"): [0] those never served while tokens are on (a
	 * tokenless one never is), else all; [1] the others. At max_clients a
	 * new connection takes the slot of the first of [0], else of [1].
	 */
	struct conn_list	 by_service[2];
	int64_t			 evict_last_ms;	/* the last eviction (monotonic), 0: none */
};

struct conn {
	TAILQ_ENTRY(conn)	 entry;
	TAILQ_ENTRY(conn)	 defer_entry;	/* in set->deferred when deferred */
	TAILQ_ENTRY(conn)	 service_entry;	/* in set->by_service[rank] */
	unsigned char		 rank;
	struct conn_set		*set;
	const struct proto_ops	*proto;		/* NULL until the first byte */
	void			*proto_state;	/* the adapter's, NULL until it needs some */
	uint64_t		 id;		/* 1, 2, ... in the order accepted (CLIENT ID) */
	int64_t			 born_ms;	/* accepted at, monotonic clock */
	evutil_socket_t		 fd;
	/*
	 * listen_tls: the TLS session over fd (docs/design.md section 7.1). rev
	 * and wev are then not the socket's: rev takes decrypted input from the
	 * session, wev is the write timer.
	 */
	struct bufferevent	*bev;
	struct event		*rev;
	struct event		*wev;
	struct event		*linger;
	struct event		*idle;		/* idle_timeout_ms / partial_timeout_ms */
	struct core_waiter	 waiter;
	struct auth_sess	 auth;		/* its token (AUTH), checked per request */
	struct peer		*peer;		/* its address's count in set->peers, or NULL */
	uint64_t		 stuck_since_us; /* output pending since, 0 when drained */
	uint64_t		 parked_us;	/* the parked request's batch began
						 * (monotonic; reqlat.h), else 0 */
	char			*out;		/* NULL while no reply is pending */
	size_t			 out_len;
	size_t			 out_off;
	size_t			 out_cap;
	size_t			 in_off;	/* first unprocessed byte */
	size_t			 in_len;
	bool			 eof;		/* the peer sent FIN */
	bool			 tls_eof;	/* ... through the session, not yet read */
	bool			 closing;	/* close once the output is flushed */
	bool			 reading;
	bool			 partial;	/* the partial-request timer runs */
	bool			 deferred;	/* waits in set->deferred */
	/*
	 * Input, CONN_IN_SIZE bytes, only while some is unprocessed: an idle
	 * connection holds no buffer (docs/design.md section 5).
	 */
	char			*in;
};

struct metrics_src;
struct tls_listener;

/*
 * The connections of the text/RESP port; resp serves a connection whose first
 * byte is '*' (a Redis client), text any other.
 */
void	conn_set_init(struct conn_set *set, struct event_base *base, const struct config *cfg,
	    struct core *core, const struct metrics_src *metrics,
	    const struct proto_ops *resp, const struct proto_ops *text);

/*
 * Takes over an accepted socket from peer sa, at max_clients in the slot of the
 * connection least recently served (closed with one line saying why); false
 * (socket closed, with one line saying why) when its address is over
 * max_clients_per_ip or out of memory.
 */
bool	conn_new(struct conn_set *set, evutil_socket_t fd, const struct sockaddr *sa);

/*
 * Refuses an accepted socket with one error its client can parse: RESP
 * ("-UNAVAILABLE why") when its first byte is '*', else the text protocol's
 * line. The first bytes are awaited up to refusal_wait_ms, at most
 * max_pending_refusals at once (beyond, the text line at once).
 */
void	conn_refuse(struct conn_set *set, evutil_socket_t fd, const char *why);

/* Connections from now on speak TLS with tls (listen_tls); NULL: cleartext. */
void	conn_set_tls(struct conn_set *set, struct tls_listener *tls);

/* Every connection closes after flushing what it has buffered; for draining. */
void	conn_set_drain(struct conn_set *set);

/* Closes every connection now. */
void	conn_set_free(struct conn_set *set);

/* For adapters: room for n more output bytes (NULL: out of memory, closing). */
char	*conn_reserve(struct conn *c, size_t n);
/* ... and n bytes written there. */
void	conn_commit(struct conn *c, size_t n);
/* Appends bytes to the output. */
void	conn_put(struct conn *c, const char *s, size_t n);

/* The peer's address (local: ours) as "ip:port" or "[ip6]:port", "?" if unknown. */
void	conn_addr(const struct conn *c, bool local, char *buf, size_t len);

#endif
