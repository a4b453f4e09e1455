/*
 * http.c - /health for load balancers and /stats as JSON for dashboards.
 */
#include "http.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "log.h"
#include "metrics.h"
#include "source.h"
#include "tier.h"

struct http_json {
	struct evbuffer	*buf;
	bool		 first;
};

static void	http_stats_cb(struct evhttp_request *req, void *arg);
static void	http_health_cb(struct evhttp_request *req, void *arg);
static void	http_other_cb(struct evhttp_request *req, void *arg);
static void	http_json_pair(const struct metric_def *def, const char *name, int server,
		    const struct metric_value *v, void *arg);
static bool	http_get_only(struct evhttp_request *req);

/* Binds the endpoints; a port of 0 means no HTTP at all. */
bool
http_init(struct evhttp **out, struct event_base *base, const struct metrics_src *m,
    const char *host, unsigned port, char *err, size_t errlen)
{
	struct evhttp *h;

	*out = NULL;
	if (port == 0)
		return true;
	h = evhttp_new(base);
	if (h == NULL || evhttp_bind_socket(h, host, (ev_uint16_t)port) != 0) {
		snprintf(err, errlen, "cannot listen for HTTP on %s:%u (http_host/http_port)",
		    host, port);
		if (h != NULL)
			evhttp_free(h);
		return false;
	}
	evhttp_set_allowed_methods(h, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(h, 8192);
	evhttp_set_max_body_size(h, 0);
	evhttp_set_timeout(h, 10);
	evhttp_set_cb(h, "/stats", http_stats_cb, (void *)m);
	evhttp_set_cb(h, "/health", http_health_cb, (void *)m);
	evhttp_set_gencb(h, http_other_cb, (void *)m);
	log_info("HTTP /health and /stats on %s:%u", host, port);
	*out = h;
	return true;
}

void
http_free(struct evhttp *h)
{
	if (h != NULL)
		evhttp_free(h);
}

static bool
http_get_only(struct evhttp_request *req)
{
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);

	return cmd == EVHTTP_REQ_GET || cmd == EVHTTP_REQ_HEAD;
}

/*
 * One "name": value member, typed by the metrics table: numbers below 2^53
 * are JSON numbers (exact in a double), anything else is a string.
 */
static void
http_json_pair(const struct metric_def *def, const char *name, int server,
    const struct metric_value *v, void *arg)
{
	struct http_json *j = arg;

	(void)def;
	(void)server;
	if (!v->is_text && v->num < (UINT64_C(1) << 53))
		evbuffer_add_printf(j->buf, "%s\n  \"%s\": %" PRIu64, j->first ? "" : ",", name,
		    v->num);
	else if (!v->is_text)
		evbuffer_add_printf(j->buf, "%s\n  \"%s\": \"%" PRIu64 "\"", j->first ? "" : ",",
		    name, v->num);
	else
		/* Words from the table: states, modes, paths (no quotes or controls). */
		evbuffer_add_printf(j->buf, "%s\n  \"%s\": \"%s\"", j->first ? "" : ",", name,
		    v->text);
	j->first = false;
}

/* GET /stats: the STATS command's numbers as one JSON object. */
static void
http_stats_cb(struct evhttp_request *req, void *arg)
{
	struct http_json j = { evbuffer_new(), true };

	if (j.buf == NULL || !http_get_only(req)) {
		evhttp_send_error(req, HTTP_BADMETHOD, NULL);
		if (j.buf != NULL)
			evbuffer_free(j.buf);
		return;
	}
	evbuffer_add(j.buf, "{", 1);
	metrics_walk(arg, http_json_pair, &j);
	evbuffer_add(j.buf, "\n}\n", 3);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
	    "application/json");
	evhttp_send_reply(req, HTTP_OK, "OK", j.buf);
	evbuffer_free(j.buf);
}

/* GET /health: 200 while IDs can be served (buffered, ticket or fallback), else 503. */
static void
http_health_cb(struct evhttp_request *req, void *arg)
{
	const struct metrics_src *m = arg;
	struct source *src = m->source;
	struct evbuffer *buf = evbuffer_new();
	bool ok;

	if (buf == NULL || !http_get_only(req)) {
		evhttp_send_error(req, HTTP_BADMETHOD, NULL);
		if (buf != NULL)
			evbuffer_free(buf);
		return;
	}
	source_update_mode(src);
	ok = src->mode != SOURCE_MODE_DOWN;
	/* Buffered ticket IDs count: an instance with IDs to hand out is healthy. */
	evbuffer_add_printf(buf, "{\"ok\": %s, \"mode\": \"%s\", \"ids_buffered\": %" PRIu64
	    ", \"lease\": \"%s\", \"lease_window_end\": %" PRIu64 "}\n", ok ? "true" : "false",
	    source_mode_name(src->mode), pool_available(&src->tier->pool),
	    lease_state_name(src->lease->state), src->lease->window_end);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
	    "application/json");
	evhttp_send_reply(req, ok ? HTTP_OK : HTTP_SERVUNAVAIL, ok ? "OK" :
	    "Service Unavailable", buf);
	evbuffer_free(buf);
}

static void
http_other_cb(struct evhttp_request *req, void *arg)
{
	(void)arg;
	evhttp_send_error(req, HTTP_NOTFOUND, "try /health or /stats");
}
