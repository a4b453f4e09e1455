/*
 * tserver.c - a simulated ticket server that computes its answers (tserver.h).
 */
#include "tserver.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clk.h"
#include "layout.h"
#include "leasefree.h"
#include "rules.h"
#include "vclock.h"

/* One field of the check row. */
#define TS_SET(col, ...)	snprintf(a->text[col], 32, __VA_ARGS__)

static int	tserver_role(const char *p);
static bool	tserver_mark_pass(const struct tserver *s, int ns, uint64_t oh, uint64_t ob,
		    uint64_t nh, uint64_t nb);
static uint64_t	tserver_end(const struct tserver *s, uint64_t h, uint64_t b);
static bool	tserver_raise_copy(struct tserver *s, const char *p, bool due);
static void	tserver_check(struct tserver *s, uint64_t conn, const char *sql,
		    struct tserver_answer *a);
static unsigned	tserver_session_m(const struct tserver *s, uint64_t conn);
static uint64_t	tserver_draw(struct tserver *s, unsigned m);
static void	tserver_tx(struct tserver *s, uint64_t conn, const char *sql,
		    struct tserver_answer *a);
static void	tserver_witness(struct tserver *s, const char *sql, struct tserver_answer *a);
static void	tserver_fail(struct tserver_answer *a, unsigned err, const char *why,
		    const char *sql);
static void	tserver_leases(struct tserver *s, uint64_t conn, const char *sql,
		    struct tserver_answer *a);
static int	tserver_lease_row(const struct tserver *s, unsigned w);
static bool	tserver_quoted(const char *p, char *out, size_t len);
static bool	tserver_in_tx(const struct tserver *s, uint64_t conn);
static void	tserver_tx_set(struct tserver *s, uint64_t conn, bool open);
static uint64_t	tserver_ns_end_max(const struct tserver *s, const struct tserver_ns *n,
		    unsigned roles, uint64_t b);
static void	tserver_ns_check(struct tserver *s, struct tserver_answer *a);
static void	tserver_ns_tx(struct tserver *s, uint64_t conn, const char *sql,
		    struct tserver_answer *a);
static void	tserver_ns_witness(struct tserver *s, const char *sql, struct tserver_answer *a);
static bool	tserver_ns_copy(struct tserver *s, const char *p, bool ok);
static void	tserver_ns_landed(struct tserver *s, unsigned k, unsigned role, uint64_t end);
static void	tserver_leases_guard(struct tserver *s, uint64_t conn, const char *sql,
		    struct tserver_answer *a);

void
tserver_init(struct tserver *s, unsigned index, uint64_t b)
{
	void *landed = s->landed, *ns_landed = s->ns_landed;
	size_t cap = s->caplanded, ns_cap = s->capns_landed;

	memset(s, 0, sizeof(*s));
	s->landed = landed;	/* kept from schedule to schedule, emptied */
	s->caplanded = cap;
	s->ns_landed = ns_landed;
	s->capns_landed = ns_cap;
	s->index = index;
	s->up = true;
	s->b = b;
	s->m = server_increment();
	s->cnf_m = s->m;
	s->offset = server_offset(index);
	s->st.counter = s->offset;
	s->st.meta_m = s->m;
	s->st.meta_row = true;
	s->st.meta_offset = s->offset;
	s->st.rows = (1u << (server_count() < TSERVER_MAX ? server_count() : TSERVER_MAX)) - 1;
	for (unsigned k = 0; k < TSERVER_MAX; k++)
		s->st.mark_b[k] = b;
	/* Worker numbers of the server's parity: odd 1, 3; even 0, 2. */
	for (unsigned k = 0; k < TSERVER_WORKERS; k++)
		s->st.lease[k].worker = 2 * k + (server_owns_worker(index, 1) ? 1 : 0);
}

/* Whether conn has a transaction open (START TRANSACTION, not yet ended). */
static bool
tserver_in_tx(const struct tserver *s, uint64_t conn)
{
	for (unsigned k = 0; k < TSERVER_TX_MAX; k++)
		if (s->tx[k].conn == conn)
			return true;
	return false;
}

static void
tserver_tx_set(struct tserver *s, uint64_t conn, bool open)
{
	unsigned k, free_k = TSERVER_TX_MAX;

	for (k = 0; k < TSERVER_TX_MAX; k++) {
		if (s->tx[k].conn == conn) {
			if (!open)
				s->tx[k].conn = 0;
			return;
		}
		if (s->tx[k].conn == 0 && free_k == TSERVER_TX_MAX)
			free_k = k;
	}
	if (open && free_k < TSERVER_TX_MAX)
		s->tx[free_k].conn = conn;
}

void
tserver_conn_gone(struct tserver *s, uint64_t conn)
{
	/* Rolled back: its pending row changes and its locks go. */
	for (unsigned k = 0; k < TSERVER_WORKERS; k++)
		if (s->locked[k] == conn) {
			s->locked[k] = 0;
			s->pending_set[k] = false;
		}
	tserver_tx_set(s, conn, false);
	if (s->ctl_tx == conn && conn != 0) {
		s->st = s->ctl_before;
		s->ctl_tx = 0;
	}
}

void
tserver_lease_repair(struct tserver *s, uint64_t until)
{
	for (unsigned k = 0; k < TSERVER_WORKERS; k++)
		if (s->st.lease[k].window_end < until)
			s->st.lease[k].window_end = until;
}

/* The row of worker w; -1: none. */
static int
tserver_lease_row(const struct tserver *s, unsigned w)
{
	for (unsigned k = 0; k < TSERVER_WORKERS; k++)
		if (s->st.lease[k].worker == w)
			return (int)k;
	return -1;
}

/* Copies a quoted name at p (after the opening quote) into out; false when unterminated. */
static bool
tserver_quoted(const char *p, char *out, size_t len)
{
	const char *q = p != NULL ? strchr(p, '\'') : NULL;

	if (q == NULL || (size_t)(q - p) >= len)
		return false;
	memcpy(out, p, (size_t)(q - p));
	out[q - p] = '\0';
	return true;
}

/*
 * lease.c's statements on idgen_leases (docs/design.md 3.3-3.5): the clock,
 * the claim's transaction (SELECT ... FOR UPDATE SKIP LOCKED locks the row
 * it returns, the UPDATE is pending until COMMIT, a lost connection rolls
 * back), the extend's and adoption's compare-and-set (affected: rows
 * matched, CLIENT_FOUND_ROWS), the release. The triggers: tserver_leases_guard.
 */
static void
tserver_leases(struct tserver *s, uint64_t conn, const char *sql, struct tserver_answer *a)
{
	char holder[160], old[160];
	uint64_t start, end, below;
	unsigned w, lo, hi;
	int k;
	const char *p;

	if (strcmp(sql, "SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)") == 0) {
		TS_SET(0, "%" PRIu64, s->now_ms());
		a->nfields = 1;
		a->nstmts = 1;
		return;
	}
	if (strcmp(sql, "START TRANSACTION") == 0) {
		tserver_conn_gone(s, conn);	/* an implicit commit of nothing */
		tserver_tx_set(s, conn, true);
		a->nstmts = 1;
		return;
	}
	if (strcmp(sql, "COMMIT") == 0) {
		for (unsigned r = 0; r < TSERVER_WORKERS; r++)
			if (s->locked[r] == conn && s->pending_set[r])
				s->st.lease[r] = s->pending[r];
		for (unsigned r = 0; r < TSERVER_WORKERS; r++)
			if (s->locked[r] == conn) {
				s->locked[r] = 0;
				s->pending_set[r] = false;
			}
		tserver_tx_set(s, conn, false);
		a->nstmts = 1;
		return;
	}
	if (sscanf(sql, "SELECT worker FROM idgen_leases WHERE window_end < %" SCNu64 " AND "
	    "worker BETWEEN %u AND %u ORDER BY window_end, worker LIMIT 1 FOR UPDATE SKIP LOCKED",
	    &below, &lo, &hi) == 3) {
		int best = -1;

		for (unsigned r = 0; r < TSERVER_WORKERS; r++) {
			const struct tserver_lease *l = &s->st.lease[r];

			if (l->window_end >= below || l->worker < lo || l->worker > hi ||
			    (s->locked[r] != 0 && s->locked[r] != conn))
				continue;
			if (best < 0 || l->window_end < s->st.lease[best].window_end ||
			    (l->window_end == s->st.lease[best].window_end &&
			    l->worker < s->st.lease[best].worker))
				best = (int)r;
		}
		a->nstmts = 1;
		if (best < 0)
			return;
		if (tserver_in_tx(s, conn))
			s->locked[best] = conn;
		TS_SET(0, "%u", s->st.lease[best].worker);
		a->nfields = 1;
		return;
	}
	if (strncmp(sql, "UPDATE idgen_leases SET holder = '", 34) == 0 &&
	    (p = strstr(sql, "', window_start = ")) != NULL &&
	    tserver_quoted(sql + 34, holder, sizeof(holder)) &&
	    sscanf(p, "', window_start = %" SCNu64 ", window_end = %" SCNu64 ", claims = "
	    "claims + 1, updated_at = NOW(3) WHERE worker = %u AND window_end < %" SCNu64,
	    &start, &end, &w, &below) == 4) {
		struct tserver_lease *l;

		a->nstmts = 1;
		if ((k = tserver_lease_row(s, w)) < 0)
			return;
		if (s->locked[k] != 0 && s->locked[k] != conn) {
			tserver_fail(a, 1205, "Lock wait timeout exceeded", "");
			return;
		}
		l = s->pending_set[k] && s->locked[k] == conn ? &s->pending[k] : &s->st.lease[k];
		if (l->window_end >= below)
			return;
		s->pending[k] = *l;
		snprintf(s->pending[k].holder, sizeof(s->pending[k].holder), "%s", holder);
		s->pending[k].window_start = start;
		s->pending[k].window_end = end;
		a->affected[0] = 1;
		if (tserver_in_tx(s, conn)) {
			s->locked[k] = conn;
			s->pending_set[k] = true;
		} else {
			s->st.lease[k] = s->pending[k];
		}
		return;
	}
	if (strncmp(sql, "UPDATE idgen_leases SET holder = '", 34) == 0 &&
	    (p = strstr(sql, "', window_end = GREATEST(window_end, ")) != NULL &&
	    tserver_quoted(sql + 34, holder, sizeof(holder)) &&
	    sscanf(p, "', window_end = GREATEST(window_end, %" SCNu64 "), updated_at = NOW(3) "
	    "WHERE worker = %u AND ", &end, &w) == 2) {
		const char *h = strstr(p, "AND holder = '"), *any = strstr(p, "AND '");
		struct tserver_lease *l;

		a->nstmts = 1;
		if ((h == NULL || !tserver_quoted(h + 14, old, sizeof(old))) && any == NULL) {
			tserver_fail(a, 1064, "extend not understood", sql);
			return;
		}
		if ((k = tserver_lease_row(s, w)) < 0)
			return;
		l = &s->st.lease[k];
		if (h != NULL && strcmp(l->holder, old) != 0)
			return;
		if (s->locked[k] != 0 && s->locked[k] != conn) {
			tserver_fail(a, 1205, "Lock wait timeout exceeded", "");
			return;
		}
		snprintf(l->holder, sizeof(l->holder), "%s", holder);
		if (end > l->window_end)
			l->window_end = end;
		a->affected[0] = 1;
		return;
	}
	if (strncmp(sql, "SET @idgen_release = '", 22) == 0 &&
	    (p = strstr(sql, "';UPDATE idgen_leases SET window_end = ")) != NULL &&
	    sscanf(p, "';UPDATE idgen_leases SET window_end = %" SCNu64 ", updated_at = NOW(3) "
	    "WHERE worker = %u AND holder = '", &end, &w) == 2 &&
	    tserver_quoted(strstr(p, "AND holder = '") + 14, old, sizeof(old))) {
		a->nstmts = 3;
		if ((k = tserver_lease_row(s, w)) < 0 || strcmp(s->st.lease[k].holder, old) != 0)
			return;
		if (s->locked[k] != 0 && s->locked[k] != conn) {
			tserver_fail(a, 1205, "Lock wait timeout exceeded", "");
			return;
		}
		s->st.lease[k].window_end = end;
		a->affected[1] = 1;
		return;
	}
	tserver_fail(a, 1064, "not modelled", sql);
}

