/*
 * test_proto.c - parsing every command and malformed input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "proto.h"

static enum proto_status
parse(const char *s, struct proto_req *r, const char **why)
{
	return proto_parse(s, strlen(s), r, why);
}

static void
test_commands(void **state)
{
	struct proto_req r;
	const char *why = NULL;

	(void)state;
	assert_int_equal(parse("ID", &r, &why), PROTO_OK);
	assert_int_equal(r.cmd, PROTO_ID);
	assert_int_equal(parse("id\r", &r, &why), PROTO_OK);	/* CRLF, any case */
	assert_int_equal(r.cmd, PROTO_ID);
	assert_int_equal(parse("IDS 1", &r, &why), PROTO_OK);
	assert_int_equal(r.cmd, PROTO_IDS);
	assert_int_equal(r.arg, 1);
	assert_int_equal(parse("  iDs\t1000  ", &r, &why), PROTO_OK);
	assert_int_equal(r.arg, 1000);
	assert_int_equal(parse("BLOCK 4096", &r, &why), PROTO_OK);
	assert_int_equal(r.cmd, PROTO_BLOCK);
	assert_int_equal(r.arg, 4096);
	assert_int_equal(parse("DECODE 18446744073709551615", &r, &why), PROTO_OK);
	assert_int_equal(r.cmd, PROTO_DECODE);
	assert_true(r.arg == UINT64_MAX);
	assert_int_equal(parse("stats", &r, &why), PROTO_OK);
	assert_int_equal(r.cmd, PROTO_STATS);
	assert_int_equal(parse("Ping", &r, &why), PROTO_OK);
	assert_int_equal(r.cmd, PROTO_PING);
	assert_int_equal(parse("HELP", &r, &why), PROTO_OK);
	assert_int_equal(r.cmd, PROTO_HELP);
	assert_int_equal(parse("quit\r", &r, &why), PROTO_OK);
	assert_int_equal(r.cmd, PROTO_QUIT);
}

static void
test_malformed(void **state)
{
	struct proto_req r;
	const char *why = NULL;

	(void)state;
	assert_int_equal(parse("", &r, &why), PROTO_BADREQ);
	assert_non_null(why);
	assert_int_equal(parse("\r", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("   ", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("IDX", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("I", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("IDS", &r, &why), PROTO_BADREQ);	/* missing n */
	assert_int_equal(parse("ID 5", &r, &why), PROTO_BADREQ);	/* extra arg */
	assert_int_equal(parse("IDS 5 6", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("IDS 1 2 3 4", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("IDS abc", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("IDS -1", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("IDS +1", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("IDS 1.5", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("IDS 0x10", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("DECODE", &r, &why), PROTO_BADREQ);
	assert_int_equal(parse("PING\r\r", &r, &why), PROTO_BADREQ);
}

static void
test_ranges(void **state)
{
	struct proto_req r;
	const char *why = NULL;

	(void)state;
	assert_int_equal(parse("IDS 0", &r, &why), PROTO_RANGE);
	assert_int_equal(parse("IDS 1001", &r, &why), PROTO_RANGE);
	assert_int_equal(parse("BLOCK 0", &r, &why), PROTO_RANGE);
	assert_int_equal(parse("BLOCK 4097", &r, &why), PROTO_RANGE);
	assert_int_equal(parse("IDS 99999999999999999999999", &r, &why), PROTO_RANGE);
	assert_int_equal(parse("DECODE 18446744073709551616", &r, &why), PROTO_RANGE);
	assert_int_equal(parse("IDS 00000000000000000000000001", &r, &why), PROTO_RANGE);
}

static void
test_embedded_nul(void **state)
{
	static const char line[] = { 'I', 'D', '\0', 'S' };
	struct proto_req r;
	const char *why = NULL;

	(void)state;
	assert_int_equal(proto_parse(line, sizeof(line), &r, &why), PROTO_BADREQ);
	assert_string_equal(why, "NUL byte in request");
	/* The length is what counts, not a terminator. */
	assert_int_equal(proto_parse("PINGPONG", 4, &r, &why), PROTO_OK);
	assert_int_equal(r.cmd, PROTO_PING);
}

static void
test_u64(void **state)
{
	char buf[PROTO_U64_LEN + 1];
	size_t n;

	(void)state;
	n = proto_u64(buf, 0);
	buf[n] = '\0';
	assert_string_equal(buf, "0");
	n = proto_u64(buf, UINT64_MAX);
	buf[n] = '\0';
	assert_string_equal(buf, "18446744073709551615");
	n = proto_u64(buf, 9007199254740992ULL);
	buf[n] = '\0';
	assert_string_equal(buf, "9007199254740992");
}

/* proto_ids against snprintf, across digit carries and gaps. */
static void
test_ids_format(void **state)
{
	static const uint64_t starts[] = { 0, 1, 7, 95, 998, 99995, 1048570, 9999999999999995ULL,
	    9007199254740990ULL, 18446744073709551610ULL };
	char got[PROTO_IDS_MAX * (PROTO_U64_LEN + 1)], want[sizeof(got)];
	uint64_t ids[12];
	size_t i, k, glen, wlen;

	(void)state;
	for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		for (k = 0; k < 12; k++)
			/* A gap after the 6th: a new run starts from scratch. */
			ids[k] = starts[i] + k + (k >= 6 && starts[i] < UINT64_MAX - 100 ? 3 : 0);
		wlen = 0;
		for (k = 0; k < 12; k++)
			wlen += (size_t)snprintf(want + wlen, sizeof(want) - wlen, "%s%llu",
			    k ? " " : "", (unsigned long long)ids[k]);
		glen = proto_ids(got, ids, 12);
		got[glen] = '\0';
		assert_int_equal(glen, wlen);
		assert_string_equal(got, want);
	}
	assert_int_equal(proto_ids(got, ids, 0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_embedded_nul),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_ids_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
