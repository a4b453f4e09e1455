/*
 * add.c - idgenctl tier add-server: a ticket server of this region beyond its
 * pair, at an offset of the pre-sized increment that no server of the tier has
 * or ever had (docs/design.md section 12.2).
 *
 * In generation 0 no floor is needed: no server ever drew a ticket of that
 * residue; after a change of the increment the new server starts above every
 * mark of the region (docs/design.md 12.4). Every write is idempotent (INSERT
 * IGNORE, marks only raised, the meta row written last and only while the
 * server has drawn no ticket), so a command killed at any step is run again.
 * Every namespace ready on the region's servers is made on the new server
 * before its meta row, its counter above every mark of that namespace, and
 * every other name it lists is taken off it (docs/design.md 13.8).
 * The writes need an administrator's account (IDGEN_ADMIN_USER, default root,
 * and IDGEN_ADMIN_PASSWORD, from the environment: never in argv); the reads use
 * the service user of the config, as idserver does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "layout.h"
#include "rules.h"

#define ADD_SQL_MAX	1024

struct add;
static void	add_floor(struct add *a);
static int	add_ns_read(struct add *a);
static int	add_ns_stale(struct add *a);

struct add {
	struct ctl		*c;
	unsigned		 offset;
	char			 host[64];
	unsigned		 port;
	const char		*admin_user;
	const char		*admin_password;
	struct ctl_server	 srv;		/* the new server, as the administrator */
	uint64_t		 block_size;	/* the region's agreed B */
	uint64_t		 generation;	/* the tier's (docs/design.md 12.4) */
	uint64_t		 floor;		/* ... and the first ID the new server may
						 * give: its residue was drawn below it
						 * under the old M */
	struct ctl_ns_row	 ns[CTL_NS_MAX];	/* every namespace ready */
	unsigned		 nns;
	bool			 revive[CTL_NS_MAX];	/* ns[k]'s row on the new server
						 * 'dropped': made again (13.8) */
	uint64_t		 new_rows;	/* catalogue rows the new server holds */
	char			 grantee[160];	/* the service user, for GRANT */
};

/* Reads OFFSET and IP:PORT ([IPv6]:PORT); false with a line on stderr. */
static bool
add_parse(struct add *a, const char *offset, const char *addr)
{
	unsigned char buf[sizeof(struct in6_addr)];
	const char *p = addr;
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(offset, &end, 10);
	if (*offset < '0' || *offset > '9' || *end != '\0' || errno != 0 ||
	    v < server_extra_min() || v > server_increment()) {
		fprintf(stderr, "idgenctl: offset '%s' must be a number from %u (above every "
		    "region's pair) to %u (tier_increment)\n", offset, server_extra_min(),
		    server_increment());
		return false;
	}
	a->offset = (unsigned)v;
	if (!config_parse_addr(&p, a->host, sizeof(a->host), &a->port) || *p != '\0' ||
	    (inet_pton(AF_INET, a->host, buf) != 1 && inet_pton(AF_INET6, a->host, buf) != 1)) {
		fprintf(stderr, "idgenctl: '%s' is not IP:PORT ([IPv6]:PORT; no host names, as "
		    "for idserver)\n", addr);
		return false;
	}
	return true;
}

/* One row of text columns from s; false (and the error on stderr) without one. */
static bool
add_row(struct ctl_server *s, const char *sql, char out[][64], unsigned n)
{
	struct ctl_res *res = ctl_query(s, sql);
	char **row;

	if (res == NULL) {
		fprintf(stderr, "idgenctl: %s:%u: %s\n", s->host, s->port, s->error);
		return false;
	}
	row = ctl_row(res);
	if (row == NULL || ctl_fields(res) != n) {
		fprintf(stderr, "idgenctl: %s:%u: no answer to '%.40s...'\n", s->host, s->port,
		    sql);
		ctl_res_free(res);
		return false;
	}
	for (unsigned i = 0; i < n; i++)
		snprintf(out[i], 64, "%s", row[i] != NULL ? row[i] : "");
	ctl_res_free(res);
	return true;
}

/* True when server i of the config is the one being added (same address and offset). */
static bool
add_is_new(const struct add *a, unsigned i)
{
	const struct ctl_server *s = &a->c->srv[i];

	return server_offset(i) == a->offset && strcmp(s->host, a->host) == 0 &&
	    s->port == a->port;
}

/*
 * Every server in one generation with no change of the increment in progress;
 * the new server joins that generation above its floor (design 12.4).
 */
