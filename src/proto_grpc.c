/*
 * proto_grpc.c - the gRPC adapter: HTTP/2 sessions (nghttp2) on bufferevents,
 * gRPC message framing, protobuf-c messages, statuses in trailers.
 */
#include "proto_grpc.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <nghttp2/nghttp2.h>

#include "clk.h"
#include "fmt.h"
#include "health.pb-c.h"
#include "idgen.pb-c.h"
#include "layout.h"
#include "log.h"
#include "peers.h"
#include "tls.h"
#include "reflect.h"
#include "reqlat.h"

#define GRPC_PATH_ID		"/hispeeddesign.idgen.v1.IdGeneratorService/GenerateId"
#define GRPC_PATH_BATCH		"/hispeeddesign.idgen.v1.IdGeneratorService/GenerateIdBatch"
#define GRPC_PATH_HEALTH	"/grpc.health.v1.Health/Check"
#define GRPC_PATH_WATCH		"/grpc.health.v1.Health/Watch"
#define GRPC_PATH_REFLECT	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
#define GRPC_PATH_REFLECT_ALPHA	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"

/* A reflection stream's answers not yet taken by its client (then RESOURCE_EXHAUSTED). */
#define GRPC_REFLECT_MAX_PENDING	(1024 * 1024)
/* The request metadata naming the namespace of GenerateId and GenerateIdBatch. */
#define GRPC_NS_HEADER		"idgen-namespace"
#define GRPC_NS_HEADER_LEN	(sizeof(GRPC_NS_HEADER) - 1)

/* Evictions this far apart are logged again. */
#define GRPC_EVICT_EPISODE_MS	10000
#define GRPC_EVICTED		"evicted: the server is at grpc_max_connections and this " \
	"connection was the one longest without a request served"

/* google.rpc.Code values used here. */
#define GRPC_OK			0
#define GRPC_INVALID_ARGUMENT	3
#define GRPC_DEADLINE_EXCEEDED	4
#define GRPC_NOT_FOUND		5
#define GRPC_RESOURCE_EXHAUSTED	8
#define GRPC_UNAVAILABLE	14
#define GRPC_UNIMPLEMENTED	12
#define GRPC_INTERNAL		13

enum grpc_method {
	GRPC_M_UNKNOWN,
	GRPC_M_ID,
	GRPC_M_BATCH,
	GRPC_M_HEALTH,
	GRPC_M_WATCH,
	GRPC_M_REFLECT,		/* a stream both ways: answered message by message */
};

/* An HTTP/2 header with a literal name. */
#define GRPC_NV(name, value, len) \
	{ (uint8_t *)(name), (uint8_t *)(value), sizeof(name) - 1, (len), NGHTTP2_NV_FLAG_NONE }

/* Every reply's HEADERS: the status trails. */
static const nghttp2_nv grpc_reply_hd[2] = {
	GRPC_NV(":status", "200", 3), GRPC_NV("content-type", "application/grpc", 16),
};

struct grpc_conn;

/* One request stream: its headers, its message, and its reply. */
struct grpc_stream {
	TAILQ_ENTRY(grpc_stream) entry;
	struct grpc_conn	*conn;
	int32_t			 id;
	enum grpc_method	 method;
	bool			 grpc_ct;	/* content-type application/grpc[+proto] */
	bool			 too_big;	/* message over grpc_max_message_bytes */
	bool			 answered;	/* its status is decided */
	bool			 streaming;	/* reflection: HEADERS submitted, DATA as answers come */
	bool			 waiting;
	bool			 complete;	/* END_STREAM came: the request is all here */
	bool			 timed_out;	/* ended by grpc_request_timeout_ms */
	uint64_t		 begun_us;	/* its HEADERS came (monotonic) */
	int64_t			 timeout_us;	/* grpc-timeout, 0 = none */
	struct core_waiter	 w;
	struct event		*deadline;
	struct core_req		 creq;
	struct auth_sess	 sess;		/* its authorization: Bearer token, if any */
	bool			 authed;	/* health, reflection: the token was checked */
	char			 arg[16];
	char			 ns[CORE_NS_NAME_MAX + 2];	/* idgen-namespace, as sent:
						   cut after 49 bytes, still too long */
	size_t			 nslen;
	bool			 has_ns;
	uint8_t			*in;
	size_t			 in_len;
	uint8_t			*out;		/* the framed reply message */
	size_t			 out_len;
	size_t			 out_off;
	int			 status;	/* grpc-status of the trailers */
	char			 message[160];
};

struct grpc_conn {
	TAILQ_ENTRY(grpc_conn)	 entry;
	TAILQ_ENTRY(grpc_conn)	 service_entry;	/* in g->by_service[rank] */
	unsigned char		 rank;
	struct proto_grpc	*g;
	struct bufferevent	*bev;		/* NULL over memory (proto_grpc_mem_open) */
	struct evbuffer		*out;		/* the bytes to send: bev's output, or our own */
	nghttp2_session		*session;
	struct event		*idle;		/* grpc_idle_timeout_ms without progress */
	struct event		*stall;		/* the oldest incomplete request's deadline */
	struct peer		*peer;		/* its address's count in g->peers, or NULL */
	uint64_t		 progress_us;	/* a request last progressed (monotonic) */
	bool			 closing;	/* GOAWAY submitted by the idle timer */
	TAILQ_HEAD(, grpc_stream) streams;
};

struct proto_grpc {
	struct event_base	*base;
	const struct config	*cfg;
	struct core		*core;
	struct evconnlistener	*listener;
	TAILQ_HEAD(, grpc_conn)	 conns;
	struct grpc_counters	 stats;
	struct peers		 peers;		/* open connections per address */
	struct grpc_conn	*mem;		/* the connection over memory, if open */
	struct tls_listener	*tls;		/* grpc_tls: every connection's session */
	/*
	 * Every connection, least recently served first (docs/design.md section
	 * 5, "Connection slots"): [0] those never served while tokens are on,
	 * else all; [1] the others. Served: the core answered a request with IDs.
	 */
	TAILQ_HEAD(, grpc_conn)	 by_service[2];
	int64_t			 evict_last_ms;	/* the last eviction (monotonic), 0: none */
};

static void	grpc_accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
		    int salen, void *arg);
