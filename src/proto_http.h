/*
 * proto_http.h - HTTP/JSON on libevent's evhttp, in the same event loop: an
 * adapter over the command core (docs/design.md section 7).
 *
 * The ID API (/v1/id, /v1/ids, /v1/block, /v1/decode/<id>, /v1/b58/<id>; every
 * ID as a string, and as a number only below PROTO_HTTP_EXACT_LIMIT), /health,
 * /stats (JSON from the metrics table), /metrics (Prometheus) and
 * /v1/openapi.json (docs/openapi.json, built in). GET and HEAD everywhere, POST
 * on the ID API (its count in the query or a JSON body {"count": N}), OPTIONS
 * everywhere (CORS preflight when http_cors_origins lists the Origin); JSON by
 * default, the text protocol's lines when Accept prefers text/plain.
 * Keep-alive, bounded headers and body, a request timeout; a request that must
 * wait is answered later through the core's waiter, never by blocking the loop.
 * Off unless http_port is set.
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

/*
 * The method type evhttp 2.1 gives a request whose method it does not know
 * (PROPFIND, FOO): a bit outside enum evhttp_cmd_type. Allowing it lets such a
 * request reach us for a JSON 501 instead of evhttp's HTML page
 * (docs/protocols.md, HTTP errors).
 */
#define PROTO_HTTP_METHOD_UNKNOWN	(1u << 15)

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
	PROTO_HTTP_OPENAPI,
};

/* The form of an ID API reply, by the request's Accept. */
enum proto_http_form {
	PROTO_HTTP_FORM_JSON,		/* the default */
	PROTO_HTTP_FORM_TEXT,		/* text/plain: the text protocol's lines */
};

/* A request as evhttp parsed it; a string is NULL when absent. */
struct proto_http_in {
	enum evhttp_cmd_type	 method;
	const char		*path;
	const char		*query;
	const char		*content_type;	/* the request's Content-Type header */
	const char		*accept;	/* ... and its Accept header */
	const char		*body;		/* bodylen bytes, not terminated */
	size_t			 bodylen;
};

/* Where a request goes: a page and its core command, or a refusal to send. */
struct proto_http_route {
	int			 status;	/* 0 when routed, else 400, 404, 405, 415, 501 */
	const char		*reason;	/* the refusal: status line, JSON code, message */
	const char		*code;
	char			 why[160];
	const char		*allow;		/* a known path's methods (Allow), else NULL */
	enum proto_http_page	 page;
	enum core_cmd		 cmd;
	enum proto_http_form	 form;		/* of the reply, refusals included */
	bool			 head;		/* HEAD: the GET reply without its body */
	bool			 options;	/* OPTIONS: 204 with Allow, CORS preflight */
	bool			 has_arg;	/* arg is the command's argument */
	char			 arg[64];	/* count (query or body) or the rest of the path */
	bool			 has_ns;	/* ?ns= named the namespace (ID API): ns */
	char			 ns[CORE_NS_NAME_MAX + 2];	/* as sent, for the core to
						   judge; cut after 49 bytes, still too long */
	size_t			 nslen;
};

/* The OpenAPI document, docs/openapi.json as built in (Makefile). */
extern const char	proto_http_openapi[];
extern const size_t	proto_http_openapi_len;

/* Binds http_host:http_port; false with a reason naming the setting. */
bool	proto_http_init(struct proto_http **out, struct event_base *base,
	    const struct config *cfg, struct core *core, const struct metrics_src *m,
	    char *err, size_t errlen) __attribute__((warn_unused_result));
void	proto_http_free(struct proto_http *h);

struct tls_listener;

/*
 * http_tls: every connection from now on is HTTPS, its handshake bounded by
 * http_timeout_ms (evhttp's own timeouts); nothing when h or tls is NULL.
 */
void	proto_http_set_tls(struct proto_http *h, struct tls_listener *tls);

/*
 * Routes a request as evhttp parsed it: the page and method, the reply's form
 * (Accept), the count from the query or, on POST, from a JSON body (Content-Type
 * application/json, an object whose only member is an integer count; {} on the
 * other ID pages), the namespace of /v1/id, /v1/ids and /v1/block from the
 * query's ns (the first one; its name judged by the core); anything else a
 * refusal with its reason. No I/O, the same answer for the same request
 * (fuzz/fuzz_http.c).
 */
void	proto_http_route(const struct proto_http_in *in, struct proto_http_route *r);

/*
 * The form an Accept header asks for: text only when text/plain (or the
 * text/ or any-type wildcard ranges) has a higher q than application/json (or
 * its wildcards); JSON when absent, tied or neither is acceptable.
 */
enum proto_http_form	proto_http_accept(const char *accept);

/*
 * Whether origin is in allowed (http_cors_origins: origins separated by commas
 * or spaces, compared without regard to case; "*" allows any). An empty list
 * or a NULL origin: false.
 */
bool	proto_http_cors_allowed(const char *allowed, const char *origin);

/*
 * The text/plain body of an ID API result, as the text protocol answers: an
 * ID per line (id, ids), "first count" (block), the DECODE line, the base58
 * form (proto_text_result). Sets *len; NULL when out of memory; the caller
 * frees it.
 */
char	*proto_http_text(enum core_cmd cmd, const struct core_result *res, size_t *len);

/*
 * The /v1/ids JSON line written directly at p (no JSON objects built, no copy:
 * the caller writes into the reply's buffer): {"ids":[...],"ids_str":[...]},
 * the numeric array only when every ID in it is exact in JavaScript, as
 * jansson's compact text of that object, and a newline; test_proto_http
 * checks it byte for byte against jansson (decimal digits only: no string
 * needs escaping). p holds proto_http_ids_cap(res->count) bytes; returns the
 * line's length (docs/benchmark.md).
 */
size_t	proto_http_ids_cap(unsigned count);
size_t	proto_http_ids_write(const struct core_result *res, char *p);

/*
 * The JSON body of a core result for an ID API page but /v1/ids (no I/O;
 * proto_http_ids_write writes that one): id/id_str, first/first_str/count,
 * the decode and b58 fields. A numeric member only when exact in JavaScript:
 * id, first or decode's id below 2^53. The _str members are always present.
 * NULL when out of memory; the caller owns the result (json_decref).
 */
struct json_t	*proto_http_result(enum proto_http_page page, const struct core_result *res);

#endif
