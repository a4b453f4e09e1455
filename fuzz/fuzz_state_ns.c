/*
 * fuzz_state_ns.c - libFuzzer harness: the state file's namespace marks
 * parser (docs/design.md section 13.5) on any bytes; a record that parses
 * must format back to bytes that parse to the same marks and gen.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "state.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct state_ns_mark ma[NS_MARKS_MAX], mb[NS_MARKS_MAX];
static char buf[STATE_NS_SLOT];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state_ns a = { 0, NS_MARKS_MAX, ma }, b = { 0, NS_MARKS_MAX, mb };
	uint64_t ga, gb;
	char why[128];
	size_t n;

	memset(ma, 0, sizeof(ma));
	memset(mb, 0, sizeof(mb));
	if (!state_ns_parse((const char *)data, size, &a, &ga, why, sizeof(why)))
		return 0;
	n = state_ns_format(&a, ga, buf, sizeof(buf));
	if (n == 0)
		__builtin_trap();	/* whatever parses must write back: it fits by design */
	if (!state_ns_parse(buf, n, &b, &gb, why, sizeof(why)) || ga != gb || a.n != b.n ||
	    memcmp(ma, mb, a.n * sizeof(ma[0])) != 0)
		__builtin_trap();
	return 0;
}
