/*
 * fuzz_auth.c - libFuzzer harness: the token file's grammar and Bearer values
 * on any bytes, line by line as auth_tokens_file is read. A parsed token is
 * within its bounds and its name plain; a Bearer token points into its value.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "auth.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *nl, *tok;
	struct auth_token t;
	char err[128];
	size_t toklen, i;
	bool skip;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		if ((size_t)(nl - p) <= AUTH_LINE_MAX &&
		    auth_parse_line(p, (size_t)(nl - p), &t, &skip, err, sizeof(err)) && !skip) {
			if (t.perm != AUTH_PERM_RO && t.perm != AUTH_PERM_ALL)
				__builtin_trap();
			for (i = 0; t.name[i] != '\0'; i++)
				if (t.name[i] == ':' || t.name[i] <= ' ' || i >= AUTH_NAME_MAX)
					__builtin_trap();
		}
		if (auth_bearer(p, (size_t)(nl - p), &tok, &toklen) &&
		    (tok < p || tok + toklen > nl || toklen == 0 || toklen > AUTH_TOKEN_MAX))
			__builtin_trap();	/* the token must lie inside its value */
		p = nl + 1;
	}
	return 0;
}