static int
add_generation(struct add *a, const struct ctl_server *s)
{
	uint64_t g, floor, plan;

	if (!ctl_u64(s->field[F_GENERATION], &g) || !ctl_u64(s->field[F_FLOOR], &floor) ||
	    !ctl_u64(s->field[F_PLAN], &plan)) {
		fprintf(stderr, "idgenctl: the %s server's idgen_meta lacks the generation columns "
		    "(load schema/10-tables.sql on it)\n", server_name(s->index));
		return 1;
	}
	if (plan != 0 || (s->index > 0 && g != a->generation)) {
		fprintf(stderr, "idgenctl: a change of the increment is in progress (the %s server "
		    "is in generation %" PRIu64 "%s): finish it first with idgenctl tier "
		    "raise-increment\n", server_name(s->index), g, plan != 0 ? ", planned" : "");
		return 1;
	}
	a->generation = g;
	a->floor = floor > a->floor ? floor : a->floor;	/* an ID */
	return 0;
}

/*
 * The tier as the service user sees it: every other server of the region
 * readable (each gets the new server's marks row), the offset nobody's, B
 * agreed, and no server holding a mark of that offset: an offset is never
 * given twice (docs/design.md section 12.2).
 */
static int
add_check_tier(struct add *a)
{
	struct ctl *c = a->c;
	char sql[ADD_SQL_MAX], got[3][64];
	uint64_t hw;

	for (unsigned i = 0; i < server_count(); i++) {
		struct ctl_server *s = &c->srv[i];
		uint64_t o;

		if (add_is_new(a, i))
			continue;
		if (strcmp(s->host, a->host) == 0 && s->port == a->port) {
			fprintf(stderr, "idgenctl: %s:%u is already server %s (offset %u) of the tier "
			    "in the config: a server keeps its offset for life; offset %u needs a "
			    "new server\n", a->host, a->port, server_role(i), server_offset(i),
			    a->offset);
			return 1;
		}
		if (server_offset(i) == a->offset) {
			fprintf(stderr, "idgenctl: offset %u is the %s server's (%s:%u) in the "
			    "config\n", a->offset, server_name(i), s->host, s->port);
			return 1;
		}
		if (!s->up) {
			fprintf(stderr, "idgenctl: the %s server (%s:%u) cannot be read (%s): %s\n",
			    server_name(i), s->host, s->port, s->error, server_is_own(i) ?
			    "every server of the region gets the new server's marks row" :
			    "its offset cannot be checked");
			return 2;
		}
		if (ctl_u64(s->field[F_SERVER_OFFSET], &o) && o == a->offset) {
			fprintf(stderr, "idgenctl: offset %u is taken: the %s server (%s:%u) has "
			    "it in idgen_meta\n", a->offset, server_name(i), s->host, s->port);
			return 1;
		}
		if (i < SERVER_PAIR && a->block_size == 0)
			a->block_size = s->block_size;
		if (add_generation(a, s) != 0)
			return 1;
		if (!server_is_own(i))
			continue;
		snprintf(sql, sizeof(sql), "SELECT COALESCE(MAX(high_water), 0), COUNT(*), "
		    "COALESCE(MAX(retired), 0) FROM idgen_marks WHERE role = 'o%u'", a->offset);
		if (!add_row(s, sql, got, 3))
			return 2;
		if (strcmp(got[2], "0") != 0) {
			fprintf(stderr, "idgenctl: offset %u is retired (the %s server says so): an "
			    "offset is never given twice\n", a->offset, server_name(i));
			return 1;
		}
		if (ctl_u64(got[0], &hw) && hw > 0) {
			fprintf(stderr, "idgenctl: offset %u was used before: the %s server holds "
			    "its mark %s; an offset is never given twice (pick another: idgenctl "
			    "tier status shows the ones in use)\n", a->offset, server_name(i),
			    got[0]);
			return 1;
		}
	}
	if (a->block_size == 0) {
		fprintf(stderr, "idgenctl: the region's B is unknown (its pair's meta rows)\n");
		return 2;
	}
	add_floor(a);
	return add_ns_read(a);
}

/*
 * The namespaces the new server gets: every one ready on every other server
 * of the region (one being created refuses the command), and the service
 * user's name for its rights on their tables. 0, or the exit status.
 */
static int
add_ns_read(struct add *a)
{
	struct ctl_server *s[SERVER_MAX];
	unsigned n = 0;
	int rc;

	for (unsigned i = 0; i < server_own_count(); i++)
		if (!add_is_new(a, i))
			s[n++] = &a->c->srv[i];
	if ((rc = ctl_ns_ready(s, n, "add-server", a->ns, &a->nns)) != 0)
		return rc;
	return a->nns == 0 || ctl_ns_grantee(a->c, a->grantee, sizeof(a->grantee)) ? 0 : 2;
}

