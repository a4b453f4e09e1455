/*
 * gen.c - libidgen's generator: a worker number leased from the tier by
 * idserver's own lease code (src/lease.c), Snowflake IDs minted in the
 * process by idserver's generator (src/snowflake.c), the lease kept on a
 * private event loop in the client's background thread (docs/design.md
 * section 11.8).
 */
#include "gen.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "client_impl.h"
#include "clk.h"
#include "config.h"
#include "errmsg.h"
#include "gencheck.h"
#include "genlog.h"
#include "genseam.h"
#include "layout.h"
#include "lease.h"
#include "snowflake.h"
#include "statefile.h"

#define GEN_ARGS_MAX	32	/* config_load's arguments from one address */
#define GEN_WAIT_SPINS	20000	/* 20 us sleeps for the next millisecond: 400 ms */

struct gen {
	struct idgen_client	*c;
	struct config		 cfg;		/* idserver's, from the address */
	struct snowflake	 sn;		/* minted from under c->mu */
	struct statefile	 sf;		/* off: a restart claims a new window */
	struct lease		 lease;
	bool			 lease_on;	/* lease_init done (in this process) */
	struct gencheck		 check;		/* the pair checked before any claim */
	bool			 shape_given;	/* the address named the tier's shape */
	struct genseam		 seam;
	struct event_base	*base;
	struct event		*wake_ev;
	int			 wake_fd;	/* callers wake the loop: stop, clock */
	bool			 releasing;
	/* A list with idservers: the loop runs in its own thread, per episode. */
	pthread_t		 thread;
	bool			 thread_on;	/* an episode's thread to join */
	bool			 ended;		/* ... which has left its loop */
	bool			 want_end;	/* an idserver answers: release, end */
	bool			 want_fresh;	/* the clock stepped back: a fresh number */
	bool			 round_failed;	/* the last claim round found no lease */
	uint64_t		 events;	/* lease callbacks run: a waiter's cue */
	uint64_t		 seen_claims;
	uint64_t		 seen_claim_failures;
	char			 lasterr[IDGEN_ERR_LEN];
	char			 log[IDGEN_ERR_LEN];	/* the lease's last log line */
};

/* The settings of idserver an address may give (?name=value): the lease's. */
static const char *const gen_settings[] = {
	"lease_window_ms", "lease_extend_ms", "max_clock_skew_ms", "backstep_tolerance_ms",
	"clock_wait_ms", "region", "region_bits", "tier_increment", "connect_timeout_ms",
	"query_timeout_ms", "reprobe_max_ms", "db_password_file", "db_tls", "db_tls_ca_file",
	"db_tls_cert_file", "db_tls_key_file", "db_tls_verify_host", "db_tls_min_version",
	NULL,
};

static pthread_once_t	gen_db_once = PTHREAD_ONCE_INIT;
static bool		gen_db_ok;

static void	gen_db_init(void);
static bool	gen_parse(const char *url, char (*argv)[256], int *argc, bool *shape,
		    char *err, size_t errlen);
static bool	gen_setting_ok(const char *name, size_t len);
static void	gen_after(void *arg);
static void	gen_on_change(void *arg);
static enum lease_trust gen_trust(void *arg, int server);
static void	gen_wake(struct gen *g);
static void	gen_wake_cb(evutil_socket_t fd, short what, void *arg);
static void	gen_released(void *arg);
static void	gen_reset(struct gen *g);
static void	gen_checked(void *arg);
static void	gen_refusals(struct gen *g);

bool
gen_is_url(const char *servers)
{
	return servers != NULL && strncmp(servers, GEN_SCHEME, strlen(GEN_SCHEME)) == 0;
}

/* MariaDB's client library, once per process, before any connection. */
static void
gen_db_init(void)
{
	gen_db_ok = db_library_init();
}

/* A setting an address may name. */
static bool
gen_setting_ok(const char *name, size_t len)
{
	for (unsigned i = 0; gen_settings[i] != NULL; i++)
		if (strlen(gen_settings[i]) == len && strncmp(gen_settings[i], name, len) == 0)
			return true;
	return false;
}

/*
 * The address as idserver's flags: --db_user, the pair's --odd_host/port and
 * --even_host/port, --db_name, then each ?name=value (config_load checks
 * every value as idserver's config does). shape: the address named one of
 * tier_increment, region, region_bits.
 */
