/*
 * core.c - run commands for every protocol: arguments, bounds, ID sources,
 * waiting, the typed errors and their counters.
 */
#include "core.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "clk.h"
#include "tier.h"
#include "source.h"

/* The one mapping of errors to each protocol's form. */
static const struct core_err_info core_errs[CORE_ERR_COUNT] = {
	[CORE_OK] =		{ "OK", 200, "OK", 0, 0 },
	[CORE_ERR_BADREQ] =	{ "BADREQ", 400, "Bad Request", 3, 0 },	/* INVALID_ARGUMENT */
	[CORE_ERR_RANGE] =	{ "RANGE", 400, "Bad Request", 3, 0 },	/* INVALID_ARGUMENT */
	[CORE_ERR_UNAVAILABLE] = { "UNAVAILABLE", 503, "Service Unavailable", 14, 1 },
	[CORE_ERR_CLOCK] =	{ "CLOCK", 503, "Service Unavailable", 14, 1 },	/* UNAVAILABLE */
	[CORE_ERR_NOAUTH] =	{ "NOAUTH", 401, "Unauthorized", 16, 0 },	/* UNAUTHENTICATED */
	[CORE_ERR_WRONGPASS] =	{ "WRONGPASS", 401, "Unauthorized", 16, 0 },	/* UNAUTHENTICATED */
	[CORE_ERR_NOPERM] =	{ "NOPERM", 403, "Forbidden", 7, 0 },	/* PERMISSION_DENIED */
	[CORE_ERR_NONS] =	{ "RANGE", 400, "Bad Request", 5, 0 },	/* NOT_FOUND */
};

/* Redis's words for the same refusals, so Redis clients recognise them. */
#define CORE_WHY_NOAUTH		"Authentication required."
#define CORE_WHY_WRONGPASS	"invalid username-password pair or user is disabled."
#define CORE_WHY_NOPERM		"this token is read-only: no IDs (STATS, DECODE, B58, PING " \
				"are allowed)"

static const struct core_word core_words[] = {
	{ "ID",		CORE_CMD_ID,		0, true, NULL,
	    "One unique ID (of namespace ns, default: default)" },
	{ "IDS",	CORE_CMD_IDS,		1, true, "n",
	    "n unique IDs (1..1000), ascending" },
	{ "BLOCK",	CORE_CMD_BLOCK,		1, true, "n",
	    "n consecutive unique IDs (1..4096): the first and n" },
	{ "DECODE",	CORE_CMD_DECODE,	1, false, "id",
	    "What an ID is made of (decimal or base58)" },
	{ "B58",	CORE_CMD_B58,		1, false, "id",	"An ID in base58, 11 characters" },
	{ "STATS",	CORE_CMD_STATS,		0, false, NULL,	"The server's counters" },
	{ "PING",	CORE_CMD_PING,		0, false, NULL,	"Answers PONG" },
};
#define CORE_NWORDS	(sizeof(core_words) / sizeof(core_words[0]))
#define CORE_STR(x)	#x
#define CORE_XSTR(x)	CORE_STR(x)	/* a bound's digits, in a message */

static void		core_wake_cb(evutil_socket_t fd, short what, void *arg);
static void		core_timer_cb(evutil_socket_t fd, short what, void *arg);
static void		core_park(struct core *c, struct core_waiter *w);
static void		core_wake_after(struct core *c, unsigned us);
static enum core_err	core_number(const struct core_req *req, uint64_t *v, const char **why);
static enum core_err	core_count_arg(const struct core_req *req, uint64_t max,
			    uint64_t *n, const char **why);
static enum core_err	core_decode(struct core *c, const struct core_req *req,
			    struct core_result *res, const char **why);
static bool		core_take_judge(struct core *c, const struct core_req *req,
			    struct core_result *res, uint64_t *n_out, struct nsrv **ns_out);
static enum core_status	core_take(struct core *c, struct core_waiter *w,
			    const struct core_req *req, struct core_result *res);