static void	grpc_read_cb(struct bufferevent *bev, void *arg);
static void	grpc_write_cb(struct bufferevent *bev, void *arg);
static void	grpc_event_cb(struct bufferevent *bev, short what, void *arg);
static void	grpc_idle_cb(evutil_socket_t fd, short what, void *arg);
static void	grpc_stall_cb(evutil_socket_t fd, short what, void *arg);
static void	grpc_refuse(evutil_socket_t fd);
static bool	grpc_evict(struct proto_grpc *g);
static void	grpc_served(struct grpc_conn *c);
static struct grpc_conn *grpc_conn_new(struct proto_grpc *g, struct bufferevent *bev);
static void	grpc_conn_free(struct grpc_conn *c);
static bool	grpc_recv(struct grpc_conn *c, const uint8_t *data, size_t len, size_t *used);
static bool	grpc_flush(struct grpc_conn *c);
static void	grpc_touch(struct grpc_conn *c);
static void	grpc_dispatch(struct grpc_stream *st);
static bool	grpc_unframe(struct grpc_stream *st, uint32_t *len);
static bool	grpc_parse(struct grpc_stream *st, uint32_t len);
static void	grpc_health(struct grpc_stream *st, uint32_t len);
static bool	grpc_auth_quick(struct grpc_stream *st);
static void	grpc_reflect(struct grpc_stream *st);
static bool	grpc_reflect_queue(struct grpc_stream *st, const uint8_t *msg, size_t len);
static void	grpc_reflect_send(struct grpc_stream *st);
static void	grpc_reflect_end(struct grpc_stream *st, int status, const char *message);
static void	grpc_run(void *arg);
static void	grpc_exec(struct grpc_stream *st);
static void	grpc_deadline_cb(evutil_socket_t fd, short what, void *arg);
static void	grpc_reply(struct grpc_stream *st, const ProtobufCMessage *msg);
static bool	grpc_submit(struct grpc_stream *st);
static void	grpc_answered(struct grpc_stream *st, int status);
static void	grpc_prefix(uint8_t *p, size_t len);
static bool	grpc_fail(struct grpc_stream *st, int status, const char *message);
static size_t	grpc_set_message(struct grpc_stream *st, const char *message);
static void	grpc_stream_free(struct grpc_stream *st);
static int64_t	grpc_timeout(const uint8_t *v, size_t len);
static enum grpc_method grpc_method_of(const uint8_t *path, size_t len);
static void	grpc_unknown_why(const char *path, char *why, size_t len);

/* nghttp2 callbacks. */
static ssize_t	grpc_send_cb(nghttp2_session *s, const uint8_t *data, size_t len, int flags,
		    void *arg);
static int	grpc_begin_headers_cb(nghttp2_session *s, const nghttp2_frame *f, void *arg);
static int	grpc_header_cb(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
		    size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
		    void *arg);
static int	grpc_data_cb(nghttp2_session *s, uint8_t flags, int32_t stream_id,
		    const uint8_t *data, size_t len, void *arg);
static int	grpc_frame_recv_cb(nghttp2_session *s, const nghttp2_frame *f, void *arg);
static int	grpc_frame_send_cb(nghttp2_session *s, const nghttp2_frame *f, void *arg);
static int	grpc_stream_close_cb(nghttp2_session *s, int32_t stream_id, uint32_t code,
		    void *arg);
static ssize_t	grpc_body_cb(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t len,
		    uint32_t *flags, nghttp2_data_source *src, void *arg);

bool
proto_grpc_new(struct proto_grpc **out, struct event_base *base, const struct config *cfg,
    struct core *core)
{
	struct proto_grpc *g = calloc(1, sizeof(*g));

	*out = g;
	if (g == NULL)
		return false;
	g->base = base;
	g->cfg = cfg;
	g->core = core;
	TAILQ_INIT(&g->conns);
	TAILQ_INIT(&g->by_service[0]);
	TAILQ_INIT(&g->by_service[1]);
	return true;
}

bool
proto_grpc_init(struct proto_grpc **out, struct event_base *base, const struct config *cfg,
    struct core *core, char *err, size_t errlen)
{
	struct proto_grpc *g;
	struct sockaddr_storage ss;
	int sslen = sizeof(ss);
	char addr[300];

	*out = NULL;
	if (cfg->grpc_port == 0)
		return true;
	if (!proto_grpc_new(&g, base, cfg, core)) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	snprintf(addr, sizeof(addr), strchr(cfg->grpc_host, ':') ? "[%s]:%u" : "%s:%u",
	    cfg->grpc_host, cfg->grpc_port);
	memset(&ss, 0, sizeof(ss));
	if (evutil_parse_sockaddr_port(addr, (struct sockaddr *)&ss, &sslen) != 0 ||
	    (g->listener = evconnlistener_new_bind(base, grpc_accept_cb, g,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC, 256,
	    (struct sockaddr *)&ss, sslen)) == NULL) {
		snprintf(err, errlen, "cannot listen for gRPC on %s: %s (grpc_host/grpc_port)",
		    addr, strerror(errno));
		free(g);
		return false;
	}
	/* Only with a listener: a connection over memory has no address. */
	peers_init(&g->peers);
	log_info("gRPC on %s: hispeeddesign.idgen.v1.IdGeneratorService, grpc.health.v1.Health, "
	    "grpc.reflection.v1 and v1alpha ServerReflection", addr);
	*out = g;
	return true;
}

void
proto_grpc_free(struct proto_grpc *g)
{
	struct grpc_conn *c;

	if (g == NULL)
		return;
	while ((c = TAILQ_FIRST(&g->conns)) != NULL)
		grpc_conn_free(c);
	if (g->listener != NULL)
		evconnlistener_free(g->listener);
	peers_free(&g->peers);
	free(g);
}

/* The counters live in g. */
const struct grpc_counters *
proto_grpc_counters(const struct proto_grpc *g)
{
	return &g->stats;
}

/*
 * Refuses an accepted socket with a close, once what the client already sent
 * is read (so the close is a FIN, not a reset). Not HTTP/2's GOAWAY: after our
 * SETTINGS, grpcio takes it as a graceful end and reconnects at once, in a
 * loop (6,600 refusals during one call's 5 s deadline); a connection that
 * fails makes it back off and fail the call UNAVAILABLE.
 */
static void
grpc_refuse(evutil_socket_t fd)
{
	char sink[1024];

	if (read(fd, sink, sizeof(sink)) < 0) {
		/* Nothing sent yet: nothing to discard. */
	}
	evutil_closesocket(fd);
}

/*
 * The core answered one of c's requests with IDs: c goes to the end of the
 * eviction order, in the served rank while tokens are on. Neither HEADERS, nor
 * a message that never came, nor a stream ended by grpc_request_timeout_ms is
 * service.
 */
static void
grpc_served(struct grpc_conn *c)
{
	struct proto_grpc *g = c->g;

	TAILQ_REMOVE(&g->by_service[c->rank], c, service_entry);
	c->rank = g->core->auth != NULL;
	TAILQ_INSERT_TAIL(&g->by_service[c->rank], c, service_entry);
}

/*
 * At grpc_max_connections: the connection least recently served (one never
 * served first while tokens are on) is closed for a new one. Its unanswered
 * streams get UNAVAILABLE and it gets GOAWAY, each saying why, written at once
 * when cleartext (TLS: a close); its input is read first (bounded), so the
 * close is not a reset. Logged once per episode. False when none is open.
 */