/*
 * The new server as the administrator sees it: its settings give it the
 * offset, its schema is loaded, it grants no worker number, it is not a
 * server of the tier already, and it has issued no ticket under another shape.
 */
static int
add_check_new(struct add *a)
{
	static const char sql[] =
	    "SELECT @@GLOBAL.auto_increment_increment, @@GLOBAL.auto_increment_offset, "
	    "@@GLOBAL.innodb_flush_log_at_trx_commit, (SELECT DATA_TYPE FROM "
	    "information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = "
	    "'idgen_marks' AND COLUMN_NAME = 'role'), (SELECT COUNT(*) FROM idgen_leases), "
	    "(SELECT COUNT(*) FROM tickets64), "
	    "(SELECT server_uuid FROM idgen_meta WHERE one = 1), "
	    "(SELECT server_offset FROM idgen_meta WHERE one = 1), "
	    "(SELECT COUNT(*) FROM idgen_namespaces)";
	char got[9][64];
	uint64_t v;

	if (!add_row(&a->srv, sql, got, 9))
		return 2;
	/* Any: add_ns_stale reads them (a fresh server holds none: no statement more). */
	if (!ctl_u64(got[8], &a->new_rows))
		a->new_rows = 1;
	for (unsigned i = 0; i < server_count(); i++)
		if (!add_is_new(a, i) && got[6][0] != '\0' &&
		    strcmp(a->c->srv[i].field[F_UUID], got[6]) == 0) {
			fprintf(stderr, "idgenctl: %s:%u is the %s server (server_uuid %s)\n",
			    a->host, a->port, server_name(i), got[6]);
			return 1;
		}
	/*
	 * Already a server of the tier (its meta row names another offset): never
	 * told to renumber, which would give its residue's tickets twice (issue 31).
	 */
	if (ctl_u64(got[7], &v) && v != 0 && v != a->offset) {
		fprintf(stderr, "idgenctl: %s:%u is already server o%" PRIu64 " (offset %" PRIu64
		    ") of the tier (its idgen_meta says so%s): a server keeps its offset for life; "
		    "offset %u needs a new server\n", a->host, a->port, v, v,
		    strcmp(got[5], "0") != 0 ? ", and it has issued tickets" : "", a->offset);
		return 1;
	}
	if (!ctl_u64(got[0], &v) || v != server_increment() || !ctl_u64(got[1], &v) ||
	    v != a->offset || strcmp(got[2], "1") != 0) {
		fprintf(stderr, "idgenctl: %s:%u has auto_increment_increment %s, "
		    "auto_increment_offset %s, innodb_flush_log_at_trx_commit %s; repair: set "
		    "them to %u, %u and 1 in its configuration and restart it\n", a->host,
		    a->port, got[0], got[1], got[2], server_increment(), a->offset);
		return 1;
	}
	if (strcmp(got[3], "varchar") != 0) {
		fprintf(stderr, "idgenctl: %s:%u: idgen_marks.role is '%s'; repair: load "
		    "schema/10-tables.sql and schema/40-leases.sql on it\n", a->host, a->port,
		    got[3]);
		return 1;
	}
	if (strcmp(got[4], "0") != 0) {
		fprintf(stderr, "idgenctl: %s:%u holds %s idgen_leases rows: a server beyond "
		    "the pair grants no worker number; repair: DELETE FROM %s.idgen_leases on "
		    "it\n", a->host, a->port, got[4], a->c->cfg.db_name);
		return 1;
	}
	if (strcmp(got[5], "0") != 0 && (!ctl_u64(got[7], &v) || v != a->offset)) {
		fprintf(stderr, "idgenctl: %s:%u has issued tickets as offset %s: it cannot "
		    "become offset %u\n", a->host, a->port, got[7][0] ? got[7] : "?", a->offset);
		return 1;
	}
	return 0;
}

/*
 * After a change of the increment, the first ID the new server may give: above
 * every floor and every mark any server of the region holds, in ID space
 * (docs/design.md 12.4). 0 in generation 0: no server drew its residue.
 */
static void
add_floor(struct add *a)
{
	if (a->generation == 0)
		return;
	for (unsigned i = 0; i < server_own_count(); i++) {
		const struct ctl_server *s = &a->c->srv[i];

		if (!s->up)
			continue;
		for (unsigned j = 0; j < server_own_count(); j++)
			if (s->has_mark[j] && state_mark_end(&s->mark[j], a->block_size) > a->floor)
				a->floor = state_mark_end(&s->mark[j], a->block_size);
	}
}

