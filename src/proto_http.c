/*
 * proto_http.c - the HTTP/JSON adapter: route, run in the core, reply JSON.
 */
#include "proto_http.h"

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "clk.h"
#include "fmt.h"
#include "log.h"
#include "metrics.h"
#include "proto_text.h"
#include "reqlat.h"
#include "tls.h"

/* Every ticket ID has its number; no Snowflake ID has one. */
_Static_assert(PROTO_HTTP_EXACT_LIMIT == LAYOUT_TICKET_LIMIT,
    "the exact-number limit is the ticket region's end");

struct proto_http {
	struct evhttp		*ev;
	struct core		*core;
	const struct metrics_src *m;
	const char		*cors;		/* http_cors_origins; "" is off */
	bool			 open_metrics;	/* auth_open_metrics: /metrics, /health */
	char			 max_age[12];	/* http_cors_max_age_s, as sent */
	struct tls_listener	*tls;		/* http_tls: every connection's session */
};

/* A request in the core: kept until it is answered (it may wait). */
struct http_call {
	struct core_waiter		 w;
	struct proto_http		*h;
	struct evhttp_request		*req;
	struct evhttp_connection	*evcon;
	struct proto_http_route		 rt;		/* its page, form, argument, ns */
	struct core_req			 creq;
	struct auth_sess		 sess;		/* its Bearer token, if any */
	bool				 probe;		/* HEAD on a page that takes IDs: the
							 * token checked, no ID taken */
	uint64_t			 begun_us;	/* it came (monotonic; reqlat.h) */
};

struct proto_http_path;

static void	http_gen_cb(struct evhttp_request *req, void *arg);
static void	http_run(void *arg);
static void	http_probe(struct http_call *c);
static void	http_gone(struct evhttp_connection *evcon, void *arg);
static void	http_done(struct http_call *c);
static void	http_send(struct evhttp_request *req, int status, const char *reason,
		    const char *content_type, struct evbuffer *buf);
static struct evbuffer *http_buf(const void *p, size_t len);
static int	http_json_out(const char *p, size_t len, void *buf);
static void	http_send_json(struct evhttp_request *req, int status, const char *reason,
		    json_t *body);
static void	http_send_error(struct evhttp_request *req, enum proto_http_form form,
		    enum core_err err, const char *why);
static void	http_send_status(struct evhttp_request *req, enum proto_http_form form,
		    int status, const char *reason, const char *code, const char *why);
static void	http_cors(struct proto_http *h, struct evhttp_request *req,
		    const struct proto_http_route *rt);
static bool	http_body(const struct proto_http_in *in, bool count,
		    struct proto_http_route *r);
static bool	http_refuse(struct proto_http_route *r, int status, const char *reason,
		    const char *why);
static bool	http_media_is(const char *value, size_t len, const char *type);
static unsigned	http_q(const char *params, size_t len);
static json_t	*http_decode(const struct decode *d, const char *id_str);
static void	http_health(struct proto_http *h, struct evhttp_request *req);
static void	http_stats(struct proto_http *h, struct evhttp_request *req);
static void	http_stat_member(const struct metric_def *def, const char *name, int server,
		    const struct metric_value *v, void *arg);
static json_t	*http_exact(uint64_t id);
static void	http_send_ids(struct evhttp_request *req, const struct core_result *res);
static bool	http_needs_token(const struct proto_http *h, enum proto_http_page page);
static void	http_bearer(struct http_call *c);
static bool	http_page(struct proto_http *h, struct evhttp_request *req,
		    enum proto_http_page page);
static struct bufferevent *http_tls_bev_cb(struct event_base *base, void *arg);
static struct bufferevent *http_bev_cb(struct event_base *base, void *arg);
static const struct proto_http_path *proto_http_path_of(const char *path);
static void	proto_http_query(const struct proto_http_in *in,
		    const struct proto_http_path *p, struct proto_http_route *r);
static bool	proto_http_argument(const struct proto_http_in *in,
		    const struct proto_http_path *p, const char *path,
		    struct proto_http_route *r);

/*
 * What one write() of a cleartext connection may send. libevent's default,
 * 16 KiB, split a /v1/ids?count=1000 reply (18-23 KB) into two writes and two
 * loop turns (docs/benchmark.md, row 10); the largest ID reply is under this.
 */
#define PROTO_HTTP_WRITE_MAX	65536

bool
proto_http_init(struct proto_http **out, struct event_base *base, const struct config *cfg,
    struct core *core, const struct metrics_src *m, char *err, size_t errlen)
{
	struct proto_http *h;
	struct timeval tv = clk_tv_ms(cfg->http_timeout_ms);
	struct evhttp_bound_socket *bound;
	evutil_socket_t fd;
	int one = 1;

