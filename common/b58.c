/*
 * b58.c - fixed-width base58 encoding and strict decoding of IDs.
 */
#include "b58.h"

#include <string.h>

static const char b58_alphabet[] =
    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

static int	b58_digit(char c);

/* The value of one character, or -1 when it is not in the alphabet. */
static int
b58_digit(char c)
{
	const char *p;

	if (c == '\0')
		return -1;
	p = strchr(b58_alphabet, c);
	return p == NULL ? -1 : (int)(p - b58_alphabet);
}

/* Most significant digit first, padded with the zero digit '1'. */
void
b58_encode(uint64_t id, char *buf)
{
	int i;

	for (i = B58_LEN - 1; i >= 0; i--) {
		buf[i] = b58_alphabet[id % 58];
		id /= 58;
	}
	buf[B58_LEN] = '\0';
}

bool
b58_is_form(const char *s, size_t len)
{
	size_t i;

	if (len != B58_LEN)
		return false;
	for (i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return true;
	return false;
}

/* Strict: the exact length, no ambiguous characters, nothing above 2^63 - 1. */
bool
b58_decode(const char *s, size_t len, uint64_t *id, const char **why)
{
	uint64_t v = 0;
	size_t i;
	int d;

	if (len != B58_LEN) {
		*why = "a base58 ID is exactly 11 characters";
		return false;
	}
	for (i = 0; i < len; i++) {
		d = b58_digit(s[i]);
		if (d < 0) {
			*why = "not a base58 character (0, O, I and l are not used)";
			return false;
		}
		/* v * 58 + d must stay within 2^63 - 1. */
		if (v > (UINT64_C(0x7fffffffffffffff) - (uint64_t)d) / 58) {
			*why = "a base58 ID above 9223372036854775807";
			return false;
		}
		v = v * 58 + (uint64_t)d;
	}
	*id = v;
	return true;
}
