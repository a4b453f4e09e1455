/*
 * test_nsctl.c - idgenctl ns create/drop/raise act on every server of the
 * tier or refuse (ctl/ns.c, docs/design.md 13.3): a server the databases list
 * (its marks row on the others, written by tier add-server) that the config
 * does not name refuses the command, naming it and the repair. ctl/conn.c,
 * ctl/read.c and ctl/ns.c are linked in (the Makefile's rule) over a fake of
 * ctl.h's seam (struct ctl_ops) that answers the reads and records every
 * statement. idsim seed 13198: `ns drop n0` reached the pair only, o3 kept n0
 * 'ready' under B=64, `ns create n0` under B=1 then succeeded on the pair,
 * and an idserver handed out ID 450 from both.
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
#define FAKE_FIELDS	F_COUNT

#include "fake_ctl.h"

/* A result: up to 4 rows of FAKE_FIELDS fields. */
struct ctl_res {
	const char	*rows[4][FAKE_FIELDS];
	unsigned	 n, next, fields;
};

static const char *fake_roles[4];	/* the marks rows every server holds */
static const char *fake_retired[4];
static unsigned fake_nroles;
static char fake_offset[SERVER_MAX][4];

/* The check query's row: the settings of a healthy server, B = 4096. */
static void
fake_meta(struct ctl_res *r, unsigned srv)
{
	static const char *const f[F_COUNT] = { "10.11.6-MariaDB", "4", NULL, "1", "InnoDB", "1",
		"4096", "odd", "uuid", "3", "4", NULL, "0", "0", "1", "2", "0" };

	snprintf(fake_offset[srv], sizeof(fake_offset[srv]), "%u", server_offset(srv));
	for (unsigned k = 0; k < F_COUNT; k++)
		r->rows[0][k] = f[k] != NULL ? f[k] : fake_offset[srv];
	r->n = 1;
	r->fields = F_COUNT;
}

static unsigned
fake_query(struct ctl_server *s, const char *sql, struct ctl_res **res)
{
	struct ctl_res *r;

	*res = NULL;
	fake_log(s->db->srv, sql);
	if (strncmp(sql, "SELECT", 6) != 0)
		return 0;
	r = calloc(1, sizeof(*r));
	assert_non_null(r);
	r->fields = 1;
	if (strstr(sql, "FROM idgen_meta") != NULL)
		fake_meta(r, s->db->srv);
	else if (strstr(sql, "retired FROM idgen_marks") != NULL) {
		for (unsigned k = 0; k < fake_nroles; k++) {
			r->rows[k][0] = fake_roles[k];
			r->rows[k][1] = r->rows[k][2] = r->rows[k][3] = r->rows[k][4] = "0";
			r->rows[k][5] = fake_retired[k];
		}
		r->n = fake_nroles;
		r->fields = 6;
	} else if (strstr(sql, "NOW(3)") != NULL) {
		r->rows[0][0] = "1800000000000";
		r->n = 1;
	} else if (strstr(sql, "CURRENT_USER()") != NULL) {
		r->rows[0][0] = "idgen@%";
		r->n = 1;
	} else if (strstr(sql, "state FROM idgen_namespaces") != NULL) {
		r->rows[0][0] = "64";
		r->rows[0][1] = "refuse";
		r->rows[0][2] = "ready";
		r->n = 1;
		r->fields = 3;
	} else if (strstr(sql, "COUNT(*) FROM idgen_ns_marks") != NULL) {
		r->rows[0][0] = "0";
		r->n = 1;
	}
	*res = r;
	return 0;
}

static char **
fake_row(struct ctl_res *res)
{
	return res->next < res->n ? (char **)res->rows[res->next++] : NULL;
}

static unsigned
fake_fields(struct ctl_res *res)
{
	return res->fields;
}

/*
 * A tier raised to M = 4; the config names the pair and the extras given.
 * Every server holds the marks rows of odd, even and o3 (o3 retired or not),
 * as after tier add-server 3. Each configured server read as idgenctl does.
 */
