/*
 * ns.c - idgenctl ns create/list/raise/drop: the namespaces' catalogue and
 * tables on every ticket server of the tier (docs/design.md section 13).
 *
 * A namespace is a ticket table tickets_<name> on every server, a catalogue
 * row in idgen_namespaces (B, fallback policy, state) and its marks in
 * idgen_ns_marks, one row per server of the region on every server, as for the
 * default sequence. Creation is two-phase (rows 'creating', then 'ready'), so
 * a killed command leaves nothing an idserver would serve and is run again.
 * Writes need an administrator's account (CREATE TABLE, GRANT, ALTER TABLE):
 * IDGEN_ADMIN_USER (default root) and IDGEN_ADMIN_PASSWORD from the environment.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "layout.h"
#include "state.h"

#define NS_SQL_MAX	2048
#define NS_BLOCK_MIN	UINT64_C(1)	/* one ID per ticket: numbers of human size */
#define NS_ADOPT_MAX	16		/* --start-above-max sources */
#define NS_DROP_IDLE_S	600		/* drop refuses a namespace used this recently */
#define NS_SETTLE_MS	1000		/* adoption reads MAX twice this far apart */
#define NS_SETTLE_MIN	100
#define NS_SETTLE_MAX	600000

struct ns_adopt {
	char		 user[64], password[128], host[64], db[64];
	unsigned	 port;
	const char	*table, *column;
	struct ctl_server s;		/* as the URL's user, in its database */
	uint64_t	 max;		/* MAX(column) at the first read */
};

struct ns {
	struct ctl		*c;
	const char		*name;
	uint64_t		 b;		/* 0: the tier's B */
	const char		*fallback;
	uint64_t		 above;		/* --start-above / --above */
	uint64_t		 margin;	/* --margin: room above MAX for late writers */
	uint64_t		 settle_ms;	/* --settle-ms: between adoption's two reads */
	bool			 force;
	struct ns_adopt		 adopt[NS_ADOPT_MAX];
	unsigned		 nadopt;
	struct ctl_server	 s[SERVER_MAX];	/* as the administrator */
	char			 grantee[160];	/* the service user, as CURRENT_USER() */
};

/* One unsigned value from a query (NULL reads as 0); false on an error. */
static bool
ns_value(struct ctl_server *s, const char *sql, uint64_t *out)
{
	struct ctl_res *res = ctl_query(s, sql);
	char **row;
	bool ok;

	if (res == NULL) {
		fprintf(stderr, "idgenctl: the %s server (%s:%u): %s\n", server_name(s->index),
		    s->host, s->port, s->error);
		return false;
	}
	row = ctl_row(res);
	*out = 0;
	ok = row != NULL && (row[0] == NULL || ctl_u64(row[0], out));
	ctl_res_free(res);
	if (!ok)
		fprintf(stderr, "idgenctl: the %s server: no number from '%.60s'\n",
		    server_name(s->index), sql);
	return ok;
}

/*
 * A new namespace's name: a lower-case word within ns.h's rule, not 'default'
 * (the tier's own sequence).
 */
static bool
ns_new_name_ok(const char *n)
{
	size_t len = strlen(n);

	if (len == 0 || len > NS_NAME_MAX || n[0] < 'a' || n[0] > 'z' ||
	    strcmp(n, "default") == 0)
		return false;
	return strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_") == len;
}

