/*
 * check.c - decide whether a ticket server, and each of its tickets, can be trusted.
 */
#include "check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "rules.h"
#include "server.h"

static const char *check_where(unsigned server);
static bool	check_tier_shape(const struct check_server_info *in, unsigned server, char *why,
		    size_t whylen);

/* Strict decimal parse of a whole string: no sign, no space, no overflow. */
bool
check_uint(const char *s, uint64_t *out)
{
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return *end == '\0' && errno == 0;
}

/* Formats the refusal into why; false, for the caller to return. */
bool
check_fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return false;
}

/* MariaDB >= 10.2.4 or MySQL >= 8.0 keep the auto-increment counter across restarts. */
bool
check_version(const char *version)
{
	unsigned major = 0, minor = 0, patch = 0;

	if (version == NULL || sscanf(version, "%u.%u.%u", &major, &minor, &patch) < 2)
		return false;
	if (strstr(version, "MariaDB") != NULL) {
		if (major != 10)
			return major > 10;
		if (minor != 2)
			return minor > 2;
		return patch >= 4;
	}
	return major >= 8;
}

const struct check_right check_rights[] = {
	{ "EXPLAIN REPLACE INTO tickets64 (stub) VALUES ('a')", "SELECT, INSERT, DELETE",
	    "tickets64" },
	{ "EXPLAIN UPDATE idgen_marks SET high_water = high_water WHERE role = 'odd'",
	    "SELECT, UPDATE", "idgen_marks" },
	{ "EXPLAIN UPDATE idgen_leases SET window_end = window_end WHERE worker = 0",
	    "SELECT, UPDATE", "idgen_leases" },
};
const size_t check_rights_count = sizeof(check_rights) / sizeof(check_rights[0]);

/* The settings that name a server's address. */
static const char *
check_where(unsigned server)
{
	return server < SERVER_PAIR ? "odd_host/odd_port/even_host/even_port" :
	    server_is_own(server) ? "more_servers" : "other_regions";
}

/*
 * The tier's shape in the meta row agrees with the settings (docs/design.md
 * section 12): M, the offset of the role in our region, the region and the
 * worker bits given to regions.
 */
static bool
check_tier_shape(const struct check_server_info *in, unsigned server, char *why,
    size_t whylen)
{
	uint64_t v, bits;

	if (!check_uint(in->tier_increment, &v) || v != server_increment())
		return check_fail(why, whylen, "idgen_meta.tier_increment is %s but "
		    "tier_increment is set to %u",
		    in->tier_increment ? in->tier_increment : "NULL", server_increment());
	if (!check_uint(in->server_offset, &v) || v != server_offset(server))
		return check_fail(why, whylen, "idgen_meta.server_offset is %s but it is "
		    "configured as the %s server (offset %u; load schema/20-%s.sql, or check "
		    "%s)", in->server_offset ? in->server_offset : "NULL", server_name(server),
		    server_offset(server), server_parity(server), check_where(server));
	if (!check_uint(in->region_bits, &bits) || !check_uint(in->region, &v) ||
	    bits != server_region_bits() || v != server_region_at(server))
		return check_fail(why, whylen, "idgen_meta.region is %s with region_bits %s, "
		    "but it is configured as a server of region %u with region_bits %u (check "
		    "%s)", in->region ? in->region : "NULL",
		    in->region_bits ? in->region_bits : "NULL", server_region_at(server),
		    server_region_bits(), check_where(server));
	return true;
}

/*
 * A ticket table's counter survives a crash only on InnoDB (docs/design.md
 * 2.3): the same rule, and the same words, for tickets64 and every
 * namespace's tickets_N (13.6).
 */
bool
check_engine(const char *db, const char *table, const char *engine, char *why, size_t whylen)
{
	if (engine != NULL && strcmp(engine, "InnoDB") == 0)
		return true;
	if (engine == NULL || engine[0] == '\0' || strcmp(engine, "-") == 0)
		snprintf(why, whylen, "ticket table %s%s%s is missing or has no engine, must be "
		    "InnoDB", db ? db : "", db ? "." : "", table);
	else
		snprintf(why, whylen, "ticket table %s%s%s uses engine %s, must be InnoDB (a "
		    "counter that survives a crash); repair: ALTER TABLE %s%s%s ENGINE=InnoDB",
		    db ? db : "", db ? "." : "", table, engine, db ? db : "", db ? "." : "", table);
	return false;
}

bool
check_table(const struct check_table *in, char *why, size_t whylen)
{
	const char *db = in->database, *dot = db != NULL ? "." : "";
	int j = in->missing;

	if (in->engine == NULL || in->engine[0] == '\0' || strcmp(in->engine, "-") == 0 ||
	    !in->counter)
		return check_fail(why, whylen, "ticket table %s%s%s is missing or has no "
		    "AUTO_INCREMENT counter (%s)", db != NULL ? db : "", dot, in->table, in->repair);
	if (!check_engine(db, in->table, in->engine, why, whylen))
		return false;
	if (j >= 0 && (unsigned)j == in->own)
		return check_fail(why, whylen, "%s lacks its own row '%s' for %s or its "
		    "block_size (%s)", in->marks, server_role(in->own), in->table, in->repair);
	if (j >= 0)
		return check_fail(why, whylen, "%s lacks the row '%s' for %s (the copy of the "
		    "%s server's mark) or its block_size (%s)", in->marks, server_role((unsigned)j),
		    in->table, server_name((unsigned)j), in->repair);
	return true;
}

