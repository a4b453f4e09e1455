/*
 * client.c - read pipelined request lines, execute them, write replies in order.
 *
 * Requests are parsed in place from a fixed input buffer; replies are formatted
 * straight into one output buffer that is written once per batch. A request the
 * ID source cannot serve yet parks the client (a bounded wait), keeping order.
 */
#include "client.h"

#include <sys/socket.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"
#include "log.h"
#include "proto.h"
#include "server.h"
#include "stats.h"

#define CLIENT_LINGER_MS 2000	/* wait for the peer's EOF after we close */

enum client_exec {
	CLIENT_DONE,
	CLIENT_WAIT,
	CLIENT_CLOSE,
};

static void	client_read_cb(evutil_socket_t fd, short what, void *arg);
static void	client_write_cb(evutil_socket_t fd, short what, void *arg);
static void	client_park_cb(evutil_socket_t fd, short what, void *arg);
static void	client_process(struct client *c);
static bool	client_flush(struct client *c);
static char	*client_reserve(struct client *c, size_t n);
static void	client_put(struct client *c, const char *s, size_t n);
static void	client_err(struct client *c, const char *code, const char *why);
static void	client_err_status(struct client *c, enum source_status st, const char *why);
static enum client_exec client_exec(struct client *c, const char *line, size_t len);
static void	client_decode(struct client *c, uint64_t id);
static void	client_stat_line(const char *name, const char *value, void *arg);
static void	client_set_reading(struct client *c, bool on);
static void	client_linger(struct client *c);
static void	client_linger_cb(evutil_socket_t fd, short what, void *arg);

/* Registers a connection with the server and starts reading. */
bool
client_new(struct server *srv, evutil_socket_t fd)
{
	struct client *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		evutil_closesocket(fd);
		return false;
	}
	c->srv = srv;
	c->fd = fd;
	c->out = c->out_inline;
	c->out_cap = sizeof(c->out_inline);
	c->rev = event_new(srv->base, fd, EV_READ | EV_PERSIST, client_read_cb, c);
	c->wev = event_new(srv->base, fd, EV_WRITE, client_write_cb, c);
	c->park = evtimer_new(srv->base, client_park_cb, c);
	if (c->rev == NULL || c->wev == NULL || c->park == NULL) {
		if (c->rev)
			event_free(c->rev);
		if (c->wev)
			event_free(c->wev);
		if (c->park)
			event_free(c->park);
		evutil_closesocket(fd);
		free(c);
		return false;
	}
	TAILQ_INSERT_TAIL(&srv->clients, c, entry);
	srv->nclients++;
	srv->stats.conns_total++;
	client_set_reading(c, true);
	return true;
}

/* Unlinks and frees a client; the last thing any path does with it. */
void
client_free(struct client *c)
{
	struct server *srv = c->srv;

	if (c->parked)
		TAILQ_REMOVE(&srv->parked, c, park_entry);
	TAILQ_REMOVE(&srv->clients, c, entry);
	srv->nclients--;
	if (c->rev != NULL)
		event_free(c->rev);
	event_free(c->wev);
	if (c->park != NULL)
		event_free(c->park);
	evutil_closesocket(c->fd);
	if (c->out != c->out_inline)
		free(c->out);
	free(c);
}

/* Turns reading on or off (off while the output is over its bound). */
static void
client_set_reading(struct client *c, bool on)
{
	if (on == c->reading)
		return;
	c->reading = on;
	if (on)
		event_add(c->rev, NULL);
	else
		event_del(c->rev);
}

/*
 * Makes room for n more output bytes; returns where to write them. Replies
 * start in the inline buffer; a burst moves to the heap until it is flushed.
 */
static char *
client_reserve(struct client *c, size_t n)
{
	size_t pending, cap;
	char *p;

	if (c->out_off > 0 && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len + n <= c->out_cap)
		return c->out + c->out_len;
	pending = c->out_len - c->out_off;
	if (c->out_off > 0) {
		memmove(c->out, c->out + c->out_off, pending);
		c->out_len = pending;
		c->out_off = 0;
		if (c->out_len + n <= c->out_cap)
			return c->out + c->out_len;
	}
	for (cap = c->out_cap * 2; c->out_len + n > cap; cap *= 2)
		;
	if (c->out == c->out_inline) {
		p = malloc(cap);
		if (p != NULL)
			memcpy(p, c->out, c->out_len);
	} else
		p = realloc(c->out, cap);
	if (p == NULL)
		return NULL;
	c->out = p;
	c->out_cap = cap;
	return c->out + c->out_len;
}

