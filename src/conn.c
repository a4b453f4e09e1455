/*
 * conn.c - read pipelined requests, hand them to the connection's protocol
 * adapter, write replies in order.
 *
 * Requests are parsed in place from a fixed input buffer; replies are
 * formatted straight into one output buffer that is written once per batch.
 * A request the ID source cannot serve yet parks the connection's waiter in
 * the core (a bounded wait), keeping order.
 */
#include "conn.h"

#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "clk.h"
#include "log.h"
#include "reqlat.h"
#include "tls.h"

#define CONN_LINGER_MS 2000	/* wait for the peer's EOF after we close */
#define CONN_TLS_CHUNK 16384	/* TLS: replies handed to the session below this */
#define CONN_EVICT_EPISODE_MS 10000	/* evictions this far apart are logged again */
#define CONN_EVICTED "evicted: the server is at max_clients and this connection " \
	"was the one longest without a request served"

static void	conn_read_cb(evutil_socket_t fd, short what, void *arg);
static void	conn_write_cb(evutil_socket_t fd, short what, void *arg);
static void	conn_resume(void *arg);
static void	conn_process(struct conn *c);
static void	conn_turn(struct conn_set *set);
static bool	conn_run(struct conn *c, unsigned *handled, bool *over_turn);
static void	conn_eof(struct conn *c);
static bool	conn_flush(struct conn *c);
static void	conn_free(struct conn *c);
static void	conn_shutdown(struct conn *c);
static void	conn_set_reading(struct conn *c, bool on);
static void	conn_linger(struct conn *c);
static void	conn_linger_cb(evutil_socket_t fd, short what, void *arg);
static void	conn_idle_cb(evutil_socket_t fd, short what, void *arg);
static void	conn_watch_input(struct conn *c, bool progressed);
static void	conn_abort(struct conn *c);
static char	*conn_buf_get(struct conn_set *set, bool in);
static void	conn_buf_put(struct conn_set *set, bool in, char *p, size_t size);
static void	conn_shrink(struct conn *c);
static void	conn_defer(struct conn *c);
static void	conn_resume_cb(evutil_socket_t fd, short what, void *arg);
static void	conn_refusal_cb(evutil_socket_t fd, short what, void *arg);
static void	conn_say(evutil_socket_t fd, bool resp, const char *why, int reads);
static bool	conn_tls_start(struct conn *c);
static void	conn_tls_gate(struct conn *c);
static void	conn_tls_read_cb(struct bufferevent *bev, void *arg);
static void	conn_tls_write_cb(struct bufferevent *bev, void *arg);
static void	conn_tls_event_cb(struct bufferevent *bev, short what, void *arg);
static ssize_t	conn_recv(struct conn *c, char *p, size_t len);
static size_t	conn_pending(const struct conn *c);
static bool	conn_wait_drain(struct conn *c);
static void	conn_served(struct conn *c);
static void	conn_evict(struct conn_set *set);

void
conn_set_init(struct conn_set *set, struct event_base *base, const struct config *cfg,
    struct core *core, const struct metrics_src *metrics, const struct proto_ops *resp,
    const struct proto_ops *text)
{
	memset(set, 0, sizeof(*set));
	set->base = base;
	set->resp = resp;
	set->text = text;
	set->cfg = cfg;
	set->core = core;
	set->metrics = metrics;
	TAILQ_INIT(&set->all);
	TAILQ_INIT(&set->refusals);
	peers_init(&set->peers);
	TAILQ_INIT(&set->deferred);
	TAILQ_INIT(&set->by_service[0]);
	TAILQ_INIT(&set->by_service[1]);
	set->resume = evtimer_new(base, conn_resume_cb, set);
}

/*
 * Puts a connection that used up the turn's max_output_per_turn at the end of
 * the queue served on the next turns, and stops its own reading meanwhile:
 * clients with a backlog take turns in order, and a client with one request
 * waiting is not stuck behind all of them (docs/design.md section 5).
 */