/* A table or column name of an app's shard, as written between backquotes. */
static bool
ns_ident_ok(const char *n)
{
	size_t len = strlen(n);

	return len > 0 && len <= 64 && strspn(n, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$") == len;
}

/*
 * 'mariadb://USER[:PASSWORD]@HOST:PORT/DATABASE'; without a password, the
 * environment's IDGEN_ADOPT_PASSWORD (kept out of ps).
 */
static bool
ns_parse_url(struct ns_adopt *a, const char *url)
{
	const char *pw = getenv("IDGEN_ADOPT_PASSWORD");
	char rest[256];
	int n = 0;

	if (strncmp(url, "mariadb://", 10) != 0 && strncmp(url, "mysql://", 8) != 0)
		return false;
	snprintf(rest, sizeof(rest), "%s", strstr(url, "://") + 3);
	if (sscanf(rest, "%63[^:@]:%127[^@]@%63[^:/]:%u/%63s%n", a->user, a->password, a->host,
	    &a->port, a->db, &n) == 5 && rest[n] == '\0')
		return ns_ident_ok(a->db);
	a->password[0] = '\0';
	if (sscanf(rest, "%63[^:@]@%63[^:/]:%u/%63s%n", a->user, a->host, &a->port, a->db,
	    &n) != 4 || rest[n] != '\0' || !ns_ident_ok(a->db))
		return false;
	snprintf(a->password, sizeof(a->password), "%s", pw != NULL ? pw : "");
	return true;
}

static bool
ns_u64_arg(const char *v, uint64_t *out)
{
	return ctl_u64(v, out);
}

/* The options after NAME; false with a line on stderr. */
static bool
ns_options(struct ns *x, int argc, char **argv)
{
	for (int a = 0; a < argc; a++) {
		const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (strcmp(o, "--force") == 0) {
			x->force = true;
			continue;
		}
		if (v == NULL) {
			/* An option without its value is an error, never ignored (--margin). */
			fprintf(stderr, "idgenctl: '%s' needs a value\n", o);
			return false;
		}
		if (strcmp(o, "--block-size") == 0 && ns_u64_arg(v, &x->b) &&
		    x->b >= NS_BLOCK_MIN && x->b <= LAYOUT_BLOCK_MAX) {
			a++;
		} else if (strcmp(o, "--fallback") == 0 &&
		    (strcmp(v, "snowflake") == 0 || strcmp(v, "refuse") == 0)) {
			x->fallback = v;
			a++;
		} else if (strcmp(o, "--margin") == 0 && ns_u64_arg(v, &x->margin) &&
		    x->margin > 0 && x->margin < (UINT64_C(1) << 53)) {
			a++;
		} else if (strcmp(o, "--settle-ms") == 0 && ns_u64_arg(v, &x->settle_ms) &&
		    x->settle_ms >= NS_SETTLE_MIN && x->settle_ms <= NS_SETTLE_MAX) {
			a++;
		} else if ((strcmp(o, "--start-above") == 0 || strcmp(o, "--above") == 0) &&
		    ns_u64_arg(v, &x->above) && x->above < (UINT64_C(1) << 53)) {
			a++;
		} else if (strcmp(o, "--start-above-max") == 0 && a + 3 < argc &&
		    x->nadopt < NS_ADOPT_MAX && ns_parse_url(&x->adopt[x->nadopt], v) &&
		    ns_ident_ok(argv[a + 2]) && ns_ident_ok(argv[a + 3])) {
			x->adopt[x->nadopt].table = argv[a + 2];
			x->adopt[x->nadopt++].column = argv[a + 3];
			a += 3;
		} else {
			fprintf(stderr, "idgenctl: bad option or value at '%s%s%s' (--block-size "
			    "1..2^32, --fallback snowflake|refuse, --start-above N below 2^53, "
			    "--start-above-max 'mariadb://USER@HOST:PORT/DATABASE' TABLE COLUMN, at "
			    "most %u, --margin N 1..2^53-1, --settle-ms %u..%u)\n", o, v ? " " : "",
			    v ? v : "", NS_ADOPT_MAX, NS_SETTLE_MIN, NS_SETTLE_MAX);
			return false;
		}
	}
	return true;
}

/* MAX(column) of one shard, read on its connection; false with a line on stderr. */
static bool
ns_adopt_read(struct ns_adopt *a, uint64_t *m)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT MAX(`%s`) FROM `%s`.`%s`", a->column, a->db,
	    a->table);
	return ns_value(&a->s, sql, m);
}

/*
 * The largest existing ID: --start-above and MAX(column) of every shard named,
 * each read as the URL's user in the URL's database (an application's user
 * reads nothing else), twice, settle_ms apart. A MAX that moved means a writer
 * still inserts: the IDs it adds after the read would be the namespace's
 * first ones, so that is refused unless --margin leaves room above MAX
 * (docs/design.md section 13.3). 0, or the exit status.
 */
