/*
 * test_core.c - the command core without any protocol: argument bounds, the
 * typed errors and their one mapping, IDs from a hand-filled pool, DECODE in
 * both forms, and a request that waits for a refill and is resumed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <event2/event.h>

#include "core.h"
#include "layout.h"
#include "lease.h"
#include "snowflake.h"
#include "source.h"
#include "tier.h"

#define B	UINT64_C(4096)

static int64_t fake_us;

static int64_t
fake_clock_us(void)
{
	return fake_us;
}

struct rig {
	struct event_base	*base;
	struct tier		 tier;
	struct snowflake	 gen;
	struct lease		 lease;
	struct source		 src;
	struct core		 core;
	struct core_waiter	 w;
	int			 resumed;
};

static void
rig_resume(void *arg)
{
	((struct rig *)arg)->resumed++;
}

/* A tier with no DB handles (block_size B so DECODE works), no lease. */
static struct rig *
rig_new(enum ticket_state odd)
{
	static struct rig r;
	struct snowflake_config sc = { 50, 1000 };

	memset(&r, 0, sizeof(r));
	fake_us = layout_ts_to_unix_ms(UINT64_C(28000000000)) * 1000;
	r.base = event_base_new();
	assert_non_null(r.base);
	pool_init(&r.tier.seq.pool);
	r.tier.srv[SERVER_ODD].state = odd;
	r.tier.srv[SERVER_EVEN].state = TICKET_DOWN;
	r.tier.srv[SERVER_ODD].name = "odd";
	r.tier.srv[SERVER_EVEN].name = "even";
	snowflake_init(&r.gen, &sc);
	r.lease.state = LEASE_NONE;
	r.lease.want.fresh = true;		/* keeps lease_clock_stepped() off the event loop */
	source_init(&r.src, &r.tier, &r.gen, &r.lease, fake_clock_us, 50);
	assert_true(core_init(&r.core, r.base, &r.src));
	assert_true(core_waiter_init(&r.w, &r.core, rig_resume, &r));
	return &r;
}

static void
rig_free(struct rig *r)
{
	core_waiter_free(&r->w);
	core_free(&r->core);
	event_base_free(r->base);
}

/* Runs cmd with arg (NULL for none) and expects err. */
static struct core_result *
run(struct rig *r, enum core_cmd cmd, const char *arg, enum core_err err)
{
	static struct core_result res;
	struct core_req req = { cmd, arg, arg ? strlen(arg) : 0, NULL, NULL, 0 };

	assert_int_equal(core_exec(&r->core, &r->w, &req, &res), CORE_DONE);
	assert_int_equal(res.err, err);
	return &res;
}

static void
test_bounds_and_errors(void **state)
{
	struct rig *r = rig_new(TICKET_READY);
	struct core_result *res;

	(void)state;
	res = run(r, CORE_CMD_IDS, "0", CORE_ERR_RANGE);
	assert_string_equal(res->why, "n must be 1..1000");
	run(r, CORE_CMD_IDS, "1001", CORE_ERR_RANGE);
	res = run(r, CORE_CMD_BLOCK, "4097", CORE_ERR_RANGE);
	assert_string_equal(res->why, "n must be 1..4096");
	run(r, CORE_CMD_BLOCK, "0", CORE_ERR_RANGE);
	res = run(r, CORE_CMD_IDS, "abc", CORE_ERR_BADREQ);
	assert_string_equal(res->why, "argument is not a decimal number");
	run(r, CORE_CMD_IDS, "-1", CORE_ERR_BADREQ);
	run(r, CORE_CMD_IDS, "+1", CORE_ERR_BADREQ);
	run(r, CORE_CMD_IDS, "0x10", CORE_ERR_BADREQ);
	res = run(r, CORE_CMD_IDS, "99999999999999999999999", CORE_ERR_RANGE);
	assert_string_equal(res->why, "number too large");
	run(r, CORE_CMD_IDS, "00000000000000000000000001", CORE_ERR_RANGE);
	run(r, CORE_CMD_DECODE, "18446744073709551616", CORE_ERR_RANGE);
	res = run(r, CORE_CMD_DECODE, "0", CORE_ERR_RANGE);
	assert_string_equal(res->why, "an ID is 1..9223372036854775807");
	run(r, CORE_CMD_DECODE, "9223372036854775808", CORE_ERR_RANGE);
	run(r, CORE_CMD_B58, "0", CORE_ERR_RANGE);
	/* Every error counted under its class, with the request. */
	assert_true(r->core.stats.errors[CORE_ERR_RANGE] == 10);
	assert_true(r->core.stats.errors[CORE_ERR_BADREQ] == 4);
	assert_true(r->core.stats.requests == 14);
	rig_free(r);
}