static void
conn_defer(struct conn *c)
{
	struct conn_set *set = c->set;
	static const struct timeval now = { 0, 0 };

	if (!c->deferred) {
		TAILQ_INSERT_TAIL(&set->deferred, c, defer_entry);
		c->deferred = true;
	}
	conn_set_reading(c, false);
	if (set->resume != NULL && !evtimer_pending(set->resume, NULL))
		evtimer_add(set->resume, &now);
}

/*
 * A new turn: the deferred connections, oldest first, while the budget lasts
 * (at least one, so the queue always moves).
 */
static void
conn_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn_set *set = arg;
	static const struct timeval now = { 0, 0 };
	struct conn *c;
	bool first = true;

	(void)fd;
	(void)what;
	conn_turn(set);
	while ((c = TAILQ_FIRST(&set->deferred)) != NULL &&
	    (first || set->turn_bytes < set->cfg->max_output_per_turn)) {
		TAILQ_REMOVE(&set->deferred, c, defer_entry);
		c->deferred = false;
		first = false;
		conn_process(c);
	}
	if (!TAILQ_EMPTY(&set->deferred))
		evtimer_add(set->resume, &now);
}

/* A buffer for input (CONN_IN_SIZE) or output (CONN_OUT_SIZE): a spare if any. */
static char *
conn_buf_get(struct conn_set *set, bool in)
{
	if (in && set->nspare_in > 0)
		return set->spare_in[--set->nspare_in];
	if (!in && set->nspare_out > 0)
		return set->spare_out[--set->nspare_out];
	return malloc(in ? CONN_IN_SIZE : CONN_OUT_SIZE);
}

/*
 * Gives a buffer back (NULL: none), size bytes: kept as a spare when it is of
 * conn_buf_get()'s size (an output buffer a burst grew is not), else freed.
 */
static void
conn_buf_put(struct conn_set *set, bool in, char *p, size_t size)
{
	if (p != NULL && in && size == CONN_IN_SIZE && set->nspare_in < CONN_SPARES)
		set->spare_in[set->nspare_in++] = p;
	else if (p != NULL && !in && size == CONN_OUT_SIZE && set->nspare_out < CONN_SPARES)
		set->spare_out[set->nspare_out++] = p;
	else
		free(p);
}

/* Drops the input buffer once every byte in it is processed. */
static void
conn_shrink(struct conn *c)
{
	if (c->in != NULL && c->in_off == c->in_len) {
		conn_buf_put(c->set, true, c->in, CONN_IN_SIZE);
		c->in = NULL;
		c->in_off = c->in_len = 0;
	}
}

void
conn_refuse(struct conn_set *set, evutil_socket_t fd, const char *why)
{
	struct timeval tv = clk_tv_ms(set->cfg->refusal_wait_ms);
	struct conn_refusal *r = NULL;

	/* TLS: no line a client could read before a handshake; a close at once. */
	if (set->tls == NULL && set->nrefusals < set->cfg->max_pending_refusals)
		r = calloc(1, sizeof(*r));
	if (r != NULL) {
		r->set = set;
		r->fd = fd;
		r->why = why;
		r->ev = event_new(set->base, fd, EV_READ, conn_refusal_cb, r);
	}
	if (r == NULL || r->ev == NULL || event_add(r->ev, &tv) != 0) {
		/* No room to wait: the text protocol's line at once. */
		if (r != NULL && r->ev != NULL)
			event_free(r->ev);
		free(r);
		conn_say(fd, false, set->tls == NULL ? why : NULL, -1);
		evutil_closesocket(fd);
		return;
	}
	TAILQ_INSERT_TAIL(&set->refusals, r, entry);
	set->nrefusals++;
}

/* The first bytes came, or refusal_wait_ms passed: answer in their protocol. */
static void
conn_refusal_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn_refusal *r = arg;
	struct conn_set *set = r->set;
	char first = 0;

	(void)what;
	if (recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT) != 1)
		first = 0;
	TAILQ_REMOVE(&set->refusals, r, entry);
	set->nrefusals--;
	event_free(r->ev);
	conn_say(fd, first == '*', set->tls == NULL ? r->why : NULL, -1);
	evutil_closesocket(fd);
	free(r);
}

/*
 * Tells a client we close on why UNAVAILABLE (none: NULL) in its protocol
 * (resp: RESP). What it sent is read first (up to reads times, -1: all):
 * closing with unread input would send a reset, which can destroy the line.
 */