static int
ns_adopt_max(struct ns *x, uint64_t *largest)
{
	uint64_t moved = 0, m;
	int rc = 0;

	*largest = x->above;
	for (unsigned k = 0; k < x->nadopt && rc == 0; k++) {
		struct ns_adopt *a = &x->adopt[k];

		a->s.index = 0;
		a->s.host = a->host;
		a->s.port = a->port;
		if (!ctl_connect_db(x->c, &a->s, a->user, a->password, a->db)) {
			fprintf(stderr, "idgenctl: %s:%u/%s as %s: %s\n", a->host, a->port, a->db,
			    a->user, a->s.error);
			rc = 2;
		} else if (!ns_adopt_read(a, &a->max)) {
			rc = 2;
		}
		memset(a->password, 0, sizeof(a->password));
	}
	if (rc == 0 && x->nadopt > 0)
		usleep((useconds_t)x->settle_ms * 1000);
	for (unsigned k = 0; k < x->nadopt && rc == 0; k++) {
		struct ns_adopt *a = &x->adopt[k];

		if (!ns_adopt_read(a, &m)) {
			rc = 2;
			break;
		}
		printf("ns: %s:%u/%s.%s: MAX(%s) = %" PRIu64 " (read twice, %" PRIu64 " ms apart: "
		    "%s)\n", a->host, a->port, a->db, a->table, a->column, m, x->settle_ms,
		    m == a->max ? "unchanged" : "moved");
		if (m != a->max && x->margin == 0) {
			fprintf(stderr, "idgenctl: %s:%u/%s.%s: MAX(%s) moved from %" PRIu64 " to %"
			    PRIu64 " in %" PRIu64 " ms: a writer still inserts, and the IDs it adds "
			    "after the read would repeat the namespace's; stop the writers and run "
			    "this again, or leave room with --margin N (docs/operations.md, "
			    "Namespaces)\n", a->host, a->port, a->db, a->table, a->column, a->max, m,
			    x->settle_ms);
			rc = 1;
		}
		moved = m > a->max && m - a->max > moved ? m - a->max : moved;
		*largest = m > *largest ? m : *largest;
	}
	for (unsigned k = 0; k < x->nadopt; k++)
		if (x->adopt[k].s.db != NULL) {
			ctl_close(&x->adopt[k].s);
			x->adopt[k].s.db = NULL;
		}
	if (rc != 0 || x->margin == 0)
		return rc;
	if (x->margin <= moved) {
		fprintf(stderr, "idgenctl: --margin %" PRIu64 " is not above what one writer added "
		    "in %" PRIu64 " ms (%" PRIu64 "): it would be used up before the writers "
		    "switch\n", x->margin, x->settle_ms, moved);
		return 1;
	}
	m = *largest;
	*largest = m < (UINT64_C(1) << 53) ? m + x->margin : m;
	printf("ns: --margin %" PRIu64 ": the namespace starts above %" PRIu64 " (the largest "
	    "MAX %" PRIu64 ", the most one moved in %" PRIu64 " ms %" PRIu64 "); the writers "
	    "must switch to it before they reach %" PRIu64 "\n", x->margin, *largest, m,
	    x->settle_ms, moved, *largest);
	return 0;
}

/* Connects to every server of the tier as the administrator; 0 or the exit status. */
static int
ns_connect(struct ns *x)
{
	const char *user = getenv("IDGEN_ADMIN_USER"), *pw = getenv("IDGEN_ADMIN_PASSWORD");

	user = user != NULL && user[0] != '\0' ? user : "root";
	for (unsigned i = 0; i < server_count(); i++) {
		struct ctl_server *s = &x->s[i];

		s->index = i;
		s->host = x->c->srv[i].host;
		s->port = x->c->srv[i].port;
		if (!ctl_connect_as(x->c, s, user, pw != NULL ? pw : "")) {
			fprintf(stderr, "idgenctl: the %s server (%s:%u) as %s (IDGEN_ADMIN_USER): %s: "
			    "a namespace lives on every server of the tier\n", server_name(i), s->host,
			    s->port, user, s->error);
			return 2;
		}
		if (x->c->srv[i].up && x->b == 0)
			x->b = x->c->srv[i].block_size;
	}
	return 0;
}

/* The service user as MariaDB names it (for GRANT), read on its own connection. */
static bool
ns_grantee(struct ns *x)
{
	return ctl_ns_grantee(x->c, x->grantee, sizeof(x->grantee));
}

bool
ctl_ns_grantee(struct ctl *c, char *out, size_t len)
{
	struct ctl_res *res;
	char **row;
	char *at;

	out[0] = '\0';
	if (!c->srv[0].up || (res = ctl_query(&c->srv[0], "SELECT CURRENT_USER()")) == NULL) {
		fprintf(stderr, "idgenctl: the service user cannot read the odd server: %s\n",
		    c->srv[0].error);
		return false;
	}
	row = ctl_row(res);
	/* Quoted below: a name with a quote or backslash is refused, not escaped. */
	if (row != NULL && row[0] != NULL && strpbrk(row[0], "'\\`") == NULL &&
	    (at = strrchr(row[0], '@')) != NULL) {
		*at = '\0';
		snprintf(out, len, "'%s'@'%s'", row[0], at + 1);
	}
	ctl_res_free(res);
	return out[0] != '\0';
}

bool
ctl_ns_table(struct ctl_server *s, const char *ns, const char *grantee)
{
	return ctl_exec(s, "CREATE TABLE IF NOT EXISTS tickets_%s (id BIGINT UNSIGNED NOT NULL "
	    "AUTO_INCREMENT, stub CHAR(1) NOT NULL DEFAULT '', PRIMARY KEY (id), UNIQUE KEY "
	    "stub (stub)) ENGINE=InnoDB", ns) &&
	    ctl_exec(s, "GRANT SELECT, INSERT, DELETE ON tickets_%s TO %s", ns, grantee);
}

