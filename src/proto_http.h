/*
 * proto_http.h - HTTP/JSON on libevent's evhttp, in the same event loop: an
 * adapter over the command core (docs/design.md section 7).
 *
 * The ID API (/v1/id, /v1/ids, /v1/block, /v1/decode/<id>, /v1/b58/<id>; every
 * ID also as a string), /health, /stats (JSON from the metrics table) and
 * /metrics (Prometheus). Keep-alive, bounded headers and body, a request
 * timeout; a request that must wait is answered later through the core's
 * waiter, never by blocking the loop. Off unless http_port is set.
 */
#ifndef IDGEN_PROTO_HTTP_H
#define IDGEN_PROTO_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <event2/event.h>

#include "config.h"
#include "core.h"

struct metrics_src;
struct proto_http;

/* Binds http_host:http_port; false with a reason naming the setting. */
bool	proto_http_init(struct proto_http **out, struct event_base *base,
	    const struct config *cfg, struct core *core, const struct metrics_src *m,
	    char *err, size_t errlen) __attribute__((warn_unused_result));
void	proto_http_free(struct proto_http *h);

#endif
