/*
 * test_proto_resp.c - the RESP2 frame parser: whole and split frames, inline
 * commands, and every protocol error a hostile client can cause.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proto_resp.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multibulk),
		cmocka_unit_test(test_inline),
		cmocka_unit_test(test_protocol_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
