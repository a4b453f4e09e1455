/*
 * tier.c - prefetch ticket blocks from the odd/even pair into the pool, or
 * from another region's pair while ours is down; and every namespace on our
 * region's servers (docs/design.md 13.6): the namespace check after every
 * server check, its witness, one namespace ticket at a time on a server's
 * connection (ticket.c's one transaction, 13.7). Only our own region's
 * servers serve namespaces; with none of them up a namespace falls back by
 * its policy (source.c).
 */
#include "tier.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "clk.h"
#include "layout.h"
#include "log.h"
#include "rules.h"

static bool	tier_notify(struct ticket_server *s, enum ticket_event ev, uint64_t ticket,
		    void *arg);
static bool	tier_need(const struct tier *t, const struct nsrv *ns);
static bool	tier_fetch_next(struct tier *t, struct nsrv *ns);
static void	tier_refill(struct tier *t);
static void	tier_rate_cb(evutil_socket_t fd, short what, void *arg);
static double	tier_fetch_ms(const struct tier *t);
static bool	tier_merge_marks(struct tier *t, struct ticket_server *s);
static uint64_t	tier_mark_ticket(const struct tier *t, unsigned i, uint64_t b);
static bool	tier_raise_copies(struct tier *t, const struct ticket_server *s);
static void	tier_publish_marks(struct tier *t);
static bool	tier_save(struct tier *t);
static void	tier_saved(struct tier *t, bool ok);
static void	tier_merged(void *arg, bool ok, uint64_t index, uint64_t ticket);
static bool	tier_write_ahead(struct tier *t, struct nsrv *ns, const struct ticket_server *s,
		    uint64_t tk);
static bool	tier_write_ended(struct tier *t, struct nsrv *ns, unsigned i, uint64_t tk,
		    uint32_t conn, bool ok);
static void	tier_written(void *arg, bool ok, uint64_t a, uint64_t tk);
static void	tier_bank(struct tier *t, struct nsrv *ns, unsigned i, uint64_t tk, bool alone);
static void	tier_durable(struct tier *t, struct nsrv *ns, unsigned i, uint64_t tk,
		    uint32_t conn);
static void	tier_conn_ended(struct tier *t, unsigned i);
static void	tier_await_drop(struct tier *t, unsigned i, const struct nsrv *only);
static bool	tier_other_up(const struct tier *t, const struct ticket_server *s);
static void	tier_copy_push(struct tier *t);
static bool	tier_copy_send(struct tier *t, struct nsrv *ns, unsigned i, unsigned j);
static void	tier_copied(struct db_conn *db, const struct db_result *r, void *arg);
static uint64_t	tier_ticket_of(const struct tier *t, const struct state_mark *m);
static void	tier_carried_landed(struct tier *t, const struct ticket_server *s,
		    struct nsrv *ns);
static void	tier_note_region(struct tier *t, const struct ticket_server *s);
static void	tier_fresh_update(struct tier *t, unsigned i);
static void	tier_checked_others(struct tier *t, struct ticket_server *s);
static void	tier_waits_watch(struct tier *t);
static void	tier_raise_read(struct tier *t, struct ticket_server *s);
static void	tier_read(struct tier *t, struct ticket_server *s);
static void	tier_silent(struct tier *t, unsigned h);
static bool	tier_cannot_answer(const struct tier *t, unsigned h, uint64_t now);
static bool	tier_refused(const struct ticket_server *s);
static void	tier_unasked(struct tier *t, unsigned i, unsigned h, uint64_t now);
static void	tier_ns_checked(struct db_conn *db, const struct db_result *r, void *arg);
static void	tier_ns_check_ended(struct db_conn *db, const struct db_result *r, void *arg);
static void	tier_ns_read(struct ticket_server *s, const struct db_result *r);
static bool	tier_send_tx(struct tier *t, struct ticket_server *s, struct nsrv *ns);
static uint64_t	tier_known_now(const struct ticket_server *s);
static void	tier_ns_up_now(const struct tier *t, bool *up);
static void	tier_ns_counters(struct tier *t, unsigned i);
static bool	tier_ns_witness(struct tier *t, struct ticket_server *s);
static void	tier_ns_witnessed(struct db_conn *db, const struct db_result *r, void *arg);
static void	tier_ns_remember(struct tier *t, const struct ns_row *rows, unsigned n,
		    bool any_name);
static void	tier_ns_due(struct tier *t, unsigned i);
static uint64_t	tier_ns_known(const struct tier *t, const struct nsrv *ns, unsigned i);
static bool	tier_ns_keep(struct tier *t, const char *name, unsigned i, uint64_t hw, uint64_t b,
		    bool *changed) __attribute__((warn_unused_result));
static void	tier_ns_event(struct tier *t, struct ticket_server *s, enum ticket_event ev);
static void	tier_ns_refuse(struct tier *t, struct nsrv *ns, unsigned i, const char *why);
static bool	tier_ns_answered(struct tier *t, struct ticket_server *s);
static void	tier_ns_retired(struct tier *t, const struct ticket_server *s);
static void	tier_ns_kick_checks(struct tier *t);
static void	tier_waits_answered(struct tier *t, const struct ticket_server *s);
static int	tier_pair_in_use(const struct tier *t);
static enum seq_copy	tier_copy_verdict(const struct tier *t, const struct nsrv *ns, unsigned i,
		    uint64_t tk, bool rule_on);
static void	tier_conn_drop(struct tier *t, struct nsrv *ns, unsigned i, uint64_t tk);
static bool	tier_cross_bind(struct tier *t, const struct ticket_server *s, uint64_t b);
static bool	tier_b_refused(const struct tier *t, struct ticket_server *s);
static void	tier_ns_prune(struct tier *t);
static bool	tier_ns_usable(const struct tier *t, const struct nsrv *ns, unsigned i);

#define TIER_RATE_MS	100	/* how often the request rate is sampled */
#define TIER_COPY_SQL_MAX	1024	/* a plain copy UPDATE of one mark */

/*
 * Every namespace this server lists, each marks row of it, and its ticket
 * table's counter and engine, in one row (one line each; words as nss_parse reads them).
 * dropped names are not listed: they are never served again. The marks come
 * from a snapshot taken before the counters are read (information_schema is
 * filled before the join reads InnoDB, and is not in any snapshot): a ticket
 * committed in between raises the counter, never a mark alone (13.6).
 */
#define TIER_NS_CHECK_SQL \
    "SET SESSION group_concat_max_len = 16777216;" \
    DB_SNAPSHOT_SQL \
    "SELECT (SELECT GROUP_CONCAT(CONCAT_WS(' ', n.name, n.block_size, n.fallback, n.state, " \
    "IFNULL(t.AUTO_INCREMENT, 0), IFNULL(m.role, '-'), IFNULL(m.high_water, 0), " \
    "IFNULL(m.block_size, 0), n.start_above, IFNULL(t.ENGINE, '-')) " \
    "ORDER BY BINARY n.name, m.role " \
    "SEPARATOR '\\n') " \
    "FROM idgen_namespaces n LEFT JOIN information_schema.TABLES t ON " \
    "t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME = CONCAT('tickets_', n.name) " \
    "LEFT JOIN idgen_ns_marks m ON m.ns = n.name WHERE n.state <> 'dropped'), 1;" \
    "COMMIT"

#define TIER_NS_WITNESS_MAX	(NS_MAX_CEIL * (NS_SERVERS - 1) * 320)

/* Sets up every server from the config; nothing connects until tier_start(). */
bool
tier_init(struct tier *t, struct event_base *base, const struct config *cfg,
    struct statefile *sf, const struct db_ops *ops, void (*on_change)(void *), void *arg)
{
	struct ticket_params tp = { cfg->reprobe_min_ms, cfg->reprobe_max_ms,
	    cfg->refused_retry_ms, cfg->recheck_ms };
	struct db_params p;

	memset(t, 0, sizeof(*t));
	pool_init(&t->seq.pool);
	t->expect_block = cfg->block_size;
	t->prefetch = (struct seq_prefetch){ cfg->prefetch_blocks, cfg->prefetch_max_blocks,
	    cfg->prefetch_lead_ms };
	/* A check sent after the query in flight: both bounded by their timeouts. */
	t->wait_limit_ms = cfg->connect_timeout_ms + 6 * cfg->query_timeout_ms;
	t->partner_wait_ms = cfg->partner_wait_ms;
	t->rate_tick = event_new(base, -1, EV_PERSIST, tier_rate_cb, t);
	if (t->rate_tick == NULL)
		return false;
	t->on_change = on_change;
	t->arg = arg;
	t->sf = sf;
	nss_init(&t->nss, cfg->max_namespaces);
	t->ns_idle_ms = cfg->ns_idle_ms;
	t->seq.last_used = server_own_count() - 1;	/* the first fetch goes to server 0 */
	t->ticket_region = server_region();
	for (unsigned i = 0; i < server_count(); i++) {
		/* One round trip per ticket. */
		config_db_params(&p, cfg, i, DB_MULTI_STATEMENTS, ops);
		if (!ticket_init(&t->srv[i], base, &p, i, &tp, tier_notify, t))
			return false;
		/* Its namespace marks are read before a refusal as retired (12.5). */
		if (cfg->max_namespaces > 0 && i < server_own_count() && i < NS_SERVERS)
			t->srv[i].retired_sql = TIER_NS_CHECK_SQL;
	}
	/* The marks of the state file bind from the first ticket on. */
	if (!RULE_ON(RULE_STATE_MARKS))
		memset(t->sf->rec.mark, 0, sizeof(t->sf->rec.mark));
	tier_publish_marks(t);
	return true;
}

