/*
 * test_lease.c - the worker-number lease (lease.c) against a scripted fake
 * database (fakedb.h): a claim step by step, a clock skew refused, no free
 * number, a claimant that lost the race for a row, an extend that finds
 * another holder, an extend whose clock is off. The clock is injected.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "clk.h"
#include "config.h"
#include "fakedb.h"
#include "layout.h"
#include "lease.h"
#include "snowflake.h"
#include "statefile.h"

#define NOW_MS	INT64_C(1800000000000)		/* unix ms, in 2027 */

static int64_t now_ms = NOW_MS;
static enum lease_trust trust_of[2];
static unsigned changes;

static int64_t
fake_clock_ms(void)
{
	return now_ms;
}

static enum lease_trust
fake_trust(void *arg, int server)
{
	(void)arg;
	return trust_of[server];
}

static void
on_change(void *arg)
{
	(void)arg;
	changes++;
}

struct rig {
	struct event_base	*base;
	struct config		 cfg;
	struct snowflake	 gen;
	struct statefile	 sf;
	struct lease		 l;
};

/* The odd server trusted, the even one refused: every claim lands on odd. */
static struct rig *
rig_new(unsigned extend_ms)
{
	static struct rig r;
	static char host[] = "127.0.0.1";
	struct snowflake_config sc = { 50, 1000 };
	char err[128];

	memset(&r, 0, sizeof(r));
	fake_reset();
	changes = 0;
	now_ms = NOW_MS;
	trust_of[0] = LEASE_TRUSTED;
	trust_of[1] = LEASE_DISTRUSTED;
	r.base = event_base_new();
	r.cfg.lease_window_ms = 300000;
	r.cfg.lease_extend_ms = extend_ms;
	r.cfg.max_clock_skew_ms = 1000;
	r.cfg.fallback_reserve_ms = 100;
	r.cfg.reprobe_max_ms = 1000;
	r.cfg.odd_host = host;
	r.cfg.even_host = host;
	snowflake_init(&r.gen, &sc);
	assert_true(statefile_open(&r.sf, "", err, sizeof(err)));
	assert_true(lease_init(&r.l, r.base, &r.cfg, &r.gen, &r.sf, &fake_ops, fake_clock_ms,
	    on_change, fake_trust, NULL));
	return &r;
}

static void
rig_free(struct rig *r)
{
	lease_free(&r->l);
	statefile_close(&r->sf);
	event_base_free(r->base);
}

/* Runs the loop for ms of real time (timers included), bounded. */
static void
run_for(struct rig *r, unsigned ms)
{
	struct timeval tv = clk_tv_ms(ms);

	event_base_loopexit(r->base, &tv);
	event_base_dispatch(r->base);
}

/* The database's clock, as the clock query returns it. */
static void
script_clock(int64_t db_ms)
{
	static char buf[4][24];
	static unsigned k;
	char *b = buf[k++ % 4];

	snprintf(b, 24, "%lld", (long long)db_ms);
	fake_expect(&(struct fake_reply){ .match = "UNIX_TIMESTAMP(NOW(3))", .row = { b },
	    .nfields = 1 });
}

/* A whole claim of worker w on the odd server. */
static void
script_claim(const char *w)
{
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(NOW_MS);
	fake_expect(&(struct fake_reply){ .match = "START TRANSACTION" });
	fake_expect(&(struct fake_reply){ .match = "FOR UPDATE SKIP LOCKED", .row = { w },
	    .nfields = 1 });
	fake_expect(&(struct fake_reply){ .match = "UPDATE idgen_leases SET holder", .affected =
	    { 1 }, .nstmts = 0 });
	fake_expect(&(struct fake_reply){ .match = "COMMIT" });
}

/* A claim: the window is the claimant's now + lease_window_ms, and the generator has it. */
static void
test_claim(void **state)
{
	struct rig *r = rig_new(60000);
	uint64_t now = (uint64_t)(NOW_MS - LAYOUT_EPOCH_UNIX_MS);
	struct snowflake_range out;

	(void)state;
	script_claim("3");
	lease_start(&r->l);
	run_for(r, 50);
	assert_int_equal(r->l.state, LEASE_HELD);
	assert_true(r->l.worker == 3 && r->l.server == 0);
	assert_true(r->l.window_start == now && r->l.window_end == now + 300000);
	assert_true(r->l.stats.claims == 1 && changes >= 1);
	assert_int_equal(snowflake_take(&r->gen, now, 1, true, &out), SNOWFLAKE_OK);
	assert_true(layout_snowflake_split(out.first).worker == 3);
	assert_int_equal(next_reply, nscript);
	rig_free(r);
}

