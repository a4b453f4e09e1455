/*
 * reply.h - the text protocol's replies, parsed: one parser shared by
 * libidgen and bench/idbench (docs/design.md section 5).
 *
 * Every function reads [p, e) only and needs no terminator; none allocates.
 */
#ifndef IDGEN_REPLY_H
#define IDGEN_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPLY_ID_MAX	UINT64_C(0x7fffffffffffffff)	/* 2^63 - 1 */

/*
 * Parses 1..19 digits with no leading zero at p; returns the byte after them,
 * or NULL when there is no such number.
 */
static inline const char *
reply_u64(const char *p, const char *e, uint64_t *out)
{
	const char	*s = p;
	uint64_t	 v = 0;
	unsigned	 d;

	while (p < e && (d = (unsigned)(unsigned char)*p - '0') < 10) {
		v = v * 10 + d;
		p++;
		if (p - s > 19)
			return NULL;
	}
	if (p == s || (*s == '0' && p - s > 1))
		return NULL;
	*out = v;
	return p;
}

/*
 * True when [p, e) is "ERR <CODE> <message>" (or a bare "ERR"): code and
 * message point into the line (empty when absent).
 */
bool	reply_err(const char *p, const char *e, const char **code,
	    size_t *codelen, const char **msg, size_t *msglen);

/* True when [p, e) is exactly one ID in [1, 2^63). */
bool	reply_id(const char *p, const char *e, uint64_t *id);

/*
 * True when [p, e) is exactly "<first> <n>", with n >= 1 and the whole block
 * inside [1, 2^63).
 */
bool	reply_block(const char *p, const char *e, uint64_t *first, uint64_t *n);

#endif