static bool
gen_parse(const char *url, char (*argv)[256], int *argc, bool *shape, char *err,
    size_t errlen)
{
	const char	*p = url + strlen(GEN_SCHEME), *at, *slash, *q, *e;
	char		 host[64];
	unsigned	 port, n = 0;
	size_t		 len;

	*argc = 0;
	*shape = false;
	snprintf(argv[(*argc)++], 256, "libidgen");
	at = strchr(p, '@');
	slash = strchr(p, '/');
	if (at == NULL || at == p || (slash != NULL && at > slash)) {
		snprintf(err, errlen, "mariadb:// address: no user (mariadb://USER@HOST:PORT,"
		    "HOST:PORT/DATABASE)");
		return false;
	}
	if (memchr(p, ':', (size_t)(at - p)) != NULL) {
		snprintf(err, errlen, "mariadb:// address: no password in the address "
		    "(IDGEN_DB_PASSWORD, or options.db_password)");
		return false;
	}
	snprintf(argv[(*argc)++], 256, "--db_user=%.*s", (int)(at - p), p);
	for (p = at + 1; ; p++) {
		if (!config_parse_addr(&p, host, sizeof(host), &port) || n == SERVER_PAIR) {
			snprintf(err, errlen, "mariadb:// address: need the pair's two servers, "
			    "odd then even, as HOST:PORT,HOST:PORT (numeric addresses)");
			return false;
		}
		snprintf(argv[(*argc)++], 256, "--%s_host=%s", n == 0 ? "odd" : "even", host);
		snprintf(argv[(*argc)++], 256, "--%s_port=%u", n == 0 ? "odd" : "even", port);
		n++;
		if (*p != ',')
			break;
	}
	if (n != SERVER_PAIR || *p != '/' || p[1] == '\0' || p[1] == '?') {
		snprintf(err, errlen, "mariadb:// address: need the pair's two servers and a "
		    "database (mariadb://USER@HOST:PORT,HOST:PORT/DATABASE)");
		return false;
	}
	p++;
	len = strcspn(p, "?");
	if (memchr(p, ',', len) != NULL) {
		snprintf(err, errlen, "mariadb:// address: a ',' after the database: in a "
		    "list the idservers come first and the tier's address last "
		    "(HOST:PORT,...,mariadb://...)");
		return false;
	}
	snprintf(argv[(*argc)++], 256, "--db_name=%.*s", (int)len, p);
	for (q = p[len] == '?' ? p + len + 1 : NULL; q != NULL && *q != '\0'; q = e) {
		e = q + strcspn(q, "&");
		len = strcspn(q, "=");
		if (len >= (size_t)(e - q) || !gen_setting_ok(q, len) || *argc == GEN_ARGS_MAX) {
			snprintf(err, errlen, "mariadb:// address: '%.*s' is not a setting an "
			    "address may give (lease_*, region, region_bits, tier_increment, "
			    "timeouts, db_tls_*, db_password_file)", (int)(e - q), q);
			return false;
		}
		snprintf(argv[(*argc)++], 256, "--%.*s", (int)(e - q), q);
		if (strncmp(q, "region", len) == 0 || strncmp(q, "region_bits", len) == 0 ||
		    strncmp(q, "tier_increment", len) == 0)
			*shape = true;
		if (*e == '&')
			e++;
	}
	return true;
}

