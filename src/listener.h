/*
 * listener.h - the TCP listener of the text and RESP protocols: accepts (the
 * connection set keeps max_clients), pauses on accept errors, stops for draining. Accepted sockets go
 * to the connection set (conn.h); the listener never touches a connection.
 */
#ifndef IDGEN_LISTENER_H
#define IDGEN_LISTENER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "config.h"
#include "conn.h"

struct listener_counters {
	uint64_t	rejected;	/* accepted while draining */
	uint64_t	accept_errors;
};

struct listener {
	struct event_base		*base;
	const struct config		*cfg;
	struct conn_set			*conns;
	struct evconnlistener		*ev;
	struct event			*accept_retry;	/* re-enables accepting after EMFILE */
	bool				 draining;
	struct listener_counters	 stats;
};

bool	listener_init(struct listener *l, struct event_base *base, const struct config *cfg,
	    struct conn_set *conns, char *err, size_t errlen) __attribute__((warn_unused_result));

/* Stops accepting; every connection closes once its replies are flushed. */
void	listener_drain(struct listener *l);

void	listener_free(struct listener *l);

#endif