/*
 * lease.c's statements through the schema's triggers on idgen_leases
 * (schema/40-leases.sql, docs/design.md 6.5), unless lease-guard is off: each
 * row an UPDATE changed, as this connection saw it before and after (its own
 * pending row in a transaction), is judged by tserver_lease_trigger with the
 * statement's @idgen_release; a refusal undoes the statement and answers
 * 1644 with the trigger's message. The writers pass (6.5): a claim starts
 * after the old window_end, an extend or a re-adoption only raises it, the
 * release names its holder.
 */
static void
tserver_leases_guard(struct tserver *s, uint64_t conn, const char *sql, struct tserver_answer *a)
{
	struct tserver_lease st[TSERVER_WORKERS], pending[TSERVER_WORKERS];
	uint64_t locked[TSERVER_WORKERS];
	bool pending_set[TSERVER_WORKERS];
	char release[160];
	const char *why = NULL, *rel = NULL;

	if (!RULE_ON(RULE_LEASE_GUARD) || strstr(sql, "UPDATE idgen_leases") == NULL) {
		tserver_leases(s, conn, sql, a);
		return;
	}
	memcpy(st, s->st.lease, sizeof(st));
	memcpy(pending, s->pending, sizeof(pending));
	memcpy(locked, s->locked, sizeof(locked));
	memcpy(pending_set, s->pending_set, sizeof(pending_set));
	tserver_leases(s, conn, sql, a);
	if (a->err != 0)
		return;
	if (strncmp(sql, "SET @idgen_release = '", 22) == 0 &&
	    tserver_quoted(sql + 22, release, sizeof(release)))
		rel = release;
	for (unsigned k = 0; k < TSERVER_WORKERS && why == NULL; k++) {
		const struct tserver_lease *o = pending_set[k] && locked[k] == conn ? &pending[k] :
		    &st[k];
		const struct tserver_lease *n = s->pending_set[k] && s->locked[k] == conn ?
		    &s->pending[k] : &s->st.lease[k];

		if (o->worker != n->worker || strcmp(o->holder, n->holder) != 0 ||
		    o->window_start != n->window_start || o->window_end != n->window_end)
			why = tserver_lease_trigger(o, n, s->now_ms(), rel);
	}
	if (why == NULL)
		return;
	memcpy(s->st.lease, st, sizeof(st));
	memcpy(s->pending, pending, sizeof(pending));
	memcpy(s->locked, locked, sizeof(locked));
	memcpy(s->pending_set, pending_set, sizeof(pending_set));
	memset(a, 0, sizeof(*a));
	tserver_fail(a, 1644, why, "");
	lease_guard_refused += lease_guard_count;
}

/* Offsets of the servers beyond the configured ones, by index (tserver_role_set). */
static unsigned tserver_new_offset[TSERVER_MAX];

void
tserver_role_set(unsigned index, unsigned offset)
{
	if (index < TSERVER_MAX)
		tserver_new_offset[index] = offset;
}

/* The server index of the role named at p (up to a quote); -1: none. */
static int
tserver_role(const char *p)
{
	unsigned o;
	int n = 0;

	for (unsigned k = 0; k < server_count() && k < TSERVER_MAX; k++) {
		size_t len = strlen(server_role(k));

		if (strncmp(p, server_role(k), len) == 0 && p[len] == '\'')
			return (int)k;
	}
	if (sscanf(p, "o%u%n", &o, &n) == 1 && p[n] == '\'')
		for (unsigned k = server_count(); k < TSERVER_MAX; k++)
			if (tserver_new_offset[k] == o && o != 0)
				return (int)k;
	return -1;
}

/* Role k's name, a configured server's or one tserver_role_set named. */
const char *
tserver_role_name(unsigned k, char *buf, size_t len)
{
	if (k < server_count())
		return server_role(k);
	snprintf(buf, len, "o%u", k < TSERVER_MAX ? tserver_new_offset[k] : 0);
	return buf;
}

/*
 * Every UPDATE of a marks row the model applies passes here first: the
 * schema's triggers (tserver_mark_trigger, schema/10-tables.sql), unless
 * mark-guard is off. ns: the namespace (idgen_ns_marks, the B of its
 * idgen_namespaces row), -1 idgen_marks (idgen_meta's B); 1 without the
 * row, as the triggers' COALESCE. False: refused (error 1644 in MariaDB),
 * counted, the row left as it was. The idservers' and idgenctl's writes
 * only raise (their WHERE compares in ID space), so none is refused while
 * the B they name is the table's (6.5).
 */
static bool
tserver_mark_pass(const struct tserver *s, int ns, uint64_t oh, uint64_t ob, uint64_t nh,
    uint64_t nb)
{
	uint64_t b = ns < 0 ? (s->st.meta_row ? s->b : 1) :
	    s->st.ns[ns].state != TS_NS_NONE ? s->st.ns[ns].b : 1;

	if (!RULE_ON(RULE_MARK_GUARD) || tserver_mark_trigger(oh, ob, nh, nb, b, false, false) ==
	    NULL)
		return true;
	mark_guard_refused += mark_guard_count;
	return false;
}

/* The first ID above a mark (h, b); b of 0 is the server's B. */
static uint64_t
tserver_end(const struct tserver *s, uint64_t h, uint64_t b)
{
	return (h + 1) * (b != 0 ? b : s->b);
}

/*
 * "SET high_water = h, block_size = b WHERE role = 'r' ..." at p: raises
 * row r where (h, b) covers more, as the UPDATE's WHERE does; due: it is
 * also what idservers were due to write. False when it does not parse.
 */
static bool
tserver_raise_copy(struct tserver *s, const char *p, bool due)
{
	static const char where[] = "WHERE role = '";
	uint64_t h, b;
	const char *q;
	int r;

	if (p == NULL || sscanf(p, "SET high_water = %" SCNu64 ", block_size = %" SCNu64,
	    &h, &b) != 2 || (q = strstr(p, where)) == NULL ||
	    (r = tserver_role(q + sizeof(where) - 1)) < 0 || (unsigned)r == s->index)
		return false;
	if (tserver_end(s, s->st.mark[r], s->st.mark_b[r]) < tserver_end(s, h, b) &&
	    tserver_mark_pass(s, -1, s->st.mark[r], s->st.mark_b[r], h, b)) {
		s->st.mark[r] = h;
		s->st.mark_b[r] = b;
	}
	if (s->st.mark[r] > s->copy_ever[r]) {
		s->copy_ever[r] = s->st.mark[r];
		if (s->nlanded == s->caplanded) {
			s->caplanded = s->caplanded ? 2 * s->caplanded : 64;
			s->landed = realloc(s->landed, s->caplanded * sizeof(*s->landed));
			if (s->landed == NULL)
				abort();
		}
		s->landed[s->nlanded].role = (unsigned)r;
		s->landed[s->nlanded].value = s->st.mark[r];
		s->landed[s->nlanded].ms = (uint64_t)clk_mono_ms();
		s->nlanded++;
	}
	if (due && h > s->st.due[r])
		s->st.due[r] = h;
	if (due && h > s->due_ever[r])
		s->due_ever[r] = h;
	return true;
}

static void
tserver_fail(struct tserver_answer *a, unsigned err, const char *why, const char *sql)
{
	a->err = err;
	snprintf(a->why, sizeof(a->why), "%s%s%.100s", why, sql[0] ? ": " : "", sql);
}


/*
 * The check row (ticket.c's TICKET_CHECK_SQL): settings and meta row of the
 * tier's shape, the counter, and each mark subquery from the row its role
 * names, in the order asked (columns 10, 11, 13, 14, then 26 on).
 */
