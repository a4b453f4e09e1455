/*
 * test_proto_http.c - the JSON bodies of the ID API: a numeric ID member only
 * when a JavaScript number holds it exactly (below 2^53), the _str member
 * always, byte for byte as before for ticket IDs; the text/plain bodies; the
 * route of a request (methods, HEAD, OPTIONS, the JSON body of a POST); Accept
 * negotiation; the CORS allow-list.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto_http.h"

#define TWO53	(UINT64_C(1) << 53)

/*
 * /v1/ids's body built with jansson, the reference the line written directly
 * must equal: ids (numbers) only when every ID is below 2^53, ids_str always.
 */
static json_t *
ids_json(const struct core_result *res)
{
	json_t *o = json_object(), *ids = json_array(), *strs = json_array();
	char num[24];
	bool exact = true;

	assert_true(o != NULL && ids != NULL && strs != NULL);
	for (unsigned i = 0; i < res->count; i++) {
		exact = exact && res->ids[i] < TWO53;
		snprintf(num, sizeof(num), "%" PRIu64, res->ids[i]);
		json_array_append_new(ids, json_integer((json_int_t)res->ids[i]));
		json_array_append_new(strs, json_string(num));
	}
	if (exact)
		json_object_set_new(o, "ids", ids);
	else
		json_decref(ids);
	json_object_set_new(o, "ids_str", strs);
	return o;
}

/* The compact JSON text of page's body for res (/v1/ids: its reference). */
static char *
body(enum proto_http_page page, const struct core_result *res)
{
	json_t *o = page == PROTO_HTTP_IDS ? ids_json(res) : proto_http_result(page, res);
	char *text;

	assert_non_null(o);
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	assert_non_null(text);
	return text;
}

