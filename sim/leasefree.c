/*
 * leasefree.c - the operator's hand edits of a held lease row and of marks
 * rows (leasefree.h); the triggers that refuse them are the servers' own
 * (tserver.c).
 */
#include "leasefree.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"
#include "rules.h"
#include "server.h"

#define LEASE_SPARE	1000	/* the renumbering's spare number (1001 on an odd server) */
#define LEASE_OP_CONN	UINT64_MAX	/* the operator's session: never in a transaction */

static int	lease_row(const struct tserver *s, unsigned w);
static void	lease_fail(struct tserver_answer *a, unsigned err, const char *why);
static uint64_t	lease_draw(struct lease_freed *lf, uint64_t n);
static unsigned	lease_send(struct tserver *s, const char *sql, char *why, size_t len);

const char *const lease_edit_names[LE_COUNT] = { "delete", "expire", "free", "renumber" };

/* The slot of worker w's row; -1: none. */
static int
lease_row(const struct tserver *s, unsigned w)
{
	for (unsigned k = 0; k < TSERVER_WORKERS; k++)
		if (s->st.lease[k].worker == w)
			return (int)k;
	return -1;
}

static void
lease_fail(struct tserver_answer *a, unsigned err, const char *why)
{
	a->err = err;
	snprintf(a->why, sizeof(a->why), "%s", why);
}

void
tserver_lease_edit(struct tserver *s, const char *sql, struct tserver_answer *a)
{
	struct tserver_lease to;
	uint64_t back;
	unsigned w, w2;
	const char *why;
	int k, k2;

	memset(a, 0, sizeof(*a));
	a->nstmts = 1;
	if (!s->up) {
		lease_fail(a, 2003, "server down");
		return;
	}
	if (sscanf(sql, "INSERT INTO idgen_leases (worker) VALUES (%u)", &w) == 1) {
		if (lease_row(s, w) >= 0) {
			lease_fail(a, 1062, "Duplicate entry for key 'PRIMARY'");
			return;
		}
		if ((k = lease_row(s, LEASE_NO_ROW)) < 0) {
			lease_fail(a, 1064, "no room for the row in the model");
			return;
		}
		memset(&s->st.lease[k], 0, sizeof(s->st.lease[k]));
		s->st.lease[k].worker = w;
		a->affected[0] = 1;
		return;
	}
	if (sscanf(sql, "DELETE FROM idgen_leases WHERE worker = %u", &w) == 1) {
		if ((k = lease_row(s, w)) < 0)
			return;
		if (s->locked[k] != 0) {
			lease_fail(a, 1205, "Lock wait timeout exceeded");
			return;
		}
		if (RULE_ON(RULE_LEASE_GUARD) &&
		    (why = tserver_lease_trigger(&s->st.lease[k], NULL, s->now_ms(), NULL)) != NULL) {
			lease_fail(a, 1644, why);
			return;
		}
		s->st.lease[k].worker = LEASE_NO_ROW;
		a->affected[0] = 1;
		return;
	}
	k = -1;
	if (sscanf(sql, "UPDATE idgen_leases SET window_end = CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 "
	    "AS SIGNED) - 1767225600000 - %" SCNu64 " WHERE worker = %u", &back, &w) == 2) {
		int64_t end = (int64_t)s->now_ms() - LAYOUT_EPOCH_UNIX_MS - (int64_t)back;

		if ((k = lease_row(s, w)) >= 0) {
			to = s->st.lease[k];
			to.window_end = end > 0 ? (uint64_t)end : 0;
		}
	} else if (sscanf(sql, "UPDATE idgen_leases SET holder = '', window_end = 0 WHERE "
	    "worker = %u", &w) == 1) {
		if ((k = lease_row(s, w)) >= 0) {
			to = s->st.lease[k];
			to.holder[0] = '\0';
			to.window_end = 0;
		}
	} else if (sscanf(sql, "UPDATE idgen_leases SET worker = %u WHERE worker = %u", &w2,
	    &w) == 2) {
		if ((k = lease_row(s, w)) >= 0) {
			if ((k2 = lease_row(s, w2)) >= 0 && k2 != k) {
				lease_fail(a, 1062, "Duplicate entry for key 'PRIMARY'");
				return;
			}
			to = s->st.lease[k];
			to.worker = w2;
		}
	} else {
		lease_fail(a, 1064, "not one of the operator's edits");
		return;
	}
	if (k < 0)
		return;		/* no such row: 0 rows */
	if (s->locked[k] != 0) {
		lease_fail(a, 1205, "Lock wait timeout exceeded");
		return;
	}
	if (RULE_ON(RULE_LEASE_GUARD) &&
	    (why = tserver_lease_trigger(&s->st.lease[k], &to, s->now_ms(), NULL)) != NULL) {
		lease_fail(a, 1644, why);
		return;
	}
	s->st.lease[k] = to;
	a->affected[0] = 1;
}