static void
tserver_check(struct tserver *s, uint64_t conn, const char *sql, struct tserver_answer *a)
{
	static const char hw[] = "(SELECT high_water FROM idgen_marks WHERE role = '";
	static const char bs[] = "(SELECT block_size FROM idgen_marks WHERE role = '";
	unsigned i = s->index, n = 0;
	const char *p = sql;

	TS_SET(0, "10.11.19-MariaDB");
	TS_SET(1, "%u", s->m);
	TS_SET(2, "%u", s->offset);
	TS_SET(3, "1");
	TS_SET(4, "InnoDB");
	TS_SET(5, "1");
	TS_SET(6, "%" PRIu64, s->b);
	TS_SET(7, "%s", server_parity(i));
	TS_SET(8, "uuid-%s", server_role(i));
	TS_SET(9, "%" PRIu64, s->st.counter);
	TS_SET(12, "0");
	TS_SET(15, "%u", s->st.meta_m);
	TS_SET(16, "%u", s->offset);
	TS_SET(17, "%u", s->region);
	TS_SET(18, "%u", s->region_bits);
	TS_SET(19, "%u", tserver_session_m(s, conn));
	TS_SET(20, "%u", s->offset);
	TS_SET(21, "%u", s->st.gen);
	TS_SET(22, "%" PRIu64, s->st.floor);
	TS_SET(23, "%u", s->st.own_gen);
	TS_SET(24, "%d", s->st.sealed ? 1 : 0);
	/* GROUP_CONCAT(role) of the rows flagged retired (12.5); NULL when none. */
	a->null[25] = s->st.retired == 0;
	for (unsigned k = 0, len = 0; k < TSERVER_MAX; k++) {
		char name[16];

		if ((s->st.retired >> k & 1) && len < 32)
			len += (unsigned)snprintf(a->text[25] + len, 32 - len, "%s%s", len ? "," : "",
			    tserver_role_name(k, name, sizeof(name)));
	}
	for (;;) {
		const char *h = strstr(p, hw), *b = strstr(p, bs), *q;
		unsigned col = n < 2 ? 10 + n : n < 4 ? 11 + n : 22 + n;
		int role;

		if (h == NULL && b == NULL)
			break;
		q = h != NULL && (b == NULL || h < b) ? h : b;
		role = tserver_role(q + sizeof(hw) - 1);
		if (role < 0 || col >= TSERVER_TEXT) {
			tserver_fail(a, 1054, "unknown role in the check", q);
			return;
		}
		TS_SET(col, "%" PRIu64, q == h ? s->st.mark[role] : s->st.mark_b[role]);
		n++;
		p = q + 1;
	}
	a->nfields = 22 + n;
	a->nstmts = 4;
}

/*
 * One ticket transaction (ticket.c's TICKET_TX_SQL), committed: the row lock,
 * REPLACE draws the counter, the own mark raised only where it is below the
 * ticket in ID space (the own-mark check), then each copy UPDATE.
 */
static void
tserver_tx(struct tserver *s, uint64_t conn, const char *sql, struct tserver_answer *a)
{
	static const char set[] = "SET high_water = ";
	unsigned i = s->index, copies = 0;
	const char *own = strstr(sql, "SET high_water = LAST_INSERT_ID()"), *p;
	uint64_t t, b = 0;
	bool raised = false;

	if (own == NULL || sscanf(own, "SET high_water = LAST_INSERT_ID(), block_size = %"
	    SCNu64, &b) != 1 || b == 0 || strstr(own, "WHERE role = '") == NULL ||
	    tserver_role(strstr(own, "WHERE role = '") + 14) != (int)i) {
		tserver_fail(a, 1064, "ticket transaction not understood", sql);
		return;
	}
	TS_SET(0, "%" PRIu64, s->st.mark[i]);
	TS_SET(1, "%u", s->st.own_gen);	/* read under the row's lock (12.4) */
	TS_SET(2, "%d", s->st.sealed ? 1 : 0);
	a->nfields = 3;
	t = tserver_draw(s, tserver_session_m(s, conn));
	a->drew = true;
	a->ticket = t;
	a->own_before = s->st.mark[i];
	if (t > s->drawn_max)
		s->drawn_max = t;
	s->draws++;
	/* The statement's B (the idserver's, agreed at its check), not the meta row's now. */
	if (tserver_end(s, s->st.mark[i], s->st.mark_b[i]) <= t * b &&
	    tserver_mark_pass(s, -1, s->st.mark[i], s->st.mark_b[i], t, b)) {
		s->st.mark[i] = t;
		s->st.mark_b[i] = b;
		raised = true;
	}
	for (p = strstr(own + 1, set); p != NULL; p = strstr(p + 1, set)) {
		if (!tserver_raise_copy(s, p, true) || 5 + copies >= DB_MAX_STMTS) {
			tserver_fail(a, 1064, "copy UPDATE not understood", p);
			return;
		}
		copies++;
	}
	/* START, the SELECT, REPLACE, its own UPDATE, the copies, COMMIT. */
	a->nstmts = 5 + copies;
	a->insert_id[2] = t;
	a->affected[1] = 1;
	a->affected[2] = 1;
	a->affected[3] = raised;
	for (unsigned k = 0; k < copies; k++)
		a->affected[4 + k] = 1;
	/* The driver reports insert_id of the last statement (COMMIT: the session's). */
	a->insert_id[4 + copies] = t;
}

/* The witness at connect: one copy UPDATE per copy behind, separated by ';'. */
static void
tserver_witness(struct tserver *s, const char *sql, struct tserver_answer *a)
{
	static const char update[] = "UPDATE idgen_marks ";
	unsigned n = 0;

	for (const char *p = sql; p != NULL; p = strstr(p + 1, update)) {
		if ((p != sql && p[-1] != ';') || n >= DB_MAX_STMTS ||
		    !tserver_raise_copy(s, strstr(p, "SET high_water = "), false)) {
			tserver_fail(a, 1064, "witness not understood", sql);
			return;
		}
		a->affected[n++] = 1;
	}
	a->nstmts = n;
}

void
tserver_answer(struct tserver *s, uint64_t conn, const char *sql, struct tserver_answer *a)
{
	memset(a, 0, sizeof(*a));
	if (!s->up) {
		tserver_fail(a, 2003, "server down", "");
		return;
	}
	if (strcmp(sql, "CONNECT") == 0) {
		/* A new session takes the global increment of now. */
		s->session[conn % TSERVER_SESSIONS].conn = conn;
		s->session[conn % TSERVER_SESSIONS].m = s->m;
		return;
	}
	if (s->read_only && tserver_ro_refuses(sql)) {
		tserver_fail(a, TSERVER_RO_ERR, tserver_ro_msg, "");
		return;
	}
	if (strcmp(sql, "ROLLBACK") == 0 || strncmp(sql, "EXPLAIN ", 8) == 0)
		return;		/* every right granted */
	if (strncmp(sql, "SET SESSION group_concat_max_len", 32) == 0)
		tserver_ns_check(s, a);
	else if (strncmp(sql, "START TRANSACTION;SET @idgen_ns_ok = 0;", 39) == 0)
		tserver_ns_tx(s, conn, sql, a);
	else if (strncmp(sql, "UPDATE idgen_ns_marks ", 22) == 0)
		tserver_ns_witness(s, sql, a);
	else if (strstr(sql, "SELECT @@version") != NULL)
		tserver_check(s, conn, sql, a);
	else if (strncmp(sql, "START TRANSACTION;", 18) == 0)
		tserver_tx(s, conn, sql, a);
	else if (strncmp(sql, "UPDATE idgen_marks ", 19) == 0)
		tserver_witness(s, sql, a);
	else if (strstr(sql, "idgen_leases") != NULL || strstr(sql, "NOW(3)") != NULL ||
	    strcmp(sql, "START TRANSACTION") == 0 || strcmp(sql, "COMMIT") == 0)
		tserver_leases_guard(s, conn, sql, a);
	else
		tserver_fail(a, 1064, "not modelled", sql);
}

void
tserver_due(struct tserver *s, unsigned role, uint64_t high_water)
{
	if (role < TSERVER_MAX && role != s->index && high_water > s->st.due[role])
		s->st.due[role] = high_water;
	if (role < TSERVER_MAX && role != s->index && high_water > s->due_ever[role])
		s->due_ever[role] = high_water;
}

/* A copy idservers were due to write here: raised, never lowered by a restore in _ever. */
void
tserver_ns_due(struct tserver *s, unsigned k, unsigned role, uint64_t end)
{
	if (k >= TSERVER_NS || role >= TSERVER_MAX || role == s->index)
		return;
	if (end > s->st.ns[k].due_end[role])
		s->st.ns[k].due_end[role] = end;
	if (end > s->ns_due_ever[k][role])
		s->ns_due_ever[k][role] = end;
}

void
tserver_backup(struct tserver *s)
{
	s->backup = s->st;
	s->have_backup = true;
}

bool
tserver_restore(struct tserver *s)
{
	if (!s->have_backup)
		return false;
	s->st = s->backup;
	return true;
}

/* tickets_N's counter lowered by hand, not below the server's offset. */
void
tserver_ns_lower(struct tserver *s, unsigned k, uint64_t by)
{
	uint64_t m = s->m, d = by * m, lo = s->offset;
	struct tserver_ns *n = &s->st.ns[k];

	if (n->counter != 0)
		n->counter = n->counter > d + lo ? n->counter - d : lo;
}

void
tserver_lower(struct tserver *s, uint64_t by)
{
	uint64_t m = s->m, d = by * m;

	s->st.counter = s->st.counter > d + s->offset ? s->st.counter - d : s->offset;
}

/* Connection conn's session increment: the global one at its connect. */
static unsigned
tserver_session_m(const struct tserver *s, uint64_t conn)
{
	const unsigned k = (unsigned)(conn % TSERVER_SESSIONS);

	return s->session[k].conn == conn && s->session[k].m != 0 ? s->session[k].m : s->m;
}

/*
 * REPLACE's ticket under session increment m: the first value of the
 * server's offset modulo m at or above AUTO_INCREMENT, which then moves to
 * the value after it.
 */
static uint64_t
tserver_draw(struct tserver *s, unsigned m)
{
	uint64_t c = s->st.counter, o = s->offset % m, t = c + (o + m - c % m) % m;

	s->st.counter = t + m;
	s->st.last = t;
	return t;
}

void
tserver_seal(struct tserver *s)
{
	if (s->st.own_gen == s->st.gen)
		s->st.sealed = true;
}

