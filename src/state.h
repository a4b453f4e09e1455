/*
 * state.h - the record idserver keeps in its local state file, as pure code.
 *
 * What survives a restart (docs/design.md section 6): the highest ticket known
 * per ticket server (server.h) with the B it was written under, the Snowflake lease with
 * its write-ahead reservation, and the identity of the process that owns the
 * file. This file formats and parses the record, with a checksum, and judges
 * whether a previous owner is provably dead; statefile.c owns the file itself.
 */
#ifndef IDGEN_STATE_H
#define IDGEN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server.h"

#define STATE_VERSION	2	/* version 1 files are read (marks only) */
#define STATE_MAX_LEN	2048	/* a formatted record always fits: one slot of the file */

/*
 * The highest ticket known to be used on a server, the B it was written under
 * (0: unknown, a version 1 file or an old marks row; read as the server's B),
 * and who issued it. A mark stands for IDs, not tickets: every ID below
 * (high_water + 1) * block_size may have been handed out.
 */
struct state_mark {
	uint64_t	high_water;
	uint64_t	block_size;
	char		uuid[40];	/* idgen_meta.server_uuid, "" if unknown */
};

/* A Snowflake lease: mint ts in (reserved, window_end] after a restart. */
struct state_lease {
	bool		held;
	unsigned	worker;
	unsigned	server;		/* the lease row's owner, by index (server.h) */
	char		holder[160];
	uint64_t	window_start;	/* layout ms */
	uint64_t	window_end;
	uint64_t	reserved;	/* every ts minted is <= this */
};

/*
 * The process that wrote the record: a lease is resumed only when this
 * process is provably dead (docs/design.md section 6.8). Empty strings are
 * unknown and never prove anything.
 */
struct state_owner {
	char		machine[40];	/* /etc/machine-id */
	char		boot[40];	/* /proc/sys/kernel/random/boot_id */
	uint64_t	pidns;		/* inode of /proc/self/ns/pid */
	uint64_t	pid;
	uint64_t	start;		/* start time, clock ticks after boot (/proc/PID/stat) */
};

struct state_rec {
	uint64_t		gen;		/* save count: the newer of the file's two slots wins */
	char			host[64];	/* who wrote it, for people */
	struct state_owner	owner;
	char			servers[192];	/* the configured pair: a foreign file is not resumed */
	struct state_mark	mark[SERVER_MAX];	/* by server index */
	struct state_lease	lease;
};

/* Formats r into buf; returns the length, or 0 if it does not fit. */
size_t	state_format(const struct state_rec *r, char *buf, size_t len);

/* Parses a whole record; false with a reason when it is corrupt or not ours. */
bool	state_parse(const char *buf, size_t len, struct state_rec *r, char *why,
	    size_t whylen) __attribute__((warn_unused_result));

/*
 * The first ID above everything a mark covers, when the server's B is b
 * (used for a mark of unknown B); saturates instead of wrapping.
 */
uint64_t	state_mark_end(const struct state_mark *m, uint64_t b);

/* The mark in tickets of B = b: the highest ticket whose block holds a covered ID. */
uint64_t	state_mark_ticket(const struct state_mark *m, uint64_t b);

/*
 * Raises a server's mark to (high_water, block_size) when that covers more IDs
 * (compared in ID space; a block_size of 0 is taken as b), never lowers it,
 * notes the uuid; true when r changed.
 */
bool	state_raise_mark(struct state_rec *r, unsigned server, uint64_t high_water,
	    uint64_t block_size, uint64_t b, const char *uuid);

/* Is a process (pid, start time) of this machine, this boot and pid namespace running? */
typedef bool	(*state_running_fn)(uint64_t pid, uint64_t start);

/*
 * True only when the record's owner is provably dead: the same machine, and
 * either an earlier boot or, in the same pid namespace, a process that no
 * longer runs. Anything else (unknown, another machine, another pid namespace,
 * still running) is false with the reason in why.
 */
bool	state_owner_dead(const struct state_owner *was, const struct state_owner *me,
	    state_running_fn running, char *why, size_t whylen)
	    __attribute__((warn_unused_result));

#endif