/* Adds server s's catalogue row (name, B, policy, start_above) to out; 0 or the exit status. */
static int
ns_ready_row(struct ctl_server *s, const char *verb, char **row, struct ctl_ns_row *out,
    unsigned *count)
{
	uint64_t b, above;
	unsigned k;

	if (strcmp(row[3], "creating") == 0) {
		fprintf(stderr, "idgenctl: tier %s refuses while namespace %s is being created or "
		    "dropped (the %s server's row is 'creating': a killed ns create or drop): finish "
		    "it (idgenctl ns create %s ...) or drop it (idgenctl ns drop %s) first "
		    "(docs/design.md 13.8)\n",
		    verb, row[0], server_name(s->index), row[0], row[0]);
		return 1;
	}
	if (!ctl_u64(row[1], &b) || !ctl_u64(row[4], &above) || b == 0 ||
	    strlen(row[0]) > NS_NAME_MAX || strlen(row[2]) >= sizeof(out->fallback)) {
		fprintf(stderr, "idgenctl: the %s server's catalogue row of %s is not understood\n",
		    server_name(s->index), row[0]);
		return 1;
	}
	for (k = 0; k < *count && strcmp(out[k].name, row[0]) != 0; k++)
		;
	if (k == *count) {
		if (k == CTL_NS_MAX) {
			fprintf(stderr, "idgenctl: more than %u namespaces\n", CTL_NS_MAX);
			return 1;
		}
		memset(&out[k], 0, sizeof(out[k]));
		snprintf(out[k].name, sizeof(out[k].name), "%s", row[0]);
		out[k].b = b;
		snprintf(out[k].fallback, sizeof(out[k].fallback), "%s", row[2]);
		(*count)++;
	} else if (out[k].b != b || strcmp(out[k].fallback, row[2]) != 0) {
		fprintf(stderr, "idgenctl: the servers disagree on namespace %s (B %" PRIu64 " and %"
		    PRIu64 ", fallback %s and %s): tier %s refuses\n", row[0], out[k].b, b,
		    out[k].fallback, row[2], verb);
		return 1;
	}
	out[k].seen++;
	out[k].start_above = above > out[k].start_above ? above : out[k].start_above;
	return 0;
}

int
ctl_ns_ready(struct ctl_server *const *s, unsigned n, const char *verb,
    struct ctl_ns_row *out, unsigned *count)
{
	unsigned listing = 0;
	int rc = 0;

	*count = 0;
	for (unsigned i = 0; i < n && rc == 0; i++) {
		struct ctl_res *res = ctl_query(s[i], "SELECT name, block_size, fallback, state, "
		    "start_above FROM idgen_namespaces WHERE state <> 'dropped' ORDER BY name");
		char **row;

		if (res == NULL) {
			/* A schema without the catalogue has no namespace. */
			if (s[i]->errnum == 1146)
				continue;
			fprintf(stderr, "idgenctl: the %s server (%s:%u): %s\n",
			    server_name(s[i]->index), s[i]->host, s[i]->port, s[i]->error);
			return 2;
		}
		listing++;
		while (rc == 0 && (row = ctl_row(res)) != NULL)
			rc = row[0] && row[1] && row[2] && row[3] && row[4] ?
			    ns_ready_row(s[i], verb, row, out, count) : 1;
		ctl_res_free(res);
	}
	for (unsigned k = 0; rc == 0 && k < *count; k++)
		if (out[k].seen != listing) {
			fprintf(stderr, "idgenctl: namespace %s is ready on %u of %u servers: tier %s "
			    "refuses (idgenctl ns create %s --block-size %" PRIu64 " --fallback %s "
			    "finishes it)\n", out[k].name, out[k].seen, listing, verb, out[k].name,
			    out[k].b, out[k].fallback);
			rc = 1;
		}
	return rc;
}

bool
ctl_ns_end(struct ctl_server *s, const char *ns, uint64_t b, bool counter, uint64_t *end)
{
	char sql[NS_SQL_MAX];

	snprintf(sql, sizeof(sql), "SELECT GREATEST(COALESCE(MAX((high_water + 1) * "
	    "IF(block_size = 0, %" PRIu64 ", block_size)), 0), %s%s%s%" PRIu64 ") FROM "
	    "idgen_ns_marks WHERE ns = '%s'", b, counter ? "COALESCE((SELECT AUTO_INCREMENT FROM "
	    "information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = "
	    "'tickets_" : "", counter ? ns : "", counter ? "'), 0) * " : "0 * ", b, ns);
	return ns_value(s, sql, end);
}

