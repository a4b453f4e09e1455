/*
 * proto_grpc.h - gRPC over HTTP/2 cleartext (prior knowledge), through nghttp2
 * on the same event loop: an adapter over the command core (docs/design.md
 * section 7).
 *
 * hispeeddesign.idgen.v1.IdGeneratorService (GenerateId, GenerateIdBatch)
 * exactly as proto/idgen.proto (the namespace in the request metadata
 * idgen-namespace, as the .proto has no field for it), and
 * grpc.health.v1.Health/Check. Statuses come
 * from the core's error mapping; a request that must wait parks a waiter and
 * is answered later, or DEADLINE_EXCEEDED when its grpc-timeout passes first.
 * Bounds like the text port's: grpc_max_connections (at it, a new connection
 * takes the slot of the one least recently served), grpc_max_connections_per_ip
 * (closed at accept), grpc_request_timeout_ms (a request whose END_STREAM never
 * comes is answered DEADLINE_EXCEEDED and reset), grpc_idle_timeout_ms (counted
 * from the last progress of a request, so stalled streams do not hold a
 * connection open). Off unless grpc_port is set.
 */
#ifndef IDGEN_PROTO_GRPC_H
#define IDGEN_PROTO_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "config.h"
#include "core.h"

struct proto_grpc;

struct grpc_counters {
	uint64_t	open;			/* connections open */
	uint64_t	rejected;		/* at grpc_max_connections, none to evict */
	uint64_t	evicted;		/* slots given to a new connection */
	uint64_t	rejected_per_ip;	/* over grpc_max_connections_per_ip */
	uint64_t	request_timeouts;	/* streams ended by grpc_request_timeout_ms */
	uint64_t	idle_timeouts;		/* connections closed by grpc_idle_timeout_ms */
};

bool	proto_grpc_init(struct proto_grpc **out, struct event_base *base,
	    const struct config *cfg, struct core *core, char *err, size_t errlen)
	    __attribute__((warn_unused_result));
void	proto_grpc_free(struct proto_grpc *g);

struct tls_listener;

/*
 * grpc_tls: every connection from now on is TLS with ALPN h2, counted against
 * the connection limits at accept, before its handshake; nothing when g is NULL.
 */
void	proto_grpc_set_tls(struct proto_grpc *g, struct tls_listener *tls);

/* The counters, for the metrics table (they live as long as g). */
const struct grpc_counters *proto_grpc_counters(const struct proto_grpc *g);

/* The adapter without a listener; false when out of memory (*out is then NULL). */
bool	proto_grpc_new(struct proto_grpc **out, struct event_base *base,
	    const struct config *cfg, struct core *core) __attribute__((warn_unused_result));

/*
 * One connection over memory instead of a socket (fuzz/fuzz_h2.c): the same
 * session, callbacks and replies. proto_grpc_mem_open starts it (our SETTINGS
 * are then queued); proto_grpc_mem_recv feeds it the client's bytes and moves
 * everything the server sends to sent, as a peer reading at once would. Both
 * return false once the connection is closed (and freed), as a socket's would be.
 */
bool	proto_grpc_mem_open(struct proto_grpc *g) __attribute__((warn_unused_result));
bool	proto_grpc_mem_recv(struct proto_grpc *g, const uint8_t *data, size_t len,
	    struct evbuffer *sent) __attribute__((warn_unused_result));

#endif