static void
conn_say(evutil_socket_t fd, bool resp, const char *why, int reads)
{
	char line[256], junk[4096];
	int n;

	while (reads-- != 0 && recv(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		;
	n = why == NULL ? 0 : snprintf(line, sizeof(line), resp ? "-%s %s\r\n" : "ERR %s %s\n",
	    core_err_info(CORE_ERR_UNAVAILABLE)->code, why);
	if (n > 0 && write(fd, line, (size_t)n) < 0) {
		/* Nothing more to tell a peer that is closed anyway. */
	}
}

/* Registers a connection and starts reading. */
bool
conn_new(struct conn_set *set, evutil_socket_t fd, const struct sockaddr *sa)
{
	struct peer *a = peers_get(&set->peers, sa);
	struct conn *c;

	if (a != NULL && a->count >= set->cfg->max_clients_per_ip) {
		set->stats.rejected_per_ip++;
		conn_refuse(set, fd, "too many connections from your address (max_clients_per_ip)");
		return false;
	}
	if (set->stats.open >= set->cfg->max_clients)
		conn_evict(set);
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		evutil_closesocket(fd);
		return false;
	}
	c->set = set;
	c->fd = fd;
	auth_sess_init(&c->auth, fd);
	/*
	 * A bounded kernel buffer: a client that never reads can make us format
	 * only this much (plus max_output_bytes), not the megabytes autotuning
	 * grants on loopback (docs/design.md section 5).
	 */
	if (set->cfg->client_sndbuf_bytes > 0) {
		int sb = (int)set->cfg->client_sndbuf_bytes;

		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
	}
	if (set->tls == NULL) {
		c->rev = event_new(set->base, fd, EV_READ | EV_PERSIST, conn_read_cb, c);
		c->wev = event_new(set->base, fd, EV_WRITE, conn_write_cb, c);
	}
	c->idle = evtimer_new(set->base, conn_idle_cb, c);
	TAILQ_INSERT_TAIL(&set->all, c, entry);
	TAILQ_INSERT_TAIL(&set->by_service[0], c, service_entry);
	set->stats.open++;
	if ((set->tls != NULL && !conn_tls_start(c)) || c->rev == NULL || c->wev == NULL ||
	    c->idle == NULL || !core_waiter_init(&c->waiter, set->core, conn_resume, c)) {
		conn_free(c);		/* out of memory: what was made, and fd */
		return false;
	}
	set->stats.total++;
	c->id = set->stats.total;
	c->born_ms = clk_mono_ms();
	if (a != NULL) {
		a->count++;
		c->peer = a;
	}
	conn_set_reading(c, true);
	conn_watch_input(c, true);
	return true;
}

/* Unlinks and frees a connection; the last thing any path does with it. */
static void
conn_free(struct conn *c)
{
	struct conn_set *set = c->set;

	core_waiter_free(&c->waiter);
	if (c->proto != NULL && c->proto->release != NULL)
		c->proto->release(c);
	TAILQ_REMOVE(&set->all, c, entry);
	TAILQ_REMOVE(&set->by_service[c->rank], c, service_entry);
	if (c->deferred)
		TAILQ_REMOVE(&set->deferred, c, defer_entry);
	set->stats.open--;
	if (c->peer != NULL)
		c->peer->count--;
	if (c->idle != NULL)
		event_free(c->idle);
	if (c->rev != NULL)
		event_free(c->rev);
	if (c->wev != NULL)
		event_free(c->wev);
	if (c->linger != NULL)
		event_free(c->linger);
	if (c->bev != NULL) {
		tls_close_notify(c->bev);
		bufferevent_free(c->bev);	/* closes fd */
	} else
		evutil_closesocket(c->fd);
	conn_buf_put(set, true, c->in, CONN_IN_SIZE);
	conn_buf_put(set, false, c->out, c->out_cap);
	explicit_bzero(&c->auth, sizeof(c->auth));
	free(c);
}

/*
 * Drops a peer that does not take its replies: a reset, so the kernel discards
 * what it still buffers for it instead of trickling it out after our close.
 */
static void
conn_abort(struct conn *c)
{
	struct linger lg = { 1, 0 };

	setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	conn_free(c);
}

/*
 * Turns reading on or off (off while the output is over its bound). Turned
 * on, it goes on with the input already here: for TLS, the bytes the session
 * decrypted make no read event of their own.
 */
static void
conn_set_reading(struct conn *c, bool on)
{
	if (c->bev != NULL) {
		c->reading = on;
		conn_tls_gate(c);
		if (on && (c->tls_eof || evbuffer_get_length(bufferevent_get_input(c->bev)) > 0))
			event_active(c->rev, EV_READ, 0);
		return;
	}
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
 * start in a CONN_OUT_SIZE buffer; a burst grows it until it is flushed.
 */
char *
conn_reserve(struct conn *c, size_t n)
{
	size_t pending, cap;
	char *p;

	if (c->out == NULL) {
		if ((c->out = conn_buf_get(c->set, false)) == NULL) {
			c->closing = true;
			return NULL;
		}
		c->out_cap = CONN_OUT_SIZE;
		c->out_off = c->out_len = 0;
	}
	if (c->out_off > 0 && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len + n <= c->out_cap)
		return c->out + c->out_len;
	pending = c->out_len - c->out_off;
	/*
	 * Compact only when the bytes moved are at most the bytes freed: a slow
	 * reader with a large backlog would otherwise have it all moved for every
	 * reply appended.
	 */
	if (c->out_off > 0 && c->out_off >= pending) {
		memmove(c->out, c->out + c->out_off, pending);
		c->out_len = pending;
		c->out_off = 0;
		if (c->out_len + n <= c->out_cap)
			return c->out + c->out_len;
	}
	for (cap = c->out_cap * 2; c->out_len + n > cap; cap *= 2)
		;
	p = realloc(c->out, cap);
	if (p == NULL) {
		c->closing = true;
		return NULL;
	}
	c->out = p;
	c->out_cap = cap;
	return c->out + c->out_len;
}

void
conn_commit(struct conn *c, size_t n)
{
	c->out_len += n;
	c->set->turn_bytes += n;
}

/* Appends bytes to the output; on allocation failure the connection closes. */
void
conn_put(struct conn *c, const char *s, size_t n)
{
	char *p = conn_reserve(c, n);

	if (p == NULL)
		return;
	memcpy(p, s, n);
	conn_commit(c, n);
}

void
conn_addr(const struct conn *c, bool local, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN];
	bool v6;

	/* inet_ntop refuses a family other than these two. */
	if ((local ? getsockname(c->fd, (struct sockaddr *)&ss, &sl) :
	    getpeername(c->fd, (struct sockaddr *)&ss, &sl)) != 0 ||
	    inet_ntop(ss.ss_family, ss.ss_family == AF_INET6 ? (const void *)&in6->sin6_addr :
	    (const void *)&in->sin_addr, ip, sizeof(ip)) == NULL) {
		snprintf(buf, len, "?");
		return;
	}
	v6 = ss.ss_family == AF_INET6;
	snprintf(buf, len, v6 ? "[%s]:%u" : "%s:%u", ip,
	    (unsigned)ntohs(v6 ? in6->sin6_port : in->sin_port));
}

/* Socket readable: take what is there, then process. */
static void
conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	ssize_t n;

	(void)fd;
	(void)what;
	if (c->bev != NULL && !c->reading)
		return;		/* TLS: an activation made before reading stopped */
	if (c->in == NULL && (c->in = conn_buf_get(c->set, true)) == NULL) {
		conn_free(c);
		return;
	}
	if (c->in_off > 0) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	if (c->in_len < CONN_IN_SIZE && !c->eof) {
		n = conn_recv(c, c->in + c->in_len, CONN_IN_SIZE - c->in_len);
		if (n > 0)
			c->in_len += (size_t)n;
		else if (n == 0)
			c->eof = true;
		else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			conn_free(c);
			return;
		}
		if (c->bev != NULL)
			conn_tls_gate(c);	/* room again: the session may read on */
	}
	if (c->eof)
		conn_set_reading(c, false);
	conn_process(c);
}

