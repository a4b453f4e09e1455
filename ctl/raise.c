/*
 * raise.c - idgenctl tier raise-increment M: moves the tier to a larger
 * increment while idservers serve, as a new generation above a floor
 * (docs/design.md section 12.4): plan, seal every server, compute the floor,
 * open every server in the new generation; every namespace likewise, above a
 * floor of its own in its own B (13.8).
 *
 * Every write is idempotent and guarded by the state it expects, so a command
 * killed at any step is run again and resumes where the servers say it is.
 * The writes need an administrator's account (SET GLOBAL, ALTER TABLE):
 * IDGEN_ADMIN_USER (default root) and IDGEN_ADMIN_PASSWORD from the environment.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "layout.h"

#define RAISE_SQL_MAX	1024

/* One server as the administrator reads it. */
struct raise_srv {
	struct ctl_server	 db;
	unsigned		 gen;		/* idgen_meta.tier_generation */
	unsigned		 inc;		/* idgen_meta.tier_increment */
	unsigned		 plan;		/* idgen_meta.tier_plan */
	uint64_t		 floor;		/* idgen_meta.tier_floor: an ID */
	uint64_t		 b;
	uint64_t		 counter;
	unsigned		 own_gen;	/* its own marks row */
	bool			 sealed;
};

struct raise {
	struct ctl		*c;
	unsigned		 to;		/* M' */
	unsigned		 from;		/* M of generation g */
	unsigned		 gen;		/* g: the generation being left */
	uint64_t		 b;
	uint64_t		 floor;
	struct raise_srv	 s[SERVER_MAX];
	struct ctl_ns_row	 ns[CTL_NS_MAX];	/* every namespace ready */
	uint64_t		 ns_floor[CTL_NS_MAX];	/* F_N, in tickets of B_N */
	unsigned		 nns;
};

/* The server's generation, plan, floor, B, counter and its own row's state. */
static bool
raise_read(struct raise_srv *r)
{
	char sql[RAISE_SQL_MAX];
	struct ctl_res *res;
	char **row;
	uint64_t v[9];
	bool ok;

	snprintf(sql, sizeof(sql), "SELECT tier_generation, tier_increment, tier_plan, "
	    "tier_floor, block_size, (SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE "
	    "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tickets64'), (SELECT generation FROM "
	    "idgen_marks WHERE role = '%s'), (SELECT sealed FROM idgen_marks WHERE role = '%s'), "
	    "0 FROM idgen_meta WHERE one = 1", server_role(r->db.index), server_role(r->db.index));
	if ((res = ctl_query(&r->db, sql)) == NULL)
		return false;
	row = ctl_row(res);
	ok = row != NULL;
	for (unsigned k = 0; ok && k < 9; k++)
		ok = ctl_u64(row[k], &v[k]);
	ctl_res_free(res);
	if (!ok) {
		snprintf(r->db.error, sizeof(r->db.error), "idgen_meta or its own idgen_marks row "
		    "lacks the generation columns (load schema/10-tables.sql)");
		return false;
	}
	r->gen = (unsigned)v[0];
	r->inc = (unsigned)v[1];
	r->plan = (unsigned)v[2];
	r->floor = v[3];
	r->b = v[4];
	r->counter = v[5];
	r->own_gen = (unsigned)v[6];
	r->sealed = v[7] != 0;
	return true;
}

/*
 * Every marks row a server holds names a configured server of its region:
 * a server of the tier left out of the config would never be sealed.
 */
static bool
raise_members(struct raise_srv *r)
{
	struct ctl_res *res = ctl_query(&r->db, "SELECT role FROM idgen_marks WHERE retired = 0");
	char **row;
	bool ok = true;

	if (res == NULL)
		return false;
	while (ok && (row = ctl_row(res)) != NULL) {
		unsigned i;

		ok = row[0] != NULL && server_by_name(row[0], &i) && server_is_own(i);
		if (!ok)
			fprintf(stderr, "idgenctl: the %s server holds the marks row '%s' of a server "
			    "this config does not name: every server of the tier must be in the "
			    "config (more_servers) for a change of the increment\n",
			    server_name(r->db.index), row[0] ? row[0] : "NULL");
	}
	ctl_res_free(res);
	return ok;
}

/*
 * The namespaces the change carries along: every one ready on every server;
 * one being created refuses it (docs/design.md 13.8). 0, or the exit status.
 */