void
tserver_open(struct tserver *s, unsigned m, uint64_t f)
{
	unsigned g = s->st.gen;

	if (g != s->st.own_gen || !s->st.sealed)
		return;		/* opened already (the command resumed) */
	s->m = m;
	/* ALTER TABLE: never at or below the row's value. */
	s->st.counter = f + 1 > s->st.last + 1 ? f + 1 : s->st.last + 1;
	for (unsigned k = 0; k < TSERVER_MAX; k++)
		if (tserver_end(s, s->st.mark[k], s->st.mark_b[k]) < (f + 1) * s->b &&
		    tserver_mark_pass(s, -1, s->st.mark[k], s->st.mark_b[k], f, s->b)) {
			s->st.mark[k] = f;
			s->st.mark_b[k] = s->b;
		}
	s->st.meta_m = m;
	s->st.gen = g + 1;
	s->st.floor = (f + 1) * s->b;
	s->st.own_gen = g + 1;
	s->st.sealed = false;
}

void
tserver_add(struct tserver *s, unsigned offset, unsigned m, unsigned gen, uint64_t floor,
    uint64_t t)
{
	s->m = m;
	s->cnf_m = m;
	s->offset = offset;
	s->st.meta_m = m;
	s->st.gen = gen;
	s->st.floor = floor;
	s->st.own_gen = gen;
	if (t > 0 && tserver_end(s, s->st.mark[s->index], s->st.mark_b[s->index]) < t * s->b &&
	    tserver_mark_pass(s, -1, s->st.mark[s->index], s->st.mark_b[s->index], t - 1, s->b)) {
		s->st.mark[s->index] = t - 1;
		s->st.mark_b[s->index] = s->b;
	}
	s->st.counter = t > s->st.counter ? t : s->st.counter;
}

/* Namespace k's name. */
const char *
tserver_ns_name(unsigned k)
{
	static const char *const names[TSERVER_NS] = { "n0", "n1" };

	return k < TSERVER_NS ? names[k] : "";
}

/* The namespace named name (len bytes); -1: none. */
int
tserver_ns_index(const char *name, size_t len)
{
	for (unsigned k = 0; k < TSERVER_NS; k++)
		if (strlen(tserver_ns_name(k)) == len && memcmp(tserver_ns_name(k), name, len) == 0)
			return (int)k;
	return -1;
}

/* A mark's end in ID space, saturating. */
uint64_t
tserver_ns_end(uint64_t hw, uint64_t hb, uint64_t b)
{
	uint64_t u = hb != 0 ? hb : b;

	return hw >= UINT64_MAX / (u ? u : 1) - 1 ? UINT64_MAX : (hw + 1) * u;
}

/*
 * Whether s holds idgen_ns_marks rows of role j: every server of the region
 * configured now, and a server no longer configured (retired, 12.5) whose
 * idgen_marks row s still holds: ns create wrote its rows while it was
 * configured, and they stay (the triggers refuse their DELETE; a dropped
 * namespace's rows stay too), so ns create's floor, ns raise's end and the
 * namespace check read them as MariaDB would (an idserver ignores a role not
 * of its region, ns.c). A retired server's role gets rows of a namespace
 * created after it left too, with no mark (0): the same floor, end and check.
 */
static bool
tserver_ns_row(const struct tserver *s, unsigned j)
{
	return j < TSERVER_MAX && (j < server_count() || (s->st.rows >> j & 1));
}

/*
 * The highest end of namespace n's marks rows on s, in ID space: (high_water
 * + 1) * block_size, b where a row's block_size is 0; 0 without rows.
 */
static uint64_t
tserver_ns_end_max(const struct tserver *s, const struct tserver_ns *n, unsigned roles,
    uint64_t b)
{
	uint64_t end = 0, e;

	for (unsigned j = 0; n->state != TS_NS_NONE && j < roles; j++) {
		if (!tserver_ns_row(s, j))
			continue;
		e = (n->hw[j] + 1) * (n->hb[j] != 0 ? n->hb[j] : b);
		end = e > end ? e : end;
	}
	return end;
}

/*
 * The namespace check (tier.c's TIER_NS_CHECK_SQL): one line per marks
 * row of every namespace not dropped, "name B policy state counter role hw
 * hb start_above engine", ordered by name then role; NULL when none.
 */
static void
tserver_ns_check(struct tserver *s, struct tserver_answer *a)
{
	static const char *const st[] = { "", "creating", "ready", "dropped" };
	size_t len = 0;
	unsigned order[TSERVER_MAX], roles = 0;
	char b1[16], b2[16];

	/*
	 * Roles by name, as ORDER BY m.role (BINARY) sorts them (insertion
	 * sort): the region's own servers, and a retired one's rows.
	 */
	for (unsigned k = 0; k < TSERVER_MAX; k++) {
		unsigned j = roles;

		if (!(k < server_own_count() || (k >= server_count() && tserver_ns_row(s, k))))
			continue;
		for (; j > 0 && strcmp(tserver_role_name(order[j - 1], b1, sizeof(b1)),
		    tserver_role_name(k, b2, sizeof(b2))) > 0; j--)
			order[j] = order[j - 1];
		order[j] = k;
		roles++;
	}
	for (unsigned k = 0; k < TSERVER_NS; k++) {
		const struct tserver_ns *n = &s->st.ns[k];

		if (n->state == TS_NS_NONE || n->state == TS_NS_DROPPED)
			continue;
		for (unsigned r = 0; r < roles; r++) {
			unsigned j = order[r];

			len += (size_t)snprintf(a->bigtext + len, sizeof(a->bigtext) - len,
			    "%s%s %" PRIu64 " %s %s %" PRIu64 " %s %" PRIu64 " %" PRIu64 " %" PRIu64
			    " %s", len ? "\n" : "", tserver_ns_name(k), n->b,
			    n->refuse ? "refuse" : "snowflake", st[n->state], n->counter,
			    tserver_role_name(j, b1, sizeof(b1)), n->hw[j], n->hb[j], n->start_above,
			    n->counter != 0 ? "InnoDB" : "-");
		}
	}
	a->big = len > 0;
	a->null[0] = len == 0;
	TS_SET(1, "1");
	a->nfields = 2;
	a->nstmts = 5;
}

/*
 * A copy "SET high_water = h, block_size = b WHERE ns = 'N' AND role = 'r'
 * AND (high_water + 1) * IF(block_size = 0, b, block_size) < e" at p: raises
 * the row when below e, and it was due (ok: the ticket's @idgen_ns_ok).
 * False when it does not parse.
 */
static bool
tserver_ns_copy(struct tserver *s, const char *p, bool ok)
{
	char name[32];
	uint64_t h, b, b2, e;
	const char *q, *w;
	int k, r;

	if (p == NULL || sscanf(p, "SET high_water = %" SCNu64 ", block_size = %" SCNu64,
	    &h, &b) != 2 || (q = strstr(p, "WHERE ns = '")) == NULL ||
	    !tserver_quoted(q + 12, name, sizeof(name)) ||
	    (k = tserver_ns_index(name, strlen(name))) < 0 ||
	    (w = strstr(q, "AND role = '")) == NULL || (r = tserver_role(w + 12)) < 0 ||
	    (w = strstr(w, "AND (high_water + 1) * IF(block_size = 0, ")) == NULL ||
	    sscanf(w, "AND (high_water + 1) * IF(block_size = 0, %" SCNu64 ", block_size) < %"
	    SCNu64, &b2, &e) != 2)
		return false;
	{
		struct tserver_ns *n = &s->st.ns[k];

		if (ok)
			tserver_ns_due(s, (unsigned)k, (unsigned)r, e);
		if (ok && n->state != TS_NS_NONE &&
		    tserver_ns_end(n->hw[r], n->hb[r], b2) < e &&
		    tserver_mark_pass(s, k, n->hw[r], n->hb[r], h, b)) {
			n->hw[r] = h;
			n->hb[r] = b;
			if (e > s->ns_copy_ever[k][r]) {
				s->ns_copy_ever[k][r] = e;
				tserver_ns_landed(s, (unsigned)k, (unsigned)r, e);
			}
		}
	}
	return true;
}

/* A copy of namespace k's mark of role rose to end (ID space) here now. */
static void
tserver_ns_landed(struct tserver *s, unsigned k, unsigned role, uint64_t end)
{
	if (s->nns_landed == s->capns_landed) {
		s->capns_landed = s->capns_landed ? 2 * s->capns_landed : 64;
		s->ns_landed = realloc(s->ns_landed, s->capns_landed * sizeof(*s->ns_landed));
		if (s->ns_landed == NULL)
			abort();
	}
	s->ns_landed[s->nns_landed].ns = k;
	s->ns_landed[s->nns_landed].role = role;
	s->ns_landed[s->nns_landed].end = end;
	s->ns_landed[s->nns_landed].us = (uint64_t)vclock_now_us();
	s->nns_landed++;
}

/*
 * A namespace ticket transaction (TIER_NS_TX_SQL), committed. Its row reads
 * the own idgen_marks row's generation and seal under its shared lock, and
 * REPLACE draws tickets_N's counter as tserver_draw draws tickets64's: the
 * first value of the offset modulo the session's increment at or above it
 * (docs/design.md 13.8: a connection checked before a change keeps M).
 */