static void		core_fail(struct core *c, struct core_result *res, enum core_err err,
			    const char *why);
static enum core_status	core_auth_failed(struct core *c, struct core_waiter *w,
			    struct auth_sess *s, struct core_result *res);
static enum auth_perm	core_cmd_perm(enum core_cmd cmd);

const struct core_err_info *
core_err_info(enum core_err err)
{
	return &core_errs[(unsigned)err < CORE_ERR_COUNT ? err : CORE_ERR_BADREQ];
}

const struct core_word *
core_lookup(const char *name, size_t len)
{
	size_t k;

	for (k = 0; k < CORE_NWORDS; k++)
		if (strlen(core_words[k].name) == len &&
		    strncasecmp(core_words[k].name, name, len) == 0)
			return &core_words[k];
	return NULL;
}

const struct core_word *
core_word_at(size_t i)
{
	return i < CORE_NWORDS ? &core_words[i] : NULL;
}

bool
core_init(struct core *c, struct event_base *base, struct source *source)
{
	memset(c, 0, sizeof(*c));
	c->base = base;
	c->source = source;
	TAILQ_INIT(&c->parked);
	c->wake = event_new(base, -1, 0, core_wake_cb, c);
	return c->wake != NULL;
}

void
core_free(struct core *c)
{
	if (c->wake != NULL)
		event_free(c->wake);
	c->wake = NULL;
}

bool
core_waiter_init(struct core_waiter *w, struct core *c, void (*resume)(void *), void *arg)
{
	memset(w, 0, sizeof(*w));
	w->core = c;
	w->resume = resume;
	w->arg = arg;
	w->timer = evtimer_new(c->base, core_timer_cb, w);
	return w->timer != NULL;
}

void
core_waiter_free(struct core_waiter *w)
{
	if (w->parked)
		TAILQ_REMOVE(&w->core->parked, w, entry);
	w->parked = false;
	if (w->timer != NULL)
		event_free(w->timer);
	w->timer = NULL;
}

/* Joins the queue of waiters; they retry in the order they parked. */
static void
core_park(struct core *c, struct core_waiter *w)
{
	if (w->parked)
		return;
	w->parked = true;
	TAILQ_INSERT_TAIL(&c->parked, w, entry);
}

/* Defers resuming parked waiters to a clean turn of the loop. */
void
core_wake(struct core *c)
{
	if (!TAILQ_EMPTY(&c->parked))
		event_active(c->wake, EV_TIMEOUT, 0);
}

/*
 * A shared wake-up at the next millisecond for waiters on the Snowflake
 * sequence: they retry in the order they parked, which is fair, where one
 * timer each would fire in no particular order.
 */
static void
core_wake_after(struct core *c, unsigned us)
{
	struct timeval tv = clk_tv_us(us), now, at, pending;

	/* Keep the earliest of the wake-ups asked for. */
	evutil_gettimeofday(&now, NULL);
	evutil_timeradd(&now, &tv, &at);
	if (evtimer_pending(c->wake, &pending) && evutil_timercmp(&pending, &at, <=))
		return;
	evtimer_add(c->wake, &tv);
}

/* Resumes parked waiters in order; each either finishes or parks again. */
static void
core_wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct core *c = arg;
	struct core_waiter *w;
	unsigned n = 0, i;

	(void)fd;
	(void)what;
	/* Count first: a waiter that parks again goes to the tail and must not loop. */
	TAILQ_FOREACH(w, &c->parked, entry)
		n++;
	for (i = 0; i < n && (w = TAILQ_FIRST(&c->parked)) != NULL; i++) {
		TAILQ_REMOVE(&c->parked, w, entry);
		w->parked = false;
		w->resume(w->arg);
	}
}