	*out = NULL;
	if (cfg->http_port == 0)
		return true;
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	h->core = core;
	h->m = m;
	h->open_metrics = cfg->auth_open_metrics != 0;
	h->cors = cfg->http_cors_origins;
	snprintf(h->max_age, sizeof(h->max_age), "%u", cfg->http_cors_max_age_s);
	h->ev = evhttp_new(base);
	bound = h->ev != NULL ? evhttp_bind_socket_with_handle(h->ev, cfg->http_host,
	    (ev_uint16_t)cfg->http_port) : NULL;
	if (bound == NULL) {
		snprintf(err, errlen, "cannot listen for HTTP on %s:%u (http_host/http_port)",
		    cfg->http_host, cfg->http_port);
		proto_http_free(h);
		return false;
	}
	/*
	 * No Nagle on the connections (Linux's accept() copies it from the
	 * listener): evhttp writes a reply's headers and a large body apart, and
	 * the body would wait for the ACK of the headers, which the client
	 * delays up to 40 ms: /v1/ids?count=1000 was held to one reply per 40 ms
	 * per connection (docs/benchmark.md).
	 */
	fd = evhttp_bound_socket_get_fd(bound);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	evhttp_set_bevcb(h->ev, http_bev_cb, h);
	/*
	 * Every method reaches us, an unknown one too, so a wrong one gets 405 with
	 * Allow and an unknown one 501, both in JSON (evhttp's own are HTML).
	 */
	evhttp_set_allowed_methods(h->ev, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH |
	    EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | PROTO_HTTP_METHOD_UNKNOWN);
	evhttp_set_max_headers_size(h->ev, cfg->http_max_header_bytes);
	evhttp_set_max_body_size(h->ev, cfg->http_max_body_bytes);
	evhttp_set_timeout_tv(h->ev, &tv);
	evhttp_set_default_content_type(h->ev, "application/json");
	evhttp_set_gencb(h->ev, http_gen_cb, h);
	log_info("HTTP on %s:%u: /v1/id, /v1/ids, /v1/block, /v1/decode, /v1/b58, /health, "
	    "/stats, /metrics, /v1/openapi.json; CORS %s", cfg->http_host, cfg->http_port,
	    cfg->http_cors_origins[0] != '\0' ? cfg->http_cors_origins : "off");
	*out = h;
	return true;
}

/* http_tls: each connection's TLS session, its socket set by evhttp. */
static struct bufferevent *
http_tls_bev_cb(struct event_base *base, void *arg)
{
	struct proto_http *h = arg;

	return tls_accept(h->tls, base, -1);
}

/* A cleartext connection's bufferevent, as evhttp makes it, with PROTO_HTTP_WRITE_MAX. */
static struct bufferevent *
http_bev_cb(struct event_base *base, void *arg)
{
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);

	(void)arg;
	if (bev != NULL)
		(void)bufferevent_set_max_single_write(bev, PROTO_HTTP_WRITE_MAX);
	return bev;
}

void
proto_http_set_tls(struct proto_http *h, struct tls_listener *tls)
{
	if (h == NULL || tls == NULL)
		return;
	h->tls = tls;
	evhttp_set_bevcb(h->ev, http_tls_bev_cb, h);
}

void
proto_http_free(struct proto_http *h)
{
	if (h == NULL)
		return;
	if (h->ev != NULL)
		evhttp_free(h->ev);
	free(h);
}

/*
 * An ID as a JSON number, only when exact as a JavaScript number (below
 * 2^53), else NULL: json_pack's "o*" leaves the member out. Its decimal
 * string member is always there, so no client can read an inexact one.
 */
static json_t *
http_exact(uint64_t id)
{
	return id < PROTO_HTTP_EXACT_LIMIT ? json_integer((json_int_t)id) : NULL;
}

size_t
proto_http_ids_cap(unsigned count)
{
	/* Per ID at most 20 digits and a comma, twice, and the string's quotes. */
	return 40 + (size_t)count * 44;
}

size_t
proto_http_ids_write(const struct core_result *res, char *p)
{
	bool exact = true;
	size_t n = 0;
	unsigned i;

	for (i = 0; i < res->count; i++)
		exact = exact && res->ids[i] < PROTO_HTTP_EXACT_LIMIT;
	p[n++] = '{';
	if (exact) {
		memcpy(p + n, "\"ids\":[", 7);
		n += 7;
		n += fmt_ids_framed(p + n, res->ids, res->count, "", "", ',', NULL);
		p[n++] = ']';
		p[n++] = ',';
	}
	memcpy(p + n, "\"ids_str\":[", 11);
	n += 11;
	n += fmt_ids_framed(p + n, res->ids, res->count, "\"", "\"", ',', NULL);
	memcpy(p + n, "]}\n", 3);
	return n + 3;
}

/*
 * /v1/ids's reply: the line written straight into the reply's buffer (no
 * string of its own to copy in).
 */