/* The one mapping: every class has its code, HTTP and gRPC status. */
static void
test_error_mapping(void **state)
{
	(void)state;
	assert_string_equal(core_err_info(CORE_ERR_BADREQ)->code, "BADREQ");
	assert_int_equal(core_err_info(CORE_ERR_BADREQ)->http_status, 400);
	assert_int_equal(core_err_info(CORE_ERR_BADREQ)->grpc_status, 3);
	assert_string_equal(core_err_info(CORE_ERR_RANGE)->code, "RANGE");
	assert_int_equal(core_err_info(CORE_ERR_RANGE)->http_status, 400);
	assert_int_equal(core_err_info(CORE_ERR_RANGE)->grpc_status, 3);
	assert_string_equal(core_err_info(CORE_ERR_UNAVAILABLE)->code, "UNAVAILABLE");
	assert_int_equal(core_err_info(CORE_ERR_UNAVAILABLE)->http_status, 503);
	assert_int_equal(core_err_info(CORE_ERR_UNAVAILABLE)->grpc_status, 14);
	assert_true(core_err_info(CORE_ERR_UNAVAILABLE)->retry_after > 0);
	assert_string_equal(core_err_info(CORE_ERR_CLOCK)->code, "CLOCK");
	assert_int_equal(core_err_info(CORE_ERR_CLOCK)->http_status, 503);
	assert_non_null(core_lookup("ids", 3));
	assert_null(core_lookup("IDSX", 4));
}

static void
test_ids_from_pool(void **state)
{
	struct rig *r = rig_new(TICKET_READY);
	struct core_result *res;
	unsigned i;

	(void)state;
	assert_true(pool_add(&r->tier.seq.pool, 3 * B, B));
	res = run(r, CORE_CMD_ID, NULL, CORE_OK);
	assert_true(res->count == 1 && res->ids[0] == 3 * B);
	res = run(r, CORE_CMD_IDS, "1000", CORE_OK);
	assert_int_equal(res->count, 1000);
	for (i = 0; i < 1000; i++)
		assert_true(res->ids[i] == 3 * B + 1 + i);
	res = run(r, CORE_CMD_BLOCK, "100", CORE_OK);
	assert_true(res->first == 3 * B + 1001 && res->count == 100);
	rig_free(r);
}

static void
test_decode_both_forms(void **state)
{
	struct rig *r = rig_new(TICKET_READY);
	struct core_result *res;
	uint64_t sf = layout_snowflake_compose(UINT64_C(28000000000), 37, 5);
	char dec[24], b58[B58_LEN + 1];

	(void)state;
	r->tier.block_size = B;
	res = run(r, CORE_CMD_DECODE, "12289", CORE_OK);	/* 3 * 4096 + 1 */
	assert_int_equal(res->dec.region, LAYOUT_TICKET);
	assert_true(res->dec.ticket == 3);
	assert_string_equal(res->dec.server, "odd");
	assert_false(res->from_b58);
	b58_encode(12289, b58);
	assert_string_equal(res->dec.b58, b58);
	res = run(r, CORE_CMD_DECODE, b58, CORE_OK);
	assert_true(res->from_b58 && res->dec.id == 12289 && res->dec.ticket == 3);
	snprintf(dec, sizeof(dec), "%llu", (unsigned long long)sf);
	res = run(r, CORE_CMD_DECODE, dec, CORE_OK);
	assert_int_equal(res->dec.region, LAYOUT_SNOWFLAKE);
	assert_true(res->dec.worker == 37 && res->dec.seq == 5);
	/* The design's 5/5 split, computed once for every adapter: 37 = 1 * 32 + 5. */
	assert_true(res->dec.datacenter_id == 1 && res->dec.worker_id == 5);
	assert_true(res->dec.unix_ms == layout_ts_to_unix_ms(UINT64_C(28000000000)));
	res = run(r, CORE_CMD_B58, dec, CORE_OK);
	b58_encode(sf, b58);
	assert_string_equal(res->dec.b58, b58);
	run(r, CORE_CMD_DECODE, "1111111111O", CORE_ERR_BADREQ);
	run(r, CORE_CMD_DECODE, "zzzzzzzzzzz", CORE_ERR_RANGE);
	r->tier.block_size = 0;
	res = run(r, CORE_CMD_DECODE, "12289", CORE_ERR_UNAVAILABLE);
	rig_free(r);
}