/* Appends bytes to the output; on allocation failure the client is closed. */
static void
client_put(struct client *c, const char *s, size_t n)
{
	char *p = client_reserve(c, n);

	if (p == NULL) {
		c->closing = true;
		return;
	}
	memcpy(p, s, n);
	c->out_len += n;
}

/* Appends "ERR <CODE> <why>" and counts it. */
static void
client_err(struct client *c, const char *code, const char *why)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "ERR %s %s\n", code, why);

	if (strcmp(code, "BADREQ") == 0)
		c->srv->stats.err_badreq++;
	else if (strcmp(code, "RANGE") == 0)
		c->srv->stats.err_range++;
	else if (strcmp(code, "CLOCK") == 0)
		c->srv->stats.err_clock++;
	else
		c->srv->stats.err_unavailable++;
	client_put(c, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* Maps a source refusal to its error class. */
static void
client_err_status(struct client *c, enum source_status st, const char *why)
{
	client_err(c, st == SOURCE_CLOCK ? "CLOCK" : "UNAVAILABLE", why);
}

/* Socket readable: take what is there, then process. */
static void
client_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;
	ssize_t n;

	(void)what;
	if (c->in_off > 0) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	if (c->in_len < sizeof(c->in) && !c->eof) {
		n = read(fd, c->in + c->in_len, sizeof(c->in) - c->in_len);
		if (n > 0)
			c->in_len += (size_t)n;
		else if (n == 0)
			c->eof = true;
		else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			client_free(c);
			return;
		}
	}
	if (c->eof)
		client_set_reading(c, false);
	client_process(c);
}

/* Socket writable again: flush, then continue with any pending input. */
static void
client_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;

	(void)fd;
	if (what & EV_TIMEOUT) {
		c->srv->stats.write_timeouts++;
		client_free(c);
		return;
	}
	client_process(c);
}

/* The refill wait expired: the parked request may now use the fallback. */
static void
client_park_cb(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;

	(void)fd;
	(void)what;
	c->waited = true;
	c->timed = false;
	client_resume(c);
}

/*
 * Closes after our replies: half-close, then discard what the peer still sends
 * until its EOF (bounded), so unread input does not turn our FIN into a RST that
 * would destroy the replies in flight (e.g. "ERR BADREQ line too long").
 */
static void
client_linger(struct client *c)
{
	struct timeval tv = { CLIENT_LINGER_MS / 1000, (CLIENT_LINGER_MS % 1000) * 1000 };

	if (c->eof) {
		client_free(c);
		return;
	}
	shutdown(c->fd, SHUT_WR);
	client_set_reading(c, false);
	event_free(c->rev);
	event_free(c->park);
	c->rev = event_new(c->srv->base, c->fd, EV_READ | EV_PERSIST, client_linger_cb, c);
	c->park = evtimer_new(c->srv->base, client_linger_cb, c);
	if (c->rev == NULL || c->park == NULL || event_add(c->rev, NULL) != 0 ||
	    evtimer_add(c->park, &tv) != 0) {
		client_free(c);
		return;
	}
	c->reading = true;
}

/* Discards input while lingering; frees on EOF, error or the linger deadline. */
static void
client_linger_cb(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;
	char sink[4096];
	ssize_t n;

	if (what & EV_READ) {
		n = read(fd, sink, sizeof(sink));
		if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
			return;
	}
	client_free(c);
}

/* Un-parks and retries. */
void
client_resume(struct client *c)
{
	if (!c->parked)
		return;
	TAILQ_REMOVE(&c->srv->parked, c, park_entry);
	c->parked = false;
	client_process(c);
}

/* Stop reading; close once buffered requests are answered and flushed. */
void
client_shutdown(struct client *c)
{
	c->eof = true;
	client_set_reading(c, false);
	client_process(c);
}

