/*
 * proto_http.h - HTTP/JSON on libevent's evhttp, in the same event loop: an
 * adapter over the command core (docs/design.md section 7).
 *
 * The ID API (/v1/id, /v1/ids, /v1/block, /v1/decode/<id>, /v1/b58/<id>; every
 * ID as a string, and as a number only below PROTO_HTTP_EXACT_LIMIT), /health, /stats (JSON from the metrics table) and
 * /metrics (Prometheus). Keep-alive, bounded headers and body, a request
 * timeout; a request that must wait is answered later through the core's
 * waiter, never by blocking the loop. Off unless http_port is set.
 */
#ifndef IDGEN_PROTO_HTTP_H
#define IDGEN_PROTO_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/http.h>

#include "config.h"
#include "core.h"

struct json_t;
struct metrics_src;
struct proto_http;

/*
 * The first ID a JavaScript number (an IEEE-754 double) cannot hold exactly:
 * 2^53, where the Snowflake region starts. An ID at or above it has no numeric
 * JSON member, only its _str one (docs/design.md section 7).
 */
#define PROTO_HTTP_EXACT_LIMIT	(UINT64_C(1) << 53)

/* The endpoints; the ID API comes first, the rest are answered here. */
enum proto_http_page {
	PROTO_HTTP_ID,
	PROTO_HTTP_IDS,
	PROTO_HTTP_BLOCK,
	PROTO_HTTP_DECODE,
	PROTO_HTTP_B58,
	PROTO_HTTP_HEALTH,
	PROTO_HTTP_STATS,
	PROTO_HTTP_METRICS,
};

/* Where a request goes: a page and its core command, or a refusal to send. */
struct proto_http_route {
	int			 status;	/* 0 when routed, else 400, 404 or 405 */
	const char		*reason;	/* the refusal: status line, JSON code, message */
	const char		*code;
	const char		*why;
	const char		*allow;		/* the Allow header of a 405 */
	enum proto_http_page	 page;
	enum core_cmd		 cmd;
	bool			 has_arg;	/* arg is the command's argument */
	char			 arg[64];	/* ?count= or the rest of the path, truncated */
};

/* Binds http_host:http_port; false with a reason naming the setting. */
bool	proto_http_init(struct proto_http **out, struct event_base *base,
	    const struct config *cfg, struct core *core, const struct metrics_src *m,
	    char *err, size_t errlen) __attribute__((warn_unused_result));
void	proto_http_free(struct proto_http *h);

/*
 * Routes a request by method, path and query as evhttp parsed them (NULL when
 * absent): no I/O, the same answer for the same request (fuzz/fuzz_http.c).
 */
void	proto_http_route(enum evhttp_cmd_type method, const char *path, const char *query,
	    struct proto_http_route *r);

/*
 * The JSON body of a core result for an ID API page (no I/O): id/id_str,
 * ids/ids_str, first/first_str/count, the decode and b58 fields. A numeric
 * member only when exact in JavaScript: id, first or decode's id below 2^53;
 * ids only when every ID in it is. The _str members are always present.
 * NULL when out of memory; the caller owns the result (json_decref).
 */
struct json_t	*proto_http_result(enum proto_http_page page, const struct core_result *res);

#endif
