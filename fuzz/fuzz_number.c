/*
 * fuzz_number.c - libFuzzer harness: the base58 form (decode, and encode of
 * what decoded: the round trip must hold) on any bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "b58.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char back[B58_LEN + 1];
	const char *why;
	uint64_t id;

	if (b58_decode((const char *)data, size, &id, &why)) {
		if (id > UINT64_C(0x7fffffffffffffff))
			__builtin_trap();
		b58_encode(id, back);
		if (size != B58_LEN || memcmp(back, data, B58_LEN) != 0)
			__builtin_trap();
	}
	(void)b58_is_form((const char *)data, size);
	return 0;
}
