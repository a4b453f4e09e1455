/*
 * state.h - the record idserver keeps in its local state file, as pure code.
 *
 * What survives a restart (docs/design.md section 6): the highest ticket known
 * per role (odd/even) and the Snowflake lease with its write-ahead reservation.
 * This file formats and parses the record, with a checksum; statefile.c owns
 * the file itself (lock, atomic write).
 */
#ifndef IDGEN_STATE_H
#define IDGEN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATE_VERSION	1
#define STATE_ODD	0
#define STATE_EVEN	1
#define STATE_MAX_LEN	2048	/* a formatted record always fits */

/* The highest ticket known to be used for a role, and who issued it. */
struct state_mark {
	uint64_t	high_water;
	char		uuid[40];	/* idgen_meta.server_uuid, "" if unknown */
};

/* A Snowflake lease: mint ts in (reserved, window_end] after a restart. */
struct state_lease {
	bool		held;
	unsigned	worker;
	int		server;		/* STATE_ODD or STATE_EVEN: the lease row's owner */
	char		holder[160];
	uint64_t	window_start;	/* layout ms */
	uint64_t	window_end;
	uint64_t	reserved;	/* every ts minted is <= this */
};

struct state_rec {
	char			host[64];	/* who wrote it: a foreign file is not resumed */
	char			servers[192];	/* the configured pair, same purpose */
	struct state_mark	mark[2];
	struct state_lease	lease;
};

/* Formats r into buf; returns the length, or 0 if it does not fit. */
size_t	state_format(const struct state_rec *r, char *buf, size_t len);

/* Parses a whole file; false with a reason when it is corrupt or not ours. */
bool	state_parse(const char *buf, size_t len, struct state_rec *r, char *why,
	    size_t whylen) __attribute__((warn_unused_result));

/* Raises a role's mark (never lowers it), notes the uuid; true when r changed. */
bool	state_raise_mark(struct state_rec *r, int role, uint64_t high_water,
	    const char *uuid);

#endif