/*
 * The catalogue rows as the servers hold them: 0 none anywhere, 1 some
 * 'creating' (or none on some servers), 2 'ready' everywhere, 3 'dropped';
 * -1 when they disagree on B or policy (the command stops).
 */
static int
ns_state(struct ns *x, uint64_t *b, char *fallback, size_t flen)
{
	int seen = 0, ready = 0, dropped = 0;
	char sql[NS_SQL_MAX];

	*b = 0;
	snprintf(sql, sizeof(sql), "SELECT block_size, fallback, state FROM idgen_namespaces "
	    "WHERE name = '%s'", x->name);
	for (unsigned i = 0; i < server_count(); i++) {
		struct ctl_res *res = ctl_query(&x->s[i], sql);
		char **row;
		uint64_t rb;

		if (res == NULL) {
			fprintf(stderr, "idgenctl: the %s server: %s (load schema/10-tables.sql)\n",
			    server_name(i), x->s[i].error);
			return -1;
		}
		if ((row = ctl_row(res)) != NULL && ctl_u64(row[0], &rb) && row[1] && row[2]) {
			if (*b != 0 && (rb != *b || strcmp(fallback, row[1]) != 0)) {
				ctl_res_free(res);
				fprintf(stderr, "idgenctl: the servers disagree on namespace %s (B %" PRIu64
				    " and %" PRIu64 ")\n", x->name, *b, rb);
				return -1;
			}
			*b = rb;
			snprintf(fallback, flen, "%s", row[1]);
			seen++;
			ready += strcmp(row[2], "ready") == 0;
			dropped += strcmp(row[2], "dropped") == 0;
		}
		ctl_res_free(res);
	}
	if (seen == 0)
		return 0;
	if (ready == (int)server_count())
		return 2;
	return dropped == (int)server_count() ? 3 : 1;
}

/*
 * A rerun of a create keeps the largest ID an earlier run was given, though
 * its options left it out (the catalogue rows' start_above).
 */
static bool
ns_kept_above(struct ns *x, uint64_t *largest)
{
	char sql[NS_SQL_MAX];
	uint64_t v;

	snprintf(sql, sizeof(sql), "SELECT MAX(start_above) FROM idgen_namespaces WHERE name = "
	    "'%s' AND state = 'creating'", x->name);
	for (unsigned i = 0; i < server_count(); i++) {
		if (!ns_value(&x->s[i], sql, &v))
			return false;
		*largest = v > *largest ? v : *largest;
	}
	return true;
}

/* Phase one on each server: the catalogue row 'creating', the table, its marks rows. */
static int
ns_create_rows(struct ns *x)
{
	for (unsigned i = 0; i < server_count(); i++) {
		struct ctl_server *s = &x->s[i];
		unsigned first, count;

		if (!ctl_exec(s, "INSERT IGNORE INTO idgen_namespaces (name, block_size, fallback, "
		    "state, start_above) VALUES ('%s', %" PRIu64 ", '%s', 'creating', %" PRIu64 ")",
		    x->name, x->b, x->fallback, x->above) ||
		    !ctl_exec(s, "UPDATE idgen_namespaces SET start_above = GREATEST(start_above, %"
		    PRIu64 ") WHERE name = '%s' AND state <> 'ready'", x->above, x->name) ||
		    !ctl_exec(s, "UPDATE idgen_namespaces SET state = 'creating', block_size = %" PRIu64
		    ", fallback = '%s' WHERE name = '%s' AND state = 'dropped'", x->b, x->fallback,
		    x->name) ||
		    !ctl_ns_table(s, x->name, x->grantee))
			return 2;
		server_group(i, &first, &count);
		for (unsigned j = first; j < first + count; j++)
			if (!ctl_exec(s, "INSERT IGNORE INTO idgen_ns_marks (ns, role) VALUES ('%s', "
			    "'%s')", x->name, server_role(j)))
				return 2;
		ctl_step("rows");
	}
	return 0;
}

/*
 * Server i's first ticket of tickets_<name> at or above t (at = 0: its
 * counter as it is), rounded up to the server's residue, as REPLACE INTO will
 * draw it; false on an error.
 */