/* The refill wait expired: the waiting request may now use the fallback. */
static void
core_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct core_waiter *w = arg;

	(void)fd;
	(void)what;
	if (w->penalty == 1) {
		/* A failed token's reply was held long enough: it is answered now. */
		w->penalty = 2;
		w->resume(w->arg);
		return;
	}
	w->waited = true;
	w->timed = false;
	if (w->parked)
		TAILQ_REMOVE(&w->core->parked, w, entry);
	w->parked = false;
	w->resume(w->arg);
}

/* A name is counted as given when it is a plain word and the set has room. */
void
core_count_caller(struct core *c, const char *name, size_t len)
{
	struct core_callers *k = &c->callers;
	unsigned i;
	size_t j;

	if (len == 0) {
		k->none++;
		return;
	}
	for (j = 0; j < len && auth_name_char(name[j]); j++)
		;
	if (j < len || len >= CORE_CALLER_LEN) {
		k->other++;
		return;
	}
	for (i = 0; i < k->n; i++)
		if (strlen(k->named[i].name) == len && memcmp(k->named[i].name, name, len) == 0) {
			k->named[i].calls++;
			return;
		}
	if (k->n >= k->max || k->n >= CORE_CALLERS_MAX) {
		k->other++;
		return;
	}
	memcpy(k->named[k->n].name, name, len);
	k->named[k->n].name[len] = '\0';
	k->named[k->n].calls = 1;
	k->n++;
}

void
core_count(struct core *c, enum core_err err)
{
	c->stats.requests++;
	if (err != CORE_OK)
		c->stats.errors[err]++;
}

/* Fills an error result and counts it under its class. */
static void
core_fail(struct core *c, struct core_result *res, enum core_err err, const char *why)
{
	res->err = err;
	res->why = why;
	c->stats.errors[err]++;
}

bool
core_reject(struct core *c, enum core_err err, const char *why, struct core_result *res)
{
	c->stats.requests++;
	core_fail(c, res, err, why);
	return false;
}

/* A strict unsigned decimal of at most 20 digits. */
static enum core_err
core_number(const struct core_req *req, uint64_t *v, const char **why)
{
	uint64_t x = 0;
	size_t i;

	if (req->arg == NULL || req->arglen == 0) {
		*why = "missing or extra argument";
		return CORE_ERR_BADREQ;
	}
	for (i = 0; i < req->arglen; i++)
		if (req->arg[i] < '0' || req->arg[i] > '9') {
			*why = "argument is not a decimal number";
			return CORE_ERR_BADREQ;
		}
	if (req->arglen > 20) {
		*why = "number too large";
		return CORE_ERR_RANGE;
	}
	for (i = 0; i < req->arglen; i++) {
		unsigned d = (unsigned)(req->arg[i] - '0');

		if (x > (UINT64_MAX - d) / 10) {
			*why = "number too large";
			return CORE_ERR_RANGE;
		}
		x = x * 10 + d;
	}
	*v = x;
	return CORE_OK;
}

/* The n of IDS or BLOCK: a number in 1..max. */
static enum core_err
core_count_arg(const struct core_req *req, uint64_t max, uint64_t *n, const char **why)
{
	enum core_err e = core_number(req, n, why);

	if (e != CORE_OK)
		return e;
	if (*n < 1 || *n > max) {
		*why = max == CORE_IDS_MAX ? "n must be 1..1000" : "n must be 1..4096";
		return CORE_ERR_RANGE;
	}
	return CORE_OK;
}

bool
core_take_args(struct core *c, const struct core_req *req, struct core_result *res)
{
	struct nsrv *ns;
	uint64_t n;

	res->err = CORE_OK;
	res->why = NULL;
	return core_take_judge(c, req, res, &n, &ns);
}

