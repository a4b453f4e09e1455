/*
 * fuzz_http.c - libFuzzer harness: the HTTP API's routing and query parsing
 * (proto_http_route) on any request line, split as evhttp splits one (method,
 * URI up to the last space, version) and parsed by evhttp's URI parser, then
 * once more on the raw bytes around the first '?'. What follows the first
 * newline is the request's body (a POST's JSON, Content-Type application/json)
 * and its Accept header. A routed ID request runs in
 * a core without databases (a tier whose servers are down, one buffered block),
 * so what the route carries must be what the core bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/http.h>

#include "b58.h"
#include "clk.h"
#include "core.h"
#include "layout.h"
#include "lease.h"
#include "pool.h"
#include "proto_http.h"
#include "snowflake.h"
#include "source.h"
#include "tier.h"

#define FUZZ_B		(UINT64_C(1) << 20)	/* block size of the hand-filled pool */

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void	fuzz_resume(void *arg);
static bool	fuzz_setup(void);
static enum evhttp_cmd_type fuzz_method(const char *m);
static void	fuzz_check(enum evhttp_cmd_type method, const char *path, const char *query);

/* The input after its first line: the body and Accept of every request. */
static const char	*fuzz_body;
static size_t		 fuzz_bodylen;

/* The core's state: no database, no lease, one block of ticket IDs per input. */
static struct {
	struct event_base	*base;
	struct tier		 tier;
	struct snowflake	 gen;
	struct lease		 lease;
	struct source		 src;
	struct core		 core;
	struct core_waiter	 w;
} rig;

/* Nothing parks here (no server is up, the pool always holds enough). */
static void
fuzz_resume(void *arg)
{
	(void)arg;
	__builtin_trap();
}

/* Builds the rig once, as tests/unit/test_core.c does. */
static bool
fuzz_setup(void)
{
	struct snowflake_config sc = { 50, 1000 };

	rig.base = event_base_new();
	if (rig.base == NULL)
		return false;
	pool_init(&rig.tier.seq.pool);
	rig.tier.srv[SERVER_ODD].state = TICKET_DOWN;
	rig.tier.srv[SERVER_EVEN].state = TICKET_DOWN;
	rig.tier.srv[SERVER_ODD].name = "odd";
	rig.tier.srv[SERVER_EVEN].name = "even";
	rig.tier.block_size = FUZZ_B;
	snowflake_init(&rig.gen, &sc);
	rig.lease.state = LEASE_NONE;
	rig.lease.want.fresh = true;		/* keeps lease_clock_stepped() off the event loop */
	source_init(&rig.src, &rig.tier, &rig.gen, &rig.lease, clk_real_us, 50);
	return core_init(&rig.core, rig.base, &rig.src) &&
	    core_waiter_init(&rig.w, &rig.core, fuzz_resume, NULL);
}

/* evhttp's method names (case-sensitive); any other is its unknown method. */
static enum evhttp_cmd_type
fuzz_method(const char *m)
{
	static const struct {
		const char		*name;
		enum evhttp_cmd_type	 type;
	} methods[] = {
		{ "GET", EVHTTP_REQ_GET }, { "POST", EVHTTP_REQ_POST },
		{ "HEAD", EVHTTP_REQ_HEAD }, { "PUT", EVHTTP_REQ_PUT },
		{ "DELETE", EVHTTP_REQ_DELETE }, { "OPTIONS", EVHTTP_REQ_OPTIONS },
		{ "TRACE", EVHTTP_REQ_TRACE }, { "CONNECT", EVHTTP_REQ_CONNECT },
		{ "PATCH", EVHTTP_REQ_PATCH },
	};
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(m, methods[i].name) == 0)
			return methods[i].type;
	return (enum evhttp_cmd_type)PROTO_HTTP_METHOD_UNKNOWN;
}