static int
raise_ns(struct raise *x)
{
	struct ctl_server *s[SERVER_MAX];

	for (unsigned i = 0; i < server_count(); i++)
		s[i] = &x->s[i].db;
	return ctl_ns_ready(s, server_count(), "raise-increment", x->ns, &x->nns);
}

/* Connects to and reads every server; 0, or the exit status. */
static int
raise_connect(struct raise *x, const char *user, const char *password)
{
	for (unsigned i = 0; i < server_count(); i++) {
		struct raise_srv *r = &x->s[i];

		r->db.index = i;
		r->db.host = x->c->srv[i].host;
		r->db.port = x->c->srv[i].port;
		if (!ctl_connect_as(x->c, &r->db, user, password) || !raise_read(r)) {
			fprintf(stderr, "idgenctl: the %s server (%s:%u) as %s (IDGEN_ADMIN_USER): "
			    "%s: every server of the tier takes part in a change\n", server_name(i),
			    r->db.host, r->db.port, user, r->db.error);
			return 2;
		}
		if (!raise_members(r))
			return 1;
	}
	return raise_ns(x);
}

/*
 * Where the tier is: every server in one generation (a fresh change, or one
 * planned or sealed), or some already opened in the next (a change to resume).
 * Sets gen, from and b; 0, -1 when there is nothing to do, or the exit status.
 */
static int
raise_where(struct raise *x)
{
	unsigned top = 0, want = 0;

	for (unsigned i = 0; i < server_count(); i++)
		top = x->s[i].gen > top ? x->s[i].gen : top;
	x->gen = top;
	for (unsigned i = 0; i < server_count(); i++)
		if (x->s[i].gen < top)
			x->gen = top - 1;
	for (unsigned i = 0; i < server_count(); i++) {
		struct raise_srv *r = &x->s[i];
		unsigned target = r->gen > x->gen ? r->inc : r->plan;

		if (r->gen + 1 < top) {
			fprintf(stderr, "idgenctl: the %s server is in generation %u, the tier in %u: "
			    "restored from before two changes? rebuild it and add it again\n",
			    server_name(i), r->gen, top);
			return 1;
		}
		if (target != 0 && want != 0 && target != want) {
			fprintf(stderr, "idgenctl: the servers disagree on the change in progress "
			    "(to %u and to %u)\n", want, target);
			return 1;
		}
		want = target != 0 ? target : want;
		if (r->gen == x->gen)
			x->from = r->inc;
		if (x->b == 0)
			x->b = r->b;
		if (r->b != x->b) {
			fprintf(stderr, "idgenctl: the servers disagree on B (%" PRIu64 " and %"
			    PRIu64 "): repair that first (idgenctl tier check)\n", x->b, r->b);
			return 1;
		}
	}
	if (want != 0 && want != x->to) {
		fprintf(stderr, "idgenctl: a change of the increment to %u is in progress: run "
		    "idgenctl tier raise-increment %u to finish it first\n", want, want);
		return 1;
	}
	for (unsigned i = 0; i < server_count(); i++)
		if (x->s[i].gen == x->gen && x->s[i].inc != x->from) {
			fprintf(stderr, "idgenctl: the servers of generation %u disagree on the "
			    "increment (%u and %u): repair that first (idgenctl tier check)\n", x->gen,
			    x->from, x->s[i].inc);
			return 1;
		}
	if (want == 0 && x->to == x->from) {
		printf("tier raise-increment: the tier is in generation %u with M = %u already\n",
		    x->gen, x->from);
		return -1;
	}
	if (want == 0 && x->to < x->from) {
		fprintf(stderr, "idgenctl: the increment only grows: the tier's is %u\n", x->from);
		return 1;
	}
	return 0;
}

/* Steps 1 and 2: the plan written to every server of generation g, then every seal. */
static int
raise_seal(struct raise *x)
{
	for (unsigned i = 0; i < server_count(); i++) {
		if (x->s[i].gen != x->gen)
			continue;
		if (!ctl_exec(&x->s[i].db, "UPDATE idgen_meta SET tier_plan = %u WHERE one = 1 AND "
		    "tier_generation = %u AND tier_plan IN (0, %u)", x->to, x->gen, x->to))
			return 2;
		ctl_step("plan");
	}
	for (unsigned i = 0; i < server_count(); i++) {
		if (x->s[i].gen != x->gen)
			continue;
		/* Takes the row lock every ticket transaction takes first (design 6.3). */
		if (!ctl_exec(&x->s[i].db, "UPDATE idgen_marks SET sealed = 1 WHERE role = '%s' AND "
		    "generation = %u", server_role(i), x->gen))
			return 2;
		ctl_step("seal");
	}
	return 0;
}