/* Socket writable again: flush, then continue with any pending input. */
static void
conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	/* TLS: wev is a timer, and conn_flush decides whether the time is up. */
	if ((what & EV_TIMEOUT) && c->bev == NULL) {
		c->set->stats.write_timeouts++;
		conn_abort(c);
		return;
	}
	conn_process(c);
}

/* The core resumes a parked request (IDs arrived, the wait ran out). */
static void
conn_resume(void *arg)
{
	conn_process(arg);
}

/*
 * Closes after our replies: half-close, then discard what the peer still sends
 * until its EOF (bounded), so unread input does not turn our FIN into a RST that
 * would destroy the replies in flight (e.g. "ERR BADREQ line too long").
 */
static void
conn_linger(struct conn *c)
{
	struct timeval tv = clk_tv_ms(CONN_LINGER_MS);

	if (c->eof) {
		conn_free(c);
		return;
	}
	if (c->bev != NULL) {
		/* TLS: close_notify, then the same half-close; what follows is discarded. */
		tls_close_notify(c->bev);
		bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	}
	shutdown(c->fd, SHUT_WR);
	conn_set_reading(c, false);
	event_free(c->rev);
	c->rev = event_new(c->set->base, c->fd, EV_READ | EV_PERSIST, conn_linger_cb, c);
	c->linger = evtimer_new(c->set->base, conn_linger_cb, c);
	if (c->rev == NULL || c->linger == NULL || event_add(c->rev, NULL) != 0 ||
	    evtimer_add(c->linger, &tv) != 0) {
		conn_free(c);
		return;
	}
	c->reading = true;
}