/* Which path made an ID, from its decimal or base58 form. */
static enum core_err
core_decode(struct core *c, const struct core_req *req, struct core_result *res,
    const char **why)
{
	uint64_t b = c->source->tier->block_size, id = 0;
	enum core_err e;

	memset(&res->dec, 0, sizeof(res->dec));
	res->from_b58 = false;
	if (req->arg != NULL && b58_is_form(req->arg, req->arglen)) {
		if (!b58_decode(req->arg, req->arglen, &id, why))
			return strstr(*why, "above") != NULL ? CORE_ERR_RANGE : CORE_ERR_BADREQ;
		res->from_b58 = true;
	} else if ((e = core_number(req, &id, why)) != CORE_OK)
		return e;
	if (decode_id(id, b, &res->dec) != LAYOUT_INVALID)
		decode_regions(&res->dec, server_increment(), server_region_bits());
	if (res->dec.region == LAYOUT_INVALID) {
		*why = "an ID is 1..9223372036854775807";
		return CORE_ERR_RANGE;
	}
	if (res->dec.region == LAYOUT_TICKET && b == 0) {
		*why = "block size unknown until a ticket server has answered";
		return CORE_ERR_UNAVAILABLE;
	}
	return CORE_OK;
}

void
core_health(const struct core *c, struct core_health *h)
{
	const struct source *s = c->source;

	h->ok = s->mode != SOURCE_MODE_DOWN;
	h->mode = source_mode_name(s->mode);
	source_mode_reason(s, h->reason, sizeof(h->reason));
	h->ids_buffered = pool_available(&s->tier->seq.pool);
	h->lease = source_lease_state(s);
	h->lease_window_end = s->lease->window_end;
	h->witness_pending[0] = '\0';
	for (unsigned i = 0, n = 0; i < server_count(); i++)
		if (s->tier->srv[i].witness_pending)
			n += (unsigned)snprintf(h->witness_pending + n,
			    n < sizeof(h->witness_pending) ? sizeof(h->witness_pending) - n : 0,
			    "%s%s", n ? " " : "", s->tier->srv[i].name);
	/* A reload that left tokens out is shown, not only logged (docs/operations.md). */
	h->auth = c->auth == NULL ? NULL : c->auth->clean ? "clean" : "not clean";
	h->auth_why = c->auth != NULL && !c->auth->clean ? c->auth->why : NULL;
}

/*
 * A take's arguments judged, nothing taken: its count, its token's namespaces,
 * the namespace (its name, known, the count within its B). False with res's
 * error; else *n and *ns (NULL: the default sequence).
 */
static bool
core_take_judge(struct core *c, const struct core_req *req, struct core_result *res,
    uint64_t *n_out, struct nsrv **ns_out)
{
	const char *why = "";
	uint64_t n = 1;
	enum core_err e;
	struct nsrv *ns = NULL;

	if (req->cmd != CORE_CMD_ID &&
	    (e = core_count_arg(req, req->cmd == CORE_CMD_BLOCK ? CORE_BLOCK_MAX : CORE_IDS_MAX,
	    &n, &why)) != CORE_OK)
		return core_reject(c, e, why, res);
	/* A token limited to namespaces (ns= in auth_tokens_file): its session is current. */
	if (c->auth != NULL && req->sess != NULL && req->sess->tok != NULL &&
	    !auth_ns_allowed(req->sess, req->ns != NULL ? req->ns : "default",
	    req->ns != NULL ? req->nslen : 7))
		return core_reject(c, CORE_ERR_NOPERM, "this token may not take IDs of this "
		    "namespace (ns= in auth_tokens_file)", res);
	if (req->ns != NULL && !(req->nslen == 7 && memcmp(req->ns, "default", 7) == 0)) {
		if (!ns_name_ok(req->ns, req->nslen))
			return core_reject(c, CORE_ERR_BADREQ, "a namespace name is 1.."
			    CORE_XSTR(NS_NAME_MAX) " letters, digits or _", res);
		if ((ns = source_ns_find(c->source, req->ns, req->nslen)) == NULL)
			return core_reject(c, CORE_ERR_NONS, "unknown namespace "
			    "(idgenctl ns list)", res);
		/* A BLOCK never crosses a ticket; IDS n must fit the buffered tickets. */
		if (req->cmd == CORE_CMD_BLOCK ? n > ns->b : n > POOL_RANGES_ROOM * ns->b) {
			snprintf(c->why_buf, sizeof(c->why_buf), req->cmd == CORE_CMD_BLOCK ?
			    "BLOCK n is at most the namespace's block size B = %" PRIu64 :
			    "IDS n is at most %" PRIu64 " (56 x the namespace's block size B)",
			    req->cmd == CORE_CMD_BLOCK ? ns->b : POOL_RANGES_ROOM * ns->b);
			return core_reject(c, CORE_ERR_RANGE, c->why_buf, res);
		}
	}
	*n_out = n;
	*ns_out = ns;
	return true;
}

