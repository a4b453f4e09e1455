/*
 * fuzz_state.c - libFuzzer harness: the state file's parser on any bytes; a
 * record that parses must format back to bytes that parse to the same record.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "state.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state_rec a, b;
	char buf[STATE_MAX_LEN], why[128];
	size_t n;

	if (!state_parse((const char *)data, size, &a, why, sizeof(why)))
		return 0;
	n = state_format(&a, buf, sizeof(buf));
	if (n == 0)
		return 0;	/* e.g. a servers line too long to write back */
	if (!state_parse(buf, n, &b, why, sizeof(why)) || memcmp(&a, &b, sizeof(a)) != 0)
		__builtin_trap();
	return 0;
}
