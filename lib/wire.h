/*
 * wire.h - one idserver endpoint over TCP: connect with a deadline, send a
 * pipelined batch of request lines, read one reply line per request
 * (docs/design.md section 11). Blocking calls bounded by poll(); used only by
 * the client's own thread.
 */
#ifndef IDGEN_WIRE_H
#define IDGEN_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wiretls;
struct wiretls_conn;

#define WIRE_HOST_MAX	256
#define WIRE_IN_MAX	(64 * 1024)	/* reply bytes buffered; a line is far shorter */

struct wire {
	char	 host[WIRE_HOST_MAX];
	char	 port[8];
	char	 name[WIRE_HOST_MAX + 8];	/* "host:port" for messages */
	int	 fd;				/* -1: not connected */
	char	*in;
	size_t	 inlen;
	const char *auth;			/* "AUTH <token>\n" sent first on each new
						   connection (the owner's), or NULL */
	size_t	 authlen;
	struct wiretls *tls;			/* the owner's TLS context; NULL: cleartext */
	uint64_t auth_unneeded;			/* logins answered "no token configured":
						   the connection kept, unauthenticated */
	struct wiretls_conn *tlsc;		/* the session, and the one to resume */
};

#define WIRE_TOKEN_MAX	256	/* bytes of a token (idserver's bound) */
/*
 * idserver's answer to AUTH without auth_tokens_file (docs/protocols.md):
 * nothing to check, the token not needed, so not a reason to drop it.
 */
#define WIRE_AUTH_UNNEEDED	"ERR BADREQ AUTH called without any token configured"

/*
 * Called with each reply line, without its newline (nor a CR before it);
 * true when the line ends a reply (STATS ends at END, BLOCK at once).
 */
typedef bool	(*wire_line_fn)(void *arg, const char *p, const char *e);

/* Parses "host:port" or "[v6]:port" of length len; false with a message. */
bool	wire_init(struct wire *w, const char *s, size_t len, char *err,
	    size_t errlen) __attribute__((warn_unused_result));
void	wire_free(struct wire *w);

/*
 * The line "AUTH <token>\n" for token (malloc'd into *line, *len), or NULL
 * token: the environment's IDGEN_TOKEN, or none (*line NULL). False with a
 * message (which never holds the token) when it is not a token.
 */
bool	wire_auth_line(const char *token, char **line, size_t *len, char *err, size_t errlen)
	    __attribute__((warn_unused_result));
/* Wipes and frees such a line. */
void	wire_auth_free(char *line, size_t len);

/* Drops the connection (a failure, a fork: the child must not share it). */
void	wire_reset(struct wire *w);

/*
 * Sends req (len bytes, nreq requests) and hands each reply line to fn until
 * nreq replies have ended. Returns the replies ended; fewer than nreq means
 * the exchange failed, with a message in err, and the connection is dropped.
 */
unsigned wire_exchange(struct wire *w, const char *req, size_t len,
	    unsigned nreq, unsigned connect_ms, unsigned timeout_ms,
	    wire_line_fn fn, void *arg, char *err, size_t errlen);

#endif