static bool
grpc_evict(struct proto_grpc *g)
{
	struct grpc_conn *c = TAILQ_FIRST(&g->by_service[0]);
	struct grpc_stream *st;
	int64_t now = clk_mono_ms();
	evutil_socket_t fd;
	char junk[4096];
	int i;

	if (c == NULL && (c = TAILQ_FIRST(&g->by_service[1])) == NULL)
		return false;
	g->stats.evicted++;
	if (g->evict_last_ms == 0 || now - g->evict_last_ms >= GRPC_EVICT_EPISODE_MS)
		log_warn("gRPC at grpc_max_connections %u: each new connection takes the slot of "
		    "the one longest without a request served (%llu evicted so far; logged "
		    "again after %d s without one)", g->cfg->grpc_max_connections,
		    (unsigned long long)g->stats.evicted, GRPC_EVICT_EPISODE_MS / 1000);
	g->evict_last_ms = now;
	if (c->bev != NULL && g->tls == NULL && !c->closing) {
		TAILQ_FOREACH(st, &c->streams, entry)
			if (!st->answered && !st->streaming)
				grpc_fail(st, GRPC_UNAVAILABLE, GRPC_EVICTED);
		(void)nghttp2_submit_goaway(c->session, NGHTTP2_FLAG_NONE,
		    nghttp2_session_get_last_proc_stream_id(c->session), NGHTTP2_NO_ERROR,
		    (const uint8_t *)GRPC_EVICTED, strlen(GRPC_EVICTED));
		(void)nghttp2_session_send(c->session);
		fd = bufferevent_getfd(c->bev);
		for (i = 0; i < 16 && recv(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0; i++)
			;
		/* The bufferevent holds its output's start frozen: only it drains it. */
		(void)evbuffer_unfreeze(c->out, 1);
		(void)evbuffer_write(c->out, fd);
	}
	grpc_conn_free(c);
	return true;
}

/*
 * A new connection from the listener: over grpc_max_connections_per_ip from
 * its address closed at once; at grpc_max_connections it takes the slot of the
 * connection least recently served (grpc_evict).
 */
static void
grpc_accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
    void *arg)
{
	struct proto_grpc *g = arg;
	struct peer *a;
	struct bufferevent *bev;
	struct grpc_conn *c;
	int one = 1;

	(void)l;
	(void)salen;
	a = peers_get(&g->peers, sa);
	if (a != NULL && a->count >= g->cfg->grpc_max_connections_per_ip) {
		g->stats.rejected_per_ip++;
		grpc_refuse(fd);
		return;
	}
	if (g->stats.open >= g->cfg->grpc_max_connections && !grpc_evict(g)) {
		g->stats.rejected++;
		grpc_refuse(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	bev = g->tls != NULL ? tls_accept(g->tls, g->base, fd) :
	    bufferevent_socket_new(g->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		evutil_closesocket(fd);
		return;
	}
	if ((c = grpc_conn_new(g, bev)) == NULL)
		return;
	if (a != NULL) {
		a->count++;
		c->peer = a;
	}
	bufferevent_setcb(c->bev, grpc_read_cb, grpc_write_cb, grpc_event_cb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	if (!grpc_flush(c))
		grpc_conn_free(c);
}

/*
 * An HTTP/2 server session with our SETTINGS over bev, or over memory when bev
 * is NULL; NULL (bev freed) when out of memory.
 */
static struct grpc_conn *
grpc_conn_new(struct proto_grpc *g, struct bufferevent *bev)
{
	nghttp2_session_callbacks *cbs = NULL;
	nghttp2_settings_entry iv[2];
	struct timeval idle = clk_tv_ms(g->cfg->grpc_idle_timeout_ms);
	struct grpc_conn *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		if (bev != NULL)
			bufferevent_free(bev);
		return NULL;
	}
	c->g = g;
	TAILQ_INIT(&c->streams);
	c->bev = bev;
	c->out = bev != NULL ? bufferevent_get_output(bev) : evbuffer_new();
	c->idle = evtimer_new(g->base, grpc_idle_cb, c);
	c->stall = evtimer_new(g->base, grpc_stall_cb, c);
	TAILQ_INSERT_TAIL(&g->conns, c, entry);
	TAILQ_INSERT_TAIL(&g->by_service[0], c, service_entry);
	g->stats.open++;
	if (c->out == NULL || c->idle == NULL || c->stall == NULL ||
	    nghttp2_session_callbacks_new(&cbs) != 0) {
		grpc_conn_free(c);
		return NULL;
	}
	nghttp2_session_callbacks_set_send_callback(cbs, grpc_send_cb);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, grpc_begin_headers_cb);
	nghttp2_session_callbacks_set_on_header_callback(cbs, grpc_header_cb);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, grpc_data_cb);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, grpc_frame_recv_cb);
	nghttp2_session_callbacks_set_on_frame_send_callback(cbs, grpc_frame_send_cb);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, grpc_stream_close_cb);
	if (nghttp2_session_server_new(&c->session, cbs, c) != 0) {
		nghttp2_session_callbacks_del(cbs);
		grpc_conn_free(c);
		return NULL;
	}
	nghttp2_session_callbacks_del(cbs);
	iv[0].settings_id = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
	iv[0].value = g->cfg->grpc_max_streams;
	iv[1].settings_id = NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE;
	iv[1].value = 16384;
	nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 2);
	grpc_touch(c);
	evtimer_add(c->idle, &idle);
	return c;
}

/*
 * A request progressed (its headers or bytes came, or a reply went out): the
 * idle clock restarts. Only a time stamp: the timer checks it when it fires,
 * so the hot path adds no timer operation. PINGs, SETTINGS, WINDOW_UPDATEs
 * and stalled streams do not count, so they cannot hold a connection open.
 */
static void
grpc_touch(struct grpc_conn *c)
{
	c->progress_us = (uint64_t)clk_mono_us();
}

/*
 * grpc_idle_timeout_ms since the timer was set: closed (GOAWAY) if no request
 * progressed since then and none waits in the core (the core bounds those
 * waits); else the timer runs to the remaining time. A connection told GOAWAY
 * that still has not taken it an idle period later is dropped.
 */