void
tier_free(struct tier *t)
{
	if (t->rate_tick != NULL)
		event_free(t->rate_tick);
	for (unsigned i = 0; i < server_count(); i++)
		ticket_free(&t->srv[i]);
	nss_free(&t->nss);
}

void
tier_start(struct tier *t)
{
	struct timeval tv = clk_tv_ms(TIER_RATE_MS);

	event_add(t->rate_tick, &tv);
	/* No server has answered yet: each is silent from now (partner first, 6.4). */
	for (unsigned i = 0; i < server_count(); i++)
		t->silent_since[i] = clk_mono_ms();
	for (unsigned i = 0; i < server_count(); i++)
		ticket_start(&t->srv[i]);
}

/*
 * How long a ticket takes to arrive (ms), as this process sees it: the longest
 * of the up servers' average fetch times, or of the age of a fetch still in
 * flight when that is longer (a server that became slow counts at once, not
 * only once its average has caught up).
 */
static double
tier_fetch_ms(const struct tier *t)
{
	uint64_t now = (uint64_t)clk_mono_us();	/* the clock of fetch_started_us */
	double ms = 0;

	for (unsigned i = 0; i < server_count(); i++) {
		const struct ticket_server *s = &t->srv[i];
		double f = 0;

		if (!ticket_up(s) || s->other)
			continue;
		if (s->stats.tickets > 0)
			f = (double)s->stats.fetch_us_total / (double)s->stats.tickets / 1000.0;
		if (s->state == TICKET_FETCHING && now > s->fetch_started_us &&
		    (double)(now - s->fetch_started_us) / 1000.0 > f)
			f = (double)(now - s->fetch_started_us) / 1000.0;
		if (f > ms)
			ms = f;
	}
	/* A block also waits for its copy on another server (copy first, 6.5). */
	if (t->copy_waits > 0)
		ms += (double)t->copy_wait_us_total / (double)t->copy_waits / 1000.0;
	return ms;
}

/*
 * Every TIER_RATE_MS: every sequence's rate of IDs handed out and its target
 * (seq_sample, the default's first); an idle namespace lets its IDs go.
 */
static void
tier_rate_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tier *t = arg;
	double fetch_ms = tier_fetch_ms(t);
	uint64_t now;

	(void)fd;
	(void)what;
	seq_sample(&t->seq, &t->prefetch, TIER_RATE_MS, fetch_ms, t->block_size);
	now = clk_mono_ms();
	for (unsigned k = 0; k < t->nss.n; k++) {
		struct nsrv *ns = t->nss.v[k];

		seq_sample(&ns->seq, &t->prefetch, TIER_RATE_MS, fetch_ms, ns->b);
		if (pool_available(&ns->seq.pool) > 0 && ns->seq.last_take_ms != 0 &&
		    now - ns->seq.last_take_ms > t->ns_idle_ms)
			t->ns_released += pool_clear(&ns->seq.pool);
	}
	tier_waits_watch(t);
	tier_prefetch(t);
}

/*
 * Whether sequence ns (NULL: the default) asks for another ticket (13.7): by
 * seq_need, its tickets requested and not yet banked counted (in flight on a
 * server, fetching; answered, writing: their state file write, then copy
 * first). A namespace only while served, with room in its pool for every
 * block asked for (a small B_N fills it by count), and when idle it keeps
 * nothing buffered: its first request fetches.
 */
static bool
tier_need(const struct tier *t, const struct nsrv *ns)
{
	const struct seq *q = TIER_SEQ(t, ns);
	unsigned in_flight = q->fetching + q->writing;

	if (ns == NULL)
		return t->block_size != 0 && seq_need(q, in_flight, t->block_size, false);
	if (!ns->served || ns->b == 0 || q->pool.count + in_flight >= POOL_RANGES_ROOM)
		return false;
	return seq_need(q, in_flight, ns->b, q->last_take_ms == 0 ||
	    clk_mono_ms() - q->last_take_ms > t->ns_idle_ms);
}

/*
 * Sends one ticket of ns (NULL: the default) on the next server in turn after
 * the last used (taking turns) that may take it: the default's in the region
 * in use (tier_pair_in_use: ours, or another region's pair while ours is
 * down) and fresh, a namespace's on our region's servers where it is usable.
 * True when sent; a namespace's send that failed tries the next server, the
 * default's waits for the next pass.
 */
static bool
tier_fetch_next(struct tier *t, struct nsrv *ns)
{
	struct seq *q = TIER_SEQ(t, ns);
	int first = ns != NULL ? 0 : tier_pair_in_use(t);
	unsigned f = 0, count = server_own_count() < NS_SERVERS ? server_own_count() : NS_SERVERS,
	    last;

	if (first < 0)
		return false;
	if (ns == NULL)
		server_group((unsigned)first, &f, &count);
	if (count == 0)
		return false;
	if (ns != NULL)
		last = q->last_used % count;
	else	/* last used in another region: this one's first server is next */
		last = q->last_used >= f && q->last_used < f + count ? q->last_used - f : count - 1;
	for (unsigned k = 1; k <= count; k++) {
		unsigned i = f + (last + k) % count;
		bool may = ns != NULL ? tier_ns_usable(t, ns, i) :
		    t->srv[i].state == TICKET_READY && t->fresh[i];

		if (may && tier_send_tx(t, &t->srv[i], ns)) {
			q->last_used = i;
			return true;
		}
		if (may && ns == NULL)
			return false;
	}
	return false;
}

bool
tier_any_up(const struct tier *t)
{
	for (unsigned i = 0; i < server_count(); i++)
		if (ticket_up(&t->srv[i]))
			return true;
	return false;
}

bool
tier_settled(const struct tier *t)
{
	for (unsigned i = 0; i < server_count(); i++)
		if (t->srv[i].state == TICKET_CONNECTING)
			return false;
	return true;
}

/*
 * The servers tickets come from now: our region's while one of them is up,
 * else the first other region's pair (other_regions' order) with a server
 * up; its first index, or -1 when no server anywhere is up or ours have not
 * all had their first try yet (at start, another region's pair that answers
 * first is not taken before our own could; docs/design.md section 12.3).
 */
static int
tier_pair_in_use(const struct tier *t)
{
	for (unsigned i = 0; i < server_own_count(); i++)
		if (ticket_up(&t->srv[i]))
			return 0;
	/* One of ours in its first connection attempt: not answered yet, nor failed. */
	for (unsigned i = 0; i < server_own_count(); i++)
		if (t->srv[i].state == TICKET_CONNECTING && t->srv[i].stats.connects == 1)
			return -1;
	for (unsigned p = server_own_count(); p < server_count(); p += SERVER_PAIR)
		for (unsigned r = 0; r < SERVER_PAIR; r++)
			if (ticket_up(&t->srv[p + r]))
				return (int)p;
	return -1;
}

/*
 * Keeps the target (seq_retarget) buffered or in flight, one request per
 * server, taking turns so every server carries load. A waiting BLOCK that no buffered
 * range can hold (demand) gets a fetch even when the count looks sufficient.
 */
void
tier_prefetch(struct tier *t)
{
	/*
	 * The hot path of a tier without namespaces: three tests and the default's
	 * turn. The namespaces' checks first (a server busy with a ticket still
	 * reads the catalogue), then every sequence's refill.
	 */
	if (t->nss.n > 0 || t->ns_due_some)
		tier_ns_kick_checks(t);
	tier_refill(t);
	/*
	 * After every refill: a ticket on another server carries the copies a
	 * waiting block needs; a plain copy UPDATE only where a server stays idle.
	 */
	if (t->copy_due)
		tier_copy_push(t);
}

/*
 * One refill pass over every sequence (docs/design.md 13.7): the namespaces
 * with a waiting request (demand) first, one ticket each, so the default,
 * which needs a ticket again as soon as a server is idle under load, never
 * keeps them waiting; then the default, sequence 0, up to one ticket per
 * server of ours; then every namespace, one ticket each. The namespaces in
 * turn from the one after the last that fetched (ns_next).
 */
static void
tier_refill(struct tier *t)
{
	unsigned n = t->nss.n, start = t->ns_next;

	/* Stops if an answer inside a call changed the set (its own pass refilled). */
	for (unsigned k = 0; k <= 2 * n && t->nss.n == n; k++) {
		unsigned turn = start + (k < n ? k : k - n - 1);
		struct nsrv *ns = k == n ? NULL : t->nss.v[turn % n];
		unsigned most = ns == NULL ? server_own_count() : 1;

		if (ns != NULL && k < n && !ns->seq.demand)
			continue;	/* the turns for waiting requests first */
		for (unsigned m = 0; m < most && tier_need(t, ns); m++) {
			/* Fragments that the default's BLOCKs skipped must not stop it. */
			if (ns == NULL && t->seq.pool.count >= POOL_RANGES_ROOM)
				t->ids_dropped += pool_make_room(&t->seq.pool);
			if (!tier_fetch_next(t, ns))
				break;
			if (ns != NULL)	/* the next pass starts after it */
				t->ns_next = (turn + 1) % n;
		}
	}
}

/*
 * Every sequence's take (docs/design.md 13.7). A miss raises demand: any miss
 * of a sequence that idles (a namespace keeps nothing buffered when idle: its
 * count is wanted), a BLOCK's miss of the default (its target keeps the IDs;
 * a whole fresh block is fetched). Every take runs the prefetch pass over
 * every sequence (tier_prefetch).
 */