/* ID, IDS, BLOCK: from the source, or park the waiter (refill, next millisecond). */
static enum core_status
core_take(struct core *c, struct core_waiter *w, const struct core_req *req,
    struct core_result *res)
{
	enum source_status st;
	const char *why = "";
	unsigned wait_us = 0;
	uint64_t n = 1;
	struct nsrv *ns = NULL;

	if (!core_take_judge(c, req, res, &n, &ns))
		return CORE_DONE;
	st = source_take(c->source, ns, req->cmd == CORE_CMD_BLOCK, (unsigned)n,
	    req->cmd == CORE_CMD_BLOCK ? &res->first : res->ids, w->waited, &wait_us, &why);
	if (st == SOURCE_NEXT_MS) {
		/* In line behind the waiters already waiting for the next millisecond. */
		core_park(c, w);
		core_wake_after(c, wait_us);
		return CORE_PENDING;
	}
	if (st == SOURCE_WAIT) {
		/* A wake-up that brought nothing keeps the original deadline. */
		if (!w->timed) {
			struct timeval tv = clk_tv_us(wait_us);

			if (!w->waited)
				c->stats.waits++;
			evtimer_add(w->timer, &tv);
			w->timed = true;
		}
		core_park(c, w);
		return CORE_PENDING;
	}
	w->waited = false;
	if (w->timed) {
		evtimer_del(w->timer);
		w->timed = false;
	}
	c->stats.requests++;
	res->count = (unsigned)n;
	if (st != SOURCE_OK)
		core_fail(c, res, st == SOURCE_CLOCK ? CORE_ERR_CLOCK : CORE_ERR_UNAVAILABLE, why);
	return CORE_DONE;
}

/* What a command needs: IDs a read-write token, the rest a read-only one. */
static enum auth_perm
core_cmd_perm(enum core_cmd cmd)
{
	switch (cmd) {
	case CORE_CMD_ID:
	case CORE_CMD_IDS:
	case CORE_CMD_BLOCK:
		return AUTH_PERM_ALL;
	case CORE_CMD_AUTH:
		return AUTH_PERM_NONE;
	default:
		return AUTH_PERM_RO;
	}
}

/*
 * A token that is not one: counted for its address, and from an address past
 * AUTH_FAIL_FREE failures the reply is held auth_fail_delay_ms on the
 * waiter's timer (never answered faster than a right one would be).
 */
static enum core_status
core_auth_failed(struct core *c, struct core_waiter *w, struct auth_sess *s,
    struct core_result *res)
{
	unsigned ms;

	if (w == NULL || w->penalty == 0) {
		ms = auth_fail_note(c->auth, s->fd, clk_mono_ms());
		if (ms > 0 && w != NULL) {
			struct timeval tv = clk_tv_ms(ms);

			w->penalty = 1;
			c->auth->stats.delayed++;
			evtimer_add(w->timer, &tv);
			return CORE_PENDING;
		}
	}
	if (w != NULL)
		w->penalty = 0;
	s->presented = false;
	explicit_bzero(s->pending, sizeof(s->pending));
	core_reject(c, CORE_ERR_WRONGPASS, CORE_WHY_WRONGPASS, res);
	return CORE_DONE;
}