static void
grpc_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct grpc_conn *c = arg;
	uint64_t limit = (uint64_t)c->g->cfg->grpc_idle_timeout_ms * 1000;
	uint64_t idle = (uint64_t)clk_mono_us() - c->progress_us;
	struct grpc_stream *st;
	struct timeval tv;

	(void)fd;
	(void)what;
	if (c->closing) {
		grpc_conn_free(c);
		return;
	}
	TAILQ_FOREACH(st, &c->streams, entry)
		if (st->waiting) {
			idle = 0;
			break;
		}
	if (idle < limit) {
		tv = clk_tv_us(limit - idle);
		evtimer_add(c->idle, &tv);
		return;
	}
	c->g->stats.idle_timeouts++;
	c->closing = true;
	tv = clk_tv_us(limit);
	evtimer_add(c->idle, &tv);
	nghttp2_session_terminate_session(c->session, NGHTTP2_NO_ERROR);
	if (!grpc_flush(c))
		grpc_conn_free(c);
}

/*
 * The oldest incomplete request's grpc_request_timeout_ms passed: every
 * request whose END_STREAM has not come in time is answered DEADLINE_EXCEEDED
 * (then reset, grpc_frame_send_cb); the timer moves to the next one.
 */
static void
grpc_stall_cb(evutil_socket_t fd, short what, void *arg)
{
	struct grpc_conn *c = arg;
	uint64_t limit = (uint64_t)c->g->cfg->grpc_request_timeout_ms * 1000;
	uint64_t now = (uint64_t)clk_mono_us(), next = 0;
	struct grpc_stream *st;
	struct timeval tv;

	(void)fd;
	(void)what;
	TAILQ_FOREACH(st, &c->streams, entry) {
		if (st->complete || st->answered)
			continue;
		if (now - st->begun_us >= limit) {
			st->timed_out = true;
			c->g->stats.request_timeouts++;
			if (st->method == GRPC_M_REFLECT)
				grpc_reflect_end(st, GRPC_DEADLINE_EXCEEDED, "the stream was not "
				    "closed within grpc_request_timeout_ms of its last request");
			else
				grpc_fail(st, GRPC_DEADLINE_EXCEEDED, "the request was not complete "
				    "within grpc_request_timeout_ms of its headers");
		} else if (next == 0 || st->begun_us + limit - now < next)
			next = st->begun_us + limit - now;
	}
	if (next > 0) {
		tv = clk_tv_us(next);
		evtimer_add(c->stall, &tv);
	}
	if (!grpc_flush(c))
		grpc_conn_free(c);
}

static void
grpc_conn_free(struct grpc_conn *c)
{
	struct grpc_stream *st;

	while ((st = TAILQ_FIRST(&c->streams)) != NULL)
		grpc_stream_free(st);
	if (c->session != NULL)
		nghttp2_session_del(c->session);
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	else if (c->out != NULL)
		evbuffer_free(c->out);
	if (c->idle != NULL)
		event_free(c->idle);
	if (c->stall != NULL)
		event_free(c->stall);
	if (c->peer != NULL)
		c->peer->count--;
	if (c->g->mem == c)
		c->g->mem = NULL;
	TAILQ_REMOVE(&c->g->conns, c, entry);
	TAILQ_REMOVE(&c->g->by_service[c->rank], c, service_entry);
	c->g->stats.open--;
	free(c);
}

/* Sends what nghttp2 has; false when the connection is done or broken. */
static bool
grpc_flush(struct grpc_conn *c)
{
	if (nghttp2_session_send(c->session) != 0)
		return false;
	if (!nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session) &&
	    evbuffer_get_length(c->out) == 0)
		return false;
	return true;
}

static ssize_t
grpc_send_cb(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *arg)
{
	struct grpc_conn *c = arg;

	(void)s;
	(void)flags;
	/* Bounded: a peer that reads nothing stops us producing. */
	if (evbuffer_get_length(c->out) > 1024 * 1024)
		return NGHTTP2_ERR_WOULDBLOCK;
	if (evbuffer_add(c->out, data, len) != 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return (ssize_t)len;
}

/* The peer's bytes into the session; false when the connection must close. */
static bool
grpc_recv(struct grpc_conn *c, const uint8_t *data, size_t len, size_t *used)
{
	ssize_t n;

	n = nghttp2_session_mem_recv(c->session, data, len);
	if (n < 0) {
		/* Not HTTP/2 (a bad preface), or a protocol error: GOAWAY went out. */
		(void)nghttp2_session_send(c->session);
		return false;
	}
	*used = (size_t)n;
	return true;
}

static void
grpc_read_cb(struct bufferevent *bev, void *arg)
{
	struct grpc_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len = evbuffer_get_length(in), n;
	unsigned char *data = evbuffer_pullup(in, -1);

	if (!grpc_recv(c, data, len, &n)) {
		grpc_conn_free(c);
		return;
	}
	evbuffer_drain(in, n);
	if (!grpc_flush(c))
		grpc_conn_free(c);
}

bool
proto_grpc_mem_open(struct proto_grpc *g)
{
	if (g->mem != NULL)
		return true;
	g->mem = grpc_conn_new(g, NULL);
	if (g->mem != NULL && !grpc_flush(g->mem))
		grpc_conn_free(g->mem);
	return g->mem != NULL;
}

bool
proto_grpc_mem_recv(struct proto_grpc *g, const uint8_t *data, size_t len,
    struct evbuffer *sent)
{
	struct grpc_conn *c = g->mem;
	size_t n;

	if (c == NULL)
		return false;
	if (!grpc_recv(c, data, len, &n) || !grpc_flush(c))
		goto closed;
	/* A peer that reads at once: each drained output is a grpc_write_cb. */
	while (evbuffer_get_length(c->out) > 0) {
		evbuffer_add_buffer(sent, c->out);
		if (!grpc_flush(c))
			goto closed;
	}
	return true;
closed:
	evbuffer_add_buffer(sent, c->out);
	grpc_conn_free(c);
	return false;
}

static void
grpc_write_cb(struct bufferevent *bev, void *arg)
{
	struct grpc_conn *c = arg;

	(void)bev;
	if (!grpc_flush(c))
		grpc_conn_free(c);
}

static void
grpc_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct grpc_conn *c = arg;

	/* grpc_tls: the handshake's end clears its timeout; its failure closes. */
	if (c->g->tls != NULL && tls_event(c->g->tls, bev, what) == TLS_EV_UP)
		return;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		grpc_conn_free(c);
}

void
proto_grpc_set_tls(struct proto_grpc *g, struct tls_listener *tls)
{
	if (g != NULL)
		g->tls = tls;
}

/* A new request stream. */
static int
grpc_begin_headers_cb(nghttp2_session *s, const nghttp2_frame *f, void *arg)
{
	struct grpc_conn *c = arg;
	struct grpc_stream *st;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	st->conn = c;
	st->id = f->hd.stream_id;
	if (c->g->core->auth != NULL)
		auth_sess_init(&st->sess, c->bev != NULL ? (int)bufferevent_getfd(c->bev) : -1);
	TAILQ_INSERT_TAIL(&c->streams, st, entry);
	nghttp2_session_set_stream_user_data(s, st->id, st);
	grpc_touch(c);
	st->begun_us = c->progress_us;
	/* Pending: an older incomplete request's deadline, which comes first. */
	if (!evtimer_pending(c->stall, NULL)) {
		struct timeval tv = clk_tv_ms(c->g->cfg->grpc_request_timeout_ms);

		evtimer_add(c->stall, &tv);
	}
	return 0;
}