static void
http_send_ids(struct evhttp_request *req, const struct core_result *res)
{
	struct evbuffer *buf = evbuffer_new();
	struct evbuffer_iovec v;

	if (buf != NULL && evbuffer_reserve_space(buf, (ev_ssize_t)proto_http_ids_cap(res->count),
	    &v, 1) == 1) {
		v.iov_len = proto_http_ids_write(res, v.iov_base);
		evbuffer_commit_space(buf, &v, 1);
	} else if (buf != NULL) {
		evbuffer_free(buf);
		buf = NULL;
	}
	http_send(req, 200, "OK", "application/json", buf);
}

/* The body of an ID API page: the numeric members only where exact in JavaScript. */
json_t *
proto_http_result(enum proto_http_page page, const struct core_result *res)
{
	char num[24];

	if (page != PROTO_HTTP_IDS && page < PROTO_HTTP_HEALTH)
		snprintf(num, sizeof(num), "%" PRIu64, page == PROTO_HTTP_ID ? res->ids[0] :
		    page == PROTO_HTTP_BLOCK ? res->first : res->dec.id);
	switch (page) {
	case PROTO_HTTP_ID:
		return json_pack("{s:o*,s:s}", "id", http_exact(res->ids[0]), "id_str", num);
	case PROTO_HTTP_BLOCK:
		return json_pack("{s:o*,s:s,s:I}", "first", http_exact(res->first), "first_str", num,
		    "count", (json_int_t)res->count);
	case PROTO_HTTP_DECODE:
		return http_decode(&res->dec, num);
	case PROTO_HTTP_B58:
		return json_pack("{s:o*,s:s,s:s}", "id", http_exact(res->dec.id), "id_str", num,
		    "b58", res->dec.b58);
	default:	/* IDS: proto_http_ids_write */
		return json_object();
	}
}

/* DECODE as JSON fields; datacenter_id/worker_id are the 5+5 split of the worker. */
static json_t *
http_decode(const struct decode *d, const char *id_str)
{
	json_t *region = d->regions ? json_integer(d->area) : NULL;

	if (d->region == LAYOUT_TICKET)
		return json_pack("{s:o*,s:s,s:s,s:s,s:I,s:s,s:o*}", "id", http_exact(d->id),
		    "id_str", id_str, "b58", d->b58, "source", "ticket", "block",
		    (json_int_t)d->ticket, "server", d->server, "region", region);
	return json_pack("{s:o*,s:s,s:s,s:s,s:I,s:s,s:I,s:I,s:I,s:I,s:o*}", "id",
	    http_exact(d->id), "id_str", id_str, "b58", d->b58, "source", "snowflake",
	    "timestamp_ms", (json_int_t)d->unix_ms, "time", d->iso, "worker",
	    (json_int_t)d->worker, "datacenter_id", (json_int_t)d->datacenter_id, "worker_id",
	    (json_int_t)d->worker_id, "seq", (json_int_t)d->seq, "region", region);
}

/* The text/plain body of an ID API result: the text protocol's reply, IDs one per line. */
char *
proto_http_text(enum core_cmd cmd, const struct core_result *res, size_t *len)
{
	char *t = malloc(PROTO_TEXT_RESULT_MAX(res->count));

	*len = t != NULL ? proto_text_result(t, cmd, res, '\n') : 0;
	return t;
}

/*
 * Sends buf (freed here; NULL: out of memory, a 500) with the headers every
 * reply carries. HEAD gets the headers GET would, Content-Length included
 * (evhttp leaves a HEAD reply's length to us), and no body.
 */
static void
http_send(struct evhttp_request *req, int status, const char *reason,
    const char *content_type, struct evbuffer *buf)
{
	struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
	char clen[24];

	if (buf == NULL) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	evhttp_add_header(hd, "Content-Type", content_type);
	evhttp_add_header(hd, "Cache-Control", "no-store");
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
		snprintf(clen, sizeof(clen), "%zu", evbuffer_get_length(buf));
		evhttp_add_header(hd, "Content-Length", clen);
		evbuffer_drain(buf, evbuffer_get_length(buf));
	}
	evhttp_send_reply(req, status, reason, buf);
	evbuffer_free(buf);
}

/* A buffer holding a copy of len bytes at p; NULL when p is, or out of memory. */
static struct evbuffer *
http_buf(const void *p, size_t len)
{
	struct evbuffer *buf = p != NULL ? evbuffer_new() : NULL;

	if (buf != NULL && evbuffer_add(buf, p, len) != 0) {
		evbuffer_free(buf);
		buf = NULL;
	}
	return buf;
}

/* json_dump_callback's output, into the reply's buffer. */
static int
http_json_out(const char *p, size_t len, void *buf)
{
	return evbuffer_add(buf, p, len);
}

/* Sends body (consumed) as one line of JSON. */
static void
http_send_json(struct evhttp_request *req, int status, const char *reason, json_t *body)
{
	struct evbuffer *buf = body != NULL ? evbuffer_new() : NULL;

	if (buf != NULL && (json_dump_callback(body, http_json_out, buf, JSON_COMPACT) != 0 ||
	    evbuffer_add(buf, "\n", 1) != 0)) {
		evbuffer_free(buf);
		buf = NULL;
	}
	json_decref(body);
	http_send(req, status, reason, "application/json", buf);
}

