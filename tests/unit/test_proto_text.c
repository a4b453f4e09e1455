/*
 * test_proto_text.c - the text grammar: every command, malformed input, and
 * the decimal formatting of replies. (Argument bounds are the core's:
 * test_core.c.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core.h"
#include "fmt.h"
#include "proto_text.h"

static enum proto_text_kind
parse(const char *s, struct core_req *r, const char **why)
{
	return proto_text_parse(s, strlen(s), r, why);
}

/* The argument as the client sent it. */
static bool
arg_is(const struct core_req *r, const char *want)
{
	return r->arg != NULL && r->arglen == strlen(want) && memcmp(r->arg, want, r->arglen) == 0;
}

static void
test_commands(void **state)
{
	struct core_req r;
	const char *why = NULL;

	(void)state;
	assert_int_equal(parse("ID", &r, &why), PROTO_TEXT_CORE);
	assert_int_equal(r.cmd, CORE_CMD_ID);
	assert_null(r.arg);
	assert_int_equal(parse("id\r", &r, &why), PROTO_TEXT_CORE);	/* CRLF, any case */
	assert_int_equal(r.cmd, CORE_CMD_ID);
	assert_int_equal(parse("IDS 1", &r, &why), PROTO_TEXT_CORE);
	assert_int_equal(r.cmd, CORE_CMD_IDS);
	assert_true(arg_is(&r, "1"));
	assert_int_equal(parse("  iDs\t1000  ", &r, &why), PROTO_TEXT_CORE);
	assert_true(arg_is(&r, "1000"));
	assert_int_equal(parse("BLOCK 4096", &r, &why), PROTO_TEXT_CORE);
	assert_int_equal(r.cmd, CORE_CMD_BLOCK);
	assert_int_equal(parse("DECODE 18446744073709551615", &r, &why), PROTO_TEXT_CORE);
	assert_int_equal(r.cmd, CORE_CMD_DECODE);
	assert_true(arg_is(&r, "18446744073709551615"));
	assert_int_equal(parse("b58 42", &r, &why), PROTO_TEXT_CORE);
	assert_int_equal(r.cmd, CORE_CMD_B58);
	assert_int_equal(parse("stats", &r, &why), PROTO_TEXT_CORE);
	assert_int_equal(r.cmd, CORE_CMD_STATS);
	assert_int_equal(parse("Ping", &r, &why), PROTO_TEXT_CORE);
	assert_int_equal(r.cmd, CORE_CMD_PING);
	assert_int_equal(parse("HELP", &r, &why), PROTO_TEXT_HELP);
	assert_int_equal(parse("quit\r", &r, &why), PROTO_TEXT_QUIT);
	/* AUTH takes exactly the token (the core checks it). */
	assert_int_equal(parse("auth some-token-0123456789\r", &r, &why), PROTO_TEXT_AUTH);
	assert_true(arg_is(&r, "some-token-0123456789"));
	assert_int_equal(parse("AUTH", &r, &why), PROTO_TEXT_BAD);
	assert_string_equal(why, "missing or extra argument");
	assert_int_equal(parse("AUTH a b", &r, &why), PROTO_TEXT_BAD);
	assert_non_null(strstr(proto_text_help, "B58 <id>"));
}

static void
test_malformed(void **state)
{
	struct core_req r;
	const char *why = NULL;

	(void)state;
	assert_int_equal(parse("", &r, &why), PROTO_TEXT_BAD);
	assert_string_equal(why, "empty request");
	assert_int_equal(parse("\r", &r, &why), PROTO_TEXT_BAD);
	assert_int_equal(parse("   ", &r, &why), PROTO_TEXT_BAD);
	assert_int_equal(parse("IDX", &r, &why), PROTO_TEXT_BAD);
	assert_string_equal(why, "unknown command (try HELP)");
	assert_int_equal(parse("I", &r, &why), PROTO_TEXT_BAD);
	assert_int_equal(parse("IDS", &r, &why), PROTO_TEXT_BAD);	/* missing n */
	assert_string_equal(why, "missing or extra argument");
	assert_int_equal(parse("ID 5 6", &r, &why), PROTO_TEXT_BAD);	/* extra arg */
	assert_string_equal(why, "unexpected argument");
	assert_int_equal(parse("DECODE 5 6", &r, &why), PROTO_TEXT_BAD);
	assert_string_equal(why, "missing or extra argument");
	/* A last word after ID, IDS n or BLOCK n is the namespace (the core judges it). */
	assert_int_equal(parse("ID orders", &r, &why), PROTO_TEXT_CORE);
	assert_int_equal(r.cmd, CORE_CMD_ID);
	assert_int_equal(r.nslen, 6);
	assert_memory_equal(r.ns, "orders", 6);
	assert_int_equal(parse("IDS 5 orders", &r, &why), PROTO_TEXT_CORE);
	assert_int_equal(r.arglen, 1);
	assert_memory_equal(r.ns, "orders", 6);
	assert_int_equal(parse("IDS 5", &r, &why), PROTO_TEXT_CORE);
	assert_null(r.ns);
	assert_int_equal(parse("IDS 1 2 3 4", &r, &why), PROTO_TEXT_BAD);
	assert_string_equal(why, "too many arguments");
	assert_int_equal(parse("DECODE", &r, &why), PROTO_TEXT_BAD);
	assert_int_equal(parse("HELP me", &r, &why), PROTO_TEXT_BAD);
	assert_int_equal(parse("PING\r\r", &r, &why), PROTO_TEXT_BAD);
}