struct gen *
gen_new(struct idgen_client *c, const char *url, const struct idgen_options *o, char *err,
    size_t errlen)
{
	char		 args[GEN_ARGS_MAX][256], *argv[GEN_ARGS_MAX];
	struct gen	*g;
	bool		 exit_now, shape;
	int		 argc;

	pthread_once(&gen_db_once, gen_db_init);
	if (!gen_db_ok) {
		snprintf(err, errlen, "MariaDB's client library did not start");
		return NULL;
	}
	if (!gen_parse(url, args, &argc, &shape, err, errlen))
		return NULL;
	if ((g = calloc(1, sizeof(*g))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (int i = 0; i < argc; i++)
		argv[i] = args[i];
	/* idserver's defaults, bounds and checks: one table (src/config.c). */
	if (!config_load(&g->cfg, argc, argv, &exit_now, err, errlen)) {
		config_free(&g->cfg);
		free(g);
		return NULL;
	}
	if (o->db_password != NULL) {
		free(g->cfg.db_password);
		if ((g->cfg.db_password = strdup(o->db_password)) == NULL) {
			snprintf(err, errlen, "out of memory");
			gen_free(g);
			return NULL;
		}
	}
	g->c = c;
	g->wake_fd = -1;
	g->shape_given = shape;
	return g;
}

void
gen_free(struct gen *g)
{
	if (g == NULL)
		return;
	if (g->lease_on) {
		gencheck_free(&g->check);
		lease_free(&g->lease);
		statefile_close(&g->sf);
	}
	if (g->wake_ev != NULL)
		event_free(g->wake_ev);
	if (g->base != NULL)
		event_base_free(g->base);
	if (g->wake_fd >= 0)
		close(g->wake_fd);
	config_free(&g->cfg);
	free(g);
}

/*
 * The loop, the statefile (off), the generator and the lease, which claims
 * once both servers were checked (gen_checked; docs/design.md 11.8).
 */
bool
gen_start(struct gen *g)
{
	struct snowflake_config	 sc = { g->cfg.backstep_tolerance_ms, g->cfg.clock_wait_ms };
	char			 why[256];

	if (g->base != NULL)
		return true;
	g->base = event_base_new();
	g->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->base == NULL || g->wake_fd < 0)
		return false;
	g->wake_ev = event_new(g->base, g->wake_fd, EV_READ | EV_PERSIST, gen_wake_cb, g);
	if (g->wake_ev == NULL || event_add(g->wake_ev, NULL) != 0)
		return false;
	if (!statefile_open(&g->sf, NULL, why, sizeof(why)))
		return false;
	snowflake_init(&g->sn, &sc);
	genseam_init(&g->seam, &g->c->mu, gen_after, g);
	if (!lease_init(&g->lease, g->base, &g->cfg, &g->sn, &g->sf, &g->seam.ops,
	    clk_real_ms, gen_on_change, gen_trust, g) ||
	    !gencheck_init(&g->check, g->base, &g->cfg, &g->seam.ops, !g->shape_given,
	    gen_checked, g)) {
		gencheck_free(&g->check);
		lease_free(&g->lease);
		statefile_close(&g->sf);
		return false;
	}
	g->lease_on = true;
	lease_set_kind(&g->lease, LEASE_KIND_LIBIDGEN);
	gencheck_start(&g->check);
	return true;
}

/* The background thread: its log lines kept, the loop run until the release ends it. */
void *
gen_main(void *arg)
{
	struct gen	*g = arg;

	genlog_to(g->log, sizeof(g->log));
	event_base_dispatch(g->base);
	/* After this, under the lock, the thread touches nothing: joined at once. */
	pthread_mutex_lock(&g->c->mu);
	g->ended = true;
	g->events++;
	pthread_cond_broadcast(&g->c->filled);
	pthread_mutex_unlock(&g->c->mu);
	return NULL;
}

/* An episode's loop, lease and connections freed after its thread ended (mutex held). */
static void
gen_reset(struct gen *g)
{
	if (g->lease_on) {
		gencheck_free(&g->check);
		lease_free(&g->lease);
		statefile_close(&g->sf);
	}
	g->lease_on = false;
	if (g->wake_ev != NULL)
		event_free(g->wake_ev);
	g->wake_ev = NULL;
	if (g->base != NULL)
		event_base_free(g->base);
	g->base = NULL;
	if (g->wake_fd >= 0)
		close(g->wake_fd);
	g->wake_fd = -1;
	memset(&g->lease, 0, sizeof(g->lease));
	g->releasing = false;
	g->want_fresh = false;
	g->round_failed = false;
	g->seen_claims = 0;
	g->seen_claim_failures = 0;
}

/*
 * No idserver answered (c's mutex held, the refill thread): the generator's
 * loop starts in a thread of its own and claims; a caller mints from its
 * window. An episode still releasing is left to end; a later round starts
 * the next. False when it cannot start (the reason in lasterr).
 */
bool
gen_fallback_on(struct gen *g)
{
	sigset_t	 all, old;
	int		 rc;

	if (g->c->stopping || (g->thread_on && !g->ended))
		return true;
	if (g->thread_on) {
		/* It has left its loop and sets nothing more: this join is short. */
		pthread_join(g->thread, NULL);
		g->thread_on = false;
		gen_reset(g);
	}
	g->ended = false;
	g->want_end = false;
	if (!gen_start(g)) {
		snprintf(g->lasterr, sizeof(g->lasterr), "the lease could not start");
		g->round_failed = true;
		gen_reset(g);
		return false;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&g->thread, NULL, gen_main, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(g->lasterr, sizeof(g->lasterr), "no thread for the lease");
		g->round_failed = true;
		gen_reset(g);
		return false;
	}
	g->thread_on = true;
	return true;
}

/* An idserver answered (c's mutex held): the episode's lease released, its thread ends. */
void
gen_fallback_off(struct gen *g)
{
	if (!g->thread_on || g->ended || g->want_end)
		return;
	g->want_end = true;
	gen_wake(g);
}

/* True while an episode runs or a claim is under way: worth waiting for. */
bool
gen_fallback_live(const struct gen *g)
{
	return g->thread_on && !g->ended && !g->want_end;
}

/* A claim round ended with no lease: minting from the tier fails now. */
bool
gen_failed(const struct gen *g, const char **why)
{
	*why = g->lasterr[0] != '\0' ? g->lasterr : "no lease";
	return g->round_failed;
}

/* Lease callbacks and episode ends so far: a waiter's cue. */
uint64_t
gen_events(const struct gen *g)
{
	return g->events;
}

/*
 * At idgen_close, after the refill thread was joined: a list's episode
 * thread is told to release (c->stopping) and joined.
 */
void
gen_close(struct gen *g)
{
	bool	 join;

	pthread_mutex_lock(&g->c->mu);
	join = g->thread_on;
	if (join && !g->ended)
		gen_wake(g);
	pthread_mutex_unlock(&g->c->mu);
	if (join)
		pthread_join(g->thread, NULL);
	g->thread_on = false;
}

/* After each lease callback (mutex held): the outcome of a claim round; waiters woken. */
static void
gen_after(void *arg)
{
	struct gen	*g = arg;
	struct lease	*l = &g->lease;

	g->events++;
	if (l->stats.claims != g->seen_claims || l->state == LEASE_HELD)
		g->round_failed = false;
	if (l->op == LEASE_OP_IDLE && l->state != LEASE_HELD &&
	    l->stats.claim_failures != g->seen_claim_failures)
		g->round_failed = true;
	if (l->state == LEASE_REFUSED)
		g->round_failed = true;
	g->seen_claims = l->stats.claims;
	g->seen_claim_failures = l->stats.claim_failures;
	if (l->last_error[0] != '\0')
		snprintf(g->lasterr, sizeof(g->lasterr), "%s", l->last_error);
	if (g->round_failed)
		gen_refusals(g);
	pthread_cond_broadcast(&g->c->filled);
}

/*
 * A failed round's reason, when a server was refused by its check: the
 * setting and both values (check.c's words) rather than the lease's "not up".
 */
static void
gen_refusals(struct gen *g)
{
	for (unsigned i = 0; i < SERVER_PAIR; i++)
		if (g->check.s[i].trust == LEASE_DISTRUSTED && g->check.s[i].why[0] != '\0') {
			snprintf(g->lasterr, sizeof(g->lasterr), "the %s server's lease rows are "
			    "not trusted: %s", server_name(i), g->check.s[i].why);
			return;
		}
}

/* Both servers checked (mutex held, on the loop): the lease claims now. */
static void
gen_checked(void *arg)
{
	struct gen	*g = arg;

	lease_start(&g->lease);
}

/* Every lease change: gen_after, which runs after the callback, wakes the waiters. */
static void
gen_on_change(void *arg)
{
	(void)arg;
}

/*
 * idserver trusts a server's lease rows once its ticket tier checked it; the
 * library runs no ticket tier, so it checks the server the same way itself
 * (lib/gencheck.c): a server of another region's lease table, or set up for
 * another role, is refused (docs/design.md 11.8).
 */
static enum lease_trust
gen_trust(void *arg, int server)
{
	struct gen	*g = arg;

	return server < 0 ? LEASE_DISTRUSTED : gencheck_trust(&g->check, (unsigned)server);
}

/* Wakes the loop thread (c's mutex held): a stop or a fresh number to see to. */
static void
gen_wake(struct gen *g)
{
	uint64_t	 one = 1;

	if (g->wake_fd >= 0 && write(g->wake_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, so a wake is pending anyway. */
	}
}

/* On the loop: the release at a stop (bounded by the timeouts), or a fresh number. */
static void
gen_wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gen	*g = arg;
	uint64_t	 v;
	struct timeval	 tv;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&g->c->mu);
	if ((g->c->stopping || g->want_end) && !g->releasing) {
		g->releasing = true;
		tv = clk_tv_ms((uint64_t)g->cfg.connect_timeout_ms + g->cfg.query_timeout_ms +
		    500);
		event_base_loopexit(g->base, &tv);
		lease_release(&g->lease, gen_released, g);
	} else if (g->want_fresh && !g->releasing) {
		g->want_fresh = false;
		lease_clock_stepped(&g->lease);
	}
	pthread_mutex_unlock(&g->c->mu);
}