/* page's body for res is want (/v1/ids: the line written directly, its newline). */
static void
expect(enum proto_http_page page, const struct core_result *res, const char *want)
{
	char *text = body(page, res), *line = malloc(proto_http_ids_cap(res->count));
	size_t len;

	assert_string_equal(text, want);
	assert_non_null(line);
	if (page == PROTO_HTTP_IDS) {
		len = proto_http_ids_write(res, line);
		assert_int_equal(len, strlen(want) + 1);
		assert_memory_equal(line, want, len - 1);
	}
	free(line);
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

/*
 * The /v1/ids line written directly is jansson's compact text of the same
 * body and a newline, byte for byte: every count from 1 to 1,000, IDs from 0
 * to UINT64_MAX, all below 2^53 (both arrays) and one at or above (ids_str
 * alone), each digit count.
 */
static void
test_ids_line(void **state)
{
	struct core_result *res = calloc(1, sizeof(*res));
	uint64_t x = UINT64_C(0x9e3779b97f4a7c15);

	(void)state;
	assert_non_null(res);
	for (unsigned count = 1; count <= 1000; count++) {
		char *want, *got;
		size_t len;

		res->count = count;
		for (unsigned i = 0; i < count; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* Any number of digits; below 2^53 unless the count says otherwise. */
			res->ids[i] = x >> (x % 64);
			if (count % 3 != 0)
				res->ids[i] %= TWO53;
		}
		if (count == 1000)
			res->ids[999] = UINT64_MAX;
		if (count == 999)
			res->ids[0] = TWO53 - 1;
		want = body(PROTO_HTTP_IDS, res);
		got = malloc(proto_http_ids_cap(count));
		assert_non_null(got);
		len = proto_http_ids_write(res, got);
		assert_true(len <= proto_http_ids_cap(count));
		assert_int_equal(len, strlen(want) + 1);
		assert_memory_equal(got, want, strlen(want));
		assert_int_equal(got[len - 1], '\n');
		free(want);
		free(got);
	}
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

/* The text/plain bodies are the text protocol's lines; IDS one per line. */
static void
test_text(void **state)
{
	struct core_result *res = calloc(1, sizeof(*res));
	size_t len;
	char *t;

	(void)state;
	assert_non_null(res);
	res->count = 1;
	res->ids[0] = TWO53 + 7;
	t = proto_http_text(CORE_CMD_ID, res, &len);
	assert_int_equal(len, 17);
	assert_memory_equal(t, "9007199254740999\n", len);
	free(t);
	res->count = 3;
	res->ids[0] = 9;
	res->ids[1] = 10;
	res->ids[2] = 12;
	t = proto_http_text(CORE_CMD_IDS, res, &len);
	assert_int_equal(len, 8);
	assert_memory_equal(t, "9\n10\n12\n", len);
	free(t);
	res->first = 2097152;
	res->count = 4096;
	t = proto_http_text(CORE_CMD_BLOCK, res, &len);
	assert_int_equal(len, 13);
	assert_memory_equal(t, "2097152 4096\n", len);
	free(t);
	res->dec.region = LAYOUT_TICKET;
	res->dec.id = 2097152;
	res->dec.ticket = 2;
	res->dec.server = "even";
	strcpy(res->dec.b58, "1111111BkQo");
	t = proto_http_text(CORE_CMD_DECODE, res, &len);
	assert_int_equal(len, 27);
	assert_memory_equal(t, "ticket block=2 server=even\n", len);
	free(t);
	res->from_b58 = true;
	t = proto_http_text(CORE_CMD_DECODE, res, &len);
	assert_memory_equal(t, "ticket block=2 server=even id=2097152\n", len);
	free(t);
	t = proto_http_text(CORE_CMD_B58, res, &len);
	assert_int_equal(len, 12);
	assert_memory_equal(t, "1111111BkQo\n", len);
	free(t);
	free(res);
}

/* Routes a request; body is a C string (NULL: none). */
static void
route(enum evhttp_cmd_type m, const char *path, const char *query, const char *ctype,
    const char *body, struct proto_http_route *r)
{
	struct proto_http_in in = { m, path, query, ctype, NULL, body,
	    body != NULL ? strlen(body) : 0 };

	proto_http_route(&in, r);
}

static void
test_route(void **state)
{
	struct proto_http_route r;
	const char *json = "application/json";

	(void)state;
	/* The query form, as before. */
	route(EVHTTP_REQ_GET, "/v1/ids", "count=5", NULL, NULL, &r);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.page, PROTO_HTTP_IDS);
	assert_true(r.has_arg);
	assert_string_equal(r.arg, "5");
	route(EVHTTP_REQ_GET, "/v1/ids", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.why, "count=N is required");
	/* GET's body is ignored, as before. */
	route(EVHTTP_REQ_GET, "/v1/ids", "count=2", NULL, "junk", &r);
	assert_int_equal(r.status, 0);
	/* A POST's JSON body, with or without parameters on its type. */
	route(EVHTTP_REQ_POST, "/v1/ids", NULL, json, "{\"count\":5}", &r);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.arg, "5");
	route(EVHTTP_REQ_POST, "/v1/block", NULL, "Application/JSON; charset=utf-8",
	    " { \"count\" : 4096 } ", &r);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.page, PROTO_HTTP_BLOCK);
	assert_string_equal(r.arg, "4096");
	/* The core bounds the count, as for the query. */
	route(EVHTTP_REQ_POST, "/v1/ids", NULL, json, "{\"count\":-3}", &r);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.arg, "-3");
	route(EVHTTP_REQ_POST, "/v1/ids", "count=7", json, "{}", &r);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.arg, "7");
	route(EVHTTP_REQ_POST, "/v1/id", NULL, json, "{}", &r);
	assert_int_equal(r.status, 0);
	assert_false(r.has_arg);
	/* Refusals. */
	route(EVHTTP_REQ_POST, "/v1/ids", NULL, "text/plain", "{\"count\":5}", &r);
	assert_int_equal(r.status, 415);
	route(EVHTTP_REQ_POST, "/v1/ids", NULL, NULL, "count=5", &r);
	assert_int_equal(r.status, 415);
	route(EVHTTP_REQ_POST, "/v1/ids", NULL, json, "{\"count\":5", &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "BADREQ");
	assert_non_null(strstr(r.why, "not valid JSON"));
	route(EVHTTP_REQ_POST, "/v1/ids", NULL, json, "[5]", &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.why, "the body must be a JSON object");
	route(EVHTTP_REQ_POST, "/v1/ids", NULL, json, "{\"count\":\"5\"}", &r);
	assert_string_equal(r.why, "count must be a JSON integer");
	route(EVHTTP_REQ_POST, "/v1/ids", NULL, json, "{\"count\":5.0}", &r);
	assert_string_equal(r.why, "count must be a JSON integer");
	route(EVHTTP_REQ_POST, "/v1/ids", NULL, json, "{\"count\":5,\"n\":1}", &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.why, "unknown member"));
	route(EVHTTP_REQ_POST, "/v1/ids", NULL, json, "{\"count\":5,\"count\":6}", &r);
	assert_int_equal(r.status, 400);
	route(EVHTTP_REQ_POST, "/v1/ids", "count=5", json, "{\"count\":5}", &r);
	assert_string_equal(r.why, "count is given twice: in the query and in the body");
	route(EVHTTP_REQ_POST, "/v1/ids", NULL, json, "{}", &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.why, "count is required"));
	route(EVHTTP_REQ_POST, "/v1/id", NULL, json, "{\"count\":1}", &r);
	assert_int_equal(r.status, 400);
	/* HEAD everywhere GET is, OPTIONS everywhere; the Allow lists. */
	route(EVHTTP_REQ_HEAD, "/v1/block", "count=3", NULL, NULL, &r);
	assert_int_equal(r.status, 0);
	assert_true(r.head);
	assert_string_equal(r.arg, "3");
	route(EVHTTP_REQ_HEAD, "/v1/openapi.json", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.page, PROTO_HTTP_OPENAPI);
	route(EVHTTP_REQ_OPTIONS, "/v1/ids", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 0);
	assert_true(r.options);
	assert_string_equal(r.allow, "GET, HEAD, POST, OPTIONS");
	route(EVHTTP_REQ_DELETE, "/v1/id", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 405);
	assert_string_equal(r.allow, "GET, HEAD, POST, OPTIONS");
	route(EVHTTP_REQ_POST, "/metrics", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 405);
	assert_string_equal(r.allow, "GET, HEAD, OPTIONS");
	route(EVHTTP_REQ_GET, "/v1/nope", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 404);
	assert_null(r.allow);
	/* A method evhttp does not know: 501 on any path, in our JSON. */
	route((enum evhttp_cmd_type)PROTO_HTTP_METHOD_UNKNOWN, "/v1/id", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 501);
	assert_string_equal(r.code, "BADREQ");
	assert_non_null(strstr(r.why, "unknown method"));
	route((enum evhttp_cmd_type)PROTO_HTTP_METHOD_UNKNOWN, "/v1/nope", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 501);
}

