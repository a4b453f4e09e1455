/*
 * fmt.h - decimal formatting of IDs for every protocol's replies (pure).
 */
#ifndef IDGEN_FMT_H
#define IDGEN_FMT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "decode.h"

#define FMT_U64_LEN	20	/* digits in the largest uint64_t */

/* Writes v in decimal to buf (at least FMT_U64_LEN bytes); returns the length. */
size_t	fmt_u64(char *buf, uint64_t v);

/*
 * Writes n IDs separated by spaces (at most n * (FMT_U64_LEN + 1) bytes); returns
 * the length. A run of consecutive IDs is formatted by incrementing the
 * previous one's digits, the common case of an IDS reply.
 */
size_t	fmt_ids(char *buf, const uint64_t *ids, unsigned n);

#define FMT_SEP_NONE	(-1)	/* fmt_ids_framed's sep: nothing between two IDs */

/*
 * Writes n IDs, each as pre, its digits and post, with the byte sep between
 * two (FMT_SEP_NONE: none; '\0' makes each a C string): at most n *
 * (FMT_U64_LEN + strlen(pre) + strlen(post) + 1) bytes. starts, when not NULL,
 * gets where each ID's pre begins. The same increment of a run of
 * consecutive IDs as fmt_ids. Returns the length.
 */
size_t	fmt_ids_framed(char *buf, const uint64_t *ids, unsigned n, const char *pre,
	    const char *post, int sep, char **starts);

/* The longest DECODE line fmt_decode writes, its newline included. */
#define FMT_DECODE_LEN	200

/*
 * Writes the text protocol's DECODE line of d, newline included, to buf (at
 * least FMT_DECODE_LEN bytes): "ticket block=B server=S" or "snowflake
 * time=T worker=W seq=Q", then " region=R" in a tier of regions and " id=N"
 * when the ID was given in base58 (from_b58). Returns the length.
 */
size_t	fmt_decode(char *buf, const struct decode *d, bool from_b58);

#endif
