/*
 * wire.c - talk to one idserver: connect, write a batch, read its replies.
 */
#include "wire.h"

#include "clk.h"
#include "wiretls.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static bool	wire_connect(struct wire *, unsigned, char *, size_t);
static bool	wire_stale(const struct wire *);
static unsigned	wire_once(struct wire *, const char *, size_t, unsigned, unsigned,
		    unsigned, wire_line_fn, void *, bool *, char *, size_t);
static bool	wire_login(struct wire *, unsigned, char *, size_t);
static bool	wire_login_line(void *, const char *, const char *);

/* The reply to AUTH: "OK", or the server's error line (no token in it). */
struct wire_login_reply {
	bool	ok;
	char	line[160];
};

bool
wire_auth_line(const char *token, char **line, size_t *len, char *err, size_t errlen)
{
	size_t n, i;

	*line = NULL;
	*len = 0;
	if (token == NULL)
		token = getenv("IDGEN_TOKEN");
	if (token == NULL || *token == '\0')
		return true;
	n = strlen(token);
	for (i = 0; i < n; i++)
		if (token[i] <= ' ' || token[i] > '~') {
			snprintf(err, errlen, "bad token: printable ASCII without spaces expected");
			return false;
		}
	if (n > WIRE_TOKEN_MAX) {
		snprintf(err, errlen, "bad token: longer than %d bytes", WIRE_TOKEN_MAX);
		return false;
	}
	if ((*line = malloc(n + 6)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	memcpy(*line, "AUTH ", 5);
	memcpy(*line + 5, token, n);
	(*line)[n + 5] = '\n';
	*len = n + 6;
	return true;
}

void
wire_auth_free(char *line, size_t len)
{
	if (line == NULL)
		return;
	explicit_bzero(line, len);
	free(line);
}

/* AUTH's one reply line. */
static bool
wire_login_line(void *arg, const char *p, const char *e)
{
	struct wire_login_reply *r = arg;

	r->ok = e - p == 2 && memcmp(p, "OK", 2) == 0;
	snprintf(r->line, sizeof(r->line), "%.*s", (int)(e - p), p);
	return true;
}

/*
 * The token, on a connection just made; false (dropped) when refused. An
 * idserver without tokens is no refusal (w->auth_unneeded counts it).
 */
static bool
wire_login(struct wire *w, unsigned timeout_ms, char *err, size_t errlen)
{
	struct wire_login_reply r = { false, "" };
	bool closed;

	if (wire_once(w, w->auth, w->authlen, 1, timeout_ms, timeout_ms, wire_login_line, &r,
	    &closed, err, errlen) != 1)
		return false;
	/* A server without tokens yet (their rollout): used all the same, and counted. */
	if (!r.ok && strncmp(r.line, WIRE_AUTH_UNNEEDED, sizeof(WIRE_AUTH_UNNEEDED) - 1) == 0) {
		w->auth_unneeded++;
		return true;
	}
	if (!r.ok) {
		snprintf(err, errlen, "%s: token refused: %s", w->name, r.line);
		wire_reset(w);
		return false;
	}
	return true;
}

bool
wire_init(struct wire *w, const char *s, size_t len, char *err, size_t errlen)
{
	const char	*e = s + len, *colon, *h = s, *he;
	char		*end;
	long		 port;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	if (len > 0 && *s == '[') {
		h = s + 1;
		if ((he = memchr(h, ']', (size_t)(e - h))) == NULL || he + 1 >= e ||
		    he[1] != ':')
			goto bad;
		colon = he + 1;
	} else {
		/* The last colon: a bare IPv6 address needs brackets. */
		colon = NULL;
		for (he = s; he < e; he++)
			if (*he == ':')
				colon = he;
		if (colon == NULL || memchr(s, ':', (size_t)(colon - s)) != NULL)
			goto bad;
		he = colon;
	}
	if (he == h || (size_t)(he - h) >= sizeof(w->host) ||
	    (size_t)(e - colon - 1) >= sizeof(w->port) || e - colon - 1 < 1)
		goto bad;
	memcpy(w->host, h, (size_t)(he - h));
	memcpy(w->port, colon + 1, (size_t)(e - colon - 1));
	errno = 0;
	port = strtol(w->port, &end, 10);
	if (*end != '\0' || errno != 0 || port < 1 || port > 65535 ||
	    w->port[0] < '1' || w->port[0] > '9')
		goto bad;
	snprintf(w->name, sizeof(w->name), "%.*s", (int)len, s);
	return true;
bad:
	snprintf(err, errlen, "bad idserver endpoint \"%.*s\": expected "
	    "host:port or [ipv6]:port, port 1..65535", (int)(len > 64 ? 64 : len), s);
	return false;
}

void
wire_free(struct wire *w)
{
	wire_reset(w);
	wiretls_conn_free(w->tlsc);
	w->tlsc = NULL;
	free(w->in);
	w->in = NULL;
}

void
wire_reset(struct wire *w)
{
	int	 fd = w->fd;

	/* Forgotten before it is closed: a fork in between leaks it, never
	 * closes a descriptor number reused meanwhile. */
	w->fd = -1;
	w->inlen = 0;
	wiretls_reset(w->tlsc);
	if (fd >= 0)
		close(fd);
}

/*
 * Connects to the first address of host:port that answers within connect_ms,
 * and makes the TLS handshake within the same time when TLS is on.
 */
static bool
wire_connect(struct wire *w, unsigned connect_ms, char *err, size_t errlen)
{
	struct addrinfo	 hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	uint64_t	 deadline = clk_mono_ms() + connect_ms;
	socklen_t	 sl;
	int		 fd = -1, rc, soerr = 0, one = 1;

	if ((rc = getaddrinfo(w->host, w->port, &hints, &ai)) != 0) {
		snprintf(err, errlen, "%s: %s", w->name, gai_strerror(rc));
		return false;
	}
	snprintf(err, errlen, "%s: no address", w->name);
	for (a = ai; a != NULL; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    a->ai_protocol);
		if (fd < 0) {
			snprintf(err, errlen, "%s: socket: %s", w->name, strerror(errno));
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			rc = clk_wait_fd(fd, POLLOUT, deadline);
			sl = sizeof(soerr);
			if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 &&
			    soerr == 0)
				break;
			if (rc == 0)
				snprintf(err, errlen, "%s: connect timed out after %u ms "
				    "(connect_timeout_ms)", w->name, connect_ms);
			else
				snprintf(err, errlen, "%s: connect: %s", w->name,
				    strerror(soerr ? soerr : errno));
		} else
			snprintf(err, errlen, "%s: connect: %s", w->name, strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return false;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	w->fd = fd;
	w->inlen = 0;
	if (w->tls != NULL && !wiretls_start(w->tls, &w->tlsc, fd, w->host, w->name, deadline,
	    err, errlen)) {
		wire_reset(w);
		return false;
	}
	return true;
}

/*
 * True when a kept connection has something to read before we asked: the
 * server closed it (idle_timeout_ms, a restart) or sent what no request asked.
 */
static bool
wire_stale(const struct wire *w)
{
	struct pollfd	 pfd = { .fd = w->fd, .events = POLLIN | POLLRDHUP };

	if (w->tls != NULL)
		return wiretls_stale(w->tlsc);
	return poll(&pfd, 1, 0) != 0;
}

unsigned
wire_exchange(struct wire *w, const char *req, size_t len, unsigned nreq,
    unsigned connect_ms, unsigned timeout_ms, wire_line_fn fn, void *arg,
    char *err, size_t errlen)
{
	bool		 reused, closed = false;
	unsigned	 got;

	if (w->fd >= 0 && wire_stale(w))
		wire_reset(w);
	reused = w->fd >= 0;
	got = wire_once(w, req, len, nreq, connect_ms, timeout_ms, fn, arg, &closed,
	    err, errlen);
	/*
	 * A kept connection the server closed or reset before any reply (as we
	 * sent): once more on a new one, at once. Not after a timeout, which
	 * would spend the attempt's share twice. Requests the server took
	 * before the close leave gaps, never repeats.
	 */
	if (got == 0 && reused && closed)
		got = wire_once(w, req, len, nreq, connect_ms, timeout_ms, fn, arg,
		    &closed, err, errlen);
	return got;
}

/*
 * One attempt of wire_exchange(); *closed when it failed because the peer
 * closed or reset the connection before sending any reply byte.
 */
static unsigned
wire_once(struct wire *w, const char *req, size_t len, unsigned nreq,
    unsigned connect_ms, unsigned timeout_ms, wire_line_fn fn, void *arg,
    bool *closed, char *err, size_t errlen)
{
	uint64_t	 deadline;
	size_t		 off = 0, used;
	unsigned	 got = 0;
	ssize_t		 n;
	char		*p, *nl, *e;
	bool		 replied = false;
	short		 ev;
	int		 rc;

	*closed = false;
	if (w->in == NULL && (w->in = malloc(WIRE_IN_MAX)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", w->name);
		return 0;
	}
	if (w->fd < 0 && (!wire_connect(w, connect_ms, err, errlen) ||
	    (w->auth != NULL && !wire_login(w, timeout_ms, err, errlen))))
		return 0;
	deadline = clk_mono_ms() + timeout_ms;
	while (off < len) {
		ev = POLLOUT;
		if (w->tls == NULL)
			n = send(w->fd, req + off, len - off, MSG_NOSIGNAL);
		else
			n = wiretls_send(w->tlsc, req + off, len - off, &ev);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && (rc = clk_wait_fd(w->fd, ev, deadline)) == 1)
			continue;
		*closed = n < 0 && (errno == EPIPE || errno == ECONNRESET);
		snprintf(err, errlen, "%s: send: %s", w->name, n < 0 && errno == EPROTO &&
		    w->tls != NULL ? wiretls_error(w->tlsc) : n < 0 && errno != EAGAIN ?
		    strerror(errno) : "timed out (timeout_ms)");
		goto fail;
	}
	while (got < nreq) {
		/* Every complete line buffered first. */
		p = w->in;
		e = w->in + w->inlen;
		while (got < nreq && (nl = memchr(p, '\n', (size_t)(e - p))) != NULL) {
			if (fn(arg, p, nl > p && nl[-1] == '\r' ? nl - 1 : nl))
				got++;
			p = nl + 1;
		}
		used = (size_t)(p - w->in);
		memmove(w->in, p, w->inlen - used);
		w->inlen -= used;
		if (got == nreq)
			break;
		if (w->inlen == WIRE_IN_MAX) {
			snprintf(err, errlen, "%s: reply line longer than %d bytes",
			    w->name, WIRE_IN_MAX);
			goto fail;
		}
		ev = POLLIN;
		if (w->tls == NULL)
			n = recv(w->fd, w->in + w->inlen, WIRE_IN_MAX - w->inlen, 0);
		else
			n = wiretls_recv(w->tlsc, w->in + w->inlen, WIRE_IN_MAX - w->inlen, &ev);
		if (n > 0) {
			w->inlen += (size_t)n;
			replied = true;
			continue;
		}
		if (n == 0) {
			*closed = !replied;
			snprintf(err, errlen, "%s: closed the connection", w->name);
			goto fail;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN && (rc = clk_wait_fd(w->fd, ev, deadline)) == 1)
			continue;
		*closed = !replied && errno == ECONNRESET;
		snprintf(err, errlen, "%s: %s", w->name, errno == EPROTO && w->tls != NULL ?
		    wiretls_error(w->tlsc) : errno != EAGAIN ? strerror(errno) :
		    "no reply within timeout_ms");
		goto fail;
	}
	if (w->inlen > 0) {
		snprintf(err, errlen, "%s: reply without a request", w->name);
		wire_reset(w);
	}
	return got;
fail:
	wire_reset(w);
	return got;
}
