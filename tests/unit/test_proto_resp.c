/*
 * test_proto_resp.c - the RESP2 frame parser: whole and split frames, inline
 * commands, and every protocol error a hostile client can cause; then the
 * adapter itself on a connection without a socket, over a core fed from a
 * hand-filled pool: MULTI/EXEC/DISCARD as Redis answers them, byte for byte,
 * the connection's name, TIME, AUTH, the command table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <event2/event.h>

#include "config.h"
#include "conn.h"
#include "core.h"
#include "layout.h"
#include "lease.h"
#include "proto_resp.h"
#include "snowflake.h"
#include "source.h"
#include "tier.h"

#define B	UINT64_C(4096)

static const struct proto_resp_limits lim = { 8, 64, 4096 };

static enum proto_resp_parse
parse(const char *s, struct proto_resp_frame *f, const char **why)
{
	return proto_resp_parse(s, strlen(s), &lim, f, why);
}

static void
test_multibulk(void **state)
{
	static const char req[] = "*2\r\n$3\r\nIDS\r\n$4\r\n1000\r\n*1\r\n$2\r\nID\r\n";
	struct proto_resp_frame f;
	const char *why = NULL;
	size_t i;

	(void)state;
	assert_int_equal(parse(req, &f, &why), PROTO_RESP_FRAME);
	assert_int_equal(f.argc, 2);
	assert_true(f.argl[0] == 3 && memcmp(f.argv[0], "IDS", 3) == 0);
	assert_true(f.argl[1] == 4 && memcmp(f.argv[1], "1000", 4) == 0);
	assert_int_equal(f.used, 23);
	assert_false(f.inline_cmd);
	/* Every prefix of a frame is incomplete, never an error or a frame. */
	for (i = 0; i < 23; i++)
		assert_int_equal(proto_resp_parse(req, i, &lim, &f, &why), PROTO_RESP_INCOMPLETE);
	/* Binary-safe: the bulk length counts, not the bytes. */
	assert_int_equal(proto_resp_parse("*1\r\n$4\r\na\r\nb\r\n", 14, &lim, &f, &why),
	    PROTO_RESP_FRAME);
	assert_true(f.argl[0] == 4 && memcmp(f.argv[0], "a\r\nb", 4) == 0);
	/* *0 and *-1: empty requests, nothing to run. */
	assert_int_equal(parse("*0\r\n", &f, &why), PROTO_RESP_FRAME);
	assert_true(f.argc == 0 && f.used == 4);
	assert_int_equal(parse("*-1\r\n", &f, &why), PROTO_RESP_FRAME);
	assert_true(f.argc == 0);
	/* Below -1 is no array at all: an error, never a request that follows. */
	assert_int_equal(parse("*-5\r\nID\r\n", &f, &why), PROTO_RESP_ERROR);
	assert_string_equal(why, "invalid multibulk length");
}

static void
test_inline(void **state)
{
	struct proto_resp_frame f;
	const char *why = NULL;

	(void)state;
	assert_int_equal(parse("IDS  5\r\n", &f, &why), PROTO_RESP_FRAME);
	assert_true(f.inline_cmd && f.argc == 2 && f.used == 8);
	assert_true(f.argl[1] == 1 && f.argv[1][0] == '5');
	assert_int_equal(parse("PING", &f, &why), PROTO_RESP_INCOMPLETE);
	assert_int_equal(parse("\r\n", &f, &why), PROTO_RESP_FRAME);
	assert_int_equal(f.argc, 0);
	assert_int_equal(parse("a b c d e f g h i\n", &f, &why), PROTO_RESP_ERROR);
	/* An inline word over max_bulk (64 here), as found by fuzz_resp. */
	why = NULL;
	assert_int_equal(parse("DECODE 12345678901234567890123456789012345678901234567890"
	    "12345678901234567890\n", &f, &why), PROTO_RESP_ERROR);
	assert_non_null(strstr(why, "resp_max_bulk_bytes"));
	assert_int_equal(parse("DECODE 1234567890123456789012345678901234567890123456789012"
	    "345678901234\n", &f, &why), PROTO_RESP_FRAME);
}