static void
fake_tier(struct ctl *c, const unsigned *extra, unsigned nextra, const char *o3_retired)
{
	static char db[] = "idgen", user[] = "idgen", empty[] = "";

	assert_true(server_shape_set(4, 0, 0));
	assert_true(server_extras_set(extra, nextra));
	memset(c, 0, sizeof(*c));
	c->cfg.db_name = db;
	c->cfg.db_user = user;
	c->cfg.db_password = empty;
	c->cfg.more_servers = empty;
	fake_roles[0] = "odd";
	fake_roles[1] = "even";
	fake_roles[2] = "o3";
	fake_retired[0] = fake_retired[1] = "0";
	fake_retired[2] = o3_retired;
	fake_nroles = 3;
	for (unsigned i = 0; i < server_count(); i++) {
		c->srv[i].index = i;
		c->srv[i].host = "127.0.0.1";
		c->srv[i].port = 3307 + i;
		ctl_read(c, &c->srv[i]);
		assert_true(c->srv[i].up);
	}
	fake_nstmt = 0;
}

/* What ctl_read allocated for each server (idgenctl frees it at exit). */
static void
fake_free(struct ctl *c)
{
	for (unsigned i = 0; i < SERVER_MAX; i++) {
		free(c->srv[i].lease);
		c->srv[i].lease = NULL;
	}
}

/* How many statements contain needle. */
static unsigned
fake_count(const char *needle)
{
	unsigned n = 0;

	for (unsigned k = 0; k < fake_nstmt; k++)
		n += strstr(fake_stmt[k].sql, needle) != NULL;
	return n;
}

/* The pair's config, o3 in the tier: drop, create and raise write nothing. */
static void
test_ns_refused_unlisted_server(void **state)
{
	char drop[] = "drop", create[] = "create", raise_[] = "raise", n0[] = "n0";
	char bs[] = "--block-size", one[] = "1", above[] = "--above", big[] = "100000";
	char *dargv[] = { drop, n0, NULL };
	char *cargv[] = { create, n0, bs, one, NULL };
	char *rargv[] = { raise_, n0, above, big, NULL };
	struct ctl c;

	(void)state;
	fake_tier(&c, NULL, 0, "0");
	assert_string_equal(c.srv[0].unknown, "o3");
	assert_string_equal(c.srv[1].unknown, "o3");
	assert_int_equal(ctl_ns(&c, 2, dargv), 1);
	assert_int_equal(ctl_ns(&c, 4, cargv), 1);
	assert_int_equal(ctl_ns(&c, 4, rargv), 1);
	assert_int_equal(fake_count("UPDATE idgen_namespaces"), 0);
	assert_int_equal(fake_count("INSERT"), 0);
	assert_int_equal(fake_count("ALTER"), 0);
	assert_int_equal(fake_count("UPDATE idgen_ns_marks"), 0);
	fake_free(&c);
}

/* o3 in the config, or retired (its rows stay, flagged): the drop runs on every server. */
static void
test_ns_drop_every_server(void **state)
{
	static const unsigned extra[] = { 3 };
	char drop[] = "drop", n0[] = "n0";
	char *argv[] = { drop, n0, NULL };
	struct ctl c;

	(void)state;
	fake_tier(&c, extra, 1, "0");
	assert_string_equal(c.srv[0].unknown, "");
	assert_int_equal(ctl_ns(&c, 2, argv), 0);
	assert_int_equal(fake_count("UPDATE idgen_namespaces SET state = 'dropped'"), 3);
	fake_free(&c);
	fake_tier(&c, NULL, 0, "1");
	assert_string_equal(c.srv[0].unknown, "");
	assert_int_equal(ctl_ns(&c, 2, argv), 0);
	assert_int_equal(fake_count("UPDATE idgen_namespaces SET state = 'dropped'"), 2);
	fake_free(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ns_refused_unlisted_server),
		cmocka_unit_test(test_ns_drop_every_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
