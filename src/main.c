/*
 * main.c - idserver: configuration, start-up checks, signals and the event loop.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <event2/event.h>

#include "auth.h"
#include "config.h"
#include "clk.h"
#include "conn.h"
#include "core.h"
#include "db.h"
#include "dbtls.h"
#include "proto_grpc.h"
#include "proto_http.h"
#include "proto_resp.h"
#include "proto_text.h"
#include "lease.h"
#include "listener.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "source.h"
#include "statefile.h"
#include "trim.h"
#include "tier.h"
#include "tls.h"

#define MAIN_NSIGS	6

struct main_ctx {
	struct event_base	*base;
	struct config		 cfg;
	struct statefile	 sf;
	struct tier		 tier;
	struct snowflake	 gen;
	struct lease		 lease;
	struct source		 source;
	struct core		 core;
	struct auth		 auth;		/* auth_tokens_file; unused when empty */
	struct conn_set		 conns;
	struct listener		 listener;
	struct metrics_src	 metrics;
	struct proto_http	*http;
	struct proto_grpc	*grpc;
	struct tls		*tls;		/* NULL while every listener is cleartext */
	struct trim		 trim;
	struct event		*sig[MAIN_NSIGS];	/* main_sigs[]'s, in order */
	struct event		*drain_tick;
	struct event		*mode_tick;	/* the mode's changes that only time makes */
	int64_t			 drain_deadline_ms;	/* the drain ends (monotonic) */
	bool			 listening;
	bool			 ready;		/* READY=1 sent: STATUS= follows the mode */
	enum source_mode	 told;		/* the mode STATUS= last said */
	int			 signals;
};

static void	main_tier_change(void *arg);
static enum lease_trust main_trust(void *arg, int server);
static void	main_signal_cb(evutil_socket_t sig, short what, void *arg);
static void	main_ignore_cb(evutil_socket_t sig, short what, void *arg);
static void	main_hup_cb(evutil_socket_t sig, short what, void *arg);
static bool	main_auth(struct main_ctx *m);
static int	main_check_config(struct main_ctx *m);
static bool	main_state(struct main_ctx *m);
static void	main_state_ns(const struct main_ctx *m);
static void	main_drain_cb(evutil_socket_t fd, short what, void *arg);
static void	main_mode_cb(evutil_socket_t fd, short what, void *arg);
static void	main_mode_arm(struct main_ctx *m);
static void	main_notify_mode(struct main_ctx *m, const char *state);
static void	main_released(void *arg);
static bool	main_startup(struct main_ctx *m);
static void	main_fd_limit(const struct config *cfg);
static struct event_base *main_base(void);
static bool	main_core(struct main_ctx *m);
static void	main_signals(struct main_ctx *m);
static bool	main_listen(struct main_ctx *m);
static void	main_reserve_fds(struct main_ctx *m);
static void	main_free(struct main_ctx *m);

/*
 * Tells systemd (NOTIFY_SOCKET) the mode as STATUS=, with state ("READY=1",
 * "RELOADING=1...") in the same datagram when given; alone only once ready and
 * when the mode moved since it last said it.
 */
static void
main_notify_mode(struct main_ctx *m, const char *state)
{
	char why[256];

	if (state == NULL && (!m->ready || m->source.mode == m->told))
		return;
	source_mode_reason(&m->source, why, sizeof(why));
	m->told = m->source.mode;
	notify_send("%s%sSTATUS=mode %s: %s", state != NULL ? state : "",
	    state != NULL ? "\n" : "", source_mode_name(m->source.mode), why);
}

#define MAIN_MODE_TICK_MS	1000	/* the mode is looked at again at least this often */

/*
 * Arms the mode timer for the lease window's end, or a second from now at most
 * (a wall clock that jumps is noticed within it): the mode moves on events and
 * on time, never because someone reads STATS, /health or /metrics.
 */
