/*
 * client.c - libidgen's client: IDs handed out from held blocks, a refill
 * thread that fetches them from idserver and fails over, and fork detection
 * (docs/design.md section 11).
 *
 * Three levels hold IDs: a thread's share (thread-local, no lock: the
 * idgen_next fast path), the client's held ranges (its mutex), and the
 * idserver. The refill thread keeps the held ranges above a target that
 * follows the recent rate, with one pipelined batch of BLOCK requests per
 * round trip.
 *
 * Fork: a child process must never hand out an ID its parent holds. Every
 * held range and thread share is tagged with the process's epoch, kept in a
 * page the kernel wipes in a child (MADV_WIPEONFORK) and cleared by a
 * pthread_atfork handler as well; a client or share whose epoch is not the
 * current one is dropped before anything is handed out.
 */
#include "client.h"

#include "b58.h"
#include "decode.h"
#include "held.h"
#include "reply.h"
#include "wire.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CLIENT_TL_SLOTS		8	/* clients a thread keeps a share of */
#define CLIENT_IDLE_MS		50	/* refill thread re-reads the rate this often */
#define CLIENT_RATE_MIN_MS	20	/* shortest interval a rate is measured over */
#define CLIENT_REQ_MAX		24	/* "BLOCK 4096\n" */
#define CLIENT_BATCH_MAX	1024	/* bound of max_batch */
#define CLIENT_TIMEOUT_MAX_MS	86400000	/* bound of every timeout option */
#define CLIENT_RING_MAX		(1u << 20)	/* held ranges (max_held / fetch_ids) */

#define LIKELY(x)		__builtin_expect(!!(x), 1)

/* A thread's share of one client: [next, end), valid in process epoch. */
struct client_tl {
	uint64_t	 serial;
	uint64_t	 epoch;
	uint64_t	 next;
	uint64_t	 end;
};

struct client_ep {
	struct wire	 w;
	uint64_t	 down_until;	/* monotonic ms; 0: usable */
	unsigned	 backoff_ms;
};

struct idgen_client {
	uint64_t		 serial;	/* never reused: keys thread shares */
	struct idgen_options	 o;
	pthread_mutex_t		 mu;
	pthread_cond_t		 wake;		/* the refill thread waits here */
	pthread_cond_t		 filled;	/* callers wait here */
	struct held		 held;
	uint64_t		 epoch;		/* process the state belongs to */
	bool			 thread_on;
	bool			 stopping;
	pthread_t		 thread;
	uint64_t		 want_round;	/* a caller waits for rounds to reach this */
	uint64_t		 rounds;	/* refill rounds ended */
	bool			 all_down;	/* the last round found no idserver */
	uint64_t		 retry_at;	/* ... and none is due before this */
	char			 lasterr[IDGEN_ERR_LEN];
	unsigned		 trying;	/* endpoint of the exchange in flight */
	uint64_t		 trying_since;	/* its start (ms); 0: none in flight */
	uint64_t		 taken;		/* IDs taken since rate_t */
	uint64_t		 rate_t;
	double			 rate;		/* IDs/s, smoothed */
	uint64_t		 target;	/* refill below this many held */
	struct idgen_stats	 st;
	struct client_ep	*eps;
	unsigned		 neps;
	unsigned		 cur;		/* endpoint tried first */
	struct client_transport	 tr;
	char			*req;		/* max_batch BLOCK lines */
	size_t			 reqline;
	struct held_range	*got;		/* one round's blocks */
	struct idgen_client	*next_client;	/* registry, for fork handling */
};

/* What one round trip's reply lines added up to. */
struct client_round {
	struct idgen_client	*c;
	unsigned		 blocks;
	unsigned		 errs;
	bool			 bad;		/* a line not understood: stop */
	char			 why[IDGEN_ERR_LEN];
};

static _Thread_local struct client_tl	 client_tl[CLIENT_TL_SLOTS];
static _Thread_local char		 client_msg[IDGEN_ERR_LEN];

/* Process-wide state: only what fork detection needs. */
static pthread_once_t		 client_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t		 client_epoch_mem;	/* if no wipe-on-fork page */
static _Atomic uint64_t		*client_epoch_page = &client_epoch_mem;
static _Atomic uint64_t		 client_epochs;		/* last epoch given out */
static _Atomic uint64_t		 client_serials;
static pthread_mutex_t		 client_registry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct idgen_client	*client_registry;

