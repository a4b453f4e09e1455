/*
 * fmt.h - decimal formatting of IDs for every protocol's replies (pure).
 */
#ifndef IDGEN_FMT_H
#define IDGEN_FMT_H

#include <stddef.h>
#include <stdint.h>

#define FMT_U64_LEN	20	/* digits in the largest uint64_t */

/* Writes v in decimal to buf (at least FMT_U64_LEN bytes); returns the length. */
size_t	fmt_u64(char *buf, uint64_t v);

/*
 * Writes n IDs separated by sep (at most n * (FMT_U64_LEN + 1) bytes); returns
 * the length. A run of consecutive IDs is formatted by incrementing the
 * previous one's digits, the common case of an IDS reply.
 */
size_t	fmt_ids(char *buf, const uint64_t *ids, unsigned n);

#endif
