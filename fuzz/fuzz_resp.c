/*
 * fuzz_resp.c - libFuzzer harness: the RESP frame parser on any bytes, frame
 * after frame; every argument must lie inside the frame it came from.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto_resp.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct proto_resp_limits lim = { 32, 1024, 4096 };
	const char *p = (const char *)data, *end = p + size;
	struct proto_resp_frame f;
	const char *why;
	unsigned i;

	while (p < end) {
		why = NULL;
		if (proto_resp_parse(p, (size_t)(end - p), &lim, &f, &why) != PROTO_RESP_FRAME)
			break;
		if (f.used == 0 || f.used > (size_t)(end - p) || f.argc > lim.max_args)
			__builtin_trap();
		for (i = 0; i < f.argc; i++)
			if (f.argv[i] < p || f.argv[i] + f.argl[i] > p + f.used ||
			    f.argl[i] > lim.max_bulk)
				__builtin_trap();
		p += f.used;
	}
	return 0;
}