/*
 * ?ns= on the ID API: taken as sent (percent-decoded, the first one) for the
 * core to judge, cut after 49 bytes so that a long name stays too long;
 * ignored elsewhere; the count is read as before.
 */
static void
test_route_ns(void **state)
{
	struct proto_http_route r;
	char q[128];

	(void)state;
	route(EVHTTP_REQ_GET, "/v1/id", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 0);
	assert_false(r.has_ns);
	route(EVHTTP_REQ_GET, "/v1/id", "ns=orders", NULL, NULL, &r);
	assert_int_equal(r.status, 0);
	assert_false(r.has_arg);
	assert_true(r.has_ns);
	assert_int_equal(r.nslen, 6);
	assert_string_equal(r.ns, "orders");
	route(EVHTTP_REQ_GET, "/v1/ids", "ns=default&count=5", NULL, NULL, &r);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.arg, "5");
	assert_string_equal(r.ns, "default");
	route(EVHTTP_REQ_HEAD, "/v1/block", "count=3&ns=o_1&ns=other&x=y", NULL, NULL, &r);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.arg, "3");
	assert_string_equal(r.ns, "o_1");
	/* A bad name reaches the core as sent: a-b, empty, decoded from %2D. */
	route(EVHTTP_REQ_GET, "/v1/id", "ns=a-b", NULL, NULL, &r);
	assert_true(r.has_ns && r.nslen == 3 && strcmp(r.ns, "a-b") == 0);
	route(EVHTTP_REQ_GET, "/v1/id", "ns=", NULL, NULL, &r);
	assert_true(r.has_ns && r.nslen == 0);
	route(EVHTTP_REQ_GET, "/v1/ids", "count=2&ns=a%2Db", NULL, NULL, &r);
	assert_string_equal(r.ns, "a-b");
	memset(q, 0, sizeof(q));
	memcpy(q, "ns=", 3);
	memset(q + 3, 'n', 100);
	route(EVHTTP_REQ_GET, "/v1/id", q, NULL, NULL, &r);
	assert_int_equal(r.nslen, CORE_NS_NAME_MAX + 1);
	assert_false(ns_name_ok(r.ns, r.nslen));
	/* A POST takes it from the query too; its body is still only {"count": N}. */
	route(EVHTTP_REQ_POST, "/v1/ids", "ns=orders", "application/json", "{\"count\":4}", &r);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.arg, "4");
	assert_string_equal(r.ns, "orders");
	/* The count is required as before, with or without a namespace. */
	route(EVHTTP_REQ_GET, "/v1/block", "ns=orders", NULL, NULL, &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.why, "count=N is required");
	/* Not an ID page: ns is not read. */
	route(EVHTTP_REQ_GET, "/v1/decode/12", "ns=orders", NULL, NULL, &r);
	assert_int_equal(r.status, 0);
	assert_false(r.has_ns);
	assert_string_equal(r.arg, "12");
	route(EVHTTP_REQ_GET, "/stats", "ns=orders", NULL, NULL, &r);
	assert_false(r.has_ns);
}

