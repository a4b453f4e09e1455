/*
 * fuzz_state.c - libFuzzer harness: the state file's parser on any bytes
 * (versions 1 to 3, docs/design.md section 6.10); a record that parses must
 * format back to bytes that parse to the same record and namespace marks.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "state.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct state_ns_mark ma[NS_MARKS_MAX], mb[NS_MARKS_MAX];
static char buf[STATE_MAX_LEN];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state_ns x = { 0, NS_MARKS_MAX, ma }, y = { 0, NS_MARKS_MAX, mb };
	struct state_rec a, b;
	char why[128];
	size_t n;

	memset(ma, 0, sizeof(ma));
	memset(mb, 0, sizeof(mb));
	if (!state_parse((const char *)data, size, &a, &x, why, sizeof(why)))
		return 0;
	n = state_format(&a, &x, buf, sizeof(buf));
	if (n == 0)
		return 0;	/* e.g. a servers line too long to write back */
	if (!state_parse(buf, n, &b, &y, why, sizeof(why)) || memcmp(&a, &b, sizeof(a)) != 0 ||
	    x.n != y.n || memcmp(ma, mb, x.n * sizeof(ma[0])) != 0)
		__builtin_trap();
	return 0;
}
