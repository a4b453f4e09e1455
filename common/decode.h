/*
 * decode.h - what an ID says, by the layout's rules: its region, then the
 * ticket and its server, or the Snowflake time, worker (and the worker's 5/5
 * datacenter/worker split) and sequence. The one decode behind idserver's
 * DECODE and libidgen's idgen_decode() (docs/design.md sections 1 and 11).
 *
 * Pure code: no I/O, no allocation. Reading an ID's text (decimal or
 * base58) is the caller's: each has its own grammar and messages.
 */
#ifndef IDGEN_DECODE_H
#define IDGEN_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "b58.h"
#include "layout.h"

struct decode {
	enum layout_region	 region;
	uint64_t		 id;
	char			 b58[B58_LEN + 1];
	uint64_t		 ticket;	/* ticket region, block size known */
	bool			 odd;		/* ... from the odd server */
	const char		*server;	/* ... "odd" or "even" */
	int64_t			 unix_ms;	/* Snowflake region */
	char			 iso[LAYOUT_ISO_LEN];
	unsigned		 worker;
	unsigned		 datacenter_id;	/* worker's split (layout_datacenter_of) */
	unsigned		 worker_id;
	unsigned		 seq;
};

/*
 * Fills d from id and returns its region (LAYOUT_INVALID: only id, region
 * and b58 are set). A ticket-region ID needs block_size for its ticket and
 * server: with 0 (not known yet) they stay 0 and NULL.
 */
enum layout_region	decode_id(uint64_t id, uint64_t block_size, struct decode *d)
			    __attribute__((warn_unused_result));

/* Fills only the Snowflake fields of d from a Snowflake-region ID. */
void			decode_snowflake(uint64_t id, struct decode *d);

#endif
