/*
 * fuzz_h2.c - libFuzzer harness: gRPC over HTTP/2, the input being the
 * client's side of one connection, fed to a real nghttp2 server session with
 * proto_grpc.c's own callbacks (proto_grpc_mem_open: stream headers, DATA with
 * the 5-byte prefix, message decoding, replies and trailers). The connection
 * preface is put in front unless the input starts with "PRI ". Requests run in
 * a core without databases: a ticket server "up" with a few buffered IDs, so
 * later calls wait for a refill (1 ms) and then fall back to a held Snowflake
 * lease. A client PING frame is where time passes: the bytes up to it are fed,
 * then parked requests are resumed (and deadlines pass) before the rest, so the
 * input orders resets and closes against waiting requests.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "clk.h"
#include "config.h"
#include "core.h"
#include "layout.h"
#include "lease.h"
#include "pool.h"
#include "proto_grpc.h"
#include "snowflake.h"
#include "source.h"
#include "statefile.h"
#include "tier.h"

#define FUZZ_B		(UINT64_C(1) << 20)
#define FUZZ_POOL	1500	/* buffered ticket IDs per input: a batch and a half */
#define FUZZ_PREFACE	"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define FUZZ_PREFACE_LEN 24

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool	fuzz_setup(void);
static void	fuzz_guard_cb(evutil_socket_t fd, short what, void *arg);
static void	fuzz_settle(void);
static bool	fuzz_feed(struct proto_grpc *g, const uint8_t *data, size_t len);
static void	fuzz_check_sent(void);

/* The core's state (no database, no state file) and the server's output. */
static struct {
	struct config		 cfg;
	struct event_base	*base;
	struct statefile	 sf;
	struct tier		 tier;
	struct snowflake	 gen;
	struct lease		 lease;
	struct source		 src;
	struct core		 core;
	struct event		*guard;
	bool			 guard_fired;
	struct evbuffer		*sent;
	size_t			 sent_len;
} rig;

/* The defaults of the settings table, and the rig, built once. */
static bool
fuzz_setup(void)
{
	struct snowflake_config sc = { 50, 1000 };
	char *argv[] = { (char *)"idserver", NULL };
	char err[256];
	bool exit_now;
	uint64_t now;

	if (!config_load(&rig.cfg, 1, argv, &exit_now, err, sizeof(err)))
		return false;
	rig.base = event_base_new();
	rig.sent = evbuffer_new();
	if (rig.base == NULL || rig.sent == NULL ||
	    !layout_ts_from_unix_ms(clk_real_us() / 1000, &now))
		return false;
	rig.guard = evtimer_new(rig.base, fuzz_guard_cb, NULL);
	rig.tier.srv[SERVER_ODD].name = "odd";
	rig.tier.srv[SERVER_EVEN].name = "even";
	snowflake_init(&rig.gen, &sc);
	/* A window of a day around now: the fallback mints without any database. */
	snowflake_set_window(&rig.gen, 7, now - 1000, now + 86400000);
	rig.lease.cfg = &rig.cfg;
	rig.lease.gen = &rig.gen;
	rig.lease.sf = &rig.sf;		/* off: reservations need no disk */
	rig.lease.state = LEASE_HELD;
	rig.lease.worker = 7;
	rig.lease.server = 1;
	rig.lease.window_start = now - 1000;
	rig.lease.window_end = now + 86400000;
	rig.lease.want.fresh = true;		/* keeps lease_clock_stepped() off the event loop */
	return rig.guard != NULL && core_init(&rig.core, rig.base, &rig.src);
}

/* The bound of a settle has passed: the loop stops waiting for parked requests. */
static void
fuzz_guard_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	rig.guard_fired = true;
}

/* Runs the loop until no request is parked, for at most 20 ms. */
static void
fuzz_settle(void)
{
	struct timeval tv = { 0, 20000 };

	if (TAILQ_EMPTY(&rig.core.parked))
		return;
	rig.guard_fired = false;
	evtimer_add(rig.guard, &tv);
	while (!rig.guard_fired && !TAILQ_EMPTY(&rig.core.parked))
		event_base_loop(rig.base, EVLOOP_ONCE);
	evtimer_del(rig.guard);
}