static void
main_mode_arm(struct main_ctx *m)
{
	unsigned ms = source_mode_due_ms(&m->source, MAIN_MODE_TICK_MS);
	struct timeval tv = clk_tv_ms(ms);

	if (m->mode_tick != NULL)
		evtimer_add(m->mode_tick, &tv);
}

/* Health, buffered IDs or the lease changed: update the mode, wake waiting clients. */
static void
main_tier_change(void *arg)
{
	struct main_ctx *m = arg;

	core_wake(&m->core);		/* deferred: the waiters run after the mode moved */
	main_mode_cb(-1, 0, m);
}

/* Time alone may have changed the mode (a window ended): recompute, wake waiters. */
static void
main_mode_cb(evutil_socket_t fd, short what, void *arg)
{
	struct main_ctx *m = arg;
	enum source_mode was = m->source.mode;

	(void)fd;
	(void)what;
	source_update_mode(&m->source);
	if (m->source.mode != was)
		core_wake(&m->core);
	main_notify_mode(m, NULL);
	main_mode_arm(m);
}

/* The lease uses a server only while the ticket tier vouches for it. */
static enum lease_trust
main_trust(void *arg, int server)
{
	struct main_ctx *m = arg;

	return source_trust(&m->tier, server);
}

/* SIGHUP, SIGUSR1, SIGUSR2: logged, never fatal (settings are read at start only). */
static void
main_ignore_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	(void)arg;
	log_info("signal %d (%s) ignored: idserver reads its settings only at start; restart "
	    "it (SIGTERM) to change them", (int)sig, sig == SIGHUP ? "SIGHUP" :
	    sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
}

/*
 * SIGHUP: auth_tokens_file is read again (a token removed stops working on
 * its connections' next request, even when another line is malformed: that
 * line is left out and said), and the listeners' certificates are loaded
 * again (new connections get them; one that fails keeps the old, logged); the
 * other settings are read at start only.
 */
static void
main_hup_cb(evutil_socket_t sig, short what, void *arg)
{
	struct main_ctx *m = arg;
	char err[512], tls[1024] = "", toks[640] = "";
	bool tls_ok = true, auth_ok = true;

	/* systemd waits for READY=1 again after RELOADING=1 (sd_notify(3)). */
	notify_send("RELOADING=1\nMONOTONIC_USEC=%lld", (long long)clk_mono_us());
	if (m->core.auth == NULL && m->tls == NULL) {
		main_ignore_cb(sig, what, arg);
		main_notify_mode(m, "READY=1");
		return;
	}
	/* One line per SIGHUP, whatever it reloaded (issue 31). */
	if (m->tls != NULL)
		tls_ok = tls_reload(m->tls, tls, sizeof(tls));
	if (m->core.auth != NULL && (auth_ok = auth_reload(&m->auth, err, sizeof(err))) &&
	    m->auth.clean)
		snprintf(toks, sizeof(toks), "auth_tokens_file reread: %zu tokens (%zu read-only)",
		    m->auth.n, m->auth.nro);
	else if (m->core.auth != NULL && auth_ok) {
		snprintf(toks, sizeof(toks), "auth_tokens_file reread: %zu tokens (%zu read-only); "
		    "%u line%s left out, no token of theirs valid: %s", m->auth.n, m->auth.nro,
		    m->auth.bad, m->auth.bad == 1 ? "" : "s", err);
		auth_ok = false;	/* a warning */
	} else if (m->core.auth != NULL)
		snprintf(toks, sizeof(toks), "%s; the previous %zu tokens stay", err, m->auth.n);
	if (!tls_ok)
		log_error("SIGHUP: %s%s%s", tls, toks[0] ? "; " : "", toks);
	else if (!auth_ok)
		log_warn("SIGHUP: %s%s%s", tls, tls[0] ? "; " : "", toks);
	else
		log_info("SIGHUP: %s%s%s", tls, tls[0] && toks[0] ? "; " : "", toks);
	main_notify_mode(m, "READY=1");
}