bool
tier_take(struct tier *t, struct seq *q, bool block, unsigned n, uint64_t *out)
{
	bool ok;

	q->last_take_ms = clk_mono_ms();
	ok = seq_take(q, block, n, out);
	if (!ok && (block || q->idles)) {
		q->demand = true;
		q->want = q->idles ? n : 0;	/* the default's: any block */
	}
	tier_prefetch(t);
	return ok;
}

/*
 * The mark server i's tickets must stay above, in tickets of B = b: the known
 * one, or a foreign state file's where that is higher (it refuses in this
 * process only: copies take the known marks alone; docs/design.md 6.8).
 */
static uint64_t
tier_mark_ticket(const struct tier *t, unsigned i, uint64_t b)
{
	uint64_t known = state_mark_ticket(&t->sf->rec.mark[i], b),
	    foreign = state_mark_ticket(&t->sf->foreign[i], b);

	return foreign > known ? foreign : known;
}

/*
 * Hands each server the mark it must stay above, in tickets of its own B
 * (converted exactly from the B each mark was written under), and the copy of
 * its partner's mark it should keep, with that mark's B.
 */
static void
tier_publish_marks(struct tier *t)
{
	for (unsigned i = 0; i < server_count(); i++) {
		struct ticket_server *s = &t->srv[i];
		uint64_t b = s->block_size != 0 ? s->block_size : t->block_size;

		s->mark = tier_mark_ticket(t, i, b);
		for (unsigned j = s->group_first; j < s->group_first + s->group_count; j++) {
			s->copy_want[j] = t->sf->rec.mark[j].high_water;
			s->copy_want_b[j] = t->sf->rec.mark[j].block_size;
		}
	}
}

/* Logs a write's outcome once per failure episode. */
static void
tier_saved(struct tier *t, bool ok)
{
	if (ok) {
		if (t->sf_failed)
			log_info("state file written again");
		t->sf_failed = false;
		return;
	}
	if (!t->sf_failed)
		log_error("state file: %s: tickets are not used until it can be written "
		    "(state_file)", t->sf->last_error);
	t->sf_failed = true;
}

/* The write of merged marks ended; nothing waited for it (docs/design.md 6.9). */
static void
tier_merged(void *arg, bool ok, uint64_t index, uint64_t ticket)
{
	(void)index;
	(void)ticket;
	tier_saved(arg, ok);
}

/* Writes the marks without waiting for the write; false when it failed already. */
static bool
tier_save(struct tier *t)
{
	enum statefile_result r = statefile_save_then(t->sf, tier_merged, t, 0, 0);

	if (r != STATEFILE_QUEUED)
		tier_saved(t, r == STATEFILE_DURABLE);
	return r != STATEFILE_FAILED;
}

void (*tier_banked_hook)(const struct tier *t, const struct nsrv *ns, unsigned srv,
    uint64_t ticket, bool alone);

/*
 * Adds server i's recorded ticket tk of ns (NULL: the default) to its
 * sequence's buffer; alone: no copy of its mark is known on another server of
 * its region, none being up (copy first, 6.5, 13.6). A namespace's block drawn
 * before an ns raise this process has read since keeps only its top part.
 */
static void
tier_bank(struct tier *t, struct nsrv *ns, unsigned i, uint64_t tk, bool alone)
{
	struct seq *q = TIER_SEQ(t, ns);
	uint64_t b = ns != NULL ? ns->b : t->block_size, first = layout_ticket_first(tk, b),
	    n = b, skip;

	q->writing--;
	if (tier_banked_hook != NULL)
		tier_banked_hook(t, ns, i, tk, alone);
	*(ns != NULL ? &t->ns_banked_alone : &t->banked_alone) += alone;
	if (ns == NULL) {
		tier_note_region(t, &t->srv[i]);
	} else if (first <= ns->start_above) {
		skip = ns->start_above - first + 1 < n ? ns->start_above - first + 1 : n;
		first += skip;
		n -= skip;
		t->ns_released += skip;
	}
	/* Cannot fail with the prefetch bound; losing a block is only a gap. */
	if (n > 0 && !seq_bank(&q->pool, first, n, ns != NULL ? ns->name : "", tk))
		*(ns != NULL ? &t->ns_released : &t->ids_dropped) += b;
	q->demand = false;
	q->banked++;
}

/* True when another server of s's region is up (checked and connected). */
static bool
tier_other_up(const struct tier *t, const struct ticket_server *s)
{
	for (unsigned j = s->group_first; j < s->group_first + s->group_count; j++)
		if (j != s->index && ticket_up(&t->srv[j]))
			return true;
	return false;
}

/*
 * Copy first's verdict on server i's ticket tk of ns (NULL: the default), in
 * its sequence's unit: a ticket of B for the default, an end in ID space for
 * a namespace.
 */
static enum seq_copy
tier_copy_verdict(const struct tier *t, const struct nsrv *ns, unsigned i, uint64_t tk,
    bool rule_on)
{
	return seq_copy_first(TIER_SEQ(t, ns)->copied[i],
	    ns != NULL ? layout_ticket_end(tk, ns->b) : tk, tier_other_up(t, &t->srv[i]), rule_on);
}

/* A ticket of server i not banked: its connection ended (docs/design.md 6.5). */
static void
tier_conn_drop(struct tier *t, struct nsrv *ns, unsigned i, uint64_t tk)
{
	TIER_SEQ(t, ns)->writing--;
	t->conn_dropped++;
	log_warn("%s%s%sticket %" PRIu64 " of the %s server not used: the connection it was "
	    "drawn on ended before a copy of its mark could be counted as its own (a gap)",
	    ns != NULL ? "namespace " : "", ns != NULL ? ns->name : "", ns != NULL ? ": " : "",
	    tk, server_name(i));
}

/*
 * Server i's connection ended (lost, or i refused): every ticket drawn on it
 * that waits for its copy, or whose state file write is still on its way
 * (tier_durable), is not used. Copy first counts a copy as a ticket's own
 * only while that connection lives: a restore of i ends it, and a copy at or
 * above the ticket landing after a restore may be another idserver's re-draw
 * of it (docs/design.md 6.5, rule copy-conn).
 */
static void
tier_conn_ended(struct tier *t, unsigned i)
{
	t->conn_gen[i] = (t->conn_gen[i] + 1) & TIER_CONN_GEN_MASK;
	tier_await_drop(t, i, NULL);
}

/*
 * Drops the tickets of server i waiting for a copy: of every sequence, or
 * only of namespace only (non-NULL).
 */
static void
tier_await_drop(struct tier *t, unsigned i, const struct nsrv *only)
{
	if (!RULE_ON(RULE_COPY_CONN))
		return;
	for (unsigned k = 0; k < t->await.n; k++) {
		struct seq_wait w = t->await.v[k];
		struct nsrv *n = w.seq != 0 ? nss_by_id(&t->nss, w.seq) : NULL;

		if (w.srv != i || (w.seq != 0 && n == NULL) || (only != NULL && w.seq != only->id))
			continue;
		(void)seq_wait_take(&t->await, k--);	/* the next one is at k now */
		tier_conn_drop(t, n, i, w.ticket);
	}
}

/*
 * Copy first (docs/design.md 6.5, 13.6), for every sequence: a durable
 * ticket's block is banked once a copy of its server's mark at or above it is
 * on another server of its region, or when no other server of the region is
 * up; else it waits in t->await (still counted in its sequence's writing:
 * a namespace is neither let go nor served anew meanwhile). Never when the
 * connection it was drawn on (conn) has ended since (tier_conn_ended).
 */
static void
tier_durable(struct tier *t, struct nsrv *ns, unsigned i, uint64_t tk, uint32_t conn)
{
	struct seq_wait w = { ns != NULL ? ns->id : 0, i, tk, (uint64_t)clk_mono_us(),
	    ns != NULL ? ns->dropped : 0, conn };
	enum seq_copy c = tier_copy_verdict(t, ns, i, tk, ns != NULL ?
	    RULE_ON(RULE_NS_COPY_FIRST) : RULE_ON(RULE_COPY_FIRST));

	if (RULE_ON(RULE_COPY_CONN) && conn != t->conn_gen[i]) {
		tier_conn_drop(t, ns, i, tk);
	} else if (c == SEQ_COPY_WAIT && t->await.n < SEQ_WAIT_MAX) {
		t->await.v[t->await.n++] = w;
		t->copy_due = true;
		tier_copy_push(t);
	} else if (c == SEQ_COPY_WAIT) {
		TIER_SEQ(t, ns)->writing--;
		log_error("%s%s%sticket %" PRIu64 " of the %s server not used: %u tickets already "
		    "wait for a copy of their mark on another server", ns != NULL ? "namespace " :
		    "", ns != NULL ? ns->name : "", ns != NULL ? ": " : "", tk, server_name(i),
		    SEQ_WAIT_MAX);
	} else {
		tier_bank(t, ns, i, tk, c == SEQ_COPY_ALONE);
	}
}

/*
 * Banks the waiting tickets of every sequence that a copy now covers, or
 * whose region has no other server up; for the rest, one plain copy UPDATE of
 * a mark at a time on an idle other server of its region: the default's as
 * soon as its ticket is drawn (copy_need), then a namespace's for a waiting
 * ticket (a namespace ticket there carries it otherwise: tier_send_tx). One
 * push, after every refill of tier_prefetch (docs/design.md 13.7).
 */
