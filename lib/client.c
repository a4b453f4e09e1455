/*
 * client.c - a libidgen client's life: its options, idgen_open() and
 * idgen_close(), its counters, and the TCP transport it talks through by
 * default (docs/design.md section 11).
 *
 * The rest of the client is one file per job: share.c hands IDs out (a
 * thread's share, then the held ranges), refill.c runs the thread that
 * fetches them, round.c is one fetch with failover, epoch.c finds forks
 * (this file resets a client in a child), errmsg.c the errors;
 * client_impl.h is the state they share.
 */
#include "client_impl.h"

#include "clk.h"
#include "epoch.h"
#include "gen.h"
#include "wiretls.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLIENT_REQ_MAX		(24 + IDGEN_NS_MAX)	/* "BLOCK 4096 <ns>\n" */
#define CLIENT_BATCH_MAX	1024	/* bound of max_batch */
#define CLIENT_TIMEOUT_MAX_MS	86400000	/* bound of every timeout option */
#define CLIENT_RING_MAX		(1u << 20)	/* held ranges (max_held / fetch_ids) */

/* Keys of thread shares: never reused, so no share outlives its client's key. */
static _Atomic uint64_t		 client_serials;

static unsigned	client_tcp_exchange(void *, unsigned, const char *, size_t,
		    unsigned, unsigned, unsigned, wire_line_fn, void *, char *, size_t);
static void	client_tcp_reset(void *, unsigned);
static bool	client_ns_ok(const char *);
static void	client_conds_init(struct idgen_client *);
static void	client_forked(struct idgen_client *, uint64_t);
static const char *client_tier(const char *);

/* The defaults every option starts from (docs/protocols.md, docs/design.md section 11). */
IDGEN_EXPORT void
idgen_options_init(struct idgen_options *o)
{
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
	o->connect_timeout_ms = 500;
	o->timeout_ms = 2000;
	o->retry_min_ms = 100;
	o->retry_max_ms = 5000;
	o->fetch_ids = IDGEN_BLOCK_MAX;
	o->max_batch = 64;
	o->lead_ms = 1000;
	o->min_held = 8192;
	o->max_held = 16777216;
	o->chunk = 1024;
}

/* The condition variables, on the monotonic clock of clk_mono_deadline(). */
static void
client_conds_init(struct idgen_client *c)
{
	pthread_condattr_t	 ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLK_MONO_ID);
	pthread_cond_init(&c->wake, &ca);
	pthread_cond_init(&c->filled, &ca);
	pthread_condattr_destroy(&ca);
}

/* Resets a client inherited from the parent process (its mutex held; epoch.c calls it). */
static void
client_forked(struct idgen_client *c, uint64_t epoch)
{
	unsigned	 i;

	held_clear(&c->held);
	/* A generator's worker number is its parent's: never minted with here. */
	if (c->gen != NULL)
		gen_forked(c->gen);
	for (i = 0; i < c->neps; i++)
		c->tr.reset(c->tr.ctx, i);
	/* The refill thread and any waiter stayed in the parent. */
	c->thread_on = false;
	c->stopping = false;
	c->want_round = 0;
	c->rounds = 0;
	c->all_down = false;
	c->trying_since = 0;
	c->taken = 0;
	c->rate = 0;
	c->target = c->o.min_held;
	client_conds_init(c);
	c->st.forks++;
	c->epoch = epoch;
}

/* A client of the idservers in servers ("host:port,..."), over TCP. */
IDGEN_EXPORT idgen_client *
idgen_open(const char *servers, const struct idgen_options *o, char *err,
    size_t errlen)
{
	return client_open(servers, o, NULL, err, errlen);
}

