/*
 * test_reflect.c - gRPC server reflection's answers (src/reflect.c): the
 * services listed, files by name and by symbol (service, method, message,
 * field, nested enum, enum value), NOT_FOUND for unknown names, a bad request.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "reflect.h"
#include "reflection.pb-c.h"

typedef Grpc__Reflection__V1__ServerReflectionRequest Req;
typedef Grpc__Reflection__V1__ServerReflectionResponse Resp;

/* The answer to q, unpacked (the caller frees it). */
static Resp *
ask(Req *q)
{
	size_t n = protobuf_c_message_get_packed_size(&q->base), outlen;
	uint8_t *buf = malloc(n + 1), *out;
	Resp *r;

	assert_non_null(buf);
	protobuf_c_message_pack(&q->base, buf);
	assert_int_equal(reflect_answer(buf, n, &out, &outlen), REFLECT_OK);
	free(buf);
	r = grpc__reflection__v1__server_reflection_response__unpack(NULL, outlen, out);
	free(out);
	assert_non_null(r);
	return r;
}

/* The one file answering a file_containing_symbol, by name; NULL if an error. */
static char *
file_of(const char *symbol, int *error_code)
{
	Req q = GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__INIT;
	Resp *r;
	char *name = NULL;

	q.message_request_case =
	    GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL;
	q.file_containing_symbol = (char *)(uintptr_t)symbol;
	r = ask(&q);
	*error_code = 0;
	if (r->message_response_case ==
	    GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE) {
		*error_code = r->error_response->error_code;
	} else {
		ProtobufCBinaryData *b;

		assert_int_equal(r->message_response_case,
		    GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE);
		assert_int_equal(r->file_descriptor_response->n_file_descriptor_proto, 1);
		b = &r->file_descriptor_response->file_descriptor_proto[0];
		/* FileDescriptorProto field 1, the name: tag 0x0a, a short length. */
		assert_true(b->len > 2 && b->data[0] == 0x0a && b->data[1] < 0x80);
		name = strndup((const char *)b->data + 2, b->data[1]);
	}
	grpc__reflection__v1__server_reflection_response__free_unpacked(r, NULL);
	return name;
}

static void
test_list_services(void **state)
{
	Req q = GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__INIT;
	Resp *r;
	const char *want[] = { "grpc.health.v1.Health", "hispeeddesign.idgen.v1.IdGeneratorService",
	    "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection" };
	size_t i;

	(void)state;
	q.host = (char *)(uintptr_t)"h";
	q.message_request_case =
	    GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES;
	q.list_services = (char *)(uintptr_t)"*";
	r = ask(&q);
	assert_string_equal(r->valid_host, "h");
	assert_non_null(r->original_request);
	assert_string_equal(r->original_request->list_services, "*");
	assert_int_equal(r->message_response_case,
	    GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_LIST_SERVICES_RESPONSE);
	assert_int_equal(r->list_services_response->n_service, 4);
	for (i = 0; i < 4; i++)
		assert_string_equal(r->list_services_response->service[i]->name, want[i]);
	grpc__reflection__v1__server_reflection_response__free_unpacked(r, NULL);
}

static void
test_symbols(void **state)
{
	static const struct {
		const char *symbol, *file;
	} cases[] = {
		{ "hispeeddesign.idgen.v1.IdGeneratorService", "idgen.proto" },
		{ "hispeeddesign.idgen.v1.IdGeneratorService.GenerateIdBatch", "idgen.proto" },
		{ "hispeeddesign.idgen.v1.GenerateIdResponse", "idgen.proto" },
		{ "hispeeddesign.idgen.v1.GenerateIdResponse.id_str", "idgen.proto" },
		{ "grpc.health.v1.HealthCheckResponse.ServingStatus", "health.proto" },
		{ "grpc.health.v1.HealthCheckResponse.NOT_SERVING", "health.proto" },
		{ "grpc.reflection.v1.ServerReflection", "reflection.proto" },
		{ "grpc.reflection.v1alpha.ServerReflection.ServerReflectionInfo",
		    "reflection_v1alpha.proto" },
	};
	static const char *unknown[] = { "hispeeddesign.idgen.v1", "hispeeddesign.idgen.v1.",
	    "hispeeddesign.idgen.v1.IdGeneratorService.Nope", "hispeeddesign.idgen.v1.GenerateId",
	    "grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING", "", "x" };
	size_t i;
	int code;
	char *f;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f = file_of(cases[i].symbol, &code);
		assert_non_null(f);
		assert_string_equal(f, cases[i].file);
		free(f);
	}
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		assert_null(file_of(unknown[i], &code));
		assert_int_equal(code, 5);	/* NOT_FOUND */
	}
}

static void
test_file_by_name(void **state)
{
	Req q = GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__INIT;
	Resp *r;

	(void)state;
	q.message_request_case =
	    GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME;
	q.file_by_filename = (char *)(uintptr_t)"health.proto";
	r = ask(&q);
	assert_int_equal(r->message_response_case,
	    GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE);
	assert_int_equal(r->file_descriptor_response->n_file_descriptor_proto, 1);
	grpc__reflection__v1__server_reflection_response__free_unpacked(r, NULL);
	q.file_by_filename = (char *)(uintptr_t)"idgen";
	r = ask(&q);
	assert_int_equal(r->message_response_case,
	    GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE);
	assert_int_equal(r->error_response->error_code, 5);
	grpc__reflection__v1__server_reflection_response__free_unpacked(r, NULL);
}

static void
test_bad_request(void **state)
{
	static const uint8_t junk[] = { 0x3a, 0x7f, 0x00 };	/* list_services, 127 bytes: 1 */
	uint8_t *out = (uint8_t *)1;
	size_t outlen = 1;
	Req q = GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__INIT;
	Resp *r;

	(void)state;
	assert_int_equal(reflect_answer(junk, sizeof(junk), &out, &outlen), REFLECT_BAD_REQUEST);
	assert_null(out);
	/* No request field set: an error_response, the stream goes on. */
	r = ask(&q);
	assert_int_equal(r->message_response_case,
	    GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE);
	assert_int_equal(r->error_response->error_code, 3);
	grpc__reflection__v1__server_reflection_response__free_unpacked(r, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_services),
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_file_by_name),
		cmocka_unit_test(test_bad_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