/* Writes what is buffered; false when the connection broke. */
static bool
client_flush(struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);

		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct timeval tv = { c->srv->cfg->write_timeout_ms / 1000,
			    (c->srv->cfg->write_timeout_ms % 1000) * 1000 };

			/* A peer that stops reading is dropped after write_timeout_ms. */
			event_add(c->wev, &tv);
			return true;
		}
		return false;
	}
	c->out_off = c->out_len = 0;
	/* All flushed: a burst's heap buffer goes back, idle clients stay small. */
	if (c->out != c->out_inline) {
		free(c->out);
		c->out = c->out_inline;
		c->out_cap = sizeof(c->out_inline);
	}
	return true;
}

/*
 * Executes every complete line (up to max_requests_per_event), writes the
 * replies, and decides whether to keep reading, wait, or close.
 */
static void
client_process(struct client *c)
{
	const struct config *cfg = c->srv->cfg;
	unsigned handled = 0;
	bool yielded = false;

	while (!c->closing && !c->parked) {
		char *start = c->in + c->in_off, *nl;
		size_t avail = c->in_len - c->in_off, len;
		enum client_exec r;

		/*
		 * Replies over their bound, or our share of this turn used up: come
		 * back after the next poll. The rest of the input may already be
		 * here, with no read event to come for it.
		 */
		if (c->out_len - c->out_off >= cfg->max_output_bytes ||
		    handled >= cfg->max_requests_per_event) {
			yielded = true;
			break;
		}
		nl = memchr(start, '\n', avail);
		if (nl == NULL) {
			if (avail > PROTO_LINE_MAX + 1) {
				client_err(c, "BADREQ", "line too long");
				c->closing = true;
			}
			break;
		}
		len = (size_t)(nl - start);
		if (len > PROTO_LINE_MAX + (size_t)(len > 0 && start[len - 1] == '\r')) {
			client_err(c, "BADREQ", "line too long");
			c->closing = true;
			break;
		}
		r = client_exec(c, start, len);
		if (r == CLIENT_WAIT)
			break;
		c->in_off += len + 1;
		handled++;
		if (r == CLIENT_CLOSE)
			c->closing = true;
	}
	if (!client_flush(c)) {
		client_free(c);
		return;
	}
	/* Parked or closing: input waits (or is discarded by the linger). */
	if (c->parked || c->closing)
		client_set_reading(c, false);
	if (c->out_off < c->out_len) {
		/* Over the bound: stop reading until the peer drains its replies. */
		if (c->out_len - c->out_off >= cfg->max_output_bytes)
			client_set_reading(c, false);
		return;
	}
	if (c->closing) {
		client_linger(c);
		return;
	}
	if (c->eof && !c->parked && !yielded) {
		/* The peer is done sending: an unterminated last line is still a request. */
		if (c->in_len > c->in_off) {
			size_t len = c->in_len - c->in_off;

			if (len > PROTO_LINE_MAX + (size_t)(c->in[c->in_len - 1] == '\r'))
				client_err(c, "BADREQ", "line too long");
			else if (client_exec(c, c->in + c->in_off, len) == CLIENT_WAIT)
				return;
			c->in_off = c->in_len;
			if (!client_flush(c)) {
				client_free(c);
				return;
			}
			if (c->out_off < c->out_len)
				return;
		}
		client_free(c);
		return;
	}
	if (yielded)
		event_add(c->wev, NULL);	/* after the next poll: the DB gets its turn */
	else if (!c->eof && !c->parked)
		client_set_reading(c, c->in_len - c->in_off < sizeof(c->in));
}