/*
 * One layout for every region of a tier: two regions that list each other
 * nowhere never compare their B or region bits, so neither may be a region's
 * choice (docs/design.md section 12.3).
 */
bool
check_region_layout(uint64_t region_bits, uint64_t block_size, bool meta, char *why,
    size_t whylen)
{
	if (region_bits == 0 ||
	    (region_bits == LAYOUT_REGION_BITS &&
	    (block_size == LAYOUT_REGION_BLOCK || (!meta && block_size == 0))))
		return true;
	return check_fail(why, whylen, "%s region_bits %llu and block_size %llu, but a tier "
	    "of regions has region_bits %d and B = %llu in every region (regions that do not "
	    "see each other cannot compare theirs: docs/design.md section 12.3); repair: %s",
	    meta ? "idgen_meta has" : "the config sets", (unsigned long long)region_bits,
	    (unsigned long long)block_size, LAYOUT_REGION_BITS,
	    (unsigned long long)LAYOUT_REGION_BLOCK, meta ?
	    "set the region up fresh with both (on a server that has issued no ticket: UPDATE "
	    "idgen.idgen_meta SET region_bits = 5, block_size = 1048576)" :
	    "set region_bits = 5 (or 0, a tier of one region) and block_size = 0 or 1048576");
}

/* Every setting uniqueness depends on, with a message that names it. */
bool
check_server(const struct check_server_info *in, unsigned server, uint64_t *block_size,
    char *why, size_t whylen)
{
	const char *name = server_name(server);
	uint64_t v;

	if (!check_version(in->version))
		return check_fail(why, whylen, "server version '%s' lacks a persistent "
		    "auto-increment counter (need MariaDB >= 10.2.4 or MySQL >= 8.0)",
		    in->version ? in->version : "?");
	if (!check_uint(in->increment, &v) || v != server_increment())
		return check_fail(why, whylen, "auto_increment_increment is %s, must be %u "
		    "(repair: set auto_increment_increment = %u in the server's my.cnf and "
		    "restart it)", in->increment ? in->increment : "NULL", server_increment(),
		    server_increment());
	if (!check_uint(in->offset, &v) || v != server_offset(server))
		return check_fail(why, whylen, "auto_increment_offset is %s, the %s server "
		    "needs %u", in->offset ? in->offset : "NULL", name, server_offset(server));
	if (!check_uint(in->flush_at_commit, &v) || v != 1)
		return check_fail(why, whylen, "innodb_flush_log_at_trx_commit "
		    "is %s, must be 1", in->flush_at_commit ? in->flush_at_commit : "NULL");
	if (!check_uint(in->layout_version, &v) || v != LAYOUT_VERSION)
		return check_fail(why, whylen, "idgen_meta.layout_version is %s, this build "
		    "uses %d", in->layout_version ? in->layout_version : "NULL",
		    LAYOUT_VERSION);
	if (in->parity == NULL || strcmp(in->parity, server_parity(server)) != 0)
		return check_fail(why, whylen, "idgen_meta.parity is '%s' but it is "
		    "configured as the %s server (check %s)", in->parity ? in->parity : "NULL",
		    name, check_where(server));
	if (!check_tier_shape(in, server, why, whylen))
		return false;
	if (!check_uint(in->block_size, &v) || v < LAYOUT_BLOCK_MIN || v > LAYOUT_BLOCK_MAX)
		return check_fail(why, whylen, "idgen_meta.block_size is %s, must be "
		    "%llu..%llu", in->block_size ? in->block_size : "NULL",
		    (unsigned long long)LAYOUT_BLOCK_MIN, (unsigned long long)LAYOUT_BLOCK_MAX);
	/* check_tier_shape parsed region_bits and found it equal to the setting. */
	if (RULE_ON(RULE_REGION_LAYOUT) &&
	    !check_region_layout(server_region_bits(), v, true, why, whylen))
		return false;
	*block_size = v;
	return true;
}

/* The next ticket is at least the counter's value: it must exceed the mark. */
bool
check_counter(uint64_t next, uint64_t mark)
{
	return next > mark;
}

/*
 * Names the numbers and the one statement that puts the counter of a ticket
 * table (tickets64, a namespace's tickets_N) above the mark.
 */
void
check_regressed_msg(char *buf, size_t len, const char *name, const char *db,
    const char *table, uint64_t next, uint64_t mark, const char *where)
{
	snprintf(buf, len, "counter regressed: next ticket %llu is not above the high-water "
	    "mark %llu %s; tickets up to %llu were already used (TRUNCATE, re-created table, "
	    "restored backup or replica?); repair: on the %s server run ALTER TABLE "
	    "%s.%s AUTO_INCREMENT = %llu", (unsigned long long)next,
	    (unsigned long long)mark, where, (unsigned long long)mark, name, db, table,
	    (unsigned long long)mark + 1);
}

/*
 * A ticket must have its server's residue, exceed the mark, and fit below
 * 2^53 in its own B (a namespace's B_N may be below the default's least B;
 * the default's B was bounded by check_server).
 */
enum check_ticket
check_ticket(uint64_t ticket, uint64_t mark, unsigned server, uint64_t block_size)
{
	if (!server_owns_ticket(server, ticket))
		return CHECK_TICKET_PARITY;
	if (!check_counter(ticket, mark))
		return CHECK_TICKET_REGRESSED;
	if (block_size == 0 || ticket >= LAYOUT_TICKET_LIMIT / block_size)
		return CHECK_TICKET_LIMIT;
	return CHECK_TICKET_OK;
}