static void
tier_copy_push(struct tier *t)
{
	unsigned k, m = server_count();

	/* A copy answered inside the call that sent it ends here in another pass. */
	if (t->pushing) {
		t->push_again = true;
		return;
	}
	t->pushing = true;
again:
	t->push_again = false;
	for (k = 0; k < t->await.n; k++) {
		struct seq_wait w = t->await.v[k];
		struct nsrv *n = w.seq != 0 ? nss_by_id(&t->nss, w.seq) : NULL;
		bool gone = n != NULL && n->dropped != w.dropped;
		enum seq_copy c = SEQ_COPY_BANK;

		if (!gone && (w.seq == 0 || n != NULL))
			c = tier_copy_verdict(t, n, w.srv, w.ticket, true);
		if (c == SEQ_COPY_WAIT)
			continue;	/* still waiting */
		(void)seq_wait_take(&t->await, k--);	/* the next one is at k now */
		if (w.seq == 0) {
			t->copy_wait_us_total += (uint64_t)clk_mono_us() - w.since_us;
			t->copy_waits++;
		} else if (n == NULL) {
			continue;	/* cannot be: kept while writing */
		} else if (gone) {
			/*
			 * Dropped (or created again) while it waited: its IDs are let go
			 * with the rest, never served below a new incarnation (13.6).
			 */
			n->seq.writing--;
			t->ns_released += n->b;
			continue;
		}
		tier_bank(t, n, w.srv, w.ticket, c == SEQ_COPY_ALONE);
	}
	/*
	 * A copy wanted and none running: on an idle other server of its region;
	 * the default's by server (k < m), then the namespaces' by waiting ticket.
	 */
	for (k = 0; k < m + t->await.n && !t->push_again; k++) {
		struct nsrv *n = k < m ? NULL : nss_by_id(&t->nss, t->await.v[k - m].seq);
		unsigned i = k < m ? k : t->await.v[k - m].srv;
		const struct ticket_server *r = &t->srv[i];

		if (k < m ? t->copy_need[i] <= t->seq.copied[i] : n == NULL)
			continue;
		for (unsigned j = r->group_first; j < r->group_first + r->group_count; j++)
			if (j != i && t->srv[j].state == TICKET_READY && !t->srv[j].other &&
			    !t->copy_run[j].on && tier_copy_send(t, n, i, j))
				break;
	}
	if (t->push_again)
		goto again;	/* an answer inside a call changed what waits */
	t->pushing = false;
	t->copy_due = t->await.n > 0;
	for (unsigned i = 0; i < server_count() && !t->copy_due; i++)
		t->copy_due = t->copy_need[i] > t->seq.copied[i];
}

/*
 * Sends server j a plain copy of server i's mark of ns (NULL: the default):
 * the known mark, a namespace's raised over its waiting tickets; true when
 * sent. One copy of a mark at a time (a namespace's: unless it goes higher).
 */
static bool
tier_copy_send(struct tier *t, struct nsrv *ns, unsigned i, unsigned j)
{
	const struct state_mark *m = &t->sf->rec.mark[i];
	uint32_t id = ns != NULL ? ns->id : 0;
	struct ticket_copy c;
	char sql[TIER_COPY_SQL_MAX];
	struct ticket_seq q;
	uint64_t b, val;
	int len = 0;

	if (ns == NULL) {
		struct state_mark at = { m->high_water, m->block_size != 0 ? m->block_size :
		    t->block_size, "" };

		b = t->srv[j].block_size;
		c = (struct ticket_copy){ i, at.high_water, at.block_size, state_mark_end(&at, b) };
		val = state_mark_ticket(m, t->block_size);
	} else {
		b = ns->b;
		val = tier_ns_known(t, ns, i);
		for (unsigned k = 0; k < t->await.n; k++)
			if (t->await.v[k].seq == id && t->await.v[k].srv == i &&
			    layout_ticket_end(t->await.v[k].ticket, b) > val)
				val = layout_ticket_end(t->await.v[k].ticket, b);
		c = ticket_copy_block(i, val, b);
		val = c.end;
	}
	for (unsigned o = 0; o < server_count(); o++)
		if (t->copy_run[o].on && t->copy_run[o].seq == id && t->copy_run[o].role == i &&
		    (ns == NULL || t->copy_run[o].val >= val))
			return false;
	ticket_seq_set(&q, ns != NULL ? ns->name : NULL, b, NULL);
	if (c.block_size == 0 || !ticket_seq_copy(&q, false, &c, sql, sizeof(sql), &len))
		return false;
	/* Set first: the answer may come inside the call. */
	t->copy_run[j] = (struct tier_copy_run){ true, id, i, val };
	if (ticket_run(&t->srv[j], sql, tier_copied))
		return true;
	t->copy_run[j].on = false;
	return false;
}

/* A plain copy UPDATE of copy first ended on server s. */
static void
tier_copied(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;
	struct tier *t = s->notify_arg;
	struct tier_copy_run run = t->copy_run[s->index];
	bool ns = run.on && run.seq != 0;
	struct nsrv *n = ns ? nss_by_id(&t->nss, run.seq) : NULL;

	(void)db;
	t->copy_run[s->index].on = false;
	*(ns ? &t->ns_copies_pushed : &t->copies_pushed) += run.on;	/* ns: on */
	if (r->err != 0) {
		/* Its DOWN event pushes again. */
		ticket_run_lost(s, ns ? "copy of a namespace mark" : "copy of a mark", r->msg);
		return;
	}
	if (run.on && (!ns || n != NULL))
		seq_landed(TIER_SEQ(t, n), run.role, run.val);
	ticket_run_end(s);
	tier_copy_push(t);
	if (t->pushing)
		return;		/* answered inside tier_copy_push: its caller goes on */
	tier_prefetch(t);
	t->on_change(t->arg);
}

/* A mark in the default's unit for copy first: a ticket of B (0 until B is agreed). */
static uint64_t
tier_ticket_of(const struct tier *t, const struct state_mark *m)
{
	return t->block_size == 0 ? 0 : state_mark_ticket(m, t->block_size);
}

/*
 * The copies of the others' marks s's witness or ticket of ns (NULL: the
 * default) carried landed (6.5, 13.6), in its sequence's unit.
 */
static void
tier_carried_landed(struct tier *t, const struct ticket_server *s, struct nsrv *ns)
{
	const struct ticket_flight *f = &s->flight;

	for (unsigned k = 0; k < f->copies; k++) {
		const struct ticket_copy *c = &f->copy[k];
		struct state_mark m = { c->high_water, c->block_size, "" };

		seq_landed(TIER_SEQ(t, ns), c->srv, ns != NULL ? c->end :
		    tier_ticket_of(t, &m));
	}
}

/*
 * Server s's ticket tk of ns (NULL: the default) passed every check, to be
 * used, the same steps for every sequence (13.7). Its transaction committed
 * the copies it carried (copy first, 6.5, 13.6); the default's own copy goes
 * out beside its state file write (copy_need: a namespace's is pushed only
 * for a waiting ticket). Then write-ahead (docs/design.md 6.9, 13.5): it
 * raises its mark in the state file, and its block is banked only once a
 * write covering that mark is durable, now or later in tier_written; then
 * copy first (tier_durable). False when the ticket is not used now (the
 * write failed, or a namespace's marks are full).
 */
static bool
tier_write_ahead(struct tier *t, struct nsrv *ns, const struct ticket_server *s, uint64_t tk)
{
	bool on = ns == NULL || RULE_ON(RULE_NS_WRITE_AHEAD), changed = false;
	unsigned i = s->index;
	/* Names it to tier_written, with the connection it was drawn on (6.5). */
	uint64_t a = (uint64_t)t->conn_gen[i] << 40 | (uint64_t)(ns != NULL ? ns->id : 0) << 8 | i;
	enum seq_written w;

	tier_carried_landed(t, s, ns);
	if (ns == NULL && RULE_ON(RULE_COPY_FIRST) && tk > t->copy_need[i]) {
		t->copy_need[i] = tk;
		t->copy_due = true;
	}
	if (ns == NULL) {
		state_raise_mark(&t->sf->rec, i, tk, t->block_size, t->block_size, NULL);
		tier_publish_marks(t);
	} else if (on && !tier_ns_keep(t, ns->name, i, tk, ns->b, &changed)) {
		tier_ns_refuse(t, ns, i, "the state file's namespace marks are full "
		    "(NS_MARKS_MAX): the ticket is not used");
		return false;
	}
	TIER_SEQ(t, ns)->writing++;
	/* Queued: its end comes to tier_written; durable or failed now: it ends here. */
	w = seq_write_ahead(t->sf, on, tier_written, t, a, tk);
	return w == SEQ_WRITING || tier_write_ended(t, ns, i, tk, t->conn_gen[i], w == SEQ_WRITTEN);
}

/*
 * The write covering a ticket ended: on to copy first, or the ticket is a
 * gap and its server refused (for a namespace: that namespace there). conn:
 * the conn_gen of server i when the ticket was drawn (tier_durable).
 */
static bool
tier_write_ended(struct tier *t, struct nsrv *ns, unsigned i, uint64_t tk, uint32_t conn,
    bool ok)
{
	char why[512];

	tier_saved(t, ok);
	if (ok) {
		tier_durable(t, ns, i, tk, conn);
		return true;
	}
	TIER_SEQ(t, ns)->writing--;
	if (ns != NULL) {
		tier_ns_refuse(t, ns, i, "state file could not be written (state_file): the "
		    "ticket is not used");
	} else if (!tier_refused(&t->srv[i])) {	/* else out of use for a reason of its own */
		snprintf(why, sizeof(why), "state file: %s (state_file)", t->sf->last_error);
		ticket_refuse_local(&t->srv[i], why);
	}
	return false;
}