static void
tserver_ns_tx(struct tserver *s, uint64_t conn, const char *sql, struct tserver_answer *a)
{
	static const char *const st[] = { "", "creating", "ready", "dropped" };
	static const char cat[] = "@idgen_ns_ok := (n.state = 'ready' AND n.block_size = ";
	static const char copy[] = ";UPDATE idgen_ns_marks SET high_water = ";
	char name[32], pol[32];
	const char *p = strstr(sql, cat), *q, *own;
	uint64_t b, t;
	unsigned i = s->index, copies = 0, m;
	struct tserver_ns *n;
	bool ok;
	int k, role;

	if (p == NULL || sscanf(p + sizeof(cat) - 1, "%" SCNu64, &b) != 1 ||
	    (q = strstr(p, "AND n.fallback = '")) == NULL ||
	    !tserver_quoted(q + 18, pol, sizeof(pol)) ||
	    (q = strstr(p, "JOIN idgen_marks m ON m.role = '")) == NULL ||
	    (role = tserver_role(q + 32)) != (int)i ||
	    (q = strstr(p, "WHERE n.name = '")) == NULL ||
	    !tserver_quoted(q + 16, name, sizeof(name)) ||
	    (own = strstr(sql, "UPDATE idgen_ns_marks SET high_water = LAST_INSERT_ID()")) == NULL) {
		tserver_fail(a, 1064, "namespace ticket not understood", sql);
		return;
	}
	if ((k = tserver_ns_index(name, strlen(name))) < 0 ||
	    s->st.ns[k].state == TS_NS_NONE || s->st.ns[k].counter == 0) {
		tserver_fail(a, 1146, "Table 'idgen.tickets_N' doesn't exist", "");
		return;
	}
	n = &s->st.ns[k];
	ok = n->state == TS_NS_READY && n->b == b &&
	    strcmp(pol, n->refuse ? "refuse" : "snowflake") == 0;
	TS_SET(0, "%s", st[n->state]);
	TS_SET(1, "%" PRIu64, n->b);
	TS_SET(2, "%s", n->refuse ? "refuse" : "snowflake");
	TS_SET(3, "%u", s->st.own_gen);
	TS_SET(4, "%d", s->st.sealed ? 1 : 0);
	TS_SET(5, "%d", ok ? 1 : 0);
	a->nfields = 6;
	m = tserver_session_m(s, conn);
	t = n->counter + (s->offset % m + m - n->counter % m) % m;
	n->counter = t + m;
	n->last = t;
	a->ns_drew = true;
	a->ns = (unsigned)k;
	a->ns_b = b;
	a->ns_ok = ok;
	a->ticket = t;
	a->ns_own_end = tserver_ns_end(n->hw[i], n->hb[i], b);
	a->affected[5] = 0;
	if (ok && tserver_ns_end(n->hw[i], n->hb[i], b) <= t * b &&
	    tserver_mark_pass(s, k, n->hw[i], n->hb[i], t, b)) {
		n->hw[i] = t;
		n->hb[i] = b;
		a->affected[5] = 1;
	}
	for (p = strstr(own, copy); p != NULL; p = strstr(p + 1, copy)) {
		if (!tserver_ns_copy(s, strstr(p, "SET high_water = "), ok) || 8 + copies >= DB_MAX_STMTS) {
			tserver_fail(a, 1064, "namespace copy not understood", p);
			return;
		}
		a->affected[6 + copies] = ok;
		copies++;
	}
	a->nstmts = 7 + copies;
	a->insert_id[4] = t;
	a->affected[4] = 1;
}

/* The namespace witness at connect: copy UPDATEs separated by ';'. */
static void
tserver_ns_witness(struct tserver *s, const char *sql, struct tserver_answer *a)
{
	static const char update[] = "UPDATE idgen_ns_marks ";
	unsigned n = 0;

	for (const char *p = sql; p != NULL; p = strstr(p + 1, update)) {
		if ((p != sql && p[-1] != ';') || n >= DB_MAX_STMTS ||
		    !tserver_ns_copy(s, strstr(p, "SET high_water = "), true)) {
			tserver_fail(a, 1064, "namespace witness not understood", sql);
			return;
		}
		a->affected[n++] = 1;
	}
	a->nstmts = n;
}

const char tserver_ro_msg[] = "The MariaDB server is running with the --read-only option so "
    "it cannot execute this statement";

/*
 * Whether a server with read_only = ON refuses sql: one of its statements
 * writes (REPLACE, INSERT, UPDATE, DELETE, ALTER), is an EXPLAIN of one, or
 * is a locking read (SELECT ... FOR UPDATE). The statements before it ran
 * (a START TRANSACTION: the lost connection rolls it back); reads, SET
 * SESSION, START TRANSACTION, COMMIT and ROLLBACK go on.
 */
bool
tserver_ro_refuses(const char *sql)
{
	static const char *const writes[] = { "REPLACE ", "INSERT ", "UPDATE ", "DELETE ",
	    "ALTER " };

	if (strstr(sql, " FOR UPDATE") != NULL)
		return true;
	for (const char *p = sql; p != NULL; p = strchr(p, ';')) {
		p += *p == ';';
		while (*p == ' ' || *p == '\n')
			p++;
		if (strncmp(p, "EXPLAIN ", 8) == 0)
			p += 8;
		for (size_t k = 0; k < sizeof(writes) / sizeof(writes[0]); k++)
			if (strncmp(p, writes[k], strlen(writes[k])) == 0)
				return true;
	}
	return false;
}

void
tserver_fresh(struct tserver *s, unsigned offset, unsigned m)
{
	s->m = m;
	s->cnf_m = m;
	s->offset = offset;
	s->st.counter = 1;
	s->st.last = 0;
	s->st.meta_row = false;
	s->st.meta_offset = 0;
	s->st.meta_m = 0;
	s->st.rows = 0;
	s->st.retired = 0;
}

/* Row k of r: field f as text (NULL for SQL NULL). */
static void
tserver_text(struct tserver_rows *r, unsigned k, unsigned f, const char *v)
{
	if (v == NULL)
		r->null[k][f] = true;
	else
		snprintf(r->cell[k][f], sizeof(r->cell[k][f]), "%s", v);
	if (f + 1 > r->nfields)
		r->nfields = f + 1;
	if (k + 1 > r->nrows)
		r->nrows = k + 1;
}

/* Row k of r: field f as a number. */
static void
tserver_cell(struct tserver_rows *r, unsigned k, unsigned f, uint64_t v)
{
	snprintf(r->cell[k][f], sizeof(r->cell[k][f]), "%" PRIu64, v);
	if (f + 1 > r->nfields)
		r->nfields = f + 1;
	if (k + 1 > r->nrows)
		r->nrows = k + 1;
}

/* The role named after "role = '" in sql; -1: none. */
static int
tserver_ctl_role(const char *sql)
{
	static const char key[] = "role = '";
	const char *p = strstr(sql, key);

	return p != NULL ? tserver_role(p + sizeof(key) - 1) : -1;
}

/* ctl/raise.c's raise_read: the meta row's generation columns, the counter, its own row. */
static bool
tserver_ctl_read(struct tserver *s, const char *sql, struct tserver_rows *r)
{
	static const char head[] = "SELECT tier_generation, tier_increment, tier_plan, "
	    "tier_floor, block_size, (SELECT AUTO_INCREMENT FROM information_schema.TABLES";
	int role = tserver_ctl_role(sql);

	if (strncmp(sql, head, sizeof(head) - 1) != 0 || role != (int)s->index)
		return false;
	r->result = true;
	tserver_cell(r, 0, 0, s->st.gen);
	tserver_cell(r, 0, 1, s->st.meta_m);
	tserver_cell(r, 0, 2, s->st.plan);
	tserver_cell(r, 0, 3, s->st.floor);
	tserver_cell(r, 0, 4, s->b);
	tserver_cell(r, 0, 5, s->st.counter);
	tserver_cell(r, 0, 6, s->st.own_gen);
	tserver_cell(r, 0, 7, s->st.sealed);
	tserver_cell(r, 0, 8, 0);
	return true;
}

/* Step 4's transaction: UPDATE idgen_marks SET high_water = f, block_size = b WHERE (..) < e. */
static bool
tserver_ctl_floor_marks(struct tserver *s, const char *sql)
{
	uint64_t f, b, b0, e;

	if (sscanf(sql, "UPDATE idgen_marks SET high_water = %" SCNu64 ", block_size = %" SCNu64
	    " WHERE (high_water + 1) * IF(block_size = 0, %" SCNu64 ", block_size) < %" SCNu64,
	    &f, &b, &b0, &e) != 4 || b0 != s->b)
		return false;
	for (unsigned k = 0; k < TSERVER_MAX; k++)
		if ((s->st.rows >> k & 1) && tserver_end(s, s->st.mark[k], s->st.mark_b[k]) < e &&
		    tserver_mark_pass(s, -1, s->st.mark[k], s->st.mark_b[k], f, b)) {
			s->st.mark[k] = f;
			s->st.mark_b[k] = b;
		}
	return true;
}

/* The UPDATEs of ctl/raise.c: plan, seal, the meta row and its own row opened; false: none. */
static bool
tserver_ctl_update(struct tserver *s, const char *sql)
{
	unsigned to, g, to2, m, g1;
	uint64_t floor;
	int role = tserver_ctl_role(sql);

	if (sscanf(sql, "UPDATE idgen_meta SET tier_plan = %u WHERE one = 1 AND tier_generation = "
	    "%u AND tier_plan IN (0, %u)", &to, &g, &to2) == 3) {
		if (s->st.gen == g && (s->st.plan == 0 || s->st.plan == to2))
			s->st.plan = to;
		return true;
	}
	if (sscanf(sql, "UPDATE idgen_marks SET sealed = 1 WHERE role = '%*[^']' AND generation = "
	    "%u", &g) == 1 && role >= 0) {
		/* Only the own row's generation and seal are modelled (the rows raise seals). */
		if (role == (int)s->index && s->st.own_gen == g)
			s->st.sealed = true;
		return true;
	}
	if (sscanf(sql, "UPDATE idgen_meta SET tier_increment = %u, tier_generation = %u, "
	    "tier_floor = %" SCNu64 ", tier_plan = 0 WHERE one = 1 AND tier_generation = %u",
	    &m, &g1, &floor, &g) == 4) {
		if (s->st.gen == g) {
			s->st.meta_m = m;
			s->st.gen = g1;
			s->st.floor = floor;
			s->st.plan = 0;
		}
		return true;
	}
	if (sscanf(sql, "UPDATE idgen_marks SET generation = %u, sealed = 0 WHERE role = "
	    "'%*[^']' AND generation = %u", &g1, &g) == 2 && role >= 0) {
		if (role == (int)s->index && s->st.own_gen == g) {
			s->st.own_gen = g1;
			s->st.sealed = false;
		}
		return true;
	}
	return tserver_ctl_floor_marks(s, sql);
}

/*
 * ctl/ns.c's ctl_ns_ready: the catalogue rows not dropped, by name; with
 * dropped (tier add-server's read of the new server's, 13.8) every row, its
 * first four columns.
 */