/* Its own mark at the floor, its counter above it, its own row in the generation. */
static int
add_write_floor(struct add *a)
{
	char sql[ADD_SQL_MAX];
	uint64_t b = a->block_size, t = (a->floor + b - 1) / b;	/* the first ticket */

	if (a->generation == 0 && a->floor == 0)
		return 0;
	snprintf(sql, sizeof(sql), "UPDATE idgen_marks SET high_water = %" PRIu64 ", block_size "
	    "= %" PRIu64 " WHERE role = 'o%u' AND (high_water + 1) * IF(block_size = 0, %" PRIu64
	    ", block_size) < %" PRIu64, t - 1, b, a->offset, b, t * b);
	if (t == 0 || !ctl_exec(&a->srv, "%s", sql))
		return t == 0 ? 0 : 2;
	snprintf(sql, sizeof(sql), "ALTER TABLE tickets64 AUTO_INCREMENT = %" PRIu64, t);
	if (!ctl_exec(&a->srv, "%s", sql))
		return 2;
	ctl_step("new-floor");
	snprintf(sql, sizeof(sql), "UPDATE idgen_marks SET generation = %" PRIu64 " WHERE role "
	    "= 'o%u'", a->generation, a->offset);
	return ctl_exec(&a->srv, "%s", sql) ? 0 : 2;
}

/*
 * The new server's catalogue, before its meta row (docs/design.md 13.8): a
 * row of a name the region does not hold ready on every other server, or
 * holds with another B or policy, is taken off it as ns drop leaves a name
 * ('dropped': never served; its table and marks kept, so a re-create starts
 * above them). Such a row is a killed run's, left behind by an ns drop or
 * create that reached the configured servers alone (idsim seed 138: n0 left
 * 'ready' at counter 1 beside the pair's 'dropped', and served from it alone
 * once the pair was refused). A name of the region's found 'dropped' there
 * is made again by add_write_ns (revive). 0, or the exit status.
 */
static int
add_ns_stale(struct add *a)
{
	static char drop[CTL_NS_MAX][NS_NAME_MAX + 1];
	struct ctl_res *res;
	unsigned ndrop = 0, k;
	char **row;
	uint64_t b;
	int rc = 0;

	if (a->new_rows == 0)
		return 0;
	res = ctl_query(&a->srv, "SELECT name, block_size, fallback, state FROM "
	    "idgen_namespaces ORDER BY name");
	if (res == NULL) {
		fprintf(stderr, "idgenctl: %s:%u: %s\n", a->host, a->port, a->srv.error);
		return 2;
	}
	while (rc == 0 && (row = ctl_row(res)) != NULL) {
		if (ctl_fields(res) != 4 || row[0] == NULL || row[1] == NULL || row[2] == NULL ||
		    row[3] == NULL || !ns_name_ok(row[0], strlen(row[0]))) {
			fprintf(stderr, "idgenctl: %s:%u: a row of its idgen_namespaces is not "
			    "understood (name '%s'): repair it by hand\n", a->host, a->port,
			    row[0] != NULL ? row[0] : "NULL");
			rc = 1;
			break;
		}
		for (k = 0; k < a->nns && strcmp(a->ns[k].name, row[0]) != 0; k++)
			;
		if (k < a->nns && strcmp(row[3], "dropped") != 0 && ctl_u64(row[1], &b) &&
		    b == a->ns[k].b && strcmp(row[2], a->ns[k].fallback) == 0)
			continue;	/* the region's, as it holds it: add_write_ns */
		if (k < a->nns)
			a->revive[k] = true;
		if (strcmp(row[3], "dropped") == 0)
			continue;
		if (ndrop == CTL_NS_MAX) {
			fprintf(stderr, "idgenctl: %s:%u lists more than %u namespaces\n", a->host,
			    a->port, CTL_NS_MAX);
			rc = 1;
			break;
		}
		snprintf(drop[ndrop++], sizeof(drop[0]), "%s", row[0]);
	}
	ctl_res_free(res);
	for (unsigned i = 0; rc == 0 && i < ndrop; i++) {
		if (!ctl_exec(&a->srv, "UPDATE idgen_namespaces SET state = 'dropped' WHERE name = "
		    "'%s'", drop[i]))
			return 2;
		printf("tier add-server: namespace %s taken off o%u ('dropped'): a killed run's "
		    "row, not as every other server of region %u holds it (docs/design.md 13.8)\n",
		    drop[i], a->offset, server_region());
		ctl_step("new-stale");
	}
	return rc;
}

/*
 * Namespace k on the new server: its catalogue row as the others hold it,
 * 'creating' (made again if 'dropped', as ns create does), its table and the
 * service user's rights, a marks row per server of the region, its counter
 * above every mark of it on every server (ID space), then its own row there,
 * and only then 'ready' (docs/design.md 13.8).
 */