/* One draw below n from the fault's generator; the schedule's own generator kept. */
static uint64_t
lease_draw(struct lease_freed *lf, uint64_t n)
{
	return rng_draw_from(&lf->rng, n);
}

void
lease_freed_schedule(struct lease_freed *lf, uint64_t seed)
{
	bool half;

	/* "lease-fr" */
	rng_seed_state(&lf->rng, rng_mix(seed) ^ UINT64_C(0x6c656173652d6672));
	half = lease_draw(lf, 2) == 0;
	lf->on = lf->mode == LF_ALL || (lf->mode == LF_HALF && half);
}

bool
lease_freed_draw(struct lease_freed *lf, unsigned nsrv, enum lease_edit *kind, unsigned *srv,
    uint64_t *pick)
{
	if (!lf->on || lease_draw(lf, 1000) >= LEASE_EDIT_PM)
		return false;
	*kind = (enum lease_edit)lease_draw(lf, LE_COUNT);
	*srv = (unsigned)lease_draw(lf, nsrv);
	*pick = lease_draw(lf, UINT64_MAX);
	return true;
}

/* One statement of the operator's on s: its error (its message in why), 0 when it ran. */
static unsigned
lease_send(struct tserver *s, const char *sql, char *why, size_t len)
{
	struct tserver_answer a;

	tserver_lease_edit(s, sql, &a);
	if (a.err != 0)
		snprintf(why, len, "%u %s", a.err, a.why);
	return a.err;
}

int
lease_freed_apply(struct tserver *s, enum lease_edit kind, uint64_t pick, char *line, size_t len)
{
	struct tserver_lease before[TSERVER_WORKERS];
	char sql[3][200], why[200] = "";
	unsigned held[TSERVER_WORKERS], nheld = 0, w, other = 0, n = 1, i, err = 0;

	int64_t now = (int64_t)s->now_ms() - LAYOUT_EPOCH_UNIX_MS;

	/* A number held now: a holder named, its window not ended by the server's clock. */
	for (unsigned k = 0; k < TSERVER_WORKERS; k++)
		if (s->st.lease[k].worker != LEASE_NO_ROW && s->st.lease[k].holder[0] != '\0' &&
		    (int64_t)s->st.lease[k].window_end >= now)
			held[nheld++] = k;
	if (nheld == 0)
		return -1;
	i = held[pick % nheld];
	w = s->st.lease[i].worker;
	for (unsigned k = 0; k < TSERVER_WORKERS; k++)
		if (k != i && s->st.lease[k].worker != LEASE_NO_ROW)
			other = s->st.lease[k].worker;
	switch (kind) {
	case LE_DELETE:
		snprintf(sql[0], sizeof(sql[0]), "DELETE FROM idgen_leases WHERE worker = %u", w);
		snprintf(sql[1], sizeof(sql[1]), "INSERT INTO idgen_leases (worker) VALUES (%u)", w);
		n = 2;
		break;
	case LE_EXPIRE:
		snprintf(sql[0], sizeof(sql[0]), "UPDATE idgen_leases SET window_end = "
		    "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - 1767225600000 - 1 WHERE "
		    "worker = %u", w);
		break;
	case LE_FREE:
		snprintf(sql[0], sizeof(sql[0]), "UPDATE idgen_leases SET holder = '', "
		    "window_end = 0 WHERE worker = %u", w);
		break;
	default: {
		unsigned spare = LEASE_SPARE + (server_owns_worker(s->index, LEASE_SPARE) ? 0 : 1);

		snprintf(sql[0], sizeof(sql[0]), "UPDATE idgen_leases SET worker = %u WHERE "
		    "worker = %u", spare, w);
		snprintf(sql[1], sizeof(sql[1]), "UPDATE idgen_leases SET worker = %u WHERE "
		    "worker = %u", w, other);
		snprintf(sql[2], sizeof(sql[2]), "UPDATE idgen_leases SET worker = %u WHERE "
		    "worker = %u", other, spare);
		n = 3;
		break;
	}
	}
	/* One transaction: a statement refused rolls back the ones before it. */
	memcpy(before, s->st.lease, sizeof(before));
	for (unsigned k = 0; k < n && err == 0; k++)
		err = lease_send(s, sql[k], why, sizeof(why));
	if (err != 0)
		memcpy(s->st.lease, before, sizeof(before));
	snprintf(line, len, "worker %u (window_end %" PRIu64 ")%s%s", w, before[i].window_end,
	    err != 0 ? ": " : "", why);
	return (int)err;
}