static void
tserver_ctl_catalogue(struct tserver *s, struct tserver_rows *r, bool dropped)
{
	static const char *const states[] = { "", "creating", "ready", "dropped" };

	r->result = true;
	r->nfields = dropped ? 4 : 5;
	for (unsigned k = 0; k < TSERVER_NS; k++) {
		const struct tserver_ns *n = &s->st.ns[k];
		unsigned i = r->nrows;

		if (n->state == TS_NS_NONE || (n->state == TS_NS_DROPPED && !dropped))
			continue;
		snprintf(r->cell[i][0], sizeof(r->cell[i][0]), "%s", tserver_ns_name(k));
		tserver_cell(r, i, 1, n->b);
		snprintf(r->cell[i][2], sizeof(r->cell[i][2]), "%s", n->refuse ? "refuse" :
		    "snowflake");
		snprintf(r->cell[i][3], sizeof(r->cell[i][3]), "%s", states[n->state]);
		if (dropped)
			r->nrows = i + 1;
		else
			tserver_cell(r, i, 4, n->start_above);
	}
}

/* ctl/read.c's reads as the service user: the check query, marks, leases, triggers, the time. */
static bool
tserver_ctl_status(struct tserver *s, const char *sql, struct tserver_rows *r)
{
	char name[16], uuid[24];

	snprintf(uuid, sizeof(uuid), "sim-uuid-%u", s->index);
	if (strncmp(sql, "SELECT @@version, @@GLOBAL.auto_increment_increment, ", 53) == 0) {
		r->result = true;
		r->nfields = 17;
		if (!s->st.meta_row)
			return true;
		tserver_text(r, 0, 0, "10.11.6-MariaDB-sim");
		tserver_cell(r, 0, 1, s->m);
		tserver_cell(r, 0, 2, s->offset);
		tserver_cell(r, 0, 3, 1);
		tserver_text(r, 0, 4, "InnoDB");
		tserver_cell(r, 0, 5, LAYOUT_VERSION);
		tserver_cell(r, 0, 6, s->b);
		tserver_text(r, 0, 7, s->offset % 2 ? "odd" : "even");
		tserver_text(r, 0, 8, uuid);
		tserver_cell(r, 0, 9, s->st.counter);
		tserver_cell(r, 0, 10, s->st.meta_m);
		tserver_cell(r, 0, 11, s->st.meta_offset);
		tserver_cell(r, 0, 12, s->region);
		tserver_cell(r, 0, 13, s->region_bits);
		tserver_cell(r, 0, 14, s->st.gen);
		tserver_cell(r, 0, 15, s->st.floor);
		tserver_cell(r, 0, 16, s->st.plan);
		return true;
	}
	if (strcmp(sql, "SELECT role, high_water, block_size, generation, sealed, retired FROM "
	    "idgen_marks") == 0) {
		r->result = true;
		r->nfields = 6;
		for (unsigned k = 0; k < TSERVER_MAX; k++) {
			unsigned i = r->nrows;
			bool own = k == s->index;

			if (!(s->st.rows >> k & 1))
				continue;
			tserver_text(r, i, 0, tserver_role_name(k, name, sizeof(name)));
			tserver_cell(r, i, 1, s->st.mark[k]);
			tserver_cell(r, i, 2, s->st.mark_b[k]);
			tserver_cell(r, i, 3, own ? s->st.own_gen : 0);	/* only its own modelled */
			tserver_cell(r, i, 4, own && s->st.sealed);
			tserver_cell(r, i, 5, s->st.retired >> k & 1);
		}
		return true;
	}
	if (strcmp(sql, "SELECT worker, holder, window_start, window_end FROM idgen_leases ORDER BY "
	    "worker") == 0) {
		r->result = true;
		r->nfields = 4;
		for (unsigned k = 0; s->index < SERVER_PAIR && k < TSERVER_WORKERS; k++) {
			const struct tserver_lease *l = &s->st.lease[k];

			tserver_cell(r, k, 0, l->worker);
			tserver_text(r, k, 1, l->holder);
			tserver_cell(r, k, 2, l->window_start);
			tserver_cell(r, k, 3, l->window_end);
		}
		return true;
	}
	if (strcmp(sql, "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE "
	    "TRIGGER_SCHEMA = DATABASE()") == 0) {
		/* The guards the model has: all six, less those whose rule is off. */
		static const char *const marks[] = { "idgen_marks_no_lower", "idgen_marks_no_delete",
		    "idgen_ns_marks_no_lower", "idgen_ns_marks_no_delete" };
		static const char *const leases[] = { "idgen_leases_no_free",
		    "idgen_leases_no_delete" };

		r->result = true;
		r->nfields = 1;
		for (unsigned k = 0; RULE_ON(RULE_MARK_GUARD) && k < 4; k++)
			tserver_text(r, r->nrows, 0, marks[k]);
		for (unsigned k = 0; RULE_ON(RULE_LEASE_GUARD) && k < 2; k++)
			tserver_text(r, r->nrows, 0, leases[k]);
		return true;
	}
	if (strcmp(sql, "SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)") == 0) {
		r->result = true;
		tserver_cell(r, 0, 0, s->now_ms != NULL ? s->now_ms() : 0);
		return true;
	}
	return false;
}

/* INSERT IGNORE INTO idgen_marks (role) VALUES ('a'), ('b')...: each row made if missing. */
static bool
tserver_ctl_rows(struct tserver *s, const char *sql)
{
	static const char head[] = "INSERT IGNORE INTO idgen_marks (role) VALUES ";
	const char *p;
	int role;

	if (strncmp(sql, head, sizeof(head) - 1) != 0)
		return false;
	for (p = sql + sizeof(head) - 1; (p = strstr(p, "('")) != NULL; p += 2) {
		if ((role = tserver_role(p + 2)) < 0)
			return false;
		if (!(s->st.rows >> role & 1)) {
			s->st.rows |= 1u << role;
			s->st.mark[role] = 0;
			s->st.mark_b[role] = 0;
		}
	}
	return true;
}

/* "INSERT INTO idgen_marks (role, retired) VALUES ('" then the role and the rest. */
#define TSERVER_RETIRE_HEAD	"INSERT INTO idgen_marks (role, retired) VALUES ('"
#define TSERVER_RETIRE(sql)	(strncmp((sql), TSERVER_RETIRE_HEAD, sizeof(TSERVER_RETIRE_HEAD) - 1) \
				    == 0 && strstr((sql), "', 1) ON DUPLICATE KEY UPDATE retired = 1") != NULL)

/* ctl/add.c's statements: its checks of the tier and of the new server, its writes. */
static bool
tserver_ctl_add(struct tserver *s, const char *sql, struct tserver_rows *r)
{
	static const char check_new[] = "SELECT @@GLOBAL.auto_increment_increment, "
	    "@@GLOBAL.auto_increment_offset, @@GLOBAL.innodb_flush_log_at_trx_commit, ";
	char uuid[24], parity[8];
	unsigned u[4], rows = 0;
	uint64_t v[4];
	int role = tserver_ctl_role(sql), layout;

	snprintf(uuid, sizeof(uuid), "sim-uuid-%u", s->index);
	if (strncmp(sql, "SELECT COALESCE(MAX(high_water), 0), COUNT(*), COALESCE(MAX(retired), "
	    "0) FROM idgen_marks WHERE role = '", 88) == 0) {
		bool has = role >= 0 && (s->st.rows >> role & 1);

		r->result = true;
		tserver_cell(r, 0, 0, has ? s->st.mark[role] : 0);
		tserver_cell(r, 0, 1, has);
		tserver_cell(r, 0, 2, role >= 0 && (s->st.retired >> role & 1));
		return true;
	}
	if (strncmp(sql, check_new, sizeof(check_new) - 1) == 0) {
		r->result = true;
		tserver_cell(r, 0, 0, s->m);
		tserver_cell(r, 0, 1, s->offset);
		tserver_cell(r, 0, 2, 1);
		tserver_text(r, 0, 3, "varchar");
		tserver_cell(r, 0, 4, s->index < SERVER_PAIR ? TSERVER_WORKERS : 0);
		tserver_cell(r, 0, 5, s->st.last != 0);
		tserver_text(r, 0, 6, s->st.meta_row ? uuid : NULL);
		if (s->st.meta_row)
			tserver_cell(r, 0, 7, s->st.meta_offset);
		else
			tserver_text(r, 0, 7, NULL);
		for (unsigned k = 0; k < TSERVER_NS; k++)
			rows += s->st.ns[k].state != TS_NS_NONE;
		tserver_cell(r, 0, 8, rows);
		return true;
	}
	if (sscanf(sql, "INSERT IGNORE INTO idgen_meta (one, layout_version, block_size, parity) "
	    "VALUES (1, %d, %" SCNu64 ", '%7[a-z]')", &layout, &v[0], parity) == 3) {
		if (!s->st.meta_row) {
			s->st.meta_row = true;
			s->st.meta_offset = 0;
			s->st.meta_m = 2;	/* the schema's default */
			s->st.gen = 0;
			s->st.floor = 0;
			s->st.plan = 0;
		}
		return true;
	}
	if (strcmp(sql, "UPDATE idgen_meta SET server_uuid = UUID() WHERE server_uuid = ''") == 0)
		return true;
	if (tserver_ctl_rows(s, sql))
		return true;
	if (sscanf(sql, "UPDATE idgen_marks SET high_water = %" SCNu64 ", block_size = %" SCNu64
	    " WHERE role = '%*[^']' AND (high_water + 1) * IF(block_size = 0, %" SCNu64
	    ", block_size) < %" SCNu64, &v[0], &v[1], &v[2], &v[3]) == 4 && role >= 0) {
		if ((s->st.rows >> role & 1) && tserver_end(s, s->st.mark[role], s->st.mark_b[role]) <
		    v[3] && tserver_mark_pass(s, -1, s->st.mark[role], s->st.mark_b[role], v[0],
		    v[1])) {
			s->st.mark[role] = v[0];
			s->st.mark_b[role] = v[1];
		}
		return true;
	}
	if (sscanf(sql, "UPDATE idgen_marks SET generation = %" SCNu64 " WHERE role = '", &v[0]) ==
	    1 && role >= 0) {
		if (role == (int)s->index && (s->st.rows >> role & 1))
			s->st.own_gen = (unsigned)v[0];
		return true;
	}
	if (sscanf(sql, "UPDATE idgen_meta SET layout_version = %d, block_size = %" SCNu64 ", "
	    "parity = '%7[a-z]', tier_increment = %u, server_offset = %u, region = %u, "
	    "region_bits = %u, tier_generation = %" SCNu64 ", tier_floor = %" SCNu64 " WHERE one = 1 "
	    "AND NOT EXISTS (SELECT 1 FROM tickets64)", &layout, &v[0], parity, &u[0], &u[1], &u[2],
	    &u[3], &v[1], &v[2]) == 9) {
		if (s->st.meta_row && s->st.last == 0) {
			s->st.meta_m = u[0];
			s->st.meta_offset = u[1];
			s->region = u[2];
			s->region_bits = u[3];
			s->st.gen = (unsigned)v[1];
			s->st.floor = v[2];
		}
		return true;
	}
	/* tier retire-server (12.5): the row made if missing, flagged retired; marks stay. */
	if (TSERVER_RETIRE(sql) && role < 0 && tserver_role(sql + 49) >= 0) {
		role = tserver_role(sql + 49);
		if (!(s->st.rows >> role & 1)) {
			s->st.rows |= 1u << role;
			s->st.mark[role] = 0;
			s->st.mark_b[role] = 0;
		}
		s->st.retired |= 1u << role;
		return true;
	}
	return false;
}