static int
add_write_ns(struct add *a, unsigned k)
{
	const struct ctl_ns_row *n = &a->ns[k];
	char sql[ADD_SQL_MAX], got[3][64];
	uint64_t end = 0, e, t;
	int len;

	if (!ctl_exec(&a->srv, "INSERT IGNORE INTO idgen_namespaces (name, block_size, fallback, "
	    "state, start_above) VALUES ('%s', %" PRIu64 ", '%s', 'creating', %" PRIu64 ")",
	    n->name, n->b, n->fallback, n->start_above) ||
	    (a->revive[k] && !ctl_exec(&a->srv, "UPDATE idgen_namespaces SET state = 'creating', "
	    "block_size = %" PRIu64 ", fallback = '%s' WHERE name = '%s' AND state = 'dropped'",
	    n->b, n->fallback, n->name)) ||
	    !ctl_exec(&a->srv, "UPDATE idgen_namespaces SET start_above = GREATEST(start_above, %"
	    PRIu64 ") WHERE name = '%s'", n->start_above, n->name))
		return 2;
	snprintf(sql, sizeof(sql), "SELECT block_size, fallback, state FROM idgen_namespaces "
	    "WHERE name = '%s'", n->name);
	if (!add_row(&a->srv, sql, got, 3))
		return 2;
	/* 'ready': an earlier run's, its counter and own row set before it. */
	if (!ctl_u64(got[0], &e) || e != n->b || strcmp(got[1], n->fallback) != 0 ||
	    (strcmp(got[2], "creating") != 0 && strcmp(got[2], "ready") != 0)) {
		fprintf(stderr, "idgenctl: %s:%u holds namespace %s with B %s, fallback %s, state "
		    "%s, the region's is B %" PRIu64 ", %s, ready: changed while this ran; run it "
		    "again\n", a->host, a->port, n->name, got[0], got[1], got[2], n->b, n->fallback);
		return 1;
	}
	if (!ctl_ns_table(&a->srv, n->name, a->grantee))
		return 2;
	len = snprintf(sql, sizeof(sql), "INSERT IGNORE INTO idgen_ns_marks (ns, role) VALUES "
	    "('%s', 'o%u')", n->name, a->offset);
	for (unsigned i = 0; i < server_own_count(); i++)
		if (!add_is_new(a, i))
			len += snprintf(sql + len, sizeof(sql) - (size_t)len, ", ('%s', '%s')", n->name,
			    server_role(i));
	if (!ctl_exec(&a->srv, "%s", sql))
		return 2;
	/* Above every mark of N in the region, its own (a rerun's) included. */
	if (!ctl_ns_end(&a->srv, n->name, n->b, false, &end))
		return 2;
	for (unsigned i = 0; i < server_own_count(); i++)
		if (!add_is_new(a, i) && ctl_ns_end(&a->c->srv[i], n->name, n->b, false, &e))
			end = e > end ? e : end;
		else if (!add_is_new(a, i))
			return 2;
	t = (end + n->b - 1) / n->b;
	t = t == 0 ? 1 : t;
	if (t + server_increment() + 1 > (UINT64_C(1) << 53) / n->b) {
		fprintf(stderr, "idgenctl: namespace %s: ticket %" PRIu64 " of B=%" PRIu64 " leaves "
		    "no room below 2^53\n", n->name, t, n->b);
		return 1;
	}
	/*
	 * The counter first: a command killed between leaves it above its own
	 * mark. 'ready' last: no idserver serves N here below them meanwhile,
	 * though an earlier run wrote the meta row.
	 */
	if (!ctl_exec(&a->srv, "ALTER TABLE tickets_%s AUTO_INCREMENT = %" PRIu64, n->name, t) ||
	    !ctl_exec(&a->srv, "UPDATE idgen_ns_marks SET high_water = %" PRIu64 ", block_size = %"
	    PRIu64 " WHERE ns = '%s' AND role = 'o%u' AND (high_water + 1) * IF(block_size = 0, %"
	    PRIu64 ", block_size) < %" PRIu64, t - 1, n->b, n->name, a->offset, n->b, t * n->b) ||
	    !ctl_exec(&a->srv, "UPDATE idgen_namespaces SET state = 'ready' WHERE name = '%s' AND "
	    "state = 'creating'", n->name))
		return 2;
	ctl_step("new-ns");
	return 0;
}

/*
 * The new server: its meta row written last. Until that row names its offset
 * (0 before), no idserver accepts it, so a command killed at any step leaves
 * nothing usable below the floor; the row only changes while the server has
 * drawn no ticket.
 */