/* On the loop: the write covering a queued ticket ended. */
static void
tier_written(void *arg, bool ok, uint64_t a, uint64_t tk)
{
	struct tier *t = arg;
	uint32_t id = (uint32_t)(a >> 8);
	struct nsrv *ns = id != 0 ? nss_by_id(&t->nss, id) : NULL;

	if (id != 0 && ns == NULL)
		return;		/* cannot be: kept while writing */
	(void)tier_write_ended(t, ns, (unsigned)(a & 0xff), tk, (uint32_t)(a >> 40), ok);
	tier_prefetch(t);
	t->on_change(t->arg);
}

/*
 * A mark written under another B binds every server of its region, not only
 * its own: residues keep servers apart only within one B (ticket 18 of the
 * even server at B = 2^15 starts where ticket 9 of the odd server at B = 2^16
 * did). So every mark of the group is raised, in ID space, above every mark of
 * another B; being raised, it stays bound after the old rows are rewritten
 * (docs/design.md section 6.2.1). True when a mark changed.
 */
static bool
tier_cross_bind(struct tier *t, const struct ticket_server *s, uint64_t b)
{
	uint64_t end = 0, e;
	bool changed = false;

	for (unsigned j = s->group_first; j < s->group_first + s->group_count; j++) {
		const struct state_mark *m = &t->sf->rec.mark[j];

		if (m->block_size != 0 && m->block_size != b && (e = state_mark_end(m, b)) > end)
			end = e;
	}
	if (end == 0)
		return false;
	for (unsigned j = s->group_first; j < s->group_first + s->group_count; j++)
		changed |= state_raise_mark(&t->sf->rec, j, (end + b - 1) / b - 1, b, b, NULL);
	return changed;
}

/* Raises the known marks to s's copies of the others' as its check read them. */
static bool
tier_raise_copies(struct tier *t, const struct ticket_server *s)
{
	uint64_t b = s->block_size;
	bool changed = false;

	for (unsigned o = s->group_first; o < s->group_first + s->group_count; o++) {
		struct state_mark copy = { s->seen.copy[o], s->seen.copy_b[o], "" };

		if (o == s->index)
			continue;
		if (state_mark_ticket(&copy, b) > t->copy_seen[o])
			t->copy_seen[o] = state_mark_ticket(&copy, b);
		t->copy_read[o] = true;
		seq_landed(&t->seq, o, tier_ticket_of(t, &copy));
		changed |= state_raise_mark(&t->sf->rec, o, copy.high_water, copy.block_size, b,
		    NULL);
	}
	return changed;
}

/*
 * A connect-time check of s was answered: what it read (its own mark, its
 * copies of the others') is known from now on, though the connection may
 * fail in its rights or witness steps; it is judged at TICKET_EV_UP. A
 * server of another B is left to that judgement (refused there).
 */
static void
tier_raise_read(struct tier *t, struct ticket_server *s)
{
	bool changed;

	if ((t->expect_block != 0 && s->block_size != t->expect_block) ||
	    (t->block_size != 0 && s->block_size != t->block_size))
		return;
	changed = tier_raise_copies(t, s);
	changed |= state_raise_mark(&t->sf->rec, s->index, s->seen.own_mark,
	    s->seen.own_mark_b, s->block_size, NULL);
	changed |= tier_cross_bind(t, s, s->block_size);
	if (changed)
		(void)tier_save(t);
	tier_publish_marks(t);
}

/*
 * A server passed its checks: merge what it holds (its own mark, its copy of
 * the partner's) into the known marks, then refuse it unless its counter is
 * above every mark known for it (docs/design.md section 6).
 */
static bool
tier_merge_marks(struct tier *t, struct ticket_server *s)
{
	unsigned r = s->index;
	struct state_mark *m = &t->sf->rec.mark[r];
	struct state_mark own = { s->seen.own_mark, s->seen.own_mark_b, "" };
	uint64_t b = s->block_size, before = state_mark_ticket(m, b), mark;
	char where[384], why[896], was[40], copies[40], seen[24] = "not read yet";
	bool changed = false;

	snprintf(was, sizeof(was), "%s", m->uuid);
	changed |= tier_raise_copies(t, s);
	changed |= state_raise_mark(&t->sf->rec, r, own.high_water, own.block_size, b,
	    s->seen.uuid);
	if (was[0] != '\0' && s->seen.uuid[0] != '\0' && strcmp(was, s->seen.uuid) != 0)
		log_warn("%s ticket server has a new identity (server_uuid %s, was %s): a "
		    "rebuilt or replaced server; it must still start above mark %llu", s->name,
		    s->seen.uuid, was, (unsigned long long)state_mark_ticket(m, b));
	if (m->block_size != 0 && m->block_size != b && t->b_warned[r] != m->block_size) {
		t->b_warned[r] = m->block_size;
		log_warn("%s ticket server: B is %llu, but its high-water mark %llu was written "
		    "under B=%llu; the mark binds in ID space: tickets must be above %llu",
		    s->name, (unsigned long long)b, (unsigned long long)m->high_water,
		    (unsigned long long)m->block_size, (unsigned long long)state_mark_ticket(m, b));
	}
	changed |= tier_cross_bind(t, s, b);
	if (changed)
		(void)tier_save(t);
	tier_publish_marks(t);
	mark = tier_mark_ticket(t, r, b);
	if (check_counter(s->seen.counter, mark))
		return true;
	if (s->group_count == SERVER_PAIR)
		snprintf(copies, sizeof(copies), "the %s server's copy", server_name(s->partner));
	else
		snprintf(copies, sizeof(copies), "the other servers' copies");
	if (t->copy_read[r])
		snprintf(seen, sizeof(seen), "%llu", (unsigned long long)t->copy_seen[r]);
	snprintf(where, sizeof(where), "(this idserver's state file and tickets: %llu; the "
	    "server's own idgen_marks: %llu; %s: %s)", (unsigned long long)before,
	    (unsigned long long)state_mark_ticket(&own, b), copies, seen);
	if (mark > state_mark_ticket(m, b))	/* a foreign state file's */
		snprintf(where + strlen(where), sizeof(where) - strlen(where), " (a foreign state "
		    "file's mark: %llu, refusing in this idserver only until it restarts)",
		    (unsigned long long)mark);
	check_regressed_msg(why, sizeof(why), s->name, s->dbname, "tickets64", s->seen.counter,
	    mark, where);
	ticket_regress(s, why);
	return false;
}

/*
 * Counts a ticket of another region's server and says once, in the log, when
 * tickets start or stop coming from another region (docs/design.md 12.3).
 */
static void
tier_note_region(struct tier *t, const struct ticket_server *s)
{
	unsigned r = server_region_at(s->index);

	if (!server_is_own(s->index))
		t->tickets_other_regions++;
	if (r == t->ticket_region)
		return;
	if (server_is_own(s->index))
		log_info("tickets come from this region's pair again (region %u)", r);
	else
		log_warn("taking tickets from region %u's %s server: no server of this "
		    "region's pair (region %u) is up (other_regions)", r, server_role(s->index),
		    server_region());
	t->ticket_region = r;
}

const char *
tier_waits_for(const struct tier *t, unsigned i, char *buf, size_t len)
{
	unsigned first, count;
	size_t n = 0;

	snprintf(buf, len, "-");
	if (i >= server_count() || t->fresh[i] || !ticket_up(&t->srv[i]))
		return buf;
	server_group(i, &first, &count);
	for (unsigned k = 0; k < count && n < len; k++)
		if (t->waiting[i][first + k])
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n > 0 ? "," : "",
			    server_name(first + k));
	return buf;
}

/*
 * A new connection's wait for the others' checks ends when they answer, go
 * down or are refused, each bounded by its timeouts; should one last past
 * wait_limit_ms all the same, it is said once and the checks are asked for
 * again, and past twice that the connection is opened again (a new wait,
 * new checks asked for). It is never served before the checks say it may.
 */
static void
tier_waits_watch(struct tier *t)
{
	uint64_t now = clk_mono_ms();

	for (unsigned h = 0; h < server_count(); h++)
		if (!ticket_up(&t->srv[h]) && t->srv[h].state != TICKET_CONNECTING)
			tier_silent(t, h);
	for (unsigned i = 0; i < server_count(); i++) {
		struct ticket_server *s = &t->srv[i];
		uint64_t waited = now - t->wait_since[i];
		char names[SERVER_MAX * 8], why[160 + SERVER_MAX * 8];

		if (t->fresh[i] || !ticket_up(s) || waited <= t->wait_limit_ms)
			continue;
		(void)tier_waits_for(t, i, names, sizeof(names));
		if (strcmp(names, "-") == 0)
			continue;
		if (waited > 2 * (uint64_t)t->wait_limit_ms) {
			snprintf(why, sizeof(why), "its new connection waited %llu ms for a check of "
			    "%s sent after it was checked: connecting again", (unsigned long long)waited,
			    names);
			if (s->state == TICKET_READY)
				ticket_reconnect(s, why);
			continue;
		}
		if (t->wait_asked[i]++ > 0)
			continue;
		log_warn("%s ticket server not used yet: waited %llu ms for a check of %s sent "
		    "after its connection was checked (docs/design.md 6.4); asking again", s->name,
		    (unsigned long long)waited, names);
		for (unsigned h = s->group_first; h < s->group_first + s->group_count; h++)
			if (t->waiting[i][h])
				ticket_recheck_soon(&t->srv[h]);
	}
}

/* A refused or regressed server: it answered, and is not used until it passes. */
static bool
tier_refused(const struct ticket_server *s)
{
	return s->state == TICKET_REFUSED || s->state == TICKET_REGRESSED;
}

/*
 * True when h cannot answer a check at now: it has answered none for
 * partner_wait_ms (docs/design.md 6.4); one failure is not enough.
 */