/*
 * Step 3 for namespace k: F_N in tickets of B_N, at or above every marks row
 * of N and every tickets_N counter minus one on every server (13.8).
 */
static int
raise_ns_floor(struct raise *x, unsigned k)
{
	const struct ctl_ns_row *n = &x->ns[k];
	uint64_t end = 0, e;

	for (unsigned i = 0; i < server_count(); i++) {
		if (!ctl_ns_end(&x->s[i].db, n->name, n->b, true, &e))
			return 1;
		end = e > end ? e : end;
	}
	x->ns_floor[k] = end == 0 ? 0 : (end + n->b - 1) / n->b - 1;
	if (x->ns_floor[k] + x->to + 1 > (UINT64_C(1) << 53) / n->b) {
		fprintf(stderr, "idgenctl: namespace %s's floor %" PRIu64 " (B=%" PRIu64 ") leaves "
		    "no ticket below 2^53\n", n->name, x->ns_floor[k], n->b);
		return 1;
	}
	return 0;
}

/*
 * Step 3, once every server is sealed: the floor F, in tickets of B, at or
 * above every mark row and every counter minus one on every server, and every
 * floor already written (a resumed change).
 */
static int
raise_floor(struct raise *x)
{
	uint64_t end = 0;

	for (unsigned i = 0; i < server_count(); i++) {
		struct raise_srv *r = &x->s[i];
		struct ctl_res *res;
		char **row;

		if (!raise_read(r) || (res = ctl_query(&r->db, "SELECT high_water, block_size "
		    "FROM idgen_marks")) == NULL) {
			fprintf(stderr, "idgenctl: the %s server: %s\n", server_name(i), r->db.error);
			return 2;
		}
		while ((row = ctl_row(res)) != NULL) {
			struct state_mark m = { 0, 0, "" };

			if (ctl_u64(row[0], &m.high_water) && ctl_u64(row[1], &m.block_size) &&
			    state_mark_end(&m, x->b) > end)
				end = state_mark_end(&m, x->b);
		}
		ctl_res_free(res);
		if (r->counter > UINT64_MAX / x->b) {
			fprintf(stderr, "idgenctl: the %s server's counter %" PRIu64 " is beyond any "
			    "ID\n", server_name(i), r->counter);
			return 1;
		}
		if (r->counter * x->b > end)
			end = r->counter * x->b;
		if (r->gen > x->gen && r->floor > end)
			end = r->floor;
	}
	x->floor = end == 0 ? 0 : (end + x->b - 1) / x->b - 1;
	if (!layout_ticket_ok(x->floor + x->to, x->b)) {
		fprintf(stderr, "idgenctl: the floor %" PRIu64 " leaves no ticket below 2^53\n",
		    x->floor);
		return 1;
	}
	for (unsigned k = 0; k < x->nns; k++)
		if (raise_ns_floor(x, k) != 0)
			return 1;
	ctl_step("floor");
	return 0;
}

/* In step 4's transaction: every marks row of every namespace at its floor, in ID space. */
static bool
raise_ns_marks(struct raise *x, struct raise_srv *r)
{
	for (unsigned k = 0; k < x->nns; k++) {
		uint64_t f = x->ns_floor[k], b = x->ns[k].b;

		if (!ctl_exec(&r->db, "UPDATE idgen_ns_marks SET high_water = %" PRIu64 ", "
		    "block_size = %" PRIu64 " WHERE ns = '%s' AND (high_water + 1) * IF(block_size "
		    "= 0, %" PRIu64 ", block_size) < %" PRIu64, f, b, x->ns[k].name, b, (f + 1) * b))
			return false;
	}
	return true;
}

/*
 * Step 4 on one server: the new increment for new connections, the counter
 * above the floor, then in one transaction every marks row at the floor, the
 * meta row and its own row in generation g + 1.
 */