static bool
ns_first_ticket(struct ns *x, unsigned i, uint64_t at, uint64_t *first)
{
	char sql[NS_SQL_MAX];
	struct ctl_res *res;
	char **row;
	uint64_t inc, off, c;
	bool ok;

	snprintf(sql, sizeof(sql), "SELECT @@auto_increment_increment, @@auto_increment_offset, "
	    "(SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
	    "DATABASE() AND TABLE_NAME = 'tickets_%s')", x->name);
	if ((res = ctl_query(&x->s[i], sql)) == NULL) {
		fprintf(stderr, "idgenctl: the %s server: %s\n", server_name(i), x->s[i].error);
		return false;
	}
	row = ctl_row(res);
	ok = row != NULL && ctl_u64(row[0], &inc) && ctl_u64(row[1], &off) && inc > 0 &&
	    (at > 0 || ctl_u64(row[2], &at));
	ctl_res_free(res);
	if (!ok) {
		fprintf(stderr, "idgenctl: the %s server: no counter of tickets_%s\n",
		    server_name(i), x->name);
		return false;
	}
	c = at;
	/* MariaDB draws offset + k * increment (an offset above the increment is ignored). */
	off = off > inc ? 1 : off;
	*first = c <= off ? off : off + (c - off + inc - 1) / inc * inc;
	return true;
}

/*
 * Every server's marks at least at ticket t0 - 1, then every counter at its
 * first ticket at or above t0: the first ID issued is t0 * B or above
 * (docs/design.md section 13.3). The marks only rise; t0 is raised above any
 * mark already held, in ID space (a re-created name). A create (empty set)
 * empties each kept table first, whose counter counts tickets of the old B.
 */
static int
ns_set_floor(struct ns *x, uint64_t t0, bool empty)
{
	char sql[NS_SQL_MAX];
	uint64_t end, first;

	snprintf(sql, sizeof(sql), "SELECT MAX((high_water + 1) * IF(block_size = 0, %" PRIu64
	    ", block_size)) FROM idgen_ns_marks WHERE ns = '%s'", x->b, x->name);
	for (unsigned i = 0; i < server_count(); i++) {
		if (!ns_value(&x->s[i], sql, &end))
			return 2;
		if (end > 0 && (end + x->b - 1) / x->b > t0)
			t0 = (end + x->b - 1) / x->b;
	}
	/* Room for a ticket of every offset below 2^53 (B may be below the layout's minimum). */
	if (t0 + SERVER_INCREMENT_MAX + 1 > (UINT64_C(1) << 53) / x->b) {
		fprintf(stderr, "idgenctl: ticket %" PRIu64 " of B=%" PRIu64 " leaves no room below "
		    "2^53\n", t0, x->b);
		return 1;
	}
	/*
	 * Every mark first: the marks bind, so no counter is below them meanwhile.
	 * One row a statement: a statement raising two rows took them in the other
	 * order than an idserver's ticket transaction (own row, then the copies)
	 * and lost every deadlock under load (docs/design.md 13.3).
	 */
	for (unsigned i = 0; i < server_count(); i++) {
		unsigned f, n;

		server_group(i, &f, &n);
		for (unsigned j = f; j < f + n; j++)
			if (!ctl_exec(&x->s[i], "UPDATE idgen_ns_marks SET high_water = %" PRIu64
			    ", block_size = %" PRIu64 " WHERE ns = '%s' AND role = '%s' AND "
			    "(high_water + 1) * IF(block_size = 0, %" PRIu64 ", block_size) < %" PRIu64,
			    t0 - 1, x->b, x->name, server_role(j), x->b, t0 * x->b))
				return 2;
	}
	for (unsigned i = 0; i < server_count(); i++) {
		if ((empty && !ctl_exec(&x->s[i], "DELETE FROM tickets_%s", x->name)) ||
		    !ns_first_ticket(x, i, t0, &first) ||
		    !ctl_exec(&x->s[i], "ALTER TABLE tickets_%s AUTO_INCREMENT = %" PRIu64, x->name,
		    first))
			return 2;
		ctl_step("floor");
	}
	x->above = t0 * x->b;
	return 0;
}

/* The lowest ID the namespace can issue, from every server's counter as it is. */
static bool
ns_first_id(struct ns *x, uint64_t *id, char *per, size_t len)
{
	size_t n = 0;

	*id = UINT64_MAX;
	for (unsigned i = 0; i < server_count(); i++) {
		uint64_t first;
		int k;

		if (!ns_first_ticket(x, i, 0, &first))
			return false;
		*id = first * x->b < *id ? first * x->b : *id;
		k = snprintf(per + n, len - n, "%s%s %" PRIu64, i ? ", " : "", server_role(i), first);
		n = k < 0 ? n : n + (size_t)k < len ? n + (size_t)k : len - 1;
	}
	return true;
}