static bool
tier_cannot_answer(const struct tier *t, unsigned h, uint64_t now)
{
	const struct ticket_server *hs = &t->srv[h];

	if (ticket_up(hs) || hs->state == TICKET_CONNECTING)
		return false;
	/* Refused is an answer (retried every refused_retry_ms); down may be a blip. */
	if (!RULE_ON(RULE_PARTNER_WAIT) || tier_refused(hs))
		return true;
	return t->silent_since[h] != 0 && now - t->silent_since[h] >= t->partner_wait_ms;
}

/* i's connection serves without a check of h from now (h silent since silent_since[h]). */
static void
tier_unasked(struct tier *t, unsigned i, unsigned h, uint64_t now)
{
	t->unasked[i][h] = true;
	t->unasked_at[i][h] = now;
}

/*
 * h failed (down or refused), or is still: its silence dates from its first
 * failure since it last answered, and a wait for it ends only once h has
 * been silent for partner_wait_ms, or when it answers (tier_read). Checked
 * again every rate tick (tier_waits_watch).
 */
static void
tier_silent(struct tier *t, unsigned h)
{
	uint64_t now = clk_mono_ms();
	unsigned first, count;

	if (t->silent_since[h] == 0)
		t->silent_since[h] = now;
	if (!tier_cannot_answer(t, h, now))
		return;
	server_group(h, &first, &count);
	for (unsigned j = first; j < first + count; j++)
		if (j != h && t->waiting[j][h]) {
			t->waiting[j][h] = false;
			tier_unasked(t, j, h, now);
			tier_fresh_update(t, j);
		}
}

/*
 * s's connect-time check was answered: its marks are known now (6.4), and a
 * server waiting for a check of s sent after its own connection was checked
 * has it (the same rule as tier_checked_others).
 */
static void
tier_read(struct tier *t, struct ticket_server *s)
{
	unsigned i = s->index;

	t->silent_since[i] = 0;
	tier_raise_read(t, s);
	tier_waits_answered(t, s);
}

/*
 * s's check was answered: a server waiting for a check of s sent after its
 * own connection was checked has it; one in flight then may have read too early.
 */
static void
tier_waits_answered(struct tier *t, const struct ticket_server *s)
{
	unsigned i = s->index;

	for (unsigned j = s->group_first; j < s->group_first + s->group_count; j++)
		if (j != i && t->waiting[j][i] && s->check_accepted > t->wait_after[j][i]) {
			t->waiting[j][i] = false;
			tier_fresh_update(t, j);
		}
}

/* Server i may fetch once it waits for no other server's check. */
static void
tier_fresh_update(struct tier *t, unsigned i)
{
	unsigned first, count;

	server_group(i, &first, &count);
	for (unsigned k = 0; k < count; k++)
		if (t->waiting[i][first + k])
			return;
	t->fresh[i] = true;
}

/*
 * s's check passed. It just read its copies of the other servers' marks: a
 * server waiting for that may fetch, if s's check was sent after that
 * server's connection was checked; one already in flight then may have read
 * the copy too early. A new connection of s (perhaps to a restored server) is
 * used only once a check of every other server of its region sent from now
 * on has read its copy of s's mark, except those that cannot be asked (down
 * or refused): all others first (docs/design.md sections 6.4 and 12.2).
 */
static void
tier_checked_others(struct tier *t, struct ticket_server *s)
{
	unsigned i = s->index;

	tier_waits_answered(t, s);
	if (s->seen.recheck)
		return;
	t->fresh[i] = false;
	t->wait_since[i] = clk_mono_ms();
	t->wait_asked[i] = 0;
	memset(t->unasked[i], 0, sizeof(t->unasked[i]));
	/*
	 * Every wait is in place before any check is asked for: an answer that
	 * ended one wait must not find the others not yet set and let s serve.
	 */
	for (unsigned h = s->group_first; h < s->group_first + s->group_count; h++) {
		struct ticket_server *hs = &t->srv[h];

		t->waiting[i][h] = h != i && (ticket_up(hs) || hs->state == TICKET_CONNECTING ||
		    !tier_cannot_answer(t, h, t->wait_since[i]));
		if (t->waiting[i][h])
			t->wait_after[i][h] = hs->checks_sent;
		else if (h != i)
			tier_unasked(t, i, h, t->wait_since[i]);
	}
	for (unsigned h = s->group_first; h < s->group_first + s->group_count; h++)
		if (t->waiting[i][h])
			ticket_recheck_soon(&t->srv[h]);
	tier_fresh_update(t, i);
}

/*
 * Refuses s (true) unless its B is the block_size setting and the B it must
 * have, read from another server (none while none binds): the tier's once a
 * server came up, else what a check of another server not refused read,
 * whatever that server's verdict. The server judged first is often
 * "regressed" (its own mark, written under the other B, binds in ID space)
 * and sets no tier B; judged against the tier's alone, its partner came up
 * and the start went on (docs/design.md 6.4: refused whatever answers first;
 * issue 36).
 */
static bool
tier_b_refused(const struct tier *t, struct ticket_server *s)
{
	const struct ticket_server *o = t->block_size != 0 ? &t->srv[s->partner] : NULL;
	uint64_t b;
	char why[512];

	for (unsigned i = 0; i < server_count() && o == NULL; i++)
		if (&t->srv[i] != s && t->srv[i].block_size != 0 &&
		    t->srv[i].state != TICKET_REFUSED)
			o = &t->srv[i];
	b = t->block_size != 0 ? t->block_size : o != NULL ? o->block_size : 0;
	if (t->expect_block != 0 && s->block_size != t->expect_block)
		snprintf(why, sizeof(why), "idgen_meta.block_size is %llu but block_size is set "
		    "to %llu", (unsigned long long)s->block_size,
		    (unsigned long long)t->expect_block);
	else if (o != NULL && s->block_size != b)
		snprintf(why, sizeof(why), "idgen_meta.block_size is %llu but the %s server's is "
		    "%llu: both servers must use the same B", (unsigned long long)s->block_size,
		    o->name, (unsigned long long)b);
	else
		return false;
	ticket_refuse_local(s, why);
	return true;
}

/* Server events: agree on B and the marks, bank tickets, wake waiting clients. */
static bool
tier_notify(struct ticket_server *s, enum ticket_event ev, uint64_t ticket, void *arg)
{
	struct tier *t = arg;

	switch (ev) {
	case TICKET_EV_UP:
		if (tier_b_refused(t, s))
			return false;
		t->silent_since[s->index] = 0;
		if (!tier_merge_marks(t, s))
			return false;
		t->block_size = s->block_size;
		/* Its witness landed its copies before it came up (6.5). */
		if (RULE_ON(RULE_WITNESS) && s->flight.seq == 0)
			tier_carried_landed(t, s, NULL);
		seq_retarget(&t->seq, &t->prefetch, tier_fetch_ms(t), t->block_size);
		tier_checked_others(t, s);
		tier_ns_event(t, s, ev);
		break;
	case TICKET_EV_TICKET:
		/* Write-ahead: on disk before any of its IDs is handed out. */
		if (!tier_write_ahead(t, NULL, s, ticket))
			return false;
		break;
	case TICKET_EV_DOWN:
	case TICKET_EV_REFUSED:
		/* Its tickets waiting for a copy are not used (copy-conn, 6.5). */
		tier_conn_ended(t, s->index);
		tier_silent(t, s->index);
		tier_ns_event(t, s, ev);
		break;
	case TICKET_EV_READ:
		tier_read(t, s);
		break;
	case TICKET_EV_SEQ:
		if (!tier_ns_answered(t, s))
			return true;
		break;
	case TICKET_EV_RETIRED:
		tier_ns_retired(t, s);
		break;
	}
	tier_prefetch(t);
	t->on_change(t->arg);
	return true;
}

/* The mark the state file holds for (ns, server i), as an end in ID space. */
static uint64_t
tier_ns_known(const struct tier *t, const struct nsrv *ns, unsigned i)
{
	const struct state_ns_mark *m = RULE_ON(RULE_NS_STATE_MARKS) ?
	    state_ns_get(&t->sf->ns, ns->name, i) : NULL;

	return ns_known_end(ns, i, m != NULL ? m->high_water : 0, m != NULL ? m->block_size : 0);
}

/*
 * The first namespace check of a new connection to s is followed, before s
 * serves namespaces, by its copies of the others' marks brought up to what
 * this process knows (6.5's witness, per namespace). True when sent.
 */
static bool
tier_ns_witness(struct tier *t, struct ticket_server *s)
{
	static char sql[TIER_NS_WITNESS_MAX];
	struct ticket_copy c[SERVER_MAX];
	uint64_t held[SERVER_MAX];
	unsigned i = s->index;
	struct ticket_seq q;
	int len = 0;

	if (!RULE_ON(RULE_NS_WITNESS))
		return false;
	for (unsigned k = 0; k < t->nss.n; k++) {
		const struct nsrv *ns = t->nss.v[k];
		const struct ns_view *v = &ns->v[i];

		if (ns->seen[i] != t->nss.last_check[i] || !v->ready || v->b == 0)
			continue;
		ticket_seq_set(&q, ns->name, v->b, NULL);
		for (unsigned j = 0; j < server_own_count(); j++) {
			c[j] = ticket_copy_block(j, tier_ns_known(t, ns, j), v->b);
			held[j] = layout_ticket_end(v->hw[j], v->hb[j] != 0 ? v->hb[j] : v->b);
		}
		if (!ticket_witness_carry(s, &q, c, held, sql, sizeof(sql), &len)) {
			ticket_run_lost(s, "namespace check", "the copies of the marks do not fit "
			    "a query");
			return true;
		}
	}
	if (len == 0)
		return false;
	if (!ticket_run_next(s, sql, tier_ns_witnessed))
		ticket_run_lost(s, "namespace check", "could not send the copies of the marks");
	return true;
}

