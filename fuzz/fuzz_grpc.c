/*
 * fuzz_grpc.c - libFuzzer harness: the gRPC request messages (protobuf-c
 * decoders generated from proto/) on any bytes; what decodes re-encodes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "health.pb-c.h"
#include "idgen.pb-c.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Hispeeddesign__Idgen__V1__GenerateIdRequest *a;
	Hispeeddesign__Idgen__V1__GenerateIdBatchRequest *b;
	Grpc__Health__V1__HealthCheckRequest *h;
	uint8_t *out;

	a = hispeeddesign__idgen__v1__generate_id_request__unpack(NULL, size, data);
	if (a != NULL) {
		out = malloc(hispeeddesign__idgen__v1__generate_id_request__get_packed_size(a) + 1);
		if (out != NULL)
			hispeeddesign__idgen__v1__generate_id_request__pack(a, out);
		free(out);
		hispeeddesign__idgen__v1__generate_id_request__free_unpacked(a, NULL);
	}
	b = hispeeddesign__idgen__v1__generate_id_batch_request__unpack(NULL, size, data);
	if (b != NULL)
		hispeeddesign__idgen__v1__generate_id_batch_request__free_unpacked(b, NULL);
	h = grpc__health__v1__health_check_request__unpack(NULL, size, data);
	if (h != NULL)
		grpc__health__v1__health_check_request__free_unpacked(h, NULL);
	return 0;
}