static int
ns_create(struct ns *x)
{
	char fallback[16] = "", per[256];
	uint64_t largest, b, first;
	int st = ns_state(x, &b, fallback, sizeof(fallback)), rc;

	if (st < 0)
		return st == -1 ? 1 : 2;
	if (st == 2) {
		printf("ns create: %s exists (B=%" PRIu64 ", fallback %s)\n", x->name, b, fallback);
		return b == x->b && strcmp(fallback, x->fallback) == 0 ? 0 : 1;
	}
	if (st == 1 && (b != x->b || strcmp(fallback, x->fallback) != 0)) {
		fprintf(stderr, "idgenctl: a create of %s with B=%" PRIu64 " and fallback %s is "
		    "unfinished: run it again with those, or drop it\n", x->name, b, fallback);
		return 1;
	}
	if ((rc = ns_adopt_max(x, &largest)) != 0)
		return rc;
	if (!ns_grantee(x) || !ns_kept_above(x, &largest))
		return 2;
	if (largest >= (UINT64_C(1) << 53)) {
		fprintf(stderr, "idgenctl: the largest existing ID %" PRIu64 " is not below 2^53: no "
		    "ticket ID can be above it\n", largest);
		return 1;
	}
	x->above = largest;
	if ((rc = ns_create_rows(x)) != 0 || (rc = ns_set_floor(x, largest / x->b + 1, true)) != 0)
		return rc;
	/* Read back: the true first ID, whatever a stale idserver drew meanwhile. */
	if (!ns_first_id(x, &first, per, sizeof(per)))
		return 2;
	for (unsigned i = 0; i < server_count(); i++) {
		if (!ctl_exec(&x->s[i], "UPDATE idgen_namespaces SET state = 'ready' WHERE name = "
		    "'%s' AND state = 'creating'", x->name))
			return 2;
		ctl_step("ready");
	}
	printf("ns create: %s ready on %u servers (B=%" PRIu64 ", fallback %s): its first ID is "
	    "%" PRIu64 " (first tickets: %s)%s\n", x->name, server_count(), x->b, x->fallback,
	    first, per, x->above > (largest / x->b + 1) * x->b ? ", above its old IDs" :
	    largest > 0 ? ", above every existing one" : "");
	return 0;
}

/* Forward only: the namespace's next ID moves above N, never back. */
static int
ns_raise(struct ns *x)
{
	char fallback[16] = "", sql[NS_SQL_MAX];
	uint64_t b, end = 0, e;
	int st = ns_state(x, &b, fallback, sizeof(fallback));

	if (st != 2) {
		fprintf(stderr, "idgenctl: namespace %s is not ready on every server\n", x->name);
		return 1;
	}
	x->b = b;
	snprintf(sql, sizeof(sql), "SELECT GREATEST(COALESCE(MAX((high_water + 1) * "
	    "IF(block_size = 0, %" PRIu64 ", block_size)), 0), (SELECT AUTO_INCREMENT FROM "
	    "information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = "
	    "'tickets_%s') * %" PRIu64 ") FROM idgen_ns_marks WHERE ns = '%s'", b, x->name, b,
	    x->name);
	for (unsigned i = 0; i < server_count(); i++) {
		if (!ns_value(&x->s[i], sql, &e))
			return 2;
		end = e > end ? e : end;
	}
	if (x->above + 1 < end) {
		fprintf(stderr, "idgenctl: namespace %s may already have issued IDs up to %" PRIu64
		    ": --above %" PRIu64 " would move it back (raise only moves forward)\n", x->name,
		    end - 1, x->above);
		return 1;
	}
	if (ns_set_floor(x, x->above / b + 1, false) != 0)
		return 2;
	/* Last: idservers then let go of buffered IDs at or below it (docs/design.md 13.6). */
	for (unsigned i = 0; i < server_count(); i++)
		if (!ctl_exec(&x->s[i], "UPDATE idgen_namespaces SET start_above = GREATEST("
		    "start_above, %" PRIu64 ") WHERE name = '%s'", x->above - 1, x->name))
			return 2;
	printf("ns raise: %s: its next ID is at least %" PRIu64 " (idservers let go of buffered "
	    "IDs below it within recheck_ms)\n", x->name, x->above);
	return 0;
}

