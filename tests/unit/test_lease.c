/*
 * test_lease.c - the worker-number lease (lease.c) against a scripted fake
 * database (fakedb.h): a claim step by step, a clock skew refused, no free
 * number, a claimant that lost the race for a row, an extend that finds
 * another holder, an extend whose clock is off; and the machine's paths
 * (docs/design.md section 3.8): a race lost then won on the other server,
 * extends failing until the window runs out, re-adoption after a resume, a
 * refusal episode, a release while a claim is in flight, connections lost
 * mid-claim; Snowflake time reserved ahead while a write is held or fails
 * (a gated fdatasync, gate.h). The clock is injected.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clk.h"
#include "config.h"
#include "fakedb.h"
#include "gate.h"
#include "layout.h"
#include "lease.h"
#include "snowflake.h"
#include "statefile.h"

#define NOW_MS	INT64_C(1800000000000)		/* unix ms, in 2027 */

static int64_t now_ms = NOW_MS;
static enum lease_trust trust_of[2];
static unsigned changes, done_calls;
struct rig;
static struct rig *cur;		/* for the hooks run while a query is in flight */

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

static const char *state_path = "";	/* the rig's state file ("": none) */

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
	changes = done_calls = 0;
	cur = &r;
	now_ms = NOW_MS;
	trust_of[0] = LEASE_TRUSTED;
	trust_of[1] = LEASE_DISTRUSTED;
	r.base = event_base_new();
	r.cfg.lease_window_ms = 300000;
	r.cfg.lease_extend_ms = extend_ms;
	r.cfg.max_clock_skew_ms = 1000;
	r.cfg.fallback_reserve_ms = 100;
	r.cfg.fallback_reserve_lead_max_ms = 400;
	r.cfg.reprobe_max_ms = 1000;
	r.cfg.odd_host = host;
	r.cfg.even_host = host;
	snowflake_init(&r.gen, &sc);
	assert_true(statefile_open(&r.sf, state_path, err, sizeof(err)));
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
	struct rig *r = rig_new(100);	/* the clock is scripted well before the extend */
	uint64_t end;

	(void)state;
	script_claim("3");
	lease_start(&r->l);
	run_for(r, 10);
	assert_int_equal(r->l.state, LEASE_HELD);
	end = r->l.window_end;
	now_ms = NOW_MS + 3600000;
	script_clock(NOW_MS + 5);
	run_for(r, 150);
	assert_true(r->l.stats.extend_skew_refusals >= 1 && r->l.stats.extends == 0);
	assert_true(r->l.window_end == end);
	rig_free(r);
}

/* The injected clock in layout ms. */
static uint64_t
layout_now(void)
{
	return (uint64_t)(now_ms - LAYOUT_EPOCH_UNIX_MS);
}

/* Takes one ID at the injected now as source.c does (reserving first); its status. */
static enum snowflake_status
mint(struct rig *r, unsigned *worker, uint64_t *ts)
{
	struct snowflake_range out;
	enum snowflake_status st;

	st = snowflake_take(&r->gen, layout_now(), 1, true, &out);
	if (st == SNOWFLAKE_RESERVE) {
		assert_true(lease_reserve(&r->l, snowflake_next_ts(&r->gen, layout_now())));
		st = snowflake_take(&r->gen, layout_now(), 1, true, &out);
	}
	if (st == SNOWFLAKE_OK && worker != NULL)
		*worker = layout_snowflake_split(out.first).worker;
	if (st == SNOWFLAKE_OK && ts != NULL)
		*ts = layout_snowflake_split(out.first).ts;
	return st;
}

/* A claim of worker w on whichever server is next, up to its pick. */
static void
script_claim_to_pick(const char *w)
{
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(now_ms);
	fake_expect(&(struct fake_reply){ .match = "START TRANSACTION" });
	fake_expect(&(struct fake_reply){ .match = "FOR UPDATE SKIP LOCKED", .row = { w },
	    .nfields = 1 });
}

/* Run while a query is in flight: the generator must not have the window yet. */
static void
hook_no_window_yet(void)
{
	assert_int_equal(mint(cur, NULL, NULL), SNOWFLAKE_UNAVAILABLE);
	assert_int_equal(cur->l.op, LEASE_OP_CLAIM);
}