/* Discards input while lingering; frees on EOF, error or the linger deadline. */
static void
conn_linger_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	char sink[4096];
	ssize_t n;

	if (what & EV_READ) {
		n = read(fd, sink, sizeof(sink));
		if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
			return;
	}
	conn_free(c);
}

/*
 * Bounds on a peer that sends too little: idle_timeout_ms without a request,
 * partial_timeout_ms with a request begun but not finished (slowloris).
 * Counted from the last request, and from the first byte of the partial one.
 */
static void
conn_watch_input(struct conn *c, bool progressed)
{
	const struct config *cfg = c->set->cfg;
	struct timeval tv;
	unsigned ms;

	if (c->waiter.parked || c->closing || c->eof || conn_pending(c) > 0) {
		/* Not waiting for the peer to send: other bounds apply. */
		evtimer_del(c->idle);
		c->partial = false;
		return;
	}
	if (c->in_len > c->in_off) {
		if (c->partial && !progressed)
			return;		/* the clock runs from the first byte */
		c->partial = true;
		ms = cfg->partial_timeout_ms;
	} else {
		if (!progressed && !c->partial && evtimer_pending(c->idle, NULL))
			return;
		c->partial = false;
		ms = cfg->idle_timeout_ms;
	}
	if (ms == 0) {
		evtimer_del(c->idle);
		return;
	}
	tv = clk_tv_ms(ms);
	evtimer_add(c->idle, &tv);
}

/* The peer sent no request (or no end of one) in time: close. */
static void
conn_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->partial)
		c->set->stats.partial_timeouts++;
	else
		c->set->stats.idle_timeouts++;
	conn_free(c);
}

/* Stop reading; close once buffered requests are answered and flushed. */
static void
conn_shutdown(struct conn *c)
{
	c->eof = true;
	conn_set_reading(c, false);
	conn_process(c);
}

void
conn_set_drain(struct conn_set *set)
{
	struct conn *c, *tmp;

	for (c = TAILQ_FIRST(&set->all); c != NULL; c = tmp) {
		tmp = TAILQ_NEXT(c, entry);
		conn_shutdown(c);
	}
}

void
conn_set_free(struct conn_set *set)
{
	struct conn *c;

	struct conn_refusal *r;

	while ((c = TAILQ_FIRST(&set->all)) != NULL)
		conn_free(c);
	while ((r = TAILQ_FIRST(&set->refusals)) != NULL) {
		TAILQ_REMOVE(&set->refusals, r, entry);
		event_free(r->ev);
		evutil_closesocket(r->fd);
		free(r);
	}
	set->nrefusals = 0;
	peers_free(&set->peers);
	while (set->nspare_in > 0)
		free(set->spare_in[--set->nspare_in]);
	while (set->nspare_out > 0)
		free(set->spare_out[--set->nspare_out]);
	if (set->resume != NULL)
		event_free(set->resume);
	set->resume = NULL;
}