/* Marks kept, rows 'dropped': a name never comes back with lower counters. */
static int
ns_drop(struct ns *x)
{
	char fallback[16] = "", sql[NS_SQL_MAX];
	uint64_t b, recent;
	int st = ns_state(x, &b, fallback, sizeof(fallback));

	if (st == 0) {
		fprintf(stderr, "idgenctl: no namespace %s\n", x->name);
		return 1;
	}
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM idgen_ns_marks WHERE ns = '%s' AND "
	    "used_at > NOW() - INTERVAL %d SECOND", x->name, NS_DROP_IDLE_S);
	for (unsigned i = 0; i < server_count() && !x->force; i++) {
		if (!ns_value(&x->s[i], sql, &recent))
			return 2;
		if (recent > 0) {
			fprintf(stderr, "idgenctl: namespace %s took tickets on the %s server within "
			    "%d s: an idserver may use it; --force drops it anyway\n", x->name,
			    server_name(i), NS_DROP_IDLE_S);
			return 1;
		}
	}
	/*
	 * Two steps, as create's (docs/design.md 13.3): every row out of 'ready'
	 * first ('creating': still read by idservers, never served), then
	 * 'dropped'. A killed drop never leaves a row 'dropped' beside one
	 * 'ready': idservers do not read a dropped row, so the copies of the
	 * other servers' marks it keeps would be hidden while the name is
	 * served from them.
	 */
	for (unsigned i = 0; i < server_count(); i++) {
		if (!ctl_exec(&x->s[i], "UPDATE idgen_namespaces SET state = 'creating' WHERE name = "
		    "'%s' AND state = 'ready'", x->name))
			return 2;
		ctl_step("unready");
	}
	for (unsigned i = 0; i < server_count(); i++) {
		if (!ctl_exec(&x->s[i], "UPDATE idgen_namespaces SET state = 'dropped' WHERE name = "
		    "'%s'", x->name))
			return 2;
		ctl_step("dropped");
	}
	printf("ns drop: %s dropped on %u servers (its table and marks kept: a re-create starts "
	    "above them)\n", x->name, server_count());
	return 0;
}

/* One line per namespace: B, policy, state, and per server its counter and own mark. */
static int
ns_list(struct ns *x)
{
	struct ctl_res *res = ctl_query(&x->s[0], "SELECT n.name, n.block_size, n.fallback, n.state, "
	    "(SELECT MAX(high_water) FROM idgen_ns_marks m WHERE m.ns = n.name) FROM "
	    "idgen_namespaces n ORDER BY n.name");
	char **row;

	if (res == NULL) {
		fprintf(stderr, "idgenctl: the odd server: %s\n", x->s[0].error);
		return 2;
	}
	printf("%-20s %10s %-9s %-8s %12s\n", "name", "B", "fallback", "state", "top mark");
	printf("%-20s %10" PRIu64 " %-9s %-8s %12s\n", "default", x->c->srv[0].block_size,
	    "snowflake", "ready", "-");
	while ((row = ctl_row(res)) != NULL)
		printf("%-20s %10s %-9s %-8s %12s\n", row[0], row[1], row[2], row[3],
		    row[4] ? row[4] : "0");
	ctl_res_free(res);
	return 0;
}

int
ctl_ns(struct ctl *c, int argc, char **argv)
{
	static struct ns x;
	const char *verb = argc > 0 ? argv[0] : "";
	int rc;

	memset(&x, 0, sizeof(x));
	x.c = c;
	x.fallback = "snowflake";
	x.settle_ms = NS_SETTLE_MS;
	x.name = argc > 1 ? argv[1] : "";
	if (strcmp(verb, "list") != 0 && !ns_new_name_ok(x.name)) {
		fprintf(stderr, "idgenctl: a namespace's name is a lower-case letter, then up to %d "
		    "letters, digits or '_' ('default' is the tier's own)\n", NS_NAME_MAX - 1);
		return 2;
	}
	if (!ns_options(&x, argc - 2 > 0 ? argc - 2 : 0, argv + 2))
		return 2;
	if (strcmp(verb, "raise") == 0 && (argc < 4 || strcmp(argv[2], "--above") != 0)) {
		fprintf(stderr, "idgenctl: ns raise NAME --above N\n");
		return 2;
	}
	/*
	 * A server of the region the config lacks would keep a dropped name
	 * 'ready', or its old B under a re-created one, and serve it alone
	 * (docs/design.md 13.8; idsim seed 2187).
	 */
	for (unsigned i = 0; strcmp(verb, "list") != 0 && i < server_count(); i++)
		if (c->srv[i].unknown[0] != '\0') {
			fprintf(stderr, "idgenctl: the %s server's idgen_marks names server %s, which the "
			    "config does not list: a namespace lives on every server of the region, "
			    "so ns %s refuses; add it to more_servers (once tier add-server completed "
			    "for it), or retire it (idgenctl tier retire-server) if it never will be "
			    "(docs/design.md 13.8)\n", server_name(i), c->srv[i].unknown, verb);
			return 1;
		}
	rc = ns_connect(&x);
	if (rc == 0 && x.b == 0)
		rc = 2;
	if (rc == 0)
		rc = strcmp(verb, "create") == 0 ? ns_create(&x) : strcmp(verb, "raise") == 0 ?
		    ns_raise(&x) : strcmp(verb, "drop") == 0 ? ns_drop(&x) : ns_list(&x);
	for (unsigned i = 0; i < server_count(); i++)
		if (x.s[i].db != NULL)
			ctl_close(&x.s[i]);
	return rc;
}