/*
 * Two claimants race for one row: the other holder's update wins ours (no
 * row matched). The row is not ours, the claim moves to the other server and
 * takes a number there; no window reaches the generator before a COMMIT.
 */
static void
test_claim_race_other_server(void **state)
{
	struct rig *r = rig_new(60000);
	int first = getpid() % 2;	/* the claim starts on our pid's parity */
	unsigned w = 0;

	(void)state;
	trust_of[0] = trust_of[1] = LEASE_TRUSTED;
	script_claim_to_pick(first == 0 ? "5" : "6");
	fake_expect(&(struct fake_reply){ .match = "UPDATE idgen_leases SET holder",
	    .before = hook_no_window_yet });
	script_claim_to_pick(first == 0 ? "8" : "7");
	fake_expect(&(struct fake_reply){ .match = "UPDATE idgen_leases SET holder", .affected =
	    { 1 } });
	fake_expect(&(struct fake_reply){ .match = "COMMIT", .before = hook_no_window_yet });
	lease_start(&r->l);
	run_for(r, 50);
	assert_int_equal(r->l.state, LEASE_HELD);
	assert_int_equal(r->l.op, LEASE_OP_IDLE);
	assert_int_equal(r->l.server, 1 - first);
	assert_int_equal(r->l.worker, first == 0 ? 8 : 7);
	assert_true(r->l.stats.claim_failures == 1 && r->l.stats.claims == 1);
	assert_int_equal(mint(r, &w, NULL), SNOWFLAKE_OK);
	assert_int_equal(w, first == 0 ? 8 : 7);
	assert_true(next_reply == nscript && unscripted == 0);
	rig_free(r);
}

/*
 * Extends fail (the odd server unreachable): the window runs on; once half
 * of it is gone a fresh number is asked for; past its end the generator
 * mints nothing and the views say expired. When the even server is trusted
 * the fresh claim lands there and minting goes on with the new number.
 */
static void
test_extend_fails_window_runs_out(void **state)
{
	struct rig *r = rig_new(20);
	unsigned w = 0;

	(void)state;
	script_claim("3");
	lease_start(&r->l);
	run_for(r, 10);
	assert_int_equal(r->l.state, LEASE_HELD);
	run_for(r, 60);		/* past the script: every extend fails */
	assert_true(r->l.stats.extend_failures >= 1 && r->l.stats.extends == 0);
	assert_false(r->l.want.fresh);	/* most of the window left: no new number yet */
	assert_int_equal(mint(r, &w, NULL), SNOWFLAKE_OK);
	now_ms += 200000;		/* two thirds of the window gone */
	run_for(r, 150);
	assert_true(r->l.want.fresh && r->l.stats.claim_failures >= 1);
	now_ms += 100001;		/* past window_end */
	run_for(r, 60);
	assert_int_equal(mint(r, NULL, NULL), SNOWFLAKE_UNAVAILABLE);
	assert_string_equal(lease_state_at(&r->l, layout_now()), "expired");
	/* The partner answers: the fresh claim takes a number there. */
	trust_of[0] = LEASE_DISTRUSTED;
	trust_of[1] = LEASE_TRUSTED;
	script_claim_to_pick("4");
	fake_expect(&(struct fake_reply){ .match = "UPDATE idgen_leases SET holder", .affected =
	    { 1 } });
	fake_expect(&(struct fake_reply){ .match = "COMMIT" });
	run_for(r, 150);
	assert_int_equal(r->l.state, LEASE_HELD);
	assert_true(r->l.worker == 4 && r->l.server == 1 && !r->l.want.fresh);
	assert_string_equal(lease_state_at(&r->l, layout_now()), "held");
	assert_int_equal(mint(r, &w, NULL), SNOWFLAKE_OK);
	assert_int_equal(w, 4);
	assert_int_equal(next_reply, nscript);
	rig_free(r);
}