/*
 * A refusal: {"error": {"code": ..., "message": ...}}, or in text form the
 * text protocol's "ERR <code> <message>" line.
 */
static void
http_send_status(struct evhttp_request *req, enum proto_http_form form, int status,
    const char *reason, const char *code, const char *why)
{
	struct evbuffer *buf;

	if (form == PROTO_HTTP_FORM_TEXT) {
		if ((buf = evbuffer_new()) != NULL &&
		    evbuffer_add_printf(buf, "ERR %s %s\n", code, why) < 0) {
			evbuffer_free(buf);
			buf = NULL;
		}
		http_send(req, status, reason, "text/plain; charset=utf-8", buf);
		return;
	}
	http_send_json(req, status, reason, json_pack("{s:{s:s,s:s}}", "error", "code", code,
	    "message", why));
}

/* A core error, mapped by the core's one table. */
static void
http_send_error(struct evhttp_request *req, enum proto_http_form form, enum core_err err,
    const char *why)
{
	const struct core_err_info *e = core_err_info(err);
	char secs[12];

	/* RFC 6750: a Bearer challenge, and which way the token fell short. */
	if (e->http_status == 401 || e->http_status == 403)
		evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate",
		    err == CORE_ERR_NOAUTH ? "Bearer realm=\"idgen\"" :
		    err == CORE_ERR_WRONGPASS ? "Bearer realm=\"idgen\", error=\"invalid_token\"" :
		    "Bearer realm=\"idgen\", error=\"insufficient_scope\"");
	/* ... and Basic's (the token as the password), which curl -u answers. */
	if (e->http_status == 401)
		evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate",
		    "Basic realm=\"idgen\", charset=\"UTF-8\"");
	if (e->retry_after > 0) {
		snprintf(secs, sizeof(secs), "%u", e->retry_after);
		evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", secs);
	}
	http_send_status(req, form, (int)e->http_status, e->http_reason, e->code, why);
}

/*
 * CORS headers for an allowed Origin (none otherwise): the origin on every
 * reply, and on a preflight (OPTIONS with Access-Control-Request-Method) the
 * path's methods, the request headers a client may send and how long to cache.
 */
static void
http_cors(struct proto_http *h, struct evhttp_request *req, const struct proto_http_route *rt)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
	const char *origin = evhttp_find_header(in, "Origin");

	if (!proto_http_cors_allowed(h->cors, origin))
		return;
	evhttp_add_header(hd, "Access-Control-Allow-Origin", strcmp(h->cors, "*") == 0 ?
	    "*" : origin);
	evhttp_add_header(hd, "Vary", "Origin");
	if (rt->options && rt->allow != NULL &&
	    evhttp_find_header(in, "Access-Control-Request-Method") != NULL) {
		evhttp_add_header(hd, "Access-Control-Allow-Methods", rt->allow);
		evhttp_add_header(hd, "Access-Control-Allow-Headers", h->core->auth != NULL ?
		    "Content-Type, Accept, Authorization" : "Content-Type, Accept");
		evhttp_add_header(hd, "Access-Control-Max-Age", h->max_age);
	} else
		evhttp_add_header(hd, "Access-Control-Expose-Headers", "Retry-After");
}

/* The connection closed while its request waited: forget the request. */
static void
http_gone(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	http_done(arg);
}

static void
http_done(struct http_call *c)
{
	if (c->evcon != NULL)
		evhttp_connection_set_closecb(c->evcon, NULL, NULL);
	core_waiter_free(&c->w);
	free(c);
}

/* Runs (or re-runs, when resumed) a request in the core. */
static void
http_run(void *arg)
{
	struct http_call *c = arg;
	struct core_result *res = malloc(sizeof(*res));
	enum core_status st;
	char *text;
	size_t len;

	if (res == NULL) {
		evhttp_send_error(c->req, 500, "out of memory");
		http_done(c);
		return;
	}
	/* A page outside the core (/stats, /health, /metrics) and a probe only check the token. */
	if (c->rt.page >= PROTO_HTTP_HEALTH || (c->probe && c->h->core->auth != NULL))
		st = core_auth(c->h->core, &c->w, &c->sess, c->probe ? AUTH_PERM_ALL : AUTH_PERM_RO,
		    res);
	else if (c->probe) {
		res->err = CORE_OK;	/* no tokens: nothing to check */
		st = CORE_DONE;
	}
	else
		st = core_exec(c->h->core, &c->w, &c->creq, res);
	if (st == CORE_PENDING) {
		/* Answered later; if the client goes away first, forget it. */
		if (c->evcon != NULL)
			evhttp_connection_set_closecb(c->evcon, http_gone, c);
		free(res);
		return;
	}
	if (res->err != CORE_OK || (c->probe && !core_take_args(c->h->core, &c->creq, res)))
		http_send_error(c->req, c->rt.form, res->err, res->why);
	else if (c->probe)
		http_probe(c);
	else if (c->rt.page >= PROTO_HTTP_HEALTH)
		(void)http_page(c->h, c->req, c->rt.page);
	else if (c->rt.form == PROTO_HTTP_FORM_TEXT) {
		text = proto_http_text(c->rt.cmd, res, &len);
		http_send(c->req, 200, "OK", "text/plain; charset=utf-8", http_buf(text, len));
		free(text);
	} else if (c->rt.page == PROTO_HTTP_IDS)
		http_send_ids(c->req, res);	/* the hot batch page, written directly */
	else
		http_send_json(c->req, 200, "OK", proto_http_result(c->rt.page, res));
	reqlat_add(REQLAT_HTTP, (uint64_t)clk_mono_us() - c->begun_us, 1);
	free(res);
	http_done(c);
}