/* Loads auth_tokens_file when set; false (said on stderr) when it cannot be used. */
static bool
main_auth(struct main_ctx *m)
{
	char err[512];

	if (m->cfg.auth_tokens_file[0] == '\0')
		return true;
	if (!auth_init(&m->auth, m->cfg.auth_tokens_file, m->cfg.auth_fail_delay_ms, err,
	    sizeof(err))) {
		fprintf(stderr, "idserver: %s\n", err);
		auth_free(&m->auth);
		return false;
	}
	m->auth.optional = strcmp(m->cfg.auth_mode, "optional") == 0;
	return true;
}

/*
 * --check-config: after the settings (config_load, which also read the
 * password file), every file a start or a SIGHUP loads: the listeners'
 * certificates, keys and client CA (tls_init builds their contexts), the
 * ticket servers' TLS files, auth_tokens_file (read strictly, as at start).
 * Nothing listens and no server is reached; the state file is not opened
 * (a running idserver holds its lock). "ok" and 0, or the problem and 1.
 */
static int
main_check_config(struct main_ctx *m)
{
	struct dbtls dt;
	char err[512];
	bool ok;

	config_dbtls(&dt, &m->cfg);
	ok = tls_init(&m->tls, &m->cfg, err, sizeof(err)) &&
	    dbtls_load_files(&dt, err, sizeof(err));
	tls_free(m->tls);
	m->tls = NULL;
	if (!ok)
		fprintf(stderr, "idserver: %s\n", err);
	else if ((ok = main_auth(m)))	/* main_auth says a failure */
		auth_free(&m->auth);
	config_free(&m->cfg);
	if (ok)
		printf("ok\n");
	return ok ? 0 : 1;
}

/* First SIGTERM/SIGINT/SIGQUIT drains; a second one exits at once. */
static void
main_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct main_ctx *m = arg;
	struct timeval tick = { 0, 10000 };

	(void)what;
	if (++m->signals > 1 || !m->listening) {
		log_warn("signal %d again: exiting now", (int)sig);
		event_base_loopbreak(m->base);
		return;
	}
	log_info("signal %d: draining %llu clients (drain_timeout_ms=%u)", (int)sig,
	    (unsigned long long)m->conns.stats.open, m->cfg.drain_timeout_ms);
	notify_send("STOPPING=1\nSTATUS=draining %llu clients (drain_timeout_ms=%u)",
	    (unsigned long long)m->conns.stats.open, m->cfg.drain_timeout_ms);
	listener_drain(&m->listener);
	m->drain_deadline_ms = clk_mono_ms() + m->cfg.drain_timeout_ms;
	event_add(m->drain_tick, &tick);
}

/* The lease is released (or could not be): the last step of a clean exit. */
static void
main_released(void *arg)
{
	struct main_ctx *m = arg;

	event_base_loopexit(m->base, NULL);
}

/* Exits the loop once every client is gone or the drain time is up. */
static void
main_drain_cb(evutil_socket_t fd, short what, void *arg)
{
	struct main_ctx *m = arg;
	struct timeval tick = { 0, 10000 };

	(void)fd;
	(void)what;
	if (m->conns.stats.open == 0 || clk_mono_ms() >= m->drain_deadline_ms) {
		/* No client is left to mint for: give the window back, then exit. */
		conn_set_free(&m->conns);
		listener_free(&m->listener);
		m->listening = false;
		lease_release(&m->lease, main_released, m);
		return;
	}
	event_add(m->drain_tick, &tick);
}

/*
 * Probes every ticket server (other regions' too) before listening
 * (docs/design.md 6.4, misconfiguration at start). A refusal of this
 * idserver's own configuration (authentication, TLS, B) refuses to start; a
 * server refused for its own settings is left out, as a running idserver
 * leaves it, when another server of its region passed its checks, and
 * refuses to start when none did. A server whose counter moved back is not a misconfiguration:
 * it stays refused until repaired while the other path serves. A server that
 * is merely down is retried in the background.
 */