/* Each bound and malformation is a protocol error with a reason. */
static void
test_protocol_errors(void **state)
{
	static const char *const bad[] = {
		"*9\r\n",			/* more than max_args */
		"*x\r\n",
		"*\r\n",
		"*1\r\n+ID\r\n",		/* not a bulk */
		"*1\r\n$-1\r\n",		/* null bulk as an argument */
		"*1\r\n$65\r\n",		/* above max_bulk */
		"*1\r\n$2\r\nIDX\r\n",		/* no CRLF after the bulk */
		"*1\r\n$2\rXID\r\n",		/* CR without LF */
		"*1\r\n$99999999999999999999999999999999\r\n",
		"*1000000000000000000000000000000000000000000",	/* header without end */
	};
	struct proto_resp_frame f;
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(parse(bad[i], &f, &why), PROTO_RESP_ERROR);
		assert_non_null(why);
	}
	/* A frame that cannot fit in the input buffer is refused before it is read. */
	{
		struct proto_resp_limits small = { 8, 64, 32 };
		static const char big[] = "*2\r\n$40\r\n";

		assert_int_equal(proto_resp_parse("*2\r\n$40\r\n", sizeof(big) - 1, &small, &f,
		    &why), PROTO_RESP_ERROR);
	}
}


static int64_t fake_us;

static int64_t
fake_clock_us(void)
{
	return fake_us;
}

/* A core over a pool filled by hand (the odd server up), and one connection. */
struct rig {
	struct event_base	*base;
	struct tier		 tier;
	struct snowflake	 gen;
	struct lease		 lease;
	struct source		 src;
	struct core		 core;
	struct config		 cfg;
	struct conn_set		 set;
	struct conn		 c;
	int			 resumed;
	char			 reply[65536];
};

static void
rig_resume(void *arg)
{
	((struct rig *)arg)->resumed++;
}

static struct rig *
rig_new(void)
{
	static struct rig r;
	struct snowflake_config sc = { 50, 1000 };

	memset(&r, 0, sizeof(r));
	fake_us = layout_ts_to_unix_ms(UINT64_C(28000000000)) * 1000;
	r.base = event_base_new();
	assert_non_null(r.base);
	pool_init(&r.tier.seq.pool);
	r.tier.srv[SERVER_ODD].state = TICKET_READY;
	r.tier.srv[SERVER_EVEN].state = TICKET_DOWN;
	r.tier.srv[SERVER_ODD].name = "odd";
	r.tier.srv[SERVER_EVEN].name = "even";
	snowflake_init(&r.gen, &sc);
	r.lease.state = LEASE_NONE;
	r.lease.want.fresh = true;
	source_init(&r.src, &r.tier, &r.gen, &r.lease, fake_clock_us, 50);
	assert_true(core_init(&r.core, r.base, &r.src));
	r.cfg.resp_max_args = 32;
	r.cfg.resp_max_bulk_bytes = 1024;
	r.cfg.resp_multi_max_commands = 100;
	r.cfg.resp_multi_max_bytes = 4096;
	r.set.cfg = &r.cfg;
	r.set.core = &r.core;
	r.set.base = r.base;
	r.c.set = &r.set;
	r.c.fd = -1;
	r.c.id = 7;
	r.c.proto = &proto_resp_ops;
	r.c.in = malloc(CONN_IN_SIZE);
	assert_non_null(r.c.in);
	assert_true(core_waiter_init(&r.c.waiter, &r.core, rig_resume, &r));
	return &r;
}

static void
rig_free(struct rig *r)
{
	proto_resp_ops.release(&r->c);
	core_waiter_free(&r->c.waiter);
	core_free(&r->core);
	event_base_free(r->base);
	free(r->c.in);
	free(r->c.out);
}

/*
 * Sends req on the connection and runs the adapter until it needs more or a
 * request waits; returns the replies (and forgets them). Steps are counted.
 */
static const char *
talk(struct rig *r, const char *req, enum proto_step *last)
{
	struct conn *c = &r->c;
	enum proto_step st;
	size_t n = strlen(req), out;

	memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
	c->in_len -= c->in_off;
	c->in_off = 0;
	assert_true(c->in_len + n <= CONN_IN_SIZE);
	memcpy(c->in + c->in_len, req, n);
	c->in_len += n;
	do
		st = proto_resp_ops.one(c, false);
	while (st == PROTO_HANDLED && c->in_off < c->in_len);
	if (last != NULL)
		*last = st;
	out = c->out_len - c->out_off;
	assert_true(out < sizeof(r->reply));
	memcpy(r->reply, c->out + c->out_off, out);
	r->reply[out] = '\0';
	c->out_off = c->out_len = 0;
	return r->reply;
}