/* A state file holding worker 5's window, written by a process that has exited. */
static void
write_dead_owner_file(const char *path, uint64_t reserved)
{
	struct statefile f;
	char err[128];
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		if (!statefile_open(&f, path, err, sizeof(err))) {
			fprintf(stderr, "child: %s\n", err);
			_exit(1);
		}
		f.rec.owner = f.me;	/* as main.c stamps it */
		snprintf(f.rec.host, sizeof(f.rec.host), "oldhost");
		snprintf(f.rec.servers, sizeof(f.rec.servers), "test-servers");
		f.rec.lease.held = true;
		f.rec.lease.worker = 5;
		f.rec.lease.server = 0;
		snprintf(f.rec.lease.holder, sizeof(f.rec.lease.holder), "oldhost:1:0123");
		f.rec.lease.window_start = reserved - 1000;
		f.rec.lease.window_end = reserved + 100000;
		f.rec.lease.reserved = reserved;
		if (!statefile_save(&f))
			fprintf(stderr, "child: %s\n", f.last_error);
		_exit(f.last_error[0] == '\0' ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A rig whose state file holds a resumable lease of worker 5 (the owner dead). */
static struct rig *
rig_resumed(char *dir, size_t dirlen)
{
	static char path[256];
	struct rig *r;
	char why[256];
	unsigned w = 0;
	uint64_t ts = 0;

	snprintf(dir, dirlen, "/tmp/test_lease.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
	write_dead_owner_file(path, (uint64_t)(NOW_MS - LAYOUT_EPOCH_UNIX_MS) + 50);
	state_path = path;
	r = rig_new(20);
	state_path = "";
	if (!lease_resume(&r->l, "test-servers", why, sizeof(why)))
		fail_msg("not resumed: %s", why);
	assert_int_equal(r->l.state, LEASE_HELD);
	assert_true(r->l.worker == 5 && r->l.stats.resumed == 1);
	assert_string_equal(r->l.adopt_from, "oldhost:1:0123");
	/* Minting goes on at once, strictly above the reservation. */
	assert_int_equal(mint(r, &w, &ts), SNOWFLAKE_OK);
	assert_true(w == 5 && ts > layout_now() + 50);
	return r;
}

static void
rig_resumed_free(struct rig *r, const char *dir)
{
	char path[300];

	rig_free(r);
	snprintf(path, sizeof(path), "%s/state", dir);
	unlink(path);
	rmdir(dir);
}

/*
 * After a resume the first compare-and-set names the previous incarnation
 * (never us: its row does not name us yet), and then ours: adopted, the
 * state file records our name.
 */
static void
test_adopt_after_resume(void **state)
{
	static char ours[200];
	char dir[64];
	struct rig *r = rig_resumed(dir, sizeof(dir));

	(void)state;
	snprintf(ours, sizeof(ours), "AND holder = '%s'", r->l.holder);
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(NOW_MS);
	fake_expect(&(struct fake_reply){ .match = "AND holder = 'oldhost:1:0123'", .affected =
	    { 1 } });
	script_clock(NOW_MS);
	fake_expect(&(struct fake_reply){ .match = ours, .affected = { 1 } });
	lease_start(&r->l);
	run_for(r, 30);
	assert_true(r->l.stats.adopted == 1 && r->l.stats.extends == 1);
	assert_int_equal(r->l.state, LEASE_HELD);
	assert_string_equal(r->l.adopt_from, "");
	assert_string_equal(r->sf.rec.lease.holder, r->l.holder);
	assert_true(r->l.window_end == layout_now() + 300000);
	assert_true(r->sf.rec.lease.window_end == r->l.window_end);
	assert_int_equal(next_reply, nscript);
	rig_resumed_free(r, dir);
}

/* The resumed row names someone else now: lost, no minting, not resumable again. */
static void
test_adopt_lost(void **state)
{
	char dir[64];
	struct rig *r = rig_resumed(dir, sizeof(dir));

	(void)state;
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(NOW_MS);
	fake_expect(&(struct fake_reply){ .match = "AND holder = 'oldhost:1:0123'" });
	lease_start(&r->l);
	run_for(r, 10);
	assert_true(r->l.stats.lost == 1 && r->l.stats.adopted == 0);
	assert_int_equal(r->l.state, LEASE_NONE);
	assert_int_equal(mint(r, NULL, NULL), SNOWFLAKE_UNAVAILABLE);
	assert_false(r->sf.rec.lease.held);
	rig_resumed_free(r, dir);
}

/* Run while the claim that follows two refusals compares clocks. */
static void
hook_refused_twice(void)
{
	assert_int_equal(cur->l.state, LEASE_REFUSED);
	assert_true(cur->l.stats.skew_refusals == 2 && cur->l.logged.skew);
	assert_int_equal(mint(cur, NULL, NULL), SNOWFLAKE_UNAVAILABLE);
}

/*
 * A refusal episode: claims refused while the clocks disagree (state
 * refused, nothing minted), then a claim once they agree. A fresh claim
 * refused while a window is held leaves it held: it runs on.
 */
static void
test_skew_episode(void **state)
{
	struct rig *r = rig_new(60000);	/* no extend during the test */
	static char agree[24];

	(void)state;
	r->cfg.reprobe_max_ms = 20;	/* claims retried every 20 ms */
	snprintf(agree, sizeof(agree), "%lld", (long long)NOW_MS);
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(NOW_MS + 5000);
	script_clock(NOW_MS - 5000);
	fake_expect(&(struct fake_reply){ .match = "UNIX_TIMESTAMP(NOW(3))", .row = { agree },
	    .nfields = 1, .before = hook_refused_twice });
	fake_expect(&(struct fake_reply){ .match = "START TRANSACTION" });
	fake_expect(&(struct fake_reply){ .match = "FOR UPDATE SKIP LOCKED", .row = { "3" },
	    .nfields = 1 });
	fake_expect(&(struct fake_reply){ .match = "UPDATE idgen_leases SET holder", .affected =
	    { 1 } });
	fake_expect(&(struct fake_reply){ .match = "COMMIT" });
	lease_start(&r->l);
	run_for(r, 100);
	assert_int_equal(next_reply, nscript);
	assert_int_equal(r->l.state, LEASE_HELD);
	assert_true(r->l.stats.skew_refusals == 2 && r->l.stats.claims == 1);
	assert_false(r->l.logged.skew);
	assert_int_equal(mint(r, NULL, NULL), SNOWFLAKE_OK);
	/* A fresh number asked for; its claim is refused: the held window runs on. */
	fake_reset();
	script_clock(NOW_MS + 5000);
	lease_clock_stepped(&r->l);
	run_for(r, 10);
	assert_int_equal(r->l.stats.skew_refusals, 3);
	assert_int_equal(r->l.state, LEASE_HELD);
	assert_true(r->l.want.fresh && r->l.worker == 3);
	assert_int_equal(mint(r, NULL, NULL), SNOWFLAKE_OK);
	rig_free(r);
}

static void
on_done(void *arg)
{
	(void)arg;
	done_calls++;
}

/* Run while a claim's pick is in flight: shutdown asks for the release. */
static void
hook_release(void)
{
	lease_release(&cur->l, on_done, NULL);
	assert_int_equal(cur->l.op, LEASE_OP_CLAIM);
}

/*
 * A release asked for while a claim is in flight waits for it: the claim
 * commits, then the new window is released (holder ours), on_done once, and
 * nothing runs after.
 */
static void
test_release_during_claim(void **state)
{
	static char rel[256];
	struct rig *r = rig_new(20);

	(void)state;
	snprintf(rel, sizeof(rel), "SET @idgen_release = '%s';UPDATE idgen_leases SET window_end",
	    r->l.holder);
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(NOW_MS);
	fake_expect(&(struct fake_reply){ .match = "START TRANSACTION" });
	fake_expect(&(struct fake_reply){ .match = "FOR UPDATE SKIP LOCKED", .row = { "3" },
	    .nfields = 1, .before = hook_release });
	fake_expect(&(struct fake_reply){ .match = "UPDATE idgen_leases SET holder", .affected =
	    { 1 } });
	fake_expect(&(struct fake_reply){ .match = "COMMIT" });
	/* SET @idgen_release, the UPDATE, the reset (the schema's trigger, design 6.5). */
	fake_expect(&(struct fake_reply){ .match = rel, .affected = { 0, 1, 0 }, .nstmts = 3 });
	lease_start(&r->l);
	run_for(r, 80);
	assert_int_equal(done_calls, 1);
	assert_true(r->l.stats.claims == 1 && r->l.stats.releases == 1);
	assert_int_equal(r->l.state, LEASE_NONE);
	assert_int_equal(r->l.op, LEASE_OP_IDLE);
	assert_int_equal(mint(r, NULL, NULL), SNOWFLAKE_UNAVAILABLE);
	assert_true(next_reply == nscript && unscripted == 0);
	rig_free(r);
}

/* The claim in flight fails during shutdown: no try on the other server, no release. */
static void
test_release_during_failed_claim(void **state)
{
	struct rig *r = rig_new(20);

	(void)state;
	trust_of[0] = trust_of[1] = LEASE_TRUSTED;
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(NOW_MS);
	fake_expect(&(struct fake_reply){ .match = "START TRANSACTION" });
	fake_expect(&(struct fake_reply){ .match = "FOR UPDATE SKIP LOCKED", .before =
	    hook_release });
	lease_start(&r->l);
	run_for(r, 80);
	assert_int_equal(done_calls, 1);
	assert_true(r->l.stats.claims == 0 && r->l.stats.claim_failures == 1);
	assert_int_equal(r->l.state, LEASE_NONE);
	assert_true(next_reply == nscript && unscripted == 0);
	rig_free(r);
}

/*
 * The connection is lost mid-claim (2013 on START TRANSACTION): the claim
 * fails, and the next one reconnects before it sends anything.
 */
static void
test_lost_mid_claim(void **state)
{
	struct rig *r = rig_new(20);

	(void)state;
	fake_expect(&(struct fake_reply){ .match = "CONNECT" });
	script_clock(NOW_MS);
	fake_expect(&(struct fake_reply){ .match = "START TRANSACTION", .err = 2013 });
	script_claim("3");		/* beginning with a new connection */
	lease_start(&r->l);
	run_for(r, 80);
	assert_int_equal(r->l.state, LEASE_HELD);
	assert_true(r->l.stats.claims == 1 && r->l.stats.claim_failures >= 1);
	assert_true(next_reply == nscript);
	rig_free(r);
}

/*
 * The COMMIT's answer is lost: the claim may or may not have committed, so
 * the window is not used (the number stays reserved until its end: waste,
 * never a duplicate).
 */
static void
test_commit_lost(void **state)
{
	struct rig *r = rig_new(60000);

	(void)state;
	script_claim_to_pick("3");
	fake_expect(&(struct fake_reply){ .match = "UPDATE idgen_leases SET holder", .affected =
	    { 1 } });
	fake_expect(&(struct fake_reply){ .match = "COMMIT", .err = 2013 });
	lease_start(&r->l);
	run_for(r, 50);
	assert_int_equal(r->l.state, LEASE_NONE);
	assert_true(r->l.stats.claims == 0 && r->l.stats.claim_failures >= 1);
	assert_int_equal(mint(r, NULL, NULL), SNOWFLAKE_UNAVAILABLE);
	assert_false(r->sf.rec.lease.held);
	rig_free(r);
}

/* The resumed rig's state file written by a writer thread whose fdatasync is the gate. */
static void
rig_gated_writer(struct rig *r)
{
	char err[256];

	gate_reset();
	r->sf.datasync = gate_sync;
	assert_true(statefile_start(&r->sf, r->base, err, sizeof(err)));
}

/* Takes one ID at layout ms ts as source.c does, without waiting: then reserves ahead. */
static enum snowflake_status
mint_at(struct rig *r, uint64_t ts)
{
	struct snowflake_range out;
	enum snowflake_status st;

	now_ms = (int64_t)(ts + LAYOUT_EPOCH_UNIX_MS);
	st = snowflake_take(&r->gen, ts, 1, true, &out);
	if (st == SNOWFLAKE_OK) {
		assert_true(layout_snowflake_split(out.first).ts == ts);
		assert_true(ts <= r->sf.rec.lease.reserved);
		lease_reserve_ahead(&r->l, ts);
	}
	return st;
}

/* Runs the loop until the reservation ahead was called back (bounded: 5 s). */
static void
loop_until_landed(struct rig *r)
{
	for (int k = 0; k < 5000 && r->l.ahead.pending; k++) {
		event_base_loop(r->base, EVLOOP_NONBLOCK);
		if (r->l.ahead.pending)
			usleep(1000);
	}
	assert_false(r->l.ahead.pending);
}

/*
 * Issue 31, item 7: minting within 2 fallback_reserve_ms of the limit posts the
 * next reservation to the writer and goes on at once; while its fdatasync is
 * held, requests are served up to the old limit and nothing above it; the
 * limit rises only once the write returned (docs/design.md 6.7).
 */
static void
test_reserve_ahead_in_flight(void **state)
{
	char dir[64];
	struct rig *r = rig_resumed(dir, sizeof(dir));
	uint64_t lim = r->gen.reserved, waits = r->l.stats.reserve_waits;
	uint64_t res = r->l.stats.reservations;
	struct snowflake_range out;

	(void)state;
	r->cfg.fallback_reserve_lead_max_ms = 0;	/* the fixed lead, whatever the machine's speed */
	rig_gated_writer(r);
	/* Outside the lead (2 fallback_reserve_ms): nothing is posted. */
	assert_int_equal(mint_at(r, lim - 250), SNOWFLAKE_OK);
	assert_int_equal(mint_at(r, lim - 200), SNOWFLAKE_OK);
	assert_false(r->l.ahead.pending);
	assert_int_equal(gate_count(), 0);
	/* Within it: posted, and the writer holds its fdatasync. */
	gate_set(true, 0);
	assert_int_equal(mint_at(r, lim - 150), SNOWFLAKE_OK);
	assert_true(r->l.ahead.pending);
	gate_wait_entered(1);
	assert_true(r->sf.rec.lease.reserved == lim - 150 + 300);
	/* Served while the write is in flight, up to the durable limit and no further. */
	assert_int_equal(mint_at(r, lim - 10), SNOWFLAKE_OK);
	assert_int_equal(mint_at(r, lim), SNOWFLAKE_OK);
	assert_int_equal(snowflake_take(&r->gen, lim + 1, 1, true, &out), SNOWFLAKE_RESERVE);
	assert_true(r->gen.reserved == lim && r->l.ahead.pending);
	assert_int_equal(gate_count(), 1);	/* one write for the whole stretch */
	/* The write lands: the limit rises to what it made durable. */
	gate_set(false, 0);
	loop_until_landed(r);
	assert_true(r->gen.reserved == lim + 150);
	assert_true(r->sf.durable_gen > 0 && r->sf.stats.failures == 0);
	assert_int_equal(mint_at(r, lim + 1), SNOWFLAKE_OK);
	assert_true(r->l.stats.reservations == res + 1 && r->l.stats.reserve_waits == waits);
	rig_resumed_free(r, dir);
}

/*
 * A reservation ahead whose write fails never raises the limit: nothing is
 * minted above what is durably reserved; no more is posted ahead, and the
 * take that reaches the limit waits for a synchronous write (refused while
 * the disk fails, served once it lands).
 */
static void
test_reserve_ahead_fails(void **state)
{
	char dir[64];
	struct rig *r = rig_resumed(dir, sizeof(dir));
	uint64_t lim = r->gen.reserved, waits = r->l.stats.reserve_waits;
	struct snowflake_range out;

	(void)state;
	r->cfg.fallback_reserve_lead_max_ms = 0;	/* the fixed lead, whatever the machine's speed */
	rig_gated_writer(r);
	gate_set(true, EIO);
	assert_int_equal(mint_at(r, lim - 150), SNOWFLAKE_OK);
	gate_wait_entered(1);
	assert_int_equal(mint_at(r, lim), SNOWFLAKE_OK);
	gate_set(false, 0);		/* the write in flight fails (its sync began with EIO) */
	loop_until_landed(r);
	assert_true(r->l.ahead.failed && r->l.stats.reserve_ahead_failures == 1);
	assert_true(r->gen.reserved == lim);
	assert_int_equal(snowflake_take(&r->gen, lim + 1, 1, true, &out), SNOWFLAKE_RESERVE);
	assert_int_equal(gate_count(), 1);
	/* The disk still failing: the waited-for reservation fails, nothing minted. */
	gate_set(false, EIO);
	assert_false(lease_reserve(&r->l, lim + 1));
	assert_true(r->gen.reserved == lim);
	assert_int_equal(snowflake_take(&r->gen, lim + 1, 1, true, &out), SNOWFLAKE_RESERVE);
	/* The disk back: the wait lands, minting goes on, and ahead again. */
	gate_set(false, 0);
	assert_true(lease_reserve(&r->l, lim + 1));
	assert_true(r->gen.reserved == lim + 1 + 300 && !r->l.ahead.failed);
	assert_true(r->l.stats.reserve_waits == waits + 2);
	assert_true(r->sf.stats.loop_us_max > 0);
	assert_int_equal(mint_at(r, lim + 1), SNOWFLAKE_OK);
	assert_int_equal(mint_at(r, lim + 150), SNOWFLAKE_OK);
	assert_true(r->l.ahead.pending);
	loop_until_landed(r);
	assert_true(r->gen.reserved == lim + 450);
	rig_resumed_free(r, dir);
}

/*
 * Issue 36: the lead follows the disk. A reservation whose write took 150 ms
 * makes the lead twice that (above the fixed 2 fallback_reserve_ms = 200), so
 * the next one is posted earlier and reaches further: ts + lead + 100; never
 * more than fallback_reserve_lead_max_ms (docs/design.md 6.7).
 */
static void
test_reserve_lead_adapts(void **state)
{
	char dir[64];
	struct rig *r = rig_resumed(dir, sizeof(dir));
	uint64_t lim = r->gen.reserved, lead, waits = r->l.stats.reserve_waits;

	(void)state;
	rig_gated_writer(r);
	assert_true(lease_reserve_lead(&r->l) == 200);
	/* A write held 150 ms. */
	gate_set(true, 0);
	assert_int_equal(mint_at(r, lim - 150), SNOWFLAKE_OK);
	gate_wait_entered(1);
	assert_true(r->sf.rec.lease.reserved == lim - 150 + 300);
	usleep(150 * 1000);
	gate_set(false, 0);
	loop_until_landed(r);
	lead = lease_reserve_lead(&r->l);
	assert_true(lead >= 300 && lead <= 400);
	assert_true(r->gen.reserved == lim + 150);
	/*
	 * 299 ms short of the new limit: the fixed lead (200) would post nothing
	 * yet; the measured one posts, reaching lead + 100 ahead.
	 */
	assert_int_equal(mint_at(r, lim - 149), SNOWFLAKE_OK);
	assert_true(r->l.ahead.pending);
	assert_true(r->sf.rec.lease.reserved == lim - 149 + lead + 100);
	loop_until_landed(r);
	/* The bound: never past fallback_reserve_lead_max_ms, never below the fixed lead. */
	r->cfg.fallback_reserve_lead_max_ms = 250;
	assert_true(lease_reserve_lead(&r->l) == 250);
	r->cfg.fallback_reserve_lead_max_ms = 0;
	assert_true(lease_reserve_lead(&r->l) == 200);
	assert_true(r->l.stats.reserve_waits == waits);
	rig_resumed_free(r, dir);
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
		cmocka_unit_test(test_claim_race_other_server),
		cmocka_unit_test(test_extend_fails_window_runs_out),
		cmocka_unit_test(test_adopt_after_resume),
		cmocka_unit_test(test_adopt_lost),
		cmocka_unit_test(test_skew_episode),
		cmocka_unit_test(test_release_during_claim),
		cmocka_unit_test(test_release_during_failed_claim),
		cmocka_unit_test(test_lost_mid_claim),
		cmocka_unit_test(test_commit_lost),
		cmocka_unit_test(test_reserve_ahead_in_flight),
		cmocka_unit_test(test_reserve_ahead_fails),
		cmocka_unit_test(test_reserve_lead_adapts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