/* The release is over (written back, or not): the loop ends. */
static void
gen_released(void *arg)
{
	struct gen	*g = arg;

	event_base_loopbreak(g->base);
}

void
gen_stop(struct gen *g)
{
	gen_wake(g);
}

unsigned
gen_take(struct gen *g, unsigned want, bool all, uint64_t *first, int *rc)
{
	struct snowflake_range	 r;
	struct timespec		 ts = { 0, 20000 };
	uint64_t		 now;

	*rc = IDGEN_OK;
	for (unsigned spins = 0; ; spins++) {
		/* The window's end is checked against the clock on every take. */
		if (!layout_ts_from_unix_ms(clk_real_ms(), &now)) {
			*rc = errmsg_set(IDGEN_EUNAVAILABLE, "the clock is before the ID "
			    "layout's epoch: no Snowflake ID");
			return 0;
		}
		switch (snowflake_take(&g->sn, now, want, all, &r)) {
		case SNOWFLAKE_OK:
			*first = r.first;
			return r.count;
		case SNOWFLAKE_UNAVAILABLE:
			return 0;
		case SNOWFLAKE_WAIT:
			/* This millisecond's sequence is used up: the next one. */
			if (spins == GEN_WAIT_SPINS) {
				*rc = errmsg_set(IDGEN_EUNAVAILABLE, "the clock does not move: "
				    "no Snowflake ID");
				return 0;
			}
			pthread_mutex_unlock(&g->c->mu);
			nanosleep(&ts, NULL);
			pthread_mutex_lock(&g->c->mu);
			continue;
		case SNOWFLAKE_CLOCK:
		case SNOWFLAKE_BEHIND:
			g->want_fresh = true;
			gen_wake(g);
			*rc = errmsg_set(IDGEN_EUNAVAILABLE, "the clock stepped back past "
			    "backstep_tolerance_ms: no Snowflake ID until a fresh worker number "
			    "is claimed");
			return 0;
		case SNOWFLAKE_RESERVE:
			break;
		}
		*rc = errmsg_set(IDGEN_EUNAVAILABLE, "no Snowflake ID (reservation refused)");
		return 0;
	}
}