static const char multi[] = "*1\r\n$5\r\nMULTI\r\n";
static const char exec_[] = "*1\r\n$4\r\nEXEC\r\n";
static const char discard[] = "*1\r\n$7\r\nDISCARD\r\n";
static const char id[] = "*1\r\n$2\r\nID\r\n";
static const char ids3[] = "*2\r\n$3\r\nIDS\r\n$1\r\n3\r\n";
static const char ids5000[] = "*2\r\n$3\r\nIDS\r\n$4\r\n5000\r\n";

/* Queued, then run by EXEC: one array, a runtime error in its place. */
static void
test_multi_exec(void **state)
{
	struct rig *r = rig_new();
	char req[512];
	uint64_t before;

	(void)state;
	assert_true(pool_add(&r->tier.seq.pool, 3 * B, B));
	before = r->core.stats.requests;
	snprintf(req, sizeof(req), "%s%s%s%sPING\r\n%s", multi, id, ids3, ids5000, exec_);
	assert_string_equal(talk(r, req, NULL),
	    "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n"
	    "*4\r\n:12288\r\n*3\r\n:12289\r\n:12290\r\n:12291\r\n"
	    "-RANGE n must be 1..1000\r\n+PONG\r\n");
	/* Counted as outside: MULTI, EXEC and each command once; 4 IDs handed out. */
	assert_true(r->core.stats.requests - before == 6);
	assert_true(r->src.stats.ids_ticket == 4);
	assert_true(r->core.stats.errors[CORE_ERR_RANGE] == 1);
	/* Out of MULTI again: the next ID is served at once, after the others. */
	assert_string_equal(talk(r, id, NULL), ":12292\r\n");
	/* An empty transaction. */
	snprintf(req, sizeof(req), "%s%s", multi, exec_);
	assert_string_equal(talk(r, req, NULL), "+OK\r\n*0\r\n");
	/* Inline commands are queued too. */
	assert_string_equal(talk(r, "MULTI\r\nID\r\nEXEC\r\n", NULL),
	    "+OK\r\n+QUEUED\r\n*1\r\n:12293\r\n");
	rig_free(r);
}

/* Redis's errors: without MULTI, nested, WATCH inside, and what aborts EXEC. */
static void
test_multi_errors(void **state)
{
	struct rig *r = rig_new();
	char req[512];

	(void)state;
	assert_true(pool_add(&r->tier.seq.pool, 3 * B, B));
	assert_string_equal(talk(r, exec_, NULL), "-ERR EXEC without MULTI\r\n");
	assert_string_equal(talk(r, discard, NULL), "-ERR DISCARD without MULTI\r\n");
	/* Nested MULTI and WATCH inside are refused without aborting the transaction. */
	snprintf(req, sizeof(req), "%s%s%s*2\r\n$5\r\nWATCH\r\n$1\r\nk\r\n%s", multi, multi, id,
	    exec_);
	assert_string_equal(talk(r, req, NULL), "+OK\r\n-ERR MULTI calls can not be nested\r\n"
	    "+QUEUED\r\n-ERR WATCH inside MULTI is not allowed\r\n*1\r\n:12288\r\n");
	/* A wrong arity or an unknown command while queuing: EXEC aborts, nothing runs. */
	snprintf(req, sizeof(req), "%s%s*1\r\n$3\r\nIDS\r\n%s", multi, id, exec_);
	assert_string_equal(talk(r, req, NULL), "+OK\r\n+QUEUED\r\n"
	    "-ERR wrong number of arguments for 'ids' command\r\n"
	    "-EXECABORT Transaction discarded because of previous errors.\r\n");
	snprintf(req, sizeof(req), "%s*1\r\n$4\r\nNOPE\r\n%s%s", multi, id, exec_);
	assert_string_equal(talk(r, req, NULL), "+OK\r\n"
	    "-ERR unknown command 'NOPE', with args beginning with: \r\n+QUEUED\r\n"
	    "-EXECABORT Transaction discarded because of previous errors.\r\n");
	assert_string_equal(talk(r, id, NULL), ":12289\r\n");
	/* DISCARD drops the queue; the IDs were never taken. */
	snprintf(req, sizeof(req), "%s%s%s%s", multi, id, discard, id);
	assert_string_equal(talk(r, req, NULL), "+OK\r\n+QUEUED\r\n+OK\r\n:12290\r\n");
	assert_true(r->src.stats.ids_ticket == 3);
	/* WATCH outside, UNWATCH anywhere. */
	assert_string_equal(talk(r, "WATCH a b\r\nUNWATCH\r\nMULTI\r\nUNWATCH\r\nEXEC\r\n", NULL),
	    "+OK\r\n+OK\r\n+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n");
	/* Unknown subcommands are refused while queuing, as Redis does. */
	assert_string_equal(talk(r, "MULTI\r\nCLIENT FOO\r\nCOMMAND FOO\r\nEXEC\r\n", NULL),
	    "+OK\r\n-ERR unknown subcommand or wrong number of arguments for 'client' command\r\n"
	    "-ERR unknown subcommand 'FOO'. Try COMMAND COUNT, DOCS, INFO or LIST.\r\n"
	    "-EXECABORT Transaction discarded because of previous errors.\r\n");
	/* EXEC with arguments is an arity error, which aborts the transaction. */
	assert_string_equal(talk(r, "MULTI\r\nEXEC x\r\nEXEC\r\n", NULL), "+OK\r\n"
	    "-ERR wrong number of arguments for 'exec' command\r\n"
	    "-EXECABORT Transaction discarded because of previous errors.\r\n");
	rig_free(r);
}