/* Whether sql begins with the literal lit. */
#define TSERVER_PRE(sql, lit)	(strncmp((sql), (lit), sizeof(lit) - 1) == 0)

/* The namespace a statement of ctl/ns.c's names ('nK' or tickets_nK); -1: none. */
static int
tserver_ctl_nsk(const char *sql)
{
	const char *p;
	char pat[32];

	for (unsigned k = 0; k < TSERVER_NS; k++) {
		snprintf(pat, sizeof(pat), "'%s'", tserver_ns_name(k));
		if (strstr(sql, pat) != NULL)
			return (int)k;
		snprintf(pat, sizeof(pat), "tickets_%s", tserver_ns_name(k));
		if ((p = strstr(sql, pat)) != NULL && (p[strlen(pat)] == ' ' ||
		    p[strlen(pat)] == '\0'))
			return (int)k;
		snprintf(pat, sizeof(pat), "'tickets_%s'", tserver_ns_name(k));
		if (strstr(sql, pat) != NULL)
			return (int)k;
	}
	return -1;
}

/*
 * ctl/ns.c's statements of create and drop (docs/design.md 13.3): the
 * catalogue row, the table (its counter, 0 none), the marks rows of every
 * configured server (each exists once the name does; hb 0 reads as the B
 * the statement names, as IF(block_size = 0, ..) does).
 */
static bool
tserver_ctl_ns(struct tserver *s, const char *sql, struct tserver_rows *r)
{
	static const char *const states[] = { "", "creating", "ready", "dropped" };
	int k = tserver_ctl_nsk(sql), len = 0;
	struct tserver_ns *n;
	char f[16], name[8];
	uint64_t v[4];
	unsigned roles = TSERVER_MAX;	/* every role s holds rows of: tserver_ns_row */

	if (strcmp(sql, "SELECT CURRENT_USER()") == 0) {
		r->result = true;
		tserver_text(r, 0, 0, "idgen@%");
		return true;
	}
	if (k < 0)
		return false;
	n = &s->st.ns[k];
	if (sscanf(sql, "SELECT block_size, fallback, state FROM idgen_namespaces WHERE name = "
	    "'%7[a-z0-9_]'%n", name, &len) == 1 && sql[len] == '\0') {
		r->result = true;
		r->nfields = 3;
		if (n->state != TS_NS_NONE) {
			tserver_cell(r, 0, 0, n->b);
			tserver_text(r, 0, 1, n->refuse ? "refuse" : "snowflake");
			tserver_text(r, 0, 2, states[n->state]);
		}
		return true;
	}
	if (TSERVER_PRE(sql, "SELECT MAX(start_above) FROM idgen_namespaces WHERE name = '")) {
		r->result = true;
		if (n->state == TS_NS_CREATING)
			tserver_cell(r, 0, 0, n->start_above);
		else
			tserver_text(r, 0, 0, NULL);
		return true;
	}
	if (sscanf(sql, "INSERT IGNORE INTO idgen_namespaces (name, block_size, fallback, state, "
	    "start_above) VALUES ('%7[a-z0-9_]', %" SCNu64 ", '%15[a-z]', 'creating', %" SCNu64 ")",
	    name, &v[0], f, &v[1]) == 4) {
		if (n->state == TS_NS_NONE) {
			memset(n, 0, sizeof(*n));
			n->state = TS_NS_CREATING;
			n->b = v[0];
			n->refuse = strcmp(f, "refuse") == 0;
			n->start_above = v[1];
		}
		return true;
	}
	if (sscanf(sql, "UPDATE idgen_namespaces SET start_above = GREATEST(start_above, %" SCNu64
	    ") WHERE name = '%7[a-z0-9_]%n", &v[0], name, &len) == 2) {
		bool any = strcmp(sql + len, "'") == 0;	/* ns raise, add-server */

		if (!any && strcmp(sql + len, "' AND state <> 'ready'") != 0)
			return false;
		if (n->state != TS_NS_NONE && (any || n->state != TS_NS_READY) &&
		    v[0] > n->start_above)
			n->start_above = v[0];
		return true;
	}
	/* ns raise: the end of every mark of N here and of its counter, in ID space. */
	if (sscanf(sql, "SELECT GREATEST(COALESCE(MAX((high_water + 1) * IF(block_size = 0, %"
	    SCNu64 ", block_size)), 0), (SELECT AUTO_INCREMENT FROM information_schema.TABLES "
	    "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tickets_%7[a-z0-9_]') * %" SCNu64
	    ") FROM idgen_ns_marks WHERE ns = '%7[a-z0-9_]%n", &v[0], name, &v[1], f, &len) == 4 &&
	    strcmp(sql + len, "'") == 0 && v[0] == v[1]) {
		uint64_t end = tserver_ns_end_max(s, n, roles, v[0]);

		r->result = true;
		tserver_cell(r, 0, 0, end > n->counter * v[0] ? end : n->counter * v[0]);
		return true;
	}
	/*
	 * ctl_ns_end (tier raise-increment's floor, 13.8: the counter's table
	 * read, none counted 0) and tier add-server's (0: the marks alone).
	 */
	if (sscanf(sql, "SELECT GREATEST(COALESCE(MAX((high_water + 1) * IF(block_size = 0, %"
	    SCNu64 ", block_size)), 0), COALESCE((SELECT AUTO_INCREMENT FROM information_schema."
	    "TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tickets_%7[a-z0-9_]'), 0) * %"
	    SCNu64 ") FROM idgen_ns_marks WHERE ns = '%7[a-z0-9_]%n", &v[0], name, &v[1], f,
	    &len) == 4 && strcmp(sql + len, "'") == 0 && v[0] == v[1]) {
		uint64_t end = n->state == TS_NS_NONE ? 0 : tserver_ns_end_max(s, n, roles, v[0]);

		r->result = true;
		tserver_cell(r, 0, 0, end > n->counter * v[0] ? end : n->counter * v[0]);
		return true;
	}
	if (sscanf(sql, "SELECT GREATEST(COALESCE(MAX((high_water + 1) * IF(block_size = 0, %"
	    SCNu64 ", block_size)), 0), 0 * %" SCNu64 ") FROM idgen_ns_marks WHERE ns = "
	    "'%7[a-z0-9_]%n", &v[0], &v[1], f, &len) == 3 && strcmp(sql + len, "'") == 0 &&
	    v[0] == v[1]) {
		r->result = true;
		tserver_cell(r, 0, 0, n->state == TS_NS_NONE ? 0 :
		    tserver_ns_end_max(s, n, roles, v[0]));
		return true;
	}
	if (sscanf(sql, "UPDATE idgen_namespaces SET state = 'creating', block_size = %" SCNu64
	    ", fallback = '%15[a-z]' WHERE name = '%7[a-z0-9_]' AND state = 'dropped'", &v[0], f,
	    name) == 3) {
		if (n->state == TS_NS_DROPPED) {
			n->state = TS_NS_CREATING;
			n->b = v[0];
			n->refuse = strcmp(f, "refuse") == 0;
		}
		return true;
	}
	if (TSERVER_PRE(sql, "CREATE TABLE IF NOT EXISTS tickets_")) {
		if (n->counter == 0)
			n->counter = 1;
		return true;
	}
	if (TSERVER_PRE(sql, "DELETE FROM tickets_")) {
		n->last = 0;
		n->emptied = true;
		return true;
	}
	if (TSERVER_PRE(sql, "GRANT SELECT, INSERT, DELETE ON tickets_") ||
	    TSERVER_PRE(sql, "INSERT IGNORE INTO idgen_ns_marks (ns, role) VALUES ('"))
		return true;	/* rights granted; every row exists */
	if (sscanf(sql, "SELECT MAX((high_water + 1) * IF(block_size = 0, %" SCNu64 ", block_size)) "
	    "FROM idgen_ns_marks WHERE ns = '%7[a-z0-9_]'", &v[0], name) == 2) {
		uint64_t end = tserver_ns_end_max(s, n, roles, v[0]);

		r->result = true;
		if (n->state == TS_NS_NONE)
			tserver_text(r, 0, 0, NULL);
		else
			tserver_cell(r, 0, 0, end);
		return true;
	}
	if (sscanf(sql, "UPDATE idgen_ns_marks SET high_water = %" SCNu64 ", block_size = %" SCNu64
	    " WHERE ns = '%7[a-z0-9_]' AND (high_water + 1) * IF(block_size = 0, %" SCNu64
	    ", block_size) < %" SCNu64, &v[0], &v[1], name, &v[2], &v[3]) == 5) {
		for (unsigned j = 0; j < roles; j++)
			if (tserver_ns_row(s, j) && (n->hw[j] + 1) * (n->hb[j] != 0 ? n->hb[j] : v[2]) < v[3] &&
			    tserver_mark_pass(s, (int)(n - s->st.ns), n->hw[j], n->hb[j], v[0],
			    v[1])) {
				n->hw[j] = v[0];
				n->hb[j] = v[1];
			}
		return true;
	}
	/* tier retire-server's carry: one row of N raised, in ID space (12.5). */
	if (sscanf(sql, "UPDATE idgen_ns_marks SET high_water = %" SCNu64 ", block_size = %" SCNu64
	    " WHERE ns = '%7[a-z0-9_]' AND role = '%*[^']' AND (high_water + 1) * IF(block_size = "
	    "0, %" SCNu64 ", block_size) < %" SCNu64, &v[0], &v[1], name, &v[2], &v[3]) == 5) {
		int j = tserver_ctl_role(sql);

		if (j < 0)
			return false;
		if ((n->hw[j] + 1) * (n->hb[j] != 0 ? n->hb[j] : v[2]) < v[3]) {
			n->hw[j] = v[0];
			n->hb[j] = v[1];
		}
		return true;
	}
	if (TSERVER_PRE(sql, "SELECT @@auto_increment_increment, @@auto_increment_offset, (SELECT "
	    "AUTO_INCREMENT FROM information_schema.TABLES")) {
		r->result = true;
		tserver_cell(r, 0, 0, s->m);
		tserver_cell(r, 0, 1, s->offset);
		if (n->counter != 0)
			tserver_cell(r, 0, 2, n->counter);
		else
			tserver_text(r, 0, 2, NULL);
		return true;
	}
	if (sscanf(sql, "ALTER TABLE tickets_%7[a-z0-9_] AUTO_INCREMENT = %" SCNu64, name, &v[0]) ==
	    2) {
		if (n->counter == 0)
			return false;
		/*
		 * The table emptied first (create): exactly it. Else (ns raise)
		 * InnoDB's rule: never at or below its row, the last ticket drawn.
		 */
		n->counter = n->emptied || n->last == 0 || v[0] > n->last ? v[0] : n->last + s->m;
		n->emptied = false;
		s->ns_ctl_set[k] = v[0];
		return true;
	}
	if (TSERVER_PRE(sql, "UPDATE idgen_namespaces SET state = 'ready' WHERE name = '")) {
		if (n->state == TS_NS_CREATING)
			n->state = TS_NS_READY;
		return true;
	}
	if (TSERVER_PRE(sql, "UPDATE idgen_namespaces SET state = 'creating' WHERE name = '")) {
		if (n->state == TS_NS_READY)
			n->state = TS_NS_CREATING;	/* a drop's first step */
		return true;
	}
	if (TSERVER_PRE(sql, "UPDATE idgen_namespaces SET state = 'dropped' WHERE name = '")) {
		if (n->state != TS_NS_NONE)
			n->state = TS_NS_DROPPED;
		return true;
	}
	return false;
}