/*
 * HEAD on /v1/id, /v1/ids or /v1/block: a monitor's probe takes no ID. 200
 * with GET's headers while IDs can be served, else GET's 503; no body, and no
 * length (GET's would depend on the IDs).
 */
static void
http_probe(struct http_call *c)
{
	struct evkeyvalq *hd = evhttp_request_get_output_headers(c->req);
	struct core_health hl;

	core_health(c->h->core, &hl);
	if (!hl.ok) {
		http_send_error(c->req, c->rt.form, CORE_ERR_UNAVAILABLE, hl.reason);
		return;
	}
	evhttp_add_header(hd, "Content-Type", c->rt.form == PROTO_HTTP_FORM_TEXT ?
	    "text/plain; charset=utf-8" : "application/json");
	evhttp_add_header(hd, "Cache-Control", "no-store");
	evhttp_send_reply(c->req, 200, "OK", NULL);
}

/* One "name": value member of /stats, typed by the metrics table. */
static void
http_stat_member(const struct metric_def *def, const char *name, int server,
    const struct metric_value *v, void *arg)
{
	(void)def;
	(void)server;
	json_object_set_new(arg, name, v->is_text ? json_string(v->text) :
	    v->num < (UINT64_C(1) << 53) ? json_integer((json_int_t)v->num) :
	    json_sprintf("%" PRIu64, v->num));
}

static void
http_stats(struct proto_http *h, struct evhttp_request *req)
{
	json_t *o = json_object();

	metrics_walk(h->m, http_stat_member, o);
	http_send_json(req, 200, "OK", o);
}

/* 200 while IDs can be served (buffered, ticket or fallback), else 503; and why. */
static void
http_health(struct proto_http *h, struct evhttp_request *req)
{
	struct core_health hl;
	json_t *o;

	core_health(h->core, &hl);
	o = json_pack("{s:b,s:s,s:s,s:I,s:s,s:I,s:s}", "ok", hl.ok, "mode", hl.mode,
	    "mode_reason", hl.reason, "ids_buffered", (json_int_t)hl.ids_buffered,
	    "lease", hl.lease, "lease_window_end", (json_int_t)hl.lease_window_end,
	    "witness_pending", hl.witness_pending);
	/* With tokens: whether the last load of the file applied every line. */
	if (o != NULL && hl.auth != NULL)
		json_object_set_new(o, "auth_tokens_file", json_string(hl.auth));
	if (o != NULL && hl.auth_why != NULL)
		json_object_set_new(o, "auth_tokens_file_error", json_string(hl.auth_why));
	http_send_json(req, hl.ok ? 200 : 503, hl.ok ? "OK" : "Service Unavailable", o);
}

/* Fills r's refusal (why is copied); false, for the caller to return. */
static bool
http_refuse(struct proto_http_route *r, int status, const char *reason, const char *why)
{
	r->status = status;
	r->reason = reason;
	r->code = "BADREQ";
	snprintf(r->why, sizeof(r->why), "%s", why);
	return false;
}

/* Whether a header value's first len bytes are the media type type (any case). */
static bool
http_media_is(const char *value, size_t len, const char *type)
{
	size_t n = strlen(type);

	while (len > 0 && (*value == ' ' || *value == '\t')) {
		value++;
		len--;
	}
	while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t'))
		len--;
	return len == n && strncasecmp(value, type, n) == 0;
}

/* The q of a media range's parameters (";q=0.5;..."), in thousandths; 1000 without. */
static unsigned
http_q(const char *params, size_t len)
{
	const char *p = params, *end = params + len;
	unsigned q = 1000, scale = 100;

	while ((p = memchr(p, ';', (size_t)(end - p))) != NULL) {
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p < 2 || (*p != 'q' && *p != 'Q') || p[1] != '=')
			continue;
		p += 2;
		if (p >= end || (*p != '0' && *p != '1'))
			return 0;	/* not a qvalue: the range is not acceptable */
		q = (unsigned)(*p++ - '0') * 1000;
		if (p < end && *p == '.')
			for (p++; p < end && *p >= '0' && *p <= '9' && scale > 0; p++, scale /= 10)
				q += (unsigned)(*p - '0') * scale;
		return q > 1000 ? 1000 : q;
	}
	return q;
}