/*
 * Output is pending and the peer does not take it now: wait for it within
 * write_timeout_ms, counted from the last time the replies were all taken,
 * not from the last partial write (a peer reading a byte a second is as
 * stuck as one reading nothing). False (stuck_since_us UINT64_MAX: abort it)
 * once that time is up.
 */
static bool
conn_wait_drain(struct conn *c)
{
	uint64_t now = (uint64_t)clk_mono_us(), stuck,
	    limit = (uint64_t)c->set->cfg->write_timeout_ms * 1000;
	struct timeval tv;

	if (c->stuck_since_us == 0)
		c->stuck_since_us = now;
	stuck = now - c->stuck_since_us;
	if (stuck >= limit) {
		c->set->stats.write_timeouts++;
		c->stuck_since_us = UINT64_MAX;
		return false;
	}
	tv = clk_tv_us(limit - stuck);
	event_add(c->wev, &tv);
	return true;
}

/* Writes what is buffered; false when the connection broke. */
static bool
conn_flush(struct conn *c)
{
	if (c->bev != NULL) {
		struct evbuffer *out = bufferevent_get_output(c->bev);

		/* TLS: the session holds at most about CONN_TLS_CHUNK more than we do. */
		if (c->out_off < c->out_len && evbuffer_get_length(out) <= CONN_TLS_CHUNK) {
			if (evbuffer_add(out, c->out + c->out_off, c->out_len - c->out_off) != 0)
				return false;
			c->out_off = c->out_len;
		}
		if (evbuffer_get_length(out) > 0)
			return conn_wait_drain(c);
	}
	while (c->out_off < c->out_len) {
		ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);

		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return conn_wait_drain(c);
		return false;
	}
	c->stuck_since_us = 0;
	c->out_off = c->out_len = 0;
	/* All flushed: the buffer goes back, idle connections hold none. */
	conn_buf_put(c->set, false, c->out, c->out_cap);
	c->out = NULL;
	c->out_cap = 0;
	return true;
}

/*
 * The loop's cached time changes once per turn: a new turn starts a new
 * budget of max_output_per_turn bytes for all clients together.
 */
static void
conn_turn(struct conn_set *set)
{
	struct timeval now;

	event_base_gettimeofday_cached(set->base, &now);
	if (now.tv_sec != set->turn.tv_sec || now.tv_usec != set->turn.tv_usec) {
		set->turn = now;
		set->turn_bytes = 0;
	}
}

/*
 * Hands complete requests to the adapter until one needs more input or waits,
 * counting them in *handled. True when it stopped for the bounds instead
 * (max_output_bytes, max_requests_per_event, or this turn's
 * max_output_per_turn: then *over_turn).
 */
static bool
conn_run(struct conn *c, unsigned *handled, bool *over_turn)
{
	const struct config *cfg = c->set->cfg;
	enum proto_step r;

	/* The first byte decides, as memcached tells its binary protocol apart. */
	if (c->proto == NULL && c->in_len > c->in_off)
		c->proto = c->in[c->in_off] == '*' ? c->set->resp : c->set->text;
	while (c->proto != NULL && c->in != NULL && !c->closing && !c->waiter.parked) {
		/*
		 * Replies over their bound, or our share of this turn used up: come
		 * back after the next poll. The rest of the input may already be
		 * here, with no read event to come for it.
		 */
		*over_turn = *handled > 0 && c->set->turn_bytes >= cfg->max_output_per_turn;
		if (conn_pending(c) >= cfg->max_output_bytes ||
		    *handled >= cfg->max_requests_per_event || *over_turn)
			return true;
		r = c->proto->one(c, false);
		if (r == PROTO_NEED_MORE || r == PROTO_WAIT)
			break;
		(*handled)++;
		if (r == PROTO_CLOSE)
			c->closing = true;
	}
	return false;
}

