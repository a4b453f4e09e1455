/*
 * tls.h - TLS on idserver's own listeners (listen_tls, http_tls, grpc_tls):
 * one OpenSSL server context per listener, built from the tls_* settings, and
 * the sessions on libevent's bufferevent_openssl (docs/design.md section 7.1).
 *
 * The listeners keep their bounds: a connection is counted against
 * max_clients, max_clients_per_ip and the gRPC limits at accept, before its
 * handshake, and a handshake that does not finish within
 * tls_handshake_timeout_ms is dropped. tls_reload() (SIGHUP) builds every
 * context again from the same files; a context that fails keeps the old one,
 * and sessions already open keep the context they started with. OpenSSL's
 * headers stay inside tls.c.
 */
#ifndef IDGEN_TLS_H
#define IDGEN_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "config.h"

/* The listeners that can speak TLS. */
enum tls_where {
	TLS_LISTEN,		/* text protocol and RESP (listen_tls) */
	TLS_HTTP,		/* HTTP/JSON (http_tls) */
	TLS_GRPC,		/* gRPC, ALPN h2 (grpc_tls) */
	TLS_WHERE_N,
};

/* Text/RESP and gRPC together (evhttp keeps HTTP's handshakes to itself). */
struct tls_counters {
	uint64_t	handshakes;		/* sessions established */
	uint64_t	handshake_failures;	/* refused: version, certificate, not TLS */
	uint64_t	handshake_timeouts;	/* tls_handshake_timeout_ms */
	uint64_t	reloads;		/* SIGHUP reloads of the listeners' files */
	uint64_t	reload_failures;	/* listeners whose reload failed (kept the old) */
	uint64_t	reload_failed_last;	/* of them, in the last reload: 0 is clean */
	/*
	 * Each listener's certificate (the first of its chain, the one served):
	 * its notAfter in unix seconds, 0 while the listener is cleartext. Set at
	 * start and by every reload that loads a context.
	 */
	int64_t		not_after[TLS_WHERE_N];
};

/* The listener's name in logs and metric labels: listen, http or grpc. */
const char *tls_where_name(enum tls_where where);

struct tls;
struct tls_listener;

/*
 * Builds a context for every listener whose TLS is on; *out stays NULL when
 * none is. False with a one-line reason naming the setting (a file that does
 * not load, a key that does not match its certificate).
 */
bool	tls_init(struct tls **out, const struct config *cfg, char *err, size_t errlen)
	    __attribute__((warn_unused_result));

/* The listener's TLS, or NULL when it is cleartext (t may be NULL). */
struct tls_listener *tls_listener(struct tls *t, enum tls_where where);

/*
 * A server session over the accepted socket fd (-1: evhttp sets it later),
 * in its handshake, bounded by tls_handshake_timeout_ms (a read/write timeout
 * that tls_event() clears once the session is up); the socket is closed with
 * it. NULL when out of memory (fd is then still the caller's to close).
 */
struct bufferevent *tls_accept(struct tls_listener *l, struct event_base *base,
	    evutil_socket_t fd);

/* What a bufferevent event means for a TLS connection. */
enum tls_event_kind {
	TLS_EV_UP,		/* the handshake finished: go on */
	TLS_EV_EOF,		/* the peer closed (close_notify, or a bare FIN) */
	TLS_EV_FAIL,		/* handshake failed or timed out, or a broken session */
};

/* Classifies a bufferevent event of a session from tls_accept, and counts it. */
enum tls_event_kind tls_event(struct tls_listener *l, struct bufferevent *bev, short what);

/* Sends close_notify when the session is up (best effort, never waits). */
void	tls_close_notify(struct bufferevent *bev);

/* The counters (they live as long as t). */
const struct tls_counters *tls_counters(const struct tls *t);

/*
 * Loads every context again from its files (SIGHUP): new connections use the
 * new certificate; one that fails to load keeps its old context. What was
 * done, listener by listener, goes into msg (for the caller's one log line),
 * with the reason of each failure. False when any failed.
 */
bool	tls_reload(struct tls *t, char *msg, size_t len);

void	tls_free(struct tls *t);

#endif