const char *const mark_edit_names[ME_COUNT] = {
	"own", "copy", "delete", "reset", "truncate", "ns",
};

/* The role named in the quotes at p: a server index, -1 none. */
static int
mark_role(const char *p)
{
	char buf[16];

	for (unsigned k = 0; k < TSERVER_MAX; k++) {
		const char *name = tserver_role_name(k, buf, sizeof(buf));
		size_t len = strlen(name);

		if (strncmp(p, name, len) == 0 && p[len] == '\'')
			return (int)k;
	}
	return -1;
}

unsigned
tserver_mark_edit(struct tserver *s, const char *sql, uint64_t *affected, char *why, size_t len)
{
	static const char upd[] = "UPDATE idgen_marks SET high_water = ";
	static const char del[] = "DELETE FROM idgen_marks WHERE role = '";
	static const char ins[] = "INSERT INTO idgen_marks (role) VALUES ('";
	static const char nsu[] = "UPDATE idgen_ns_marks SET high_water = ";
	const char *msg = NULL, *q;
	uint64_t h, x;
	char name[8];
	int r, k;

	*affected = 0;
	why[0] = '\0';
	if (!s->up) {
		snprintf(why, len, "server down");
		return 2003;
	}
	if (strncmp(sql, upd, sizeof(upd) - 1) == 0 &&
	    sscanf(sql + sizeof(upd) - 1, "%" SCNu64, &h) == 1 &&
	    (q = strstr(sql, "WHERE role = '")) != NULL) {
		if ((r = mark_role(q + 14)) < 0 || !(s->st.rows >> r & 1))
			return 0;	/* no such row */
		if (RULE_ON(RULE_MARK_GUARD) && (msg = tserver_mark_trigger(s->st.mark[r],
		    s->st.mark_b[r], h, s->st.mark_b[r], s->st.meta_row ? s->b : 1, false,
		    false)) != NULL) {
			snprintf(why, len, "%s", msg);
			return 1644;
		}
		*affected = s->st.mark[r] != h;
		if (h < s->st.mark[r] && s->st.mark[r] > s->hand_lost[r])
			s->hand_lost[r] = s->st.mark[r];
		s->st.mark[r] = h;
		return 0;
	}
	if (strncmp(sql, del, sizeof(del) - 1) == 0) {
		if ((r = mark_role(sql + sizeof(del) - 1)) < 0 || !(s->st.rows >> r & 1))
			return 0;
		if (RULE_ON(RULE_MARK_GUARD) && (msg = tserver_mark_trigger(s->st.mark[r], 0, 0, 0, 0,
		    false, true)) != NULL) {
			snprintf(why, len, "%s", msg);
			return 1644;
		}
		s->st.rows &= ~(1u << r);
		if (s->st.mark[r] > s->hand_lost[r])
			s->hand_lost[r] = s->st.mark[r];
		s->st.mark[r] = 0;
		s->st.mark_b[r] = 0;
		*affected = 1;
		return 0;
	}
	if (strncmp(sql, ins, sizeof(ins) - 1) == 0) {
		if ((r = mark_role(sql + sizeof(ins) - 1)) < 0)
			goto unknown;
		if (s->st.rows >> r & 1) {
			snprintf(why, len, "Duplicate entry for key 'PRIMARY'");
			return 1062;
		}
		s->st.rows |= 1u << r;
		s->st.mark[r] = 0;	/* the columns' defaults */
		s->st.mark_b[r] = 0;
		*affected = 1;
		return 0;
	}
	if (strcmp(sql, "TRUNCATE idgen_marks") == 0) {
		/* No trigger fires (a TRUNCATE deletes no row one by one). */
		s->st.rows = 0;
		for (unsigned j = 0; j < TSERVER_MAX; j++)
			if (s->st.mark[j] > s->trunc_lost[j])
				s->trunc_lost[j] = s->st.mark[j];
		memset(s->st.mark, 0, sizeof(s->st.mark));
		memset(s->st.mark_b, 0, sizeof(s->st.mark_b));
		return 0;
	}
	if (strcmp(sql, "TRUNCATE tickets64") == 0) {
		/* InnoDB's TRUNCATE starts the counter again; no trigger on tickets64. */
		s->st.counter = s->offset;
		s->st.last = 0;
		return 0;
	}
	if (sscanf(sql, "ALTER TABLE tickets64 AUTO_INCREMENT = %" SCNu64, &x) == 1) {
		/* Never at or below the row's value: the table is empty after the TRUNCATE. */
		s->st.counter = x > s->st.last ? x : s->st.last + 1;
		return 0;
	}
	if (strncmp(sql, nsu, sizeof(nsu) - 1) == 0 &&
	    sscanf(sql + sizeof(nsu) - 1, "%" SCNu64 " WHERE ns = '%7[a-z0-9_]'", &h, name) == 2 &&
	    (q = strstr(sql, "AND role = '")) != NULL) {
		struct tserver_ns *n;

		if ((k = tserver_ns_index(name, strlen(name))) < 0 || (r = mark_role(q + 12)) < 0 ||
		    (n = &s->st.ns[k])->state == TS_NS_NONE)
			return 0;
		if (RULE_ON(RULE_MARK_GUARD) && (msg = tserver_mark_trigger(n->hw[r], n->hb[r], h,
		    n->hb[r], n->b, false, false)) != NULL) {
			snprintf(why, len, "%s", msg);
			return 1644;
		}
		*affected = n->hw[r] != h;
		if (h < n->hw[r] && tserver_ns_end(n->hw[r], n->hb[r], n->b) > s->ns_hand_lost[k][r])
			s->ns_hand_lost[k][r] = tserver_ns_end(n->hw[r], n->hb[r], n->b);
		n->hw[r] = h;
		return 0;
	}
unknown:
	snprintf(why, len, "not one of the operator's edits");
	return 1064;
}