/* Routes one request and checks the route, then runs an ID request in the core. */
static void
fuzz_check(enum evhttp_cmd_type method, const char *path, const char *query)
{
	static const char *const prefixes[] = {
		[PROTO_HTTP_DECODE] = "/v1/decode/", [PROTO_HTTP_B58] = "/v1/b58/",
	};
	static struct core_result res;
	struct proto_http_route r, again;
	struct core_req req;
	uint64_t n = 0;
	size_t i, len;

	struct proto_http_in in = {
		method, path, query, "application/json", fuzz_body, fuzz_body, fuzz_bodylen,
	};

	proto_http_route(&in, &r);
	proto_http_route(&in, &again);
	if (memcmp(&r, &again, sizeof(r)) != 0)
		__builtin_trap();	/* pure: the same request, the same route */
	if (r.form != PROTO_HTTP_FORM_JSON && r.form != PROTO_HTTP_FORM_TEXT)
		__builtin_trap();
	if (r.status != 0) {
		if ((r.status != 400 && r.status != 404 && r.status != 405 && r.status != 415 &&
		    r.status != 501) ||
		    r.reason == NULL || r.code == NULL || r.why[0] == '\0' ||
		    memchr(r.why, '\0', sizeof(r.why)) == NULL ||
		    (r.status == 405 && r.allow == NULL) ||
		    (r.status == 404 || r.status == 501) != (r.allow == NULL) ||
		    (r.status == 501) != ((unsigned)method == PROTO_HTTP_METHOD_UNKNOWN))
			__builtin_trap();
		return;
	}
	if (r.options)
		return;
	if (r.page > PROTO_HTTP_OPENAPI || memchr(r.arg, '\0', sizeof(r.arg)) == NULL)
		__builtin_trap();
	/* Only the API pages take an argument, and only they reach the core. */
	if (r.has_arg != (r.page == PROTO_HTTP_IDS || r.page == PROTO_HTTP_BLOCK ||
	    r.page == PROTO_HTTP_DECODE || r.page == PROTO_HTTP_B58) ||
	    (!r.has_arg && r.arg[0] != '\0'))
		__builtin_trap();
	/* ?ns= only on the ID pages that take it, terminated, cut to its buffer. */
	if ((r.has_ns && r.page > PROTO_HTTP_BLOCK) || r.nslen >= sizeof(r.ns) ||
	    r.ns[r.nslen] != '\0' || (!r.has_ns && r.nslen != 0))
		__builtin_trap();
	if (r.page >= PROTO_HTTP_HEALTH)
		return;
	len = strlen(r.arg);
	if (r.page == PROTO_HTTP_DECODE || r.page == PROTO_HTTP_B58) {
		/* The argument is the rest of the path, never empty, cut at 63 bytes. */
		i = strlen(prefixes[r.page]);
		if (path == NULL || strncmp(path, prefixes[r.page], i) != 0 || len == 0 ||
		    strncmp(path + i, r.arg, len) != 0 ||
		    (len < sizeof(r.arg) - 1 && path[i + len] != '\0'))
			__builtin_trap();
	}
	/* One block of ticket IDs, fresh for each request. */
	pool_init(&rig.tier.seq.pool);
	if (!pool_add(&rig.tier.seq.pool, 2 * FUZZ_B, FUZZ_B))
		__builtin_trap();
	rig.tier.seq.demand = false;
	req.cmd = r.cmd;
	req.arg = r.has_arg ? r.arg : NULL;
	req.arglen = r.has_arg ? len : 0;
	req.sess = NULL;
	req.ns = r.has_ns ? r.ns : NULL;
	req.nslen = r.nslen;
	if (core_exec(&rig.core, &rig.w, &req, &res) != CORE_DONE)
		__builtin_trap();
	if (res.err != CORE_OK) {
		if (res.err != CORE_ERR_BADREQ && res.err != CORE_ERR_RANGE &&
		    (res.err != CORE_ERR_NONS || !r.has_ns))
			__builtin_trap();
		return;
	}
	/* Served: no namespace, or the default one (no other is served here). */
	if (r.has_ns && strcmp(r.ns, "default") != 0)
		__builtin_trap();
	if (r.page == PROTO_HTTP_IDS || r.page == PROTO_HTTP_BLOCK) {
		/* A count served is the decimal the query gave, within its bounds. */
		for (i = 0; i < len; i++) {
			if (r.arg[i] < '0' || r.arg[i] > '9' || n > UINT64_MAX / 10)
				__builtin_trap();
			n = n * 10 + (uint64_t)(r.arg[i] - '0');
		}
		if (len == 0 || n != res.count || n < 1 ||
		    n > (r.page == PROTO_HTTP_IDS ? CORE_IDS_MAX : CORE_BLOCK_MAX))
			__builtin_trap();
		for (i = 1; r.page == PROTO_HTTP_IDS && i < res.count; i++)
			if (res.ids[i] <= res.ids[i - 1])
				__builtin_trap();
	} else if (r.page == PROTO_HTTP_ID) {
		if (res.count != 1 || layout_region(res.ids[0]) != LAYOUT_TICKET)
			__builtin_trap();
	} else if (layout_region(res.dec.id) == LAYOUT_INVALID || strlen(res.dec.b58) != B58_LEN)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	const uint8_t *nl = memchr(data, '\n', size);
	size_t len = nl != NULL ? (size_t)(nl - data) : size;
	char *line, *uri, *version, *q, *body;
	enum evhttp_cmd_type method;
	struct evhttp_uri *u;

	if (!ready && !(ready = fuzz_setup()))
		__builtin_trap();
	/* The rest, as a C string (Accept) that is also the body. */
	body = malloc(nl != NULL ? size - len : 1);
	if (body == NULL)
		return 0;
	fuzz_bodylen = nl != NULL ? size - len - 1 : 0;
	memcpy(body, nl != NULL ? nl + 1 : data, fuzz_bodylen);
	body[fuzz_bodylen] = '\0';
	fuzz_body = body;
	/* The request line as evhttp reads it: CRLF or LF gone, a C string. */
	if (len > 0 && data[len - 1] == '\r')
		len--;
	line = malloc(len + 1);
	if (line == NULL) {
		free(body);
		return 0;
	}
	memcpy(line, data, len);
	line[len] = '\0';
	len = strlen(line);
	while (len > 0 && line[len - 1] == ' ')
		line[--len] = '\0';
	uri = strchr(line, ' ');
	version = uri != NULL ? strrchr(uri + 1, ' ') : NULL;
	if (uri == NULL || version == NULL || version == uri + 1) {
		free(line);
		free(body);
		return 0;	/* evhttp answers 400 itself */
	}
	*uri++ = '\0';
	*version = '\0';
	method = fuzz_method(line);
	/* What the callback sees: evhttp's parse of the URI (CONNECT: an authority). */
	if (method == EVHTTP_REQ_CONNECT)
		fuzz_check(method, "", NULL);
	else if ((u = evhttp_uri_parse_with_flags(uri, EVHTTP_URI_NONCONFORMANT)) != NULL) {
		fuzz_check(method, evhttp_uri_get_path(u), evhttp_uri_get_query(u));
		evhttp_uri_free(u);
	}
	/* And the route on the raw bytes: any path, any query. */
	q = strchr(uri, '?');
	if (q != NULL)
		*q++ = '\0';
	fuzz_check(method, uri, q);
	free(line);
	free(body);
	return 0;
}