/* grpc-timeout: up to 8 digits and a unit (H M S m u n); microseconds, 0 if bad. */
static int64_t
grpc_timeout(const uint8_t *v, size_t len)
{
	int64_t n = 0;
	size_t i;

	if (len < 2 || len > 9)
		return 0;
	for (i = 0; i + 1 < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return 0;
		n = n * 10 + (v[i] - '0');
	}
	switch (v[len - 1]) {
	case 'H': return n * 3600 * 1000000;
	case 'M': return n * 60 * 1000000;
	case 'S': return n * 1000000;
	case 'm': return n * 1000;
	case 'u': return n;
	case 'n': return n / 1000 > 0 ? n / 1000 : 1;
	default: return 0;
	}
}

/* The services served and their methods, for the UNIMPLEMENTED message. */
static const struct {
	const char	*name;
	const char	*methods;
} grpc_services[] = {
	{ "hispeeddesign.idgen.v1.IdGeneratorService", "GenerateId and GenerateIdBatch" },
	{ "grpc.health.v1.Health", "Check" },
	{ "grpc.reflection.v1.ServerReflection", "ServerReflectionInfo" },
	{ "grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo" },
};

/* The method a :path names; GRPC_M_UNKNOWN for any other. */
static enum grpc_method
grpc_method_of(const uint8_t *path, size_t len)
{
	static const struct {
		const char		*path;
		enum grpc_method	 method;
	} paths[] = {
		{ GRPC_PATH_ID, GRPC_M_ID }, { GRPC_PATH_BATCH, GRPC_M_BATCH },
		{ GRPC_PATH_HEALTH, GRPC_M_HEALTH }, { GRPC_PATH_WATCH, GRPC_M_WATCH },
		{ GRPC_PATH_REFLECT, GRPC_M_REFLECT }, { GRPC_PATH_REFLECT_ALPHA, GRPC_M_REFLECT },
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (len == strlen(paths[i].path) && memcmp(path, paths[i].path, len) == 0)
			return paths[i].method;
	return GRPC_M_UNKNOWN;
}

/*
 * Why a path is UNIMPLEMENTED, as servers built on grpc's own libraries say
 * it (unknown service, unknown method) with the path and what is here instead.
 */
static void
grpc_unknown_why(const char *path, char *why, size_t len)
{
	const char *slash = path[0] == '/' ? strchr(path + 1, '/') : NULL;
	size_t n;

	if (slash == NULL || slash == path + 1 || slash[1] == '\0' || strchr(slash + 1, '/')) {
		snprintf(why, len, "unknown method %s: a gRPC path is /package.Service/Method",
		    path);
		return;
	}
	n = (size_t)(slash - path - 1);
	for (size_t i = 0; i < sizeof(grpc_services) / sizeof(grpc_services[0]); i++)
		if (strlen(grpc_services[i].name) == n &&
		    memcmp(path + 1, grpc_services[i].name, n) == 0) {
			snprintf(why, len, "unknown method %s: %s has %s", path,
			    grpc_services[i].name, grpc_services[i].methods);
			return;
		}
	snprintf(why, len, "unknown service %.*s: this server has %s, %s and reflection",
	    (int)n, path + 1, grpc_services[0].name, grpc_services[1].name);
}

static int
grpc_header_cb(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
    size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *arg)
{
	struct grpc_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);

	(void)flags;
	(void)arg;
	if (st == NULL)
		return 0;
	if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
		st->method = grpc_method_of(value, valuelen);
		if (st->method == GRPC_M_UNKNOWN) {
			/* Kept for the UNIMPLEMENTED message; the reply overwrites it. */
			valuelen = valuelen < sizeof(st->message) ? valuelen :
			    sizeof(st->message) - 1;
			memcpy(st->message, value, valuelen);
			st->message[valuelen] = '\0';
		}
	} else if (namelen == 12 && memcmp(name, "content-type", 12) == 0)
		st->grpc_ct = valuelen >= 16 && memcmp(value, "application/grpc", 16) == 0 &&
		    (valuelen == 16 || value[16] == '+' || value[16] == ';');
	else if (namelen == 12 && memcmp(name, "grpc-timeout", 12) == 0)
		st->timeout_us = grpc_timeout(value, valuelen);
	else if (namelen == GRPC_NS_HEADER_LEN && memcmp(name, GRPC_NS_HEADER, namelen) == 0 &&
	    !st->has_ns) {
		/* The first one counts, as HTTP's ?ns=; the core judges the name. */
		st->nslen = valuelen < sizeof(st->ns) - 1 ? valuelen : sizeof(st->ns) - 1;
		memcpy(st->ns, value, st->nslen);
		st->has_ns = true;
	}
	else if (namelen == 13 && memcmp(name, "authorization", 13) == 0 &&
	    st->conn->g->core->auth != NULL) {
		const char *tok;
		size_t toklen;

		/* Hashed now: nghttp2's copy of the value goes after this callback. */
		if (auth_bearer((const char *)value, valuelen, &tok, &toklen))
			auth_sess_present(&st->sess, tok, toklen, NULL, 0, st->conn->g->core->auth);
	}
	return 0;
}

/* Request message bytes, bounded by grpc_max_message_bytes (+ the 5-byte prefix). */
static int
grpc_data_cb(nghttp2_session *s, uint8_t flags, int32_t stream_id, const uint8_t *data,
    size_t len, void *arg)
{
	struct grpc_stream *st = nghttp2_session_get_stream_user_data(s, stream_id);
	size_t max;
	uint8_t *p;

	(void)flags;
	if (st == NULL)
		return 0;
	grpc_touch(st->conn);
	if (st->too_big)
		return 0;
	max = ((struct grpc_conn *)arg)->g->cfg->grpc_max_message_bytes + 5;
	if (st->in_len + len > max) {
		st->too_big = true;
	} else {
		p = realloc(st->in, st->in_len + len);
		if (p == NULL)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		memcpy(p + st->in_len, data, len);
		st->in = p;
		st->in_len += len;
	}
	/* A stream of requests: each answered once it is all here. */
	if (st->method == GRPC_M_REFLECT && st->grpc_ct && !st->answered)
		grpc_reflect(st);
	return 0;
}

