/*
 * listener.c - accept connections (conn.c keeps them within max_clients); pause
 * on accept errors.
 */
#include "listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"

static void	listener_accept_cb(struct evconnlistener *ev, evutil_socket_t fd,
		    struct sockaddr *sa, int salen, void *arg);
static void	listener_accept_error_cb(struct evconnlistener *ev, void *arg);
static void	listener_accept_retry_cb(evutil_socket_t fd, short what, void *arg);

/* Binds the listener (an IP address, v4 or v6). */
bool
listener_init(struct listener *l, struct event_base *base, const struct config *cfg,
    struct conn_set *conns, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	int sslen = sizeof(ss);
	char addr[300];

	memset(l, 0, sizeof(*l));
	l->base = base;
	l->cfg = cfg;
	l->conns = conns;
	snprintf(addr, sizeof(addr), strchr(cfg->listen_host, ':') ? "[%s]:%u" : "%s:%u",
	    cfg->listen_host, cfg->listen_port);
	memset(&ss, 0, sizeof(ss));
	if (evutil_parse_sockaddr_port(addr, (struct sockaddr *)&ss, &sslen) != 0) {
		snprintf(err, errlen, "listen_host '%s' is not an IP address", cfg->listen_host);
		return false;
	}
	l->accept_retry = evtimer_new(base, listener_accept_retry_cb, l);
	l->ev = evconnlistener_new_bind(base, listener_accept_cb, l,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC, 1024,
	    (struct sockaddr *)&ss, sslen);
	if (l->ev == NULL || l->accept_retry == NULL) {
		snprintf(err, errlen, "cannot listen on %s: %s (listen_host/listen_port)", addr,
		    strerror(errno));
		return false;
	}
	evconnlistener_set_error_cb(l->ev, listener_accept_error_cb);
	log_info("listening on %s (text protocol and RESP)", addr);
	return true;
}

/*
 * A new connection: while draining it gets one line and is closed; at
 * max_clients it takes a slot from a connection that is not being served
 * (conn_new, docs/design.md section 5).
 */
static void
listener_accept_cb(struct evconnlistener *ev, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct listener *l = arg;
	int one = 1;

	(void)ev;
	(void)salen;
	if (l->draining) {
		l->stats.rejected++;
		conn_refuse(l->conns, fd, "shutting down");
		return;
	}
	evutil_make_socket_nonblocking(fd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	conn_new(l->conns, fd, sa);
}

/*
 * accept() failed, e.g. out of descriptors: pause accepting for a moment
 * instead of spinning on a listener that stays readable; log once per pause.
 */
static void
listener_accept_error_cb(struct evconnlistener *ev, void *arg)
{
	struct listener *l = arg;
	struct timeval tv = { 0, 100000 };
	int err = EVUTIL_SOCKET_ERROR();

	l->stats.accept_errors++;
	log_warn("accept failed: %s (clients: %llu, max_clients %u); pausing accepts 100 ms",
	    evutil_socket_error_to_string(err), (unsigned long long)l->conns->stats.open,
	    l->cfg->max_clients);
	evconnlistener_disable(ev);
	evtimer_add(l->accept_retry, &tv);
}

/* The accept pause is over. */
static void
listener_accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct listener *l = arg;

	(void)fd;
	(void)what;
	if (!l->draining)
		evconnlistener_enable(l->ev);
}

/* Stops accepting; every connection finishes what it has buffered, then closes. */
void
listener_drain(struct listener *l)
{
	l->draining = true;
	if (l->ev != NULL)
		evconnlistener_disable(l->ev);
	conn_set_drain(l->conns);
}

/* Closes the listening socket. */
void
listener_free(struct listener *l)
{
	if (l->ev != NULL)
		evconnlistener_free(l->ev);
	if (l->accept_retry != NULL)
		event_free(l->accept_retry);
	l->ev = NULL;
	l->accept_retry = NULL;
}