static int
add_write_new(struct add *a)
{
	char sql[ADD_SQL_MAX];
	const char *parity = a->offset % 2 ? "odd" : "even";
	int n, rc;

	snprintf(sql, sizeof(sql), "INSERT IGNORE INTO idgen_meta (one, layout_version, "
	    "block_size, parity) VALUES (1, %d, %" PRIu64 ", '%s')", LAYOUT_VERSION,
	    a->block_size, parity);
	if (!ctl_exec(&a->srv, "%s", sql) ||
	    !ctl_exec(&a->srv, "UPDATE idgen_meta SET server_uuid = UUID() WHERE server_uuid = ''"))
		return 2;
	ctl_step("new-meta");
	n = snprintf(sql, sizeof(sql), "INSERT IGNORE INTO idgen_marks (role) VALUES ('o%u')",
	    a->offset);
	for (unsigned i = 0; i < server_own_count(); i++)
		if (!add_is_new(a, i))
			n += snprintf(sql + n, sizeof(sql) - (size_t)n, ", ('%s')", server_role(i));
	if (!ctl_exec(&a->srv, "%s", sql))
		return 2;
	ctl_step("new-marks");
	if ((rc = add_write_floor(a)) != 0 || (rc = add_ns_stale(a)) != 0)
		return rc;
	for (unsigned k = 0; k < a->nns; k++)
		if ((rc = add_write_ns(a, k)) != 0)
			return rc;
	snprintf(sql, sizeof(sql), "UPDATE idgen_meta SET layout_version = %d, block_size = %"
	    PRIu64 ", parity = '%s', tier_increment = %u, server_offset = %u, region = %u, "
	    "region_bits = %u, tier_generation = %" PRIu64 ", tier_floor = %" PRIu64 " WHERE one "
	    "= 1 AND NOT EXISTS (SELECT 1 FROM tickets64)", LAYOUT_VERSION, a->block_size, parity,
	    server_increment(), a->offset, server_region(), server_region_bits(), a->generation,
	    a->floor);
	return ctl_exec(&a->srv, "%s", sql) ? 0 : 2;
}

/* Every other server of the region gets the new server's marks row. */
static int
add_write_others(struct add *a)
{
	char sql[ADD_SQL_MAX];

	snprintf(sql, sizeof(sql), "INSERT IGNORE INTO idgen_marks (role) VALUES ('o%u')",
	    a->offset);
	for (unsigned i = 0; i < server_own_count(); i++) {
		struct ctl_server s = { .index = i, .host = a->c->srv[i].host,
		    .port = a->c->srv[i].port };
		bool ok;

		if (add_is_new(a, i))
			continue;
		ok = ctl_connect_as(a->c, &s, a->admin_user, a->admin_password) &&
		    ctl_exec(&s, "%s", sql);
		/* Each namespace's copy row of the new server's mark (copy first, 13.6). */
		for (unsigned k = 0; ok && k < a->nns; k++)
			ok = ctl_exec(&s, "INSERT IGNORE INTO idgen_ns_marks (ns, role) VALUES ('%s', "
			    "'o%u')", a->ns[k].name, a->offset);
		if (s.db != NULL)
			ctl_close(&s);
		if (!ok) {
			if (s.error[0] != '\0')
				fprintf(stderr, "idgenctl: the %s server (%s:%u): %s\n",
				    server_name(i), s.host, s.port, s.error);
			return 2;
		}
		ctl_step("others");
	}
	return 0;
}

/* The service user can do there what idserver will do; the settings line to add. */
static int
add_done(struct add *a)
{
	struct ctl_server s = { .index = 0, .host = a->host, .port = a->port };
	int rc = 0;

	if (!ctl_connect_as(a->c, &s, a->c->cfg.db_user, a->c->cfg.db_password)) {
		fprintf(stderr, "idgenctl: the service user cannot use %s:%u (%s); repair: load "
		    "schema/60-grant.sql.in on it, then run this again\n", a->host, a->port,
		    s.error);
		rc = 1;
	}
	if (s.db != NULL)
		ctl_close(&s);
	if (rc != 0)
		return rc;
	printf("tier add-server: o%u (offset %u of %u, region %u, B=%" PRIu64 ") at %s:%u is "
	    "ready\n", a->offset, a->offset, server_increment(), server_region(), a->block_size,
	    a->host, a->port);
	if (a->nns > 0)
		printf("tier add-server: %u namespace%s made on o%u, each above its marks\n",
		    a->nns, a->nns == 1 ? "" : "s", a->offset);
	printf("add it to every idserver of region %u and restart them one at a time:\n"
	    "  more_servers = %s%s%u=%s%s%s:%u\n", server_region(), a->c->cfg.more_servers,
	    a->c->cfg.more_servers[0] ? " " : "", a->offset, strchr(a->host, ':') ? "[" : "",
	    a->host, strchr(a->host, ':') ? "]" : "", a->port);
	return 0;
}