static void	client_init_once(void);
static void	client_atfork_prepare(void);
static void	client_atfork_parent(void);
static void	client_atfork_child(void);
static uint64_t	client_epoch(void);
static void	client_forked(struct idgen_client *, uint64_t);
static void	client_conds_init(struct idgen_client *);
static void	client_check_fork(struct idgen_client *);
static uint64_t	client_now_ms(void);
static void	client_deadline(struct timespec *, uint64_t);
static int	client_fail(int, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static bool	client_start(struct idgen_client *);
static void	*client_main(void *);
static void	client_rate(struct idgen_client *, uint64_t);
static bool	client_line(void *, const char *, const char *);
static unsigned	client_fetch(struct idgen_client *, unsigned);
static void	client_took(struct idgen_client *, uint64_t);
static int	client_wait(struct idgen_client *, uint64_t *);
static struct client_tl *client_share(struct idgen_client *);
static int	client_next_slow(struct idgen_client *, uint64_t *);
static bool	client_share_take(struct idgen_client *, unsigned, uint64_t *);
static int	client_take_held(struct idgen_client *, unsigned, uint64_t *, bool);
static unsigned	client_tcp_exchange(void *, unsigned, const char *, size_t,
		    unsigned, unsigned, unsigned, wire_line_fn, void *, char *, size_t);
static void	client_tcp_reset(void *, unsigned);

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

IDGEN_EXPORT const char *
idgen_strerror(int code)
{
	switch (code) {
	case IDGEN_OK:
		return "success";
	case IDGEN_EINVAL:
		return "invalid argument";
	case IDGEN_EUNAVAILABLE:
		return "no idserver could give IDs";
	case IDGEN_ETIMEOUT:
		return "no IDs arrived within timeout_ms";
	case IDGEN_ENOMEM:
		return "out of memory";
	}
	return "unknown error";
}

IDGEN_EXPORT const char *
idgen_last_error(void)
{
	return client_msg[0] ? client_msg : "no error";
}

/* Records this thread's message for a failed call and returns code. */
static int
client_fail(int code, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(client_msg, sizeof(client_msg), fmt, ap);
	va_end(ap);
	return code;
}

/* The wipe-on-fork epoch page and the fork handlers, once per process. */
static void
client_init_once(void)
{
	void	*p;

	p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
#ifdef MADV_WIPEONFORK
		if (madvise(p, (size_t)sysconf(_SC_PAGESIZE), MADV_WIPEONFORK) == 0)
			client_epoch_page = p;
		else
#endif
			munmap(p, (size_t)sysconf(_SC_PAGESIZE));
	}
	(void)pthread_atfork(client_atfork_prepare, client_atfork_parent,
	    client_atfork_child);
}

/* Before fork: every client's state made consistent (its mutex held). */
static void
client_atfork_prepare(void)
{
	struct idgen_client	*c;

	pthread_mutex_lock(&client_registry_mu);
	for (c = client_registry; c != NULL; c = c->next_client)
		pthread_mutex_lock(&c->mu);
}

static void
client_atfork_parent(void)
{
	struct idgen_client	*c;

	for (c = client_registry; c != NULL; c = c->next_client)
		pthread_mutex_unlock(&c->mu);
	pthread_mutex_unlock(&client_registry_mu);
}

/* In the child: a new epoch, and every client drops what the parent holds. */
static void
client_atfork_child(void)
{
	struct idgen_client	*c;
	uint64_t		 e;

	atomic_store(client_epoch_page, 0);
	e = client_epoch();
	for (c = client_registry; c != NULL; c = c->next_client) {
		client_forked(c, e);
		pthread_mutex_unlock(&c->mu);
	}
	pthread_mutex_unlock(&client_registry_mu);
}

/* The current process's epoch; a wiped page means a new process. */
static uint64_t
client_epoch(void)
{
	uint64_t	 v = atomic_load_explicit(client_epoch_page, memory_order_relaxed);
	uint64_t	 zero = 0;

	if (LIKELY(v != 0))
		return v;
	/* Above every epoch the parent gave out: never equal to its own. */
	v = atomic_fetch_add(&client_epochs, 1) + 1;
	if (!atomic_compare_exchange_strong(client_epoch_page, &zero, v))
		v = zero;
	return v;
}