/* Runs one request line, appending its reply; CLIENT_WAIT leaves it pending. */
static enum client_exec
client_exec(struct client *c, const char *line, size_t len)
{
	struct server *srv = c->srv;
	struct proto_req req;
	enum source_status st = SOURCE_OK;
	uint64_t ids[PROTO_IDS_MAX], first;
	const char *why = "";
	unsigned wait_us = 0, i;
	char *p, *q;

	switch (proto_parse(line, len, &req, &why)) {
	case PROTO_OK:
		break;
	case PROTO_BADREQ:
		srv->stats.requests++;
		client_err(c, "BADREQ", why);
		return CLIENT_DONE;
	case PROTO_RANGE:
		srv->stats.requests++;
		client_err(c, "RANGE", why);
		return CLIENT_DONE;
	}
	switch (req.cmd) {
	case PROTO_ID:
	case PROTO_IDS:
		i = req.cmd == PROTO_ID ? 1 : (unsigned)req.arg;
		st = source_ids(srv->source, i, ids, c->waited, &wait_us, &why);
		if (st != SOURCE_OK)
			break;
		p = q = client_reserve(c, (size_t)i * (PROTO_U64_LEN + 1) + 1);
		if (p == NULL)
			return CLIENT_CLOSE;
		q += proto_ids(q, ids, i);
		*q++ = '\n';
		c->out_len += (size_t)(q - p);
		break;
	case PROTO_BLOCK:
		st = source_block(srv->source, (unsigned)req.arg, &first, c->waited, &wait_us,
		    &why);
		if (st != SOURCE_OK)
			break;
		p = q = client_reserve(c, 2 * PROTO_U64_LEN + 2);
		if (p == NULL)
			return CLIENT_CLOSE;
		q += proto_u64(q, first);
		*q++ = ' ';
		q += proto_u64(q, req.arg);
		*q++ = '\n';
		c->out_len += (size_t)(q - p);
		break;
	case PROTO_DECODE:
		client_decode(c, req.arg);
		break;
	case PROTO_STATS:
		stats_emit(srv, client_stat_line, c);
		client_put(c, "END\n", 4);
		break;
	case PROTO_PING:
		client_put(c, "PONG\n", 5);
		break;
	case PROTO_HELP:
		client_put(c, proto_help, strlen(proto_help));
		break;
	case PROTO_QUIT:
		srv->stats.requests++;
		return CLIENT_CLOSE;
	}
	if (st == SOURCE_NEXT_MS) {
		/* In line behind the clients already waiting for the next millisecond. */
		c->parked = true;
		TAILQ_INSERT_TAIL(&srv->parked, c, park_entry);
		server_wake_after(srv, wait_us);
		return CLIENT_WAIT;
	}
	if (st == SOURCE_WAIT) {
		/* A wake-up that brought nothing keeps the original deadline. */
		if (!c->timed) {
			struct timeval tv = { wait_us / 1000000, wait_us % 1000000 };

			if (!c->waited)
				srv->stats.waits++;
			evtimer_add(c->park, &tv);
			c->timed = true;
		}
		c->parked = true;
		TAILQ_INSERT_TAIL(&srv->parked, c, park_entry);
		return CLIENT_WAIT;
	}
	c->waited = false;
	if (c->timed) {
		evtimer_del(c->park);
		c->timed = false;
	}
	srv->stats.requests++;
	if (st != SOURCE_OK)
		client_err_status(c, st, why);
	return CLIENT_DONE;
}

/* "ticket block=<t> server=odd|even" or "snowflake time=... worker=<w> seq=<s>". */
static void
client_decode(struct client *c, uint64_t id)
{
	uint64_t b = c->srv->source->tier->block_size;
	char line[160], iso[LAYOUT_ISO_LEN];
	struct layout_snowflake sf;
	int n;

	switch (layout_region(id)) {
	case LAYOUT_INVALID:
		client_err(c, "RANGE", "an ID is 1..9223372036854775807");
		return;
	case LAYOUT_TICKET:
		if (b == 0) {
			client_err(c, "UNAVAILABLE", "block size unknown until a ticket server "
			    "has answered");
			return;
		}
		n = snprintf(line, sizeof(line), "ticket block=%llu server=%s\n",
		    (unsigned long long)layout_ticket_of(id, b),
		    layout_ticket_of(id, b) % 2 ? "odd" : "even");
		break;
	case LAYOUT_SNOWFLAKE:
	default:
		sf = layout_snowflake_split(id);
		layout_format_iso(layout_ts_to_unix_ms(sf.ts), iso, sizeof(iso));
		n = snprintf(line, sizeof(line), "snowflake time=%s worker=%u seq=%u\n", iso,
		    sf.worker, sf.seq);
		break;
	}
	client_put(c, line, (size_t)n);
}

/* One "STAT name value" line of the STATS reply. */
static void
client_stat_line(const char *name, const char *value, void *arg)
{
	struct client *c = arg;
	char line[256];
	int n = snprintf(line, sizeof(line), "STAT %s %s\n", name, value);

	client_put(c, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}