/* The server's bytes so far: whole frames, SETTINGS first. */
static void
fuzz_check_sent(void)
{
	size_t len = evbuffer_get_length(rig.sent), off = 0, n;
	uint8_t *p = evbuffer_pullup(rig.sent, -1);

	rig.sent_len += len;
	if (rig.sent_len > 0 && rig.sent_len == len && (len < 9 || p[3] != 4))
		__builtin_trap();
	while (off < len) {
		if (len - off < 9)
			__builtin_trap();
		n = (size_t)p[off] << 16 | (size_t)p[off + 1] << 8 | p[off + 2];
		if (n > len - off - 9)
			__builtin_trap();
		off += 9 + n;
	}
	evbuffer_drain(rig.sent, len);
}

/* Feeds bytes; false once the connection is closed. */
static bool
fuzz_feed(struct proto_grpc *g, const uint8_t *data, size_t len)
{
	bool open = proto_grpc_mem_recv(g, data, len, rig.sent);

	fuzz_check_sent();
	return open;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct proto_grpc *g;
	size_t off = 0, from, n;
	bool open = true, ping;

	if (!ready && !(ready = fuzz_setup()))
		__builtin_trap();
	/* Fresh per input: servers, buffered IDs, the stall rule, the callers. */
	memset(&rig.tier, 0, sizeof(rig.tier));
	rig.tier.srv[SERVER_ODD].state = TICKET_READY;	/* up, never fetching */
	rig.tier.srv[SERVER_EVEN].state = TICKET_DOWN;
	rig.tier.srv[SERVER_ODD].name = "odd";
	rig.tier.srv[SERVER_EVEN].name = "even";
	pool_init(&rig.tier.seq.pool);
	if (!pool_add(&rig.tier.seq.pool, 3 * FUZZ_B, FUZZ_POOL))
		__builtin_trap();
	memset(&rig.src, 0, sizeof(rig.src));
	source_init(&rig.src, &rig.tier, &rig.gen, &rig.lease, clk_real_us, 1);
	rig.src.mode = SOURCE_MODE_TICKET;
	memset(&rig.core.callers, 0, sizeof(rig.core.callers));
	rig.core.callers.max = 4;
	rig.sent_len = 0;

	if (!proto_grpc_new(&g, rig.base, &rig.cfg, &rig.core))
		return 0;
	if (proto_grpc_mem_open(g)) {
		fuzz_check_sent();
		if (size < 4 || memcmp(data, "PRI ", 4) != 0)
			open = fuzz_feed(g, (const uint8_t *)FUZZ_PREFACE, FUZZ_PREFACE_LEN);
		else
			off = size < FUZZ_PREFACE_LEN ? size : FUZZ_PREFACE_LEN;
		/* Up to each PING as one read, then time passes. */
		from = 0;
		while (open && off < size) {
			if (size - off < 9) {
				off = size;
				break;
			}
			ping = data[off + 3] == 6;
			n = 9 + ((size_t)data[off] << 16 | (size_t)data[off + 1] << 8 | data[off + 2]);
			off += n < size - off ? n : size - off;
			if (!ping)
				continue;
			open = fuzz_feed(g, data + from, off - from);
			from = off;
			fuzz_settle();
			if (open)	/* what resumed requests sent, or that the session ended */
				open = fuzz_feed(g, data + off, 0);
		}
		if (open && from < off)
			open = fuzz_feed(g, data + from, off - from);
		fuzz_settle();
		if (open)
			(void)fuzz_feed(g, data + off, 0);
	}
	proto_grpc_free(g);
	/* Every stream's waiter and timers went with its connection. */
	if (!TAILQ_EMPTY(&rig.core.parked))
		__builtin_trap();
	return 0;
}