/* The request is complete (END_STREAM): run it. */
static int
grpc_frame_recv_cb(nghttp2_session *s, const nghttp2_frame *f, void *arg)
{
	struct grpc_stream *st;

	(void)arg;
	if ((f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	if (st == NULL)
		return 0;
	st->complete = true;
	if (!st->answered && !st->waiting)
		grpc_dispatch(st);
	return 0;
}

/*
 * A reply's HEADERS or DATA went out: progress, unless it ends a stalled
 * request, which then gets RST_STREAM NO_ERROR (RFC 9113 8.1: the response is
 * complete, the rest of the request is not wanted) so nghttp2 frees it now.
 */
static int
grpc_frame_send_cb(nghttp2_session *s, const nghttp2_frame *f, void *arg)
{
	struct grpc_stream *st;

	(void)arg;
	if (f->hd.stream_id == 0 || (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA))
		return 0;
	st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	if (st == NULL)
		return 0;
	if (!st->timed_out)
		grpc_touch(st->conn);
	else if ((f->hd.flags & NGHTTP2_FLAG_END_STREAM) && !st->complete)
		(void)nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_NO_ERROR);
	return 0;
}

static int
grpc_stream_close_cb(nghttp2_session *s, int32_t stream_id, uint32_t code, void *arg)
{
	struct grpc_stream *st = nghttp2_session_get_stream_user_data(s, stream_id);

	(void)code;
	(void)arg;
	if (st != NULL) {
		nghttp2_session_set_stream_user_data(s, stream_id, NULL);
		grpc_stream_free(st);
	}
	return 0;
}

static void
grpc_stream_free(struct grpc_stream *st)
{
	if (st->waiting || st->w.core != NULL)
		core_waiter_free(&st->w);
	if (st->deadline != NULL)
		event_free(st->deadline);
	TAILQ_REMOVE(&st->conn->streams, st, entry);
	free(st->in);
	free(st->out);
	free(st);
}

/* The reply body: the framed message, then trailers with the status. */
static ssize_t
grpc_body_cb(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t len,
    uint32_t *flags, nghttp2_data_source *src, void *arg)
{
	struct grpc_stream *st = src->ptr;
	size_t n = st->out_len - st->out_off;
	char status[8];
	nghttp2_nv tr[2] = { GRPC_NV("grpc-status", status, 0),
		GRPC_NV("grpc-message", st->message, strlen(st->message)) };

	(void)arg;
	if (n > len)
		n = len;
	if (n > 0)
		memcpy(buf, st->out + st->out_off, n);
	st->out_off += n;
	/* A reflection stream's status comes after its last answer: until then, wait. */
	if (st->method == GRPC_M_REFLECT && !st->answered)
		return n > 0 ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
	if (st->out_off == st->out_len) {
		snprintf(status, sizeof(status), "%d", st->status);
		tr[0].valuelen = strlen(status);
		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		if (nghttp2_submit_trailer(s, stream_id, tr, st->message[0] ? 2 : 1) != 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	return (ssize_t)n;
}

/* Packs msg behind the 5-byte gRPC prefix and submits it with grpc-status 0. */
static void
grpc_reply(struct grpc_stream *st, const ProtobufCMessage *msg)
{
	size_t n = protobuf_c_message_get_packed_size(msg);

	st->out = malloc(n + 5);
	if (st->out == NULL) {
		grpc_fail(st, GRPC_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	grpc_prefix(st->out, n);
	protobuf_c_message_pack(msg, st->out + 5);
	st->out_len = n + 5;
	grpc_answered(st, GRPC_OK);
	(void)grpc_submit(st);
}

/* A message's 5-byte prefix: not compressed, its length. */
static void
grpc_prefix(uint8_t *p, size_t len)
{
	p[0] = 0;
	p[1] = (uint8_t)(len >> 24);
	p[2] = (uint8_t)(len >> 16);
	p[3] = (uint8_t)(len >> 8);
	p[4] = (uint8_t)len;
}

/* The reply's HEADERS, its body and trailers from grpc_body_cb; false if refused. */
static bool
grpc_submit(struct grpc_stream *st)
{
	nghttp2_data_provider prd = { .source = { .ptr = st }, .read_callback = grpc_body_cb };

	return nghttp2_submit_response(st->conn->session, st->id, grpc_reply_hd, 2, &prd) == 0;
}

/* The stream's status is decided: its latency is counted. */
static void
grpc_answered(struct grpc_stream *st, int status)
{
	st->status = status;
	st->answered = true;
	reqlat_add(REQLAT_GRPC, (uint64_t)clk_mono_us() - st->begun_us, 1);
}

/* Stores the grpc-message of a reply, percent-encoded outside printable ASCII. */
static size_t
grpc_set_message(struct grpc_stream *st, const char *message)
{
	size_t i, k = 0;

	for (i = 0; message[i] != '\0' && k + 4 < sizeof(st->message); i++) {
		unsigned char ch = (unsigned char)message[i];

		if (ch < 0x20 || ch > 0x7e || ch == '%')
			k += (size_t)snprintf(st->message + k, sizeof(st->message) - k, "%%%02X", ch);
		else
			st->message[k++] = (char)ch;
	}
	st->message[k] = '\0';
	return k;
}

/* A trailers-only reply: the status and its message, no body; false, to be returned. */
static bool
grpc_fail(struct grpc_stream *st, int status, const char *message)
{
	char code[8];
	int n = snprintf(code, sizeof(code), "%d", status);
	size_t k = grpc_set_message(st, message);
	nghttp2_nv hd[4] = { grpc_reply_hd[0], grpc_reply_hd[1],
		GRPC_NV("grpc-status", code, (size_t)n), GRPC_NV("grpc-message", st->message, k) };

	grpc_answered(st, status);
	nghttp2_submit_response(st->conn->session, st->id, hd, 4, NULL);
	return false;
}

/* A complete request: frame, message, method; then the core. */
static void
grpc_dispatch(struct grpc_stream *st)
{
	struct grpc_conn *c = st->conn;
	uint32_t len = 0;	/* set by grpc_unframe */

	if (!st->grpc_ct) {
		nghttp2_nv hd[1] = { GRPC_NV(":status", "415", 3) };

		st->answered = true;
		nghttp2_submit_response(c->session, st->id, hd, 1, NULL);
		return;
	}
	if (st->method == GRPC_M_UNKNOWN) {
		char why[2 * sizeof(st->message)];	/* grpc_set_message cuts it to fit */

		grpc_unknown_why(st->message, why, sizeof(why));
		grpc_fail(st, GRPC_UNIMPLEMENTED, why);
		return;
	}
	if (st->method == GRPC_M_WATCH) {
		grpc_fail(st, GRPC_UNIMPLEMENTED, "method " GRPC_PATH_WATCH " is not "
		    "implemented: poll " GRPC_PATH_HEALTH);
		return;
	}
	if (st->method == GRPC_M_REFLECT) {
		/* Every whole request was answered as it came (grpc_reflect). */
		if (st->in_len > 0)
			grpc_reflect_end(st, GRPC_INVALID_ARGUMENT, "the message length prefix "
			    "does not match the message");
		else
			grpc_reflect_end(st, GRPC_OK, "");
		return;
	}
	if (!grpc_unframe(st, &len))
		return;
	if (!core_waiter_init(&st->w, c->g->core, grpc_run, st)) {
		grpc_fail(st, GRPC_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	if (st->method == GRPC_M_HEALTH) {	/* the others but ID and BATCH: refused above */
		grpc_health(st, len);
		return;
	}
	if (!grpc_parse(st, len))
		return;
	st->creq.sess = &st->sess;
	if (st->has_ns) {
		st->creq.ns = st->ns;
		st->creq.nslen = st->nslen;
	}
	grpc_exec(st);		/* inside nghttp2's callbacks: the caller sends */
}

/*
 * The one message of a request, behind its 5-byte prefix (flag, length): true
 * with its length, else the stream is answered with why.
 */
static bool
grpc_unframe(struct grpc_stream *st, uint32_t *len)
{
	if (st->too_big)
		return grpc_fail(st, GRPC_RESOURCE_EXHAUSTED, "message larger than "
		    "grpc_max_message_bytes");
	if (st->in_len < 5)
		return grpc_fail(st, GRPC_INVALID_ARGUMENT, "no gRPC message "
		    "(a 5-byte prefix is needed)");
	*len = (uint32_t)st->in[1] << 24 | (uint32_t)st->in[2] << 16 |
	    (uint32_t)st->in[3] << 8 | st->in[4];
	if (st->in[0] != 0)
		return grpc_fail(st, GRPC_UNIMPLEMENTED, "compressed messages "
		    "are not supported");
	if ((size_t)*len != st->in_len - 5)
		return grpc_fail(st, GRPC_INVALID_ARGUMENT, "the message length prefix does "
		    "not match the message");
	return true;
}

/*
 * GenerateId (the core's ID) or GenerateIdBatch (the core's IDS n); false
 * when the message is refused (answered).
 */
static bool
grpc_parse(struct grpc_stream *st, uint32_t len)
{
	const uint8_t *m = st->in + 5;
	Hispeeddesign__Idgen__V1__GenerateIdRequest *id;
	Hispeeddesign__Idgen__V1__GenerateIdBatchRequest *b;
	ProtobufCMessage *msg;
	const char *caller;

	if (st->method == GRPC_M_ID) {
		id = hispeeddesign__idgen__v1__generate_id_request__unpack(NULL, len, m);
		if (id == NULL)
			return grpc_fail(st, GRPC_INVALID_ARGUMENT, "bad GenerateIdRequest message");
		st->creq.cmd = CORE_CMD_ID;
		msg = &id->base;
		caller = id->caller_service;
	} else {
		b = hispeeddesign__idgen__v1__generate_id_batch_request__unpack(NULL, len, m);
		if (b == NULL)
			return grpc_fail(st, GRPC_INVALID_ARGUMENT,
			    "bad GenerateIdBatchRequest message");
		/* The core bounds it: a negative count is out of range like 0. */
		snprintf(st->arg, sizeof(st->arg), "%" PRId32, b->count < 0 ? 0 : b->count);
		st->creq.cmd = CORE_CMD_IDS;
		st->creq.arg = st->arg;
		st->creq.arglen = strlen(st->arg);
		msg = &b->base;
		caller = b->caller_service;
	}
	core_count_caller(st->conn->g->core, caller, strlen(caller));
	protobuf_c_message_free_unpacked(msg, NULL);
	return true;
}

/*
 * The token of a call answered at once, outside the core (health behind a
 * token, reflection), once per stream: a read-only one suffices. Its failure
 * is not held (no waiter), so an address being slowed down (auth_fail_slow)
 * is refused without its token being looked at: no faster way to guess.
 * False with the stream answered.
 */
static bool
grpc_auth_quick(struct grpc_stream *st)
{
	struct core *core = st->conn->g->core;
	struct core_result res;

	if (core->auth == NULL || st->authed)
		return true;
	if (st->sess.presented && auth_fail_slow(core->auth, st->sess.fd, clk_mono_ms()))
		core_reject(core, CORE_ERR_WRONGPASS, "too many failed tokens from this "
		    "address; try again later", &res);
	else
		(void)core_auth(core, NULL, &st->sess, AUTH_PERM_RO, &res);
	if (res.err == CORE_OK)
		return st->authed = true;
	if (st->method == GRPC_M_REFLECT)
		grpc_reflect_end(st, (int)core_err_info(res.err)->grpc_status, res.why);
	else
		grpc_fail(st, (int)core_err_info(res.err)->grpc_status, res.why);
	return false;
}

/* grpc.health.v1.Health/Check, answered at once from the core's health. */
static void
grpc_health(struct grpc_stream *st, uint32_t len)
{
	struct core *core = st->conn->g->core;
	Grpc__Health__V1__HealthCheckRequest *m =
	    grpc__health__v1__health_check_request__unpack(NULL, len, st->in + 5);
	Grpc__Health__V1__HealthCheckResponse r = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
	struct core_health hl;
	bool known;

	if (m == NULL) {
		grpc_fail(st, GRPC_INVALID_ARGUMENT, "bad HealthCheckRequest message");
		return;
	}
	known = m->service[0] == '\0' ||
	    strcmp(m->service, "hispeeddesign.idgen.v1.IdGeneratorService") == 0;
	grpc__health__v1__health_check_request__free_unpacked(m, NULL);
	if (!st->conn->g->cfg->auth_open_metrics && !grpc_auth_quick(st))
		return;
	core_count(core, CORE_OK);
	if (!known) {
		grpc_fail(st, GRPC_NOT_FOUND, "unknown service");
		return;
	}
	core_health(core, &hl);
	r.status = hl.ok ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING :
	    GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
	/* The response has no text field: why rides in grpc-message. */
	if (!hl.ok)
		grpc_set_message(st, hl.reason);
	grpc_reply(st, &r.base);
}

/*
 * grpc.reflection ServerReflectionInfo: the requests that are all here, each
 * answered on the stream at once (a client may wait for an answer before it
 * asks again); a bad one ends the stream with its status.
 */
static void
grpc_reflect(struct grpc_stream *st)
{
	size_t off = 0, outlen;
	uint32_t len;
	uint8_t *out;

	if (st->too_big) {
		grpc_reflect_end(st, GRPC_RESOURCE_EXHAUSTED,
		    "message larger than grpc_max_message_bytes");
		return;
	}
	if (!grpc_auth_quick(st))
		return;
	while (st->in_len - off >= 5) {
		const uint8_t *m = st->in + off;

		if (m[0] != 0) {
			grpc_reflect_end(st, GRPC_UNIMPLEMENTED, "compressed messages are not supported");
			return;
		}
		len = (uint32_t)m[1] << 24 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 8 | m[4];
		if (st->in_len - off - 5 < len)
			break;
		switch (reflect_answer(m + 5, len, &out, &outlen)) {
		case REFLECT_OK:
			break;
		case REFLECT_BAD_REQUEST:
			grpc_reflect_end(st, GRPC_INVALID_ARGUMENT, "bad ServerReflectionRequest message");
			return;
		default:
			grpc_reflect_end(st, GRPC_RESOURCE_EXHAUSTED, "out of memory");
			return;
		}
		if (!grpc_reflect_queue(st, out, outlen)) {
			free(out);
			grpc_reflect_end(st, GRPC_RESOURCE_EXHAUSTED, "reflection answers not read "
			    "by the client");
			return;
		}
		free(out);
		core_count(st->conn->g->core, CORE_OK);
		off += 5 + (size_t)len;
		/* grpc_request_timeout_ms counts from the last request. */
		st->begun_us = (uint64_t)clk_mono_us();
	}
	st->in_len -= off;
	if (st->in_len > 0 && off > 0)
		memmove(st->in, st->in + off, st->in_len);
	grpc_reflect_send(st);
}

/* One answer framed behind the unsent ones; false over GRPC_REFLECT_MAX_PENDING or no memory. */
static bool
grpc_reflect_queue(struct grpc_stream *st, const uint8_t *msg, size_t len)
{
	size_t unsent = st->out_len - st->out_off;
	uint8_t *p;

	if (unsent + len + 5 > GRPC_REFLECT_MAX_PENDING)
		return false;
	if (st->out_off > 0) {
		memmove(st->out, st->out + st->out_off, unsent);
		st->out_off = 0;
		st->out_len = unsent;
	}
	if ((p = realloc(st->out, st->out_len + len + 5)) == NULL)
		return false;
	st->out = p;
	grpc_prefix(p + st->out_len, len);
	if (len > 0)
		memcpy(p + st->out_len + 5, msg, len);
	st->out_len += len + 5;
	return true;
}

/* The reply's HEADERS the first time, then grpc_body_cb is told there is more. */
static void
grpc_reflect_send(struct grpc_stream *st)
{
	if (st->streaming) {
		(void)nghttp2_session_resume_data(st->conn->session, st->id);
		return;
	}
	if (st->out_len == 0 && !st->answered)
		return;		/* nothing to say yet */
	st->streaming = grpc_submit(st);
}

/* The stream's status, sent as trailers once its answers are out. */
static void
grpc_reflect_end(struct grpc_stream *st, int status, const char *message)
{
	st->status = status;
	grpc_set_message(st, message);
	st->answered = true;
	grpc_reflect_send(st);
}

/* The deadline passed while the request waited. */
static void
grpc_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct grpc_stream *st = arg;

	(void)fd;
	(void)what;
	struct grpc_conn *c = st->conn;

	if (st->answered)
		return;
	core_waiter_free(&st->w);
	st->waiting = false;
	grpc_fail(st, GRPC_DEADLINE_EXCEEDED, "deadline exceeded while waiting for IDs");
	if (!grpc_flush(c))		/* may close and free st */
		grpc_conn_free(c);
}

/* The core resumed a waiting request (from the loop): run it and send. */
static void
grpc_run(void *arg)
{
	struct grpc_stream *st = arg;
	struct grpc_conn *c = st->conn;

	grpc_exec(st);
	if (!grpc_flush(c))		/* may close and free st */
		grpc_conn_free(c);
}

/* Runs (or re-runs, when resumed) the request in the core; submits, never sends. */
static void
grpc_exec(struct grpc_stream *st)
{
	struct grpc_conn *c = st->conn;
	struct core_result *res = malloc(sizeof(*res));
	char num[24];
	unsigned i;

	if (res == NULL) {
		grpc_fail(st, GRPC_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	if (core_exec(c->g->core, &st->w, &st->creq, res) == CORE_PENDING) {
		if (!st->waiting && st->timeout_us > 0) {
			struct timeval tv = clk_tv_us(st->timeout_us);

			st->deadline = evtimer_new(c->g->base, grpc_deadline_cb, st);
			if (st->deadline != NULL)
				evtimer_add(st->deadline, &tv);
		}
		st->waiting = true;
		free(res);
		return;
	}
	st->waiting = false;
	if (st->deadline != NULL)
		evtimer_del(st->deadline);
	if (res->err == CORE_OK)
		grpc_served(c);
	if (res->err != CORE_OK) {
		grpc_fail(st, (int)core_err_info(res->err)->grpc_status, res->why);
	} else if (st->creq.cmd == CORE_CMD_ID) {
		Hispeeddesign__Idgen__V1__GenerateIdResponse r =
		    HISPEEDDESIGN__IDGEN__V1__GENERATE_ID_RESPONSE__INIT;
		uint64_t id = res->ids[0];

		snprintf(num, sizeof(num), "%" PRIu64, id);
		r.id = (int64_t)id;
		r.id_str = num;
		/* Snowflake: the design's 41/5/5/12 fields. A ticket ID carries no time. */
		if (layout_region(id) == LAYOUT_SNOWFLAKE) {
			struct decode d;

			decode_snowflake(id, &d);
			r.timestamp_ms = d.unix_ms;
			r.datacenter_id = (int32_t)d.datacenter_id;
			r.worker_id = (int32_t)d.worker_id;
		}
		grpc_reply(st, &r.base);
	} else {
		Hispeeddesign__Idgen__V1__GenerateIdBatchResponse r =
		    HISPEEDDESIGN__IDGEN__V1__GENERATE_ID_BATCH_RESPONSE__INIT;
		int64_t *ids = calloc(res->count, sizeof(*ids));
		char **strs = calloc(res->count, sizeof(*strs));
		char *text = malloc((size_t)res->count * (FMT_U64_LEN + 1) + 1), *p;

		if (ids == NULL || strs == NULL || text == NULL) {
			grpc_fail(st, GRPC_RESOURCE_EXHAUSTED, "out of memory");
		} else {
			/* Each ID's digits a C string of its own, where strs points. */
			p = text + fmt_ids_framed(text, res->ids, res->count, "", "", '\0', strs);
			*p = '\0';
			for (i = 0; i < res->count; i++)
				ids[i] = (int64_t)res->ids[i];
			r.n_ids = res->count;
			r.ids = ids;
			r.n_ids_str = res->count;
			r.ids_str = strs;
			r.epoch_offset_ms = LAYOUT_EPOCH_UNIX_MS;
			grpc_reply(st, &r.base);
		}
		free(ids);
		free(strs);
		free(text);
	}
	free(res);
}