/* resp_multi_max_commands and resp_multi_max_bytes: the one too many aborts EXEC. */
static void
test_multi_bounds(void **state)
{
	struct rig *r = rig_new();
	char big[1200];

	(void)state;
	/* "ECHO 000...0\r\n": 1007 bytes, four fit in 4096. */
	assert_true(pool_add(&r->tier.seq.pool, 3 * B, B));
	r->cfg.resp_multi_max_commands = 2;
	assert_string_equal(talk(r, "MULTI\r\nID\r\nID\r\nID\r\nEXEC\r\n", NULL),
	    "+OK\r\n+QUEUED\r\n+QUEUED\r\n"
	    "-ERR too many commands in this MULTI (resp_multi_max_commands)\r\n"
	    "-EXECABORT Transaction discarded because of previous errors.\r\n");
	r->cfg.resp_multi_max_commands = 100;
	snprintf(big, sizeof(big), "ECHO %01000d\r\n", 0);
	assert_string_equal(talk(r, "MULTI\r\n", NULL), "+OK\r\n");
	assert_string_equal(talk(r, big, NULL), "+QUEUED\r\n");
	assert_string_equal(talk(r, big, NULL), "+QUEUED\r\n");
	assert_string_equal(talk(r, big, NULL), "+QUEUED\r\n");
	assert_string_equal(talk(r, big, NULL), "+QUEUED\r\n");
	assert_string_equal(talk(r, big, NULL),
	    "-ERR too many bytes queued in this MULTI (resp_multi_max_bytes)\r\n");
	assert_string_equal(talk(r, exec_, NULL),
	    "-EXECABORT Transaction discarded because of previous errors.\r\n");
	assert_string_equal(talk(r, id, NULL), ":12288\r\n");
	rig_free(r);
}

