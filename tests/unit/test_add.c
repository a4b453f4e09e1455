/*
 * test_add.c - idgenctl tier add-server with namespaces (ctl/add.c,
 * docs/design.md 13.8): the new server never lists a namespace the region
 * does not hold ready on every other server, and a name it gets is 'ready'
 * there only once its counter and own mark are set. ctl/conn.c, ctl/add.c
 * and ctl/ns.c (ctl_ns_ready, ctl_ns_end...) are linked in (the Makefile's
 * rule) over a fake of ctl.h's seam (struct ctl_ops): odd and even answer
 * their catalogues, the new server o3 keeps a small catalogue of its own
 * that the statements change, and every statement is recorded.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "server.h"

#define FAKE_STMTS	512
#define FAKE_NS		4
#define FAKE_NEW	2	/* o3's index in the config */
#define FAKE_PRE(sql, lit)	(strncmp((sql), (lit), sizeof(lit) - 1) == 0)
#define FAKE_SQL	640
#define FAKE_INDEX_BY_PORT

#include "fake_ctl.h"

/* A stored result: one row of text fields, or none. */
struct ctl_res {
	char		 cell[FAKE_NS][9][64];
	char		*row[9];
	unsigned	 nrows, nfields, next;
};

/* A catalogue row (name, B, fallback, state). */
struct fake_ns {
	char		name[16], fallback[16], state[16];
	uint64_t	b;
};

static struct fake_ns fake_region[FAKE_NS], fake_new[FAKE_NS];	/* odd's and even's; o3's */
static unsigned fake_nregion, fake_nnew;

static struct fake_ns *
fake_new_row(const char *name)
{
	for (unsigned k = 0; k < fake_nnew; k++)
		if (strcmp(fake_new[k].name, name) == 0)
			return &fake_new[k];
	return NULL;
}

static void
fake_cell(struct ctl_res *r, unsigned k, unsigned f, const char *v)
{
	size_t len = strlen(v);

	len = len < sizeof(r->cell[k][f]) ? len : sizeof(r->cell[k][f]) - 1;
	memcpy(r->cell[k][f], v, len);
	r->cell[k][f][len] = '\0';
	r->nrows = k + 1 > r->nrows ? k + 1 : r->nrows;
	r->nfields = f + 1 > r->nfields ? f + 1 : r->nfields;
}

static void
fake_num(struct ctl_res *r, unsigned k, unsigned f, uint64_t v)
{
	char t[24];

	snprintf(t, sizeof(t), "%" PRIu64, v);
	fake_cell(r, k, f, t);
}

/* o3's catalogue as ctl/add.c's writes change it (MariaDB's meaning of each). */
static void
fake_new_write(const char *sql)
{
	struct fake_ns *n;
	char name[16], f[16], st[16];
	uint64_t b, above;

	if (sscanf(sql, "INSERT IGNORE INTO idgen_namespaces (name, block_size, fallback, state, "
	    "start_above) VALUES ('%15[a-z0-9_]', %" SCNu64 ", '%15[a-z]', '%15[a-z]', %" SCNu64 ")",
	    name, &b, f, st, &above) == 5 && fake_new_row(name) == NULL) {
		n = &fake_new[fake_nnew++];
		snprintf(n->name, sizeof(n->name), "%s", name);
		snprintf(n->fallback, sizeof(n->fallback), "%s", f);
		snprintf(n->state, sizeof(n->state), "%s", st);
		n->b = b;
	} else if (sscanf(sql, "UPDATE idgen_namespaces SET state = 'creating', block_size = %"
	    SCNu64 ", fallback = '%15[a-z]' WHERE name = '%15[a-z0-9_]' AND state = 'dropped'", &b,
	    f, name) == 3 && (n = fake_new_row(name)) != NULL && strcmp(n->state, "dropped") == 0) {
		snprintf(n->state, sizeof(n->state), "creating");
		snprintf(n->fallback, sizeof(n->fallback), "%s", f);
		n->b = b;
	} else if (sscanf(sql, "UPDATE idgen_namespaces SET state = '%15[a-z]' WHERE name = "
	    "'%15[a-z0-9_]'", st, name) == 2 && (n = fake_new_row(name)) != NULL &&
	    (strstr(sql, "AND state = 'creating'") == NULL || strcmp(n->state, "creating") == 0))
		snprintf(n->state, sizeof(n->state), "%s", st);
}