static bool
main_startup(struct main_ctx *m)
{
	unsigned i;
	int rounds = 0;
	bool ok = true, any_up;

	tier_start(&m->tier);
	while (!tier_settled(&m->tier) && rounds++ < 100000)
		event_base_loop(m->base, EVLOOP_ONCE);
	for (i = 0; i < server_count(); i++) {
		struct ticket_server *s = &m->tier.srv[i];

		/* A server of its region (its pair, or a pair of other_regions) passed. */
		any_up = false;
		for (unsigned k = 0; k < s->group_count; k++)
			any_up = any_up || ticket_up(&m->tier.srv[s->group_first + k]);
		if (s->state == TICKET_REFUSED && (s->refused_local || !any_up)) {
			log_error("refusing to start: %s ticket server: %s%s", s->name,
			    s->last_error, s->refused_local ? "" : " (and no ticket server of "
			    "its region passed its checks)");
			ok = false;
		} else if (s->state == TICKET_REFUSED)
			/* Its own settings: left out as a running idserver leaves it. */
			log_warn("starting without the %s ticket server (refused above: fix it and "
			    "it is used within refused_retry_ms); serving from the servers that "
			    "passed their checks", s->name);
		else if (s->state == TICKET_REGRESSED)
			/* Not a misconfiguration of this process: the other path serves. */
			log_error("%s ticket server not used until repaired (see above); serving "
			    "from the other server or the fallback", s->name);
		else if (s->state == TICKET_DOWN)
			log_warn("%s ticket server unreachable at start (%s); retrying in the "
			    "background", s->name, s->last_error);
	}
	return ok;
}

/* One line on the state file's namespace marks (docs/design.md 13.5, 6.10). */
static void
main_state_ns(const struct main_ctx *m)
{
	if (m->sf.ns_origin == STATEFILE_CORRUPT)
		log_error("state file %s: its namespace marks are corrupt (%s): the file was "
		    "copied to %s.corrupt; namespaces start without them (the servers' marks "
		    "still hold)", m->cfg.state_file, m->sf.ns_why, m->cfg.state_file);
	else if (m->sf.ns_origin == STATEFILE_LOADED)
		log_info("state file %s: %u namespace high-water marks", m->cfg.state_file,
		    m->sf.ns.n);
}

/*
 * Opens and locks the state file, resumes its lease when it is still ours,
 * then stamps it with this host and pair and proves it can be written.
 */