static int
raise_open_one(struct raise *x, unsigned i)
{
	struct raise_srv *r = &x->s[i];
	uint64_t f = x->floor, b = x->b;

	if (!ctl_exec(&r->db, "SET GLOBAL auto_increment_increment = %u", x->to) ||
	    !ctl_exec(&r->db, "ALTER TABLE tickets64 AUTO_INCREMENT = %" PRIu64, f + 1))
		return 2;
	/* Every namespace's counter above its floor (an ALTER commits: before the transaction). */
	for (unsigned k = 0; k < x->nns; k++)
		if (!ctl_exec(&r->db, "ALTER TABLE tickets_%s AUTO_INCREMENT = %" PRIu64,
		    x->ns[k].name, x->ns_floor[k] + 1))
			return 2;
	if (!ctl_exec(&r->db, "START TRANSACTION") ||
	    !ctl_exec(&r->db, "SELECT high_water FROM idgen_marks WHERE role = '%s' FOR UPDATE",
	    server_role(i)) ||
	    !ctl_exec(&r->db, "UPDATE idgen_marks SET high_water = %" PRIu64 ", block_size = %"
	    PRIu64 " WHERE (high_water + 1) * IF(block_size = 0, %" PRIu64 ", block_size) < %"
	    PRIu64, f, b, b, (f + 1) * b) ||
	    !raise_ns_marks(x, r) ||
	    !ctl_exec(&r->db, "UPDATE idgen_meta SET tier_increment = %u, tier_generation = %u, "
	    "tier_floor = %" PRIu64 ", tier_plan = 0 WHERE one = 1 AND tier_generation = %u",
	    x->to, x->gen + 1, (f + 1) * b, x->gen) ||
	    !ctl_exec(&r->db, "UPDATE idgen_marks SET generation = %u, sealed = 0 WHERE role = '%s' "
	    "AND generation = %u", x->gen + 1, server_role(i), x->gen) ||
	    !ctl_exec(&r->db, "COMMIT"))
		return 2;
	ctl_step("open");
	return 0;
}

/* What the operator changes next: the settings that make the change outlive restarts. */
static void
raise_done(const struct raise *x)
{
	printf("tier raise-increment: generation %u, M = %u (was %u), floor %" PRIu64 ": every "
	    "ticket from now on is above it (IDs from %" PRIu64 "), on %u servers\n", x->gen + 1,
	    x->to, x->from, x->floor, (x->floor + 1) * x->b, server_count());
	for (unsigned k = 0; k < x->nns; k++)
		printf("  namespace %s: floor %" PRIu64 " (B=%" PRIu64 "; IDs from %" PRIu64 ")\n",
		    x->ns[k].name, x->ns_floor[k], x->ns[k].b, (x->ns_floor[k] + 1) * x->ns[k].b);
	printf("running idservers follow without a restart; set in every idserver's config:\n"
	    "  tier_increment = %u\n", x->to);
	printf("set in each ticket server's own config file (SET GLOBAL does not outlive a "
	    "restart; until then a restarted server is refused, never used):\n"
	    "  auto_increment_increment = %u\n", x->to);
	if (server_own_count() < x->to)
		printf("servers at the free offsets: idgenctl tier add-server OFFSET IP:PORT "
		    "(offsets %u..%u)\n", server_extra_min(), x->to);
}

int
ctl_raise_increment(struct ctl *c, const char *to)
{
	static struct raise x;
	const char *user = getenv("IDGEN_ADMIN_USER");
	const char *pw = getenv("IDGEN_ADMIN_PASSWORD");
	unsigned long v;
	char *end;
	int rc;

	memset(&x, 0, sizeof(x));
	x.c = c;
	errno = 0;
	v = strtoul(to, &end, 10);
	if (*to < '0' || *to > '9' || *end != '\0' || errno != 0 || v < 2 ||
	    v > SERVER_INCREMENT_MAX) {
		fprintf(stderr, "idgenctl: the increment '%s' must be a number from 2 to %u\n", to,
		    SERVER_INCREMENT_MAX);
		return 2;
	}
	x.to = (unsigned)v;
	if (server_region_bits() > 0) {
		fprintf(stderr, "idgenctl: raising the increment of a tier of regions is not built "
		    "(docs/design.md 12.4): every region's servers would change together\n");
		return 1;
	}
	rc = raise_connect(&x, user != NULL && user[0] != '\0' ? user : "root", pw != NULL ? pw : "");
	if (rc == 0)
		rc = raise_where(&x);
	if (rc == 0)
		rc = raise_seal(&x);
	if (rc == 0)
		rc = raise_floor(&x);
	for (unsigned i = 0; rc == 0 && i < server_count(); i++)
		if (x.s[i].gen == x.gen)
			rc = raise_open_one(&x, i);
	if (rc == 0)
		raise_done(&x);
	for (unsigned i = 0; i < server_count(); i++)
		if (x.s[i].db.db != NULL)
			ctl_close(&x.s[i].db);
	return rc < 0 ? 0 : rc;
}