enum proto_http_form
proto_http_accept(const char *accept)
{
	/* Per form, the q of its most specific matching range (3 exact, 2 type, 1 any). */
	unsigned q[2] = { 0, 0 }, spec[2] = { 0, 0 }, rq, rs, f;
	const char *p = accept, *comma, *semi;
	size_t len, tlen;

	if (accept == NULL)
		return PROTO_HTTP_FORM_JSON;
	for (; *p != '\0'; p = *comma != '\0' ? comma + 1 : comma) {
		comma = strchr(p, ',');
		if (comma == NULL)
			comma = p + strlen(p);
		len = (size_t)(comma - p);
		semi = memchr(p, ';', len);
		tlen = semi != NULL ? (size_t)(semi - p) : len;
		rq = http_q(p + tlen, len - tlen);
		for (f = 0; f < 2; f++) {
			if (http_media_is(p, tlen, f == 0 ? "application/json" : "text/plain"))
				rs = 3;
			else if (http_media_is(p, tlen, f == 0 ? "application/*" : "text/*"))
				rs = 2;
			else if (http_media_is(p, tlen, "*/*"))
				rs = 1;
			else
				continue;
			if (rs > spec[f]) {
				spec[f] = rs;
				q[f] = rq;
			}
		}
	}
	return q[1] > q[0] ? PROTO_HTTP_FORM_TEXT : PROTO_HTTP_FORM_JSON;
}

bool
proto_http_cors_allowed(const char *allowed, const char *origin)
{
	const char *p = allowed;
	size_t n, olen;

	if (allowed == NULL || origin == NULL || *origin == '\0')
		return false;
	olen = strlen(origin);
	while (*p != '\0') {
		p += strspn(p, ", \t");
		n = strcspn(p, ", \t");
		if ((n == 1 && *p == '*') || (n == olen && strncasecmp(p, origin, n) == 0))
			return true;
		p += n;
	}
	return false;
}

/*
 * A POST's JSON body: an object with an integer count where the page takes one
 * (count), else an empty one. False with r's refusal.
 */