static bool
main_state(struct main_ctx *m)
{
	char servers[192], why[512], host[64] = "";

	snprintf(servers, sizeof(servers), "odd=%s:%u even=%s:%u db=%s", m->cfg.odd_host,
	    m->cfg.odd_port, m->cfg.even_host, m->cfg.even_port, m->cfg.db_name);
	switch (m->sf.origin) {
	case STATEFILE_OFF:
		log_warn("state_file is off: a counter that moves back is caught only by the "
		    "marks on the servers, and a restart cannot resume the lease");
		break;
	case STATEFILE_NEW:
		log_info("state file %s: %s; starting fresh", m->cfg.state_file, m->sf.why);
		break;
	case STATEFILE_FOREIGN:
		log_warn("state file %s is foreign: %s; starting fresh (delete %s.foreign once it "
		    "is known not to be this deployment's)", m->cfg.state_file, m->sf.why,
		    m->cfg.state_file);
		break;
	case STATEFILE_CORRUPT:
		log_error("state file %s is corrupt (%s): moved to %s.corrupt; no resumption, "
		    "starting fresh", m->cfg.state_file, m->sf.why, m->cfg.state_file);
		break;
	case STATEFILE_LOADED:
		log_info("state file %s: high-water marks odd %llu (B=%llu), even %llu (B=%llu)%s",
		    m->cfg.state_file,
		    (unsigned long long)m->sf.rec.mark[SERVER_ODD].high_water,
		    (unsigned long long)m->sf.rec.mark[SERVER_ODD].block_size,
		    (unsigned long long)m->sf.rec.mark[SERVER_EVEN].high_water,
		    (unsigned long long)m->sf.rec.mark[SERVER_EVEN].block_size,
		    m->sf.loaded_version == 1 ? "; a version 1 file: its marks are read under "
		    "the servers' B, and its lease is not resumed" : "");
		break;
	}
	main_state_ns(m);
	if (!lease_resume(&m->lease, servers, why, sizeof(why))) {
		if (m->sf.origin == STATEFILE_LOADED && m->sf.rec.lease.held)
			log_warn("state file: lease of worker %u not resumed: %s",
			    m->sf.rec.lease.worker, why);
		/* Not ours to resume: it must not look like ours once stamped below. */
		m->sf.rec.lease.held = false;
	}
	if (m->sf.origin == STATEFILE_LOADED && m->lease.state != LEASE_HELD &&
	    strcmp(m->sf.rec.servers, servers) != 0)
		log_warn("state file: written for '%s', now '%s': its marks still apply (they "
		    "belong to the odd and even servers)", m->sf.rec.servers, servers);
	gethostname(host, sizeof(host) - 1);
	snprintf(m->sf.rec.host, sizeof(m->sf.rec.host), "%s", host[0] ? host : "localhost");
	for (char *h = m->sf.rec.host; *h; h++)
		if ((unsigned char)*h <= ' ' || (unsigned char)*h >= 0x7f)
			*h = '_';
	snprintf(m->sf.rec.servers, sizeof(m->sf.rec.servers), "%s", servers);
	/* From now on the file is this process's: a copy of it resumes nothing while we run. */
	m->sf.rec.owner = m->sf.me;
	if (!statefile_save(&m->sf)) {
		log_error("refusing to start: state file: %s (state_file)", m->sf.last_error);
		return false;
	}
	/* From now on no write of the file runs on the loop (docs/design.md 6.9). */
	if (!statefile_start(&m->sf, m->base, why, sizeof(why))) {
		log_error("refusing to start: %s", why);
		return false;
	}
	return true;
}

/* Raises the descriptor limit to what max_clients needs, or says what it can do. */
static void
main_fd_limit(const struct config *cfg)
{
	struct rlimit rl;
	/* Text/RESP and gRPC clients, listeners, databases, logs; HTTP has no bound of its own. */
	rlim_t need = (rlim_t)cfg->max_clients + cfg->grpc_max_connections + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < need)
		log_warn("max_clients %u and grpc_max_connections %u need %llu descriptors, the "
		    "limit is %llu: about %llu clients can connect (raise ulimit -n)",
		    cfg->max_clients, cfg->grpc_max_connections,
		    (unsigned long long)need, (unsigned long long)rl.rlim_cur,
		    (unsigned long long)(rl.rlim_cur > 64 ? rl.rlim_cur - 64 : 0));
}

/*
 * An event base with timerfd-precise timers (a fallback request waits to the
 * next ms, not 1-2 ms) and epoll's change list: evhttp deletes and adds a
 * connection's events around every request, and the change list folds a
 * delete and an add of one loop turn into no system call (docs/benchmark.md,
 * row 10). libevent warns the list is unsafe with descriptors shared by
 * dup(): the one dup here (trim_reserve_fds) adds and deletes its event in
 * one turn, so it never reaches epoll.
 */
static struct event_base *
main_base(void)
{
	struct event_config *ec = event_config_new();
	struct event_base *base;

	if (ec == NULL)
		return NULL;
	event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
	event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	base = event_base_new_with_config(ec);
	event_config_free(ec);
	return base;
}