int
ctl_add_server(struct ctl *c, const char *offset, const char *addr)
{
	static struct add a;
	const char *user = getenv("IDGEN_ADMIN_USER");
	const char *pw = getenv("IDGEN_ADMIN_PASSWORD");
	int rc;

	memset(&a, 0, sizeof(a));
	a.c = c;
	a.admin_user = user != NULL && user[0] != '\0' ? user : "root";
	a.admin_password = pw != NULL ? pw : "";
	if (server_region_bits() > 0) {
		fprintf(stderr, "idgenctl: servers beyond the pair need a tier of one region "
		    "(region_bits 0): with regions, a ticket's region is read from its offset\n");
		return 1;
	}
	if (!add_parse(&a, offset, addr))
		return 2;
	if ((rc = add_check_tier(&a)) != 0)
		return rc;
	a.srv.host = a.host;
	a.srv.port = a.port;
	if (!ctl_connect_as(c, &a.srv, a.admin_user, a.admin_password)) {
		fprintf(stderr, "idgenctl: %s:%u as %s (IDGEN_ADMIN_USER): %s\n", a.host, a.port,
		    a.admin_user, a.srv.error);
		return 2;
	}
	rc = add_check_new(&a);
	if (rc == 0)
		rc = add_write_new(&a);
	if (rc == 0)
		rc = add_write_others(&a);
	ctl_close(&a.srv);
	return rc != 0 ? rc : add_done(&a);
}

/* One marks row of the retired server's (ns "" for idgen_marks). */
struct retire_row {
	char		ns[NS_NAME_MAX + 1];
	char		role[16];
	uint64_t	hw, b;
};

/*
 * The rows read, as many as it holds: idgen_ns_marks has max_namespaces x the
 * region's servers, and more, since a dropped namespace's rows stay (the
 * triggers refuse their DELETE, 6.5).
 */
struct retire_rows {
	struct retire_row	*v;
	unsigned		 n, cap;
};

/* The rows of one of its tables (sql: ns, role, high_water, block_size); false on an error. */
static bool
retire_rows(struct ctl_server *s, const char *sql, struct retire_rows *out)
{
	struct ctl_res *res = ctl_query(s, sql);
	struct retire_row r, *v;
	char **row;

	if (res == NULL)
		return false;
	while ((row = ctl_row(res)) != NULL) {
		if (row[1] == NULL || !ctl_u64(row[2], &r.hw) || !ctl_u64(row[3], &r.b) || r.hw == 0)
			continue;
		if (out->n == out->cap) {
			if ((v = realloc(out->v, (out->cap + 64) * sizeof(*v))) == NULL) {
				snprintf(s->error, sizeof(s->error), "out of memory");
				ctl_res_free(res);
				return false;
			}
			out->v = v;
			out->cap += 64;
		}
		snprintf(r.ns, sizeof(r.ns), "%s", row[0] != NULL ? row[0] : "");
		snprintf(r.role, sizeof(r.role), "%s", row[1]);
		out->v[out->n++] = r;
	}
	ctl_res_free(res);
	return true;
}

/*
 * The retired server's copies of the other servers' marks (and its own
 * mark), default and namespaces, raised in ID space on every other server of
 * the region, once every idserver refused it (docs/design.md section 12.5):
 * it was flagged, and each idserver's next check, within recheck_ms of the
 * flag reaching any server, refuses it and writes nothing more to it. A
 * server that is not configured (retired before it was added) holds none.
 * 0, or the exit status with a line on stderr.
 */