/*
 * The peer is done sending and every reply is out: the adapter decides about
 * a partial request, then the connection goes once that reply is flushed.
 */
static void
conn_eof(struct conn *c)
{
	if (c->proto != NULL && c->in_len > c->in_off) {
		if (c->proto->one(c, true) == PROTO_WAIT)
			return;
		c->in_off = c->in_len;
		if (!conn_flush(c)) {
			conn_free(c);
			return;
		}
		if (conn_pending(c) > 0)
			return;
	}
	conn_free(c);
}

/*
 * Hands complete requests to the adapter (up to max_requests_per_event, and
 * one past the turn's max_output_per_turn: every client progresses each turn),
 * writes the replies, and decides whether to keep reading, wait, or close.
 */
static void
conn_process(struct conn *c)
{
	const struct config *cfg = c->set->cfg;
	unsigned handled = 0;
	bool yielded, over_turn = false;
	/* The batch's time, from its read or from when its first request parked. */
	uint64_t t0 = c->parked_us != 0 ? c->parked_us : (uint64_t)clk_mono_us();

	conn_turn(c->set);
	yielded = conn_run(c, &handled, &over_turn);
	if (handled > 0)
		reqlat_add((enum reqlat_proto)c->proto->reqlat,
		    (uint64_t)clk_mono_us() - t0, handled);
	c->parked_us = c->waiter.parked ? t0 : 0;
	if (c->waiter.served)
		conn_served(c);
	if (!conn_flush(c)) {
		if (c->stuck_since_us == UINT64_MAX)
			conn_abort(c);
		else
			conn_free(c);
		return;
	}
	/* Parked or closing: input waits (or is discarded by the linger). */
	if (c->waiter.parked || c->closing)
		conn_set_reading(c, false);
	if (conn_pending(c) > 0) {
		/* Over the bound: stop reading until the peer drains its replies. */
		if (conn_pending(c) >= cfg->max_output_bytes)
			conn_set_reading(c, false);
		conn_watch_input(c, handled > 0);
		return;
	}
	if (c->closing) {
		evtimer_del(c->idle);
		conn_linger(c);
		return;
	}
	if (c->eof && !c->waiter.parked && !yielded) {
		conn_eof(c);
		return;
	}
	if (yielded && over_turn)
		conn_defer(c);			/* after the others with a backlog */
	else if (yielded)	/* after the next poll: the DB gets its turn */
		event_add(c->wev, c->bev != NULL ? &(struct timeval){ 0, 0 } : NULL);
	else if (!c->eof && !c->waiter.parked)
		conn_set_reading(c, c->in_len - c->in_off < CONN_IN_SIZE);
	conn_watch_input(c, handled > 0);
	conn_shrink(c);
}

void
conn_set_tls(struct conn_set *set, struct tls_listener *tls)
{
	set->tls = tls;
}

/*
 * listen_tls: the connection's TLS session (docs/design.md section 7.1), its
 * handshake bounded by tls_handshake_timeout_ms. Input comes decrypted into
 * the session's buffer (at most CONN_IN_SIZE ahead of us) and rev, an event
 * of no socket, takes it; replies go to the session's output, and wev is the
 * write timer. False when out of memory.
 */
static bool
conn_tls_start(struct conn *c)
{
	struct conn_set *set = c->set;

	c->bev = tls_accept(set->tls, set->base, c->fd);
	c->rev = event_new(set->base, -1, 0, conn_read_cb, c);
	c->wev = evtimer_new(set->base, conn_write_cb, c);
	if (c->bev == NULL || c->rev == NULL || c->wev == NULL)
		return false;
	bufferevent_setcb(c->bev, conn_tls_read_cb, conn_tls_write_cb, conn_tls_event_cb, c);
	/*
	 * No read high-watermark: at one, libevent 2.1 stops in the middle of a
	 * TLS record, and when its input drains it waits for the socket, while
	 * the rest of the record sits decrypted in OpenSSL (libevent issue #854).
	 * conn_tls_gate bounds the session's input instead, between records.
	 */
	bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
	bufferevent_setwatermark(c->bev, EV_WRITE, CONN_TLS_CHUNK, 0);
	bufferevent_enable(c->bev, EV_WRITE);
	return true;
}