/* The answers: the region's checks and catalogues, o3's own; every statement recorded. */
static unsigned
fake_query(struct ctl_server *s, const char *sql, struct ctl_res **res)
{
	unsigned srv = s->db->srv;
	struct fake_ns *n;
	struct ctl_res *r;
	char name[16];

	*res = NULL;
	fake_log(srv, sql);
	if (strncmp(sql, "SELECT", 6) != 0) {
		if (srv == FAKE_NEW)
			fake_new_write(sql);
		return 0;
	}
	r = calloc(1, sizeof(*r));
	assert_non_null(r);
	*res = r;
	if (FAKE_PRE(sql, "SELECT COALESCE(MAX(high_water), 0), COUNT(*)")) {
		fake_cell(r, 0, 0, "0");
		fake_cell(r, 0, 1, "0");
		fake_cell(r, 0, 2, "0");
	} else if (FAKE_PRE(sql, "SELECT name, block_size, fallback, state, start_above FROM "
	    "idgen_namespaces WHERE state <> 'dropped'")) {
		assert_int_not_equal(srv, FAKE_NEW);
		for (unsigned k = 0; k < fake_nregion; k++) {
			fake_cell(r, k, 0, fake_region[k].name);
			fake_num(r, k, 1, fake_region[k].b);
			fake_cell(r, k, 2, fake_region[k].fallback);
			fake_cell(r, k, 3, "ready");
			fake_cell(r, k, 4, "0");
		}
		r->nfields = 5;
	} else if (strcmp(sql, "SELECT CURRENT_USER()") == 0) {
		fake_cell(r, 0, 0, "idgen@%");
	} else if (FAKE_PRE(sql, "SELECT @@GLOBAL.auto_increment_increment")) {
		assert_int_equal(srv, FAKE_NEW);
		fake_cell(r, 0, 0, "4");
		fake_cell(r, 0, 1, "3");
		fake_cell(r, 0, 2, "1");
		fake_cell(r, 0, 3, "varchar");
		fake_cell(r, 0, 4, "0");
		fake_cell(r, 0, 5, "0");
		fake_cell(r, 0, 6, "");
		fake_cell(r, 0, 7, "");
		/* Its catalogue counted, where the query asks for it. */
		if (strstr(sql, "FROM idgen_namespaces") != NULL)
			fake_num(r, 0, 8, fake_nnew);
	} else if (FAKE_PRE(sql, "SELECT name, block_size, fallback, state FROM idgen_namespaces")) {
		assert_int_equal(srv, FAKE_NEW);
		for (unsigned k = 0; k < fake_nnew; k++) {
			fake_cell(r, k, 0, fake_new[k].name);
			fake_num(r, k, 1, fake_new[k].b);
			fake_cell(r, k, 2, fake_new[k].fallback);
			fake_cell(r, k, 3, fake_new[k].state);
		}
		r->nfields = 4;
	} else if (sscanf(sql, "SELECT block_size, fallback, state FROM idgen_namespaces WHERE "
	    "name = '%15[a-z0-9_]'", name) == 1) {
		assert_int_equal(srv, FAKE_NEW);
		if ((n = fake_new_row(name)) != NULL) {
			fake_num(r, 0, 0, n->b);
			fake_cell(r, 0, 1, n->fallback);
			fake_cell(r, 0, 2, n->state);
		}
		r->nfields = 3;
	} else if (FAKE_PRE(sql, "SELECT GREATEST(")) {
		fake_cell(r, 0, 0, "0");	/* ctl_ns_end: no mark of it yet */
	} else {
		fail_msg("not answered: %s", sql);
	}
	return 0;
}

static char **
fake_row(struct ctl_res *res)
{
	if (res->next >= res->nrows)
		return NULL;
	for (unsigned f = 0; f < 9; f++)
		res->row[f] = res->cell[res->next][f];
	res->next++;
	return res->row;
}

static unsigned
fake_fields(struct ctl_res *res)
{
	return res->nfields;
}

/* The pair (read as the service user, generation 0) and o3 in the config (M = 4). */
static void
fake_tier(struct ctl *c)
{
	static const unsigned extra[] = { 3 };
	static char db[] = "idgen", user[] = "idgen", empty[] = "";

	assert_true(server_shape_set(4, 0, 0));
	assert_true(server_extras_set(extra, 1));
	memset(c, 0, sizeof(*c));
	c->cfg.db_name = db;
	c->cfg.db_user = user;
	c->cfg.db_password = empty;
	c->cfg.more_servers = empty;
	for (unsigned i = 0; i < server_own_count(); i++) {
		c->srv[i].index = i;
		c->srv[i].host = "127.0.0.1";
		c->srv[i].port = 3307 + i;
		if (i == FAKE_NEW)
			continue;
		c->srv[i].up = true;
		c->srv[i].block_size = 4096;
		c->srv[i].db = &fake_db[i];
		fake_db[i].srv = i;
		snprintf(c->srv[i].field[F_SERVER_OFFSET], 64, "%u", i + 1);
		snprintf(c->srv[i].field[F_GENERATION], 64, "0");
		snprintf(c->srv[i].field[F_FLOOR], 64, "0");
		snprintf(c->srv[i].field[F_PLAN], 64, "0");
	}
	fake_nstmt = fake_nregion = fake_nnew = 0;
}