static bool
http_body(const struct proto_http_in *in, bool count, struct proto_http_route *r)
{
	const char *ct = in->content_type;
	json_error_t jerr;
	json_t *o, *v;
	const char *key;
	bool ok = false;

	if (ct == NULL || !http_media_is(ct, strcspn(ct, ";"), "application/json"))
		return http_refuse(r, 415, "Unsupported Media Type", "a request body must be "
		    "JSON (Content-Type: application/json)");
	o = json_loadb(in->body, in->bodylen, JSON_REJECT_DUPLICATES, &jerr);
	if (o == NULL) {
		http_refuse(r, 400, "Bad Request", "");
		snprintf(r->why, sizeof(r->why), "the body is not valid JSON: %.100s (column %d)",
		    jerr.text, jerr.column);
		return false;
	}
	json_object_foreach(o, key, v) {
		if (!count || strcmp(key, "count") != 0) {
			http_refuse(r, 400, "Bad Request", count ? "unknown member in the body: "
			    "it takes only {\"count\": N}" : "unknown member in the body: this path "
			    "takes no arguments ({} or no body)");
			goto out;
		}
	}
	if (!json_is_object(o))
		http_refuse(r, 400, "Bad Request", "the body must be a JSON object");
	else if ((v = json_object_get(o, "count")) == NULL)
		ok = true;
	else if (!json_is_integer(v))
		http_refuse(r, 400, "Bad Request", "count must be a JSON integer");
	else if (r->has_arg)
		http_refuse(r, 400, "Bad Request", "count is given twice: in the query and in "
		    "the body");
	else {
		snprintf(r->arg, sizeof(r->arg), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		r->has_arg = true;
		ok = true;
	}
out:
	json_decref(o);
	return ok;
}

/* A path of the API and what answers it. */
struct proto_http_path {
	const char		*path;
	bool			 prefix;	/* the rest of the path is the argument */
	enum proto_http_page	 page;
	enum core_cmd		 cmd;
	bool			 count;		/* takes a count */
	bool			 ns;		/* takes ?ns= (the core's takes_ns) */
};

static const struct proto_http_path proto_http_paths[] = {
	{ "/v1/id", false, PROTO_HTTP_ID, CORE_CMD_ID, false, true },
	{ "/v1/ids", false, PROTO_HTTP_IDS, CORE_CMD_IDS, true, true },
	{ "/v1/block", false, PROTO_HTTP_BLOCK, CORE_CMD_BLOCK, true, true },
	{ "/v1/decode/", true, PROTO_HTTP_DECODE, CORE_CMD_DECODE, false, false },
	{ "/v1/b58/", true, PROTO_HTTP_B58, CORE_CMD_B58, false, false },
	{ "/health", false, PROTO_HTTP_HEALTH, CORE_CMD_PING, false, false },
	{ "/stats", false, PROTO_HTTP_STATS, CORE_CMD_STATS, false, false },
	{ "/metrics", false, PROTO_HTTP_METRICS, CORE_CMD_STATS, false, false },
	{ "/v1/openapi.json", false, PROTO_HTTP_OPENAPI, CORE_CMD_PING, false, false },
};

/* The row of a path; NULL when there is none. */
static const struct proto_http_path *
proto_http_path_of(const char *path)
{
	for (size_t i = 0; i < sizeof(proto_http_paths) / sizeof(proto_http_paths[0]); i++) {
		const struct proto_http_path *p = &proto_http_paths[i];
		size_t n = strlen(p->path);

		if (p->prefix ? strncmp(path, p->path, n) == 0 && path[n] != '\0' :
		    strcmp(path, p->path) == 0)
			return p;
	}
	return NULL;
}

/*
 * The query's count and ns, for the paths that take them (the first of each;
 * other keys are ignored). ns is kept as sent, cut to the size of r->ns: a
 * name that long is too long for the grammar either way.
 */
static void
proto_http_query(const struct proto_http_in *in, const struct proto_http_path *p,
    struct proto_http_route *r)
{
	struct evkeyvalq params;
	const char *v;

	TAILQ_INIT(&params);
	if (in->query != NULL && evhttp_parse_query_str(in->query, &params) == 0) {
		if (p->count && (v = evhttp_find_header(&params, "count")) != NULL) {
			snprintf(r->arg, sizeof(r->arg), "%s", v);
			r->has_arg = true;
		}
		if (p->ns && (v = evhttp_find_header(&params, "ns")) != NULL) {
			r->nslen = strnlen(v, sizeof(r->ns) - 1);
			memcpy(r->ns, v, r->nslen);
			r->ns[r->nslen] = '\0';
			r->has_ns = true;
		}
	}
	evhttp_clear_headers(&params);
}

/* The argument: ?count=N, the path's tail, or a POST's JSON body. False: refused. */
static bool
proto_http_argument(const struct proto_http_in *in, const struct proto_http_path *p,
    const char *path, struct proto_http_route *r)
{
	bool body;

	if (p->count || p->ns)
		proto_http_query(in, p, r);
	else if (p->prefix) {
		snprintf(r->arg, sizeof(r->arg), "%s", path + strlen(p->path));
		r->has_arg = true;
	}
	/* Only a POST's body is read; GET's was always ignored. */
	body = in->method == EVHTTP_REQ_POST && in->bodylen > 0;
	if (body && !http_body(in, p->count, r))
		return false;
	if (p->count && !r->has_arg)
		return http_refuse(r, 400, "Bad Request", body ? "count is required: ?count=N "
		    "or a JSON body {\"count\": N}" : "count=N is required");
	return true;
}

void
proto_http_route(const struct proto_http_in *in, struct proto_http_route *r)
{
	const char *path = in->path != NULL ? in->path : "";
	const struct proto_http_path *p = proto_http_path_of(path);
	enum evhttp_cmd_type m = in->method;
	bool api = p != NULL && p->page < PROTO_HTTP_HEALTH;

	memset(r, 0, sizeof(*r));
	/* The ID API's replies, refusals included, honour Accept; our pages are JSON. */
	if (api || p == NULL)
		r->form = proto_http_accept(in->accept);
	if ((unsigned)m == PROTO_HTTP_METHOD_UNKNOWN) {
		/* Whatever the path: the method itself is not HTTP we know (RFC 9110 15.6.2). */
		http_refuse(r, 501, "Not Implemented", "unknown method: use GET, HEAD, POST "
		    "or OPTIONS");
		return;
	}
	if (p == NULL) {
		http_refuse(r, 404, "Not Found", "no such path: the API is /v1/id, "
		    "/v1/ids?count=N, /v1/block?count=N, /v1/decode/<id>, /v1/b58/<id>; also "
		    "/health, /stats, /metrics");
		r->code = "NOTFOUND";
		return;
	}
	r->page = p->page;
	r->cmd = p->cmd;
	r->allow = api ? "GET, HEAD, POST, OPTIONS" : "GET, HEAD, OPTIONS";
	r->head = m == EVHTTP_REQ_HEAD;
	r->options = m == EVHTTP_REQ_OPTIONS;
	if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD && m != EVHTTP_REQ_OPTIONS &&
	    (!api || m != EVHTTP_REQ_POST)) {
		http_refuse(r, 405, "Method Not Allowed", api ? "use GET, HEAD or POST" :
		    "use GET or HEAD");
		return;
	}
	if (!r->options)
		(void)proto_http_argument(in, p, path, r);
}

