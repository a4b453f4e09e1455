/*
 * read.c - what idgenctl's commands share about a server: read as the service
 * user (ctl_read: the check query's settings and meta row, its marks rows,
 * its lease rows, its rights, its guard triggers, the time), for tier status,
 * tier check and add-server (docs/design.md section 12). The commands call
 * it; it calls only conn.c's queries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ctl.h"
#include "layout.h"

static const char ctl_check_sql[] =
    "SELECT @@version, @@GLOBAL.auto_increment_increment, "
    "@@GLOBAL.auto_increment_offset, @@GLOBAL.innodb_flush_log_at_trx_commit, "
    "(SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
    "AND TABLE_NAME = 'tickets64'), layout_version, block_size, parity, server_uuid, "
    "(SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
    "AND TABLE_NAME = 'tickets64'), tier_increment, server_offset, region, region_bits, "
    "tier_generation, tier_floor, tier_plan FROM idgen_meta WHERE one = 1";

/*
 * The schema's guard triggers (docs/design.md 6.5): the database refuses a
 * lowered mark or a lease window moved back by hand only while they exist.
 */
const struct ctl_guard ctl_guards[] = {
	{ "idgen_marks_no_lower", "10-tables.sql", "a mark lowered by hand" },
	{ "idgen_marks_no_delete", "10-tables.sql", "a mark row deleted" },
	{ "idgen_ns_marks_no_lower", "10-tables.sql", "a namespace's mark lowered by hand" },
	{ "idgen_ns_marks_no_delete", "10-tables.sql", "a namespace's mark row deleted" },
	{ "idgen_leases_no_free", "40-leases.sql", "a held worker freed or its window moved "
	    "back by hand" },
	{ "idgen_leases_no_delete", "40-leases.sql", "a held worker's lease row deleted" },
};
const unsigned ctl_guards_count = sizeof(ctl_guards) / sizeof(ctl_guards[0]);

/* The check query: settings, meta row, counter. */
static bool
ctl_read_meta(struct ctl_server *s)
{
	struct ctl_res *res = ctl_query(s, ctl_check_sql);
	char **row;

	if (res == NULL)
		return false;
	row = ctl_row(res);
	if (row == NULL || ctl_fields(res) != F_COUNT) {
		snprintf(s->error, sizeof(s->error), "idgen_meta has no row (load schema/)");
		ctl_res_free(res);
		return false;
	}
	for (unsigned i = 0; i < F_COUNT; i++) {
		s->null[i] = row[i] == NULL;
		snprintf(s->field[i], sizeof(s->field[i]), "%s", row[i] ? row[i] : "");
	}
	ctl_res_free(res);
	if (!ctl_u64(s->field[F_BLOCK], &s->block_size))
		s->block_size = 0;
	if (!ctl_u64(s->field[F_COUNTER], &s->counter))
		s->counter = 0;
	return true;
}

/* The server of s's region whose marks row is role; false for none known. */
static bool
ctl_by_role(const struct ctl_server *s, const char *role, unsigned *index)
{
	unsigned first, count;

	server_group(s->index, &first, &count);
	for (unsigned k = 0; k < count; k++)
		if (strcmp(server_role(first + k), role) == 0) {
			*index = first + k;
			return true;
		}
	return false;
}

/* Its marks: its own row and its copies of the other servers' rows. */
static bool
ctl_read_marks(struct ctl_server *s)
{
	struct ctl_res *res = ctl_query(s, "SELECT role, high_water, block_size, generation, sealed, "
	    "retired FROM idgen_marks");
	char **row;
	unsigned i;
	uint64_t sealed;

	if (res == NULL)
		return false;
	while ((row = ctl_row(res)) != NULL) {
		/* A server of the region the config lacks (an addition not configured yet). */
		if (row[0] != NULL && !ctl_by_role(s, row[0], &i) && row[5] != NULL &&
		    strcmp(row[5], "0") == 0 && s->unknown[0] == '\0')
			snprintf(s->unknown, sizeof(s->unknown), "%.15s", row[0]);
		if (row[0] == NULL || !ctl_by_role(s, row[0], &i))
			continue;
		if (row[5] == NULL || strcmp(row[5], "0") != 0)
			s->retired |= UINT64_C(1) << i;
		if (i == s->index) {
			s->sealed = !ctl_u64(row[4], &sealed) || sealed != 0;
			if (!ctl_u64(row[3], &s->own_gen))
				s->own_gen = UINT64_MAX;
		}
		s->has_mark[i] = ctl_u64(row[1], &s->mark[i].high_water) &&
		    ctl_u64(row[2], &s->mark[i].block_size);
	}
	ctl_res_free(res);
	return true;
}

