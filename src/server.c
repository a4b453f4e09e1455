/*
 * server.c - accept connections within max_clients and wake clients waiting for IDs.
 */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"
#include "log.h"

static void	server_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
		    struct sockaddr *sa, int salen, void *arg);
static void	server_accept_error_cb(struct evconnlistener *l, void *arg);
static void	server_wake_cb(evutil_socket_t fd, short what, void *arg);
static void	server_accept_retry_cb(evutil_socket_t fd, short what, void *arg);

/* Binds the listener (an IP address, v4 or v6) and sets up the client lists. */
bool
server_init(struct server *srv, struct event_base *base, const struct config *cfg,
    struct source *source, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	int sslen = sizeof(ss);
	char addr[300];

	memset(srv, 0, sizeof(*srv));
	srv->base = base;
	srv->cfg = cfg;
	srv->source = source;
	srv->started = time(NULL);
	TAILQ_INIT(&srv->clients);
	TAILQ_INIT(&srv->parked);
	snprintf(addr, sizeof(addr), strchr(cfg->listen_host, ':') ? "[%s]:%u" : "%s:%u",
	    cfg->listen_host, cfg->listen_port);
	memset(&ss, 0, sizeof(ss));
	if (evutil_parse_sockaddr_port(addr, (struct sockaddr *)&ss, &sslen) != 0) {
		snprintf(err, errlen, "listen_host '%s' is not an IP address", cfg->listen_host);
		return false;
	}
	srv->wake = event_new(base, -1, 0, server_wake_cb, srv);
	srv->accept_retry = evtimer_new(base, server_accept_retry_cb, srv);
	srv->listener = evconnlistener_new_bind(base, server_accept_cb, srv,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC, 1024,
	    (struct sockaddr *)&ss, sslen);
	if (srv->listener == NULL || srv->wake == NULL || srv->accept_retry == NULL) {
		snprintf(err, errlen, "cannot listen on %s: %s (listen_host/listen_port)", addr,
		    strerror(errno));
		return false;
	}
	evconnlistener_set_error_cb(srv->listener, server_accept_error_cb);
	log_info("listening on %s", addr);
	return true;
}

/* A new connection: over max_clients it gets one line and is closed. */
static void
server_accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	static const char full[] = "ERR UNAVAILABLE too many connections (max_clients)\n";
	static const char bye[] = "ERR UNAVAILABLE shutting down\n";
	struct server *srv = arg;
	int one = 1;

	(void)l;
	(void)sa;
	(void)salen;
	if (srv->draining || srv->nclients >= srv->cfg->max_clients) {
		const char *msg = srv->draining ? bye : full;

		srv->stats.conns_rejected++;
		if (write(fd, msg, strlen(msg)) < 0) {
			/* Nothing more to tell a peer we are rejecting anyway. */
		}
		evutil_closesocket(fd);
		return;
	}
	evutil_make_socket_nonblocking(fd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	client_new(srv, fd);
}

/*
 * accept() failed, e.g. out of descriptors: pause accepting for a moment
 * instead of spinning on a listener that stays readable; log once per pause.
 */
static void
server_accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct server *srv = arg;
	struct timeval tv = { 0, 100000 };
	int err = EVUTIL_SOCKET_ERROR();

	srv->stats.accept_errors++;
	log_warn("accept failed: %s (clients: %u, max_clients %u); pausing accepts 100 ms",
	    evutil_socket_error_to_string(err), srv->nclients, srv->cfg->max_clients);
	evconnlistener_disable(l);
	evtimer_add(srv->accept_retry, &tv);
}

/* The accept pause is over. */
static void
server_accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;

	(void)fd;
	(void)what;
	if (!srv->draining)
		evconnlistener_enable(srv->listener);
}

/* Defers resuming parked clients to a clean turn of the loop. */
void
server_wake(struct server *srv)
{
	if (!TAILQ_EMPTY(&srv->parked))
		event_active(srv->wake, EV_TIMEOUT, 0);
}

/*
 * A shared wake-up at the next millisecond for clients waiting on the
 * Snowflake sequence: they retry in the order they parked, which is fair,
 * where one timer each would fire in no particular order.
 */
void
server_wake_after(struct server *srv, unsigned us)
{
	struct timeval tv = { us / 1000000, us % 1000000 }, now, at, pending;

	/* Keep the earliest of the wake-ups asked for. */
	evutil_gettimeofday(&now, NULL);
	evutil_timeradd(&now, &tv, &at);
	if (evtimer_pending(srv->wake, &pending) && evutil_timercmp(&pending, &at, <=))
		return;
	evtimer_add(srv->wake, &tv);
}

/* Resumes parked clients in order; each either finishes or parks again. */
static void
server_wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;
	struct client *c;
	unsigned n = 0, i;

	(void)fd;
	(void)what;
	/* Count first: a client that parks again goes to the tail and must not loop. */
	TAILQ_FOREACH(c, &srv->parked, park_entry)
		n++;
	for (i = 0; i < n && (c = TAILQ_FIRST(&srv->parked)) != NULL; i++)
		client_resume(c);
}

/* Stops accepting; every client finishes what it has buffered, then closes. */
void
server_drain(struct server *srv)
{
	struct client *c, *tmp;

	srv->draining = true;
	if (srv->listener != NULL)
		evconnlistener_disable(srv->listener);
	for (c = TAILQ_FIRST(&srv->clients); c != NULL; c = tmp) {
		tmp = TAILQ_NEXT(c, entry);
		client_shutdown(c);
	}
}

/* Closes everything. */
void
server_free(struct server *srv)
{
	struct client *c;

	while ((c = TAILQ_FIRST(&srv->clients)) != NULL)
		client_free(c);
	if (srv->listener != NULL)
		evconnlistener_free(srv->listener);
	if (srv->wake != NULL)
		event_free(srv->wake);
	if (srv->accept_retry != NULL)
		event_free(srv->accept_retry);
	srv->listener = NULL;
	srv->wake = NULL;
	srv->accept_retry = NULL;
}