/* Resets a client inherited from the parent process (its mutex held). */
static void
client_forked(struct idgen_client *c, uint64_t epoch)
{
	unsigned	 i;

	held_clear(&c->held);
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

/* The condition variables, on the monotonic clock their deadlines use. */
static void
client_conds_init(struct idgen_client *c)
{
	pthread_condattr_t	 ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->wake, &ca);
	pthread_cond_init(&c->filled, &ca);
	pthread_condattr_destroy(&ca);
}

/* Detects a process copy the fork handlers did not see (mutex held). */
static void
client_check_fork(struct idgen_client *c)
{
	uint64_t	 e = client_epoch();

	if (c->epoch != e)
		client_forked(c, e);
}

static uint64_t
client_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A CLOCK_MONOTONIC deadline ms from now, for the condition variables. */
static void
client_deadline(struct timespec *ts, uint64_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

IDGEN_EXPORT idgen_client *
idgen_open(const char *servers, const struct idgen_options *o, char *err,
    size_t errlen)
{
	return client_open(servers, o, NULL, err, errlen);
}

idgen_client *
client_open(const char *servers, const struct idgen_options *opt,
    const struct client_transport *t, char *err, size_t errlen)
{
	struct idgen_client	*c;
	struct idgen_options	 o;
	const char		*p, *e;
	unsigned		 i, cap;
	char			 dummy[8];

	if (err == NULL || errlen == 0) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	pthread_once(&client_once, client_init_once);
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
		snprintf(err, errlen, "no idserver given (host:port[,host:port...])");
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
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->o = o;
	c->eps = calloc(IDGEN_SERVERS_MAX, sizeof(*c->eps));
	c->req = malloc((size_t)o.max_batch * CLIENT_REQ_MAX);
	c->got = calloc(o.max_batch, sizeof(*c->got));
	cap = (unsigned)(o.max_held / o.fetch_ids) + o.max_batch + 2;
	if (c->eps == NULL || c->req == NULL || c->got == NULL ||
	    !held_init(&c->held, cap)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (p = servers; ; p = e + 1) {
		e = strchr(p, ',');
		if (e == NULL)
			e = p + strlen(p);
		if (c->neps == IDGEN_SERVERS_MAX) {
			snprintf(err, errlen, "more than %d idservers", IDGEN_SERVERS_MAX);
			goto fail;
		}
		if (!wire_init(&c->eps[c->neps].w, p, (size_t)(e - p), err, errlen))
			goto fail;
		c->neps++;
		if (*e == '\0')
			break;
	}
	c->reqline = (size_t)snprintf(c->req, CLIENT_REQ_MAX, "BLOCK %u\n", o.fetch_ids);
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
	c->epoch = client_epoch();
	c->target = o.min_held;
	/* Clients of many processes spread over the list; then it sticks. */
	c->cur = (unsigned)((uint64_t)getpid() * 2654435761u % c->neps);
	c->st.server = c->cur;
	pthread_mutex_lock(&client_registry_mu);
	c->next_client = client_registry;
	client_registry = c;
	pthread_mutex_unlock(&client_registry_mu);
	return c;
fail:
	for (i = 0; i < c->neps; i++)
		wire_free(&c->eps[i].w);
	held_free(&c->held);
	free(c->got);
	free(c->req);
	free(c->eps);
	free(c);
	return NULL;
}

IDGEN_EXPORT void
idgen_close(idgen_client *c)
{
	struct idgen_client	**pp;
	unsigned		 i;
	bool			 join;

	if (c == NULL)
		return;
	pthread_mutex_lock(&client_registry_mu);
	for (pp = &client_registry; *pp != NULL; pp = &(*pp)->next_client)
		if (*pp == c) {
			*pp = c->next_client;
			break;
		}
	pthread_mutex_unlock(&client_registry_mu);
	pthread_mutex_lock(&c->mu);
	client_check_fork(c);
	join = c->thread_on;
	c->stopping = true;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->mu);
	if (join)
		pthread_join(c->thread, NULL);
	for (i = 0; i < c->neps; i++)
		wire_free(&c->eps[i].w);
	held_free(&c->held);
	pthread_cond_destroy(&c->wake);
	pthread_cond_destroy(&c->filled);
	pthread_mutex_destroy(&c->mu);
	free(c->got);
	free(c->req);
	free(c->eps);
	free(c);
}

/* Starts the refill thread if this process has none yet (mutex held). */
static bool
client_start(struct idgen_client *c)
{
	sigset_t	 all, old;
	int		 rc;

	if (c->thread_on)
		return true;
	/* Signals stay with the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&c->thread, NULL, client_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return false;
	c->thread_on = true;
	c->stopping = false;
	return true;
}

/* Re-reads the consumption rate and sets the refill target (mutex held). */
static void
client_rate(struct idgen_client *c, uint64_t now)
{
	double		 r, t;

	if (c->rate_t == 0)
		c->rate_t = now;
	if (now - c->rate_t < CLIENT_RATE_MIN_MS)
		return;
	r = (double)c->taken * 1000.0 / (double)(now - c->rate_t);
	c->rate = c->rate > 0 ? (c->rate + r) / 2 : r;
	c->taken = 0;
	c->rate_t = now;
	t = c->rate * c->o.lead_ms / 1000.0;
	if (t < (double)c->o.min_held)
		t = (double)c->o.min_held;
	/* Room above the target for half again (see client_main). */
	if (t > (double)c->o.max_held * 2 / 3)
		t = (double)c->o.max_held * 2 / 3;
	if (t < (double)c->o.min_held)
		t = (double)c->o.min_held;
	c->target = (uint64_t)t;
}

/* The refill thread: keeps the held IDs above the target. */
static void *
client_main(void *arg)
{
	struct idgen_client	*c = arg;
	struct timespec		 ts;
	uint64_t		 now, need, high, wait_ms;
	unsigned		 nblocks, got, i;

	pthread_mutex_lock(&c->mu);
	while (!c->stopping) {
		now = client_now_ms();
		client_rate(c, now);
		if (c->held.ids >= c->target && c->rounds >= c->want_round) {
			client_deadline(&ts, CLIENT_IDLE_MS);
			pthread_cond_timedwait(&c->wake, &c->mu, &ts);
			continue;
		}
		/* Up to half again the target: batches stay large at high rates. */
		high = c->target + c->target / 2;
		if (high > c->o.max_held)
			high = c->o.max_held;
		need = c->held.ids < high ? high - c->held.ids : 1;
		need = (need + c->o.fetch_ids - 1) / c->o.fetch_ids;
		nblocks = need > c->o.max_batch ? c->o.max_batch : (unsigned)need;
		pthread_mutex_unlock(&c->mu);
		got = client_fetch(c, nblocks);
		pthread_mutex_lock(&c->mu);
		/* A full ring drops its oldest range: lost IDs, never reused ones. */
		for (i = 0; i < got; i++)
			c->st.ids_dropped += held_add(&c->held, c->got[i].first,
			    c->got[i].count);
		c->rounds++;
		pthread_cond_broadcast(&c->filled);
		if (c->all_down && !c->stopping) {
			now = client_now_ms();
			wait_ms = c->retry_at > now ? c->retry_at - now : 1;
			client_deadline(&ts, wait_ms);
			pthread_cond_timedwait(&c->wake, &c->mu, &ts);
		}
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* One reply line of a round: a block, an ERR, or something not understood. */
static bool
client_line(void *arg, const char *p, const char *e)
{
	struct client_round	*r = arg;
	struct idgen_client	*c = r->c;
	const char		*code, *msg;
	size_t			 codelen, msglen;
	uint64_t		 first, n;

	if (r->bad)
		return true;
	if (reply_block(p, e, &first, &n) && n == c->o.fetch_ids) {
		c->got[r->blocks++] = (struct held_range){ first, n };
		return true;
	}
	if (reply_err(p, e, &code, &codelen, &msg, &msglen)) {
		if (r->errs++ == 0)
			snprintf(r->why, sizeof(r->why), "ERR %.*s %.*s", (int)codelen,
			    code, (int)(msglen > 160 ? 160 : msglen), msg);
		return true;
	}
	/* Not a reply to BLOCK: nothing after it can be trusted either. */
	r->bad = true;
	snprintf(r->why, sizeof(r->why), "reply not understood (%zu bytes)",
	    (size_t)(e - p));
	return true;
}

/*
 * One refill round, without the mutex: nblocks BLOCK requests to the first
 * usable endpoint, then the next ones on failure. Each attempt gets its share
 * of timeout_ms (timeout_ms / endpoints), so one that hangs cannot use up the
 * whole wait of a caller before the others are tried. Returns the blocks in
 * c->got; records failures and the all-down state.
 */
static unsigned
client_fetch(struct idgen_client *c, unsigned nblocks)
{
	struct client_round	 r;
	struct client_ep	*ep;
	char			 msg[IDGEN_ERR_LEN], all[IDGEN_ERR_LEN];
	uint64_t		 now, retry = UINT64_MAX;
	unsigned		 i, k, lines, failures = 0, failovers = 0, share, conn_ms;
	size_t			 alen = 0;
	bool			 stop;

	all[0] = '\0';
	share = c->o.timeout_ms / c->neps > 0 ? c->o.timeout_ms / c->neps : 1;
	conn_ms = c->o.connect_timeout_ms < share ? c->o.connect_timeout_ms : share;
	for (i = 0; i < c->neps; i++) {
		k = (c->cur + i) % c->neps;
		ep = &c->eps[k];
		now = client_now_ms();
		if (ep->down_until > now) {
			if (ep->down_until < retry)
				retry = ep->down_until;
			if (alen < sizeof(all) - 1)
				alen += (size_t)snprintf(all + alen, sizeof(all) - alen,
				    "%s%s: waiting out its retry delay", alen ? "; " : "",
				    ep->w.name);
			continue;
		}
		pthread_mutex_lock(&c->mu);
		stop = c->stopping;
		c->trying = k;
		c->trying_since = now;
		pthread_mutex_unlock(&c->mu);
		if (stop)
			break;
		memset(&r, 0, sizeof(r));
		r.c = c;
		msg[0] = '\0';
		lines = c->tr.exchange(c->tr.ctx, k, c->req, nblocks * c->reqline,
		    nblocks, conn_ms, share, client_line, &r, msg, sizeof(msg));
		if (r.bad)
			c->tr.reset(c->tr.ctx, k);
		if (r.blocks > 0) {
			pthread_mutex_lock(&c->mu);
			c->st.round_trips++;
			c->st.requests += r.blocks;
			c->st.ids_fetched += (uint64_t)r.blocks * c->o.fetch_ids;
			c->st.failures += failures + (lines < nblocks || r.bad);
			c->st.failovers += failovers;
			c->st.server = k;
			c->all_down = false;
			c->lasterr[0] = '\0';
			c->trying_since = 0;
			c->cur = k;
			pthread_mutex_unlock(&c->mu);
			ep->backoff_ms = 0;
			ep->down_until = 0;
			return r.blocks;
		}
		/* Nothing from this one: skip it for a while, try the next. */
		failures++;
		if (i + 1 < c->neps)
			failovers++;
		ep->backoff_ms = ep->backoff_ms == 0 ? c->o.retry_min_ms :
		    ep->backoff_ms >= c->o.retry_max_ms / 2 ? c->o.retry_max_ms :
		    ep->backoff_ms * 2;
		ep->down_until = client_now_ms() + ep->backoff_ms;
		if (ep->down_until < retry)
			retry = ep->down_until;
		if (alen < sizeof(all) - 1)
			alen += (size_t)snprintf(all + alen, sizeof(all) - alen, "%s%s",
			    alen ? "; " : "", msg[0] ? msg : r.why[0] ? r.why :
			    "no reply");
		if (msg[0] && r.why[0] && alen < sizeof(all) - 1)
			alen += (size_t)snprintf(all + alen, sizeof(all) - alen,
			    " (%s: %s)", ep->w.name, r.why);
		else if (!msg[0] && r.why[0] && alen < sizeof(all) - 1)
			alen += (size_t)snprintf(all + alen, sizeof(all) - alen,
			    " from %s", ep->w.name);
	}
	pthread_mutex_lock(&c->mu);
	c->trying_since = 0;
	c->st.failures += failures;
	c->st.failovers += failovers;
	c->all_down = true;
	c->retry_at = retry == UINT64_MAX ? client_now_ms() + c->o.retry_min_ms : retry;
	if (alen > 0)
		snprintf(c->lasterr, sizeof(c->lasterr), "%s", all);
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* Counts IDs leaving the held ranges; wakes the refill thread (mutex held). */
static void
client_took(struct idgen_client *c, uint64_t n)
{
	c->taken += n;
	if (c->held.ids < c->target)
		pthread_cond_signal(&c->wake);
}

/*
 * Waits (mutex held) for a refill after a take failed: IDGEN_OK to try
 * again, or why not. *deadline is set on the first call.
 */
static int
client_wait(struct idgen_client *c, uint64_t *deadline)
{
	struct timespec	 ts;
	uint64_t	 now = client_now_ms(), seen;

	if (*deadline == 0)
		*deadline = now + c->o.timeout_ms;
	if (!client_start(c))
		return client_fail(IDGEN_ENOMEM, "cannot start the refill thread");
	if (c->all_down && now < c->retry_at)
		return client_fail(IDGEN_EUNAVAILABLE, "no IDs held and no idserver "
		    "could give any: %s", c->lasterr);
	if (now >= *deadline) {
		if (c->trying_since != 0)
			return client_fail(IDGEN_ETIMEOUT, "no IDs arrived within %u ms "
			    "(timeout_ms): %s has not answered for %llu ms%s%s",
			    c->o.timeout_ms, c->eps[c->trying].w.name,
			    (unsigned long long)(now - c->trying_since),
			    c->lasterr[0] ? "; before: " : "", c->lasterr);
		return client_fail(IDGEN_ETIMEOUT, "no IDs arrived within %u ms "
		    "(timeout_ms)%s%s", c->o.timeout_ms, c->lasterr[0] ? "; last "
		    "failure: " : "", c->lasterr);
	}
	/* A round that ends after this point: IDs, or news of a failure. */
	seen = c->rounds;
	if (c->want_round < seen + 1)
		c->want_round = seen + 1;
	pthread_cond_signal(&c->wake);
	while (c->rounds == seen && c->thread_on && (now = client_now_ms()) < *deadline) {
		client_deadline(&ts, *deadline - now);
		pthread_cond_timedwait(&c->filled, &c->mu, &ts);
	}
	return IDGEN_OK;
}

/* This thread's share of c, moved to the first slot. */
static struct client_tl *
client_share(struct idgen_client *c)
{
	struct client_tl	 t;
	unsigned		 i;

	for (i = 0; i < CLIENT_TL_SLOTS - 1; i++)
		if (client_tl[i].serial == c->serial)
			break;
	/* Not found: the last slot's share is given up (those IDs are lost). */
	t = client_tl[i];
	if (t.serial != c->serial)
		t = (struct client_tl){ c->serial, 0, 0, 0 };
	memmove(&client_tl[1], &client_tl[0], i * sizeof(client_tl[0]));
	client_tl[0] = t;
	return &client_tl[0];
}

/* idgen_next when the thread's share is empty, stale or elsewhere. */
static int
client_next_slow(struct idgen_client *c, uint64_t *id)
{
	struct client_tl	*t = client_share(c);
	uint64_t		 first, k, deadline = 0;
	int			 rc;

	if (t->next < t->end && t->epoch == client_epoch()) {
		*id = t->next++;
		return IDGEN_OK;
	}
	pthread_mutex_lock(&c->mu);
	for (;;) {
		client_check_fork(c);
		if ((k = held_take(&c->held, c->o.chunk, &first)) > 0)
			break;
		if ((rc = client_wait(c, &deadline)) != IDGEN_OK) {
			pthread_mutex_unlock(&c->mu);
			return rc;
		}
	}
	client_took(c, k);
	t->epoch = c->epoch;
	pthread_mutex_unlock(&c->mu);
	*id = first;
	t->next = first + 1;
	t->end = first + k;
	return IDGEN_OK;
}

IDGEN_EXPORT int
idgen_next(idgen_client *c, uint64_t *id)
{
	struct client_tl	*t = &client_tl[0];

	if (LIKELY(t->serial == c->serial && t->next < t->end &&
	    t->epoch == atomic_load_explicit(client_epoch_page, memory_order_relaxed))) {
		*id = t->next++;
		return IDGEN_OK;
	}
	return client_next_slow(c, id);
}

/* Takes n dense IDs from this thread's share of c, if it holds that many now. */
static bool
client_share_take(struct idgen_client *c, unsigned n, uint64_t *first)
{
	struct client_tl	*t = client_share(c);

	if (t->end - t->next < n || t->epoch != client_epoch())
		return false;
	*first = t->next;
	t->next += n;
	return true;
}

/*
 * Takes n IDs from the held ranges, waiting for refills: a dense block at
 * *out (block), or an ascending list in out[0..n).
 */
static int
client_take_held(struct idgen_client *c, unsigned n, uint64_t *out, bool block)
{
	uint64_t	 deadline = 0, dropped = 0;
	bool		 ok;
	int		 rc;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		client_check_fork(c);
		if (block) {
			ok = held_take_block(&c->held, n, out, &dropped);
			c->st.ids_dropped += dropped;
		} else
			ok = held_take_list(&c->held, n, out);
		if (ok)
			break;
		/* For a block, IDs may be held in pieces smaller than n. */
		if ((rc = client_wait(c, &deadline)) != IDGEN_OK) {
			pthread_mutex_unlock(&c->mu);
			return rc;
		}
	}
	client_took(c, n);
	pthread_mutex_unlock(&c->mu);
	return IDGEN_OK;
}

IDGEN_EXPORT int
idgen_ids(idgen_client *c, unsigned n, uint64_t *out)
{
	uint64_t	 first;
	unsigned	 i;

	if (n < 1 || n > IDGEN_IDS_MAX || out == NULL)
		return client_fail(IDGEN_EINVAL, "ids: n is 1..%d", IDGEN_IDS_MAX);
	if (client_share_take(c, n, &first)) {
		for (i = 0; i < n; i++)
			out[i] = first + i;
		return IDGEN_OK;
	}
	return client_take_held(c, n, out, false);
}

IDGEN_EXPORT int
idgen_block(idgen_client *c, unsigned n, uint64_t *first)
{
	if (n < 1 || n > c->o.fetch_ids || first == NULL)
		return client_fail(IDGEN_EINVAL, "block: n is 1..%u (fetch_ids)",
		    c->o.fetch_ids);
	if (client_share_take(c, n, first))
		return IDGEN_OK;
	return client_take_held(c, n, first, true);
}

IDGEN_EXPORT void
idgen_stats(idgen_client *c, struct idgen_stats *st)
{
	pthread_mutex_lock(&c->mu);
	client_check_fork(c);
	*st = c->st;
	st->ids_held = c->held.ids;
	pthread_mutex_unlock(&c->mu);
}

_Static_assert(sizeof(((struct idgen_decoded *)0)->time) == LAYOUT_ISO_LEN &&
    sizeof(((struct idgen_decoded *)0)->b58) == B58_LEN + 1,
    "the public decoded fields hold the common decode's text");

IDGEN_EXPORT int
idgen_decode(uint64_t id, uint64_t block_size, struct idgen_decoded *d)
{
	struct decode	 dec;

	memset(d, 0, sizeof(*d));
	d->id = id;
	/* The library has no pair to ask: B is the caller's, or the default. */
	if (block_size == 0)
		block_size = IDGEN_DEFAULT_BLOCK_SIZE;
	switch (decode_id(id, block_size, &dec)) {
	case LAYOUT_TICKET:
		d->kind = IDGEN_TICKET;
		d->ticket = dec.ticket;
		d->odd = dec.odd;
		break;
	case LAYOUT_SNOWFLAKE:
		d->kind = IDGEN_SNOWFLAKE;
		d->unix_ms = dec.unix_ms;
		d->worker = dec.worker;
		d->seq = dec.seq;
		memcpy(d->time, dec.iso, sizeof(d->time));
		break;
	case LAYOUT_INVALID:
	default:
		return client_fail(IDGEN_EINVAL, "an ID is 1..9223372036854775807");
	}
	memcpy(d->b58, dec.b58, sizeof(d->b58));
	return IDGEN_OK;
}

IDGEN_EXPORT int
idgen_decode_text(const char *s, uint64_t block_size, struct idgen_decoded *d)
{
	const char	*why, *e;
	uint64_t	 id;
	size_t		 len;

	len = s != NULL ? strlen(s) : 0;
	if (len > 0 && b58_is_form(s, len)) {
		if (!b58_decode(s, len, &id, &why))
			return client_fail(IDGEN_EINVAL, "\"%.16s\": %s", s, why);
	} else if ((e = reply_u64(s, s + len, &id)) == NULL || e != s + len)
		return client_fail(IDGEN_EINVAL, "\"%.24s\" is not an ID (decimal, "
		    "or 11 characters of base58)", s != NULL ? s : "");
	return idgen_decode(id, block_size, d);
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

static void
client_tcp_reset(void *ctx, unsigned ep)
{
	struct idgen_client	*c = ctx;

	wire_reset(&c->eps[ep].w);
}