static void
test_accept(void **state)
{
	(void)state;
	assert_int_equal(proto_http_accept(NULL), PROTO_HTTP_FORM_JSON);
	assert_int_equal(proto_http_accept(""), PROTO_HTTP_FORM_JSON);
	assert_int_equal(proto_http_accept("*/*"), PROTO_HTTP_FORM_JSON);
	assert_int_equal(proto_http_accept("text/plain"), PROTO_HTTP_FORM_TEXT);
	assert_int_equal(proto_http_accept("Text/Plain; charset=utf-8"), PROTO_HTTP_FORM_TEXT);
	assert_int_equal(proto_http_accept("text/*"), PROTO_HTTP_FORM_TEXT);
	assert_int_equal(proto_http_accept("application/json"), PROTO_HTTP_FORM_JSON);
	assert_int_equal(proto_http_accept("text/plain, application/json"), PROTO_HTTP_FORM_JSON);
	assert_int_equal(proto_http_accept("text/plain, application/json;q=0.9"),
	    PROTO_HTTP_FORM_TEXT);
	assert_int_equal(proto_http_accept("text/plain;q=0.5, */*;q=0.1"), PROTO_HTTP_FORM_TEXT);
	assert_int_equal(proto_http_accept("text/plain;q=0, */*"), PROTO_HTTP_FORM_JSON);
	/* The most specific range decides: text/plain's q=0 beats text/'s wildcard. */
	assert_int_equal(proto_http_accept("text/*, text/plain;q=0"), PROTO_HTTP_FORM_JSON);
	assert_int_equal(proto_http_accept("text/html"), PROTO_HTTP_FORM_JSON);
	assert_int_equal(proto_http_accept("text/plain;q=x"), PROTO_HTTP_FORM_JSON);
	assert_int_equal(proto_http_accept(",,;;q=,text/plain;q=1.000"), PROTO_HTTP_FORM_TEXT);
}

static void
test_cors(void **state)
{
	const char *list = "https://a.example, http://b.example:8080";

	(void)state;
	assert_false(proto_http_cors_allowed("", "https://a.example"));
	assert_false(proto_http_cors_allowed(list, NULL));
	assert_false(proto_http_cors_allowed(list, ""));
	assert_true(proto_http_cors_allowed(list, "https://a.example"));
	assert_true(proto_http_cors_allowed(list, "HTTPS://A.example"));
	assert_true(proto_http_cors_allowed(list, "http://b.example:8080"));
	assert_false(proto_http_cors_allowed(list, "http://b.example"));
	assert_false(proto_http_cors_allowed(list, "https://a.example.evil"));
	assert_false(proto_http_cors_allowed(list, "https://a.exampl"));
	assert_false(proto_http_cors_allowed(list, "null"));
	assert_true(proto_http_cors_allowed("*", "null"));
	assert_true(proto_http_cors_allowed("https://x,*", "https://y"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_ids_line),
		cmocka_unit_test(test_block_b58_decode),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_route),
		cmocka_unit_test(test_route_ns),
		cmocka_unit_test(test_accept),
		cmocka_unit_test(test_cors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