/* Health is read from the core, and reading it changes nothing. */
static void
test_health(void **state)
{
	struct rig *r = rig_new(TICKET_READY);
	struct core_health h;
	uint64_t changes;

	(void)state;
	r->tier.block_size = B;
	assert_true(pool_add(&r->tier.seq.pool, 5 * B, B));
	source_update_mode(&r->src);
	changes = r->src.stats.mode_changes;
	core_health(&r->core, &h);
	assert_true(h.ok);
	assert_string_equal(h.mode, "ticket");
	assert_true(h.ids_buffered == B);
	assert_string_equal(h.reason, "a ticket server is up");
	assert_string_equal(h.lease, "none");
	core_health(&r->core, &h);
	assert_true(r->src.stats.mode_changes == changes);
	rig_free(r);
}

/* Nothing buffered, a server up: the waiter parks and is resumed by a wake. */
static void
test_wait_and_resume(void **state)
{
	struct rig *r = rig_new(TICKET_READY);
	struct core_req req = { CORE_CMD_IDS, "10", 2, NULL, NULL, 0 };
	struct core_result res;

	(void)state;
	assert_int_equal(core_exec(&r->core, &r->w, &req, &res), CORE_PENDING);
	assert_true(r->w.parked && r->w.timed);
	assert_true(r->core.stats.waits == 1 && r->core.stats.requests == 0);
	assert_true(pool_add(&r->tier.seq.pool, 5 * B, B));
	core_wake(&r->core);
	event_base_loop(r->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	assert_int_equal(r->resumed, 1);
	assert_false(r->w.parked);
	assert_int_equal(core_exec(&r->core, &r->w, &req, &res), CORE_DONE);
	assert_true(res.err == CORE_OK && res.ids[0] == 5 * B && res.count == 10);
	assert_false(r->w.timed);
	rig_free(r);
}

/* The refill wait runs out with no lease: UNAVAILABLE, never a made-up ID. */
static void
test_wait_expires_unavailable(void **state)
{
	struct rig *r = rig_new(TICKET_READY);
	struct core_req req = { CORE_CMD_ID, NULL, 0, NULL, NULL, 0 };
	struct core_result res;

	(void)state;
	assert_int_equal(core_exec(&r->core, &r->w, &req, &res), CORE_PENDING);
	event_base_loop(r->base, EVLOOP_ONCE);	/* the 50 ms refill wait fires */
	assert_int_equal(r->resumed, 1);
	assert_true(r->w.waited);
	assert_int_equal(core_exec(&r->core, &r->w, &req, &res), CORE_DONE);
	assert_int_equal(res.err, CORE_ERR_UNAVAILABLE);
	assert_true(r->core.stats.errors[CORE_ERR_UNAVAILABLE] == 1);
	rig_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_and_errors),
		cmocka_unit_test(test_error_mapping),
		cmocka_unit_test(test_ids_from_pool),
		cmocka_unit_test(test_decode_both_forms),
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_wait_and_resume),
		cmocka_unit_test(test_wait_expires_unavailable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