/* The tier, the generator, the lease, the path choice, the core and the views' sources. */
static bool
main_core(struct main_ctx *m)
{
	struct snowflake_config sc = { m->cfg.backstep_tolerance_ms, m->cfg.clock_wait_ms };

	if (!tier_init(&m->tier, m->base, &m->cfg, &m->sf, NULL, main_tier_change, m))
		return false;
	snowflake_init(&m->gen, &sc);
	if (!lease_init(&m->lease, m->base, &m->cfg, &m->gen, &m->sf, NULL, clk_real_ms,
	    main_tier_change, main_trust, m))
		return false;
	source_init(&m->source, &m->tier, &m->gen, &m->lease, clk_real_us, m->cfg.refill_wait_ms);
	if (!core_init(&m->core, m->base, &m->source))
		return false;
	m->core.callers.max = m->cfg.max_callers;
	if (m->auth.path != NULL) {
		m->core.auth = &m->auth;
		log_info("authentication on: %zu tokens (%zu read-only) from %s; /metrics and "
		    "/health %s%s", m->auth.n, m->auth.nro, m->auth.path, m->cfg.auth_open_metrics ?
		    "open (auth_open_metrics)" : "need a token", m->auth.optional ? "; auth_mode "
		    "optional: requests without a token are served (auth_anonymous)" : "");
	}
	m->metrics.listener = &m->listener.stats;
	m->metrics.conns = &m->conns.stats;
	m->metrics.core = &m->core;
	m->metrics.source = &m->source;
	m->metrics.sf = &m->sf;
	m->metrics.trim = &m->trim;
	m->metrics.started = time(NULL);
	conn_set_init(&m->conns, m->base, &m->cfg, &m->core, &m->metrics,
	    &proto_resp_ops, &proto_text_ops);
	return true;
}

/* SIGTERM/SIGINT/SIGQUIT drain, SIGHUP reloads, the rest are ignored. */
static const struct {
	int			 sig;
	event_callback_fn	 cb;
} main_sigs[MAIN_NSIGS] = {
	{ SIGTERM, main_signal_cb }, { SIGINT, main_signal_cb }, { SIGQUIT, main_signal_cb },
	{ SIGHUP, main_hup_cb }, { SIGUSR1, main_ignore_cb }, { SIGUSR2, main_ignore_cb },
};

/* Signals as loop events (main_sigs) and timers. */
static void
main_signals(struct main_ctx *m)
{
	m->drain_tick = evtimer_new(m->base, main_drain_cb, m);
	m->mode_tick = evtimer_new(m->base, main_mode_cb, m);
	for (size_t i = 0; i < MAIN_NSIGS; i++) {
		m->sig[i] = evsignal_new(m->base, main_sigs[i].sig, main_sigs[i].cb, m);
		event_add(m->sig[i], NULL);
	}
}

/* Every listener: text and RESP, HTTP, gRPC. False (logged) when one cannot listen. */
static bool
main_listen(struct main_ctx *m)
{
	char err[512];

	if (!tls_init(&m->tls, &m->cfg, err, sizeof(err))) {
		log_error("refusing to start: %s", err);
		return false;
	}
	conn_set_tls(&m->conns, tls_listener(m->tls, TLS_LISTEN));
	if (!listener_init(&m->listener, m->base, &m->cfg, &m->conns, err, sizeof(err))) {
		log_error("%s", err);
		listener_free(&m->listener);
		return false;
	}
	m->listening = true;
	if (!proto_http_init(&m->http, m->base, &m->cfg, &m->core, &m->metrics, err,
	    sizeof(err)) || !proto_grpc_init(&m->grpc, m->base, &m->cfg, &m->core, err,
	    sizeof(err))) {
		log_error("%s", err);
		return false;
	}
	proto_http_set_tls(m->http, tls_listener(m->tls, TLS_HTTP));
	proto_grpc_set_tls(m->grpc, tls_listener(m->tls, TLS_GRPC));
	if (m->grpc != NULL)
		m->metrics.grpc = proto_grpc_counters(m->grpc);
	if (m->tls != NULL)
		m->metrics.tls = tls_counters(m->tls);
	return true;
}