/* One draw below n from the fault's generator (mark_edits); the schedule's kept. */
static uint64_t
mark_draw(struct mark_edits *me, uint64_t n)
{
	struct rng_state main;
	uint64_t v;

	rng_save(&main);
	rng_load(&me->rng);
	v = rng_below(n);
	rng_save(&me->rng);
	rng_load(&main);
	return v;
}

void
mark_edits_schedule(struct mark_edits *me, uint64_t seed)
{
	struct rng_state main;
	bool half;

	rng_save(&main);
	rng_seed(rng_mix(seed) ^ UINT64_C(0x6d61726b2d656469));	/* "mark-edi" */
	rng_save(&me->rng);
	rng_load(&main);
	half = mark_draw(me, 2) == 0;
	me->on = me->mode == MEM_ALL || (me->mode == MEM_HALF && half);
}

bool
mark_edits_draw(struct mark_edits *me, unsigned nsrv, enum mark_edit *kind, unsigned *srv,
    uint64_t *pick)
{
	if (!me->on || mark_draw(me, 1000) >= MARK_EDIT_PM)
		return false;
	*kind = (enum mark_edit)mark_draw(me, ME_COUNT);
	*srv = (unsigned)mark_draw(me, nsrv);
	*pick = mark_draw(me, UINT64_MAX);
	return true;
}

/*
 * Statements sql[0..n) on s in one transaction: the first error stops them
 * and rolls back the ones before (the tables put back); 0 all ran.
 */
static unsigned
mark_send(struct tserver *s, char sql[][160], unsigned n, char *line, size_t len)
{
	struct tserver_state before = s->st;
	char why[200];
	uint64_t affected;
	unsigned err = 0;
	size_t used = strlen(line);

	for (unsigned k = 0; k < n && err == 0; k++) {
		err = tserver_mark_edit(s, sql[k], &affected, why, sizeof(why));
		if (used < len)
			used += (size_t)snprintf(line + used, len - used, "%s%s%s%s",
			    used ? "; " : "", sql[k], err ? ": " : "", err ? why : "");
	}
	if (err != 0)
		s->st = before;
	return err;
}