/* Answers one request: a refusal, a page of ours, or the ID API through the core. */
static void
http_gen_cb(struct evhttp_request *req, void *arg)
{
	struct proto_http *h = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	struct evkeyvalq *hd = evhttp_request_get_input_headers(req);
	struct evbuffer *body = evhttp_request_get_input_buffer(req);
	struct proto_http_in in;
	struct proto_http_route rt;
	struct http_call *c;

	in.method = evhttp_request_get_command(req);
	in.path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	in.query = uri != NULL ? evhttp_uri_get_query(uri) : NULL;
	in.content_type = evhttp_find_header(hd, "Content-Type");
	in.accept = evhttp_find_header(hd, "Accept");
	in.bodylen = evbuffer_get_length(body);
	in.body = in.bodylen > 0 ? (const char *)evbuffer_pullup(body, -1) : NULL;
	if (in.bodylen > 0 && in.body == NULL) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	proto_http_route(&in, &rt);
	http_cors(h, req, &rt);
	if (rt.status == 405 || (rt.status == 0 && rt.options))
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", rt.allow);
	if (rt.status != 0) {
		core_count(h->core, CORE_ERR_BADREQ);
		http_send_status(req, rt.form, rt.status, rt.reason, rt.code, rt.why);
		return;
	}
	if (rt.options) {
		evhttp_send_reply(req, 204, "No Content", NULL);
		return;
	}
	if (!http_needs_token(h, rt.page) && http_page(h, req, rt.page))
		return;
	c = calloc(1, sizeof(*c));
	if (c == NULL || !core_waiter_init(&c->w, h->core, http_run, c)) {
		free(c);
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	c->begun_us = (uint64_t)clk_mono_us();
	c->h = h;
	c->req = req;
	c->evcon = evhttp_request_get_connection(req);
	c->rt = rt;
	c->creq.cmd = rt.cmd;
	c->probe = rt.head && rt.page < PROTO_HTTP_HEALTH && (rt.cmd == CORE_CMD_ID ||
	    rt.cmd == CORE_CMD_IDS || rt.cmd == CORE_CMD_BLOCK);
	if (rt.has_arg) {
		c->creq.arg = c->rt.arg;
		c->creq.arglen = strlen(c->rt.arg);
	}
	if (rt.has_ns) {
		c->creq.ns = c->rt.ns;
		c->creq.nslen = rt.nslen;
	}
	c->creq.sess = &c->sess;
	if (h->core->auth != NULL)
		http_bearer(c);
	http_run(c);
}

/* Whether a page needs a token: every one with auth_tokens_file, but the open ones. */
static bool
http_needs_token(const struct proto_http *h, enum proto_http_page page)
{
	if (h->core->auth == NULL || page == PROTO_HTTP_OPENAPI)
		return false;
	if (page == PROTO_HTTP_HEALTH || page == PROTO_HTTP_METRICS)
		return !h->open_metrics;
	return true;
}

/*
 * The request's "Authorization: Bearer <token>", or "Basic" with the token
 * as the password (curl -u name:token; the user name judged as RESP's AUTH
 * judges it: "default", or the token's name; none when empty), if any, for
 * the core to check.
 */
static void
http_bearer(struct http_call *c)
{
	struct evkeyvalq *hd = evhttp_request_get_input_headers(c->req);
	const char *v = evhttp_find_header(hd, "Authorization"), *tok, *user;
	struct bufferevent *bev = c->evcon != NULL ?
	    evhttp_connection_get_bufferevent(c->evcon) : NULL;
	char basic[AUTH_BASIC_MAX];
	size_t toklen, userlen;

	auth_sess_init(&c->sess, bev != NULL ? (int)bufferevent_getfd(bev) : -1);
	if (v != NULL && auth_bearer(v, strlen(v), &tok, &toklen))
		auth_sess_present(&c->sess, tok, toklen, NULL, 0, c->h->core->auth);
	else if (v != NULL && auth_basic(v, strlen(v), basic, &user, &userlen, &tok, &toklen))
		auth_sess_present(&c->sess, tok, toklen, userlen > 0 ? user : NULL, userlen,
		    c->h->core->auth);	/* -u :token names no user, as Bearer */
	explicit_bzero(basic, sizeof(basic));
}

/* Answers a page outside the core; false for a page of the core. */
static bool
http_page(struct proto_http *h, struct evhttp_request *req, enum proto_http_page page)
{
	size_t len = 0;
	char *text;

	switch (page) {
	case PROTO_HTTP_HEALTH:
		http_health(h, req);
		return true;
	case PROTO_HTTP_STATS:
		http_stats(h, req);
		return true;
	case PROTO_HTTP_METRICS:	/* the Prometheus text exposition, version 0.0.4 */
		text = metrics_prometheus(h->m, &len);
		http_send(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8",
		    http_buf(text, len));
		free(text);
		return true;
	case PROTO_HTTP_OPENAPI:	/* as checked in */
		http_send(req, 200, "OK", "application/json",
		    http_buf(proto_http_openapi, proto_http_openapi_len));
		return true;
	default:
		return false;
	}
}
