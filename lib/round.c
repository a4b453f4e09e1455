/*
 * round.c - one refill round of a client: a pipelined batch of BLOCK requests,
 * failover from endpoint to endpoint, backoff, and the reply lines read.
 */
#include "round.h"

#include "client_impl.h"
#include "clk.h"
#include "reply.h"
#include "wiretls.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* What one round trip's reply lines added up to. */
struct round {
	struct idgen_client	*c;
	unsigned		 blocks;
	unsigned		 errs;
	bool			 bad;		/* a line not understood: stop */
	bool			 nons;		/* the namespace is unknown there */
	char			 why[IDGEN_ERR_LEN];
};

static bool	round_line(void *, const char *, const char *);
static void	round_tls_counts(struct idgen_client *, uint64_t *, uint64_t *, uint64_t *);

/*
 * The TLS counters of every endpoint, and its logins that found no tokens
 * (the refill thread's own fields).
 */
static void
round_tls_counts(struct idgen_client *c, uint64_t *hs, uint64_t *res, uint64_t *unneeded)
{
	uint64_t	 h, r;
	unsigned	 i;

	*hs = *res = *unneeded = 0;
	for (i = 0; i < c->neps; i++) {
		wiretls_counts(c->eps[i].w.tlsc, &h, &r);
		*hs += h;
		*res += r;
		*unneeded += c->eps[i].w.auth_unneeded;
	}
}

/* One reply line of a round: a block, an ERR, or something not understood. */
static bool
round_line(void *arg, const char *p, const char *e)
{
	struct round		*r = arg;
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
		/*
		 * RANGE names two refusals of a namespace's BLOCK: the name is
		 * unknown, or n is above its block size; only the words tell.
		 */
		if (c->ns[0] != '\0' && codelen == 5 && memcmp(code, "RANGE", 5) == 0 &&
		    msglen >= 17 && memcmp(msg, "unknown namespace", 17) == 0)
			r->nons = true;
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
 * Each attempt gets its share of timeout_ms (timeout_ms / endpoints), so one
 * that hangs cannot use up the whole wait of a caller before the others are
 * tried.
 */
unsigned
round_fetch(struct idgen_client *c, unsigned nblocks)
{
	struct round		 r;
	struct client_ep	*ep;
	char			 msg[IDGEN_ERR_LEN], all[IDGEN_ERR_LEN];
	uint64_t		 now, retry = UINT64_MAX;
	unsigned		 i, k, lines, failures = 0, failovers = 0, share, conn_ms;
	uint64_t		 hs, res, un;
	unsigned		 nons = 0, other = 0;
	size_t			 alen = 0;
	bool			 stop;

	all[0] = '\0';
	share = c->o.timeout_ms / c->neps > 0 ? c->o.timeout_ms / c->neps : 1;
	conn_ms = c->o.connect_timeout_ms < share ? c->o.connect_timeout_ms : share;
	for (i = 0; i < c->neps; i++) {
		k = (c->cur + i) % c->neps;
		ep = &c->eps[k];
		now = clk_mono_ms();
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
		    nblocks, conn_ms, share, round_line, &r, msg, sizeof(msg));
		if (r.bad)
			c->tr.reset(c->tr.ctx, k);
		round_tls_counts(c, &hs, &res, &un);
		/* err is the exchange's only when it failed (wire.h): ERR lines are r.why. */
		if (lines == nblocks)
			msg[0] = '\0';
		if (r.blocks > 0) {
			pthread_mutex_lock(&c->mu);
			c->st.tls_handshakes = hs;
			c->st.tls_resumed = res;
			c->st.auth_unneeded = un;
			c->st.round_trips++;
			c->st.requests += r.blocks;
			c->st.ids_fetched += (uint64_t)r.blocks * c->o.fetch_ids;
			c->st.failures += failures + (lines < nblocks || r.bad);
			c->st.failovers += failovers;
			c->st.server = k;
			c->all_down = false;
			c->nons = false;
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
		if (r.nons)
			nons++;
		else if (r.errs > 0 || r.bad)
			other++;
		if (i + 1 < c->neps)
			failovers++;
		ep->backoff_ms = ep->backoff_ms == 0 ? c->o.retry_min_ms :
		    ep->backoff_ms >= c->o.retry_max_ms / 2 ? c->o.retry_max_ms :
		    ep->backoff_ms * 2;
		ep->down_until = clk_mono_ms() + ep->backoff_ms;
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
	round_tls_counts(c, &hs, &res, &un);
	pthread_mutex_lock(&c->mu);
	c->st.tls_handshakes = hs;
	c->st.tls_resumed = res;
	c->st.auth_unneeded = un;
	c->trying_since = 0;
	c->st.failures += failures;
	c->st.failovers += failovers;
	c->all_down = true;
	/* Unknown where asked, and no idserver answered anything else. */
	c->nons = nons > 0 && other == 0;
	c->retry_at = retry == UINT64_MAX ? (uint64_t)clk_mono_ms() + c->o.retry_min_ms : retry;
	if (alen > 0)
		snprintf(c->lasterr, sizeof(c->lasterr), "%s", all);
	pthread_mutex_unlock(&c->mu);
	return 0;
}
