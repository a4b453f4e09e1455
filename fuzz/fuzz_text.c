/*
 * fuzz_text.c - libFuzzer harness: the text protocol's grammar on any bytes,
 * as whole input and split into lines the way a connection splits them.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto_text.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *nl;
	struct core_req req;
	const char *why = NULL;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		if ((size_t)(nl - p) <= PROTO_LINE_MAX + 1 &&
		    proto_text_parse(p, (size_t)(nl - p), &req, &why) == PROTO_TEXT_CORE &&
		    req.arg != NULL && (req.arg < p || req.arg + req.arglen > nl))
			__builtin_trap();	/* an argument must point into its line */
		p = nl + 1;
	}
	return 0;
}