int
mark_edits_apply(struct tserver *srv, unsigned nsrv, unsigned at, enum mark_edit kind,
    uint64_t pick, char *line, size_t len)
{
	struct tserver *s = &srv[at];
	char sql[TSERVER_MAX + 1][160], buf[16];
	unsigned cand[TSERVER_MAX * TSERVER_NS], nc = 0, r, err = 0, n = 0;
	uint64_t h;

	line[0] = '\0';
	if (!s->up)
		return -1;	/* the operator's client cannot connect: nothing sent */
	switch (kind) {
	case ME_OWN:
	case ME_COPY:
	case ME_DELETE:
	case ME_RESET:
		for (unsigned k = 0; k < TSERVER_MAX; k++)
			if ((s->st.rows >> k & 1) && s->st.mark[k] > 0 &&
			    (kind == ME_DELETE || (kind == ME_COPY) == (k != at)))
				cand[nc++] = k;
		if (nc == 0)
			return -1;
		r = cand[pick % nc];
		h = (pick >> 8) % s->st.mark[r];	/* below the mark */
		if (kind == ME_DELETE) {
			snprintf(sql[0], sizeof(sql[0]), "DELETE FROM idgen_marks WHERE role = '%s'",
			    tserver_role_name(r, buf, sizeof(buf)));
			snprintf(sql[1], sizeof(sql[1]), "INSERT INTO idgen_marks (role) VALUES ('%s')",
			    tserver_role_name(r, buf, sizeof(buf)));
			return (int)mark_send(s, sql, 2, line, len);
		}
		snprintf(sql[0], sizeof(sql[0]), "UPDATE idgen_marks SET high_water = %" PRIu64
		    " WHERE role = '%s'", h, tserver_role_name(r, buf, sizeof(buf)));
		if (kind != ME_RESET)
			return (int)mark_send(s, sql, 1, line, len);
		/* The reset: the counter first (no trigger on tickets64), then every row. */
		snprintf(sql[1], sizeof(sql[1]), "TRUNCATE tickets64");
		snprintf(sql[2], sizeof(sql[2]), "ALTER TABLE tickets64 AUTO_INCREMENT = %" PRIu64,
		    h + 1);
		mark_send(s, sql + 1, 2, line, len);
		for (unsigned k = 0; k < nsrv; k++) {
			unsigned e;

			if (!srv[k].up)
				continue;
			e = mark_send(&srv[k], sql, 1, line, len);
			err = err != 0 ? err : e;
		}
		return (int)err;
	case ME_TRUNCATE:
		for (unsigned k = 0; k < TSERVER_MAX; k++)
			if (s->st.rows >> k & 1) {
				if (s->st.mark[k] > 0)
					nc++;
				snprintf(sql[++n], sizeof(sql[0]), "INSERT INTO idgen_marks (role) "
				    "VALUES ('%s')", tserver_role_name(k, buf, sizeof(buf)));
			}
		if (nc == 0)
			return -1;
		snprintf(sql[0], sizeof(sql[0]), "TRUNCATE idgen_marks");
		return (int)mark_send(s, sql, n + 1, line, len);
	default:
		for (unsigned k = 0; k < TSERVER_NS; k++)
			for (unsigned j = 0; j < TSERVER_MAX; j++)
				if (s->st.ns[k].state != TS_NS_NONE && s->st.ns[k].hw[j] > 0)
					cand[nc++] = k * TSERVER_MAX + j;
		if (nc == 0)
			return -1;
		r = cand[pick % nc];
		h = (pick >> 8) % s->st.ns[r / TSERVER_MAX].hw[r % TSERVER_MAX];
		snprintf(sql[0], sizeof(sql[0]), "UPDATE idgen_ns_marks SET high_water = %" PRIu64
		    " WHERE ns = '%s' AND role = '%s'", h, tserver_ns_name(r / TSERVER_MAX),
		    tserver_role_name(r % TSERVER_MAX, buf, sizeof(buf)));
		return (int)mark_send(s, sql, 1, line, len);
	}
}
