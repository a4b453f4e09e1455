/*
 * b58.h - the sortable text form of an ID: fixed-width base58 (docs/design.md
 * section 7).
 *
 * Eleven characters of the Bitcoin alphabet, left-padded with '1' (its zero),
 * so comparing two forms byte by byte orders them as the numbers. Pure code.
 */
#ifndef IDGEN_B58_H
#define IDGEN_B58_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define B58_LEN	11	/* 58^11 > 2^64: every BIGINT fits */

/* Writes the 11 characters and a NUL into buf (at least B58_LEN + 1 bytes). */
void	b58_encode(uint64_t id, char *buf);

/*
 * Parses exactly B58_LEN characters of the alphabet (no 0 O I l) into an ID of
 * at most 2^63 - 1. False with a reason otherwise.
 */
bool	b58_decode(const char *s, size_t len, uint64_t *id, const char **why)
	    __attribute__((warn_unused_result));

/* True when s looks like the base58 form: B58_LEN bytes, not all decimal digits. */
bool	b58_is_form(const char *s, size_t len);

#endif