/* libevent's per-descriptor slots for every connection the limits allow, in one run. */
static void
main_reserve_fds(struct main_ctx *m)
{
	struct rlimit rl;
	unsigned n = m->cfg.max_clients + m->cfg.grpc_max_connections + 64;
	int64_t t0;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < n)
		n = (unsigned)rl.rlim_cur;
	t0 = clk_mono_us();
	n = trim_reserve_fds(m->base, n);
	log_info("descriptor slots made for %u connections in %lld ms (max_clients, "
	    "grpc_max_connections): memory of a flood can be given back", n,
	    (long long)((clk_mono_us() - t0) / 1000));
}

/* Frees everything main set up, whichever step it stopped at. */
static void
main_free(struct main_ctx *m)
{
	proto_http_free(m->http);
	proto_grpc_free(m->grpc);
	trim_free(&m->trim);
	conn_set_free(&m->conns);
	if (m->listening)
		listener_free(&m->listener);
	core_free(&m->core);
	if (m->auth.path != NULL)
		auth_free(&m->auth);
	tier_free(&m->tier);
	lease_free(&m->lease);
	tls_free(m->tls);	/* after every connection: they hold its contexts */
	for (size_t i = 0; i < MAIN_NSIGS; i++)
		event_free(m->sig[i]);
	event_free(m->drain_tick);
	if (m->mode_tick != NULL)
		event_free(m->mode_tick);
	statefile_stop(&m->sf);		/* writes the newest snapshot; before its event goes */
	event_base_free(m->base);
	statefile_close(&m->sf);
	config_free(&m->cfg);
	db_library_end();
	notify_free();
}

int
main(int argc, char **argv)
{
	struct main_ctx m;
	char err[512];
	bool exit_now;
	int rc = 1;

	memset(&m, 0, sizeof(m));
	if (!config_load(&m.cfg, argc, argv, &exit_now, err, sizeof(err))) {
		bool check = m.cfg.check_only;

		fprintf(stderr, "idserver: %s\n", err);
		config_free(&m.cfg);	/* what was read: nothing for LeakSanitizer to report */
		return check ? 1 : 2;
	}
	if (exit_now) {
		config_free(&m.cfg);
		return 0;
	}
	if (m.cfg.check_only) {
		log_set_level(LOG_LEVEL_WARN);	/* ok or the problem: the one line said */
		return main_check_config(&m);
	}
	(void)log_configure(m.cfg.log_level, m.cfg.log_format);	/* checked by config_load */
	if (!main_auth(&m)) {
		config_free(&m.cfg);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	main_fd_limit(&m.cfg);
	if (!db_library_init()) {
		fprintf(stderr, "idserver: cannot initialise the MariaDB client library\n");
		return 1;
	}
	m.base = main_base();
	if (!statefile_open(&m.sf, m.cfg.state_file, err, sizeof(err))) {
		fprintf(stderr, "idserver: refusing to start: %s\n", err);
		if (m.base != NULL)
			event_base_free(m.base);
		db_library_end();
		config_free(&m.cfg);
		return 1;
	}
	if (m.base == NULL || !main_core(&m)) {
		fprintf(stderr, "idserver: out of memory at start\n");
		return 1;
	}
	main_signals(&m);
	log_info("idserver starting: odd %s:%u, even %s:%u", m.cfg.odd_host, m.cfg.odd_port,
	    m.cfg.even_host, m.cfg.even_port);
	(void)notify_init();
	notify_send("STATUS=starting: checking the ticket servers");
	if (main_state(&m) && main_startup(&m) && m.signals == 0 && main_listen(&m)) {
		main_reserve_fds(&m);
		if (trim_init(&m.trim, m.base, m.cfg.trim_interval_ms, m.cfg.trim_free_bytes)) {
			lease_start(&m.lease);
			source_update_mode(&m.source);
			/* Every listener is open: systemctl start returns now. */
			main_notify_mode(&m, "READY=1");
			m.ready = true;
			main_mode_arm(&m);
			event_base_dispatch(m.base);
			log_info("idserver stopped");
			rc = 0;
		} else {
			log_error("out of memory at start");
		}
	}
	main_free(&m);
	return rc;
}