/* A queued ID that must wait for a refill: EXEC waits there, then goes on. */
static void
test_exec_waits(void **state)
{
	struct rig *r = rig_new();
	enum proto_step st;
	char req[256];

	(void)state;
	snprintf(req, sizeof(req), "%s%s%s%s", multi, id, ids3, exec_);
	assert_string_equal(talk(r, req, &st), "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n");
	assert_int_equal(st, PROTO_WAIT);
	assert_true(r->c.waiter.parked);
	assert_true(pool_add(&r->tier.seq.pool, 5 * B, B));
	core_wake(&r->core);
	event_base_loop(r->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	assert_int_equal(r->resumed, 1);
	assert_string_equal(talk(r, id, &st), ":20480\r\n*3\r\n:20481\r\n:20482\r\n:20483\r\n"
	    ":20484\r\n");
	assert_int_equal(r->c.in_off, r->c.in_len);
	rig_free(r);
}

/* CLIENT SETNAME/GETNAME/ID/INFO, RESET, TIME, AUTH. */
static void
test_connection_commands(void **state)
{
	struct rig *r = rig_new();
	const char *out;
	char want[64];

	(void)state;
	assert_string_equal(talk(r, "CLIENT GETNAME\r\n", NULL), "$-1\r\n");
	assert_string_equal(talk(r, "CLIENT SETNAME app-1\r\nCLIENT GETNAME\r\n", NULL),
	    "+OK\r\n$5\r\napp-1\r\n");
	assert_string_equal(talk(r, "CLIENT SETNAME\r\n", NULL),
	    "-ERR wrong number of arguments for 'client|setname' command\r\n");
	assert_string_equal(talk(r, "*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$3\r\na b\r\n", NULL),
	    "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
	assert_string_equal(talk(r, "CLIENT ID\r\n", NULL), ":7\r\n");
	out = talk(r, "CLIENT INFO\r\n", NULL);
	assert_non_null(strstr(out, "id=7 addr=? laddr=? fd=-1 name=app-1 age="));
	assert_non_null(strstr(out, " multi=-1 "));
	assert_non_null(strstr(out, " cmd=client|info user=default redir=-1 resp=2\n\r\n"));
	/* Inside MULTI, CLIENT commands are queued like any other; run, they see it. */
	assert_string_equal(talk(r, "MULTI\r\nCLIENT ID\r\nCLIENT LIST\r\n", NULL),
	    "+OK\r\n+QUEUED\r\n+QUEUED\r\n");
	out = talk(r, "EXEC\r\n", NULL);
	assert_memory_equal(out, "*2\r\n:7\r\n$", 8);
	assert_non_null(strstr(out, " flags=x "));
	assert_non_null(strstr(out, " multi=2 "));
	assert_non_null(strstr(out, " cmd=client|list "));
	assert_string_equal(talk(r, "MULTI\r\nID\r\nCLIENT LIST\r\n", NULL),
	    "+OK\r\n+QUEUED\r\n+QUEUED\r\n");
	/* RESET leaves MULTI and forgets the name. */
	assert_string_equal(talk(r, "RESET\r\nCLIENT GETNAME\r\nEXEC\r\n", NULL),
	    "+RESET\r\n$-1\r\n-ERR EXEC without MULTI\r\n");
	out = talk(r, "TIME\r\n", NULL);
	snprintf(want, sizeof(want), "*2\r\n$10\r\n");
	assert_memory_equal(out, want, strlen(want));
	assert_string_equal(talk(r, "AUTH secret\r\n", NULL),
	    "-ERR AUTH <password> called without any password configured for the default "
	    "user. Are you sure your configuration is correct?\r\n");
	assert_string_equal(talk(r, "AUTH a b c\r\n", NULL), "-ERR syntax error\r\n");
	rig_free(r);
}

/* CLIENT LIST's filters and their errors, in Redis 7's words (redis-server 7.0). */
static void
test_client_list_filters(void **state)
{
	struct rig *r = rig_new();
	const char *out;

	(void)state;
	out = talk(r, "CLIENT LIST TYPE normal\r\n", NULL);
	assert_non_null(strstr(out, "id=7 addr="));
	assert_non_null(strstr(out, " cmd=client|list "));
	assert_non_null(strstr(talk(r, "CLIENT LIST type NORMAL\r\n", NULL), "id=7 "));
	assert_string_equal(talk(r, "CLIENT LIST TYPE pubsub\r\nCLIENT LIST TYPE replica\r\n"
	    "CLIENT LIST TYPE slave\r\nCLIENT LIST TYPE master\r\n", NULL),
	    "$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n");
	assert_string_equal(talk(r, "CLIENT LIST TYPE foo\r\n", NULL),
	    "-ERR Unknown client type 'foo'\r\n");
	assert_string_equal(talk(r, "*4\r\n$6\r\nCLIENT\r\n$4\r\nLIST\r\n$4\r\nTYPE\r\n"
	    "$3\r\na\r\n\r\n", NULL), "-ERR Unknown client type 'a?" "?'\r\n");
	/* ID: this connection once per time it is named, nobody else. */
	out = talk(r, "CLIENT LIST ID 7\r\n", NULL);
	assert_non_null(strstr(out, "id=7 "));
	assert_null(strstr(strstr(out, "id=7 ") + 1, "id=7 "));
	out = talk(r, "CLIENT LIST ID 7 3 7 -1 0\r\n", NULL);
	assert_non_null(strstr(strstr(out, "id=7 ") + 1, "id=7 "));
	assert_string_equal(talk(r, "CLIENT LIST ID 1 2 3\r\n", NULL), "$0\r\n\r\n");
	assert_string_equal(talk(r, "CLIENT LIST ID 9223372036854775807 "
	    "-9223372036854775808\r\n", NULL), "$0\r\n\r\n");
	for (size_t i = 0; i < 7; i++) {
		static const char *const bad[] = { "abc", "1.5", "+1", "01", "-0",
		    "9223372036854775808", "-9223372036854775809" };
		char req[96];

		snprintf(req, sizeof(req), "CLIENT LIST ID 7 %s\r\n", bad[i]);
		assert_string_equal(talk(r, req, NULL), "-ERR Invalid client ID\r\n");
	}
	/* The rest: Redis's syntax error; CLIENT INFO takes nothing. */
	assert_string_equal(talk(r, "CLIENT LIST TYPE\r\nCLIENT LIST ID\r\n"
	    "CLIENT LIST TYPE normal x\r\nCLIENT LIST foo\r\nCLIENT LIST ID 7 TYPE normal\r\n",
	    NULL), "-ERR syntax error\r\n-ERR syntax error\r\n-ERR syntax error\r\n"
	    "-ERR syntax error\r\n-ERR Invalid client ID\r\n");
	assert_string_equal(talk(r, "CLIENT INFO x\r\n", NULL),
	    "-ERR wrong number of arguments for 'client|info' command\r\n");
	/* In MULTI, queued; refused when run, as Redis does. */
	assert_string_equal(talk(r, "MULTI\r\nCLIENT LIST TYPE foo\r\nCLIENT LIST BAR\r\n"
	    "EXEC\r\n", NULL), "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n"
	    "-ERR Unknown client type 'foo'\r\n-ERR syntax error\r\n");
	rig_free(r);
}

/*
 * ID [ns], IDS n [ns], BLOCK n [ns]: the namespace is an optional last
 * argument, judged by the core (default served, a bad name BADREQ, an unknown
 * one RANGE), in multibulk, inline and inside MULTI; one more is an arity error.
 */
static void
test_namespace(void **state)
{
	struct rig *r = rig_new();
	char req[512], long_ns[CORE_NS_NAME_MAX + 2];
	struct proto_resp_frame f;
	const char *why;

	(void)state;
	assert_true(pool_add(&r->tier.seq.pool, 3 * B, B));
	assert_int_equal(parse("*3\r\n$3\r\nIDS\r\n$1\r\n5\r\n$6\r\norders\r\n", &f, &why),
	    PROTO_RESP_FRAME);
	assert_int_equal(f.argc, 3);
	assert_memory_equal(f.argv[2], "orders", 6);
	assert_string_equal(talk(r, "*2\r\n$2\r\nID\r\n$7\r\ndefault\r\n", NULL), ":12288\r\n");
	assert_string_equal(talk(r, "IDS 2 default\r\nblock 3 DEFAULT\r\n", NULL),
	    "*2\r\n:12289\r\n:12290\r\n-RANGE unknown namespace (idgenctl ns list)\r\n");
	assert_string_equal(talk(r, "*2\r\n$2\r\nid\r\n$6\r\norders\r\n", NULL),
	    "-RANGE unknown namespace (idgenctl ns list)\r\n");
	assert_true(r->core.stats.errors[CORE_ERR_NONS] == 2);
	assert_string_equal(talk(r, "*3\r\n$5\r\nBLOCK\r\n$1\r\n5\r\n$3\r\na-b\r\n", NULL),
	    "-BADREQ a namespace name is 1..48 letters, digits or _\r\n");
	memset(long_ns, 'n', sizeof(long_ns) - 1);
	long_ns[sizeof(long_ns) - 1] = '\0';
	snprintf(req, sizeof(req), "ID %s\r\nID %.48s\r\n", long_ns, long_ns);
	assert_string_equal(talk(r, req, NULL),
	    "-BADREQ a namespace name is 1..48 letters, digits or _\r\n"
	    "-RANGE unknown namespace (idgenctl ns list)\r\n");
	/* The count is the core's to judge first, as without a namespace. */
	assert_string_equal(talk(r, "IDS 0 orders\r\n", NULL), "-RANGE n must be 1..1000\r\n");
	assert_string_equal(talk(r, "ID a b\r\nIDS 1 a b\r\nDECODE 1 a\r\nPING\r\n", NULL),
	    "-ERR wrong number of arguments for 'id' command\r\n"
	    "-ERR wrong number of arguments for 'ids' command\r\n"
	    "-ERR wrong number of arguments for 'decode' command\r\n+PONG\r\n");
	snprintf(req, sizeof(req), "%s*2\r\n$2\r\nID\r\n$6\r\norders\r\n"
	    "*3\r\n$3\r\nIDS\r\n$1\r\n2\r\n$7\r\ndefault\r\n%s", multi, exec_);
	assert_string_equal(talk(r, req, NULL), "+OK\r\n+QUEUED\r\n+QUEUED\r\n"
	    "*2\r\n-RANGE unknown namespace (idgenctl ns list)\r\n*2\r\n:12291\r\n:12292\r\n");
	/* The fast path is untouched: no namespace, the default sequence. */
	assert_string_equal(talk(r, id, NULL), ":12293\r\n");
	rig_free(r);
}

/* COMMAND: the table, counted; DOCS and INFO by name. */
static void
test_command_table(void **state)
{
	struct rig *r = rig_new();
	const char *out;
	long n;

	(void)state;
	out = talk(r, "COMMAND COUNT\r\n", NULL);
	assert_true(out[0] == ':');
	n = strtol(out + 1, NULL, 10);
	assert_true(n > 20);
	out = talk(r, "COMMAND\r\n", NULL);
	assert_true(out[0] == '*' && strtol(out + 1, NULL, 10) == n);
	out = talk(r, "COMMAND LIST\r\n", NULL);
	assert_true(out[0] == '*' && strtol(out + 1, NULL, 10) == n);
	assert_non_null(strstr(out, "$3\r\nids\r\n"));
	assert_non_null(strstr(out, "$5\r\nmulti\r\n"));
	/* ID, IDS and BLOCK take an optional namespace last: arity -n, ns optional. */
	assert_string_equal(talk(r, "COMMAND DOCS IDS nope\r\n", NULL),
	    "*2\r\n$3\r\nids\r\n*6\r\n$7\r\nsummary\r\n$33\r\nn unique IDs (1..1000), ascending\r\n"
	    "$5\r\ngroup\r\n$5\r\nidgen\r\n$9\r\narguments\r\n*2\r\n*4\r\n$4\r\nname\r\n$1\r\nn\r\n"
	    "$4\r\ntype\r\n$6\r\nstring\r\n*6\r\n$4\r\nname\r\n$2\r\nns\r\n"
	    "$4\r\ntype\r\n$6\r\nstring\r\n$5\r\nflags\r\n*1\r\n+optional\r\n");
	assert_string_equal(talk(r, "COMMAND INFO id decode nope\r\n", NULL),
	    "*3\r\n*10\r\n$2\r\nid\r\n:-1\r\n*1\r\n+fast\r\n:0\r\n:0\r\n:0\r\n*0\r\n*0\r\n*0\r\n*0\r\n"
	    "*10\r\n$6\r\ndecode\r\n:2\r\n*1\r\n+fast\r\n:0\r\n:0\r\n:0\r\n*0\r\n*0\r\n*0\r\n*0\r\n"
	    "*-1\r\n");
	out = talk(r, "COMMAND DOCS ID DECODE\r\n", NULL);
	assert_non_null(strstr(out, "$2\r\nid\r\n*6\r\n"));
	assert_non_null(strstr(out, "$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$2\r\nns\r\n"));
	assert_non_null(strstr(out, "$6\r\ndecode\r\n*6\r\n"));
	out = talk(r, "COMMAND DOCS PING\r\n", NULL);
	assert_non_null(strstr(out, "$5\r\nflags\r\n*1\r\n+optional\r\n"));
	out = talk(r, "COMMAND DOCS CLIENT\r\n", NULL);
	assert_non_null(strstr(out, "$11\r\nsubcommands\r\n"));
	assert_non_null(strstr(out, "$14\r\nclient|setname\r\n"));
	assert_string_equal(talk(r, "COMMAND FOO\r\n", NULL),
	    "-ERR unknown subcommand 'FOO'. Try COMMAND COUNT, DOCS, INFO or LIST.\r\n");
	rig_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multibulk),
		cmocka_unit_test(test_inline),
		cmocka_unit_test(test_protocol_errors),
		cmocka_unit_test(test_multi_exec),
		cmocka_unit_test(test_multi_errors),
		cmocka_unit_test(test_multi_bounds),
		cmocka_unit_test(test_exec_waits),
		cmocka_unit_test(test_connection_commands),
		cmocka_unit_test(test_client_list_filters),
		cmocka_unit_test(test_command_table),
		cmocka_unit_test(test_namespace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