/* The copies are written: the server may serve namespaces. */
static void
tier_ns_witnessed(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;
	struct tier *t = s->notify_arg;

	(void)db;
	/* One witness's accounting for every sequence (6.5, 13.7). */
	if (!ticket_witness_outcome(s, r)) {
		ticket_run_lost(s, "namespace check", r->msg);
		return;
	}
	t->ns_witnessed[s->index] = true;
	ticket_run_end(s);
	tier_prefetch(t);
	t->on_change(t->arg);
}

/* Drops the state file's marks of names no server lists (only when it is full). */
static void
tier_ns_prune(struct tier *t)
{
	struct state_ns *r = &t->sf->ns;
	unsigned out = 0, gone = 0;

	for (unsigned k = 0; k < r->n; k++) {
		if (nss_find(&t->nss, r->m[k].ns, strlen(r->m[k].ns)) == NULL) {
			gone++;
			continue;
		}
		r->m[out++] = r->m[k];
	}
	r->n = out;
	if (gone > 0)
		log_warn("state file: %u namespace marks of names no server lists any more let go "
		    "to make room (a name dropped on every server)", gone);
}

/* Raises (name, i)'s mark in the state file, room made if need be; false when full. */
static bool
tier_ns_keep(struct tier *t, const char *name, unsigned i, uint64_t hw, uint64_t b,
    bool *changed)
{
	if (state_ns_raise(&t->sf->ns, name, i, hw, b, changed))
		return true;
	tier_ns_prune(t);
	return state_ns_raise(&t->sf->ns, name, i, hw, b, changed);
}

/*
 * Every mark a check read is kept in the state file's namespace record, as
 * tier_merge_marks does for the default (6.4): a server restored later with
 * its copies lagging still finds it bound. Saved without waiting.
 */
static void
tier_ns_remember(struct tier *t, const struct ns_row *rows, unsigned n, bool any_name)
{
	bool changed, any = false;
	int j;

	if (!RULE_ON(RULE_NS_REMEMBER))
		return;
	for (unsigned r = 0; r < n; r++) {
		if (rows[r].hw == 0 || (j = ns_role_index(rows[r].role)) < 0 || (!any_name &&
		    nss_find(&t->nss, rows[r].name, strlen(rows[r].name)) == NULL))
			continue;
		if (!tier_ns_keep(t, rows[r].name, (unsigned)j, rows[r].hw,
		    rows[r].hb != 0 ? rows[r].hb : rows[r].b, &changed)) {
			if (!t->ns_full_warned)
				log_error("state file: its namespace marks are full "
				    "(NS_MARKS_MAX): marks read from the servers are not "
				    "kept; new namespace tickets are refused");
			t->ns_full_warned = true;
			continue;
		}
		any = any || changed;
	}
	if (any)
		(void)tier_save(t);
}

/*
 * A server refused as retired (docs/design.md 12.5): the namespace marks it
 * holds are kept as any check's are, its copies of the others' among them,
 * for every name, served here yet or not (a fresh idserver reads it before
 * any namespace check). No namespace check reads it again, and until tier
 * retire-server has carried them they may be a banked block's only copy.
 */
static void
tier_ns_retired(struct tier *t, const struct ticket_server *s)
{
	static struct ns_row rows[NS_MAX_CEIL * NS_SERVERS];
	unsigned nf = 0, n = 0, bad = 0;
	char **row = db_first_row(s->retired_read, &nf), why[256];
	bool cut = false;

	if (row == NULL || nf != 2 || row[0] == NULL ||
	    !nss_parse(row[0], rows, sizeof(rows) / sizeof(rows[0]), &n, &cut, &bad, why,
	    sizeof(why)))
		return;
	tier_ns_remember(t, rows, n, true);
}

/* Which servers' latest namespace checks count: up, and read since it connected. */
static void
tier_ns_up_now(const struct tier *t, bool *up)
{
	for (unsigned i = 0; i < NS_SERVERS; i++)
		up[i] = i < server_own_count() && ticket_up(&t->srv[i]) &&
		    t->ns_at[i] > t->ns_up_at[i];
}

/* Server i's namespaces are to be checked at the next turn of the tick. */
static void
tier_ns_due(struct tier *t, unsigned i)
{
	t->ns_due[i] = true;
	t->ns_due_some = true;
}

static void
tier_ns_event(struct tier *t, struct ticket_server *s, enum ticket_event ev)
{
	bool up[NS_SERVERS];
	unsigned i = s->index;

	/* max_namespaces = 0: no namespace is read or served. */
	if (i >= server_own_count() || i >= NS_SERVERS || t->nss.max == 0)
		return;
	if (ev == TICKET_EV_UP) {
		tier_ns_due(t, i);
		if (!s->seen.recheck) {
			/*
			 * Partner first (docs/design.md 6.4, 13.6): a new connection
			 * serves namespaces only once every other server up has been
			 * read after it, its copies of this server's marks included.
			 */
			t->ns_up_at[i] = ++t->ns_epoch;
			t->ns_witnessed[i] = false;
			for (unsigned j = 0; j < server_own_count() && j < NS_SERVERS; j++)
				tier_ns_due(t, j);
		}
	} else if (ev == TICKET_EV_DOWN || ev == TICKET_EV_REFUSED) {
		/* A namespace ticket in flight there will never answer (ticket.c: a gap). */
		tier_ns_up_now(t, up);
		nss_judge(&t->nss, up);
	}
}

/*
 * Whether server i may take a ticket of ns now: its latest check lists ns as
 * agreed and found its counter above the marks, and every other server up
 * was read after it connected (partner first).
 */
static bool
tier_ns_usable(const struct tier *t, const struct nsrv *ns, unsigned i)
{
	const struct ns_view *v = &ns->v[i];

	if (t->srv[i].state != TICKET_READY || t->srv[i].other || ns->regressed[i] ||
	    !t->ns_witnessed[i] ||
	    t->ns_at[i] <= t->ns_up_at[i] || ns->seen[i] != t->nss.last_check[i] || !v->ready ||
	    v->b != ns->b || v->policy != ns->policy)
		return false;
	/*
	 * Every other server has answered a namespace check sent after i
	 * connected, its copies of i's marks known, or cannot answer: refused,
	 * or down and silent for partner_wait_ms (6.4's partner wait, the
	 * default's; a server merely down between two connects still holds
	 * its copies: idsim seed 16517, 13.6).
	 */
	for (unsigned j = 0; j < server_own_count() && j < NS_SERVERS; j++)
		if (j != i && t->ns_at[j] <= t->ns_up_at[i] && RULE_ON(RULE_NS_PARTNER_FIRST) &&
		    !tier_cannot_answer(t, j, clk_mono_ms()))
			return false;
	return true;
}

/*
 * At a check of server i, as tier_merge_marks at the default's: the copies of
 * the others' marks i holds landed (copy first, 13.6); each namespace's ticket
 * table, by the one check of every sequence's (check_table: there, InnoDB, its
 * marks rows), and its counter there against every mark known for it. Judged
 * only then: one query at a time on the connection, so no ticket of ours was
 * drawn there between the counter's read and now.
 */
static void
tier_ns_counters(struct tier *t, unsigned i)
{
	char why[768], where[256], table[NS_NAME_MAX + 16], repair[NS_NAME_MAX + 80];

	for (unsigned k = 0; k < t->nss.n; k++) {
		struct nsrv *ns = t->nss.v[k];
		const struct ns_view *v = &ns->v[i];
		struct check_table tab = { t->srv[i].dbname, table, v->engine, v->counter != 0,
		    "idgen_ns_marks", i, -1, repair };
		uint64_t end, b = v->b;
		bool read = ns->seen[i] == t->nss.last_check[i] && b != 0;

		for (unsigned j = 0; j < server_own_count() && j < NS_SERVERS; j++)
			if (read && j != i && v->hw[j] != 0)
				seq_landed(&ns->seq, j, layout_ticket_end(v->hw[j],
				    v->hb[j] != 0 ? v->hb[j] : b));
		if (!read || !v->ready) {
			ns->regressed[i] = false;
			continue;
		}
		end = tier_ns_known(t, ns, i);
		snprintf(table, sizeof(table), "tickets_%s", ns->name);
		snprintf(repair, sizeof(repair), "idgenctl ns create %s makes the table, its marks "
		    "rows and its rights", ns->name);
		for (unsigned j = 0; j < server_own_count() && j < NS_SERVERS && tab.missing < 0; j++)
			if (!v->row[j])
				tab.missing = (int)j;
		if (!check_table(&tab, why, sizeof(why))) {
			tier_ns_refuse(t, ns, i, why);
			continue;
		}
		if (check_counter(v->counter, layout_end_ticket(end, b))) {
			ns->regressed[i] = false;
			ns->logged[i] = 0;
			continue;
		}
		/* The default's words (tier_merge_marks), on this table and in its B_N. */
		snprintf(where, sizeof(where), "(in its B=%" PRIu64 ": every server's marks and "
		    "this idserver's state file; idgenctl ns raise %s --above %" PRIu64 " also "
		    "repairs)", b, ns->name, end > 0 ? end - 1 : 0);
		check_regressed_msg(why, sizeof(why), t->srv[i].name, t->srv[i].dbname, table,
		    v->counter, layout_end_ticket(end, b), where);
		tier_ns_refuse(t, ns, i, why);
	}
}