static void
test_embedded_nul(void **state)
{
	static const char line[] = { 'I', 'D', '\0', 'S' };
	struct core_req r;
	const char *why = NULL;

	(void)state;
	assert_int_equal(proto_text_parse(line, sizeof(line), &r, &why), PROTO_TEXT_BAD);
	assert_string_equal(why, "NUL byte in request");
	/* The length is what counts, not a terminator. */
	assert_int_equal(proto_text_parse("PINGPONG", 4, &r, &why), PROTO_TEXT_CORE);
	assert_int_equal(r.cmd, CORE_CMD_PING);
}

static void
test_u64(void **state)
{
	char buf[FMT_U64_LEN + 1];
	size_t n;

	(void)state;
	n = fmt_u64(buf, 0);
	buf[n] = '\0';
	assert_string_equal(buf, "0");
	n = fmt_u64(buf, UINT64_MAX);
	buf[n] = '\0';
	assert_string_equal(buf, "18446744073709551615");
	n = fmt_u64(buf, 9007199254740992ULL);
	buf[n] = '\0';
	assert_string_equal(buf, "9007199254740992");
}

/* fmt_ids against snprintf, across digit carries and gaps. */
static void
test_ids_format(void **state)
{
	static const uint64_t starts[] = { 0, 1, 7, 95, 998, 99995, 1048570, 9999999999999995ULL,
	    9007199254740990ULL, 18446744073709551610ULL };
	char got[CORE_IDS_MAX * (FMT_U64_LEN + 1)], want[sizeof(got)];
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
		glen = fmt_ids(got, ids, 12);
		got[glen] = '\0';
		assert_int_equal(glen, wlen);
		assert_string_equal(got, want);
	}
	assert_int_equal(fmt_ids(got, ids, 0), 0);
}

/* fmt_ids_framed against snprintf: RESP's and JSON's frames, the same runs. */
static void
test_ids_framed(void **state)
{
	static const struct {
		const char *pre, *post;
		int sep;
	} frames[] = { { ":", "\r\n", FMT_SEP_NONE }, { "\"", "\"", ',' }, { "", "", ',' },
	    { "", "", '\0' } };
	char *at[12];
	static const uint64_t starts[] = { 0, 9, 99995, 9999999999999995ULL,
	    18446744073709551610ULL };
	char got[12 * (FMT_U64_LEN + 5)], want[sizeof(got)];
	uint64_t ids[12];
	size_t f, i, k, glen, wlen;

	(void)state;
	for (f = 0; f < sizeof(frames) / sizeof(frames[0]); f++)
		for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
			for (k = 0; k < 12; k++)
				ids[k] = starts[i] + k + (k >= 6 && starts[i] < UINT64_MAX - 100 ? 3 : 0);
			wlen = 0;
			for (k = 0; k < 12; k++) {
				if (k > 0 && frames[f].sep != FMT_SEP_NONE)
					want[wlen++] = (char)frames[f].sep;
				wlen += (size_t)snprintf(want + wlen, sizeof(want) - wlen, "%s%llu%s",
				    frames[f].pre, (unsigned long long)ids[k], frames[f].post);
			}
			glen = fmt_ids_framed(got, ids, 12, frames[f].pre, frames[f].post,
			    frames[f].sep, at);
			got[glen] = '\0';
			assert_int_equal(glen, wlen);
			assert_memory_equal(got, want, wlen);
			/* Each start: its pre, then the ID's digits. */
			for (k = 0; k < 12; k++) {
				char num[FMT_U64_LEN + 1];
				size_t pl = strlen(frames[f].pre);

				snprintf(num, sizeof(num), "%llu", (unsigned long long)ids[k]);
				assert_memory_equal(at[k], frames[f].pre, pl);
				assert_memory_equal(at[k] + pl, num, strlen(num));
			}
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_embedded_nul),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_ids_format),
		cmocka_unit_test(test_ids_framed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