enum core_status
core_auth(struct core *c, struct core_waiter *w, struct auth_sess *s, enum auth_perm need,
    struct core_result *res)
{
	const struct auth_token *t;
	enum auth_perm have;

	res->err = CORE_OK;
	res->why = NULL;
	if (s != NULL && s->presented) {
		t = auth_find(c->auth, s->pending);
		if (t == NULL || s->user_bad)
			return core_auth_failed(c, w, s, res);
		memcpy(s->hash, s->pending, sizeof(s->hash));
		explicit_bzero(s->pending, sizeof(s->pending));
		s->presented = false;
		s->has = true;
		s->gen = c->auth->gen;
		s->perm = t->perm;
		s->tok = t;
	}
	if (w != NULL)
		w->penalty = 0;
	if (need == AUTH_PERM_NONE)
		return CORE_DONE;
	have = s != NULL ? auth_perm(c->auth, s) : AUTH_PERM_NONE;
	/* docs/design.md section 7: optional mode serves, and counts, who gave none. */
	if (have == AUTH_PERM_NONE && c->auth->optional)
		c->stats.anonymous++;
	else if (have == AUTH_PERM_NONE)
		core_reject(c, CORE_ERR_NOAUTH, CORE_WHY_NOAUTH, res);
	else if (have < need)
		core_reject(c, CORE_ERR_NOPERM, CORE_WHY_NOPERM, res);
	return CORE_DONE;
}

bool
core_auth_anonymous(const struct core *c, struct auth_sess *s)
{
	return c->auth != NULL && c->auth->optional && s != NULL && !s->presented &&
	    auth_perm(c->auth, s) == AUTH_PERM_NONE;
}

enum core_status
core_exec(struct core *c, struct core_waiter *w, const struct core_req *req,
    struct core_result *res)
{
	const char *why = "";
	enum core_err e;

	res->err = CORE_OK;
	res->why = NULL;
	res->count = 0;
	/* Without auth_tokens_file, this one branch is all authentication costs. */
	if (c->auth != NULL) {
		if (core_auth(c, w, req->sess, core_cmd_perm(req->cmd), res) == CORE_PENDING)
			return CORE_PENDING;
		if (res->err != CORE_OK)
			return CORE_DONE;
	}
	switch (req->cmd) {
	case CORE_CMD_ID:
	case CORE_CMD_IDS:
	case CORE_CMD_BLOCK:
		if (core_take(c, w, req, res) == CORE_PENDING)
			return CORE_PENDING;
		if (res->err == CORE_OK && w != NULL)
			w->served = true;
		return CORE_DONE;
	case CORE_CMD_DECODE:
	case CORE_CMD_B58:
		e = req->cmd == CORE_CMD_DECODE ? core_decode(c, req, res, &why) :
		    core_number(req, &res->dec.id, &why);
		if (e == CORE_OK && req->cmd == CORE_CMD_B58 &&
		    layout_region(res->dec.id) == LAYOUT_INVALID) {
			why = "an ID is 1..9223372036854775807";
			e = CORE_ERR_RANGE;
		}
		if (e != CORE_OK) {
			core_reject(c, e, why, res);
			return CORE_DONE;
		}
		if (req->cmd == CORE_CMD_B58)
			b58_encode(res->dec.id, res->dec.b58);
		break;
	case CORE_CMD_STATS:
	case CORE_CMD_PING:
		break;
	case CORE_CMD_AUTH:
		if (c->auth == NULL) {
			core_reject(c, CORE_ERR_BADREQ, "AUTH called without any token configured "
			    "(auth_tokens_file)", res);
			return CORE_DONE;
		}
		break;
	}
	c->stats.requests++;
	if (req->cmd != CORE_CMD_AUTH && w != NULL)
		w->served = true;
	return CORE_DONE;
}
