/*
 * tier_ns.c - namespaces on the tier's servers (docs/design.md section 13.6):
 * the namespace check after every server check, one namespace ticket
 * transaction at a time on a server's connection; the write-ahead of its
 * mark, copy first and the bank are every sequence's, in tier.c
 * (t->up->write_ahead).
 *
 * Only the servers of our own region serve namespaces; with none of them up
 * a namespace falls back by its policy (source.c).
 *
 * Below tier.c: it calls tier.c only through t->up (struct tier_up, 13.7).
 */
#include "tier.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clk.h"
#include "layout.h"
#include "log.h"
#include "rules.h"

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

static void	tier_ns_checked(struct db_conn *db, const struct db_result *r, void *arg);
static void	tier_ns_check_ended(struct db_conn *db, const struct db_result *r, void *arg);
static void	tier_ns_read(struct ticket_server *s, const struct db_result *r);
static bool	tier_ns_send_tx(struct tier *t, struct ticket_server *s, struct nsrv *ns);
static uint64_t	tier_ns_known_now(const struct ticket_server *s);
static void	tier_ns_up_now(const struct tier *t, bool *up);
static bool	tier_ns_need(const struct tier *t, const struct nsrv *ns);
static void	tier_ns_counters(struct tier *t, unsigned i);
static bool	tier_ns_witness(struct tier *t, struct ticket_server *s);
static void	tier_ns_witnessed(struct db_conn *db, const struct db_result *r, void *arg);
static void	tier_ns_remember(struct tier *t, const struct ns_row *rows, unsigned n);
static void	tier_ns_due(struct tier *t, unsigned i);

