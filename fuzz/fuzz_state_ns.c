/*
 * fuzz_state_ns.c - libFuzzer harness: the earlier format's namespace marks
 * parser (idgen-ns 1, docs/design.md sections 13.5 and 6.10) on any bytes; a
 * record that parses must write into a version 3 record that parses to the
 * same marks.
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
	struct state_ns a = { 0, NS_MARKS_MAX, ma }, b = { 0, NS_MARKS_MAX, mb };
	struct state_rec r, got;
	uint64_t gen;
	char why[128];
	size_t n;

	memset(ma, 0, sizeof(ma));
	memset(mb, 0, sizeof(mb));
	if (!state_ns_parse((const char *)data, size, &a, &gen, why, sizeof(why)))
		return 0;
	memset(&r, 0, sizeof(r));
	memcpy(r.host, "h", 2);
	r.gen = gen;
	n = state_format(&r, &a, buf, sizeof(buf));
	if (n == 0)
		__builtin_trap();	/* whatever parses must write back: it fits by design */
	if (!state_parse(buf, n, &got, &b, why, sizeof(why)) || got.gen != gen || a.n != b.n ||
	    memcmp(ma, mb, a.n * sizeof(ma[0])) != 0)
		__builtin_trap();
	return 0;
}
