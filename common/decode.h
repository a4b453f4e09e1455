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
	bool			 regions;	/* the tier has regions: area is set */
	unsigned		 area;		/* the ID's region (decode_regions) */
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

/*
 * Applies the tier's shape (docs/design.md section 12) to a decoded ID. With
 * region_bits > 0 it sets regions and area: a ticket's region is that of its
 * server (offset o = t mod M, region (o - 1) / 2), a Snowflake ID's that of its
 * worker (its top region_bits bits), and datacenter_id/worker_id become the
 * region and the worker within it. With 0 bits (one region) nothing changes:
 * datacenter_id/worker_id stay the layout's 5/5 split.
 */
void			decode_regions(struct decode *d, unsigned increment, unsigned region_bits);

#endif
