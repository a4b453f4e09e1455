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

#include "ns.h"		/* NS_NAME_MAX, NS_MARKS_MAX, ns_name_ok */
#include "server.h"

#define STATE_VERSION	3	/* versions 1 and 2 are read (docs/design.md section 6.10) */
#define STATE_MAX_LEN	(128 * 1024)	/* a formatted record always fits (below) */

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

struct state_ns;

/*
 * Formats r and the namespace marks ns (NULL: none) as one version 3 record
 * (docs/design.md section 6.10); returns the length, or 0 if it does not fit.
 */
size_t	state_format(const struct state_rec *r, const struct state_ns *ns, char *buf,
	    size_t len);

/*
 * Parses a record of version 1, 2 or 3, strictly; it ends with its first
 * checksum line and bytes after it are ignored. A version 3 record's
 * namespace marks go into ns (up to ns->cap; NULL: checked, not kept). False
 * with a reason when it is corrupt or not ours.
 */
bool	state_parse(const char *buf, size_t len, struct state_rec *r, struct state_ns *ns,
	    char *why, size_t whylen) __attribute__((warn_unused_result));

/* The length of the record at buf, through its first checksum line; 0 when none. */
size_t	state_end(const char *buf, size_t len);

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

/*
 * Namespace marks (docs/design.md sections 13.5 and 6.10): the record's
 * "mark <namespace> ..." lines, kept apart from state_rec's. Each mark is per
 * (namespace, server), in ID space like state_mark: IDs below (high_water +
 * 1) * block_size may have been handed out. Only non-zero marks exist. The
 * earlier format's second record, idgen-ns 1, is read (state_ns_parse),
 * never written.
 */
#define STATE_NS_VERSION	1
#define STATE_NS_SLOT		(128 * 1024)	/* the earlier format's slot of idgen-ns */
#define STATE_NS_SERVER_NAME_MAX 15	/* server_name()'s longest ("even_r31" is 8) */

/* The longest mark lines (the default's, a namespace's) and the rest of a record. */
#define STATE_MARK_LINE_MAX	(sizeof("mark - ") - 1 + STATE_NS_SERVER_NAME_MAX + 1 + \
				    20 + 1 + 20 + 1 + 40 + 1)
#define STATE_NS_LINE_MAX	(sizeof("mark ") - 1 + NS_NAME_MAX + 1 + \
				    STATE_NS_SERVER_NAME_MAX + 1 + 20 + 1 + 20 + sizeof(" -\n") - 1)
#define STATE_FRAME_MAX		(sizeof("idgen-state 3\ngen \nhost \nowner - - \nservers \n" \
				    "lease 1023 odd_r31    \ncheck 0123456789abcdef\n") + \
				    20 + 64 + 40 + 40 + 3 * 20 + 192 + 160 + 3 * 20)
_Static_assert(STATE_FRAME_MAX + SERVER_MAX * STATE_MARK_LINE_MAX +
    NS_MARKS_MAX * STATE_NS_LINE_MAX < STATE_MAX_LEN, "a record of every mark must fit");

struct state_ns_mark {
	char		ns[NS_NAME_MAX + 1];
	unsigned	server;		/* by index (server.h) */
	uint64_t	high_water;	/* a ticket of the namespace's table, > 0 */
	uint64_t	block_size;	/* the namespace's B when it was written, > 0 */
};

/* The marks, in the order they were added; m holds cap entries (<= NS_MARKS_MAX). */
struct state_ns {
	unsigned		 n;
	unsigned		 cap;
	struct state_ns_mark	*m;
};

/*
 * Raises (ns, server)'s mark to (high_water, block_size) when that covers more
 * IDs (ID space, saturating; never lowers), adding the mark when absent;
 * *changed says whether r changed. A high_water of 0 marks nothing (true,
 * unchanged). False, r unchanged, when the set is full or an argument is
 * bad (name, server, block_size 0): the caller must not use the ticket.
 */
bool	state_ns_raise(struct state_ns *r, const char *ns, unsigned server,
	    uint64_t high_water, uint64_t block_size, bool *changed)
	    __attribute__((warn_unused_result));

/* (ns, server)'s mark, NULL when it has none. */
const struct state_ns_mark *state_ns_get(const struct state_ns *r, const char *ns,
	    unsigned server);

/* The first ID above everything a namespace mark covers; saturates. */
uint64_t	state_ns_end(const struct state_ns_mark *m);

/*
 * Parses an idgen-ns 1 record of the earlier format into r (up to r->cap
 * marks), strictly; the record ends with its checksum line and bytes after it
 * are ignored (what a longer record left in its slot). False with a reason,
 * r->n = 0, when it is corrupt or not one. A mark of a server this idserver
 * no longer configures is skipped, as state_parse does (docs/design.md
 * section 12.3).
 */
bool	state_ns_parse(const char *buf, size_t len, struct state_ns *r, uint64_t *gen,
	    char *why, size_t whylen) __attribute__((warn_unused_result));

/*
 * Where and when a record was written (docs/design.md section 6.8, rule 4):
 * STATE_STAMP_LEN bytes right after the record (a version 2 record: the last
 * of its 2,048-byte slot), under a checksum of their own. A lease is resumed
 * only from the very file (device, inode) its last write went to, and only
 * when nothing changed the file since (its ctime within slack of the time
 * taken before the write).
 */
#define STATE_STAMP_LEN	112

struct state_stamp {
	uint64_t	gen;		/* the record's */
	uint64_t	dev;		/* st_dev of the file written */
	uint64_t	ino;		/* st_ino */
	int64_t		sec;		/* CLOCK_REALTIME_COARSE before the write */
	long		nsec;
};

/* Formats a stamp into buf (len >= STATE_STAMP_LEN), NUL-padded; false if it does not fit. */
bool	state_stamp_format(const struct state_stamp *s, char *buf, size_t len);

/* Parses a stamp; false when there is none or it is damaged. */
bool	state_stamp_parse(const char *buf, size_t len, struct state_stamp *s);

/*
 * True when the stamp proves the record was the last write to this file:
 * the same gen, device and inode, and a ctime at or after the stamp's time by
 * at most slack_ms. Else false with the reason in why.
 */
bool	state_stamp_check(const struct state_stamp *s, uint64_t gen, uint64_t dev,
	    uint64_t ino, int64_t ctime_sec, long ctime_nsec, uint64_t slack_ms, char *why,
	    size_t whylen) __attribute__((warn_unused_result));

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