void
tserver_ctl(struct tserver *s, uint64_t conn, const char *sql, struct tserver_rows *r)
{
	char name[16];
	uint64_t v;
	unsigned m;
	int role;

	memset(r, 0, sizeof(*r));
	if (!s->up) {
		r->err = 2013;
		snprintf(r->why, sizeof(r->why), "Lost connection to server during query");
		return;
	}
	if (strcmp(sql, "START TRANSACTION") == 0) {
		s->ctl_tx = conn;
		s->ctl_before = s->st;
	} else if (strcmp(sql, "COMMIT") == 0) {
		if (s->ctl_tx == conn)
			s->ctl_tx = 0;
	} else if (sscanf(sql, "SET GLOBAL auto_increment_increment = %u", &m) == 1 && m > 0) {
		s->m = m;	/* sessions open keep theirs */
	} else if (sscanf(sql, "ALTER TABLE tickets64 AUTO_INCREMENT = %" SCNu64, &v) == 1) {
		/* InnoDB: never at or below the row's value; lowered when asked (design 12.4). */
		s->st.counter = v > s->st.last + 1 ? v : s->st.last + 1;
	} else if (strcmp(sql, "SELECT role FROM idgen_marks WHERE retired = 0") == 0) {
		r->result = true;
		r->nfields = 1;
		for (unsigned k = 0; k < TSERVER_MAX; k++)
			if ((s->st.rows >> k & 1) && !(s->st.retired >> k & 1))
				snprintf(r->cell[r->nrows++][0], sizeof(r->cell[0][0]), "%s",
				    tserver_role_name(k, name, sizeof(name)));
	} else if (strcmp(sql, "SELECT '', role, high_water, block_size FROM idgen_marks") == 0) {
		/* tier retire-server reads the retired server's rows to carry them (12.5). */
		r->result = true;
		r->nfields = 4;
		for (unsigned k = 0; k < TSERVER_MAX; k++)
			if (s->st.rows >> k & 1) {
				tserver_text(r, r->nrows, 0, "");
				tserver_text(r, r->nrows - 1, 1, tserver_role_name(k, name,
				    sizeof(name)));
				tserver_cell(r, r->nrows - 1, 2, s->st.mark[k]);
				tserver_cell(r, r->nrows - 1, 3, s->st.mark_b[k]);
			}
	} else if (strcmp(sql, "SELECT ns, role, high_water, block_size FROM idgen_ns_marks") == 0) {
		r->result = true;
		r->nfields = 4;
		for (unsigned k = 0; k < TSERVER_NS; k++)
			for (unsigned j = 0; s->st.ns[k].state != TS_NS_NONE && j < TSERVER_MAX;
			    j++) {
				if (!tserver_ns_row(s, j))
					continue;
				tserver_text(r, r->nrows, 0, tserver_ns_name(k));
				tserver_text(r, r->nrows - 1, 1, tserver_role_name(j, name,
				    sizeof(name)));
				tserver_cell(r, r->nrows - 1, 2, s->st.ns[k].hw[j]);
				tserver_cell(r, r->nrows - 1, 3, s->st.ns[k].hb[j]);
			}
	} else if (strcmp(sql, "SELECT high_water, block_size FROM idgen_marks") == 0) {
		for (unsigned k = 0; k < TSERVER_MAX; k++)
			if (s->st.rows >> k & 1) {
				tserver_cell(r, r->nrows, 1, s->st.mark_b[k]);
				tserver_cell(r, r->nrows - 1, 0, s->st.mark[k]);
			}
		r->result = true;
	} else if (strncmp(sql, "SELECT high_water FROM idgen_marks WHERE role = '", 49) == 0 &&
	    (role = tserver_ctl_role(sql)) >= 0) {
		r->result = true;
		tserver_cell(r, 0, 0, s->st.mark[role]);
	} else if (strcmp(sql, "SELECT name, block_size, fallback, state, start_above FROM "
	    "idgen_namespaces WHERE state <> 'dropped' ORDER BY name") == 0) {
		tserver_ctl_catalogue(s, r, false);
	} else if (strcmp(sql, "SELECT name, block_size, fallback, state FROM idgen_namespaces "
	    "ORDER BY name") == 0) {
		tserver_ctl_catalogue(s, r, true);
	} else if (strncmp(sql, "EXPLAIN ", 8) == 0) {
		;	/* every right granted */
	} else if (!tserver_ctl_read(s, sql, r) && !tserver_ctl_update(s, sql) &&
	    !tserver_ctl_status(s, sql, r) && !tserver_ctl_add(s, sql, r) &&
	    !tserver_ctl_ns(s, sql, r)) {
		r->err = 1064;
		snprintf(r->why, sizeof(r->why), "not modelled: %.120s", sql);
	}
}

/* The triggers' refusals of the writers' statements (tserver.h). */
bool lease_guard_count;
uint64_t lease_guard_refused;
bool mark_guard_count;
uint64_t mark_guard_refused;

/*
 * schema/40-leases.sql's two triggers, condition by condition in their
 * order: while OLD.window_end is not an hour before the server's now in
 * layout ms (CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - epoch - 3600000,
 * signed: negative is below every window_end), no renumbering, no window_end
 * moved back unless @idgen_release names the holder and the holder stays, no
 * holder emptied, no new window_start at or before the old window_end; no
 * DELETE.
 */
const char *
tserver_lease_trigger(const struct tserver_lease *old, const struct tserver_lease *to,
    uint64_t now_ms, const char *release)
{
	int64_t open_from = (int64_t)now_ms - LAYOUT_EPOCH_UNIX_MS - LEASE_OPEN_MS;

	if ((int64_t)old->window_end < open_from)
		return NULL;
	if (to == NULL)
		return "idgen: a lease row is deleted only an hour after its window ended "
		    "(docs/design.md 6.5)";
	if (to->worker != old->worker)
		return "idgen: a lease row is renumbered only an hour after its window ended "
		    "(docs/design.md 6.5)";
	if (to->window_end < old->window_end && !(release != NULL &&
	    strcmp(release, old->holder) == 0 && strcmp(to->holder, old->holder) == 0))
		return "idgen: a lease window that may be open never moves back; only its holder "
		    "releases it (docs/design.md 6.5)";
	if (to->holder[0] == '\0' && old->holder[0] != '\0')
		return "idgen: a held worker is never freed by hand: holder emptied while its "
		    "window may be open (docs/design.md 6.5)";
	if (to->window_start != old->window_start && to->window_start <= old->window_end)
		return "idgen: a new lease window starts after the old one ends (docs/design.md 6.5)";
	return NULL;
}


/*
 * schema/10-tables.sql's four triggers on the marks, condition by condition
 * in their order: a DELETE of a row above 0; an UPDATE that renames a row
 * above 0, or lowers (high_water + 1) * IF(block_size = 0, b, block_size),
 * computed wide as the triggers' DECIMAL(40, 0) does.
 */
const char *
tserver_mark_trigger(uint64_t oh, uint64_t ob, uint64_t nh, uint64_t nb, uint64_t b,
    bool renamed, bool del)
{
	unsigned __int128 o, n;

	if (del)
		return oh > 0 ? "idgen: a mark row is never deleted (it would lower the mark; "
		    "docs/design.md 6.5)" : NULL;
	if (renamed && oh > 0)
		return "idgen: a mark row is never renamed (it would lower the mark; "
		    "docs/design.md 6.5)";
	o = ((unsigned __int128)oh + 1) * (ob == 0 ? b : ob);
	n = ((unsigned __int128)nh + 1) * (nb == 0 ? b : nb);
	if (n < o)
		return "idgen: a mark is never lowered ((high_water + 1) * block_size only rises; "
		    "docs/design.md 6.5)";
	return NULL;
}
