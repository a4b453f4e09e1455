/*
 * layout.c - compose and split IDs of the shared 64-bit layout.
 */
#include "layout.h"

#include <stdio.h>
#include <time.h>

/* Which region an ID belongs to; 0 and the sign bit are never valid. */
enum layout_region
layout_region(uint64_t id)
{
	if (id == 0 || id >> 63)
		return LAYOUT_INVALID;
	return id < LAYOUT_TICKET_LIMIT ? LAYOUT_TICKET : LAYOUT_SNOWFLAKE;
}

/* A ticket's block [t*B, t*B+B) must be non-empty, exclude 0 and stay below 2^53. */
bool
layout_ticket_ok(uint64_t ticket, uint64_t block_size)
{
	if (ticket == 0 || block_size < LAYOUT_BLOCK_MIN || block_size > LAYOUT_BLOCK_MAX)
		return false;
	/* (ticket + 1) * B <= 2^53, written so it cannot overflow. */
	return ticket < LAYOUT_TICKET_LIMIT / block_size;
}

/* First ID of a ticket's block. */
uint64_t
layout_ticket_first(uint64_t ticket, uint64_t block_size)
{
	return ticket * block_size;
}

/* (t + 1) * b, or UINT64_MAX where that does not fit: never wraps. */
uint64_t
layout_ticket_end(uint64_t ticket, uint64_t block_size)
{
	if (block_size != 0 && ticket >= UINT64_MAX / block_size)
		return UINT64_MAX;
	return (ticket + 1) * block_size;
}

/* The ticket whose block holds ID end - 1: every ticket above it starts at or past end. */
uint64_t
layout_end_ticket(uint64_t end, uint64_t block_size)
{
	return end == 0 || block_size == 0 ? 0 : (end - 1) / block_size;
}

/* The ticket an ID came from. */
uint64_t
layout_ticket_of(uint64_t id, uint64_t block_size)
{
	return id / block_size;
}

/* Valid when every field fits and the result lands at or above 2^53. */
bool
layout_snowflake_ok(uint64_t ts, unsigned worker, unsigned seq)
{
	return ts >= LAYOUT_TS_MIN && ts <= LAYOUT_TS_MAX &&
	    worker <= LAYOUT_WORKER_MAX && seq <= LAYOUT_SEQ_MAX;
}

/* ts << 22 | worker << 12 | seq. */
uint64_t
layout_snowflake_compose(uint64_t ts, unsigned worker, unsigned seq)
{
	return ts << (LAYOUT_WORKER_BITS + LAYOUT_SEQ_BITS) |
	    (uint64_t)worker << LAYOUT_SEQ_BITS | seq;
}

/* Inverse of layout_snowflake_compose(). */
struct layout_snowflake
layout_snowflake_split(uint64_t id)
{
	struct layout_snowflake s;

	s.ts = id >> (LAYOUT_WORKER_BITS + LAYOUT_SEQ_BITS);
	s.worker = (unsigned)(id >> LAYOUT_SEQ_BITS) & LAYOUT_WORKER_MAX;
	s.seq = (unsigned)id & LAYOUT_SEQ_MAX;
	return s;
}

/* Converts unix ms to layout ms; false before the epoch or past the 41-bit end. */
bool
layout_ts_from_unix_ms(int64_t unix_ms, uint64_t *ts)
{
	if (unix_ms < LAYOUT_EPOCH_UNIX_MS)
		return false;
	if ((uint64_t)(unix_ms - LAYOUT_EPOCH_UNIX_MS) > LAYOUT_TS_MAX)
		return false;
	*ts = (uint64_t)(unix_ms - LAYOUT_EPOCH_UNIX_MS);
	return true;
}

/* Converts layout ms back to unix ms. */
int64_t
layout_ts_to_unix_ms(uint64_t ts)
{
	return (int64_t)ts + LAYOUT_EPOCH_UNIX_MS;
}

/* ISO-8601 UTC with milliseconds. */
int
layout_format_iso(int64_t unix_ms, char *buf, unsigned long len)
{
	time_t secs = (time_t)(unix_ms / 1000);
	struct tm tm;

	if (gmtime_r(&secs, &tm) == NULL)
		return snprintf(buf, len, "invalid");
	return snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
	    tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(unix_ms % 1000));
}