/* Checks the options, parses the list, and registers the client for fork handling. */
idgen_client *
client_open(const char *servers, const struct idgen_options *opt,
    const struct client_transport *t, char *err, size_t errlen)
{
	struct idgen_client	*c;
	struct idgen_options	 o;
	const char		*p, *e, *tier;
	unsigned		 i, cap;
	size_t			 listlen;
	char			 dummy[8];

	if (err == NULL || errlen == 0) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	epoch_init(client_forked);
	idgen_options_init(&o);
	if (opt != NULL) {
		/* A caller built against an older header passes a shorter struct. */
		if (opt->size < offsetof(struct idgen_options, chunk) + sizeof(opt->chunk)) {
			snprintf(err, errlen, "options not initialised (call idgen_options_init "
			    "first)");
			return NULL;
		}
		memcpy(&o, opt, opt->size < sizeof(o) ? opt->size : sizeof(o));
		o.size = sizeof(o);
	}
	if (servers == NULL || *servers == '\0') {
		snprintf(err, errlen, "no idserver given (host:port[,host:port...], or "
		    "mariadb://USER@HOST:PORT,HOST:PORT/DATABASE)");
		return NULL;
	}
	if (o.fetch_ids < 1 || o.fetch_ids > IDGEN_BLOCK_MAX || o.max_batch < 1 ||
	    o.max_batch > CLIENT_BATCH_MAX || o.chunk < 1 || o.chunk > o.fetch_ids ||
	    o.timeout_ms < 1 || o.connect_timeout_ms < 1 || o.retry_min_ms < 1 ||
	    o.timeout_ms > CLIENT_TIMEOUT_MAX_MS || o.connect_timeout_ms > CLIENT_TIMEOUT_MAX_MS ||
	    o.retry_max_ms > CLIENT_TIMEOUT_MAX_MS || o.lead_ms > CLIENT_TIMEOUT_MAX_MS ||
	    o.retry_max_ms < o.retry_min_ms || o.max_held < o.min_held ||
	    o.max_held < o.fetch_ids || o.max_held / o.fetch_ids > CLIENT_RING_MAX) {
		snprintf(err, errlen, "bad options: need fetch_ids 1..%d, max_batch "
		    "1..%d, chunk 1..fetch_ids, timeouts 1..%d ms, retry_max_ms >= "
		    "retry_min_ms, min_held <= max_held, fetch_ids <= max_held <= "
		    "%u * fetch_ids", IDGEN_BLOCK_MAX, CLIENT_BATCH_MAX,
		    CLIENT_TIMEOUT_MAX_MS, CLIENT_RING_MAX);
		return NULL;
	}
	if (o.ns != NULL && !client_ns_ok(o.ns)) {
		snprintf(err, errlen, "bad namespace name: letters, digits or _, 1..%d bytes",
		    IDGEN_NS_MAX);
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->o = o;
	c->o.token = NULL;	/* the caller's string is not kept; c->auth is the copy */
	if (o.ns != NULL)
		memcpy(c->ns, o.ns, strlen(o.ns) + 1);
	c->o.ns = NULL;		/* likewise: c->ns is the copy */
	c->o.db_password = NULL;	/* ... and the generator's config */
	if (!wire_auth_line(o.token, &c->auth, &c->authlen, err, errlen)) {
		free(c);
		return NULL;
	}
	/* The files are read now: a bad one is an error of idgen_open. */
	c->o.tls_ca_file = c->o.tls_cert_file = c->o.tls_key_file = NULL;
	c->o.tls_server_name = NULL;
	if (!wiretls_new(&o, &c->tls, err, errlen)) {
		wire_auth_free(c->auth, c->authlen);
		free(c);
		return NULL;
	}
	c->eps = calloc(IDGEN_SERVERS_MAX, sizeof(*c->eps));
	c->req = malloc((size_t)o.max_batch * CLIENT_REQ_MAX);
	c->got = calloc(o.max_batch, sizeof(*c->got));
	cap = (unsigned)(o.max_held / o.fetch_ids) + o.max_batch + 2;
	if (c->eps == NULL || c->req == NULL || c->got == NULL ||
	    !held_init(&c->held, cap)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* idservers first, the tier's address last (docs/design.md 11.8). */
	if ((tier = client_tier(servers)) != NULL) {
		if ((c->gen = gen_new(c, tier, &o, err, errlen)) == NULL)
			goto fail;
		c->hybrid = tier != servers;
	}
	listlen = tier == NULL ? strlen(servers) : tier == servers ? 0 :
	    (size_t)(tier - 1 - servers);
	for (p = servers; listlen > 0; p = e + 1) {
		e = memchr(p, ',', listlen - (size_t)(p - servers));
		if (e == NULL)
			e = servers + listlen;
		if (c->neps == IDGEN_SERVERS_MAX) {
			snprintf(err, errlen, "more than %d idservers", IDGEN_SERVERS_MAX);
			goto fail;
		}
		if (!wire_init(&c->eps[c->neps].w, p, (size_t)(e - p), err, errlen))
			goto fail;
		c->eps[c->neps].w.auth = c->auth;
		c->eps[c->neps].w.authlen = c->authlen;
		c->eps[c->neps].w.tls = c->tls;
		c->neps++;
		if (e == servers + listlen)
			break;
	}
	c->reqline = (size_t)snprintf(c->req, CLIENT_REQ_MAX, "BLOCK %u%s%s\n", o.fetch_ids,
	    c->ns[0] != '\0' ? " " : "", c->ns);
	for (i = 1; i < o.max_batch; i++)
		memcpy(c->req + i * c->reqline, c->req, c->reqline);
	if (t != NULL)
		c->tr = *t;
	else
		c->tr = (struct client_transport){ client_tcp_exchange,
		    client_tcp_reset, c };
	pthread_mutex_init(&c->mu, NULL);
	client_conds_init(c);
	c->serial = atomic_fetch_add(&client_serials, 1) + 1;
	c->epoch = epoch_current();
	c->target = o.min_held;
	/* Clients of many processes spread over the list; then it sticks. */
	c->cur = c->neps ? (unsigned)((uint64_t)getpid() * 2654435761u % c->neps) : 0;
	c->st.server = c->cur;
	epoch_register(c);
	return c;
fail:
	gen_free(c->gen);
	for (i = 0; i < c->neps; i++)
		wire_free(&c->eps[i].w);
	held_free(&c->held);
	wire_auth_free(c->auth, c->authlen);
	wiretls_free(c->tls);
	free(c->got);
	free(c->req);
	free(c->eps);
	free(c);
	return NULL;
}

/* Stops the refill thread (waiting out its exchange) and frees everything. */
IDGEN_EXPORT void
idgen_close(idgen_client *c)
{
	unsigned	 i;
	bool		 join;

	if (c == NULL)
		return;
	epoch_unregister(c);
	pthread_mutex_lock(&c->mu);
	epoch_check(c);
	join = c->thread_on;
	c->stopping = true;
	pthread_cond_signal(&c->wake);
	if (c->gen != NULL && join)
		gen_stop(c->gen);	/* the lease is released first */
	pthread_mutex_unlock(&c->mu);
	if (join)
		pthread_join(c->thread, NULL);
	if (c->hybrid)
		gen_close(c->gen);
	gen_free(c->gen);
	for (i = 0; i < c->neps; i++)
		wire_free(&c->eps[i].w);
	held_free(&c->held);
	wire_auth_free(c->auth, c->authlen);
	wiretls_free(c->tls);
	pthread_cond_destroy(&c->wake);
	pthread_cond_destroy(&c->filled);
	pthread_mutex_destroy(&c->mu);
	free(c->got);
	free(c->req);
	free(c->eps);
	free(c);
}

/* The counters, and the IDs held now (a forked child's own). */
IDGEN_EXPORT void
idgen_stats(idgen_client *c, struct idgen_stats *st)
{
	pthread_mutex_lock(&c->mu);
	epoch_check(c);
	*st = c->st;
	st->ids_held = c->held.ids;
	if (c->gen != NULL)
		gen_stats(c->gen, st);
	pthread_mutex_unlock(&c->mu);
}

/*
 * Where the tier's address starts in a list: the list itself
 * (mariadb://...), after the last idserver ("host:port,...,mariadb://..."),
 * or NULL (idservers only).
 */
static const char *
client_tier(const char *servers)
{
	const char	*t;

	if (gen_is_url(servers))
		return servers;
	for (t = strchr(servers, ','); t != NULL; t = strchr(t + 1, ','))
		if (gen_is_url(t + 1))
			return t + 1;
	return NULL;
}

/* A namespace name by idserver's grammar: [A-Za-z0-9_], 1..IDGEN_NS_MAX bytes. */
static bool
client_ns_ok(const char *s)
{
	size_t	 i;

	for (i = 0; s[i] != '\0'; i++)
		if (i == IDGEN_NS_MAX || !((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return i > 0;
}

/* The TCP transport: ctx is the client, ep an index into its endpoints. */
static unsigned
client_tcp_exchange(void *ctx, unsigned ep, const char *req, size_t len,
    unsigned nreq, unsigned connect_ms, unsigned timeout_ms, wire_line_fn fn,
    void *arg, char *err, size_t errlen)
{
	struct idgen_client	*c = ctx;

	return wire_exchange(&c->eps[ep].w, req, len, nreq, connect_ms,
	    timeout_ms, fn, arg, err, errlen);
}

/* Drops the connection the TCP transport keeps for endpoint ep. */
static void
client_tcp_reset(void *ctx, unsigned ep)
{
	struct idgen_client	*c = ctx;

	wire_reset(&c->eps[ep].w);
}