static int
retire_carry(struct ctl *c, unsigned long v, const char *user, const char *pw)
{
	struct retire_rows rows = { NULL, 0, 0 };
	struct ctl_server s;
	unsigned self = SERVER_MAX;
	uint64_t b = c->srv[0].block_size;
	bool read;

	for (unsigned i = 0; i < server_own_count(); i++)
		if (server_offset(i) == v)
			self = i;
	/* Rule retire-carry off (the simulation only): the command as it was before. */
	if (self == SERVER_MAX || !RULE_ON(RULE_RETIRE_CARRY))
		return 0;
	ctl_ops->pause(2 * c->cfg.recheck_ms + 1000);
	memset(&s, 0, sizeof(s));
	s.index = self;
	s.host = c->srv[self].host;
	s.port = c->srv[self].port;
	read = ctl_connect_as(c, &s, user, pw) && retire_rows(&s, "SELECT '', role, high_water, "
	    "block_size FROM idgen_marks", &rows) && retire_rows(&s, "SELECT ns, role, "
	    "high_water, block_size FROM idgen_ns_marks", &rows);
	if (s.db != NULL)
		ctl_close(&s);
	if (!read || b == 0) {
		free(rows.v);
		fprintf(stderr, "idgenctl: the %s server (%s:%u) cannot be read (%s): its copies of "
		    "the other servers' marks are not carried yet; run this again once it answers "
		    "(if it never will, see docs/design.md 12.5)\n", server_name(self), s.host,
		    s.port, b == 0 ? "the region's B unknown" : s.error);
		return 2;
	}
	for (unsigned i = 0; i < server_own_count(); i++) {
		struct ctl_server t = { .index = i, .host = c->srv[i].host, .port = c->srv[i].port };
		bool ok;

		if (i == self)
			continue;
		ok = ctl_connect_as(c, &t, user, pw);
		for (unsigned k = 0; ok && k < rows.n; k++) {
			const struct retire_row *r = &rows.v[k];
			uint64_t rb = r->b != 0 ? r->b : b, end = (r->hw + 1) * rb;

			if (r->ns[0] == '\0')
				ok = ctl_exec(&t, "UPDATE idgen_marks SET high_water = %" PRIu64 ", "
				    "block_size = %" PRIu64 " WHERE role = '%s' AND (high_water + 1) * "
				    "IF(block_size = 0, %" PRIu64 ", block_size) < %" PRIu64, r->hw, rb,
				    r->role, b, end);
			else if (r->b != 0)
				ok = ctl_exec(&t, "UPDATE idgen_ns_marks SET high_water = %" PRIu64 ", "
				    "block_size = %" PRIu64 " WHERE ns = '%s' AND role = '%s' AND "
				    "(high_water + 1) * IF(block_size = 0, %" PRIu64 ", block_size) < %"
				    PRIu64, r->hw, rb, r->ns, r->role, rb, end);
		}
		if (t.db != NULL)
			ctl_close(&t);
		if (!ok) {
			free(rows.v);
			fprintf(stderr, "idgenctl: the %s server (%s:%u): %s: the retired server's "
			    "copies are not all carried; run this again\n", server_name(i), t.host,
			    t.port, t.error);
			return 2;
		}
		ctl_step("carry");
	}
	free(rows.v);
	return 0;
}

/*
 * tier retire-server OFFSET: the server's rows flagged retired on every server
 * of the region that holds them, the server itself last (when it answers),
 * then its copies of the others' marks carried to every other server
 * (docs/design.md section 12.5). Idempotent; the rows and marks stay.
 */
int
ctl_retire_server(struct ctl *c, const char *offset)
{
	const char *user = getenv("IDGEN_ADMIN_USER"), *pw = getenv("IDGEN_ADMIN_PASSWORD");
	char *end;
	unsigned long v;
	unsigned done = 0;
	int rc;

	user = user != NULL && user[0] != '\0' ? user : "root";
	errno = 0;
	v = strtoul(offset, &end, 10);
	if (*offset < '0' || *offset > '9' || *end != '\0' || errno != 0 ||
	    v < server_extra_min() || v > server_increment() || server_region_bits() > 0) {
		fprintf(stderr, "idgenctl: offset '%s' must be a server beyond the pair of a tier of "
		    "one region (%u to %u): the pair holds the worker leases\n", offset,
		    server_extra_min(), server_increment());
		return 2;
	}
	for (unsigned i = 0; i < server_own_count(); i++) {
		struct ctl_server s = { .index = i, .host = c->srv[i].host, .port = c->srv[i].port };
		char sql[ADD_SQL_MAX];
		bool ok, self = server_offset(i) == v;

		/* A row made if missing: an offset retired before it was added stays taken. */
		snprintf(sql, sizeof(sql), "INSERT INTO idgen_marks (role, retired) VALUES ('o%lu', 1) "
		    "ON DUPLICATE KEY UPDATE retired = 1", v);
		ok = ctl_connect_as(c, &s, user, pw != NULL ? pw : "") && ctl_exec(&s, "%s", sql);
		if (s.db != NULL)
			ctl_close(&s);
		if (!ok && !self) {
			fprintf(stderr, "idgenctl: the %s server (%s:%u): %s: every server of the "
			    "region keeps the flag; run this again once it answers\n", server_name(i),
			    s.host, s.port, s.error);
			return 2;
		}
		done += ok;
		ctl_step("retire");
	}
	if ((rc = retire_carry(c, v, user, pw != NULL ? pw : "")) != 0)
		return rc;
	printf("tier retire-server: o%lu retired on %u servers, its copies of the others' marks "
	    "carried to them: idservers refuse it at their next check; remove %lu=... from "
	    "more_servers; its offset is never given again\n", v, done, v);
	return 0;
}