/* A namespace refused on one server (regressed, misconfigured); the others go on. */
static void
tier_ns_refuse(struct tier *t, struct nsrv *ns, unsigned i, const char *why)
{
	uint32_t h = 2166136261u;	/* FNV-1a of the reason */

	for (const char *c = why; *c != '\0'; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	h |= 1;
	/*
	 * Logged once until the namespace passes a check there again, and again
	 * when the reason changes (a table seen missing mid-TRUNCATE, then its
	 * counter regressed: the operator needs the repair line).
	 */
	if (ns->logged[i] != h)
		log_error("namespace %s REFUSED on the %s ticket server: %s (checked again every "
		    "recheck_ms)", ns->name, server_name(i), why);
	ns->logged[i] = h;
	ns->regressed[i] = true;
	t->ns_refusals++;
	tier_await_drop(t, i, ns);	/* its tickets there waiting for a copy (6.5) */
}

/* Starts the namespace checks due on idle servers. */
static void
tier_ns_kick_checks(struct tier *t)
{
	unsigned own = server_own_count() < NS_SERVERS ? server_own_count() : NS_SERVERS;

	t->ns_due_some = false;
	for (unsigned i = 0; i < own; i++) {
		struct ticket_server *s = &t->srv[i];

		if (!t->ns_due[i])
			continue;
		/* Numbered as sent: an answer counts from when it was asked (6.4). */
		if (s->state == TICKET_READY && !s->other) {
			t->ns_sent_at[i] = ++t->ns_epoch;
			if (ticket_run(s, TIER_NS_CHECK_SQL, tier_ns_checked))
				t->ns_due[i] = false;
		}
		t->ns_due_some = t->ns_due_some || t->ns_due[i];
	}
}

bool
tier_ns_can_fetch(struct tier *t, const struct nsrv *ns)
{
	unsigned own = server_own_count() < NS_SERVERS ? server_own_count() : NS_SERVERS;

	if (ns->seq.fetching + ns->seq.writing > 0)
		return true;
	for (unsigned i = 0; i < own; i++)
		if (ticket_up(&t->srv[i]) && !ns->regressed[i] && ns->seen[i] ==
		    t->nss.last_check[i] && ns->v[i].ready)
			return true;
	return false;
}

/* The namespace check answered: merge it, judge every namespace again. */
static void
tier_ns_checked(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;
	struct tier *t = s->notify_arg;
	unsigned i = s->index;

	(void)db;
	switch (db_classify(r->err)) {
	case DB_ERRC_NONE:
		tier_ns_read(s, r);
		return;
	case DB_ERRC_SCHEMA:
	case DB_ERRC_RIGHTS:
		/*
		 * A server whose schema predates namespaces lists none. The
		 * connection stays (db_err_keeps); the snapshot the check opened
		 * is rolled back before anything else runs on it.
		 */
		if (!t->ns_warned[i])
			log_warn("%s ticket server: namespaces not read: %s (load schema/10-tables.sql "
			    "and schema/60-grant.sql.in to serve them)", s->name, r->msg);
		t->ns_warned[i] = true;
		if (!ticket_run_next(s, "ROLLBACK", tier_ns_check_ended))
			ticket_run_lost(s, "namespace check", "could not roll back");
		return;
	default:
		ticket_run_lost(s, "namespace check", r->msg);
		return;
	}
}

/* A namespace check that could not read the namespace tables, rolled back. */
static void
tier_ns_check_ended(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct ticket_server *s = arg;

	(void)db;
	if (r->err != 0) {
		ticket_run_lost(s, "namespace check", r->msg);
		return;
	}
	tier_ns_read(s, NULL);
}

/* Merges a namespace check's answer (r NULL: the server lists none). */
static void
tier_ns_read(struct ticket_server *s, const struct db_result *r)
{
	struct tier *t = s->notify_arg;
	static struct ns_row rows[NS_MAX_CEIL * NS_SERVERS];
	unsigned nf = 0, n = 0, i = s->index, bad = 0;
	bool up[NS_SERVERS], cut = false;
	char why[256];
	char **row;

	if (r != NULL)
		t->ns_warned[i] = false;	/* read again: a new failure is logged */
	row = r != NULL ? db_first_row(r, &nf) : NULL;
	if (r != NULL && (row == NULL || nf != 2)) {
		ticket_run_lost(s, "namespace check", "no row");
		return;
	}
	if (row != NULL && row[0] != NULL &&
	    !nss_parse(row[0], rows, sizeof(rows) / sizeof(rows[0]), &n, &cut, &bad, why,
	    sizeof(why))) {
		/* Past NS_BAD_MAX names not understood: this check is not used. */
		log_warn("%s ticket server: %s (and more: this namespace check is not used)",
		    s->name, why);
		ticket_run_end(s);
		return;
	}
	if (bad > 0 && !t->ns_bad_warned[i])
		log_warn("%s ticket server: %s: %u such rows", s->name, why, bad);
	t->ns_bad_warned[i] = bad > 0;
	t->ns_at[i] = t->ns_sent_at[i];
	tier_ns_up_now(t, up);
	t->ns_released += nss_apply(&t->nss, i, r != NULL ? rows : NULL, n, up);
	tier_ns_remember(t, rows, n, false);
	tier_ns_counters(t, i);
	/*
	 * ns raise: buffered IDs at or below the namespace's start are let go
	 * (13.6), before a witness: its answer ends the run, not a second pass.
	 */
	for (unsigned k = 0; k < t->nss.n; k++) {
		struct nsrv *ns = t->nss.v[k];
		uint64_t x = ns->v[i].start_above;

		if (ns->seen[i] == t->nss.last_check[i] && x > ns->start_above) {
			ns->start_above = x;
			t->ns_released += pool_drop_below(&ns->seq.pool, x < UINT64_MAX ? x + 1 : x);
		}
	}
	if (!t->ns_witnessed[i] && tier_ns_witness(t, s))
		return;		/* the run goes on: tier_ns_witnessed ends it */
	t->ns_witnessed[i] = true;
	ticket_run_end(s);
	tier_prefetch(t);
	t->on_change(t->arg);
}

/*
 * Sends one ticket of ns (NULL: the default, sequence 0) on server s, built
 * from its sequence (docs/design.md 13.7): its table and B (the default's: the
 * server's), the mark known for s when sent, and the copies of the others'
 * marks it carries: the default's as the tier published them
 * (ticket_copies_wanted, the partner's first), a namespace's every known one
 * by index, each rounded up to a block of B_N.
 */
static bool
tier_send_tx(struct tier *t, struct ticket_server *s, struct nsrv *ns)
{
	struct ticket_flight f = { .seq = ns != NULL ? ns->id : 0,
	    .fetching = &TIER_SEQ(t, ns)->fetching,
	    .known = tier_known_now };

	if (ns == NULL) {
		ticket_seq_set(&f.q, NULL, s->block_size, NULL);
		f.mark = s->mark;
		f.copies = ticket_copies_wanted(s, f.copy);
	} else {
		ticket_seq_set(&f.q, ns->name, ns->b, ns_policy_name(ns->policy));
		f.known_end = tier_ns_known(t, ns, s->index);
		f.mark = layout_end_ticket(f.known_end, ns->b);
		for (unsigned j = 0; j < server_own_count() && j < NS_SERVERS; j++) {
			uint64_t end = tier_ns_known(t, ns, j);

			if (j != s->index && end != 0)
				f.copy[f.copies++] = ticket_copy_block(j, end, ns->b);
		}
	}
	return ticket_fetch_seq(s, &f);
}

/*
 * The mark known for s as its ticket in flight is answered (6.3), of every
 * sequence: the default's s->mark, a namespace's its known end on s in a
 * ticket of its B.
 */
static uint64_t
tier_known_now(const struct ticket_server *s)
{
	const struct tier *t = s->notify_arg;
	const struct nsrv *ns;

	if (s->flight.seq == 0)
		return s->mark;
	ns = nss_by_id(&t->nss, s->flight.seq);
	return layout_end_ticket(ns != NULL ? tier_ns_known(t, ns, s->index) : UINT64_MAX,
	    s->flight.q.b);
}

/*
 * A namespace ticket answered (ticket.c judged it, as every sequence's,
 * 13.7): used, or not and why. False when no prefetch pass is to follow (a
 * refused statement's ROLLBACK is on its way).
 */
static bool
tier_ns_answered(struct tier *t, struct ticket_server *s)
{
	const struct ticket_flight *f = &s->flight;
	enum ticket_verdict v = f->verdict;
	struct nsrv *ns = nss_by_id(&t->nss, f->seq);

	if (ns == NULL)		/* cannot be: kept while a ticket of it is in flight */
		return v != TICKET_TX_FAILED;
	if (v == TICKET_TX_OK) {
		/* Used: every sequence's steps (write-ahead, copy first, the bank: 13.7). */
		(void)tier_write_ahead(t, ns, s, f->ticket);
	} else if (v == TICKET_TX_LEARNED) {
		/* Not used, nothing refused; its counter judged at a check at once (6.3). */
		tier_ns_due(t, s->index);
	} else if (v != TICKET_TX_ROLLED) {
		tier_ns_refuse(t, ns, s->index, f->why);
		for (unsigned j = 0; v == TICKET_TX_CHANGED && j < NS_SERVERS; j++)
			tier_ns_due(t, j);
	}
	return v != TICKET_TX_FAILED;
}

unsigned
tier_ns_served(const struct tier *t)
{
	unsigned n = 0;

	for (unsigned k = 0; k < t->nss.n; k++)
		n += t->nss.v[k]->served;
	return n;
}
