/*
 * proto_grpc.h - gRPC over HTTP/2 cleartext (prior knowledge), through nghttp2
 * on the same event loop: an adapter over the command core (docs/design.md
 * section 7).
 *
 * hispeeddesign.idgen.v1.IdGeneratorService (GenerateId, GenerateIdBatch)
 * exactly as proto/idgen.proto, and grpc.health.v1.Health/Check. Statuses come
 * from the core's error mapping; a request that must wait parks a waiter and
 * is answered later, or DEADLINE_EXCEEDED when its grpc-timeout passes first.
 * Off unless grpc_port is set.
 */
#ifndef IDGEN_PROTO_GRPC_H
#define IDGEN_PROTO_GRPC_H

#include <stdbool.h>
#include <stddef.h>

#include <event2/event.h>

#include "config.h"
#include "core.h"

struct proto_grpc;

bool	proto_grpc_init(struct proto_grpc **out, struct event_base *base,
	    const struct config *cfg, struct core *core, char *err, size_t errlen)
	    __attribute__((warn_unused_result));
void	proto_grpc_free(struct proto_grpc *g);

#endif
