/*
 * server.h - the TCP listener, the set of clients, and service-wide counters.
 */
#ifndef IDGEN_SERVER_H
#define IDGEN_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "config.h"
#include "source.h"

struct client;
TAILQ_HEAD(client_list, client);

struct server_counters {
	uint64_t	conns_total;
	uint64_t	conns_rejected;
	uint64_t	requests;
	uint64_t	err_badreq;
	uint64_t	err_range;
	uint64_t	err_unavailable;
	uint64_t	err_clock;
	uint64_t	waits;		/* requests that waited for a refill */
	uint64_t	write_timeouts;	/* peers dropped for not reading (write_timeout_ms) */
	uint64_t	accept_errors;
};

struct server {
	struct event_base	*base;
	const struct config	*cfg;
	struct source		*source;
	struct evconnlistener	*listener;
	struct client_list	 clients;
	struct client_list	 parked;	/* waiting for IDs */
	unsigned		 nclients;
	struct event		*wake;		/* resumes parked clients from the loop */
	struct event		*accept_retry;	/* re-enables accepting after EMFILE */
	time_t			 started;
	bool			 draining;
	struct server_counters	 stats;
};

bool	server_init(struct server *srv, struct event_base *base, const struct config *cfg,
	    struct source *source, char *err, size_t errlen) __attribute__((warn_unused_result));

/* IDs arrived or health changed: parked clients retry on the next loop turn. */
void	server_wake(struct server *srv);

/* Parked clients retry, in the order they parked, after us microseconds. */
void	server_wake_after(struct server *srv, unsigned us);

/* Stops accepting; closes clients once their replies are flushed. */
void	server_drain(struct server *srv);

/* Closes every client and the listener. */
void	server_free(struct server *srv);

#endif
