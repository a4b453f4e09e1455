/*
 * client.h - one protocol connection: buffered reads, pipelined requests, replies.
 */
#ifndef IDGEN_CLIENT_H
#define IDGEN_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "proto.h"

#define CLIENT_IN_SIZE	(4 * PROTO_LINE_MAX)	/* holds at least one maximal line */
#define CLIENT_OUT_INLINE 2048			/* small replies need no allocation */

struct server;

struct client {
	TAILQ_ENTRY(client)	 entry;		/* srv->clients */
	TAILQ_ENTRY(client)	 park_entry;	/* srv->parked */
	struct server		*srv;
	evutil_socket_t		 fd;
	struct event		*rev;
	struct event		*wev;
	struct event		*park;		/* bounded wait for IDs */
	char			*out;		/* out_inline, or a heap buffer for bursts */
	size_t			 out_len;
	size_t			 out_off;
	size_t			 out_cap;
	size_t			 in_off;	/* first unprocessed byte */
	size_t			 in_len;
	bool			 eof;		/* the peer sent FIN */
	bool			 closing;	/* close once the output is flushed */
	bool			 parked;
	bool			 waited;	/* the parked request's refill wait expired */
	bool			 timed;		/* the refill-wait timer (park) is armed */
	bool			 reading;
	char			 in[CLIENT_IN_SIZE];
	char			 out_inline[CLIENT_OUT_INLINE];
};


/* Takes over an accepted socket; false (socket closed) when out of memory. */
bool	client_new(struct server *srv, evutil_socket_t fd);

/* Re-runs a parked client's pending requests (called from the loop). */
void	client_resume(struct client *c);

/* Closes after flushing what is already buffered; for draining. */
void	client_shutdown(struct client *c);

/* Closes now. */
void	client_free(struct client *c);

#endif