static void
fake_ns_set(struct fake_ns *n, const char *name, uint64_t b, const char *state)
{
	snprintf(n->name, sizeof(n->name), "%s", name);
	snprintf(n->fallback, sizeof(n->fallback), "snowflake");
	snprintf(n->state, sizeof(n->state), "%s", state);
	n->b = b;
}

/* The index of the first statement to srv containing needle; FAKE_STMTS if none. */
static unsigned
fake_find(unsigned srv, const char *needle)
{
	for (unsigned k = 0; k < fake_nstmt; k++)
		if (fake_stmt[k].srv == srv && strstr(fake_stmt[k].sql, needle) != NULL)
			return k;
	return FAKE_STMTS;
}

/*
 * idsim seed 138: a killed run left n0 'ready' on o3 (its counter never
 * set), then ns drop n0 reached the configured pair alone. The rerun takes
 * n0 off o3 before its meta row, as the drop would have ('dropped'); before,
 * it left n0 'ready' there at counter 1, and an idserver that judged n0 by
 * o3 alone (the pair refused after a restore) drew its ID 3 again.
 */
static void
test_add_drops_stale_ns(void **state)
{
	struct ctl c;
	unsigned drop, meta;

	(void)state;
	fake_tier(&c);
	fake_ns_set(&fake_new[fake_nnew++], "n0", 1, "ready");
	assert_int_equal(ctl_add_server(&c, "3", "127.0.0.1:3309"), 0);
	assert_string_equal(fake_new[0].state, "dropped");
	drop = fake_find(FAKE_NEW, "UPDATE idgen_namespaces SET state = 'dropped' WHERE name = 'n0'");
	meta = fake_find(FAKE_NEW, "UPDATE idgen_meta SET layout_version");
	assert_true(drop < meta && meta < FAKE_STMTS);
	/* Nothing of n0 written on the other servers. */
	assert_int_equal(fake_find(0, "n0"), FAKE_STMTS);
	assert_int_equal(fake_find(1, "n0"), FAKE_STMTS);
}

/*
 * A name the region holds ready: on o3 'creating' until its counter and own
 * mark are set, 'ready' last; o3's row 'dropped' by an earlier run (the name
 * re-created since on the pair) is made again with the region's B, as ns
 * create re-creates a name. A killed run's row of a name the region dropped
 * ('creating' here) is taken off.
 */
static void
test_add_ns_ready_last(void **state)
{
	struct ctl c;
	unsigned alter, own, ready, meta;

	(void)state;
	fake_tier(&c);
	fake_ns_set(&fake_region[fake_nregion++], "n1", 8, "ready");
	fake_ns_set(&fake_new[fake_nnew++], "n0", 1, "creating");
	fake_ns_set(&fake_new[fake_nnew++], "n1", 1, "dropped");
	assert_int_equal(ctl_add_server(&c, "3", "127.0.0.1:3309"), 0);
	assert_string_equal(fake_new[0].state, "dropped");
	assert_string_equal(fake_new[1].state, "ready");
	assert_int_equal(fake_new[1].b, 8);
	alter = fake_find(FAKE_NEW, "ALTER TABLE tickets_n1 AUTO_INCREMENT = 1");
	own = fake_find(FAKE_NEW, "UPDATE idgen_ns_marks SET high_water = 0, block_size = 8 WHERE "
	    "ns = 'n1' AND role = 'o3'");
	ready = fake_find(FAKE_NEW, "UPDATE idgen_namespaces SET state = 'ready' WHERE name = 'n1'");
	meta = fake_find(FAKE_NEW, "UPDATE idgen_meta SET layout_version");
	assert_true(alter < own && own < ready && ready < meta && meta < FAKE_STMTS);
	/* Never written 'ready' before. */
	assert_int_equal(fake_find(FAKE_NEW, "'ready', "), FAKE_STMTS);
	assert_true(fake_find(0, "INSERT IGNORE INTO idgen_ns_marks (ns, role) VALUES ('n1', "
	    "'o3')") < FAKE_STMTS);
}

/* A fresh server (no catalogue row): its catalogue is not read, no statement more. */
static void
test_add_fresh_no_read(void **state)
{
	struct ctl c;

	(void)state;
	fake_tier(&c);
	assert_int_equal(ctl_add_server(&c, "3", "127.0.0.1:3309"), 0);
	assert_int_equal(fake_find(FAKE_NEW, "SELECT name, block_size, fallback, state FROM "
	    "idgen_namespaces"), FAKE_STMTS);
	assert_int_equal(fake_find(FAKE_NEW, "idgen_namespaces SET"), FAKE_STMTS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_drops_stale_ns),
		cmocka_unit_test(test_add_ns_ready_last),
		cmocka_unit_test(test_add_fresh_no_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