int
gen_wait(struct gen *g, uint64_t *deadline)
{
	struct idgen_client	*c = g->c;
	struct timespec		 ts;
	uint64_t		 now = clk_mono_ms(), seen;

	if (*deadline == 0)
		*deadline = now + c->o.timeout_ms;
	if (g->round_failed)
		return errmsg_set(IDGEN_EUNAVAILABLE, "no Snowflake lease: %s", g->lasterr);
	if (now >= *deadline)
		return errmsg_set(IDGEN_ETIMEOUT, "no Snowflake lease within %u ms "
		    "(timeout_ms)%s%s", c->o.timeout_ms, g->lasterr[0] ? ": " : "", g->lasterr);
	seen = g->events;
	while (g->events == seen && c->thread_on && (now = clk_mono_ms()) < *deadline) {
		ts = clk_mono_deadline(*deadline - now);
		pthread_cond_timedwait(&c->filled, &c->mu, &ts);
	}
	return IDGEN_OK;
}

/*
 * In the child of a fork (its mutex held): the parent's loop, sockets and
 * lease are the parent's; they are left untouched (freeing them would close
 * the parent's connections and its epoll set), the eventfd's copy closed,
 * and the generator starts over with no window: the child claims its own.
 */
void
gen_forked(struct gen *g)
{
	struct snowflake_config	 sc = { g->cfg.backstep_tolerance_ms, g->cfg.clock_wait_ms };

	if (g->wake_fd >= 0)
		close(g->wake_fd);
	g->wake_fd = -1;
	g->wake_ev = NULL;
	g->base = NULL;
	g->lease_on = false;
	memset(&g->lease, 0, sizeof(g->lease));
	memset(&g->check, 0, sizeof(g->check));
	memset(&g->sf, 0, sizeof(g->sf));
	snowflake_init(&g->sn, &sc);
	g->releasing = false;
	g->want_fresh = false;
	g->round_failed = false;
	/* The parent's episode thread stayed in the parent. */
	g->thread_on = false;
	g->ended = false;
	g->want_end = false;
	g->events = 0;
	g->seen_claims = 0;
	g->seen_claim_failures = 0;
	g->lasterr[0] = '\0';
}

void
gen_stats(const struct gen *g, struct idgen_stats *st)
{
	st->lease_claims = g->lease.stats.claims;
	st->lease_worker = g->sn.has_window ? g->sn.worker : 0;
	st->lease_window_end_ms = g->sn.has_window ?
	    layout_ts_to_unix_ms(g->sn.window_end) : 0;
}
