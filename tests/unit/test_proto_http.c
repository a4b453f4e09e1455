/*
 * test_proto_http.c - the JSON bodies of the ID API: a numeric ID member only
 * when a JavaScript number holds it exactly (below 2^53), the _str member
 * always, byte for byte as before for ticket IDs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "proto_http.h"

#define TWO53	(UINT64_C(1) << 53)

/* The compact JSON text of page's body for res. */
static char *
body(enum proto_http_page page, const struct core_result *res)
{
	json_t *o = proto_http_result(page, res);
	char *text;

	assert_non_null(o);
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	assert_non_null(text);
	return text;
}

static void
expect(enum proto_http_page page, const struct core_result *res, const char *want)
{
	char *text = body(page, res);

	assert_string_equal(text, want);
	free(text);
}

static void
test_id(void **state)
{
	struct core_result *res = calloc(1, sizeof(*res));

	(void)state;
	assert_non_null(res);
	res->count = 1;
	res->ids[0] = 1432354816;
	expect(PROTO_HTTP_ID, res, "{\"id\":1432354816,\"id_str\":\"1432354816\"}");
	res->ids[0] = TWO53 - 1;
	expect(PROTO_HTTP_ID, res, "{\"id\":9007199254740991,\"id_str\":\"9007199254740991\"}");
	res->ids[0] = TWO53;
	expect(PROTO_HTTP_ID, res, "{\"id_str\":\"9007199254740992\"}");
	res->ids[0] = INT64_MAX;
	expect(PROTO_HTTP_ID, res, "{\"id_str\":\"9223372036854775807\"}");
	free(res);
}

static void
test_ids(void **state)
{
	struct core_result *res = calloc(1, sizeof(*res));

	(void)state;
	assert_non_null(res);
	res->count = 3;
	res->ids[0] = 1;
	res->ids[1] = 2;
	res->ids[2] = TWO53 - 1;
	expect(PROTO_HTTP_IDS, res, "{\"ids\":[1,2,9007199254740991],"
	    "\"ids_str\":[\"1\",\"2\",\"9007199254740991\"]}");
	/* One ID at 2^53 and the numeric array is absent, the strings all there. */
	res->ids[2] = TWO53;
	expect(PROTO_HTTP_IDS, res, "{\"ids_str\":[\"1\",\"2\",\"9007199254740992\"]}");
	res->ids[0] = TWO53 + 4096;
	res->count = 1;
	expect(PROTO_HTTP_IDS, res, "{\"ids_str\":[\"9007199254745088\"]}");
	free(res);
}

static void
test_block_b58_decode(void **state)
{
	struct core_result *res = calloc(1, sizeof(*res));

	(void)state;
	assert_non_null(res);
	res->count = 4096;
	res->first = 2097152;
	expect(PROTO_HTTP_BLOCK, res, "{\"first\":2097152,\"first_str\":\"2097152\",\"count\":4096}");
	res->first = TWO53 + 1;
	expect(PROTO_HTTP_BLOCK, res, "{\"first_str\":\"9007199254740993\",\"count\":4096}");

	res->dec.id = 2097152;
	strcpy(res->dec.b58, "1111111BkQo");
	expect(PROTO_HTTP_B58, res, "{\"id\":2097152,\"id_str\":\"2097152\",\"b58\":\"1111111BkQo\"}");
	res->dec.region = LAYOUT_TICKET;
	res->dec.ticket = 2;
	res->dec.server = "even";
	expect(PROTO_HTTP_DECODE, res, "{\"id\":2097152,\"id_str\":\"2097152\","
	    "\"b58\":\"1111111BkQo\",\"source\":\"ticket\",\"block\":2,\"server\":\"even\"}");

	res->dec.id = TWO53;
	strcpy(res->dec.b58, "x");
	expect(PROTO_HTTP_B58, res, "{\"id_str\":\"9007199254740992\",\"b58\":\"x\"}");
	res->dec.region = LAYOUT_SNOWFLAKE;
	res->dec.unix_ms = 1767225600000;
	strcpy(res->dec.iso, "2026-01-01T00:00:00.000Z");
	res->dec.worker = 33;
	res->dec.datacenter_id = 1;
	res->dec.worker_id = 1;
	res->dec.seq = 7;
	expect(PROTO_HTTP_DECODE, res, "{\"id_str\":\"9007199254740992\",\"b58\":\"x\","
	    "\"source\":\"snowflake\",\"timestamp_ms\":1767225600000,"
	    "\"time\":\"2026-01-01T00:00:00.000Z\",\"worker\":33,\"datacenter_id\":1,"
	    "\"worker_id\":1,\"seq\":7}");
	free(res);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_block_b58_decode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