/* The database's clock 5 s away: refused, no window, counted. */
static void
test_skew_refused(void **state)
{
	struct rig *r = rig_new(60000);
	struct snowflake_range out;

	(void)state;
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(NOW_MS + 5000);
	lease_start(&r->l);
	run_for(r, 50);
	assert_int_equal(r->l.state, LEASE_REFUSED);
	assert_true(r->l.stats.skew_refusals == 1 && r->l.stats.claims == 0);
	assert_int_equal(snowflake_take(&r->gen, (uint64_t)(NOW_MS - LAYOUT_EPOCH_UNIX_MS), 1,
	    true, &out), SNOWFLAKE_UNAVAILABLE);
	rig_free(r);
}

/* Every window still open: no number, no window. */
static void
test_no_free_number(void **state)
{
	struct rig *r = rig_new(60000);

	(void)state;
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(NOW_MS);
	fake_expect(&(struct fake_reply){ .match = "START TRANSACTION" });
	fake_expect(&(struct fake_reply){ .match = "FOR UPDATE SKIP LOCKED" });
	lease_start(&r->l);
	run_for(r, 50);
	assert_int_equal(r->l.state, LEASE_NONE);
	assert_true(r->l.stats.claim_failures >= 1 && r->l.stats.claims == 0);
	assert_int_equal(next_reply, nscript);
	rig_free(r);
}

/* Another claimant took the row between our pick and our update: no window. */
static void
test_claim_race_lost(void **state)
{
	struct rig *r = rig_new(60000);

	(void)state;
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(NOW_MS);
	fake_expect(&(struct fake_reply){ .match = "START TRANSACTION" });
	fake_expect(&(struct fake_reply){ .match = "FOR UPDATE SKIP LOCKED", .row = { "5" },
	    .nfields = 1 });
	fake_expect(&(struct fake_reply){ .match = "UPDATE idgen_leases SET holder" });
	lease_start(&r->l);
	run_for(r, 50);
	assert_int_equal(r->l.state, LEASE_NONE);
	assert_true(r->l.stats.claims == 0);
	rig_free(r);
}

/* A number of the wrong parity from the odd server's table is never taken. */
static void
test_foreign_number_refused(void **state)
{
	struct rig *r = rig_new(60000);

	(void)state;
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(NOW_MS);
	fake_expect(&(struct fake_reply){ .match = "START TRANSACTION" });
	fake_expect(&(struct fake_reply){ .match = "FOR UPDATE SKIP LOCKED", .row = { "4" },
	    .nfields = 1 });
	lease_start(&r->l);
	run_for(r, 50);
	assert_int_equal(r->l.state, LEASE_NONE);
	assert_true(r->l.stats.claims == 0 && r->l.stats.claim_failures >= 1);
	/* No UPDATE was sent for it: the script ends at the pick, nothing more was asked. */
	assert_int_equal(next_reply, nscript);
	assert_int_equal(unscripted, 0);
	rig_free(r);
}

/* An extend that matches no row: another holder has the number; minting stops. */
static void
test_extend_lost(void **state)
{
	struct rig *r = rig_new(20);
	struct snowflake_range out;
	uint64_t now = (uint64_t)(NOW_MS - LAYOUT_EPOCH_UNIX_MS);

	(void)state;
	script_claim("3");
	script_clock(NOW_MS);
	fake_expect(&(struct fake_reply){ .match = "window_end = GREATEST(window_end" });
	lease_start(&r->l);
	run_for(r, 150);
	assert_true(r->l.stats.claims == 1 && r->l.stats.lost == 1);
	assert_true(r->l.state != LEASE_HELD || r->l.worker != 3);
	assert_int_equal(snowflake_take(&r->gen, now, 1, true, &out), SNOWFLAKE_UNAVAILABLE);
	rig_free(r);
}

/* An extend with the local clock an hour fast: refused, the window runs on unchanged. */
static void
test_extend_skew_refused(void **state)
{
	struct rig *r = rig_new(20);
	uint64_t end;

	(void)state;
	script_claim("3");
	lease_start(&r->l);
	run_for(r, 10);
	assert_int_equal(r->l.state, LEASE_HELD);
	end = r->l.window_end;
	now_ms = NOW_MS + 3600000;
	script_clock(NOW_MS + 5);
	run_for(r, 60);
	assert_true(r->l.stats.extend_skew_refusals >= 1 && r->l.stats.extends == 0);
	assert_true(r->l.window_end == end);
	rig_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claim),
		cmocka_unit_test(test_skew_refused),
		cmocka_unit_test(test_no_free_number),
		cmocka_unit_test(test_claim_race_lost),
		cmocka_unit_test(test_foreign_number_refused),
		cmocka_unit_test(test_extend_lost),
		cmocka_unit_test(test_extend_skew_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
