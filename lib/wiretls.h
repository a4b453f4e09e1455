/*
 * wiretls.h - TLS under the wire (docs/design.md section 11.7): a client's
 * TLS settings (one OpenSSL context), and one endpoint's session over the
 * socket wire.c connected, with its saved session for resumption. OpenSSL's
 * headers stay in wiretls.c.
 */
#ifndef IDGEN_WIRETLS_H
#define IDGEN_WIRETLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "idgen.h"

struct wiretls;		/* a client's context: CA, client certificate, name */
struct wiretls_conn;	/* one endpoint's session, and the one saved for the next */

/*
 * The TLS settings of o (NULL fields and IDGEN_TLS_ENV from the environment:
 * IDGEN_TLS, IDGEN_TLS_CA, IDGEN_TLS_CERT, IDGEN_TLS_KEY,
 * IDGEN_TLS_SERVER_NAME): *t NULL when TLS is off. False with a message when
 * they do not hold together or a file does not load.
 */
bool	wiretls_new(const struct idgen_options *o, struct wiretls **t, char *err,
	    size_t errlen) __attribute__((warn_unused_result));
void	wiretls_free(struct wiretls *t);

/*
 * The handshake on fd (non-blocking, connected to host) until deadline
 * (monotonic ms), the server's certificate verified for the server name or
 * host; *cp is created on first use. False with a message naming name.
 */
bool	wiretls_start(struct wiretls *t, struct wiretls_conn **cp, int fd,
	    const char *host, const char *name, uint64_t deadline, char *err,
	    size_t errlen) __attribute__((warn_unused_result));

/*
 * Like send(2) and recv(2) on the session: bytes, 0 (recv: the peer closed),
 * or -1 with errno (EAGAIN: wait for *ev, POLLIN or POLLOUT; EPROTO: a TLS
 * error, its text in wiretls_error()).
 */
ssize_t	wiretls_send(struct wiretls_conn *c, const char *p, size_t len, short *ev);
ssize_t	wiretls_recv(struct wiretls_conn *c, char *p, size_t len, short *ev);
const char *wiretls_error(const struct wiretls_conn *c);

/* True when the kept session has news before a request: closed, or data. */
bool	wiretls_stale(struct wiretls_conn *c);

/* Drops the session (no close_notify: a forked child must not write). */
void	wiretls_reset(struct wiretls_conn *c);
/* ... and the saved session too. */
void	wiretls_conn_free(struct wiretls_conn *c);

/* Handshakes done, and how many resumed a saved session. */
void	wiretls_counts(const struct wiretls_conn *c, uint64_t *handshakes,
	    uint64_t *resumed);

#endif
