/*
 * fuzz_resp.c - libFuzzer harness: the RESP frame parser on any bytes, frame
 * after frame; every argument must lie inside the frame it came from. Then
 * the adapter itself on the same bytes, read as conn.c reads them (a 4 KB
 * input buffer), on a connection without a socket over a core with IDs in its
 * pool: MULTI/EXEC queues, names, COMMAND; it must never leave a full input
 * buffer unparsed, step past its input, or leak what it keeps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "config.h"
#include "conn.h"
#include "core.h"
#include "lease.h"
#include "listener.h"
#include "metrics.h"
#include "proto_resp.h"
#include "snowflake.h"
#include "source.h"
#include "statefile.h"
#include "tier.h"
#include "trim.h"

#define FUZZ_STEPS_MAX	100000	/* steps for one input: more is a loop */

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_rig {
	struct event_base	*base;
	struct tier		 tier;
	struct snowflake	 gen;
	struct lease		 lease;
	struct source		 src;
	struct core		 core;
	struct config		 cfg;
	struct conn_set		 set;
	struct listener_counters lc;
	struct statefile	 sf;
	struct trim		 trim;
	struct metrics_src	 m;	/* for INFO and STATS */
	uint64_t		 next_block;
};

static int64_t
fuzz_clock_us(void)
{
	return INT64_C(1700000000000000);
}

static void
fuzz_resume(void *arg)
{
	(void)arg;
}

/* One core for every input; its pool refilled for each. */
static struct fuzz_rig *
fuzz_rig(void)
{
	static struct fuzz_rig r;
	static bool done;
	struct snowflake_config sc = { 50, 1000 };

	if (done)
		return &r;
	done = true;
	r.base = event_base_new();
	if (r.base == NULL)
		abort();
	pool_init(&r.tier.seq.pool);
	r.tier.srv[SERVER_ODD].state = TICKET_READY;
	r.tier.srv[SERVER_EVEN].state = TICKET_DOWN;
	r.tier.srv[SERVER_ODD].name = "odd";
	r.tier.srv[SERVER_EVEN].name = "even";
	r.tier.block_size = UINT64_C(1) << 20;
	snowflake_init(&r.gen, &sc);
	r.lease.state = LEASE_NONE;
	r.lease.want.fresh = true;
	source_init(&r.src, &r.tier, &r.gen, &r.lease, fuzz_clock_us, 50);
	if (!core_init(&r.core, r.base, &r.src))
		abort();
	r.cfg.resp_max_args = 32;
	r.cfg.resp_max_bulk_bytes = 1024;
	r.cfg.resp_multi_max_commands = 64;
	r.cfg.resp_multi_max_bytes = 8192;
	r.set.cfg = &r.cfg;
	r.set.core = &r.core;
	r.set.base = r.base;
	r.m.listener = &r.lc;
	r.m.conns = &r.set.stats;
	r.m.core = &r.core;
	r.m.source = &r.src;
	r.m.sf = &r.sf;
	r.m.trim = &r.trim;
	r.set.metrics = &r.m;
	r.next_block = 1;
	return &r;
}

/* The adapter on data, read in pieces of at most the input buffer. */
static void
fuzz_adapter(const uint8_t *data, size_t size)
{
	struct fuzz_rig *r = fuzz_rig();
	struct conn c;
	enum proto_step st = PROTO_NEED_MORE;
	size_t fed = 0, n;
	unsigned steps = 0;

	pool_init(&r->tier.seq.pool);
	if (!pool_add(&r->tier.seq.pool, r->next_block++ << 20, UINT64_C(1) << 20))
		abort();
	memset(&c, 0, sizeof(c));
	c.set = &r->set;
	c.fd = -1;
	c.id = 1;
	c.proto = &proto_resp_ops;
	if ((c.in = malloc(CONN_IN_SIZE)) == NULL ||
	    !core_waiter_init(&c.waiter, &r->core, fuzz_resume, NULL))
		abort();
	for (;;) {
		memmove(c.in, c.in + c.in_off, c.in_len - c.in_off);
		c.in_len -= c.in_off;
		c.in_off = 0;
		n = size - fed < CONN_IN_SIZE - c.in_len ? size - fed : CONN_IN_SIZE - c.in_len;
		memcpy(c.in + c.in_len, data + fed, n);
		c.in_len += n;
		fed += n;
		do {
			st = proto_resp_ops.one(&c, false);
			if (c.in_off > c.in_len || ++steps > FUZZ_STEPS_MAX)
				__builtin_trap();
			c.out_off = c.out_len = 0;	/* the peer takes every reply */
		} while (st == PROTO_HANDLED && !c.closing);
		if (st != PROTO_NEED_MORE || c.closing)
			break;
		/* Needing more with a full buffer: this connection would hang. */
		if (c.in_len - c.in_off == CONN_IN_SIZE)
			__builtin_trap();
		if (fed == size) {
			if (c.in_len > c.in_off)
				(void)proto_resp_ops.one(&c, true);
			break;
		}
	}
	proto_resp_ops.release(&c);
	if (c.proto_state != NULL)
		__builtin_trap();
	core_waiter_free(&c.waiter);
	free(c.in);
	free(c.out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct proto_resp_limits lim = { 32, 1024, 4096 };
	const char *p = (const char *)data, *end = p + size;
	struct proto_resp_frame f;
	const char *why;
	unsigned i;

	while (p < end) {
		why = NULL;
		if (proto_resp_parse(p, (size_t)(end - p), &lim, &f, &why) != PROTO_RESP_FRAME)
			break;
		if (f.used == 0 || f.used > (size_t)(end - p) || f.argc > lim.max_args)
			__builtin_trap();
		for (i = 0; i < f.argc; i++)
			if (f.argv[i] < p || f.argv[i] + f.argl[i] > p + f.used ||
			    f.argl[i] > lim.max_bulk)
				__builtin_trap();
		p += f.used;
	}
	/* Text input is the text protocol's: the adapter sees '*' first. */
	if (size > 0 && data[0] == '*')
		fuzz_adapter(data, size);
	return 0;
}