static bool
ctl_read_leases(struct ctl_server *s)
{
	struct ctl_res *res = ctl_query(s, "SELECT worker, holder, window_start, window_end "
	    "FROM idgen_leases ORDER BY worker");
	char **row;
	uint64_t w;

	if (res == NULL)
		return false;
	s->lease = calloc(CTL_MAX_LEASES, sizeof(*s->lease));
	if (s->lease == NULL) {
		ctl_res_free(res);
		snprintf(s->error, sizeof(s->error), "out of memory");
		return false;
	}
	while ((row = ctl_row(res)) != NULL && s->nlease < CTL_MAX_LEASES) {
		struct ctl_lease *l = &s->lease[s->nlease];

		if (!ctl_u64(row[0], &w) || !ctl_u64(row[2], &l->window_start) ||
		    !ctl_u64(row[3], &l->window_end))
			continue;
		l->worker = (unsigned)w;
		snprintf(l->holder, sizeof(l->holder), "%s", row[1] ? row[1] : "");
		s->nlease++;
	}
	ctl_res_free(res);
	return true;
}

/* The rights idserver needs, by the same EXPLAINs it runs at connect. */
static void
ctl_read_rights(struct ctl_server *s)
{
	for (size_t i = 0; i < check_rights_count; i++) {
		struct ctl_res *res = NULL;
		char error[sizeof(s->error)];

		/* The refusal goes to s->rights, not to s->error (the server was read). */
		memcpy(error, s->error, sizeof(error));
		if ((s->errnum = ctl_ops->query(s, check_rights[i].sql, &res)) != 0) {
			snprintf(s->rights, sizeof(s->rights), "%s: %.96s; run GRANT %s ON %s TO the "
			    "service user (schema/60-grant.sql.in)", check_rights[i].table,
			    s->error, check_rights[i].privileges, check_rights[i].table);
			memcpy(s->error, error, sizeof(error));
			return;
		}
		ctl_res_free(res);
	}
}

/*
 * Which guard triggers the server has. The service user sees their names in
 * information_schema.TRIGGERS (not their bodies) with its rights on the tables.
 */
static void
ctl_read_guards(struct ctl_server *s)
{
	struct ctl_res *res = ctl_query(s, "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS "
	    "WHERE TRIGGER_SCHEMA = DATABASE()");
	char **row;

	if (res == NULL) {
		snprintf(s->guards_error, sizeof(s->guards_error), "%s", s->error);
		return;
	}
	while ((row = ctl_row(res)) != NULL)
		for (unsigned g = 0; g < ctl_guards_count; g++)
			if (row[0] != NULL && strcmp(row[0], ctl_guards[g].name) == 0)
				s->guards |= 1u << g;
	ctl_res_free(res);
}

/* Layout ms now, by the server's clock (lease windows are in its terms). */
static void
ctl_read_now(struct ctl *c, struct ctl_server *s)
{
	struct ctl_res *res;
	char **row;
	uint64_t ms;

	if (c->now_ms != 0)
		return;
	res = ctl_query(s, "SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)");
	if (res == NULL)
		return;
	row = ctl_row(res);
	if (row != NULL && ctl_u64(row[0], &ms))
		c->now_ms = (int64_t)ms - LAYOUT_EPOCH_UNIX_MS;
	ctl_res_free(res);
}

/*
 * Reads s as the service user: meta row, marks, leases, rights, guards, the
 * time; on its open connection if it has one (the lock's, idgenctl.c).
 */
void
ctl_read(struct ctl *c, struct ctl_server *s)
{
	s->up = (s->db != NULL || ctl_connect_as(c, s, c->cfg.db_user, c->cfg.db_password)) &&
	    ctl_read_meta(s) && ctl_read_marks(s) && ctl_read_leases(s);
	if (s->up) {
		ctl_read_rights(s);
		ctl_read_guards(s);
		ctl_read_now(c, s);
	}
}

