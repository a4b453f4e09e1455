/*
 * test_retire.c - idgenctl tier retire-server's carry (ctl/add.c,
 * docs/design.md 12.5): once every idserver refused the retired server, each
 * marks row it holds, the default's and every namespace's, is raised on every
 * other server of the region. ctl/conn.c and ctl/add.c are linked in (the
 * Makefile's rule) over a fake of ctl.h's seam (struct ctl_ops) that answers
 * the retired server's SELECTs and records every statement.
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

#define FAKE_STMTS	4096
#define FAKE_ROWS	1100

#include "fake_ctl.h"

/* ctl/ns.c's, which the carry does not reach (tier add-server does). */
int
ctl_ns_ready(struct ctl_server *const *s, unsigned n, const char *verb,
    struct ctl_ns_row *out, unsigned *count)
{
	(void)s, (void)n, (void)verb, (void)out, (void)count;
	return 2;
}

bool
ctl_ns_end(struct ctl_server *s, const char *ns, uint64_t b, bool counter, uint64_t *end)
{
	(void)s, (void)ns, (void)b, (void)counter, (void)end;
	return false;
}

bool
ctl_ns_table(struct ctl_server *s, const char *ns, const char *grantee)
{
	(void)s, (void)ns, (void)grantee;
	return false;
}

bool
ctl_ns_grantee(struct ctl *c, char *out, size_t len)
{
	(void)c, (void)out, (void)len;
	return false;
}

/* A stored result: rows of 4 fields. */
struct ctl_res {
	char		*(*rows)[4];
	unsigned	 n, next;
	char		*row[4];
};

static char *fake_marks[SERVER_MAX][4], *fake_ns[FAKE_ROWS][4];
static unsigned fake_nmarks, fake_nns;
static char fake_text[FAKE_ROWS + SERVER_MAX][4][64];

/* The retired server (o3, index 2) answers its rows; every statement is recorded. */
static unsigned
fake_query(struct ctl_server *s, const char *sql, struct ctl_res **res)
{
	struct ctl_res *r;

	*res = NULL;
	fake_log(s->db->srv, sql);
	if (strncmp(sql, "SELECT", 6) != 0)
		return 0;
	assert_int_equal(s->db->srv, 2);
	r = calloc(1, sizeof(*r));
	assert_non_null(r);
	if (strstr(sql, "FROM idgen_ns_marks") != NULL) {
		r->rows = fake_ns;
		r->n = fake_nns;
	} else {
		r->rows = fake_marks;
		r->n = fake_nmarks;
	}
	*res = r;
	return 0;
}

static char **
fake_row(struct ctl_res *res)
{
	if (res->next >= res->n)
		return NULL;
	memcpy(res->row, res->rows[res->next++], sizeof(res->row));
	return res->row;
}

static unsigned
fake_fields(struct ctl_res *res)
{
	(void)res;
	return 4;
}

/* A row (ns, role, high_water, block_size) of the retired server's. */
static void
fake_set(char **row, unsigned at, const char *ns, const char *role, uint64_t hw, uint64_t b)
{
	snprintf(fake_text[at][0], 64, "%s", ns);
	snprintf(fake_text[at][1], 64, "%s", role);
	snprintf(fake_text[at][2], 64, "%" PRIu64, hw);
	snprintf(fake_text[at][3], 64, "%" PRIu64, b);
	for (unsigned f = 0; f < 4; f++)
		row[f] = fake_text[at][f];
}

/* The pair and o3 (M = 4), B = 4096 read from odd. */
static void
fake_tier(struct ctl *c)
{
	static const unsigned extra[] = { 3 };
	static char db[] = "idgen";

	assert_true(server_shape_set(4, 0, 0));
	assert_true(server_extras_set(extra, 1));
	memset(c, 0, sizeof(*c));
	c->cfg.db_name = db;
	c->cfg.recheck_ms = 1000;
	for (unsigned i = 0; i < server_own_count(); i++) {
		c->srv[i].index = i;
		c->srv[i].host = "127.0.0.1";
		c->srv[i].port = 3307 + i;
	}
	c->srv[0].block_size = 4096;
	fake_nstmt = 0;
	fake_nmarks = fake_nns = 0;
}

/* How many statements to server srv contain every one of the needles. */
static unsigned
fake_count(unsigned srv, const char *a, const char *b)
{
	unsigned n = 0;

	for (unsigned k = 0; k < fake_nstmt; k++)
		if (fake_stmt[k].srv == srv && strstr(fake_stmt[k].sql, a) != NULL &&
		    (b == NULL || strstr(fake_stmt[k].sql, b) != NULL))
			n++;
	return n;
}

/*
 * Every namespace row of the retired server is carried, however many: the
 * region's rows are max_namespaces (100 by default) x its servers, more with
 * namespaces dropped (their rows stay: the triggers refuse their DELETE). A
 * row left behind may be a banked block's only copy (12.5, idsim seed 1856).
 */
static void
test_carry_every_ns_row(void **state)
{
	static const char *const roles[] = { "odd", "even", "o3" };
	struct ctl c;
	char ns[32], where[96];

	(void)state;
	fake_tier(&c);
	for (unsigned k = 0; k < 3; k++)
		fake_set(fake_marks[fake_nmarks++], FAKE_ROWS + k, "", roles[k], 10 + k, 4096);
	for (unsigned n = 0; n < 40; n++)
		for (unsigned k = 0; k < 3; k++) {
			snprintf(ns, sizeof(ns), "n%02u", n);
			fake_set(fake_ns[fake_nns], fake_nns, ns, roles[k], 5 + n, 100);
			fake_nns++;
		}
	assert_int_equal(ctl_retire_server(&c, "3"), 0);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(fake_count(i, "UPDATE idgen_marks SET", NULL), 3);
		assert_int_equal(fake_count(i, "UPDATE idgen_ns_marks SET", NULL), 120);
		for (unsigned n = 0; n < 40; n++)
			for (unsigned k = 0; k < 3; k++) {
				snprintf(where, sizeof(where), "WHERE ns = 'n%02u' AND role = '%s'", n,
				    roles[k]);
				assert_int_equal(fake_count(i, "UPDATE idgen_ns_marks SET", where), 1);
			}
	}
	/* Nothing is written to the retired server but its flag. */
	assert_int_equal(fake_count(2, "UPDATE idgen", NULL), 0);
	assert_int_equal(fake_count(2, "ON DUPLICATE KEY UPDATE retired = 1", NULL), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_carry_every_ns_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
