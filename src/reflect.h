/*
 * reflect.h - gRPC server reflection (grpc.reflection.v1 and v1alpha, whose
 * messages are the same on the wire): one ServerReflectionRequest in, one
 * ServerReflectionResponse out. Pure: no I/O; the descriptors are the
 * FileDescriptorProtos of the files in proto/, embedded at build time
 * (protoc-c --descriptor_set_out, Makefile). proto_grpc.c carries the stream.
 *
 * Answered: list_services (every service of proto/), file_by_filename and
 * file_containing_symbol (the file, then the files it imports; a symbol is a
 * package-qualified service, method, message, field, enum or enum value),
 * all_extension_numbers_of_type (a known message: none). Unknown names and
 * file_containing_extension get an error_response NOT_FOUND, as the
 * protocol says; the stream goes on.
 */
#ifndef IDGEN_REFLECT_H
#define IDGEN_REFLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum reflect_status {
	REFLECT_OK,		/* *out holds the packed response */
	REFLECT_BAD_REQUEST,	/* not a ServerReflectionRequest: end the stream */
	REFLECT_NO_MEMORY,
};

/*
 * The packed ServerReflectionResponse to the packed request req (len bytes),
 * in *out (malloc'd, *outlen bytes) when REFLECT_OK.
 */
enum reflect_status reflect_answer(const uint8_t *req, size_t len, uint8_t **out,
	    size_t *outlen) __attribute__((warn_unused_result));

#endif