/*
 * TLS: the session reads the socket while we want input and hold less than
 * CONN_IN_SIZE of its bytes. It stops only between calls of its read
 * callback, after it decrypted every byte of the record it was in, so the
 * input is always in its buffer, where conn_set_reading finds it.
 */
static void
conn_tls_gate(struct conn *c)
{
	bool on = c->reading &&
	    evbuffer_get_length(bufferevent_get_input(c->bev)) < CONN_IN_SIZE;

	if (on == ((bufferevent_get_enabled(c->bev) & EV_READ) != 0))
		return;
	if (on)
		bufferevent_enable(c->bev, EV_READ);
	else
		bufferevent_disable(c->bev, EV_READ);
}

/* TLS: decrypted bytes arrived. */
static void
conn_tls_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	conn_read_cb(c->fd, EV_READ, c);
}

/* TLS: the session's output fell to CONN_TLS_CHUNK or below: more can go. */
static void
conn_tls_write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_process(arg);
}

/* TLS: the handshake finished or failed, the peer closed, or the session broke. */
static void
conn_tls_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	switch (tls_event(c->set->tls, bev, what)) {
	case TLS_EV_UP:
		break;
	case TLS_EV_EOF:
		c->tls_eof = true;
		conn_read_cb(c->fd, EV_READ, c);
		break;
	case TLS_EV_FAIL:
		conn_free(c);
		break;
	}
}

/* Reads from the socket, or from the TLS session: read(2)'s results. */
static ssize_t
conn_recv(struct conn *c, char *p, size_t len)
{
	struct evbuffer *in;

	if (c->bev == NULL)
		return read(c->fd, p, len);
	in = bufferevent_get_input(c->bev);
	if (evbuffer_get_length(in) > 0)
		return evbuffer_remove(in, p, len);
	if (c->tls_eof)
		return 0;
	errno = EAGAIN;
	return -1;
}

/* Reply bytes not yet taken by the peer: ours, and the TLS session's. */
static size_t
conn_pending(const struct conn *c)
{
	size_t n = c->out_len - c->out_off;

	if (c->bev != NULL)
		n += evbuffer_get_length(bufferevent_get_output(c->bev));
	return n;
}

/*
 * The core answered one of c's requests: c goes to the end of the eviction
 * order, in the served rank while tokens are on (docs/design.md section 5,
 * "Connection slots").
 */
static void
conn_served(struct conn *c)
{
	struct conn_set *set = c->set;

	c->waiter.served = false;
	TAILQ_REMOVE(&set->by_service[c->rank], c, service_entry);
	c->rank = set->core->auth != NULL;
	TAILQ_INSERT_TAIL(&set->by_service[c->rank], c, service_entry);
}

/*
 * At max_clients: the connection least recently served (one never served
 * first while tokens are on) gives its slot to a new one, closed with the
 * error its protocol reads; logged once per episode (docs/design.md section 5).
 */
static void
conn_evict(struct conn_set *set)
{
	struct conn *c = TAILQ_FIRST(&set->by_service[0]);
	int64_t now = clk_mono_ms();

	if (c == NULL && (c = TAILQ_FIRST(&set->by_service[1])) == NULL)
		return;
	set->stats.evicted++;
	if (set->evict_last_ms == 0 || now - set->evict_last_ms >= CONN_EVICT_EPISODE_MS)
		log_warn("text/RESP port at max_clients %u: each new connection takes the slot "
		    "of the one longest without a request served (%llu evicted so far; logged "
		    "again after %d s without one)", set->cfg->max_clients,
		    (unsigned long long)set->stats.evicted, CONN_EVICT_EPISODE_MS / 1000);
	set->evict_last_ms = now;
	/*
	 * The line when nothing else is on its way (TLS: a close, as a refusal).
	 * Its input is read first (bounded), so that the close is not a reset.
	 */
	if (c->bev == NULL && conn_pending(c) == 0)
		conn_say(c->fd, c->proto == set->resp, CONN_EVICTED, 16);
	conn_free(c);
}