/* The mark the state file holds for (ns, server i), as an end in ID space. */
uint64_t
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
	unsigned i = s->index;
	struct ticket_seq q;
	int len = 0;

	if (!RULE_ON(RULE_NS_WITNESS))
		return false;
	for (unsigned k = 0; k < t->nss.n; k++) {
		const struct nsrv *ns = t->nss.v[k];
		uint64_t b = ns->v[i].b;

		if (ns->seen[i] != t->nss.last_check[i] || !ns->v[i].ready || b == 0)
			continue;
		ticket_seq_set(&q, ns->name, b, NULL);
		for (unsigned j = 0; j < server_own_count() && j < NS_SERVERS; j++) {
			uint64_t end = tier_ns_known(t, ns, j), have = layout_ticket_end(
			    ns->v[i].hw[j], ns->v[i].hb[j] != 0 ? ns->v[i].hb[j] : b);

			struct ticket_copy c = ticket_copy_block(j, end, b);

			if (j == i || end <= have)
				continue;
			if (!ticket_seq_copy(&q, false, &c, sql, sizeof(sql), &len)) {
				ticket_run_lost(s, "namespace check", "the copies of the marks do not "
				    "fit a query");
				return true;
			}
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
	ticket_witness_outcome(s, r);
	if (r->err != 0) {
		ticket_run_lost(s, "namespace check", r->msg);
		return;
	}
	t->ns_witnessed[s->index] = true;
	ticket_run_end(s);
	t->up->prefetch(t);
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
bool
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
tier_ns_remember(struct tier *t, const struct ns_row *rows, unsigned n)
{
	bool changed, any = false;
	int j;

	if (!RULE_ON(RULE_NS_REMEMBER))
		return;
	for (unsigned r = 0; r < n; r++) {
		if (rows[r].hw == 0 || (j = ns_role_index(rows[r].role)) < 0 ||
		    nss_find(&t->nss, rows[r].name, strlen(rows[r].name)) == NULL)
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
		(void)t->up->save_marks(t);
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

void
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
		    !t->up->cannot_answer(t, j, clk_mono_ms()))
			return false;
	return true;
}

/*
 * At a check of server i: each namespace's ticket table, by the one check of
 * every sequence's (check_table: there, InnoDB, its marks rows), and its
 * counter there against every mark known for it. Judged only then: one query
 * at a time on the connection, so no ticket of ours was drawn there between
 * the counter's read and now.
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

		if (ns->seen[i] != t->nss.last_check[i] || b == 0 || !v->ready) {
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
void
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
	t->up->ns_refused(t, ns, i);	/* its tickets there waiting for a copy (6.5) */
}

/* Wants more IDs buffered or in flight. */
static bool
tier_ns_need(const struct tier *t, const struct nsrv *ns)
{
	unsigned in_flight = ns->seq.fetching + ns->seq.writing;

	if (!ns->served || ns->b == 0)
		return false;
	/* Room in the pool for every block asked for (a small B_N fills it by count). */
	if (ns->seq.pool.count + in_flight >= POOL_RANGES_ROOM)
		return false;
	/* An idle namespace keeps nothing buffered: its first request fetches. */
	return seq_need(&ns->seq, in_flight, ns->b, ns->seq.last_take_ms == 0 ||
	    clk_mono_ms() - ns->seq.last_take_ms > t->ns_idle_ms);
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

/* Starts namespace tickets on idle servers (only for waiting requests: demand). */
static void
tier_ns_kick_fetches(struct tier *t, bool demand)
{
	unsigned own = server_own_count() < NS_SERVERS ? server_own_count() : NS_SERVERS;
	unsigned n = t->nss.n, start = t->ns_next;

	for (unsigned k = 0; k < n; k++) {
		struct nsrv *ns = t->nss.v[(start + k) % n];

		if ((demand && !ns->seq.demand) || !tier_ns_need(t, ns))
			continue;
		for (unsigned r = 1; r <= own; r++) {
			unsigned i = (ns->seq.last_used + r) % own;

			if (!tier_ns_usable(t, ns, i) || !tier_ns_send_tx(t, &t->srv[i], ns))
				continue;
			ns->seq.last_used = i;
			/* Taking turns: the next kick starts after this one. */
			t->ns_next = (start + k + 1) % n;
			break;
		}
	}
}

/*
 * The checks first (a server busy with the default sequence still reads the
 * catalogue), then tickets for waiting requests; the default's refills, then
 * the namespaces' prefetch, come in tier_prefetch between the two.
 */
void
tier_ns_kick_first(struct tier *t)
{
	tier_ns_kick_checks(t);
	tier_ns_kick_fetches(t, true);
}

void
tier_ns_kick(struct tier *t)
{
	tier_ns_kick_first(t);
	tier_ns_kick_fetches(t, false);
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
	tier_ns_remember(t, rows, n);
	tier_ns_counters(t, i);
	/* The copies of the others' marks this server holds (copy first, 13.6). */
	for (unsigned k = 0; k < t->nss.n; k++) {
		struct nsrv *ns = t->nss.v[k];
		const struct ns_view *v = &ns->v[i];

		if (ns->seen[i] != t->nss.last_check[i] || v->b == 0)
			continue;
		for (unsigned j = 0; j < server_own_count() && j < NS_SERVERS; j++)
			if (j != i && v->hw[j] != 0)
				seq_landed(&ns->seq, j, layout_ticket_end(v->hw[j],
				    v->hb[j] != 0 ? v->hb[j] : v->b));
	}
	if (!t->ns_witnessed[i] && tier_ns_witness(t, s))
		return;		/* the run goes on: tier_ns_witnessed ends it */
	t->ns_witnessed[i] = true;
	/* ns raise: buffered IDs at or below the namespace's start are let go (13.6). */
	for (unsigned k = 0; k < t->nss.n; k++) {
		struct nsrv *ns = t->nss.v[k];
		uint64_t x = ns->v[i].start_above;

		if (ns->seen[i] == t->nss.last_check[i] && x > ns->start_above) {
			ns->start_above = x;
			t->ns_released += pool_drop_below(&ns->seq.pool, x < UINT64_MAX ? x + 1 : x);
		}
	}
	ticket_run_end(s);
	t->up->prefetch(t);
	t->on_change(t->arg);
}

/* Sends one namespace ticket transaction with the copies of the others' marks. */
static bool
tier_ns_send_tx(struct tier *t, struct ticket_server *s, struct nsrv *ns)
{
	struct ticket_flight f = { .seq = ns->id, .known_end = tier_ns_known(t, ns, s->index),
	    .fetching = &ns->seq.fetching, .known = tier_ns_known_now };
	struct ticket_copy c[NS_SERVERS];

	for (unsigned j = 0; j < server_own_count() && j < NS_SERVERS; j++) {
		uint64_t end = tier_ns_known(t, ns, j);

		if (j == s->index || end == 0)
			continue;
		c[f.copies] = ticket_copy_block(j, end, ns->b);
		f.copy[j] = c[f.copies++].end;
	}
	ticket_seq_set(&f.q, ns->name, ns->b, ns_policy_name(ns->policy));
	return ticket_fetch_seq(s, &f, c);
}

/* The end known for s's namespace ticket in flight, as its answer is taken. */
static uint64_t
tier_ns_known_now(const struct ticket_server *s)
{
	const struct tier *t = s->notify_arg;
	const struct nsrv *ns = nss_by_id(&t->nss, s->flight.seq);

	return ns != NULL ? tier_ns_known(t, ns, s->index) : UINT64_MAX;
}

/*
 * A namespace ticket answered (ticket.c judged it, as every sequence's,
 * 13.7): used, or not and why. False when no prefetch pass is to follow (a
 * refused statement's ROLLBACK is on its way).
 */
bool
tier_ns_answered(struct tier *t, struct ticket_server *s)
{
	const struct ticket_flight *f = &s->flight;
	enum ticket_verdict v = f->verdict;
	struct nsrv *ns = nss_by_id(&t->nss, f->seq);

	if (ns == NULL)		/* cannot be: kept while a ticket of it is in flight */
		return v != TICKET_TX_FAILED;
	if (v == TICKET_TX_OK) {
		/* Its transaction committed the copies it carried (copy first, 13.6). */
		for (unsigned j = 0; j < NS_SERVERS; j++)
			seq_landed(&ns->seq, j, f->copy[j]);
		/* Write-ahead, copy first, the bank: every sequence's (13.5, 13.7). */
		(void)t->up->write_ahead(t, ns, s->index, f->ticket);
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

/* Every TIER_RATE_MS: each namespace's rate and target; idle ones let their IDs go. */
void
tier_ns_tick(struct tier *t, unsigned rate_ms, double fetch_ms)
{
	uint64_t now = clk_mono_ms();

	for (unsigned k = 0; k < t->nss.n; k++) {
		struct nsrv *ns = t->nss.v[k];

		seq_sample(&ns->seq, &t->prefetch, rate_ms, fetch_ms, ns->b);
		if (pool_available(&ns->seq.pool) > 0 && ns->seq.last_take_ms != 0 &&
		    now - ns->seq.last_take_ms > t->ns_idle_ms) {
			uint64_t n = pool_clear(&ns->seq.pool);

			ns->ids_released += n;
			t->ns_released += n;
		}
	}
}

unsigned
tier_ns_served(const struct tier *t)
{
	unsigned n = 0;

	for (unsigned k = 0; k < t->nss.n; k++)
		n += t->nss.v[k]->served;
	return n;
}
