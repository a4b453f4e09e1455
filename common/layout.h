/*
 * layout.h - the one 64-bit ID layout shared by the ticket and Snowflake paths.
 *
 * [1, 2^53)     ticket region:    id = ticket * B + k, 0 <= k < B
 * [2^53, 2^63)  Snowflake region: id = ts << 22 | worker << 12 | seq
 *
 * Pure functions, no I/O. See docs/design.md section 1.
 */
#ifndef IDGEN_LAYOUT_H
#define IDGEN_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#define LAYOUT_VERSION		1
#define LAYOUT_TICKET_LIMIT	(UINT64_C(1) << 53)	/* first Snowflake ID */
#define LAYOUT_EPOCH_UNIX_MS	INT64_C(1767225600000)	/* 2026-01-01T00:00:00Z */
#define LAYOUT_TS_BITS		41
#define LAYOUT_WORKER_BITS	10
#define LAYOUT_SEQ_BITS		12
#define LAYOUT_TS_MIN		(UINT64_C(1) << 31)	/* ts of the first ID >= 2^53 */
#define LAYOUT_TS_MAX		((UINT64_C(1) << LAYOUT_TS_BITS) - 1)
#define LAYOUT_WORKER_MAX	((1u << LAYOUT_WORKER_BITS) - 1)
#define LAYOUT_SEQ_MAX		((1u << LAYOUT_SEQ_BITS) - 1)
#define LAYOUT_SEQ_COUNT	(1u << LAYOUT_SEQ_BITS)

/* Block sizes accepted from a ticket server's meta row. */
#define LAYOUT_BLOCK_MIN	UINT64_C(4096)
#define LAYOUT_BLOCK_MAX	(UINT64_C(1) << 32)

/*
 * A tier of regions has one layout, not one per region (docs/design.md
 * section 12.3): regions that cannot see each other must not be able to
 * disagree on B or on the worker bits that name a region.
 */
#define LAYOUT_REGION_BITS	5			/* 32 regions of 32 workers */
#define LAYOUT_REGION_BLOCK	(UINT64_C(1) << 20)	/* B of every region */

enum layout_region {
	LAYOUT_INVALID = 0,	/* 0 or negative as a signed BIGINT */
	LAYOUT_TICKET,
	LAYOUT_SNOWFLAKE,
};

struct layout_snowflake {
	uint64_t ts;		/* ms since LAYOUT_EPOCH_UNIX_MS */
	unsigned worker;
	unsigned seq;
};

/* Which region an ID belongs to. */
enum layout_region layout_region(uint64_t id);

/* True when ticket t with block size b yields a block entirely inside [1, 2^53). */
bool layout_ticket_ok(uint64_t ticket, uint64_t block_size);

/* First ID of ticket t's block; only meaningful when layout_ticket_ok(). */
uint64_t layout_ticket_first(uint64_t ticket, uint64_t block_size);

/*
 * The end of ticket t's block of b in ID space: the first ID above it,
 * (t + 1) * b, saturating at UINT64_MAX (a mark that high covers every ID;
 * it must never wrap to a small end, which would read as no mark at all);
 * 0 when b is 0.
 */
uint64_t layout_ticket_end(uint64_t ticket, uint64_t block_size);

/*
 * The inverse: the highest ticket of b whose block holds an ID below end (the
 * mark of b covering everything below end; 0 when end or b is 0).
 */
uint64_t layout_end_ticket(uint64_t end, uint64_t block_size);

/* The ticket an ID from the ticket region came from. */
uint64_t layout_ticket_of(uint64_t id, uint64_t block_size);

/* True when (ts, worker, seq) composes to a valid Snowflake ID (>= 2^53, < 2^63). */
bool layout_snowflake_ok(uint64_t ts, unsigned worker, unsigned seq);

/* Composes a Snowflake ID; only meaningful when layout_snowflake_ok(). */
uint64_t layout_snowflake_compose(uint64_t ts, unsigned worker, unsigned seq);

/* Splits a Snowflake-region ID into its fields. */
struct layout_snowflake layout_snowflake_split(uint64_t id);

/*
 * The design's 5/5 split of the 10 worker bits, as its gRPC contract names
 * them: datacenter_id = worker >> 5, worker_id = worker & 31.
 */
#define LAYOUT_DC_SHIFT		5
#define layout_datacenter_of(worker)	((unsigned)(worker) >> LAYOUT_DC_SHIFT)
#define layout_dc_worker_of(worker)	((unsigned)(worker) & ((1u << LAYOUT_DC_SHIFT) - 1))

/* Unix ms <-> layout ms. Returns false when the time is outside the layout's range. */
bool layout_ts_from_unix_ms(int64_t unix_ms, uint64_t *ts);
int64_t layout_ts_to_unix_ms(uint64_t ts);

/*
 * Formats unix ms as ISO-8601 UTC with milliseconds ("2026-03-01T12:00:00.123Z")
 * into buf (at least LAYOUT_ISO_LEN bytes). Returns the length written.
 */
#define LAYOUT_ISO_LEN 32
int layout_format_iso(int64_t unix_ms, char *buf, unsigned long len);

#endif
